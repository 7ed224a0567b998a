//! Planning an export (docs/export.md, "Warnings and printing" and "The lock (export-lock)"): the walk over a tree's records and
//! templates, what the step must gather ([`plan_needs`]), and the plan made from what it
//! gathered ([`plan_tree`]). The plan's data is the `plan` module's; the size rule each
//! stack's plan meets is `phases::size_refusal`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::blocked::{BlockReason, StageError};
use super::classify::{self, Category, ClassifyOptions};
use super::drift::{self, TemplateSource};
use super::iam::{self, CheckVerdict};
use super::identifier;
use super::identifier::Resolved;
use super::names::{self, Destination};
use super::overlay;
use super::params::{self, ParentContext, SsmRead, StackParams};
use super::plan::{
    BlockedRow, Gathered, ImportRow, NestedRow, Plan, PlanNeeds, PlanOptions, PlanParameter,
    PlanRefusal, PreDeleteAction, PreDeleteRow, RecreateRow, StackInput, StackPlan, TreeInput,
    TypedRow,
};
use super::records::{self, Row};
use super::refusal::ExportRefusal;
use super::registry;
use super::sg;
use super::template::NESTED_STACK;
use super::unmanaged;
use super::warning::PlanWarning;
use crate::keys::child_stack_name;

/// The shared walk: names, the damaged-record checks and the parameter pre-pass.
struct Walk<'a> {
    /// Root first, parents before children.
    order: Vec<Node<'a>>,
    needed_ssm: BTreeSet<String>,
    warnings: Vec<PlanWarning>,
}

struct Node<'a> {
    input: &'a StackInput,
    parent: Option<usize>,
    cfn_name: String,
    params: StackParams,
    nested: Vec<(String, String)>,
    /// The parent row's `Tags`, resolved (a nested child).
    tags: Vec<(String, String)>,
}

/// Nested rows whose state row is a nested stack: `(logicalId, child cdkd name)`. The
/// template and the record must agree; a child the record does not name is left to the
/// plan, which blocks the row. The export-plan step loads exactly these children.
pub fn nested_children(s: &StackInput) -> Vec<(String, String)> {
    s.template
        .nested_stacks()
        .into_iter()
        .filter(|r| {
            Row::get(&s.record, r.logical_id).and_then(|row| row.resource_type())
                == Some(NESTED_STACK)
        })
        .map(|r| {
            (
                r.logical_id.to_string(),
                child_stack_name(&s.stack, r.logical_id),
            )
        })
        .collect()
}

