//! What `force-unlock` did with each lock it targeted (docs/state-views.md,
//! "force-unlock [stacks...]"), as data: which key, what was found and done, and whether
//! that counts as released (the command exits 1 naming every lock that does not).
//! Worded by `core::view::contention`.

use crate::lock::LockInfo;

/// Which lock key the command targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `<prefix>/<stack>/<region>/lock.json`.
    Region(String),
    /// `<prefix>/<stack>/lock.json`.
    Legacy,
}

/// What was found at a lock key and done with it (`None`: not a readable lock).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ForceOutcome<'a> {
    /// A readable lock, deleted.
    Held(&'a LockInfo),
    /// An object that is not a readable lock, deleted.
    Unreadable,
    /// No lock object.
    Absent,
    /// Released by its holder before it could be deleted.
    Vanished(Option<&'a LockInfo>),
    /// Replaced after it was read: nothing deleted, the newer lock left in place.
    Changed(Option<&'a LockInfo>),
    /// A cdkd-flow export run's lock, kept.
    ExportRun(&'a LockInfo),
    /// Not the lock of the run `--run` names, kept.
    OtherHolder(Option<&'a LockInfo>),
    /// Not expired under `--if-expired`, kept.
    Live(&'a LockInfo),
}

impl ForceOutcome<'_> {
    /// True when no lock is left at the key by this command's choice: deleted, absent,
    /// or released by its holder first.
    pub fn released(&self) -> bool {
        matches!(
            self,
            ForceOutcome::Held(_)
                | ForceOutcome::Unreadable
                | ForceOutcome::Absent
                | ForceOutcome::Vanished(_)
        )
    }
}

/// The line of one lock: `stack` at `target`, its outcome; `now_ms` on S3's clock (for
/// a live lock's expiry).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForceUnlockLine<'a> {
    pub stack: &'a str,
    pub target: &'a Target,
    pub outcome: ForceOutcome<'a>,
    pub now_ms: i64,
}

/// A lock the command could not act on: the AWS error's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForceUnlockError<'a> {
    pub stack: &'a str,
    pub target: &'a Target,
    pub error: &'a str,
}

/// The closing error naming every lock not released (each its line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForceUnlockFailures<'a>(pub &'a [String]);
