//! The fenced lock against the emulator (docs/state-and-lock.md, "lock.json" and "The lock protocol"). Each test
//! uses its own bucket. Names say which rule
//! (docs/state-and-lock.md, "Checks" statement numbers where they apply).

use cdkd_aws::{LockError, ReleaseOutcome};
use cdkd_tests::*;
use futures::future::join_all;

const REGION: &str = "us-east-1";
const KEY: &str = "cdkd/App/us-east-1/lock.json";

/// `message` says the lock expires in `full` (a lock just written) or up to a second
/// less: S3's clock counts whole seconds (docs/state-and-lock.md, "Lock time is S3's").
/// Whether the refusal says the lock expires in `full` (`10m0s`, `30m0s`) or up to five
/// seconds less: the time between writing the lock and reading the refusal, which a
/// loaded machine stretches (what the tests pin is the clock rule, hours apart).
fn within_a_second_of(message: &str, full: &str) -> bool {
    let full_s: i64 = match full {
        "10m0s" => 600,
        "30m0s" => 1800,
        other => panic!("{other}"),
    };
    (0..=5).any(|less| {
        let s = full_s - less;
        message.contains(&format!(", expires in {}m{}s", s / 60, s % 60))
    })
}

fn holder_of(r: &Result<cdkd_aws::HeldLock, LockError>) -> Option<String> {
    r.as_ref().ok().map(|h| h.body.owner.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lock_acquire_50_concurrent_acquirers_exactly_one_holder_20_rounds() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let mgr = locks(&s3, &bucket);
    for round in 0..20 {
        let stack = format!("Race{round}");
        let attempts = (0..50).map(|i| {
            let mgr = mgr.clone();
            let stack = stack.clone();
            tokio::spawn(async move {
                mgr.acquire(
                    &stack,
                    Some(REGION),
                    &format!("cdkd-flow:run-{i}"),
                    Some("destroy"),
                )
                .await
            })
        });
        let results: Vec<_> = join_all(attempts)
            .await
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        let winners: Vec<String> = results.iter().filter_map(holder_of).collect();
        assert_eq!(winners.len(), 1, "round {round}: winners {winners:?}");
        for r in &results {
            match r {
                Ok(_) => {}
                Err(LockError::Held { message }) => {
                    assert!(message.contains(&winners[0]), "round {round}: {message}");
                    assert!(message.contains("operation: destroy"), "{message}");
                }
                Err(e) => panic!("round {round}: unexpected error {e}"),
            }
        }
        let stored = get_text(&s3, &bucket, &format!("cdkd/{stack}/us-east-1/lock.json"))
            .await
            .unwrap();
        assert!(stored.contains(&format!("\"owner\": \"{}\"", winners[0])));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lock_takeover_two_racing_takers_of_expired_lock_exactly_one_wins() {
    // docs/state-and-lock.md, "Checks" statement 28, 20 rounds.
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let mgr = locks(&s3, &bucket);
    for round in 0..20 {
        let stack = format!("Expired{round}");
        let key = format!("cdkd/{stack}/us-east-1/lock.json");
        // No lifetime left (expiresAt = timestamp): expired whatever the clocks
        // (docs/state-and-lock.md, "Lock time is S3's").
        let past = now_ms() - 60_000;
        put_raw(
            &s3,
            &bucket,
            &key,
            cdkd_lock_body("dead@host:1", past, past, Some("deploy")),
        )
        .await;
        let (a, b) = tokio::join!(
            mgr.acquire(&stack, Some(REGION), "cdkd-flow:taker-a", Some("destroy")),
            mgr.acquire(&stack, Some(REGION), "cdkd-flow:taker-b", Some("export")),
        );
        let winners: Vec<String> = [&a, &b].into_iter().filter_map(holder_of).collect();
        assert_eq!(winners.len(), 1, "round {round}: {a:?} / {b:?}");
        let loser = if a.is_ok() { b } else { a };
        match loser {
            Err(LockError::Held { message }) => {
                assert!(
                    message.starts_with("Could not acquire lock for stack"),
                    "{message}"
                );
                assert!(message.contains(&winners[0]), "{message}");
            }
            other => panic!("round {round}: loser got {other:?}"),
        }
    }
}

#[tokio::test]
async fn lock_takeover_is_one_conditional_put_never_a_delete() {
    // docs/state-and-lock.md, "Checks" statement 27: exactly one PutObject If-Match "old", no
    // DeleteObject. On a versioned bucket a delete would
    // leave a delete marker; a put leaves a version.
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    enable_versioning(&s3, &bucket).await;
    // No lifetime left: expired as soon as read (docs/state-and-lock.md, "Lock time is S3's").
    let past = now_ms() - 1_000;
    put_raw(
        &s3,
        &bucket,
        KEY,
        cdkd_lock_body("old@host:1", past, past, None),
    )
    .await;
    let held = locks(&s3, &bucket)
        .acquire("App", Some(REGION), "cdkd-flow:new", Some("destroy"))
        .await
        .unwrap();
    assert_eq!(version_counts(&s3, &bucket, KEY).await, (2, 0));
    let (_, etag) = get_raw(&s3, &bucket, KEY).await.unwrap();
    assert_eq!(etag, held.etag);
}

#[tokio::test]
async fn lock_takeover_expires_at_not_a_finite_number_counts_as_expired() {
    // docs/state-and-lock.md, "Checks" statement 29.
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    put_raw(
        &s3,
        &bucket,
        KEY,
        "{\n  \"owner\": \"x@h:1\",\n  \"timestamp\": 1,\n  \"expiresAt\": \"soon\"\n}",
    )
    .await;
    let held = locks(&s3, &bucket)
        .acquire("App", Some(REGION), "cdkd-flow:r1", None)
        .await
        .unwrap();
    assert_eq!(held.body.owner, "cdkd-flow:r1");
}

#[tokio::test]
async fn lock_body_written_by_us_has_cdkd_lockinfo_shape() {
    // docs/state-and-lock.md, "Checks" statement 24 and "lock.json" serialisation: keys owner, timestamp,
    // expiresAt, operation in that order, numbers,
    // 2-space pretty JSON, expiresAt - timestamp = TTL.
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let held = locks(&s3, &bucket)
        .acquire("App", Some(REGION), "cdkd-flow:run-1", Some("destroy"))
        .await
        .unwrap();
    let text = get_text(&s3, &bucket, KEY).await.unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let obj = v.as_object().unwrap();
    let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    assert_eq!(keys, ["owner", "timestamp", "expiresAt", "operation"]);
    let ts = obj["timestamp"].as_i64().unwrap();
    let exp = obj["expiresAt"].as_i64().unwrap();
    assert_eq!(exp - ts, 1_800_000);
    assert_eq!(
        text,
        cdkd_lock_body("cdkd-flow:run-1", ts, exp, Some("destroy"))
    );
    assert_eq!(held.body.owner, "cdkd-flow:run-1");
    // And our reader reads it back.
    let (info, etag) = store(&s3, &bucket)
        .get_lock("App", Some(REGION))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(info.owner, "cdkd-flow:run-1");
    assert_eq!(info.operation.as_deref(), Some("destroy"));
    assert_eq!(etag, held.etag);
}

#[tokio::test]
async fn lock_body_without_operation_omits_the_key() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    locks(&s3, &bucket)
        .acquire("App", Some(REGION), "cdkd-flow:run-2", None)
        .await
        .unwrap();
    let text = get_text(&s3, &bucket, KEY).await.unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["owner", "timestamp", "expiresAt"]);
}

#[tokio::test]
async fn lock_written_in_cdkd_shape_without_operation_is_read_and_holder_rendered() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let now = now_ms();
    put_raw(
        &s3,
        &bucket,
        KEY,
        cdkd_lock_body("alice@workstation:4242", now, now + 600_000, None),
    )
    .await;
    let (info, _) = store(&s3, &bucket)
        .get_lock("App", Some(REGION))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(info.owner, "alice@workstation:4242");
    assert_eq!(info.operation, None);
    let err = locks(&s3, &bucket)
        .acquire("App", Some(REGION), "cdkd-flow:run-3", Some("destroy"))
        .await
        .unwrap_err();
    let LockError::Held { message } = err else {
        panic!("{err:?}")
    };
    assert!(
        message.contains("held by alice@workstation:4242, since ")
            && within_a_second_of(&message, "10m0s"),
        "{message}"
    );
    assert!(!message.contains("operation:"), "{message}");
}

