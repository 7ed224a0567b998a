//! Local runs are runs (docs/cli.md `runs --local`): `runs list |
//! show | watch --local` read local runs (`export --local`, `destroy --local`) from
//! their `_runs/<run-id>/` folder without a deployed backend: kind, stack, phase,
//! started, ended or interrupted, and for an interrupted one the command that resumes
//! it. A local export killed (SIGKILL) or interrupted (Ctrl-C) mid-run is reported
//! interrupted; Ctrl-C and a refusal at the lock leave `report.json`.
//!
//! Run: `scripts/with-emulator.sh cargo test -p cdkd-flow --test e2e -- --test-threads=1 local_runs`.

use std::time::{Duration, Instant};

use cdkd_tests as h;
use serde_json::{json, Value};

use crate::export_support::{export_held_after_its_lock, real_stack, uniq, RealStack, REGION};
use crate::follower::Follower;

fn cli(bucket: &str, args: &[&str]) -> h::CliRun {
    let mut all = vec!["--state-bucket", bucket];
    all.extend_from_slice(args);
    crate::run_cli_env(&all, &[])
}

fn ok(run: &h::CliRun) {
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
}

fn json_of(run: &h::CliRun) -> Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", run.stdout, run.stderr))
}

/// The command that resumes a run of `s` started with `RealStack::export_args`.
fn resume_of(s: &RealStack, run_id: &str, extra: &[&str]) -> String {
    let mut cmd = format!(
        "cdkd-flow --state-bucket {} export {} --template {} --local",
        s.bucket, s.stack, s.template
    );
    for e in extra {
        cmd.push(' ');
        cmd.push_str(e);
    }
    cmd.push_str(&format!(" --run-id {run_id}"));
    cmd
}

async fn put_json(bucket: &str, key: &str, v: &Value) {
    let s3 = h::s3().await;
    h::put_raw(&s3, bucket, key, serde_json::to_vec_pretty(v).unwrap()).await;
}

async fn get_json(bucket: &str, key: &str) -> Option<Value> {
    let s3 = h::s3().await;
    h::get_raw(&s3, bucket, key)
        .await
        .map(|(b, _)| serde_json::from_slice(&b).unwrap())
}

#[tokio::test]
async fn local_runs_are_runs_list_shows_a_local_export() {
    let s = real_stack("LocalList").await;
    let run_id = uniq("export-LocalList");
    ok(&crate::run_cli_env(&s.export_args(&run_id, &["-y"]), &[]));

    let list = cli(&s.bucket, &["runs", "list", "--local"]);
    ok(&list);
    let line = list
        .stdout
        .lines()
        .find(|l| l.starts_with(&run_id))
        .unwrap_or_else(|| panic!("{run_id} not listed:\n{}", list.stdout));
    assert!(line.contains("export "), "{line}");
    assert!(line.contains(&s.stack), "{line}");
    assert!(line.contains("ended (migrated)"), "{line}");
    assert!(line.contains("migrated, record deleted"), "{line}");
    // Its plan run is the same run: not listed on its own.
    assert!(
        !list.stdout.contains(&format!("{run_id}-plan")),
        "{}",
        list.stdout
    );

    let v = json_of(&cli(&s.bucket, &["runs", "list", "--local", "--json"]));
    let row = v
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["runId"] == run_id.as_str())
        .unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(row["kind"], "export");
    assert_eq!(row["stack"], s.stack.as_str());
    assert_eq!(row["status"], "ended");
    assert_eq!(row["outcome"], "migrated");
    assert!(row["endDate"].is_string(), "{row:#}");
    assert_eq!(row["resumeCommand"], Value::Null);

    // Without --local and without a deployed backend, runs list lists the runs of the
    // state bucket from their folders, with a note saying why; runs show finds the run
    // by its id.
    let all = cli(&s.bucket, &["runs", "list", "--backend-stack", "nope"]);
    ok(&all);
    assert!(
        all.stdout.lines().any(|l| l.starts_with(&run_id)),
        "{}",
        all.stdout
    );
    assert!(
        all.stderr.contains("note: no deployed backend found")
            && all
                .stderr
                .contains("listing the runs of the state bucket from their folders"),
        "{}",
        all.stderr
    );
    let show = cli(
        &s.bucket,
        &["runs", "show", &run_id, "--backend-stack", "nope"],
    );
    ok(&show);
    assert!(
        show.stdout
            .contains(&format!("run {run_id} (export, local)")),
        "{}",
        show.stdout
    );
}

