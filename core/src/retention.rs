//! How long run folders live (docs/runs.md): the S3 lifecycle rule on `<prefix>/_runs/`
//! that `cdkd-flow runs expire` merges into the state bucket's lifecycle configuration
//! (docs/runs.md, "The lifecycle rule (cdkd-flow runs expire, make deploy)"), and which run folders `cdkd-flow runs prune --older-than D`
//! deletes (docs/runs.md, "Pruning (cdkd-flow runs prune --older-than D)"). Every
//! decision is here; the CLI gathers what S3 and Step Functions say and acts.

use crate::cleanup::{parse_duration_ms, CleanupError};
use crate::keys::run_prefix;
use crate::lock::{is_expired, parse_flow_owner, FlowHolder, LockInfo};
use crate::run::{ExecutionStatus, Outcome, RunId, RunKind};
use crate::runs::{lock_owned_by_run, Interruption, LocalState, Unseen};
use crate::text::flatten_str;

/// The lifecycle rule's id is this and the state prefix: `cdkd-flow-runs:<prefix>`, so
/// two prefixes of one bucket each keep a rule of their own.
pub const RULE_ID_BASE: &str = "cdkd-flow-runs";
/// `make deploy`'s default retention (docs/runs.md, "The lifecycle rule (cdkd-flow runs expire, make deploy)").
pub const DEFAULT_EXPIRY_DAYS: i32 = 90;
/// The shortest expiry accepted: the longest a live run goes without rewriting its
/// `plan.json` and uploaded templates is an export waiting for approval (7 days, the
/// approval task's timeout) and then running; one day more covers the run itself.
pub const MIN_EXPIRY_DAYS: i32 = 8;
/// Below this an expiry is accepted with a warning: an interrupted export is resumable
/// only while its folder lives (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first").
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

/// A value the retention commands refuse (a usage error), as data; the retention view
/// words it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RetentionError {
    /// `--days` below the safe minimum `min`.
    TooShort { days: i32, min: i32 },
    /// The lifecycle rule's id (flattened) is longer than S3 takes.
    RuleIdTooLong(String),
    /// `--older-than` is not a duration (as typed, flattened).
    BadOlderThan(String),
    /// `--older-than` is zero (as typed).
    ZeroOlderThan(String),
}

impl std::error::Error for RetentionError {}

// ---------------------------------------------------------------------------------
// The lifecycle rule (docs/runs.md, "The lifecycle rule (cdkd-flow runs expire, make deploy)")

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

/// A warning `runs expire` or `runs prune` prints beside what it does, as data
/// (docs/runs.md); `core::view::retention` words it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RetentionWarning {
    /// An accepted but short expiry ([`expiry_warning`]).
    ShortExpiry { days: i32 },
    /// Another rule of the bucket expires run objects sooner ([`sooner_rules`]).
    SoonerRule {
        id: Option<String>,
        scope: String,
        days: i32,
        ours: i32,
        reach: SoonerReach,
    },
    /// A `--older-than` under a day ([`older_than_warning`]), as the user typed it.
    ShortOlderThan { text: String },
}

/// Which run objects a sooner rule expires first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SoonerReach {
    /// Its scope covers the run prefix: every run folder.
    RunFolders,
    /// Its scope lies inside the run prefix: the run folders under it.
    UnderIt,
    /// It also selects by size: the run objects of those sizes.
    Sizes,
}

/// The warning an accepted but short expiry gets. S3 counts each object's age from its
/// own last write (docs/runs.md, "The lifecycle rule (cdkd-flow runs expire, make deploy)"): a resume rewrites `progress.json`, never the plan
/// and templates its export wrote when it started.
pub fn expiry_warning(days: i32) -> Option<RetentionWarning> {
    (days < WARN_BELOW_DAYS).then_some(RetentionWarning::ShortExpiry { days })
}

