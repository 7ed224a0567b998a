//! End-to-end: `cdkd-flow state refresh-observed` (the binary) on the emulator: the
//! summary lines and exit status (docs/repairs.md, "Output"), `--json`, `--dry-run` writing nothing, and the
//! refusal order of docs/repairs.md, "Order of checks" (usage, pre-check, confirmation, legacy record, lock), each
//! refusal leaving every record as it was.
//!
//! Run: `scripts/with-emulator.sh cargo test --workspace --test e2e -- --test-threads=1 refresh_cli`.

use cdkd_tests as h;
use serde_json::{json, Value};

const REGION: &str = "us-east-1";

fn cli(bucket: &str, args: &[&str]) -> h::CliRun {
    let mut all = vec!["--state-bucket", bucket, "state", "refresh-observed"];
    all.extend_from_slice(args);
    crate::run_cli_env(&all, &[])
}

fn key(stack: &str, file: &str) -> String {
    format!("cdkd/{stack}/{REGION}/{file}")
}

fn record(stack: &str, resources: Value) -> Value {
    json!({"version": 10, "stackName": stack, "region": REGION, "resources": resources,
           "outputs": {}, "skippedOutputs": ["X"], "lastModified": 1})
}

async fn put(bucket: &str, key: &str, v: &Value) -> String {
    h::put_raw(&h::s3().await, bucket, key, v.to_string()).await
}

async fn get(bucket: &str, key: &str) -> (Value, String) {
    let (b, etag) = h::get_raw(&h::s3().await, bucket, key)
        .await
        .expect("record");
    (serde_json::from_slice(&b).expect("JSON"), etag)
}

async fn keys(bucket: &str) -> Vec<String> {
    h::list_all_keys(&h::s3().await, bucket).await
}

/// A real queue on the emulator; returns its URL.
async fn queue() -> String {
    let c = cdkd_tests::deleters::cfg(REGION).await;
    aws_sdk_sqs::Client::new(&c)
        .create_queue()
        .queue_name(cdkd_tests::deleters::unique("cliq"))
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap()
}

/// Stack `App`: a real queue, the CDK metadata, a resource whose baseline an import
/// refused. Returns the bucket and the record's ETag.
async fn app() -> (String, String) {
    let bucket = h::fresh_bucket(&h::s3().await).await;
    let url = queue().await;
    let etag = put(
        &bucket,
        &key("App", "state.json"),
        &record(
            "App",
            json!({
                "Q": {"resourceType": "AWS::SQS::Queue", "physicalId": url, "properties": {}},
                "M": {"resourceType": "AWS::CDK::Metadata", "physicalId": "m"},
                "Imp": {"resourceType": "AWS::SNS::Topic", "physicalId": "arn:aws:sns:us-east-1:1:t",
                        "observedBaselineRefused": true, "observedProperties": {"Old": 1}}
            }),
        ),
    )
    .await;
    (bucket, etag)
}

