//! `export-phase2` (docs/export.md, "Phases (export-import, export-execute, export-phase2)"): after the import, the pre-deletes of the
//! IMPORT-unsupported rows phase 2 re-creates (each deleted through its deleter; gone
//! already counts as deleted; any other failure stops the run), then the UPDATE change
//! set with the full template: the Outputs the import could not add, the Custom
//! Resources and the re-created rows. Skipped only when there is none of that.

use std::time::{Duration, Instant};

use cdkd_core::export::execute::{pre_delete_in_time, Pending, PreDeleting, StackStage};
use cdkd_core::export::phases::{parent_phase2_template, phase2_needed, phase2_template, Phase};
use cdkd_core::export::plain::shown;
use cdkd_core::export::plan::{RecreateRow, StackPlan};
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
    if !pre_delete(&ctx, &plan).await? {
        // The step's budget is spent with deletes still running: the next invocation
        // of phase 2 polls them (docs/export.md, "Phases (export-import, export-execute, export-phase2)", "Pre-deletes").
        let full = ctx.plan().await?;
        let mut rec = ctx.progress().await?;
        rec.log.push(format!(
            "phase2: pre-deletes of {cfn_name} still running; phase 2 goes on in its next invocation"
        ));
        ctx.save(&rec).await?;
        return ctx.route(&full, &rec);
    }
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

/// What became of one pre-delete in one look.
enum Look {
    /// Deleted (or found gone).
    Done,
    InFlight(PreDeleting),
    Failed(String),
}

/// The pre-deletes of `plan`'s recreate rows (docs/export.md, "Phases (export-import, export-execute, export-phase2)", "Pre-deletes"): at
/// most `budgets.max_parallel` at once, each polled every second, until every row is
/// deleted or the step's budget (`budgets.step_soft`) is spent. What finished and the
/// handles of what is still running are saved in the run's record each second something
/// changed, so a retried or next invocation polls a started delete instead of starting
/// it again and skips what is deleted. `Ok(true)`: every row is deleted; `Ok(false)`:
/// some still run, for the next invocation; `Err` for the first row (in the plan's
/// order) that failed or outlived
/// [`cdkd_core::export::execute::PRE_DELETE_CEILING_MS`].
async fn pre_delete(ctx: &Ctx<'_>, plan: &StackPlan) -> Result<bool, StepError> {
    let rows = &plan.phase2.recreate;
    if rows.is_empty() {
        return Ok(true);
    }
    let deadline = Instant::now() + ctx.deps.budgets.step_soft;
    let parallel = ctx.deps.budgets.max_parallel.max(1);
    let region = ctx.carry.run.region.clone();
    let registry = ctx.deps.registry(&region, &ctx.carry.run.bucket).await;
    let rec = ctx.progress().await?;
    let (deleted, mut running): (Vec<String>, Vec<PreDeleting>) = rec
        .stacks
        .iter()
        .find(|s| s.stack == plan.stack)
        .map(|s| (s.pre_deleted.clone(), s.pre_deleting.clone()))
        .unwrap_or_default();
    let mut waiting: std::collections::VecDeque<_> = rows
        .iter()
        .filter(|r| !deleted.contains(&r.logical_id))
        .filter(|r| !running.iter().any(|p| p.logical_id == r.logical_id))
        .collect();
    running.retain(|p| rows.iter().any(|r| r.logical_id == p.logical_id));
    let request = |row: &RecreateRow| request_of(ctx, plan, &region, row);
    let row_of = |id: &str| rows.iter().find(|r| r.logical_id == id);
    loop {
        // Look at the deletes running (side by side), then start what fits beside those
        // still running (side by side too).
        let polled = futures::future::join_all(
            running
                .iter()
                .filter_map(|p| row_of(&p.logical_id).map(|row| (p, request(row))))
                .map(|(p, req)| {
                    let registry = &registry;
                    async move {
                        let look = if !pre_delete_in_time(p.started_ms, ctx.now()) {
                            Look::Failed("the delete did not finish in time".into())
                        } else {
                            match registry.poll(&req, &p.handle).await {
                                Ok(progress) => look(&req, progress, p.started_ms),
                                Err(e) => Look::Failed(e.message),
                            }
                        };
                        (req.logical_id, look)
                    }
                }),
        )
        .await;
        let still = running.len()
            - polled
                .iter()
                .filter(|(_, l)| !matches!(l, Look::InFlight(_)))
                .count();
        let stopping = polled.iter().any(|(_, l)| matches!(l, Look::Failed(_)));
        let mut starts = Vec::new();
        while !stopping && still + starts.len() < parallel && Instant::now() < deadline {
            let Some(row) = waiting.pop_front() else {
                break;
            };
            starts.push(row);
        }
        let started = futures::future::join_all(starts.iter().map(|row| {
            let req = request(row);
            let registry = &registry;
            async move {
                let now = ctx.now();
                let look = match registry.start(&req).await {
                    Ok(p) => look(&req, p, now),
                    Err(e) => Look::Failed(e.message),
                };
                (req.logical_id, look)
            }
        }))
        .await;
        let mut changed = !started.is_empty();
        let Sorted { finished, failed } =
            sort_looks(rows, polled.into_iter().chain(started), &mut running);
        changed |= !finished.is_empty();
        if changed {
            save_pre_deletes(ctx, plan, &finished, &running).await?;
        }
        if let Some((id, why)) = failed {
            return Err(pre_delete_failed(plan, row_of(&id), why));
        }
        if running.is_empty() && waiting.is_empty() {
            return Ok(true);
        }
        if Instant::now() + PRE_DELETE_POLL >= deadline {
            if !changed {
                save_pre_deletes(ctx, plan, &[], &running).await?;
            }
            return Ok(false);
        }
        if !running.is_empty() {
            tokio::time::sleep(PRE_DELETE_POLL).await;
        }
    }
}

