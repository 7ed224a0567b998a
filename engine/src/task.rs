//! Task dispatch: the caller implements `TaskHandler`.

use async_trait::async_trait;
use serde_json::Value;

/// A failed function: `error` is its error type name (what Retry / Catch match on).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskError {
    pub error: String,
    pub cause: String,
}

impl TaskError {
    pub fn new(error: impl Into<String>, cause: impl Into<String>) -> Self {
        TaskError {
            error: error.into(),
            cause: cause.into(),
        }
    }
}

/// Runs the functions Task states name. `function` is the `FunctionName` of a
/// `lambda:invoke` (after substitutions) or the ARN of a plain Lambda resource.
#[async_trait]
pub trait TaskHandler: Send + Sync {
    async fn invoke(&self, function: &str, payload: Value) -> Result<Value, TaskError>;
}

/// A handler for definitions without Task states: every invocation fails.
pub struct NoTasks;

#[async_trait]
impl TaskHandler for NoTasks {
    async fn invoke(&self, function: &str, _payload: Value) -> Result<Value, TaskError> {
        Err(TaskError::new(
            "Lambda.ResourceNotFoundException",
            format!("no function named '{function}' is registered with the local engine"),
        ))
    }
}

/// Routes each function name to its own handler; an unknown name fails as Lambda does
/// (`Lambda.ResourceNotFoundException`).
#[derive(Default, Clone)]
pub struct Dispatch {
    routes: std::collections::HashMap<String, std::sync::Arc<dyn TaskHandler>>,
}

impl Dispatch {
    pub fn new() -> Self {
        Self::default()
    }

    /// Calls naming `function` (a FunctionName value or a Lambda ARN) go to `handler`.
    pub fn route(&mut self, function: impl Into<String>, handler: std::sync::Arc<dyn TaskHandler>) {
        self.routes.insert(function.into(), handler);
    }

    pub fn knows(&self, function: &str) -> bool {
        self.routes.contains_key(function)
    }
}

#[async_trait]
impl TaskHandler for Dispatch {
    async fn invoke(&self, function: &str, payload: Value) -> Result<Value, TaskError> {
        match self.routes.get(function) {
            Some(h) => h.invoke(function, payload).await,
            None => Err(TaskError::new(
                "Lambda.ResourceNotFoundException",
                format!(
                    "Function not found: {function} (no local step or test function has this name)"
                ),
            )),
        }
    }
}
