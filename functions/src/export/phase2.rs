//! `export-phase2` (docs/export.md §10.2): after the import, the UPDATE change set with
//! the full template: the Outputs the import could not add, the Custom Resources and
//! every resource phase 1 left out. Skipped only when there is none of that. IMPORT-
//! unsupported rows that must be recreated are not run yet (the lock step refuses them).

use cdkd_aws::changeset::NewChangeSet;
use cdkd_core::export::execute::{Next, Pending, StackStage};
use cdkd_core::export::phases::{phase2_needed, phase2_template, Phase, CAPABILITIES};
use cdkd_core::export::plain::shown;

use super::carry::{Carry, Ctx};
use crate::deps::Deps;
use crate::error::{names, StepError};

pub async fn run(carry: Carry, deps: &Deps) -> Result<Carry, StepError> {
    let ctx = Ctx::open(carry, deps).await?;
    let plan = ctx.stack_plan().await?;
    let cfn_name = plan.cfn_stack_name.as_str();
    let template = ctx.template(&plan).await?;
    if !phase2_needed(&template, &plan) {
        let mut rec = ctx.progress().await?;
        if let Some(s) = rec.stack_mut(&plan.stack) {
            s.stage = StackStage::Migrated;
        }
        rec.log
            .push("phase2: nothing to do (no Outputs, nothing left out of phase 1)".into());
        ctx.save(&rec).await?;
        return Ok(ctx.then(Next::Cleanup));
    }
    let name = Phase::Update.change_set_name(ctx.carry.started_ms);
    let arn = match ctx.cfn.describe_change_set(cfn_name, &name).await? {
        Some(existing) => existing.arn,
        None => {
            let parameters = ctx.parameters(&template)?;
            let body = phase2_template(&template, &plan);
            let role = ctx.role_arn();
            let (template_ref, upload) = ctx.deliver(Phase::Update, &plan, &body).await?;
            let mut rec = ctx.progress().await?;
            if let (Some(s), Some(key)) = (rec.stack_mut(&plan.stack), upload) {
                s.uploads.push(key);
                ctx.save(&rec).await?;
            }
            let (arn, _) = ctx
                .cfn
                .create_change_set(&NewChangeSet {
                    stack: cfn_name,
                    name: &name,
                    change_set_type: Phase::Update.change_set_type(),
                    template: template_ref,
                    parameters,
                    capabilities: &CAPABILITIES,
                    resources_to_import: Vec::new(),
                    role_arn: role.as_deref(),
                    tags: Vec::new(),
                })
                .await
                .map_err(|e| {
                    StepError::new(
                        names::CHANGE_SET_FAILED,
                        format!(
                            "failed to create the UPDATE change set of {}: {}",
                            shown(cfn_name),
                            e.message
                        ),
                    )
                })?;
            let mut rec = ctx.progress().await?;
            if let Some(s) = rec.stack_mut(&plan.stack) {
                s.stage = StackStage::Updating;
                s.update_change_set = Some(arn.clone());
            }
            rec.log
                .push(format!("phase2: created change set {name} on {cfn_name}"));
            ctx.save(&rec).await?;
            arn
        }
    };
    Ok(ctx.waiting(Pending::ChangeSet {
        phase: Phase::Update,
        arn,
    }))
}
