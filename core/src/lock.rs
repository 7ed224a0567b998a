//! cdkd's `lock.json` (docs/state-and-lock.md, "lock.json") and the pure parts of the lock protocol ("The lock protocol"): the
//! body we write, the tolerant reader, expiry (judged on S3's clock, "Lock time is S3's"), the renewal
//! interval.

use crate::run::RunId;
use serde_json::{Map, Value};

use crate::json::{parse_json, stringify_pretty};
use crate::text::{flatten, flatten_str, or_unrenderable, printable_str};

/// cdkd's lock TTL: 30 minutes.
pub const LOCK_TTL_MS: i64 = 1_800_000;

/// Renewal interval for a TTL (docs/state-and-lock.md, "Renewal"): max(1 s, min(2 min, TTL/4)).
pub fn renew_interval_ms(ttl_ms: i64) -> i64 {
    (ttl_ms / 4).clamp(1_000, 120_000)
}

/// Whether a lock this process holds, expiring at `expires_at_ms`, is due for renewal at
/// `now_ms` (docs/state-and-lock.md, "Renewal"): it was last renewed (`expiresAt` − TTL) at
/// least one renewal interval ago, or its expiry is nearer than that.
pub fn renewal_due(expires_at_ms: i64, now_ms: i64, ttl_ms: i64) -> bool {
    let last = expires_at_ms.saturating_sub(ttl_ms);
    now_ms.saturating_sub(last) >= renew_interval_ms(ttl_ms)
}

/// The owner string this project writes: `cdkd-flow:<run-id>`.
pub fn flow_owner(run_id: &str) -> String {
    format!("cdkd-flow:{run_id}")
}

/// The owner a local run (`--local`, the run in this CLI process) writes:
/// `cdkd-flow:<run-id>@<host>:<pid>`, so that a later command on the same host can tell
/// whether the run's process is still alive (docs/state-and-lock.md, "The lock protocol").
pub fn local_flow_owner(run_id: &str, host: &str, pid: u32) -> String {
    format!("cdkd-flow:{run_id}@{host}:{pid}")
}

/// Who holds a lock this project wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlowHolder {
    /// A deployed run: the Step Functions execution named `run_id`.
    Deployed { run_id: RunId },
    /// A local run: the CLI process `pid` on `host`.
    Local {
        run_id: RunId,
        host: String,
        pid: u32,
    },
}

impl FlowHolder {
    pub fn run_id(&self) -> &str {
        match self {
            FlowHolder::Deployed { run_id } | FlowHolder::Local { run_id, .. } => run_id,
        }
    }
}

/// Reads an owner written by [`flow_owner`] or [`local_flow_owner`]; `None` for any
/// other owner (cdkd's `<user>@<host>:<pid>`, anything hand-written). A run id never
/// holds `:` (an execution name cannot), so a `:` after the run id is the local form.
pub fn parse_flow_owner(owner: &str) -> Option<FlowHolder> {
    let rest = owner.strip_prefix("cdkd-flow:")?;
    if rest.is_empty() {
        return None;
    }
    match rest.rsplit_once(':') {
        None => Some(FlowHolder::Deployed {
            run_id: rest.into(),
        }),
        Some((left, pid)) => {
            let pid = pid.parse::<u32>().ok()?;
            let (run_id, host) = left.rsplit_once('@')?;
            (!run_id.is_empty() && !run_id.contains(':')).then(|| FlowHolder::Local {
                run_id: run_id.into(),
                host: host.to_string(),
                pid,
            })
        }
    }
}

/// Whether two lock owners are the same cdkd-flow run (a deployed run's steps, or a local
/// run and its resume in another process), or the same owner.
pub fn same_run(a: &str, b: &str) -> bool {
    a == b
        || matches!((parse_flow_owner(a), parse_flow_owner(b)),
            (Some(x), Some(y)) if x.run_id() == y.run_id())
}

/// Whose lock a takeover by `new_owner` took: an EXPIRED one only when it had expired
/// (docs/state-and-lock.md, "Taking over an expired lock"); otherwise this run's own
/// (a retried step, a resume, docs/export.md, "Interrupted and contested runs: resume,
/// refusals, the lock first") or an ended run's. Worded by `core::view::contention`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TakeoverOf {
    Expired,
    OwnRun,
    EndedRun,
}

