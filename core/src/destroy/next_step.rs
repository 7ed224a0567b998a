//! What a stack's destroy report tells people to do next, and what it notes of a row,
//! as data (docs/destroy.md, "How a stack finishes"): decided here, worded by
//! `core::view::report`.
//!
//! `report.json` and `progress.json` keep these as their words, as they always did, so a
//! CLI or a backend of another version reads them: read back, each is its `Recorded`
//! variant, the words as the run wrote them.

use serde::{Deserialize, Serialize};

use super::model::{DestroyReport, ReportCounts, RowOutcome, RunResult};

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

/// What to do next after a run that ended `result`: run `cdkd-flow destroy <command>`
/// once more.
pub fn again(result: RunResult, counts: &ReportCounts, command: &str) -> Option<Again> {
    let command = command.to_string();
    match result {
        RunResult::Clean => None,
        RunResult::Interrupted => Some(Again::Finish {
            kept: counts.interrupted
                + counts.failed
                + counts.skipped
                + counts.blocked
                + counts.retained,
            command,
        }),
        RunResult::Partial => Some(Again::FixFirst {
            failed: counts.failed,
            skipped: counts.skipped,
            blocked: counts.blocked,
            command,
        }),
    }
}

/// The next step of a report with only `again` (none when the stack is done).
pub fn of_again(again: Option<Again>) -> Option<NextStep> {
    again.map(|a| NextStep {
        again: Some(a),
        ..NextStep::default()
    })
}

/// Tells in a stack report's next step that its lock was gone at the release
/// (docs/destroy.md, "How a stack finishes"): never a silent success.
pub fn note_lock_gone(report: &mut DestroyReport, gone: LockGone) {
    report.next_step.get_or_insert_with(NextStep::default).lock = Some(gone);
}

/// Marks the rows of `unconfirmed` (logical ids whose delete request was sent and never
/// seen to end) that the run left unsettled: each gets [`RowNote::MaybeDeleting`], the
/// report lists them in `maybe_deleting`, and the next step tells the user to check
/// them in AWS before re-running. Settled rows are left alone.
pub fn note_unconfirmed_deletes(report: &mut DestroyReport, unconfirmed: &[String]) {
    for row in &mut report.rows {
        if row.outcome == RowOutcome::Interrupted && unconfirmed.contains(&row.logical_id) {
            row.note = Some(RowNote::MaybeDeleting);
            report.maybe_deleting.push(row.logical_id.clone());
        }
    }
    if !report.maybe_deleting.is_empty() {
        report
            .next_step
            .get_or_insert_with(NextStep::default)
            .maybe_deleting = report.maybe_deleting.clone();
    }
}
