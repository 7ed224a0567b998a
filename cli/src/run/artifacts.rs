//! Reading a run's artifacts under `<prefix>/_runs/<run-id>/` and printing them: an
//! export's `plan.json` and `report.json` (the views are `cdkd_core::view::export` and
//! `export_report`'s), a local run's `run.json`.

use cdkd_aws::StateStore;
use cdkd_core::export::plan::Plan;
use cdkd_core::export::report::ExportReport;
use cdkd_core::runs::{run_file_key, LocalRun};
use cdkd_core::runs_refusal::ArtifactRefusal;
use cdkd_core::view::export::{render_dry_run, render_migration_plan};
use cdkd_core::view::export_report::render_report;
use cdkd_functions::export::plan_key;
use cdkd_functions::runs::ArtifactCache;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::CliError;

/// A JSON artifact of a run; `None` when it does not exist; refused naming the object
/// when it does not read as `T`.
pub async fn read_json<T: DeserializeOwned>(
    store: &StateStore,
    key: &str,
    what: &str,
) -> Result<Option<T>, CliError> {
    let Some((body, _)) = store.get_raw(key).await? else {
        return Ok(None);
    };
    serde_json::from_slice(&body).map(Some).map_err(|e| {
        CliError::refused(&ArtifactRefusal::Unreadable {
            what: what.to_string(),
            bucket: store.bucket.clone(),
            key: key.to_string(),
            error: e.to_string(),
        })
    })
}

/// A local run's `run.json`; `None` when the run has none (a deployed run, or a local
/// run of an earlier version).
pub async fn read_local_run(
    store: &StateStore,
    run_id: &str,
) -> Result<Option<LocalRun>, CliError> {
    read_json(store, &run_file_key(&store.prefix, run_id), "run file").await
}

/// An export run's report, unprinted.
pub async fn read_export_report(
    store: &StateStore,
    run_id: &str,
) -> Result<Option<ExportReport>, CliError> {
    let key = cdkd_functions::runs::report_key(&store.prefix, run_id);
    read_json(store, &key, "report").await
}

/// An export run's `progress.json`, when it can be read (what it did so far).
pub async fn read_export_progress(
    store: &StateStore,
    run_id: &str,
) -> Option<cdkd_core::export::execute::ExportRun> {
    let key = cdkd_functions::runs::progress_key(&store.prefix, run_id);
    read_json(store, &key, "progress").await.ok().flatten()
}

/// The report a migrating run wrote, printed (the view, or with `json` the report
/// itself); `None` when the run wrote none.
pub async fn print_report(
    store: &StateStore,
    run_id: &str,
    json: bool,
) -> Result<Option<ExportReport>, CliError> {
    let Some(report) = read_export_report(store, run_id).await? else {
        return Ok(None);
    };
    print_export_report(&report, json);
    Ok(Some(report))
}

/// Prints an export's report: the view, or with `json` the report itself.
pub fn print_export_report(report: &ExportReport, json: bool) {
    if json {
        crate::out::println(&serde_json::to_string_pretty(report).unwrap_or_default());
    } else {
        crate::out::println(&render_report(report));
    }
}

/// Prints the report of execution `name` writing into run folder `folder`
/// (`crate::run::run_folder`): a deployed resume refused at its `Resume` step wrote its
/// report into its own folder, leaving the resumed run's as it was
/// (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first"), so that one is looked for first; else the run folder's.
pub async fn print_execution_report(
    store: &StateStore,
    name: &str,
    folder: &str,
    json: bool,
) -> Result<Option<ExportReport>, CliError> {
    if folder != name {
        if let Some(r) = print_report(store, name, json).await? {
            return Ok(Some(r));
        }
    }
    print_report(store, folder, json).await
}

/// The plan the run `run_id` wrote, unprinted.
pub async fn read_plan(store: &StateStore, run_id: &str) -> Result<Option<Plan>, CliError> {
    for key in plan_keys(&store.prefix, run_id) {
        if let Some(plan) = read_json(store, &key, "plan").await? {
            return Ok(Some(plan));
        }
    }
    Ok(None)
}

/// Where the plan of run `run_id` may be, in order: for the plan run `<run>-plan` of a
/// real run, the folder of that run, where it writes its plan (docs/runs.md, "The
/// objects a run writes"); then its own folder (a dry run's, or an earlier version's).
fn plan_keys(prefix: &str, run_id: &str) -> Vec<String> {
    let mut keys = Vec::new();
    if let Some(run) = cdkd_core::runs::planned_run(run_id) {
        keys.push(plan_key(prefix, run));
    }
    keys.push(plan_key(prefix, run_id));
    keys
}

/// Prints the plan the run `run_id` wrote, if it wrote one: the summary on stdout, or
/// with `json` the plan itself (pretty JSON). Returns the plan printed.
pub async fn print_plan(
    store: &StateStore,
    run_id: &str,
    json: bool,
    dry_run: bool,
) -> Result<Option<Plan>, CliError> {
    print_plan_cached(&ArtifactCache::default(), store, run_id, json, dry_run).await
}

/// [`print_plan`] of a plan this process may have written or read already (`cache`:
/// the steps' `Deps::artifacts`, for a local run).
pub async fn print_plan_cached(
    cache: &ArtifactCache,
    store: &StateStore,
    run_id: &str,
    json: bool,
    dry_run: bool,
) -> Result<Option<Plan>, CliError> {
    let mut found = None;
    for key in plan_keys(&store.prefix, run_id) {
        let body = cdkd_functions::runs::read_immutable_raw(cache, store, &key)
            .await
            .map_err(|e| CliError::refused(&ArtifactRefusal::Cache { message: e.message }))?;
        if let Some(body) = body {
            found = Some((key, body));
            break;
        }
    }
    let Some((key, body)) = found else {
        return Ok(None);
    };
    let unreadable = |e: serde_json::Error| {
        CliError::refused(&ArtifactRefusal::Unreadable {
            what: "plan".into(),
            bucket: store.bucket.clone(),
            key: key.clone(),
            error: e.to_string(),
        })
    };
    let raw: Value = serde_json::from_slice(&body).map_err(unreadable)?;
    let plan: Plan = serde_json::from_value(raw.clone()).map_err(unreadable)?;
    if json {
        crate::out::println(&serde_json::to_string_pretty(&raw).unwrap_or_default());
    } else if dry_run {
        crate::out::println(&render_dry_run(&plan));
    } else {
        crate::out::println(&render_migration_plan(&plan));
    }
    Ok(Some(plan))
}
