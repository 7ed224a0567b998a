//! The export's execution steps driven one by one against the emulator
//! (docs/export.md §10): a lock lost between two steps stops the run at its next step before any write,
//! a phase 2 that fails leaves the imported stack, keeps the record, releases the lock
//! and reports that phase 1 succeeded; a retried import step finds the change set it
//! created instead of creating another.
//!
//! Run: `scripts/with-emulator.sh cargo test --workspace --test e2e -- --test-threads=1 export_steps`.

use cdkd_core::export::execute::Next;
use cdkd_functions::export::carry::Carry;
use cdkd_functions::{steps, Deps, StepError};
use cdkd_tests as h;
use serde_json::{json, Value};

const REGION: &str = "us-east-1";
const PREFIX: &str = "cdkd";

fn uniq(tag: &str) -> String {
    format!("{tag}{}", &uuid::Uuid::new_v4().simple().to_string()[..10])
}

async fn deps() -> Deps {
    Deps::from_sdk(h::sdk().await, None).await
}

struct Run {
    s3: aws_sdk_s3::Client,
    bucket: String,
    stack: String,
    run_id: String,
    queue_url: String,
    deps: Deps,
}

/// A record of one real queue and its template (with `outputs` as the template's
/// Outputs), uploaded as the CLI does.
async fn setup(outputs: Value) -> Run {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let stack = uniq("ExportStep");
    let sqs = aws_sdk_sqs::Client::new(&h::sdk().await);
    let q = sqs
        .create_queue()
        .queue_name(stack.to_lowercase())
        .send()
        .await
        .unwrap();
    let queue_url = q.queue_url().unwrap().to_string();
    let rec = json!({"version": 10, "stackName": stack, "region": REGION, "resources": {
        "Queue": {"resourceType": "AWS::SQS::Queue", "physicalId": queue_url, "properties": {}, "attributes": {}}
    }});
    h::put_raw(
        &s3,
        &bucket,
        &format!("{PREFIX}/{stack}/{REGION}/state.json"),
        rec.to_string(),
    )
    .await;
    let run_id = uniq("run-");
    let template = json!({"Resources": {"Queue": {"Type": "AWS::SQS::Queue"}}, "Outputs": outputs});
    let key = format!("{PREFIX}/_runs/{run_id}/templates/{stack}.json");
    h::put_raw(&s3, &bucket, &key, template.to_string()).await;
    Run {
        s3,
        bucket,
        stack,
        run_id,
        queue_url,
        deps: deps().await,
    }
}

impl Run {
    fn input(&self) -> Value {
        json!({"stack": self.stack, "stateBucket": self.bucket, "statePrefix": PREFIX,
               "templates": {(self.stack.clone()): format!("{PREFIX}/_runs/{}/templates/{}.json", self.run_id, self.stack)},
               "options": {"fast": true}, "dryRun": false})
    }

    async fn step(&self, name: &str, payload: Value) -> Result<Value, StepError> {
        steps::invoke(name, payload, &self.deps).await
    }

    async fn locked(&self) -> Carry {
        let plan = self
            .step(
                "export-plan",
                json!({"input": self.input(), "runId": self.run_id}),
            )
            .await
            .expect("plan");
        let carry = self
            .step(
                "export-lock",
                json!({"input": self.input(), "runId": self.run_id, "plan": plan}),
            )
            .await
            .expect("lock");
        serde_json::from_value(carry).unwrap()
    }

    /// Runs Route's loop (poll, execute, phase 2) until `stop` or cleanup is next.
    async fn drive(&self, carry: Carry, stop: Next) -> Result<Carry, StepError> {
        self.drive_watching(carry, stop, &mut |_| {}).await
    }

