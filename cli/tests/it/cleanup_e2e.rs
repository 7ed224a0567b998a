//! The cleanup workflow end to end on the emulator, run by the engine as Step Functions
//! would run `statemachines/cleanup.asl.json`: `cleanup-select` picks the two old stacks
//! matching the pattern, the Map starts the destroy workflow for each through
//! `states:startExecution.sync:2`, their real resources and records are gone, and a
//! stack that does not match is untouched. A dry run deletes nothing.
//!
//! Run: `scripts/with-emulator.sh cargo test -p cdkd-tests --test cleanup_e2e`.

use std::sync::{Arc, Mutex};

use aws_config::SdkConfig;
use cdkd_engine::{Engine, EngineOptions, Event, EventKind, Outcome, StateMachine};
use cdkd_functions::local::LocalSteps;
use cdkd_functions::{definitions, Deps};
use cdkd_tests as h;
use serde_json::{json, Value};

const CLEANUP: &str = include_str!("../../../statemachines/cleanup.asl.json");

fn uniq(tag: &str) -> String {
    format!("{tag}-{}", &uuid::Uuid::new_v4().simple().to_string()[..10])
}

/// A stack of one real queue and one real topic, recorded as cdkd writes it.
async fn seed_stack(
    sdk: &SdkConfig,
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    stack: &str,
) -> (String, String) {
    let url = cdkd_tests::fixtures::queue(sdk, &uniq("q")).await;
    let arn = cdkd_tests::fixtures::topic(sdk, &uniq("t")).await;
    let record = json!({
        "version": 10, "stackName": stack, "region": "us-east-1",
        "resources": {
            "Topic": {"physicalId": arn, "resourceType": "AWS::SNS::Topic", "properties": {}, "provisionedBy": "sdk"},
            "Queue": {"physicalId": url, "resourceType": "AWS::SQS::Queue", "properties": {}, "dependencies": ["Topic"], "provisionedBy": "sdk"}
        },
        "outputs": {}, "lastModified": 1
    });
    let key = format!("cdkd/{stack}/us-east-1/state.json");
    h::put_raw(
        s3,
        bucket,
        &key,
        serde_json::to_string_pretty(&record).unwrap(),
    )
    .await;
    (url, arn)
}

async fn engine_and_cleanup(sdk: &SdkConfig) -> (Engine, StateMachine) {
    let mut deps = Deps::from_sdk(sdk.clone(), None).await;
    deps.budgets.inline_wait = std::time::Duration::from_millis(200);
    let engine = Engine::new(
        Arc::new(LocalSteps::new(deps)),
        EngineOptions {
            time_scale: 0.0,
            ..EngineOptions::default()
        },
    );
    let subs = definitions::local_substitutions();
    let destroy = StateMachine::load(definitions::DESTROY, &subs).expect("destroy loads");
    let destroy_arn = engine.state_machine_arn("destroy");
    engine.register(destroy_arn.clone(), destroy);
    let mut subs = subs;
    subs.insert("DestroyStateMachineArn".into(), destroy_arn);
    let cleanup = StateMachine::load(CLEANUP, &subs).expect("cleanup loads");
    (engine, cleanup)
}

/// The summary with its lists read back from the run folder (docs/runs.md, "A cleanup's lists"), as the
/// CLI and the digest read them.
async fn with_lists(sdk: &SdkConfig, bucket: &str, run_id: &str, summary: &Value) -> Value {
    let store = Deps::from_sdk(sdk.clone(), None)
        .await
        .store(bucket, "cdkd")
        .await;
    cdkd_functions::cleanup::with_lists(&store, run_id, summary)
        .await
        .expect("the lists read")
}

