//! `cdkd-flow` runs on the deployed backend, against the emulator's Step Functions:
//! starting a run without `--local` (readable execution name, the input the local path
//! builds), `runs list`, `runs watch` (progress from progress.json, failed steps, exit
//! status), `runs stop` (graceful through progress.json, `--now` through StopExecution),
//! and where the state machine ARN comes from.
//!
//! The state machines are created in the emulator from `statemachines/*.asl.json` with
//! every function substitution pointing at a stub Lambda (the emulator cannot run our
//! binaries). With the emulator's interpreter off (moto's default) an execution stays
//! RUNNING until it is stopped and its history is canned; the tests that need a run to
//! end on its own turn the interpreter on for definitions without Lambda tasks. The
//! interpreter switch is emulator-wide, so the tests of this file run one at a time.

use std::time::{Duration, Instant};

use crate::follower::Follower;
use aws_sdk_sfn::types::ExecutionStatus;
use cdkd_functions::destroy::finish::report_of;
use cdkd_functions::destroy::{DestroyRun, RunRef};
use cdkd_functions::{definitions, runs};
use cdkd_tests::{endpoint, fresh_bucket, get_text, put_raw, s3, sdk, CliRun};
use serde_json::{json, Value};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const SFN_ROLE: &str = "arn:aws:iam::123456789012:role/cdkd-flow-runs-cli";

fn unique(tag: &str) -> String {
    format!("{tag}-{}", &uuid::Uuid::new_v4().simple().to_string()[..8])
}

/// Turns the emulator's ASL interpreter on or off (emulator-wide).
async fn interpreter(on: bool) {
    cdkd_tests::set_emulator_interpreter(on).await;
}

/// A Lambda function the emulator stores but cannot run; returns its ARN.
async fn stub_function() -> String {
    cdkd_tests::fixtures::stub_function(
        &sdk().await,
        &unique("cdkd-flow-stub"),
        aws_sdk_lambda::types::Runtime::Providedal2023,
        None,
    )
    .await
}

fn substitute(def: &str, subs: &[(&str, &str)]) -> String {
    let mut out = def.to_string();
    for (k, v) in subs {
        out = out.replace(&format!("${{{k}}}"), v);
    }
    assert!(!out.contains("${"), "a substitution is missing: {out}");
    out
}

async fn create_machine(sfn: &aws_sdk_sfn::Client, name: &str, definition: &str) -> String {
    sfn.create_state_machine()
        .name(name)
        .definition(definition)
        .role_arn(SFN_ROLE)
        .send()
        .await
        .unwrap_or_else(|e| panic!("CreateStateMachine {name}: {e:?}"))
        .state_machine_arn
}

/// The deployed backend in the emulator: the destroy, cleanup and export state machines
/// from our definitions, their functions a stub.
struct Backend {
    sfn: aws_sdk_sfn::Client,
    destroy: String,
    cleanup: String,
    export: String,
}

async fn backend() -> Backend {
    let sfn = aws_sdk_sfn::Client::new(&sdk().await);
    let f = stub_function().await;
    let destroy_def = substitute(
        definitions::DESTROY,
        &[
            ("DestroyPlanFunctionArn", &f),
            ("DestroyWaveFunctionArn", &f),
            ("DestroyFinishFunctionArn", &f),
            ("DestroyAbortFunctionArn", &f),
            ("RunRefusedFunctionArn", &f),
            ("RunContinueFunctionArn", &f),
        ],
    );
    let destroy = create_machine(&sfn, &unique("cdkd-flow-destroy"), &destroy_def).await;
    let cleanup_def = substitute(
        definitions::CLEANUP,
        &[
            ("CleanupSelectFunctionArn", &f),
            ("CleanupRecordFunctionArn", &f),
            ("CleanupNotifyFunctionArn", &f),
            ("DestroyStateMachineArn", &destroy),
        ],
    );
    let cleanup = create_machine(&sfn, &unique("cdkd-flow-cleanup"), &cleanup_def).await;
    let export_subs: Vec<(&str, &str)> = cdkd_functions::steps::STEPS
        .iter()
        .filter(|(step, _)| step.starts_with("export-") || step.starts_with("run-"))
        .map(|(_, sub)| (*sub, f.as_str()))
        .collect();
    let export_def = substitute(definitions::EXPORT, &export_subs);
    let export = create_machine(&sfn, &unique("cdkd-flow-export"), &export_def).await;
    Backend {
        sfn,
        destroy,
        cleanup,
        export,
    }
}

impl Backend {
    /// A client alone, for tests that create their own state machines.
    async fn client() -> Backend {
        Backend {
            sfn: aws_sdk_sfn::Client::new(&sdk().await),
            destroy: String::new(),
            cleanup: String::new(),
            export: String::new(),
        }
    }

    /// Both state machines through the environment instead of flags.
    fn machine_env(&self) -> Vec<(String, String)> {
        vec![
            (
                "CDKD_FLOW_DESTROY_STATE_MACHINE_ARN".into(),
                self.destroy.clone(),
            ),
            (
                "CDKD_FLOW_CLEANUP_STATE_MACHINE_ARN".into(),
                self.cleanup.clone(),
            ),
            (
                "CDKD_FLOW_EXPORT_STATE_MACHINE_ARN".into(),
                self.export.clone(),
            ),
        ]
    }

