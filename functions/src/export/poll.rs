//! `export-poll`: one look at everything in flight (docs/export.md, "Waiting (export-poll)" and "Nested stacks (export-flip, export-adopt)"): each
//! stack's change set being created, or its stack importing or updating. A created
//! change set is marked ready (the route executes it), a finished operation records its
//! phase, the rest wait again unless past their ceiling. Every finished phase is saved
//! before a failure stops the run, so the report sees it; a failure names the failed
//! resources from the stack's events.

use cdkd_core::export::execute::{
    after_change_set, change_set_state, failure_lines, phase_done, stack_state, timed_out,
    InFlight, Next, Pending, StackState,
};
use cdkd_core::export::plain::shown;
use cdkd_core::export::plan::Plan;

use super::carry::{Carry, Ctx, Fence};
use crate::deps::Deps;
use crate::error::{names, StepError};

/// What one look at an operation in flight found.
enum Seen {
    /// Still running: look again.
    Running,
    /// The change set was created: execute it.
    Ready,
    /// The phase finished with the stack in `status` (its id when known).
    Done {
        status: String,
        stack_id: Option<String>,
        line: String,
    },
}

pub async fn run(carry: Carry, deps: &Deps) -> Result<Carry, StepError> {
    // A poll writes neither state nor CloudFormation: the locks are renewed when due; the
    // next step that writes renews its stack's lock first (the fence).
    let mut ctx = Ctx::fenced(carry, deps, Fence::DueOnly).await?;
    if ctx.carry.in_flight.is_empty() {
        return Err(StepError::bad_input("export-poll: nothing is in flight"));
    }
    let plan = ctx.plan().await?;
    let mut rec = ctx.progress().await?;
    let read = rec.clone();
    let mut still = Vec::new();
    let mut failure = None;
    for f in std::mem::take(&mut ctx.carry.in_flight) {
        let seen = match look(&ctx, &plan, &f).await {
            Ok(seen) => seen,
            Err(e) => {
                failure.get_or_insert(e);
                continue;
            }
        };
        match seen {
            Seen::Running => {
                if let Some(why) = timed_out(&f.pending, f.since_ms, ctx.now()) {
                    failure.get_or_insert(StepError::new(
                        names::CHANGE_SET_FAILED,
                        format!("export of {}: {why}", shown(&f.stack)),
                    ));
                }
                still.push(InFlight {
                    polls: f.polls.saturating_add(1),
                    ..f
                });
            }
            Seen::Ready => still.push(InFlight { ready: true, ..f }),
            Seen::Done {
                status,
                stack_id,
                line,
            } => {
                if let (Some(s), Some(id)) = (rec.stack_mut(&f.stack), stack_id) {
                    s.stack_id = Some(id);
                }
                phase_done(&mut rec, &f.stack, f.pending.phase(), &status);
                rec.log.push(line);
            }
        }
    }
    ctx.carry.in_flight = still;
    // What is still running or only ready lives in the carried state: the record is
    // written when a look changed it (a phase finished).
    if rec != read {
        ctx.save(&rec).await?;
    }
    if let Some(e) = failure {
        return Err(e);
    }
    ctx.route(&plan, &rec)
}

/// One look at one operation in flight.
async fn look(ctx: &Ctx<'_>, plan: &Plan, f: &InFlight) -> Result<Seen, StepError> {
    let sp = plan
        .stacks
        .iter()
        .find(|s| s.stack == f.stack)
        .ok_or_else(|| StepError::bad_input(format!("the run's plan has no stack {}", f.stack)))?;
    let cfn_name = sp.cfn_stack_name.as_str();
    let phase = f.pending.phase();
    match &f.pending {
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
                Ok(Some(Next::Execute)) => Ok(Seen::Ready),
                Ok(Some(_)) => Ok(Seen::Running),
                Ok(None) => {
                    // An UPDATE with nothing to change: the phase is done as it stands.
                    let described = ctx.cfn.describe_stack(cfn_name).await?;
                    Ok(Seen::Done {
                        status: described.map(|d| d.status).unwrap_or_default(),
                        stack_id: None,
                        line: format!(
                            "poll: {cfn_name} had nothing to change in {}",
                            phase.label()
                        ),
                    })
                }
                Err(why) => {
                    ctx.cfn.delete_change_set(cfn_name, arn).await;
                    Err(StepError::new(
                        names::CHANGE_SET_FAILED,
                        format!(
                            "export of {} to CloudFormation stack {}: {why}",
                            shown(&sp.stack),
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
                StackState::Pending => Ok(Seen::Running),
                StackState::Complete => Ok(Seen::Done {
                    line: format!("poll: {cfn_name} reached {}", stack.status),
                    status: stack.status,
                    stack_id: Some(stack.stack_id),
                }),
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
                        status.to_string()
                    } else {
                        let lines: Vec<String> = lines.iter().map(ToString::to_string).collect();
                        format!("{status}; {}", lines.join("; "))
                    };
                    Err(StepError::new(
                        names::CHANGE_SET_FAILED,
                        format!(
                            "export of {}: {} of CloudFormation stack {} failed: {why}",
                            shown(&sp.stack),
                            phase.label(),
                            shown(cfn_name)
                        ),
                    ))
                }
            }
        }
    }
}
