//! The execution's decisions (docs/export.md, "Workflow"): how a change set's and a stack's
//! status read, what the workflow does next, how long it waits and when it gives up,
//! which stack events explain a failure, and the run's record (`progress.json`) that the
//! failure report and `runs show` read. Why a run stops is data here, worded by
//! `core::view::export_run` into the failure the run records.

use serde::{Deserialize, Serialize};

use super::phases::Phase;
use super::refusal::ExportRefusal;
use crate::run::{RunId, RunKind};

/// Longest wait for a change set to be created (seconds).
pub const CHANGE_SET_CEILING_S: u64 = 600;
/// Longest wait for a stack operation (an import, an update) to finish (seconds).
pub const STACK_CEILING_S: u64 = 3600;
/// At most this many failed resources are named.
pub const MAX_FAILURE_LINES: usize = 5;

/// A change set, as `DescribeChangeSet` reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChangeSetState {
    /// Still being created.
    Pending,
    /// Created and available: execute it.
    Ready,
    /// Already executed or executing: wait for the stack.
    Executed,
    /// An UPDATE with nothing to change: the phase has no work.
    NoChanges,
    /// Failed: the reason.
    Failed(ChangeSetFailure),
}

/// Why a change set failed, as `DescribeChangeSet` read it (values raw; the view
/// flattens them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChangeSetFailure {
    /// Created, but its `ExecutionStatus` (`EXECUTE_FAILED`, `OBSOLETE`, `UNAVAILABLE`)
    /// says it cannot be executed.
    NotExecutable { execution: String },
    /// `FAILED`, with CloudFormation's `StatusReason` (`unknown` when it gave none).
    Reason(String),
    /// Deleted (`status`: one of the `DELETE_*` statuses).
    Deleted { status: String },
    /// A status this reader does not know.
    UnexpectedStatus { status: String },
}

/// Why a change set stops the run ([`after_change_set`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChangeSetStop {
    /// A change set of `phase` other than an UPDATE holds no changes.
    NoChanges { phase: Phase },
    /// The change set of `phase` failed.
    Failed {
        phase: Phase,
        cause: ChangeSetFailure,
    },
}

/// Reads a change set's `Status`, `ExecutionStatus` and `StatusReason`.
pub fn change_set_state(
    status: &str,
    execution: Option<&str>,
    reason: Option<&str>,
) -> ChangeSetState {
    match status {
        "CREATE_PENDING" | "CREATE_IN_PROGRESS" => ChangeSetState::Pending,
        "CREATE_COMPLETE" => match execution {
            Some("EXECUTE_IN_PROGRESS" | "EXECUTE_COMPLETE") => ChangeSetState::Executed,
            Some(e @ ("EXECUTE_FAILED" | "OBSOLETE" | "UNAVAILABLE")) => {
                ChangeSetState::Failed(ChangeSetFailure::NotExecutable {
                    execution: e.to_string(),
                })
            }
            _ => ChangeSetState::Ready,
        },
        "FAILED" => {
            let reason = reason.unwrap_or("unknown");
            if is_no_changes(reason) {
                ChangeSetState::NoChanges
            } else {
                ChangeSetState::Failed(ChangeSetFailure::Reason(reason.to_string()))
            }
        }
        "DELETE_COMPLETE" | "DELETE_PENDING" | "DELETE_IN_PROGRESS" | "DELETE_FAILED" => {
            ChangeSetState::Failed(ChangeSetFailure::Deleted {
                status: status.to_string(),
            })
        }
        other => ChangeSetState::Failed(ChangeSetFailure::UnexpectedStatus {
            status: other.to_string(),
        }),
    }
}

/// CloudFormation's reason for an UPDATE change set that changes nothing.
fn is_no_changes(reason: &str) -> bool {
    reason.contains("didn't contain changes") || reason.contains("No updates are to be performed")
}

/// A stack, as `DescribeStacks` reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StackState {
    Pending,
    /// The operation finished: IMPORT_COMPLETE, UPDATE_COMPLETE.
    Complete,
    /// It failed or rolled back: the status and reason.
    Failed(StackFailure),
}

/// A stack operation that failed or rolled back: its status, and CloudFormation's
/// `StackStatusReason` when it gave a non-empty one (raw; the view flattens it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StackFailure {
    pub status: String,
    pub reason: Option<String>,
}

