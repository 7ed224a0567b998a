//! Phase 2's pre-deletes within the step's budget (docs/export.md, "Phases (export-import, export-execute, export-phase2)", "Pre-deletes"):
//! deletes that take longer in all than one invocation may wait run side by side
//! (`budgets.max_parallel`), and what is still running when the budget
//! (`budgets.step_soft`) is spent is polled by the next invocation, by the handle the
//! first one saved, never started twice.
//!
//! Run: `scripts/with-emulator.sh cargo test --workspace --test e2e -- --test-threads=1 export_pre_deletes`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use cdkd_core::export::execute::Next;
use cdkd_deleters::{
    DeleteError, DeleteProgress, DeleteRequest, Deleter, Handle, Registry, SdkDeleter,
};
use cdkd_functions::export::carry::Carry;
use cdkd_tests as h;
use serde_json::{json, Value};

use crate::export_support::{resources, uniq, Steps, PREFIX, REGION};

/// How long each pre-delete takes.
const LATENCY: Duration = Duration::from_secs(3);

/// A deleter whose every delete takes [`LATENCY`] from its start; counts the starts of
/// each logical id.
#[derive(Clone, Default)]
struct Slow {
    started: Arc<Mutex<BTreeMap<String, (Instant, u32)>>>,
}

impl SdkDeleter for Slow {
    const TYPES: &'static [&'static str] = &["AWS::IAM::Policy"];
}

impl Slow {
    fn progress(&self, id: &str) -> DeleteProgress {
        let since = self.started.lock().unwrap().get(id).map(|s| s.0);
        match since {
            Some(t) if t.elapsed() >= LATENCY => DeleteProgress::Done,
            _ => DeleteProgress::InFlight {
                handle: Handle::AwaitGone {
                    started_ms: 0,
                    deadline_ms: u64::MAX,
                    polls: 0,
                },
                expected_done_ms: 0,
            },
        }
    }

    fn starts(&self) -> BTreeMap<String, u32> {
        let s = self.started.lock().unwrap();
        s.iter().map(|(k, v)| (k.clone(), v.1)).collect()
    }
}

#[async_trait]
impl Deleter for Slow {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        self.started
            .lock()
            .unwrap()
            .entry(req.logical_id.clone())
            .or_insert((Instant::now(), 0))
            .1 += 1;
        Ok(self.progress(&req.logical_id))
    }

    async fn poll(
        &self,
        req: &DeleteRequest,
        _handle: &Handle,
    ) -> Result<DeleteProgress, DeleteError> {
        Ok(self.progress(&req.logical_id))
    }
}

