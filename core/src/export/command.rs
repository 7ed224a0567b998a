//! What the `export` command refuses around its runs, as data (docs/cli.md, "export"):
//! a run that failed or refused, a plan run that wrote no plan, a plan a real run would
//! refuse. Worded by `core::view::command`.

use crate::export::plan::PlanRefusal;
use crate::run::RunId;

/// A refusal of the `export` command.
#[derive(Debug, Clone, PartialEq)]
pub enum ExportCommandRefusal {
    /// The run ended with `error` (`Refused`: a refusal) and `cause`.
    Failed {
        stack: String,
        error: String,
        cause: String,
    },
    /// The plan run `plan_run` ended without writing a plan.
    NoPlan { stack: String, plan_run: RunId },
    /// The plan reused is refused before the question (an SSM parameter, a gate).
    Reuse { stack: String, why: PlanRefusal },
}

impl ExportCommandRefusal {
    /// A run of `stack` that ended with `error` and `cause`.
    pub fn failed(stack: &str, error: &str, cause: &str) -> Self {
        ExportCommandRefusal::Failed {
            stack: stack.to_string(),
            error: error.to_string(),
            cause: cause.to_string(),
        }
    }
}

/// What the `export` command tells on stderr as it goes, and the questions it asks
/// (docs/cli.md, "export"), as data. Worded by `core::view::command`; `stack` is the
/// cdkd name as given (the view flattens it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExportNote {
    /// The run's templates are in its folder.
    Uploaded {
        stack: String,
        run_id: RunId,
        templates: usize,
        bucket: String,
        run_folder: String,
    },
    /// `--template` of a stack with nested stacks: their templates are not read.
    NestedWithoutTemplate {
        stack: String,
        logical_ids: Vec<String>,
    },
    /// A local plan run starts.
    Planning { stack: String },
    /// A deployed plan run: waiting for its plan.
    WaitingForPlan { stack: String, plan_run: RunId },
    /// The real run starts (local).
    Migrating { stack: String, run_id: RunId },
    /// The plan imports nothing and phase 2 has nothing to do.
    NothingToMigrate { stack: String },
    /// The confirmation was answered no.
    Cancelled { stack: String },
    /// A lock the ended run had left was released.
    EndedLockReleased {
        stack: String,
        lock_stack: String,
        owner: String,
    },
    /// A lock the ended run had left could not be released.
    EndedLockKept {
        stack: String,
        lock_stack: String,
        error: String,
    },
    /// The interrupted run had already migrated the stack.
    AlreadyMigrated {
        stack: String,
        run_id: RunId,
        cfn: String,
    },
    /// This record's run was interrupted (after `last_step`, when it logged one).
    Interrupted {
        stack: String,
        run_id: RunId,
        last_step: Option<String>,
        cfn: String,
    },
    /// A dry run plans nothing over an interrupted run.
    DryRunOfInterrupted { stack: String, run_id: RunId },
    /// The resume was answered no.
    NotResumed { stack: String, run_id: RunId },
    /// The interrupted run resumes (local).
    Resuming { stack: String, run_id: RunId },
    /// The question before a real run.
    AskMigrate { stack: String },
    /// The question before a resume.
    AskResume { stack: String, run_id: RunId },
}
