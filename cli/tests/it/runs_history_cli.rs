//! Run history that does not grow for ever (docs/runs.md): `runs
//! expire` merges cdkd-flow's lifecycle rule into the state bucket's lifecycle
//! configuration, keeping the user's rules, idempotently; `runs prune --older-than D`
//! deletes only the folders of runs that ended more than D ago, keeps running,
//! approval-waiting, unknown and resumable runs, deletes nothing under `--dry-run`, and
//! deletes a folder of thousands of objects in DeleteObjects batches.
//!
//! Run: `scripts/with-emulator.sh cargo test -p cdkd-flow --test e2e -- --test-threads=1 runs_history`.

use std::time::Duration;

use aws_sdk_s3::types::{
    BucketLifecycleConfiguration, ExpirationStatus, LifecycleExpiration, LifecycleRule,
    LifecycleRuleAndOperator, LifecycleRuleFilter, Tag, Transition, TransitionStorageClass,
};
use cdkd_tests as h;
use cdkd_tests::faults::{inject_fault, Fault};
use futures::StreamExt;
use serde_json::{json, Value};

fn cli(bucket: &str, args: &[&str], env: &[(&str, &str)]) -> h::CliRun {
    let mut all = vec!["--state-bucket", bucket, "runs"];
    all.extend_from_slice(args);
    crate::run_cli_env(&all, env)
}

fn ok(run: &h::CliRun) {
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
}

/// The error line of a failed run: exactly one line, starting `error:`.
fn one_error_line(run: &h::CliRun, code: i32) -> String {
    assert_eq!(
        run.code, code,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{}", run.stderr);
    errors[0].to_string()
}

async fn rules(s3: &aws_sdk_s3::Client, bucket: &str) -> Vec<LifecycleRule> {
    s3.get_bucket_lifecycle_configuration()
        .bucket(bucket)
        .send()
        .await
        .map(|o| o.rules().to_vec())
        .unwrap_or_default()
}

fn user_rules() -> Vec<LifecycleRule> {
    vec![
        LifecycleRule::builder()
            .id("logs-expire")
            .status(ExpirationStatus::Enabled)
            .filter(LifecycleRuleFilter::builder().prefix("logs/").build())
            .expiration(LifecycleExpiration::builder().days(7).build())
            .build()
            .unwrap(),
        LifecycleRule::builder()
            .id("archive")
            .status(ExpirationStatus::Enabled)
            .filter(LifecycleRuleFilter::builder().prefix("archive/").build())
            .transitions(
                Transition::builder()
                    .days(30)
                    .storage_class(TransitionStorageClass::Glacier)
                    .build(),
            )
            .build()
            .unwrap(),
    ]
}

#[tokio::test]
async fn runs_history_expire_merges_its_rule_with_the_users_rules_and_is_idempotent() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    s3.put_bucket_lifecycle_configuration()
        .bucket(&bucket)
        .lifecycle_configuration(
            BucketLifecycleConfiguration::builder()
                .set_rules(Some(user_rules()))
                .build()
                .unwrap(),
        )
        .send()
        .await
        .expect("the user's rules");
    let before = rules(&s3, &bucket).await;
    assert_eq!(before.len(), 2);

    // Added beside the user's rules, which stay exactly as they were.
    let added = cli(&bucket, &["expire", "--days", "90"], &[]);
    ok(&added);
    assert!(
        added
            .stdout
            .contains("lifecycle rule cdkd-flow-runs:cdkd added"),
        "{}",
        added.stdout
    );
    assert!(
        added.stdout.contains("2 other rules of the bucket kept"),
        "{}",
        added.stdout
    );
    let after = rules(&s3, &bucket).await;
    assert_eq!(after.len(), 3, "{after:?}");
    for r in &before {
        assert!(after.contains(r), "user rule changed: {r:?}\n{after:?}");
    }
    let ours = after
        .iter()
        .find(|r| r.id() == Some("cdkd-flow-runs:cdkd"))
        .expect("our rule");
    assert_eq!(ours.filter().and_then(|f| f.prefix()), Some("cdkd/_runs/"));
    assert_eq!(ours.expiration().and_then(|e| e.days()), Some(90));
    assert_eq!(
        ours.noncurrent_version_expiration()
            .and_then(|n| n.noncurrent_days()),
        Some(1)
    );
    assert_eq!(
        ours.abort_incomplete_multipart_upload()
            .and_then(|a| a.days_after_initiation()),
        Some(1)
    );

    // The same command again writes nothing.
    let again = cli(&bucket, &["expire", "--days", "90", "--json"], &[]);
    ok(&again);
    let v: Value = serde_json::from_str(&again.stdout).unwrap();
    assert_eq!(v["change"], "unchanged");
    assert_eq!(v["otherRules"], 2);
    assert_eq!(rules(&s3, &bucket).await, after);

    // A dry run of another retention says so and writes nothing.
    let dry = cli(&bucket, &["expire", "--days", "45", "--dry-run"], &[]);
    ok(&dry);
    assert!(dry.stdout.contains("would be replaced"), "{}", dry.stdout);
    assert_eq!(rules(&s3, &bucket).await, after);

    // Another retention replaces ours only; a short one warns about resumable exports.
    let short = cli(&bucket, &["expire", "--days", "14"], &[]);
    ok(&short);
    assert!(short.stdout.contains("replaced"), "{}", short.stdout);
    assert!(
        short.stderr.contains(
            "warning: each object of a run folder expires 14 days after its own last write"
        ) && short
            .stderr
            .contains("expire 14 days after the run STARTED, even if it was resumed since"),
        "{}",
        short.stderr
    );
    let replaced = rules(&s3, &bucket).await;
    assert_eq!(replaced.len(), 3);
    for r in &before {
        assert!(replaced.contains(r), "user rule changed: {r:?}");
    }
    let ours = replaced
        .iter()
        .find(|r| r.id() == Some("cdkd-flow-runs:cdkd"))
        .unwrap();
    assert_eq!(ours.expiration().and_then(|e| e.days()), Some(14));

    // A bucket with no lifecycle configuration gets ours alone; another prefix a rule
    // of its own.
    let empty = h::fresh_bucket(&s3).await;
    ok(&cli(&empty, &["expire"], &[]));
    let mut all = vec![
        "--state-bucket",
        empty.as_str(),
        "--state-prefix",
        "team-b",
        "runs",
        "expire",
    ];
    all.push("--days=30");
    ok(&crate::run_cli_env(&all, &[]));
    let ids: Vec<Option<String>> = rules(&s3, &empty)
        .await
        .iter()
        .map(|r| r.id().map(str::to_string))
        .collect();
    assert_eq!(
        ids,
        vec![
            Some("cdkd-flow-runs:cdkd".into()),
            Some("cdkd-flow-runs:team-b".into())
        ]
    );
}

