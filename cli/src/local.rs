//! The project's workflow steps as engine task handlers: what `--local` runs
//! ([`LocalSteps`], the adapter of cdkd-functions) and what `workflow run` resolves a
//! step's substitution name to.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
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
        .map_err(|e| CliError::Refused(format!("the {name} definition does not load: {e}")))
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

/// This host's name: `HOSTNAME`, else `/etc/hostname` (what a local run's lock names,
/// and who decides an approval).
pub fn host_name() -> Option<String> {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty())
        })
}

/// The host and process of this CLI, named in the locks a local run takes.
pub fn this_process() -> cdkd_functions::deps::LocalProcess {
    cdkd_functions::deps::LocalProcess {
        host: host_name().unwrap_or_else(|| "host".into()),
        pid: std::process::id(),
    }
}

/// Whether process `pid` of this host is alive and is a cdkd-flow process (a pid reused
/// by another program, or a zombie, counts as gone). Without `/proc` it cannot tell and
/// answers alive: the run's lock then ends by expiring, never by a guess.
pub fn process_alive(pid: u32) -> bool {
    let proc_dir = std::path::Path::new("/proc");
    if !proc_dir.is_dir() {
        return true;
    }
    let dir = proc_dir.join(pid.to_string());
    match std::fs::read(dir.join("cmdline")) {
        Ok(cmd) => {
            let zombie = std::fs::read_to_string(dir.join("stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')
                        .map(|(_, rest)| rest.trim_start().starts_with('Z'))
                })
                .unwrap_or(false);
            !zombie && String::from_utf8_lossy(&cmd).contains("cdkd-flow")
        }
        Err(_) => false,
    }
}