/// Whose lock a takeover took ([`TakeoverOf`]).
pub fn takeover_of(expired: bool, previous_owner: &str, new_owner: &str) -> TakeoverOf {
    if expired {
        TakeoverOf::Expired
    } else if same_run(previous_owner, new_owner) {
        TakeoverOf::OwnRun
    } else {
        TakeoverOf::EndedRun
    }
}

/// The owner a CLI process writes, as cdkd does: `<user>@<host>:<pid>`, `unknown` /
/// `host` standing in for an unset user or host name.
pub fn cli_owner(user: Option<&str>, host: Option<&str>, pid: u32) -> String {
    format!("{}:{pid}", user_at_host(user, host))
}

/// `<user>@<host>`, `unknown` / `host` standing in for an unset user or host name (the
/// lock owner of a CLI process without its pid; also who decides an approval).
pub fn user_at_host(user: Option<&str>, host: Option<&str>) -> String {
    let user = user.filter(|u| !u.is_empty()).unwrap_or("unknown");
    let host = host.filter(|h| !h.is_empty()).unwrap_or("host");
    format!("{user}@{host}")
}

/// A lock body this process writes (cdkd's shape).
#[derive(Clone, Debug, PartialEq)]
pub struct LockBody {
    pub owner: String,
    pub timestamp: i64,
    pub expires_at: i64,
    /// Written only when non-empty.
    pub operation: Option<String>,
}

impl LockBody {
    /// A fresh lock: `timestamp = now`, `expiresAt = now + ttl`.
    pub fn new(
        owner: impl Into<String>,
        now_ms: i64,
        ttl_ms: i64,
        operation: Option<String>,
    ) -> Self {
        LockBody {
            owner: owner.into(),
            timestamp: now_ms,
            expires_at: now_ms.saturating_add(ttl_ms),
            operation: operation.filter(|op| !op.is_empty()),
        }
    }

    /// The renewal body: identical except `expiresAt = now + ttl`.
    pub fn renewed(&self, now_ms: i64, ttl_ms: i64) -> LockBody {
        LockBody {
            expires_at: now_ms.saturating_add(ttl_ms),
            ..self.clone()
        }
    }

    /// `JSON.stringify(lock, null, 2)` with keys `owner`, `timestamp`, `expiresAt`
    /// and `operation` (only when non-empty).
    pub fn to_json(&self) -> String {
        let mut m = Map::new();
        m.insert("owner".into(), Value::String(self.owner.clone()));
        m.insert("timestamp".into(), Value::from(self.timestamp));
        m.insert("expiresAt".into(), Value::from(self.expires_at));
        if let Some(op) = self.operation.as_deref().filter(|op| !op.is_empty()) {
            m.insert("operation".into(), Value::String(op.to_string()));
        }
        // Flat object of scalars: the depth budget cannot be reached.
        stringify_pretty(&Value::Object(m)).unwrap_or_default()
    }
}

/// A lock as read (docs/state-and-lock.md, "lock.json" `getLockInfo`). `owner` and `operation` are sanitised
/// here, at the single read point (flatten,
/// docs/state-views.md, "Flatten (diagnostics)"); everything else passes through.
#[derive(Clone, Debug, PartialEq)]
pub struct LockInfo {
    /// Flattened; `""` when absent or null.
    pub owner: String,
    /// Flattened; `None` only when the body had no `operation` key.
    pub operation: Option<String>,
    pub timestamp: Option<Value>,
    pub expires_at: Option<Value>,
    /// The whole body as parsed.
    pub raw: Map<String, Value>,
    /// When S3 wrote the object read (its `LastModified`, ms since the epoch on S3's
    /// clock); `None` when not known (a body parsed without its object). Expiry is judged
    /// from it (docs/state-and-lock.md, "Lock time is S3's").
    pub written_ms: Option<i64>,
}

impl LockInfo {
    /// When this lock expires on S3's clock ([`lock_expiry_ms`]); `None`: it counts as
    /// expired whatever the time.
    pub fn expiry_ms(&self) -> Option<f64> {
        lock_expiry_ms(
            self.timestamp.as_ref(),
            self.expires_at.as_ref(),
            self.written_ms,
        )
    }

    /// The same lock, written by S3 at `written_ms` (its object's `LastModified`).
    pub fn written_at(mut self, written_ms: Option<i64>) -> Self {
        self.written_ms = written_ms;
        self
    }
}

/// `lock.json` that is not valid JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockParseError {
    /// The parser's message, flattened and printable (docs/state-views.md, "Printable (stack names and regions in diagnostics)").
    InvalidJson(String),
}