    fn machine_flags(&self) -> Vec<String> {
        vec![
            "--destroy-state-machine-arn".into(),
            self.destroy.clone(),
            "--cleanup-state-machine-arn".into(),
            self.cleanup.clone(),
            "--export-state-machine-arn".into(),
            self.export.clone(),
        ]
    }

    async fn start_destroy(&self, name: &str, input: &Value) -> String {
        self.sfn
            .start_execution()
            .state_machine_arn(&self.destroy)
            .name(name)
            .input(input.to_string())
            .send()
            .await
            .unwrap()
            .execution_arn
    }

    async fn describe(
        &self,
        arn: &str,
    ) -> aws_sdk_sfn::operation::describe_execution::DescribeExecutionOutput {
        self.sfn
            .describe_execution()
            .execution_arn(arn)
            .send()
            .await
            .unwrap()
    }
}

/// Runs the CLI with these arguments and environment (and no state machine in the
/// environment unless given), off the async runtime.
async fn cli(args: Vec<String>, env: Vec<(String, String)>) -> CliRun {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        crate::run_cli_env(&args, &env)
    })
    .await
    .unwrap()
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn destroy_input(bucket: &str, stack: &str) -> Value {
    json!({
        "stack": stack,
        "stateBucket": bucket,
        "statePrefix": "cdkd",
        "allowNestedChild": false,
        "skipFinalSnapshot": false,
        "removeProtection": false
    })
}

/// A progress.json of a run over a parent and its nested child.
fn progress(run_id: &str, waves: u32, child_done: bool, parent_left: &[&str]) -> DestroyRun {
    let parent_all = ["Queue", "Topic", "Table"];
    let outcomes: serde_json::Map<String, Value> = parent_all
        .iter()
        .filter(|id| !parent_left.contains(id))
        .map(|id| (id.to_string(), json!({"outcome": "deleted"})))
        .collect();
    serde_json::from_value(json!({
        "runId": run_id,
        "startedMs": 0,
        "skipFinalSnapshot": false,
        "waves": waves,
        "stacks": [
            {"stack": "App~Nested", "region": "us-east-1",
             "planned": [{"logicalId": "Fn", "resourceType": "AWS::Lambda::Function"}],
             "outcomes": if child_done { json!({"Fn": {"outcome": "deleted"}}) } else { json!({}) },
             "finished": if child_done { json!("clean") } else { Value::Null }},
            {"stack": "App", "region": "us-east-1",
             "planned": parent_all.iter().map(|id| json!({"logicalId": id, "resourceType": "AWS::SQS::Queue"})).collect::<Vec<_>>(),
             "outcomes": outcomes}
        ]
    }))
    .unwrap()
}

async fn put_progress(bucket: &str, run: &DestroyRun) {
    let key = runs::progress_key("cdkd", &run.run_id);
    put_raw(
        &s3().await,
        bucket,
        &key,
        serde_json::to_vec_pretty(run).unwrap(),
    )
    .await;
}

