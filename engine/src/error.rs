//! Load-time refusals and run-time failures.

use serde::Serialize;

/// Why a definition was refused at load time. Every variant names the state (when there
/// is one) and the feature or rule.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LoadError {
    #[error("the definition is not valid JSON: {0}")]
    Json(String),
    #[error("the definition uses ${{{name}}} but no substitution named {name} was given")]
    MissingSubstitution { name: String },
    #[error("{}unsupported feature: {feature}", in_state(.state))]
    Unsupported {
        state: Option<String>,
        feature: String,
    },
    #[error("{}invalid definition: {message}", in_state(.state))]
    Invalid {
        state: Option<String>,
        message: String,
    },
}

fn in_state(s: &Option<String>) -> String {
    match s {
        Some(s) => format!("state '{s}': "),
        None => String::new(),
    }
}

/// A failed execution (or a failed state, before Retry / Catch): the error name and the
/// cause, as Step Functions reports them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    pub error: String,
    pub cause: String,
}

impl Failure {
    pub fn new(error: impl Into<String>, cause: impl Into<String>) -> Self {
        Failure {
            error: error.into(),
            cause: cause.into(),
        }
    }
}

/// The error names Step Functions defines (`States.*`).
pub mod names {
    pub const ALL: &str = "States.ALL";
    pub const RUNTIME: &str = "States.Runtime";
    pub const TASK_FAILED: &str = "States.TaskFailed";
    pub const TIMEOUT: &str = "States.Timeout";
    pub const NO_CHOICE_MATCHED: &str = "States.NoChoiceMatched";
    pub const PARAMETER_PATH_FAILURE: &str = "States.ParameterPathFailure";
    pub const RESULT_PATH_MATCH_FAILURE: &str = "States.ResultPathMatchFailure";
    pub const INTRINSIC_FAILURE: &str = "States.IntrinsicFailure";
    pub const BRANCH_FAILED: &str = "States.BranchFailed";
    pub const DATA_LIMIT_EXCEEDED: &str = "States.DataLimitExceeded";
}

/// The largest state output or task result Step Functions passes on: 256 KiB, counted
/// as the UTF-8 bytes of its JSON text ("Maximum input or output size for a task,
/// state, or execution", Step Functions service quotas). One byte more fails with
/// `States.DataLimitExceeded`.
pub const MAX_PAYLOAD_BYTES: usize = 262_144;
