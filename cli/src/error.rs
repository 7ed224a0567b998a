//! The CLI's one error type: every failure becomes one clear line on stderr and an exit
//! code (1 for a refusal or an AWS error, 2 for a usage error).

use std::process::ExitCode;

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

impl CliError {
    /// Print the error as one line and return the exit code.
    pub fn report(&self) -> ExitCode {
        let line = self.to_string().replace(['\n', '\r'], " ");
        eprintln!("error: {line}");
        match self {
            CliError::Usage(_) => ExitCode::from(2),
            _ => ExitCode::from(1),
        }
    }
}
