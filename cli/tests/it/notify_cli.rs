//! Runs tell people (docs/notifications.md), end to end on the emulator: an SQS queue
//! subscribed to an SNS topic and an EventBridge rule on a bus that sends every
//! `cdkd-flow` event to a second queue; local runs of the binary with `--notify-topic`
//! and `--notify-bus`. Each kind of message (waiting for approval, succeeded, failed, a
//! cleanup's digest) arrives once on each, with its fields; a step invoked again sends
//! nothing again; a topic that does not exist is a warning and changes nothing else.
//!
//! Run: `scripts/with-emulator.sh cargo test --workspace --test e2e -- --test-threads=1 notify_`.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::export_support::{real_stack, uniq, wait_for_key, REGION};
use cdkd_tests as h;
use serde_json::{json, Value};

/// A topic with a queue subscribed, and a bus whose rule sends `source: cdkd-flow` to a
/// second queue.
struct Inbox {
    topic: String,
    bus: String,
    topic_queue: String,
    bus_queue: String,
}

/// One message as the subscribed queue received it (the SNS envelope).
#[derive(Debug)]
struct Sns {
    subject: String,
    message: String,
    attrs: Value,
}

impl Sns {
    fn attr(&self, name: &str) -> &str {
        self.attrs[name]["Value"].as_str().unwrap_or("")
    }
}