/// A lifecycle rule as the bucket holds it, reduced to what the decisions read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedRule {
    pub id: Option<String>,
    pub enabled: bool,
    /// The rule's prefix (its filter's, or the legacy rule-level one); `None` when the
    /// filter is something else (tags, sizes, an `And`).
    pub prefix: Option<String>,
    /// The prefix under which the rule can expire run objects, whatever its filter: a
    /// prefix filter's, an `And` filter's (empty: the whole bucket), the legacy
    /// rule-level one; `None` when it selects by tags, which run objects never carry.
    pub scope: Option<String>,
    /// Its filter also selects by size: it expires only some objects under `scope`.
    pub sized: bool,
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
/// ours (docs/runs.md, "The lifecycle rule (cdkd-flow runs expire, make deploy)"): a rule whose scope (a prefix filter's, an `And` filter's, the
/// whole bucket) covers the run prefix, or lies inside it (`<prefix>/_runs/export-`
/// covers some run folders); a rule selecting by tags never applies, run objects carry
/// none. They would delete a live run's files first.
pub fn sooner_rules(others: &[ObservedRule], want: &RunsRule) -> Vec<RetentionWarning> {
    others
        .iter()
        .filter(|r| r.enabled && r.id.as_deref() != Some(want.id.as_str()))
        .filter_map(|r| {
            let scope = r.scope.as_deref()?;
            let days = r.expiration_days?;
            let covers = want.prefix.starts_with(scope);
            let inside = scope.starts_with(want.prefix.as_str());
            if !(covers || inside) || days >= want.expiration_days {
                return None;
            }
            let reach = match (inside && !covers, r.sized) {
                (false, false) => SoonerReach::RunFolders,
                (true, false) => SoonerReach::UnderIt,
                (_, true) => SoonerReach::Sizes,
            };
            Some(RetentionWarning::SoonerRule {
                id: r.id.clone(),
                scope: scope.to_string(),
                days,
                ours: want.expiration_days,
                reach,
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------------
// Pruning (docs/runs.md, "Pruning (cdkd-flow runs prune --older-than D)")

/// Parses `--older-than` (the cleanup's durations: `30d`, `12h`, `2w`, `1d12h`) into
/// milliseconds.
pub fn parse_older_than(text: &str) -> Result<i64, RetentionError> {
    parse_duration_ms(text).map_err(|e| match e {
        CleanupError::ZeroDuration(t) => RetentionError::ZeroOlderThan(t),
        _ => RetentionError::BadOlderThan(flatten_str(text)),
    })
}

/// Below this `--older-than` is accepted with a warning (docs/runs.md, "Pruning (cdkd-flow runs prune --older-than D)").
pub const OLDER_THAN_WARN_BELOW_MS: i64 = 86_400_000;

/// The warning a `--older-than` under a day gets: the folders of runs that just ended
/// go with their reports, and a run judged ended moments ago is the likeliest to be
/// resumed between the verdict and the delete.
pub fn older_than_warning(text: &str, older_than_ms: i64) -> Option<RetentionWarning> {
    (older_than_ms < OLDER_THAN_WARN_BELOW_MS).then(|| RetentionWarning::ShortOlderThan {
        text: text.to_string(),
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
    /// The marker of a message sent at a run's end (`notified-run-*.json`,
    /// `notified-cleanup-finished.json`, docs/notifications.md, "Once per run and kind: at most once").
    pub ended_notice: bool,
    /// A list of orphaned resources a destroy saved in its run folder before they moved
    /// to `<prefix>/_orphans/` (`orphans/<stack>.json`): the only record of resources
    /// still in AWS.
    pub orphans: bool,
}

impl FolderFiles {
    /// Only uploads (templates, change-set templates, custom-resource answers), and at
    /// most the plan a real run's plan run (`<run-id>-plan`) writes into it: nothing
    /// says a run ever started in this folder (docs/runs.md, "Pruning (cdkd-flow runs prune --older-than D)").
    pub fn only_uploads(&self) -> bool {
        !(self.run_json || self.progress || self.report || self.approval)
    }
}

/// A run's folder `<prefix>/_runs/<run-id>/` as listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFolder {
    pub run_id: RunId,
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
            run_id: id.into(),
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
            name if crate::notify::is_end_marker(name) => f.files.ended_notice = true,
            name if name.starts_with("orphans/") => f.files.orphans = true,
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
/// export's). A run started with `--run-id` of its own names no kind: [`kind_of_run`].
pub fn kind_of_id(run_id: &str) -> Option<RunKind> {
    match run_id.split('-').next()? {
        "resume" => Some(RunKind::Export),
        word => RunKind::of_name(word),
    }
}

/// What tells a run folder's kind, best first (docs/runs.md, "Pruning (cdkd-flow runs prune --older-than D)" step 2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KindWitness<'a> {
    /// The kind of the state machine whose execution of the run answered DescribeExecution.
    pub machine: Option<&'a RunKind>,
    /// A local run's `run.json` `kind`.
    pub run_json: Option<&'a str>,
    /// The folder holds `plan.json`: only an export plans.
    pub plan: bool,
    /// The `kind` field of its report (or progress), when it has one.
    pub report: Option<&'a str>,
}

/// The kind of the run `run_id`: the state machine that answered for it, else what its
/// folder says (`run.json`'s kind, a `plan.json`: an export, its report's `kind`), else
/// its id's first word ([`kind_of_id`]). A run named by `--run-id` (`orders-q1`) is
/// told by the first two.
pub fn kind_of_run(run_id: &str, w: &KindWitness<'_>) -> Option<RunKind> {
    w.machine
        .cloned()
        .or_else(|| w.run_json.and_then(RunKind::of_name))
        .or_else(|| w.plan.then_some(RunKind::Export))
        .or_else(|| w.report.and_then(RunKind::of_name))
        .or_else(|| kind_of_id(run_id))
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
        outcome: Option<Outcome>,
    },
    Interrupted {
        why: Interruption,
    },
    /// Only uploads, for a run whose plan run (`<run-id>-plan`) has a folder of its
    /// own: the run was never started (the plan refused, or nobody said yes).
    NeverStarted,
    Unknown {
        why: UnknownWhy,
    },
}

/// Why prune cannot tell where a run stands, as data; the retention view words it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnknownWhy {
    /// A local run's state that cannot be told ([`Unseen`]).
    Local(Unseen),
    /// Its execution's status is none this version knows (`status`, as Step Functions
    /// said it).
    Execution { status: String },
    /// It has no `run.json` and no report, and its execution could not be described.
    Undescribed,
    /// The lock of its root stack is held by the execution `execution`, which could not
    /// be described: it may be resuming the run.
    HolderUndescribed { execution: RunId },
    /// A file of its folder could not be read: the error's text.
    Unreadable(String),
    /// The lock of its root stack could not be read: the error's text.
    RootLockUnreadable(String),
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
            LocalState::Unknown { why } => RunStatus::Unknown {
                why: UnknownWhy::Local(why.clone()),
            },
        }
    }

    /// A deployed run whose execution Step Functions describes: running while
    /// `RUNNING` (or `PENDING_REDRIVE`), else ended with its report's outcome.
    pub fn of_execution(status: &ExecutionStatus, report_outcome: Option<&Outcome>) -> RunStatus {
        use ExecutionStatus as S;
        match status {
            S::Running | S::PendingRedrive => RunStatus::Running,
            S::Succeeded | S::Failed | S::TimedOut | S::Aborted => RunStatus::Ended {
                outcome: report_outcome.cloned(),
            },
            S::Other(other) => RunStatus::Unknown {
                why: UnknownWhy::Execution {
                    status: other.clone(),
                },
            },
        }
    }

    /// A run without `run.json` whose execution could not be described (no deployed
    /// backend reachable, or no such execution): what its files say, and its plan run's
    /// (`plan_run`).
    pub fn of_files(
        files: &FolderFiles,
        report_outcome: Option<&Outcome>,
        approval_pending: bool,
        plan_run: PlanRun,
    ) -> RunStatus {
        if let Some(o) = report_outcome {
            return RunStatus::Ended {
                outcome: Some(o.clone()),
            };
        }
        if approval_pending {
            return RunStatus::AwaitingApproval;
        }
        // A run that told people it ended (a local cleanup's folder holds only this).
        if files.ended_notice {
            return RunStatus::Ended { outcome: None };
        }
        if files.only_uploads() {
            match plan_run {
                PlanRun::Ended => return RunStatus::NeverStarted,
                // Its CLI may still be asking the user to confirm (docs/runs.md, "Pruning (cdkd-flow runs prune --older-than D)").
                PlanRun::ProcessAlive => return RunStatus::Running,
                PlanRun::Absent => {}
            }
        }
        RunStatus::Unknown {
            why: UnknownWhy::Undescribed,
        }
    }
}

/// An export's plan run (`<run-id>-plan`) as prune sees it beside the run's folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanRun {
    /// No folder of its own.
    Absent,
    /// A folder, and no process of it alive on this host.
    Ended,
    /// Its process (the export's CLI, by its `run.json`) is alive on this host.
    ProcessAlive,
}

/// Who holds the lock of an export's root stack, as the run `run_id` reads it
/// (docs/runs.md, "Pruning (cdkd-flow runs prune --older-than D)" step 2): a deployed resume (`resume-...`) writes into the folder of
/// the run it resumes and deletes that run's report and end markers, so the folder of a
/// run that ended may be running again; the resume holds the root's lock first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RootHolder {
    /// No lock, an expired one, or one no other cdkd-flow execution holds.
    Nobody,
    /// A fresh lock of the run itself (a deployed run, or a local one resumed with the
    /// same command, which keeps its run id).
    ThisRun,
    /// A fresh lock of another deployed execution (its name): it resumes this run when
    /// its input says so.
    Execution(RunId),
}