/// A role (imported) with four inline policies recorded as `AWS::IAM::Policy` rows
/// (IMPORT-unsupported: pre-deleted, then re-created by phase 2), each pre-delete taking
/// 3 s: 12 s one after the other, more than the step's budget of 4 s. Two at a time,
/// the first invocation deletes two and starts the other two, whose handles it saves;
/// the second polls them (no second start) and submits the UPDATE; the run migrates
/// with the four policies in CloudFormation.
#[tokio::test]
async fn export_pre_deletes_run_side_by_side_and_go_on_in_the_next_invocation() {
    let mut steps = Steps::new().await;
    let slow = Slow::default();
    let registry = Registry::empty().with_sdk(slow.clone());
    steps.deps.registry_for = Arc::new(move |_, _| registry.clone());
    steps.deps.budgets.step_soft = Duration::from_secs(4);
    steps.deps.budgets.max_parallel = 2;

    let stack = uniq("ExportPreDel");
    let role = format!("{stack}-role");
    let trust = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
        "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]});
    aws_sdk_iam::Client::new(&h::sdk().await)
        .create_role()
        .role_name(&role)
        .assume_role_policy_document(trust.to_string())
        .send()
        .await
        .unwrap();
    let doc = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*"}]});
    let mut rec = json!({"version": 10, "stackName": stack, "region": REGION, "resources": {
        "Role": {"resourceType": "AWS::IAM::Role", "physicalId": role, "properties": {"RoleName": role},
                 "attributes": {"Arn": format!("arn:aws:iam::123456789012:role/{role}")}, "provisionedBy": "sdk"}}});
    let mut tpl = json!({"Resources": {
        "Role": {"Type": "AWS::IAM::Role", "Properties": {"RoleName": role, "AssumeRolePolicyDocument": trust}}},
        "Outputs": {"RoleName": {"Value": {"Ref": "Role"}}}});
    let policies: Vec<String> = (1..=4).map(|i| format!("Send{i}Policy")).collect();
    for (i, id) in policies.iter().enumerate() {
        let name = format!("Send{}", i + 1);
        rec["resources"][id] = json!({"resourceType": "AWS::IAM::Policy", "physicalId": name,
            "properties": {"PolicyName": name, "PolicyDocument": doc, "Roles": [role]},
            "dependencies": ["Role"], "provisionedBy": "sdk"});
        tpl["Resources"][id] = json!({"Type": "AWS::IAM::Policy",
            "Properties": {"PolicyName": name, "PolicyDocument": doc, "Roles": [{"Ref": "Role"}]}});
    }
    let key = steps.seed(&stack, &rec, &tpl).await;
    let input = json!({"stack": stack, "stateBucket": steps.bucket, "statePrefix": PREFIX,
        "templates": {(stack.clone()): key}, "options": {"fast": true}, "dryRun": false});
    let (_, carry) = steps.plan_and_lock(input).await;
    let carry = steps.drive(carry, Next::Phase2).await.expect("imported");
    let progress_key = format!("{PREFIX}/_runs/{}/progress.json", steps.run_id);

    // The first invocation: within the budget, two deleted, two running.
    let t = Instant::now();
    let first = phase2(&steps, &carry).await;
    let took = t.elapsed();
    assert!(
        took < Duration::from_millis(5500),
        "the first invocation took {took:?}, over the step's budget of 4 s"
    );
    assert_eq!(first.next, Next::Phase2, "phase 2 goes on next");
    assert_eq!(first.stack, stack);
    let rec: Value = steps.json(&progress_key).await.unwrap();
    let s = &rec["stacks"][0];
    assert_eq!(s["preDeleted"].as_array().map(Vec::len), Some(2), "{s}");
    assert_eq!(s["preDeleting"].as_array().map(Vec::len), Some(2), "{s}");
    assert_eq!(s["stage"], "preDeleted", "{s}");

    // The second: polls the two by their handles, then submits the UPDATE.
    let t = Instant::now();
    let second = phase2(&steps, &first).await;
    assert!(
        t.elapsed() < Duration::from_millis(5500),
        "{:?}",
        t.elapsed()
    );
    assert_ne!(second.next, Next::Phase2, "{second:?}");
    let starts = slow.starts();
    assert_eq!(
        starts,
        policies
            .iter()
            .map(|p| (p.clone(), 1))
            .collect::<BTreeMap<_, _>>(),
        "every row started once"
    );
    let rec: Value = steps.json(&progress_key).await.unwrap();
    let s = &rec["stacks"][0];
    assert_eq!(s["preDeleted"].as_array().map(Vec::len), Some(4), "{s}");
    assert!(s.get("preDeleting").is_none(), "{s}");

    let done = steps.drive(second, Next::Cleanup).await.expect("phase 2");
    steps.clean_up(&done).await;
    let held: Vec<String> = resources(&stack)
        .await
        .into_keys()
        .filter(|id| policies.contains(id))
        .collect();
    assert_eq!(held, policies);
}

async fn phase2(steps: &Steps, carry: &Carry) -> Carry {
    let out = steps
        .step("export-phase2", serde_json::to_value(carry).unwrap())
        .await
        .expect("phase 2");
    serde_json::from_value(out).unwrap()
}
