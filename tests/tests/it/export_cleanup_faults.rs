//! `export-cleanup` when S3 refuses to delete one record (docs/export.md, "Cleanup (export-cleanup)" and "Failure (export-abort)",
//! statement 95): a two-level tree migrated through the steps, then the emulator's fault
//! injection (docs/emulator.md, a test facility, not AWS behaviour) refuses the
//! `DeleteObject` of the child's record.
//!
//! Run: `scripts/with-emulator.sh cargo test -p cdkd-tests --test e2e -- --test-threads=1 export_cleanup_faults`.

use crate::export_support::{tree_seed, Tree, PREFIX, REGION};
use cdkd_core::export::execute::Next;
use cdkd_core::keys::{exports_index_key, lock_key, rollback_journal_key, state_key};
use cdkd_functions::StepError;
use cdkd_tests as h;
use h::faults::{inject_fault, Fault};
use serde_json::{json, Value};

/// The producers the exports index lists, by export name.
async fn index_producers(m: &Tree) -> Vec<(String, String)> {
    let index = m
        .json(&exports_index_key(PREFIX, REGION))
        .await
        .expect("the exports index");
    let mut out: Vec<(String, String)> = index["exports"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v["producerStack"].as_str().unwrap().to_owned()))
        .collect();
    out.sort();
    out
}

/// The cleanup step on the migrated tree's carried state.
async fn cleanup(m: &Tree) -> Result<Value, StepError> {
    m.step("export-cleanup", serde_json::to_value(&m.carry).unwrap())
        .await
}

/// A root with a queue and one nested child with a topic, each record publishing one
/// export through the exports index (beside an unrelated stack's), planned, locked and
/// migrated through the steps up to the cleanup (`carry` is then the cleanup's input).
async fn migrated_tree() -> Tree {
    let mut seed = tree_seed("ExportFault", 1).await;
    let (root, child) = (seed.root.clone(), seed.stacks[1].0.clone());
    let (queue_url, topic) = (seed.queue_url.clone(), seed.topics[0].clone());
    seed.stacks[0].1["outputs"] = json!({"QueueUrl": queue_url});
    seed.stacks[1].1["outputs"] = json!({"TopicArn": topic});
    // One of the root's other record files, and the exports index as cdkd keeps it.
    let steps = &seed.steps;
    steps
        .put(
            &rollback_journal_key(PREFIX, &root, REGION),
            json!({"segments": []}).to_string(),
        )
        .await;
    let entry = |value: &str, stack: &str| json!({"value": value, "producerStack": stack, "producerRegion": REGION});
    let index = json!({"indexVersion": 1, "region": REGION, "lastModified": 1, "exports": {
        "RootQueueUrl": entry(&queue_url, &root),
        "ChildTopicArn": entry(&topic, &child),
        "OtherValue": entry("kept", "OtherStack")}});
    steps
        .put(&exports_index_key(PREFIX, REGION), index.to_string())
        .await;
    let mut t = seed.lock(json!({"fast": true})).await;
    // Route's loop, as the definition runs it, up to the cleanup.
    let mut at = t.carry.next;
    t.carry = t
        .drive_watching(t.carry.clone(), Next::Cleanup, &mut |c| at = c.next)
        .await
        .unwrap_or_else(|e| panic!("the tree did not migrate at {at:?}: {e}"));
    assert_eq!(t.carry.next, Next::Cleanup, "the tree migrated");
    t
}

