//! `destroy-abort`: the `Catch` of every state after the plan. Releases the locks the run
//! still holds and writes `report.json` naming what was done and what must be redone.

use cdkd_aws::HeldLock;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::finish::{notice_of, report_of};
use super::{DestroyRun, RunRef};
use crate::deps::Deps;
use crate::error::StepError;
use crate::held::release_all;
use crate::runs;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AbortInput {
    pub run: RunRef,
    #[serde(default)]
    pub locks: Vec<HeldLock>,
    /// The caught error: `{"Error": name, "Cause": text}`.
    #[serde(default)]
    pub error: Value,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AbortOutput {
    pub report_key: Option<String>,
    pub released: usize,
}

pub async fn run(input: AbortInput, deps: &Deps) -> Result<AbortOutput, StepError> {
    let store = deps.store(&input.run.bucket, &input.run.prefix).await;
    let cause = crate::error::caught_cause(&input.error);
    let mut report_key = None;
    let mut notice = None;
    // The report is best effort: the locks must be released whatever happens. The
    // message goes out after the release, so that the command it names is not refused
    // by this run's own locks (docs/notifications.md §1).
    match runs::read::<DestroyRun>(
        &store,
        &runs::progress_key(&input.run.prefix, &input.run.run_id),
    )
    .await
    {
        Ok(Some(rec)) => {
            let report = report_of(&input.run, &rec, Some(cause));
            let key = runs::report_key(&input.run.prefix, &input.run.run_id);
            match runs::write(&store, &key, &report).await {
                Ok(()) => {
                    notice = Some(notice_of(&report, &key));
                    report_key = Some(key);
                }
                Err(e) => tracing::warn!("report of run {} not written: {e}", input.run.run_id),
            }
        }
        Ok(None) => {}
        Err(e) => tracing::warn!("progress of run {} not readable: {e}", input.run.run_id),
    }
    release_all(
        &deps.locks(&input.run.bucket, &input.run.prefix).await,
        &input.locks,
    )
    .await;
    if let Some(notice) = notice {
        crate::notify::tell(deps.notify.as_ref(), &store, &notice).await;
    }
    Ok(AbortOutput {
        report_key,
        released: input.locks.len(),
    })
}
