//! `cdkd-flow workflow run`: run a Step Functions definition in-process with cdkd-engine.
//!
//! Task states are resolved through a `StepRegistry`: the project's steps, keyed by the
//! definition-substitution name their `FunctionName` uses (`DestroyPlanFunctionArn`...),
//! plus the engine's test functions (`cdkd-flow:test:echo`, ...).

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use cdkd_core::view::workflow::{self, EngineEvent, WorkflowResult};
use cdkd_core::workflow_refusal::{WorkflowFile, WorkflowRefusal};
use cdkd_engine::testfns::{self, TestFunctions};
use cdkd_engine::{Dispatch, Engine, EngineOptions, Event, Outcome, StateMachine, TaskHandler};
use clap::Subcommand;
use serde_json::{json, Value};

use crate::error::CliError;
use crate::global::GlobalOpts;

const RUN_HELP: &str = "\
Runs an Amazon States Language definition in-process, with Step Functions' semantics, and \
prints the result. With --json stdout is exactly {\"status\":\"SUCCEEDED\",\"output\":...} \
or {\"status\":\"FAILED\",\"error\":\"...\",\"cause\":\"...\"}. Exit 0 when the execution \
succeeded, 1 when it failed or the definition was refused, 2 for a usage error.

Task states:
  - arn:aws:states:::lambda:invoke with a FunctionName, or a Lambda function ARN, are \
resolved to the project's steps by the substitution name of their FunctionName (e.g. \
${DestroyPlanFunctionArn}); unless --sub gives a value, such a name is substituted with \
a local ARN routed to the step.
  - Test functions, usable as FunctionName without any substitution:
      cdkd-flow:test:echo   returns its payload
      cdkd-flow:test:fail   fails with payload.error (default TestError) / payload.cause
      cdkd-flow:test:flaky  fails with payload.error (default Flaky) the first \
payload.failures (default 1) calls per payload.key, then returns {key, attempts}
      cdkd-flow:test:sleep  sleeps payload.seconds, then returns its payload
  - arn:aws:states:::states:startExecution.sync[:2] runs a definition given with \
--machine NAME=FILE as a child execution; ${NAME} is substituted with its ARN.

Refused at load time (one line naming the state and the feature): JSONata, variables \
(Assign), Distributed Map (ItemReader, ResultWriter, ItemBatcher, ToleratedFailure*, \
Mode DISTRIBUTED), other Task resources, unknown state types and fields.";

#[derive(Debug, Subcommand)]
pub enum WorkflowCommand {
    /// Run a definition in-process with the local engine.
    #[command(long_about = RUN_HELP)]
    Run(RunArgs),
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The definition file (Amazon States Language, JSON).
    pub definition: PathBuf,
    /// The execution input (JSON; default {}).
    #[arg(long, conflicts_with = "input_file")]
    pub input: Option<String>,
    /// Read the execution input from a file.
    #[arg(long, value_name = "FILE")]
    pub input_file: Option<PathBuf>,
    /// A definition substitution: every ${NAME} in the definition becomes VALUE.
    #[arg(long = "sub", value_name = "NAME=VALUE")]
    pub subs: Vec<String>,
    /// Register another definition for states:startExecution.sync[:2]; ${NAME} becomes
    /// its state machine ARN.
    #[arg(long = "machine", value_name = "NAME=FILE")]
    pub machines: Vec<String>,
    /// Do not wait: Wait states and Retry intervals take no time.
    #[arg(long)]
    pub fast: bool,
    /// Multiply every Wait and Retry interval by this factor (1 = real time).
    #[arg(long, value_name = "FACTOR", conflicts_with = "fast")]
    pub time_scale: Option<f64>,
    /// The execution's name ($$.Execution.Name; default a random UUID).
    #[arg(long)]
    pub name: Option<String>,
    /// Print only {"status":...} JSON on stdout (no progress on stderr).
    #[arg(long)]
    pub json: bool,
}