#[tokio::test]
async fn lock_acquire_over_live_lock_is_refused_and_leaves_it_untouched() {
    // docs/state-and-lock.md, "Checks" statement 25: no DELETE
    // and no second PUT (the version count stays 1).
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    enable_versioning(&s3, &bucket).await;
    let now = now_ms();
    let etag = put_raw(
        &s3,
        &bucket,
        KEY,
        cdkd_lock_body("bob@host:1", now, now + 600_000, Some("deploy")),
    )
    .await;
    let err = locks(&s3, &bucket)
        .acquire("App", Some(REGION), "cdkd-flow:run-4", None)
        .await
        .unwrap_err();
    let LockError::Held { message } = err else {
        panic!("{err:?}")
    };
    assert!(
        message.contains("— held by bob@host:1, operation: deploy, since ")
            && within_a_second_of(&message, "10m0s"),
        "{message}"
    );
    assert!(
        message.contains(&format!("--state-bucket {bucket}")),
        "{message}"
    );
    assert_eq!(get_raw(&s3, &bucket, KEY).await.unwrap().1, etag);
    assert_eq!(version_counts(&s3, &bucket, KEY).await, (1, 0));
}

#[tokio::test]
async fn lock_non_object_body_blocks_acquire_reads_as_no_lock_force_unlock_clears_it() {
    // docs/state-and-lock.md, "Checks" statement 26.
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    put_raw(&s3, &bucket, KEY, "42").await;
    let mgr = locks(&s3, &bucket);
    let err = mgr
        .acquire("App", Some(REGION), "cdkd-flow:run-5", None)
        .await
        .unwrap_err();
    let LockError::Held { message } = err else {
        panic!("{err:?}")
    };
    assert!(
        message.contains("another cdkd process holds it"),
        "{message}"
    );
    assert!(store(&s3, &bucket)
        .get_lock("App", Some(REGION))
        .await
        .unwrap()
        .is_none());
    assert!(mgr
        .force_release("App", Some(REGION))
        .await
        .unwrap()
        .is_none());
    assert!(get_raw(&s3, &bucket, KEY).await.is_none());
    mgr.acquire("App", Some(REGION), "cdkd-flow:run-5", None)
        .await
        .unwrap();
}

