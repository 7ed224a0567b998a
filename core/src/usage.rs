//! What the command line got wrong in a way clap could not see, as data (docs/cli.md):
//! a missing argument, a malformed value, or a question asked with no terminal to answer
//! it. Worded by `core::view::command`; the CLI exits 2 on each.

use crate::export::approval::ReasonTooLong;
use crate::run::InvalidRunId;

/// A usage error of a cdkd-flow command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Usage {
    /// A confirmation was needed and stdin is not a terminal.
    NoTerminal(NoTerminalFor),
    /// The answer to a confirmation could not be read.
    AnswerUnread { error: String },
    /// `force-unlock` without a stack name.
    ForceUnlockNeedsStack,
    /// A run reference that looks like an ARN but is not an execution's.
    NotAnExecutionArn { given: String },
    /// A run id given by hand that is not a valid execution name.
    NotARunId { given: String, why: InvalidRunId },
    /// `runs stop` (graceful) of a run that is not a destroy.
    NoGracefulStop { run: String },
    /// `runs approve|reject --reason` too long.
    ReasonTooLong {
        verb: &'static str,
        why: ReasonTooLong,
    },
    /// `export --template` without the stack's name.
    TemplateNeedsStack,
    /// An export input without its state bucket.
    NoStateBucket,
    /// `workflow run --input|--param NAME=VALUE` given something else.
    NotNameValue { flag: String, given: String },
    /// `workflow run --time-scale` not a finite number >= 0.
    BadTimeScale,
    /// A workflow's input is not valid JSON.
    NotJson { what: String, error: String },
    /// `state orphan --stack-region ''`.
    EmptyStackRegion,
    /// `destroy --run-id` with several stacks.
    RunIdOfSeveral,
}

/// The command whose confirmation could not be asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoTerminalFor {
    RefreshObserved,
    /// `state orphan` of resources (`-f` answers too).
    OrphanResources,
    /// `state orphan` of whole stacks.
    OrphanStacks,
    Destroy,
    Export {
        stack: String,
    },
    ExportResume {
        stack: String,
        run_id: String,
    },
}
