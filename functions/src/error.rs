//! The error a step returns. `name` is what the state machine's `Retry` and `Catch`
//! match on (it becomes the Lambda error type); `message` is one line naming the stack
//! and the cause.

use cdkd_aws::{LockError, StoreError};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{name}: {message}")]
pub struct StepError {
    pub name: String,
    pub message: String,
}

/// Error names used by the definitions in `statemachines/`.
pub mod names {
    /// The run refuses to act on this stack (damaged record, nested child, importers...).
    pub const REFUSED: &str = "Refused";
    /// Another process holds the stack's lock.
    pub const LOCK_HELD: &str = "LockHeld";
    /// The lock this run held was taken over or removed: stop before touching anything.
    pub const LOCK_LOST: &str = "LockLost";
    /// A state write lost a race with another writer.
    pub const CONFLICT: &str = "Conflict";
    /// A passing AWS failure; the definitions retry it.
    pub const TRANSIENT: &str = "Transient";
    /// The step's input is not what the definition should pass.
    pub const BAD_INPUT: &str = "BadInput";
    /// A CloudFormation change set or stack operation of an export failed.
    pub const CHANGE_SET_FAILED: &str = "ChangeSetFailed";
    /// A phase-2 pre-delete failed (after phase 1 imported the stack).
    pub const PRE_DELETE_FAILED: &str = "PreDeleteFailed";
}

impl StepError {
    pub fn new(name: &str, message: impl Into<String>) -> Self {
        StepError {
            name: name.to_string(),
            message: one_line(&message.into()),
        }
    }
    pub fn refused(message: impl Into<String>) -> Self {
        Self::new(names::REFUSED, message)
    }
    pub fn bad_input(message: impl Into<String>) -> Self {
        Self::new(names::BAD_INPUT, message)
    }
    pub fn transient(message: impl Into<String>) -> Self {
        Self::new(names::TRANSIENT, message)
    }
}

fn one_line(s: &str) -> String {
    s.split(['\n', '\r'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

impl From<StoreError> for StepError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Conflict { .. } => StepError::new(names::CONFLICT, e.to_string()),
            StoreError::Refused(_) | StoreError::LockRead { .. } => {
                StepError::refused(e.to_string())
            }
            other => StepError::transient(other.to_string()),
        }
    }
}

impl From<LockError> for StepError {
    fn from(e: LockError) -> Self {
        match e {
            LockError::Held { .. } => StepError::new(names::LOCK_HELD, e.to_string()),
            LockError::Lost { .. } => StepError::new(names::LOCK_LOST, e.to_string()),
            LockError::Aws { .. } => StepError::transient(e.to_string()),
        }
    }
}

impl From<cdkd_aws::changeset::ChangeSetError> for StepError {
    /// A throttled or transient CloudFormation failure is retried by the definition;
    /// anything else stops the run (the abort path reports it).
    fn from(e: cdkd_aws::changeset::ChangeSetError) -> Self {
        if e.class.is_retryable() {
            StepError::transient(e.to_string())
        } else {
            StepError::new(names::CHANGE_SET_FAILED, e.to_string())
        }
    }
}

/// The one line of a caught error (`{"Error": name, "Cause": text}`, what a `Catch`
/// puts in the state): `<name>: <cause>`.
pub fn caught_cause(error: &serde_json::Value) -> String {
    let field = |k: &str| {
        error
            .get(k)
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    format!(
        "{}: {}",
        field("Error"),
        cdkd_core::text::flatten_str(&field("Cause"))
    )
}
