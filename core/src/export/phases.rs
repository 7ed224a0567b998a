//! The templates and change sets of the execution phases (docs/export.md, "Phases (export-import, export-execute, export-phase2)"): what
//! phase 1 submits (only the importable rows, no Outputs, the identifier overlay, a
//! DeletionPolicy on each), what phase 2 submits (the full template, the overlay on the
//! imported rows), the change set's name, and how a template travels (inline, through
//! an upload, or refused as too large).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::overlay::apply_overlay;
use super::plan::StackPlan;
use super::refusal::{ExportRefusal, LargePart, SizeWayOut, TemplatePart, TooLarge};
use super::template::Template;

/// Largest `TemplateBody` CloudFormation takes (bytes of UTF-8).
pub const TEMPLATE_BODY_MAX: usize = 51_200;
/// Largest template behind a `TemplateURL` (bytes): CloudFormation's "1 MB" is
/// 1,000,000 bytes ("Template may not exceed 1000000 bytes in size.").
pub const TEMPLATE_URL_MAX: usize = 1_000_000;
/// Most resources CloudFormation takes in one stack's template.
pub const MAX_RESOURCES: usize = 500;
/// The capabilities every export change set acknowledges.
pub const CAPABILITIES: [&str; 3] = [
    "CAPABILITY_IAM",
    "CAPABILITY_NAMED_IAM",
    "CAPABILITY_AUTO_EXPAND",
];

pub use super::phase::Phase;

/// One `ResourcesToImport` entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportTarget {
    pub resource_type: String,
    pub logical_id: String,
    /// Identifier field → value (strings).
    pub identifier: Map<String, Value>,
}

/// The `ResourcesToImport` of a stack's phase 1: one entry per import row.
pub fn resources_to_import(plan: &StackPlan) -> Vec<ImportTarget> {
    plan.import
        .iter()
        .map(|r| ImportTarget {
            resource_type: r.resource_type.clone(),
            logical_id: r.logical_id.clone(),
            identifier: r.identifier.clone(),
        })
        .collect()
}

/// The phase-1 template (docs/export.md, "Phases (export-import, export-execute, export-phase2)"): only the import rows' resources, no
/// `Outputs` (an IMPORT may not add any), the overlay on each kept resource, and
/// `DeletionPolicy: Delete` on each one that declares none (any other value is kept;
/// `UpdateReplacePolicy` is never added). Every other section is kept. The overlay's
/// warnings were the plan's.
pub fn phase1_template(template: &Template, plan: &StackPlan) -> Map<String, Value> {
    let mut body = template.body.clone();
    body.remove("Outputs");
    let mut kept = Map::new();
    let resources = template
        .body
        .get("Resources")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for row in &plan.import {
        let Some(Value::Object(resource)) = resources.get(&row.logical_id) else {
            continue;
        };
        let mut resource = resource.clone();
        overlay_row(&mut resource, &row.logical_id, &row.overlay);
        resource
            .entry("DeletionPolicy")
            .or_insert_with(|| Value::String("Delete".into()));
        kept.insert(row.logical_id.clone(), Value::Object(resource));
    }
    body.insert("Resources".into(), Value::Object(kept));
    body
}

/// The phase-2 template: the full template (Outputs, Custom Resources, recreated rows,
/// metadata) with the overlay applied silently to every import row, so phase 2 never
/// "changes" an identifier field. No DeletionPolicy is added.
pub fn phase2_template(template: &Template, plan: &StackPlan) -> Map<String, Value> {
    let mut body = template.body.clone();
    if let Some(Value::Object(resources)) = body.get_mut("Resources") {
        for row in &plan.import {
            if let Some(Value::Object(resource)) = resources.get_mut(&row.logical_id) {
                overlay_row(resource, &row.logical_id, &row.overlay);
            }
        }
    }
    body
}

fn overlay_row(resource: &mut Map<String, Value>, logical_id: &str, overlay: &Map<String, Value>) {
    if overlay.is_empty() {
        return;
    }
    let fields: Vec<String> = overlay.keys().cloned().collect();
    let (props, _) = apply_overlay(logical_id, resource.get("Properties"), overlay, &fields);
    resource.insert("Properties".into(), Value::Object(props));
}

/// Whether phase 2 has work: resources phase 1 left out (Custom Resources, recreated
/// rows) or Outputs to restore. A stack is never left without its Outputs.
pub fn phase2_needed(template: &Template, plan: &StackPlan) -> bool {
    let has_outputs = template
        .body
        .get("Outputs")
        .and_then(Value::as_object)
        .is_some_and(|o| !o.is_empty());
    has_outputs || !plan.phase2.create.is_empty() || !plan.phase2.recreate.is_empty()
}

