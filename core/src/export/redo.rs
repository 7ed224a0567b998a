//! What a run's report tells people to do by hand, as data (docs/export.md, "Failure
//! (export-abort)"): one [`Redo`] per line of `report.json`'s `redo`, decided by
//! the report module, worded by `core::view::export_redo`.
//!
//! `report.json` keeps each line as its words, as it always did, so a CLI or a backend
//! of another version reads it: a line read back is [`Redo::Recorded`], the words as the
//! run wrote them.

use serde::{Deserialize, Serialize};

use super::phase::Phase;

/// One thing to do (or leave alone) after an export run ended. The values are as the
/// run holds them; the view prints them by the printing rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum Redo {
    /// CloudFormation was still running `phase` on the stack when the run stopped: wait
    /// for it before anything else.
    InFlight {
        stack: String,
        cfn: String,
        phase: Phase,
    },
    /// Its phase-1 IMPORT failed and the run deleted the empty stack it had created.
    Withdrawn { stack: String, cfn: String },
    /// Nothing of the run was submitted: the record is unchanged, run it again.
    NothingSubmitted { stack: String },
    /// Nothing was submitted for this stack (another one's was).
    NothingSubmittedForIt { stack: String },
    /// Its import did not complete as far as the run saw: resume, never delete the stack.
    ImportUnconfirmed { stack: String, cfn: String },
    /// Phase 1 succeeded, phase 2 did not: the three ways on.
    Phase1Only {
        stack: String,
        cfn: String,
        region: String,
        imported: usize,
        phase2: usize,
        /// The IMPORT-unsupported resources the run deleted before phase 2.
        pre_deleted: Vec<String>,
    },
    /// Migrated, but its record was not deleted: forget it.
    RecordKept { stack: String, cfn: String },
    /// Several stacks, some imported: the same command resumes the run. `(stack, cfn)`.
    ResumesThisRun { imported: Vec<(String, String)> },
    /// Refused before it locked anything.
    NothingLocked,
    /// A resume that was refused: the run it was to resume stays as it stopped.
    NotResumed { run: String },
    /// Fix the cause; the same command resumes the run.
    FixThenResume,
    /// A run that took its locks: CloudFormation may hold what it submitted.
    MayHoldSubmitted,
    /// A run that took its locks: they may stay held until a resume or their expiry.
    LocksMayStay,
    /// A run that took its locks: the same command resumes it, or runs it anew.
    FixThenResumeOrAnew,
    /// Stopped from outside before it took its locks.
    StoppedBeforeLocks,
    /// The same command plans the run anew.
    PlansAnew,
    /// Interrupted after a change set was executed: leave the stacks.
    MayStillBeWorking,
    /// Interrupted after the locks were taken: they stay held.
    LocksStay,
    /// Interrupted: run the command again to resume (`same`: it was the command that
    /// printed the report, else the one that started the run).
    RunAgainToResume { same: bool },
    /// The IMPORT-unsupported resources a stopped run deleted before phase 2, absent
    /// until it is resumed: `(logical id, type when the plan gives it)`.
    PreDeleted {
        stack: String,
        rows: Vec<(String, Option<String>)>,
        meanwhile: Vec<Absent>,
    },
    /// A parent that must adopt its already-imported children by hand.
    Adoption {
        stack: String,
        cfn: String,
        /// CloudFormation already holds the parent's own resources.
        own_imported: bool,
        /// The children's CloudFormation names.
        children: Vec<String>,
    },
    /// A migrated child still in IMPORT_COMPLETE: flip it before the adoption.
    Flip { stack: String, cfn: String },
    /// A transient template upload of a run that migrated, which its cleanup could not
    /// delete.
    TemplateLeft(TemplateLeft),
    /// A line read back from `report.json`: the words as the run wrote them.
    Recorded(String),
}

/// A transient template upload left behind: `s3://<bucket>/<key>`, and the store's
/// error as it gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateLeft {
    pub bucket: String,
    pub key: String,
    pub error: String,
}

/// What is missing while pre-deleted resources are absent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Absent {
    /// An IAM policy's permissions.
    IamPermissions,
    /// An API stage's requests.
    ApiRequests,
    /// A resource whose type the plan did not give: either.
    Unknown,
}

impl From<String> for Redo {
    fn from(words: String) -> Self {
        Redo::Recorded(words)
    }
}
