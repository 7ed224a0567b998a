//! The fence of a record write (docs/state-and-lock.md, "Renewal", "Fencing a write";
//! statement 45b): a holder reads its lock just before it writes a record and goes on
//! only when the stored lock is the one it acquired.

use cdkd_aws::LockError;
use cdkd_tests::*;

const REGION: &str = "us-east-1";
const KEY: &str = "cdkd/App/us-east-1/lock.json";

#[tokio::test]
async fn lock_fence_statement_45b_keeps_a_renewed_lock_and_names_who_took_it_or_that_it_was_removed(
) {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let mgr = locks(&s3, &bucket);
    let held = mgr
        .acquire("App", Some(REGION), "cdkd-flow:run-f", Some("destroy"))
        .await
        .unwrap();
    // Still ours, at a newer ETag (a renewal whose answer was lost): adopted.
    let renewed = mgr.renew(&held).await.unwrap();
    assert_ne!(renewed.etag, held.etag);
    let checked = mgr.check_own(&held).await.unwrap();
    assert_eq!(checked.etag, renewed.etag);
    assert_eq!(checked.body, held.body);

    // Removed (a force-unlock): lost, saying so; nothing written.
    mgr.force_release("App", Some(REGION)).await.unwrap();
    let err = mgr.check_own(&held).await.unwrap_err();
    assert!(matches!(err, LockError::Lost { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "Lost the lock for stack 'App' (us-east-1): it was removed (a force-unlock, or by hand). Another process may now be writing to this stack."
    );
    assert!(get_raw(&s3, &bucket, KEY).await.is_none());

    // Taken by another process: lost, naming it; its lock is left as it is.
    let now = now_ms();
    put_raw(
        &s3,
        &bucket,
        KEY,
        cdkd_lock_body("bob@host:1", now, now + 600_000, Some("deploy")).into_bytes(),
    )
    .await;
    let err = mgr.check_own(&held).await.unwrap_err().to_string();
    assert!(
        err.starts_with("Lost the lock for stack 'App' (us-east-1): it is held by bob@host:1, operation: deploy, since "),
        "{err}"
    );
    assert!(get_text(&s3, &bucket, KEY)
        .await
        .unwrap()
        .contains("bob@host:1"));
}
