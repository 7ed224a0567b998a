//! `export-abort`: the `Catch` of every state after the lock (docs/export.md, "Failure (export-abort)").
//! Writes `report.json` (what CloudFormation holds now, what to redo by hand and the
//! commands), deletes the transient template uploads and releases the locks. No record
//! is deleted: a stack short of migrated keeps its cdkd record.

use cdkd_core::export::execute::{still_running, ExportRun, InFlight, StackStage};
use cdkd_core::export::report::{failed, unmanaged, ExportReport};
use cdkd_core::export::resume::withdrawable;
use serde::{Deserialize, Serialize};

use super::carry::{Carry, Ctx};
use crate::aborted::{release_then_tell, write_report, Caught};
use crate::deps::Deps;
use crate::error::StepError;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AbortInput {
    pub run: Carry,
    #[serde(default)]
    pub error: Caught,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AbortOutput {
    pub report_key: Option<String>,
    pub report: Option<ExportReport>,
    pub released: usize,
}

pub async fn run(input: AbortInput, deps: &Deps) -> Result<AbortOutput, StepError> {
    let mut carry = input.run;
    // Only a run that still holds its locks may delete anything of CloudFormation's.
    let locks = deps.locks(&carry.run.bucket, &carry.run.prefix).await;
    let holding = match crate::held::renew_all(&locks, &carry.locks).await {
        Ok(renewed) => {
            carry.locks = renewed;
            true
        }
        Err(_) => false,
    };
    let ctx = Ctx::without_renewal(carry, deps).await;
    let cause = input.error.cause();
    let mut out = AbortOutput {
        report_key: None,
        report: None,
        released: ctx.carry.locks.len(),
    };
    // The report is best effort: the locks must be released whatever happens. The
    // message goes out after the release, so that the command it names (the same
    // export command) is not refused by this run's own locks (docs/notifications.md, "What is published, and when").
    let mut notice = None;
    match ctx.progress().await {
        Ok(mut rec) => {
            for s in rec.stacks.iter_mut() {
                for left in ctx.delete_uploads(s).await {
                    tracing::warn!("{left}");
                }
            }
            rec.failure = Some(cause.clone());
            rec.finished_ms = Some(ctx.now());
            let running = still_running_of(&ctx).await;
            if holding {
                withdraw_empty(&ctx, &mut rec, &running).await;
            }
            if let Err(e) = ctx.save(&rec).await {
                tracing::warn!("progress of run {} not written: {e}", ctx.carry.run.run_id);
            }
            let mut report = cdkd_core::export::report::with_state_location(
                failed(&rec, &cause, &running),
                &ctx.carry.run.bucket,
                &ctx.carry.run.prefix,
            );
            // Stacks whose record the run deleted before it stopped (docs/export.md, "Rows the template leaves out").
            if let Ok(plan) = ctx.plan().await {
                report.unmanaged = unmanaged(&rec, &plan);
            }
            let run = &ctx.carry.run;
            if let Some(key) = write_report(&ctx.store, &run.prefix, &run.run_id, &report).await {
                notice = Some(ctx.ended_notice(&report, &key));
                out.report_key = Some(key);
                out.report = Some(report);
            }
        }
        Err(e) => tracing::warn!("progress of run {} not readable: {e}", ctx.carry.run.run_id),
    }
    release_then_tell(deps, &ctx.store, &locks, &ctx.carry.locks, notice).await;
    Ok(out)
}

/// The operations of the run CloudFormation is still working on (a sibling of the failed
/// stack, a wait past its ceiling); a stack that cannot be read counts as running, so
/// the report says to look before anything is done by hand.
async fn still_running_of(ctx: &Ctx<'_>) -> Vec<InFlight> {
    let Ok(plan) = ctx.plan().await else {
        return ctx.carry.in_flight.clone();
    };
    let mut out = Vec::new();
    for f in &ctx.carry.in_flight {
        let Some(sp) = plan.stacks.iter().find(|s| s.stack == f.stack) else {
            continue;
        };
        let running = match ctx.cfn.describe_stack(&sp.cfn_stack_name).await {
            Ok(Some(d)) => still_running(&d.status),
            Ok(None) => false,
            Err(e) => {
                tracing::warn!("{e}");
                true
            }
        };
        if running {
            out.push(f.clone());
        }
    }
    out
}

/// When no stack of the run was imported, deletes each destination stack this run
/// created whose import failed and which holds nothing (`cdkd_core::export::resume::withdrawable`), so that the record alone owns its
/// resources again and the export can simply be run again (docs/export.md, "Failure (export-abort)"). A stack
/// CloudFormation is still working on, or that cannot be read, is left alone.
async fn withdraw_empty(ctx: &Ctx<'_>, rec: &mut ExportRun, running: &[InFlight]) {
    // A run with a stack imported stays resumable as a whole: nothing of it is deleted.
    if rec.stacks.iter().any(|s| s.stage >= StackStage::Imported) {
        return;
    }
    let run_id = ctx.carry.run.run_id.clone();
    for s in rec.stacks.iter_mut() {
        if s.stage != StackStage::Importing || running.iter().any(|f| f.stack == s.stack) {
            continue;
        }
        let cfn_name = s.cfn_stack_name.clone();
        let Ok(Some(d)) = ctx.cfn.describe_stack(&cfn_name).await else {
            continue;
        };
        let Ok(count) = ctx.cfn.resource_count(&cfn_name).await else {
            continue;
        };
        if !withdrawable(&d.status, &d.tags, &s.stack, &run_id, count) {
            continue;
        }
        match ctx.cfn.delete_stack(&cfn_name).await {
            Ok(()) => {
                s.stage = StackStage::Locked;
                s.withdrawn = true;
                s.import_change_set = None;
                s.stack_id = None;
                rec.log.push(format!(
                    "abort: deleted the empty stack {cfn_name} ({}) the failed import left",
                    d.status
                ));
            }
            Err(e) => tracing::warn!("{e}"),
        }
    }
}
