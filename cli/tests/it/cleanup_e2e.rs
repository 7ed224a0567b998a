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

#[tokio::test]
async fn cleanup_destroys_matching_old_stacks_through_start_execution_sync_and_leaves_the_rest() {
    let sdk = h::sdk().await;
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let a = seed_stack(&sdk, &s3, &bucket, "pr-a").await;
    let b = seed_stack(&sdk, &s3, &bucket, "pr-b").await;
    let keep = seed_stack(&sdk, &s3, &bucket, "main").await;
    let (engine, cleanup) = engine_and_cleanup(&sdk).await;

    let out = engine
        .run(
            &cleanup,
            json!({"stateBucket": bucket, "pattern": "pr-*", "minimumAge": "1d", "dryRun": false}),
        )
        .await;
    let Outcome::Succeeded(summary) = out else {
        panic!("cleanup failed: {out:?}")
    };
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

    let out = engine
        .run(
            &cleanup,
            json!({"stateBucket": bucket, "pattern": "pr-*", "minimumAge": "1d", "dryRun": true}),
        )
        .await;
    let Outcome::Succeeded(summary) = out else {
        panic!("cleanup failed: {out:?}")
    };
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

    let out = engine
        .run(
            &cleanup,
            json!({"stateBucket": bucket, "pattern": "pr-*", "minimumAge": "1d"}),
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
