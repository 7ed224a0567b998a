//! The project's workflow steps as engine task handlers: what `--local` runs
//! ([`LocalSteps`], the adapter of cdkd-functions) and what `workflow run` resolves a
//! step's substitution name to.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use cdkd_core::workflow_refusal::WorkflowRefusal;
use cdkd_engine::{Engine, EngineOptions, StateMachine, TaskError, TaskHandler};
use cdkd_functions::local::invoke_step;
pub use cdkd_functions::local::LocalSteps;
use cdkd_functions::{steps, Deps};
use serde_json::Value;
use tokio::sync::OnceCell;

use crate::error::CliError;

/// The engine of a `--local` run over the project's steps; `fast`: no sleeping in `Wait`
/// states.
pub fn engine(deps: &Deps, fast: bool) -> Engine {
    let options = EngineOptions {
        time_scale: if fast { 0.0 } else { 1.0 },
        ..EngineOptions::default()
    };
    Engine::new(Arc::new(LocalSteps { deps: deps.clone() }), options)
}

/// One of the project's definitions (`cdkd_functions::definitions`) loaded for a local
/// run under its deployed name (`cdkd-flow-destroy`...).
pub fn definition(
    text: &str,
    name: &str,
    subs: &HashMap<String, String>,
) -> Result<StateMachine, CliError> {
    StateMachine::load(text, subs)
        .map(|sm| sm.with_name(name))
        .map_err(|e| {
            CliError::refused(&WorkflowRefusal::DefinitionDoesNotLoad {
                name: name.to_string(),
                error: e.to_string(),
            })
        })
}

/// One step whose dependencies are built from the environment on its first call (so
/// `workflow run` on a definition without the project's steps needs no AWS setup).
pub struct LazyStep {
    step: &'static str,
    deps: Arc<OnceCell<Deps>>,
}

#[async_trait]
impl TaskHandler for LazyStep {
    async fn invoke(&self, _function: &str, payload: Value) -> Result<Value, TaskError> {
        let deps = self.deps.get_or_init(Deps::from_env).await;
        invoke_step(self.step, payload, deps).await
    }
}

/// Every project step, keyed by its definition-substitution name.
pub fn lazy_steps() -> Vec<(&'static str, Arc<dyn TaskHandler>)> {
    let deps = Arc::new(OnceCell::new());
    steps::STEPS
        .iter()
        .map(|(step, sub)| {
            (
                *sub,
                Arc::new(LazyStep {
                    step,
                    deps: deps.clone(),
                }) as Arc<dyn TaskHandler>,
            )
        })
        .collect()
}

/// The host and process of this CLI, named in the locks a local run takes
/// (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first").
pub fn this_process() -> cdkd_functions::deps::LocalProcess {
    cdkd_functions::deps::LocalProcess {
        host: crate::host::host_name(),
        pid: std::process::id(),
    }
}
