//! `export-cleanup` (docs/export.md §10.4): once CloudFormation holds the stack, delete
//! its cdkd record (the region key, the legacy key when it is this region's, the
//! rollback journal), drop its entries from the exports index, delete the transient
//! template uploads, release the locks and write `report.json`.

use cdkd_core::export::execute::StackStage;
use cdkd_core::export::plain::shown;
use cdkd_core::export::report::{migrated, ExportReport};
use serde::{Deserialize, Serialize};

use super::carry::{Carry, Ctx};
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
    let ctx = Ctx::open(carry, deps).await?;
    let mut rec = ctx.progress().await?;
    let mut warnings = Vec::new();
    for s in rec.stacks.iter_mut().rev() {
        if s.stage < StackStage::Migrated {
            return Err(StepError::bad_input(format!(
                "export-cleanup: stack {} has not migrated ({:?}); no record was deleted",
                shown(&s.stack),
                s.stage
            )));
        }
        if s.stage == StackStage::Migrated {
            ctx.store.delete_state(&s.stack, &s.region).await?;
            ctx.store
                .remove_from_exports_index(&s.stack, &s.region)
                .await;
            s.deleted_keys = vec![cdkd_core::keys::state_key(
                &ctx.store.prefix,
                &s.stack,
                &s.region,
            )];
            s.stage = StackStage::Cleaned;
        }
        for key in std::mem::take(&mut s.uploads) {
            if let Err(e) = ctx.store.delete_object(&key).await {
                warnings.push(format!(
                    "the transient template s3://{}/{key} was not deleted: {e}",
                    ctx.store.bucket
                ));
            }
        }
    }
    rec.finished_ms = Some(ctx.now());
    rec.log
        .push("cleanup: records deleted, locks released".into());
    ctx.save(&rec).await?;
    crate::held::release_all(
        &ctx.deps.locks(&ctx.carry.run.bucket, &ctx.carry.run.prefix),
        &ctx.carry.locks,
    )
    .await;
    let report = migrated(&rec, &warnings);
    let key = runs::report_key(&ctx.carry.run.prefix, &ctx.carry.run.run_id);
    runs::write(&ctx.store, &key, &report).await?;
    Ok(CleanupOutput {
        report_key: key,
        report,
    })
}
