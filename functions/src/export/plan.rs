//! `export-plan`: load the tree, gather what the plan needs from AWS, plan, write
//! `<prefix>/_runs/<run-id>/plan.json` (docs/export.md, "Step order" and "Workflow"). Reads only: no lock is
//! taken and nothing but the run's own artifact is written, dry run or not. A refusal
//! (a hard one, or blocked rows, after the plan is written) is the step error `Refused`.

use std::collections::BTreeMap;

use cdkd_core::export::plain::shown;
use cdkd_core::export::plan::Plan;
use cdkd_core::export::planner::{plan_needs, plan_tree};
use cdkd_core::export::warning::PlanWarning;
use cdkd_core::run::RunId;
use serde::{Deserialize, Serialize};

use super::gather::{gather, Reads};
use super::load::load_tree;
use super::{plan_key, ExportInput};
use crate::deps::Deps;
use crate::error::StepError;
use crate::runs;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanInput {
    pub input: ExportInput,
    /// The execution's name (`$$.Execution.Name`): the run id.
    pub run_id: RunId,
}

/// What the step returns: where the plan is and its counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanOutput {
    pub plan_key: String,
    /// The region the plan's AWS reads used (the record's).
    pub region: String,
    /// Stacks planned (the root and its nested children).
    pub stacks: usize,
    /// Phase-1 import rows over every stack.
    pub import_rows: usize,
    /// Blocked rows over every stack (non-zero only in a plan that refused).
    pub blocked: usize,
    /// Warnings, tree-wide and per stack.
    pub warnings: usize,
    /// AWS requests the plan sent, by operation (CloudFormation, SSM, EC2).
    pub aws_calls: BTreeMap<String, u64>,
}

pub async fn run(input: PlanInput, deps: &Deps) -> Result<PlanOutput, StepError> {
    let PlanInput { input, run_id } = input;
    if input.stack.is_empty() {
        return Err(StepError::bad_input("export needs a stack name"));
    }
    if run_id.is_empty() {
        return Err(StepError::bad_input("export-plan needs the run id"));
    }
    let store = deps.store(&input.state_bucket, &input.state_prefix).await;
    let default_region = deps
        .sdk
        .region()
        .map(|r| r.to_string())
        .unwrap_or_else(|| cdkd_aws::config::FALLBACK_REGION.to_string());
    if let Some(from) = input.plan_from.as_deref().filter(|_| !input.dry_run) {
        if let Some(out) = reuse(deps, &store, from, &run_id, &input, &default_region).await? {
            return Ok(out);
        }
    }
    let loaded = load_tree(&deps.artifacts, &store, &input, &default_region).await?;
    let opts = input.plan_options();
    let mut needs =
        plan_needs(&loaded.tree, &opts).map_err(|r| StepError::refused(r.to_string()))?;
    needs
        .destinations
        .retain(|d| !input.destinations_seen.contains_key(d));
    let reads = Reads::new(&deps.sdk, &loaded.region);
    let mut gathered = gather(&reads, &needs).await?;
    for (name, seen) in &input.destinations_seen {
        gathered
            .destinations
            .entry(name.clone())
            .or_insert_with(|| seen.clone());
    }
    let aws_calls = reads.calls.snapshot();
    let mut plan =
        plan_tree(&loaded.tree, &opts, &gathered).map_err(|r| StepError::refused(r.to_string()))?;
    // A dry run's plan shows the gates a real run would be refused on.
    if opts.dry_run {
        let gates = plan.gates(opts.leave_unmanaged, opts.include_non_importable);
        plan.warnings
            .extend(gates.into_iter().map(PlanWarning::Gate));
    }
    let owner = input.plan_for.as_deref().unwrap_or(&run_id);
    let key = plan_key(&input.state_prefix, owner);
    runs::write_immutable(&deps.artifacts, &store, &key, &plan).await?;
    let out = output(key, loaded.region, &plan, aws_calls);
    tracing::info!(
        stack = %shown(&input.stack),
        region = %out.region,
        stacks = out.stacks,
        import_rows = out.import_rows,
        blocked = out.blocked,
        aws_calls = ?out.aws_calls,
        "export planned"
    );
    if let Some(refusal) = plan.blocked_refusal() {
        return Err(StepError::refused(refusal.to_string()));
    }
    Ok(out)
}

/// The step's answer for `plan` written at `plan_key`.
fn output(
    plan_key: String,
    region: String,
    plan: &Plan,
    aws_calls: BTreeMap<String, u64>,
) -> PlanOutput {
    PlanOutput {
        plan_key,
        region,
        stacks: plan.stacks.len(),
        import_rows: plan.stacks.iter().map(|s| s.import.len()).sum(),
        blocked: plan.stacks.iter().map(|s| s.blocked.len()).sum(),
        warnings: plan.warnings.len() + plan.stacks.iter().map(|s| s.warnings.len()).sum::<usize>(),
        aws_calls,
    }
}

/// The plan of run `from` (the CLI's plan run of the same templates), made this run's
/// own without planning again: one plan per run. `None` when there is none to reuse, or
/// it refused, or it is of another stack or other templates: then the run plans.
async fn reuse(
    deps: &Deps,
    store: &cdkd_aws::StateStore,
    from: &str,
    run_id: &RunId,
    input: &ExportInput,
    default_region: &str,
) -> Result<Option<PlanOutput>, StepError> {
    // Its plan run wrote it into this run's folder (`plan_for`); a plan run that wrote
    // into its own folder has it copied here.
    let own_key = plan_key(&input.state_prefix, run_id);
    let (plan, copy): (Plan, bool) =
        match runs::read_immutable(&deps.artifacts, store, &own_key).await? {
            Some(plan) => (plan, false),
            None => {
                let from_key = plan_key(&input.state_prefix, from);
                match runs::read_immutable(&deps.artifacts, store, &from_key).await? {
                    Some(plan) => (plan, true),
                    None => return Ok(None),
                }
            }
        };
    let Some(root) = plan.stacks.iter().find(|s| s.parent.is_none()) else {
        return Ok(None);
    };
    let same_templates = plan
        .stacks
        .iter()
        .all(|s| input.templates.get(&s.stack) == Some(&s.template_key));
    if root.stack != input.stack || !same_templates || plan.blocked_refusal().is_some() {
        return Ok(None);
    }
    // The plan run was a dry run: what the real run refuses planning itself applies.
    let o = &input.options;
    if let Some(why) = plan.reuse_refusal(o.leave_unmanaged, o.include_non_importable) {
        return Err(StepError::refused(why.to_string()));
    }
    let region = root
        .region
        .clone()
        .or_else(|| input.stack_region.clone())
        .unwrap_or_else(|| default_region.to_string());
    if copy {
        runs::write_immutable(&deps.artifacts, store, &own_key, &plan).await?;
    }
    tracing::info!(stack = %shown(&input.stack), from = %shown(from), "export plan reused");
    Ok(Some(output(own_key, region, &plan, BTreeMap::new())))
}