#[tokio::test]
async fn runs_history_expire_refuses_below_the_safe_minimum_and_names_a_denied_bucket() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let short = cli(&bucket, &["expire", "--days", "7"], &[]);
    let line = one_error_line(&short, 2);
    assert!(line.contains("below the safe minimum of 8 days"), "{line}");
    assert!(rules(&s3, &bucket).await.is_empty(), "nothing written");

    let _denied = inject_fault(
        &Fault::new("GET", &format!("^/{bucket}/?$"), 403, "AccessDenied")
            .query("(^|&)lifecycle(=|&|$)")
            .message("Access Denied"),
    );
    let denied = cli(&bucket, &["expire"], &[]);
    let line = one_error_line(&denied, 1);
    assert!(line.contains("GetBucketLifecycleConfiguration"), "{line}");
    assert!(line.contains("Access Denied"), "{line}");
}

// ---------------------------------------------------------------------------------
// prune

const HOST: &str = "prune-test-host";

async fn put_json(s3: &aws_sdk_s3::Client, bucket: &str, key: &str, v: &Value) {
    h::put_raw(s3, bucket, key, serde_json::to_vec(v).unwrap()).await;
}

fn run_json(id: &str, kind: &str, host: &str, pid: u32, outcome: Option<&str>) -> Value {
    let mut v = json!({"runId": id, "kind": kind, "stack": "App", "args": [kind, "App", "--local"],
                       "host": host, "pid": pid, "startedMs": h::now_ms() - 1000});
    if let Some(o) = outcome {
        v["outcome"] = json!(o);
        v["endedMs"] = json!(h::now_ms());
    }
    v
}

/// A process whose command line names cdkd-flow: a live local run's, until dropped.
struct LiveRun(std::process::Child);

impl Drop for LiveRun {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn live_run() -> LiveRun {
    LiveRun(
        std::process::Command::new("bash")
            .args(["-c", "exec -a cdkd-flow sleep 300"])
            .spawn()
            .expect("spawn"),
    )
}

/// The line `runs prune` printed for run `id`.
fn listed_line(stdout: &str, id: &str) -> String {
    stdout
        .lines()
        .find(|l| l.contains(&format!(" {id} (")))
        .unwrap_or_else(|| panic!("{id} not listed:\n{stdout}"))
        .to_string()
}

/// `runs prune --older-than 2s` told runs by the emulator's state machines `destroy`
/// and `export` (no backend stack).
fn prune_with_machines(bucket: &str, destroy: &str, export: &str) -> h::CliRun {
    cli(
        bucket,
        &[
            "prune",
            "--older-than",
            "2s",
            "--destroy-state-machine-arn",
            destroy,
            "--export-state-machine-arn",
            export,
            "--backend-stack",
            "no-backend",
        ],
        &[],
    )
}

fn keys_under<'a>(keys: &'a [String], run: &str) -> Vec<&'a String> {
    let p = format!("cdkd/_runs/{run}/");
    keys.iter().filter(|k| k.starts_with(&p)).collect()
}