#[tokio::test]
async fn refresh_cli_rule_6_3_statement_52_summary_lines_saved_baseline_and_exit_0() {
    let (bucket, _) = app().await;
    let r = cli(&bucket, &["App", "-y"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.contains(
            "✓ App (us-east-1): 1 refreshed, 1 unsupported, 0 failed, 1 refused (import baseline refusal)"
        ),
        "{r:?}"
    );
    assert!(
        r.stdout
            .ends_with("\nDone: 1 resource(s) refreshed, 1 unsupported, 0 failed\n"),
        "{r:?}"
    );
    assert!(
        r.stderr.contains("1 resource(s) were not refreshed"),
        "{r:?}"
    );
    let (saved, _) = get(&bucket, &key("App", "state.json")).await;
    assert!(saved["resources"]["Q"]["observedProperties"]["QueueName"].is_string());
    assert_eq!(
        saved["resources"]["Imp"]["observedProperties"],
        json!({"Old": 1})
    );
    assert!(saved.get("skippedOutputs").is_none());
    assert_eq!(keys(&bucket).await, [key("App", "state.json")], "lock left");
}

#[tokio::test]
async fn refresh_cli_rule_6_3_json_prints_the_summary_object() {
    let (bucket, _) = app().await;
    let r = cli(&bucket, &["App", "-y", "--json"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(&r.stdout).expect("JSON on stdout");
    assert_eq!(
        v["total"],
        json!({"refreshed": 1, "unsupported": 1, "failed": 0, "refused": 1, "gone": 0})
    );
    assert_eq!(v["stacks"][0]["stack"], json!("App"));
    assert_eq!(
        v["stacks"][0]["resources"][0]["outcome"],
        json!("refreshed")
    );
    assert_eq!(v["exitCode"], json!(0));
}

#[tokio::test]
async fn refresh_cli_rule_6_3_dry_run_plans_reads_nothing_and_writes_nothing() {
    let (bucket, etag) = app().await;
    let r = cli(&bucket, &["App", "--dry-run"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.contains(
            "Plan App (us-east-1): 1 resource(s) would be refreshed, 1 unsupported, 1 refused (import baseline refusal)"
        ),
        "{r:?}"
    );
    assert!(
        r.stdout.contains(
            "Plan: 1 resource(s) would be refreshed, 1 unsupported, 0 would fail (--dry-run, no state was written)"
        ),
        "{r:?}"
    );
    assert_eq!(get(&bucket, &key("App", "state.json")).await.1, etag);
    assert_eq!(keys(&bucket).await, [key("App", "state.json")]);
}

#[tokio::test]
async fn refresh_cli_rule_6_3_statement_56_a_failed_read_exits_2_and_the_rest_is_saved() {
    let (bucket, _) = app().await;
    let (mut rec, _) = get(&bucket, &key("App", "state.json")).await;
    // The emulator has no Cloud Control: its GetResource fails.
    rec["resources"]["C"] = json!({"resourceType": "AWS::ECS::Cluster", "physicalId": "c"});
    put(&bucket, &key("App", "state.json"), &rec).await;
    let r = cli(&bucket, &["App", "-y"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("  ✗ App/C (AWS::ECS::Cluster): readCurrentState failed — Cloud Control GetResource failed"),
        "{r:?}"
    );
    assert!(
        r.stderr
            .contains("error: Refresh completed with 1 per-resource readCurrentState failure(s)."),
        "{r:?}"
    );
    let (saved, _) = get(&bucket, &key("App", "state.json")).await;
    assert!(saved["resources"]["Q"]["observedProperties"].is_object());
    assert!(saved["resources"]["C"].get("observedProperties").is_none());
}

#[tokio::test]
async fn refresh_cli_rule_6_1_usage_and_all_matching_nothing() {
    let bucket = h::fresh_bucket(&h::s3().await).await;
    let r = cli(&bucket, &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains(
            "Stack name is required. Usage: cdkd-flow state refresh-observed '<stacks...>' | --all"
        ),
        "{r:?}"
    );
    let r = cli(&bucket, &["--all", "-y"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("No stacks found in state"), "{r:?}");
}

#[tokio::test]
async fn refresh_cli_rule_6_1_statement_49_precheck_refuses_the_run_before_any_lock_or_write() {
    let (bucket, etag) = app().await;
    let other = put(
        &bucket,
        &key("Other", "state.json"),
        &json!({"version": 10, "stackName": "Other", "region": REGION, "resources": [
            {"resourceType": "AWS::SQS::Queue", "physicalId": "q", "properties": {}}]}),
    )
    .await;
    let r = cli(&bucket, &["--all", "-y"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .contains("Refusing to refresh stack 'Other' (us-east-1): 'resources' in its state record is an array"),
        "{r:?}"
    );
    assert_eq!(get(&bucket, &key("App", "state.json")).await.1, etag);
    assert_eq!(get(&bucket, &key("Other", "state.json")).await.1, other);
    assert!(keys(&bucket)
        .await
        .iter()
        .all(|k| !k.ends_with("lock.json")));
}

#[tokio::test]
async fn refresh_cli_rule_6_1_without_a_terminal_and_without_yes_nothing_is_done() {
    let (bucket, etag) = app().await;
    let r = cli(&bucket, &["App"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("pass -y / --yes"), "{r:?}");
    assert_eq!(get(&bucket, &key("App", "state.json")).await.1, etag);
}

#[tokio::test]
async fn refresh_cli_rule_6_1_statement_50_legacy_target_refuses_after_the_prompt_before_any_write()
{
    let (bucket, etag) = app().await;
    put(
        &bucket,
        "cdkd/Old/state.json",
        &json!({"version": 1, "stackName": "Old", "resources": {}}),
    )
    .await;
    let r = cli(&bucket, &["App", "Old", "-y"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .contains("Stack 'Old' has only a legacy state record without a region"),
        "{r:?}"
    );
    assert!(r.stderr.contains("Migrate with: cdkd deploy Old"), "{r:?}");
    assert_eq!(get(&bucket, &key("App", "state.json")).await.1, etag);
    assert!(keys(&bucket)
        .await
        .iter()
        .all(|k| !k.ends_with("lock.json")));
}

#[tokio::test]
async fn refresh_cli_rule_6_1_statement_51_a_lock_held_by_another_process_refuses_with_no_write() {
    let (bucket, etag) = app().await;
    let lock = h::cdkd_lock_body(
        "bob@ci:7",
        h::now_ms(),
        h::now_ms() + 600_000,
        Some("deploy"),
    );
    h::put_raw(
        &h::s3().await,
        &bucket,
        &key("App", "lock.json"),
        lock.clone(),
    )
    .await;
    let r = cli(&bucket, &["App", "-y"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .contains("Could not acquire lock for stack App (us-east-1)"),
        "{r:?}"
    );
    assert!(r.stderr.contains("bob@ci:7"), "{r:?}");
    assert_eq!(get(&bucket, &key("App", "state.json")).await.1, etag);
    let held = h::get_text(&h::s3().await, &bucket, &key("App", "lock.json")).await;
    assert_eq!(held.as_deref(), Some(lock.as_str()));
}

/// A resource deleted outside cdkd is reported gone, by logical id,
/// with the `state orphan --resource` command that forgets it; exit 2; its old baseline
/// stays, the rest is saved.
#[tokio::test]
async fn refresh_cli_gone_resource_is_reported_gone_with_the_orphan_command_and_exits_2() {
    let (bucket, _) = app().await;
    let (mut rec, _) = get(&bucket, &key("App", "state.json")).await;
    let gone_url = format!(
        "https://sqs.{REGION}.amazonaws.com/123456789012/{}",
        cdkd_tests::deleters::unique("deleted")
    );
    rec["resources"]["Deleted"] = json!({"resourceType": "AWS::SQS::Queue",
        "physicalId": gone_url, "properties": {}, "observedProperties": {"old": true}});
    put(&bucket, &key("App", "state.json"), &rec).await;
    let r = cli(&bucket, &["App", "-y"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stdout.contains("1 gone (deleted outside cdkd)"), "{r:?}");
    assert!(!r.stdout.contains("2 unsupported"), "{r:?}");
    assert!(
        r.stderr.contains(
            "  ✗ App/Deleted (AWS::SQS::Queue): gone — not found in AWS (deleted outside cdkd); its previous observedProperties were kept; forget it with: cdkd-flow state orphan App --stack-region us-east-1 --resource Deleted"
        ),
        "{r:?}"
    );
    assert!(
        r.stderr.contains("error: 1 resource(s) were not refreshed"),
        "{r:?}"
    );
    let (saved, _) = get(&bucket, &key("App", "state.json")).await;
    assert_eq!(
        saved["resources"]["Deleted"]["observedProperties"],
        json!({"old": true})
    );
    assert!(saved["resources"]["Q"]["observedProperties"].is_object());
    let r = cli(&bucket, &["App", "-y", "--json"]);
    assert_eq!(r.code, 2, "{r:?}");
    let v: Value = serde_json::from_str(&r.stdout).expect("JSON");
    assert_eq!(v["total"]["gone"], json!(1));
    assert_eq!(v["exitCode"], json!(2));
}