    /// As `drive`, showing `seen` the carried state after every step.
    async fn drive_watching(
        &self,
        mut carry: Carry,
        stop: Next,
        seen: &mut dyn FnMut(&Carry),
    ) -> Result<Carry, StepError> {
        for _ in 0..200 {
            if carry.next == stop {
                return Ok(carry);
            }
            let step = match carry.next {
                Next::Wait => "export-poll",
                Next::Execute => "export-execute",
                Next::Phase2 => "export-phase2",
                Next::Import => "export-import",
                Next::Flip => "export-flip",
                Next::Adopt => "export-adopt",
                Next::Cleanup => return Ok(carry),
            };
            let out = self
                .step(step, serde_json::to_value(&carry).unwrap())
                .await?;
            carry = serde_json::from_value(out).unwrap();
            seen(&carry);
        }
        panic!("the run did not settle");
    }

    async fn keys(&self) -> Vec<String> {
        h::list_all_keys(&self.s3, &self.bucket).await
    }
}

async fn cfn() -> aws_sdk_cloudformation::Client {
    aws_sdk_cloudformation::Client::new(&h::sdk().await)
}

#[tokio::test]
async fn export_steps_a_lock_lost_between_steps_stops_the_run_before_any_write() {
    let r = setup(json!({})).await;
    let carry = r.locked().await;
    // Another process force-unlocks, then takes the lock itself.
    let lock_key = format!("{PREFIX}/{}/{REGION}/lock.json", r.stack);
    h::put_raw(
        &r.s3,
        &r.bucket,
        &lock_key,
        json!({"owner": "other@host:9", "timestamp": 5, "expiresAt": 99999999999999i64})
            .to_string(),
    )
    .await;
    let err = r
        .step("export-import", serde_json::to_value(&carry).unwrap())
        .await
        .expect_err("a lost lock stops the import");
    assert_eq!(err.name, "LockLost", "{err}");
    let described = cfn()
        .await
        .describe_stacks()
        .stack_name(&r.stack)
        .send()
        .await;
    assert!(
        described.is_err(),
        "nothing may be submitted: {described:?}"
    );
    // The abort path leaves the other holder's lock alone and keeps the record.
    let abort = r
        .step(
            "export-abort",
            json!({"run": carry, "error": {"Error": err.name, "Cause": err.message}}),
        )
        .await
        .unwrap();
    assert!(abort["reportKey"].is_string(), "{abort}");
    let (body, _) = h::get_raw(&r.s3, &r.bucket, &lock_key).await.unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&body).unwrap()["owner"],
        "other@host:9"
    );
    assert!(r
        .keys()
        .await
        .contains(&format!("{PREFIX}/{}/{REGION}/state.json", r.stack)));
}