#[tokio::test]
async fn cleanup_destroys_matching_old_stacks_through_start_execution_sync_and_leaves_the_rest() {
    let sdk = h::sdk().await;
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let a = seed_stack(&sdk, &s3, &bucket, "pr-a").await;
    let b = seed_stack(&sdk, &s3, &bucket, "pr-b").await;
    let keep = seed_stack(&sdk, &s3, &bucket, "main").await;
    let (engine, cleanup) = engine_and_cleanup(&sdk).await;

    let run_id = uniq("cleanup-run");
    let out = engine
        .run_named(
            &cleanup,
            json!({"stateBucket": bucket, "pattern": "pr-*", "minimumAge": "1d", "dryRun": false}),
            &run_id,
        )
        .await;
    let Outcome::Succeeded(summary) = out else {
        panic!("cleanup failed: {out:?}")
    };
    let summary = with_lists(&sdk, &bucket, &run_id, &summary).await;
    assert_eq!(summary["succeededCount"], json!(2), "{summary:#}");
    assert_eq!(summary["failedCount"], json!(0), "{summary:#}");
    assert_eq!(summary["skipped"][0]["stack"], json!("main"));
    assert_eq!(summary["skipped"][0]["reason"], json!("pattern-mismatch"));

    let sqs = aws_sdk_sqs::Client::new(&sdk);
    let sns = aws_sdk_sns::Client::new(&sdk);
    for (url, arn) in [&a, &b] {
        assert!(
            sqs.get_queue_attributes()
                .queue_url(url)
                .send()
                .await
                .is_err(),
            "queue {url} still exists"
        );
        assert!(
            sns.get_topic_attributes()
                .topic_arn(arn)
                .send()
                .await
                .is_err(),
            "topic {arn} still exists"
        );
    }
    assert!(
        sqs.get_queue_attributes()
            .queue_url(&keep.0)
            .send()
            .await
            .is_ok(),
        "non-matching stack's queue was touched"
    );
    assert!(
        sns.get_topic_attributes()
            .topic_arn(&keep.1)
            .send()
            .await
            .is_ok(),
        "non-matching stack's topic was touched"
    );
    assert!(h::get_text(&s3, &bucket, "cdkd/pr-a/us-east-1/state.json")
        .await
        .is_none());
    assert!(h::get_text(&s3, &bucket, "cdkd/pr-b/us-east-1/state.json")
        .await
        .is_none());
    assert!(h::get_text(&s3, &bucket, "cdkd/main/us-east-1/state.json")
        .await
        .is_some());
}

#[tokio::test]
async fn cleanup_dry_run_selects_but_deletes_nothing() {
    let sdk = h::sdk().await;
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let a = seed_stack(&sdk, &s3, &bucket, "pr-a").await;
    let (engine, cleanup) = engine_and_cleanup(&sdk).await;

    let run_id = uniq("cleanup-dry");
    let out = engine
        .run_named(
            &cleanup,
            json!({"stateBucket": bucket, "pattern": "pr-*", "minimumAge": "1d", "dryRun": true}),
            &run_id,
        )
        .await;
    let Outcome::Succeeded(summary) = out else {
        panic!("cleanup failed: {out:?}")
    };
    let summary = with_lists(&sdk, &bucket, &run_id, &summary).await;
    assert_eq!(summary["dryRun"], json!(true));
    assert_eq!(
        summary["selected"][0]["stack"],
        json!("pr-a"),
        "{summary:#}"
    );
    let sqs = aws_sdk_sqs::Client::new(&sdk);
    assert!(sqs
        .get_queue_attributes()
        .queue_url(&a.0)
        .send()
        .await
        .is_ok());
    assert!(h::get_text(&s3, &bucket, "cdkd/pr-a/us-east-1/state.json")
        .await
        .is_some());
}

/// The `Summary` state's output: what a person reads in the execution history when the
/// run ends in `CleanupIncomplete` (the execution has no output then).
fn summary_capture(engine: Engine) -> (Engine, Arc<Mutex<Option<Value>>>) {
    let seen = Arc::new(Mutex::new(None));
    let sink = seen.clone();
    let engine = engine.with_observer(Arc::new(move |e: &Event| {
        if e.kind == EventKind::StateExited("Pass") && e.state.as_deref() == Some("Summary") {
            *sink.lock().unwrap() = e.output.clone();
        }
    }));
    (engine, seen)
}

