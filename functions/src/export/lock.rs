//! `export-lock`: the first write of an export (docs/export.md, "The lock (export-lock)"). Refuses a tree
//! deeper than CloudFormation can import, takes the locks (operation `export`; the root,
//! then the children leaf first), checks under them that every record is still the one
//! the plan was made from, whole, and writes the run's record. Everything before this step
//! only read.

use cdkd_core::export::execute::{
    execution_refusal, next_action, record_changed_refusal, record_changes, ExportRun,
    StackProgress, StackStage, MAX_IN_FLIGHT,
};
use cdkd_core::run::RunId;
use serde::{Deserialize, Serialize};

use super::carry::Carry;
use super::plan::PlanOutput;
use super::take::{first_carry, lock_order, take_locks};
use super::ExportInput;
use crate::deps::Deps;
use crate::destroy::RunRef;
use crate::error::StepError;
use crate::runs;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LockInput {
    pub input: ExportInput,
    pub run_id: RunId,
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
        return Err(StepError::refused(why.to_string()));
    }

    let region = planned.region.clone();
    // The root first, then the children leaf first; on any failure give back what was
    // taken.
    let (locks, held) = take_locks(
        deps,
        &input,
        &plan,
        root,
        &region,
        &run_id,
        "nothing was submitted",
    )
    .await?;
    // Under the locks, read every record again: it must be the record the plan was made
    // from, whole (docs/export.md, "The lock (export-lock)"). A row a deploy added between the plan and the
    // lock (an approval may wait days) would otherwise be owned by nothing once the
    // record is deleted.
    for sp in lock_order(&plan, root) {
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
            let why = record_changed_refusal(&input.stack, sp, &changes);
            return Err(StepError::refused(why.to_string()));
        }
    }

    let started_ms = deps.now();
    let rec = ExportRun {
        run_id: run_id.clone(),
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
            return Err(StepError::bad_input(why.to_string()));
        }
    };
    let key = runs::progress_key(&input.state_prefix, &run_id);
    if let Err(e) = runs::write_run_record(deps, &store, &key, &rec).await {
        crate::held::release_all(&locks, &held).await;
        return Err(e);
    }
    let run = RunRef {
        run_id,
        bucket: input.state_bucket.clone(),
        prefix: input.state_prefix.clone(),
        stack: root.stack.clone(),
        region,
    };
    Ok(Carry {
        stack: first.unwrap_or_else(|| root.stack.clone()),
        next,
        ..first_carry(&input, run, started_ms, planned.plan_key, held)
    })
}
