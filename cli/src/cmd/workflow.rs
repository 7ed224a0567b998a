//! `cdkd-flow workflow run` (being written).
use std::process::ExitCode;

use clap::Subcommand;

use crate::error::CliError;
use crate::global::GlobalOpts;

#[derive(Debug, Subcommand)]
pub enum WorkflowCommand {
    /// Run a definition in-process.
    Run,
}

pub async fn run(_g: &GlobalOpts, _c: WorkflowCommand) -> Result<ExitCode, CliError> {
    Err(CliError::Usage("workflow: not implemented yet".into()))
}