/// Reads the root stack's lock for the run `run_id` at `now_ms`. An expired lock is no
/// sign of life (its holder stopped renewing it).
pub fn root_holder(lock: Option<&LockInfo>, run_id: &str, now_ms: i64) -> RootHolder {
    let Some(lock) = lock.filter(|l| !is_expired(l, now_ms)) else {
        return RootHolder::Nobody;
    };
    if lock_owned_by_run(&lock.owner, run_id) {
        return RootHolder::ThisRun;
    }
    match parse_flow_owner(&lock.owner) {
        Some(FlowHolder::Deployed { run_id: other }) => RootHolder::Execution(other),
        _ => RootHolder::Nobody,
    }
}

/// The execution holding the root's lock, described.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HolderExecution {
    /// Its status, and the run folder it writes into (the run its input resumes, else
    /// its own name: the CLI's `run::run_folder`).
    Described {
        status: ExecutionStatus,
        writes_into: String,
    },
    /// No state machine had it, or the call failed.
    Undescribed,
}

/// Whether prune must read the root's lock to judge a folder: an export that took its
/// locks (`progress.json`: a resume needs one) and is not a plan, whose files or
/// execution say it ended or was interrupted.
pub fn needs_root_lock(folder: &RunFolder, facts: &RunFacts) -> bool {
    facts.kind == Some(RunKind::Export)
        && !facts.plan_only
        && folder.files.progress
        && matches!(
            facts.status,
            RunStatus::Ended { .. } | RunStatus::Interrupted { .. }
        )
}

