//! `export-execute`: executes the change set a poll found ready (docs/export.md, "Phases (export-import, export-execute, export-phase2)").
//! A change set already executing or executed (CloudFormation refuses to execute it
//! again) is followed, not executed again.

use cdkd_core::export::execute::{change_set_state, ChangeSetState, Pending};
use cdkd_core::view::export_run::change_set_state_named;

use super::carry::{Carry, Ctx};
use crate::deps::Deps;
use crate::error::StepError;

pub async fn run(carry: Carry, deps: &Deps) -> Result<Carry, StepError> {
    let mut ctx = Ctx::open(carry, deps).await?;
    let pending = ctx
        .carry
        .in_flight
        .iter()
        .find(|f| f.stack == ctx.carry.stack && f.ready)
        .map(|f| f.pending.clone());
    let Some(Pending::ChangeSet { phase, arn }) = pending else {
        return Err(StepError::bad_input(format!(
            "export-execute: no change set of {} is ready",
            ctx.carry.stack
        )));
    };
    let plan = ctx.stack_plan().await?;
    let cfn_name = plan.cfn_stack_name.as_str();
    // The poll just found it created: execute it at once. CloudFormation refuses a change
    // set that is executing or executed (a retry of this step after its answer was
    // lost): only then is it described, and such a one is followed, not executed again.
    match ctx.cfn.execute_change_set(cfn_name, &arn).await {
        // Nothing but the log line to write: the next step's save carries it.
        Ok(()) => ctx.carry.unsaved_log.push(format!(
            "execute: {} change set on {cfn_name}",
            phase.change_set_type()
        )),
        Err(e) => {
            let status = ctx
                .cfn
                .describe_change_set(cfn_name, &arn)
                .await?
                .ok_or_else(|| {
                    StepError::new(
                        crate::error::names::CHANGE_SET_FAILED,
                        format!("the {} change set {arn} is gone", phase.change_set_type()),
                    )
                })?;
            match change_set_state(
                &status.status,
                status.execution_status.as_deref(),
                status.reason.as_deref(),
            ) {
                ChangeSetState::Executed => {}
                ChangeSetState::Ready => {
                    return Err(StepError::new(
                        crate::error::names::CHANGE_SET_FAILED,
                        format!(
                            "ExecuteChangeSet of the {} change set on {cfn_name} failed: {}",
                            phase.change_set_type(),
                            e.message
                        ),
                    ))
                }
                other => {
                    return Err(StepError::new(
                        crate::error::names::CHANGE_SET_FAILED,
                        format!(
                            "the {} change set on {cfn_name} cannot be executed: {}",
                            phase.change_set_type(),
                            change_set_state_named(&other)
                        ),
                    ))
                }
            }
        }
    }
    ctx.waiting(Pending::Stack { phase }).await
}
