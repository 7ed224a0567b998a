//! What a run tells people (docs/notifications.md): the four kinds of message, the
//! typed detail each carries, and which kind and outcome a run's end is told as. The
//! detail's lines are built from what the run already wrote (`approval.json`,
//! `report.json`, the cleanup's summary) by the notify view, which also renders the SNS
//! message; the same detail is the EventBridge event's `detail`. Pure: the steps and the
//! CLI publish through `cdkd_aws::notify`.

use serde::{Deserialize, Serialize};

use crate::destroy::model::{destroy_end, DestroyEnd};
use crate::export::approval::PlanSummary;
use crate::export::report::ExportReport;
use crate::run::{Outcome, RunId, RunKind};

/// The events' `Source`.
pub const SOURCE: &str = "cdkd-flow";
/// The version of the detail's schema (docs/notifications.md, "The EventBridge event"); a field is only ever
/// added within a version.
pub const DETAIL_VERSION: u32 = 1;
/// At most this many lines in each of `summary`, `redo` and `commands`, and entries in
/// each list of a cleanup digest: a message stays far below the 256 KiB SNS and
/// EventBridge take (the rest is in the run's report).
pub const MAX_LINES: usize = 30;
/// A longer line is cut, ending in `…`.
pub const MAX_LINE_CHARS: usize = 500;
/// The longest command a message carries whole (commands are never cut inside).
pub const MAX_COMMAND_CHARS: usize = 4000;

/// `<prefix>/_runs/<run-id>/notified-<kind>.json`: the run's message of this kind was
/// sent (or is being sent); it holds the detail. Created only if absent, so a step run
/// twice sends a kind once (docs/notifications.md, "Once per run and kind: at most once").
pub fn notice_key(prefix: &str, run_id: &str, kind: NoticeKind) -> String {
    format!(
        "{}/notified-{}.json",
        crate::keys::run_prefix(prefix, run_id),
        kind.as_str()
    )
}

/// The markers of a run's end messages (`run-succeeded`, `run-failed`): a resume of the
/// run deletes them with the attempt's report, so that the resumed run's own end is told
/// too (docs/notifications.md, "Once per run and kind: at most once").
pub fn end_notice_keys(prefix: &str, run_id: &str) -> [String; 2] {
    [
        notice_key(prefix, run_id, NoticeKind::RunSucceeded),
        notice_key(prefix, run_id, NoticeKind::RunFailed),
    ]
}

/// Whether a run folder's file `name` is the marker of a message sent only when a run
/// ended (a success, a failure, a cleanup's digest): the folder's run has ended, even
/// with no `report.json` (a cleanup writes none; docs/runs.md).
pub fn is_end_marker(name: &str) -> bool {
    [
        NoticeKind::RunSucceeded,
        NoticeKind::RunFailed,
        NoticeKind::CleanupFinished,
    ]
    .iter()
    .any(|k| name == format!("notified-{}.json", k.as_str()))
}

/// The four kinds of message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoticeKind {
    /// An export waits for `cdkd-flow runs approve|reject`.
    ApprovalWaiting,
    /// An export migrated, a destroy destroyed everything.
    RunSucceeded,
    /// An export or a destroy failed, stopped or left something.
    RunFailed,
    /// A cleanup (scheduled or not) ended: its digest.
    CleanupFinished,
}

impl NoticeKind {
    /// The EventBridge `DetailType` (docs/notifications.md, "The EventBridge event").
    pub fn detail_type(self) -> &'static str {
        match self {
            NoticeKind::ApprovalWaiting => "cdkd-flow Run Waiting For Approval",
            NoticeKind::RunSucceeded => "cdkd-flow Run Succeeded",
            NoticeKind::RunFailed => "cdkd-flow Run Failed",
            NoticeKind::CleanupFinished => "cdkd-flow Cleanup Finished",
        }
    }

    /// The kind as it is spelled in the detail and the SNS `kind` attribute.
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeKind::ApprovalWaiting => "approval-waiting",
            NoticeKind::RunSucceeded => "run-succeeded",
            NoticeKind::RunFailed => "run-failed",
            NoticeKind::CleanupFinished => "cleanup-finished",
        }
    }
}