async fn inbox() -> Inbox {
    let sdk = h::sdk().await;
    let sns = aws_sdk_sns::Client::new(&sdk);
    let events = aws_sdk_eventbridge::Client::new(&sdk);
    let topic = h::fixtures::topic(&sdk, &uniq("notify")).await;
    let topic_queue = h::fixtures::queue(&sdk, &uniq("notify-sns")).await;
    sns.subscribe()
        .topic_arn(&topic)
        .protocol("sqs")
        .endpoint(h::fixtures::queue_arn(&sdk, &topic_queue).await)
        .send()
        .await
        .unwrap();
    let bus = uniq("notify-bus");
    events.create_event_bus().name(&bus).send().await.unwrap();
    let bus_queue = h::fixtures::queue(&sdk, &uniq("notify-events")).await;
    let rule = uniq("notify-rule");
    events
        .put_rule()
        .name(&rule)
        .event_bus_name(&bus)
        .event_pattern(json!({"source": ["cdkd-flow"]}).to_string())
        .send()
        .await
        .unwrap();
    events
        .put_targets()
        .rule(&rule)
        .event_bus_name(&bus)
        .targets(
            aws_sdk_eventbridge::types::Target::builder()
                .id("queue")
                .arn(h::fixtures::queue_arn(&sdk, &bus_queue).await)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    Inbox {
        topic,
        bus,
        topic_queue,
        bus_queue,
    }
}

/// Every message waiting in the queue (removed), as JSON.
async fn drain(url: &str) -> Vec<Value> {
    let sqs = aws_sdk_sqs::Client::new(&h::sdk().await);
    let mut out = Vec::new();
    loop {
        let got = sqs
            .receive_message()
            .queue_url(url)
            .max_number_of_messages(10)
            .visibility_timeout(600)
            .send()
            .await
            .unwrap();
        let msgs = got.messages.unwrap_or_default();
        if msgs.is_empty() {
            return out;
        }
        for m in msgs {
            let body = m.body.unwrap_or_default();
            out.push(serde_json::from_str(&body).unwrap_or_else(|e| panic!("{body}: {e}")));
            sqs.delete_message()
                .queue_url(url)
                .receipt_handle(m.receipt_handle.unwrap())
                .send()
                .await
                .unwrap();
        }
    }
}

impl Inbox {
    /// `--notify-topic <topic> --notify-bus <bus>`.
    fn args(&self) -> [&str; 4] {
        ["--notify-topic", &self.topic, "--notify-bus", &self.bus]
    }

    async fn messages(&self) -> Vec<Sns> {
        drain(&self.topic_queue)
            .await
            .into_iter()
            .map(|v| Sns {
                subject: v["Subject"].as_str().unwrap_or("").to_string(),
                message: v["Message"].as_str().unwrap_or("").to_string(),
                attrs: v["MessageAttributes"].clone(),
            })
            .collect()
    }

    async fn events(&self) -> Vec<Value> {
        drain(&self.bus_queue).await
    }
}

/// The one element of `v` (a kind arrives once).
fn one<T: std::fmt::Debug>(mut v: Vec<T>, what: &str) -> T {
    assert_eq!(v.len(), 1, "{what}: {v:#?}");
    v.remove(0)
}

fn lines(detail: &Value, key: &str) -> String {
    detail[key]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn cli(bucket: &str, args: &[&str], inbox: &[&str]) -> h::CliRun {
    let mut all = vec!["--state-bucket", bucket];
    all.extend_from_slice(args);
    all.extend_from_slice(inbox);
    crate::run_cli_env(&all, &[])
}

async fn keys(bucket: &str) -> Vec<String> {
    h::list_all_keys(&h::s3().await, bucket).await
}

/// A topic and a queue depending on it, recorded as cdkd writes them (an old record).
async fn put_stack(bucket: &str, stack: &str, extra: Option<(&str, Value)>) {
    let sdk = h::sdk().await;
    let topic = h::fixtures::topic(&sdk, &uniq("t")).await;
    let queue = h::fixtures::queue(&sdk, &uniq("q")).await;
    let mut resources = json!({
        "Topic": {"physicalId": topic, "resourceType": "AWS::SNS::Topic", "properties": {}, "dependencies": [], "provisionedBy": "sdk"},
        "Queue": {"physicalId": queue, "resourceType": "AWS::SQS::Queue", "properties": {}, "dependencies": ["Topic"], "provisionedBy": "sdk"}
    });
    if let Some((id, v)) = extra {
        resources[id] = v;
    }
    let record = json!({"version": 10, "stackName": stack, "region": REGION,
        "resources": resources, "outputs": {}, "lastModified": 1777458225000i64});
    h::put_raw(
        &h::s3().await,
        bucket,
        &format!("cdkd/{stack}/{REGION}/state.json"),
        serde_json::to_vec_pretty(&record).unwrap(),
    )
    .await;
}

/// A stack whose destroy fails: a non-empty bucket (no auto-delete tag) the topic
/// depends on.
async fn put_failing_stack(bucket: &str, stack: &str) {
    let s3 = h::s3().await;
    let full = h::unique_bucket_name("full");
    s3.create_bucket().bucket(&full).send().await.unwrap();
    h::put_raw(&s3, &full, "object.txt", b"data".to_vec()).await;
    put_stack(
        bucket,
        stack,
        Some((
            "Bucket",
            json!({"physicalId": full, "resourceType": "AWS::S3::Bucket", "properties": {}, "dependencies": ["Topic"], "provisionedBy": "sdk"}),
        )),
    )
    .await;
}

// ------------------------------------------------------------------ approval, success

fn spawn(args: &[&str]) -> Child {
    crate::cli_command(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start cdkd-flow")
}

#[tokio::test]
async fn notify_an_export_waiting_for_approval_then_migrated_tells_each_once_on_topic_and_bus() {
    let s = real_stack("NotifyExport").await;
    let inbox = inbox().await;
    let run_id = format!("export-{}-notify", s.stack);
    let mut args = s.export_args(&run_id, &["--require-approval"]);
    args.extend(inbox.args());
    let mut child = spawn(&args);

    // The approval message arrives while the run waits.
    let t0 = Instant::now();
    let waiting = loop {
        let got = inbox.messages().await;
        if !got.is_empty() {
            break one(got, "approval messages");
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the export ended ({status}) before its approval message");
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no message in a minute"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let approve = format!(
        "cdkd-flow runs approve {run_id} --local --state-bucket {}",
        s.bucket
    );
    assert_eq!(
        waiting.subject,
        format!("cdkd-flow: export {} waits for approval", s.stack)
    );
    assert!(
        waiting.message.contains(&format!("{approve}\n")),
        "{}",
        waiting.message
    );
    assert!(
        waiting
            .message
            .contains(&format!("cdkd-flow runs reject {run_id} --local")),
        "{}",
        waiting.message
    );
    assert!(
        waiting.message.contains(&format!("Run: {run_id}\n")),
        "{}",
        waiting.message
    );
    assert!(
        waiting
            .message
            .contains("plan: 1 stack(s), 2 resource(s) to import"),
        "{}",
        waiting.message
    );
    assert_eq!(waiting.attr("kind"), "approval-waiting");
    assert_eq!(waiting.attr("runId"), run_id);
    assert_eq!(waiting.attr("stack"), s.stack);
    let event = one(inbox.events().await, "approval events");
    assert_eq!(event["source"], "cdkd-flow");
    assert_eq!(event["detail-type"], "cdkd-flow Run Waiting For Approval");
    let d = &event["detail"];
    assert_eq!(d["version"], 1);
    assert_eq!(d["kind"], "approval-waiting");
    assert_eq!(d["runId"], run_id.as_str());
    assert_eq!(d["stack"], s.stack.as_str());
    assert_eq!(d["approval"]["approveCommand"], approve.as_str());
    assert_eq!(d["approval"]["plan"]["importRows"], 2);

    let r = cli(&s.bucket, &["runs", "approve", &run_id, "--local"], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("was not sent"), "{stderr}");

    let done = one(inbox.messages().await, "messages after the approval");
    assert_eq!(
        done.subject,
        format!("cdkd-flow: export {} migrated", s.stack)
    );
    assert!(
        done.message
            .contains("migrated; cdkd record deleted (2 resource(s) imported)"),
        "{}",
        done.message
    );
    assert_eq!(done.attr("kind"), "run-succeeded");
    let event = one(inbox.events().await, "events after the approval");
    assert_eq!(event["detail-type"], "cdkd-flow Run Succeeded");
    assert_eq!(event["detail"]["outcome"], "migrated");
    assert_eq!(
        event["detail"]["reportKey"],
        format!("cdkd/_runs/{run_id}/report.json").as_str()
    );
    assert!(
        lines(&event["detail"], "summary").contains("migrated; cdkd record deleted"),
        "{event}"
    );
    // What was sent is kept in the run's folder, one marker per kind.
    let all = keys(&s.bucket).await;
    for kind in ["approval-waiting", "run-succeeded"] {
        let key = format!("cdkd/_runs/{run_id}/notified-{kind}.json");
        assert!(all.contains(&key), "{key} in {all:?}");
    }
}

#[tokio::test]
async fn notify_an_export_that_fails_after_its_lock_tells_the_cause_and_what_to_redo() {
    use cdkd_tests::faults::{exact, inject_fault, Fault};
    let s = real_stack("NotifyFail").await;
    let inbox = inbox().await;
    let run_id = format!("export-{}-fail", s.stack);
    // CloudFormation refuses the phase-1 change set: the run aborts after its lock.
    let _fault = inject_fault(&Fault::cfn(
        "CreateChangeSet",
        &[("StackName", &exact(&s.stack))],
        "ValidationError",
        "refused by the notify test",
    ));
    let mut args = s.export_args(&run_id, &["-y"]);
    args.extend(inbox.args());
    let r = crate::run_cli_env(&args, &[]);
    assert_eq!(r.code, 1, "{r:?}");
    let m = one(inbox.messages().await, "failure messages");
    assert_eq!(m.subject, format!("cdkd-flow: export {} failed", s.stack));
    assert!(
        m.message.contains("Cause: ") && m.message.contains("refused by the notify test"),
        "{}",
        m.message
    );
    assert_eq!(m.attr("kind"), "run-failed");
    assert_eq!(m.attr("outcome"), "failed");
    let e = one(inbox.events().await, "failure events");
    assert_eq!(e["detail-type"], "cdkd-flow Run Failed");
    let d = &e["detail"];
    assert!(
        d["cause"]
            .as_str()
            .unwrap_or("")
            .contains("refused by the notify test"),
        "{d}"
    );
    let report = report_of(&s.bucket, &run_id).await;
    // The message carries the report's redo lines and commands, as the report has them.
    assert_eq!(d["redo"], report["redo"], "{d}");
    assert_eq!(
        d.get("commands").cloned().unwrap_or(json!([])),
        report["commands"],
        "{d}"
    );
    assert!(
        lines(d, "summary").contains(&format!("{} -> CloudFormation stack", s.stack)),
        "{d}"
    );
}

/// A resumed export is the same run in the same folder: each attempt's end is told. A
/// phase 2 refused by CloudFormation fails the run after its import; the same command
/// resumes it and fails again (told again); once CloudFormation accepts, the third
/// attempt migrates (told).
#[tokio::test]
async fn notify_a_resumed_export_tells_each_attempts_end() {
    use cdkd_tests::faults::{exact, inject_fault, Fault};
    let s = real_stack("NotifyResumed").await;
    let inbox = inbox().await;
    let run_id = format!("export-{}-resumed", s.stack);
    let fault = inject_fault(&Fault::cfn(
        "CreateChangeSet",
        &[
            ("StackName", &exact(&s.stack)),
            ("ChangeSetType", &exact("UPDATE")),
        ],
        "ValidationError",
        "phase 2 refused by the notify test",
    ));
    let mut args = s.export_args(&run_id, &["-y"]);
    args.extend(inbox.args());
    for attempt in ["first", "resumed"] {
        let r = crate::run_cli_env(&args, &[]);
        assert_eq!(r.code, 1, "{attempt}: {r:?}");
        let m = one(
            inbox.messages().await,
            &format!("{attempt} failure messages"),
        );
        assert_eq!(m.attr("kind"), "run-failed", "{attempt}");
        assert_eq!(m.attr("runId"), run_id.as_str(), "{attempt}");
        assert!(
            m.message.contains("phase 2 refused by the notify test"),
            "{attempt}: {}",
            m.message
        );
        let e = one(inbox.events().await, &format!("{attempt} failure events"));
        assert_eq!(e["detail-type"], "cdkd-flow Run Failed", "{attempt}");
    }
    drop(fault);
    let r = crate::run_cli_env(&args, &[]);
    assert_eq!(r.code, 0, "{r:?}");
    let m = one(inbox.messages().await, "the resumed run's success");
    assert_eq!(m.attr("kind"), "run-succeeded");
    assert_eq!(m.attr("outcome"), "migrated");
    let e = one(inbox.events().await, "the resumed run's success event");
    assert_eq!(e["detail-type"], "cdkd-flow Run Succeeded");
}

#[tokio::test]
async fn notify_a_local_export_interrupted_by_ctrl_c_tells_that_it_stopped_and_how_to_resume() {
    let s = real_stack("NotifyCtrlC").await;
    let inbox = inbox().await;
    let run_id = format!("export-{}-ctrlc", s.stack);
    let (mut f, _hold) =
        crate::export_support::export_held_after_its_lock(&s, &run_id, &inbox.args()).await;
    f.signal(libc::SIGINT);
    let (code, stderr) = f.wait_exit(Duration::from_secs(60));
    assert_eq!(code, 1, "{stderr}");
    let m = one(inbox.messages().await, "interruption messages");
    assert_eq!(
        m.subject,
        format!("cdkd-flow: export {} failed (interrupted)", s.stack)
    );
    assert!(m.message.contains("Resume it:"), "{}", m.message);
    let e = one(inbox.events().await, "interruption events");
    let report = report_of(&s.bucket, &run_id).await;
    assert_eq!(e["detail"]["outcome"], "interrupted");
    assert_eq!(e["detail"]["commands"], report["commands"], "{e}");
}

/// A local export stopped by Ctrl-C told `interrupted`; its resume, refused at its
/// `Resume` step (its record of progress cannot be written), is a new end of the run,
/// and is told too: the resume forgets the earlier end's marker with its report.
#[tokio::test]
async fn notify_a_resume_refused_after_a_ctrl_c_is_told_though_the_interruption_was() {
    use cdkd_tests::faults::{exact_path, inject_fault, Fault};
    let s = real_stack("NotifyResumeRefused").await;
    let inbox = inbox().await;
    let run_id = format!("export-{}-again", s.stack);
    let (mut f, hold) =
        crate::export_support::export_held_after_its_lock(&s, &run_id, &inbox.args()).await;
    f.signal(libc::SIGINT);
    let (code, stderr) = f.wait_exit(Duration::from_secs(60));
    assert_eq!(code, 1, "{stderr}");
    let m = one(inbox.messages().await, "interruption messages");
    assert_eq!(m.attr("outcome"), "interrupted");
    one(inbox.events().await, "interruption events");
    drop(hold);

    let progress = format!("cdkd/_runs/{run_id}/progress.json");
    let _refused = inject_fault(
        &Fault::new(
            "PUT",
            &exact_path(&s.bucket, &progress),
            403,
            "AccessDenied",
        )
        .message("Access Denied"),
    );
    // --fast: the Resume state's retries do not sleep.
    let mut args = s.export_args(&run_id, &["-y"]);
    args.extend(inbox.args());
    let r = crate::run_cli_env(&args, &[]);
    assert_eq!(r.code, 1, "{r:?}");
    let m = one(inbox.messages().await, "the refused resume's messages");
    assert_eq!(m.attr("kind"), "run-failed");
    assert_eq!(m.attr("runId"), run_id.as_str());
    assert_ne!(m.attr("outcome"), "interrupted", "{}", m.message);
    let report = report_of(&s.bucket, &run_id).await;
    assert_ne!(report["outcome"], "interrupted", "{report:#}");
    one(inbox.events().await, "the refused resume's events");
}

// ------------------------------------------------------------------ destroy

/// A destroy run again under the same run id (the command its Ctrl-C printed, a
/// scheduled job's fixed `--run-id`) is a new attempt: its end is told again, and its
/// report is its own.
#[tokio::test]
async fn notify_a_destroy_run_again_under_its_run_id_tells_each_attempts_end() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let inbox = inbox().await;
    let bad = uniq("NotifyAgain");
    put_failing_stack(&bucket, &bad).await;
    let run_id = format!("destroy-{bad}-nightly");
    for attempt in ["first", "again"] {
        let r = cli(
            &bucket,
            &[
                "destroy", &bad, "--local", "--fast", "-y", "--run-id", &run_id,
            ],
            &inbox.args(),
        );
        assert_eq!(r.code, 1, "{attempt}: {r:?}");
        let m = one(inbox.messages().await, &format!("{attempt} messages"));
        assert_eq!(m.attr("kind"), "run-failed", "{attempt}");
        assert_eq!(m.attr("runId"), run_id.as_str(), "{attempt}");
        one(inbox.events().await, &format!("{attempt} events"));
    }
}

#[tokio::test]
async fn notify_a_destroy_that_succeeds_and_one_that_fails_tell_the_summary_and_the_redo_lines() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let inbox = inbox().await;
    let ok = uniq("NotifyOk");
    put_stack(&bucket, &ok, None).await;
    let r = cli(
        &bucket,
        &["destroy", &ok, "--local", "--fast", "-y"],
        &inbox.args(),
    );
    assert_eq!(r.code, 0, "{r:?}");
    let m = one(inbox.messages().await, "success messages");
    assert_eq!(m.subject, format!("cdkd-flow: destroy {ok} destroyed"));
    assert!(
        m.message
            .contains(&format!("Destroyed {ok} ({REGION}): 2 deleted")),
        "{}",
        m.message
    );
    assert_eq!(m.attr("outcome"), "destroyed");
    let e = one(inbox.events().await, "success events");
    assert_eq!(e["detail-type"], "cdkd-flow Run Succeeded");
    assert_eq!(e["detail"]["operation"], "destroy");
    assert_eq!(e["detail"]["stack"], ok.as_str());
    assert_eq!(e["detail"]["region"], REGION);

    let bad = uniq("NotifyBad");
    put_failing_stack(&bucket, &bad).await;
    let r = cli(
        &bucket,
        &["destroy", &bad, "--local", "--fast", "-y"],
        &inbox.args(),
    );
    assert_eq!(r.code, 1, "{r:?}");
    let m = one(inbox.messages().await, "failure messages");
    assert_eq!(
        m.subject,
        format!("cdkd-flow: destroy {bad} failed (partial)")
    );
    assert!(m.message.contains("To do by hand:"), "{}", m.message);
    assert!(
        m.message.contains(&format!(
            "{bad} ({REGION}): Bucket (AWS::S3::Bucket) failed: "
        )),
        "{}",
        m.message
    );
    assert_eq!(m.attr("kind"), "run-failed");
    let e = one(inbox.events().await, "failure events");
    assert_eq!(e["detail-type"], "cdkd-flow Run Failed");
    let redo = lines(&e["detail"], "redo");
    assert!(
        redo.contains("Topic (AWS::SNS::Topic) blocked by Bucket"),
        "{redo}"
    );
    assert!(redo.contains(&format!("cdkd-flow destroy {bad}")), "{redo}");
}

// ------------------------------------------------------------------ cleanup

#[tokio::test]
async fn notify_a_cleanup_sends_one_digest_of_what_it_destroyed_skipped_and_why_and_what_failed() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let inbox = inbox().await;
    let tag = uniq("nc").to_lowercase();
    let (a, b, c) = (format!("{tag}-a"), format!("{tag}-b"), format!("{tag}-c"));
    put_stack(&bucket, &a, None).await;
    put_failing_stack(&bucket, &b).await;
    put_stack(&bucket, &c, None).await;
    hold_lock(&bucket, &c).await;
    let pattern = format!("{tag}-*");
    let r = cli(
        &bucket,
        &[
            "cleanup",
            "--pattern",
            &pattern,
            "--older-than",
            "1d",
            "--local",
            "--fast",
        ],
        &inbox.args(),
    );
    assert_eq!(r.code, 1, "{r:?}");
    // Each destroy tells its own end; the cleanup adds one digest.
    let messages = inbox.messages().await;
    assert_eq!(messages.len(), 3, "{messages:#?}");
    let digest = one(
        messages
            .into_iter()
            .filter(|m| m.attr("kind") == "cleanup-finished")
            .collect(),
        "digests",
    );
    assert_eq!(
        digest.subject,
        "cdkd-flow: cleanup incomplete: 1 destroyed, 1 skipped, 1 failed"
    );
    assert!(
        digest
            .message
            .contains(&format!("destroyed {a} ({REGION})")),
        "{}",
        digest.message
    );
    assert!(
        digest.message.contains(&format!("{c} ({REGION}): locked")),
        "{}",
        digest.message
    );
    let events = inbox.events().await;
    assert_eq!(events.len(), 3, "{events:#?}");
    let e = one(
        events
            .into_iter()
            .filter(|e| e["detail-type"] == "cdkd-flow Cleanup Finished")
            .collect(),
        "digest events",
    );
    let d = &e["detail"]["cleanup"];
    assert_eq!(d["dryRun"], false);
    assert_eq!(d["destroyed"], json!([{"stack": a, "region": REGION}]));
    assert_eq!(
        d["skipped"],
        json!([{"stack": c, "region": REGION, "reason": "locked"}])
    );
    assert_eq!(d["failed"][0]["stack"], b.as_str());
    assert!(
        !d["failed"][0]["error"].as_str().unwrap_or("").is_empty(),
        "{d}"
    );
}

/// A local cleanup's folder holds its lists (a dry run: `selection.json`) and its
/// digest's marker; that marker says the run ended, so `runs prune` deletes the folder
/// once old enough (docs/runs.md).
#[tokio::test]
async fn notify_a_local_cleanups_only_object_its_digest_marker_is_an_ended_run_prune_deletes() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let inbox = inbox().await;
    let run_id = uniq("cleanup-marker");
    let r = cli(
        &bucket,
        &[
            "cleanup",
            "--pattern",
            "nothing-*",
            "--older-than",
            "1d",
            "--dry-run",
            "--local",
            "--fast",
            "--run-id",
            &run_id,
        ],
        &inbox.args(),
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        one(inbox.messages().await, "digests").attr("outcome"),
        "dry-run"
    );
    let marker = format!("cdkd/_runs/{run_id}/notified-cleanup-finished.json");
    let selection = format!("cdkd/_runs/{run_id}/selection.json");
    assert_eq!(keys(&bucket).await, vec![marker.clone(), selection]);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let prune = cli(
        &bucket,
        &[
            "runs",
            "prune",
            "--older-than",
            "1s",
            "--backend-stack",
            "no-backend",
        ],
        &[],
    );
    assert_eq!(prune.code, 0, "{prune:?}");
    assert!(keys(&bucket).await.is_empty(), "{prune:?}");
}