#[tokio::test]
async fn cleanup_one_failed_destroy_does_not_stop_the_others_and_fails_the_run_as_cleanup_incomplete(
) {
    let sdk = h::sdk().await;
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let good = seed_stack(&sdk, &s3, &bucket, "pr-good").await;
    // A damaged record: selected (old, unlocked) but refused by destroy-plan.
    let damaged = json!({"version": 10, "stackName": "pr-bad", "region": "us-east-1", "resources": "oops", "lastModified": 1});
    h::put_raw(
        &s3,
        &bucket,
        "cdkd/pr-bad/us-east-1/state.json",
        damaged.to_string(),
    )
    .await;
    let (engine, cleanup) = engine_and_cleanup(&sdk).await;
    let (engine, seen) = summary_capture(engine);

    let run_id = uniq("cleanup-incomplete");
    let out = engine
        .run_named(
            &cleanup,
            json!({"stateBucket": bucket, "pattern": "pr-*", "minimumAge": "1d"}),
            &run_id,
        )
        .await;
    let Outcome::Failed(failure) = out else {
        panic!("a cleanup with a failed destroy must fail: {out:?}")
    };
    assert_eq!(failure.error, "CleanupIncomplete");
    let cause: Value = serde_json::from_str(&failure.cause).expect("the cause is JSON");
    assert_eq!(cause["failedCount"], json!(1), "{cause:#}");
    assert_eq!(cause["succeededCount"], json!(1), "{cause:#}");
    assert_eq!(cause["selectedCount"], json!(2), "{cause:#}");
    assert_eq!(cause["failedStacks"], json!(["pr-bad"]), "{cause:#}");
    assert!(
        cause["message"]
            .as_str()
            .unwrap()
            .starts_with("1 of 2 selected stacks were not destroyed"),
        "{cause:#}"
    );

    let summary = seen
        .lock()
        .unwrap()
        .clone()
        .expect("the Summary state ran before the Fail state");
    let summary = with_lists(&sdk, &bucket, &run_id, &summary).await;
    assert_eq!(summary["succeededCount"], json!(1), "{summary:#}");
    assert_eq!(summary["failedCount"], json!(1), "{summary:#}");
    assert_eq!(summary["failed"][0]["stack"], json!("pr-bad"));
    assert_eq!(summary["failed"][0]["status"], json!("FAILED"));
    assert!(summary["failed"][0]["error"].is_string(), "{summary:#}");
    assert_eq!(summary["succeeded"][0]["stack"], json!("pr-good"));
    let sqs = aws_sdk_sqs::Client::new(&sdk);
    assert!(sqs
        .get_queue_attributes()
        .queue_url(&good.0)
        .send()
        .await
        .is_err());
    assert!(
        h::get_text(&s3, &bucket, "cdkd/pr-bad/us-east-1/state.json")
            .await
            .is_some()
    );
}

#[tokio::test]
async fn cleanup_local_cli_draws_each_destroy_runs_settled_resources_and_prints_the_summary() {
    let sdk = h::sdk().await;
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    seed_stack(&sdk, &s3, &bucket, "pr-a").await;
    seed_stack(&sdk, &s3, &bucket, "pr-b").await;
    let (keep_queue, _) = seed_stack(&sdk, &s3, &bucket, "main").await;
    let b = bucket.clone();
    let r = tokio::task::spawn_blocking(move || {
        crate::run_cli_env(
            &[
                "--state-bucket",
                &b,
                "cleanup",
                "--pattern",
                "pr-*",
                "--older-than",
                "1d",
                "--local",
                "--fast",
            ],
            &[],
        )
    })
    .await
    .unwrap();
    assert_eq!(r.code, 0, "{r:?}");
    // Off a terminal: a line per settled resource of each destroy run the cleanup
    // started, and a bar line when each stack is destroyed, each once.
    let lines: Vec<&str> = r.stderr.lines().collect();
    for stack in ["pr-a", "pr-b"] {
        for want in [
            format!("  {stack}: Queue (AWS::SQS::Queue) deleted"),
            format!("  {stack}: Topic (AWS::SNS::Topic) deleted"),
            format!(
                "{stack} (us-east-1) [##############################] 2/2 destroyed: 2 deleted"
            ),
        ] {
            let n = lines.iter().filter(|l| **l == want).count();
            assert_eq!(n, 1, "{want:?} printed {n} times:\n{}", r.stderr);
        }
    }
    assert!(!r.stderr.contains("main"), "{}", r.stderr);
    assert!(r.stdout.contains("2 destroyed, 0 failed"), "{r:?}");
    let sqs = aws_sdk_sqs::Client::new(&sdk);
    assert!(sqs
        .get_queue_attributes()
        .queue_url(&keep_queue)
        .send()
        .await
        .is_ok());
}

// ------------------------------------------------------------------ at scale
//
// Step Functions caps a state's input and output at 256 KiB (`States.DataLimitExceeded`,
// which no Catch takes; the engine enforces it as AWS does: docs/emulator.md, "AWS's
// limits"). A cleanup keeps its lists in its run folder and passes only counts and
// bounded batches (docs/runs.md, "A cleanup's lists"), so neither a dry run over
// thousands of records nor hundreds of destroys come near it.

/// A record of no resources, old enough for any minimum age of these tests.
fn empty_record(stack: &str) -> String {
    json!({"version": 10, "stackName": stack, "region": "us-east-1",
        "resources": {}, "outputs": {}, "lastModified": 1})
    .to_string()
}

