//! The `cleanup-select` step (`statemachines/cleanup.asl.json`): lists every record under
//! the state prefix, reads the records (and locks) the pattern and regions leave, and
//! writes the selection into the run's folder (`selection.json`), returning counts and the
//! first batch; `cleanup-record` keeps each batch's results (`results.json`) and returns
//! the next (docs/runs.md, "A cleanup's lists"). The rules are `cdkd_core::cleanup`'s.

use cdkd_aws::{StateStore, StoreError};
use cdkd_core::cleanup::{
    self, Criteria, DestroyResult, NamePattern, Observed, RecordSummary, SkipReason,
};
use cdkd_core::keys::StackRef;
use cdkd_core::run::RunId;
use cdkd_core::text::flatten_str;
use futures::stream::{self, StreamExt};
use serde::{Deserialize, Deserializer, Serialize};

use crate::deps::Deps;
use crate::error::StepError;

/// Records read at once.
const READ_CONCURRENCY: usize = 8;

/// The cleanup execution's input (the schedule's target input, or the CLI's).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CleanupInput {
    pub state_bucket: String,
    #[serde(default = "crate::deps::default_prefix")]
    pub state_prefix: String,
    /// Stack-name glob (`*`, `?`), see `cdkd_core::cleanup::NamePattern`.
    pub pattern: String,
    /// Minimum age by `lastModified`: `7d`, `12h`, `30m`...
    pub minimum_age: String,
    /// Allowed regions: a JSON array or a comma-separated string (what a CloudFormation
    /// parameter substitutes); empty allows every region.
    #[serde(default, deserialize_with = "regions_list")]
    pub regions: Vec<String>,
    /// `true`, `false`, or the same as a string.
    #[serde(default, deserialize_with = "loose_bool")]
    pub dry_run: bool,
}

fn regions_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Regions {
        List(Vec<String>),
        Text(String),
        Null(()),
    }
    let list = match Regions::deserialize(d)? {
        Regions::List(l) => l,
        Regions::Text(t) => t.split(',').map(str::to_string).collect(),
        Regions::Null(()) => Vec::new(),
    };
    Ok(list
        .into_iter()
        .map(|r| r.trim().to_string())
        .filter(|r| !r.is_empty())
        .collect())
}

fn loose_bool<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Loose {
        Bool(bool),
        Text(String),
    }
    match Loose::deserialize(d)? {
        Loose::Bool(b) => Ok(b),
        Loose::Text(t) => match t.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" | "" => Ok(false),
            other => Err(serde::de::Error::custom(format!(
                "dryRun '{other}' is not true or false"
            ))),
        },
    }
}

/// One skipped stack.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedStack {
    /// Flattened (docs/state-views.md, "Flatten (diagnostics)"): it comes from a key in the bucket.
    pub stack: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stack_region: Option<String>,
    #[serde(flatten)]
    pub reason: SkipReason,
}

/// A selected stack, as `selection.json` lists it and a batch carries it (the `Map`'s
/// `ItemSelector` adds the state bucket and prefix to make it a destroy input).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectedStack {
    pub stack: String,
    pub stack_region: String,
}

/// `<prefix>/_runs/<run-id>/selection.json`: what `cleanup-select` decided, whole.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectionFile {
    pub dry_run: bool,
    pub selected: Vec<SelectedStack>,
    pub skipped: Vec<SkippedStack>,
}

/// The part of `selection.json` the `cleanup-record` step reads back.
#[derive(Debug, Clone, Deserialize)]
struct SelectedOnly {
    selected: Vec<SelectedStack>,
}

/// `<prefix>/_runs/<run-id>/results.json`: every destroy's result so far, in the order
/// the batches were recorded.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultsFile {
    pub results: Vec<DestroyResult>,
}

pub fn selection_key(prefix: &str, run_id: &str) -> String {
    format!("{}/selection.json", crate::runs::run_prefix(prefix, run_id))
}

pub fn results_key(prefix: &str, run_id: &str) -> String {
    format!("{}/results.json", crate::runs::run_prefix(prefix, run_id))
}

/// `cleanup-select`'s input: the run (the execution's name) and the execution's input.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectInput {
    pub run_id: RunId,
    pub input: CleanupInput,
}

/// What `cleanup-select` and `cleanup-record` return (docs/runs.md, "A cleanup's
/// lists"): counts, where the lists are, and the next batch to destroy; bounded whatever
/// the selection's size.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CleanupTurn {
    pub run_id: RunId,
    pub state_bucket: String,
    pub state_prefix: String,
    pub dry_run: bool,
    pub selected_count: usize,
    pub skipped_count: usize,
    /// Destroys recorded in `results.json` so far.
    pub done: usize,
    pub succeeded_count: usize,
    pub failed_count: usize,
    /// The first [`cleanup::MAX_NAMED_FAILURES`] failed stacks.
    pub failed_stacks: Vec<String>,
    /// The next stacks to destroy (at most [`cleanup::BATCH_SIZE`]); empty when done.
    pub batch: Vec<SelectedStack>,
    /// `batch` is not empty.
    pub more: bool,
    pub selection_key: String,
    pub results_key: String,
}

