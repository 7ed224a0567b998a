//! `export-poll`: one look at what is pending (docs/export.md §10.3). A change set being
//! created, or a stack importing or updating; the answer is the next state: wait again,
//! execute, go on to the next phase. A failure names the failed resources from the
//! stack's events and stops the run; a wait past its ceiling stops it too.

use cdkd_core::export::execute::{
    after_change_set, change_set_state, failure_lines, stack_state, timed_out, Next, Pending,
    StackState,
};
use cdkd_core::export::plain::shown;

use super::carry::{Carry, Ctx};
use crate::deps::Deps;
use crate::error::{names, StepError};

pub async fn run(carry: Carry, deps: &Deps) -> Result<Carry, StepError> {
    let ctx = Ctx::open(carry, deps).await?;
    let Some(pending) = ctx.carry.pending.clone() else {
        return Err(StepError::bad_input("export-poll: nothing is pending"));
    };
    let plan = ctx.stack_plan().await?;
    let cfn_name = plan.cfn_stack_name.as_str();
    let phase = pending.phase();

    match &pending {
        Pending::ChangeSet { arn, .. } => {
            let status = ctx
                .cfn
                .describe_change_set(cfn_name, arn)
                .await?
                .ok_or_else(|| {
                    StepError::new(
                        names::CHANGE_SET_FAILED,
                        format!("the {} change set {arn} is gone", phase.change_set_type()),
                    )
                })?;
            let state = change_set_state(
                &status.status,
                status.execution_status.as_deref(),
                status.reason.as_deref(),
            );
            match after_change_set(phase, &state) {
                Ok(Some(next)) => keep_waiting(ctx, &pending, next, &plan.stack),
                Ok(None) => {
                    // An UPDATE with nothing to change: the phase is done as it stands.
                    let line = format!(
                        "poll: {cfn_name} had nothing to change in {}",
                        phase.label()
                    );
                    let described = ctx.cfn.describe_stack(cfn_name).await?;
                    let status = described.map(|d| d.status).unwrap_or_default();
                    ctx.phase_done(phase, &status, line).await
                }
                Err(why) => {
                    ctx.cfn.delete_change_set(cfn_name, arn).await;
                    Err(StepError::new(
                        names::CHANGE_SET_FAILED,
                        format!(
                            "export of {} to CloudFormation stack {}: {why}",
                            shown(&plan.stack),
                            shown(cfn_name)
                        ),
                    ))
                }
            }
        }
        Pending::Stack { .. } => {
            let stack = ctx.cfn.describe_stack(cfn_name).await?.ok_or_else(|| {
                StepError::new(
                    names::CHANGE_SET_FAILED,
                    format!("CloudFormation stack {} is gone", shown(cfn_name)),
                )
            })?;
            match stack_state(&stack.status, stack.reason.as_deref()) {
                StackState::Pending => keep_waiting(ctx, &pending, Next::Wait, &plan.stack),
                StackState::Complete => {
                    let mut rec = ctx.progress().await?;
                    if let Some(s) = rec.stack_mut(&plan.stack) {
                        s.stack_id = Some(stack.stack_id.clone());
                    }
                    ctx.save(&rec).await?;
                    let line = format!("poll: {cfn_name} reached {}", stack.status);
                    ctx.phase_done(phase, &stack.status, line).await
                }
                StackState::Failed(status) => {
                    // The waiter's state alone does not say why: the events do.
                    let lines = match ctx.cfn.stack_events(cfn_name).await {
                        Ok(events) => failure_lines(&events),
                        Err(e) => {
                            tracing::warn!("{e}");
                            Vec::new()
                        }
                    };
                    let why = if lines.is_empty() {
                        status
                    } else {
                        format!("{status}; {}", lines.join("; "))
                    };
                    Err(StepError::new(
                        names::CHANGE_SET_FAILED,
                        format!(
                            "export of {}: {} of CloudFormation stack {} failed: {why}",
                            shown(&plan.stack),
                            phase.label(),
                            shown(cfn_name)
                        ),
                    ))
                }
            }
        }
    }
}

/// Waits again (or executes) unless the wait has run past its ceiling.
fn keep_waiting(
    ctx: Ctx<'_>,
    pending: &Pending,
    next: Next,
    stack: &str,
) -> Result<Carry, StepError> {
    if next == Next::Wait {
        if let Some(why) = timed_out(pending, ctx.carry.since_ms, ctx.now()) {
            return Err(StepError::new(
                names::CHANGE_SET_FAILED,
                format!("export of {}: {why}", shown(stack)),
            ));
        }
    }
    let mut carry = ctx.carry;
    carry.wait_seconds = pending.interval_s(carry.fast);
    carry.next = next;
    Ok(carry)
}
