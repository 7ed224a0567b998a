//! The export approval gate end to end (docs/export.md, "Approval (export-approval)").
//!
//! Local: `cdkd-flow export <stack> --local --fast --require-approval` (the binary, a
//! child process) on a seeded flat stack of real emulator resources waits after the
//! plan with `approval.json` written and nothing locked; `cdkd-flow runs approve <run>
//! --local` lets it migrate; `runs reject` ends it failed naming the rejection, with no
//! lock taken and the record untouched.
//!
//! Deployed: the export state machine created in the emulator from
//! `statemachines/export.asl.json` with stub Lambdas (the emulator's interpreter is off,
//! so executions stay RUNNING and the test plays the steps by writing their artifacts):
//! `export --require-approval` without `--local` starts the run with `requireApproval`
//! in its input, `runs show` says it waits, `runs approve` records the decision and
//! calls SendTaskSuccess (which the emulator accepts for any token), a second answer is
//! refused naming who decided, and `runs reject` records a rejection.
//!
//! Run: `scripts/with-emulator.sh cargo test --workspace --test e2e -- --test-threads=1 export_approval`.

use crate::follower::Follower;
use std::ops::Deref;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::export_support::{real_stack, uniq, RealStack, REGION};
use cdkd_core::export::approval::{approval_key, Approval, PlanSummary};
use cdkd_functions::definitions;
use cdkd_tests as h;
use serde_json::{json, Value};

fn cli(args: &[&str], env: &[(&str, &str)]) -> h::CliRun {
    crate::run_cli_env(args, env)
}

/// A queue and a topic in the emulator, recorded in a cdkd record, and the template
/// that matches them; the id of the run that exports them.
struct Seeded {
    real: RealStack,
    run_id: String,
}

impl Deref for Seeded {
    type Target = RealStack;

    fn deref(&self) -> &RealStack {
        &self.real
    }
}

async fn seeded(tag: &str) -> Seeded {
    let real = real_stack(tag).await;
    let run_id = format!("export-{}-approval", real.stack);
    Seeded { real, run_id }
}

/// `cdkd-flow export <stack> --template ... --local --fast --require-approval` as a
/// child process (it waits for the decision).
fn start_local_export(s: &Seeded) -> Child {
    crate::cli_command(&s.export_args(&s.run_id, &["--require-approval"]))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start cdkd-flow export")
}

