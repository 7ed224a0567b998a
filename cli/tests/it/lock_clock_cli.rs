//! End-to-end, the binary on the emulator: lock time is S3's (docs/state-and-lock.md, "Lock time is S3's",
//! "Checks" statements 47 and 48). A CLI whose clock runs 2 hours ahead (the test hook
//! `CDKD_FLOW_CLOCK_SKEW_MS`) does not take over or delete a lock taken a second ago, and
//! a lock written by a cdkd whose clock runs 2 hours behind is not taken over by a CLI
//! whose clock is right. The emulator's clock is the machine's.
//!
//! Run: `scripts/with-emulator.sh cargo test -p cdkd-flow --test e2e -- --test-threads=1 lock_clock_cli`.

use cdkd_tests as h;
use serde_json::json;

const REGION: &str = "us-east-1";
const TWO_HOURS: i64 = 7_200_000;
const HOLDER: &str = "someone@otherhost:1234";

fn key(stack: &str, file: &str) -> String {
    format!("cdkd/{stack}/{REGION}/{file}")
}

/// `cdkd-flow --state-bucket <bucket> <args>` on a clock `skew_ms` off.
fn cli(bucket: &str, skew_ms: i64, args: &[&str]) -> h::CliRun {
    let mut all = vec!["--state-bucket", bucket];
    all.extend_from_slice(args);
    let skew = skew_ms.to_string();
    crate::run_cli_env(&all, &[("CDKD_FLOW_CLOCK_SKEW_MS", &skew)])
}

/// A bucket with the record of `stack` over a real SNS topic; returns the bucket and the
/// topic.
async fn stack_with_a_topic(stack: &str) -> (String, String) {
    let sdk = h::sdk().await;
    let topic = aws_sdk_sns::Client::new(&sdk)
        .create_topic()
        .name(format!(
            "clock-{}",
            &uuid::Uuid::new_v4().simple().to_string()[..10]
        ))
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    let record = json!({"version": 10, "stackName": stack, "region": REGION,
        "resources": {"Topic": {"physicalId": topic, "resourceType": "AWS::SNS::Topic",
                                "properties": {}, "dependencies": [], "provisionedBy": "sdk"}},
        "outputs": {}, "lastModified": 1_777_458_225_000i64});
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    h::put_raw(&s3, &bucket, &key(stack, "state.json"), record.to_string()).await;
    (bucket, topic)
}

/// Writes `HOLDER`'s deploy lock of `stack` as a cdkd whose clock is `writer_off` off
/// would (taken now, cdkd's 30-minute TTL); returns its ETag.
async fn cdkd_lock(bucket: &str, stack: &str, writer_off: i64) -> String {
    let t = h::now_ms() + writer_off;
    h::put_raw(
        &h::s3().await,
        bucket,
        &key(stack, "lock.json"),
        h::cdkd_lock_body(HOLDER, t, t + 1_800_000, Some("deploy")),
    )
    .await
}

