//! cdkd-engine: runs an Amazon States Language definition in-process, with Step
//! Functions' semantics (the `--local` mode of cdkd-flow).
//!
//! ```no_run
//! # async fn demo() -> Result<(), cdkd_engine::LoadError> {
//! use std::{collections::HashMap, sync::Arc};
//! use cdkd_engine::{Engine, EngineOptions, NoTasks, StateMachine};
//! let sm = StateMachine::load(r#"{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}"#, &HashMap::new())?;
//! let engine = Engine::new(Arc::new(NoTasks), EngineOptions::default());
//! let outcome = engine.run(&sm, serde_json::json!({"a": 1})).await;
//! # Ok(()) }
//! ```
//!
//! Supported: Task (lambda:invoke, lambda:invoke.waitForTaskToken, a Lambda ARN,
//! states:startExecution, .sync and .sync:2), Pass, Choice, Wait, Succeed, Fail, Map
//! (inline), Parallel, Retry, Catch, TimeoutSeconds and HeartbeatSeconds, the JSONPath
//! fields, the context object (`$$.Task.Token` included) and the intrinsic functions in
//! `intrinsic::FUNCTIONS`. A `.waitForTaskToken` task invokes its function with the
//! token it passes, ignores the function's result and waits until
//! [`Engine::send_task_success`] or [`Engine::send_task_failure`] answers the token
//! ([`Engine::send_task_heartbeat`] keeps it alive under HeartbeatSeconds).
//! Refused at load time: JSONata, variables (Assign), Distributed Map (ItemReader,
//! ResultWriter, ItemBatcher, ToleratedFailure*, Mode DISTRIBUTED), other Task
//! resources, unknown state types and fields.

mod callback;
mod choice;
mod error;
mod events;
mod exec;
pub mod intrinsic;
mod load;
mod model;
pub mod path;
mod task;
mod template;
pub mod testfns;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use serde_json::Value;

pub use callback::CallbackError;
pub use error::{names, Failure, LoadError, MAX_PAYLOAD_BYTES};
pub use events::{Event, EventKind, Observer};
pub use task::{Dispatch, NoTasks, TaskError, TaskHandler};

/// A loaded and validated definition.
#[derive(Debug, Clone)]
pub struct StateMachine {
    name: String,
    graph: Arc<model::Graph>,
    timeout_seconds: Option<f64>,
}

impl StateMachine {
    /// Parse `definition`, apply `${Name}` substitutions and validate it.
    pub fn load(definition: &str, subs: &HashMap<String, String>) -> Result<Self, LoadError> {
        let v: Value =
            serde_json::from_str(definition).map_err(|e| LoadError::Json(e.to_string()))?;
        Self::from_value(v, subs)
    }

    /// As `load`, from parsed JSON.
    pub fn from_value(v: Value, subs: &HashMap<String, String>) -> Result<Self, LoadError> {
        let v = load::substitute(v, subs)?;
        let graph = load::load_definition(&v)?;
        Ok(StateMachine {
            name: "local".into(),
            graph: Arc::new(graph),
            timeout_seconds: load::machine_timeout(&v)?,
        })
    }

    /// The state machine's name (in `$$.StateMachine.Name` and execution ids).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

/// How an execution ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Succeeded(Value),
    Failed(Failure),
}

#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// Multiplies every Wait and Retry interval: 1.0 waits for real, 0.0 not at all.
    pub time_scale: f64,
    /// Multiplies TimeoutSeconds / HeartbeatSeconds (kept separate so that `time_scale
    /// 0` does not make every timeout fire at once).
    pub timeout_scale: f64,
    /// Region and account used in the ARNs of executions and state machines.
    pub region: String,
    pub account: String,
    /// The most events an execution's history holds (docs/emulator.md, "Step Functions
    /// execution history"): Step Functions' 25,000, or `CDKD_FLOW_HISTORY_LIMIT`.
    pub history_limit: u64,
}

/// Step Functions' limit on a Standard execution's history ("Maximum execution history
/// size", Step Functions service quotas).
pub const MAX_HISTORY_EVENTS: u64 = 25_000;

/// The history limit in force: `CDKD_FLOW_HISTORY_LIMIT` when set to a number of at
/// least 10 (a test setting, docs/testing.md), else [`MAX_HISTORY_EVENTS`].
pub fn history_limit() -> u64 {
    std::env::var("CDKD_FLOW_HISTORY_LIMIT")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|n| *n >= 10)
        .unwrap_or(MAX_HISTORY_EVENTS)
}

impl EngineOptions {
    /// A TimeoutSeconds / HeartbeatSeconds of `seconds`, scaled by `timeout_scale`.
    pub fn scaled_timeout(&self, seconds: f64) -> std::time::Duration {
        std::time::Duration::from_secs_f64((seconds * self.timeout_scale).max(0.0))
    }
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            time_scale: 1.0,
            timeout_scale: 1.0,
            region: "us-east-1".into(),
            account: "123456789012".into(),
            history_limit: history_limit(),
        }
    }
}

