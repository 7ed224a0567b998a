//! How long run folders live (docs/runs.md): the S3 lifecycle rule on `<prefix>/_runs/`
//! that `cdkd-flow runs expire` merges into the state bucket's lifecycle configuration
//! (§3), and which run folders `cdkd-flow runs prune --older-than D` deletes (§4). Every
//! decision is here; the CLI gathers what S3 and Step Functions say and acts.

use crate::cleanup::{parse_duration_ms, CleanupError};
use crate::keys::run_prefix;
use crate::runs::LocalState;
use crate::text::flatten_str;
use crate::view::runs::RunKind;

/// The lifecycle rule's id is this and the state prefix: `cdkd-flow-runs:<prefix>`, so
/// two prefixes of one bucket each keep a rule of their own.
pub const RULE_ID_BASE: &str = "cdkd-flow-runs";
/// `make deploy`'s default retention (docs/runs.md §3).
pub const DEFAULT_EXPIRY_DAYS: i32 = 90;
/// The shortest expiry accepted: the longest a live run goes without rewriting its
/// `plan.json` and uploaded templates is an export waiting for approval (7 days, the
/// approval task's timeout) and then running; one day more covers the run itself.
pub const MIN_EXPIRY_DAYS: i32 = 8;
/// Below this an expiry is accepted with a warning: an interrupted export is resumable
/// only while its folder lives (docs/export.md §10.8).
pub const WARN_BELOW_DAYS: i32 = 30;
/// Noncurrent versions (a versioned bucket keeps one per rewrite of `progress.json`) go
/// one day after they stop being current: nothing ever reads them.
pub const NONCURRENT_DAYS: i32 = 1;
/// Incomplete multipart uploads under the run prefix are aborted after a day.
pub const ABORT_MULTIPART_DAYS: i32 = 1;
/// S3's ceiling on the keys of one DeleteObjects request.
pub const DELETE_BATCH: usize = 1000;
/// S3's ceiling on a lifecycle rule's ID.
const MAX_RULE_ID: usize = 255;

/// A value the retention commands refuse (a usage error).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RetentionError {
    #[error("--days {days} is below the safe minimum of {min} days: a run waiting for approval (up to 7 days) and then running would lose its plan and templates (docs/runs.md §3)")]
    TooShort { days: i32, min: i32 },
    #[error("the lifecycle rule's id '{0}' is longer than S3's 255 characters (a shorter --state-prefix)")]
    RuleIdTooLong(String),
    #[error("--older-than '{0}' is not a duration like 30d, 12h or 2w")]
    BadOlderThan(String),
    #[error("--older-than '{0}' is zero: it would prune runs that just ended")]
    ZeroOlderThan(String),
}

// ---------------------------------------------------------------------------------
// The lifecycle rule (docs/runs.md §3)

/// The rule cdkd-flow keeps on the run prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunsRule {
    pub id: String,
    /// `<prefix>/_runs/`.
    pub prefix: String,
    /// Current objects expire this many days after their last write.
    pub expiration_days: i32,
    pub noncurrent_days: i32,
    pub abort_multipart_days: i32,
}

/// `cdkd-flow-runs:<prefix>`.
pub fn rule_id(prefix: &str) -> String {
    format!("{RULE_ID_BASE}:{prefix}")
}

/// The rule for `prefix` expiring run objects after `days`; refused below
/// [`MIN_EXPIRY_DAYS`]. Noncurrent versions are always part of it: on an unversioned
/// bucket the action does nothing, and a bucket whose versioning is turned on later is
/// covered without setting the rule again.
pub fn runs_rule(prefix: &str, days: i32) -> Result<RunsRule, RetentionError> {
    if days < MIN_EXPIRY_DAYS {
        return Err(RetentionError::TooShort {
            days,
            min: MIN_EXPIRY_DAYS,
        });
    }
    let id = rule_id(prefix);
    if id.len() > MAX_RULE_ID {
        return Err(RetentionError::RuleIdTooLong(flatten_str(&id)));
    }
    Ok(RunsRule {
        id,
        prefix: format!("{}/", run_prefix(prefix, "").trim_end_matches('/')),
        expiration_days: days,
        noncurrent_days: NONCURRENT_DAYS,
        abort_multipart_days: ABORT_MULTIPART_DAYS,
    })
}

