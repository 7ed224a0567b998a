//! The fenced stack lock (docs/state-and-lock.md, "The lock protocol"): cdkd's `lock.json`, acquired
//! with `If-None-Match: *`, an expired lock taken over with `PutObject If-Match: <its
//! ETag>` (never delete-then-put), renewed with `If-Match: <our ETag>`, released with a
//! conditional DELETE. A held lock is plain data (stack, region, ETag, body) so workflow
//! steps can carry it in their output.

use cdkd_core::contention::{ContentionContext, Subject};
use cdkd_core::keys;
use cdkd_core::lock::{
    is_expired, is_own_body, parse_lock, takeover_of, LockBody, LockInfo, LOCK_TTL_MS,
};
use cdkd_core::text::flatten_str;
use cdkd_core::view::contention::{contention_message, lost_lock_reason, takeover_warning};
use cdkd_core::view::words::expiry_phrase;
use serde::{Deserialize, Serialize};

use crate::s3err::Failure;
use crate::store::{Precondition, StateStore, StoreError};

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

/// Why a lock is replaced: what the log line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takeover {
    /// It has expired (docs/state-and-lock.md, "Taking over an expired lock").
    Expired,
    /// [`LockManager::acquire_replacing`]: the caller's own, or an ended run's.
    Allowed,
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

/// What a lock object holds, read with the one lock parser
/// (`cdkd_core::lock::parse_lock`).
#[derive(Debug, Clone)]
pub enum LockContent {
    /// A readable lock (its holder, sanitised).
    Lock(Box<LockInfo>),
    /// A body that is not a lock: invalid JSON, or JSON that is not an object. Why, in
    /// one line. It blocks every acquire all the same.
    Malformed(String),
}

impl LockContent {
    /// The holder, when the body is a readable lock.
    pub fn info(&self) -> Option<&LockInfo> {
        match self {
            LockContent::Lock(i) => Some(i),
            LockContent::Malformed(_) => None,
        }
    }
}

/// A lock object as read, with the ETag that the force paths act on: they delete or take
/// over exactly this object, never a lock written after it (docs/state-and-lock.md, "Force-unlock: only the lock that was read").
#[derive(Debug, Clone)]
pub struct ReadLock {
    pub content: LockContent,
    /// The quoted ETag of the object read.
    pub etag: String,
}

/// What a conditional act on a [`ReadLock`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadLockOutcome {
    /// The object read was still there and was deleted (or replaced by ours).
    Done,
    /// Another lock object stands there now (renewed, or released and taken again):
    /// nothing was changed.
    Changed,
    /// The object read is gone (its holder released it): nothing was changed.
    Gone,
}

/// What `force_release_detailed` found and did.
#[derive(Debug, Clone)]
pub enum ForceReleased {
    /// A readable lock (its holder, sanitised), deleted.
    Held(Box<LockInfo>),
    /// An object that is not a readable lock, deleted.
    Unreadable,
    /// No lock object.
    Absent,
    /// The lock read (its holder, when readable) was replaced before the delete; the
    /// newer lock was left in place and nothing was deleted.
    Changed(Option<Box<LockInfo>>),
    /// The lock read (its holder, when readable) was released before the delete.
    Vanished(Option<Box<LockInfo>>),
    /// Only expired locks were to be deleted, and this one has not expired: left in
    /// place.
    Live(Box<LockInfo>),
    /// Only the locks of one cdkd-flow run were to be deleted (`force-unlock --run`),
    /// and this one (its holder, when readable) is not that run's: left in place.
    OtherHolder(Option<Box<LockInfo>>),
    /// A cdkd-flow export run's lock (`cdkd_core::contention::export_run`), and export
    /// locks were to be kept: left in place. With the object read, for a caller that,
    /// after a check of its own, deletes exactly it ([`LockManager::delete_read_lock`]).
    ExportRun(Box<LockInfo>, Box<ReadLock>),
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

/// A failed read of the lock object of `(stack, region)`, as the `LockError` of `action`.
fn read_failed(
    action: &'static str,
    stack: &str,
    region: Option<&str>,
    e: &StoreError,
) -> LockError {
    LockError::Aws {
        action,
        stack: flatten_str(stack),
        region: region_label(region),
        message: flatten_str(&e.to_string()),
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
            message: contention_message(&ctx, info, self.store.s3_now_ms()),
        }
    }