/// Statement 95 (docs/export.md, "Cleanup" and "Cleanup (export-cleanup)" and "Failure (export-abort)"): the child's record cannot be
/// deleted after the tree migrated. The cleanup deletes the root's record (and its
/// journal), drops both stacks' exports from the index, keeps the locks for its retry
/// and fails (`Transient`) naming the child's key; a retry does the same for that key
/// only. The abort then writes the report (the child migrated, its record to forget with
/// `cdkd-flow state orphan`, the key in the cause), deletes no record and releases the
/// locks.
#[tokio::test]
async fn export_statement_95_a_child_record_that_cannot_be_deleted_leaves_the_others_deleted_and_fails_naming_its_key(
) {
    let m = migrated_tree().await;
    let child_key = state_key(PREFIX, &m.child, REGION);
    let root_key = state_key(PREFIX, &m.root, REGION);
    let fault = inject_fault(&Fault::s3_delete_denied(&m.bucket, &child_key));

    let err = cleanup(&m)
        .await
        .expect_err("the child's record cannot be deleted");
    assert_eq!(err.name, "Transient", "retried by the definition: {err}");
    let leftover = format!("s3://{}/{child_key}", m.bucket);
    assert!(err.message.contains(&leftover), "names the key: {err}");
    assert!(
        err.message.contains("AccessDenied") || err.message.contains("Access Denied"),
        "{err}"
    );
    assert!(!err.message.contains(&root_key), "only the leftover: {err}");
    assert_eq!(fault.state().unwrap()["hits"], 1, "one delete was refused");

    let keys = m.keys().await;
    assert!(
        keys.contains(&child_key),
        "the child's record stays: {keys:?}"
    );
    assert!(
        !keys.contains(&root_key),
        "the root's record is deleted: {keys:?}"
    );
    assert!(
        !keys.contains(&rollback_journal_key(PREFIX, &m.root, REGION)),
        "with its journal: {keys:?}"
    );
    assert_eq!(
        index_producers(&m).await,
        [("OtherValue".to_string(), "OtherStack".to_string())],
        "both migrated stacks' exports are dropped from the index, another stack's kept"
    );
    for stack in [&m.root, &m.child] {
        assert!(
            keys.contains(&lock_key(PREFIX, stack, Some(REGION))),
            "the locks stay for the retry: {keys:?}"
        );
    }
    let progress = m
        .json(&format!("{PREFIX}/_runs/{}/progress.json", m.run_id))
        .await
        .unwrap();
    let stages: Vec<(&str, &str)> = progress["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["stack"].as_str().unwrap(), s["stage"].as_str().unwrap()))
        .collect();
    assert_eq!(
        stages,
        [(m.child.as_str(), "migrated"), (m.root.as_str(), "cleaned")],
        "saved: which records are gone"
    );

    // The definition's Retry: the same step again, which only tries the leftover.
    let again = cleanup(&m).await.expect_err("still refused");
    assert_eq!(again.name, "Transient");
    assert!(again.message.contains(&leftover), "{again}");
    assert!(!again.message.contains(&root_key), "{again}");
    assert_eq!(fault.state().unwrap()["hits"], 2);

    // The retries spent, the Catch runs the abort with the cleanup's error.
    let abort = m
        .step(
            "export-abort",
            json!({"run": m.carry, "error": {"Error": again.name, "Cause": again.message}}),
        )
        .await
        .expect("abort");
    let report = &abort["report"];
    assert_eq!(report["outcome"], "failed", "{abort}");
    assert!(
        report["cause"].as_str().unwrap().contains(&leftover),
        "the report names the key: {report}"
    );
    let per_stack: Vec<(&str, &str, bool)> = report["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["stack"].as_str().unwrap(),
                s["stage"].as_str().unwrap(),
                s["recordDeleted"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        per_stack,
        [
            (m.child.as_str(), "migrated", false),
            (m.root.as_str(), "cleaned", true)
        ],
        "{report}"
    );
    let redo = report["redo"].as_array().unwrap();
    assert!(
        redo[0].as_str().unwrap().starts_with(&format!(
            "{}: the migration succeeded (CloudFormation stack {}-Child holds it), but its cdkd record was not deleted: forget it with `cdkd-flow state orphan {}` (never `cdkd destroy`)",
            m.child, m.root, m.child
        )),
        "{report}"
    );
    assert!(
        !redo
            .iter()
            .any(|l| l.as_str().unwrap().starts_with(&format!("{}:", m.root))),
        "nothing to redo for the root: {report}"
    );
    // The run's own bucket: whoever reads the message forgets this record.
    let orphan = format!(
        "cdkd-flow state orphan {} --stack-region {REGION} --state-bucket {}",
        m.child, m.bucket
    );
    let commands: Vec<&str> = report["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(commands, [orphan.as_str()], "{report}");
    let written = m
        .json(abort["reportKey"].as_str().unwrap())
        .await
        .expect("report.json");
    assert_eq!(&written, report, "report.json is the abort's report");

    let keys = m.keys().await;
    assert!(
        keys.contains(&child_key),
        "the abort deletes no record: {keys:?}"
    );
    assert!(
        !keys.iter().any(|k| k.ends_with("lock.json")),
        "the locks are released: {keys:?}"
    );
    drop(fault);
    assert!(
        h::faults::list_faults()
            .iter()
            .all(|f| f["path"].as_str()
                != Some(h::faults::exact_path(&m.bucket, &child_key).as_str())),
        "the guard removed its fault"
    );
}

/// A record S3 refuses once is deleted by the cleanup's retry: the run ends migrated,
/// every record deleted, the locks released.
#[tokio::test]
async fn export_cleanup_faults_a_record_refused_once_is_deleted_by_the_retry() {
    let m = migrated_tree().await;
    let child_key = state_key(PREFIX, &m.child, REGION);
    let fault = inject_fault(&Fault::s3_delete_denied(&m.bucket, &child_key).times(1));
    let err = cleanup(&m).await.expect_err("refused once");
    assert_eq!(err.name, "Transient", "{err}");
    assert!(fault.state().is_none(), "the fault is spent");
    let done = cleanup(&m).await.expect("the retry deletes it");
    let report = &done["report"];
    assert_eq!(report["outcome"], "migrated", "{done}");
    assert!(
        report["stacks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["stage"] == "cleaned" && s["recordDeleted"] == true),
        "{report}"
    );
    let keys = m.keys().await;
    for stack in [&m.root, &m.child] {
        assert!(
            !keys.contains(&state_key(PREFIX, stack, REGION)),
            "{keys:?}"
        );
    }
    assert!(!keys.iter().any(|k| k.ends_with("lock.json")), "{keys:?}");
}

/// The leftover named is the key that is left: when the child's region key is deleted
/// but its legacy key (a copy holding this region's body) is refused, the failure names
/// the legacy key.
#[tokio::test]
async fn export_cleanup_faults_a_refused_legacy_key_is_the_one_named() {
    let m = migrated_tree().await;
    let child_key = state_key(PREFIX, &m.child, REGION);
    let legacy = cdkd_core::keys::legacy_state_key(PREFIX, &m.child);
    m.put(
        &legacy,
        json!({"version": 10, "stackName": m.child, "region": REGION, "resources": {}}).to_string(),
    )
    .await;
    let _fault = inject_fault(&Fault::s3_delete_denied(&m.bucket, &legacy));
    let err = cleanup(&m).await.expect_err("the legacy key is refused");
    assert_eq!(err.name, "Transient", "{err}");
    assert!(
        err.message
            .contains(&format!("s3://{}/{legacy} (", m.bucket)),
        "{err}"
    );
    assert!(!err.message.contains(&child_key), "{err}");
    let keys = m.keys().await;
    assert!(keys.contains(&legacy), "{keys:?}");
    assert!(!keys.contains(&child_key), "{keys:?}");
    assert!(
        !keys.contains(&state_key(PREFIX, &m.root, REGION)),
        "{keys:?}"
    );
}

/// A cleanup stopped between its lock releases (the root's released, the child's not,
/// no report written: a Lambda that timed out there) is finished by its retry, whose
/// renewal of the root's lock finds it gone: the retry reads that the run saved its end,
/// releases the child's lock, still the run's, and writes the report
/// (docs/export.md, "Cleanup (export-cleanup)"). Before, the retry failed `LockLost` and the run was aborted as failed.
#[tokio::test]
async fn export_cleanup_faults_a_cleanup_stopped_between_its_releases_is_finished_by_its_retry() {
    let mut m = migrated_tree().await;
    let child_lock = lock_key(PREFIX, &m.child, Some(REGION));
    // Every delete of the child's lock is refused: it stays, as if the step had been
    // stopped before releasing it.
    let fault = inject_fault(&Fault::s3_delete_denied(&m.bucket, &child_lock));
    cleanup(&m).await.expect("the first attempt ends");
    drop(fault);
    let keys = m.keys().await;
    assert!(keys.contains(&child_lock), "{keys:?}");
    assert!(
        !keys.contains(&lock_key(PREFIX, &m.root, Some(REGION))),
        "{keys:?}"
    );
    let report_key = format!("{PREFIX}/_runs/{}/report.json", m.run_id);
    m.s3.delete_object()
        .bucket(&m.bucket)
        .key(&report_key)
        .send()
        .await
        .unwrap();
    let done = cleanup(&m).await.expect("the retry finishes the cleanup");
    assert_eq!(done["report"]["outcome"], "migrated", "{done}");
    let keys = m.keys().await;
    assert!(!keys.iter().any(|k| k.ends_with("lock.json")), "{keys:?}");
    assert!(keys.contains(&report_key), "{keys:?}");
    // Another retry, after an attempt that wrote the report: that report stands as
    // written (a rewrite would lose the warnings only that attempt saw).
    let mut written = m.json(&report_key).await.expect("the report");
    written["redo"] = json!(["a warning only the earlier attempt saw"]);
    m.put(&report_key, written.to_string()).await;
    // That attempt stopped after its report, before it told it (no marker): the retry
    // tells it (docs/notifications.md, "Once per run and kind: at most once": the marker holds back a second message).
    let sdk = h::sdk().await;
    let topic = h::fixtures::topic(&sdk, &format!("{}-told", m.run_id)).await;
    m.steps.deps.notify = cdkd_aws::notify::Notifier::new(&sdk, Some(topic), None);
    let marker = format!("{PREFIX}/_runs/{}/notified-run-succeeded.json", m.run_id);
    assert!(!m.keys().await.contains(&marker));
    let again = cleanup(&m).await.expect("the report is returned as it is");
    assert_eq!(again["report"]["redo"], written["redo"], "{again}");
    assert_eq!(m.json(&report_key).await.unwrap(), written);
    assert!(
        m.keys().await.contains(&marker),
        "the retry told the run's end"
    );
}
