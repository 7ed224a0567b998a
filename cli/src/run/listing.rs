//! Local runs read back (docs/cli.md, `runs --local`): a run's row from its `run.json`,
//! its report and its lock, telling a running run from an interrupted one
//! (`cdkd_core::runs::local_state`); the listing behind `runs list --local`, and a run
//! followed until it settles.

use std::time::Duration;

use cdkd_aws::StateStore;
use cdkd_core::run::{Outcome as RunOutcome, RunId, RunKind};
use cdkd_core::runs::{
    listed_run_file, local_state, lock_owned_by_run, newest_known, planned_run, Evidence,
    LocalPhase, LocalRun, LocalState, RunLock,
};
use cdkd_core::runs_refusal::{ArtifactRefusal, RunsRefusal};
use cdkd_core::view::runs::LocalRunRow;
use cdkd_functions::destroy::finish::RunReport;
use cdkd_functions::destroy::DestroyRun;
use cdkd_functions::runs::{progress_key, report_key};
use serde_json::Value;

use super::artifacts::{read_json, read_local_run};
use crate::error::CliError;

async fn read_destroy_progress(store: &StateStore, run_id: &str) -> Option<DestroyRun> {
    read_json(store, &progress_key(&store.prefix, run_id), "progress")
        .await
        .ok()
        .flatten()
}

/// Where a run stands, from its progress: `planning` before it has any, then the
/// export's least advanced stack or the destroy's wave.
pub async fn phase_of(store: &StateStore, run: &LocalRun) -> LocalPhase {
    if run.kind == RunKind::Export {
        if let Some(p) = crate::run::artifacts::read_export_progress(store, &run.run_id).await {
            return LocalPhase::of_export(&p);
        }
        // Before its lock an export may wait for approval (docs/export.md, "Approval (export-approval)").
        match crate::approval::read(store, &run.run_id).await {
            Ok(Some((a, _))) if a.decision.is_none() => LocalPhase::WaitingForApproval,
            _ => LocalPhase::Planning,
        }
    } else {
        match read_destroy_progress(store, &run.run_id).await {
            Some(p) => super::watch::run_progress(&p).local_phase(),
            None => LocalPhase::Planning,
        }
    }
}

/// The outcome a run's report states: an export's `outcome`; a destroy's `destroyed`,
/// `stopped` (a graceful stop), `aborted` or `partial`.
pub async fn report_outcome(
    store: &StateStore,
    run: &LocalRun,
) -> Result<Option<RunOutcome>, CliError> {
    let key = report_key(&store.prefix, &run.run_id);
    let r: Option<Value> = read_json(store, &key, "report").await?;
    r.map(|r| outcome_of_report(store, &run.run_id, RunKind::of_name(run.kind.as_str()), r))
        .transpose()
}

/// The outcome the report of the run `run_id` of `kind` states (`report_outcome`): an
/// export's `outcome`; a destroy's (or a run of no known kind's) in one word. Refused,
/// naming the object, when a destroy's does not read.
pub fn outcome_of_report(
    store: &StateStore,
    run_id: &str,
    kind: Option<RunKind>,
    report: Value,
) -> Result<RunOutcome, CliError> {
    if kind == Some(RunKind::Export) {
        return Ok(report
            .get("outcome")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .into());
    }
    let r: RunReport = serde_json::from_value(report).map_err(|e| {
        CliError::refused(&ArtifactRefusal::Unreadable {
            what: "report".into(),
            bucket: store.bucket.clone(),
            key: report_key(&store.prefix, run_id),
            error: e.to_string(),
        })
    })?;
    Ok(destroy_outcome(&r))
}

/// A destroy report's outcome in one word (`cdkd_core::destroy::model::destroy_end`).
pub fn destroy_outcome(r: &RunReport) -> RunOutcome {
    use cdkd_core::destroy::model::{destroy_end, RunResult};
    let interrupted = r.stacks.iter().any(|s| s.result == RunResult::Interrupted);
    destroy_end(r.complete, r.refused, r.aborted.is_some(), interrupted).outcome()
}

