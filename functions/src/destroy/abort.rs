//! `destroy-abort`: the `Catch` of every state after the plan. Releases the locks the run
//! still holds and writes `report.json` naming what was done and what must be redone.

use cdkd_aws::HeldLock;
use serde::{Deserialize, Serialize};

use super::finish::{notice_of, report_of};
use super::{DestroyRun, RunRef};
use crate::aborted::{release_then_tell, write_report, Caught};
use crate::deps::Deps;
use crate::error::StepError;
use crate::runs;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AbortInput {
    pub run: RunRef,
    #[serde(default)]
    pub locks: Vec<HeldLock>,
    #[serde(default)]
    pub error: Caught,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AbortOutput {
    pub report_key: Option<String>,
    pub released: usize,
}

pub async fn run(input: AbortInput, deps: &Deps) -> Result<AbortOutput, StepError> {
    let store = deps.store(&input.run.bucket, &input.run.prefix).await;
    let cause = input.error.cause();
    let mut report_key = None;
    let mut notice = None;
    // The report is best effort: the locks must be released whatever happens. The
    // message goes out after the release, so that the command it names is not refused
    // by this run's own locks (docs/notifications.md, "What is published, and when").
    match runs::read::<DestroyRun>(
        &store,
        &runs::progress_key(&input.run.prefix, &input.run.run_id),
    )
    .await
    {
        Ok(Some(rec)) => {
            let report = report_of(&input.run, &rec, Some(cause));
            report_key = write_report(&store, &input.run.prefix, &input.run.run_id, &report).await;
            notice = report_key.as_deref().map(|key| notice_of(&report, key));
        }
        Ok(None) => {}
        Err(e) => tracing::warn!("progress of run {} not readable: {e}", input.run.run_id),
    }
    release_then_tell(
        deps,
        &store,
        &deps.locks(&input.run.bucket, &input.run.prefix).await,
        &input.locks,
        notice,
    )
    .await;
    Ok(AbortOutput {
        report_key,
        released: input.locks.len(),
    })
}