fn walk<'a>(
    input: &'a TreeInput,
    opts: &PlanOptions,
    ssm: &BTreeMap<String, SsmRead>,
    with_children: bool,
) -> Result<Walk<'a>, PlanRefusal> {
    let root = &input.root;
    let no_overrides = BTreeMap::new();
    let root_cfn = names::cfn_name(
        &root.stack,
        true,
        opts.cfn_stack_name.as_deref(),
        &no_overrides,
    )
    .map_err(PlanRefusal::from)?;
    records::check_exportable(&root.record, &root.stack, root.region.as_deref())
        .map_err(|e| PlanRefusal::from(ExportRefusal::Damaged(e)))?;
    let overrides = params::parse_parameter_tokens(&opts.parameters).map_err(PlanRefusal::from)?;
    let root_params =
        params::resolve_root(&root.template, &overrides).map_err(PlanRefusal::from)?;
    let mut w = Walk {
        order: vec![Node {
            input: root,
            parent: None,
            cfn_name: root_cfn,
            params: root_params,
            nested: nested_children(root),
            tags: Vec::new(),
        }],
        needed_ssm: BTreeSet::new(),
        warnings: Vec::new(),
    };
    if !with_children || w.order[0].nested.is_empty() {
        return Ok(w);
    }
    let child_names =
        names::parse_child_overrides(&opts.cfn_child_stack_names).map_err(PlanRefusal::from)?;
    // Load every child and check its shape before any child is planned.
    let mut i = 0;
    while i < w.order.len() {
        for (_, child) in w.order[i].nested.clone() {
            let Some(c) = input.children.get(&child) else {
                let region = root.region.as_deref().unwrap_or("");
                return Err(ExportRefusal::ChildWithoutRecord {
                    key: crate::keys::state_key(&opts.state_prefix, &child, region),
                    child,
                }
                .into());
            };
            if c.region != root.region {
                return Err(ExportRefusal::ChildInOtherRegion {
                    child,
                    region: c.region.clone(),
                    root: root.stack.clone(),
                    root_region: root.region.clone(),
                }
                .into());
            }
            records::check_exportable(&c.record, &c.stack, c.region.as_deref())
                .map_err(|e| PlanRefusal::from(ExportRefusal::Damaged(e)))?;
            if c.record.parent_link().is_none() {
                return Err(ExportRefusal::ChildWithoutParentLink { child }.into());
            }
            let cfn =
                names::cfn_name(&child, false, None, &child_names).map_err(PlanRefusal::from)?;
            w.order.push(Node {
                input: c,
                parent: Some(i),
                cfn_name: cfn,
                params: StackParams::default(),
                nested: nested_children(c),
                tags: Vec::new(),
            });
        }
        i += 1;
    }
    // Parameters, root first.
    for idx in 1..w.order.len() {
        let p = w.order[idx].parent.unwrap_or(0);
        let (parent, me) = (&w.order[p], &w.order[idx]);
        let lid = me.input.stack.rsplit('~').next().unwrap_or("");
        let row_params = parent
            .input
            .template
            .resource(lid)
            .and_then(|r| r.property("Parameters").cloned());
        let row_tags = parent
            .input
            .template
            .resource(lid)
            .and_then(|r| r.property("Tags").cloned());
        let ctx = ParentContext {
            template: &parent.input.template,
            record: &parent.input.record,
            params: &parent.params,
            region: parent.input.region.as_deref(),
            cfn_stack_name: &parent.cfn_name,
        };
        let sp = params::resolve_child(
            &me.input.stack,
            &me.input.template,
            &ctx,
            row_params.as_ref(),
            ssm,
            opts.dry_run,
            &mut w.needed_ssm,
        )
        .map_err(PlanRefusal::from)?;
        let tags = params::resolve_row_tags(
            &me.input.stack,
            &ctx,
            row_tags.as_ref(),
            ssm,
            opts.dry_run,
            &mut w.needed_ssm,
        )
        .map_err(PlanRefusal::from)?;
        w.warnings
            .extend(sp.warnings.iter().cloned().map(PlanWarning::from));
        w.order[idx].params = sp;
        w.order[idx].tags = tags;
    }
    Ok(w)
}

/// What the step must gather: every distinct registry type of the tree, the security
/// groups to list, the SSM parameters to read, the destination names to describe.
pub fn plan_needs(input: &TreeInput, opts: &PlanOptions) -> Result<PlanNeeds, PlanRefusal> {
    let w = walk(input, opts, &BTreeMap::new(), true)?;
    let mut types = BTreeSet::new();
    let mut tuples = Vec::new();
    for n in &w.order {
        let s = n.input;
        types.extend(
            classify::types_needing_registry(&s.template, &s.record)
                .into_iter()
                .map(str::to_string),
        );
        types.extend(unmanaged::types(&s.template, &s.record));
        for r in s.template.resources() {
            if r.resource_type != identifier::SG_INGRESS {
                continue;
            }
            if let Some(Ok(t)) = Row::get(&s.record, r.logical_id)
                .as_ref()
                .and_then(identifier::sg_lookup_needed)
            {
                tuples.push(t);
            }
        }
    }
    Ok(PlanNeeds {
        types: types.into_iter().collect(),
        security_groups: sg::groups_to_list(&tuples),
        ssm_parameters: w.needed_ssm.into_iter().collect(),
        destinations: w.order.iter().map(|n| n.cfn_name.clone()).collect(),
    })
}