async fn wait_until<F, Fut>(what: &str, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let t0 = Instant::now();
    while !f().await {
        assert!(t0.elapsed() < Duration::from_secs(60), "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn is_readable_name(name: &str, kind: &str, target: &str) -> bool {
    let Some(rest) = name.strip_prefix(&format!("{kind}-{target}-")) else {
        return false;
    };
    rest.len() == 15
        && rest.as_bytes()[8] == b'T'
        && rest
            .chars()
            .enumerate()
            .all(|(i, c)| if i == 8 { c == 'T' } else { c.is_ascii_digit() })
        && name.len() <= 80
}

// ------------------------------------------------------------------- start

#[tokio::test]
async fn cleanup_without_local_starts_the_cleanup_state_machine_with_a_readable_name_and_the_local_input(
) {
    let _g = SERIAL.lock().await;
    interpreter(false).await;
    let b = backend().await;
    let bucket = fresh_bucket(&s3().await).await;
    let r = cli(
        args(&[
            "cleanup",
            "--pattern",
            "preview-*",
            "--older-than",
            "7d",
            "--region-filter",
            "us-east-1,eu-west-1",
            "--state-bucket",
            &bucket,
            "--state-machine-arn",
            &b.cleanup,
            "--detach",
        ]),
        vec![],
    )
    .await;
    assert_eq!(r.code, 0, "{r:?}");
    let arn = r.stdout.trim().to_string();
    let x = b.describe(&arn).await;
    let name = x.name().unwrap().to_string();
    assert!(is_readable_name(&name, "cleanup", "preview-_"), "{name}");
    assert!(
        r.stderr.contains(&format!("cleanup run {name} started")),
        "{r:?}"
    );
    assert!(
        r.stderr.contains(&format!("cdkd-flow runs watch {name}")),
        "{r:?}"
    );
    assert_eq!(x.state_machine_arn(), b.cleanup);
    let input: Value = serde_json::from_str(x.input().unwrap()).unwrap();
    assert_eq!(
        input,
        json!({
            "stateBucket": bucket,
            "statePrefix": "cdkd",
            "pattern": "preview-*",
            "minimumAge": "7d",
            "regions": ["us-east-1", "eu-west-1"],
            "dryRun": false
        })
    );
}

#[tokio::test]
async fn start_with_the_same_run_id_and_input_reattaches_and_with_another_input_is_refused() {
    let _g = SERIAL.lock().await;
    interpreter(false).await;
    let b = backend().await;
    let bucket = fresh_bucket(&s3().await).await;
    let base = |pattern: &str| {
        args(&[
            "cleanup",
            "--pattern",
            pattern,
            "--older-than",
            "1d",
            "--state-bucket",
            &bucket,
            "--state-machine-arn",
            &b.cleanup,
            "--run-id",
            "cleanup-fixed-run",
            "--detach",
        ])
    };
    let first = cli(base("a-*"), vec![]).await;
    assert_eq!(first.code, 0, "{first:?}");
    let again = cli(base("a-*"), vec![]).await;
    assert_eq!(again.code, 0, "{again:?}");
    assert!(
        again.stderr.contains("already started; watching"),
        "{again:?}"
    );
    assert_eq!(again.stdout.trim(), first.stdout.trim());
    let other = cli(base("b-*"), vec![]).await;
    assert_eq!(other.code, 1, "{other:?}");
    assert!(
        other.stderr.contains("already exists") && other.stderr.contains("different input"),
        "{other:?}"
    );
}

#[tokio::test]
async fn destroy_without_local_starts_the_destroy_state_machine_with_a_readable_name_and_the_input()
{
    let _g = SERIAL.lock().await;
    interpreter(false).await;
    let b = backend().await;
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    // The CLI plans from the record before it starts anything.
    put_raw(
        &s3,
        &bucket,
        "cdkd/MyApp/us-east-1/state.json",
        r#"{"version":10,"stackName":"MyApp","region":"us-east-1","resources":{"Q":{"resourceType":"AWS::SQS::Queue","physicalId":"https://sqs.us-east-1.amazonaws.com/123456789012/q"}},"outputs":{}}"#,
    )
    .await;
    let r = cli(
        args(&[
            "destroy",
            "MyApp",
            "--state-bucket",
            &bucket,
            "--state-machine-arn",
            &b.destroy,
            "--detach",
            "-y",
        ]),
        vec![],
    )
    .await;
    assert_eq!(r.code, 0, "{r:?}");
    let x = b.describe(r.stdout.trim()).await;
    let name = x.name().unwrap().to_string();
    assert!(is_readable_name(&name, "destroy", "MyApp"), "{name}");
    let input: Value = serde_json::from_str(x.input().unwrap()).unwrap();
    assert_eq!(input["stack"], json!("MyApp"));
    assert_eq!(input["stateBucket"], json!(bucket));
    assert_eq!(input["statePrefix"], json!("cdkd"));
}

// ------------------------------------------------------------------- list

#[tokio::test]
async fn runs_list_json_shows_runs_of_both_state_machines_newest_first_with_stack_and_status() {
    let _g = SERIAL.lock().await;
    interpreter(false).await;
    let b = backend().await;
    let bucket = fresh_bucket(&s3().await).await;
    b.start_destroy(
        "destroy-App-20261129T100000",
        &destroy_input(&bucket, "App"),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let c = cli(
        args(&[
            "cleanup",
            "--pattern",
            "pr-*",
            "--older-than",
            "7d",
            "--state-bucket",
            &bucket,
            "--state-machine-arn",
            &b.cleanup,
            "--run-id",
            "cleanup-pr-_-20261129T100001",
            "--detach",
        ]),
        vec![],
    )
    .await;
    assert_eq!(c.code, 0, "{c:?}");
    let mut a = args(&["runs", "list", "--json"]);
    a.extend(b.machine_flags());
    let r = cli(a, vec![]).await;
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{v}");
    assert_eq!(rows[0]["name"], json!("cleanup-pr-_-20261129T100001"));
    assert_eq!(rows[0]["kind"], json!("cleanup"));
    assert_eq!(rows[0]["status"], json!("RUNNING"));
    assert_eq!(rows[0]["pattern"], json!("pr-*"));
    assert_eq!(rows[1]["name"], json!("destroy-App-20261129T100000"));
    assert_eq!(rows[1]["kind"], json!("destroy"));
    assert_eq!(rows[1]["stack"], json!("App"));
    assert_eq!(rows[1]["stopDate"], Value::Null);
    // --limit keeps the newest.
    let mut a = args(&["runs", "list", "--json", "--limit", "1"]);
    a.extend(b.machine_flags());
    let r = cli(a, vec![]).await;
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["kind"], json!("cleanup"));
    // The table names the same.
    let mut a = args(&["runs", "list"]);
    a.extend(b.machine_flags());
    let r = cli(a, vec![]).await;
    assert_eq!(r.code, 0, "{r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[0].starts_with("RUN "), "{}", r.stdout);
    let cells: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(
        cells[..3],
        ["destroy-App-20261129T100000", "destroy", "RUNNING"],
        "{}",
        r.stdout
    );
    assert_eq!(cells[4..], ["-", "App"], "{}", r.stdout);
    let cells: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(
        cells[..3],
        ["cleanup-pr-_-20261129T100001", "cleanup", "RUNNING"],
        "{}",
        r.stdout
    );
    assert_eq!(cells[4..], ["-", "pattern", "pr-*"], "{}", r.stdout);
}

// ------------------------------------------------------------------- watch and stop

#[tokio::test]
async fn runs_stop_now_aborts_the_execution_and_watch_exits_1_warning_that_the_lock_stays_held() {
    let _g = SERIAL.lock().await;
    interpreter(false).await;
    let b = backend().await;
    let bucket = fresh_bucket(&s3().await).await;
    let name = "destroy-App-20261129T110000";
    let arn = b.start_destroy(name, &destroy_input(&bucket, "App")).await;
    let mut w = args(&["runs", "watch", name, "--poll-ms", "200"]);
    w.extend(b.machine_flags());
    let watch = tokio::spawn(cli(w, vec![]));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let mut s = args(&["runs", "stop", name, "--now"]);
    s.extend(b.machine_flags());
    let stop = cli(s, vec![]).await;
    assert_eq!(stop.code, 0, "{stop:?}");
    assert!(stop.stderr.contains("stopped (ABORTED)"), "{stop:?}");
    assert!(
        stop.stderr
            .contains("the lock stays held until it expires")
            && stop.stderr.contains(&format!(
                "once 15 minutes have passed since the stop (the longest a destroy-wave step runs) cdkd-flow force-unlock App --state-bucket {bucket} --run {name} releases it"
            )),
        "{stop:?}"
    );
    assert_eq!(b.describe(&arn).await.status(), &ExecutionStatus::Aborted);
    let watched = tokio::time::timeout(Duration::from_secs(60), watch)
        .await
        .expect("watch ended")
        .unwrap();
    assert_eq!(watched.code, 1, "{watched:?}");
    assert!(
        watched.stderr.contains(&format!("run {name}: RUNNING")),
        "{watched:?}"
    );
    assert!(
        // The emulator drops StopExecution's error and cause.
        watched
            .stderr
            .lines()
            .any(|l| l.starts_with(&format!("error: run {name}: ABORTED"))),
        "{watched:?}"
    );
    assert!(
        watched.stderr.contains("stays held until it expires"),
        "{watched:?}"
    );
    // Stopping a run that has ended says so.
    let mut s = args(&["runs", "stop", name, "--now"]);
    s.extend(b.machine_flags());
    let again = cli(s, vec![]).await;
    assert_eq!(again.code, 0, "{again:?}");
    assert!(
        again.stderr.contains("has already ended: ABORTED"),
        "{again:?}"
    );
}

#[tokio::test]
async fn runs_stop_graceful_sets_stop_requested_in_progress_json_and_leaves_the_execution_running()
{
    let _g = SERIAL.lock().await;
    interpreter(false).await;
    let b = backend().await;
    let bucket = fresh_bucket(&s3().await).await;
    let name = "destroy-App-20261129T120000";
    let arn = b.start_destroy(name, &destroy_input(&bucket, "App")).await;
    let mut s = args(&["runs", "stop", name]);
    s.extend(b.machine_flags());
    // Before the plan wrote progress.json there is nothing to flag.
    let early = cli(s.clone(), vec![]).await;
    assert_eq!(early.code, 1, "{early:?}");
    assert!(
        early.stderr.contains("has no progress.json yet"),
        "{early:?}"
    );
    assert!(early.stderr.contains("--now"), "{early:?}");

    put_progress(&bucket, &progress(name, 2, true, &["Topic", "Table"])).await;
    let r = cli(s.clone(), vec![]).await;
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("stop requested"), "{r:?}");
    let key = runs::progress_key("cdkd", name);
    let text = get_text(&s3().await, &bucket, &key).await.unwrap();
    let rec: DestroyRun = serde_json::from_str(&text).unwrap();
    assert!(rec.stop_requested, "{text}");
    assert_eq!(rec.waves, 2);
    assert_eq!(rec.remaining(), 2);
    assert_eq!(b.describe(&arn).await.status(), &ExecutionStatus::Running);
    let again = cli(s, vec![]).await;
    assert_eq!(again.code, 0, "{again:?}");
    assert!(again.stderr.contains("already requested"), "{again:?}");
}

#[tokio::test]
async fn runs_stop_graceful_of_a_cleanup_run_is_refused_with_the_now_hint() {
    let _g = SERIAL.lock().await;
    interpreter(false).await;
    let b = backend().await;
    let arn = b
        .sfn
        .start_execution()
        .state_machine_arn(&b.cleanup)
        .name("cleanup-x-20261129T120000")
        .input(json!({"stateBucket": "b", "pattern": "x", "minimumAge": "1d"}).to_string())
        .send()
        .await
        .unwrap()
        .execution_arn;
    let r = cli(args(&["runs", "stop", &arn]), vec![]).await;
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("runs stop --now"), "{r:?}");
}

#[tokio::test]
async fn runs_watch_renders_settled_resources_and_stack_bars_from_progress_json_and_exits_with_the_status(
) {
    let _g = SERIAL.lock().await;
    interpreter(false).await;
    let b = backend().await;
    let bucket = fresh_bucket(&s3().await).await;
    let name = "destroy-App-20261129T130000";
    let arn = b.start_destroy(name, &destroy_input(&bucket, "App")).await;
    put_progress(
        &bucket,
        &progress(name, 1, false, &["Queue", "Topic", "Table"]),
    )
    .await;
    // By ARN: no state machine needs resolving.
    let watch = tokio::spawn(cli(
        args(&["runs", "watch", &arn, "--poll-ms", "200"]),
        vec![],
    ));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    put_progress(&bucket, &progress(name, 2, true, &["Table"])).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    b.sfn
        .stop_execution()
        .execution_arn(&arn)
        .error("Test")
        .cause("stopped by the test")
        .send()
        .await
        .unwrap();
    let r = tokio::time::timeout(Duration::from_secs(60), watch)
        .await
        .expect("watch ended")
        .unwrap();
    assert_eq!(r.code, 1, "{r:?}");
    // The same renderer as a local run, off a terminal: a line per settled resource
    // and a bar line when a stack changes phase, each once (not per poll).
    let lines: Vec<&str> = r.stderr.lines().collect();
    let once = |want: &str| {
        let n = lines.iter().filter(|l| **l == want).count();
        assert_eq!(n, 1, "{want:?} printed {n} times:\n{}", r.stderr);
    };
    once("  App~Nested: Fn (AWS::Lambda::Function) deleted");
    once("  App: Queue (AWS::SQS::Queue) deleted");
    once("  App: Topic (AWS::SQS::Queue) deleted");
    once("App~Nested (us-east-1) [##############################] 1/1 destroyed: 1 deleted");
    once("App (us-east-1) [####################----------] 2/3 deleting: 2 deleted");
    assert!(
        !r.stderr.contains("Table (AWS::SQS::Queue)"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .lines()
            .any(|l| l.starts_with(&format!("error: run {name}: ABORTED"))),
        "{}",
        r.stderr
    );
}

#[tokio::test]
async fn runs_watch_exits_0_when_the_run_succeeded_and_prints_its_report() {
    let _g = SERIAL.lock().await;
    // The interpreter keeps its own state machines: on before creating, on while watching.
    interpreter(true).await;
    let b = Backend::client().await;
    let bucket = fresh_bucket(&s3().await).await;
    // A definition without Lambda tasks, that the emulator's interpreter runs to the end.
    let done = create_machine(
        &b.sfn,
        &unique("done"),
        r#"{"StartAt":"Done","States":{"Done":{"Type":"Pass","Result":{"complete":true},"End":true}}}"#,
    )
    .await;
    let name = "destroy-App-20261129T140000";
    let run = progress(name, 3, true, &[]);
    let run_ref = RunRef {
        run_id: name.into(),
        bucket: bucket.clone(),
        prefix: "cdkd".into(),
        stack: "App".into(),
        region: "us-east-1".into(),
    };
    let mut finished = run.clone();
    for s in &mut finished.stacks {
        s.finished = Some(cdkd_core::destroy::model::RunResult::Clean);
    }
    let report = report_of(&run_ref, &finished, None);
    put_raw(
        &s3().await,
        &bucket,
        &runs::report_key("cdkd", name),
        serde_json::to_vec(&report).unwrap(),
    )
    .await;
    let arn = b
        .sfn
        .start_execution()
        .state_machine_arn(&done)
        .name(name)
        .input(destroy_input(&bucket, "App").to_string())
        .send()
        .await
        .unwrap()
        .execution_arn;
    wait_until("the run succeeded", || async {
        b.describe(&arn).await.status() == &ExecutionStatus::Succeeded
    })
    .await;
    let r = cli(args(&["runs", "watch", &arn, "--poll-ms", "200"]), vec![]).await;
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr.contains(&format!("run {name}: SUCCEEDED")),
        "{r:?}"
    );
    assert!(r.stdout.contains("Destroyed App (us-east-1)"), "{r:?}");
    assert!(
        r.stdout.contains("Destroyed App~Nested (us-east-1)"),
        "{r:?}"
    );
    // runs show renders the same report, and --json carries it.
    let s = cli(args(&["runs", "show", &arn]), vec![]).await;
    assert_eq!(s.code, 0, "{s:?}");
    assert!(
        s.stdout
            .starts_with(&format!("run {name} (destroy)\n  status:  SUCCEEDED\n")),
        "{s:?}"
    );
    assert!(s.stdout.contains("Destroyed App (us-east-1)"), "{s:?}");
    let j = cli(args(&["runs", "show", &arn, "--json"]), vec![]).await;
    let v: Value = serde_json::from_str(&j.stdout).unwrap();
    assert_eq!(v["status"], json!("SUCCEEDED"));
    assert_eq!(v["kind"], json!("destroy"));
    assert_eq!(v["report"]["complete"], json!(true));
    assert_eq!(v["report"]["runId"], json!(name));
    interpreter(false).await;
}

#[tokio::test]
async fn runs_watch_exits_1_when_the_run_failed_naming_the_error() {
    let _g = SERIAL.lock().await;
    interpreter(true).await;
    let b = Backend::client().await;
    let failing = create_machine(
        &b.sfn,
        &unique("fails"),
        r#"{"StartAt":"Boom","States":{"Boom":{"Type":"Fail","Error":"LockHeld","Cause":"held by someone else"}}}"#,
    )
    .await;
    let arn = b
        .sfn
        .start_execution()
        .state_machine_arn(&failing)
        .name("destroy-App-20261129T150000")
        .input(json!({"stack": "App", "stateBucket": "no-such-bucket-here"}).to_string())
        .send()
        .await
        .unwrap()
        .execution_arn;
    wait_until("the run failed", || async {
        b.describe(&arn).await.status() == &ExecutionStatus::Failed
    })
    .await;
    let r = cli(args(&["runs", "watch", &arn, "--poll-ms", "200"]), vec![]).await;
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .contains("run destroy-App-20261129T150000: FAILED (LockHeld: held by someone else)"),
        "{r:?}"
    );
    let s = cli(args(&["runs", "show", &arn]), vec![]).await;
    assert_eq!(s.code, 0, "{s:?}");
    assert!(
        s.stdout.contains("FAILED (LockHeld: held by someone else)"),
        "{s:?}"
    );
    assert!(s.stdout.contains("no report yet"), "{s:?}");
    interpreter(false).await;
}