/// Reads one record and its lock into what selection needs.
async fn observe(store: &StateStore, stack_ref: &StackRef) -> Observed {
    let Some(region) = stack_ref.region.as_deref() else {
        return Observed::Unreadable("the record has no region".into());
    };
    let record = match store.get_state(&stack_ref.stack, region).await {
        Ok(Some(loaded)) => loaded.record,
        Ok(None) => return Observed::Unreadable("the record is gone".into()),
        Err(e) => return Observed::Unreadable(e.to_string()),
    };
    let locked = match store.get_lock(&stack_ref.stack, Some(region)).await {
        Ok(found) => found.is_some(),
        // The object exists (it is only unparsable): it blocks every acquire.
        Err(StoreError::LockRead { .. }) => true,
        Err(e) => return Observed::Unreadable(e.to_string()),
    };
    Observed::Read(RecordSummary {
        last_modified: record.last_modified(),
        has_parent_link: record.parent_link().is_some(),
        locked,
    })
}

/// Runs `cleanup-select`: decides, writes `selection.json` (and, unless a dry run, an
/// empty `results.json`), returns the first batch.
pub async fn run(select: SelectInput, deps: &Deps) -> Result<CleanupTurn, StepError> {
    let SelectInput { run_id, input } = select;
    if run_id.is_empty() {
        return Err(StepError::bad_input("cleanup-select needs the run id"));
    }
    let pattern =
        NamePattern::parse(&input.pattern).map_err(|e| StepError::bad_input(e.to_string()))?;
    let min_age_ms = cleanup::parse_duration_ms(&input.minimum_age)
        .map_err(|e| StepError::bad_input(e.to_string()))?;
    let store = deps.store(&input.state_bucket, &input.state_prefix).await;
    let refs = store.list_refs().await?;
    let criteria = Criteria {
        pattern,
        min_age_ms,
        regions: input.regions.clone(),
        now_ms: deps.now(),
    };
    let store = &store;
    let criteria_ref = &criteria;
    let observed: Vec<(StackRef, Option<Observed>)> = stream::iter(refs)
        .map(|stack_ref| async move {
            if cleanup::prefilter(&stack_ref, criteria_ref).is_some() {
                (stack_ref, None)
            } else {
                let o = observe(store, &stack_ref).await;
                (stack_ref, Some(o))
            }
        })
        .buffered(READ_CONCURRENCY)
        .collect()
        .await;
    let selection = cleanup::select(&observed, &criteria);
    let file = SelectionFile {
        dry_run: input.dry_run,
        selected: selection
            .selected
            .into_iter()
            // `select` selects no ref without a region (rule 2).
            .filter_map(|r| {
                Some(SelectedStack {
                    stack: r.stack,
                    stack_region: r.region?,
                })
            })
            .collect(),
        skipped: selection
            .skipped
            .into_iter()
            .map(|s| SkippedStack {
                stack: flatten_str(&s.stack_ref.stack),
                stack_region: s.stack_ref.region.as_deref().map(flatten_str),
                reason: s.reason,
            })
            .collect(),
    };
    let prefix = &input.state_prefix;
    crate::runs::write(store, &selection_key(prefix, &run_id), &file).await?;
    if !input.dry_run {
        crate::runs::write(
            store,
            &results_key(prefix, &run_id),
            &ResultsFile::default(),
        )
        .await?;
    }
    Ok(turn(
        &run_id,
        &input.state_bucket,
        prefix,
        input.dry_run,
        &file.selected,
        file.skipped.len(),
        &[],
    ))
}

/// The turn after `results` of `selected`.
fn turn(
    run_id: &RunId,
    bucket: &str,
    prefix: &str,
    dry_run: bool,
    selected: &[SelectedStack],
    skipped_count: usize,
    results: &[DestroyResult],
) -> CleanupTurn {
    let failed: Vec<&DestroyResult> = results.iter().filter(|r| r.failed()).collect();
    let batch = if dry_run {
        Vec::new()
    } else {
        selected[cleanup::next_batch(results.len(), selected.len())].to_vec()
    };
    CleanupTurn {
        run_id: run_id.clone(),
        state_bucket: bucket.to_string(),
        state_prefix: prefix.to_string(),
        dry_run,
        selected_count: selected.len(),
        skipped_count,
        done: results.len(),
        succeeded_count: results.len() - failed.len(),
        failed_count: failed.len(),
        failed_stacks: failed
            .iter()
            .take(cleanup::MAX_NAMED_FAILURES)
            .map(|r| flatten_str(&r.stack))
            .collect(),
        more: !batch.is_empty(),
        batch,
        selection_key: selection_key(prefix, run_id),
        results_key: results_key(prefix, run_id),
    }
}

/// `cleanup-record`'s input: one of its two jobs.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum RecordInput {
    /// A destroy of the `Map` failed: its bounded result (the `Map`'s output stays small).
    Failure(FailedDestroy),
    /// A batch was destroyed: append its results to `results.json`, return the next.
    Batch(BatchResults),
}

