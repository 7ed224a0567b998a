//! Delete policies against the local emulator (moto): DynamoDB deletion protection
//! (`removeProtection`), S3 `aws-cdk:auto-delete-objects` emptying (resumable across
//! calls), final snapshots that no deleter can take (`FINAL_SNAPSHOT_UNSUPPORTED`, no
//! delete call), and a stop request after a crash lost a delete's answer.
//!
//! Run: `scripts/with-emulator.sh cargo test --workspace --test deleters_policies`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use aws_config::SdkConfig;
use cdkd_deleters::clients::s3_client;
use cdkd_deleters::sdk::s3_bucket::S3BucketDeleter;
use cdkd_deleters::{
    DeleteError, DeleteErrorKind, DeleteProgress, DeleteRequest, Deleter, Handle, Registry,
};
use cdkd_functions::destroy::{Carry, DestroyInput};
use cdkd_functions::{runs, steps, Deps, StepError};
use cdkd_tests as h;
use serde_json::{json, Value};
use tokio::sync::Notify;

use cdkd_tests::deleters::{req, unique, HOME};

/// The emulator's configuration in the records' region (panics without the emulator).
async fn cfg() -> SdkConfig {
    cdkd_tests::deleters::cfg(HOME).await
}

async fn registry() -> Registry {
    cdkd_tests::deleters::registry(HOME).await
}

/// Starts the delete and polls it until it is no longer in flight; returns the answer
/// and every handle seen on the way.
async fn drive<
    D: Fn() -> F,
    F: std::future::Future<Output = Result<DeleteProgress, DeleteError>>,