// ------------------------------------------------------------------ once, unhappy

#[tokio::test]
async fn notify_a_step_invoked_again_for_the_same_run_sends_nothing_again() {
    use cdkd_functions::export::approval::{run, ApprovalInput};
    let inbox = inbox().await;
    let deps = notify_deps(&inbox).await;
    let bucket = h::fresh_bucket(&h::s3().await).await;
    let run_id = "export-App-notify-once";
    let input = |token: &str| -> ApprovalInput {
        serde_json::from_value(json!({
            "token": token, "runId": run_id,
            "input": {"stack": "App", "stateBucket": bucket, "statePrefix": "cdkd",
                      "templates": {"App": "k"}, "requireApproval": true},
            "plan": {"planKey": format!("cdkd/_runs/{run_id}/plan.json"), "region": REGION,
                     "stacks": 1, "importRows": 2, "blocked": 0, "warnings": 0, "awsCalls": {}}
        }))
        .unwrap()
    };
    assert!(run(input("tok-1"), &deps).await.unwrap().written);
    // The same attempt again (Step Functions retried the invocation), then a retried
    // attempt with a new token: the request is the same run's, already told.
    assert!(!run(input("tok-1"), &deps).await.unwrap().written);
    assert!(run(input("tok-2"), &deps).await.unwrap().written);
    assert_eq!(inbox.messages().await.len(), 1);
    assert_eq!(inbox.events().await.len(), 1);

    // The cleanup's digest step, invoked twice for one run: one digest.
    let summary = json!({"dryRun": true, "selected": [], "skipped": []});
    for _ in 0..2 {
        let out = cdkd_functions::steps::invoke(
            "cleanup-notify",
            json!({"runId": "cleanup-once", "input": {"stateBucket": bucket}, "summary": summary}),
            &deps,
        )
        .await
        .unwrap();
        assert_eq!(out["configured"], true);
    }
    let m = one(inbox.messages().await, "digests");
    assert_eq!(
        m.subject,
        "cdkd-flow: cleanup dry run: 0 would be destroyed, 0 skipped"
    );
    assert_eq!(
        one(inbox.events().await, "digest events")["detail"]["outcome"],
        "dry-run"
    );
}

