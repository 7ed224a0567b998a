//! The templates and change sets of the execution phases (docs/export.md §10.2): what
//! phase 1 submits (only the importable rows, no Outputs, the identifier overlay, a
//! DeletionPolicy on each), what phase 2 submits (the full template, the overlay on the
//! imported rows), the change set's name, and how a template travels (inline, through
//! an upload, or refused as too large).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::overlay::apply_overlay;
use super::plan::StackPlan;
use super::template::Template;
use crate::text::flatten_str;

/// Largest `TemplateBody` CloudFormation takes (bytes of UTF-8).
pub const TEMPLATE_BODY_MAX: usize = 51_200;
/// Largest template behind a `TemplateURL` (bytes).
pub const TEMPLATE_URL_MAX: usize = 1_048_576;
/// Most resources CloudFormation takes in one stack's template.
pub const MAX_RESOURCES: usize = 500;
/// The capabilities every export change set acknowledges.
pub const CAPABILITIES: [&str; 3] = [
    "CAPABILITY_IAM",
    "CAPABILITY_NAMED_IAM",
    "CAPABILITY_AUTO_EXPAND",
];

/// A phase that submits a change set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Phase {
    /// Phase 1 (flat) / 1A (nested): an IMPORT change set creating the stack.
    Import,
    /// Phase 2: an UPDATE change set with the full template.
    Update,
    /// Phase 1B: an IMPORT change set on an existing parent adopting its children.
    Adopt,
    /// The tag-only update moving a child from IMPORT_COMPLETE to UPDATE_COMPLETE.
    Flip,
}

impl Phase {
    /// CloudFormation's `ChangeSetType`.
    pub fn change_set_type(self) -> &'static str {
        match self {
            Phase::Import | Phase::Adopt => "IMPORT",
            Phase::Update | Phase::Flip => "UPDATE",
        }
    }

    /// The word of the phase's template upload, `changesets/<stack>-<word>.json`: one
    /// per phase, so that phase 1B's upload of a parent never overwrites its phase-1 one
    /// and a child's flip never its phase-2 one.
    pub fn upload_word(self) -> &'static str {
        match self {
            Phase::Import => "import",
            Phase::Update => "update",
            Phase::Adopt => "adopt",
            Phase::Flip => "flip",
        }
    }

    /// The label messages use.
    pub fn label(self) -> &'static str {
        match self {
            Phase::Import => "phase 1 (IMPORT)",
            Phase::Update => "phase 2 (UPDATE)",
            Phase::Adopt => "phase 1B (adopting the nested stacks)",
            Phase::Flip => "the flip (tag-only update)",
        }
    }

    /// The change set's name: one per run and phase (`cdkd-migrate-<ms>`,
    /// `cdkd-phase2-<ms>`, `<ms>` the run's start), so a retried step finds the change
    /// set it created instead of creating another.
    pub fn change_set_name(self, run_started_ms: i64) -> String {
        match self {
            Phase::Import => format!("cdkd-migrate-{run_started_ms}"),
            Phase::Update => format!("cdkd-phase2-{run_started_ms}"),
            Phase::Adopt => format!("cdkd-adopt-{run_started_ms}"),
            Phase::Flip => format!("cdkd-flip-{run_started_ms}"),
        }
    }
}

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

/// The phase-1 template (docs/export.md §10.2): only the import rows' resources, no
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
    TooLarge(String),
}

/// Inline up to 51,200 bytes, an upload up to 1 MB, else a refusal naming the
/// phase and its largest resources by logical id and type: up to ten whose Properties
/// serialize to 4,096 characters or more (largest first), else the three largest.
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
    let mut all: Vec<(usize, &str, &str)> = template
        .get("Resources")
        .and_then(Value::as_object)
        .map(|r| {
            r.iter()
                .map(|(id, v)| {
                    let n = v
                        .get("Properties")
                        .map(|p| p.to_string().len())
                        .unwrap_or(0);
                    let ty = v.get("Type").and_then(Value::as_str).unwrap_or("no Type");
                    (n, id.as_str(), ty)
                })
                .collect()
        })
        .unwrap_or_default();
    all.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    let big = all.iter().filter(|(n, _, _)| *n >= 4096).count();
    let shown_count = if big > 0 {
        big.min(10)
    } else {
        all.len().min(3)
    };
    let mut named: Vec<String> = all
        .iter()
        .take(shown_count)
        .map(|(n, id, ty)| format!("{} ({}, {n} characters)", flatten_str(id), flatten_str(ty)))
        .collect();
    if big > 10 {
        named.push(format!("+{} more", big - 10));
    }
    let largest = if named.is_empty() {
        String::new()
    } else {
        format!("; the largest Properties: {}", named.join(", "))
    };
    Delivery::TooLarge(format!(
        "the {} template of stack {} is {} bytes, over CloudFormation's 1,048,576{largest}. Move inline Lambda code to assets, or split the stack into nested stacks, then export",
        phase.label(),
        flatten_str(cfn_stack_name),
        body.len()
    ))
}

/// The template-size refusal of a stack's plan, before any lock (docs/export.md §7): more
/// than 500 resources in its full template, or its phase-1 or phase-2 template over
/// 1,048,576 bytes, as the change set would send it.
pub fn size_refusal(template: &Template, plan: &StackPlan) -> Option<String> {
    let count = phase2_template(template, plan)
        .get("Resources")
        .and_then(Value::as_object)
        .map_or(0, Map::len);
    if count > MAX_RESOURCES {
        return Some(format!(
            "the template of stack {} declares {count} resources; CloudFormation takes at most {MAX_RESOURCES} in one stack, so its change sets would be refused. Move resources into nested stacks (or another stack) with cdkd, then export; nothing was locked or submitted",
            flatten_str(&plan.stack)
        ));
    }
    for (phase, body) in [
        (Phase::Import, phase1_template(template, plan)),
        (Phase::Update, phase2_template(template, plan)),
    ] {
        let text = serde_json::to_string(&body).unwrap_or_default();
        if let Delivery::TooLarge(why) = delivery(phase, &plan.cfn_stack_name, &text, &body) {
            return Some(format!("{why}; nothing was locked or submitted"));
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

/// The row written for an adopted child (docs/export.md §10.6): every property the
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