/// The lock of `stack` and its record are as they were, and the topic is alive.
async fn untouched(bucket: &str, stack: &str, lock_etag: &str, topic: &str, when: &str) {
    let s3 = h::s3().await;
    assert_eq!(
        h::get_raw(&s3, bucket, &key(stack, "lock.json"))
            .await
            .map(|(_, e)| e)
            .as_deref(),
        Some(lock_etag),
        "{when}: the holder's lock is untouched"
    );
    assert!(
        h::get_raw(&s3, bucket, &key(stack, "state.json"))
            .await
            .is_some(),
        "{when}: the record is kept"
    );
    assert!(
        h::fixtures::topic_exists(&h::sdk().await, topic).await,
        "{when}: nothing was deleted"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn lock_clock_cli_two_hours_ahead_refuses_a_lock_taken_a_second_ago() {
    let stack = "ClockAhead";
    let (bucket, topic) = stack_with_a_topic(stack).await;
    let etag = cdkd_lock(&bucket, stack, 0).await;

    let r = cli(
        &bucket,
        TWO_HOURS,
        &["destroy", stack, "--local", "--fast", "-y"],
    );
    assert_eq!(r.code, 1, "{r:?}");
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(
        all.contains(&format!("held by {HOLDER}, operation: deploy, since ")),
        "{r:?}"
    );
    // Taken a second ago: 30 minutes left, to a second (docs/state-and-lock.md, "Lock time is S3's").
    assert!(
        all.contains(", expires in 29m") || all.contains(", expires in 30m0s"),
        "{r:?}"
    );
    assert!(!all.contains("EXPIRED"), "{r:?}");
    // The clock difference is said once.
    assert_eq!(
        r.stderr.matches("This machine's clock is ").count(),
        1,
        "{r:?}"
    );
    assert!(
        r.stderr.contains("This machine's clock is 120m") && r.stderr.contains("ahead of S3's"),
        "{r:?}"
    );
    untouched(&bucket, stack, &etag, &topic, "destroy -y").await;

    let r = cli(
        &bucket,
        TWO_HOURS,
        &[
            "force-unlock",
            stack,
            "--stack-region",
            REGION,
            "--if-expired",
        ],
    );
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .contains("it has not expired, so it was left in place (--if-expired)"),
        "{r:?}"
    );
    untouched(&bucket, stack, &etag, &topic, "force-unlock --if-expired").await;

    let r = cli(&bucket, TWO_HOURS, &["state", "orphan", stack, "-y"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains(&format!(
            "Could not acquire lock for stack {stack} (us-east-1) — held by {HOLDER}"
        )),
        "{r:?}"
    );
    untouched(&bucket, stack, &etag, &topic, "state orphan").await;

    // `state show` counts the time left on S3's clock too.
    let r = cli(&bucket, TWO_HOURS, &["state", "show", stack]);
    assert_eq!(r.code, 0, "{r:?}");
    let row = format!("  Lock: locked by {HOLDER} (operation: deploy), expires in ");
    assert!(
        r.stdout.contains(&format!("{row}29m")) || r.stdout.contains(&format!("{row}30m0s")),
        "{r:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn lock_clock_cli_two_hours_ahead_refuses_a_skewed_cdkd_writers_lock() {
    // The lock of a cdkd whose own clock is 2 hours behind or ahead, taken a second ago.
    for (i, writer_off) in [-TWO_HOURS, TWO_HOURS].into_iter().enumerate() {
        let stack = format!("ClockWriter{i}");
        let (bucket, topic) = stack_with_a_topic(&stack).await;
        let etag = cdkd_lock(&bucket, &stack, writer_off).await;
        let r = cli(
            &bucket,
            TWO_HOURS,
            &["destroy", &stack, "--local", "--fast", "-y"],
        );
        assert_eq!(r.code, 1, "{writer_off}: {r:?}");
        untouched(&bucket, &stack, &etag, &topic, "destroy -y").await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn lock_clock_cli_writer_two_hours_behind_is_not_taken_over_by_a_right_clock() {
    // A cdkd 2 hours behind wrote its lock a second ago: its expiresAt is 90 minutes
    // past on a right clock, yet the lock is live.
    let stack = "ClockBehind";
    let (bucket, topic) = stack_with_a_topic(stack).await;
    let etag = cdkd_lock(&bucket, stack, -TWO_HOURS).await;

    let r = cli(&bucket, 0, &["destroy", stack, "--local", "--fast", "-y"]);
    assert_eq!(r.code, 1, "{r:?}");
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(all.contains(&format!("held by {HOLDER}")), "{r:?}");
    assert!(!all.contains("EXPIRED"), "{r:?}");
    assert!(!r.stderr.contains("This machine's clock"), "{r:?}");
    untouched(&bucket, stack, &etag, &topic, "destroy -y").await;

    let r = cli(
        &bucket,
        0,
        &[
            "force-unlock",
            stack,
            "--stack-region",
            REGION,
            "--if-expired",
        ],
    );
    assert_eq!(r.code, 1, "{r:?}");
    untouched(&bucket, stack, &etag, &topic, "force-unlock --if-expired").await;
}
