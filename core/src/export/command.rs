//! What the `export` command refuses around its runs, as data (docs/cli.md, "export"):
//! a run that failed or refused, a plan run that wrote no plan, a plan a real run would
//! refuse. Worded by `core::view::command`.

use crate::export::consumers::CrossStackReads;
use crate::export::plan::PlanRefusal;
use crate::export::refusal::ExportRefusal;
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
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ExportNote<'a> {
    /// The run's templates are in its folder.
    Uploaded {
        stack: &'a str,
        run_id: &'a RunId,
        templates: usize,
        bucket: &'a str,
        run_folder: &'a str,
    },
    /// `--template` of a stack with nested stacks: their templates are not read.
    NestedWithoutTemplate {
        stack: &'a str,
        logical_ids: &'a [String],
    },
    /// A local plan run starts.
    Planning { stack: &'a str },
    /// A deployed plan run: waiting for its plan.
    WaitingForPlan { stack: &'a str, plan_run: &'a RunId },
    /// The real run starts (local).
    Migrating { stack: &'a str, run_id: &'a RunId },
    /// The plan imports nothing and phase 2 has nothing to do.
    NothingToMigrate { stack: &'a str },
    /// The confirmation was answered no.
    Cancelled { stack: &'a str },
    /// A lock the ended run had left was released.
    EndedLockReleased {
        stack: &'a str,
        lock_stack: &'a str,
        owner: &'a str,
    },
    /// A lock the ended run had left could not be released.
    EndedLockKept {
        stack: &'a str,
        lock_stack: &'a str,
        error: &'a str,
    },
    /// The interrupted run had already migrated the stack.
    AlreadyMigrated {
        stack: &'a str,
        run_id: &'a RunId,
        cfn: &'a str,
    },
    /// This record's run was interrupted (after `last_step`, when it logged one).
    Interrupted {
        stack: &'a str,
        run_id: &'a RunId,
        last_step: Option<&'a str>,
        cfn: &'a str,
    },
    /// A dry run plans nothing over an interrupted run.
    DryRunOfInterrupted { stack: &'a str, run_id: &'a RunId },
    /// The resume was answered no.
    NotResumed { stack: &'a str, run_id: &'a RunId },
    /// The interrupted run resumes (local).
    Resuming { stack: &'a str, run_id: &'a RunId },
    /// The cross-stack consumers found (`strict`: `--strict-cross-stack`, which refuses
    /// a real run over them).
    CrossStack {
        reads: &'a CrossStackReads,
        strict: bool,
    },
    /// A dry run whose plan a real run would refuse.
    WouldBeRefused { why: &'a ExportRefusal },
    /// The question before a real run.
    AskMigrate { stack: &'a str },
    /// The question before a resume.
    AskResume { stack: &'a str, run_id: &'a RunId },
}