/// The status of the run `run_id` once its root's lock is known: a fresh lock of its own,
/// or of a running execution resuming it, says it runs; a fresh lock of an execution
/// that cannot be described may be a resume of it, and leaves its state unknown.
pub fn with_root_lock(
    status: RunStatus,
    run_id: &str,
    holder: &RootHolder,
    execution: Option<&HolderExecution>,
) -> RunStatus {
    match (holder, execution) {
        (RootHolder::Nobody, _) => status,
        (RootHolder::ThisRun, _) => RunStatus::Running,
        (
            RootHolder::Execution(_),
            Some(HolderExecution::Described {
                status: s,
                writes_into,
            }),
        ) if writes_into == run_id => match RunStatus::of_execution(s, None) {
            RunStatus::Running => RunStatus::Running,
            _ => status,
        },
        (RootHolder::Execution(_), Some(HolderExecution::Described { .. })) => status,
        (RootHolder::Execution(name), _) => RunStatus::Unknown {
            why: UnknownWhy::HolderUndescribed {
                execution: name.clone(),
            },
        },
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
    /// An export the same command may still resume (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first").
    Resumable {
        why: ResumeWhy,
    },
    Unknown {
        why: UnknownWhy,
    },
    /// It holds a list of orphaned resources (`orphans/`, saved there by an earlier
    /// version): deleting it would lose the only record of resources still in AWS.
    Orphans,
}

/// Why an export may still be resumed, as data; the retention view words it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResumeWhy {
    /// It was interrupted.
    Interrupted(Interruption),
    /// Its report states this outcome (neither migrated nor rejected).
    Ended(Outcome),
    /// Its execution ended without a report.
    EndedWithoutReport,
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
fn resumable(folder: &RunFolder, facts: &RunFacts) -> Option<ResumeWhy> {
    if facts.kind != Some(RunKind::Export) || facts.plan_only || !folder.files.progress {
        return None;
    }
    match &facts.status {
        RunStatus::Interrupted { why } => Some(ResumeWhy::Interrupted(why.clone())),
        RunStatus::Ended { outcome } => match outcome {
            Some(Outcome::Migrated | Outcome::Rejected) => None,
            Some(o) => Some(ResumeWhy::Ended(o.clone())),
            None => Some(ResumeWhy::EndedWithoutReport),
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
    if folder.files.orphans {
        return Verdict::Keep(Keep::Orphans);
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

/// How many of a deleted folder's keys are still there: those S3 refused, one by one or
/// with their whole DeleteObjects request (docs/runs.md, "Pruning (cdkd-flow runs prune --older-than D)" step 4). A folder with any is
/// partly deleted, not deleted.
pub fn keys_left(folder: &RunFolder, not_deleted: &std::collections::BTreeSet<&str>) -> usize {
    folder
        .keys
        .iter()
        .filter(|k| not_deleted.contains(k.as_str()))
        .count()
}
