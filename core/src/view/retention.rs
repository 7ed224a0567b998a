//! What `runs expire` and `runs prune` print (docs/runs.md, "The lifecycle rule (cdkd-flow runs expire, make deploy)" and "Pruning (cdkd-flow runs prune --older-than D)"): the lifecycle rule
//! set (or that would be), the folders deleted and kept with the reason (why a run may
//! be resumed or its state is unknown, decided by `retention` as data), and one summary
//! line; and the values the commands refuse. Every value read from the bucket is
//! flattened onto one line.

use serde_json::{json, Value};

use std::fmt;

use crate::retention::{
    Keep, ResumeWhy, RetentionError, RetentionWarning, RuleChange, RunsRule, SoonerReach,
    UnknownWhy, Verdict,
};
use crate::run::{RunId, RunKind};
use crate::text::flatten_str;
use crate::time::iso_seconds;
use crate::view::join_lines;
use crate::view::words::count;

/// `812 bytes`, `12.3 KiB`, `4.0 MiB`, `1.2 GiB`.
pub fn bytes(n: i64) -> String {
    let n = n.max(0) as f64;
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if n < 1024.0 {
        return format!("{n} bytes");
    }
    let mut v = n / 1024.0;
    let mut unit = UNITS[0];
    for u in &UNITS[1..] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{v:.1} {unit}")
}

// ---------------------------------------------------------------------------------
// Warnings and reasons

impl fmt::Display for RetentionWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RetentionWarning::ShortExpiry { days } => write!(
                f,
                "each object of a run folder expires {days} days after its own last write, not its run's: an export's plan.json and templates, written when it started, expire {days} days after the run STARTED, even if it was resumed since; an interrupted export must be resumed and finished within {days} days of its start, or its plan is gone and it must be finished by hand (docs/runs.md §3)"
            ),
            RetentionWarning::SoonerRule {
                id,
                scope,
                days,
                ours,
                reach,
            } => {
                let which = match reach {
                    SoonerReach::RunFolders => "run folders go by the shorter one",
                    SoonerReach::UnderIt => "the run folders under it go by the shorter one",
                    SoonerReach::Sizes => {
                        "the run objects of the sizes it selects go by the shorter one"
                    }
                };
                write!(
                    f,
                    "the bucket's rule '{}' expires objects under '{}' after {days} days, before this rule's {ours}: {which}",
                    flatten_str(id.as_deref().unwrap_or("(no id)")),
                    flatten_str(scope),
                )
            }
            RetentionWarning::ShortOlderThan { text } => write!(
                f,
                "--older-than {} is under a day: the folders of runs that ended that recently go with their reports (runs show has nothing left to print), and a run resumed between the verdict and the delete loses what the delete removes (docs/runs.md §4)",
                flatten_str(text)
            ),
        }
    }
}

/// Why prune keeps a folder older than the cutoff.
impl fmt::Display for Keep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Keep::Running => f.write_str("it is running"),
            Keep::AwaitingApproval => f.write_str("it waits for approval"),
            Keep::Resumable { why } => write!(
                f,
                "an export that may be resumed ({}); --include-resumable deletes it",
                flatten_str(&why.to_string())
            ),
            Keep::Unknown { why } => write!(
                f,
                "its state is unknown: {}",
                flatten_str(&why.to_string())
            ),
            Keep::Orphans => f.write_str(
                "it holds a list of orphaned resources still in AWS (orphans/): read it, then delete the folder yourself",
            ),
        }
    }
}

/// Why an export may still be resumed (inside [`Keep`]'s words).
impl fmt::Display for ResumeWhy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResumeWhy::Interrupted(why) => write!(f, "interrupted: {why}"),
            ResumeWhy::Ended(outcome) => write!(f, "it ended {outcome}"),
            ResumeWhy::EndedWithoutReport => f.write_str("its execution ended without a report"),
        }
    }
}