/// A destroy the `Map` caught, with the error and cause Step Functions gave.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailedDestroy {
    pub stack: String,
    #[serde(default)]
    pub stack_region: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub cause: Option<String>,
}

/// A batch's results and the turn they belong to.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchResults {
    pub run_id: RunId,
    pub state_bucket: String,
    pub state_prefix: String,
    /// Destroys recorded before this batch (the turn's `done`).
    pub done: usize,
    pub skipped_count: usize,
    pub results: Vec<DestroyResult>,
}

/// Runs `cleanup-record`.
pub async fn record(input: RecordInput, deps: &Deps) -> Result<serde_json::Value, StepError> {
    let value = match input {
        RecordInput::Failure(f) => serde_json::to_value(cleanup::bounded_failure(
            &f.stack,
            f.stack_region.as_deref(),
            f.error.as_deref().unwrap_or_default(),
            f.cause.as_deref().unwrap_or_default(),
        )),
        RecordInput::Batch(b) => serde_json::to_value(record_batch(b, deps).await?),
    };
    value.map_err(|e| StepError::bad_input(format!("cannot serialize a step's output: {e}")))
}

/// Appends a batch's results to `results.json` once (a retried invocation finds them
/// there and appends nothing), over the version it read.
async fn record_batch(b: BatchResults, deps: &Deps) -> Result<CleanupTurn, StepError> {
    let store = deps.store(&b.state_bucket, &b.state_prefix).await;
    let prefix = &b.state_prefix;
    let sel_key = selection_key(prefix, &b.run_id);
    let Some(selection) = crate::runs::read::<SelectedOnly>(&store, &sel_key).await? else {
        return Err(StepError::bad_input(format!(
            "s3://{}/{sel_key} is missing: cleanup-select writes it first",
            store.bucket
        )));
    };
    let res_key = results_key(prefix, &b.run_id);
    let Some((bytes, etag)) = store.get_raw(&res_key).await? else {
        return Err(StepError::bad_input(format!(
            "s3://{}/{res_key} is missing: cleanup-select writes it first",
            store.bucket
        )));
    };
    let mut file: ResultsFile = serde_json::from_slice(&bytes).map_err(|e| {
        StepError::bad_input(format!(
            "run artifact s3://{}/{res_key} is not readable: {e}",
            store.bucket
        ))
    })?;
    let recorded = file.results.len();
    if b.done == recorded {
        file.results.extend(b.results);
        let body = serde_json::to_vec_pretty(&file).map_err(|e| {
            StepError::bad_input(format!("cannot serialize run artifact {res_key}: {e}"))
        })?;
        if store
            .put_raw_if_match(&res_key, body, &etag)
            .await?
            .is_none()
        {
            return Err(StepError::new(
                crate::error::names::CONFLICT,
                format!(
                    "s3://{}/{res_key} changed after this step read it",
                    store.bucket
                ),
            ));
        }
    } else if b.done + b.results.len() != recorded {
        return Err(StepError::bad_input(format!(
            "s3://{}/{res_key} holds {recorded} results; this batch starts at {}",
            store.bucket, b.done
        )));
    }
    Ok(turn(
        &b.run_id,
        &b.state_bucket,
        prefix,
        false,
        &selection.selected,
        b.skipped_count,
        &file.results,
    ))
}

/// A cleanup's summary (the execution's output, or the `Summary` state's) with its lists
/// read back from its run folder: `selected` and `skipped` from `selection.json`,
/// `succeeded` and `failed` from `results.json`, when they exist. What
/// `cdkd_core::view::cleanup::render_cleanup` and the digest take.
pub async fn with_lists(
    store: &StateStore,
    run_id: &str,
    summary: &serde_json::Value,
) -> Result<serde_json::Value, StepError> {
    use serde_json::Value;
    let mut out = summary.clone();
    let Some(obj) = out.as_object_mut() else {
        return Ok(out);
    };
    let prefix = &store.prefix;
    if let Some(sel) = crate::runs::read::<Value>(store, &selection_key(prefix, run_id)).await? {
        for k in ["selected", "skipped"] {
            obj.insert(
                k.into(),
                sel.get(k).cloned().unwrap_or(Value::Array(vec![])),
            );
        }
        if !obj.contains_key("dryRun") {
            obj.insert(
                "dryRun".into(),
                sel.get("dryRun").cloned().unwrap_or(Value::Bool(false)),
            );
        }
    }
    let dry = obj.get("dryRun").and_then(Value::as_bool).unwrap_or(false);
    let results = if dry {
        None
    } else {
        crate::runs::read::<ResultsFile>(store, &results_key(prefix, run_id)).await?
    };
    if let Some(res) = results {
        let (failed, ok): (Vec<_>, Vec<_>) = res.results.into_iter().partition(|r| r.failed());
        let list = |v: Vec<DestroyResult>| serde_json::to_value(v).unwrap_or(Value::Null);
        obj.insert("succeeded".into(), list(ok));
        obj.insert("failed".into(), list(failed));
    }
    Ok(out)
}
