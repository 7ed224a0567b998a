//! The steps as `cdkd-engine` task handlers (feature `engine`): the one adapter that
//! lets the engine run a definition's Task states in-process, used by
//! `cdkd-flow destroy|cleanup --local`, `cdkd-flow workflow run` and the end-to-end tests.

use async_trait::async_trait;
use cdkd_engine::{TaskError, TaskHandler};
use serde_json::Value;

use crate::{steps, Deps, StepError};

/// Runs the step its `FunctionName` names (`destroy-plan`...) with these dependencies;
/// a step's error becomes the Task's error name and cause, as Lambda reports it.
#[derive(Clone)]
pub struct LocalSteps {
    pub deps: Deps,
}

impl LocalSteps {
    pub fn new(deps: Deps) -> Self {
        LocalSteps { deps }
    }
}

#[async_trait]
impl TaskHandler for LocalSteps {
    async fn invoke(&self, function: &str, payload: Value) -> Result<Value, TaskError> {
        invoke_step(function, payload, &self.deps).await
    }
}

/// Runs one step as a Task state would (what a handler with its own way of getting its
/// [`Deps`] calls).
pub async fn invoke_step(step: &str, payload: Value, deps: &Deps) -> Result<Value, TaskError> {
    steps::invoke(step, payload, deps)
        .await
        .map_err(TaskError::from)
}

impl From<StepError> for TaskError {
    fn from(e: StepError) -> Self {
        TaskError::new(e.name, e.message)
    }
}

/// Runs `sm` as the execution `name` and, while an execution ends handing its run over
/// to another (docs/runs.md, "Continuing in a new execution": its output names
/// `continuedAs`, started by this engine), waits for that one: the run's outcome, and
/// the names of the executions it took, first to last.
pub async fn run_continued(
    engine: &cdkd_engine::Engine,
    sm: &cdkd_engine::StateMachine,
    input: Value,
    name: &str,
) -> (cdkd_engine::Outcome, Vec<String>) {
    use cdkd_engine::{Failure, Outcome};
    let mut executions = vec![name.to_string()];
    let mut outcome = engine.run_named(sm, input, name).await;
    while let Outcome::Succeeded(out) = &outcome {
        let Some(next) = cdkd_core::continuation::continued_as(out).map(str::to_string) else {
            break;
        };
        outcome = engine.outcome_of(&next).await.unwrap_or_else(|| {
            Outcome::Failed(Failure::new(
                "States.Runtime",
                format!("the run continued in execution {next}, which this engine did not start"),
            ))
        });
        executions.push(next);
    }
    (outcome, executions)
}
