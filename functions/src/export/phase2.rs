//! `export-phase2` (docs/export.md §10.2): after the import, the pre-deletes of the
//! IMPORT-unsupported rows phase 2 re-creates (each deleted through its deleter; gone
//! already counts as deleted; any other failure stops the run), then the UPDATE change
//! set with the full template: the Outputs the import could not add, the Custom
//! Resources and the re-created rows. Skipped only when there is none of that.

use cdkd_core::export::execute::{Pending, StackStage};
use cdkd_core::export::phases::{parent_phase2_template, phase2_needed, phase2_template, Phase};
use cdkd_core::export::plain::shown;
use cdkd_core::export::plan::StackPlan;
use cdkd_deleters::request::{DeleteOptions, RunContext};
use cdkd_deleters::{DeleteProgress, DeleteRequest};
use serde_json::Value;

use super::carry::{Carry, Ctx};
use crate::deps::Deps;
use crate::error::{names, StepError};

pub async fn run(carry: Carry, deps: &Deps) -> Result<Carry, StepError> {
    let ctx = Ctx::open(carry, deps).await?;
    let plan = ctx.stack_plan().await?;
    let cfn_name = plan.cfn_stack_name.as_str();
    let template = ctx.template(&plan).await?;
    pre_delete(&ctx, &plan).await?;
    if !phase2_needed(&template, &plan) {
        let line = format!(
            "phase2: {} has nothing to do (no Outputs, nothing left out of phase 1)",
            plan.cfn_stack_name
        );
        let status = ctx
            .cfn
            .describe_stack(cfn_name)
            .await?
            .map(|d| d.status)
            .unwrap_or_default();
        return ctx.phase_done(Phase::Update, &status, line).await;
    }
    let name = Phase::Update.change_set_name(ctx.carry.started_ms);
    let arn = match ctx.cfn.describe_change_set(cfn_name, &name).await? {
        Some(existing) => existing.arn,
        None => {
            let parameters = ctx.parameters(&template, &plan).await?;
            let rows = ctx
                .progress()
                .await?
                .stacks
                .into_iter()
                .find(|s| s.stack == plan.stack)
                .map(|s| s.adopt_rows)
                .unwrap_or_default();
            let body = if rows.is_empty() {
                phase2_template(&template, &plan)
            } else {
                parent_phase2_template(&template, &plan, &rows)
            };
            let (template_ref, upload) = ctx.deliver(Phase::Update, &plan, &body).await?;
            let mut rec = ctx.progress().await?;
            if let (Some(s), Some(key)) = (rec.stack_mut(&plan.stack), upload) {
                s.uploads.push(key);
                ctx.save(&rec).await?;
            }
            let (arn, _) = ctx
                .create_change_set(
                    &plan,
                    Phase::Update,
                    &name,
                    template_ref,
                    parameters,
                    Vec::new(),
                )
                .await?;
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
    ctx.waiting(Pending::ChangeSet {
        phase: Phase::Update,
        arn,
    })
    .await
}

/// Deletes every recreate row not deleted yet, recording each in the run's record as it
/// goes (a retried step skips what it already deleted).
async fn pre_delete(ctx: &Ctx<'_>, plan: &StackPlan) -> Result<(), StepError> {
    let region = ctx.carry.run.region.clone();
    let registry = ctx.deps.registry(&region, &ctx.carry.run.bucket).await;
    for row in &plan.phase2.recreate {
        let rec = ctx.progress().await?;
        let done = rec
            .stacks
            .iter()
            .find(|s| s.stack == plan.stack)
            .is_some_and(|s| s.pre_deleted.contains(&row.logical_id));
        if done {
            continue;
        }
        let req = DeleteRequest {
            logical_id: row.logical_id.clone(),
            resource_type: row.resource_type.clone(),
            physical_id: row.physical_id.clone(),
            properties: Value::Object(row.properties.clone()),
            attributes: Value::Null,
            provisioned_by: None,
            region: region.clone(),
            attempt: 1,
            run: RunContext {
                run_id: ctx.carry.run.run_id.clone(),
                stack: plan.stack.clone(),
                state_bucket: ctx.carry.run.bucket.clone(),
                state_prefix: ctx.carry.run.prefix.clone(),
            },
            options: DeleteOptions::default(),
        };
        let failed = |why: String| {
            StepError::new(
                names::PRE_DELETE_FAILED,
                format!(
                    "export of {}: phase 1 succeeded, but the pre-delete of {} ({}, {}) before phase 2 failed: {why}; {} resource(s) were to be re-created",
                    shown(&plan.stack),
                    shown(&row.logical_id),
                    shown(&row.resource_type),
                    shown(&row.physical_id),
                    plan.phase2.recreate.len()
                ),
            )
        };
        let mut progress = registry.start(&req).await.map_err(|e| failed(e.message))?;
        for _ in 0..PRE_DELETE_POLLS {
            match progress {
                DeleteProgress::InFlight { handle, .. } => {
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                    progress = registry
                        .poll(&req, &handle)
                        .await
                        .map_err(|e| failed(e.message))?;
                }
                _ => break,
            }
        }
        if matches!(progress, DeleteProgress::InFlight { .. }) {
            return Err(failed("the delete did not finish in time".into()));
        }
        let mut rec = ctx.progress().await?;
        if let Some(s) = rec.stack_mut(&plan.stack) {
            s.pre_deleted.push(row.logical_id.clone());
            s.stage = StackStage::PreDeleted;
        }
        rec.log.push(format!(
            "phase2: pre-deleted {} ({})",
            row.logical_id, row.resource_type
        ));
        ctx.save(&rec).await?;
    }
    Ok(())
}

/// Polls of a pre-delete still running, a second apart, within one step.
const PRE_DELETE_POLLS: u32 = 60;