fn plan_one(
    node: &Node<'_>,
    parent: Option<&str>,
    child_cfn: &BTreeMap<String, String>,
    g: &Gathered,
    opts: &PlanOptions,
) -> StackPlan {
    let s = node.input;
    let copts = ClassifyOptions {
        no_recreate_import_unsupported: opts.no_recreate_import_unsupported,
        skip_import_support_preflight: opts.skip_import_support_preflight,
    };
    let mut plan = StackPlan {
        stack: s.stack.clone(),
        region: s.region.clone(),
        cfn_stack_name: node.cfn_name.clone(),
        template_key: s.template_key.clone(),
        parent: parent.map(str::to_string),
        parameters: node
            .params
            .submitted
            .iter()
            .map(|p| PlanParameter {
                key: p.key.clone(),
                value: params::shown_value(p),
                no_echo: p.no_echo,
                source: p.source,
            })
            .collect(),
        unmanaged: unmanaged::plan_rows(&s.template, &s.record, &g.types, &g.security_groups),
        stack_tags: node.tags.clone(),
        ssm_unread: node.params.ssm_unread.clone(),
        record: Some(records::PlannedRecord::of(&s.record, s.etag.as_deref())),
        ..Default::default()
    };
    for c in classify::classify_stack(
        &s.stack,
        &s.template,
        &s.record,
        &g.types,
        &g.security_groups,
        copts,
    ) {
        let tpl_props = s
            .template
            .resource(&c.logical_id)
            .and_then(|r| r.properties().cloned());
        let row = Row::get(&s.record, &c.logical_id);
        let block = |plan: &mut StackPlan, reason: BlockReason| {
            plan.blocked.push(BlockedRow {
                logical_id: c.logical_id.clone(),
                resource_type: c.resource_type.clone(),
                reason,
            })
        };
        match c.category {
            Category::CdkMetadata => {}
            Category::Nested { child_stack } => plan.nested.push(NestedRow {
                logical_id: c.logical_id.clone(),
                cfn_stack_name: child_cfn.get(&child_stack).cloned().unwrap_or_default(),
                child_stack,
            }),
            Category::Create => plan.phase2.create.push(TypedRow {
                logical_id: c.logical_id.clone(),
                resource_type: c.resource_type.clone(),
            }),
            Category::Blocked(reasons) => reasons.into_iter().for_each(|r| block(&mut plan, r)),
            Category::Import(res) => import_row(
                &mut plan,
                &c.logical_id,
                &c.resource_type,
                res,
                tpl_props.as_ref(),
                row,
            ),
            Category::Recreate { physical_id } => {
                let Some(row) = row else { continue };
                let action = match pre_delete_action(
                    &mut plan.warnings,
                    &c.logical_id,
                    &c.resource_type,
                    &physical_id,
                    row,
                    tpl_props.as_ref(),
                    node,
                ) {
                    Ok(action) => action,
                    Err(reason) => {
                        block(&mut plan, reason);
                        continue;
                    }
                };
                plan.phase2.recreate.push(RecreateRow {
                    logical_id: c.logical_id.clone(),
                    resource_type: c.resource_type.clone(),
                    physical_id: physical_id.clone(),
                    properties: row.properties().cloned().unwrap_or_default(),
                });
                plan.phase2.pre_delete.push(PreDeleteRow {
                    logical_id: c.logical_id.clone(),
                    resource_type: c.resource_type.clone(),
                    action,
                });
            }
        }
    }
    plan
}

