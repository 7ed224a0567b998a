//! `run-continue`: a run about to pass the execution history limit names the execution it
//! continues in, records it in its `progress.json` (`continuedAs`) and gives the input
//! that execution starts with: only the run (docs/runs.md, "Continuing in a new
//! execution"). The definition's next state starts it (`states:startExecution` of
//! `$$.StateMachine.Id`).

use cdkd_aws::HeldLock;
use cdkd_core::continuation::{execution_name, run_of_execution};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::deps::Deps;
use crate::destroy::RunRef;
use crate::error::StepError;
use crate::runs;

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContinueInput {
    /// `destroy` (the only loop that continues so far).
    pub kind: String,
    pub run: RunRef,
    pub locks: Vec<HeldLock>,
    /// `$$.Execution.Name` of the execution that continues.
    pub execution: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContinueOutput {
    /// The new execution's name.
    pub name: String,
    /// Its input.
    pub input: Value,
}

pub async fn run(input: ContinueInput, deps: &Deps) -> Result<ContinueOutput, StepError> {
    if input.kind != "destroy" {
        return Err(StepError::bad_input(format!(
            "run-continue: a {} run does not continue",
            input.kind
        )));
    }
    let run = &input.run;
    let store = deps.store(&run.bucket, &run.prefix).await;
    let key = runs::progress_key(&run.prefix, &run.run_id);
    let mut progress = runs::Progress::read(&store, &key).await?.ok_or_else(|| {
        StepError::bad_input(format!(
            "run {} has no progress.json under s3://{}/{}",
            run.run_id, run.bucket, run.prefix
        ))
    })?;
    // A retry of this step after its write names the same execution.
    let name = match &progress.rec.continued_as {
        Some(next) if next != &input.execution => next.clone(),
        _ => {
            let (_, n) = run_of_execution(&input.execution);
            execution_name(&run.run_id, n.saturating_add(1))
        }
    };
    progress.rec.continued_as = Some(name.clone());
    progress.save(&store).await?;
    tracing::info!(run = %run.run_id, next = %name, "run continues in a new execution");
    Ok(ContinueOutput {
        input: json!({
            "stack": run.stack,
            "stackRegion": run.region,
            "stateBucket": run.bucket,
            "statePrefix": run.prefix,
            "continuation": {"kind": input.kind, "run": run, "locks": input.locks},
        }),
        name,
    })
}