#[tokio::test]
async fn runs_history_prune_deletes_only_ended_runs_older_than_d_and_keeps_live_and_resumable_ones()
{
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let r = |id: &str, f: &str| format!("cdkd/_runs/{id}/{f}");
    let live = live_run();
    let pid = live.0.id();
    let b = bucket.as_str();
    let s3r = &s3;

    // Old folders.
    // An ended local destroy, and one of thousands of objects (custom-resource answers).
    put_json(
        s3r,
        b,
        &r("destroy-Old-1", "run.json"),
        &run_json("destroy-Old-1", "destroy", HOST, 1, Some("succeeded")),
    )
    .await;
    put_json(s3r, b, &r("destroy-Old-1", "progress.json"), &json!({})).await;
    put_json(
        s3r,
        b,
        &r("destroy-Big-1", "run.json"),
        &run_json("destroy-Big-1", "destroy", HOST, 1, Some("succeeded")),
    )
    .await;
    futures::stream::iter(0..2100)
        .map(|i| async move {
            h::put_raw(
                s3r,
                b,
                &format!("cdkd/_runs/destroy-Big-1/cr/R{i}.json"),
                "{}",
            )
            .await
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    // A local export running on this host (its process is alive).
    put_json(
        s3r,
        b,
        &r("export-Running-1", "run.json"),
        &run_json("export-Running-1", "export", HOST, pid, None),
    )
    .await;
    put_json(s3r, b, &r("export-Running-1", "progress.json"), &json!({})).await;
    // A deployed export waiting for approval (no run.json, no backend to ask).
    put_json(s3r, b, &r("export-Waiting-1", "plan.json"), &json!({})).await;
    put_json(
        s3r,
        b,
        &r("export-Waiting-1", "approval.json"),
        &json!({"stack": "App", "runId": "export-Waiting-1", "token": "t",
        "requestedMs": 1, "planKey": r("export-Waiting-1", "plan.json"), "summary": {}}),
    )
    .await;
    // A local export that took its locks and failed: the same command resumes it.
    put_json(
        s3r,
        b,
        &r("export-Failed-1", "run.json"),
        &run_json("export-Failed-1", "export", HOST, 1, Some("failed")),
    )
    .await;
    put_json(s3r, b, &r("export-Failed-1", "progress.json"), &json!({})).await;
    put_json(
        s3r,
        b,
        &r("export-Failed-1", "report.json"),
        &json!({"outcome": "failed"}),
    )
    .await;
    // A migrated export.
    put_json(
        s3r,
        b,
        &r("export-Done-1", "run.json"),
        &run_json("export-Done-1", "export", HOST, 1, Some("succeeded")),
    )
    .await;
    put_json(s3r, b, &r("export-Done-1", "progress.json"), &json!({})).await;
    put_json(
        s3r,
        b,
        &r("export-Done-1", "report.json"),
        &json!({"outcome": "migrated"}),
    )
    .await;
    // A local export of another host holding no lock: nothing tells whether it runs.
    put_json(
        s3r,
        b,
        &r("export-Other-1", "run.json"),
        &run_json("export-Other-1", "export", "elsewhere", 7, None),
    )
    .await;
    // An export nobody said yes to: its templates, and its plan run.
    h::put_raw(s3r, b, &r("export-Never-1", "templates/App.json"), "{}").await;
    put_json(s3r, b, &r("export-Never-1-plan", "run.json"), &{
        let mut v = run_json("export-Never-1-plan", "export", HOST, 1, Some("succeeded"));
        v["planOnly"] = json!(true);
        v
    })
    .await;
    // Outside the run prefix: a record, untouched.
    h::put_raw(s3r, b, "cdkd/App/us-east-1/state.json", "{}").await;

    // Then a recent one, written again just before each prune: it stays within the
    // 4 s however long the listing of the 2,100 objects above takes on a loaded machine.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let recent = |s3: &aws_sdk_s3::Client| {
        let s3 = s3.clone();
        let b = bucket.clone();
        async move {
            let key = "cdkd/_runs/destroy-New-1/run.json";
            put_json(
                &s3,
                &b,
                key,
                &run_json("destroy-New-1", "destroy", HOST, 1, Some("succeeded")),
            )
            .await;
        }
    };
    recent(&s3).await;
    let before = h::list_all_keys(&s3, &bucket).await;
    recent(&s3).await;

    let env = [("HOSTNAME", HOST)];
    let dry = cli(
        &bucket,
        &[
            "prune",
            "--older-than",
            "4s",
            "--dry-run",
            "--backend-stack",
            "no-backend",
        ],
        &env,
    );
    ok(&dry);
    assert_eq!(
        h::list_all_keys(&s3, &bucket).await,
        before,
        "a dry run deletes nothing"
    );
    for gone in [
        "destroy-Old-1",
        "destroy-Big-1",
        "export-Done-1",
        "export-Never-1",
        "export-Never-1-plan",
    ] {
        assert!(
            dry.stdout.contains(&format!("would delete {gone} (")),
            "{gone}:\n{}",
            dry.stdout
        );
    }
    for (kept, why) in [
        ("export-Running-1", "it is running"),
        ("export-Waiting-1", "it waits for approval"),
        (
            "export-Failed-1",
            "an export that may be resumed (it ended failed); --include-resumable deletes it",
        ),
        (
            "export-Other-1",
            "its state is unknown: it runs on elsewhere",
        ),
    ] {
        let line = dry
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("kept {kept} (")))
            .unwrap_or_else(|| panic!("{kept} not kept:\n{}", dry.stdout));
        assert!(line.contains(why), "{line}");
    }
    assert!(
        !dry.stdout.contains("destroy-New-1"),
        "recent runs are not listed:\n{}",
        dry.stdout
    );
    assert!(
        dry.stdout
            .contains("would prune 5 runs ended more than 4s ago: 2108 objects"),
        "{}",
        dry.stdout
    );

    recent(&s3).await;
    let real = cli(
        &bucket,
        &[
            "prune",
            "--older-than",
            "4s",
            "--json",
            "--backend-stack",
            "no-backend",
        ],
        &env,
    );
    ok(&real);
    let v: Value = serde_json::from_str(&real.stdout).unwrap();
    assert_eq!(v["summary"]["runsDeleted"], 5, "{v:#}");
    assert_eq!(v["summary"]["objectsDeleted"], 2108, "{v:#}");
    assert_eq!(v["recent"]["runs"], 1);
    // In DeleteObjects batches of at most 1000 keys.
    for step in [
        "deleted 1000 of 2108 objects",
        "deleted 2000 of 2108 objects",
        "deleted 2108 of 2108 objects",
    ] {
        assert!(real.stderr.contains(step), "{step}:\n{}", real.stderr);
    }
    let after = h::list_all_keys(&s3, &bucket).await;
    for gone in [
        "destroy-Old-1",
        "destroy-Big-1",
        "export-Done-1",
        "export-Never-1",
        "export-Never-1-plan",
    ] {
        assert!(
            keys_under(&after, gone).is_empty(),
            "{gone} left: {:?}",
            keys_under(&after, gone)
        );
    }
    for kept in [
        "export-Running-1",
        "export-Waiting-1",
        "export-Failed-1",
        "export-Other-1",
        "destroy-New-1",
    ] {
        assert_eq!(
            keys_under(&after, kept),
            keys_under(&before, kept),
            "{kept}"
        );
    }
    assert!(after.contains(&"cdkd/App/us-east-1/state.json".to_string()));

    // --include-resumable deletes the failed export too, and nothing live.
    recent(&s3).await;
    let all = cli(
        &bucket,
        &[
            "prune",
            "--older-than",
            "4s",
            "--include-resumable",
            "--backend-stack",
            "no-backend",
        ],
        &env,
    );
    ok(&all);
    assert!(
        all.stdout.contains("deleted export-Failed-1 ("),
        "{}",
        all.stdout
    );
    let last = h::list_all_keys(&s3, &bucket).await;
    assert!(keys_under(&last, "export-Failed-1").is_empty());
    for kept in [
        "export-Running-1",
        "export-Waiting-1",
        "export-Other-1",
        "destroy-New-1",
    ] {
        assert_eq!(keys_under(&last, kept), keys_under(&before, kept), "{kept}");
    }
    drop(live);
}

