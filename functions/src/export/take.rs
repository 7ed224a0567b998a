//! Taking an export's locks, shared by a new run (`export-lock`) and the resume of an
//! interrupted one: the order the stacks are locked in, the taking itself, and the
//! first `Carry` of a run that holds them.

use cdkd_aws::{HeldLock, LockManager};
use cdkd_core::export::execute::Next;
use cdkd_core::export::plan::{Plan, StackPlan};

use super::carry::Carry;
use super::ExportInput;
use crate::deps::Deps;
use crate::destroy::RunRef;
use crate::error::StepError;

/// The order the stacks of `plan` are locked in: the root first, then the children leaf
/// first.
pub(super) fn lock_order<'p>(plan: &'p Plan, root: &'p StackPlan) -> Vec<&'p StackPlan> {
    let mut order: Vec<&StackPlan> = vec![root];
    order.extend(plan.stacks.iter().filter(|s| s.parent.is_some()));
    order
}

/// Takes the locks of `plan` (the root first, then the children leaf first) for the run
/// `run_name`, operation `export`, replacing the locks of the runs the input names as
/// ended (`take_over`, runs the CLI found ended, docs/export.md, "Interrupted and
/// contested runs"); on any failure gives back what was taken and fails saying `then`
/// (what that means for the run). Returns the lock manager with the locks.
pub(super) async fn take_locks(
    deps: &Deps,
    input: &ExportInput,
    plan: &Plan,
    root: &StackPlan,
    region: &str,
    run_name: &str,
    then: &str,
) -> Result<(LockManager, Vec<HeldLock>), StepError> {
    let locks = deps.locks(&input.state_bucket, &input.state_prefix).await;
    let owner = deps.flow_owner(run_name);
    let mut held: Vec<HeldLock> = Vec::new();
    for sp in lock_order(plan, root) {
        match locks
            .acquire_replacing(
                &sp.stack,
                Some(region),
                &owner,
                Some("export"),
                &input.take_over,
            )
            .await
        {
            Ok(h) => held.push(h),
            Err(e) => {
                crate::held::release_all(&locks, &held).await;
                let e: StepError = e.into();
                return Err(StepError::new(&e.name, format!("{}; {then}", e.message)));
            }
        }
    }
    Ok((locks, held))
}

/// The first `Carry` of a run that holds `locks`: its work on the root stack, waiting,
/// nothing in flight, the options of `input`.
pub(super) fn first_carry(
    input: &ExportInput,
    run: RunRef,
    started_ms: i64,
    plan_key: String,
    locks: Vec<HeldLock>,
) -> Carry {
    Carry {
        stack: run.stack.clone(),
        run,
        started_ms,
        plan_key,
        locks,
        next: Next::Wait,
        in_flight: Vec::new(),
        wait_seconds: 0,
        fast: input.options.fast,
        parameters: input.options.parameters.clone(),
        role_arn: input.options.role_arn.clone(),
        unsaved_log: Vec::new(),
        loops: 0,
        continue_as_new: false,
    }
}