#[tokio::test]
async fn export_steps_a_retried_import_finds_its_change_set_instead_of_creating_another() {
    let r = setup(json!({})).await;
    let carry = r.locked().await;
    let first: Carry = serde_json::from_value(
        r.step("export-import", serde_json::to_value(&carry).unwrap())
            .await
            .unwrap(),
    )
    .unwrap();
    let again: Carry = serde_json::from_value(
        r.step("export-import", serde_json::to_value(&carry).unwrap())
            .await
            .unwrap(),
    )
    .unwrap();
    let pending = |c: &Carry| {
        c.in_flight
            .iter()
            .map(|f| f.pending.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        pending(&first),
        pending(&again),
        "the same change set, by ARN"
    );
    let sets = cfn()
        .await
        .list_change_sets()
        .stack_name(&r.stack)
        .send()
        .await
        .unwrap();
    let mine: Vec<_> = sets
        .summaries()
        .iter()
        .filter(|s| s.stack_name() == Some(r.stack.as_str()))
        .collect();
    assert_eq!(mine.len(), 1, "{mine:?}");
}

#[tokio::test]
async fn export_steps_a_failed_phase2_keeps_the_record_releases_the_lock_and_says_phase1_succeeded()
{
    // An Output that imports a value no stack exports: the UPDATE fails.
    let r = setup(json!({"Bad": {"Value": {"Fn::ImportValue": "cdkd-flow-no-such-export"}}})).await;
    let carry = r.locked().await;
    let carry: Carry = serde_json::from_value(
        r.step("export-import", serde_json::to_value(&carry).unwrap())
            .await
            .unwrap(),
    )
    .unwrap();
    let err = r
        .drive(carry.clone(), Next::Cleanup)
        .await
        .expect_err("phase 2 fails");
    let abort = r
        .step(
            "export-abort",
            json!({"run": carry, "error": {"Error": err.name, "Cause": err.message}}),
        )
        .await
        .unwrap();
    let report = &abort["report"];
    assert_eq!(report["outcome"], "failed", "{abort}");
    let stage = report["stacks"][0]["stage"].as_str().unwrap();
    assert!(["imported", "updating"].contains(&stage), "{abort}");
    assert!(
        err.name != "Transient",
        "a failed phase 2 is not an emulator fault: {err}"
    );
    assert!(
        report["redo"][0]
            .as_str()
            .unwrap()
            .contains("phase 1 succeeded"),
        "{report}"
    );
    let keys = r.keys().await;
    assert!(
        keys.contains(&format!("{PREFIX}/{}/{REGION}/state.json", r.stack)),
        "the record is kept: {keys:?}"
    );
    assert!(
        !keys.iter().any(|k| k.ends_with("lock.json")),
        "the lock is released: {keys:?}"
    );
    let res = cfn()
        .await
        .describe_stack_resources()
        .stack_name(&r.stack)
        .send()
        .await
        .unwrap();
    let ids: Vec<_> = res
        .stack_resources()
        .iter()
        .filter_map(|x| x.physical_resource_id())
        .collect();
    assert_eq!(
        ids,
        [r.queue_url.as_str()],
        "CloudFormation holds the imported queue"
    );
}

struct Tree {
    r: Run,
    root: String,
    child: String,
    /// Every child, `child` first.
    children: Vec<String>,
    /// What `export-lock` was given (to run it again).
    lock_payload: Value,
    topic: String,
    queue_url: String,
    carry: Carry,
}

/// A root with a queue and one nested child with a topic (two levels, which is what
/// CloudFormation can import), planned and locked. With `root_queue_gone` the root's
/// record names a queue that does not exist, so the root's phase 1A fails.
async fn locked_tree(root_queue_gone: bool) -> Tree {
    locked_tree_of(root_queue_gone, 1, false, None).await
}

/// As `locked_tree`, with `children` nested children (`Child`, `Child2`, ...), each with
/// a topic of its own. With `no_echo`, the root declares the NoEcho parameter
/// `DbPassword` (given as `--parameter DbPassword=s3cret`) and passes it to each child's
/// NoEcho parameter `Password` as a plain Ref.
/// With `custom`, an SNS topic ARN, the root also has an SNS-backed `Custom::Thing` (its
/// phase 2 creates it: `includeNonImportable`).
async fn locked_tree_of(
    root_queue_gone: bool,
    children: usize,
    no_echo: bool,
    custom: Option<&str>,
) -> Tree {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let root = uniq("ExportTree");
    let sdk = h::sdk().await;
    let q = aws_sdk_sqs::Client::new(&sdk)
        .create_queue()
        .queue_name(root.to_lowercase())
        .send()
        .await
        .unwrap();
    let mut queue_url = q.queue_url().unwrap().to_string();
    if root_queue_gone {
        queue_url.push_str("-gone");
    }
    let run_id = uniq("run-");
    let mut root_resources = serde_json::Map::new();
    root_resources.insert("Queue".into(), json!({"resourceType": "AWS::SQS::Queue", "physicalId": queue_url, "properties": {}, "attributes": {}}));
    let mut root_tpl_resources = serde_json::Map::new();
    root_tpl_resources.insert("Queue".into(), json!({"Type": "AWS::SQS::Queue"}));
    let mut stacks = Vec::new();
    let mut topics = Vec::new();
    for i in 1..=children {
        let logical = if i == 1 {
            "Child".to_string()
        } else {
            format!("Child{i}")
        };
        let name = format!("{root}~{logical}");
        let topic = aws_sdk_sns::Client::new(&sdk)
            .create_topic()
            .name(format!("{root}-events{i}"))
            .send()
            .await
            .unwrap()
            .topic_arn()
            .unwrap()
            .to_string();
        root_resources.insert(logical.clone(), json!({"resourceType": "AWS::CloudFormation::Stack", "physicalId": format!("arn:aws:cloudformation:us-east-1:123456789012:stack/{root}-{logical}/1"), "properties": {}, "attributes": {}}));
        let mut row = json!({"Type": "AWS::CloudFormation::Stack", "Properties": {"TemplateURL": format!("https://example.invalid/{logical}.json")}});
        if no_echo {
            row["Properties"]["Parameters"] = json!({"Password": {"Ref": "DbPassword"}});
        }
        root_tpl_resources.insert(logical.clone(), row);
        let rec = json!({"version": 10, "stackName": name, "region": REGION, "parentStack": root, "parentLogicalId": logical,
            "resources": {"Topic": {"resourceType": "AWS::SNS::Topic", "physicalId": topic, "properties": {}, "attributes": {}}}});
        let mut tpl = json!({"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
            "Outputs": {"TopicArn": {"Value": {"Ref": "Topic"}}}});
        if no_echo {
            // No Outputs either: the child's phase 2 has nothing to change, so the flip
            // runs and must re-send the parameter, which has no Default.
            tpl["Parameters"] = json!({"Password": {"Type": "String", "NoEcho": true}});
            tpl.as_object_mut().unwrap().remove("Outputs");
        }
        stacks.push((name, rec, tpl));
        topics.push(topic);
    }
    let root_rec =
        json!({"version": 10, "stackName": root, "region": REGION, "resources": root_resources});
    if let Some(topic) = custom {
        root_resources.insert(
            "Thing".into(),
            json!({"resourceType": "Custom::Thing", "physicalId": "thing-old",
            "properties": {"ServiceToken": topic}, "provisionedBy": "custom"}),
        );
        root_tpl_resources.insert(
            "Thing".into(),
            json!({"Type": "Custom::Thing", "Properties": {"ServiceToken": topic}}),
        );
    }
    let mut root_tpl = json!({"Resources": root_tpl_resources, "Outputs": {"QueueUrl": {"Value": {"Ref": "Queue"}}}});
    if no_echo {
        root_tpl["Parameters"] = json!({"DbPassword": {"Type": "String", "NoEcho": true}});
    }
    stacks.insert(0, (root.clone(), root_rec, root_tpl));
    let topic = topics[0].clone();
    let mut templates = serde_json::Map::new();
    for (name, rec, tpl) in &stacks {
        h::put_raw(
            &s3,
            &bucket,
            &format!("{PREFIX}/{name}/{REGION}/state.json"),
            rec.to_string(),
        )
        .await;
        let key = format!("{PREFIX}/_runs/{run_id}/templates/{name}.json");
        h::put_raw(&s3, &bucket, &key, tpl.to_string()).await;
        templates.insert(name.clone(), Value::String(key));
    }
    let children: Vec<String> = stacks[1..].iter().map(|(n, _, _)| n.clone()).collect();
    let input = json!({"stack": root, "stateBucket": bucket, "statePrefix": PREFIX,
        "templates": templates, "options": {"fast": true, "includeNonImportable": custom.is_some(),
            "parameters": if no_echo { vec!["DbPassword=s3cret"] } else { vec![] }}, "dryRun": false});
    let r = Run {
        s3: s3.clone(),
        bucket: bucket.clone(),
        stack: root.clone(),
        run_id: run_id.clone(),
        queue_url: queue_url.clone(),
        deps: deps().await,
    };
    let plan = r
        .step("export-plan", json!({"input": input, "runId": run_id}))
        .await
        .expect("plan");
    let lock_payload = json!({"input": input, "runId": run_id, "plan": plan});
    let carry: Carry = serde_json::from_value(
        r.step("export-lock", lock_payload.clone())
            .await
            .expect("lock"),
    )
    .unwrap();
    Tree {
        r,
        root,
        child: children[0].clone(),
        children,
        lock_payload,
        topic,
        queue_url,
        carry,
    }
}

/// The tree migrated step by step: the child's 1A, its phase 2 (its Outputs) while it
/// stands alone, the root's 1A, the adoption (1B), the root's phase 2, the cleanup.
#[tokio::test]
async fn export_steps_statement_85_a_two_level_tree_imports_the_child_then_the_root_adopts_it() {
    let Tree {
        r,
        root,
        child,
        topic,
        queue_url,
        carry,
        ..
    } = locked_tree(false).await;
    let (s3, bucket, run_id) = (r.s3.clone(), r.bucket.clone(), r.run_id.clone());
    assert_eq!(carry.stack, child, "the leaf comes first");
    let driven = r.drive(carry, Next::Cleanup).await;
    if let Err(e) = &driven {
        let progress = h::get_text(
            &s3,
            &bucket,
            &format!("{PREFIX}/_runs/{run_id}/progress.json"),
        )
        .await;
        panic!("the tree did not migrate: {e}\nprogress: {progress:?}");
    }
    let carry = driven.unwrap();
    assert_eq!(carry.next, Next::Cleanup);
    let done = r
        .step("export-cleanup", serde_json::to_value(&carry).unwrap())
        .await
        .expect("cleanup");
    assert_eq!(done["report"]["outcome"], "migrated", "{done}");

    let cfn = cfn().await;
    let child_cfn = format!("{root}-Child");
    let described_child = cfn
        .describe_stacks()
        .stack_name(&child_cfn)
        .send()
        .await
        .unwrap();
    let c = &described_child.stacks()[0];
    let root_described = cfn
        .describe_stacks()
        .stack_name(&root)
        .send()
        .await
        .unwrap();
    let root_id = root_described.stacks()[0].stack_id().unwrap().to_string();
    assert_eq!(
        c.parent_id(),
        Some(root_id.as_str()),
        "the child is nested in the root"
    );
    let outputs: Vec<_> = c
        .outputs()
        .iter()
        .filter_map(|o| o.output_value())
        .collect();
    assert_eq!(
        outputs,
        [topic.as_str()],
        "the child's Outputs, from its phase 2"
    );
    let res = cfn
        .describe_stack_resources()
        .stack_name(&root)
        .send()
        .await
        .unwrap();
    let ids: std::collections::BTreeMap<_, _> = res
        .stack_resources()
        .iter()
        .map(|x| {
            (
                x.logical_resource_id().unwrap_or_default(),
                x.physical_resource_id().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(ids.get("Queue"), Some(&queue_url.as_str()), "{ids:?}");
    assert_eq!(ids.get("Child"), Some(&c.stack_id().unwrap()), "{ids:?}");
    let keys = r.keys().await;
    for name in [&root, &child] {
        assert!(
            !keys.contains(&format!("{PREFIX}/{name}/{REGION}/state.json")),
            "{keys:?}"
        );
    }
    assert!(!keys.iter().any(|k| k.ends_with("lock.json")), "{keys:?}");
    // The adoption's processed child template is a transient upload, deleted by the
    // cleanup like the change sets' templates (docs/export.md §10.2).
    assert!(
        !keys.iter().any(|k| k.contains("/changesets/")),
        "no transient upload is left: {keys:?}"
    );
}

/// Two children of one root: the second child's phase 1A is submitted while the first
/// one's is in flight (siblings side by side), the root starts once both are done and
/// adopts both.
#[tokio::test]
async fn export_steps_siblings_are_imported_side_by_side_and_the_root_adopts_both() {
    let Tree {
        r,
        root,
        children,
        carry,
        ..
    } = locked_tree_of(false, 2, false, None).await;
    let mut peak: Vec<String> = Vec::new();
    let mut root_started_with_children_in_flight = false;
    let carry = r
        .drive_watching(carry, Next::Cleanup, &mut |c| {
            if c.in_flight.len() > peak.len() {
                peak = c.in_flight.iter().map(|f| f.stack.clone()).collect();
            }
            if c.in_flight.iter().any(|f| f.stack == root)
                && c.in_flight.iter().any(|f| f.stack != root)
            {
                root_started_with_children_in_flight = true;
            }
        })
        .await
        .expect("the tree migrates");
    peak.sort();
    let mut both = children.clone();
    both.sort();
    assert_eq!(peak, both, "both children were in flight at once");
    assert!(!root_started_with_children_in_flight);
    let done = r
        .step("export-cleanup", serde_json::to_value(&carry).unwrap())
        .await
        .expect("cleanup");
    assert_eq!(done["report"]["outcome"], "migrated", "{done}");
    let cfn = cfn().await;
    let root_id = cfn
        .describe_stacks()
        .stack_name(&root)
        .send()
        .await
        .unwrap()
        .stacks()[0]
        .stack_id()
        .unwrap()
        .to_string();
    for (i, _) in children.iter().enumerate() {
        let logical = if i == 0 {
            "Child".to_string()
        } else {
            format!("Child{}", i + 1)
        };
        let described = cfn
            .describe_stacks()
            .stack_name(format!("{root}-{logical}"))
            .send()
            .await
            .unwrap();
        assert_eq!(
            described.stacks()[0].parent_id(),
            Some(root_id.as_str()),
            "{logical} is nested in the root"
        );
    }
}

/// A NoEcho parameter the root passes to its child as a plain Ref: the plan stores it
/// masked, the child's change sets get the value resolved again from the root's
/// `--parameter` (docs/export.md §6.3); the tree migrates. The child's phase 2 has
/// nothing to change, so it is flipped, which re-sends that parameter (no Default) by
/// its previous value (statement 88).
#[tokio::test]
async fn export_steps_statement_88_a_no_echo_parameter_passed_to_a_child_is_resolved_again_and_the_flip_resends_it(
) {
    let Tree {
        r, child, carry, ..
    } = locked_tree_of(false, 1, true, None).await;
    let plan = h::get_text(
        &r.s3,
        &r.bucket,
        &format!("{PREFIX}/_runs/{}/plan.json", r.run_id),
    )
    .await
    .unwrap();
    assert!(
        !plan.contains("s3cret"),
        "the plan stores it masked: {plan}"
    );
    let carry = r
        .drive(carry, Next::Cleanup)
        .await
        .expect("the tree migrates");
    let done = r
        .step("export-cleanup", serde_json::to_value(&carry).unwrap())
        .await
        .expect("cleanup");
    assert_eq!(done["report"]["outcome"], "migrated", "{done}");
    let described = cfn()
        .await
        .describe_stacks()
        .stack_name(child.replace('~', "-"))
        .send()
        .await
        .unwrap();
    let keys: Vec<_> = described.stacks()[0]
        .parameters()
        .iter()
        .filter_map(|p| p.parameter_key())
        .collect();
    assert_eq!(keys, ["Password"], "the child got its NoEcho parameter");
    let tags: Vec<_> = described.stacks()[0]
        .tags()
        .iter()
        .filter_map(|t| t.key())
        .collect();
    assert!(
        tags.contains(&"cdkd:nested-export-flip"),
        "the child was flipped: {tags:?}"
    );
}

/// Statement 84 (docs/export.md §12): a child's lock held by another process refuses
/// the run at `export-lock`, naming the holder; the root's lock, taken first, is given
/// back and nothing is submitted.
#[tokio::test]
async fn export_steps_statement_84_a_childs_lock_held_elsewhere_refuses_and_gives_the_roots_back() {
    let Tree {
        r,
        root,
        child,
        carry,
        lock_payload,
        ..
    } = locked_tree(false).await;
    // Give back this run's locks, then let someone else hold the child's.
    r.step(
        "export-abort",
        json!({"run": carry, "error": {"Error": "Test", "Cause": "reset"}}),
    )
    .await
    .expect("abort");
    let lock = json!({"owner": "someone@host:1", "timestamp": 1, "expiresAt": 99999999999999i64, "operation": "deploy"});
    let child_lock = format!("{PREFIX}/{child}/{REGION}/lock.json");
    h::put_raw(&r.s3, &r.bucket, &child_lock, lock.to_string()).await;
    let err = r
        .step("export-lock", lock_payload)
        .await
        .expect_err("the child's lock is held");
    assert_eq!(err.name, "LockHeld", "{err:?}");
    assert!(
        err.message.contains("someone@host:1") && err.message.ends_with("nothing was submitted"),
        "{err:?}"
    );
    let keys = r.keys().await;
    assert!(
        !keys.contains(&format!("{PREFIX}/{root}/{REGION}/lock.json")),
        "the root's lock is given back: {keys:?}"
    );
    assert_eq!(
        h::get_text(&r.s3, &r.bucket, &child_lock).await.as_deref(),
        Some(lock.to_string().as_str()),
        "the other process's lock is untouched"
    );
    let stacks = cfn().await.list_stacks().send().await.unwrap();
    assert!(
        !stacks
            .stack_summaries()
            .iter()
            .any(|s| s.stack_name() == Some(root.as_str())),
        "nothing was submitted"
    );
}

/// Statement 89 (docs/export.md §12): a Custom Resource only in the parent: only the
/// parent's phase 2 creates it (one request reaches the provider, for the root), and the
/// parent's final template keeps the adopted child row with `DeletionPolicy: Retain`.
#[tokio::test]
async fn export_steps_statement_89_a_custom_resource_only_in_the_parent_is_created_by_its_phase2_only(
) {
    let tag = uniq("ExportCr");
    let (topic, queue) = h::provider::sns_provider(&tag).await;
    let Tree { r, root, carry, .. } = locked_tree_of(false, 1, false, Some(&topic)).await;
    let provider = tokio::spawn(h::provider::answer_requests(queue, 1));
    let carry = r
        .drive(carry, Next::Cleanup)
        .await
        .expect("the tree migrates");
    let done = r
        .step("export-cleanup", serde_json::to_value(&carry).unwrap())
        .await
        .expect("cleanup");
    assert_eq!(done["report"]["outcome"], "migrated", "{done}");
    let events = provider.await.unwrap();
    assert!(
        events[0]["StackId"]
            .as_str()
            .unwrap_or_default()
            .contains(&format!("stack/{root}/")),
        "the one request is the root's: {events:?}"
    );
    let cfn = cfn().await;
    let body = cfn
        .get_template()
        .stack_name(&root)
        .send()
        .await
        .unwrap()
        .template_body()
        .unwrap()
        .to_string();
    let t: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(t["Resources"]["Child"]["DeletionPolicy"], "Retain", "{t}");
    let res = cfn
        .describe_stack_resources()
        .stack_name(&root)
        .send()
        .await
        .unwrap();
    assert!(
        res.stack_resources()
            .iter()
            .any(|x| x.logical_resource_id() == Some("Thing")
                && x.physical_resource_id() == Some("Thing-new")),
        "{res:?}"
    );
}

/// Failure injected at the root's phase 1A of a nested run: the child is imported (and
/// has its phase 2), the report names the adoption to redo by hand, every record of the
/// tree is kept, the locks are released.
#[tokio::test]
async fn export_steps_a_nested_run_failing_at_the_roots_import_reports_the_adoption_to_redo() {
    let Tree {
        r,
        root,
        child,
        carry,
        ..
    } = locked_tree(true).await;
    let err = r
        .drive(carry.clone(), Next::Cleanup)
        .await
        .expect_err("the root's import fails");
    let abort = r
        .step(
            "export-abort",
            json!({"run": carry, "error": {"Error": err.name, "Cause": err.message}}),
        )
        .await
        .unwrap();
    let report = &abort["report"];
    assert_eq!(report["stacks"][0]["stack"], child.as_str(), "{report}");
    assert_eq!(report["stacks"][0]["stage"], "migrated", "{report}");
    assert_eq!(report["stacks"][1]["stage"], "importing", "{report}");
    let redo = report["redo"].to_string();
    assert!(
        redo.contains(&format!(
            "already-imported nested stacks ({root}-Child) must be adopted"
        )),
        "{redo}"
    );
    let keys = r.keys().await;
    for name in [&root, &child] {
        assert!(
            keys.contains(&format!("{PREFIX}/{name}/{REGION}/state.json")),
            "no record of the tree is deleted: {keys:?}"
        );
    }
    assert!(
        !keys.iter().any(|k| k.ends_with("lock.json")),
        "the locks are released: {keys:?}"
    );
}
