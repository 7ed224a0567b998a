//! Exports through the deployed backend: a flat stack holding an `AWS::IAM::Policy` row
//! (phase 2 pre-deletes it with the delete policy its role holds), and a root with two
//! nested children, each waiting for approval first; a rejected run; a run whose step's
//! process is killed mid-invocation; a run stopped at once and resumed by the same
//! command; a failed import whose empty stack the abort removes.

use std::path::PathBuf;
use std::time::Duration;

use super::{backend, inbox, invocations, lambda_steps, status, uniq, wait_until, Backend};
use cdkd_tests as h;
use serde_json::{json, Value};

/// A role with an inline policy recorded as an `AWS::IAM::Policy` row, and a queue, in
/// the backend's bucket; the template that declares them.
pub struct PolicyStack {
    pub stack: String,
    pub role: String,
    pub queue: String,
    pub template: String,
}

pub async fn policy_stack(b: &Backend, tag: &str) -> PolicyStack {
    let stack = uniq(tag);
    let name = stack.to_lowercase();
    let sdk = h::sdk().await;
    let iam = aws_sdk_iam::Client::new(&sdk);
    let role = format!("{name}-role");
    let trust = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
        "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]});
    iam.create_role()
        .role_name(&role)
        .assume_role_policy_document(trust.to_string())
        .send()
        .await
        .unwrap();
    let doc = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*"}]});
    iam.put_role_policy()
        .role_name(&role)
        .policy_name("Send")
        .policy_document(doc.to_string())
        .send()
        .await
        .unwrap();
    let queue = h::fixtures::queue(&sdk, &format!("{name}-work")).await;
    let rec = json!({"version": 10, "stackName": stack, "region": "us-east-1", "resources": {
        "Role": {"resourceType": "AWS::IAM::Role", "physicalId": role, "properties": {"RoleName": role},
                 "attributes": {"Arn": format!("arn:aws:iam::123456789012:role/{role}")}, "provisionedBy": "sdk"},
        "SendPolicy": {"resourceType": "AWS::IAM::Policy", "physicalId": "Send",
                       "properties": {"PolicyName": "Send", "PolicyDocument": doc, "Roles": [role]},
                       "dependencies": ["Role"], "provisionedBy": "sdk"},
        "WorkQueue": {"resourceType": "AWS::SQS::Queue", "physicalId": queue, "properties": {},
                      "attributes": {}, "dependencies": [], "provisionedBy": "sdk"}
    }, "outputs": {}, "lastModified": 1777458225000i64});
    let tpl = json!({"Resources": {
        "Role": {"Type": "AWS::IAM::Role", "Properties": {"RoleName": role, "AssumeRolePolicyDocument": trust}},
        "SendPolicy": {"Type": "AWS::IAM::Policy",
                       "Properties": {"PolicyName": "Send", "PolicyDocument": doc, "Roles": [{"Ref": "Role"}]}},
        "WorkQueue": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": format!("{name}-work")}}
    }, "Outputs": {"RoleName": {"Value": {"Ref": "Role"}}}});
    h::put_raw(
        &h::s3().await,
        &b.bucket,
        &format!("cdkd/{stack}/us-east-1/state.json"),
        serde_json::to_vec_pretty(&rec).unwrap(),
    )
    .await;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("deployed");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{stack}.template.json"));
    std::fs::write(&path, serde_json::to_vec_pretty(&tpl).unwrap()).unwrap();
    PolicyStack {
        stack,
        role,
        queue,
        template: path.to_string_lossy().into_owned(),
    }
}

/// Waits until run `run_id` waits for approval (its `approval.json` written and its
/// execution waiting on the approval task).
pub async fn waiting_for_approval(b: &Backend, run_id: &str) {
    let key = format!("cdkd/_runs/{run_id}/approval.json");
    let bucket = b.bucket.clone();
    wait_until(
        &format!("run {run_id} waits for approval"),
        Duration::from_secs(120),
        || {
            let (bucket, key) = (bucket.clone(), key.clone());
            async move { h::get_text(&h::s3().await, &bucket, &key).await.is_some() }
        },
    )
    .await;
}

