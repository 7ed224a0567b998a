//! `export-adopt`: phase 1B (docs/export.md, "Nested stacks (export-flip, export-adopt)"). The parent, imported in 1A, adopts
//! each child stack through an IMPORT change set: the parent's phase-1 template plus one
//! `AWS::CloudFormation::Stack` row per child with `DeletionPolicy: Retain`, the child's
//! processed template (`GetTemplate`, uploaded to the run's folder) by URL and the
//! child's tags forwarded; each child named by its `StackId`. A retried step finds the
//! change set it created.

use cdkd_core::export::execute::Pending;
use cdkd_core::export::phases::{adopt_template, AdoptRow, Phase};
use cdkd_core::export::plain::shown;
use cdkd_core::export::template::NESTED_STACK;
use serde_json::{Map, Value};

use super::carry::{Carry, Ctx, Fence};
use crate::deps::Deps;
use crate::error::{names, StepError};
use crate::runs;

pub async fn run(carry: Carry, deps: &Deps) -> Result<Carry, StepError> {
    // The adoption nests every child's stack into the parent: every lock is renewed.
    let ctx = Ctx::fenced(carry, deps, Fence::All).await?;
    let plan = ctx.stack_plan().await?;
    let cfn_name = plan.cfn_stack_name.as_str();
    let name = Phase::Adopt.change_set_name(ctx.carry.started_ms);
    if let Some(existing) = ctx.cfn.describe_change_set(cfn_name, &name).await? {
        return ctx
            .waiting(Pending::ChangeSet {
                phase: Phase::Adopt,
                arn: existing.arn,
            })
            .await;
    }
    let rec = ctx.progress().await?;
    let mut rows = Vec::new();
    let mut uploaded = Vec::new();
    for n in &plan.nested {
        let child = rec
            .stacks
            .iter()
            .find(|s| s.stack == n.child_stack)
            .ok_or_else(|| {
                StepError::bad_input(format!(
                    "the run's record has no nested stack {}",
                    n.child_stack
                ))
            })?;
        let described = ctx
            .cfn
            .describe_stack(&child.cfn_stack_name)
            .await?
            .ok_or_else(|| {
                StepError::new(
                    names::CHANGE_SET_FAILED,
                    format!(
                        "the imported nested stack {} is gone",
                        shown(&child.cfn_stack_name)
                    ),
                )
            })?;
        let body = ctx.cfn.processed_template(&child.cfn_stack_name).await?;
        let key = format!(
            "{}/changesets/{}-processed.json",
            runs::run_prefix(&ctx.carry.run.prefix, &ctx.carry.run.run_id),
            child.cfn_stack_name
        );
        ctx.store.put_raw(&key, body.into_bytes()).await?;
        uploaded.push(key.clone());
        rows.push(AdoptRow {
            logical_id: n.logical_id.clone(),
            stack_id: described.stack_id,
            template_url: ctx.object_url(&key).await,
            tags: described.tags,
        });
    }
    let template = ctx.template(&plan).await?;
    let parameters = ctx.parameters(&template, &plan).await?;
    let body = adopt_template(&template, &plan, &rows);
    // Over the inline limit (a parent adopting many children), the template is uploaded
    // and named by URL, as phases 1 and 2 do.
    let (template_ref, upload) = ctx.deliver(Phase::Adopt, &plan, &body).await?;
    uploaded.extend(upload);
    let resources: Vec<(String, String, Map<String, Value>)> = rows
        .iter()
        .map(|r| {
            let mut id = Map::new();
            id.insert("StackId".into(), Value::String(r.stack_id.clone()));
            (NESTED_STACK.to_string(), r.logical_id.clone(), id)
        })
        .collect();
    let mut rec = ctx.progress().await?;
    if let Some(s) = rec.stack_mut(&plan.stack) {
        s.adopt_rows = rows;
        // The processed templates are transient uploads: the cleanup or the abort
        // deletes them (docs/export.md, "Phases (export-import, export-execute, export-phase2)"). A retried step writes the same keys.
        for key in uploaded {
            if !s.uploads.contains(&key) {
                s.uploads.push(key);
            }
        }
    }
    ctx.save(&rec).await?;
    let (arn, _) = ctx
        .create_change_set(
            &plan,
            Phase::Adopt,
            &name,
            template_ref,
            parameters,
            resources,
        )
        .await?;
    let mut rec = ctx.progress().await?;
    rec.log.push(format!(
        "adopt: created change set {name} on {cfn_name} ({} nested stack(s))",
        plan.nested.len()
    ));
    ctx.save(&rec).await?;
    ctx.waiting(Pending::ChangeSet {
        phase: Phase::Adopt,
        arn,
    })
    .await
}