/// Waits for the child to end (at most two minutes); its exit code, stdout, stderr.
async fn finished(child: Child) -> h::CliRun {
    let out = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::task::spawn_blocking(move || child.wait_with_output().unwrap()),
    )
    .await
    .expect("the export ended within two minutes")
    .unwrap();
    h::CliRun {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The run's approval.json, once it is there (at most a minute).
async fn approval_request(bucket: &str, run_id: &str, child: &mut Child) -> Approval {
    let s3 = h::s3().await;
    let key = approval_key("cdkd", run_id);
    let t0 = Instant::now();
    loop {
        if let Some(text) = h::get_text(&s3, bucket, &key).await {
            return serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the export ended ({status}) before asking for approval");
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no {key} within a minute"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn keys(bucket: &str) -> Vec<String> {
    h::list_all_keys(&h::s3().await, bucket).await
}

// ------------------------------------------------------------------- local

#[tokio::test]
async fn a_local_export_with_require_approval_waits_unlocked_and_migrates_once_approved() {
    let s = seeded("ApproveLocal").await;
    let mut child = start_local_export(&s);
    let request = approval_request(&s.bucket, &s.run_id, &mut child).await;
    assert_eq!(request.stack, s.stack);
    assert_eq!(request.run_id, s.run_id);
    assert!(!request.token.is_empty());
    assert_eq!(request.decision, None);
    assert_eq!(
        request.plan_key,
        format!("cdkd/_runs/{}/plan.json", s.run_id)
    );
    assert_eq!(request.summary.import_rows, 2, "{request:?}");
    // Waiting: nothing locked, the record as it was.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(child.try_wait().unwrap().is_none(), "the export must wait");
    assert!(
        !keys(&s.bucket)
            .await
            .iter()
            .any(|k| k.ends_with("lock.json")),
        "no lock while waiting"
    );

    let r = cli(
        &[
            "--state-bucket",
            &s.bucket,
            "runs",
            "approve",
            &s.run_id,
            "--local",
            "--reason",
            "checked the plan",
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("approved by "), "{r:?}");

    let run = finished(child).await;
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    // One line named the commands that answer, then the run was followed as usual.
    let waiting: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("waits for approval before the lock"))
        .collect();
    assert_eq!(waiting.len(), 1, "{}", run.stderr);
    assert!(
        waiting[0].contains(&format!(
            "cdkd-flow runs approve {} --local --state-bucket {}",
            s.run_id, s.bucket
        )) && waiting[0].contains(&format!("cdkd-flow runs reject {}", s.run_id)),
        "{}",
        waiting[0]
    );
    assert!(
        run.stderr.contains("approved by ") && run.stderr.contains("checked the plan"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("[y/N]"),
        "no confirmation is asked: {}",
        run.stderr
    );
    assert!(
        run.stdout.contains("migrated; cdkd record deleted"),
        "{}",
        run.stdout
    );
    let all = keys(&s.bucket).await;
    assert!(!all.contains(&s.state_key()), "{all:?}");
    assert!(!all.iter().any(|k| k.ends_with("lock.json")), "{all:?}");
    let text = h::get_text(&h::s3().await, &s.bucket, &approval_key("cdkd", &s.run_id))
        .await
        .unwrap();
    let decided: Approval = serde_json::from_str(&text).unwrap();
    let d = decided.decision.expect("the decision is kept");
    assert!(d.approved);
    assert_eq!(d.reason.as_deref(), Some("checked the plan"));
    assert_eq!(decided.token, request.token);

    // The run has ended: nothing waits for a decision. The refusal names its state and
    // who decided.
    let again = cli(
        &[
            "--state-bucket",
            &s.bucket,
            "runs",
            "reject",
            &s.run_id,
            "--local",
        ],
        &[],
    );
    assert_eq!(again.code, 1, "{again:?}");
    assert!(
        again.stderr.contains(&format!(
            "run {} has ended (migrated); it was approved by {}",
            s.run_id, d.by
        )) && again.stderr.contains("nothing to reject"),
        "{again:?}"
    );
}

/// A local run whose process is gone waits for nothing: `runs approve|reject --local`
/// refuses it (exit 1) naming its state and the command that resumes it, and writes no
/// decision (docs/export.md, "Approval (export-approval)").
#[tokio::test]
async fn a_local_run_interrupted_while_it_waits_is_neither_approved_nor_rejected_and_names_the_resume(
) {
    let s = seeded("ApproveGone").await;
    let mut child = start_local_export(&s);
    approval_request(&s.bucket, &s.run_id, &mut child).await;
    child.kill().expect("kill the export process");
    child.wait().unwrap();
    for verb in ["approve", "reject"] {
        let r = cli(
            &[
                "--state-bucket",
                &s.bucket,
                "runs",
                verb,
                &s.run_id,
                "--local",
            ],
            &[],
        );
        assert_eq!(r.code, 1, "{r:?}");
        let line = r.stderr.lines().last().unwrap_or_default();
        assert!(
            line.contains(&format!("run {} is interrupted (its process ", s.run_id))
                && line.contains("is gone)")
                && line.contains(&format!("nothing to {verb}"))
                && line.contains(&format!(
                    "Resume it with cdkd-flow --state-bucket {} export {}",
                    s.bucket, s.stack
                )),
            "{r:?}"
        );
        assert!(!r.stderr.contains("carries on"), "{r:?}");
    }
    let text = h::get_text(&h::s3().await, &s.bucket, &approval_key("cdkd", &s.run_id))
        .await
        .unwrap();
    let request: Approval = serde_json::from_str(&text).unwrap();
    assert_eq!(request.decision, None, "no decision was written");
}

#[tokio::test]
async fn a_local_export_rejected_ends_failed_naming_the_rejection_with_nothing_locked_or_changed() {
    let s = seeded("RejectLocal").await;
    let mut child = start_local_export(&s);
    approval_request(&s.bucket, &s.run_id, &mut child).await;
    let r = cli(
        &[
            "--state-bucket",
            &s.bucket,
            "runs",
            "reject",
            &s.run_id,
            "--local",
            "--reason",
            "wrong account",
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("rejected by "), "{r:?}");
    let run = finished(child).await;
    assert_eq!(
        run.code, 1,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let last = run.stderr.lines().last().unwrap_or_default();
    assert!(
        last.contains(&format!("export {} failed (Rejected)", s.stack))
            && last.contains("rejected by ")
            && last.contains("wrong account")
            && last.contains("nothing was locked or changed"),
        "{}",
        run.stderr
    );
    // The record untouched, no lock, no CloudFormation stack, no run record.
    let s3 = h::s3().await;
    let (body, _) = h::get_raw(&s3, &s.bucket, &s.state_key())
        .await
        .expect("record kept");
    assert_eq!(serde_json::from_slice::<Value>(&body).unwrap(), s.record);
    let all = keys(&s.bucket).await;
    assert!(!all.iter().any(|k| k.ends_with("lock.json")), "{all:?}");
    assert!(
        !all.iter()
            .any(|k| k == &format!("cdkd/_runs/{}/progress.json", s.run_id)),
        "{all:?}"
    );
    let cfn = aws_sdk_cloudformation::Client::new(&h::sdk().await);
    let exists = cfn.describe_stacks().stack_name(&s.stack).send().await;
    assert!(exists.is_err(), "no CloudFormation stack: {exists:?}");
}

/// Issue #32: a deploy that adds a row while the run waits for approval. The lock
/// compares the record under it with the one the plan was made from, whole: the added
/// row refuses the run by logical id before any change set, the record kept as the
/// deploy left it and every resource still owned by it (docs/export.md, "The lock (export-lock)").
#[tokio::test]
async fn statement_107_record_under_the_lock_a_row_added_while_the_run_waits_for_approval_refuses_it_by_name(
) {
    let s = seeded("ApproveAdded").await;
    let mut child = start_local_export(&s);
    approval_request(&s.bucket, &s.run_id, &mut child).await;
    // A cdkd deploy adds a topic to the stack while the run waits.
    let sdk = h::sdk().await;
    let added_arn = h::fixtures::topic(&sdk, &format!("{}-added", s.stack.to_lowercase())).await;
    let mut deployed = s.record.clone();
    deployed["resources"]["AddedTopic"] = json!({"resourceType": "AWS::SNS::Topic",
        "physicalId": added_arn, "properties": {}, "attributes": {}, "dependencies": [],
        "provisionedBy": "sdk"});
    deployed["lastModified"] = json!(h::now_ms());
    let s3 = h::s3().await;
    h::put_raw(
        &s3,
        &s.bucket,
        &s.state_key(),
        serde_json::to_vec_pretty(&deployed).unwrap(),
    )
    .await;

    let r = cli(
        &[
            "--state-bucket",
            &s.bucket,
            "runs",
            "approve",
            &s.run_id,
            "--local",
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let run = finished(child).await;
    assert_eq!(
        run.code, 1,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(
        run.stderr.contains(&format!(
            "the cdkd record of {} changed after the plan was made",
            s.stack
        )) && run.stderr.contains("rows added: AddedTopic")
            && run.stderr.contains("Nothing was submitted")
            && run.stderr.contains("Run the export again"),
        "{}",
        run.stderr
    );
    // The record as the deploy left it, no lock, no run record, no CloudFormation stack
    // (so no change set), and every resource still there.
    let (body, _) = h::get_raw(&s3, &s.bucket, &s.state_key())
        .await
        .expect("record kept");
    assert_eq!(serde_json::from_slice::<Value>(&body).unwrap(), deployed);
    let all = keys(&s.bucket).await;
    assert!(!all.iter().any(|k| k.ends_with("lock.json")), "{all:?}");
    assert!(
        !all.iter()
            .any(|k| k == &format!("cdkd/_runs/{}/progress.json", s.run_id)),
        "{all:?}"
    );
    let cfn = aws_sdk_cloudformation::Client::new(&sdk);
    let exists = cfn.describe_stacks().stack_name(&s.stack).send().await;
    assert!(exists.is_err(), "no CloudFormation stack: {exists:?}");
    assert!(h::fixtures::topic_exists(&sdk, &added_arn).await);
    assert!(h::fixtures::topic_exists(&sdk, &s.topic_arn).await);
}

// ------------------------------------------------------------------- deployed

/// The export state machine of a deployed backend in the emulator, its functions stubs.
async fn export_machine() -> (aws_sdk_sfn::Client, String) {
    let sdk = h::sdk().await;
    let stub = h::fixtures::stub_function(
        &sdk,
        &uniq("cdkd-flow-stub"),
        aws_sdk_lambda::types::Runtime::Providedal2023,
        None,
    )
    .await;
    let mut def = definitions::EXPORT.to_string();
    for (step, sub) in cdkd_functions::steps::STEPS {
        if step.starts_with("export-") || step.starts_with("run-") {
            def = def.replace(&format!("${{{sub}}}"), &stub);
        }
    }
    assert!(!def.contains("${"), "a substitution is missing");
    let sfn = aws_sdk_sfn::Client::new(&sdk);
    let arn = sfn
        .create_state_machine()
        .name(uniq("cdkd-flow-export"))
        .definition(def)
        .role_arn("arn:aws:iam::123456789012:role/cdkd-flow-approval-cli")
        .send()
        .await
        .unwrap()
        .state_machine_arn;
    (sfn, arn)
}

/// What the plan and approval steps would write for `run_id`: the plan (one import
/// row) and an undecided request with `token`.
async fn play_plan_and_approval(bucket: &str, stack: &str, run_id: &str, token: &str) {
    let s3 = h::s3().await;
    put_plan(bucket, stack, run_id).await;
    let request = Approval {
        stack: stack.into(),
        run_id: run_id.into(),
        token: token.into(),
        requested_ms: h::now_ms(),
        plan_key: format!("cdkd/_runs/{run_id}/plan.json"),
        summary: PlanSummary {
            stacks: 1,
            import_rows: 1,
            warnings: 0,
        },
        decision: None,
    };
    h::put_raw(
        &s3,
        bucket,
        &approval_key("cdkd", run_id),
        serde_json::to_vec_pretty(&request).unwrap(),
    )
    .await;
}

async fn put_plan(bucket: &str, stack: &str, run_id: &str) {
    let plan = json!({
        "stacks": [{
            "stack": stack, "region": REGION, "cfnStackName": stack,
            "templateKey": format!("cdkd/_runs/{run_id}/templates/{stack}.json"),
            "import": [{"logicalId": "WorkQueue", "type": "AWS::SQS::Queue",
                        "physicalId": "https://sqs.us-east-1.amazonaws.com/123456789012/q",
                        "identifier": {"QueueUrl": "https://sqs.us-east-1.amazonaws.com/123456789012/q"},
                        "overlay": {}}],
            "phase2": {"create": [], "recreate": [], "preDelete": []},
            "nested": [], "parameters": [], "blocked": [], "warnings": []
        }],
        "warnings": []
    });
    h::put_raw(
        &h::s3().await,
        bucket,
        &format!("cdkd/_runs/{run_id}/plan.json"),
        serde_json::to_vec_pretty(&plan).unwrap(),
    )
    .await;
}

async fn read_approval(bucket: &str, run_id: &str) -> Approval {
    let text = h::get_text(&h::s3().await, bucket, &approval_key("cdkd", run_id))
        .await
        .expect("approval.json");
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn a_deployed_export_with_require_approval_is_shown_waiting_and_runs_approve_and_reject_answer_it(
) {
    h::set_emulator_interpreter(false).await;
    let (sfn, machine) = export_machine().await;
    let env = [("CDKD_FLOW_EXPORT_STATE_MACHINE_ARN", machine.as_str())];
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let stack = "ExportFlat";
    let template = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/export/flat.template.json")
        .to_string_lossy()
        .into_owned();
    let run = "export-ExportFlat-20261203T100000";
    // The plan run's step cannot run in the emulator: its plan.json is played first.
    put_plan(&bucket, stack, &format!("{run}-plan")).await;
    let r = cli(
        &[
            "--state-bucket",
            &bucket,
            "export",
            stack,
            "--template",
            &template,
            "--require-approval",
            "--run-id",
            run,
            "--detach",
        ],
        &env,
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr.contains(&format!(
            "run {run} waits for approval before the lock; answer with: cdkd-flow runs approve {run}  or: cdkd-flow runs reject {run}"
        )),
        "{r:?}"
    );
    assert!(!r.stderr.contains("[y/N]"), "{r:?}");
    // --detach prints each started run's ARN: the plan run's, then the run's.
    let arn = r
        .stdout
        .lines()
        .last()
        .unwrap_or_default()
        .trim()
        .to_string();
    let x = sfn
        .describe_execution()
        .execution_arn(&arn)
        .send()
        .await
        .unwrap();
    assert_eq!(x.name(), Some(run));
    let input: Value = serde_json::from_str(x.input().unwrap_or("{}")).unwrap();
    assert_eq!(input["requireApproval"], json!(true), "{input}");
    assert_eq!(input["dryRun"], json!(false), "{input}");

    // Before the approval step wrote its request there is nothing to answer.
    let early = cli(&["runs", "approve", run], &env);
    assert_eq!(early.code, 1, "{early:?}");
    assert!(
        early
            .stderr
            .contains(&format!("run {run} has no approval request"))
            && early.stderr.contains("still planning"),
        "{early:?}"
    );

    // The test plays the plan and approval steps.
    play_plan_and_approval(&bucket, stack, run, "token-of-the-approval-task").await;
    // `runs watch` from any machine: the run waits for approval, then the answer shows.
    // (The emulator's Step Functions never goes past the task, so the watch is stopped
    // once it said so.)
    let mut watch = Follower::start(&["runs", "watch", run], &env);
    let waiting = watch.wait_for("waiting for approval since", Duration::from_secs(60));
    assert!(
        waiting.starts_with("  waiting for approval since "),
        "{waiting}"
    );
    let show = cli(&["runs", "show", run], &env);
    assert_eq!(show.code, 0, "{show:?}");
    assert!(
        show.stdout.starts_with(&format!("run {run} (export)")),
        "{show:?}"
    );
    assert!(
        show.stdout.contains("  waiting for approval since ")
            && show
                .stdout
                .contains(&format!("answer with: cdkd-flow runs approve {run}")),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.contains("WorkQueue"),
        "the plan: {}",
        show.stdout
    );
    let json_show = cli(&["runs", "show", run, "--json"], &env);
    let v: Value = serde_json::from_str(&json_show.stdout).unwrap();
    assert_eq!(v["approval"]["token"], json!("token-of-the-approval-task"));
    assert_eq!(v["approval"]["decision"], Value::Null);

    let ok = cli(&["runs", "approve", run, "--reason", "plan checked"], &env);
    assert_eq!(ok.code, 0, "{ok:?}");
    assert!(
        ok.stderr.contains(&format!("run {run}: approved by "))
            && ok.stderr.contains("the run goes on to the lock"),
        "{ok:?}"
    );
    let decided = read_approval(&bucket, run).await;
    let d = decided.decision.clone().expect("decided");
    assert!(d.approved);
    let seen = watch.wait_for("approved by", Duration::from_secs(60));
    assert!(
        seen.contains(&format!("approved by {}", d.by)) && seen.contains("plan checked"),
        "{seen}"
    );
    assert!(
        watch.running(),
        "the run goes on: the watch still follows it"
    );
    drop(watch);
    assert_eq!(d.reason.as_deref(), Some("plan checked"));
    assert!(!d.by.is_empty());
    assert_eq!(decided.token, "token-of-the-approval-task");

    // A second answer is refused, naming who decided; the file is unchanged.
    let again = cli(&["runs", "approve", run], &env);
    assert_eq!(again.code, 1, "{again:?}");
    assert!(
        again
            .stderr
            .contains(&format!("run {run} was already approved by {}", d.by)),
        "{again:?}"
    );
    let no = cli(&["runs", "reject", run], &env);
    assert_eq!(no.code, 1, "{no:?}");
    assert_eq!(read_approval(&bucket, run).await, decided);
    let show = cli(&["runs", "show", run], &env);
    assert!(
        show.stdout.contains(&format!("  approved by {}", d.by)),
        "{}",
        show.stdout
    );

    // Another run, rejected.
    let other = "export-ExportFlat-20261203T110000";
    sfn.start_execution()
        .state_machine_arn(&machine)
        .name(other)
        .input(
            json!({"stack": stack, "stateBucket": bucket, "statePrefix": "cdkd",
                      "templates": {stack: format!("cdkd/_runs/{other}/templates/{stack}.json")},
                      "requireApproval": true})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    play_plan_and_approval(&bucket, stack, other, "token-of-the-other-run").await;
    let rej = cli(
        &["runs", "reject", other, "--reason", "wrong account"],
        &env,
    );
    assert_eq!(rej.code, 0, "{rej:?}");
    assert!(
        rej.stderr.contains(&format!("run {other}: rejected by "))
            && rej.stderr.contains("wrong account")
            && rej.stderr.contains("nothing was locked or changed"),
        "{rej:?}"
    );
    let decided = read_approval(&bucket, other).await;
    let d = decided.decision.expect("decided");
    assert!(!d.approved);
    assert_eq!(d.reason.as_deref(), Some("wrong account"));

    // A run started without --require-approval has nothing to answer.
    let plain = "export-ExportFlat-20261203T120000";
    sfn.start_execution()
        .state_machine_arn(&machine)
        .name(plain)
        .input(
            json!({"stack": stack, "stateBucket": bucket, "statePrefix": "cdkd",
                      "templates": {stack: "k"}})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    let none = cli(&["runs", "approve", plain], &env);
    assert_eq!(none.code, 1, "{none:?}");
    assert!(
        none.stderr.contains("not started with --require-approval"),
        "{none:?}"
    );
    // An ended run is not answered.
    sfn.stop_execution()
        .execution_arn(x.execution_arn().replace(run, other).as_str())
        .send()
        .await
        .unwrap();
    let ended = cli(&["runs", "approve", other], &env);
    assert_eq!(ended.code, 1, "{ended:?}");
    assert!(
        ended.stderr.contains("has already ended: ABORTED"),
        "{ended:?}"
    );
}