/// How a serialized template reaches CloudFormation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// `TemplateBody`.
    Inline,
    /// An upload (the run's `changesets/` folder), then `TemplateURL`.
    Upload,
    /// Over 1 MB: refused before any call.
    TooLarge(TooLarge),
}

/// Inline up to 51,200 bytes, an upload up to 1 MB, else a refusal naming the
/// phase and what makes the template large ([`largest_parts`]), with the way out that
/// fits the largest part.
pub fn delivery(
    phase: Phase,
    cfn_stack_name: &str,
    body: &str,
    template: &Map<String, Value>,
) -> Delivery {
    if body.len() <= TEMPLATE_BODY_MAX {
        return Delivery::Inline;
    }
    if body.len() <= TEMPLATE_URL_MAX {
        return Delivery::Upload;
    }
    let ranked = ranked_parts(template);
    let (parts, more) = largest_parts(&ranked);
    let way_out = match ranked.first() {
        Some((_, Part::Resource { section, .. })) if *section == "Properties" => {
            SizeWayOut::MoveInlineCode
        }
        Some(_) => SizeWayOut::ShrinkParts,
        None => SizeWayOut::Split,
    };
    Delivery::TooLarge(TooLarge {
        phase,
        cfn_stack: cfn_stack_name.to_string(),
        bytes: body.len(),
        parts,
        more,
        way_out,
    })
}

/// A part of a template that [`largest_parts`] ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part<'a> {
    /// One section of a resource (`Properties`, `Metadata`, `DependsOn` ...).
    Resource {
        logical_id: &'a str,
        resource_type: &'a str,
        section: &'a str,
    },
    /// A top-level section other than `Resources` (`Mappings`, `Outputs` ...).
    Template { section: &'a str },
}

/// Parts named by a size refusal: those of at least this many bytes (at most
/// [`PARTS_NAMED`]), else the [`PARTS_WHEN_NONE_LARGE`] largest.
const LARGE_PART: usize = 4096;
const PARTS_NAMED: usize = 10;
const PARTS_WHEN_NONE_LARGE: usize = 3;

/// Every part of `template` with its serialized size in bytes, largest first (ties by
/// name): each section of each resource but its `Type`, and each top-level section but
/// `Resources`.
fn ranked_parts(template: &Map<String, Value>) -> Vec<(usize, Part<'_>)> {
    let size = |v: &Value| serde_json::to_string(v).map(|t| t.len()).unwrap_or(0);
    let mut all: Vec<(usize, Part<'_>)> = Vec::new();
    for (section, v) in template {
        if section != "Resources" {
            all.push((size(v), Part::Template { section }));
        }
    }
    if let Some(resources) = template.get("Resources").and_then(Value::as_object) {
        for (id, r) in resources {
            let Some(r) = r.as_object() else { continue };
            let ty = r.get("Type").and_then(Value::as_str).unwrap_or("no Type");
            for (section, v) in r {
                if section != "Type" {
                    all.push((
                        size(v),
                        Part::Resource {
                            logical_id: id,
                            resource_type: ty,
                            section,
                        },
                    ));
                }
            }
        }
    }
    let key = |p: &Part<'_>| match p {
        Part::Resource {
            logical_id,
            section,
            ..
        } => (0, (*logical_id).to_string(), (*section).to_string()),
        Part::Template { section } => (1, (*section).to_string(), String::new()),
    };
    all.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| key(&a.1).cmp(&key(&b.1))));
    all
}

