//! What the `runs` commands, the approval gate's I/O, a run's artifacts and a run's end
//! refuse, as data (docs/runs.md, docs/cli.md "runs"): the deciding code in the CLI
//! builds one of these, and only `core::view::command` words it.

use crate::run::{ExecutionStatus, RunId, RunKind};

/// A refusal of a `runs` command (`show`, `watch`, `stop`, `approve`, `reject`, `list`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunsRefusal {
    /// No execution of that name under any of the state machines asked (their ARNs).
    NoRunNamed { run: String, under: Vec<String> },
    /// No deployed backend answered (`backend`: why), and the local runs could not be
    /// read either (`local`: why).
    NoBackendNorLocal { backend: String, local: String },
    /// No deployed backend answered (`backend`: why), and the state bucket could not be
    /// read either (`error`: why).
    NoBackendNorBucket { backend: String, error: String },
    /// No deployed backend to ask and no folder of that run in the state bucket.
    NoRunInFolder {
        run: RunId,
        bucket: String,
        prefix: String,
        backend: String,
    },
    /// No `run.json` of that run in the state bucket.
    NoLocalRun {
        run: RunId,
        bucket: String,
        prefix: String,
    },
    /// The execution's input names no state bucket.
    NoStateBucket { run: RunId },
    /// A stop request could not be written (`error`: why).
    StopFailed { run: RunId, error: String },
    /// A destroy run without `progress.json` yet: still planning.
    NoProgressYet { run: RunId },
    /// `progress.json` kept changing under five conditional writes.
    ProgressKeptChanging,
    /// `progress.json` does not parse as JSON.
    ProgressNotJson { error: String },
    /// `progress.json` is JSON but not an object.
    ProgressNotObject,
    /// `progress.json` with the stop request could not be serialized.
    ProgressUnwritable { error: String },
    /// `runs approve|reject` of a run that is not an export.
    NotExport { run: RunId },
    /// `runs approve|reject` (`verb`) of an execution that has ended.
    AlreadyEnded {
        run: RunId,
        status: ExecutionStatus,
        error: Option<String>,
        cause: Option<String>,
        verb: String,
    },
    /// The decision written carries no decision.
    NoDecision { run: RunId },
}

/// A refusal of the approval gate's I/O (docs/export.md, "Approval (export-approval)").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalRefusal {
    /// `approval.json` does not read as an approval request.
    NotARequest {
        run: RunId,
        bucket: String,
        key: String,
        error: String,
    },
    /// The run has no `approval.json`; `why` says what that means for it.
    NoRequest {
        run: RunId,
        bucket: String,
        key: String,
        why: NoRequestWhy,
    },
    /// The decided record could not be serialized.
    Unserializable { key: String, error: String },
    /// `approval.json` kept changing under five conditional writes.
    KeptChanging {
        run: RunId,
        bucket: String,
        key: String,
    },
}

/// Why a run has no approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoRequestWhy {
    /// `--local`: no local export by that id waits in this state bucket.
    NoLocalExport,
    /// A deployed export started with `--require-approval`: still planning.
    StillPlanning,
    /// A deployed export started without `--require-approval`.
    NotRequested,
}

/// A run's artifact (`run.json`, `report.json`, `plan.json`, ...) that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArtifactRefusal {
    /// The object `s3://bucket/key` does not read as the artifact `what` ("report",
    /// "plan", "run file", "progress").
    Unreadable {
        what: String,
        bucket: String,
        key: String,
        error: String,
    },
    /// The artifact cache could not read it (its message).
    Cache { message: String },
}

/// How a run ended when that end is the CLI's error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEndRefusal {
    /// A local run stopped on Ctrl-C; `resume` is the command that resumes it.
    Interrupted {
        run: RunId,
        kind: RunKind,
        resume: Option<String>,
    },
    /// The local run's engine stopped (`error`: its error).
    Stopped { error: String },
    /// A cleanup failed before any summary (`error`, `cause`: the execution's).
    CleanupFailed { error: String, cause: String },
}
