//! `export-flip` (docs/export.md, "Nested stacks (export-flip, export-adopt)"): a child still in IMPORT_COMPLETE cannot be
//! adopted, so a tag-only `UpdateStack` (the previous template and parameter values, the
//! tag `cdkd:nested-export-flip` added) moves it to UPDATE_COMPLETE. The tag is what
//! phase 1B forwards into the parent's row. A retried flip that finds nothing to update
//! is done.

use cdkd_core::export::execute::Pending;
use cdkd_core::export::phases::{Phase, CAPABILITIES, FLIP_TAG};
use cdkd_core::export::plain::shown;

use super::carry::{Carry, Ctx};
use crate::deps::Deps;
use crate::error::{names, StepError};

pub async fn run(carry: Carry, deps: &Deps) -> Result<Carry, StepError> {
    let ctx = Ctx::open(carry, deps).await?;
    let plan = ctx.stack_plan().await?;
    let cfn_name = plan.cfn_stack_name.as_str();
    let stack = ctx.cfn.describe_stack(cfn_name).await?.ok_or_else(|| {
        StepError::new(
            names::CHANGE_SET_FAILED,
            format!("CloudFormation stack {} is gone", shown(cfn_name)),
        )
    })?;
    let mut tags: Vec<(String, String)> = stack
        .tags
        .into_iter()
        .filter(|(k, _)| k != FLIP_TAG)
        .collect();
    tags.push((
        FLIP_TAG.to_string(),
        ctx.carry.run.run_id.as_str().to_owned(),
    ));
    let role = ctx.role_arn();
    let updated = ctx
        .cfn
        .update_tags(
            cfn_name,
            &stack.parameters,
            &tags,
            &CAPABILITIES,
            role.as_deref(),
        )
        .await?;
    if !updated {
        let line = format!("flip: {cfn_name} needed no update ({})", stack.status);
        return ctx.phase_done(Phase::Flip, &stack.status, line).await;
    }
    let mut rec = ctx.progress().await?;
    rec.log.push(format!("flip: tag-only update of {cfn_name}"));
    ctx.save(&rec).await?;
    ctx.waiting(Pending::Stack { phase: Phase::Flip }).await
}
