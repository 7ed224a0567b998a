//! End-to-end: `cdkd-flow destroy` (the binary) against the local emulator: real SQS
//! queues, SNS topics and S3 buckets recorded in cdkd-format state records; the dry run,
//! the confirmation rule, several stacks on one command line, the settled lines and the
//! exit status.
//!
//! Run: `scripts/with-emulator.sh cargo test --workspace --test destroy_cli`.

use cdkd_tests as h;
use serde_json::{json, Map, Value};

fn uniq(tag: &str) -> String {
    format!("{tag}-{}", &uuid::Uuid::new_v4().simple().to_string()[..10])
}

/// `cdkd-flow --state-bucket <bucket> <args>`, stdin not a terminal (closed).
fn cli(bucket: &str, args: &[&str]) -> h::CliRun {
    let mut all = vec!["--state-bucket", bucket];
    all.extend_from_slice(args);
    crate::run_cli_env(&all, &[])
}

struct Seeded {
    topic: String,
    queue: String,
}

/// A topic and a queue that depends on it (so the queue is deleted first).
async fn topic_and_queue() -> (Seeded, Map<String, Value>) {
    let sdk = h::sdk().await;
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
    let resources = json!({
        "Topic": {"physicalId": topic, "resourceType": "AWS::SNS::Topic", "properties": {}, "dependencies": [], "provisionedBy": "sdk"},
        "Queue": {"physicalId": queue, "resourceType": "AWS::SQS::Queue", "properties": {}, "dependencies": ["Topic"], "provisionedBy": "sdk"},
        "CDKMetadata": {"physicalId": "meta", "resourceType": "AWS::CDK::Metadata", "properties": {}, "dependencies": []}
    });
    (
        Seeded { topic, queue },
        resources.as_object().cloned().unwrap(),
    )
}

fn record(stack: &str, resources: Map<String, Value>, extra: Value) -> String {
    let mut body = json!({
        "version": 10, "stackName": stack, "region": "us-east-1",
        "resources": resources, "outputs": {}, "lastModified": 1777458225000i64
    });
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            b.insert(k.clone(), v.clone());
        }
    }
    serde_json::to_string_pretty(&body).unwrap()
}

async fn put_record(bucket: &str, stack: &str, body: &str) {
    let s3 = h::s3().await;
    h::put_raw(
        &s3,
        bucket,
        &format!("cdkd/{stack}/us-east-1/state.json"),
        body.as_bytes(),
    )
    .await;
}

async fn topic_exists(arn: &str) -> bool {
    h::fixtures::topic_exists(&h::sdk().await, arn).await
}

async fn queue_exists(url: &str) -> bool {
    h::fixtures::queue_exists(&h::sdk().await, url).await
}

async fn keys(bucket: &str) -> Vec<String> {
    h::list_all_keys(&h::s3().await, bucket).await
}

