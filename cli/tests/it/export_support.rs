//! What the export CLI tests share (export_cli, export_approval_cli): fresh names and a
//! flat stack of real emulator resources with its record and template.

use std::path::PathBuf;

use cdkd_tests as h;
use serde_json::{json, Value};

pub const REGION: &str = "us-east-1";

pub fn uniq(tag: &str) -> String {
    format!("{tag}-{}", &uuid::Uuid::new_v4().simple().to_string()[..10])
}

/// A flat stack of real emulator resources under a fresh name: an SQS queue and an SNS
/// topic, its record in a fresh bucket, its template (with an Output) in a file.
pub struct RealStack {
    pub stack: String,
    pub bucket: String,
    /// The record as written.
    pub record: Value,
    /// The template file's path.
    pub template: String,
    pub queue_url: String,
    pub topic_arn: String,
}

impl RealStack {
    pub fn state_key(&self) -> String {
        format!("cdkd/{}/{REGION}/state.json", self.stack)
    }

    /// `--state-bucket <bucket> export <stack> --template <template> --local --fast
    /// <extra> --run-id <run_id>`: a real local run of this stack.
    pub fn export_args<'a>(&'a self, run_id: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec!["--state-bucket", &self.bucket, "export", &self.stack];
        args.extend(["--template", &self.template, "--local", "--fast"]);
        args.extend_from_slice(extra);
        args.extend(["--run-id", run_id]);
        args
    }
}

/// The stack `uniq(tag)`, its resources, record and template.
pub async fn real_stack(tag: &str) -> RealStack {
    let stack = uniq(tag);
    let name = stack.to_lowercase();
    let sdk = h::sdk().await;
    let queue_url = h::fixtures::queue(&sdk, &format!("{name}-work")).await;
    let topic_arn = h::fixtures::topic(&sdk, &format!("{name}-alerts")).await;
    let record = json!({
        "version": 10, "stackName": stack, "region": REGION,
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
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let key = format!("cdkd/{stack}/{REGION}/state.json");
    h::put_raw(
        &s3,
        &bucket,
        &key,
        serde_json::to_vec_pretty(&record).unwrap(),
    )
    .await;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("export_cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{stack}.template.json"));
    std::fs::write(&path, serde_json::to_vec_pretty(&template).unwrap()).unwrap();
    RealStack {
        stack,
        bucket,
        record,
        template: path.to_string_lossy().into_owned(),
        queue_url,
        topic_arn,
    }
}

/// Waits until `key` exists in `bucket`, looking every 100 ms.
pub async fn wait_for_key(bucket: &str, key: &str, timeout: std::time::Duration) {
    let deadline = std::time::Instant::now() + timeout;
    while h::get_text(&h::s3().await, bucket, key).await.is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "no {key} within {timeout:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// A local export of `s` (without `--fast`, with `extra`) held after its lock: the
/// emulator throttles every `DescribeChangeSet` of the stack until the returned guard is
/// dropped, so the run's first poll keeps retrying (its client's backoff, then the
/// `Poll` state's `Retry`) and the run cannot end on its own while a test signals it.
/// Returns once the run has written its `progress.json` (its lock is held) and its first
/// poll has been refused.
pub async fn export_held_after_its_lock(
    s: &RealStack,
    run_id: &str,
    extra: &[&str],
) -> (crate::follower::Follower, h::faults::FaultGuard) {
    use h::faults::{exact, inject_fault, Fault};
    let hold = inject_fault(&Fault::cfn(
        "DescribeChangeSet",
        &[("StackName", &exact(&s.stack))],
        "Throttling",
        "Rate exceeded",
    ));
    let mut args: Vec<&str> = s
        .export_args(run_id, &["-y"])
        .into_iter()
        .filter(|a| *a != "--fast")
        .collect();
    args.extend_from_slice(extra);
    let mut f = crate::follower::Follower::start(&args, &[]);
    f.wait_for("migrating (run", std::time::Duration::from_secs(120));
    wait_for_key(
        &s.bucket,
        &format!("cdkd/_runs/{run_id}/progress.json"),
        std::time::Duration::from_secs(60),
    )
    .await;
    // Held for certain: its poll has been refused at least once.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while hold.state().map_or(0, |v| v["hits"].as_u64().unwrap_or(0)) == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the run of {} never polled its change set",
            s.stack
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    (f, hold)
}