/// The warning an accepted but short expiry gets.
pub fn expiry_warning(days: i32) -> Option<String> {
    (days < WARN_BELOW_DAYS).then(|| {
        format!(
            "run folders expire {days} days after their last write: an interrupted export must be resumed within that time, or its plan and progress are gone and it must be finished by hand (docs/runs.md §3)"
        )
    })
}

/// A lifecycle rule as the bucket holds it, reduced to what the decisions read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedRule {
    pub id: Option<String>,
    pub enabled: bool,
    /// The rule's prefix (its filter's, or the legacy rule-level one); `None` when the
    /// filter is something else (tags, sizes, an `And`).
    pub prefix: Option<String>,
    pub expiration_days: Option<i32>,
    pub noncurrent_days: Option<i32>,
    pub abort_multipart_days: Option<i32>,
    /// Transitions, an expiration date, a delete-marker action, a size or tag filter...
    pub other_parts: bool,
}

/// What `runs expire` does to the bucket's configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleChange {
    /// No rule of ours yet: added beside the others.
    Add,
    /// Ours differs: replaced, the others kept as they are.
    Replace,
    /// Ours is already exactly this: nothing is written.
    Unchanged,
}

impl RuleChange {
    pub fn word(self) -> &'static str {
        match self {
            RuleChange::Add => "added",
            RuleChange::Replace => "replaced",
            RuleChange::Unchanged => "unchanged",
        }
    }
}

/// Compares the rule with our id (if any) to the one wanted.
pub fn rule_change(existing: Option<&ObservedRule>, want: &RunsRule) -> RuleChange {
    let Some(e) = existing else {
        return RuleChange::Add;
    };
    let same = e.enabled
        && !e.other_parts
        && e.prefix.as_deref() == Some(want.prefix.as_str())
        && e.expiration_days == Some(want.expiration_days)
        && e.noncurrent_days == Some(want.noncurrent_days)
        && e.abort_multipart_days == Some(want.abort_multipart_days);
    if same {
        RuleChange::Unchanged
    } else {
        RuleChange::Replace
    }
}