#[tokio::test]
async fn lock_renew_keeps_owner_timestamp_operation_and_extends_expiry() {
    // docs/state-and-lock.md, "Checks" statement 30.
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let mgr = locks(&s3, &bucket);
    let held = mgr
        .acquire("App", Some(REGION), "cdkd-flow:run-6", Some("export"))
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let renewed = mgr.renew(&held).await.unwrap();
    assert_ne!(renewed.etag, held.etag);
    assert_eq!(renewed.body.owner, held.body.owner);
    assert_eq!(renewed.body.timestamp, held.body.timestamp);
    assert_eq!(renewed.body.operation, held.body.operation);
    assert!(renewed.body.expires_at > held.body.expires_at);
    let (_, etag) = get_raw(&s3, &bucket, KEY).await.unwrap();
    assert_eq!(etag, renewed.etag);
    // The stale handle can no longer renew: the lock moved on.
    assert!(matches!(
        mgr.renew(&held).await,
        Err(LockError::Lost { .. })
    ));
}

#[tokio::test]
async fn lock_held_lock_round_trips_through_json() {
    // A workflow step carries the held lock in its output and renews from it.
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let mgr = locks(&s3, &bucket);
    let held = mgr
        .acquire("App", Some(REGION), "cdkd-flow:run-7", Some("destroy"))
        .await
        .unwrap();
    let carried: cdkd_aws::HeldLock =
        serde_json::from_str(&serde_json::to_string(&held).unwrap()).unwrap();
    assert_eq!(carried, held);
    mgr.renew(&carried).await.unwrap();
}

#[tokio::test]
async fn lock_renew_after_force_release_is_lost() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let mgr = locks(&s3, &bucket);
    let held = mgr
        .acquire("App", Some(REGION), "cdkd-flow:run-8", None)
        .await
        .unwrap();
    let info = mgr
        .force_release("App", Some(REGION))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(info.owner, "cdkd-flow:run-8");
    let err = mgr.renew(&held).await.unwrap_err();
    assert!(matches!(err, LockError::Lost { .. }), "{err:?}");
    assert!(
        get_raw(&s3, &bucket, KEY).await.is_none(),
        "renew must not resurrect the lock"
    );
}