/// Why prune cannot tell where a run stands (inside [`Keep`]'s words); a status or an
/// execution's name read from AWS is flattened onto one line, an error's text is as it
/// reads (the reason is flattened whole).
impl fmt::Display for UnknownWhy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnknownWhy::Local(why) => why.fmt(f),
            UnknownWhy::Execution { status } => {
                write!(f, "its execution is {}", flatten_str(status))
            }
            UnknownWhy::Undescribed => f.write_str(
                "it has no run.json and no report, and its execution could not be described",
            ),
            UnknownWhy::HolderUndescribed { execution } => write!(
                f,
                "the lock of its root stack is held by the execution {}, which could not be described: it may be resuming this run",
                flatten_str(execution)
            ),
            UnknownWhy::Unreadable(error) => f.write_str(error),
            UnknownWhy::RootLockUnreadable(error) => {
                write!(f, "the lock of its root stack cannot be read: {error}")
            }
        }
    }
}

/// A value `runs expire` or `runs prune` refuses.
impl fmt::Display for RetentionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RetentionError::TooShort { days, min } => write!(
                f,
                "--days {days} is below the safe minimum of {min} days: a run waiting for approval (up to 7 days) and then running would lose its plan and templates (docs/runs.md §3)"
            ),
            RetentionError::RuleIdTooLong(id) => write!(
                f,
                "the lifecycle rule's id '{id}' is longer than S3's 255 characters (a shorter --state-prefix)"
            ),
            RetentionError::BadOlderThan(text) => {
                write!(f, "--older-than '{text}' is not a duration like 30d, 12h or 2w")
            }
            RetentionError::ZeroOlderThan(text) => write!(
                f,
                "--older-than '{text}' is zero: it would prune runs that just ended"
            ),
        }
    }
}

// ---------------------------------------------------------------------------------
// runs expire

/// What `runs expire` did (or would do) to the bucket's lifecycle configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpireResult {
    pub bucket: String,
    pub rule: RunsRule,
    pub change: RuleChange,
    pub dry_run: bool,
    /// The bucket's other rules, kept as they were.
    pub other_rules: usize,
    pub warnings: Vec<RetentionWarning>,
}

/// One line: the rule, what happened to it, and the rules kept beside it.
pub fn render_expire(r: &ExpireResult) -> String {
    let what = match (r.change, r.dry_run) {
        (RuleChange::Unchanged, _) => "is already set".to_string(),
        (c, true) => format!("would be {}", c.word()),
        (c, false) => c.word().to_string(),
    };
    format!(
        "s3://{}: lifecycle rule {} {what}: objects under {} expire {} after their last write, noncurrent versions {} after, incomplete multipart uploads are aborted after {}; {} of the bucket kept as {}\n",
        flatten_str(&r.bucket),
        flatten_str(&r.rule.id),
        flatten_str(&r.rule.prefix),
        count(r.rule.expiration_days.max(0) as u64, "day"),
        count(r.rule.noncurrent_days.max(0) as u64, "day"),
        count(r.rule.abort_multipart_days.max(0) as u64, "day"),
        count(r.other_rules as u64, "other rule"),
        if r.other_rules == 1 { "it was" } else { "they were" },
    )
}

/// `runs expire --json`.
pub fn expire_json(r: &ExpireResult) -> Value {
    json!({
        "bucket": r.bucket,
        "ruleId": r.rule.id,
        "prefix": r.rule.prefix,
        "change": r.change.word(),
        "dryRun": r.dry_run,
        "expirationDays": r.rule.expiration_days,
        "noncurrentVersionExpirationDays": r.rule.noncurrent_days,
        "abortIncompleteMultipartUploadDays": r.rule.abort_multipart_days,
        "otherRules": r.other_rules,
        "warnings": r.warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
    })
}

// ---------------------------------------------------------------------------------
// runs prune

/// One folder older than the cutoff, with its verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PruneRow {
    pub run_id: RunId,
    pub kind: Option<RunKind>,
    pub objects: usize,
    pub bytes: i64,
    pub last_write_ms: i64,
    /// `Delete` or `Keep` (recent folders are only counted).
    pub verdict: Verdict,
    /// Of a folder to delete, the objects S3 refused to delete
    /// (`cdkd_core::retention::keys_left`): it is partly deleted.
    pub left: usize,
}

/// A key DeleteObjects did not delete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotDeleted {
    pub key: String,
    pub error: String,
}