fn assert_ok(run: &h::CliRun, what: &str) {
    assert_eq!(
        run.code, 0,
        "{what}\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
}

async fn record_exists(b: &Backend, stack: &str) -> bool {
    let key = format!("cdkd/{stack}/us-east-1/state.json");
    h::get_text(&h::s3().await, &b.bucket, &key).await.is_some()
}

/// Phase 2's pre-delete of an `AWS::IAM::Policy` row needs the delete policy on
/// export-phase2's role: before the fix the run stopped with PreDeleteFailed after the
/// IMPORT.
#[tokio::test]
async fn deployed_export_of_a_flat_stack_with_an_iam_policy_waits_for_approval_then_migrates() {
    let b = backend();
    let s = policy_stack(&b, "DeployedPolicy").await;
    inbox::open().await;
    let run_id = uniq("export");
    let start = b.export(&s, &run_id, &["--require-approval", "--detach"]);
    assert_ok(&start, "export --require-approval --detach");
    waiting_for_approval(&b, &run_id).await;
    let arn = b.execution_arn("ExportStateMachineArn", &run_id).await;
    assert_eq!(status(&arn).await, "RUNNING", "it waits");
    let (text, detail) = inbox::expect("approval-waiting", &run_id).await;
    assert!(
        text.contains(&format!("cdkd-flow runs approve {arn}")),
        "the message names the run by its execution ARN: {text}"
    );
    assert_eq!(detail["stack"], s.stack.as_str());
    assert!(
        h::cfn::described(&s.stack).await.is_none(),
        "nothing in CloudFormation before the approval"
    );

    assert_ok(&b.cli(&["runs", "approve", &run_id]), "runs approve");
    let watched = b.cli(&["runs", "watch", &run_id]);
    assert_ok(&watched, "runs watch");
    assert_eq!(status(&arn).await, "SUCCEEDED");

    let res = h::cfn::stack_resources(&s.stack).await;
    assert_eq!(res.get("Role"), Some(&s.role), "{res:?}");
    assert_eq!(res.get("WorkQueue"), Some(&s.queue), "{res:?}");
    assert!(
        res.contains_key("SendPolicy"),
        "phase 2 re-created the policy: {res:?}"
    );
    let policies = aws_sdk_iam::Client::new(&h::sdk().await)
        .list_role_policies()
        .role_name(&s.role)
        .send()
        .await
        .unwrap();
    assert_eq!(policies.policy_names(), ["Send"]);
    assert!(
        !record_exists(&b, &s.stack).await,
        "the migrated record is deleted"
    );
    let (_, detail) = inbox::expect("run-succeeded", &run_id).await;
    assert_eq!(detail["outcome"], "migrated");
    let steps = lambda_steps(&arn).await;
    for step in [
        "ExportPlanFunction",
        "ExportApprovalFunction",
        "ExportLockFunction",
        "ExportImportFunction",
        "ExportPhase2Function",
        "ExportCleanupFunction",
    ] {
        assert!(steps.iter().any(|s| s.contains(step)), "{step}: {steps:?}");
    }
}

#[tokio::test]
async fn deployed_export_rejected_ends_failed_and_changes_nothing() {
    let b = backend();
    let s = policy_stack(&b, "DeployedReject").await;
    let run_id = uniq("export");
    assert_ok(
        &b.export(&s, &run_id, &["--require-approval", "--detach"]),
        "export --require-approval --detach",
    );
    waiting_for_approval(&b, &run_id).await;
    assert_ok(
        &b.cli(&["runs", "reject", &run_id, "--reason", "not today"]),
        "runs reject",
    );
    let watched = b.cli(&["runs", "watch", &run_id]);
    assert_eq!(watched.code, 1, "{}\n{}", watched.stdout, watched.stderr);
    let arn = b.execution_arn("ExportStateMachineArn", &run_id).await;
    assert_eq!(status(&arn).await, "FAILED");
    assert!(h::cfn::described(&s.stack).await.is_none());
    assert!(record_exists(&b, &s.stack).await, "the record is kept");
    let lock = format!("cdkd/{}/us-east-1/lock.json", s.stack);
    assert!(h::get_text(&h::s3().await, &b.bucket, &lock)
        .await
        .is_none());
}

#[tokio::test]
async fn deployed_export_of_a_root_with_nested_children_waits_for_approval_then_migrates() {
    use crate::export_tree_cli::{assembly, export_args, seeded_tree_in, ALPHA, BETA, ROOT};
    let b = backend();
    let t = seeded_tree_in(b.bucket.clone(), false).await;
    let mut args: Vec<String> = export_args(&t, &assembly())
        .into_iter()
        .filter(|a| !matches!(a.as_str(), "--local" | "--fast" | "-y"))
        .collect();
    // export_args names the tree's own bucket first.
    args.extend(["--require-approval".to_string(), "--detach".to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).skip(2).collect();
    assert_ok(&b.cli(&args), "export --require-approval --detach");
    waiting_for_approval(&b, &t.run_id).await;
    assert_ok(&b.cli(&["runs", "approve", &t.run_id]), "runs approve");
    assert_ok(&b.cli(&["runs", "watch", &t.run_id]), "runs watch");

    for name in [&t.root_cfn, &t.alpha_cfn, &t.beta_cfn] {
        let d = h::cfn::described(name)
            .await
            .unwrap_or_else(|| panic!("no stack {name}"));
        let st = d.stack_status().map(|s| s.as_str().to_string());
        assert!(
            st.as_deref()
                .is_some_and(|s| s.ends_with("_COMPLETE") && !s.contains("ROLLBACK")),
            "{name}: {st:?}"
        );
    }
    let root = h::cfn::stack_resources(&t.root_cfn).await;
    assert!(root.values().any(|v| v == &t.queue_url), "{root:?}");
    assert_eq!(h::cfn::stack_resources(&t.alpha_cfn).await.len(), 1);
    for stack in [ROOT, ALPHA, BETA] {
        assert!(
            !record_exists(&b, stack).await,
            "{stack}'s record is deleted"
        );
    }
    let arn = b.execution_arn("ExportStateMachineArn", &t.run_id).await;
    let steps = lambda_steps(&arn).await;
    // Phase 1B: the root adopted its children by an IMPORT of its own.
    assert!(
        steps.iter().any(|s| s.contains("ExportAdoptFunction")),
        "{steps:?}"
    );
}

/// Lambda's own failure: the process of export-import is killed while it serves the
/// invocation; the Task's Retry invokes it again (a fresh process) and the run ends
/// migrated.
#[tokio::test]
async fn deployed_export_survives_a_step_process_killed_mid_invocation() {
    let b = backend();
    let s = policy_stack(&b, "DeployedKilled").await;
    let function = b.function_named("ExportImportFunction").await;
    h::emulator_post(
        "/_cdkd_emulator/lambda/kill",
        &json!({"function": function}).to_string(),
        "Content-Type: application/json\r\n",
    )
    .await;
    let run_id = uniq("export");
    let run = b.export(&s, &run_id, &["-y"]);
    assert_ok(&run, "export -y");
    let killed: Vec<Value> = invocations()
        .await
        .into_iter()
        .filter(|i| i["function"].as_str() == Some(function.as_str()))
        .collect();
    assert!(
        killed
            .iter()
            .any(|i| i["killed"] == true && i["error"] == "Runtime.ExitError"),
        "one invocation failed as the process was killed: {killed:#?}"
    );
    assert!(
        killed.iter().any(|i| i["error"].is_null()),
        "the retry succeeded: {killed:#?}"
    );
    assert!(h::cfn::stack_resources(&s.stack).await.contains_key("Role"));
}

/// `runs stop --now` stops the execution where it is (its lock stays held); the same
/// command resumes it as a new execution served by export-lock, which reads the stack
/// and the change set the stopped run left (before the fix: AccessDenied).
#[tokio::test]
async fn deployed_export_stopped_at_once_resumes_with_the_same_command() {
    let b = backend();
    let s = policy_stack(&b, "DeployedResume").await;
    inbox::open().await;
    let run_id = uniq("export");
    let args = [
        "export",
        s.stack.as_str(),
        "--template",
        s.template.as_str(),
        "-y",
        "--require-approval",
        "--detach",
        "--run-id",
        run_id.as_str(),
    ];
    assert_ok(&b.cli(&args), "export");
    waiting_for_approval(&b, &run_id).await;
    // Held in phase 1: the stack's IMPORT change set is throttled until the guard drops.
    let hold = h::faults::inject_fault(&h::faults::Fault::cfn(
        "DescribeChangeSet",
        &[("StackName", &h::faults::exact(&s.stack))],
        "Throttling",
        "Rate exceeded",
    ));
    assert_ok(&b.cli(&["runs", "approve", &run_id]), "runs approve");
    wait_until(
        "the import's poll is held",
        Duration::from_secs(120),
        || async { hold.state().map_or(0, |v| v["hits"].as_u64().unwrap_or(0)) > 0 },
    )
    .await;
    let stop = b.cli(&["runs", "stop", &run_id, "--now"]);
    assert_ok(&stop, "runs stop --now");
    let arn = b.execution_arn("ExportStateMachineArn", &run_id).await;
    wait_until("the execution is aborted", Duration::from_secs(30), || {
        let arn = arn.clone();
        async move { status(&arn).await == "ABORTED" }
    })
    .await;
    drop(hold);
    // Step Functions' own status-change event reached the run-ended function's rule.
    let (_, detail) = inbox::expect("run-failed", &run_id).await;
    assert_eq!(detail["operation"], "export", "{detail:#}");

    let again = b.export(&s, &run_id, &["-y"]);
    assert_ok(&again, "the same command again");
    assert!(h::cfn::stack_resources(&s.stack)
        .await
        .contains_key("SendPolicy"));
    assert!(!record_exists(&b, &s.stack).await);
}

/// A resource the record names that does not exist: the IMPORT change set fails; the
/// abort removes the empty stack the change set left (before the fix its role could not
/// describe or delete it, and the next export was refused "stack exists").
#[tokio::test]
async fn deployed_export_whose_import_fails_leaves_no_empty_stack() {
    let b = backend();
    let s = policy_stack(&b, "DeployedGone").await;
    inbox::open().await;
    aws_sdk_sqs::Client::new(&h::sdk().await)
        .delete_queue()
        .queue_url(&s.queue)
        .send()
        .await
        .unwrap();
    let run_id = uniq("export");
    let run = b.export(&s, &run_id, &["-y"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        h::cfn::described(&s.stack).await.is_none(),
        "the empty stack is removed"
    );
    assert!(record_exists(&b, &s.stack).await, "the record is kept");
    let (_, detail) = inbox::expect("run-failed", &run_id).await;
    assert_eq!(detail["outcome"], "failed", "{detail:#}");
}

impl Backend {
    /// `export <stack> --template <template> <extra> --run-id <run_id>` (deployed).
    pub fn export(&self, s: &PolicyStack, run_id: &str, extra: &[&str]) -> h::CliRun {
        let mut args = vec![
            "export",
            s.stack.as_str(),
            "--template",
            s.template.as_str(),
        ];
        args.extend_from_slice(extra);
        args.extend(["--run-id", run_id]);
        self.cli(&args)
    }

    /// The physical name of the backend's function `logical` (e.g. `ExportImportFunction`).
    pub async fn function_named(&self, logical: &str) -> String {
        h::cfn::stack_resources(&self.stack)
            .await
            .remove(logical)
            .unwrap_or_else(|| panic!("the backend stack has no {logical}"))
    }
}