/// What the lock of the run's stack says about it (read only for a run not ended).
async fn run_lock(store: &StateStore, run: &LocalRun) -> RunLock {
    let region = run.stack_region.clone().or(match run.kind {
        RunKind::Export => crate::run::artifacts::read_export_progress(store, &run.run_id)
            .await
            .and_then(|p| p.stacks.last().map(|s| s.region.clone())),
        _ => read_destroy_progress(store, &run.run_id)
            .await
            .and_then(|p| p.stacks.last().map(|s| s.region.clone())),
    });
    match store.get_lock(&run.stack, region.as_deref()).await {
        Ok(Some((info, _))) if lock_owned_by_run(&info.owner, &run.run_id) => RunLock::Held {
            // On S3's clock (docs/state-and-lock.md, "Lock time is S3's"). An expiry that does not read
            // counts as expired, as for any lock (cdkd_core::lock::is_expired).
            expires_ms: info.expiry_ms().map_or(0, |e| e as i64),
        },
        _ => RunLock::NotHeld,
    }
}

/// Whether the process of local run `run_id` (its `run.json`) is alive on this host.
/// An export's CLI process is its plan run's: alive, it may still be asking the user to
/// confirm before it starts the run its templates were uploaded for (docs/runs.md, "Pruning (cdkd-flow runs prune --older-than D)").
pub async fn process_of_run_alive(store: &StateStore, run_id: &str) -> bool {
    match read_local_run(store, run_id).await {
        Ok(Some(run)) => {
            run.host == crate::host::host_name() && crate::host::process_alive(run.pid)
        }
        _ => false,
    }
}

/// A local run as the views show it; `None` when it has no `run.json`.
pub async fn local_row(store: &StateStore, run_id: &str) -> Result<Option<LocalRunRow>, CliError> {
    let Some(run) = read_local_run(store, run_id).await? else {
        return Ok(None);
    };
    Ok(Some(row_of(store, run).await?))
}

async fn row_of(store: &StateStore, mut run: LocalRun) -> Result<LocalRunRow, CliError> {
    if run.plan_only && run.outcome.is_none() {
        if let Some(real) = cdkd_core::runs::planned_run(&run.run_id) {
            let real = crate::run::artifacts::read_local_run(store, real)
                .await
                .ok()
                .flatten();
            cdkd_core::runs::ended_by_its_run(&mut run, real.as_ref());
        }
    }
    let outcome = report_outcome(store, &run).await?;
    let host = crate::host::host_name();
    let same_host = run.host == host;
    let ended = outcome.is_some() || run.outcome.is_some();
    let lock = if ended {
        RunLock::NotHeld
    } else {
        run_lock(store, &run).await
    };
    let state = local_state(
        &run,
        &Evidence {
            report_outcome: outcome.as_ref(),
            host: &host,
            alive: same_host.then(|| crate::host::process_alive(run.pid)),
            lock,
            now_ms: store.s3_now_ms(),
        },
    );
    let phase = match (&state, outcome.as_ref()) {
        (LocalState::Ended { .. }, _) if run.plan_only => LocalPhase::Plan,
        _ => phase_of(store, &run).await,
    };
    Ok(LocalRunRow { run, phase, state })
}

/// How many `run.json` files (and rows) are read at once.
const READ_AT_ONCE: usize = 16;