/// The targets reach a step as a deployed function's do: `CDKD_FLOW_NOTIFY_TOPIC` and
/// `CDKD_FLOW_NOTIFY_BUS` read by `Deps::from_env`, what the Lambda main builds (here
/// through `workflow run`, whose steps are built the same way).
#[tokio::test]
async fn notify_targets_from_the_environment_reach_the_steps_as_in_lambda() {
    let bucket = h::fresh_bucket(&h::s3().await).await;
    let inbox = inbox().await;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cleanup = root.join("statemachines/cleanup.asl.json");
    let destroy = format!(
        "DestroyStateMachineArn={}",
        root.join("statemachines/destroy.asl.json").display()
    );
    let input =
        json!({"stateBucket": bucket, "pattern": "nothing-*", "minimumAge": "1d", "dryRun": true})
            .to_string();
    let r = crate::run_cli_env(
        &[
            "workflow",
            "run",
            &cleanup.display().to_string(),
            "--machine",
            &destroy,
            "--input",
            &input,
            "--fast",
        ],
        &[
            ("CDKD_FLOW_NOTIFY_TOPIC", &inbox.topic),
            ("CDKD_FLOW_NOTIFY_BUS", &inbox.bus),
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let m = one(inbox.messages().await, "digests");
    assert_eq!(m.attr("kind"), "cleanup-finished");
    assert_eq!(
        m.subject,
        "cdkd-flow: cleanup dry run: 0 would be destroyed, 0 skipped"
    );
    let e = one(inbox.events().await, "digest events");
    assert_eq!(e["detail"]["cleanup"]["dryRun"], true);
}

#[tokio::test]
async fn notify_to_a_topic_and_a_bus_that_do_not_exist_is_a_warning_each_and_the_run_ends_as_it_would(
) {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let stack = uniq("NotifyNoTopic");
    put_stack(&bucket, &stack, None).await;
    let missing = format!("arn:aws:sns:{REGION}:{}:no-such-topic", h::EMULATOR_ACCOUNT);
    let r = cli(
        &bucket,
        &["destroy", &stack, "--local", "--fast", "-y"],
        &["--notify-topic", &missing, "--notify-bus", "no-such-bus"],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.contains(&format!("Destroyed {stack}")),
        "{}",
        r.stdout
    );
    let warnings: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("was not sent") || l.contains("was refused"))
        .collect();
    assert_eq!(warnings.len(), 2, "one per target: {}", r.stderr);
    assert!(
        warnings[0].contains(&format!("SNS topic {missing}")),
        "{}",
        warnings[0]
    );
    assert!(
        warnings[1].contains("EventBridge bus no-such-bus"),
        "{}",
        warnings[1]
    );
    assert!(
        h::get_text(&s3, &bucket, &format!("cdkd/{stack}/{REGION}/state.json"))
            .await
            .is_none(),
        "the record is deleted as without a topic"
    );
}

// ------------------------------------------------------------------ ended before the lock

/// The steps' dependencies as a deployed function builds them, its messages to `inbox`.
async fn notify_deps(inbox: &Inbox) -> cdkd_functions::Deps {
    let sdk = h::sdk().await;
    let mut deps = cdkd_functions::Deps::from_sdk(sdk.clone(), None).await;
    deps.notify =
        cdkd_aws::notify::Notifier::new(&sdk, Some(inbox.topic.clone()), Some(inbox.bus.clone()));
    deps
}

/// A deployed-style engine over the project's steps (`deps.local` unset: the locks name
/// the run as a deployed execution's do) whose messages go to `inbox`.
async fn deployed_engine(inbox: &Inbox) -> cdkd_engine::Engine {
    let deps = notify_deps(inbox).await;
    cdkd_engine::Engine::new(
        std::sync::Arc::new(cdkd_functions::local::LocalSteps::new(deps)),
        cdkd_engine::EngineOptions {
            time_scale: 0.0,
            ..cdkd_engine::EngineOptions::default()
        },
    )
}

fn export_definition() -> cdkd_engine::StateMachine {
    cdkd_engine::StateMachine::load(
        cdkd_functions::definitions::EXPORT,
        &cdkd_functions::definitions::local_substitutions(),
    )
    .expect("export.asl.json loads")
}

/// The export input of `s` as the CLI starts a deployed run, its template uploaded where
/// the CLI uploads it.
async fn export_input(s: &crate::export_support::RealStack, run_id: &str, extra: Value) -> Value {
    let key = format!("cdkd/_runs/{run_id}/templates/{}.json", s.stack);
    let body = std::fs::read(&s.template).unwrap();
    h::put_raw(&h::s3().await, &s.bucket, &key, body).await;
    let mut input = json!({"stack": s.stack, "stateBucket": s.bucket, "statePrefix": "cdkd",
        "templates": {(s.stack.clone()): key}, "options": {"fast": true}});
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        input[k] = v;
    }
    input
}

