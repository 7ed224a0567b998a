//! Execution events, named like Step Functions' execution history.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    ExecutionStarted,
    ExecutionSucceeded,
    ExecutionFailed,
    ExecutionTimedOut,
    /// `<Type>StateEntered`, e.g. TaskStateEntered.
    StateEntered(&'static str),
    /// `<Type>StateExited`, e.g. ChoiceStateExited.
    StateExited(&'static str),
    TaskScheduled,
    TaskStarted,
    /// A `.waitForTaskToken` task's function returned: the task now waits for its
    /// token to be answered (`output`: the invocation's result).
    TaskSubmitted,
    TaskSucceeded,
    TaskFailed,
    TaskTimedOut,
    /// Not in Step Functions' history (it shows the next TaskScheduled): a retrier
    /// matched and the state runs again after `details.delaySeconds`.
    StateRetryScheduled,
    MapStateStarted,
    MapIterationStarted,
    MapIterationSucceeded,
    MapIterationFailed,
    MapStateSucceeded,
    MapStateFailed,
    ParallelStateStarted,
    ParallelStateSucceeded,
    ParallelStateFailed,
    WaitStateWaiting,
}

impl EventKind {
    /// The history event type's name.
    pub fn name(&self) -> String {
        match self {
            EventKind::StateEntered(t) => format!("{t}StateEntered"),
            EventKind::StateExited(t) => format!("{t}StateExited"),
            other => format!("{other:?}"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Event {
    /// 1-based, per execution.
    pub id: u64,
    pub timestamp: DateTime<Utc>,
    /// The execution's name (a child execution has its own).
    pub execution: String,
    pub kind: EventKind,
    pub state: Option<String>,
    pub input: Option<Value>,
    pub output: Option<Value>,
    pub error: Option<String>,
    pub cause: Option<String>,
    /// Resource, map index, retry delay...
    pub details: Option<Value>,
}

/// Receives every event, in order, synchronously: keep it quick.
pub type Observer = Arc<dyn Fn(&Event) + Send + Sync>;
