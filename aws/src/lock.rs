//! The fenced stack lock (docs/state-and-lock.md §6): cdkd's `lock.json`, acquired
//! with `If-None-Match: *`, an expired lock taken over with `PutObject If-Match: <its
//! ETag>` (never delete-then-put), renewed with `If-Match: <our ETag>`, released with a
//! conditional DELETE. A held lock is plain data (stack, region, ETag, body) so workflow
//! steps can carry it in their output.

use cdkd_core::contention::{contention_message, ContentionContext, Subject};
use cdkd_core::keys;
use cdkd_core::lock::{is_expired, is_own_body, parse_lock, LockBody, LockInfo, LOCK_TTL_MS};
use cdkd_core::text::flatten_str;
use serde::{Deserialize, Serialize};

use crate::s3err::Failure;
use crate::store::{now_ms, Precondition, StateStore, StoreError};

/// Errors of the lock protocol. Every message is one line.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another holder has a live lock (or its lock cannot be taken over). The message is
    /// cdkd's contention refusal: it names the holder, the operation and the expiry.
    #[error("{message}")]
    Held { message: String },
    /// The lock this process held is gone or belongs to someone else now: stop before
    /// touching anything, and never delete the lock at the end.
    #[error("Lost the lock for stack '{stack}' ({region}): {reason}. Another process may now be writing to this stack.")]
    Lost {
        stack: String,
        region: String,
        reason: String,
    },
    /// AWS answered with an error the protocol does not interpret.
    #[error("Failed to {action} lock for stack '{stack}' ({region}): {message}")]
    Aws {
        action: &'static str,
        stack: String,
        region: String,
        message: String,
    },
}

/// A lock this process holds: what a workflow step carries in its output and passes to
/// the next `renew` / `release`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HeldLock {
    pub stack: String,
    /// `None`: the legacy lock key `<prefix>/<stack>/lock.json`.
    pub region: Option<String>,
    /// The quoted ETag of the body this process last wrote.
    pub etag: String,
    #[serde(with = "body_wire")]
    pub body: LockBody,
}

/// `LockBody` in a held lock's JSON: `{owner, timestamp, expiresAt, operation?}`.
mod body_wire {
    use cdkd_core::lock::LockBody;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Wire {
        owner: String,
        timestamp: i64,
        expires_at: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        operation: Option<String>,
    }

    pub fn serialize<S: Serializer>(b: &LockBody, s: S) -> Result<S::Ok, S::Error> {
        Wire {
            owner: b.owner.clone(),
            timestamp: b.timestamp,
            expires_at: b.expires_at,
            operation: b.operation.clone(),
        }
        .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<LockBody, D::Error> {
        let w = Wire::deserialize(d)?;
        Ok(LockBody {
            owner: w.owner,
            timestamp: w.timestamp,
            expires_at: w.expires_at,
            operation: w.operation,
        })
    }
}

/// What `release` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReleaseOutcome {
    /// Our lock was deleted.
    Released,
    /// The lock was already gone (404).
    AlreadyGone,
    /// The lock is someone else's now (412, or a 403/501 re-read showed another body):
    /// it was left in place.
    NotOurs,
}

/// What `force_release_detailed` found before deleting.
#[derive(Debug, Clone)]
pub enum ForceReleased {
    /// A readable lock (its holder, sanitised).
    Held(Box<LockInfo>),
    /// An object that is not a readable lock (or could not be read); deleted anyway.
    Unreadable,
    /// No lock object.
    Absent,
}

/// The lock protocol over one bucket and prefix.
#[derive(Debug, Clone)]
pub struct LockManager {
    pub store: StateStore,
    pub ttl_ms: i64,
    /// The caller's `--profile`, for the recovery command of the contention refusal.
    pub profile: Option<String>,
}

fn region_label(region: Option<&str>) -> String {
    match region {
        Some(r) => flatten_str(r),
        None => "legacy".into(),
    }
}

impl LockManager {
    /// A lock manager with cdkd's 30-minute TTL.
    pub fn new(store: StateStore, profile: Option<String>) -> Self {
        LockManager {
            store,
            ttl_ms: LOCK_TTL_MS,
            profile,
        }
    }

    /// The same manager with another TTL (tests; must be positive).
    pub fn with_ttl_ms(mut self, ttl_ms: i64) -> Self {
        self.ttl_ms = ttl_ms.max(1);
        self
    }