/// An importable row into the plan: its identifier, the overlay the template gets, and
/// the warnings of the identifier's resolution and of the overlay.
fn import_row(
    plan: &mut StackPlan,
    logical_id: &str,
    resource_type: &str,
    res: Resolved,
    tpl_props: Option<&Map<String, Value>>,
    row: Option<Row<'_>>,
) {
    let overlay: Map<String, Value> = res
        .overlay_fields
        .iter()
        .filter_map(|f| res.identifier.get(f).map(|v| (f.clone(), v.clone())))
        .collect();
    let (_, w) = overlay::apply_overlay(
        logical_id,
        tpl_props.map(|m| Value::Object(m.clone())).as_ref(),
        &res.identifier,
        &res.overlay_fields,
    );
    plan.warnings.extend(
        res.warnings
            .into_iter()
            .map(|warning| PlanWarning::Identifier {
                logical_id: logical_id.to_string(),
                warning,
            }),
    );
    plan.warnings
        .extend(w.into_iter().map(|r| PlanWarning::OverlayScalar {
            logical_id: r.logical_id,
            field: r.field,
            was: r.was,
            value: r.value,
        }));
    plan.import.push(ImportRow {
        logical_id: logical_id.to_string(),
        resource_type: resource_type.to_string(),
        physical_id: row
            .and_then(|r| r.physical_id())
            .unwrap_or_default()
            .to_string(),
        identifier: res.identifier,
        overlay,
    });
}

/// What the pre-delete does to a row phase 2 recreates: detach an IAM policy from the
/// principals it records (checked against the template's), or delete an API Gateway V2
/// stage. `Err` holds why the row is blocked; warnings go to `warnings`.
fn pre_delete_action(
    warnings: &mut Vec<PlanWarning>,
    logical_id: &str,
    resource_type: &str,
    physical_id: &str,
    row: Row<'_>,
    tpl_props: Option<&Map<String, Value>>,
    node: &Node<'_>,
) -> Result<PreDeleteAction, BlockReason> {
    Ok(if resource_type == "AWS::IAM::Policy" {
        match iam::policy_targets(physical_id, row.properties()) {
            Err(e) => return Err(BlockReason::Policy(e)),
            Ok(recorded) => {
                let template = iam::template_principals(tpl_props, &node.params.env);
                match iam::check(&recorded, &template) {
                    CheckVerdict::Mismatch(m) => return Err(BlockReason::PrincipalMismatch(m)),
                    CheckVerdict::Unconfirmed(unconfirmed) => {
                        warnings.push(PlanWarning::PrincipalsUnconfirmed {
                            logical_id: logical_id.to_string(),
                            unconfirmed,
                        })
                    }
                    CheckVerdict::Ok => {}
                }
                PreDeleteAction::DetachPolicy { recorded, template }
            }
        }
    } else {
        match row.property("ApiId") {
            Some(Value::String(a)) if a == super::MASK => {
                return Err(BlockReason::Stage(StageError::MaskedApiId));
            }
            Some(Value::String(a)) if !a.is_empty() => PreDeleteAction::DeleteStage {
                api_id: a.clone(),
                stage_name: physical_id.to_string(),
            },
            _ => return Err(BlockReason::Stage(StageError::NoApiId)),
        }
    })
}

