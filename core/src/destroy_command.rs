//! What the `destroy` command itself refuses, as data (docs/cli.md, "destroy"): some of
//! its runs refused, or the confirmation declined. Worded by `core::view::command`.

/// A refusal of the `destroy` command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DestroyCommandRefusal {
    /// `refused` of `runs` destroys are refused (each refusal printed before).
    Refused { refused: usize, runs: usize },
    /// The confirmation was answered no.
    NotConfirmed,
}