#[tokio::test]
async fn lock_renew_after_takeover_is_lost_and_release_leaves_new_holders_lock() {
    // docs/state-and-lock.md, "Checks" statements 32 and 33.
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let short = locks(&s3, &bucket).with_ttl_ms(1);
    let old = short
        .acquire("App", Some(REGION), "cdkd-flow:old", None)
        .await
        .unwrap();
    // Its 1 ms is judged on S3's clock, which counts whole seconds (docs/state-and-lock.md
    // "Lock time is S3's"): a second later it has expired.
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    let new = locks(&s3, &bucket)
        .acquire("App", Some(REGION), "cdkd-flow:new", Some("destroy"))
        .await
        .unwrap();
    let err = short.renew(&old).await.unwrap_err();
    assert!(matches!(err, LockError::Lost { .. }), "{err:?}");
    assert_eq!(short.release(&old).await.unwrap(), ReleaseOutcome::NotOurs);
    let (_, etag) = get_raw(&s3, &bucket, KEY).await.unwrap();
    assert_eq!(etag, new.etag, "the new holder's lock must survive");
}

#[tokio::test]
async fn lock_release_deletes_own_lock_and_missing_lock_is_already_gone() {
    // docs/state-and-lock.md, "Checks" statement 33: DELETE If-Match own ETag; 404 is success.
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let mgr = locks(&s3, &bucket);
    let held = mgr
        .acquire("App", Some(REGION), "cdkd-flow:run-9", None)
        .await
        .unwrap();
    assert_eq!(mgr.release(&held).await.unwrap(), ReleaseOutcome::Released);
    assert!(get_raw(&s3, &bucket, KEY).await.is_none());
    assert_eq!(
        mgr.release(&held).await.unwrap(),
        ReleaseOutcome::AlreadyGone
    );
}

#[tokio::test]
async fn lock_release_never_deletes_a_lock_rewritten_by_another_holder() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let mgr = locks(&s3, &bucket);
    let held = mgr
        .acquire("App", Some(REGION), "cdkd-flow:run-10", None)
        .await
        .unwrap();
    // Someone force-unlocks and a cdkd process acquires in between.
    mgr.force_release("App", Some(REGION)).await.unwrap();
    let now = now_ms();
    put_raw(
        &s3,
        &bucket,
        KEY,
        cdkd_lock_body("carol@laptop:7", now, now + 1_800_000, Some("deploy")),
    )
    .await;
    assert_eq!(mgr.release(&held).await.unwrap(), ReleaseOutcome::NotOurs);
    let text = get_text(&s3, &bucket, KEY).await.unwrap();
    assert!(text.contains("carol@laptop:7"));
}

#[tokio::test]
async fn lock_force_release_of_legacy_ref_deletes_legacy_key_unconditionally() {
    // docs/state-and-lock.md, "Checks" statement 34.
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let now = now_ms();
    put_raw(
        &s3,
        &bucket,
        "cdkd/App/lock.json",
        cdkd_lock_body("dave@h:9", now, now + 600_000, Some("deploy")),
    )
    .await;
    put_raw(
        &s3,
        &bucket,
        KEY,
        cdkd_lock_body("erin@h:9", now, now + 600_000, None),
    )
    .await;
    let info = locks(&s3, &bucket)
        .force_release("App", None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(info.owner, "dave@h:9");
    assert_eq!(info.operation.as_deref(), Some("deploy"));
    assert!(get_raw(&s3, &bucket, "cdkd/App/lock.json").await.is_none());
    assert!(
        get_raw(&s3, &bucket, KEY).await.is_some(),
        "the region lock is another key"
    );
}

#[tokio::test]
async fn lock_force_release_of_missing_lock_is_success() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    assert!(locks(&s3, &bucket)
        .force_release("App", Some(REGION))
        .await
        .unwrap()
        .is_none());
}

