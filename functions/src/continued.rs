//! `run-continue`: a run about to pass the execution history limit names the execution it
//! continues in, records it in its `progress.json` (`continuedAs`) and gives the input
//! that execution starts with: only the run (docs/runs.md, "Continuing in a new
//! execution"). The definition's next state starts it (`states:startExecution` of
//! `$$.StateMachine.Id`). A destroy carries its run and its locks; an export its carried
//! state (the run, its locks and the operations it has in flight).

use cdkd_aws::HeldLock;
use cdkd_core::continuation::next_execution;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::deps::Deps;
use crate::destroy::RunRef;
use crate::error::StepError;
use crate::export::carry::{Carry, Ctx};
use crate::runs;

/// The step's input: the kind of run and what its loop carries, and
/// `$$.Execution.Name` of the execution that continues (`execution`).
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ContinueInput {
    Destroy {
        run: RunRef,
        locks: Vec<HeldLock>,
        execution: String,
    },
    Export {
        carry: Box<Carry>,
        execution: String,
    },
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
    match input {
        ContinueInput::Destroy {
            run,
            locks,
            execution,
        } => destroy(run, locks, &execution, deps).await,
        ContinueInput::Export { carry, execution } => export(*carry, &execution, deps).await,
    }
}

async fn destroy(
    run: RunRef,
    locks: Vec<HeldLock>,
    execution: &str,
    deps: &Deps,
) -> Result<ContinueOutput, StepError> {
    let store = deps.store(&run.bucket, &run.prefix).await;
    let key = runs::progress_key(&run.prefix, &run.run_id);
    let mut progress = runs::Progress::read(&store, &key).await?.ok_or_else(|| {
        StepError::bad_input(format!(
            "run {} has no progress.json under s3://{}/{}",
            run.run_id, run.bucket, run.prefix
        ))
    })?;
    let name = next_execution(progress.rec.continued_as.as_deref(), execution);
    progress.rec.continued_as = Some(name.clone());
    progress.save(&store).await?;
    tracing::info!(run = %run.run_id, next = %name, "run continues in a new execution");
    let continuation = json!({"kind": "destroy", "run": run, "locks": locks});
    Ok(ContinueOutput {
        input: next_input(&run, continuation),
        name,
    })
}

/// The export's continuation: the step writes only the run's own `progress.json` (over
/// the version it read, so a resume that took the run over in between is never
/// overwritten), so it renews no lock; the new execution's first poll renews them when
/// due, as every poll does.
async fn export(carry: Carry, execution: &str, deps: &Deps) -> Result<ContinueOutput, StepError> {
    let ctx = Ctx::without_renewal(carry, deps).await;
    let mut rec = ctx.progress().await?;
    let name = next_execution(rec.continued_as.as_deref(), execution);
    if rec.continued_as.as_deref() != Some(&name) {
        rec.log.push(format!(
            "continue: the run goes on in execution {name} (execution history limit)"
        ));
    }
    rec.continued_as = Some(name.clone());
    ctx.save(&rec).await?;
    let mut carry = ctx.carry;
    // The log the record now holds, and a new execution's count of turns.
    carry.unsaved_log.clear();
    carry.loops = 0;
    carry.continue_as_new = false;
    let run = carry.run.clone();
    tracing::info!(run = %run.run_id, next = %name, "run continues in a new execution");
    let continuation = json!({"kind": "export", "run": run, "carry": carry});
    Ok(ContinueOutput {
        input: next_input(&run, continuation),
        name,
    })
}

/// The input the next execution starts with: where the run's stack and state are, and
/// what its loop carries.
fn next_input(run: &RunRef, continuation: Value) -> Value {
    json!({
        "stack": run.stack,
        "stackRegion": run.region,
        "stateBucket": run.bucket,
        "statePrefix": run.prefix,
        "continuation": continuation,
    })
}
