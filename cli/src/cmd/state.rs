//! `cdkd-flow state ...` (being written).
use std::process::ExitCode;

use clap::Subcommand;

use crate::error::CliError;
use crate::global::GlobalOpts;

#[derive(Debug, Subcommand)]
pub enum StateCommand {
    /// List every state record under the prefix.
    List,
}

pub async fn run(_g: &GlobalOpts, _c: StateCommand) -> Result<ExitCode, CliError> {
    Err(CliError::Usage("state: not implemented yet".into()))
}