// ------------------------------------------------------------------- reconnecting

/// A TCP proxy to the emulator that can drop every connection for a while (a laptop
/// losing its network).
async fn flaky_proxy(down: std::sync::Arc<std::sync::atomic::AtomicBool>) -> String {
    use std::sync::atomic::Ordering;
    let upstream = endpoint()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut inbound, _)) = listener.accept().await else {
                return;
            };
            if down.load(Ordering::SeqCst) {
                drop(inbound);
                continue;
            }
            let upstream = upstream.clone();
            let down = down.clone();
            tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                // The emulator serves one connection at a time: connect upstream only once
                // a request has arrived, so an idle kept-alive client connection never
                // holds the emulator.
                let mut first = vec![0u8; 64 * 1024];
                let n = match inbound.read(&mut first).await {
                    Ok(n) if n > 0 => n,
                    _ => return,
                };
                if down.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(mut out) = tokio::net::TcpStream::connect(&upstream).await else {
                    return;
                };
                if out.write_all(&first[..n]).await.is_err() {
                    return;
                }
                // Kept-alive connections drop too when the network goes.
                let cut = async {
                    while !down.load(Ordering::SeqCst) {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                };
                tokio::select! {
                    _ = tokio::io::copy_bidirectional(&mut inbound, &mut out) => {}
                    _ = cut => {}
                }
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_watch_survives_a_lost_connection_and_resumes() {
    use std::sync::atomic::Ordering;
    let _g = SERIAL.lock().await;
    interpreter(false).await;
    let b = backend().await;
    let bucket = fresh_bucket(&s3().await).await;
    let name = "destroy-App-20261129T160000";
    let arn = b.start_destroy(name, &destroy_input(&bucket, "App")).await;
    let down = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let proxy = flaky_proxy(down.clone()).await;
    let mut watch = Follower::start(
        &["runs", "watch", &arn, "--poll-ms", "200"],
        &[("AWS_ENDPOINT_URL", &proxy)],
    );
    // The follower blocks while it waits; the proxy runs on the other worker.
    let wait = |w: &mut Follower, text: &str| {
        tokio::task::block_in_place(|| w.wait_for(text, Duration::from_secs(60)))
    };
    // The watch's first line: it has reached the run through the proxy.
    wait(&mut watch, &format!("run {name}: "));
    down.store(true, Ordering::SeqCst);
    // The SDK's own retries are spent before the watch says so.
    wait(&mut watch, "connection lost");
    put_progress(&bucket, &progress(name, 5, true, &["Table"])).await;
    down.store(false, Ordering::SeqCst);
    wait(&mut watch, "reconnected");
    // What was written while the connection was lost shows once it is back (the progress
    // is read apart from the run's history, so before or after the line above).
    tokio::task::block_in_place(|| {
        watch.wait_seen(
            "  App: Topic (AWS::SQS::Queue) deleted",
            Duration::from_secs(60),
        )
    });
    b.sfn
        .stop_execution()
        .execution_arn(&arn)
        .send()
        .await
        .unwrap();
    let (code, stderr) = tokio::task::block_in_place(|| watch.wait_exit(Duration::from_secs(90)));
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains(&format!("run {name}: ABORTED")), "{stderr}");
}