    /// Reads the lock object with its ETag, its body parsed tolerantly. `Ok(None)`: no
    /// object.
    async fn read_raw(
        &self,
        stack: &str,
        region: Option<&str>,
    ) -> Result<Option<ReadLock>, StoreError> {
        let Some(obj) = self.store.get_object(&self.key(stack, region)).await? else {
            return Ok(None);
        };
        let etag = obj.etag;
        let content = match parse_lock(&obj.bytes) {
            Ok(Some(info)) => LockContent::Lock(Box::new(info.written_at(obj.last_modified_ms))),
            Ok(None) => LockContent::Malformed("the lock body is not a JSON object".into()),
            Err(e) => LockContent::Malformed(e.to_string()),
        };
        Ok(Some(ReadLock { content, etag }))
    }

    /// [`Self::read_raw`] as `(holder when readable, ETag)`.
    async fn read(
        &self,
        stack: &str,
        region: Option<&str>,
    ) -> Result<Option<(Option<LockInfo>, String)>, StoreError> {
        Ok(self
            .read_raw(stack, region)
            .await?
            .map(|r| (r.content.info().cloned(), r.etag)))
    }

    /// [`LockManager::read`] where a read that fails is the `LockError` of `action`: the
    /// read again that follows a conditional write answered 412 (or one the endpoint
    /// would not evaluate).
    async fn read_again(
        &self,
        action: &'static str,
        stack: &str,
        region: Option<&str>,
    ) -> Result<Option<(Option<LockInfo>, String)>, LockError> {
        self.read(stack, region)
            .await
            .map_err(|e| read_failed(action, stack, region, &e))
    }

    /// The contention refusal, naming whoever holds the lock now (read best-effort).
    async fn held_now(&self, stack: &str, region: Option<&str>) -> LockError {
        let info = match self.read(stack, region).await {
            Ok(Some((info, _))) => info,
            _ => None,
        };
        self.held(stack, region, info.as_ref())
    }