/// The delete request of recreate row `row` of `plan`, in `region`.
fn request_of(ctx: &Ctx<'_>, plan: &StackPlan, region: &str, row: &RecreateRow) -> DeleteRequest {
    DeleteRequest {
        logical_id: row.logical_id.clone(),
        resource_type: row.resource_type.clone(),
        physical_id: row.physical_id.clone(),
        properties: Value::Object(row.properties.clone()),
        attributes: Value::Null,
        provisioned_by: None,
        region: region.to_string(),
        attempt: 1,
        run: RunContext {
            run_id: ctx.carry.run.run_id.as_str().to_owned(),
            stack: plan.stack.clone(),
            state_bucket: ctx.carry.run.bucket.clone(),
            state_prefix: ctx.carry.run.prefix.clone(),
        },
        options: DeleteOptions::default(),
    }
}

/// What one round of looks says: the rows now deleted, and the first failure in the
/// plan's order (its row and why).
struct Sorted {
    finished: Vec<String>,
    failed: Option<(String, String)>,
}

/// Sorts one round of looks: a deleted row leaves `running`, a delete still in flight
/// takes (or keeps) its place there with its new handle, a failed one leaves it too.
fn sort_looks(
    rows: &[RecreateRow],
    looks: impl Iterator<Item = (String, Look)>,
    running: &mut Vec<PreDeleting>,
) -> Sorted {
    let mut finished = Vec::new();
    let mut failed: Option<(String, String)> = None;
    for (id, look) in looks {
        match look {
            Look::Done => {
                running.retain(|p| p.logical_id != id);
                finished.push(id);
            }
            Look::InFlight(p) => {
                if let Some(slot) = running.iter_mut().find(|r| r.logical_id == id) {
                    *slot = p;
                } else {
                    running.push(p);
                }
            }
            Look::Failed(why) => {
                running.retain(|p| p.logical_id != id);
                let earlier = failed
                    .as_ref()
                    .is_none_or(|(f, _)| position(rows, &id) < position(rows, f));
                if earlier {
                    failed = Some((id, why));
                }
            }
        }
    }
    Sorted { finished, failed }
}

/// A deleter's answer for `req`, started at `started_ms`.
fn look(req: &DeleteRequest, progress: DeleteProgress, started_ms: i64) -> Look {
    match progress {
        DeleteProgress::InFlight { handle, .. } => Look::InFlight(PreDeleting {
            logical_id: req.logical_id.clone(),
            handle,
            started_ms,
        }),
        _ => Look::Done,
    }
}

fn position(rows: &[RecreateRow], id: &str) -> usize {
    rows.iter()
        .position(|r| r.logical_id == id)
        .unwrap_or(usize::MAX)
}

/// Records the rows `finished` as pre-deleted and `running` as the deletes in flight.
async fn save_pre_deletes(
    ctx: &Ctx<'_>,
    plan: &StackPlan,
    finished: &[String],
    running: &[PreDeleting],
) -> Result<(), StepError> {
    let mut rec = ctx.progress().await?;
    if let Some(s) = rec.stack_mut(&plan.stack) {
        for id in finished {
            if !s.pre_deleted.contains(id) {
                s.pre_deleted.push(id.clone());
            }
        }
        s.pre_deleting = running.to_vec();
        if !s.pre_deleted.is_empty() {
            s.stage = s.stage.max(StackStage::PreDeleted);
        }
    }
    for id in finished {
        let kind = plan
            .phase2
            .recreate
            .iter()
            .find(|r| &r.logical_id == id)
            .map(|r| r.resource_type.as_str())
            .unwrap_or_default();
        rec.log.push(format!("phase2: pre-deleted {id} ({kind})"));
    }
    ctx.save(&rec).await
}

fn pre_delete_failed(plan: &StackPlan, row: Option<&RecreateRow>, why: String) -> StepError {
    let (id, kind, physical) = row
        .map(|r| {
            (
                r.logical_id.as_str(),
                r.resource_type.as_str(),
                r.physical_id.as_str(),
            )
        })
        .unwrap_or_default();
    StepError::new(
        names::PRE_DELETE_FAILED,
        format!(
            "export of {}: phase 1 succeeded, but the pre-delete of {} ({}, {}) before phase 2 failed: {why}; {} resource(s) were to be re-created",
            shown(&plan.stack),
            shown(id),
            shown(kind),
            shown(physical),
            plan.phase2.recreate.len()
        ),
    )
}

/// The pause between two looks at the pre-deletes still running.
const PRE_DELETE_POLL: Duration = Duration::from_secs(1);
