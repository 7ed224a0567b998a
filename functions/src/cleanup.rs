//! The `cleanup-select` step (`statemachines/cleanup.asl.json`): lists every record under
//! the state prefix, reads the records (and locks) the pattern and regions leave, and
//! returns the stacks to destroy as ready-made destroy execution inputs. The rules are
//! `cdkd_core::cleanup`'s; this step only reads.

use cdkd_aws::{StateStore, StoreError};
use cdkd_core::cleanup::{self, Criteria, NamePattern, Observed, RecordSummary, SkipReason};
use cdkd_core::keys::StackRef;
use cdkd_core::text::flatten_str;
use futures::stream::{self, StreamExt};
use serde::{Deserialize, Deserializer, Serialize};

use crate::deps::Deps;
use crate::destroy::DestroyInput;
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
    /// Flattened (docs/state-views.md §1.2): it comes from a key in the bucket.
    pub stack: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stack_region: Option<String>,
    #[serde(flatten)]
    pub reason: SkipReason,
}

/// The step's output: `stacks` are destroy execution inputs, one per selected stack.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CleanupSelection {
    pub stacks: Vec<DestroyInput>,
    pub skipped: Vec<SkippedStack>,
    pub dry_run: bool,
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

/// Runs `cleanup-select`.
pub async fn run(input: CleanupInput, deps: &Deps) -> Result<CleanupSelection, StepError> {
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
    Ok(CleanupSelection {
        stacks: selection
            .selected
            .into_iter()
            .map(|r| DestroyInput {
                stack: r.stack,
                stack_region: r.region,
                state_bucket: input.state_bucket.clone(),
                state_prefix: input.state_prefix.clone(),
                allow_nested_child: false,
                skip_final_snapshot: false,
                remove_protection: false,
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
        dry_run: input.dry_run,
    })
}
