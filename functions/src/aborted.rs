//! The end both abort steps share (`destroy-abort`, `export-abort`): the run's report is
//! written best effort, the locks are released whatever happened, and only then is the
//! run's end told, so that the command the message names is not refused by this run's
//! own locks (docs/notifications.md,
//! "What is published, and when").

use cdkd_aws::{HeldLock, LockManager, StateStore};
use cdkd_core::notify::Notice;
use cdkd_core::run::RunId;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::deps::Deps;
use crate::runs;

/// The error a `Catch` put in the state (`{"Error": name, "Cause": text}`), as it came:
/// what an abort step is given.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Caught(pub Value);

impl Caught {
    /// Its one line, `<name>: <cause>`.
    pub fn cause(&self) -> String {
        crate::error::caught_cause(&self.0)
    }
}

/// Writes `report` as run `run_id`'s `report.json`; its key, or none (with a warning)
/// when it could not be written.
pub async fn write_report<R: Serialize>(
    store: &StateStore,
    prefix: &str,
    run_id: &RunId,
    report: &R,
) -> Option<String> {
    let key = runs::report_key(prefix, run_id);
    match runs::write(store, &key, report).await {
        Ok(()) => Some(key),
        Err(e) => {
            tracing::warn!("report of run {run_id} not written: {e}");
            None
        }
    }
}

/// Releases `held`, then tells `notice` (when the report was written).
pub async fn release_then_tell(
    deps: &Deps,
    store: &StateStore,
    locks: &LockManager,
    held: &[HeldLock],
    notice: Option<Notice>,
) {
    crate::held::release_all(locks, held).await;
    if let Some(notice) = notice {
        crate::notify::tell(deps.notify.as_ref(), store, &notice).await;
    }
}