#[tokio::test]
async fn runs_history_prune_refuses_a_bad_duration_and_names_a_denied_listing() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    for bad in ["soon", "30", "-1d", "0d"] {
        let run = cli(&bucket, &["prune", &format!("--older-than={bad}")], &[]);
        let line = one_error_line(&run, 2);
        assert!(line.contains("--older-than"), "{bad}: {line}");
    }
    h::put_raw(&s3, &bucket, "cdkd/_runs/destroy-A-1/run.json", "{}").await;
    let denied = inject_fault(
        &Fault::new("GET", &format!("^/{bucket}/?$"), 403, "AccessDenied")
            .query("(^|&)list-type=2")
            .message("Access Denied"),
    );
    let run = cli(&bucket, &["prune", "--older-than", "1d"], &[]);
    drop(denied);
    let line = one_error_line(&run, 1);
    assert!(line.contains("Access Denied"), "{line}");
    assert_eq!(h::list_all_keys(&s3, &bucket).await.len(), 1);
}

async fn pass_machine(sfn: &aws_sdk_sfn::Client, name: &str) -> String {
    sfn.create_state_machine()
        .name(name)
        .definition(r#"{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}"#)
        .role_arn("arn:aws:iam::123456789012:role/cdkd-flow-prune-test")
        .send()
        .await
        .unwrap_or_else(|e| panic!("CreateStateMachine {name}: {e:?}"))
        .state_machine_arn
}

async fn start(sfn: &aws_sdk_sfn::Client, machine: &str, name: &str, stop: bool) {
    let arn = sfn
        .start_execution()
        .state_machine_arn(machine)
        .name(name)
        .input("{}")
        .send()
        .await
        .unwrap_or_else(|e| panic!("StartExecution {name}: {e:?}"))
        .execution_arn;
    if stop {
        sfn.stop_execution()
            .execution_arn(arn)
            .send()
            .await
            .expect("StopExecution");
    }
}

#[tokio::test]
async fn runs_history_prune_tells_a_deployed_run_by_its_execution() {
    // The emulator's executions stay RUNNING until stopped while its interpreter is off.
    h::set_emulator_interpreter(false).await;
    let s3 = h::s3().await;
    let sfn = aws_sdk_sfn::Client::new(&h::sdk().await);
    let bucket = h::fresh_bucket(&s3).await;
    let u = &uuid::Uuid::new_v4().simple().to_string()[..8];
    let destroy = pass_machine(&sfn, &format!("prune-destroy-{u}")).await;
    let export = pass_machine(&sfn, &format!("prune-export-{u}")).await;
    let running = format!("destroy-DepRun-{u}");
    let stopped = format!("destroy-DepStop-{u}");
    let export_stopped = format!("export-DepStop-{u}");
    let nowhere = format!("destroy-DepNone-{u}");
    let damaged = format!("destroy-DepBad-{u}");
    start(&sfn, &destroy, &running, false).await;
    start(&sfn, &destroy, &stopped, true).await;
    start(&sfn, &export, &export_stopped, true).await;
    for id in [&running, &stopped, &export_stopped, &nowhere, &damaged] {
        put_json(
            &s3,
            &bucket,
            &format!("cdkd/_runs/{id}/progress.json"),
            &json!({}),
        )
        .await;
    }
    // A report that does not read: the run's state cannot be told, the prune goes on.
    h::put_raw(
        &s3,
        &bucket,
        &format!("cdkd/_runs/{damaged}/report.json"),
        "not json",
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;

    let run = prune_with_machines(&bucket, &destroy, &export);
    ok(&run);
    let line = |id: &str| listed_line(&run.stdout, id);
    assert!(
        line(&running).starts_with("kept") && line(&running).ends_with("it is running"),
        "{}",
        run.stdout
    );
    assert!(line(&stopped).starts_with("deleted "), "{}", run.stdout);
    assert!(
        line(&export_stopped)
            .contains("an export that may be resumed (its execution ended without a report)"),
        "{}",
        run.stdout
    );
    assert!(
        line(&nowhere).contains("its execution could not be described"),
        "{}",
        run.stdout
    );
    assert!(
        line(&damaged).contains("its state is unknown") && line(&damaged).contains("report"),
        "{}",
        run.stdout
    );
    let keys = h::list_all_keys(&s3, &bucket).await;
    assert!(keys_under(&keys, &stopped).is_empty());
    for kept in [&running, &export_stopped, &nowhere, &damaged] {
        assert!(!keys_under(&keys, kept).is_empty(), "{kept}");
    }
}

#[tokio::test]
async fn runs_history_a_destroyed_records_orphans_outlive_a_prune_of_its_run_folder() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let u = &uuid::Uuid::new_v4().simple().to_string()[..8];
    let stack = format!("Orph-{u}");
    let orphans = json!([{"logicalId": "LeftQueue", "orphanedAt": 1777458225000i64,
                          "state": {"physicalId": "q-left", "resourceType": "AWS::SQS::Queue"}}]);
    put_json(
        &s3,
        &bucket,
        &format!("cdkd/{stack}/us-east-1/state.json"),
        &json!({"version": 10, "stackName": stack, "region": "us-east-1",
                "resources": {"CDKMetadata": {"physicalId": "meta", "resourceType": "AWS::CDK::Metadata",
                                              "properties": {}, "dependencies": []}},
                "outputs": {}, "orphans": orphans, "lastModified": 1777458225000i64}),
    )
    .await;
    let destroyed = crate::run_cli_env(
        &[
            "--state-bucket",
            &bucket,
            "destroy",
            &stack,
            "--local",
            "--fast",
            "-y",
        ],
        &[("HOSTNAME", HOST)],
    );
    ok(&destroyed);

    // Saved outside the run folder, under the stack and region, named by the run.
    let keys = h::list_all_keys(&s3, &bucket).await;
    let under = format!("cdkd/_orphans/{stack}/us-east-1/");
    let saved: Vec<&String> = keys.iter().filter(|k| k.starts_with(&under)).collect();
    assert_eq!(saved.len(), 1, "{keys:?}");
    let key = saved[0].clone();
    let run_id = key
        .strip_prefix(&under)
        .and_then(|k| k.strip_suffix(".json"))
        .expect("<run-id>.json")
        .to_string();
    assert!(!keys_under(&keys, &run_id).is_empty(), "{keys:?}");
    let report: Value = serde_json::from_str(
        &h::get_text(&s3, &bucket, &format!("cdkd/_runs/{run_id}/report.json"))
            .await
            .expect("report"),
    )
    .unwrap();
    assert_eq!(report["orphans"], json!([key]), "{report:#}");
    let body: Value =
        serde_json::from_str(&h::get_text(&s3, &bucket, &key).await.expect("orphans")).unwrap();
    assert_eq!(body, orphans);

    // A prune that deletes the ended run's folder leaves the list.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let pruned = cli(
        &bucket,
        &[
            "prune",
            "--older-than",
            "2s",
            "--backend-stack",
            "no-backend",
        ],
        &[("HOSTNAME", HOST)],
    );
    ok(&pruned);
    assert!(
        pruned.stdout.contains(&format!("deleted {run_id} (")),
        "{}",
        pruned.stdout
    );
    let after = h::list_all_keys(&s3, &bucket).await;
    assert!(keys_under(&after, &run_id).is_empty(), "{after:?}");
    assert!(after.contains(&key), "{after:?}");
    let body: Value =
        serde_json::from_str(&h::get_text(&s3, &bucket, &key).await.expect("orphans")).unwrap();
    assert_eq!(body, orphans);
}