/// Every local run in the store, newest first, at most `limit`. The plan run of an
/// export (`<run-id>-plan`) is left out when the run it planned for is listed. Only the
/// run prefix is listed (`<prefix>/_runs/`), and `run.json` files are read newest write
/// first until the `limit` newest runs are known (`cdkd_core::runs::newest_known`).
pub async fn list_local(store: &StateStore, limit: usize) -> Result<Vec<LocalRunRow>, CliError> {
    let objects = store.list_run_objects(|_| {}).await?;
    let mut files: Vec<(String, i64)> = objects
        .iter()
        .filter_map(|o| {
            listed_run_file(&store.prefix, &o.key).map(|id| (id.to_string(), o.last_modified_ms))
        })
        .collect();
    let ids: std::collections::HashSet<String> = files.iter().map(|(id, _)| id.clone()).collect();
    files.retain(|(id, _)| !planned_run(id).is_some_and(|p| ids.contains(p)));
    files.sort_by_key(|(_, at)| std::cmp::Reverse(*at));
    let mut runs: Vec<LocalRun> = Vec::new();
    let mut next = 0;
    while next < files.len() {
        let started: Vec<i64> = runs.iter().map(|r| r.started_ms).collect();
        if newest_known(limit, &started, files.get(next).map(|(_, at)| *at)) {
            break;
        }
        let chunk = &files[next..(next + READ_AT_ONCE).min(files.len())];
        let read =
            futures::future::join_all(chunk.iter().map(|(id, _)| read_local_run(store, id))).await;
        for r in read {
            match r {
                Ok(Some(r)) => runs.push(r),
                Ok(None) => {}
                Err(e) => eprintln!("warning: {e}"),
            }
        }
        next += chunk.len();
    }
    runs.sort_by_key(|r| std::cmp::Reverse(r.started_ms));
    runs.truncate(limit);
    use futures::StreamExt;
    futures::stream::iter(runs)
        .map(|r| row_of(store, r))
        .buffered(READ_AT_ONCE)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect()
}

/// The interrupted local runs of `kind` for `stack` (not plan-only), newest first: what
/// a resume of that stack looks for.
#[allow(dead_code)] // for the resume of an interrupted run (docs/cli.md, "Local runs")
pub async fn interrupted_local_runs(
    store: &StateStore,
    kind: RunKind,
    stack: &str,
) -> Result<Vec<LocalRunRow>, CliError> {
    Ok(list_local(store, usize::MAX)
        .await?
        .into_iter()
        .filter(|r| {
            r.run.kind == kind.name()
                && r.run.stack == stack
                && !r.run.plan_only
                && matches!(r.state, LocalState::Interrupted { .. })
        })
        .collect())
}

/// The local run `run_id`, refused naming where it was looked for when it has no
/// `run.json`.
pub async fn find_local(store: &StateStore, run_id: &RunId) -> Result<LocalRunRow, CliError> {
    local_row(store, run_id).await?.ok_or_else(|| {
        CliError::refused(&RunsRefusal::NoLocalRun {
            run: run_id.clone(),
            bucket: store.bucket.clone(),
            prefix: store.prefix.clone(),
        })
    })
}

/// Follows a local run until it is no longer running (its report written, or
/// interrupted), re-reading it every `poll`; returns where it ended.
pub async fn until_settled(
    store: &StateStore,
    run_id: &RunId,
    poll: Duration,
) -> Result<LocalRunRow, CliError> {
    loop {
        let row = find_local(store, run_id).await?;
        if matches!(
            row.state,
            LocalState::Ended { .. } | LocalState::Interrupted { .. }
        ) {
            return Ok(row);
        }
        tokio::time::sleep(poll).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_destroy_report_reads_as_one_outcome() {
        let report = |complete: bool, aborted: Option<&str>| RunReport {
            run_id: "r".into(),
            stack: "S".into(),
            region: "us-east-1".into(),
            complete,
            aborted: aborted.map(str::to_string),
            stacks: Vec::new(),
            orphans: Vec::new(),
            refused: false,
        };
        assert_eq!(destroy_outcome(&report(true, None)), "destroyed");
        assert_eq!(
            destroy_outcome(&report(false, Some("LockLost: x"))),
            "aborted"
        );
        assert_eq!(destroy_outcome(&report(false, None)), "partial");
    }
}