/// Reads a stack's status after `phase` executed.
pub fn stack_state(status: &str, reason: Option<&str>) -> StackState {
    let failed = |s: &str| {
        StackState::Failed(StackFailure {
            status: s.to_string(),
            reason: reason.filter(|r| !r.is_empty()).map(str::to_string),
        })
    };
    match status {
        "IMPORT_COMPLETE" | "UPDATE_COMPLETE" | "CREATE_COMPLETE" => StackState::Complete,
        s if s.contains("ROLLBACK") || s.ends_with("_FAILED") || s.starts_with("DELETE") => {
            failed(s)
        }
        s if s.ends_with("_IN_PROGRESS") || s == "REVIEW_IN_PROGRESS" => StackState::Pending,
        s => failed(s),
    }
}

/// Whether CloudFormation is still working on a stack in `status` (an operation or its
/// rollback in progress): the abort tells the person to let it settle first.
pub fn still_running(status: &str) -> bool {
    status.ends_with("_IN_PROGRESS") && status != "REVIEW_IN_PROGRESS"
}

/// One `DescribeStackEvents` row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StackEvent {
    pub logical_id: Option<String>,
    pub resource_type: Option<String>,
    pub status: String,
    pub reason: Option<String>,
}

/// One failed resource of a stack's events (values raw; the view words it
/// `<LogicalId> (<Type>): <reason>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailedResource {
    pub logical_id: String,
    pub resource_type: Option<String>,
    /// The event's reason, when non-empty.
    pub reason: Option<String>,
}

/// The per-resource failures (events newest first): statuses ending in `FAILED` with a
/// logical id, the first per logical id, at most five.
pub fn failure_lines(events: &[StackEvent]) -> Vec<FailedResource> {
    let mut seen: Vec<&str> = Vec::new();
    let mut lines = Vec::new();
    for e in events {
        let Some(id) = e.logical_id.as_deref().filter(|id| !id.is_empty()) else {
            continue;
        };
        if !e.status.ends_with("FAILED") || seen.contains(&id) {
            continue;
        }
        seen.push(id);
        lines.push(FailedResource {
            logical_id: id.to_string(),
            resource_type: e.resource_type.clone(),
            reason: e.reason.clone().filter(|r| !r.is_empty()),
        });
        if lines.len() == MAX_FAILURE_LINES {
            break;
        }
    }
    lines
}

/// What the workflow does after a step (`next` in the carried state; the definition's
/// `Route` choice reads it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Next {
    /// Wait, then poll what is pending.
    Wait,
    /// Execute the change set that is ready.
    Execute,
    /// Phase 2: the pre-deletes and the UPDATE change set.
    Phase2,
    /// Delete the migrated records and release the locks.
    Cleanup,
    /// Phase 1 / 1A of the next stack.
    Import,
    /// The flip of a child.
    Flip,
    /// Phase 1B of a parent.
    Adopt,
}

/// What is being waited for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Pending {
    ChangeSet { phase: Phase, arn: String },
    Stack { phase: Phase },
}

impl Pending {
    pub fn phase(&self) -> Phase {
        match self {
            Pending::ChangeSet { phase, .. } | Pending::Stack { phase } => *phase,
        }
    }

    /// How long this wait may last in all.
    pub fn ceiling_s(&self) -> u64 {
        match self {
            Pending::ChangeSet { .. } => CHANGE_SET_CEILING_S,
            Pending::Stack { .. } => STACK_CEILING_S,
        }
    }

    /// The longest pause between two looks at this operation (docs/export.md, "Waiting (export-poll)"): a
    /// change set settles in seconds, a stack operation in seconds to minutes.
    pub fn cap_s(&self) -> u64 {
        match self {
            Pending::ChangeSet { .. } => CHANGE_SET_POLL_CAP_S,
            Pending::Stack { .. } => STACK_POLL_CAP_S,
        }
    }

    /// Seconds before the next look at this operation, which `polls` looks so far found
    /// still running (docs/export.md, "Waiting (export-poll)"): the first look is at once (CloudFormation
    /// answers a small change set, or an operation with nothing to do, within the Lambda
    /// call's own latency), then 1, 2, 4, ... seconds, doubling to the cap. `fast` (a
    /// local run's `--fast`) never waits longer than a second.
    pub fn delay_s(&self, polls: u32, fast: bool) -> u64 {
        if polls == 0 {
            return 0;
        }
        let doubled = 1u64 << (polls - 1).min(20);
        doubled.min(if fast { 1 } else { self.cap_s() })
    }
}