/// Puts `stacks`' records, 32 at a time.
async fn seed_empty(s3: &aws_sdk_s3::Client, bucket: &str, stacks: Vec<String>) {
    use futures::stream::{self, StreamExt};
    stream::iter(stacks)
        .map(|stack| {
            let s3 = s3.clone();
            let bucket = bucket.to_string();
            async move {
                let key = format!("cdkd/{stack}/us-east-1/state.json");
                h::put_raw(&s3, &bucket, &key, empty_record(&stack)).await;
            }
        })
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;
}

/// The largest state input or output the engine saw, in compact JSON bytes, and the
/// `Summary` state's output.
type Meter = (Engine, Arc<Mutex<usize>>, Arc<Mutex<Option<Value>>>);
fn payload_meter(engine: Engine) -> Meter {
    let max = Arc::new(Mutex::new(0usize));
    let seen = Arc::new(Mutex::new(None));
    let (sink, summary) = (max.clone(), seen.clone());
    let engine = engine.with_observer(Arc::new(move |e: &Event| {
        if e.kind == EventKind::StateExited("Pass") && e.state.as_deref() == Some("Summary") {
            *summary.lock().unwrap() = e.output.clone();
        }
        let n = [&e.input, &e.output]
            .into_iter()
            .flatten()
            .map(|v| v.to_string().len())
            .max()
            .unwrap_or(0);
        let mut m = sink.lock().unwrap();
        *m = (*m).max(n);
    }));
    (engine, max, seen)
}

fn json_of(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("{e}: {s}"))
}

#[tokio::test]
async fn cleanup_dry_run_over_5000_records_stays_within_the_payload_limit_and_keeps_its_lists_in_the_run_folder(
) {
    let sdk = h::sdk().await;
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let started = std::time::Instant::now();
    // 4,900 records the pattern rules out (listed, never read) and 100 it selects.
    let mut stacks: Vec<String> = (0..4900)
        .map(|i| format!("feature-branch-environment-{i:05}"))
        .collect();
    stacks.extend((0..100).map(|i| format!("pr-preview-environment-{i:05}")));
    seed_empty(&s3, &bucket, stacks).await;
    let seeded = started.elapsed();
    let (engine, cleanup) = engine_and_cleanup(&sdk).await;
    let (engine, max, _) = payload_meter(engine);
    let run_id = uniq("cleanup-dry");

    let out = engine
        .run_named(
            &cleanup,
            json!({"stateBucket": bucket, "pattern": "pr-*", "minimumAge": "1d", "dryRun": true}),
            &run_id,
        )
        .await;
    let Outcome::Succeeded(summary) = out else {
        panic!("cleanup failed: {out:?}")
    };
    eprintln!(
        "seeded 5,000 records in {seeded:?}; the dry run took {:?}; largest state payload {} bytes",
        started.elapsed() - seeded,
        max.lock().unwrap()
    );
    assert_eq!(summary["dryRun"], json!(true), "{summary:#}");
    assert_eq!(summary["selectedCount"], json!(100), "{summary:#}");
    assert_eq!(summary["skippedCount"], json!(4900), "{summary:#}");
    assert!(
        summary.get("skipped").is_none(),
        "no list in the state: {summary:#}"
    );
    assert!(
        *max.lock().unwrap() < 16 * 1024,
        "a state payload of {} bytes",
        max.lock().unwrap()
    );
    let key = format!("cdkd/_runs/{run_id}/selection.json");
    assert_eq!(summary["selectionKey"], json!(key));
    let selection = json_of(
        &h::get_text(&s3, &bucket, &key)
            .await
            .expect("selection.json"),
    );
    assert_eq!(selection["selected"].as_array().unwrap().len(), 100);
    assert_eq!(selection["skipped"].as_array().unwrap().len(), 4900);
    assert_eq!(selection["skipped"][0]["reason"], json!("pattern-mismatch"));
    // Nothing was destroyed.
    assert!(h::get_text(
        &s3,
        &bucket,
        "cdkd/pr-preview-environment-00000/us-east-1/state.json"
    )
    .await
    .is_some());
}

/// 60 characters of a branch name.
const LONG_BRANCH: &str = "feature-checkout-redesign-with-the-new-payment-provider-flow";