/// Warnings about the bucket's other enabled rules that expire run objects sooner than
/// ours (a prefix filter covering the run prefix, the whole bucket included): they
/// would delete a live run's files first.
pub fn sooner_rules(others: &[ObservedRule], want: &RunsRule) -> Vec<String> {
    others
        .iter()
        .filter(|r| r.enabled && r.id.as_deref() != Some(want.id.as_str()))
        .filter(|r| {
            r.prefix
                .as_deref()
                .is_some_and(|p| want.prefix.starts_with(p))
        })
        .filter_map(|r| {
            let days = r.expiration_days?;
            (days < want.expiration_days).then(|| {
                format!(
                    "the bucket's rule '{}' expires objects under '{}' after {days} days, before this rule's {}: run folders go by the shorter one",
                    flatten_str(r.id.as_deref().unwrap_or("(no id)")),
                    flatten_str(r.prefix.as_deref().unwrap_or_default()),
                    want.expiration_days
                )
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------------
// Pruning (docs/runs.md §4)

/// Parses `--older-than` (the cleanup's durations: `30d`, `12h`, `2w`, `1d12h`) into
/// milliseconds.
pub fn parse_older_than(text: &str) -> Result<i64, RetentionError> {
    parse_duration_ms(text).map_err(|e| match e {
        CleanupError::ZeroDuration(t) => RetentionError::ZeroOlderThan(t),
        _ => RetentionError::BadOlderThan(flatten_str(text)),
    })
}

/// One object listed under the run prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedObject {
    pub key: String,
    pub size: i64,
    pub last_modified_ms: i64,
}

/// Which of a run's own files its folder holds (the uploads aside).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FolderFiles {
    pub run_json: bool,
    pub plan: bool,
    pub progress: bool,
    pub report: bool,
    pub approval: bool,
}

impl FolderFiles {
    /// Only uploads (templates, change-set templates, custom-resource answers): nothing
    /// says a run ever started in this folder.
    pub fn only_uploads(&self) -> bool {
        !(self.run_json || self.plan || self.progress || self.report || self.approval)
    }
}

/// A run's folder `<prefix>/_runs/<run-id>/` as listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFolder {
    pub run_id: String,
    pub keys: Vec<String>,
    pub bytes: i64,
    /// The newest write of any of its objects: the run's last sign of life.
    pub last_write_ms: i64,
    pub files: FolderFiles,
}

/// Groups the objects listed under `<prefix>/_runs/` by run folder, sorted by run id.
/// A key directly under `_runs/` (no folder) belongs to no run and is left out.
pub fn run_folders(prefix: &str, objects: Vec<ListedObject>) -> Vec<RunFolder> {
    let root = run_prefix(prefix, "");
    let mut folders: std::collections::BTreeMap<String, RunFolder> = Default::default();
    for o in objects {
        let Some(rest) = o.key.strip_prefix(&root) else {
            continue;
        };
        let Some((id, file)) = rest.split_once('/') else {
            continue;
        };
        if id.is_empty() {
            continue;
        }
        let f = folders.entry(id.to_string()).or_insert_with(|| RunFolder {
            run_id: id.to_string(),
            keys: Vec::new(),
            bytes: 0,
            last_write_ms: i64::MIN,
            files: FolderFiles::default(),
        });
        match file {
            "run.json" => f.files.run_json = true,
            "plan.json" => f.files.plan = true,
            "progress.json" => f.files.progress = true,
            "report.json" => f.files.report = true,
            "approval.json" => f.files.approval = true,
            _ => {}
        }
        f.bytes += o.size.max(0);
        f.last_write_ms = f.last_write_ms.max(o.last_modified_ms);
        f.keys.push(o.key);
    }
    folders.into_values().collect()
}

/// The kind of a run named `run_id` when nothing else says: its id's first word
/// (`export-...`, `destroy-...`, `cleanup-...`; a deployed resume `resume-...` is an
/// export's).
pub fn kind_of_id(run_id: &str) -> Option<RunKind> {
    match run_id.split('-').next()? {
        "resume" => Some(RunKind::Export),
        word => RunKind::of_name(word),
    }
}

/// Where a run stands, as far as prune can tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunStatus {
    Running,
    /// An export that wrote its approval request and has no decision yet.
    AwaitingApproval,
    /// Ended: the outcome its report states (`None`: an execution that ended without
    /// a report).
    Ended {
        outcome: Option<String>,
    },
    Interrupted {
        why: String,
    },
    /// Only uploads, for a run whose plan run (`<run-id>-plan`) has a folder of its
    /// own: the run was never started (the plan refused, or nobody said yes).
    NeverStarted,
    Unknown {
        why: String,
    },
}

impl RunStatus {
    /// A local run's state (`crate::runs::local_state`, the one decision for local runs).
    pub fn of_local(s: &LocalState) -> RunStatus {
        match s {
            LocalState::Running => RunStatus::Running,
            LocalState::Ended { outcome } => RunStatus::Ended {
                outcome: Some(outcome.clone()),
            },
            LocalState::Interrupted { why } => RunStatus::Interrupted { why: why.clone() },
            LocalState::Unknown { why } => RunStatus::Unknown { why: why.clone() },
        }
    }

    /// A deployed run whose execution Step Functions describes: running while
    /// `RUNNING` (or `PENDING_REDRIVE`), else ended with its report's outcome.
    pub fn of_execution(status: &str, report_outcome: Option<&str>) -> RunStatus {
        match status {
            "RUNNING" | "PENDING_REDRIVE" => RunStatus::Running,
            "SUCCEEDED" | "FAILED" | "TIMED_OUT" | "ABORTED" => RunStatus::Ended {
                outcome: report_outcome.map(str::to_string),
            },
            other => RunStatus::Unknown {
                why: format!("its execution is {}", flatten_str(other)),
            },
        }
    }

    /// A run without `run.json` whose execution could not be described (no deployed
    /// backend reachable, or no such execution): what its files say.
    pub fn of_files(
        files: &FolderFiles,
        report_outcome: Option<&str>,
        approval_pending: bool,
        plan_run_folder: bool,
    ) -> RunStatus {
        if let Some(o) = report_outcome {
            return RunStatus::Ended {
                outcome: Some(o.to_string()),
            };
        }
        if approval_pending {
            return RunStatus::AwaitingApproval;
        }
        if files.only_uploads() && plan_run_folder {
            return RunStatus::NeverStarted;
        }
        RunStatus::Unknown {
            why: "it has no run.json and no report, and its execution could not be described"
                .into(),
        }
    }
}

/// What is known of a folder's run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFacts {
    pub kind: Option<RunKind>,
    /// A run that only planned (a dry run, or a real export's plan run).
    pub plan_only: bool,
    pub status: RunStatus,
}