// ------------------------------------------------------------------- ARN resolution

#[tokio::test]
async fn state_machine_arn_missing_everywhere_is_an_error_naming_every_source_tried() {
    let _g = SERIAL.lock().await;
    let stack = unique("no-backend");
    let r = cli(args(&["runs", "list", "--backend-stack", &stack]), vec![]).await;
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("no destroy state machine"), "{r:?}");
    assert!(r.stderr.contains("--state-machine-arn not given"), "{r:?}");
    assert!(
        r.stderr
            .contains("CDKD_FLOW_DESTROY_STATE_MACHINE_ARN not set"),
        "{r:?}"
    );
    assert!(r.stderr.contains(&format!("'{stack}'")), "{r:?}");
    assert!(r.stderr.contains("make deploy"), "{r:?}");
    assert_eq!(r.stderr.lines().count(), 1, "{r:?}");
    let bucket = fresh_bucket(&s3().await).await;
    let c = cli(
        args(&[
            "cleanup",
            "--pattern",
            "x",
            "--older-than",
            "1d",
            "--state-bucket",
            &bucket,
            "--backend-stack",
            &stack,
        ]),
        vec![],
    )
    .await;
    assert_eq!(c.code, 1, "{c:?}");
    assert!(c.stderr.contains("no cleanup state machine"), "{c:?}");
    assert!(
        c.stderr
            .contains("CDKD_FLOW_CLEANUP_STATE_MACHINE_ARN not set"),
        "{c:?}"
    );
}