/// The longest pause between two looks at a change set being created (seconds).
pub const CHANGE_SET_POLL_CAP_S: u64 = 3;
/// The longest pause between two looks at a stack operation (seconds).
pub const STACK_POLL_CAP_S: u64 = 8;

/// One operation the run waits on (`inFlight` in the carried state): a stack's change
/// set being created or executed, or its stack operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InFlight {
    pub stack: String,
    pub pending: Pending,
    /// When the wait began (its ceiling counts from here).
    pub since_ms: i64,
    /// The change set was created: execute it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ready: bool,
    /// How many looks found it still running (the next pause grows with it).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub polls: u32,
}

/// At most this many stacks have an operation in flight at once (docs/export.md, "Nested stacks (export-flip, export-adopt)").
pub const MAX_IN_FLIGHT: usize = 8;

/// The next piece of work of one stack, the others aside: a child is imported, then gets
/// its phase 2 while it still stands alone, then is flipped when it is still in
/// IMPORT_COMPLETE; a parent is imported (1A), adopts its children (1B), then gets its
/// phase 2. `None` when the stack is migrated.
pub fn stack_work(sp: &super::plan::StackPlan, s: &StackProgress) -> Option<Next> {
    let is_child = sp.parent.is_some();
    let is_parent = !sp.nested.is_empty();
    if s.stage < StackStage::Imported {
        Some(Next::Import)
    } else if is_parent && !s.adopted {
        Some(Next::Adopt)
    } else if s.stage < StackStage::Migrated {
        Some(Next::Phase2)
    } else if is_child && !s.flipped {
        Some(Next::Flip)
    } else {
        None
    }
}

/// Whether `stack` has no work left: migrated (and flipped, for a child).
fn done(plan: &super::plan::Plan, run: &ExportRun, stack: &str) -> bool {
    let Some(sp) = plan.stacks.iter().find(|s| s.stack == stack) else {
        return true;
    };
    run.stacks
        .iter()
        .find(|s| s.stack == stack)
        .is_none_or(|s| stack_work(sp, s).is_none())
}

/// The next action of a run, and the stack it is for (docs/export.md, "Nested stacks (export-flip, export-adopt)"). A created
/// change set is executed first; then any stack that is not in flight starts its next
/// piece of work, in the plan's order (leaf first), a parent only once each of its
/// children is done, while fewer than `bound` stacks are in flight: the children of one
/// parent run side by side. Otherwise the run waits when something is in flight, and
/// cleans up when every stack is done. `Err` when nothing can go on (a plan whose
/// parent lists a child the run does not hold).
pub fn next_action(
    plan: &super::plan::Plan,
    run: &ExportRun,
    in_flight: &[InFlight],
    bound: usize,
) -> Result<(Next, Option<String>), NoWorkCanStart> {
    if let Some(f) = in_flight.iter().find(|f| f.ready) {
        return Ok((Next::Execute, Some(f.stack.clone())));
    }
    if in_flight.len() < bound {
        for sp in &plan.stacks {
            if in_flight.iter().any(|f| f.stack == sp.stack) {
                continue;
            }
            let Some(s) = run.stacks.iter().find(|s| s.stack == sp.stack) else {
                continue;
            };
            let Some(work) = stack_work(sp, s) else {
                continue;
            };
            if sp.nested.iter().all(|n| done(plan, run, &n.child_stack)) {
                return Ok((work, Some(sp.stack.clone())));
            }
        }
    }
    if !in_flight.is_empty() {
        return Ok((Next::Wait, None));
    }
    match plan.stacks.iter().find(|sp| !done(plan, run, &sp.stack)) {
        None => Ok((Next::Cleanup, None)),
        Some(sp) => Err(NoWorkCanStart {
            run_id: run.run_id.clone(),
            stack: sp.stack.clone(),
        }),
    }
}

/// A run in which no work can start for `stack` and nothing is in flight
/// ([`next_action`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoWorkCanStart {
    pub run_id: RunId,
    pub stack: String,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Seconds until the next poll: the shortest pause of what is in flight