>(
    start: D,
    poll: impl Fn(
        Handle,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<DeleteProgress, DeleteError>> + Send>,
    >,
) -> (Result<DeleteProgress, DeleteError>, Vec<Handle>) {
    let mut handles = Vec::new();
    let mut progress = start().await;
    for _ in 0..200 {
        let Ok(DeleteProgress::InFlight { handle, .. }) = &progress else {
            return (progress, handles);
        };
        handles.push(handle.clone());
        tokio::time::sleep(Duration::from_millis(50)).await;
        progress = poll(handle.clone()).await;
    }
    panic!("the delete never finished: {progress:?}");
}

async fn drive_registry(
    reg: &Registry,
    r: &DeleteRequest,
) -> (Result<DeleteProgress, DeleteError>, Vec<Handle>) {
    let reg2 = reg.clone();
    let r2 = r.clone();
    drive(
        || reg.start(r),
        move |h| {
            let reg = reg2.clone();
            let r = r2.clone();
            Box::pin(async move { reg.poll(&r, &h).await })
        },
    )
    .await
}

// ------------------------------------------------------------ DynamoDB protection

async fn protected_table(ddb: &aws_sdk_dynamodb::Client) -> String {
    let name = unique("protected");
    cdkd_tests::fixtures::pk_table(ddb, &name, true).await;
    name
}

#[tokio::test]
async fn dynamodb_protected_table_without_remove_protection_fails_naming_table_and_flag() {
    let ddb = aws_sdk_dynamodb::Client::new(&cfg().await);
    let name = protected_table(&ddb).await;
    let r = req("AWS::DynamoDB::Table", &name, json!({}));
    let (res, _) = drive_registry(&registry().await, &r).await;
    let err = res.unwrap_err();
    assert_eq!(err.kind, DeleteErrorKind::Failed, "{err}");
    assert!(!err.retryable, "{err}");
    assert!(
        err.message.contains(&format!("DynamoDB table {name}")),
        "{err}"
    );
    assert!(err.message.contains("--remove-protection"), "{err}");
    let t = ddb.describe_table().table_name(&name).send().await.unwrap();
    assert_eq!(t.table().unwrap().deletion_protection_enabled(), Some(true));
}

#[tokio::test]
async fn dynamodb_remove_protection_turns_it_off_waits_active_then_deletes_rule_3_3() {
    let ddb = aws_sdk_dynamodb::Client::new(&cfg().await);
    let name = protected_table(&ddb).await;
    let mut r = req("AWS::DynamoDB::Table", &name, json!({}));
    r.options.remove_protection = true;
    let (res, handles) = drive_registry(&registry().await, &r).await;
    assert_eq!(res, Ok(DeleteProgress::Done));
    assert!(
        matches!(handles.first(), Some(Handle::Steps { phase, .. }) if phase == "unprotect"),
        "the first answer is the resumable unprotect step: {handles:?}"
    );
    let e = ddb
        .describe_table()
        .table_name(&name)
        .send()
        .await
        .unwrap_err();
    assert!(format!("{e:?}").contains("ResourceNotFound"), "{e:?}");
}

#[tokio::test]
async fn dynamodb_unprotect_step_resumes_from_a_persisted_handle_in_a_new_deleter() {
    let ddb = aws_sdk_dynamodb::Client::new(&cfg().await);
    let name = protected_table(&ddb).await;
    let mut r = req("AWS::DynamoDB::Table", &name, json!({}));
    r.options.remove_protection = true;
    let first = registry().await.start(&r).await.unwrap();
    let DeleteProgress::InFlight { handle, .. } = first else {
        panic!("expected the unprotect step, got {first:?}");
    };
    // Through JSON, as the run record keeps it, into a fresh registry (next invocation).
    let handle: Handle = serde_json::from_value(serde_json::to_value(&handle).unwrap()).unwrap();
    let reg = registry().await;
    let mut p = reg.poll(&r, &handle).await.unwrap();
    for _ in 0..100 {
        let DeleteProgress::InFlight { handle, .. } = &p else {
            break;
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        p = reg.poll(&r, handle).await.unwrap();
    }
    assert_eq!(p, DeleteProgress::Done);
}

// ------------------------------------------------------------ S3 auto-delete-objects

/// A versioned bucket with object versions and delete markers (7 entries in all).
async fn full_bucket(s3: &aws_sdk_s3::Client) -> String {
    let bucket = unique("autodel");
    s3.create_bucket().bucket(&bucket).send().await.unwrap();
    s3.put_bucket_versioning()
        .bucket(&bucket)
        .versioning_configuration(
            aws_sdk_s3::types::VersioningConfiguration::builder()
                .status(aws_sdk_s3::types::BucketVersioningStatus::Enabled)
                .build(),
        )
        .send()
        .await
        .unwrap();
    for (key, body) in [("a", "1"), ("a", "2"), ("b", "1"), ("c", "1"), ("d/e", "1")] {
        s3.put_object()
            .bucket(&bucket)
            .key(key)
            .body(body.as_bytes().to_vec().into())
            .send()
            .await
            .unwrap();
    }
    for key in ["b", "c"] {
        s3.delete_object()
            .bucket(&bucket)
            .key(key)
            .send()
            .await
            .unwrap();
    }
    bucket
}

fn auto_delete_tags(value: &str) -> Value {
    json!({"BucketName": "x", "Tags": [
        {"Key": "owner", "Value": "me"},
        {"Key": "aws-cdk:auto-delete-objects", "Value": value}
    ]})
}

#[tokio::test]
async fn s3_auto_delete_objects_tag_empties_versions_and_markers_then_deletes_statement_53() {
    let s3 = s3_client(&cfg().await);
    let bucket = full_bucket(&s3).await;
    let r = req("AWS::S3::Bucket", &bucket, auto_delete_tags("true"));
    // Batches of 2 and no time budget: every call deletes one batch and answers InFlight.
    let d = Arc::new(
        S3BucketDeleter::new(s3.clone())
            .with_batch(2)
            .with_call_budget(Duration::ZERO),
    );
    let d2 = d.clone();
    let r2 = r.clone();
    let (res, handles) = drive(
        || d.start(&r),
        move |h| {
            let d = d2.clone();
            let r = r2.clone();
            Box::pin(async move { d.poll(&r, &h).await })
        },
    )
    .await;
    assert_eq!(res, Ok(DeleteProgress::Done));
    // 7 entries in batches of 2: the emptying spanned several calls.
    assert!(handles.len() >= 3, "{handles:?}");
    assert!(handles
        .iter()
        .all(|h| matches!(h, Handle::Steps { phase, .. } if phase == "emptying")));
    assert!(
        s3.head_bucket().bucket(&bucket).send().await.is_err(),
        "bucket still exists"
    );
}

#[tokio::test]
async fn s3_auto_delete_through_the_registry_with_the_default_budget_deletes_in_one_call() {
    let s3 = s3_client(&cfg().await);
    let bucket = full_bucket(&s3).await;
    let r = req("AWS::S3::Bucket", &bucket, auto_delete_tags("true"));
    assert_eq!(registry().await.start(&r).await, Ok(DeleteProgress::Done));
    assert!(s3.head_bucket().bucket(&bucket).send().await.is_err());
}

#[tokio::test]
async fn s3_non_empty_without_auto_delete_tag_is_refused_and_no_object_deleted_statement_53() {
    let s3 = s3_client(&cfg().await);
    let bucket = full_bucket(&s3).await;
    let before = s3
        .list_object_versions()
        .bucket(&bucket)
        .send()
        .await
        .unwrap();
    let n = before.versions().len() + before.delete_markers().len();
    let r = req("AWS::S3::Bucket", &bucket, auto_delete_tags("false"));
    let err = registry().await.start(&r).await.unwrap_err();
    assert_eq!(err.kind, DeleteErrorKind::NotEmpty, "{err}");
    assert!(
        err.message
            .contains(&format!("bucket {bucket} is not empty")),
        "{err}"
    );
    let after = s3
        .list_object_versions()
        .bucket(&bucket)
        .send()
        .await
        .unwrap();
    assert_eq!(after.versions().len() + after.delete_markers().len(), n);
}

// ------------------------------------------------------------ the workflow

/// What the recording deleter saw: (logical id, attempt, ClientToken, final snapshot).
type Calls = Arc<Mutex<Vec<(String, u32, String, bool)>>>;

/// Stands in for Cloud Control: records every start; `hang_once` makes the first start
/// of that logical id "send" its request and then die before answering (a crash).
struct Recorder {
    calls: Calls,
    hang_once: Mutex<Option<String>>,
    kill: Arc<Notify>,
}

#[async_trait]
impl Deleter for Recorder {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        // The real Cloud Control deleter refuses a final snapshot itself; a fake that
        // would delete must never see one.
        self.calls.lock().unwrap().push((
            req.logical_id.clone(),
            req.attempt,
            cdkd_deleters::cloudcontrol::client_token(req),
            req.options.final_snapshot.is_some(),
        ));
        let hang = {
            let mut h = self.hang_once.lock().unwrap();
            if h.as_deref() == Some(req.logical_id.as_str()) {
                h.take();
                true
            } else {
                false
            }
        };
        if hang {
            self.kill.notify_one();
            std::future::pending::<()>().await;
        }
        if req.logical_id.starts_with("Warn") {
            return Ok(DeleteProgress::DoneWithWarning {
                warning: format!("{} left eni-0abc\nbehind", req.physical_id),
            });
        }
        Ok(DeleteProgress::Done)
    }

    async fn poll(&self, _: &DeleteRequest, _: &Handle) -> Result<DeleteProgress, DeleteError> {
        Ok(DeleteProgress::Done)
    }
}

struct Flow {
    deps: Deps,
    bucket: String,
    s3: aws_sdk_s3::Client,
    calls: Calls,
    kill: Arc<Notify>,
}

async fn flow(hang_once: Option<&str>) -> Flow {
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let calls: Calls = Arc::default();
    let kill = Arc::new(Notify::new());
    let rec: Arc<dyn Deleter> = Arc::new(Recorder {
        calls: calls.clone(),
        hang_once: Mutex::new(hang_once.map(str::to_owned)),
        kill: kill.clone(),
    });
    let reg = Registry::empty().with_cloud_control(rec);
    let mut deps = Deps::from_sdk(h::sdk().await, None).await;
    deps.registry_for = Arc::new(move |_, _| reg.clone());
    deps.budgets.inline_wait = Duration::from_millis(0);
    Flow {
        deps,
        bucket,
        s3,
        calls,
        kill,
    }
}

impl Flow {
    async fn put_stack(&self, stack: &str, resources: Value) {
        let body = json!({"version": 10, "stackName": stack, "region": HOME,
                          "resources": resources, "outputs": {}});
        h::put_raw(
            &self.s3,
            &self.bucket,
            &format!("cdkd/{stack}/{HOME}/state.json"),
            serde_json::to_vec(&body).unwrap(),
        )
        .await;
    }

    async fn plan(&self, stack: &str, run_id: &str, skip_final_snapshot: bool) -> Carry {
        let input = DestroyInput {
            stack: stack.into(),
            stack_region: Some(HOME.into()),
            state_bucket: self.bucket.clone(),
            state_prefix: "cdkd".into(),
            allow_nested_child: false,
            skip_final_snapshot,
            remove_protection: false,
        };
        let v = steps::invoke(
            "destroy-plan",
            json!({"input": input, "runId": run_id}),
            &self.deps,
        )
        .await
        .unwrap();
        serde_json::from_value(v).unwrap()
    }

    /// One wave; `None` when the deleter died inside it.
    async fn wave(&self, carry: &Carry) -> Option<Result<Carry, StepError>> {
        let payload = json!({"run": carry.run, "locks": carry.locks});
        tokio::select! {
            r = steps::invoke("destroy-wave", payload, &self.deps) => {
                Some(r.map(|v| serde_json::from_value(v).unwrap()))
            }
            _ = self.kill.notified() => None,
        }
    }

    async fn run_to_end(&self, mut carry: Carry) -> Value {
        for _ in 0..50 {
            if carry.settled {
                break;
            }
            carry = self.wave(&carry).await.expect("no kill").unwrap();
        }
        assert!(carry.settled, "the run does not settle");
        steps::invoke(
            "destroy-finish",
            json!({"run": carry.run, "locks": carry.locks}),
            &self.deps,
        )
        .await
        .unwrap();
        self.report(&carry.run.run_id).await
    }

    async fn report(&self, run_id: &str) -> Value {
        let text = h::get_text(&self.s3, &self.bucket, &runs::report_key("cdkd", run_id))
            .await
            .expect("report.json");
        serde_json::from_str(&text).unwrap()
    }

    fn called(&self) -> Vec<String> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .map(|c| c.0.clone())
            .collect()
    }
}

