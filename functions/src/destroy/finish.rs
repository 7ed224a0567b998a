//! `destroy-finish`: write `report.json` (per resource: deleted / already gone /
//! retained / failed with the error / blocked by X / interrupted), release every lock
//! still held, and say whether the run destroyed everything.

use cdkd_aws::HeldLock;
use cdkd_core::destroy::model::{
    build_report, note_lock_gone, note_unconfirmed_deletes, DestroyReport, PlannedRow,
    ReportCounts, RunResult,
};
use cdkd_core::destroy::next_step::{NextStep, RowNote};
use cdkd_core::run::RunId;
use serde::{Deserialize, Serialize};

use super::{DestroyRun, RunRef};
use crate::deps::Deps;
use crate::error::StepError;
use crate::held::release_all;
use crate::runs;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FinishInput {
    pub run: RunRef,
    pub locks: Vec<HeldLock>,
}

/// `report.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    pub run_id: RunId,
    pub stack: String,
    pub region: String,
    /// Every stack destroyed (retained resources stay in AWS by design).
    pub complete: bool,
    /// The error that ended the run early, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted: Option<String>,
    /// Children first, the root stack last.
    pub stacks: Vec<DestroyReport>,
    /// Where `orphans` entries of destroyed records were kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub orphans: Vec<String>,
    /// The run ended before its plan was made: nothing was locked or deleted (the
    /// `run-refused` step wrote the report).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
}

/// What the step returns (the execution's output): small, the rows are in the report.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FinishOutput {
    pub run_id: RunId,
    pub complete: bool,
    pub report_key: String,
    pub stacks: Vec<StackSummary>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StackSummary {
    pub stack: String,
    pub region: String,
    pub result: RunResult,
    pub counts: ReportCounts,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_step: Option<NextStep>,
}

pub async fn run(input: FinishInput, deps: &Deps) -> Result<FinishOutput, StepError> {
    let store = deps.store(&input.run.bucket, &input.run.prefix).await;
    let rec: DestroyRun = runs::read(
        &store,
        &runs::progress_key(&input.run.prefix, &input.run.run_id),
    )
    .await?
    .ok_or_else(|| {
        StepError::bad_input(format!("run {} has no progress.json", input.run.run_id))
    })?;
    let report = report_of(&input.run, &rec, None);
    let key = runs::report_key(&input.run.prefix, &input.run.run_id);
    runs::write(&store, &key, &report).await?;
    release_all(
        &deps.locks(&input.run.bucket, &input.run.prefix).await,
        &input.locks,
    )
    .await;
    crate::notify::tell(deps.notify.as_ref(), &store, &notice_of(&report, &key)).await;
    Ok(FinishOutput {
        run_id: report.run_id.clone(),
        complete: report.complete,
        report_key: key,
        stacks: report
            .stacks
            .iter()
            .map(|s| StackSummary {
                stack: s.stack.clone(),
                region: s.region.clone(),
                result: s.result,
                counts: s.counts,
                next_step: s.next_step.clone(),
            })
            .collect(),
    })
}

/// The message of a run that ended with `report` (docs/notifications.md).
pub fn notice_of(report: &RunReport, report_key: &str) -> cdkd_core::notify::Notice {
    cdkd_core::view::notify::destroy_ended(
        &report.run_id,
        &report.stack,
        &report.region,
        &report.stacks,
        report.complete,
        report.aborted.as_deref(),
        report.refused,
        report_key,
    )
}

/// The report of a run as far as it got.
pub fn report_of(run: &RunRef, rec: &DestroyRun, aborted: Option<String>) -> RunReport {
    let stacks: Vec<DestroyReport> = rec
        .stacks
        .iter()
        .map(|s| {
            let planned: Vec<PlannedRow> = s.planned.iter().map(PlannedRow::from).collect();
            let mut report = build_report(
                &rec.run_id,
                &s.stack,
                &s.region,
                &planned,
                &s.outcomes,
                rec.stop_requested,
            )
            .with_state_location(&run.bucket, &run.prefix);
            // Deletes sent and never seen to end (a stop or an error after a crash lost
            // their answer): a later run cannot resume them, so the user must know.
            note_unconfirmed_deletes(&mut report, &s.unconfirmed());
            // A lock someone removed while the run held it (docs/destroy.md, "How a stack finishes").
            if let Some(n) = &s.lock_note {
                note_lock_gone(&mut report, n.clone());
            }
            // What a deleter said of a deleted record (e.g. interfaces left behind).
            for row in &mut report.rows {
                if let Some(n) = s.notes.get(&row.logical_id) {
                    row.note.get_or_insert_with(|| RowNote::Said(n.clone()));
                }
            }
            report
        })
        .collect();
    let complete = aborted.is_none()
        && rec
            .stacks
            .iter()
            .all(|s| s.finished == Some(RunResult::Clean))
        && stacks.iter().all(|s| s.result == RunResult::Clean);
    RunReport {
        run_id: rec.run_id.clone(),
        stack: run.stack.clone(),
        region: run.region.clone(),
        complete,
        aborted,
        stacks,
        orphans: rec
            .stacks
            .iter()
            .filter_map(|s| s.orphans_key.clone())
            .collect(),
        refused: false,
    }
}