    fn key(&self, stack: &str, region: Option<&str>) -> String {
        keys::lock_key(&self.store.prefix, stack, region)
    }

    fn aws(
        &self,
        action: &'static str,
        stack: &str,
        region: Option<&str>,
        f: Failure,
    ) -> LockError {
        LockError::Aws {
            action,
            stack: flatten_str(stack),
            region: region_label(region),
            message: f.message,
        }
    }

    fn held(&self, stack: &str, region: Option<&str>, info: Option<&LockInfo>) -> LockError {
        let ctx = ContentionContext {
            subject: Subject::Stack,
            stack,
            region,
            profile: self.profile.as_deref(),
            bucket: Some(self.store.bucket.as_str()),
            prefix: self.store.prefix.as_str(),
        };
        LockError::Held {
            message: contention_message(&ctx, info, now_ms()),
        }
    }

    /// Reads the lock (bytes parsed tolerantly) with its ETag. `Ok(None)`: no object.
    /// The inner `Option` is `None` when the body is not a readable JSON object.
    async fn read(
        &self,
        stack: &str,
        region: Option<&str>,
    ) -> Result<Option<(Option<LockInfo>, String)>, StoreError> {
        let Some((bytes, etag)) = self.store.get_raw(&self.key(stack, region)).await? else {
            return Ok(None);
        };
        Ok(Some((parse_lock(&bytes).ok().flatten(), etag)))
    }

    /// The contention refusal, naming whoever holds the lock now (read best-effort).
    async fn held_now(&self, stack: &str, region: Option<&str>) -> LockError {
        let info = match self.read(stack, region).await {
            Ok(Some((info, _))) => info,
            _ => None,
        };
        self.held(stack, region, info.as_ref())
    }

    /// Acquires the lock of `(stack, region)` for `owner` (docs/state-and-lock.md §6.1-6.3):
    /// `If-None-Match: *`; when a lock exists and has expired, replaces it with `PUT If-Match: <its
    /// ETag>`. Contention is `LockError::Held` with cdkd's refusal message.
    pub async fn acquire(
        &self,
        stack: &str,
        region: Option<&str>,
        owner: &str,
        operation: Option<&str>,
    ) -> Result<HeldLock, LockError> {
        let key = self.key(stack, region);
        // A lock that vanishes between our 412 and our read is retried a few times.
        for _ in 0..3 {
            let body = LockBody::new(owner, now_ms(), self.ttl_ms, operation.map(str::to_owned));
            let bytes = body.to_json().into_bytes();
            match self
                .store
                .put_raw_conditional(&key, bytes, &Precondition::IfNoneMatch)
                .await
            {
                Ok(etag) => return Ok(self.held_lock(stack, region, etag, body)),
                Err(f) if f.is_precondition_failed() => {}
                Err(f) => return Err(self.aws("acquire", stack, region, f)),
            }
            let current = self.read(stack, region).await.map_err(|e| LockError::Aws {
                action: "acquire",
                stack: flatten_str(stack),
                region: region_label(region),
                message: flatten_str(&e.to_string()),
            })?;
            let Some((info, etag)) = current else {
                continue; // released in between: try to create it again
            };
            let Some(info) = info else {
                // Not a readable lock object: only force-unlock clears it.
                return Err(self.held(stack, region, None));
            };
            let now = now_ms();
            if !is_expired(&info, now) {
                return Err(self.held(stack, region, Some(&info)));
            }
            return self
                .take_over(stack, region, owner, operation, &info, &etag)
                .await;
        }
        Err(self.held_now(stack, region).await)
    }

    /// `acquire`, and when a lock is held, replaces it if its owner is `ended` (a run the
    /// caller knows has ended, docs/export.md §10.8) or `owner` itself (a retried step),
    /// in one conditional write on the ETag read: a holder that renewed or released in
    /// between keeps its lock.
    pub async fn acquire_replacing(
        &self,
        stack: &str,
        region: Option<&str>,
        owner: &str,
        operation: Option<&str>,
        ended: Option<&str>,
    ) -> Result<HeldLock, LockError> {
        let held = match self.acquire(stack, region, owner, operation).await {
            Err(LockError::Held { message }) => message,
            other => return other,
        };
        let current = self.read(stack, region).await.map_err(|e| LockError::Aws {
            action: "acquire",
            stack: flatten_str(stack),
            region: region_label(region),
            message: flatten_str(&e.to_string()),
        })?;
        match current {
            Some((Some(info), etag))
                if info.owner == owner || Some(info.owner.as_str()) == ended =>
            {
                self.take_over(stack, region, owner, operation, &info, &etag)
                    .await
            }
            _ => Err(LockError::Held { message: held }),
        }
    }

