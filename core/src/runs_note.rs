//! What the `runs` commands tell as they go (docs/cli.md, "runs"), as data: what could
//! not be read, a stop requested, a decision recorded, and where a listing comes from
//! without the deployed backend. Worded by `core::view::command`.

use crate::export::approval::Approval;
use crate::run::{RunId, RunKind};
use crate::runs::Unseen;

/// One line of the `runs` commands on stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunsNote<'a> {
    /// `runs list` could not read the deployed runs' folders.
    FoldersUnread { error: &'a str },
    /// `runs list` without a deployed backend lists the bucket's folders.
    ListingWithoutBackend { backend: &'a str },
    /// `runs list` could not list the local runs.
    LocalNotListed { error: &'a str },
    /// `runs stop` of a run that has ended (`status`: its execution's).
    AlreadyEnded { run: &'a str, status: &'a str },
    /// `runs stop --now` stopped the execution.
    StoppedNow { run: &'a str },
    /// `runs stop`: a stop was requested before.
    StopAlreadyRequested { run: &'a str },
    /// `runs stop`: the stop is requested.
    StopRequested { run: &'a str },
    /// `runs approve|reject --local`: the decision is recorded; the export process
    /// waiting on it (`unseen` when it cannot be seen from here) carries on.
    LocalDecided {
        decided: &'a Approval,
        unseen: Option<&'a Unseen>,
    },
    /// `runs approve|reject` of a deployed run: the run was told.
    Decided { run: &'a str, decided: &'a Approval },
    /// `runs approve|reject` of a deployed run: recorded, but the run was not told.
    NotTold {
        run: &'a str,
        decided: &'a Approval,
        error: &'a str,
    },
    /// `runs prune` lists a large prefix.
    Listed { objects: usize },
    /// `runs prune` deletes many objects.
    Deleted { done: usize, total: usize },
    /// `runs prune` found no deployed state machine.
    NoStateMachine { backend_stack: &'a str },
    /// `runs show|watch` without a deployed backend shows the run's folder.
    ShowingFolder { backend: &'a str, run: &'a RunId },
    /// `runs watch` without a deployed backend, of a run with no report yet.
    NoReportYet { run: &'a RunId },
    /// A run started on the deployed backend (or found started: `reattached`).
    Started {
        kind: RunKind,
        run: &'a str,
        reattached: bool,
        execution_arn: &'a str,
    },
    /// `--detach`: how to follow the run started.
    WatchWith { run: &'a str },
    /// Ctrl-C on a local destroy: a graceful stop is requested.
    CtrlCStop { run: &'a RunId },
    /// Following a run: the connection was lost (`error`); `what` is retried.
    ConnectionLost { error: &'a str, what: &'a str },
    /// Following a run: it continues in a new execution.
    ContinuesIn { execution: &'a str },
    /// A cleanup's lists in the run's folder cannot be read; its summary is shown alone.
    ListsUnreadable {
        bucket: &'a str,
        run_folder: &'a str,
        error: &'a str,
    },
}