/// Builds the plan (docs/export.md, "Step order" and "Resource identifiers" and "Parameters"). Hard refusals come back as
/// [`PlanRefusal`] in the order the steps would meet them; blocked rows stay in the plan
/// ([`Plan::blocked_refusal`]). A root with blocked rows is planned alone: its children
/// are neither loaded nor planned.
pub fn plan_tree(input: &TreeInput, opts: &PlanOptions, g: &Gathered) -> Result<Plan, PlanRefusal> {
    let root_only = walk(input, opts, &g.ssm, false)?;
    let root = &root_only.order[0];
    if let Some(r) = names::destination_refusal(
        &root.input.stack,
        &root.cfn_name,
        g.destinations
            .get(&root.cfn_name)
            .unwrap_or(&Destination::Absent),
    ) {
        return Err(r.into());
    }
    let source = opts.template_source.unwrap_or(TemplateSource::Synth);
    let drift_lines = drift::drift_warnings(
        &root.input.record,
        &root.input.stack,
        root.input.region.as_deref(),
        &root.input.template,
        source,
    );
    let first = plan_one(root, None, &BTreeMap::new(), g, opts);
    if first.blocked.is_empty() {
        if let Some(r) = super::phases::size_refusal(&root.input.template, &first) {
            return Err(r.into());
        }
    }
    if !first.blocked.is_empty() || first.nested.is_empty() {
        let mut p = first;
        p.warnings.extend(drift_lines);
        let plan = Plan {
            stacks: vec![p],
            warnings: Vec::new(),
        };
        finish(&plan, opts)?;
        return Ok(plan);
    }
    let w = walk(input, opts, &g.ssm, true)?;
    let child_cfn: BTreeMap<String, String> = w
        .order
        .iter()
        .map(|n| (n.input.stack.clone(), n.cfn_name.clone()))
        .collect();
    // Leaf first: depth-first post-order over the parent links.
    let mut kids: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, n) in w.order.iter().enumerate() {
        if let Some(p) = n.parent {
            kids.entry(p).or_default().push(i);
        }
    }
    fn post(i: usize, kids: &BTreeMap<usize, Vec<usize>>, out: &mut Vec<usize>) {
        for &k in kids.get(&i).map(Vec::as_slice).unwrap_or(&[]) {
            post(k, kids, out);
        }
        out.push(i);
    }
    let mut order = Vec::new();
    post(0, &kids, &mut order);
    let mut plan = Plan {
        stacks: Vec::new(),
        warnings: w.warnings.clone(),
    };
    for i in order {
        let n = &w.order[i];
        let parent = n.parent.map(|p| w.order[p].input.stack.as_str());
        let mut sp = plan_one(n, parent, &child_cfn, g, opts);
        if sp.blocked.is_empty() {
            if let Some(r) = super::phases::size_refusal(&n.input.template, &sp) {
                return Err(r.into());
            }
        }
        if i == 0 {
            sp.warnings.extend(drift_lines.iter().cloned());
        }
        plan.stacks.push(sp);
    }
    if plan.blocked_refusal().is_none() {
        for n in &w.order[1..] {
            if let Some(r) = names::destination_refusal(
                &n.input.stack,
                &n.cfn_name,
                g.destinations
                    .get(&n.cfn_name)
                    .unwrap_or(&Destination::Absent),
            ) {
                return Err(r.into());
            }
        }
    }
    finish(&plan, opts)?;
    Ok(plan)
}

/// Tree-wide refusals: a flat stack with nothing importable, then a real run's gates.
fn finish(plan: &Plan, opts: &PlanOptions) -> Result<(), PlanRefusal> {
    if plan.blocked_refusal().is_some() {
        return Ok(());
    }
    let flat = plan.stacks.len() == 1 && plan.stacks[0].nested.is_empty();
    if flat {
        let s = &plan.stacks[0];
        if s.import.is_empty() && !(s.phase2.create.is_empty() && s.phase2.recreate.is_empty()) {
            return Err(ExportRefusal::NoImportableResources {
                stack: s.stack.clone(),
            }
            .into());
        }
    }
    // A dry run's plan keeps its gates for the step to show (`Plan::gates`).
    if opts.dry_run {
        return Ok(());
    }
    match plan
        .gates(opts.leave_unmanaged, opts.include_non_importable)
        .into_iter()
        .next()
    {
        Some(gate) => Err(PlanRefusal::Gate(gate)),
        None => Ok(()),
    }
}

/// Every distinct type a set of stacks needs from the registry (re-exported for the
/// benchmark and the step).
pub fn distinct_types(input: &TreeInput) -> Vec<String> {
    let mut all = vec![&input.root];
    all.extend(input.children.values());
    registry::distinct(
        all.iter()
            .flat_map(|s| classify::types_needing_registry(&s.template, &s.record)),
    )
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