#[tokio::test]
async fn state_machine_arn_comes_from_the_environment_when_no_flag_is_given() {
    let _g = SERIAL.lock().await;
    interpreter(false).await;
    let b = backend().await;
    let bucket = fresh_bucket(&s3().await).await;
    b.start_destroy(
        "destroy-Env-20261129T170000",
        &destroy_input(&bucket, "Env"),
    )
    .await;
    let r = cli(
        args(&["runs", "show", "destroy-Env-20261129T170000", "--json"]),
        b.machine_env(),
    )
    .await;
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["status"], json!("RUNNING"));
    assert_eq!(v["input"]["stack"], json!("Env"));
    assert_eq!(v["report"], Value::Null);
    // An unknown name under both machines is refused by name.
    let r = cli(args(&["runs", "watch", "destroy-Nope-1"]), b.machine_env()).await;
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("no run named 'destroy-Nope-1'"), "{r:?}");
}

fn form_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test]
async fn state_machine_arn_comes_from_the_backend_stack_outputs() {
    let _g = SERIAL.lock().await;
    interpreter(false).await;
    let b = backend().await;
    let stack = unique("cdkd-flow-backend");
    let template = json!({
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {
            "DestroyStateMachineArn": {"Value": b.destroy},
            "CleanupStateMachineArn": {"Value": b.cleanup}
        }
    })
    .to_string();
    let body = format!(
        "Action=CreateStack&Version=2010-05-15&StackName={}&TemplateBody={}",
        form_encode(&stack),
        form_encode(&template)
    );
    cdkd_tests::emulator_post(
        "/",
        &body,
        "Content-Type: application/x-www-form-urlencoded\r\nAuthorization: AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/cloudformation/aws4_request, SignedHeaders=host, Signature=0\r\n",
    )
    .await;
    let bucket = fresh_bucket(&s3().await).await;
    b.start_destroy(
        "destroy-Out-20261129T180000",
        &destroy_input(&bucket, "Out"),
    )
    .await;
    let r = cli(
        args(&["runs", "list", "--json", "--backend-stack", &stack]),
        vec![],
    )
    .await;
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v[0]["name"], json!("destroy-Out-20261129T180000"));
    assert_eq!(v[0]["stack"], json!("Out"));
}

