//! The scheduled cleanup as EventBridge Scheduler starts it: the cleanup state machine
//! started with the schedule's input (infra/template.yaml, `CleanupSchedule`), which
//! selects the matching records and destroys each through a `Map` of destroy executions
//! (`states:startExecution.sync:2`), then tells its digest.

use std::time::Duration;

use super::destroy::seeded_destroy;
use super::{backend, inbox, lambda_steps, status, uniq, wait_until};
use cdkd_tests as h;
use serde_json::json;

#[tokio::test]
async fn deployed_cleanup_started_as_the_schedule_does_destroys_each_selected_stack_in_a_destroy_execution(
) {
    let b = backend();
    inbox::open().await;
    let tag = uniq("preview").to_lowercase();
    let (one, two) = (format!("{tag}-a"), format!("{tag}-b"));
    let a = seeded_destroy(&b.bucket, &one).await;
    let c = seeded_destroy(&b.bucket, &two).await;
    // The schedule's Input, as the template writes it, with this test's pattern.
    let input = json!({"stateBucket": b.bucket, "statePrefix": "cdkd",
        "pattern": format!("{tag}-*"), "minimumAge": "7d", "regions": "", "dryRun": false});
    let (sfn, arn) = start_cleanup(&b, &input).await;
    wait_until("the cleanup ends", Duration::from_secs(300), || {
        let arn = arn.clone();
        async move { status(&arn).await != "RUNNING" }
    })
    .await;
    assert_eq!(status(&arn).await, "SUCCEEDED");

    let sdk = h::sdk().await;
    for (topic, queue, _) in [&a, &c] {
        assert!(!h::fixtures::topic_exists(&sdk, topic).await);
        assert!(!h::fixtures::queue_exists(&sdk, queue).await);
    }
    // Each stack had a destroy execution of its own, which ran the destroy steps.
    let destroy_machine = b.outputs().await.remove("DestroyStateMachineArn").unwrap();
    let runs = sfn
        .list_executions()
        .state_machine_arn(&destroy_machine)
        .send()
        .await
        .unwrap();
    let mut children = 0;
    for e in runs.executions() {
        let d = sfn
            .describe_execution()
            .execution_arn(e.execution_arn())
            .send()
            .await
            .unwrap();
        let input = d.input().unwrap_or_default();
        if input.contains(&one) || input.contains(&two) {
            children += 1;
            assert_eq!(e.status().as_str(), "SUCCEEDED", "{input}");
            let steps = lambda_steps(e.execution_arn()).await;
            assert!(
                steps.iter().any(|s| s.contains("DestroyWaveFunction")),
                "{steps:?}"
            );
        }
    }
    assert_eq!(children, 2, "one destroy execution per selected stack");
    let run_id = arn.rsplit(':').next().unwrap().to_string();
    let (text, detail) = inbox::expect("cleanup-finished", &run_id).await;
    assert_eq!(detail["outcome"], "finished", "{detail:#}\n{text}");
}

/// Step Functions' 256 KiB payload quota, enforced by the emulator's interpreter: a dry
/// run over 5,000 records keeps its lists in the run folder (docs/runs.md, "A cleanup's lists") and
/// passes only counts, so it succeeds and tells its digest.
#[tokio::test]
async fn deployed_cleanup_dry_run_over_5000_records_stays_within_the_payload_limit() {
    let b = backend();
    inbox::open().await;
    let tag = uniq("scale").to_lowercase();
    let s3 = h::s3().await;
    let names: Vec<String> = (0..5000)
        .map(|i| {
            if i < 50 {
                format!("{tag}-pr-{i:05}")
            } else {
                format!("{tag}-feature-branch-environment-{i:05}")
            }
        })
        .collect();
    seed_empty_records(&s3, &b.bucket, names, 32).await;
    let input = json!({"stateBucket": b.bucket, "statePrefix": "cdkd",
        "pattern": format!("{tag}-pr-*"), "minimumAge": "7d", "regions": "", "dryRun": true});
    let (sfn, arn) = start_cleanup(&b, &input).await;
    wait_until("the dry run ends", Duration::from_secs(300), || {
        let arn = arn.clone();
        async move { status(&arn).await != "RUNNING" }
    })
    .await;
    let d = sfn
        .describe_execution()
        .execution_arn(&arn)
        .send()
        .await
        .unwrap();
    assert_eq!(d.status().as_str(), "SUCCEEDED", "{d:?}");
    let out: serde_json::Value = serde_json::from_str(d.output().unwrap_or("null")).unwrap();
    assert_eq!(out["selectedCount"], json!(50), "{out:#}");
    assert!(out["skippedCount"].as_u64().unwrap() >= 4950, "{out:#}");
    let run_id = arn.rsplit(':').next().unwrap().to_string();
    let selection = h::get_text(
        &s3,
        &b.bucket,
        &format!("cdkd/_runs/{run_id}/selection.json"),
    )
    .await
    .expect("selection.json in the run folder");
    assert!(selection.len() > 256 * 1024, "{} bytes", selection.len());
    let (_, detail) = inbox::expect("cleanup-finished", &run_id).await;
    assert_eq!(detail["outcome"], "dry-run", "{detail:#}");
    assert_eq!(detail["cleanup"]["destroyedCount"], json!(50), "{detail:#}");
}

