//! cdkd-flow: runs cdkd's long operations as Step Functions workflows and renders cdkd
//! state straight from S3. This file only parses the command line and dispatches; each
//! command lives in `cmd/<name>.rs`.

mod approval;
mod ask;
mod cmd;
mod context;
mod error;
mod export_source;
mod global;
mod host;
mod local;
mod out;
mod records;
mod remote;
mod resume;
mod run;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::global::GlobalOpts;

/// Run cdkd's destroy and export as durable workflows, and read cdkd state from S3.
#[derive(Debug, Parser)]
#[command(name = "cdkd-flow", version, about, long_about = None)]
struct Cli {
    #[command(flatten)]
    global: GlobalOpts,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Read cdkd state records straight from the state bucket, and repair them: forget
    /// stacks or resources (orphan), store a fresh drift baseline (refresh-observed).
    #[command(subcommand)]
    State(cmd::state::StateCommand),
    /// Destroy a stack from its cdkd state: deletes its AWS resources, dependents first,
    /// then its record and lock (a Step Functions workflow, or --local in this process).
    Destroy(cmd::destroy::Args),
    /// Migrate a stack (nested stacks included) into CloudFormation through IMPORT change
    /// sets, then delete its cdkd records; or plan the migration, changing nothing (--dry-run).
    Export(cmd::export::Args),
    /// Destroy every stack matching a name pattern and older than an age, resources and
    /// records (the scheduled cleanup; --dry-run lists them and deletes nothing).
    Cleanup(cmd::cleanup::Args),
    /// Delete a stack's lock.json, the one it read (use only when its holder is gone;
    /// --if-expired, --run narrow it).
    ForceUnlock(cmd::force_unlock::Args),
    /// List, show, watch, stop, approve and reject runs, deployed and local (the local
    /// ones read from their folders in the state bucket; no backend needed).
    #[command(subcommand)]
    Runs(cmd::runs::RunsCommand),
    /// Run a Step Functions definition in-process with the local engine.
    #[command(subcommand)]
    Workflow(cmd::workflow::WorkflowCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    global::init_logging(cli.global.verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: could not start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::State(c) => cmd::state::run(&cli.global, c).await,
            Command::Cleanup(a) => cmd::cleanup::run(&cli.global, a).await,
            Command::Destroy(a) => cmd::destroy::run(&cli.global, a).await,
            Command::Export(a) => cmd::export::run(&cli.global, a).await,
            Command::ForceUnlock(a) => cmd::force_unlock::run(&cli.global, a).await,
            Command::Runs(c) => cmd::runs::run(&cli.global, c).await,
            Command::Workflow(c) => cmd::workflow::run(&cli.global, c).await,
        }
    });
    let code = match result {
        Ok(code) => code,
        Err(e) => e.report(),
    };
    if out::write_failed() {
        ExitCode::from(1)
    } else {
        code
    }
}
