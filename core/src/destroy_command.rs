//! What the `destroy` command itself refuses, as data (docs/cli.md, "destroy"): some of
//! its runs refused, or the confirmation declined; and what it tells as it goes. Worded
//! by `core::view::command`.

use crate::run::RunId;

/// A refusal of the `destroy` command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DestroyCommandRefusal {
    /// `refused` of `runs` destroys are refused (each refusal printed before).
    Refused { refused: usize, runs: usize },
    /// The confirmation was answered no.
    NotConfirmed,
}

/// What the `destroy` command tells as it goes (stderr).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DestroyNote<'a> {
    /// The run of `stack` starts, named `run_id`.
    Started { stack: &'a str, run_id: &'a RunId },
    /// The run of `stack` ended with something failed, skipped or blocked.
    Partial { stack: &'a str },
    /// A run stopped (`why`, when known), and the stacks not started after it.
    Stopped {
        why: Option<&'a DestroyStop>,
        not_started: &'a [String],
    },
}

/// Why a destroy run stopped the command's loop over stacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DestroyStop {
    /// The run's own words (a local run stopped by Ctrl-C names the command to run again).
    Said(String),
    /// A step stopped the run of `stack` (a lost lock...) with `error` and `cause`.
    StepStopped {
        stack: String,
        error: String,
        cause: String,
    },
    /// The run failed with `error` and `cause` before it planned.
    Failed { error: String, cause: String },
    /// The run ended without a report and without a failure.
    NoReport,
}