/// Why a folder older than the cutoff is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Keep {
    Running,
    AwaitingApproval,
    /// An export the same command may still resume (docs/export.md §10.8).
    Resumable {
        why: String,
    },
    Unknown {
        why: String,
    },
}

impl Keep {
    pub fn reason(&self) -> String {
        match self {
            Keep::Running => "it is running".into(),
            Keep::AwaitingApproval => "it waits for approval".into(),
            Keep::Resumable { why } => format!(
                "an export that may be resumed ({}); --include-resumable deletes it",
                flatten_str(why)
            ),
            Keep::Unknown { why } => format!("its state is unknown: {}", flatten_str(why)),
        }
    }
}

/// What prune does with one folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Written to within the cutoff: not looked at.
    Recent,
    Delete,
    Keep(Keep),
}

/// Whether a folder was written to within `older_than_ms` of `now_ms` (then prune
/// neither reads nor deletes it).
pub fn is_recent(folder: &RunFolder, now_ms: i64, older_than_ms: i64) -> bool {
    folder.last_write_ms > now_ms.saturating_sub(older_than_ms)
}

/// An export run the same command may resume: not a plan, it took its locks
/// (`progress.json`: the resume refuses a run without one), and it did not end
/// migrated, nor rejected; a refusal counts as done only before any progress.
fn resumable(folder: &RunFolder, facts: &RunFacts) -> Option<String> {
    if facts.kind != Some(RunKind::Export) || facts.plan_only || !folder.files.progress {
        return None;
    }
    match &facts.status {
        RunStatus::Interrupted { why } => Some(format!("interrupted: {why}")),
        RunStatus::Ended { outcome } => match outcome.as_deref() {
            Some("migrated" | "rejected") => None,
            Some(o) => Some(format!("it ended {o}")),
            None => Some("its execution ended without a report".into()),
        },
        _ => None,
    }
}

/// The verdict on a folder: recent folders are left alone; an older one is deleted
/// when its run has ended (or never started), kept while it runs, waits for approval,
/// may be resumed (unless `include_resumable`) or cannot be told.
pub fn verdict(
    folder: &RunFolder,
    facts: &RunFacts,
    now_ms: i64,
    older_than_ms: i64,
    include_resumable: bool,
) -> Verdict {
    if is_recent(folder, now_ms, older_than_ms) {
        return Verdict::Recent;
    }
    match &facts.status {
        RunStatus::Running => return Verdict::Keep(Keep::Running),
        RunStatus::AwaitingApproval => return Verdict::Keep(Keep::AwaitingApproval),
        RunStatus::Unknown { why } => return Verdict::Keep(Keep::Unknown { why: why.clone() }),
        RunStatus::Ended { .. } | RunStatus::Interrupted { .. } | RunStatus::NeverStarted => {}
    }
    match resumable(folder, facts) {
        Some(why) if !include_resumable => Verdict::Keep(Keep::Resumable { why }),
        _ => Verdict::Delete,
    }
}