fn row<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["stacks"][0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["logicalId"] == id)
        .unwrap_or_else(|| panic!("no row {id} in {report}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_policy_rds_instance_reaches_no_delete_call_and_fails_statement_18_19() {
    let f = flow(None).await;
    let stack = "SnapDb";
    f.put_stack(
        stack,
        json!({
            "Db": {"resourceType": "AWS::RDS::DBInstance", "physicalId": "shop-db",
                   "deletionPolicy": "Snapshot", "provisionedBy": "sdk", "properties": {}},
            "Topic": {"resourceType": "AWS::SNS::Topic", "physicalId": "arn:aws:sns:us-east-1:1:t",
                      "provisionedBy": "cc-api", "properties": {}}
        }),
    )
    .await;
    let carry = f.plan(stack, "run-snap", false).await;
    let report = f.run_to_end(carry).await;
    // No delete call reached any deleter for Db; the independent Topic was deleted.
    assert_eq!(f.called(), vec!["Topic".to_string()]);
    let db = row(&report, "Db");
    assert_eq!(db["outcome"], "failed", "{report}");
    let error = db["error"].as_str().unwrap();
    assert!(
        error.starts_with("FINAL_SNAPSHOT_UNSUPPORTED: AWS::RDS::DBInstance Db in stack SnapDb"),
        "{error}"
    );
    assert!(error.contains("shop-db-final-"), "{error}");
    assert_eq!(row(&report, "Topic")["outcome"], "deleted");
    assert_eq!(report["complete"], false);
    // The record stays in state.
    let state = h::get_text(&f.s3, &f.bucket, &format!("cdkd/{stack}/{HOME}/state.json"))
        .await
        .expect("state.json kept");
    assert!(state.contains("\"Db\""), "{state}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skip_final_snapshot_deletes_the_snapshot_policy_rds_instance_statement_18() {
    let f = flow(None).await;
    let stack = "SkipSnapDb";
    f.put_stack(
        stack,
        json!({"Db": {"resourceType": "AWS::RDS::DBInstance", "physicalId": "shop-db",
                      "deletionPolicy": "Snapshot", "provisionedBy": "sdk", "properties": {}}}),
    )
    .await;
    let carry = f.plan(stack, "run-skip", true).await;
    let report = f.run_to_end(carry).await;
    let calls = f.calls.lock().unwrap().clone();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].0, "Db");
    assert!(
        !calls[0].3,
        "no final snapshot is asked with skipFinalSnapshot"
    );
    assert_eq!(row(&report, "Db")["outcome"], "deleted");
    assert_eq!(report["complete"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_policy_on_dynamodb_table_fails_unsupported_without_a_call_rule_2_8_3() {
    // DynamoDB takes no final snapshot (docs/destroy.md, "One record in a wave" step 3 lists the types that do).
    let f = flow(None).await;
    let stack = "SnapTable";
    f.put_stack(
        stack,
        json!({"Table": {"resourceType": "AWS::DynamoDB::Table", "physicalId": "orders",
                         "deletionPolicy": "Snapshot", "provisionedBy": "cc-api", "properties": {}}}),
    )
    .await;
    let carry = f.plan(stack, "run-snap-ddb", false).await;
    let report = f.run_to_end(carry).await;
    assert!(f.called().is_empty());
    let t = row(&report, "Table");
    assert_eq!(t["outcome"], "failed");
    assert!(
        t["error"]
            .as_str()
            .unwrap()
            .contains("FINAL_SNAPSHOT_UNSUPPORTED"),
        "{t}"
    );
}

/// Sets `stopRequested` in the run record, as `runs stop` does.
async fn request_stop(f: &Flow, run_id: &str) {
    let key = runs::progress_key("cdkd", run_id);
    let mut v: Value =
        serde_json::from_str(&h::get_text(&f.s3, &f.bucket, &key).await.unwrap()).unwrap();
    v["stopRequested"] = json!(true);
    h::put_raw(&f.s3, &f.bucket, &key, serde_json::to_vec(&v).unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_after_a_crash_lost_a_delete_answer_resends_it_with_the_same_client_token_rule_2_13() {
    let f = flow(Some("Log")).await;
    let stack = "StopCrash";
    // Log must go before Role (Log depends on Role): Role is not ready while Log runs.
    f.put_stack(
        stack,
        json!({
            "Log": {"resourceType": "AWS::Logs::LogGroup", "physicalId": "log-1",
                    "provisionedBy": "cc-api", "dependencies": ["Role"], "properties": {}},
            "Role": {"resourceType": "AWS::Logs::LogGroup", "physicalId": "log-2",
                     "provisionedBy": "cc-api", "properties": {}}
        }),
    )
    .await;
    let carry = f.plan(stack, "run-stop-crash", false).await;
    // The first wave sends Log's delete and dies before recording the answer.
    assert!(
        f.wave(&carry).await.is_none(),
        "the deleter should have died"
    );
    request_stop(&f, "run-stop-crash").await;
    let report = f.run_to_end(carry).await;
    let calls = f.calls.lock().unwrap().clone();
    // Log was sent again with the same attempt, hence the same ClientToken: Cloud
    // Control resumes the first request instead of starting a second one.
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(calls.iter().all(|c| c.0 == "Log"), "{calls:?}");
    assert_eq!(calls[0].2, calls[1].2);
    assert_eq!(row(&report, "Log")["outcome"], "deleted", "{report}");
    // Nothing new after the stop.
    assert_eq!(row(&report, "Role")["outcome"], "interrupted");
    assert!(row(&report, "Role").get("note").is_none(), "{report}");
    assert_eq!(report["stacks"][0]["result"], "interrupted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_ending_after_a_crash_lost_a_delete_answer_reports_it_may_still_be_deleting() {
    let f = flow(Some("Log")).await;
    let stack = "AbortCrash";
    f.put_stack(
        stack,
        json!({"Log": {"resourceType": "AWS::Logs::LogGroup", "physicalId": "log-1",
                       "provisionedBy": "cc-api", "properties": {}}}),
    )
    .await;
    let carry = f.plan(stack, "run-abort-crash", false).await;
    assert!(
        f.wave(&carry).await.is_none(),
        "the deleter should have died"
    );
    // The execution fails here (e.g. the retries are spent) and the Catch aborts.
    steps::invoke(
        "destroy-abort",
        json!({"run": carry.run, "locks": carry.locks,
               "error": {"Error": "States.Timeout", "Cause": "wave timed out"}}),
        &f.deps,
    )
    .await
    .unwrap();
    let report = f.report("run-abort-crash").await;
    let log = row(&report, "Log");
    assert_eq!(log["outcome"], "interrupted", "{report}");
    assert!(
        log["note"]
            .as_str()
            .unwrap()
            .contains("may still be deleting in AWS"),
        "{report}"
    );
    assert_eq!(report["stacks"][0]["maybeDeleting"], json!(["Log"]));
    assert!(
        report["stacks"][0]["nextStep"]
            .as_str()
            .unwrap()
            .starts_with("1 resource(s) may still be deleting in AWS"),
        "{report}"
    );
}

#[tokio::test]
async fn deleted_record_with_a_deleter_warning_keeps_the_warning_as_its_report_note() {
    let f = flow(None).await;
    let stack = "Warned";
    f.put_stack(
        stack,
        json!({"WarnFn": {"resourceType": "AWS::Logs::LogGroup", "physicalId": "fn-1",
                          "provisionedBy": "cc-api", "properties": {}},
               "Quiet": {"resourceType": "AWS::Logs::LogGroup", "physicalId": "log-2",
                         "provisionedBy": "cc-api", "properties": {}}}),
    )
    .await;
    let carry = f.plan(stack, "run-warned", false).await;
    let report = f.run_to_end(carry).await;
    assert_eq!(report["stacks"][0]["result"], "clean", "{report}");
    let warned = row(&report, "WarnFn");
    assert_eq!(warned["outcome"], "deleted", "{report}");
    // One line, as every text from AWS or a deleter in a report.
    assert_eq!(
        warned["note"],
        json!("fn-1 left eni-0abc behind"),
        "{report}"
    );
    assert!(row(&report, "Quiet").get("note").is_none(), "{report}");
}