// ------------------------------------------------------------------- export on the backend

#[tokio::test]
async fn export_dry_run_starts_the_deployed_machine_and_runs_show_prints_the_plan_it_wrote() {
    let _g = SERIAL.lock().await;
    interpreter(false).await;
    let b = backend().await;
    let s3c = s3().await;
    let bucket = fresh_bucket(&s3c).await;
    let template = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/export/flat.template.json")
        .to_string_lossy()
        .into_owned();
    let run = "export-ExportFlat-20261202T100000";
    let r = cli(
        args(&[
            "export",
            "ExportFlat",
            "--template",
            &template,
            "--dry-run",
            "--state-bucket",
            &bucket,
            "--run-id",
            run,
            "--detach",
        ]),
        b.machine_env(),
    )
    .await;
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr.contains(&format!("export run {run} started")),
        "{r:?}"
    );
    // The execution's input names the uploaded template; the step reads it from there.
    let arn = r.stdout.trim().to_string();
    let x = b.describe(&arn).await;
    let input: Value = serde_json::from_str(x.input().unwrap_or("{}")).unwrap();
    let key = format!("cdkd/_runs/{run}/templates/ExportFlat.json");
    assert_eq!(input["templates"]["ExportFlat"], json!(key));
    assert_eq!(input["dryRun"], json!(true));
    assert_eq!(input["options"]["templateSource"], json!("file"));
    assert!(get_text(&s3c, &bucket, &key).await.is_some());
    // Listed as an export run; shown without a plan until the step writes one.
    let r = cli(args(&["runs", "list", "--json"]), b.machine_env()).await;
    assert_eq!(r.code, 0, "{r:?}");
    let rows: Value = serde_json::from_str(&r.stdout).unwrap();
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == json!(run))
        .cloned()
        .unwrap_or_else(|| panic!("{rows}"));
    assert_eq!(row["kind"], json!("export"));
    assert_eq!(row["stack"], json!("ExportFlat"));
    let r = cli(args(&["runs", "show", run]), b.machine_env()).await;
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.starts_with(&format!("run {run} (export)")),
        "{r:?}"
    );
    assert!(r.stdout.contains("no plan yet"), "{r:?}");
    // The plan the export-plan step writes (here: nothing to migrate).
    put_raw(
        &s3c,
        &bucket,
        &format!("cdkd/_runs/{run}/plan.json"),
        r#"{"stacks":[],"warnings":[]}"#,
    )
    .await;
    let r = cli(args(&["runs", "show", run]), b.machine_env()).await;
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("Nothing to migrate"), "{r:?}");
}

