//! The resume of an interrupted export (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first"), run by `export-lock` when
//! the input names a run to resume. It plans nothing: it reads the run's plan and
//! `progress.json`, takes the locks (replacing an ended holder the CLI named, never a
//! live one), asks CloudFormation what each stack's next piece of work has become (a
//! change set created or executed, an operation in flight) and hands the run to the
//! definition's `Route` as if it had never stopped.

use cdkd_aws::cfn::Cfn;
use cdkd_core::export::execute::{change_set_state, ExportRun, InFlight, StackStage};
use cdkd_core::export::plain::shown;
use cdkd_core::export::plan::Plan;
use cdkd_core::export::resume::{phase_of, resumed_in_flight};
use cdkd_core::run::RunId;

use super::carry::{Carry, Ctx};
use super::take::{first_carry, take_locks};
use super::ExportInput;
use crate::deps::Deps;
use crate::destroy::RunRef;
use crate::error::StepError;
use crate::runs;

/// Resumes run `from` as the execution `run_name` (the same name for a local run; a
/// deployed resume is a new execution).
pub async fn run(
    input: ExportInput,
    from: String,
    run_name: RunId,
    deps: &Deps,
) -> Result<Carry, StepError> {
    let store = deps.store(&input.state_bucket, &input.state_prefix).await;
    let plan_key = super::plan_key(&input.state_prefix, &from);
    let plan: Plan = runs::read_immutable(&deps.artifacts, &store, &plan_key)
        .await?
        .ok_or_else(|| {
            StepError::refused(format!(
                "export of {}: run {} has no plan ({plan_key}); it cannot be resumed",
                shown(&input.stack),
                shown(&from)
            ))
        })?;
    let progress_key = runs::progress_key(&input.state_prefix, &from);
    let mut rec: ExportRun = runs::read(&store, &progress_key).await?.ok_or_else(|| {
        StepError::refused(format!(
            "export of {}: run {} never took its locks (no {progress_key}); nothing of it reached CloudFormation, so run the export without resuming",
            shown(&input.stack),
            shown(&from)
        ))
    })?;
    let Some(root) = plan.stacks.iter().find(|s| s.parent.is_none()) else {
        return Err(StepError::bad_input("the run's plan has no root stack"));
    };
    let region = rec
        .stacks
        .iter()
        .find(|s| s.stack == root.stack)
        .map(|s| s.region.clone())
        .ok_or_else(|| StepError::bad_input("the run's progress has no root stack"))?;

    let (locks, held) = take_locks(
        deps,
        &input,
        &plan,
        root,
        &region,
        &run_name,
        "the run was not resumed",
    )
    .await?;

    let cfn = Cfn::new(&deps.sdk, Some(&region), None);
    let in_flight = match observe(&cfn, &plan, &rec, deps.now()).await {
        Ok(f) => f,
        Err(e) => {
            crate::held::release_all(&locks, &held).await;
            return Err(e);
        }
    };
    rec.failure = None;
    rec.finished_ms = None;
    rec.log.push(format!(
        "resume: {run_name} took the run over ({} operation(s) in flight)",
        in_flight.len()
    ));
    let run = RunRef {
        run_id: from.as_str().into(),
        bucket: input.state_bucket.clone(),
        prefix: input.state_prefix.clone(),
        stack: root.stack.clone(),
        region,
    };
    let carry = Carry {
        in_flight,
        ..first_carry(&input, run, rec.started_ms, plan_key, held)
    };
    let ctx = Ctx::without_renewal(carry, deps).await;
    let saved = async {
        ctx.save(&rec).await?;
        // A failed attempt's report is not the run's last word any more, nor the message
        // that told it: the resumed run's end is told again (docs/notifications.md, "Once per run and kind: at most once").
        runs::forget_end(&store, &from).await?;
        Ok::<(), StepError>(())
    }
    .await;
    if let Err(e) = saved {
        crate::held::release_all(&locks, &ctx.carry.locks).await;
        return Err(e);
    }
    tracing::info!(run = %shown(&from), "export resumed");
    ctx.route(&plan, &rec)
}

/// What CloudFormation holds in flight for the run: for each stack with work left, its
/// next phase's change set of this run and the stack's status
/// (`cdkd_core::export::resume::resumed_in_flight`).
async fn observe(
    cfn: &Cfn,
    plan: &Plan,
    rec: &ExportRun,
    now_ms: i64,
) -> Result<Vec<InFlight>, StepError> {
    let mut out = Vec::new();
    for sp in &plan.stacks {
        let Some(s) = rec.stacks.iter().find(|s| s.stack == sp.stack) else {
            continue;
        };
        if s.stage >= StackStage::Cleaned {
            continue;
        }
        let Some(phase) = cdkd_core::export::execute::stack_work(sp, s).and_then(phase_of) else {
            continue;
        };
        let cfn_name = sp.cfn_stack_name.as_str();
        let Some(stack) = cfn.describe_stack(cfn_name).await? else {
            continue;
        };
        let change_set = cfn
            .describe_change_set(cfn_name, &phase.change_set_name(rec.started_ms))
            .await?;
        let state = change_set.as_ref().map(|c| {
            (
                c.arn.as_str(),
                change_set_state(
                    &c.status,
                    c.execution_status.as_deref(),
                    c.reason.as_deref(),
                ),
            )
        });
        if let Some((pending, ready)) = resumed_in_flight(
            phase,
            state.as_ref().map(|(arn, st)| (*arn, st)),
            Some(&stack.status),
        ) {
            out.push(InFlight {
                stack: sp.stack.clone(),
                pending,
                since_ms: now_ms,
                ready,
                polls: 0,
            });
        }
    }
    Ok(out)
}
