//! `cdkd-flow force-unlock` (being written).
use std::process::ExitCode;

use crate::error::CliError;
use crate::global::GlobalOpts;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The stack whose lock to delete.
    pub stack: String,
    /// The region of the stack's record.
    #[arg(long)]
    pub stack_region: Option<String>,
}

pub async fn run(_g: &GlobalOpts, _a: Args) -> Result<ExitCode, CliError> {
    Err(CliError::Usage("force-unlock: not implemented yet".into()))
}
