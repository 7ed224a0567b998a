//! What a stack's destroy report tells people to do next, and what it notes of a row,
//! as data (docs/destroy.md, "How a stack finishes"): decided by the destroy model,
//! worded by `core::view::next_step`.
//!
//! `report.json` and `progress.json` keep these as their words, as they always did, so a
//! CLI or a backend of another version reads them: read back, each is its `Recorded`
//! variant, the words as the run wrote them.

use serde::{Deserialize, Serialize};
/// A stack's next step: the rows that may still be deleting, the command that finishes
/// the stack, and a lock someone removed while the run held it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub struct NextStep {
    /// Logical ids whose delete was sent and never seen to end: check them in AWS
    /// first.
    pub maybe_deleting: Vec<String>,
    pub again: Option<Again>,
    pub lock: Option<LockGone>,
}

/// Run `cdkd-flow destroy <command>` again (`command`: the stack and the flags it
/// needs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Again {
    /// A stopped run: `kept` records are left, the same command finishes.
    Finish { kept: u32, command: String },
    /// Failed, skipped or blocked rows: fix the failures first.
    FixFirst {
        failed: u32,
        skipped: u32,
        blocked: u32,
        command: String,
    },
    /// A next step read back from `report.json`: the words as the run wrote them.
    Recorded(String),
}

/// The stack's lock, released right after the run deleted the record under it (checked
/// just before), was not the run's any more: someone removed it meanwhile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum LockGone {
    /// Another process holds it.
    Taken,
    /// No lock was there.
    Gone,
    /// Read back from `progress.json`: the words as the run wrote them.
    Recorded(String),
}

/// What a report says of one row besides its outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum RowNote {
    /// Its delete request was sent (or may have been) and its end never seen: a later
    /// run uses a new ClientToken and cannot resume that request, so the resource may
    /// be going away.
    MaybeDeleting,
    /// What its deleter said of it (interfaces left behind, ...), or a note read back
    /// from `report.json`.
    Said(String),
}

impl From<String> for NextStep {
    fn from(words: String) -> Self {
        NextStep {
            again: Some(Again::Recorded(words)),
            ..NextStep::default()
        }
    }
}

impl From<String> for LockGone {
    fn from(words: String) -> Self {
        LockGone::Recorded(words)
    }
}

impl From<String> for RowNote {
    fn from(words: String) -> Self {
        RowNote::Said(words)
    }
}
