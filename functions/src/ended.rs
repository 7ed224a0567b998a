//! `run-ended`: a deployed run stopped from outside its definition
//! (docs/notifications.md, "What is published, and when", item 5): `cdkd-flow runs stop --now` (or any `StopExecution`: status `ABORTED`) or the
//! execution's own timeout (`TIMED_OUT`). No state of the run caught that end, so no
//! step wrote its report or told it. The backend's EventBridge rule on Step Functions'
//! status-change events of its export and destroy state machines invokes this step,
//! which does what `run-refused` does for a run that ended early
//! ([`crate::refused::ensure_report`]): writes `report.json` when the run has none (where
//! each stack stood, from its progress) and tells it as `run-failed`, once.

use cdkd_core::run::{ExecutionStatus, RunKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::deps::Deps;
use crate::error::StepError;
use crate::refused::{ensure_report, EndedEarly, Ensured, Operation, RunInput};

/// The EventBridge event "Step Functions Execution Status Change", the fields read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusChange {
    pub detail: StatusDetail,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusDetail {
    /// The execution's name (the run id).
    pub name: String,
    pub status: ExecutionStatus,
    /// The execution's input, as a JSON string (absent when it is too large to include).
    #[serde(default)]
    pub input: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndedOutput {
    /// What was done: `None` when the event is not an outside stop of an export or a
    /// destroy run (another status, a cleanup run).
    pub report: Option<Ensured>,
}

/// The caught-error pair the report and the message carry for an outside stop, by the
/// execution's status; `None` for any status the run's own states report.
pub fn outside_stop(status: &ExecutionStatus) -> Option<(&'static str, &'static str)> {
    match status {
        ExecutionStatus::Aborted => Some((
            "States.Aborted",
            "the execution was stopped from outside (cdkd-flow runs stop --now, or StopExecution) before any step of it could write its report",
        )),
        ExecutionStatus::TimedOut => Some((
            "States.Timeout",
            "the execution reached its time limit before any step of it could write its report",
        )),
        _ => None,
    }
}

pub async fn run(event: StatusChange, deps: &Deps) -> Result<EndedOutput, StepError> {
    let d = &event.detail;
    let Some((error, cause)) = outside_stop(&d.status) else {
        return Ok(EndedOutput { report: None });
    };
    let Some(raw) = d.input.as_deref() else {
        return Err(StepError::bad_input(format!(
            "run-ended: the event of execution {} carries no input: its report cannot be written",
            cdkd_core::text::flatten_str(&d.name)
        )));
    };
    let input: Value = serde_json::from_str(raw)
        .map_err(|e| StepError::bad_input(format!("run-ended: the execution's input: {e}")))?;
    let operation = match RunKind::of_input(&input) {
        Some(RunKind::Export) => Operation::Export,
        Some(RunKind::Destroy) => Operation::Destroy,
        // A cleanup's destroy runs report themselves; it has no run folder of its own.
        Some(RunKind::Cleanup | RunKind::Other(_)) | None => {
            return Ok(EndedOutput { report: None })
        }
    };
    let i: RunInput = serde_json::from_value(input)
        .map_err(|e| StepError::bad_input(format!("run-ended: the execution's input: {e}")))?;
    let store = deps.store(&i.state_bucket, &i.state_prefix).await;
    // A deployed resume writes into the run it resumes (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first"): stopped,
    // it leaves that run where it stood, reported there.
    let run_id = i
        .resume
        .as_deref()
        .filter(|r| !r.is_empty())
        .unwrap_or(&d.name);
    let e = EndedEarly {
        operation,
        run_id,
        stack: &i.stack,
        stack_region: i.stack_region.as_deref(),
        plan_only: i.dry_run,
        resumed: None,
        error,
        cause,
        stopped: true,
    };
    let report = ensure_report(&store, deps.notify.as_ref(), &e).await;
    Ok(EndedOutput {
        report: Some(report),
    })
}