/// The other half of the payload limit (docs/runs.md, "A cleanup's lists"): a
/// cleanup destroying 300 stacks through the deployed interpreter (a `Map` of destroy
/// executions, 40 a batch, 4 at once) keeps every state's input and output small, records
/// each result in `results.json` and destroys every stack. The records are empty (no
/// resources: each destroy is its plan, one wave and its finish), their names 77
/// characters long, as CI preview stacks carry a branch's name. About two minutes on the
/// emulator (docs/testing.md, "The deployed group").
#[tokio::test]
async fn deployed_cleanup_destroying_300_stacks_stays_within_the_payload_limit() {
    const BRANCH: &str = "feature-checkout-redesign-with-the-new-payment-provider";
    let b = backend();
    inbox::open().await;
    let tag = uniq("many").to_lowercase();
    let s3 = h::s3().await;
    let names: Vec<String> = (0..300).map(|i| format!("{tag}-{i:05}-{BRANCH}")).collect();
    seed_empty_records(&s3, &b.bucket, names.clone(), 16).await;
    let input = json!({"stateBucket": b.bucket, "statePrefix": "cdkd",
        "pattern": format!("{tag}-*"), "minimumAge": "7d", "regions": "", "dryRun": false});
    let (sfn, arn) = start_cleanup(&b, &input).await;
    let started = std::time::Instant::now();
    wait_until(
        "the cleanup of 300 stacks ends",
        Duration::from_secs(600),
        || {
            let arn = arn.clone();
            async move { status(&arn).await != "RUNNING" }
        },
    )
    .await;
    let took = started.elapsed();
    let d = sfn
        .describe_execution()
        .execution_arn(&arn)
        .send()
        .await
        .unwrap();
    assert_eq!(d.status().as_str(), "SUCCEEDED", "{d:?}");
    let out: serde_json::Value = serde_json::from_str(d.output().unwrap_or("null")).unwrap();
    for (count, n) in [
        ("selectedCount", 300),
        ("succeededCount", 300),
        ("failedCount", 0),
        ("skippedCount", 0),
    ] {
        assert_eq!(out[count], json!(n), "{count}: {out:#}");
    }
    // Every state's input and output, as the interpreter recorded them, far under the
    // 256 KiB quota the emulator enforces (docs/emulator.md, "Step Functions payloads").
    let (events, largest) = largest_state_payload(&arn).await;
    eprintln!(
        "the cleanup of 300 stacks took {took:?}; {} history events; largest state payload {largest} bytes",
        events.len()
    );
    assert!(largest < 128 * 1024, "a state payload of {largest} bytes");

    let run_id = arn.rsplit(':').next().unwrap().to_string();
    let results: serde_json::Value = serde_json::from_str(
        &h::get_text(&s3, &b.bucket, &format!("cdkd/_runs/{run_id}/results.json"))
            .await
            .expect("results.json in the run folder"),
    )
    .unwrap();
    let results = results["results"].as_array().unwrap();
    let mut recorded: Vec<&str> = results
        .iter()
        .filter(|r| r["status"] == "SUCCEEDED" && r["executionArn"].is_string())
        .map(|r| r["stack"].as_str().unwrap())
        .collect();
    recorded.sort_unstable();
    recorded.dedup();
    assert_eq!(recorded.len(), 300, "each stack recorded once, destroyed");
    let left: Vec<String> = h::list_all_keys(&s3, &b.bucket)
        .await
        .into_iter()
        .filter(|k| k.starts_with(&format!("cdkd/{tag}-")) && k.ends_with("/state.json"))
        .collect();
    assert!(left.is_empty(), "records left: {left:?}");
    let (_, detail) = inbox::expect("cleanup-finished", &run_id).await;
    assert_eq!(detail["outcome"], "finished", "{detail:#}");
}

/// The execution's history length and the largest state input or output it recorded, in
/// bytes.
/// Starts the cleanup state machine with `input` as the schedule does; the client and
/// the execution's ARN.
async fn start_cleanup(
    b: &super::Backend,
    input: &serde_json::Value,
) -> (aws_sdk_sfn::Client, String) {
    let machine = b.outputs().await.remove("CleanupStateMachineArn").unwrap();
    let sfn = aws_sdk_sfn::Client::new(&h::sdk().await);
    let arn = sfn
        .start_execution()
        .state_machine_arn(&machine)
        .input(input.to_string())
        .send()
        .await
        .unwrap()
        .execution_arn;
    (sfn, arn)
}

/// Writes an empty record (no resources, last modified long ago) for each of `names`,
/// `concurrency` at a time.
async fn seed_empty_records(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    names: Vec<String>,
    concurrency: usize,
) {
    use futures::stream::{self, StreamExt};
    stream::iter(names)
        .map(|stack| async move {
            let body = json!({"version": 10, "stackName": stack, "region": "us-east-1",
                "resources": {}, "outputs": {}, "lastModified": 1});
            let key = format!("cdkd/{stack}/us-east-1/state.json");
            h::put_raw(s3, bucket, &key, body.to_string()).await;
        })
        .buffer_unordered(concurrency)
        .collect::<Vec<_>>()
        .await;
}

async fn largest_state_payload(arn: &str) -> (Vec<aws_sdk_sfn::types::HistoryEvent>, usize) {
    let events = super::history(arn).await;
    let largest = events
        .iter()
        .filter_map(|e| {
            let entered = e.state_entered_event_details().and_then(|x| x.input());
            let exited = e.state_exited_event_details().and_then(|x| x.output());
            entered.into_iter().chain(exited).map(str::len).max()
        })
        .max()
        .unwrap_or(0);
    (events, largest)
}