#[tokio::test]
async fn cleanup_destroying_300_stacks_stays_within_the_payload_limit_and_records_every_result() {
    let sdk = h::sdk().await;
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let started = std::time::Instant::now();
    // Names of 77 characters (CloudFormation allows 128), as CI preview stacks carry a
    // branch's name: the old definition's Map output passed the quota with these.
    let name = |i: &str| format!("pr-preview-{i}-{}", LONG_BRANCH);
    let stacks: Vec<String> = (0..300).map(|i| name(&format!("{i:05}"))).collect();
    seed_empty(&s3, &bucket, stacks).await;
    // One damaged record: selected, refused by its destroy.
    h::put_raw(
        &s3,
        &bucket,
        &format!("cdkd/{}/us-east-1/state.json", name("broken")),
        json!({"version": 10, "stackName": name("broken"), "region": "us-east-1",
            "resources": "oops", "lastModified": 1})
        .to_string(),
    )
    .await;
    let seeded = started.elapsed();
    let (engine, cleanup) = engine_and_cleanup(&sdk).await;
    let (engine, max, seen) = payload_meter(engine);
    let run_id = uniq("cleanup-300");

    let out = engine
        .run_named(
            &cleanup,
            json!({"stateBucket": bucket, "pattern": "pr-*", "minimumAge": "1d"}),
            &run_id,
        )
        .await;
    eprintln!(
        "seeded 301 records in {seeded:?}; the cleanup took {:?}; largest state payload {} bytes",
        started.elapsed() - seeded,
        max.lock().unwrap()
    );
    let Outcome::Failed(failure) = out else {
        panic!("one destroy failed: the cleanup must fail as incomplete: {out:?}")
    };
    assert_eq!(failure.error, "CleanupIncomplete", "{failure:?}");
    let cause = json_of(&failure.cause);
    assert_eq!(cause["succeededCount"], json!(300), "{cause:#}");
    assert_eq!(cause["failedStacks"], json!([name("broken")]));
    let summary = seen.lock().unwrap().clone().expect("the Summary state ran");
    assert_eq!(summary["selectedCount"], json!(301), "{summary:#}");
    assert_eq!(summary["failedCount"], json!(1), "{summary:#}");
    assert!(
        *max.lock().unwrap() < 128 * 1024,
        "a state payload of {} bytes",
        max.lock().unwrap()
    );

    let results = json_of(
        &h::get_text(&s3, &bucket, &format!("cdkd/_runs/{run_id}/results.json"))
            .await
            .expect("results.json"),
    );
    let results = results["results"].as_array().unwrap();
    assert_eq!(results.len(), 301);
    let mut names: Vec<&str> = results
        .iter()
        .map(|r| r["stack"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), 301, "each stack recorded once");
    let failed: Vec<&Value> = results.iter().filter(|r| r["status"] == "FAILED").collect();
    assert_eq!(failed.len(), 1);
    assert!(failed[0]["cause"].as_str().unwrap().chars().count() <= 500);
    assert!(results
        .iter()
        .filter(|r| r["status"] == "SUCCEEDED")
        .all(|r| r["executionArn"].is_string()));
    assert!(h::get_text(
        &s3,
        &bucket,
        &format!("cdkd/{}/us-east-1/state.json", name("00299"))
    )
    .await
    .is_none());
}

/// A cleanup whose selection fails (the state bucket does not exist) still tells its
/// digest, then fails with the step's error.
#[tokio::test]
async fn cleanup_whose_select_fails_goes_through_notify_then_fails_with_the_error() {
    let sdk = h::sdk().await;
    let (engine, cleanup) = engine_and_cleanup(&sdk).await;
    let states = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = states.clone();
    let engine = engine.with_observer(Arc::new(move |e: &Event| {
        if matches!(e.kind, EventKind::StateEntered(_)) {
            if let Some(s) = &e.state {
                sink.lock().unwrap().push(s.clone());
            }
        }
    }));
    let out = engine
        .run(
            &cleanup,
            json!({"stateBucket": "cdkd-no-such-bucket-for-cleanup", "pattern": "pr-*", "minimumAge": "1d"}),
        )
        .await;
    let Outcome::Failed(failure) = out else {
        panic!("a cleanup that cannot select must fail: {out:?}")
    };
    // A name of its own (an error name beginning `States.` is reserved): the step's
    // error comes first in the cause.
    assert_eq!(failure.error, "CleanupFailed", "{failure:?}");
    assert!(failure.cause.contains(": "), "{failure:?}");
    let states = states.lock().unwrap().clone();
    for s in ["Select", "Failed", "Notify", "CleanupFailed"] {
        assert!(states.iter().any(|x| x == s), "{s} not entered: {states:?}");
    }
}