/// What `runs prune` found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PruneResult {
    pub bucket: String,
    pub older_than: String,
    pub dry_run: bool,
    pub rows: Vec<PruneRow>,
    pub recent_runs: usize,
    pub recent_objects: usize,
    pub recent_bytes: i64,
    pub not_deleted: Vec<NotDeleted>,
    /// The bucket keeps versions: deleted objects stay as noncurrent versions until
    /// its lifecycle rules remove them.
    pub versioned: bool,
}

impl PruneResult {
    /// The folders to delete (under `--dry-run`: that would be), whether every key went.
    fn doomed(&self) -> impl Iterator<Item = &PruneRow> {
        self.rows.iter().filter(|r| r.verdict == Verdict::Delete)
    }

    /// The folders deleted whole.
    fn deleted(&self) -> impl Iterator<Item = &PruneRow> {
        self.doomed().filter(|r| r.left == 0)
    }

    /// The folders some of whose objects S3 refused to delete.
    fn partly(&self) -> impl Iterator<Item = &PruneRow> {
        self.doomed().filter(|r| r.left > 0)
    }

    fn objects_deleted(&self) -> usize {
        self.doomed()
            .map(|x| x.objects.saturating_sub(x.left))
            .sum::<usize>()
    }

    fn kept(&self) -> impl Iterator<Item = &PruneRow> {
        self.rows
            .iter()
            .filter(|r| matches!(r.verdict, Verdict::Keep(_)))
    }

    /// Whether every delete it tried went through.
    pub fn complete(&self) -> bool {
        self.not_deleted.is_empty()
    }
}

fn kind_word(k: Option<&RunKind>) -> String {
    k.map_or("run".into(), |k| flatten_str(k.name()))
}

/// A line per folder deleted (or that would be) and per folder kept with its reason,
/// a line per key not deleted, then the summary.
pub fn render_prune(r: &PruneResult) -> String {
    let mut lines = Vec::new();
    let verb = if r.dry_run { "would delete" } else { "deleted" };
    for row in r.deleted() {
        lines.push(format!(
            "{verb} {} ({}, {}, {}, last written {})",
            row.run_id,
            kind_word(row.kind.as_ref()),
            count(row.objects as u64, "object"),
            bytes(row.bytes),
            iso_seconds(row.last_write_ms),
        ));
    }
    for row in r.partly() {
        let gone = row.objects.saturating_sub(row.left);
        lines.push(format!(
            "{} {} ({}, {} of {} deleted, {} not: the keys below; last written {})",
            if gone == 0 {
                "not deleted"
            } else {
                "partly deleted"
            },
            row.run_id,
            kind_word(row.kind.as_ref()),
            gone,
            count(row.objects as u64, "object"),
            row.left,
            iso_seconds(row.last_write_ms),
        ));
    }
    for row in r.kept() {
        if let Verdict::Keep(k) = &row.verdict {
            lines.push(format!(
                "kept {} ({}, last written {}): {}",
                row.run_id,
                kind_word(row.kind.as_ref()),
                iso_seconds(row.last_write_ms),
                k
            ));
        }
    }
    for n in &r.not_deleted {
        lines.push(format!(
            "not deleted: {}: {}",
            flatten_str(&n.key),
            flatten_str(&n.error)
        ));
    }
    lines.push(summary(r));
    if r.versioned && !r.dry_run && r.objects_deleted() > 0 {
        lines.push(
            "the bucket is versioned: the deleted objects stay as noncurrent versions until a lifecycle rule expires them (cdkd-flow runs expire sets one)"
                .into(),
        );
    }
    join_lines(&lines)
}

fn summary(r: &PruneResult) -> String {
    let runs: usize = r.deleted().count();
    let partly = r.partly().count();
    let objects = r.objects_deleted();
    let freed: i64 = r.deleted().map(|x| x.bytes).sum();
    let kept: Vec<&PruneRow> = r.kept().collect();
    let kept_bytes: i64 = kept.iter().map(|x| x.bytes).sum::<i64>() + r.recent_bytes;
    let (verb, deleted, freed_word) = if r.dry_run {
        ("would prune", "", "")
    } else {
        ("pruned", " deleted", " freed")
    };
    let partly = if partly > 0 {
        format!(
            " ({} partly deleted, not counted: S3 refused some of its objects)",
            count(partly as u64, "more run")
        )
    } else {
        String::new()
    };
    let head = format!(
        "{verb} {} ended more than {} ago{partly}: {}{deleted}, {}{freed_word}",
        count(runs as u64, "run"),
        flatten_str(&r.older_than),
        count(objects as u64, "object"),
        bytes(freed)
    );
    format!(
        "{head}; kept {} older (reasons above) and {} written within {}: {} kept",
        count(kept.len() as u64, "run"),
        count(r.recent_runs as u64, "run"),
        flatten_str(&r.older_than),
        bytes(kept_bytes)
    )
}

