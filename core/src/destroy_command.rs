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
}