/// What makes an oversized template large, largest first ([`ranked_parts`]): each
/// resource section (its `Properties`, its `Metadata`, any other) by section, logical id
/// and type, and each top-level section, with its size. Up to ten of at least 4,096
/// bytes (and how many more there are), else the three largest.
fn largest_parts(all: &[(usize, Part<'_>)]) -> (Vec<LargePart>, usize) {
    let big = all.iter().filter(|(n, _)| *n >= LARGE_PART).count();
    let count = if big > 0 {
        big.min(PARTS_NAMED)
    } else {
        all.len().min(PARTS_WHEN_NONE_LARGE)
    };
    let named = all
        .iter()
        .take(count)
        .map(|(n, part)| LargePart {
            bytes: *n,
            part: match part {
                Part::Resource {
                    logical_id,
                    resource_type,
                    section,
                } => TemplatePart::Resource {
                    logical_id: logical_id.to_string(),
                    resource_type: resource_type.to_string(),
                    section: section.to_string(),
                },
                Part::Template { section } => TemplatePart::Template {
                    section: section.to_string(),
                },
            },
        })
        .collect();
    (named, big.saturating_sub(PARTS_NAMED))
}

/// The template-size refusal of a stack's plan, before any lock (docs/export.md, "Change sets"): more
/// than 500 resources in its full template, or its phase-1 or phase-2 template over
/// 1,000,000 bytes, as the change set would send it.
pub fn size_refusal(template: &Template, plan: &StackPlan) -> Option<ExportRefusal> {
    let count = phase2_template(template, plan)
        .get("Resources")
        .and_then(Value::as_object)
        .map_or(0, Map::len);
    if count > MAX_RESOURCES {
        return Some(ExportRefusal::TooManyResources {
            stack: plan.stack.clone(),
            count,
        });
    }
    for (phase, body) in [
        (Phase::Import, phase1_template(template, plan)),
        (Phase::Update, phase2_template(template, plan)),
    ] {
        let text = serde_json::to_string(&body).unwrap_or_default();
        if let Delivery::TooLarge(big) = delivery(phase, &plan.cfn_stack_name, &text, &body) {
            return Some(ExportRefusal::TemplateTooLarge(big));
        }
    }
    None
}

/// The tag the flip adds to a child (phase 1B forwards it into the parent's row).
pub const FLIP_TAG: &str = "cdkd:nested-export-flip";

/// A nested-stack row of a parent, as phase 1B adopts it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdoptRow {
    pub logical_id: String,
    /// The child's CloudFormation stack id (its `ResourceIdentifier.StackId`).
    pub stack_id: String,
    /// Where the child's processed template was uploaded.
    pub template_url: String,
    /// The child's tags, forwarded (CloudFormation requires them to match).
    pub tags: Vec<(String, String)>,
}

/// The row written for an adopted child (docs/export.md, "Nested stacks (export-flip, export-adopt)"): every property the
/// parent template's row declares (its own `Tags`, `NotificationARNs`,
/// `TimeoutInMinutes`, `Parameters`...), with what the migration must rewrite:
/// `TemplateURL` points at the child's processed template, and each tag of the child the
/// row does not declare is added, but the `aws:` ones, which a template may not set
/// (CloudFormation requires the row's tags to match the child's). `DeletionPolicy:
/// Retain`.
fn adopted_row(original: Option<&Value>, row: &AdoptRow) -> Value {
    let mut props = original
        .and_then(|o| o.get("Properties"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    props.insert(
        "TemplateURL".into(),
        Value::String(row.template_url.clone()),
    );
    let mut tags: Vec<Value> = match props.get("Tags") {
        Some(Value::Array(own)) => own.clone(),
        None => Vec::new(),
        // Not a list (the plan refuses that for a child it adopts): left as declared.
        Some(_) => return adopted(props),
    };
    let declared: Vec<String> = tags
        .iter()
        .filter_map(|t| t.get("Key").and_then(Value::as_str).map(str::to_string))
        .collect();
    tags.extend(
        row.tags
            .iter()
            .filter(|(k, _)| !k.starts_with("aws:") && !declared.contains(k))
            .map(|(k, v)| serde_json::json!({"Key": k, "Value": v})),
    );
    if !tags.is_empty() {
        props.insert("Tags".into(), Value::Array(tags));
    }
    adopted(props)
}

fn adopted(props: Map<String, Value>) -> Value {
    serde_json::json!({
        "Type": super::template::NESTED_STACK,
        "DeletionPolicy": "Retain",
        "Properties": props,
    })
}

/// The phase-1B template: the parent's phase-1 template plus each adopted row.
pub fn adopt_template(
    template: &Template,
    plan: &StackPlan,
    rows: &[AdoptRow],
) -> Map<String, Value> {
    spliced(phase1_template(template, plan), template, rows)
}

/// The phase-2 template of a parent: [`phase2_template`] with each adopted row spliced
/// over the original, so phase 2 neither removes nor re-points an adopted child.
pub fn parent_phase2_template(
    template: &Template,
    plan: &StackPlan,
    rows: &[AdoptRow],
) -> Map<String, Value> {
    spliced(phase2_template(template, plan), template, rows)
}

/// `body` with the row of each adopted child written over (or added to) its resources.
fn spliced(
    mut body: Map<String, Value>,
    template: &Template,
    rows: &[AdoptRow],
) -> Map<String, Value> {
    let originals = template.body.get("Resources").and_then(Value::as_object);
    if let Some(Value::Object(resources)) = body.get_mut("Resources") {
        for row in rows {
            let original = originals.and_then(|o| o.get(&row.logical_id));
            resources.insert(row.logical_id.clone(), adopted_row(original, row));
        }
    }
    body
}
