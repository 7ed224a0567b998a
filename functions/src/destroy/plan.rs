//! `destroy-plan`: find the stack's record and its nested children, refuse what must not
//! be destroyed (before any lock; a record a stopped export holds in CloudFormation
//! too), take every lock, write `progress.json`.

use cdkd_aws::HeldLock;
use cdkd_core::destroy::graph::DeleteGraph;
use cdkd_core::destroy::refusals::{check_plan, Refusal, RefusalOptions, StackRecord};
use cdkd_core::run::RunId;
use cdkd_core::state::StateRecord;
use cdkd_core::text::{or_unrenderable, printable_str};
use cdkd_core::view::contention::state_flags;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::load::{consumers, export_hold, load_tree};
use super::record::resources_of;
use super::{Carry, DestroyInput, DestroyRun, Planned, RunRef, StackRun};
use crate::deps::Deps;
use crate::error::StepError;
use crate::runs;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanInput {
    pub input: DestroyInput,
    /// The execution's name (`$$.Execution.Name`): the run id.
    pub run_id: RunId,
}

fn name(s: &str) -> String {
    or_unrenderable(printable_str(s))
}

pub async fn run(input: PlanInput, deps: &Deps) -> Result<Carry, StepError> {
    let PlanInput { input, run_id } = input;
    if input.stack.is_empty() {
        return Err(StepError::bad_input("destroy needs a stack name"));
    }
    let store = deps.store(&input.state_bucket, &input.state_prefix).await;
    // The root record and its nested children, children first.
    let tree = load_tree(&store, &input.stack, input.stack_region.as_deref()).await?;
    let region = tree.region.clone();
    let stacks = &tree.records;

    // Refusals, before any lock: the root as asked, children as part of their parent.
    let others = consumers(&store, &tree, &[]).await?;
    let other_refs: Vec<StackRecord<'_>> = others
        .iter()
        .map(|(s, r)| StackRecord::from_state(s, &region, r))
        .collect();
    for (stack, record) in stacks {
        let is_root = *stack == input.stack;
        let opts = RefusalOptions {
            allow_nested_child: !is_root || input.allow_nested_child,
        };
        let target = StackRecord::from_state(stack, &region, record);
        check_plan(&target, &other_refs, opts)
            .map_err(|r| StepError::new(r.code(), r.to_string()))?;
    }
    // A record a stopped export holds in CloudFormation (docs/destroy.md, "Refusals before anything is deleted" step 8).
    if let Some(hold) = export_hold(&deps.sdk, &store, &region, stacks).await? {
        let r = Refusal::HeldByExport {
            stack: hold.record.clone(),
            region: region.clone(),
            flags: state_flags(&input.state_bucket, &input.state_prefix),
            hold: Box::new(hold),
        };
        return Err(StepError::new(r.code(), r.to_string()));
    }

    // Every lock, root first; on contention give back what was taken.
    let locks = deps.locks(&input.state_bucket, &input.state_prefix).await;
    let owner = deps.flow_owner(&run_id);
    let mut held: Vec<HeldLock> = Vec::new();
    for (stack, _) in stacks.iter().rev() {
        match locks
            .acquire(stack, Some(&region), &owner, Some("destroy"))
            .await
        {
            Ok(h) => held.push(h),
            Err(e) => {
                crate::held::release_all(&locks, &held).await;
                return Err(e.into());
            }
        }
    }

    // Under the lock, read again: what we plan from is what nobody can change now.
    let mut plan = Vec::new();
    for (stack, _) in stacks {
        let loaded = match store.get_state(stack, &region).await {
            Ok(l) => l,
            Err(e) => {
                crate::held::release_all(&locks, &held).await;
                return Err(e.into());
            }
        };
        let planned = match loaded {
            Some(l) => match planned_rows(stack, &region, &l.record) {
                Ok(p) => p,
                Err(e) => {
                    crate::held::release_all(&locks, &held).await;
                    return Err(e);
                }
            },
            None => Vec::new(),
        };
        plan.push(StackRun {
            stack: stack.clone(),
            region: region.clone(),
            planned,
            ..StackRun::default()
        });
    }
    let record = DestroyRun {
        run_id: run_id.clone(),
        started_ms: deps.now(),
        skip_final_snapshot: input.skip_final_snapshot,
        remove_protection: input.remove_protection,
        stacks: plan,
        waves: 0,
        stop_requested: false,
        continued_as: None,
    };
    if let Err(e) = runs::write(
        &store,
        &runs::progress_key(&input.state_prefix, &run_id),
        &record,
    )
    .await
    {
        crate::held::release_all(&locks, &held).await;
        return Err(e);
    }
    tracing::info!(stack = %name(&input.stack), region = %region, stacks = record.stacks.len(), "destroy planned");
    Ok(Carry {
        run: RunRef {
            run_id,
            bucket: input.state_bucket,
            prefix: input.state_prefix,
            stack: input.stack,
            region,
        },
        locks: held,
        remaining: record.remaining(),
        settled: false,
        wait_seconds: 0,
        loops: 0,
        continue_as_new: false,
    })
}

fn planned_rows(
    stack: &str,
    region: &str,
    record: &StateRecord,
) -> Result<Vec<Planned>, StepError> {
    let resources = resources_of(stack, region, record)?;
    // The graph was checked for cycles by `check_plan`; build it again only for its
    // record order (the report's row order).
    let graph = DeleteGraph::build(&resources)
        .map_err(|d| StepError::refused(format!("Stack '{}' ({region}): {d}", name(stack))))?;
    Ok(graph
        .nodes()
        .iter()
        .map(|n| {
            let entry = resources.get(&n.logical_id);
            let field = |k: &str| {
                entry
                    .and_then(|e| e.get(k))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            };
            Planned {
                logical_id: n.logical_id.clone(),
                resource_type: field("resourceType").unwrap_or_default(),
                physical_id: field("physicalId"),
            }
        })
        .collect())
}
