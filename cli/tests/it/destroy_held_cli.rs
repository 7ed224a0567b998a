//! End-to-end: what a destroy does when something else holds a stack (docs/destroy.md
//! "Refusals before anything is deleted" step 8, "The lock"): a record whose resources a stopped export imported into
//! CloudFormation is refused (statement 56: by the CLI before its question, by the
//! workflow's plan step, and by a whole-stack `state orphan`); a lock taken away while a
//! wave deletes stops the destroy before it writes or deletes the record, and the same
//! destroy run again finishes (statement 57).
//!
//! Run: `scripts/with-emulator.sh cargo test -p cdkd-flow --test e2e -- --test-threads=1
//! destroy_held`.

use std::time::Duration;

use cdkd_tests as h;
use serde_json::{json, Value};

use crate::export_support::{real_stack, uniq, REGION};

/// `cdkd-flow --state-bucket <bucket> <args>`, stdin not a terminal (closed).
fn cli(bucket: &str, args: &[&str]) -> h::CliRun {
    let mut all = vec!["--state-bucket", bucket];
    all.extend_from_slice(args);
    crate::run_cli_env(&all, &[])
}

async fn keys(bucket: &str) -> Vec<String> {
    h::list_all_keys(&h::s3().await, bucket).await
}

/// Statement 56 (docs/destroy.md, "Checks"): an export whose phase 2 fails after its IMPORT
/// leaves CloudFormation holding the record's queue and topic, the record intact and no
/// lock. A destroy of the record is refused, naming the CloudFormation stack, the run and
/// the two ways on, by the CLI before anything is locked and by the workflow's own plan
/// step (what a deployed or scheduled destroy runs); nothing is deleted. A whole-stack
/// orphan is refused too, naming `--abandon-export`.
#[tokio::test(flavor = "multi_thread")]
async fn destroy_held_statement_56_a_record_a_stopped_export_imported_is_refused_and_nothing_is_deleted(
) {
    let s = real_stack("HeldByExport").await;
    // Phase 2 fails: an Output imports a value no stack exports.
    let mut template: Value =
        serde_json::from_str(&std::fs::read_to_string(&s.template).unwrap()).unwrap();
    template["Outputs"]["Bad"] = json!({"Value": {"Fn::ImportValue": "cdkd-flow-no-such-export"}});
    std::fs::write(&s.template, serde_json::to_vec_pretty(&template).unwrap()).unwrap();
    let run_id = uniq("export-held");
    let export = crate::run_cli_env(&s.export_args(&run_id, &["-y"]), &[]);
    assert_eq!(export.code, 1, "phase 2 fails: {export:?}");
    let cfn = aws_sdk_cloudformation::Client::new(&h::sdk().await);
    let held = cfn
        .describe_stack_resources()
        .stack_name(&s.stack)
        .send()
        .await
        .expect("the export's CloudFormation stack");
    let ids: Vec<&str> = held
        .stack_resources()
        .iter()
        .filter_map(|r| r.physical_resource_id())
        .collect();
    assert!(ids.contains(&s.queue_url.as_str()), "{ids:?}");
    let before = keys(&s.bucket).await;
    assert!(before.contains(&s.state_key()), "{before:?}");

    let said = |text: &str| {
        for part in [
            format!("CloudFormation stack {} (", s.stack),
            format!("export run {run_id} imported them"),
            "run the same cdkd-flow export command again".to_string(),
            "DeletionPolicy Retain".to_string(),
        ] {
            assert!(text.contains(&part), "{part:?} not in {text}");
        }
    };
    // The CLI, before its question and any lock (a dry run says it too).
    let r = cli(&s.bucket, &["destroy", &s.stack, "--local", "--fast", "-y"]);
    let live = h::fixtures::queue_exists(&h::sdk().await, &s.queue_url).await;
    assert!(
        r.code == 1 && live,
        "refused, the queue CloudFormation holds not deleted ({live}): {r:?}"
    );
    said(&r.stderr);
    assert!(r.stderr.contains("nothing was deleted"), "{}", r.stderr);
    let r = cli(&s.bucket, &["destroy", &s.stack, "--dry-run"]);
    assert_eq!(r.code, 1, "{r:?}");
    said(&r.stdout);

    // The workflow's plan step, which deployed and scheduled destroys run without the
    // CLI's check.
    let definition = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../statemachines/destroy.asl.json"
    );
    let input = json!({"stack": s.stack, "stateBucket": s.bucket}).to_string();
    let r = crate::run_cli_env(
        &[
            "workflow", "run", definition, "--input", &input, "--fast", "--json",
        ],
        &[],
    );
    assert_eq!(r.code, 1, "{r:?}");
    let out: Value = serde_json::from_str(r.stdout.trim()).unwrap_or_else(|_| panic!("{r:?}"));
    assert_eq!(out["error"], "HeldByExport", "{out}");
    said(out["cause"].as_str().unwrap_or_default());

    // A whole-stack orphan: the migration is half done.
    let r = cli(&s.bucket, &["state", "orphan", &s.stack, "-y"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains(&format!(
            "cdkd-flow state orphan {} --stack-region {REGION} --abandon-export --state-bucket {}",
            s.stack, s.bucket
        )),
        "{}",
        r.stderr
    );

    // Nothing was deleted, nothing is locked; the record is as it was.
    assert!(h::fixtures::queue_exists(&h::sdk().await, &s.queue_url).await);
    assert!(h::fixtures::topic_exists(&h::sdk().await, &s.topic_arn).await);
    let mut after = keys(&s.bucket).await;
    after.retain(|k| !k.contains("/_runs/"));
    let mut was = before.clone();
    was.retain(|k| !k.contains("/_runs/"));
    assert_eq!(after, was);
    let record: Value = serde_json::from_str(
        &h::get_text(&h::s3().await, &s.bucket, &s.state_key())
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(record["resources"], s.record["resources"]);
    // The export's report said the same as the refusals.
    assert!(
        export
            .stdout
            .contains("do not run `cdkd deploy` or `cdkd-flow destroy` on it"),
        "{export:?}"
    );
}

/// Statement 57 (docs/destroy.md, "Checks"): a lock taken away while a wave deletes. The
/// topic's delete is held (the emulator throttles `DeleteTopic` of it); meanwhile its
/// lock is force-unlocked and someone else (alice's deploy) takes it. The destroy stops
/// with `LockLost` naming the stack and the new holder, exits 1, and its record is not
/// deleted; once alice is done, the same destroy run again finishes: nothing left in AWS,
/// no record, no lock.
#[tokio::test(flavor = "multi_thread")]
async fn destroy_held_statement_57_a_lock_taken_away_mid_wave_stops_before_the_record_and_a_rerun_finishes(
) {
    use h::faults::{exact, inject_fault, Fault};
    let s3 = h::s3().await;
    let sdk = h::sdk().await;
    let bucket = h::fresh_bucket(&s3).await;
    let stack = uniq("LockLost");
    let topic = aws_sdk_sns::Client::new(&sdk)
        .create_topic()
        .name(uniq("topic"))
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    let queue = aws_sdk_sqs::Client::new(&sdk)
        .create_queue()
        .queue_name(uniq("queue"))
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let record = json!({
        "version": 10, "stackName": stack, "region": REGION, "outputs": {},
        "resources": {
            "Topic": {"physicalId": topic, "resourceType": "AWS::SNS::Topic", "properties": {}, "dependencies": [], "provisionedBy": "sdk"},
            "Queue": {"physicalId": queue, "resourceType": "AWS::SQS::Queue", "properties": {}, "dependencies": ["Topic"], "provisionedBy": "sdk"}
        }
    });
    let state_key = format!("cdkd/{stack}/{REGION}/state.json");
    let lock_key = format!("cdkd/{stack}/{REGION}/lock.json");
    h::put_raw(&s3, &bucket, &state_key, record.to_string().into_bytes()).await;

    let hold = inject_fault(&Fault::cfn(
        "DeleteTopic",
        &[("TopicArn", &exact(&topic))],
        "Throttling",
        "Rate exceeded",
    ));
    let mut run = crate::follower::Follower::start(
        &[
            "--state-bucket",
            &bucket,
            "destroy",
            &stack,
            "--local",
            "--fast",
            "-y",
        ],
        &[],
    );
    // Mid-wave: the topic's delete has been refused at least once.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while hold.state().map_or(0, |v| v["hits"].as_u64().unwrap_or(0)) == 0 {
        assert!(
            std::time::Instant::now() < deadline && run.running(),
            "the destroy never tried to delete the topic"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let r = cli(&bucket, &["force-unlock", &stack, "--stack-region", REGION]);
    assert_eq!(r.code, 0, "{r:?}");
    let now = h::now_ms();
    h::put_raw(
        &s3,
        &bucket,
        &lock_key,
        h::cdkd_lock_body("alice@laptop:42", now, now + 600_000, Some("deploy")).into_bytes(),
    )
    .await;
    drop(hold);

    let (code, stderr) = run.wait_exit(Duration::from_secs(180));
    assert_eq!(code, 1, "the destroy stops: {stderr}");
    for part in [
        format!("Lost the lock for stack '{stack}' ({REGION})"),
        "held by alice@laptop:42, operation: deploy".to_string(),
        "stopped before writing the stack's record".to_string(),
    ] {
        assert!(stderr.contains(&part), "{part:?} not in {stderr}");
    }
    let kept = h::get_text(&s3, &bucket, &state_key)
        .await
        .expect("the record is not deleted");
    assert!(kept.contains("\"Topic\""), "{kept}");
    assert!(
        h::get_text(&s3, &bucket, &lock_key)
            .await
            .is_some_and(|l| l.contains("alice@laptop:42")),
        "alice's lock is left in place"
    );

    // Alice is done; the same destroy again finishes what the first one left.
    let r = cli(&bucket, &["force-unlock", &stack, "--stack-region", REGION]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = cli(&bucket, &["destroy", &stack, "--local", "--fast", "-y"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!h::fixtures::topic_exists(&sdk, &topic).await);
    assert!(!h::fixtures::queue_exists(&sdk, &queue).await);
    let left: Vec<String> = keys(&bucket)
        .await
        .into_iter()
        .filter(|k| !k.contains("/_runs/"))
        .collect();
    assert!(left.is_empty(), "no record, no lock: {left:?}");
}
