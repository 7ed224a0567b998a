//! `export-lock`: the first write of an export (docs/export.md §10.1). Refuses a tree
//! deeper than CloudFormation can import, takes the locks (operation `export`; the root,
//! then the children leaf first), checks under them that every record is still the one
//! the plan was made from, whole, and writes the run's record. Everything before this step
//! only read.

use cdkd_aws::HeldLock;
use cdkd_core::export::execute::{
    execution_refusal, next_action, record_changed_refusal, record_changes, ExportRun,
    StackProgress, StackStage, MAX_IN_FLIGHT,
};
use cdkd_core::export::plan::StackPlan;
use serde::{Deserialize, Serialize};

use super::carry::Carry;
use super::plan::PlanOutput;
use super::ExportInput;
use crate::deps::Deps;
use crate::destroy::RunRef;
use crate::error::StepError;
use crate::runs;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LockInput {
    pub input: ExportInput,
    pub run_id: String,
    /// Absent when the run resumes an interrupted one (`input.resume`).
    #[serde(default)]
    pub plan: Option<PlanOutput>,
}

pub async fn run(input: LockInput, deps: &Deps) -> Result<Carry, StepError> {
    let LockInput {
        input,
        run_id,
        plan: planned,
    } = input;
    if let Some(from) = input.resume.clone() {
        return super::resume::run(input, from, run_id, deps).await;
    }
    let planned =
        planned.ok_or_else(|| StepError::bad_input("export-lock: the run's plan is missing"))?;
    let store = deps.store(&input.state_bucket, &input.state_prefix).await;
    let plan: cdkd_core::export::plan::Plan =
        runs::read_immutable(&deps.artifacts, &store, &planned.plan_key)
            .await?
            .ok_or_else(|| {
                StepError::bad_input(format!("the run's plan {} is missing", planned.plan_key))
            })?;
    let Some(root) = plan.stacks.iter().find(|s| s.parent.is_none()) else {
        return Err(StepError::bad_input("the run's plan has no root stack"));
    };
    if let Some(why) = execution_refusal(&input.stack, &plan) {
        return Err(StepError::refused(why));
    }

    let region = planned.region.clone();
    let locks = deps.locks(&input.state_bucket, &input.state_prefix).await;
    let owner = deps.flow_owner(&run_id);
    // The root first, then the children leaf first; on any failure give back what was
    // taken.
    let mut order: Vec<&StackPlan> = vec![root];
    order.extend(plan.stacks.iter().filter(|s| s.parent.is_some()));
    let held = take_locks(
        &locks,
        &order,
        &region,
        &owner,
        &input.take_over,
        "nothing was submitted",
    )
    .await?;
    // Under the locks, read every record again: it must be the record the plan was made
    // from, whole (docs/export.md §10.1). A row a deploy added between the plan and the
    // lock (an approval may wait days) would otherwise be owned by nothing once the
    // record is deleted.
    for sp in &order {
        let changes = match store.get_state(&sp.stack, &region).await {
            Ok(Some(loaded)) => record_changes(sp, Some((&loaded.record, &loaded.etag))),
            Ok(None) => record_changes(sp, None),
            Err(e) => {
                crate::held::release_all(&locks, &held).await;
                return Err(e.into());
            }
        };
        if !changes.is_empty() {
            crate::held::release_all(&locks, &held).await;
            return Err(StepError::refused(record_changed_refusal(
                &input.stack,
                sp,
                &changes,
            )));
        }
    }

    let started_ms = deps.now();
    let rec = ExportRun {
        run_id: run_id.clone().into(),
        kind: "export".into(),
        started_ms,
        stacks: plan
            .stacks
            .iter()
            .map(|sp| StackProgress {
                stack: sp.stack.clone(),
                region: region.clone(),
                cfn_stack_name: sp.cfn_stack_name.clone(),
                parent: sp.parent.clone(),
                stage: StackStage::Locked,
                imported_resources: sp.import.len(),
                phase2_resources: sp.phase2.create.len() + sp.phase2.recreate.len(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    let (next, first) = match next_action(&plan, &rec, &[], MAX_IN_FLIGHT) {
        Ok(work) => work,
        Err(why) => {
            crate::held::release_all(&locks, &held).await;
            return Err(StepError::bad_input(why));
        }
    };
    let key = runs::progress_key(&input.state_prefix, &run_id);
    if let Err(e) = runs::write_run_record(deps, &store, &key, &rec).await {
        crate::held::release_all(&locks, &held).await;
        return Err(e);
    }
    Ok(Carry {
        run: RunRef {
            run_id,
            bucket: input.state_bucket.clone(),
            prefix: input.state_prefix.clone(),
            stack: root.stack.clone(),
            region,
        },
        stack: first.unwrap_or_else(|| root.stack.clone()),
        started_ms,
        plan_key: planned.plan_key,
        locks: held,
        next,
        in_flight: Vec::new(),
        wait_seconds: 0,
        fast: input.options.fast,
        parameters: input.options.parameters.clone(),
        role_arn: input.options.role_arn.clone(),
        unsaved_log: Vec::new(),
        loops: 0,
        continue_as_new: false,
    })
}

/// Takes the locks of `order` (the root first, then the children leaf first) for
/// `owner`, operation `export`, replacing the locks of `ended` (runs the CLI found ended,
/// docs/export.md §10.8); on any failure gives back what was taken and fails saying
/// `then` (what that means for the run).
pub(super) async fn take_locks(
    locks: &cdkd_aws::LockManager,
    order: &[&StackPlan],
    region: &str,
    owner: &str,
    ended: &[String],
    then: &str,
) -> Result<Vec<HeldLock>, StepError> {
    let mut held: Vec<HeldLock> = Vec::new();
    for sp in order {
        match locks
            .acquire_replacing(&sp.stack, Some(region), owner, Some("export"), ended)
            .await
        {
            Ok(h) => held.push(h),
            Err(e) => {
                crate::held::release_all(locks, &held).await;
                let e: StepError = e.into();
                return Err(StepError::new(&e.name, format!("{}; {then}", e.message)));
            }
        }
    }
    Ok(held)
}
