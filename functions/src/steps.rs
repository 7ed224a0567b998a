//! The steps by name: what a Lambda binary serves and what the local engine calls.
//! A definition names a step through a substitution (`${DestroyPlanFunctionArn}`); the
//! table below is the single list of steps and substitutions. One Lambda binary
//! (`src/bin/cdkd-step.rs`) serves every step: a function's `Handler` names its step.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::deps::Deps;
use crate::destroy;
use crate::error::StepError;

/// (step name = the Lambda function's `Handler`, definition substitution).
pub const STEPS: &[(&str, &str)] = &[
    ("destroy-plan", "DestroyPlanFunctionArn"),
    ("destroy-wave", "DestroyWaveFunctionArn"),
    ("destroy-finish", "DestroyFinishFunctionArn"),
    ("destroy-abort", "DestroyAbortFunctionArn"),
    ("cleanup-select", "CleanupSelectFunctionArn"),
    ("cleanup-record", "CleanupRecordFunctionArn"),
    ("cleanup-notify", "CleanupNotifyFunctionArn"),
    ("run-refused", "RunRefusedFunctionArn"),
    ("run-ended", "RunEndedFunctionArn"),
    ("run-continue", "RunContinueFunctionArn"),
    ("export-plan", "ExportPlanFunctionArn"),
    ("export-approval", "ExportApprovalFunctionArn"),
    ("export-lock", "ExportLockFunctionArn"),
    ("export-import", "ExportImportFunctionArn"),
    ("export-poll", "ExportPollFunctionArn"),
    ("export-execute", "ExportExecuteFunctionArn"),
    ("export-flip", "ExportFlipFunctionArn"),
    ("export-adopt", "ExportAdoptFunctionArn"),
    ("export-phase2", "ExportPhase2FunctionArn"),
    ("export-cleanup", "ExportCleanupFunctionArn"),
    ("export-abort", "ExportAbortFunctionArn"),
];

/// The step named `name` (a Lambda function's `Handler`), as its `'static` name.
pub fn step_named(name: &str) -> Option<&'static str> {
    STEPS.iter().find(|(n, _)| *n == name).map(|(n, _)| *n)
}

/// The step a substitution name stands for.
pub fn step_for_substitution(sub: &str) -> Option<&'static str> {
    STEPS.iter().find(|(_, s)| *s == sub).map(|(n, _)| *n)
}

fn parse<T: DeserializeOwned>(step: &str, payload: Value) -> Result<T, StepError> {
    serde_json::from_value(payload)
        .map_err(|e| StepError::bad_input(format!("{step}: unexpected input: {e}")))
}

fn out<T: Serialize>(v: T) -> Result<Value, StepError> {
    serde_json::to_value(v)
        .map_err(|e| StepError::bad_input(format!("cannot serialize a step's output: {e}")))
}

/// Runs the step named `step` on `payload`.
pub async fn invoke(step: &str, payload: Value, deps: &Deps) -> Result<Value, StepError> {
    match step {
        "destroy-plan" => out(destroy::plan::run(parse(step, payload)?, deps).await?),
        "destroy-wave" => out(destroy::wave::run(parse(step, payload)?, deps).await?),
        "destroy-finish" => out(destroy::finish::run(parse(step, payload)?, deps).await?),
        "destroy-abort" => out(destroy::abort::run(parse(step, payload)?, deps).await?),
        "cleanup-select" => out(crate::cleanup::run(parse(step, payload)?, deps).await?),
        "cleanup-record" => crate::cleanup::record(parse(step, payload)?, deps).await,
        "cleanup-notify" => out(crate::notify::cleanup_notify(parse(step, payload)?, deps).await?),
        "run-refused" => out(crate::refused::run(parse(step, payload)?, deps).await?),
        "run-ended" => out(crate::ended::run(parse(step, payload)?, deps).await?),
        "run-continue" => out(crate::continued::run(parse(step, payload)?, deps).await?),
        "export-plan" => out(crate::export::plan::run(parse(step, payload)?, deps).await?),
        "export-approval" => out(crate::export::approval::run(parse(step, payload)?, deps).await?),
        "export-lock" => out(crate::export::lock::run(parse(step, payload)?, deps).await?),
        "export-import" => out(crate::export::import::run(parse(step, payload)?, deps).await?),
        "export-poll" => out(crate::export::poll::run(parse(step, payload)?, deps).await?),
        "export-execute" => out(crate::export::execute::run(parse(step, payload)?, deps).await?),
        "export-flip" => out(crate::export::flip::run(parse(step, payload)?, deps).await?),
        "export-adopt" => out(crate::export::adopt::run(parse(step, payload)?, deps).await?),
        "export-phase2" => out(crate::export::phase2::run(parse(step, payload)?, deps).await?),
        "export-cleanup" => out(crate::export::cleanup::run(parse(step, payload)?, deps).await?),
        "export-abort" => out(crate::export::abort::run(parse(step, payload)?, deps).await?),
        other => Err(StepError::bad_input(format!("no step named '{other}'"))),
    }
}