/// ([`Pending::delay_s`]).
pub fn wait_seconds(in_flight: &[InFlight], fast: bool) -> u64 {
    in_flight
        .iter()
        .map(|f| f.pending.delay_s(f.polls, fast))
        .min()
        .unwrap_or(0)
}

/// The decision after a poll of a change set: `Some(next)` (wait, execute), `None` when
/// the phase is done without running anything (an UPDATE with nothing to change), or
/// why the run stops.
pub fn after_change_set(
    phase: Phase,
    state: &ChangeSetState,
) -> Result<Option<Next>, ChangeSetStop> {
    match state {
        ChangeSetState::Pending | ChangeSetState::Executed => Ok(Some(Next::Wait)),
        ChangeSetState::Ready => Ok(Some(Next::Execute)),
        ChangeSetState::NoChanges if phase == Phase::Update => Ok(None),
        ChangeSetState::NoChanges => Err(ChangeSetStop::NoChanges { phase }),
        ChangeSetState::Failed(cause) => Err(ChangeSetStop::Failed {
            phase,
            cause: cause.clone(),
        }),
    }
}

/// Records in the run that `phase` of `stack` finished with the stack in `status`.
pub fn phase_done(run: &mut ExportRun, stack: &str, phase: Phase, status: &str) {
    let Some(s) = run.stack_mut(stack) else {
        return;
    };
    match phase {
        Phase::Import => s.stage = s.stage.max(StackStage::Imported),
        Phase::Adopt => s.adopted = true,
        Phase::Update => {
            s.stage = StackStage::Migrated;
            // Adoption takes any *_COMPLETE status but IMPORT_COMPLETE.
            s.flipped |= status != "IMPORT_COMPLETE";
        }
        Phase::Flip => s.flipped = true,
    }
}

/// A wait that ran past its ceiling ([`timed_out`]): what was waited for, and how long.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GaveUp {
    pub pending: Pending,
    pub waited_s: u64,
}

/// Whether a wait that began at `since_ms` has run past its ceiling at `now_ms`.
pub fn timed_out(pending: &Pending, since_ms: i64, now_ms: i64) -> Option<GaveUp> {
    let waited_s = (now_ms - since_ms).max(0) as u64 / 1000;
    (waited_s > pending.ceiling_s()).then(|| GaveUp {
        pending: pending.clone(),
        waited_s,
    })
}

/// Where one stack of the run stands (`progress.json`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StackStage {
    #[default]
    Planned,
    Locked,
    Importing,
    Imported,
    PreDeleted,
    Updating,
    /// Every change set done: CloudFormation holds the stack.
    Migrated,
    /// The record is deleted and the lock released.
    Cleaned,
}

/// A phase-2 pre-delete in flight: the row, its deleter's handle, when it started.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreDeleting {
    pub logical_id: String,
    pub handle: crate::destroy::handle::Handle,
    pub started_ms: i64,
}

/// How long one pre-delete may run, across invocations, before the run stops
/// (docs/export.md, "Phases (export-import, export-execute, export-phase2)", "Pre-deletes").
pub const PRE_DELETE_CEILING_MS: i64 = 60_000;

/// Whether a pre-delete started at `started_ms` is still within
/// [`PRE_DELETE_CEILING_MS`] at `now_ms`.
pub fn pre_delete_in_time(started_ms: i64, now_ms: i64) -> bool {
    now_ms.saturating_sub(started_ms) <= PRE_DELETE_CEILING_MS
}

/// The run's record of one stack.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StackProgress {
    pub stack: String,
    pub region: String,
    pub cfn_stack_name: String,
    /// The parent's cdkd name, for a nested child.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    pub stage: StackStage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub import_change_set: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_change_set: Option<String>,
    /// Pre-deleted logical ids (phase 2's recreated rows).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pre_deleted: Vec<String>,
    /// Pre-deletes started and not finished when an invocation of phase 2 ran out of
    /// time: the next one polls them instead of starting them again (docs/export.md
    /// "Phases (export-import, export-execute, export-phase2)", "Pre-deletes").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pre_deleting: Vec<PreDeleting>,
    /// Transient template uploads still to delete.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uploads: Vec<String>,
    pub imported_resources: usize,
    pub phase2_resources: usize,
    /// The child was flipped to UPDATE_COMPLETE (or its phase 2 already left it there).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flipped: bool,
    /// The parent adopted its children (phase 1B).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub adopted: bool,
    /// The rows phase 1B wrote for the children (phase 2 splices them in again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adopt_rows: Vec<super::phases::AdoptRow>,
    /// The run deleted the empty destination stack it had created, after its import
    /// failed (docs/export.md, "Failure (export-abort)"): CloudFormation holds nothing of it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub withdrawn: bool,
    /// Record keys deleted by the cleanup.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deleted_keys: Vec<String>,
}