#[tokio::test]
async fn lock_acquire_in_missing_bucket_is_an_aws_error_not_contention() {
    let s3 = s3().await;
    let err = locks(&s3, &unique_bucket_name("missing"))
        .acquire("App", Some(REGION), "cdkd-flow:run-11", None)
        .await
        .unwrap_err();
    match err {
        LockError::Aws { message, .. } => assert!(message.contains("NoSuchBucket"), "{message}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn lock_release_purges_noncurrent_versions_left_by_renewals() {
    // docs/state-and-lock.md, "Renewal" and "Release": each renewal leaves a version on a versioned bucket;
    // release purges the key's noncurrent versions (the current row, a delete marker, stays).
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    enable_versioning(&s3, &bucket).await;
    let mgr = locks(&s3, &bucket);
    let held = mgr
        .acquire("App", Some(REGION), "cdkd-flow:run-12", None)
        .await
        .unwrap();
    let held = mgr.renew(&held).await.unwrap();
    let held = mgr.renew(&held).await.unwrap();
    assert_eq!(version_counts(&s3, &bucket, KEY).await, (3, 0));
    assert_eq!(mgr.release(&held).await.unwrap(), ReleaseOutcome::Released);
    assert_eq!(version_counts(&s3, &bucket, KEY).await, (0, 1));
}

#[tokio::test]
async fn lock_release_on_a_bucket_without_versioning_lists_no_versions() {
    // A delete answered without a delete marker or version id: the bucket never kept
    // versions, so there is nothing to purge and ListObjectVersions is not sent
    // (docs/state-and-lock.md, "Renewal").
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let mgr = locks(&s3, &bucket);
    let held = mgr
        .acquire("App", Some(REGION), "cdkd-flow:run-13", None)
        .await
        .unwrap();
    let held = mgr.renew(&held).await.unwrap();
    cdkd_tests::export_bench::reset_requests().await;
    assert_eq!(mgr.release(&held).await.unwrap(), ReleaseOutcome::Released);
    let sent: Vec<String> = cdkd_tests::export_bench::requests()
        .await
        .into_iter()
        .map(|r| r.action)
        .collect();
    assert_eq!(sent, vec!["DeleteObject If-Match".to_string()], "{sent:?}");
    assert_eq!(version_counts(&s3, &bucket, KEY).await, (0, 0));
}

#[tokio::test]
async fn lock_force_release_purges_noncurrent_versions_and_spares_other_keys() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    enable_versioning(&s3, &bucket).await;
    let now = now_ms();
    for i in 0..3 {
        put_raw(
            &s3,
            &bucket,
            KEY,
            cdkd_lock_body(&format!("o{i}@h:1"), now, now + 600_000, None),
        )
        .await;
    }
    // A key that shares the lock key as a prefix is not the lock key.
    put_raw(&s3, &bucket, "cdkd/App/us-east-1/lock.json.bak", "x").await;
    put_raw(&s3, &bucket, "cdkd/App/us-east-1/lock.json.bak", "y").await;
    let info = locks(&s3, &bucket)
        .force_release("App", Some(REGION))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(info.owner, "o2@h:1");
    assert_eq!(version_counts(&s3, &bucket, KEY).await, (0, 1));
    assert_eq!(
        version_counts(&s3, &bucket, "cdkd/App/us-east-1/lock.json.bak").await,
        (2, 0)
    );
}

#[tokio::test]
async fn lock_deleted_only_by_holder_delete_read_leaves_a_lock_renewed_since_it_was_read() {
    // docs/state-and-lock.md, "Force-unlock: only the lock that was read": the force paths delete exactly the object they read.
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let mgr = locks(&s3, &bucket);
    let held = mgr
        .acquire("App", Some(REGION), "cdkd-flow:run-13", Some("export"))
        .await
        .unwrap();
    let read = mgr.read_object("App", Some(REGION)).await.unwrap().unwrap();
    assert_eq!(read.etag, held.etag);
    let renewed = mgr.renew(&held).await.unwrap();
    assert_eq!(
        mgr.delete_read("App", Some(REGION), &read).await.unwrap(),
        cdkd_aws::ReadLockOutcome::Changed
    );
    assert!(matches!(
        mgr.take_over_read("App", Some(REGION), &read, "me@host:1", None)
            .await
            .unwrap(),
        Err(cdkd_aws::ReadLockOutcome::Changed)
    ));
    let (_, etag) = get_raw(&s3, &bucket, KEY).await.unwrap();
    assert_eq!(etag, renewed.etag, "the renewed lock is kept");
    // Released since it was read: nothing to delete.
    let read = mgr.read_object("App", Some(REGION)).await.unwrap().unwrap();
    assert_eq!(
        mgr.release(&renewed).await.unwrap(),
        ReleaseOutcome::Released
    );
    assert_eq!(
        mgr.delete_read("App", Some(REGION), &read).await.unwrap(),
        cdkd_aws::ReadLockOutcome::Gone
    );
}

#[tokio::test]
async fn lock_deleted_only_by_holder_take_over_read_replaces_exactly_that_lock() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let mgr = locks(&s3, &bucket);
    let held = mgr
        .acquire("App", Some(REGION), "cdkd-flow:run-14", Some("export"))
        .await
        .unwrap();
    let read = mgr.read_object("App", Some(REGION)).await.unwrap().unwrap();
    let mine = mgr
        .take_over_read(
            "App",
            Some(REGION),
            &read,
            "me@host:1",
            Some("state-orphan"),
        )
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(
        mgr.renew(&held).await,
        Err(LockError::Lost { .. })
    ));
    assert_eq!(mgr.release(&held).await.unwrap(), ReleaseOutcome::NotOurs);
    assert_eq!(mgr.release(&mine).await.unwrap(), ReleaseOutcome::Released);
    assert!(get_raw(&s3, &bucket, KEY).await.is_none());
}