/// The one `run-failed` message and event of the inbox (any other kind is left out):
/// the SNS message, and the event's detail.
async fn one_failure(inbox: &Inbox) -> (Sns, Value) {
    let m = one(
        inbox
            .messages()
            .await
            .into_iter()
            .filter(|m| m.attr("kind") == "run-failed")
            .collect(),
        "run-failed messages",
    );
    let e = one(
        inbox
            .events()
            .await
            .into_iter()
            .filter(|e| e["detail-type"] == "cdkd-flow Run Failed")
            .collect(),
        "run-failed events",
    );
    (m, e["detail"].clone())
}

async fn report_of(bucket: &str, run_id: &str) -> Value {
    let text = h::get_text(
        &h::s3().await,
        bucket,
        &format!("cdkd/_runs/{run_id}/report.json"),
    )
    .await
    .unwrap_or_else(|| panic!("no report.json for {run_id}"));
    serde_json::from_str(&text).unwrap()
}

/// A cdkd deploy's lock on `stack`, held for ten minutes.
async fn hold_lock(bucket: &str, stack: &str) {
    let now = h::now_ms();
    h::put_raw(
        &h::s3().await,
        bucket,
        &format!("cdkd/{stack}/{REGION}/lock.json"),
        h::cdkd_lock_body("alice@laptop", now, now + 600_000, Some("deploy")).into_bytes(),
    )
    .await;
}

