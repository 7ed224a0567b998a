//! End-to-end: a state bucket in another region than the records and the CLI
//! (docs/state-and-lock.md, "Three regions", "Bucket region"). The bucket is created in `eu-west-1`,
//! the records are of `us-east-1`, the CLI's region is `us-east-1`; the emulator answers
//! a request signed for another region than the bucket's with S3's 301
//! (docs/emulator.md, "AWS's limits"), so every state-bucket request of the steps must be
//! signed for `eu-west-1`: an export migrates, a destroy deletes the resources (a custom
//! resource's response URL presigned for the bucket's region included).
//!
//! Run: `scripts/with-emulator.sh cargo test --workspace --test e2e -- --test-threads=1 bucket_region_cli`.

use cdkd_tests as h;
use serde_json::{json, Value};

use crate::export_support::uniq;

const RECORD_REGION: &str = "us-east-1";
const BUCKET_REGION: &str = "eu-west-1";

/// `cdkd-flow --state-bucket <bucket> <args>` with the CLI's region `us-east-1`.
fn cli(bucket: &str, args: &[&str]) -> h::CliRun {
    let mut all = vec!["--state-bucket", bucket];
    all.extend_from_slice(args);
    crate::run_cli_env(&all, &[("AWS_REGION", RECORD_REGION)])
}

fn state_key(stack: &str) -> String {
    format!("cdkd/{stack}/{RECORD_REGION}/state.json")
}

/// A bucket of `eu-west-1` holding `record` as `stack`'s `us-east-1` record; the
/// bucket's name and its region's client.
async fn seeded(stack: &str, record: &Value) -> (String, aws_sdk_s3::Client) {
    let (bucket, s3) = h::fresh_bucket_in(BUCKET_REGION).await;
    h::put_raw(&s3, &bucket, &state_key(stack), record.to_string()).await;
    (bucket, s3)
}

#[tokio::test]
async fn export_from_a_bucket_in_another_region_migrates() {
    let stack = uniq("RegionExport");
    let name = stack.to_lowercase();
    let sdk = h::sdk().await;
    let queue_url = h::fixtures::queue(&sdk, &format!("{name}-work")).await;
    let topic_arn = h::fixtures::topic(&sdk, &format!("{name}-alerts")).await;
    let record = json!({
        "version": 10, "stackName": stack, "region": RECORD_REGION,
        "resources": {
            "WorkQueue": {"resourceType": "AWS::SQS::Queue", "physicalId": queue_url, "properties": {},
                          "attributes": {}, "dependencies": [], "provisionedBy": "sdk"},
            "AlertsTopic": {"resourceType": "AWS::SNS::Topic", "physicalId": topic_arn, "properties": {},
                            "attributes": {}, "dependencies": [], "provisionedBy": "sdk"}
        },
        "outputs": {"QueueUrl": queue_url},
        "lastModified": 1777458225000i64
    });
    let template = json!({
        "Resources": {
            "WorkQueue": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": format!("{name}-work")}},
            "AlertsTopic": {"Type": "AWS::SNS::Topic"}
        },
        "Outputs": {"QueueUrl": {"Value": {"Ref": "WorkQueue"}}}
    });
    let (bucket, s3) = seeded(&stack, &record).await;
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bucket_region_cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{stack}.template.json"));
    std::fs::write(&path, template.to_string()).unwrap();
    let run_id = uniq("export-region");
    let r = cli(
        &bucket,
        &[
            "export",
            &stack,
            "--template",
            &path.to_string_lossy(),
            "--local",
            "--fast",
            "-y",
            "--run-id",
            &run_id,
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    // CloudFormation holds the very resources the record named, with the Output.
    let described = h::cfn::described(&stack).await.expect("the stack exists");
    let outputs = h::cfn::outputs(&described);
    assert_eq!(
        outputs,
        vec![("QueueUrl".to_string(), queue_url.clone())],
        "{outputs:?}"
    );
    // The record and its lock are gone; the report, in the bucket, says migrated.
    assert_eq!(h::get_text(&s3, &bucket, &state_key(&stack)).await, None);
    let lock = format!("cdkd/{stack}/{RECORD_REGION}/lock.json");
    assert_eq!(h::get_text(&s3, &bucket, &lock).await, None);
    let report = h::get_text(&s3, &bucket, &format!("cdkd/_runs/{run_id}/report.json"))
        .await
        .expect("report.json");
    let report: Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["outcome"], "migrated", "{report}");
}

#[tokio::test]
async fn destroy_from_a_bucket_in_another_region_deletes_the_stack() {
    let stack = uniq("RegionDestroy");
    let sdk = h::sdk().await;
    let topic = h::fixtures::topic(&sdk, &format!("{}-topic", stack.to_lowercase())).await;
    // An SNS-backed custom resource: its Delete request's ResponseURL is presigned for
    // the state bucket, where the provider puts its answer and the deleter reads it.
    let (token, inbox) = h::provider::sns_provider(&stack.to_lowercase()).await;
    let record = json!({
        "version": 10, "stackName": stack, "region": RECORD_REGION,
        "resources": {
            "Topic": {"resourceType": "AWS::SNS::Topic", "physicalId": topic, "properties": {},
                      "dependencies": [], "provisionedBy": "sdk"},
            "Thing": {"resourceType": "Custom::Thing", "physicalId": "thing-1",
                      "properties": {"ServiceToken": token, "Size": "3"},
                      "dependencies": ["Topic"], "provisionedBy": "custom"}
        },
        "outputs": {}, "lastModified": 1777458225000i64
    });
    let (bucket, s3) = seeded(&stack, &record).await;
    let provider = tokio::spawn(h::provider::answer_requests(inbox, 1));
    let (b, s) = (bucket.clone(), stack.clone());
    let r =
        tokio::task::spawn_blocking(move || cli(&b, &["destroy", &s, "--local", "--fast", "-y"]))
            .await
            .unwrap();
    assert_eq!(r.code, 0, "{r:?}");
    let asked = provider.await.expect("the provider answered");
    assert_eq!(asked[0]["RequestType"], "Delete", "{asked:?}");
    let url = asked[0]["ResponseURL"].as_str().unwrap_or_default();
    assert!(
        url.contains(&format!("%2F{BUCKET_REGION}%2Fs3%2F")),
        "the response URL is signed for the bucket's region: {url}"
    );
    // The topic is gone, and so is the record.
    assert!(
        !h::fixtures::topic_exists(&sdk, &topic).await,
        "{topic} deleted"
    );
    assert_eq!(h::get_text(&s3, &bucket, &state_key(&stack)).await, None);
}