/// Dead or alive, for a deployed run (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first"): an export whose
/// execution is RUNNING holds its stack: the same export is refused naming the run and
/// `runs watch`; once the execution ended (stopped here), the same command resumes the
/// run as a new execution of the export state machine, whose input names the run and the
/// ended holder's lock to take over.
#[tokio::test]
async fn dead_or_alive_a_deployed_exports_lock_is_taken_over_only_once_its_execution_ended() {
    let _g = SERIAL.lock().await;
    interpreter(false).await;
    let b = backend().await;
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let stack = format!(
        "Deployed{}",
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    );
    let name = format!("export-{stack}-1");
    let arn = b
        .sfn
        .start_execution()
        .state_machine_arn(&b.export)
        .name(&name)
        .input("{}")
        .send()
        .await
        .unwrap()
        .execution_arn;
    let now = cdkd_tests::now_ms();
    let lock = json!({"owner": format!("cdkd-flow:{name}"), "timestamp": now, "expiresAt": now + 600_000, "operation": "export"});
    put_raw(
        &s3,
        &bucket,
        &format!("cdkd/{stack}/us-east-1/lock.json"),
        lock.to_string(),
    )
    .await;
    let record = json!({"version": 10, "stackName": stack, "region": "us-east-1", "resources": {
        "Topic": {"resourceType": "AWS::SNS::Topic", "physicalId": "arn:aws:sns:us-east-1:123456789012:t", "properties": {}, "attributes": {}}}});
    put_raw(
        &s3,
        &bucket,
        &format!("cdkd/{stack}/us-east-1/state.json"),
        record.to_string(),
    )
    .await;
    cdkd_tests::cfn::client()
        .await
        .create_stack()
        .stack_name(&stack)
        .template_body(r#"{"Resources":{"Topic":{"Type":"AWS::SNS::Topic"}}}"#)
        .tags(
            aws_sdk_cloudformation::types::Tag::builder()
                .key("cdkd-flow:record")
                .value(&stack)
                .build(),
        )
        .tags(
            aws_sdk_cloudformation::types::Tag::builder()
                .key("cdkd-flow:run")
                .value(&name)
                .build(),
        )
        .send()
        .await
        .unwrap();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("runs_cli");
    std::fs::create_dir_all(&dir).unwrap();
    let tpl = dir.join(format!("{stack}.json"));
    std::fs::write(
        &tpl,
        r#"{"Resources":{"Topic":{"Type":"AWS::SNS::Topic"}}}"#,
    )
    .unwrap();
    let tpl = tpl.to_string_lossy().to_string();
    let export = args(&[
        "--state-bucket",
        &bucket,
        "export",
        &stack,
        "--template",
        &tpl,
        "-y",
        "--detach",
    ]);

    let live = cli(export.clone(), b.machine_env()).await;
    assert_eq!(live.code, 1, "{live:?}");
    assert!(
        live.stderr
            .contains(&format!("run {name} is exporting it now (a deployed run"))
            && live
                .stderr
                .contains(&format!("cdkd-flow runs watch {name}")),
        "{live:?}"
    );

    b.sfn
        .stop_execution()
        .execution_arn(&arn)
        .send()
        .await
        .unwrap();
    let resumed = cli(export, b.machine_env()).await;
    assert_eq!(resumed.code, 0, "{resumed:?}");
    assert!(
        resumed
            .stderr
            .contains(&format!("run {name} was interrupted")),
        "{resumed:?}"
    );
    let listed = b
        .sfn
        .list_executions()
        .state_machine_arn(&b.export)
        .send()
        .await
        .unwrap();
    let mut inputs = Vec::new();
    for x in listed.executions() {
        if x.name() == name {
            continue;
        }
        let d = b.describe(x.execution_arn()).await;
        inputs.push(serde_json::from_str::<Value>(d.input().unwrap_or("{}")).unwrap());
    }
    assert!(
        inputs
            .iter()
            .any(|i| i["resume"] == json!(name)
                && i["takeOver"] == json!(format!("cdkd-flow:{name}"))),
        "a new execution resumes the run: {inputs:?}"
    );
}

/// A deployed resume refused at its `Resume` step writes its report into its own folder
/// and leaves the resumed run's as it was (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first"): `runs show` of the
/// resume execution prints the resume's report (why it was not resumed), not the
/// resumed run's earlier one; `runs show` of the resumed run still prints its own.
#[tokio::test]
async fn same_command_same_run_runs_show_of_a_refused_deployed_resume_prints_its_own_report() {
    let _g = SERIAL.lock().await;
    interpreter(false).await;
    let b = backend().await;
    let s3c = s3().await;
    let bucket = fresh_bucket(&s3c).await;
    let stack = unique("Resumed");
    let first = format!("export-{stack}-1");
    let resume = format!("resume-{stack}-2");
    b.sfn
        .start_execution()
        .state_machine_arn(&b.export)
        .name(&resume)
        .input(
            json!({"stack": stack, "stateBucket": bucket, "statePrefix": "cdkd",
                   "templates": {}, "resume": first})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    let mut earlier = cdkd_core::export::report::refused(&first, None, "the first attempt's cause");
    earlier.outcome = "failed".into();
    put_raw(
        &s3c,
        &bucket,
        &format!("cdkd/_runs/{first}/report.json"),
        serde_json::to_string(&earlier).unwrap(),
    )
    .await;
    let refused = cdkd_core::export::report::ended_early(
        &resume,
        None,
        "LockHeld",
        &cdkd_core::view::contention::refused_cause("LockHeld", "held by someone else"),
        Some(&first),
    );
    put_raw(
        &s3c,
        &bucket,
        &format!("cdkd/_runs/{resume}/report.json"),
        serde_json::to_string(&refused).unwrap(),
    )
    .await;
    let r = cli(args(&["runs", "show", &resume]), b.machine_env()).await;
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.contains(&format!("run {first} was not resumed"))
            && r.stdout.contains("held by someone else")
            && !r.stdout.contains("the first attempt's cause"),
        "{r:?}"
    );
    // Without a report of its own, the resume shows the resumed run's.
    s3c.delete_object()
        .bucket(&bucket)
        .key(format!("cdkd/_runs/{resume}/report.json"))
        .send()
        .await
        .unwrap();
    let r = cli(args(&["runs", "show", &resume]), b.machine_env()).await;
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("the first attempt's cause"), "{r:?}");
}
