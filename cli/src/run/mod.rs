//! The CLI's run plumbing, in one place: run ids ([`ids`]), where a run keeps its
//! artifacts (`<prefix>/_runs/<run-id>/`, [`RunPlace`], [`run_store`]), reading and
//! printing them ([`artifacts`]), following a run while it goes ([`watch`] for destroy
//! bars, [`follow`] for an export's steps), and local runs: `run.json`, Ctrl-C, the
//! report every end leaves ([`local`]), and whether a run is running or interrupted
//! ([`listing`], docs/cli.md `runs --local`). The commands (`cmd/*.rs`, `remote.rs`)
//! call it; the texts are `cdkd_core::view`'s, the decisions `cdkd_core::runs`'.

pub mod artifacts;
pub mod folders;
pub mod follow;
pub mod ids;
pub mod listing;
pub mod local;
pub mod watch;

use cdkd_aws::{SdkConfig, StateStore};
use cdkd_core::run::RunId;
use serde_json::Value;

/// Where a run keeps its artifacts, from its input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunPlace {
    pub bucket: String,
    pub prefix: String,
}

impl RunPlace {
    pub fn of_input(input: &Value) -> Option<RunPlace> {
        let bucket = input.get("stateBucket")?.as_str()?.to_string();
        let prefix = input
            .get("statePrefix")
            .and_then(Value::as_str)
            .unwrap_or(cdkd_core::keys::DEFAULT_PREFIX)
            .to_string();
        Some(RunPlace { bucket, prefix })
    }
}

/// The run folder (`_runs/<id>/`) an execution named `name` writes into: the resumed
/// run's for an export resume (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first"), else its own.
pub fn run_folder(name: &str, input: &Value) -> RunId {
    input
        .get("resume")
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty())
        // An execution a run continued in (docs/runs.md, "Continuing in a new execution").
        .or_else(|| {
            input
                .pointer("/continuation/run/runId")
                .and_then(Value::as_str)
                .filter(|r| !r.is_empty())
        })
        .unwrap_or(name)
        .into()
}

/// The store of a run's artifacts (the bucket named by its input).
pub async fn run_store(sdk: &SdkConfig, place: &RunPlace) -> StateStore {
    let client = cdkd_aws::bucket::state_bucket_client(sdk, &place.bucket, None).await;
    StateStore::new(client, place.bucket.clone(), place.prefix.clone(), None)
}

/// A cleanup's summary with its lists read back from its run folder
/// (`cdkd_functions::cleanup::with_lists`; docs/runs.md, "A cleanup's lists"); the
/// summary alone, with a warning on stderr, when they cannot be read.
pub async fn cleanup_with_lists(store: &StateStore, run_id: &RunId, summary: &Value) -> Value {
    match cdkd_functions::cleanup::with_lists(store, run_id, summary).await {
        Ok(full) => full,
        Err(e) => {
            let note = cdkd_core::runs_note::RunsNote::ListsUnreadable {
                bucket: &store.bucket,
                run_folder: &cdkd_core::keys::run_prefix(&store.prefix, run_id),
                error: &e.message,
            };
            eprintln!("{note}");
            summary.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_command_same_run_a_deployed_resume_is_watched_in_the_resumed_runs_folder() {
        let resume = serde_json::json!({"stack": "Orders", "resume": "export-Orders-1"});
        assert_eq!(run_folder("resume-Orders-2", &resume), "export-Orders-1");
        let plain = serde_json::json!({"stack": "Orders"});
        assert_eq!(run_folder("export-Orders-1", &plain), "export-Orders-1");
    }
}
