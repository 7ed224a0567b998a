//! Loading the stack tree a destroy plans from: the `destroy-plan` step and the CLI's
//! dry run and stack ordering both call these, so they read the same records, in the
//! same order, with the same refusals. Every decision is in
//! `cdkd_core::destroy::tree`; this module only reads.

use cdkd_aws::{StateStore, StoreError};
use cdkd_core::destroy::tree::{
    check_depth, consumer_scan_targets, nested_children, record_region, tree_needs_consumer_scan,
};
use cdkd_core::state::StateRecord;
use cdkd_core::view::state::resolve::no_state_found;
use futures::stream::{self, StreamExt};

use crate::error::StepError;

/// Records of the consumer scan read at the same time (docs/destroy.md, "Refusals before anything is deleted" step 3: the
/// other records are read in parallel).
const SCAN_CONCURRENCY: usize = 16;

/// A stack as asked, the region of its record, and its records: the nested children
/// depth-first, post-order (children before their parent), the root last.
#[derive(Debug, Clone)]
pub struct StackTree {
    pub stack: String,
    pub region: String,
    pub records: Vec<(String, StateRecord)>,
}

impl StackTree {
    /// The root record (the stack as asked).
    pub fn root(&self) -> Option<&StateRecord> {
        self.records.last().map(|(_, r)| r)
    }
}

/// Why a tree did not load.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The destroy is refused for this stack (no record, several regions, a damaged
    /// record, a tree too deep); `region` when it was already known.
    #[error("{message}")]
    Refused {
        region: Option<String>,
        message: String,
    },
    /// Reading the bucket failed: the command (or the step) stops, it is not a refusal.
    #[error(transparent)]
    Store(StoreError),
}

impl From<LoadError> for StepError {
    fn from(e: LoadError) -> Self {
        match e {
            LoadError::Refused { message, .. } => StepError::refused(message),
            LoadError::Store(e) => e.into(),
        }
    }
}

/// Loads `stack`'s record in its region (`asked_region`, else the only one it has state
/// in) and every nested child record below it.
pub async fn load_tree(
    store: &StateStore,
    stack: &str,
    asked_region: Option<&str>,
) -> Result<StackTree, LoadError> {
    let region = match asked_region.filter(|r| !r.is_empty()) {
        Some(r) => r.to_string(),
        None => {
            let refs = store.list_refs().await.map_err(LoadError::Store)?;
            record_region(stack, None, &refs).map_err(|r| LoadError::Refused {
                region: None,
                message: r.to_string(),
            })?
        }
    };
    let mut records = Vec::new();
    collect(store, stack, &region, 0, &mut records).await?;
    Ok(StackTree {
        stack: stack.to_string(),
        region,
        records,
    })
}

/// Depth-first: the child records of every `AWS::CloudFormation::Stack` row that exist,
/// then the stack itself.
async fn collect(
    store: &StateStore,
    stack: &str,
    region: &str,
    depth: usize,
    out: &mut Vec<(String, StateRecord)>,
) -> Result<(), LoadError> {
    let refused = |message: String| LoadError::Refused {
        region: Some(region.to_string()),
        message,
    };
    check_depth(stack, region, depth).map_err(|r| refused(r.to_string()))?;
    let loaded = match store.get_state(stack, region).await {
        Ok(l) => l,
        // A record that reads but cannot be used (bad JSON, unknown version) refuses.
        Err(e @ StoreError::Refused(_)) => return Err(refused(e.to_string())),
        Err(e) => return Err(LoadError::Store(e)),
    };
    let Some(loaded) = loaded else {
        if depth == 0 {
            return Err(refused(no_state_found(
                stack,
                region,
                &store.bucket,
                &store.prefix,
            )));
        }
        return Ok(());
    };
    for child in nested_children(stack, &loaded.record) {
        Box::pin(collect(store, &child, region, depth + 1, out)).await?;
    }
    out.push((stack.to_string(), loaded.record));
    Ok(())
}