// ------------------------------------------- lock time is S3's (docs/state-and-lock.md, "Lock time is S3's")

const TWO_HOURS: i64 = 7_200_000;

/// A lock manager of a process whose clock is `skew_ms` off (the emulator's is right).
fn skewed_locks(s3: &aws_sdk_s3::Client, bucket: &str, skew_ms: i64) -> cdkd_aws::LockManager {
    cdkd_aws::LockManager::new(
        store(s3, bucket).with_clock(cdkd_aws::S3Clock::skewed(skew_ms)),
        None,
    )
}

#[tokio::test]
async fn lock_clock_step_two_hours_ahead_does_not_take_over_a_fresh_lock() {
    // Statement 47, in a step: a lock taken a second ago by cdkd (right clock), and one by
    // a cdkd whose clock is 2 hours behind or ahead, are live for a step 2 hours ahead.
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let ahead = skewed_locks(&s3, &bucket, TWO_HOURS);
    for writer_off in [0, -TWO_HOURS, TWO_HOURS] {
        let t = now_ms() + writer_off;
        let etag = put_raw(
            &s3,
            &bucket,
            KEY,
            cdkd_lock_body("someone@otherhost:1234", t, t + 1_800_000, Some("deploy")),
        )
        .await;
        let err = ahead
            .acquire("App", Some(REGION), "cdkd-flow:run-ahead", Some("destroy"))
            .await
            .unwrap_err();
        let LockError::Held { message } = err else {
            panic!("{writer_off}: {err:?}")
        };
        assert!(
            message.contains("held by someone@otherhost:1234, operation: deploy")
                && within_a_second_of(&message, "30m0s"),
            "{writer_off}: {message}"
        );
        assert!(matches!(
            ahead
                .force_release_detailed("App", Some(REGION), true, true, None)
                .await
                .unwrap(),
            cdkd_aws::ForceReleased::Live(_)
        ));
        assert_eq!(get_raw(&s3, &bucket, KEY).await.unwrap().1, etag);
    }
}

#[tokio::test]
async fn lock_clock_two_hours_behind_takes_s3_time_and_is_not_born_expired() {
    // Statement 49: the lock a process 2 hours behind (or ahead) takes carries S3's clock;
    // a right-clock process, and cdkd's own rule on a right clock, see it live.
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    for (i, skew) in [-TWO_HOURS, TWO_HOURS].into_iter().enumerate() {
        let stack = format!("Skew{i}");
        let held = skewed_locks(&s3, &bucket, skew)
            .acquire(&stack, Some(REGION), "cdkd-flow:run-skewed", Some("export"))
            .await
            .unwrap();
        let now = now_ms();
        assert!(
            (held.body.timestamp - now).abs() < 5_000,
            "{skew}: timestamp {} against S3's {now}",
            held.body.timestamp
        );
        assert_eq!(held.body.expires_at - held.body.timestamp, 1_800_000);
        let err = locks(&s3, &bucket)
            .acquire(&stack, Some(REGION), "cdkd-flow:run-right", Some("destroy"))
            .await
            .unwrap_err();
        assert!(matches!(err, LockError::Held { .. }), "{skew}: {err:?}");
        // Renewed from the skewed process: S3's clock again.
        let renewed = skewed_locks(&s3, &bucket, skew).renew(&held).await.unwrap();
        assert!((renewed.body.expires_at - now - 1_800_000).abs() < 5_000);
    }
}

#[tokio::test]
async fn lock_clock_a_writer_two_hours_behind_is_not_taken_over_by_a_right_clock() {
    // Statement 48, in a step: cdkd 2 hours behind wrote a lock whose expiresAt is 90
    // minutes past; a right-clock acquire refuses and leaves it.
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let t = now_ms() - TWO_HOURS;
    let etag = put_raw(
        &s3,
        &bucket,
        KEY,
        cdkd_lock_body("someone@otherhost:1234", t, t + 1_800_000, Some("deploy")),
    )
    .await;
    let err = locks(&s3, &bucket)
        .acquire("App", Some(REGION), "cdkd-flow:run-right", Some("destroy"))
        .await
        .unwrap_err();
    assert!(matches!(err, LockError::Held { .. }), "{err:?}");
    assert_eq!(get_raw(&s3, &bucket, KEY).await.unwrap().1, etag);
}
