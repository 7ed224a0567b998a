//! The loaded, validated form of a definition. Built by `load`, run by `exec`.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::path::JsonPath;
use crate::template::Template;

/// A set of states with its start: the machine itself, a Parallel branch or a Map's
/// ItemProcessor.
#[derive(Debug, Clone)]
pub struct Graph {
    pub start_at: String,
    pub states: HashMap<String, State>,
}

#[derive(Debug, Clone)]
pub struct State {
    pub name: String,
    pub kind: Kind,
    /// None = `End: true` (or a terminal type).
    pub next: Option<String>,
    /// None = `InputPath: null`.
    pub input_path: Option<JsonPath>,
    /// None = `OutputPath: null`.
    pub output_path: Option<JsonPath>,
}

#[derive(Debug, Clone)]
pub enum Kind {
    Task(Box<TaskSpec>),
    Pass {
        result: Option<Value>,
        parameters: Option<Template>,
        result_path: Option<JsonPath>,
    },
    Choice {
        choices: Vec<(Rule, String)>,
        default: Option<String>,
    },
    Wait(WaitSpec),
    Succeed,
    Fail {
        error: Option<StrOrPath>,
        cause: Option<StrOrPath>,
    },
    Map(Box<MapSpec>),
    Parallel(Box<ParallelSpec>),
}

impl Kind {
    /// The state type's name as Step Functions spells it (used in event names).
    pub fn type_name(&self) -> &'static str {
        match self {
            Kind::Task(_) => "Task",
            Kind::Pass { .. } => "Pass",
            Kind::Choice { .. } => "Choice",
            Kind::Wait(_) => "Wait",
            Kind::Succeed => "Succeed",
            Kind::Fail { .. } => "Fail",
            Kind::Map(_) => "Map",
            Kind::Parallel(_) => "Parallel",
        }
    }
}

#[derive(Debug, Clone)]
pub enum StrOrPath {
    Str(String),
    Path(JsonPath),
    Call(crate::intrinsic::Intrinsic),
}

#[derive(Debug, Clone)]
pub enum Seconds {
    Fixed(f64),
    Path(JsonPath),
}

#[derive(Debug, Clone)]
pub enum WaitSpec {
    Seconds(Seconds),
    Timestamp(String),
    TimestampPath(JsonPath),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Resource {
    /// `arn:aws:states:::lambda:invoke`
    LambdaInvoke,
    /// `arn:aws:states:::lambda:invoke.waitForTaskToken`: the function is invoked with
    /// `$$.Task.Token` in its Parameters, its result is ignored, and the task ends when
    /// `Engine::send_task_success` / `send_task_failure` answers the token.
    LambdaInvokeWaitForTaskToken,
    /// `arn:aws:lambda:...:function:...` used directly.
    LambdaArn(String),
    /// `arn:aws:states:::states:startExecution.sync` (`v2` for `.sync:2`).
    StartExecutionSync { v2: bool },
    /// `arn:aws:states:::states:startExecution`: start the execution and go on (its
    /// outcome: [`Engine::outcome_of`](crate::Engine::outcome_of)).
    StartExecution,
}

#[derive(Debug, Clone)]
pub struct Common {
    pub result_selector: Option<Template>,
    /// None = `ResultPath: null` (discard the result).
    pub result_path: Option<JsonPath>,
    pub retry: Vec<Retrier>,
    pub catch: Vec<Catcher>,
}

#[derive(Debug, Clone)]
pub struct TaskSpec {
    pub resource: Resource,
    pub parameters: Option<Template>,
    pub common: Common,
    pub timeout: Option<Seconds>,
    pub heartbeat: Option<Seconds>,
}

#[derive(Debug, Clone)]
pub struct MapSpec {
    /// None = `ItemsPath` absent (the effective input itself).
    pub items_path: Option<JsonPath>,
    pub item_selector: Option<Template>,
    pub processor: Arc<Graph>,
    pub max_concurrency: Option<Seconds>,
    pub common: Common,
}

#[derive(Debug, Clone)]
pub struct ParallelSpec {
    pub branches: Vec<Arc<Graph>>,
    pub parameters: Option<Template>,
    pub common: Common,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Jitter {
    Full,
    None,
}

#[derive(Debug, Clone)]
pub struct Retrier {
    pub error_equals: Vec<String>,
    pub interval_seconds: f64,
    pub max_attempts: u32,
    pub backoff_rate: f64,
    pub max_delay_seconds: Option<f64>,
    pub jitter: Jitter,
}

#[derive(Debug, Clone)]
pub struct Catcher {
    pub error_equals: Vec<String>,
    pub next: String,
    /// None = `ResultPath: null`.
    pub result_path: Option<JsonPath>,
}

#[derive(Debug, Clone)]
pub enum Rule {
    And(Vec<Rule>),
    Or(Vec<Rule>),
    Not(Box<Rule>),
    Test {
        variable: JsonPath,
        op: Op,
        operand: Operand,
    },
}

#[derive(Debug, Clone)]
pub enum Operand {
    Value(Value),
    Path(JsonPath),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cmp {
    Eq,
    Lt,
    Gt,
    Le,
    Ge,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    String(Cmp),
    StringMatches,
    Numeric(Cmp),
    Boolean,
    Timestamp(Cmp),
    IsNull,
    IsPresent,
    IsNumeric,
    IsString,
    IsBoolean,
    IsTimestamp,
}