/// The run's record (`<prefix>/_runs/<run-id>/progress.json`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportRun {
    pub run_id: RunId,
    /// `export`.
    pub kind: RunKind,
    pub started_ms: i64,
    pub stacks: Vec<StackProgress>,
    /// The steps that ran, in order (`import`, `execute`, …), with what they did.
    #[serde(default)]
    pub log: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// The execution the run continues in (its latest), once it has continued
    /// (docs/runs.md, "Continuing in a new execution").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continued_as: Option<String>,
}

impl ExportRun {
    pub fn stack_mut(&mut self, stack: &str) -> Option<&mut StackProgress> {
        self.stacks.iter_mut().find(|s| s.stack == stack)
    }

    /// The stage of its least advanced stack (`None` before it has any): where the run
    /// as a whole stands.
    pub fn least_stage(&self) -> Option<StackStage> {
        self.stacks.iter().map(|s| s.stage).min()
    }

    /// Whether the cleanup deleted every record and saved the run's end (docs/export.md
    /// "Cleanup (export-cleanup)"): all that can be left is releasing the locks and writing the report.
    pub fn cleanup_saved_end(&self) -> bool {
        self.finished_ms.is_some()
            && !self.stacks.is_empty()
            && self.stacks.iter().all(|s| s.stage == StackStage::Cleaned)
    }
}

/// Why a plan cannot be executed, before any lock (docs/export.md, "The lock (export-lock)"): a child with
/// children of its own (CloudFormation imports one level of nesting only), or nothing to
/// import anywhere.
pub fn execution_refusal(stack: &str, plan: &super::plan::Plan) -> Option<ExportRefusal> {
    if let Some(deep) = plan
        .stacks
        .iter()
        .find(|s| s.parent.is_some() && !s.nested.is_empty())
    {
        return Some(ExportRefusal::NestedTooDeep {
            stack: stack.to_string(),
            nested: deep.stack.clone(),
        });
    }
    plan.stacks
        .iter()
        .all(|s| s.import.is_empty())
        .then(|| ExportRefusal::NothingToImport {
            stack: stack.to_string(),
        })
}

/// How the record read under the lock (`current`, with the ETag it was read at; `None`:
/// it is gone) differs from the record the plan was made from (docs/export.md, "The lock (export-lock)"):
/// every row, by logical id, and every other field but `lastModified`
/// ([`super::records::PlannedRecord::changes`]). A plan written before it kept its
/// record compares the import rows' physical ids only. Empty: the record planned.
pub fn record_changes(
    plan: &super::plan::StackPlan,
    current: Option<(&crate::state::StateRecord, &str)>,
) -> super::records::RecordChanges {
    use super::records::{RecordChanges, Row};
    let Some((record, etag)) = current else {
        return RecordChanges {
            gone: true,
            ..Default::default()
        };
    };
    if let Some(planned) = &plan.record {
        return planned.changes(record, Some(etag));
    }
    let mut changes = RecordChanges::default();
    for r in &plan.import {
        match Row::get(record, &r.logical_id).and_then(|row| row.physical_id()) {
            None => changes.removed.push(r.logical_id.clone()),
            Some(id) if id != r.physical_id => changes.changed.push(r.logical_id.clone()),
            Some(_) => {}
        }
    }
    changes
}

/// The lock's refusal of a record that is not the one planned ([`record_changes`]): the
/// export, the stack, what changed by logical id, and the way on (plan again).
pub fn record_changed_refusal(
    export_stack: &str,
    plan: &super::plan::StackPlan,
    changes: &super::records::RecordChanges,
) -> ExportRefusal {
    ExportRefusal::RecordChanged {
        export: export_stack.to_string(),
        stack: plan.stack.clone(),
        changes: changes.clone(),
    }
}