/// The keys of the folders to delete, in DeleteObjects batches of at most
/// [`DELETE_BATCH`].
pub fn delete_batches<'a>(folders: impl IntoIterator<Item = &'a RunFolder>) -> Vec<Vec<String>> {
    let keys: Vec<String> = folders
        .into_iter()
        .flat_map(|f| f.keys.iter().cloned())
        .collect();
    keys.chunks(DELETE_BATCH).map(<[String]>::to_vec).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400_000;
    const NOW: i64 = 1_795_965_752_000;

    fn folder(id: &str, files: &[&str], age_days: i64) -> RunFolder {
        let objects = files
            .iter()
            .map(|f| ListedObject {
                key: format!("cdkd/_runs/{id}/{f}"),
                size: 100,
                last_modified_ms: NOW - age_days * DAY,
            })
            .collect();
        run_folders("cdkd", objects).remove(0)
    }

    fn facts(kind: RunKind, status: RunStatus) -> RunFacts {
        RunFacts {
            kind: Some(kind),
            plan_only: false,
            status,
        }
    }

    fn ended(o: &str) -> RunStatus {
        RunStatus::Ended {
            outcome: Some(o.into()),
        }
    }

    #[test]
    fn the_rule_covers_the_run_prefix_with_its_own_id_and_refuses_below_the_safe_minimum() {
        let r = runs_rule("cdkd", 90).unwrap();
        assert_eq!(r.id, "cdkd-flow-runs:cdkd");
        assert_eq!(r.prefix, "cdkd/_runs/");
        assert_eq!(
            (r.expiration_days, r.noncurrent_days, r.abort_multipart_days),
            (90, 1, 1)
        );
        assert_eq!(runs_rule("team/a", 8).unwrap().prefix, "team/a/_runs/");
        assert_eq!(
            runs_rule("cdkd", 7).unwrap_err(),
            RetentionError::TooShort { days: 7, min: 8 }
        );
        assert!(runs_rule("cdkd", 0).is_err());
        assert!(matches!(
            runs_rule(&"p".repeat(300), 90),
            Err(RetentionError::RuleIdTooLong(_))
        ));
    }

    #[test]
    fn a_short_expiry_is_accepted_with_a_warning_about_resuming_exports() {
        assert!(expiry_warning(8).unwrap().contains("resumed within"));
        assert_eq!(expiry_warning(30), None);
        assert_eq!(expiry_warning(90), None);
    }

    #[test]
    fn the_rule_is_added_replaced_or_left_unchanged_by_its_id() {
        let want = runs_rule("cdkd", 90).unwrap();
        assert_eq!(rule_change(None, &want), RuleChange::Add);
        let same = ObservedRule {
            id: Some(want.id.clone()),
            enabled: true,
            prefix: Some("cdkd/_runs/".into()),
            expiration_days: Some(90),
            noncurrent_days: Some(1),
            abort_multipart_days: Some(1),
            other_parts: false,
        };
        assert_eq!(rule_change(Some(&same), &want), RuleChange::Unchanged);
        for changed in [
            ObservedRule {
                expiration_days: Some(30),
                ..same.clone()
            },
            ObservedRule {
                enabled: false,
                ..same.clone()
            },
            ObservedRule {
                other_parts: true,
                ..same.clone()
            },
            ObservedRule {
                prefix: Some("cdkd/".into()),
                ..same.clone()
            },
            ObservedRule {
                noncurrent_days: None,
                ..same.clone()
            },
        ] {
            assert_eq!(rule_change(Some(&changed), &want), RuleChange::Replace);
        }
    }

    #[test]
    fn another_rule_expiring_the_run_prefix_sooner_is_named() {
        let want = runs_rule("cdkd", 90).unwrap();
        let rule = |id: &str, prefix: Option<&str>, days: Option<i32>| ObservedRule {
            id: Some(id.into()),
            enabled: true,
            prefix: prefix.map(str::to_string),
            expiration_days: days,
            ..ObservedRule::default()
        };
        let w = sooner_rules(
            &[
                rule("whole-bucket", Some(""), Some(14)),
                rule("state", Some("cdkd/"), Some(365)),
                rule("logs", Some("logs/"), Some(1)),
                rule("tags", None, Some(1)),
                rule("cdkd-flow-runs:cdkd", Some("cdkd/_runs/"), Some(10)),
            ],
            &want,
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("'whole-bucket'") && w[0].contains("after 14 days"));
    }

    #[test]
    fn older_than_takes_the_cleanups_durations_and_refuses_bad_or_zero() {
        assert_eq!(parse_older_than("30d"), Ok(30 * DAY));
        assert_eq!(parse_older_than("12h"), Ok(12 * 3_600_000));
        assert_eq!(parse_older_than("1d12h"), Ok(DAY + 12 * 3_600_000));
        assert_eq!(parse_older_than("2w"), Ok(14 * DAY));
        assert_eq!(
            parse_older_than("soon"),
            Err(RetentionError::BadOlderThan("soon".into()))
        );
        assert!(matches!(
            parse_older_than("-3d"),
            Err(RetentionError::BadOlderThan(_))
        ));
        assert!(matches!(
            parse_older_than(""),
            Err(RetentionError::BadOlderThan(_))
        ));
        assert!(matches!(
            parse_older_than("0d"),
            Err(RetentionError::ZeroOlderThan(_))
        ));
    }

    #[test]
    fn listed_objects_group_by_run_folder_with_bytes_and_last_write() {
        let o = |k: &str, size: i64, at: i64| ListedObject {
            key: k.into(),
            size,
            last_modified_ms: at,
        };
        let f = run_folders(
            "cdkd",
            vec![
                o("cdkd/_runs/b/run.json", 10, 5),
                o("cdkd/_runs/a/templates/App.json", 100, 1),
                o("cdkd/_runs/a/progress.json", 20, 9),
                o("cdkd/_runs/stray.json", 1, 1),
                o("cdkd/_runs//x.json", 1, 1),
                o("cdkd/App/us-east-1/state.json", 1, 1),
            ],
        );
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].run_id, "a");
        assert_eq!(
            (f[0].bytes, f[0].last_write_ms, f[0].keys.len()),
            (120, 9, 2)
        );
        assert!(f[0].files.progress && !f[0].files.run_json);
        assert!(!f[0].files.only_uploads());
        assert!(f[1].files.run_json);
    }

    #[test]
    fn a_folder_written_within_the_cutoff_is_recent_whatever_its_run() {
        let f = folder("destroy-A-1", &["run.json", "report.json"], 2);
        let v = verdict(
            &f,
            &facts(RunKind::Destroy, ended("destroyed")),
            NOW,
            3 * DAY,
            true,
        );
        assert_eq!(v, Verdict::Recent);
    }

    #[test]
    fn an_ended_destroy_older_than_the_cutoff_is_deleted() {
        let f = folder(
            "destroy-A-1",
            &["run.json", "progress.json", "report.json"],
            40,
        );
        for outcome in ["destroyed", "aborted", "stopped", "partial"] {
            let v = verdict(
                &f,
                &facts(RunKind::Destroy, ended(outcome)),
                NOW,
                30 * DAY,
                false,
            );
            assert_eq!(v, Verdict::Delete, "{outcome}");
        }
        let interrupted = RunStatus::Interrupted { why: "gone".into() };
        assert_eq!(
            verdict(
                &f,
                &facts(RunKind::Destroy, interrupted),
                NOW,
                30 * DAY,
                false
            ),
            Verdict::Delete
        );
    }

    #[test]
    fn a_running_or_approval_waiting_or_unknown_run_is_kept_however_old() {
        let f = folder(
            "export-A-1",
            &["run.json", "plan.json", "approval.json"],
            400,
        );
        assert_eq!(
            verdict(
                &f,
                &facts(RunKind::Export, RunStatus::Running),
                NOW,
                DAY,
                true
            ),
            Verdict::Keep(Keep::Running)
        );
        assert_eq!(
            verdict(
                &f,
                &facts(RunKind::Export, RunStatus::AwaitingApproval),
                NOW,
                DAY,
                true
            ),
            Verdict::Keep(Keep::AwaitingApproval)
        );
        let unknown = RunStatus::Unknown {
            why: "another host".into(),
        };
        assert!(matches!(
            verdict(&f, &facts(RunKind::Export, unknown), NOW, DAY, true),
            Verdict::Keep(Keep::Unknown { .. })
        ));
    }

    #[test]
    fn an_export_that_took_its_locks_and_did_not_migrate_is_kept_unless_include_resumable() {
        let f = folder(
            "export-A-1",
            &["run.json", "plan.json", "progress.json", "report.json"],
            40,
        );
        for status in [
            ended("failed"),
            ended("refused"),
            RunStatus::Interrupted {
                why: "its process 7 on h is gone".into(),
            },
            RunStatus::Ended { outcome: None },
        ] {
            let v = verdict(&f, &facts(RunKind::Export, status.clone()), NOW, DAY, false);
            assert!(
                matches!(v, Verdict::Keep(Keep::Resumable { .. })),
                "{status:?}: {v:?}"
            );
            assert_eq!(
                verdict(&f, &facts(RunKind::Export, status), NOW, DAY, true),
                Verdict::Delete
            );
        }
        assert_eq!(
            verdict(
                &f,
                &facts(RunKind::Export, ended("migrated")),
                NOW,
                DAY,
                false
            ),
            Verdict::Delete
        );
    }

    #[test]
    fn an_export_without_progress_or_a_plan_run_is_not_resumable() {
        // It never took its locks: the resume refuses it, so nothing needs its folder.
        let f = folder("export-A-1", &["run.json", "plan.json", "report.json"], 40);
        assert_eq!(
            verdict(
                &f,
                &facts(RunKind::Export, ended("refused")),
                NOW,
                DAY,
                false
            ),
            Verdict::Delete
        );
        let p = folder(
            "export-A-1-plan",
            &["run.json", "plan.json", "progress.json"],
            40,
        );
        let plan = RunFacts {
            plan_only: true,
            ..facts(RunKind::Export, ended("planned"))
        };
        assert_eq!(verdict(&p, &plan, NOW, DAY, false), Verdict::Delete);
    }

    #[test]
    fn a_deployed_run_is_told_by_its_execution_else_by_its_files() {
        assert_eq!(RunStatus::of_execution("RUNNING", None), RunStatus::Running);
        assert_eq!(
            RunStatus::of_execution("PENDING_REDRIVE", None),
            RunStatus::Running
        );
        assert_eq!(
            RunStatus::of_execution("ABORTED", None),
            RunStatus::Ended { outcome: None }
        );
        assert_eq!(
            RunStatus::of_execution("SUCCEEDED", Some("migrated")),
            ended("migrated")
        );
        assert!(matches!(
            RunStatus::of_execution("NEW", None),
            RunStatus::Unknown { .. }
        ));
        let files = |f: &[&str]| folder("export-A-1", f, 40).files;
        assert_eq!(
            RunStatus::of_files(&files(&["report.json"]), Some("migrated"), false, false),
            ended("migrated")
        );
        assert_eq!(
            RunStatus::of_files(&files(&["plan.json", "approval.json"]), None, true, false),
            RunStatus::AwaitingApproval
        );
        assert_eq!(
            RunStatus::of_files(&files(&["templates/A.json"]), None, false, true),
            RunStatus::NeverStarted
        );
        assert!(matches!(
            RunStatus::of_files(&files(&["templates/A.json"]), None, false, false),
            RunStatus::Unknown { .. }
        ));
        assert!(matches!(
            RunStatus::of_files(&files(&["progress.json"]), None, false, true),
            RunStatus::Unknown { .. }
        ));
    }

    #[test]
    fn a_local_runs_state_maps_onto_prunes_status() {
        assert_eq!(
            RunStatus::of_local(&LocalState::Running),
            RunStatus::Running
        );
        assert_eq!(
            RunStatus::of_local(&LocalState::Ended {
                outcome: "destroyed".into()
            }),
            ended("destroyed")
        );
        assert!(matches!(
            RunStatus::of_local(&LocalState::Unknown { why: "x".into() }),
            RunStatus::Unknown { .. }
        ));
    }

    #[test]
    fn run_ids_name_their_kind() {
        assert_eq!(kind_of_id("export-App-1"), Some(RunKind::Export));
        assert_eq!(kind_of_id("resume-App-2"), Some(RunKind::Export));
        assert_eq!(kind_of_id("destroy-App-1"), Some(RunKind::Destroy));
        assert_eq!(kind_of_id("cleanup-p-1"), Some(RunKind::Cleanup));
        assert_eq!(kind_of_id("mine"), None);
    }

    #[test]
    fn deletes_go_in_batches_of_at_most_a_thousand_keys() {
        let files: Vec<String> = (0..2500).map(|i| format!("cr/{i}.json")).collect();
        let refs: Vec<&str> = files.iter().map(String::as_str).collect();
        let big = folder("destroy-A-1", &refs, 40);
        let small = folder("destroy-B-1", &["run.json"], 40);
        let b = delete_batches([&big, &small]);
        assert_eq!(
            b.iter().map(Vec::len).collect::<Vec<_>>(),
            vec![1000, 1000, 501]
        );
        assert!(delete_batches(std::iter::empty()).is_empty());
    }
}
