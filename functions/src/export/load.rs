//! Loading what an export plans from (docs/export.md, "Step details" S2, S3, S5, N1, "Child templates"): the
//! root record in its region, the uploaded template of every stack, and every nested
//! child record the parent's nested-stack rows name, read level by level. Only reads;
//! every refusal about the records' content is `cdkd_core::export::plan`'s.

use std::collections::BTreeMap;

use cdkd_aws::StateStore;
use cdkd_core::destroy::tree::record_region;
use cdkd_core::export::plain::shown;
use cdkd_core::export::plan::{StackInput, TreeInput};
use cdkd_core::export::template::Template;
use cdkd_core::text::flatten_str;
use cdkd_core::view::state::resolve::no_state_found;
use futures::stream::{self, StreamExt, TryStreamExt};

use super::ExportInput;
use crate::error::StepError;

/// Records and templates read at the same time.
const LOAD_CONCURRENCY: usize = 8;

/// The tree and the region its AWS calls use (the record's region; for a legacy
/// record, the region it was found under).
#[derive(Debug, Clone)]
pub struct Loaded {
    pub tree: TreeInput,
    pub region: String,
}

/// Loads the root record, its template and every nested child below it.
pub async fn load_tree(
    cache: &crate::runs::ArtifactCache,
    store: &StateStore,
    input: &ExportInput,
    default_region: &str,
) -> Result<Loaded, StepError> {
    let stack = input.stack.as_str();
    let region = match input.stack_region.as_deref().filter(|r| !r.is_empty()) {
        Some(r) => r.to_string(),
        None => {
            let refs = store.list_refs().await?;
            let mine: Vec<Option<&str>> = refs
                .iter()
                .filter(|r| r.stack == stack)
                .map(|r| r.region.as_deref())
                .collect();
            if mine == [None] {
                // A legacy record without a region: read it where the SDK's region
                // points (the store's legacy fallback accepts a body without one).
                default_region.to_string()
            } else {
                record_region(stack, None, &refs).map_err(|r| StepError::refused(r.to_string()))?
            }
        }
    };
    let root = load_stack(cache, store, input, stack, &region)
        .await?
        .ok_or_else(|| {
            StepError::refused(no_state_found(stack, &region, &store.bucket, &store.prefix))
        })?;
    let mut children = BTreeMap::new();
    let mut frontier = nested_children(&root);
    while !frontier.is_empty() {
        let loaded: Vec<Option<StackInput>> = stream::iter(frontier)
            .map(|child| {
                let region = region.as_str();
                async move { load_stack(cache, store, input, &child, region).await }
            })
            .buffered(LOAD_CONCURRENCY)
            .try_collect()
            .await?;
        frontier = Vec::new();
        for child in loaded.into_iter().flatten() {
            frontier.extend(nested_children(&child));
            children.insert(child.stack.clone(), child);
        }
    }
    Ok(Loaded {
        tree: TreeInput { root, children },
        region,
    })
}

/// The children core's plan will walk (`planner::nested_children`): their cdkd names.
fn nested_children(s: &StackInput) -> Vec<String> {
    cdkd_core::export::planner::nested_children(s)
        .into_iter()
        .map(|(_, child)| child)
        .collect()
}

/// One stack's record and template; `None` when it has no record (the plan refuses a
/// missing child by name).
async fn load_stack(
    cache: &crate::runs::ArtifactCache,
    store: &StateStore,
    input: &ExportInput,
    stack: &str,
    region: &str,
) -> Result<Option<StackInput>, StepError> {
    let Some(loaded) = store.get_state(stack, region).await? else {
        return Ok(None);
    };
    let is_root = stack == input.stack;
    let Some(key) = input.templates.get(stack) else {
        return Err(if is_root {
            StepError::bad_input(format!(
                "no template was uploaded for stack {}",
                shown(stack)
            ))
        } else {
            StepError::refused(format!(
                "nested stack {} has a state record but no template: a lone --template carries no nested template, so export from the cloud assembly (--cdk-out or --app); if you did, the app and the state disagree (its parent's nested-stack resource names no template path): synthesize the app again, or redeploy the parent, then export",
                shown(stack)
            ))
        });
    };
    let template = read_template(cache, store, stack, key).await?;
    Ok(Some(StackInput {
        stack: stack.to_string(),
        region: (!loaded.migration_pending).then(|| region.to_string()),
        record: loaded.record,
        etag: Some(loaded.etag),
        template,
        template_key: key.clone(),
    }))
}

/// An uploaded template (JSON, as the CLI writes it).
/// Read through the run's artifact cache: the CLI that uploaded it in this process (a
/// local run), or the plan step of a warm Lambda, has its bytes already.
async fn read_template(
    cache: &crate::runs::ArtifactCache,
    store: &StateStore,
    stack: &str,
    key: &str,
) -> Result<Template, StepError> {
    let Some(bytes) = crate::runs::read_immutable_raw(cache, store, key).await? else {
        return Err(StepError::bad_input(format!(
            "the template of stack {} is not at s3://{}/{}",
            shown(stack),
            flatten_str(&store.bucket),
            flatten_str(key)
        )));
    };
    let value = cdkd_core::json::parse_json_unique_keys(&bytes).map_err(|e| {
        StepError::bad_input(format!(
            "the template of stack {} (s3://{}/{}) is not JSON: {}",
            shown(stack),
            flatten_str(&store.bucket),
            flatten_str(key),
            flatten_str(&e)
        ))
    })?;
    Template::from_value(stack, value).map_err(|e| StepError::refused(e.to_string()))
}