#[tokio::test]
async fn local_runs_are_runs_show_interrupted_names_the_resume_command() {
    // A local export that ran on another host and stopped while importing: its lock
    // (held by the run) expired, it never wrote a report.
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let stack = uniq("LocalShow");
    let run_id = uniq("export-LocalShow");
    let args = [
        "--state-bucket",
        &bucket,
        "export",
        &stack,
        "--template",
        "my stack.json",
        "--local",
        "-y",
    ];
    put_json(
        &bucket,
        &format!("cdkd/_runs/{run_id}/run.json"),
        &json!({"runId": run_id, "kind": "export", "stack": stack, "args": args,
                "host": "build-agent-7", "pid": 4242, "startedMs": 1_795_965_752_000i64}),
    )
    .await;
    put_json(
        &bucket,
        &format!("cdkd/_runs/{run_id}/progress.json"),
        &json!({"runId": run_id, "kind": "export", "startedMs": 1_795_965_752_000i64,
                "stacks": [{"stack": stack, "region": REGION, "cfnStackName": stack,
                            "stage": "importing", "importedResources": 2, "phase2Resources": 0}],
                "log": ["locked"]}),
    )
    .await;
    let lock_key = format!("cdkd/{stack}/{REGION}/lock.json");
    let owner = format!("cdkd-flow:{run_id}");
    put_json(
        &bucket,
        &lock_key,
        // No lifetime left: expired when S3 wrote it (docs/state-and-lock.md, "Lock time is S3's").
        &json!({"owner": owner, "timestamp": 2, "expiresAt": 1, "operation": "export"}),
    )
    .await;

    let show = cli(&bucket, &["runs", "show", &run_id, "--local"]);
    ok(&show);
    let resume = format!(
        "cdkd-flow --state-bucket {bucket} export {stack} --template 'my stack.json' --local -y"
    );
    assert!(
        show.stdout
            .contains(&format!("run {run_id} (export, local)\n")),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout
            .contains("  status:  interrupted: its lock expired at 20"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.contains("  phase:   importing (phase 1)\n"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.contains("  process: 4242 on build-agent-7\n"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.contains(&format!("  resume:  {resume}\n")),
        "{}",
        show.stdout
    );
    let v = json_of(&cli(
        &bucket,
        &["runs", "show", &run_id, "--local", "--json"],
    ));
    assert_eq!(v["status"], "interrupted");
    assert_eq!(v["resumeCommand"], resume.as_str());
    assert_eq!(v["report"], Value::Null);

    // While its lock is fresh, the same run is running (on the other host).
    put_json(
        &bucket,
        &lock_key,
        &json!({"owner": owner, "timestamp": 1, "expiresAt": h::now_ms() + 600_000, "operation": "export"}),
    )
    .await;
    let v = json_of(&cli(&bucket, &["runs", "list", "--local", "--json"]));
    assert_eq!(v[0]["status"], "running", "{v:#}");
    assert_eq!(v[0]["resumeCommand"], Value::Null);

    // A run that is not there is refused, naming where it was looked for.
    let missing = cli(&bucket, &["runs", "show", "export-nope-1", "--local"]);
    assert_eq!(missing.code, 1);
    assert!(
        missing
            .stderr
            .contains("no local run named 'export-nope-1'"),
        "{}",
        missing.stderr
    );
}

#[tokio::test]
async fn local_runs_are_runs_watch_a_finished_local_run() {
    // A local destroy of one topic, then its watch: the report and the end, exit 0.
    let sdk = h::sdk().await;
    let stack = uniq("LocalWatch");
    let topic = h::fixtures::topic(&sdk, &stack.to_lowercase()).await;
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    put_json(
        &bucket,
        &format!("cdkd/{stack}/{REGION}/state.json"),
        &json!({"version": 10, "stackName": stack, "region": REGION, "outputs": {},
                "resources": {"Topic": {"physicalId": topic, "resourceType": "AWS::SNS::Topic",
                              "properties": {}, "dependencies": [], "provisionedBy": "sdk"}},
                "lastModified": 1777458225000i64}),
    )
    .await;
    let run_id = uniq("destroy-LocalWatch");
    ok(&cli(
        &bucket,
        &[
            "destroy", &stack, "--local", "--fast", "-y", "--run-id", &run_id,
        ],
    ));

    let watch = cli(
        &bucket,
        &["runs", "watch", &run_id, "--local", "--poll-ms", "100"],
    );
    ok(&watch);
    assert!(watch.stdout.contains("Destroyed"), "{}", watch.stdout);
    assert!(
        watch
            .stderr
            .contains(&format!("run {run_id}: ended (destroyed)")),
        "{}",
        watch.stderr
    );
    let show = cli(&bucket, &["runs", "show", &run_id, "--local"]);
    ok(&show);
    assert!(
        show.stdout.contains("run ") && show.stdout.contains("(destroy, local)"),
        "{}",
        show.stdout
    );
    assert!(show.stdout.contains("  ended:   "), "{}", show.stdout);
    let json = cli(
        &bucket,
        &[
            "runs",
            "watch",
            &run_id,
            "--local",
            "--json",
            "--poll-ms",
            "100",
        ],
    );
    ok(&json);
    assert_eq!(json_of(&json)["complete"], true);
}

fn resume_without_fast(s: &RealStack, run_id: &str) -> String {
    resume_of(s, run_id, &["-y"])
}

#[tokio::test]
async fn local_runs_are_runs_a_killed_local_export_is_interrupted_with_its_resume_command() {
    let s = real_stack("LocalKilled").await;
    let run_id = uniq("export-LocalKilled");
    let (mut f, _hold) = export_held_after_its_lock(&s, &run_id, &[]).await;
    f.signal(libc::SIGKILL);
    let (code, _) = f.wait_exit(Duration::from_secs(30));
    assert_ne!(code, 0);
    let report = format!("cdkd/_runs/{run_id}/report.json");
    assert!(
        get_json(&s.bucket, &report).await.is_none(),
        "a killed process writes nothing"
    );

    let resume = resume_without_fast(&s, &run_id);
    // `runs list` needs no flag and no backend for a local run.
    let list = cli(&s.bucket, &["runs", "list", "--backend-stack", "nope"]);
    ok(&list);
    assert!(
        list.stdout.contains(&format!(
            "{run_id} interrupted (its process {} on ",
            run_pid(&s.bucket, &run_id).await
        )),
        "{}",
        list.stdout
    );
    assert!(
        list.stdout.contains(&format!("resume with {resume}\n")),
        "{}",
        list.stdout
    );
    let show = cli(&s.bucket, &["runs", "show", &run_id, "--local"]);
    ok(&show);
    assert!(
        show.stdout.contains("  status:  interrupted: its process"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.contains(&format!("  resume:  {resume}\n")),
        "{}",
        show.stdout
    );
    // A watch of it ends at once, interrupted, naming the same command; exit 1.
    let watch = cli(
        &s.bucket,
        &["runs", "watch", &run_id, "--local", "--poll-ms", "100"],
    );
    assert_eq!(watch.code, 1, "{}", watch.stderr);
    assert!(
        watch.stderr.contains(&format!("resume with {resume}")),
        "{}",
        watch.stderr
    );
}

async fn run_pid(bucket: &str, run_id: &str) -> u64 {
    get_json(bucket, &format!("cdkd/_runs/{run_id}/run.json"))
        .await
        .and_then(|v| v["pid"].as_u64())
        .expect("run.json with a pid")
}

#[tokio::test]
async fn local_runs_are_runs_ctrl_c_leaves_a_report_saying_interrupted_and_how_to_resume() {
    let s = real_stack("LocalCtrlC").await;
    let run_id = uniq("export-LocalCtrlC");
    let (mut f, hold) = export_held_after_its_lock(&s, &run_id, &[]).await;
    f.signal(libc::SIGINT);
    let (code, stderr) = f.wait_exit(Duration::from_secs(60));
    assert_eq!(code, 1, "{stderr}");
    let resume = resume_without_fast(&s, &run_id);
    assert!(
        stderr.contains(&format!("run {run_id} interrupted (Ctrl-C)")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("resume it with {resume}")),
        "{stderr}"
    );
    let report = get_json(&s.bucket, &format!("cdkd/_runs/{run_id}/report.json"))
        .await
        .expect("report.json");
    assert_eq!(report["outcome"], "interrupted", "{report:#}");
    assert_eq!(report["commands"], json!([resume]), "{report:#}");
    let run = get_json(&s.bucket, &format!("cdkd/_runs/{run_id}/run.json"))
        .await
        .unwrap();
    assert_eq!(run["outcome"], "interrupted");
    assert!(run["endedMs"].is_i64(), "{run:#}");

    let show = cli(&s.bucket, &["runs", "show", &run_id, "--local"]);
    ok(&show);
    assert!(
        show.stdout
            .contains("  status:  interrupted: it was interrupted (Ctrl-C)\n"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.contains("Cause: interrupted (Ctrl-C) while"),
        "{}",
        show.stdout
    );
    // Nothing advises deleting a stack that may own imported resources.
    assert!(!show.stdout.contains("delete-stack"), "{}", show.stdout);
    assert!(!show.stdout.contains("delete it"), "{}", show.stdout);

    // Once CloudFormation answers again, the command the report names resumes the run
    // and migrates it.
    drop(hold);
    let args: Vec<&str> = s
        .export_args(&run_id, &["-y"])
        .into_iter()
        .filter(|a| *a != "--fast")
        .collect();
    let again = crate::run_cli_env(&args, &[]);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    let report = get_json(&s.bucket, &format!("cdkd/_runs/{run_id}/report.json"))
        .await
        .expect("report.json");
    assert_eq!(report["outcome"], "migrated", "{report:#}");
}

/// A lock someone else holds is read before planning (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first"): the export
/// is refused before any run starts, so there is no run to list and no report.
#[tokio::test]
async fn local_runs_are_runs_a_lock_held_before_planning_starts_no_run() {
    let s = real_stack("LocalRefused").await;
    let lock = json!({"owner": "someone@host:1", "timestamp": 1, "expiresAt": 99999999999999i64, "operation": "deploy"});
    put_json(
        &s.bucket,
        &format!("cdkd/{}/{REGION}/lock.json", s.stack),
        &lock,
    )
    .await;
    let run_id = uniq("export-LocalRefused");
    let run = crate::run_cli_env(&s.export_args(&run_id, &["-y"]), &[]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("refused before planning") && run.stderr.contains("someone@host:1"),
        "{}",
        run.stderr
    );
    for id in [run_id.clone(), format!("{run_id}-plan")] {
        assert!(
            get_json(&s.bucket, &format!("cdkd/_runs/{id}/report.json"))
                .await
                .is_none(),
            "no run started"
        );
    }
    let list = json_of(&cli(&s.bucket, &["runs", "list", "--local", "--json"]));
    assert_eq!(list.as_array().map(Vec::len), Some(0), "{list:#}");
}

#[tokio::test]
async fn local_runs_are_runs_ctrl_c_of_a_local_destroy_stops_it_gracefully_then_at_once() {
    // A custom resource whose handler never answers: its delete stays in flight.
    let sdk = h::sdk().await;
    let stack = uniq("LocalStop");
    let token = h::fixtures::topic(&sdk, &format!("{}-token", stack.to_lowercase())).await;
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    put_json(
        &bucket,
        &format!("cdkd/{stack}/{REGION}/state.json"),
        &json!({"version": 10, "stackName": stack, "region": REGION, "outputs": {},
                "resources": {"Thing": {"physicalId": "thing-1", "resourceType": "Custom::Thing",
                              "properties": {"ServiceToken": token}, "dependencies": []}},
                "lastModified": 1777458225000i64}),
    )
    .await;
    let run_id = uniq("destroy-LocalStop");
    let mut f = Follower::start(
        &[
            "--state-bucket",
            &bucket,
            "destroy",
            &stack,
            "--local",
            "-y",
            "--run-id",
            &run_id,
        ],
        &[],
    );
    let progress = format!("cdkd/_runs/{run_id}/progress.json");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let p = get_json(&bucket, &progress).await;
        if p.as_ref()
            .is_some_and(|p| p["stacks"][0]["inFlight"].get("Thing").is_some())
        {
            break;
        }
        assert!(Instant::now() < deadline, "no delete in flight: {p:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // The first Ctrl-C asks the run to stop gracefully, through progress.json.
    f.signal(libc::SIGINT);
    f.wait_for("stop requested (Ctrl-C)", Duration::from_secs(30));
    assert_eq!(
        get_json(&bucket, &progress).await.unwrap()["stopRequested"],
        true
    );
    assert!(f.running(), "the run waits for its delete in flight");

    // The second stops it at once; the report says so and what is left held.
    f.signal(libc::SIGINT);
    let (code, stderr) = f.wait_exit(Duration::from_secs(60));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(&format!("run {run_id} interrupted (Ctrl-C)")),
        "{stderr}"
    );
    let report = get_json(&bucket, &format!("cdkd/_runs/{run_id}/report.json"))
        .await
        .expect("report.json");
    let aborted = report["aborted"].as_str().unwrap_or_default();
    assert!(
        aborted.starts_with("interrupted (Ctrl-C) while wave"),
        "{report:#}"
    );
    assert!(aborted.contains("the lock stays held"), "{report:#}");
    // The unlock it names deletes only this run's lock, and only once it has ended.
    assert!(
        aborted.contains(&format!(
            "once this process has ended cdkd-flow force-unlock {stack} --stack-region {REGION} --state-bucket {bucket} --run {run_id} releases it"
        )),
        "{report:#}"
    );
    let show = cli(&bucket, &["runs", "show", &run_id, "--local"]);
    ok(&show);
    assert!(
        show.stdout
            .contains("  status:  interrupted: it was interrupted (Ctrl-C)\n"),
        "{}",
        show.stdout
    );
}

/// docs/cli.md "runs list": without a deployed backend, the deployed runs of the bucket
/// are listed from their folders too (issue #35 item 1): their status UNKNOWN (no
/// execution to ask), their stack and what their report says; never refused. A plan
/// run's folder and a folder of uploads only are not runs of their own.
#[tokio::test]
async fn runs_list_without_a_backend_lists_the_deployed_runs_from_their_folders_as_unknown() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let running = uniq("export-Folded");
    put_json(
        &bucket,
        &format!("cdkd/_runs/{running}/progress.json"),
        &json!({"runId": running, "kind": "export", "startedMs": 1_767_225_600_000i64,
                "stacks": [{"stack": "Folded~Child"}, {"stack": "Folded"}], "log": []}),
    )
    .await;
    let ended = uniq("export-Ended");
    put_json(
        &bucket,
        &format!("cdkd/_runs/{ended}/report.json"),
        &json!({"runId": ended, "kind": "export", "outcome": "migrated",
                "stacks": [{"stack": "Ended"}]}),
    )
    .await;
    let uploads = uniq("export-Uploads");
    put_json(
        &bucket,
        &format!("cdkd/_runs/{uploads}/templates/App.json"),
        &json!({}),
    )
    .await;

    let list = cli(&bucket, &["runs", "list", "--backend-stack", "nope"]);
    ok(&list);
    assert!(
        list.stderr.contains("note: no deployed backend found"),
        "{}",
        list.stderr
    );
    let line_of = |id: &str| {
        list.stdout
            .lines()
            .find(|l| l.contains(id))
            .unwrap_or_else(|| panic!("{id} not listed:\n{}", list.stdout))
            .to_string()
    };
    let r = line_of(&running);
    assert!(r.contains("Folded") && !r.contains("Folded~Child"), "{r}");
    assert!(
        r.contains("UNKNOWN (no backend to ask; no report yet)"),
        "{r}"
    );
    let e = line_of(&ended);
    assert!(
        e.contains("UNKNOWN (no backend to ask; its report says migrated)"),
        "{e}"
    );
    assert!(!list.stdout.contains(&uploads), "{}", list.stdout);

    let json = cli(
        &bucket,
        &["runs", "list", "--backend-stack", "nope", "--json"],
    );
    ok(&json);
    let rows = json_of(&json);
    let names: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(
        names.contains(&running.as_str()) && names.contains(&ended.as_str()),
        "{rows}"
    );

    // runs show and runs watch: the folder alone, never a refusal (docs/cli.md, "runs").
    let shown = cli(
        &bucket,
        &["runs", "show", &running, "--backend-stack", "nope"],
    );
    ok(&shown);
    assert!(
        shown.stderr.contains("note: no deployed backend found")
            && shown
                .stdout
                .contains("status:  UNKNOWN (no backend to ask; no report yet)"),
        "{}\n{}",
        shown.stdout,
        shown.stderr
    );
    let watched = cli(
        &bucket,
        &["runs", "watch", &running, "--backend-stack", "nope"],
    );
    assert_eq!(watched.code, 1, "{}\n{}", watched.stdout, watched.stderr);
    assert!(
        watched.stderr.contains(&format!(
            "run `cdkd-flow runs watch {running}` again once the backend is reachable"
        )),
        "{}",
        watched.stderr
    );
    let shown = cli(
        &bucket,
        &["runs", "show", &ended, "--backend-stack", "nope", "--json"],
    );
    ok(&shown);
    let v = json_of(&shown);
    assert_eq!(v["status"], "UNKNOWN", "{v}");
    assert_eq!(v["report"]["outcome"], "migrated", "{v}");
    let watched = cli(
        &bucket,
        &["runs", "watch", &ended, "--backend-stack", "nope", "--json"],
    );
    assert_eq!(watched.code, 0, "{}\n{}", watched.stdout, watched.stderr);
    let missing = uniq("export-Missing");
    let refused = cli(
        &bucket,
        &["runs", "show", &missing, "--backend-stack", "nope"],
    );
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains(&format!("no run named '{missing}'"))
            && refused.stderr.contains("no deployed backend to ask"),
        "{}",
        refused.stderr
    );
}