/// The project's step implementations for Task states, keyed by the substitution name
/// the definitions use for their FunctionName (e.g. `DestroyPlanFunctionArn`).
#[derive(Default, Clone)]
pub struct StepRegistry {
    steps: BTreeMap<String, Arc<dyn TaskHandler>>,
}

impl StepRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&mut self, substitution_name: impl Into<String>, step: Arc<dyn TaskHandler>) {
        self.steps.insert(substitution_name.into(), step);
    }

    #[allow(dead_code)]
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.steps.keys().map(String::as_str)
    }
}

/// The steps `workflow run` knows. The project's steps register here as they are written.
pub fn project_steps() -> StepRegistry {
    let mut r = StepRegistry::new();
    for (sub, handler) in crate::local::lazy_steps() {
        r.insert(sub, handler);
    }
    r
}

/// The FunctionName a registered step gets when no --sub gives one.
pub fn local_function_arn(region: &str, substitution_name: &str) -> String {
    format!("arn:aws:lambda:{region}:123456789012:function:cdkd-flow-local-{substitution_name}")
}

fn split_pair(s: &str, flag: &str) -> Result<(String, String), CliError> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(CliError::usage(cdkd_core::usage::Usage::NotNameValue {
            flag: flag.to_string(),
            given: s.to_string(),
        })),
    }
}

/// The text of a file `workflow run` reads (`what`).
fn read(path: &PathBuf, what: WorkflowFile) -> Result<String, CliError> {
    std::fs::read_to_string(path).map_err(|e| {
        CliError::refused(&WorkflowRefusal::Unreadable {
            what,
            path: path.display().to_string(),
            error: e.to_string(),
        })
    })
}

/// Everything a run needs, built from the command line and a step registry.
pub struct Prepared {
    pub engine: Engine,
    pub machine: StateMachine,
}

/// Load the definitions, wire Task states to `registry` and the test functions.
pub fn prepare(
    a: &RunArgs,
    registry: &StepRegistry,
    region: &str,
    observer: Option<cdkd_engine::Observer>,
) -> Result<Prepared, CliError> {
    let mut subs: HashMap<String, String> = HashMap::new();
    let mut dispatch = Dispatch::new();
    let tests: Arc<dyn TaskHandler> = Arc::new(TestFunctions::new());
    for n in testfns::NAMES {
        dispatch.route(*n, tests.clone());
    }
    let user: Vec<(String, String)> = a
        .subs
        .iter()
        .map(|s| split_pair(s, "--sub"))
        .collect::<Result<_, _>>()?;
    let machines: Vec<(String, String)> = a
        .machines
        .iter()
        .map(|s| split_pair(s, "--machine"))
        .collect::<Result<_, _>>()?;
    for (name, step) in &registry.steps {
        let value = user
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| local_function_arn(region, name));
        dispatch.route(value.clone(), step.clone());
        subs.insert(name.clone(), value);
    }
    let options = EngineOptions {
        time_scale: if a.fast {
            0.0
        } else {
            a.time_scale.unwrap_or(1.0)
        },
        region: region.to_string(),
        ..EngineOptions::default()
    };
    if !(options.time_scale >= 0.0 && options.time_scale.is_finite()) {
        return Err(CliError::usage(cdkd_core::usage::Usage::BadTimeScale));
    }
    let mut engine = Engine::new(Arc::new(dispatch), options);
    if let Some(o) = observer {
        engine = engine.with_observer(o);
    }
    for (name, _) in &machines {
        subs.insert(name.clone(), engine.state_machine_arn(name));
    }
    for (k, v) in user {
        subs.insert(k, v);
    }
    let refuse = |what: &str, e: cdkd_engine::LoadError| {
        let missing = match &e {
            cdkd_engine::LoadError::MissingSubstitution { name } => Some(name.to_string()),
            _ => None,
        };
        CliError::refused(&WorkflowRefusal::DoesNotLoad {
            file: what.to_string(),
            error: e.to_string(),
            missing,
        })
    };
    for (name, file) in &machines {
        let text = read(&PathBuf::from(file), WorkflowFile::Definition)?;
        let sm = StateMachine::load(&text, &subs)
            .map_err(|e| refuse(file, e))?
            .with_name(name.clone());
        engine.register(engine.state_machine_arn(name), sm);
    }
    let text = read(&a.definition, WorkflowFile::Definition)?;
    let stem = a
        .definition
        .file_name()
        .and_then(|s| s.to_str())
        .map(|s| {
            s.trim_end_matches(".json")
                .trim_end_matches(".asl")
                .to_string()
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "local".into());
    let machine = StateMachine::load(&text, &subs)
        .map_err(|e| refuse(&a.definition.display().to_string(), e))?
        .with_name(stem);
    Ok(Prepared { engine, machine })
}

