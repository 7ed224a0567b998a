//! `export-import`: phase 1 (docs/export.md, "Phases (export-import, export-execute, export-phase2)"). Submits the IMPORT change set of the
//! stack: only the importable resources, no Outputs, a DeletionPolicy on each, every
//! resource named in `ResourcesToImport` by its identifier. A retried step finds the
//! change set it created (one name per run) instead of creating another.

use cdkd_core::export::execute::{Pending, StackStage};
use cdkd_core::export::phases::{phase1_template, resources_to_import, Phase};
use cdkd_core::export::plain::shown;
use cdkd_core::export::resume::owning_run;

use super::carry::{Carry, Ctx};
use crate::deps::Deps;
use crate::error::StepError;

pub async fn run(carry: Carry, deps: &Deps) -> Result<Carry, StepError> {
    let ctx = Ctx::open(carry, deps).await?;
    let plan = ctx.stack_plan().await?;
    let cfn_name = plan.cfn_stack_name.as_str();
    let name = Phase::Import.change_set_name(ctx.carry.started_ms);

    // A change set exists only on its stack: with no destination stack there is none of
    // this run's to find (a fresh import asks CloudFormation once before creating).
    let existing_stack = ctx.cfn.describe_stack(cfn_name).await?;
    let found = match existing_stack {
        Some(_) => ctx.cfn.describe_change_set(cfn_name, &name).await?,
        None => None,
    };
    let arn = match found {
        Some(existing) => existing.arn,
        None => {
            // The destination must still be absent: the plan checked, but a stack of
            // that name created since would take the import.
            // A stack this run created that holds nothing yet (its failed change set was
            // deleted before the run stopped) takes the new change set.
            let existing = existing_stack;
            let ours = existing.as_ref().is_some_and(|s| {
                s.status == "REVIEW_IN_PROGRESS"
                    && owning_run(&s.tags, &plan.stack).as_deref()
                        == Some(ctx.carry.run.run_id.as_str())
            });
            if let Some(s) = existing.filter(|_| !ours) {
                return Err(StepError::refused(format!(
                    "export of {}: CloudFormation stack {} exists now ({}) and this run did not create it; nothing was submitted. Export to another destination with --cfn-stack-name",
                    shown(&plan.stack),
                    shown(cfn_name),
                    s.status
                )));
            }
            let template = ctx.template(&plan).await?;
            let parameters = ctx.parameters(&template, &plan).await?;
            let body = phase1_template(&template, &plan);
            let (template_ref, upload) = ctx.deliver(Phase::Import, &plan, &body).await?;
            let mut rec = ctx.progress().await?;
            if let (Some(s), Some(key)) = (rec.stack_mut(&plan.stack), upload) {
                s.uploads.push(key);
                ctx.save(&rec).await?;
            }
            let (arn, stack_id) = ctx
                .create_change_set(
                    &plan,
                    Phase::Import,
                    &name,
                    template_ref,
                    parameters,
                    resources_to_import(&plan)
                        .into_iter()
                        .map(|t| (t.resource_type, t.logical_id, t.identifier))
                        .collect(),
                )
                .await?;
            let mut rec = ctx.progress().await?;
            if let Some(s) = rec.stack_mut(&plan.stack) {
                s.stage = StackStage::Importing;
                s.import_change_set = Some(arn.clone());
                s.stack_id = Some(stack_id);
            }
            rec.log
                .push(format!("import: created change set {name} on {cfn_name}"));
            ctx.save(&rec).await?;
            arn
        }
    };
    tracing::info!(stack = %shown(&plan.stack), change_set = %arn, "phase 1: IMPORT change set submitted");
    ctx.waiting(Pending::ChangeSet {
        phase: Phase::Import,
        arn,
    })
    .await
}
