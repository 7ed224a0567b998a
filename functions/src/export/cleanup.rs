//! `export-cleanup` (docs/export.md, "Cleanup (export-cleanup)"): once CloudFormation holds every stack, delete
//! the cdkd records leaf first (the region key, the legacy key when it is this region's, the
//! rollback journal), drop its entries from the exports index, delete the transient
//! template uploads, release the locks and write `report.json`.

use cdkd_core::export::execute::StackStage;
use cdkd_core::export::plain::shown;
use cdkd_core::export::redo::TemplateLeft;
use cdkd_core::export::report::{migrated, ExportReport};
use serde::{Deserialize, Serialize};

use super::carry::{Carry, Ctx, Fence};
use crate::deps::Deps;
use crate::error::StepError;
use crate::runs;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CleanupOutput {
    pub report_key: String,
    pub report: ExportReport,
}

pub async fn run(carry: Carry, deps: &Deps) -> Result<CleanupOutput, StepError> {
    // The cleanup deletes every stack's record: every lock is renewed first.
    let ctx = match Ctx::fenced(carry.clone(), deps, Fence::All).await {
        Ok(ctx) => ctx,
        Err(e) if e.name == crate::error::names::LOCK_LOST => return retried(carry, deps, e).await,
        Err(e) => return Err(e),
    };
    let mut rec = ctx.progress().await?;
    // Read before any record is deleted: the report names what the plan left unmanaged.
    let plan = ctx.plan().await?;
    let mut warnings = Vec::new();
    if let Some(s) = rec.stacks.iter().find(|s| s.stage < StackStage::Migrated) {
        return Err(StepError::bad_input(format!(
            "export-cleanup: stack {} has not migrated ({:?}); no record was deleted",
            shown(&s.stack),
            s.stage
        )));
    }
    // Leaf first, as the run lists them; a record that cannot be deleted does not stop
    // the others (docs/export.md, "Cleanup (export-cleanup)").
    let mut leftover = Vec::new();
    let mut unpublished = Vec::new();
    for s in rec.stacks.iter_mut() {
        if s.stage == StackStage::Migrated {
            let key = cdkd_core::keys::state_key(&ctx.store.prefix, &s.stack, &s.region);
            match ctx.store.delete_state(&s.stack, &s.region).await {
                Ok(()) => {
                    s.deleted_keys = vec![key];
                    s.stage = StackStage::Cleaned;
                }
                Err(e) => {
                    // The key whose delete failed: the region key, or the legacy key
                    // when the region key was deleted before it.
                    let key = match &e {
                        cdkd_aws::StoreError::Delete { key, .. } => key.clone(),
                        _ => key,
                    };
                    tracing::warn!(
                        "export of {}: the cdkd record s3://{}/{key} of migrated stack {} was not deleted ({e}); deleting the others",
                        shown(&ctx.carry.run.stack),
                        ctx.store.bucket,
                        shown(&s.stack)
                    );
                    leftover.push(format!("s3://{}/{key} ({e})", ctx.store.bucket));
                }
            }
            // The stack migrated, so it no longer publishes its exports through cdkd,
            // whether or not its record could be deleted (`state orphan`, which forgets a
            // leftover record, leaves the index alone). Idempotent on a retry.
            unpublished.push((s.stack.clone(), s.region.clone()));
        }
        warnings.extend(ctx.delete_uploads(s).await);
    }
    // Every migrated stack's entries at once: one read and one write of the index.
    ctx.store
        .remove_stacks_from_exports_index(&unpublished)
        .await;
    if !leftover.is_empty() {
        // Saved first, so the report (the abort's, once the retries are spent) says
        // which records are gone and which must be forgotten by hand.
        rec.log
            .push(format!("cleanup: {} record(s) not deleted", leftover.len()));
        ctx.save(&rec).await?;
        return Err(StepError::transient(format!(
            "export of {}: CloudFormation holds every stack, but these cdkd records could not be deleted: {}",
            shown(&ctx.carry.run.stack),
            leftover.join("; ")
        )));
    }
    rec.finished_ms = Some(ctx.now());
    rec.log
        .push("cleanup: records deleted, locks released".into());
    ctx.save(&rec).await?;
    finish(&ctx, &rec, &plan, &warnings).await
}

/// A cleanup whose lock was lost: the retry of one that saved its end and was stopped
/// while releasing the locks (the root's released, a child's not) finishes it, releasing
/// what is still the run's and writing the report (docs/export.md, "Cleanup (export-cleanup)"). Any other
/// run stops: nothing was deleted by this attempt.
async fn retried(carry: Carry, deps: &Deps, lost: StepError) -> Result<CleanupOutput, StepError> {
    let ctx = Ctx::without_renewal(carry, deps).await;
    let rec = ctx.progress().await?;
    if !rec.cleanup_saved_end() {
        return Err(lost);
    }
    // An attempt that also wrote the report (and failed after it, perhaps before it
    // told it): that report stands, with the warnings only that attempt saw, and is told
    // (once: the marker holds back a second message, docs/notifications.md, "Once per run and kind: at most once").
    let key = runs::report_key(&ctx.carry.run.prefix, &ctx.carry.run.run_id);
    if let Some(report) = runs::read::<ExportReport>(&ctx.store, &key).await? {
        crate::held::release_all(
            &ctx.deps
                .locks(&ctx.carry.run.bucket, &ctx.carry.run.prefix)
                .await,
            &ctx.carry.locks,
        )
        .await;
        let notice = ctx.ended_notice(&report, &key);
        crate::notify::tell(ctx.deps.notify.as_ref(), &ctx.store, &notice).await;
        return Ok(CleanupOutput {
            report_key: key,
            report,
        });
    }
    let plan = ctx.plan().await?;
    finish(&ctx, &rec, &plan, &[]).await
}

/// Releases the run's locks (those still its own), writes `report.json` and tells it.
async fn finish(
    ctx: &Ctx<'_>,
    rec: &cdkd_core::export::execute::ExportRun,
    plan: &cdkd_core::export::plan::Plan,
    warnings: &[TemplateLeft],
) -> Result<CleanupOutput, StepError> {
    crate::held::release_all(
        &ctx.deps
            .locks(&ctx.carry.run.bucket, &ctx.carry.run.prefix)
            .await,
        &ctx.carry.locks,
    )
    .await;
    let report = migrated(rec, plan, warnings);
    let key = runs::report_key(&ctx.carry.run.prefix, &ctx.carry.run.run_id);
    runs::write(&ctx.store, &key, &report).await?;
    let notice = ctx.ended_notice(&report, &key);
    crate::notify::tell(ctx.deps.notify.as_ref(), &ctx.store, &notice).await;
    Ok(CleanupOutput {
        report_key: key,
        report,
    })
}