/// Runs state machines. Cheap to clone.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    handler: Arc<dyn TaskHandler>,
    options: EngineOptions,
    observer: Option<Observer>,
    machines: RwLock<HashMap<String, StateMachine>>,
    pub(crate) callbacks: callback::Callbacks,
    /// Executions started by `states:startExecution` (not `.sync`), by name.
    pub(crate) started: Started,
    /// The input and start time of each execution `states:startExecution` started, by
    /// execution ARN, ended or not: a name is used once (ExecutionAlreadyExists).
    pub(crate) named: Named,
}

type Started = std::sync::Mutex<HashMap<String, tokio::task::JoinHandle<Result<Value, Failure>>>>;
type Named = std::sync::Mutex<HashMap<String, (Value, i64)>>;

impl Engine {
    pub fn new(handler: Arc<dyn TaskHandler>, options: EngineOptions) -> Self {
        Engine {
            inner: Arc::new(Inner {
                handler,
                options,
                observer: None,
                machines: RwLock::new(HashMap::new()),
                callbacks: callback::Callbacks::default(),
                started: Started::default(),
                named: Named::default(),
            }),
        }
    }

    /// Every event of every execution (children included) goes to `observer`.
    pub fn with_observer(self, observer: Observer) -> Self {
        let inner = match Arc::try_unwrap(self.inner) {
            Ok(mut i) => {
                i.observer = Some(observer);
                i
            }
            Err(shared) => Inner {
                handler: shared.handler.clone(),
                options: shared.options.clone(),
                observer: Some(observer),
                machines: RwLock::new(
                    shared
                        .machines
                        .read()
                        .map(|m| m.clone())
                        .unwrap_or_default(),
                ),
                // Tasks waiting on the shared engine keep answering there.
                callbacks: callback::Callbacks::default(),
                started: Started::default(),
                named: Named::default(),
            },
        };
        Engine {
            inner: Arc::new(inner),
        }
    }

    /// The ARN this engine gives a state machine of that name.
    pub fn state_machine_arn(&self, name: &str) -> String {
        let o = &self.inner.options;
        format!(
            "arn:aws:states:{}:{}:stateMachine:{name}",
            o.region, o.account
        )
    }

    /// Make `sm` startable by `states:startExecution.sync[:2]` under `arn` (a full ARN;
    /// a bare name is also accepted and matched against the ARN's last part).
    pub fn register(&self, arn: impl Into<String>, sm: StateMachine) {
        if let Ok(mut m) = self.inner.machines.write() {
            m.insert(arn.into(), sm);
        }
    }

    /// Answers the `.waitForTaskToken` task waiting for `token` with `output`: its
    /// result, on which ResultSelector, ResultPath and OutputPath then apply (Step
    /// Functions' SendTaskSuccess). An unknown token, one already answered or one whose
    /// task has ended is an error.
    pub fn send_task_success(&self, token: &str, output: Value) -> Result<(), CallbackError> {
        self.inner.callbacks.answer(token, Ok(output))
    }

    /// Fails the `.waitForTaskToken` task waiting for `token` with `error` and `cause`,
    /// which its Retry and Catch match as any task error (SendTaskFailure).
    pub fn send_task_failure(
        &self,
        token: &str,
        error: &str,
        cause: &str,
    ) -> Result<(), CallbackError> {
        self.inner
            .callbacks
            .answer(token, Err(Failure::new(error, cause)))
    }

    /// Restarts the HeartbeatSeconds clock of the task waiting for `token`
    /// (SendTaskHeartbeat).
    pub fn send_task_heartbeat(&self, token: &str) -> Result<(), CallbackError> {
        self.inner.callbacks.heartbeat(token)
    }

    /// The tokens tasks of this engine wait for now, sorted.
    pub fn waiting_task_tokens(&self) -> Vec<String> {
        self.inner.callbacks.tokens()
    }

    /// How the execution named `name`, started by a `states:startExecution` task of this
    /// engine, ends (awaited); `None` when no such execution was started here, or its
    /// outcome was already taken.
    pub async fn outcome_of(&self, name: &str) -> Option<Outcome> {
        let handle = self.inner.started.lock().ok()?.remove(name)?;
        Some(match handle.await {
            Ok(Ok(v)) => Outcome::Succeeded(v),
            Ok(Err(f)) => Outcome::Failed(f),
            Err(e) => Outcome::Failed(Failure::new(names::RUNTIME, e.to_string())),
        })
    }

    /// Run one execution with a generated name.
    pub async fn run(&self, sm: &StateMachine, input: Value) -> Outcome {
        let name = uuid::Uuid::new_v4().to_string();
        self.run_named(sm, input, &name).await
    }

    /// Run one execution named `name` (`$$.Execution.Name`).
    pub async fn run_named(&self, sm: &StateMachine, input: Value, name: &str) -> Outcome {
        match exec::run_execution(self.inner.clone(), sm.clone(), input, name.to_string()).await {
            Ok(v) => Outcome::Succeeded(v),
            Err(f) => Outcome::Failed(f),
        }
    }
}