    /// Acquires the lock of `(stack, region)` for `owner` (docs/state-and-lock.md, "Acquire" and "Why the takeover is a single conditional PUT"):
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
        // The lock's times are S3's (docs/state-and-lock.md, "Lock time is S3's").
        self.store.calibrate(&key).await;
        // A lock that vanishes between our 412 and our read is retried a few times.
        for _ in 0..3 {
            let body = self.fresh_body(owner, operation);
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
            let current = self.read_again("acquire", stack, region).await?;
            let Some((info, etag)) = current else {
                continue; // released in between: try to create it again
            };
            let Some(info) = info else {
                // Not a readable lock object: only force-unlock clears it.
                return Err(self.held(stack, region, None));
            };
            if !is_expired(&info, self.store.s3_now_ms()) {
                return Err(self.held(stack, region, Some(&info)));
            }
            return self
                .take_over(
                    stack,
                    region,
                    owner,
                    operation,
                    &info,
                    &etag,
                    Takeover::Expired,
                )
                .await;
        }
        Err(self.held_now(stack, region).await)
    }

    /// `acquire`, and when a lock is held, replaces it if its owner is one of `ended` (runs
    /// the caller knows have ended, docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first") or `owner` itself (a retried step),
    /// in one conditional write on the ETag read: a holder that renewed or released in
    /// between keeps its lock.
    pub async fn acquire_replacing(
        &self,
        stack: &str,
        region: Option<&str>,
        owner: &str,
        operation: Option<&str>,
        ended: &[String],
    ) -> Result<HeldLock, LockError> {
        let held = match self.acquire(stack, region, owner, operation).await {
            Err(LockError::Held { message }) => message,
            other => return other,
        };
        let current = self.read_again("acquire", stack, region).await?;
        match current {
            Some((Some(info), etag)) if info.owner == owner || ended.contains(&info.owner) => {
                self.take_over(
                    stack,
                    region,
                    owner,
                    operation,
                    &info,
                    &etag,
                    Takeover::Allowed,
                )
                .await
            }
            _ => Err(LockError::Held { message: held }),
        }
    }

    /// A fresh lock body of ours: `timestamp` and `expiresAt` on S3's clock
    /// (docs/state-and-lock.md, "Lock time is S3's"), so that it is never born expired.
    fn fresh_body(&self, owner: &str, operation: Option<&str>) -> LockBody {
        LockBody::new(
            owner,
            self.store.s3_now_ms(),
            self.ttl_ms,
            operation.map(str::to_owned),
        )
    }

    /// Replaces the lock read with `etag` (expired, or one the caller may replace:
    /// `why`) in one conditional write.
    #[allow(clippy::too_many_arguments)]
    async fn take_over(
        &self,
        stack: &str,
        region: Option<&str>,
        owner: &str,
        operation: Option<&str>,
        previous: &LockInfo,
        etag: &str,
        why: Takeover,
    ) -> Result<HeldLock, LockError> {
        let key = self.key(stack, region);
        let body = self.fresh_body(owner, operation);
        let bytes = body.to_json().into_bytes();
        match self
            .store
            .put_raw_conditional(&key, bytes, &Precondition::IfMatch(etag.to_owned()))
            .await
        {
            Ok(new_etag) => {
                let at = format!("{} ({})", flatten_str(stack), region_label(region));
                let now = self.store.s3_now_ms();
                let expiry = expiry_phrase(previous.expiry_ms(), now);
                let of = takeover_of(
                    why == Takeover::Expired || is_expired(previous, now),
                    &previous.owner,
                    &body.owner,
                );
                tracing::warn!("{}", takeover_warning(of, &at, &previous.owner, &expiry));
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
                        "cannot take over the lock of stack {} ({}): the endpoint did not evaluate the condition ({})",
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

    /// A time of this process's clock (`local_ms`) on S3's, which `held`'s body is on
    /// (docs/state-and-lock.md, "Lock time is S3's"); S3's clock is measured first if no response was
    /// seen yet.
    pub async fn s3_time_of(&self, local_ms: i64, held: &HeldLock) -> i64 {
        self.store
            .calibrate(&self.key(&held.stack, held.region.as_deref()))
            .await;
        self.store.clock.to_s3_ms(local_ms)
    }

    /// Renews a held lock (docs/state-and-lock.md, "Renewal"): same owner, timestamp and operation,
    /// `expiresAt = now + TTL`, written `If-Match` our last ETag. A 412 whose stored body is
    /// exactly the one this attempt wrote is adopted; any other 412, or a 404, is `Lost`.
    pub async fn renew(&self, held: &HeldLock) -> Result<HeldLock, LockError> {
        let region = held.region.as_deref();
        let key = self.key(&held.stack, region);
        self.store.calibrate(&key).await;
        let body = held.body.renewed(self.store.s3_now_ms(), self.ttl_ms);
        let bytes = body.to_json().into_bytes();
        match self
            .store
            .put_raw_conditional(&key, bytes, &Precondition::IfMatch(held.etag.clone()))
            .await
        {
            Ok(etag) => Ok(self.held_lock(&held.stack, region, etag, body)),
            Err(f) if f.is_no_such_key() => Err(self.lost(held, "the lock object is gone")),
            Err(f) if f.is_precondition_failed() => {
                match self.read_again("renew", &held.stack, region).await? {
                    Some((Some(info), etag)) if is_own_body(&info, &body) => {
                        Ok(self.held_lock(&held.stack, region, etag, body))
                    }
                    None => Err(self.lost(held, "the lock object is gone")),
                    Some(_) => Err(self.lost(held, "another process holds it now")),
                }
            }
            Err(f) => Err(self.aws("renew", &held.stack, region, f)),
        }
    }

    /// Whether `held` is still this process's lock, read just before a write the lock
    /// fences (docs/state-and-lock.md, "Renewal": a step that writes a record checks its lock
    /// first): the stored lock is the one `held` acquired
    /// (`cdkd_core::lock::is_same_acquisition`; its ETag may be newer, a renewal whose
    /// answer was lost, and is adopted). Otherwise `Lost`, naming whatever stands there
    /// now (`cdkd_core::view::contention::lost_lock_reason`).
    pub async fn check_own(&self, held: &HeldLock) -> Result<HeldLock, LockError> {
        let region = held.region.as_deref();
        let read = self.read_object(&held.stack, region).await?;
        let reason = match read {
            Some(ReadLock {
                content: LockContent::Lock(info),
                etag,
            }) if cdkd_core::lock::is_same_acquisition(&info, &held.body) => {
                return Ok(HeldLock {
                    etag,
                    ..held.clone()
                })
            }
            Some(r) => lost_lock_reason(true, r.content.info(), self.store.s3_now_ms()),
            None => lost_lock_reason(false, None, self.store.s3_now_ms()),
        };
        Err(self.lost(held, &reason))
    }

    /// Releases a held lock (docs/state-and-lock.md, "Release"): `DELETE If-Match` our ETag. Another
    /// holder's lock is never deleted: a 412 leaves it (`NotOurs`); a 404 is `AlreadyGone`.
    pub async fn release(&self, held: &HeldLock) -> Result<ReleaseOutcome, LockError> {
        self.release_logged(held, true).await
    }

    /// [`LockManager::release`] that says nothing when the lock is not ours: for a caller
    /// that then reads the lock itself (a run releasing a lock a lost answer may have
    /// renewed, `cdkd-functions`' `held::release_all`).
    pub async fn release_quietly(&self, held: &HeldLock) -> Result<ReleaseOutcome, LockError> {
        self.release_logged(held, false).await
    }

    async fn release_logged(
        &self,
        held: &HeldLock,
        warn: bool,
    ) -> Result<ReleaseOutcome, LockError> {
        let region = held.region.as_deref();
        let key = self.key(&held.stack, region);
        match self
            .store
            .delete_raw_versioned(&key, Some(&held.etag))
            .await
        {
            // A bucket that never kept versions holds no renewal to purge.
            Ok(versioned) => {
                if versioned {
                    self.purge(&held.stack, region, false).await;
                }
                Ok(ReleaseOutcome::Released)
            }
            Err(f) if f.is_no_such_key() => Ok(ReleaseOutcome::AlreadyGone),
            Err(f) if f.is_precondition_failed() => {
                if warn {
                    tracing::warn!(
                        "the lock of stack {} ({}) is held by another process now; left it in place",
                        flatten_str(&held.stack),
                        region_label(region)
                    );
                }
                Ok(ReleaseOutcome::NotOurs)
            }
            Err(f) if f.is_condition_unsupported() => {
                // Delete unconditionally only if the body still has our owner and timestamp.
                match self.read_again("release", &held.stack, region).await? {
                    Some((Some(info), _))
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
                    None => Ok(ReleaseOutcome::AlreadyGone),
                    Some(_) => Ok(ReleaseOutcome::NotOurs),
                }
            }
            Err(f) => Err(self.aws("release", &held.stack, region, f)),
        }
    }

    /// Reads the lock object of `(stack, region)` with its ETag (`None` region: the
    /// legacy key). `Ok(None)`: no object.
    pub async fn read_object(
        &self,
        stack: &str,
        region: Option<&str>,
    ) -> Result<Option<ReadLock>, LockError> {
        self.read_raw(stack, region)
            .await
            .map_err(|e| read_failed("read", stack, region, &e))
    }

    /// Deletes exactly the lock object `read` (docs/state-and-lock.md, "Force-unlock: only the lock that was read"): `DELETE
    /// If-Match: <its ETag>`. A lock written since (a renewal, a new holder) is left in
    /// place (`Changed`); one released since is `Gone`. Where the endpoint will not
    /// evaluate the condition (403/501), the object is read again and deleted without
    /// condition only if it still has the ETag read.
    pub async fn delete_read(
        &self,
        stack: &str,
        region: Option<&str>,
        read: &ReadLock,
    ) -> Result<ReadLockOutcome, LockError> {
        let key = self.key(stack, region);
        let outcome = match self.store.delete_raw_strict(&key, Some(&read.etag)).await {
            Ok(()) => ReadLockOutcome::Done,
            Err(f) if f.is_no_such_key() => return Ok(ReadLockOutcome::Gone),
            Err(f) if f.is_precondition_failed() => return Ok(ReadLockOutcome::Changed),
            Err(f) if f.is_condition_unsupported() => {
                match self.read_object(stack, region).await? {
                    None => return Ok(ReadLockOutcome::Gone),
                    Some(now) if now.etag != read.etag => return Ok(ReadLockOutcome::Changed),
                    Some(_) => {
                        self.store
                            .delete_raw(&key, None)
                            .await
                            .map_err(|f| self.aws("force-release", stack, region, f))?;
                        ReadLockOutcome::Done
                    }
                }
            }
            Err(f) => return Err(self.aws("force-release", stack, region, f)),
        };
        self.purge(stack, region, true).await;
        Ok(outcome)
    }

    /// Replaces exactly the lock object `read`, whoever holds it, with a lock of our own
    /// (`PUT If-Match: <its ETag>`, docs/state-and-lock.md, "Force-unlock: only the lock that was read"): the `--force` paths
    /// that must act under the lock. `Changed` / `Gone` when it is no longer the object
    /// read; nothing was written then. The previous holder's next renewal or release
    /// finds the lock lost.
    pub async fn take_over_read(
        &self,
        stack: &str,
        region: Option<&str>,
        read: &ReadLock,
        owner: &str,
        operation: Option<&str>,
    ) -> Result<Result<HeldLock, ReadLockOutcome>, LockError> {
        let body = self.fresh_body(owner, operation);
        let bytes = body.to_json().into_bytes();
        match self
            .store
            .put_raw_conditional(
                &self.key(stack, region),
                bytes,
                &Precondition::IfMatch(read.etag.clone()),
            )
            .await
        {
            Ok(etag) => Ok(Ok(self.held_lock(stack, region, etag, body))),
            Err(f) if f.is_precondition_failed() => Ok(Err(ReadLockOutcome::Changed)),
            Err(f) if f.is_no_such_key() => Ok(Err(ReadLockOutcome::Gone)),
            Err(f) => Err(self.aws("take over", stack, region, f)),
        }
    }

    /// Deletes the lock of `(stack, region)` that it reads (docs/state-and-lock.md, "Force-unlock: only the lock that was read";
    /// `None` region: the legacy key) and returns its holder, when readable. Only the
    /// object read is deleted: a lock written in between is left in place.
    pub async fn force_release(
        &self,
        stack: &str,
        region: Option<&str>,
    ) -> Result<Option<LockInfo>, LockError> {
        Ok(
            match self
                .force_release_detailed(stack, region, false, true, None)
                .await?
            {
                ForceReleased::Held(info) => Some(*info),
                _ => None,
            },
        )
    }

    /// `force_release`, saying what was there and whether it was deleted. A body that is
    /// not a lock is deleted like one (it would otherwise block every acquire forever);
    /// a read that fails deletes nothing (the delete needs the ETag read). With
    /// `only_expired`, a readable lock that has not expired is left in place (`Live`);
    /// without `abandon_export`, a cdkd-flow export run's lock is left in place
    /// (`ExportRun`; docs/state-and-lock.md, "The contention refusal"); with `only_run`, any lock that run does
    /// not hold, an unreadable one included (`OtherHolder`).
    pub async fn force_release_detailed(
        &self,
        stack: &str,
        region: Option<&str>,
        only_expired: bool,
        abandon_export: bool,
        only_run: Option<&str>,
    ) -> Result<ForceReleased, LockError> {
        let Some(read) = self.read_object(stack, region).await? else {
            return Ok(ForceReleased::Absent);
        };
        let info = read.content.info().cloned().map(Box::new);
        if let Some(run) = only_run {
            if !info
                .as_ref()
                .is_some_and(|i| cdkd_core::runs::lock_owned_by_run(&i.owner, run))
            {
                return Ok(ForceReleased::OtherHolder(info));
            }
        }
        if let Some(i) = info
            .as_ref()
            .filter(|i| !abandon_export && cdkd_core::contention::export_run(i).is_some())
        {
            return Ok(ForceReleased::ExportRun(i.clone(), Box::new(read)));
        }
        // The read measured S3's clock: the lock is judged on it (docs/state-and-lock.md, "Lock time is S3's").
        let now = self.store.s3_now_ms();
        if let Some(i) = info
            .as_ref()
            .filter(|i| only_expired && !is_expired(i, now))
        {
            return Ok(ForceReleased::Live(i.clone()));
        }
        match &info {
            Some(i) => tracing::warn!(
                "Force releasing lock for stack: {} ({}), owner: {}{}, expired: {}",
                flatten_str(stack),
                region_label(region),
                flatten_str(&i.owner),
                i.operation
                    .as_deref()
                    .map(|o| format!(", operation: {}", flatten_str(o)))
                    .unwrap_or_default(),
                is_expired(i, now)
            ),
            None => tracing::debug!(
                "the lock of stack {} ({}) is not a readable lock; deleting the object read",
                flatten_str(stack),
                region_label(region)
            ),
        }
        self.delete_read_lock(stack, region, &read).await
    }

    /// Deletes exactly the lock object `read` ([`LockManager::delete_read`]) and says
    /// what it found: a lock written since is left in place (`Changed`).
    pub async fn delete_read_lock(
        &self,
        stack: &str,
        region: Option<&str>,
        read: &ReadLock,
    ) -> Result<ForceReleased, LockError> {
        let info = read.content.info().cloned().map(Box::new);
        Ok(match self.delete_read(stack, region, read).await? {
            ReadLockOutcome::Done => match info {
                Some(i) => ForceReleased::Held(i),
                None => ForceReleased::Unreadable,
            },
            ReadLockOutcome::Changed => ForceReleased::Changed(info),
            ReadLockOutcome::Gone => ForceReleased::Vanished(info),
        })
    }
}
