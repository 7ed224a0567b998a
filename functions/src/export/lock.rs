//! `export-lock`: the first write of an export (docs/export.md §10.1). Refuses what the
//! execution does not run, takes the stack's lock (operation `export`), checks under the
//! lock that the record still holds the resources the plan imports, and writes the run's
//! record. Everything before this step only read.

use cdkd_aws::HeldLock;
use cdkd_core::export::execute::{ExportRun, Next, StackProgress, StackStage};
use cdkd_core::export::plain::shown;
use cdkd_core::export::records::Row;
use cdkd_core::lock::flow_owner;
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
    pub plan: PlanOutput,
}

pub async fn run(input: LockInput, deps: &Deps) -> Result<Carry, StepError> {
    let LockInput {
        input,
        run_id,
        plan: planned,
    } = input;
    let store = deps.store(&input.state_bucket, &input.state_prefix);
    let plan: cdkd_core::export::plan::Plan = runs::read(&store, &planned.plan_key)
        .await?
        .ok_or_else(|| {
            StepError::bad_input(format!("the run's plan {} is missing", planned.plan_key))
        })?;
    let [root] = plan.stacks.as_slice() else {
        return Err(StepError::refused(format!(
            "export of {}: its plan holds {} stacks (nested stacks); the execution of nested exports is not available yet, only their plan (--dry-run)",
            shown(&input.stack),
            plan.stacks.len()
        )));
    };
    if !root.nested.is_empty() {
        return Err(StepError::refused(format!(
            "export of {}: it has nested stacks; the execution of nested exports is not available yet, only their plan (--dry-run)",
            shown(&input.stack)
        )));
    }
    if root.import.is_empty() {
        return Err(StepError::refused(format!(
            "export of {}: no importable resources (nothing for the phase-1 IMPORT); nothing was changed",
            shown(&input.stack)
        )));
    }

    let region = planned.region.clone();
    let locks = deps.locks(&input.state_bucket, &input.state_prefix);
    let held: HeldLock = locks
        .acquire(
            &root.stack,
            Some(&region),
            &flow_owner(&run_id),
            Some("export"),
        )
        .await?;
    // Under the lock, read the record again: what is imported is what nobody can change
    // now. A deploy between the plan and the lock changes what the plan would import.
    let unchanged = match store.get_state(&root.stack, &region).await {
        Ok(Some(loaded)) => root.import.iter().all(|r| {
            Row::get(&loaded.record, &r.logical_id).and_then(|row| row.physical_id())
                == Some(r.physical_id.as_str())
        }),
        Ok(None) => false,
        Err(e) => {
            crate::held::release_all(&locks, std::slice::from_ref(&held)).await;
            return Err(e.into());
        }
    };
    if !unchanged {
        crate::held::release_all(&locks, std::slice::from_ref(&held)).await;
        return Err(StepError::refused(format!(
            "export of {}: its cdkd record changed after the plan was made (a deploy or destroy ran in between); nothing was submitted. Run the export again",
            shown(&root.stack)
        )));
    }

    let started_ms = deps.now();
    let rec = ExportRun {
        run_id: run_id.clone(),
        kind: "export".into(),
        started_ms,
        stacks: vec![StackProgress {
            stack: root.stack.clone(),
            region: region.clone(),
            cfn_stack_name: root.cfn_stack_name.clone(),
            stage: StackStage::Locked,
            imported_resources: root.import.len(),
            phase2_resources: root.phase2.create.len() + root.phase2.recreate.len(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let key = runs::progress_key(&input.state_prefix, &run_id);
    if let Err(e) = runs::write(&store, &key, &rec).await {
        crate::held::release_all(&locks, std::slice::from_ref(&held)).await;
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
        started_ms,
        plan_key: planned.plan_key,
        locks: vec![held],
        next: Next::Wait,
        pending: None,
        since_ms: started_ms,
        wait_seconds: 0,
        fast: input.options.fast,
        parameters: input.options.parameters.clone(),
        role_arn: input.options.role_arn.clone(),
    })
}