/// `runs prune --json`.
pub fn prune_json(r: &PruneResult) -> Value {
    let row = |x: &PruneRow| {
        let mut v = json!({
            "runId": x.run_id,
            "kind": x.kind.as_ref().map(RunKind::name),
            "objects": x.objects,
            "bytes": x.bytes,
            "lastWrite": iso_seconds(x.last_write_ms),
        });
        if let (Verdict::Keep(k), Some(o)) = (&x.verdict, v.as_object_mut()) {
            o.insert("reason".into(), Value::from(k.to_string()));
        }
        v
    };
    let deleted: Vec<Value> = r.deleted().map(row).collect();
    let partly: Vec<Value> = r
        .partly()
        .map(|x| {
            let mut v = row(x);
            if let Some(o) = v.as_object_mut() {
                o.insert("objectsLeft".into(), Value::from(x.left));
            }
            v
        })
        .collect();
    let kept: Vec<Value> = r.kept().map(row).collect();
    json!({
        "bucket": r.bucket,
        "olderThan": r.older_than,
        "dryRun": r.dry_run,
        "deleted": deleted,
        "partlyDeleted": partly,
        "kept": kept,
        "recent": {"runs": r.recent_runs, "objects": r.recent_objects, "bytes": r.recent_bytes},
        "notDeleted": r.not_deleted.iter().map(|n| json!({"key": n.key, "error": n.error})).collect::<Vec<_>>(),
        "versioned": r.versioned,
        "summary": {
            "runsDeleted": r.deleted().count(),
            "runsPartlyDeleted": r.partly().count(),
            "objectsDeleted": r.objects_deleted(),
            "bytesFreed": r.deleted().map(|x| x.bytes).sum::<i64>(),
            "runsKept": r.kept().count() + r.recent_runs,
            "bytesKept": r.kept().map(|x| x.bytes).sum::<i64>() + r.recent_bytes,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retention::{runs_rule, Keep};
    use crate::run::Outcome;
    use crate::runs::{Interruption, Unseen};

    #[test]
    fn the_words_of_every_retention_warning_and_keep_reason() {
        let sooner = |reach| RetentionWarning::SoonerRule {
            id: Some("logs\nrule".into()),
            scope: "cdkd/".into(),
            days: 7,
            ours: 90,
            reach,
        };
        let lines: Vec<String> = [
            RetentionWarning::ShortExpiry { days: 8 }.to_string(),
            sooner(SoonerReach::RunFolders).to_string(),
            sooner(SoonerReach::UnderIt).to_string(),
            sooner(SoonerReach::Sizes).to_string(),
            RetentionWarning::SoonerRule {
                id: None,
                scope: String::new(),
                days: 1,
                ours: 90,
                reach: SoonerReach::RunFolders,
            }
            .to_string(),
            RetentionWarning::ShortOlderThan {
                text: "1s\u{1b}[2J".into(),
            }
            .to_string(),
            Keep::Running.to_string(),
            Keep::AwaitingApproval.to_string(),
            Keep::Resumable {
                why: ResumeWhy::Interrupted(Interruption::Recorded("its process\nis gone".into())),
            }
            .to_string(),
            Keep::Unknown {
                why: UnknownWhy::Execution {
                    status: "WEIRD".into(),
                },
            }
            .to_string(),
            Keep::Orphans.to_string(),
        ]
        .to_vec();
        insta::assert_snapshot!(lines.join("\n"));
    }

    /// Why an export may be resumed, and why a run's state is unknown, in words, bare and
    /// as prune's reason; a status, an execution's name and a host read from AWS or the
    /// bucket are flattened onto one line; and the values the retention commands refuse.
    #[test]
    fn the_words_of_every_resume_and_unknown_reason_and_retention_error() {
        let hostile = "NEW\n\u{1b}[2J ";
        let resume = [
            ResumeWhy::Interrupted(Interruption::CtrlC),
            ResumeWhy::Interrupted(Interruption::ProcessGone {
                pid: 7,
                host: hostile.into(),
            }),
            ResumeWhy::Interrupted(Interruption::LockExpired {
                expires_ms: 1_795_965_700_000,
            }),
            ResumeWhy::Ended(Outcome::Failed),
            ResumeWhy::Ended(Outcome::Other(hostile.into())),
            ResumeWhy::EndedWithoutReport,
        ];
        let unknown = [
            UnknownWhy::Local(Unseen::NoLock {
                host: hostile.into(),
                pid: 9,
            }),
            UnknownWhy::Execution {
                status: hostile.into(),
            },
            UnknownWhy::Undescribed,
            UnknownWhy::HolderUndescribed {
                execution: "resume-A-2".into(),
            },
            UnknownWhy::HolderUndescribed {
                execution: hostile.into(),
            },
            UnknownWhy::Unreadable("report.json: AccessDenied:\nnot allowed".into()),
            UnknownWhy::RootLockUnreadable("the lock of App: SlowDown\n".into()),
        ];
        let mut lines: Vec<String> = Vec::new();
        for why in resume {
            lines.push(why.to_string());
            lines.push(Keep::Resumable { why }.to_string());
        }
        for why in unknown {
            lines.push(why.to_string());
            lines.push(Keep::Unknown { why }.to_string());
        }
        lines.extend([
            RetentionError::TooShort { days: 7, min: 8 }.to_string(),
            RetentionError::RuleIdTooLong("cdkd-flow-runs:ppp".into()).to_string(),
            RetentionError::BadOlderThan("soon".into()).to_string(),
            RetentionError::ZeroOlderThan("0d".into()).to_string(),
        ]);
        insta::assert_snapshot!(lines.join("\n---\n"));
    }

    const T: i64 = 1_795_965_752_000;

    fn result(dry_run: bool) -> PruneResult {
        PruneResult {
            bucket: "cdkd-state-1".into(),
            older_than: "30d".into(),
            dry_run,
            rows: vec![
                PruneRow {
                    run_id: "destroy-Shop-20261001T101010".into(),
                    kind: Some(RunKind::Destroy),
                    objects: 4,
                    bytes: 6_300,
                    last_write_ms: T - 59 * 86_400_000,
                    verdict: Verdict::Delete,
                    left: 0,
                },
                PruneRow {
                    run_id: "export-Orders-20261002T101010".into(),
                    kind: Some(RunKind::Export),
                    objects: 7,
                    bytes: 52_000,
                    last_write_ms: T - 58 * 86_400_000,
                    verdict: Verdict::Keep(Keep::Resumable {
                        why: ResumeWhy::Ended(Outcome::Failed),
                    }),
                    left: 0,
                },
                PruneRow {
                    run_id: "export-Web\u{1b}[31m-1".into(),
                    kind: None,
                    objects: 2,
                    bytes: 900,
                    last_write_ms: T - 40 * 86_400_000,
                    verdict: Verdict::Keep(Keep::Unknown {
                        why: UnknownWhy::Local(Unseen::NoLock {
                            host: "ci-7".into(),
                            pid: 9,
                        }),
                    }),
                    left: 0,
                },
            ],
            recent_runs: 12,
            recent_objects: 70,
            recent_bytes: 3_500_000,
            not_deleted: Vec::new(),
            versioned: false,
        }
    }

    #[test]
    fn prune_lists_what_goes_and_what_stays_with_the_reason_and_one_summary() {
        insta::assert_snapshot!(render_prune(&result(false)));
    }

    #[test]
    fn prune_dry_run_says_would_and_deletes_nothing() {
        let out = render_prune(&result(true));
        assert!(
            out.starts_with("would delete destroy-Shop-20261001T101010"),
            "{out}"
        );
        assert!(
            out.contains("would prune 1 run ended more than 30d ago: 4 objects, 6.2 KiB"),
            "{out}"
        );
        assert!(!out.contains("freed"), "{out}");
    }

    #[test]
    fn prune_names_each_key_not_deleted_and_a_versioned_bucket() {
        let mut r = result(false);
        r.not_deleted.push(NotDeleted {
            key: "cdkd/_runs/destroy-Shop-20261001T101010/report.json".into(),
            error: "AccessDenied: Access Denied".into(),
        });
        r.rows[0].left = 1;
        r.versioned = true;
        let out = render_prune(&r);
        assert!(
            out.contains(
                "not deleted: cdkd/_runs/destroy-Shop-20261001T101010/report.json: AccessDenied"
            ),
            "{out}"
        );
        assert!(out.contains("3 objects deleted"), "{out}");
        // The folder is partly deleted, not deleted, and counts as no run pruned.
        assert!(
            out.contains("partly deleted destroy-Shop-20261001T101010 (destroy, 3 of 4 objects deleted, 1 not"),
            "{out}"
        );
        assert!(!out.contains("\ndeleted destroy-Shop"), "{out}");
        assert!(!out.starts_with("deleted destroy-Shop"), "{out}");
        assert!(
            out.contains("pruned 0 runs ended more than 30d ago (1 more run partly deleted"),
            "{out}"
        );
        assert!(out.contains("noncurrent versions"), "{out}");
        assert!(!r.complete());
        let v = prune_json(&r);
        assert_eq!(v["summary"]["objectsDeleted"], 3);
        assert_eq!(v["summary"]["runsDeleted"], 0);
        assert_eq!(v["summary"]["runsPartlyDeleted"], 1);
        assert_eq!(v["deleted"], serde_json::json!([]));
        assert_eq!(
            v["partlyDeleted"][0]["runId"],
            "destroy-Shop-20261001T101010"
        );
        assert_eq!(v["partlyDeleted"][0]["objectsLeft"], 1);
        // None of a folder deleted: said so.
        r.rows[0].left = 4;
        assert!(render_prune(&r)
            .contains("not deleted destroy-Shop-20261001T101010 (destroy, 0 of 4 objects deleted"));
        assert_eq!(v["notDeleted"][0]["error"], "AccessDenied: Access Denied");
    }

    #[test]
    fn prune_json_has_every_folder_with_its_reason_and_the_totals() {
        let v = prune_json(&result(false));
        assert_eq!(v["deleted"][0]["runId"], "destroy-Shop-20261001T101010");
        assert!(v["kept"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("--include-resumable"));
        assert_eq!(v["kept"][1]["runId"], "export-Web\u{1b}[31m-1");
        assert_eq!(v["summary"]["runsDeleted"], 1);
        assert_eq!(v["summary"]["runsKept"], 14);
        assert_eq!(v["summary"]["bytesFreed"], 6_300);
        assert_eq!(v["summary"]["bytesKept"], 3_552_900);
        assert_eq!(v["recent"]["objects"], 70);
    }

    #[test]
    fn expire_says_what_happened_to_the_rule_and_that_the_others_were_kept() {
        let r = ExpireResult {
            bucket: "cdkd-state-1".into(),
            rule: runs_rule("cdkd", 90).unwrap(),
            change: RuleChange::Add,
            dry_run: false,
            other_rules: 1,
            warnings: Vec::new(),
        };
        insta::assert_snapshot!(render_expire(&r));
        let dry = ExpireResult {
            dry_run: true,
            change: RuleChange::Replace,
            other_rules: 2,
            ..r.clone()
        };
        assert!(render_expire(&dry).contains("would be replaced"));
        assert!(render_expire(&dry).contains("2 other rules of the bucket kept as they were"));
        let same = ExpireResult {
            change: RuleChange::Unchanged,
            ..r.clone()
        };
        assert!(render_expire(&same).contains("is already set"));
        let v = expire_json(&r);
        assert_eq!(v["ruleId"], "cdkd-flow-runs:cdkd");
        assert_eq!(v["change"], "added");
        assert_eq!(v["expirationDays"], 90);
    }

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(bytes(812), "812 bytes");
        assert_eq!(bytes(6_300), "6.2 KiB");
        assert_eq!(bytes(4 * 1024 * 1024), "4.0 MiB");
        assert_eq!(bytes(3 * 1024 * 1024 * 1024), "3.0 GiB");
        assert_eq!(bytes(-5), "0 bytes");
    }
}
