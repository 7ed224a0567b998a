//! The destroy workflow's steps (`statemachines/destroy.asl.json`):
//! `destroy-plan` -> `destroy-wave` (looped through a `Wait` state) -> `destroy-finish`,
//! with `destroy-abort` on every failure path.
//!
//! A run destroys one stack and its nested children, children first, one stack after
//! the other. `progress.json` under the run prefix holds what each stack's waves have
//! settled; with the stack's `state.json` (the records still to delete) it is enough to
//! recompute the next wave after a crash or a retry.

pub mod abort;
pub mod finish;
pub mod load;
pub mod plan;
pub mod record;
pub mod wave;

use std::collections::BTreeMap;

use cdkd_aws::HeldLock;
use cdkd_core::destroy::model::{PlannedRow, RowOutcome, RunResult};
use cdkd_core::run::RunId;
use cdkd_deleters::request::DeleteOptions;
use cdkd_deleters::Handle;
use serde::{Deserialize, Serialize};

/// The execution's input.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DestroyInput {
    pub stack: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_region: Option<String>,
    pub state_bucket: String,
    #[serde(default = "crate::deps::default_prefix")]
    pub state_prefix: String,
    /// Destroy a nested child on its own (cdkd's `state destroy` escape hatch).
    #[serde(default)]
    pub allow_nested_child: bool,
    /// Ignore `DeletionPolicy: Snapshot` (data loss, explicit).
    #[serde(default)]
    pub skip_final_snapshot: bool,
    /// Turn per-resource deletion protection off before deleting (explicit opt-in).
    #[serde(default)]
    pub remove_protection: bool,
}

/// Identifies a run and where its artifacts live.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRef {
    pub run_id: RunId,
    pub bucket: String,
    pub prefix: String,
    /// The stack the run was started for (its nested children come along).
    pub stack: String,
    pub region: String,
}

/// What `destroy-plan` and `destroy-wave` return, and what the next step takes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Carry {
    pub run: RunRef,
    /// The locks still held (a child's lock is released as soon as it is destroyed).
    pub locks: Vec<HeldLock>,
    /// Records not settled yet, over every stack of the run.
    pub remaining: u32,
    /// Every stack of the run is settled: go to `destroy-finish`.
    pub settled: bool,
    /// Seconds the `Wait` state sleeps before the next wave.
    pub wait_seconds: u64,
    /// Waves this execution has run (docs/runs.md, "Continuing in a new execution").
    #[serde(default)]
    pub loops: u32,
    /// The run goes on in a new execution before this one's history fills up.
    #[serde(default)]
    pub continue_as_new: bool,
}

/// `progress.json`: the run record.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DestroyRun {
    pub run_id: RunId,
    pub started_ms: i64,
    pub skip_final_snapshot: bool,
    /// `removeProtection`: deleters turn deletion protection off before deleting.
    /// Absent in run records written before it existed: off.
    #[serde(default)]
    pub remove_protection: bool,
    /// Children before parents (depth-first post-order); the root stack is last.
    pub stacks: Vec<StackRun>,
    pub waves: u32,
    /// Set by `runs stop`: start nothing new, finish with what is settled.
    #[serde(default)]
    pub stop_requested: bool,
    /// The execution the run continues in (its latest), once it has continued
    /// (docs/runs.md, "Continuing in a new execution").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continued_as: Option<String>,
}

/// One stack of a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StackRun {
    pub stack: String,
    pub region: String,
    /// The records at plan time, in record order (the report's rows).
    pub planned: Vec<Planned>,
    #[serde(default)]
    pub outcomes: BTreeMap<String, RowOutcome>,
    #[serde(default)]
    pub in_flight: BTreeMap<String, Flight>,
    /// Retryable failures so far, and when the record may be tried again.
    #[serde(default)]
    pub retries: BTreeMap<String, Retry>,
    /// Write-ahead marks: records whose delete call is about to be or was sent with this
    /// attempt, saved before the call. A mark without a handle in `in_flight` means the
    /// answer was lost (a crash): the call is sent again with the same attempt (the
    /// same Cloud Control ClientToken, so it resumes the first request), even after a
    /// stop request; a report lists any mark still unsettled as "may still be deleting".
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub dispatched: BTreeMap<String, u32>,
    /// What a deleter said the user must know of a deleted record (the report row's
    /// note), by logical id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub notes: BTreeMap<String, String>,
    /// Set once the stack is settled: its state deleted (clean) or kept (partial).
    #[serde(default)]
    pub finished: Option<RunResult>,
    /// `orphans` entries of the record, copied here before a clean delete of the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orphans_key: Option<String>,
    /// Set when the run found the stack's lock gone or another's as it released it, right
    /// after deleting the record (stored as its words: `cdkd_core::destroy::next_step`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_note: Option<cdkd_core::destroy::next_step::LockGone>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Planned {
    pub logical_id: String,
    pub resource_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_id: Option<String>,
}

impl From<&Planned> for PlannedRow {
    fn from(p: &Planned) -> Self {
        PlannedRow {
            logical_id: p.logical_id.clone(),
            resource_type: p.resource_type.clone(),
            physical_id: p.physical_id.clone(),
        }
    }
}

/// A delete in flight, resumable by a later wave invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Flight {
    pub handle: Handle,
    pub expected_done_ms: u64,
    pub attempt: u32,
    /// The options the delete was started with (final snapshot, protection), so every
    /// poll sends the same request. Absent in records written before it existed.
    #[serde(default)]
    pub options: DeleteOptions,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Retry {
    pub attempts: u32,
    pub not_before_ms: u64,
    pub last_error: String,
}

impl StackRun {
    /// Records whose delete was sent (or may have been) and is not settled: in flight
    /// with a handle, or marked dispatched with the answer lost. If the run ends now,
    /// these may still be deleting in AWS.
    pub fn unconfirmed(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .in_flight
            .keys()
            .chain(self.dispatched.keys())
            .filter(|id| !self.outcomes.contains_key(*id))
            .cloned()
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }
}

impl DestroyRun {
    pub fn remaining(&self) -> u32 {
        self.stacks
            .iter()
            .filter(|s| s.finished.is_none())
            .map(|s| {
                s.planned
                    .iter()
                    .filter(|p| !s.outcomes.contains_key(&p.logical_id))
                    .count() as u32
            })
            .sum()
    }

    pub fn settled(&self) -> bool {
        self.stacks.iter().all(|s| s.finished.is_some())
    }
}