/// The other records of the tree's region that may import what the tree exports, in
/// listing order, read in parallel; unreadable records are left out of the scan
/// (statement 24). `gone_before` are stacks destroyed earlier by the same command
/// (the CLI's dry run of several stacks); the step passes none.
pub async fn consumers(
    store: &StateStore,
    tree: &StackTree,
    gone_before: &[String],
) -> Result<Vec<(String, StateRecord)>, StoreError> {
    // No listing at all when nothing in the tree exports (statement 23).
    if !tree_needs_consumer_scan(&tree.records) {
        return Ok(Vec::new());
    }
    let refs = store.list_refs().await?;
    let names = consumer_scan_targets(&refs, &tree.region, &tree.records, gone_before);
    let region = tree.region.as_str();
    let read: Vec<Option<(String, StateRecord)>> = stream::iter(names)
        .map(|s| async move {
            match store.get_state(&s, region).await {
                Ok(Some(l)) => Some((s, l.record)),
                _ => None,
            }
        })
        .buffered(SCAN_CONCURRENCY)
        .collect()
        .await;
    Ok(read.into_iter().flatten().collect())
}

/// Why [`export_hold`] could not tell.
#[derive(Debug, thiserror::Error)]
#[error("cannot tell whether an export holds the resources of stack '{stack}' in CloudFormation: {cause}")]
pub struct HoldReadError {
    pub stack: String,
    pub cause: cdkd_aws::changeset::ChangeSetError,
}

impl From<HoldReadError> for StepError {
    /// A throttled or passing failure is retried by the definition; any other (a denied
    /// `DescribeStacks`) refuses: the destroy never goes on without knowing.
    fn from(e: HoldReadError) -> Self {
        if e.cause.class.is_retryable() {
            StepError::transient(e.to_string())
        } else {
            StepError::refused(e.to_string())
        }
    }
}

/// The first record of `records` (in `region`) whose resources a stopped export holds
/// in CloudFormation (docs/destroy.md, "Refusals before anything is deleted" step 8): its default destination stack
/// (`cdkd_core::export::held::candidate`) is tagged as the record's export run, and
/// lists the record's resources or that run's `progress.json` says it imported them.
/// Records without resources are not looked at. The destroy plan step and the CLI
/// (before its question, and whole-stack `state orphan`) read through this; what the
/// answers mean is `cdkd_core::export::held`'s.
pub async fn export_hold(
    sdk: &aws_config::SdkConfig,
    store: &StateStore,
    region: &str,
    records: &[(String, StateRecord)],
) -> Result<Option<cdkd_core::export::held::ExportHold>, HoldReadError> {
    use cdkd_core::export::execute::ExportRun;
    use cdkd_core::export::held::{candidate, hold, record_physical_ids, tagged_run, Found};
    let cfn = cdkd_aws::cfn::Cfn::new(sdk, Some(region), None);
    for (stack, record) in records {
        if record_physical_ids(record).is_empty() {
            continue;
        }
        let Some(name) = candidate(stack) else {
            continue;
        };
        let failed = |cause| HoldReadError {
            stack: cdkd_core::text::flatten_str(stack),
            cause,
        };
        let Some(st) = cfn.describe_stack(&name).await.map_err(failed)? else {
            continue;
        };
        let Some(run_id) = tagged_run(stack, &st.status, &st.tags) else {
            continue;
        };
        let listed = cfn.physical_ids(&name).await.map_err(failed)?;
        // The run's record is evidence when it can be read; its folder may have expired.
        let progress: Option<ExportRun> =
            crate::runs::read(store, &crate::runs::progress_key(&store.prefix, &run_id))
                .await
                .ok()
                .flatten();
        let stage = progress
            .as_ref()
            .and_then(|p| p.stacks.iter().find(|s| s.stack == *stack))
            .map(|s| s.stage);
        let found = Found {
            record: stack,
            region,
            cfn_stack: &name,
            status: &st.status,
            tags: &st.tags,
            cfn_physical_ids: &listed,
            stage,
        };
        if let Some(h) = hold(&found, record) {
            return Ok(Some(h));
        }
    }
    Ok(None)
}