    /// Replaces the expired lock read with `etag` in one conditional write.
    async fn take_over(
        &self,
        stack: &str,
        region: Option<&str>,
        owner: &str,
        operation: Option<&str>,
        expired: &LockInfo,
        etag: &str,
    ) -> Result<HeldLock, LockError> {
        let key = self.key(stack, region);
        let body = LockBody::new(owner, now_ms(), self.ttl_ms, operation.map(str::to_owned));
        let bytes = body.to_json().into_bytes();
        match self
            .store
            .put_raw_conditional(&key, bytes, &Precondition::IfMatch(etag.to_owned()))
            .await
        {
            Ok(new_etag) => {
                tracing::warn!(
                    "Took over an EXPIRED lock for stack: {} ({}, owner: {})",
                    flatten_str(stack),
                    region_label(region),
                    flatten_str(&expired.owner)
                );
                // No purge here: the release (or a force-unlock) purges every
                // noncurrent version of the key, the expired holder's included.
                Ok(self.held_lock(stack, region, new_etag, body))
            }
            // Someone renewed, released or took it over first; or the endpoint will not
            // evaluate the condition: never retry without it.
            Err(f)
                if f.is_precondition_failed()
                    || f.is_no_such_key()
                    || f.is_condition_unsupported() =>
            {
                if f.is_condition_unsupported() {
                    tracing::warn!(
                        "cannot take over the expired lock of stack {} ({}): the endpoint did not evaluate the condition ({})",
                        flatten_str(stack),
                        region_label(region),
                        f.message
                    );
                }
                Err(self.held_now(stack, region).await)
            }
            Err(f) => Err(self.aws("acquire", stack, region, f)),
        }
    }

    /// Purges the lock key's noncurrent versions (renewals pile them up on a versioned
    /// bucket); never fails the caller.
    async fn purge(&self, stack: &str, region: Option<&str>, warn: bool) {
        if let Err(e) = self
            .store
            .purge_noncurrent_versions(&self.key(stack, region))
            .await
        {
            if warn {
                tracing::warn!("could not purge old versions of the lock: {e}");
            } else {
                tracing::debug!("could not purge old versions of the lock: {e}");
            }
        }
    }

    fn held_lock(
        &self,
        stack: &str,
        region: Option<&str>,
        etag: String,
        body: LockBody,
    ) -> HeldLock {
        HeldLock {
            stack: stack.to_owned(),
            region: region.map(str::to_owned),
            etag,
            body,
        }
    }

    fn lost(&self, held: &HeldLock, reason: &str) -> LockError {
        LockError::Lost {
            stack: flatten_str(&held.stack),
            region: region_label(held.region.as_deref()),
            reason: reason.to_owned(),
        }
    }

    /// Renews a held lock (docs/state-and-lock.md §6.4): same owner, timestamp and operation,
    /// `expiresAt = now + TTL`, written `If-Match` our last ETag. A 412 whose stored body is
    /// exactly the one this attempt wrote is adopted; any other 412, or a 404, is `Lost`.
    pub async fn renew(&self, held: &HeldLock) -> Result<HeldLock, LockError> {
        let region = held.region.as_deref();
        let key = self.key(&held.stack, region);
        let body = held.body.renewed(now_ms(), self.ttl_ms);
        let bytes = body.to_json().into_bytes();
        match self
            .store
            .put_raw_conditional(&key, bytes, &Precondition::IfMatch(held.etag.clone()))
            .await
        {
            Ok(etag) => Ok(self.held_lock(&held.stack, region, etag, body)),
            Err(f) if f.is_no_such_key() => Err(self.lost(held, "the lock object is gone")),
            Err(f) if f.is_precondition_failed() => match self.read(&held.stack, region).await {
                Ok(Some((Some(info), etag))) if is_own_body(&info, &body) => {
                    Ok(self.held_lock(&held.stack, region, etag, body))
                }
                Ok(None) => Err(self.lost(held, "the lock object is gone")),
                Ok(Some(_)) => Err(self.lost(held, "another process holds it now")),
                Err(e) => Err(LockError::Aws {
                    action: "renew",
                    stack: flatten_str(&held.stack),
                    region: region_label(region),
                    message: flatten_str(&e.to_string()),
                }),
            },
            Err(f) => Err(self.aws("renew", &held.stack, region, f)),
        }
    }