fn pos(haystack: &str, needle: &str) -> usize {
    haystack
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in:\n{haystack}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn destroy_dry_run_prints_the_order_and_changes_nothing() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let stack = uniq("Dry");
    let (seeded, resources) = topic_and_queue().await;
    put_record(&bucket, &stack, &record(&stack, resources, json!({}))).await;
    let before = keys(&bucket).await;

    // No --local needed: a dry run only reads.
    let r = cli(&bucket, &["destroy", &stack, "--dry-run"]);
    assert_eq!(r.code, 0, "{r:?}");
    // Dependents first: the queue (wave 1) before the topic (wave 2).
    assert!(
        pos(&r.stdout, "wave 1  Queue") < pos(&r.stdout, "wave 2  Topic"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("CDKMetadata"), "{}", r.stdout);
    assert!(r.stdout.contains("Dry run: nothing was deleted."));
    assert!(topic_exists(&seeded.topic).await);
    assert!(queue_exists(&seeded.queue).await);
    assert_eq!(
        keys(&bucket).await,
        before,
        "no lock, no run record, no write"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn destroy_without_yes_and_stdin_not_a_terminal_refuses_and_deletes_nothing() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let stack = uniq("Ask");
    let (seeded, resources) = topic_and_queue().await;
    put_record(&bucket, &stack, &record(&stack, resources, json!({}))).await;
    let before = keys(&bucket).await;

    let r = cli(&bucket, &["destroy", &stack, "--local", "--fast"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("pass -y (--yes)"), "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "one line: {}", r.stderr);
    assert!(topic_exists(&seeded.topic).await);
    assert!(queue_exists(&seeded.queue).await);
    assert_eq!(keys(&bucket).await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn destroy_yes_destroys_two_stacks_with_a_settled_line_per_resource_exit_0() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let a = uniq("One");
    let b = uniq("Two");
    let (sa, ra) = topic_and_queue().await;
    let (sb, rb) = topic_and_queue().await;
    put_record(&bucket, &a, &record(&a, ra, json!({}))).await;
    put_record(&bucket, &b, &record(&b, rb, json!({}))).await;

    let r = cli(&bucket, &["destroy", &a, &b, "--local", "--fast", "-y"]);
    assert_eq!(r.code, 0, "{r:?}");
    for s in [&a, &b] {
        for (id, ty) in [
            ("Queue", "AWS::SQS::Queue"),
            ("Topic", "AWS::SNS::Topic"),
            ("CDKMetadata", "AWS::CDK::Metadata"),
        ] {
            let line = format!("{s}: {id} ({ty}) deleted");
            assert_eq!(
                r.stderr.matches(&line).count(),
                1,
                "one settled line {line:?}:\n{}",
                r.stderr
            );
        }
        // The stack's line comes after its resources' lines.
        assert!(
            pos(&r.stderr, &format!("{s}: Queue"))
                < r.stderr.rfind(&format!("{s} (us-east-1) [##")).unwrap_or(0),
            "{}",
            r.stderr
        );
        assert!(
            r.stdout.contains(&format!("Destroyed {s} (us-east-1)")),
            "{}",
            r.stdout
        );
    }
    for s in [&sa, &sb] {
        assert!(!topic_exists(&s.topic).await, "topic left");
        assert!(!queue_exists(&s.queue).await, "queue left");
    }
    let left = keys(&bucket).await;
    assert!(
        !left
            .iter()
            .any(|k| k.ends_with("state.json") || k.ends_with("lock.json")),
        "{left:?}"
    );
    // Each stack had its own run.
    let reports = left.iter().filter(|k| k.ends_with("/report.json")).count();
    assert_eq!(reports, 2, "{left:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn destroy_several_stacks_consumer_before_producer_and_json_array() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let producer = uniq("Prod");
    let consumer = uniq("Cons");
    let (_, rp) = topic_and_queue().await;
    let (_, rc) = topic_and_queue().await;
    put_record(
        &bucket,
        &producer,
        &record(&producer, rp, json!({"outputs": {"TopicArn": "arn:x"}})),
    )
    .await;
    put_record(
        &bucket,
        &consumer,
        &record(
            &consumer,
            rc,
            json!({"imports": [{"sourceStack": producer, "sourceRegion": "us-east-1", "exportName": "TopicArn"}]}),
        ),
    )
    .await;

    // The producer alone is refused: its export is still imported.
    let r = cli(&bucket, &["destroy", &producer, "--dry-run"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("still imported by"), "{}", r.stdout);

    // Both, producer named first: the consumer goes first, then the producer.
    let r = cli(&bucket, &["destroy", &producer, &consumer, "--dry-run"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        pos(&r.stdout, &format!("1. {consumer}")) < pos(&r.stdout, &format!("2. {producer}")),
        "{}",
        r.stdout
    );
    let r = cli(
        &bucket,
        &[
            "destroy", &producer, &consumer, "--local", "--fast", "--yes", "--json",
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(&r.stdout).expect("stdout is only the JSON");
    let stacks: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["stack"].as_str().unwrap())
        .collect();
    assert_eq!(stacks, [consumer.as_str(), producer.as_str()]);
    assert!(v.as_array().unwrap().iter().all(|x| x["complete"] == true));
}

#[tokio::test(flavor = "multi_thread")]
async fn destroy_partial_run_exits_1_and_prints_failed_and_blocked_lines() {
    let sdk = h::sdk().await;
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let stack = uniq("Part");
    // A non-empty bucket cannot be deleted; the topic that must follow it stays.
    let full = h::unique_bucket_name("full");
    s3.create_bucket().bucket(&full).send().await.unwrap();
    h::put_raw(&s3, &full, "object.txt", b"data".to_vec()).await;
    let (seeded, mut resources) = topic_and_queue().await;
    resources.insert(
        "Bucket".into(),
        json!({"physicalId": full, "resourceType": "AWS::S3::Bucket", "properties": {}, "dependencies": ["Topic"], "provisionedBy": "sdk"}),
    );
    put_record(&bucket, &stack, &record(&stack, resources, json!({}))).await;

    let r = cli(&bucket, &["destroy", &stack, "--local", "--fast", "-y"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .contains(&format!("{stack}: Bucket (AWS::S3::Bucket) failed: ")),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains(&format!(
            "{stack}: Topic (AWS::SNS::Topic) blocked by Bucket"
        )),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains(&format!("{stack}: Queue (AWS::SQS::Queue) deleted")),
        "{}",
        r.stderr
    );
    assert!(r.stdout.contains("Partly destroyed"), "{}", r.stdout);
    assert!(topic_exists(&seeded.topic).await, "blocked topic kept");
    assert!(!queue_exists(&seeded.queue).await);
    let _ = sdk;
    assert!(
        h::get_text(&s3, &bucket, &format!("cdkd/{stack}/us-east-1/state.json"))
            .await
            .is_some()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn destroy_refusals_exit_1_and_delete_nothing_nested_child_and_held_lock() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let parent = uniq("Par");
    let child = format!("{parent}~Net");
    let (sc, rc) = topic_and_queue().await;
    let mut rp = Map::new();
    rp.insert(
        "Net".into(),
        json!({"physicalId": "arn:aws:cloudformation:us-east-1:123456789012:stack/x/y", "resourceType": "AWS::CloudFormation::Stack", "properties": {}}),
    );
    put_record(&bucket, &parent, &record(&parent, rp, json!({}))).await;
    put_record(
        &bucket,
        &child,
        &record(
            &child,
            rc,
            json!({"parentStack": parent, "parentLogicalId": "Net"}),
        ),
    )
    .await;
    let before = keys(&bucket).await;

    // The child alone: refused in the dry run and in a real run.
    let r = cli(&bucket, &["destroy", &child, "--dry-run"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("it is a nested stack of"), "{}", r.stdout);
    // The refusal's failure line on stderr begins with `error:`.
    assert!(
        r.stderr
            .contains("error: 1 of 1 destroy refused; nothing was deleted"),
        "{r:?}"
    );
    let r = cli(&bucket, &["destroy", &child, "--local", "--fast", "-y"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("nothing was deleted"), "{}", r.stderr);

    // The parent plans its child first.
    let r = cli(&bucket, &["destroy", &parent, "--dry-run"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        pos(&r.stdout, &format!("  {child} (us-east-1)"))
            < pos(&r.stdout, &format!("  {parent} (us-east-1)")),
        "{}",
        r.stdout
    );

    // A lock held by another process on the child refuses the parent's destroy.
    let now = h::now_ms();
    h::put_raw(
        &s3,
        &bucket,
        &format!("cdkd/{child}/us-east-1/lock.json"),
        h::cdkd_lock_body("someone@host", now, now + 600_000, Some("deploy")).into_bytes(),
    )
    .await;
    let r = cli(&bucket, &["destroy", &parent, "--dry-run"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("held by someone@host"), "{}", r.stdout);
    let r = cli(&bucket, &["destroy", &parent, "--local", "--fast", "-y"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(topic_exists(&sc.topic).await);
    assert!(queue_exists(&sc.queue).await);
    let mut after = keys(&bucket).await;
    after.retain(|k| !k.ends_with("lock.json"));
    assert_eq!(after, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn destroy_usage_errors_exit_2() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let r = cli(&bucket, &["destroy"]);
    assert_eq!(r.code, 2, "{r:?}");
    let r = cli(&bucket, &["destroy", "A", "B", "--local", "--run-id", "x"]);
    assert_eq!(r.code, 2, "{r:?}");
    // Without --local the deployed state machine would be started, but the stack is
    // planned from its record first: no record, refused by name, nothing started.
    let r = cli(&bucket, &["destroy", "A"]);
    assert_eq!(r.code, 1, "without --local: {r:?}");
    assert!(r.stderr.contains("No state found for stack 'A'"), "{r:?}");
}

/// Runs the binary on a pseudo-terminal (util-linux `script`), typing `answer`: stdin,
/// stdout and stderr are a terminal, as for a person. Output is both streams, merged.
fn cli_on_terminal(bucket: &str, args: &[&str], answer: &str) -> h::CliRun {
    use std::io::Write;
    h::endpoint();
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    // A terminal of a real size (script's own pseudo-terminal has none).
    let mut cmd = vec![
        "stty cols 120 rows 40; exec".to_string(),
        quote(&crate::cli_binary().to_string_lossy()),
        "--state-bucket".into(),
        quote(bucket),
    ];
    cmd.extend(args.iter().map(|a| quote(a)));
    let mut child = std::process::Command::new("script")
        .args(["-qec", &cmd.join(" "), "/dev/null"])
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("util-linux script runs");
    let mut stdin = child.stdin.take().unwrap();
    // Typed once the question is up (the prompt reads one line).
    std::thread::sleep(std::time::Duration::from_millis(1500));
    stdin.write_all(answer.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    h::CliRun {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).replace('\r', ""),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn destroy_on_a_terminal_lists_what_it_deletes_and_needs_yes() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let stack = uniq("Term");
    let (seeded, resources) = topic_and_queue().await;
    put_record(&bucket, &stack, &record(&stack, resources, json!({}))).await;

    // Anything but yes: nothing deleted, exit 1.
    let r = cli_on_terminal(&bucket, &["destroy", &stack, "--local", "--fast"], "no\n");
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stdout.contains("This destroys 1 stack (3 resources)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&seeded.queue),
        "the resources are listed: {}",
        r.stdout
    );
    assert!(r.stdout.contains("Type 'yes' to go on"), "{}", r.stdout);
    assert!(r.stdout.contains("nothing was deleted"), "{}", r.stdout);
    assert!(topic_exists(&seeded.topic).await);
    assert!(queue_exists(&seeded.queue).await);

    // yes: destroyed, exit 0.
    let r = cli_on_terminal(&bucket, &["destroy", &stack, "--local", "--fast"], "yes\n");
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!topic_exists(&seeded.topic).await);
    assert!(!queue_exists(&seeded.queue).await);
    // A live bar for the stack (drawn by indicatif) and a line per resource.
    assert!(
        r.stdout.contains(&format!("{stack} (us-east-1) [###"))
            && r.stdout.contains("] 3/3 destroyed"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains(&format!("{stack}: Queue (AWS::SQS::Queue) deleted")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&format!("Destroyed {stack} (us-east-1)")),
        "{}",
        r.stdout
    );
}

/// The confirmation declined with stdin (and stderr) on a terminal, stdout a pipe
/// (cli/tests/it/pty.rs): the question is asked, nothing is deleted, the record is byte
/// for byte as it was, no lock and no run are left, and the command exits 1 (docs/cli.md:
/// "1 ... or the confirmation declined"; export's decline exits 0, statement 72).
#[tokio::test(flavor = "multi_thread")]
async fn destroy_declined_on_a_terminal_deletes_nothing_takes_no_lock_and_exits_1() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let stack = uniq("Decline");
    let (seeded, resources) = topic_and_queue().await;
    put_record(&bucket, &stack, &record(&stack, resources, json!({}))).await;
    let key = format!("cdkd/{stack}/us-east-1/state.json");
    let (body, _) = h::get_raw(&s3, &bucket, &key).await.unwrap();
    let before = keys(&bucket).await;

    let r = crate::pty::run_on_pty(
        &[
            "--state-bucket",
            &bucket,
            "destroy",
            &stack,
            "--local",
            "--fast",
        ],
        "Type 'yes' to go on",
        "n\n",
        crate::pty::Timeouts::default(),
    );
    assert!(r.asked, "{r:?}");
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.terminal
            .contains("destroy not confirmed; nothing was deleted"),
        "{r:?}"
    );
    assert_eq!(r.stdout, "", "no report: {r:?}");
    assert_eq!(
        h::get_raw(&s3, &bucket, &key).await.map(|b| b.0),
        Some(body),
        "the record is byte-identical"
    );
    assert_eq!(keys(&bucket).await, before, "no lock, no run written");
    assert!(topic_exists(&seeded.topic).await);
    assert!(queue_exists(&seeded.queue).await);
}
