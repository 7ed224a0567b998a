//! The locks a run holds across its steps (docs/state-and-lock.md, "state.json"): every step after
//! the one that took them renews them first (a lost lock stops the run before any
//! write), and the last step, or the abort path, releases them.

use cdkd_aws::{HeldLock, LockManager};
use cdkd_core::text::flatten_str;

use crate::error::StepError;

/// Renews every held lock, in order.
pub async fn renew_all(locks: &LockManager, held: &[HeldLock]) -> Result<Vec<HeldLock>, StepError> {
    let mut out = Vec::with_capacity(held.len());
    for h in held {
        out.push(renew(locks, h).await?);
    }
    Ok(out)
}

/// Which of a run's locks a step renews (docs/state-and-lock.md, "Renewal",
/// docs/export.md, "The lock (export-lock)"): the renewal is also the fence that stops a run whose lock was taken over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fence<'a> {
    /// Every lock: a step about to write every stack's state (the cleanup).
    All,
    /// The lock of the stack the step writes to (its state or its CloudFormation stack),
    /// and every other lock whose renewal is due.
    Stack(&'a str),
    /// Only the locks whose renewal is due: a step that writes neither state nor
    /// CloudFormation (a poll, which writes its run's own `progress.json`).
    DueOnly,
}

/// Renews the held locks `fence` names, in order, and the others whose renewal is due at
/// `now_ms` (the step's clock); the others are kept as they are.
pub async fn renew_fenced(
    locks: &LockManager,
    held: &[HeldLock],
    fence: Fence<'_>,
    now_ms: i64,
) -> Result<Vec<HeldLock>, StepError> {
    // The bodies carry S3's clock (docs/state-and-lock.md, "Lock time is S3's"); `now_ms` is the step's.
    let now_s3 = match held.first() {
        Some(h) => locks.s3_time_of(now_ms, h).await,
        None => now_ms,
    };
    let mut out = Vec::with_capacity(held.len());
    for h in held {
        let needed = match fence {
            Fence::All => true,
            Fence::Stack(stack) => h.stack == stack,
            Fence::DueOnly => false,
        } || cdkd_core::lock::renewal_due(h.body.expires_at, now_s3, locks.ttl_ms);
        out.push(if needed {
            renew(locks, h).await?
        } else {
            h.clone()
        });
    }
    Ok(out)
}

/// Renews a held lock. A step that renewed and then died (a Lambda timeout, a lost
/// answer) leaves its retry holding the previous ETag: the lock is still this run's when
/// its owner (`cdkd-flow:<run-id>`) and acquisition timestamp are the ones the run
/// wrote, and then its current ETag is adopted. Anything else is a lost lock, named by
/// what stands there now.
pub async fn renew(locks: &cdkd_aws::LockManager, h: &HeldLock) -> Result<HeldLock, StepError> {
    match locks.renew(h).await {
        Ok(next) => Ok(next),
        Err(cdkd_aws::LockError::Lost { .. }) => {
            let current = locks.check_own(h).await?;
            Ok(locks.renew(&current).await?)
        }
        Err(e) => Err(e.into()),
    }
}

/// The fence of a write to a stack's record (docs/state-and-lock.md, "Renewal", docs/destroy.md
/// "Crash safety: state written as it goes"): read the stack's lock just before the write and go on only when it is still
/// the one this run acquired (its current ETag adopted). A lock removed (a force-unlock)
/// or taken by another process stops the step with `LockLost`, naming the new holder,
/// before it writes.
pub async fn ensure_own(locks: &LockManager, h: &HeldLock) -> Result<HeldLock, StepError> {
    Ok(locks.check_own(h).await?)
}

/// Releases every lock the run holds: first with the ETag the run last wrote (one
/// request when nothing renewed it since). A lock renewed by a step whose answer was
/// lost (or by the step whose failure the abort path handles) carries a newer ETag than
/// `held`, and the delete is refused: it is still ours when its owner and acquisition
/// timestamp are the ones we wrote, and then it is released with its current ETag.
/// Another holder's lock is left in place.
pub async fn release_all(locks: &LockManager, held: &[HeldLock]) {
    for h in held {
        match locks.release_quietly(h).await {
            Ok(cdkd_aws::ReleaseOutcome::Released) => continue,
            // Never taken for a success: someone removed it while the run held it, or an
            // earlier attempt of this step released it (docs/state-and-lock.md, "Release").
            Ok(cdkd_aws::ReleaseOutcome::AlreadyGone) => {
                tracing::warn!(
                    "the lock of stack '{}' was already gone when the run released it",
                    flatten_str(&h.stack)
                );
                continue;
            }
            Ok(cdkd_aws::ReleaseOutcome::NotOurs) | Err(_) => {}
        }
        let current = match locks.store.get_lock(&h.stack, h.region.as_deref()).await {
            Ok(Some((info, etag))) => {
                if !cdkd_core::lock::is_same_acquisition(&info, &h.body) {
                    tracing::warn!(
                        "the lock of stack '{}' is held by another process now; left it in place",
                        flatten_str(&h.stack)
                    );
                    continue;
                }
                HeldLock { etag, ..h.clone() }
            }
            Ok(None) => continue,
            // Unreadable: the conditional delete of what we hold still refuses another's.
            Err(_) => h.clone(),
        };
        if let Err(e) = locks.release(&current).await {
            tracing::warn!("{e}");
        }
    }
}