/// The event's detail, version [`DETAIL_VERSION`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Notice {
    pub version: u32,
    pub kind: NoticeKind,
    /// `export`, `destroy` or `cleanup`.
    pub operation: RunKind,
    pub run_id: RunId,
    /// The stack the run was started on (none for a cleanup).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// `waiting-for-approval`, `migrated`, `destroyed`, `failed`, `partial`,
    /// `interrupted`, `finished`, `incomplete` or `dry-run`.
    pub outcome: Outcome,
    /// What ended the run early, flattened onto one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// The report's summary: one line per stack (or the cleanup's digest).
    pub summary: Vec<String>,
    /// What must be done by hand, in order (the report's redo lines).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redo: Vec<String>,
    /// Commands to paste, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
    /// The key of the run's `report.json` (or `approval.json`) in the state bucket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalDetail>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleanup: Option<CleanupDigest>,
    /// Some list was cut at [`MAX_LINES`] (its last entry says how many more).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// What a person deciding an approval needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalDetail {
    pub plan: PlanSummary,
    pub plan_key: String,
    pub approve_command: String,
    pub reject_command: String,
}

/// A cleanup's digest.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CleanupDigest {
    pub dry_run: bool,
    /// Destroyed (or, on a dry run, selected).
    pub destroyed: Vec<StackEntry>,
    pub skipped: Vec<StackEntry>,
    pub failed: Vec<StackEntry>,
    /// How many each list held before it was cut at [`MAX_LINES`] (the lists may be
    /// shorter; the run folder's `selection.json` and `results.json` have them all).
    #[serde(default)]
    pub destroyed_count: usize,
    #[serde(default)]
    pub skipped_count: usize,
    #[serde(default)]
    pub failed_count: usize,
}

/// A stack of a cleanup digest; `reason` for a skipped one, `error` for a failed one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StackEntry {
    pub stack: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Notice {
    /// A notice of `kind` with no lines yet.
    pub fn new(kind: NoticeKind, operation: RunKind, run_id: &str, outcome: Outcome) -> Notice {
        Notice {
            version: DETAIL_VERSION,
            kind,
            operation,
            run_id: run_id.into(),
            stack: None,
            region: None,
            outcome,
            cause: None,
            summary: Vec::new(),
            redo: Vec::new(),
            commands: Vec::new(),
            report_key: None,
            approval: None,
            cleanup: None,
            truncated: false,
        }
    }
}

/// `line` cut to [`MAX_LINE_CHARS`], ending in `…` when it was longer.
pub fn cap_chars(line: &str) -> String {
    if line.chars().count() <= MAX_LINE_CHARS {
        return line.to_string();
    }
    let mut s: String = line.chars().take(MAX_LINE_CHARS - 1).collect();
    s.push('…');
    s
}

/// How an export's end is told: succeeded when it migrated, else failed (with its
/// report's outcome).
pub fn export_end(r: &ExportReport) -> NoticeKind {
    if r.outcome == Outcome::Migrated {
        NoticeKind::RunSucceeded
    } else {
        NoticeKind::RunFailed
    }
}

/// How a destroy's end ([`DestroyEnd`], from its report: `complete`, `refused`, whether
/// it names an abort cause, whether a stack was left interrupted) is told.
pub fn destroy_end_told(
    complete: bool,
    refused: bool,
    aborted: bool,
    interrupted: bool,
) -> (NoticeKind, Outcome) {
    match destroy_end(complete, refused, aborted, interrupted) {
        DestroyEnd::Destroyed => (NoticeKind::RunSucceeded, Outcome::Destroyed),
        DestroyEnd::Refused => (NoticeKind::RunFailed, Outcome::Refused),
        DestroyEnd::Aborted => (NoticeKind::RunFailed, Outcome::Failed),
        DestroyEnd::Stopped => (NoticeKind::RunFailed, Outcome::Interrupted),
        DestroyEnd::Partial => (NoticeKind::RunFailed, Outcome::Partial),
    }
}

/// A cleanup's outcome: `failed` when it could not finish (`broke`), `dry-run`,
/// `finished` when no destroy failed, else `incomplete`.
pub fn cleanup_outcome(broke: bool, dry_run: bool, any_failed: bool) -> Outcome {
    if broke {
        Outcome::Failed
    } else if dry_run {
        Outcome::DryRun
    } else if any_failed {
        Outcome::Incomplete
    } else {
        Outcome::Finished
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn detail_types_are_one_per_kind() {
        let kinds = [
            NoticeKind::ApprovalWaiting,
            NoticeKind::RunSucceeded,
            NoticeKind::RunFailed,
            NoticeKind::CleanupFinished,
        ];
        let types: std::collections::BTreeSet<_> = kinds.iter().map(|k| k.detail_type()).collect();
        assert_eq!(types.len(), 4);
        for k in kinds {
            assert_eq!(
                serde_json::to_value(k).unwrap(),
                json!(k.as_str()),
                "the detail spells the kind as the attribute does"
            );
        }
    }
}