fn parse_input(a: &RunArgs) -> Result<Value, CliError> {
    let (text, what) = match (&a.input, &a.input_file) {
        (Some(t), _) => (t.clone(), "--input".to_string()),
        (None, Some(f)) => (read(f, WorkflowFile::Input)?, f.display().to_string()),
        (None, None) => return Ok(json!({})),
    };
    serde_json::from_str(&text).map_err(|e| {
        CliError::usage(cdkd_core::usage::Usage::NotJson {
            what,
            error: e.to_string(),
        })
    })
}

/// An engine event as the view reads it.
fn engine_event<'a>(e: &'a Event, kind: &'a str) -> EngineEvent<'a> {
    EngineEvent {
        id: e.id,
        kind,
        state: e.state.as_deref(),
        error: e.error.as_deref(),
        details: e.details.as_ref(),
    }
}

/// An outcome as the view reads it.
fn workflow_result(o: &Outcome) -> WorkflowResult<'_> {
    match o {
        Outcome::Succeeded(v) => WorkflowResult::Succeeded(v),
        Outcome::Failed(f) => WorkflowResult::Failed {
            error: &f.error,
            cause: &f.cause,
        },
    }
}

pub async fn run(g: &GlobalOpts, c: WorkflowCommand) -> Result<ExitCode, CliError> {
    let WorkflowCommand::Run(a) = c;
    let input = parse_input(&a)?;
    let region = g.region.clone().unwrap_or_else(|| "us-east-1".into());
    let observer: Option<cdkd_engine::Observer> = if a.json {
        None
    } else {
        Some(Arc::new(|e: &Event| {
            eprintln!("{}", workflow::event_line(&engine_event(e, &e.kind.name())))
        }))
    };
    let p = prepare(&a, &project_steps(), &region, observer)?;
    let outcome = match &a.name {
        Some(n) => p.engine.run_named(&p.machine, input, n).await,
        None => p.engine.run(&p.machine, input).await,
    };
    if a.json {
        crate::out::println(&workflow::result_json(&workflow_result(&outcome)));
    } else {
        crate::out::println(&workflow::result_text(&workflow_result(&outcome)));
    }
    Ok(match outcome {
        Outcome::Succeeded(_) => ExitCode::SUCCESS,
        Outcome::Failed(f) => {
            // The failure line on stderr (docs/cli.md: every failure begins `error:`);
            // stdout keeps the result.
            if !a.json {
                eprintln!(
                    "{}",
                    cdkd_core::view::error_line(
                        &WorkflowRefusal::ExecutionFailed {
                            error: f.error.clone(),
                            cause: f.cause.clone(),
                        }
                        .to_string()
                    )
                );
            }
            ExitCode::from(1)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_failure_reads_as_a_failed_result() {
        let o = Outcome::Failed(cdkd_engine::Failure::new("LockHeld", "held"));
        assert_eq!(
            workflow_result(&o),
            WorkflowResult::Failed {
                error: "LockHeld",
                cause: "held"
            }
        );
        let out = json!({"a": 1});
        assert_eq!(
            workflow_result(&Outcome::Succeeded(out.clone())),
            WorkflowResult::Succeeded(&out)
        );
    }
}