/// The approver approved, then the lock step found the stack locked
/// (a deploy started meanwhile). The deployed run's `LockFailedReport` state writes the
/// refused report and tells it once, with the holder and without the force-unlock
/// advice; the execution still ends with the error it caught; the step invoked again
/// (a retry) sends nothing.
#[tokio::test]
async fn notify_a_deployed_export_refused_at_its_lock_after_approval_tells_refused_once_with_the_cause(
) {
    let s = real_stack("NotifyLockRefused").await;
    let inbox = inbox().await;
    let run_id = format!("export-{}-lockrefused", s.stack);
    let engine = deployed_engine(&inbox).await;
    let input = export_input(&s, &run_id, json!({"requireApproval": true})).await;
    let run = {
        let (engine, sm, input, run_id) = (
            engine.clone(),
            export_definition(),
            input.clone(),
            run_id.clone(),
        );
        tokio::spawn(async move { engine.run_named(&sm, input, &run_id).await })
    };
    let approval = format!("cdkd/_runs/{run_id}/approval.json");
    let t0 = Instant::now();
    let token = loop {
        let tokens = engine.waiting_task_tokens();
        if !tokens.is_empty()
            && h::get_text(&h::s3().await, &s.bucket, &approval)
                .await
                .is_some()
        {
            break tokens[0].clone();
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no approval request"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    hold_lock(&s.bucket, &s.stack).await;
    engine
        .send_task_success(&token, json!({"approved": true, "by": "bob@host"}))
        .unwrap();
    let failure = match run.await.unwrap() {
        cdkd_engine::Outcome::Failed(f) => f,
        other => panic!("the lock is held: {other:?}"),
    };
    assert_eq!(
        failure.error, "LockHeld",
        "the execution's error is unchanged"
    );
    assert!(failure.cause.contains("force-unlock"), "{}", failure.cause);

    let (m, d) = one_failure(&inbox).await;
    assert_eq!(
        m.subject,
        format!("cdkd-flow: export {} failed (refused)", s.stack)
    );
    assert_eq!(m.attr("outcome"), "refused");
    assert!(
        m.message
            .contains("Cause: LockHeld: Could not acquire lock for stack")
            && m.message.contains("alice@laptop"),
        "{}",
        m.message
    );
    assert_eq!(d["outcome"], "refused");
    assert_eq!(d["runId"], run_id.as_str());
    let cause = d["cause"].as_str().unwrap_or_default();
    assert!(cause.contains("alice@laptop"), "{d}");
    for text in [m.message.as_str(), &d.to_string()] {
        assert!(
            !text.contains("force-unlock"),
            "a refused run advises no unlock: {text}"
        );
    }
    let report = report_of(&s.bucket, &run_id).await;
    assert_eq!(report["outcome"], "refused");
    assert_eq!(d["redo"], report["redo"]);
    // Nothing locked but the deploy's lock, the record as it was.
    let (body, _) = h::get_raw(&h::s3().await, &s.bucket, &s.state_key())
        .await
        .expect("record kept");
    assert_eq!(serde_json::from_slice::<Value>(&body).unwrap(), s.record);

    // Step Functions retries the step after a Lambda error: the report is found, nothing
    // is sent again.
    let deps = notify_deps(&inbox).await;
    let again = cdkd_functions::steps::invoke(
        "run-refused",
        json!({"operation": "export", "runId": run_id, "input": input,
               "error": {"Error": "LockHeld", "Cause": failure.cause}}),
        &deps,
    )
    .await
    .unwrap();
    assert_eq!(again["report"], "found");
    assert!(inbox.messages().await.is_empty());
    assert!(inbox.events().await.is_empty());
}

/// A deployed export whose plan fails (no record of the stack; nothing read, nothing
/// locked) ends in `PlanFailed` after `PlanFailedReport` told it once as refused; the
/// same failure in a dry run writes its report and tells nothing (plan-only).
#[tokio::test]
async fn notify_a_deployed_export_whose_plan_fails_tells_refused_once_and_a_dry_run_tells_nothing()
{
    let s = real_stack("NotifyPlanRefused").await;
    let inbox = inbox().await;
    // The record goes: the plan refuses the stack.
    h::s3()
        .await
        .delete_object()
        .bucket(&s.bucket)
        .key(s.state_key())
        .send()
        .await
        .unwrap();
    let engine = deployed_engine(&inbox).await;
    let dry = format!("export-{}-plan", s.stack);
    let input = export_input(&s, &dry, json!({"dryRun": true})).await;
    match engine.run_named(&export_definition(), input, &dry).await {
        cdkd_engine::Outcome::Failed(f) => assert_ne!(f.error, "", "{f:?}"),
        other => panic!("no record: {other:?}"),
    }
    assert_eq!(report_of(&s.bucket, &dry).await["outcome"], "refused");
    assert!(inbox.messages().await.is_empty(), "a dry run tells nothing");
    assert!(inbox.events().await.is_empty(), "a dry run tells nothing");

    let run_id = format!("export-{}-planrefused", s.stack);
    let input = export_input(&s, &run_id, json!({})).await;
    let failure = match engine.run_named(&export_definition(), input, &run_id).await {
        cdkd_engine::Outcome::Failed(f) => f,
        other => panic!("no record: {other:?}"),
    };
    let (m, d) = one_failure(&inbox).await;
    assert_eq!(m.attr("outcome"), "refused");
    assert_eq!(
        m.subject,
        format!("cdkd-flow: export {} failed (refused)", s.stack)
    );
    assert_eq!(d["outcome"], "refused");
    assert_eq!(
        d["cause"].as_str().unwrap_or_default(),
        format!("{}: {}", failure.error, failure.cause),
        "the cause is the execution's error and cause: {d}"
    );
    let report = report_of(&s.bucket, &run_id).await;
    assert_eq!(report["cause"], d["cause"]);
    assert!(
        lines(&d, "redo").contains("nothing was locked or changed"),
        "{d}"
    );
}

/// `workflow run <definition> --input <input> --name <name> --fast --json` with the
/// targets in the environment, as a Lambda reads them; what it printed, and its JSON.
fn workflow_run(
    definition: &std::path::Path,
    input: &str,
    name: &str,
    inbox: &Inbox,
) -> (h::CliRun, Value) {
    let def = definition.display().to_string();
    let r = crate::run_cli_env(
        &[
            "workflow", "run", &def, "--input", input, "--name", name, "--fast", "--json",
        ],
        &[
            ("CDKD_FLOW_NOTIFY_TOPIC", &inbox.topic),
            ("CDKD_FLOW_NOTIFY_BUS", &inbox.bus),
        ],
    );
    let out = serde_json::from_str(r.stdout.trim()).unwrap_or(Value::Null);
    (r, out)
}

/// A deployed destroy whose plan fails (a deploy holds the lock) through `workflow run`,
/// whose steps are built as a Lambda's are (from `CDKD_FLOW_NOTIFY_*`): one refused
/// message naming the holder, no force-unlock advice; the execution's error is the
/// plan's.
#[tokio::test]
async fn notify_a_deployed_destroy_whose_plan_fails_tells_refused_once_with_the_cause() {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let inbox = inbox().await;
    let stack = uniq("NotifyDestroyRefused");
    put_stack(&bucket, &stack, None).await;
    hold_lock(&bucket, &stack).await;
    let run_id = format!("destroy-{stack}-refused");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let destroy = root.join("statemachines/destroy.asl.json");
    let input = json!({"stack": stack, "stateBucket": bucket}).to_string();
    let (r, out) = workflow_run(&destroy, &input, &run_id, &inbox);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(out["status"], "FAILED");
    assert_eq!(out["error"], "LockHeld", "{out}");
    let (m, d) = one_failure(&inbox).await;
    assert_eq!(
        m.subject,
        format!("cdkd-flow: destroy {stack} failed (refused)")
    );
    assert_eq!(m.attr("outcome"), "refused");
    assert!(
        m.message
            .contains("Nothing was destroyed: the run ended before its plan was made"),
        "{}",
        m.message
    );
    assert_eq!(d["outcome"], "refused");
    assert_eq!(d["operation"], "destroy");
    // Not asked for: the record's only region, as the plan would have chosen.
    assert_eq!(d["region"], REGION, "{d}");
    let cause = d["cause"].as_str().unwrap_or_default();
    assert!(
        cause.starts_with("LockHeld: Could not acquire lock for stack")
            && cause.contains("alice@laptop"),
        "{d}"
    );
    for text in [m.message.as_str(), &d.to_string()] {
        assert!(!text.contains("force-unlock"), "{text}");
    }
    let report = report_of(&bucket, &run_id).await;
    assert_eq!(report["refused"], true);

    // The report step itself failing (here a test function in its place): its Catch goes
    // to the same Fail state and leaves `$.error` alone, so the execution still ends
    // with the plan's error; nothing is written or told.
    let broken = format!("{run_id}-broken");
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("notify_cli");
    std::fs::create_dir_all(&dir).unwrap();
    let failing = dir.join(format!("{broken}.asl.json"));
    let text = cdkd_functions::definitions::DESTROY
        .replace("${RunRefusedFunctionArn}", "cdkd-flow:test:fail");
    std::fs::write(&failing, text).unwrap();
    let (r, out) = workflow_run(&failing, &input, &broken, &inbox);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(out["error"], "LockHeld", "{out}");
    assert!(
        out["cause"].as_str().unwrap_or("").contains("alice@laptop"),
        "{out}"
    );
    let got = inbox.messages().await;
    assert!(got.is_empty(), "{got:#?} {r:?}");
    assert!(
        h::get_text(&s3, &bucket, &format!("cdkd/_runs/{broken}/report.json"))
            .await
            .is_none()
    );
    assert!(
        h::get_text(&s3, &bucket, &format!("cdkd/{stack}/{REGION}/state.json"))
            .await
            .is_some(),
        "the record is kept"
    );
}

/// A local export refused at its lock after its approval: the definition's
/// `LockFailedReport` writes and tells the report in the process, and the CLI, which
/// covers a local run that ended without one, finds it: one message, not two.
#[tokio::test]
async fn notify_a_local_export_refused_at_its_lock_tells_once_though_the_cli_also_looks() {
    let s = real_stack("NotifyLocalRefused").await;
    let inbox = inbox().await;
    let run_id = format!("export-{}-localrefused", s.stack);
    let mut args = s.export_args(&run_id, &["--require-approval"]);
    args.extend(inbox.args());
    let child = spawn(&args);
    let approval = format!("cdkd/_runs/{run_id}/approval.json");
    wait_for_key(&s.bucket, &approval, Duration::from_secs(60)).await;
    hold_lock(&s.bucket, &s.stack).await;
    let r = cli(&s.bucket, &["runs", "approve", &run_id, "--local"], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("LockHeld"), "{stderr}");
    let (m, d) = one_failure(&inbox).await;
    assert_eq!(m.attr("outcome"), "refused");
    assert_eq!(d["outcome"], "refused");
    assert!(!m.message.contains("force-unlock"), "{}", m.message);
    assert_eq!(report_of(&s.bucket, &run_id).await["outcome"], "refused");
}

/// `run-refused` refuses an input it cannot place (no run id, no state bucket), and a
/// report it cannot read (S3 refuses the read) is neither written over nor told: the
/// run's end stays as the execution says.
#[tokio::test]
async fn notify_run_refused_with_bad_input_or_an_unreadable_report_writes_and_sends_nothing() {
    use cdkd_tests::faults::{exact_path, inject_fault, Fault};
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let inbox = inbox().await;
    let deps = notify_deps(&inbox).await;
    let call = |payload: Value| cdkd_functions::steps::invoke("run-refused", payload, &deps);
    let error = json!({"Error": "Refused", "Cause": "no record"});
    let e = call(json!({"operation": "destroy", "runId": "",
        "input": {"stack": "S", "stateBucket": bucket}, "error": error}))
    .await
    .unwrap_err();
    assert_eq!(e.name, "BadInput", "{e:?}");
    let e = call(json!({"operation": "destroy", "runId": "destroy-S-1",
        "input": {"stack": "S"}, "error": error}))
    .await
    .unwrap_err();
    assert_eq!(e.name, "BadInput", "{e:?}");
    let e = call(json!({"operation": "cleanup", "runId": "destroy-S-1",
        "input": {"stack": "S", "stateBucket": bucket}, "error": error}))
    .await
    .unwrap_err();
    assert_eq!(e.name, "BadInput", "{e:?}");

    let key = "cdkd/_runs/destroy-S-2/report.json";
    let _fault = inject_fault(&Fault::new(
        "GET",
        &exact_path(&bucket, key),
        403,
        "AccessDenied",
    ));
    let out = call(json!({"operation": "destroy", "runId": "destroy-S-2",
        "input": {"stack": "S", "stateBucket": bucket}, "error": error}))
    .await
    .unwrap();
    assert_eq!(out["report"], "notWritten");
    assert!(keys(&bucket).await.is_empty());
    assert!(inbox.messages().await.is_empty());
    assert!(inbox.events().await.is_empty());
}

/// Step Functions' "Execution Status Change" event of deployed run `run_id`, as the
/// backend's EventBridge rule delivers it to `run-ended`.
fn status_change(run_id: &str, status: &str, input: &Value) -> Value {
    json!({"version": "0", "source": "aws.states",
        "detail-type": "Step Functions Execution Status Change",
        "detail": {
            "executionArn": format!("arn:aws:states:us-east-1:123456789012:execution:cdkd-flow-export:{run_id}"),
            "stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:cdkd-flow-export",
            "name": run_id, "status": status, "input": input.to_string()}})
}

/// A deployed run stopped from outside (`runs stop --now`: ABORTED; its time limit:
/// TIMED_OUT) passes through no state that catches it, so no step reports or tells it:
/// the backend's EventBridge rule invokes `run-ended` with Step Functions' own event
/// (docs/notifications.md, "What is published, and when", item 5). An export stopped after its import gets the report a
/// failed run gets (`failed`, where it stood, the destination stack left as it is, the
/// same command as the way on; never "nothing was locked", never an unlock) and is told
/// once; the event redelivered sends nothing; a run's other ends and a cleanup's are
/// left alone.
#[tokio::test]
async fn notify_a_deployed_run_stopped_from_outside_is_reported_and_told_once() {
    let s = real_stack("NotifyStopped").await;
    let inbox = inbox().await;
    let run_id = format!("export-{}-stopped", s.stack);
    let deps = notify_deps(&inbox).await;
    let input = export_input(&s, &run_id, json!({})).await;
    let step = |name: &'static str, payload: Value| {
        let deps = &deps;
        async move {
            cdkd_functions::steps::invoke(name, payload, deps)
                .await
                .unwrap_or_else(|e| panic!("{name}: {e:?}"))
        }
    };
    let plan = step("export-plan", json!({"input": input, "runId": run_id})).await;
    let carry = step(
        "export-lock",
        json!({"input": input, "runId": run_id, "plan": plan}),
    )
    .await;
    step("export-import", carry).await;

    for (status, of) in [
        ("SUCCEEDED", input.clone()),
        ("FAILED", input.clone()),
        (
            "ABORTED",
            json!({"pattern": "Preview-*", "stateBucket": s.bucket}),
        ),
    ] {
        let r = step("run-ended", status_change(&run_id, status, &of)).await;
        assert_eq!(r["report"], Value::Null, "{status}: {r}");
    }
    assert!(inbox.messages().await.is_empty());

    let r = step("run-ended", status_change(&run_id, "ABORTED", &input)).await;
    assert_eq!(r["report"], "written", "{r}");
    let (m, d) = one_failure(&inbox).await;
    assert_eq!(m.attr("outcome"), "failed");
    assert_eq!(d["outcome"], "failed");
    assert!(m.message.contains("States.Aborted"), "{}", m.message);
    let report = report_of(&s.bucket, &run_id).await;
    assert_eq!(report["outcome"], "failed");
    let redo = report["redo"].to_string();
    assert!(
        redo.contains("leave the destination stacks as they are")
            && redo.contains("run the same export command again"),
        "{redo}"
    );
    for text in [m.message.as_str(), &report.to_string()] {
        assert!(
            !text.contains("nothing was locked") && !text.contains("force-unlock"),
            "{text}"
        );
    }
    let again = step("run-ended", status_change(&run_id, "TIMED_OUT", &input)).await;
    assert_eq!(again["report"], "found", "{again}");
    assert!(inbox.messages().await.is_empty());
    assert!(inbox.events().await.is_empty());
    // The record is kept: nothing is deleted by a report.
    assert!(h::get_raw(&h::s3().await, &s.bucket, &s.state_key())
        .await
        .is_some());

    // A destroy stopped before its plan: `aborted`, not `refused` (a step in flight may
    // yet act); any lock it took outlives the stop, and no unlock command is printed
    // (whoever holds the lock may be someone else).
    let stack = uniq("NotifyStoppedDestroy");
    put_stack(&s.bucket, &stack, None).await;
    let destroy_id = format!("destroy-{stack}-stopped");
    let input = json!({"stack": stack, "stateBucket": s.bucket});
    let r = step("run-ended", status_change(&destroy_id, "ABORTED", &input)).await;
    assert_eq!(r["report"], "written", "{r}");
    let (m, d) = one_failure(&inbox).await;
    assert_eq!(m.attr("outcome"), "failed");
    assert_eq!(d["outcome"], "failed");
    assert_eq!(d["region"], REGION, "{d}");
    let report = report_of(&s.bucket, &destroy_id).await;
    assert_ne!(report["refused"], true, "{report}");
    let why = report["aborted"].as_str().unwrap_or_default();
    assert!(
        why.starts_with("States.Aborted: ")
            && why.contains(
                "it stopped before it saved its plan; any lock it took stays held until it expires"
            )
            && !why.contains("force-unlock"),
        "{why}"
    );
}