impl std::error::Error for LockParseError {}

/// Reads a lock body: invalid JSON → error; valid JSON that is not an object → `None`
/// (readers treat it as no lock, although the object still blocks acquires).
pub fn parse_lock(bytes: &[u8]) -> Result<Option<LockInfo>, LockParseError> {
    let value = parse_json(bytes)
        .map_err(|m| LockParseError::InvalidJson(or_unrenderable(printable_str(&m))))?;
    let Value::Object(raw) = value else {
        return Ok(None);
    };
    Ok(Some(LockInfo {
        owner: flatten(raw.get("owner")),
        operation: raw.get("operation").map(|v| flatten(Some(v))),
        timestamp: raw.get("timestamp").cloned(),
        expires_at: raw.get("expiresAt").cloned(),
        raw,
        written_ms: None,
    }))
}

fn finite(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64).filter(|f| f.is_finite())
}

/// When a lock expires, in ms since the epoch on S3's clock (docs/state-and-lock.md, "Lock time is S3's"):
/// the time S3 wrote it (`written_ms`, its `LastModified`) plus the lifetime its writer
/// declared, `expiresAt - timestamp`, kept within 0 and cdkd's TTL (a renewal keeps
/// `timestamp` and moves `expiresAt`, so past the first write the difference overstates
/// the lifetime, which is never more than the TTL). Both values come from the writer's
/// clock, so their difference does not depend on how far that clock is off. Without
/// `timestamp` the writer's clock is taken to be S3's (the lifetime is `expiresAt -
/// written_ms`, kept within the same bounds); without `written_ms` (no object read) the
/// expiry is `expiresAt` itself, cdkd's rule. `None` when `expiresAt` is not a finite
/// number: such a lock counts as expired (a hand-edited lock cannot hold a stack forever).
pub fn lock_expiry_ms(
    timestamp: Option<&Value>,
    expires_at: Option<&Value>,
    written_ms: Option<i64>,
) -> Option<f64> {
    let expires_at = finite(expires_at)?;
    let Some(written) = written_ms.map(|w| w as f64) else {
        return Some(expires_at);
    };
    let start = finite(timestamp).unwrap_or(written);
    // Two finite values: the difference is a number (at worst an infinity, clamped).
    Some(written + (expires_at - start).clamp(0.0, LOCK_TTL_MS as f64))
}

/// The takeover test (docs/state-and-lock.md, "Lock time is S3's"): the lock has expired once `now_ms`,
/// on S3's clock, reaches [`LockInfo::expiry_ms`]; a non-finite `expiresAt` (absent,
/// `{}`, `"soon"`, a numeric string) counts as expired.
pub fn is_expired(info: &LockInfo, now_ms: i64) -> bool {
    expired_by(info.expiry_ms(), now_ms)
}

/// [`is_expired`] of an expiry from [`lock_expiry_ms`].
pub fn expired_by(expiry_ms: Option<f64>, now_ms: i64) -> bool {
    match expiry_ms {
        Some(e) => now_ms as f64 >= e,
        None => true,
    }
}

/// True when the stored lock is exactly the body this process wrote (same sanitised
/// owner, same `timestamp`, same `expiresAt`): a renew answered 412 that actually
/// landed.
pub fn is_own_body(info: &LockInfo, body: &LockBody) -> bool {
    let same = |v: Option<&Value>, n: i64| v.and_then(Value::as_f64) == Some(n as f64);
    info.owner == flatten_str(&body.owner)
        && same(info.timestamp.as_ref(), body.timestamp)
        && same(info.expires_at.as_ref(), body.expires_at)
}

/// True when the stored lock is the one `body` acquired: same sanitised owner and same
/// acquisition `timestamp` (a renewal keeps both; its `expiresAt` and ETag may be newer
/// than the holder last saw, when the answer to a renewal was lost). What a holder
/// checks before a write its lock fences (docs/state-and-lock.md, "Renewal").
pub fn is_same_acquisition(info: &LockInfo, body: &LockBody) -> bool {
    info.owner == flatten_str(&body.owner)
        && info.timestamp.as_ref().and_then(Value::as_f64) == Some(body.timestamp as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_lock_body_cdkd_shape_with_operation() {
        let body = LockBody::new(
            flow_owner("run-42"),
            1_767_225_600_000,
            LOCK_TTL_MS,
            Some("destroy".into()),
        );
        insta::assert_snapshot!(body.to_json());
    }
}
