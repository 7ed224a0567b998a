//! The CLI's one error type: every failure becomes one clear line on stderr and an exit
//! code (1 for a refusal or an AWS error, 2 for a usage error).

use std::process::ExitCode;

use cdkd_aws::sfn::SfnError;
use cdkd_aws::{BucketError, StoreError};
use cdkd_core::view::refusal::TypedRefusal;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The command refused to act (bad record, held lock, ambiguous stack...).
    #[error("{0}")]
    Refused(String),
    /// AWS (or the emulator) answered with an error.
    #[error("{0}")]
    Aws(String),
    /// The command line was wrong in a way clap could not see.
    #[error("{0}")]
    Usage(String),
}

/// A record that reads but cannot be used, or a lock that cannot be read, refuses; any
/// other failure of the state bucket is an AWS error.
impl From<StoreError> for CliError {
    fn from(e: StoreError) -> Self {
        match e {
            e @ (StoreError::Refused(_) | StoreError::LockRead { .. }) => {
                CliError::Refused(e.to_string())
            }
            other => CliError::Aws(other.to_string()),
        }
    }
}

impl From<SfnError> for CliError {
    fn from(e: SfnError) -> Self {
        CliError::Aws(e.to_string())
    }
}

impl From<BucketError> for CliError {
    fn from(e: BucketError) -> Self {
        CliError::Aws(e.to_string())
    }
}

impl CliError {
    /// A refusal a core decision returned as data, in the words of its view
    /// (`cdkd_core::view::refusal`): the CLI words none of them itself.
    pub fn refused(refusal: &impl TypedRefusal) -> Self {
        CliError::Refused(refusal.to_string())
    }

    /// A usage error, in the words of `cdkd_core::view::command` (exit 2).
    pub fn usage(usage: cdkd_core::usage::Usage) -> Self {
        CliError::Usage(usage.to_string())
    }

    /// Print the error as one line and return the exit code.
    pub fn report(&self) -> ExitCode {
        eprintln!("{}", cdkd_core::view::error_line(&self.to_string()));
        match self {
            CliError::Usage(_) => ExitCode::from(2),
            _ => ExitCode::from(1),
        }
    }
}
