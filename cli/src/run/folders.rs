//! The deployed runs of a state bucket read from their folders alone, for `runs list`
//! when no deployed backend answers (docs/cli.md "runs list"): every folder under
//! `<prefix>/_runs/` that holds no `run.json` (a local run's) and is not a plan run's,
//! and that a run wrote into (more than uploads). Its execution cannot be asked, so its
//! status is `UNKNOWN`; what its report says, when it has one, is named beside it.

use std::cmp::Reverse;

use cdkd_aws::StateStore;
use cdkd_core::retention::{kind_of_run, run_folders, KindWitness, RunFolder};
use cdkd_core::run::Outcome;
use cdkd_core::view::runs::ExecutionRow;
use serde_json::Value;

use crate::error::CliError;

/// Folders read at once.
const READ_AT_ONCE: usize = 8;

/// The newest `limit` deployed runs of the bucket, newest first, as rows of `runs list`.
pub async fn deployed_rows(
    store: &StateStore,
    limit: usize,
) -> Result<Vec<ExecutionRow>, CliError> {
    let objects = store.list_run_objects(|_| {}).await?;
    let mut folders: Vec<RunFolder> = run_folders(&store.prefix, objects)
        .into_iter()
        .filter(|f| {
            !f.files.run_json
                && !f.files.only_uploads()
                && cdkd_core::runs::planned_run(&f.run_id).is_none()
        })
        .collect();
    folders.sort_by_key(|f| Reverse(f.last_write_ms));
    folders.truncate(limit);
    use futures::StreamExt;
    futures::stream::iter(folders)
        .map(|f| row_of(store, f))
        .buffered(READ_AT_ONCE)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .map(|r| r.map(|(row, _)| row))
        .collect()
}

/// The deployed run `run_id` read from its folder, as `runs show` and `runs watch` show it
/// when no deployed backend answers, with its report's outcome when it has one; `None`
/// when the bucket holds no such folder.
pub async fn deployed_row(
    store: &StateStore,
    run_id: &str,
) -> Result<Option<(ExecutionRow, Option<Outcome>)>, CliError> {
    let objects = store.list_run_objects(|_| {}).await?;
    let folder = run_folders(&store.prefix, objects)
        .into_iter()
        .find(|f| f.run_id == run_id && !f.files.run_json);
    match folder {
        Some(f) => Ok(Some(row_of(store, f).await?)),
        None => Ok(None),
    }
}

async fn row_of(
    store: &StateStore,
    f: RunFolder,
) -> Result<(ExecutionRow, Option<Outcome>), CliError> {
    let read = |key: String| async move {
        crate::run::artifacts::read_json::<Value>(store, &key, "run file").await
    };
    let report = if f.files.report {
        read(cdkd_functions::runs::report_key(&store.prefix, &f.run_id)).await?
    } else {
        None
    };
    let progress = if f.files.progress {
        read(cdkd_functions::runs::progress_key(&store.prefix, &f.run_id)).await?
    } else {
        None
    };
    let witness_kind = report
        .as_ref()
        .or(progress.as_ref())
        .and_then(|v| v.get("kind"))
        .and_then(Value::as_str);
    let kind = kind_of_run(
        &f.run_id,
        &KindWitness {
            plan: f.files.plan,
            report: witness_kind,
            ..KindWitness::default()
        },
    );
    let (stack, started) = cdkd_core::runs::folder_run(progress.as_ref(), report.as_ref());
    let outcome = report
        .map(|r| crate::run::listing::outcome_of_report(store, &f.run_id, kind.clone(), r))
        .transpose()?;
    let row = ExecutionRow {
        name: f.run_id.clone(),
        arn: String::new(),
        kind,
        status: "UNKNOWN".into(),
        start_ms: started.unwrap_or(f.last_write_ms),
        stop_ms: None,
        target: stack,
        error: Some(cdkd_core::view::runs::unasked_execution(outcome.as_ref())),
        cause: None,
    };
    Ok((row, outcome))
}