    /// Releases a held lock (docs/state-and-lock.md §6.5): `DELETE If-Match` our ETag. Another
    /// holder's lock is never deleted: a 412 leaves it (`NotOurs`); a 404 is `AlreadyGone`.
    pub async fn release(&self, held: &HeldLock) -> Result<ReleaseOutcome, LockError> {
        let region = held.region.as_deref();
        let key = self.key(&held.stack, region);
        match self.store.delete_raw_strict(&key, Some(&held.etag)).await {
            Ok(()) => {
                self.purge(&held.stack, region, false).await;
                Ok(ReleaseOutcome::Released)
            }
            Err(f) if f.is_no_such_key() => Ok(ReleaseOutcome::AlreadyGone),
            Err(f) if f.is_precondition_failed() => {
                tracing::warn!(
                    "the lock of stack {} ({}) is held by another process now; left it in place",
                    flatten_str(&held.stack),
                    region_label(region)
                );
                Ok(ReleaseOutcome::NotOurs)
            }
            Err(f) if f.is_condition_unsupported() => {
                // Delete unconditionally only if the body still has our owner and timestamp.
                match self.read(&held.stack, region).await {
                    Ok(Some((Some(info), _)))
                        if info.owner == held.body.owner
                            && info.timestamp.as_ref().and_then(|v| v.as_f64())
                                == Some(held.body.timestamp as f64) =>
                    {
                        self.store
                            .delete_raw(&key, None)
                            .await
                            .map_err(|f| self.aws("release", &held.stack, region, f))?;
                        Ok(ReleaseOutcome::Released)
                    }
                    Ok(None) => Ok(ReleaseOutcome::AlreadyGone),
                    Ok(Some(_)) => Ok(ReleaseOutcome::NotOurs),
                    Err(e) => Err(LockError::Aws {
                        action: "release",
                        stack: flatten_str(&held.stack),
                        region: region_label(region),
                        message: flatten_str(&e.to_string()),
                    }),
                }
            }
            Err(f) => Err(self.aws("release", &held.stack, region, f)),
        }
    }

    /// Deletes the lock of `(stack, region)` unconditionally (docs/state-and-lock.md §6.6; `None`
    /// region: the legacy key) and returns what was there, when it could be read (a read failure
    /// or an unreadable body never stops the delete).
    pub async fn force_release(
        &self,
        stack: &str,
        region: Option<&str>,
    ) -> Result<Option<LockInfo>, LockError> {
        Ok(match self.force_release_detailed(stack, region).await? {
            ForceReleased::Held(info) => Some(*info),
            ForceReleased::Unreadable | ForceReleased::Absent => None,
        })
    }

    /// `force_release`, saying whether a lock object was there at all.
    pub async fn force_release_detailed(
        &self,
        stack: &str,
        region: Option<&str>,
    ) -> Result<ForceReleased, LockError> {
        let found = match self.read(stack, region).await {
            Ok(Some((Some(info), _))) => ForceReleased::Held(Box::new(info)),
            Ok(Some((None, _))) => ForceReleased::Unreadable,
            Ok(None) => ForceReleased::Absent,
            // A read failure is ignored: the delete below is what matters.
            Err(_) => ForceReleased::Unreadable,
        };
        match &found {
            ForceReleased::Held(i) => tracing::warn!(
                "Force releasing lock for stack: {} ({}), owner: {}{}, expired: {}",
                flatten_str(stack),
                region_label(region),
                flatten_str(&i.owner),
                i.operation
                    .as_deref()
                    .map(|o| format!(", operation: {}", flatten_str(o)))
                    .unwrap_or_default(),
                is_expired(i, now_ms())
            ),
            _ => tracing::debug!(
                "no readable lock for stack {} ({}); deleting the object regardless",
                flatten_str(stack),
                region_label(region)
            ),
        }
        self.store
            .delete_raw(&self.key(stack, region), None)
            .await
            .map_err(|f| self.aws("force-release", stack, region, f))?;
        self.purge(stack, region, true).await;
        Ok(found)
    }
}