async fn start_input(sfn: &aws_sdk_sfn::Client, machine: &str, name: &str, input: &Value) {
    sfn.start_execution()
        .state_machine_arn(machine)
        .name(name)
        .input(input.to_string())
        .send()
        .await
        .unwrap_or_else(|e| panic!("StartExecution {name}: {e:?}"));
}

/// An export's `progress.json` whose root stack is `stack` in us-east-1.
fn export_progress(run_id: &str, stack: &str) -> Value {
    json!({"runId": run_id, "kind": "export", "startedMs": 1,
           "stacks": [{"stack": stack, "region": "us-east-1", "cfnStackName": stack,
                       "stage": "importing", "importedResources": 0, "phase2Resources": 0}]})
}

#[tokio::test]
async fn runs_history_prune_keeps_an_ended_export_that_a_resume_is_running() {
    // The emulator's executions stay RUNNING until stopped while its interpreter is off.
    h::set_emulator_interpreter(false).await;
    let s3 = h::s3().await;
    let sfn = aws_sdk_sfn::Client::new(&h::sdk().await);
    let bucket = h::fresh_bucket(&s3).await;
    let u = &uuid::Uuid::new_v4().simple().to_string()[..8];
    let export = pass_machine(&sfn, &format!("prune-resumed-export-{u}")).await;
    let b = bucket.as_str();
    let fresh = h::now_ms() + 600_000;
    // (run, the root's lock holder, its expiry)
    let deployed = format!("export-Dep-{u}");
    let local = format!("export-Loc-{u}");
    let undescribed = format!("export-Gone-{u}");
    let stale = format!("export-Stale-{u}");
    let cases = [
        (&deployed, format!("resume-Dep-{u}"), fresh),
        (&local, format!("resume-Loc-{u}"), fresh),
        (&undescribed, format!("resume-Gone-{u}"), fresh),
        (&stale, format!("resume-Stale-{u}"), h::now_ms() - 1000),
    ];
    for (run, resume, expires) in &cases {
        let stack = format!("Root{}", &run[7..11]);
        put_json(
            &s3,
            b,
            &format!("cdkd/_runs/{run}/progress.json"),
            &export_progress(run, &stack),
        )
        .await;
        h::put_raw(&s3, b, &format!("cdkd/_runs/{run}/plan.json"), "{}").await;
        h::put_raw(
            &s3,
            b,
            &format!("cdkd/{stack}/us-east-1/lock.json"),
            h::cdkd_lock_body(
                &format!("cdkd-flow:{resume}"),
                h::now_ms(),
                *expires,
                Some("export"),
            ),
        )
        .await;
        if *run != &undescribed {
            // The resume writes into the folder of the run it resumes.
            start_input(
                &sfn,
                &export,
                resume,
                &json!({"stack": stack, "resume": run}),
            )
            .await;
        }
    }
    // The deployed runs' own executions ended (stopped) without a report: the Resume
    // step deleted it.
    for run in [&deployed, &undescribed, &stale] {
        start(&sfn, &export, run, true).await;
    }
    // A local export that failed, resumed by a deployed execution.
    put_json(
        &s3,
        b,
        &format!("cdkd/_runs/{local}/run.json"),
        &run_json(&local, "export", HOST, 1, Some("failed")),
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;

    let run = cli(
        &bucket,
        &[
            "prune",
            "--older-than",
            "2s",
            "--include-resumable",
            "--export-state-machine-arn",
            &export,
            "--backend-stack",
            "no-backend",
        ],
        &[("HOSTNAME", HOST)],
    );
    ok(&run);
    let line = |id: &str| listed_line(&run.stdout, id);
    for running in [&deployed, &local] {
        assert!(
            line(running).starts_with(&format!("kept {running} (export, "))
                && line(running).ends_with("it is running"),
            "{}",
            run.stdout
        );
    }
    assert!(
        line(&undescribed).starts_with("kept")
            && line(&undescribed).contains(&format!(
                "held by the execution resume-Gone-{u}, which could not be described"
            )),
        "{}",
        run.stdout
    );
    assert!(line(&stale).starts_with("deleted "), "{}", run.stdout);
    let keys = h::list_all_keys(&s3, &bucket).await;
    assert!(keys_under(&keys, &stale).is_empty());
    for kept in [&deployed, &local, &undescribed] {
        assert!(!keys_under(&keys, kept).is_empty(), "{kept}");
    }
}

#[tokio::test]
async fn runs_history_prune_tells_a_custom_run_ids_kind_by_its_machine_or_its_files() {
    h::set_emulator_interpreter(false).await;
    let s3 = h::s3().await;
    let sfn = aws_sdk_sfn::Client::new(&h::sdk().await);
    let bucket = h::fresh_bucket(&s3).await;
    let u = &uuid::Uuid::new_v4().simple().to_string()[..8];
    let destroy = pass_machine(&sfn, &format!("prune-kind-destroy-{u}")).await;
    let export = pass_machine(&sfn, &format!("prune-kind-export-{u}")).await;
    let b = bucket.as_str();
    // An export started with --run-id: its execution ended without a report.
    let by_machine = format!("orders-q1-{u}");
    start(&sfn, &export, &by_machine, true).await;
    put_json(
        &s3,
        b,
        &format!("cdkd/_runs/{by_machine}/progress.json"),
        &json!({}),
    )
    .await;
    // One no machine knows, that failed: its report says it is an export's.
    let by_report = format!("orders-q2-{u}");
    put_json(
        &s3,
        b,
        &format!("cdkd/_runs/{by_report}/progress.json"),
        &json!({}),
    )
    .await;
    put_json(
        &s3,
        b,
        &format!("cdkd/_runs/{by_report}/report.json"),
        &json!({"runId": by_report, "kind": "export", "outcome": "failed", "stacks": []}),
    )
    .await;
    // One no machine knows, with no report: its plan says it is an export's.
    let by_plan = format!("orders-q3-{u}");
    for f in ["progress.json", "plan.json"] {
        put_json(&s3, b, &format!("cdkd/_runs/{by_plan}/{f}"), &json!({})).await;
    }
    // A destroy started with --run-id, stopped: deleted, named a destroy.
    let destroy_run = format!("teardown-{u}");
    start(&sfn, &destroy, &destroy_run, true).await;
    put_json(
        &s3,
        b,
        &format!("cdkd/_runs/{destroy_run}/progress.json"),
        &json!({}),
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;

    let run = prune_with_machines(&bucket, &destroy, &export);
    ok(&run);
    let line = |id: &str| listed_line(&run.stdout, id);
    assert!(
        line(&by_machine).starts_with(&format!("kept {by_machine} (export, "))
            && line(&by_machine)
                .contains("an export that may be resumed (its execution ended without a report)"),
        "{}",
        run.stdout
    );
    assert!(
        line(&by_report).starts_with(&format!("kept {by_report} (export, "))
            && line(&by_report).contains("an export that may be resumed (it ended failed)"),
        "{}",
        run.stdout
    );
    assert!(
        line(&by_plan).starts_with(&format!("kept {by_plan} (export, ")),
        "{}",
        run.stdout
    );
    assert!(
        line(&destroy_run).starts_with(&format!("deleted {destroy_run} (destroy, ")),
        "{}",
        run.stdout
    );
    let keys = h::list_all_keys(&s3, &bucket).await;
    assert!(keys_under(&keys, &destroy_run).is_empty());
    for kept in [&by_machine, &by_report, &by_plan] {
        assert!(!keys_under(&keys, kept).is_empty(), "{kept}");
    }
}

#[tokio::test]
async fn runs_history_prune_reports_in_full_when_s3_refuses_a_whole_delete_batch() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let b = bucket.as_str();
    let s3r = &s3;
    // destroy-A-1: 1001 objects (run.json first, as listed), so its last key goes in the
    // second batch with destroy-B-1's; the first batch is refused whole.
    for id in ["destroy-A-1", "destroy-B-1"] {
        put_json(
            s3r,
            b,
            &format!("cdkd/_runs/{id}/run.json"),
            &run_json(id, "destroy", HOST, 1, Some("succeeded")),
        )
        .await;
    }
    futures::stream::iter(0..1000)
        .map(|i| async move {
            h::put_raw(
                s3r,
                b,
                &format!("cdkd/_runs/destroy-A-1/templates/T{i:04}.json"),
                "{}",
            )
            .await
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    h::put_raw(s3r, b, "cdkd/_runs/destroy-B-1/progress.json", "{}").await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let delete_batch = || {
        Fault::new("POST", &format!("^/{bucket}/?$"), 403, "AccessDenied")
            .query("(^|&)delete(=|&|$)")
            .message("Access Denied")
            .times(1)
    };

    let env = [("HOSTNAME", HOST)];
    let args = [
        "prune",
        "--older-than",
        "2s",
        "--backend-stack",
        "no-backend",
    ];
    let denied = inject_fault(&delete_batch());
    let run = cli(&bucket, &args, &env);
    drop(denied);
    assert_eq!(
        run.code, 1,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(
        !run.stderr.lines().any(|l| l.starts_with("error:")),
        "{}",
        run.stderr
    );
    // The second batch went through: B is gone, and said so; A is partly deleted.
    assert!(
        run.stdout
            .contains("deleted destroy-B-1 (destroy, 2 objects"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("partly deleted destroy-A-1 (destroy, 1 of 1,001 objects deleted, 1000 not")
            || run.stdout.contains(
                "partly deleted destroy-A-1 (destroy, 1 of 1001 objects deleted, 1000 not"
            ),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout
            .lines()
            .any(|l| l.starts_with("deleted destroy-A-1")),
        "{}",
        run.stdout
    );
    let refused: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("not deleted: cdkd/_runs/destroy-A-1/"))
        .collect();
    assert_eq!(refused.len(), 1000, "{}", run.stdout);
    assert!(refused[0].contains("Access Denied"), "{}", refused[0]);
    let keys = h::list_all_keys(&s3, &bucket).await;
    assert!(keys_under(&keys, "destroy-B-1").is_empty());
    assert_eq!(keys_under(&keys, "destroy-A-1").len(), 1000);

    // --json: the same, in full.
    let denied = inject_fault(&delete_batch());
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let run = cli(&bucket, &json_args, &env);
    drop(denied);
    assert_eq!(
        run.code, 1,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["deleted"], json!([]), "{v:#}");
    assert_eq!(v["partlyDeleted"][0]["runId"], "destroy-A-1", "{v:#}");
    assert_eq!(v["partlyDeleted"][0]["objectsLeft"], 1000, "{v:#}");
    assert_eq!(v["notDeleted"].as_array().map(Vec::len), Some(1000));
    assert_eq!(v["summary"]["runsDeleted"], 0);
    assert_eq!(v["summary"]["runsPartlyDeleted"], 1);
    assert_eq!(v["summary"]["objectsDeleted"], 0);
    assert_eq!(
        keys_under(&h::list_all_keys(&s3, &bucket).await, "destroy-A-1").len(),
        1000
    );
}

#[tokio::test]
async fn runs_history_prune_warns_below_a_day_and_still_prunes() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    put_json(
        &s3,
        &bucket,
        "cdkd/_runs/destroy-W-1/run.json",
        &run_json("destroy-W-1", "destroy", HOST, 1, Some("succeeded")),
    )
    .await;
    let env = [("HOSTNAME", HOST)];
    // A day or more: no warning.
    let day = cli(&bucket, &["prune", "--older-than", "1d", "--dry-run"], &env);
    ok(&day);
    assert!(!day.stderr.contains("warning:"), "{}", day.stderr);
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Under a day (the benchmark's 1s): one warning line on stderr, and the prune runs.
    let short = cli(&bucket, &["prune", "--older-than", "1s"], &env);
    ok(&short);
    let warnings: Vec<&str> = short
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", short.stderr);
    assert!(
        warnings[0].starts_with("warning: --older-than 1s is under a day"),
        "{}",
        warnings[0]
    );
    assert!(
        short.stdout.contains("deleted destroy-W-1 ("),
        "{}",
        short.stdout
    );
}

#[tokio::test]
async fn runs_history_expire_names_sooner_rules_through_an_and_filter_and_under_the_run_prefix() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let rule = |id: &str, filter: LifecycleRuleFilter| {
        LifecycleRule::builder()
            .id(id)
            .status(ExpirationStatus::Enabled)
            .filter(filter)
            .expiration(LifecycleExpiration::builder().days(7).build())
            .build()
            .unwrap()
    };
    let and = |prefix: &str, tag: bool| {
        let mut op = LifecycleRuleAndOperator::builder()
            .prefix(prefix)
            .object_size_greater_than(1);
        if tag {
            op = op.tags(Tag::builder().key("k").value("v").build().unwrap());
        }
        LifecycleRuleFilter::builder().and(op.build()).build()
    };
    s3.put_bucket_lifecycle_configuration()
        .bucket(&bucket)
        .lifecycle_configuration(
            BucketLifecycleConfiguration::builder()
                .rules(rule("and-state", and("cdkd/", false)))
                .rules(rule("and-tagged", and("cdkd/", true)))
                .rules(rule(
                    "exports-only",
                    LifecycleRuleFilter::builder()
                        .prefix("cdkd/_runs/export-")
                        .build(),
                ))
                .build()
                .unwrap(),
        )
        .send()
        .await
        .expect("the user's rules");
    let run = cli(&bucket, &["expire", "--days", "90", "--dry-run"], &[]);
    ok(&run);
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning: the bucket's rule"))
        .collect();
    assert_eq!(warnings.len(), 2, "{}", run.stderr);
    // (The emulator does not hand an `And`'s size condition back; the size wording is
    // pinned by core's tests.)
    assert!(
        warnings[0].contains("'and-state' expires objects under 'cdkd/' after 7 days"),
        "{}",
        warnings[0]
    );
    assert!(
        warnings[1].contains("'exports-only' expires objects under 'cdkd/_runs/export-'")
            && warnings[1].ends_with("the run folders under it go by the shorter one"),
        "{}",
        warnings[1]
    );
}

/// An export whose folder holds only its uploaded templates, beside its plan run's: while
/// the CLI that planned it (the plan run's process) is alive, it may be asking the user
/// to confirm, so the folder is kept as running; once that process is gone, it never
/// started and is deleted.
#[tokio::test]
async fn runs_history_prune_keeps_the_uploads_of_an_export_whose_cli_still_asks_to_confirm() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let live = live_run();
    let r = |id: &str, f: &str| format!("cdkd/_runs/{id}/{f}");
    for (id, pid) in [("export-Asking-1", live.0.id()), ("export-Gone-1", 1)] {
        h::put_raw(&s3, &bucket, &r(id, "templates/App.json"), "{}").await;
        let plan = format!("{id}-plan");
        let mut run = run_json(&plan, "export", HOST, pid, Some("succeeded"));
        run["planOnly"] = json!(true);
        put_json(&s3, &bucket, &r(&plan, "run.json"), &run).await;
        put_json(&s3, &bucket, &r(&plan, "plan.json"), &json!({})).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let env = [("HOSTNAME", HOST)];
    let run = cli(
        &bucket,
        &[
            "prune",
            "--older-than",
            "1s",
            "--json",
            "--backend-stack",
            "no-backend",
        ],
        &env,
    );
    ok(&run);
    let keys = h::list_all_keys(&s3, &bucket).await;
    assert!(
        keys.contains(&r("export-Asking-1", "templates/App.json")),
        "{}\n{keys:?}",
        run.stdout
    );
    assert!(
        !keys.contains(&r("export-Gone-1", "templates/App.json")),
        "{}\n{keys:?}",
        run.stdout
    );
    let v: Value = serde_json::from_str(&run.stdout).expect("JSON");
    let kept = v["kept"].to_string();
    assert!(
        kept.contains("export-Asking-1") && kept.contains("it is running"),
        "{kept}"
    );
}
