//! docs/state-views.md, "state show <stack>" `state show`: the human block, `--show-nested`, and both `--json` forms.

use serde_json::{Map, Value};

use crate::contention::ContentionContext;
use crate::json::{json_payload, ordered_entries};
use crate::state::NESTED_STACK_TYPE;
use crate::text::{flatten_str, strip};
use crate::time::iso_timestamp_or_none;
use crate::view::contention::{recovery_command, IF_EXPIRED_FLAG, NO_RECOVERY_COMMAND};
use crate::view::state::collate::sort_by_locale;
use crate::view::state::list::{format_ref, RefView};
use crate::view::state::repair::{
    malformed_containers_warning, malformed_resources_warning, read_container, resources_bag,
    Container,
};
use crate::view::state::value::{
    digest_preview, format_dependency_list, format_last_modified, format_value,
};
use crate::view::{join_lines, Rendered};

/// The eight legend lines printed (after one empty line) under a `Skipped outputs:`
/// block, at column zero.
pub const SKIPPED_OUTPUTS_LEGEND: [&str; 8] = [
    "The last deploy could not resolve the keys listed under `Skipped outputs:`",
    "above, and recorded a digest of their template inputs. While the record",
    "binds and a key is still absent from the stored outputs, `cdkd diff`",
    "previews it as ABSENT — no row, no warning. A key whose earlier value",
    "was retained is also stored under `Outputs:` here, where the record does",
    "NOT suppress it: the ordinary rules apply, up to `cdkd diff` suppressing",
    "its whole Outputs section if the key still cannot resolve.",
    "Binding rule: `bindingSkippedOutputs` in src/analyzer/skipped-outputs.ts.",
];

/// The lock as the views see it: `owner`/`operation` already flattened where the lock
/// was read (docs/state-and-lock.md, "lock.json"), `expires_at` raw, and `json` the sanitised lock body that
/// `--json` emits.
#[derive(Debug, Clone, PartialEq)]
pub struct LockView {
    pub owner: String,
    pub operation: Option<String>,
    /// When the lock was taken (raw).
    pub timestamp: Option<Value>,
    pub expires_at: Option<Value>,
    /// When S3 wrote the lock object (`LockInfo::written_ms`).
    pub written_ms: Option<i64>,
    pub json: Value,
}

impl LockView {
    /// The view of a lock as read (docs/state-and-lock.md, "lock.json"): the sanitised owner/operation, the
    /// raw `expiresAt`, and for `--json` the body as read with `owner` (always present,
    /// `""` when absent) and `operation` (when the body had it) replaced by their
    /// flattened values; every other field passes through.
    pub fn from_info(info: &crate::lock::LockInfo) -> Self {
        let mut json = info.raw.clone();
        json.insert("owner".into(), Value::String(info.owner.clone()));
        if let Some(op) = &info.operation {
            json.insert("operation".into(), Value::String(op.clone()));
        }
        LockView {
            owner: info.owner.clone(),
            operation: info.operation.clone(),
            timestamp: info.timestamp.clone(),
            expires_at: info.expires_at.clone(),
            written_ms: info.written_ms,
            json: Value::Object(json),
        }
    }

    /// When the lock expires on S3's clock (docs/state-and-lock.md, "Lock time is S3's").
    pub fn expiry_ms(&self) -> Option<f64> {
        crate::lock::lock_expiry_ms(
            self.timestamp.as_ref(),
            self.expires_at.as_ref(),
            self.written_ms,
        )
    }

    /// Reads `lock.json` bytes with the production lock reader: invalid JSON is an
    /// error, a non-object body is no lock.
    pub fn from_lock_bytes(bytes: &[u8]) -> Result<Option<Self>, crate::lock::LockParseError> {
        Ok(crate::lock::parse_lock(bytes)?
            .as_ref()
            .map(Self::from_info))
    }
}

/// One record to show, with its lock and (under `--show-nested`) its walked children.
/// `stack`/`region` are the names the record was read under (key authority).
#[derive(Debug, Clone)]
pub struct ShowNode {
    pub stack: String,
    pub region: String,
    pub record: Map<String, Value>,
    pub lock: Option<LockView>,
    pub children: Vec<ShowNode>,
}

/// docs/state-views.md, "Human layout" `Lock:` row value, at `now_ms` on S3's clock
/// (docs/state-and-lock.md, "Lock time is S3's").
pub fn lock_summary(lock: Option<&LockView>, now_ms: i64) -> String {
    let Some(lock) = lock else {
        return "unlocked".to_string();
    };
    format!(
        "locked by {}, {}",
        holder(lock),
        crate::view::words::expiry_phrase(lock.expiry_ms(), now_ms)
    )
}

/// `<owner>[ (operation: <op>)]`.
fn holder(lock: &LockView) -> String {
    match lock.operation.as_deref() {
        Some(op) if !op.is_empty() => format!("{} (operation: {op})", lock.owner),
        _ => lock.owner.clone(),
    }
}

/// What stands where a stack's record is missing (docs/state-views.md, "A lock without a record").
#[derive(Debug, Clone, Copy)]
pub enum LoneLock<'a> {
    /// A readable lock.
    Held(&'a LockView),
    /// A lock object whose body is not a lock: why, in one line.
    Malformed(&'a str),
}

/// `state show` of a stack that has no record but whose lock is still there
/// (docs/state-views.md, "A lock without a record"): what holds it, since when, until when, and the command
/// that clears it only when that is safe: the lock has expired, or the object is not a
/// lock at all (no holder can release it). The command carries `--if-expired`, so that
/// run later against a lock taken since, it deletes nothing. `ctx` names the stack, its
/// region (`None`: the legacy lock key) and the flags of the command.
pub fn lock_without_record_text(
    ctx: &ContentionContext<'_>,
    lock: LoneLock<'_>,
    now_ms: i64,
) -> Rendered {
    let at = format_ref(RefView {
        stack: ctx.stack,
        region: ctx.region,
    });
    let mut lines = vec![
        format!("Stack: {}", strip(ctx.stack)),
        format!(
            "  Region: {}",
            ctx.region.map_or("(legacy lock key)".to_string(), strip)
        ),
        "  Record: none (no state.json)".to_string(),
    ];
    let safe = match lock {
        LoneLock::Held(l) => {
            let since = iso_timestamp_or_none(l.timestamp.as_ref())
                .map_or("since an unknown time".to_string(), |t| {
                    format!("since {t}")
                });
            let expiry = crate::view::words::expiry_phrase(l.expiry_ms(), now_ms);
            lines.push(format!(
                "  Lock: locked by {}, {since}, {expiry}",
                holder(l)
            ));
            lines.push(String::new());
            let head = format!(
                "No state record exists for stack {at}, but its lock.json remains: held by {} {since}, {expiry}.",
                holder(l)
            );
            if crate::lock::expired_by(l.expiry_ms(), now_ms) {
                lines.push(format!(
                    "{head} Its holder no longer holds the stack: the next command that takes the lock takes it over."
                ));
                true
            } else {
                lines.push(format!(
                    "{head} Until it is released or expires, every cdkd and cdkd-flow command that takes the lock refuses this stack."
                ));
                lines.push(
                    "Its holder may still be running (a run that deletes a stack's record releases its lock next): wait for it to finish, or for the lock to expire. Once the lock has expired, this command shows the one that clears it."
                        .to_string(),
                );
                false
            }
        }
        LoneLock::Malformed(why) => {
            lines.push(format!("  Lock: unreadable ({})", flatten_str(why)));
            lines.push(String::new());
            lines.push(format!(
                "No state record exists for stack {at}, but its lock.json remains and is not a readable lock ({}). It names no holder that could release it, and every command that takes the lock refuses this stack.",
                flatten_str(why)
            ));
            true
        }
    };
    if safe {
        match recovery_command(ctx) {
            Some(cmd) => lines.push(format!("Clear it with: {cmd} {IF_EXPIRED_FLAG}")),
            None => lines.push(NO_RECOVERY_COMMAND.to_string()),
        }
    }
    Rendered::new(join_lines(&lines), Vec::new())
}

/// `state show --json` of a stack with a lock and no record: `{"state": null, "lock":
/// <lock>}`, or for a body that is not a lock `{"state": null, "lock": null,
/// "lockError": <why>}`.
pub fn lock_without_record_json(lock: LoneLock<'_>) -> Rendered {
    let mut payload = Map::new();
    payload.insert("state".into(), Value::Null);
    match lock {
        LoneLock::Held(l) => {
            payload.insert("lock".into(), l.json.clone());
        }
        LoneLock::Malformed(why) => {
            payload.insert("lock".into(), Value::Null);
            payload.insert("lockError".into(), Value::String(why.to_string()));
        }
    }
    Rendered::new(json_payload(&Value::Object(payload)), Vec::new())
}

/// JavaScript truthiness of a record value.
fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

/// The containers of one record this view renders but cannot read (docs/state-views.md, "Damaged containers (human modes only)"), in
/// the fixed order, each at most once. Entries are only inspected when the bag is a map.
fn repaired_containers(record: &Map<String, Value>) -> Vec<Container> {
    let mut out = Vec::new();
    if read_container(record.get("outputs")).is_repaired() {
        out.push(Container::Outputs);
    }
    if read_container(record.get("skippedOutputs")).is_repaired() {
        out.push(Container::SkippedOutputs);
    }
    if let Some(bag) = resources_bag(record) {
        let (mut attrs, mut props) = (false, false);
        for entry in bag.values() {
            if let Value::Object(e) = entry {
                attrs |= read_container(e.get("attributes")).is_repaired();
                props |= read_container(e.get("properties")).is_repaired();
            }
        }
        if attrs {
            out.push(Container::Attributes);
        }
        if props {
            out.push(Container::Properties);
        }
    }
    out
}

/// Text-mode warnings for one record: the `resources` warning, then the containers one.
fn text_warnings(stack: &str, region: &str, record: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    if resources_bag(record).is_none() {
        out.push(malformed_resources_warning(stack, region));
    }
    let repaired = repaired_containers(record);
    if !repaired.is_empty() {
        out.push(malformed_containers_warning(stack, region, &repaired));
    }
    out
}

/// Whether a record renders the `Skipped outputs:` block.
fn renders_skipped_block(record: &Map<String, Value>) -> bool {
    read_container(record.get("skippedOutputs"))
        .map()
        .is_some_and(|m| !m.is_empty())
}

fn push_map_rows(lines: &mut Vec<String>, label: &str, v: Option<&Value>) {
    let entries = read_container(v)
        .map()
        .map(ordered_entries)
        .unwrap_or_default();
    if entries.is_empty() {
        lines.push(format!("  {label}: (none)"));
    } else {
        lines.push(format!("  {label}:"));
        for (k, v) in entries {
            lines.push(format!("    {}: {}", strip(k), format_value(Some(v))));
        }
    }
}

/// docs/state-views.md, "Human layout" one stack's block (without the `Nested stack:` header), as lines.
pub fn state_block(
    record: &Map<String, Value>,
    lock: Option<&LockView>,
    now_ms: i64,
    with_legend: bool,
) -> Vec<String> {
    let mut lines = Vec::new();
    lines.push(format!("Stack: {}", format_value(record.get("stackName"))));
    if truthy(record.get("region")) {
        lines.push(format!("  Region: {}", format_value(record.get("region"))));
    }
    lines.push(format!(
        "  Version: {}",
        format_value(record.get("version"))
    ));
    lines.push(format!(
        "  Last Modified: {}",
        format_last_modified(record.get("lastModified"))
    ));
    lines.push(format!("  Lock: {}", lock_summary(lock, now_ms)));
    if let Some(parent) = record.get("parentStack") {
        let region = if truthy(record.get("parentRegion")) {
            format!(" ({})", format_value(record.get("parentRegion")))
        } else {
            String::new()
        };
        let logical = match record.get("parentLogicalId") {
            Some(id) => format!(", logical id: {}", format_value(Some(id))),
            None => String::new(),
        };
        lines.push(format!(
            "  Parent: {}{region}{logical}",
            format_value(Some(parent))
        ));
    }

    let outputs = read_container(record.get("outputs"))
        .map()
        .map(ordered_entries)
        .unwrap_or_default();
    if !outputs.is_empty() {
        lines.push(String::new());
        lines.push("Outputs:".to_string());
        for (k, v) in outputs {
            lines.push(format!("  {}: {}", strip(k), format_value(Some(v))));
        }
    }

    if renders_skipped_block(record) {
        let mut skipped = read_container(record.get("skippedOutputs"))
            .map()
            .map(ordered_entries)
            .unwrap_or_default();
        sort_by_locale(&mut skipped);
        lines.push(String::new());
        lines.push("Skipped outputs:".to_string());
        for (k, digest) in skipped {
            lines.push(format!("  {}: {}", strip(k), digest_preview(digest)));
        }
        if with_legend {
            push_legend(&mut lines);
        }
    }

    let mut resources: Vec<(&String, &Value)> = resources_bag(record)
        .map(ordered_entries)
        .unwrap_or_default();
    sort_by_locale(&mut resources);
    lines.push(String::new());
    lines.push(format!("Resources ({}):", resources.len()));
    let empty = Map::new();
    for (logical_id, entry) in resources {
        // A null, number, string or boolean entry reads like an empty object
        // (docs/state-views.md, "Entries of the wrong type").
        let r = match entry {
            Value::Object(m) => m,
            _ => &empty,
        };
        lines.push(String::new());
        lines.push(strip(logical_id));
        lines.push(format!("  Type: {}", format_value(r.get("resourceType"))));
        lines.push(format!(
            "  PhysicalID: {}",
            format_value(r.get("physicalId"))
        ));
        let provisioned = match r.get("provisionedBy") {
            None | Some(Value::Null) => "(sdk, legacy default)".to_string(),
            Some(v) => format_value(Some(v)),
        };
        lines.push(format!("  ProvisionedBy: {provisioned}"));
        if r.get("observedBaselineRefused") == Some(&Value::Bool(true)) {
            lines.push(
                "  ObservedBaseline: REFUSED by 'cdkd import' — no baseline will be captured \
                 (deploy a change to this resource to restore one)"
                    .to_string(),
            );
        }
        lines.push(format!(
            "  Dependencies: {}",
            format_dependency_list(r.get("dependencies"))
        ));
        push_map_rows(&mut lines, "Attributes", r.get("attributes"));
        push_map_rows(&mut lines, "Properties", r.get("properties"));
    }
    lines
}

fn push_legend(lines: &mut Vec<String>) {
    lines.push(String::new());
    lines.extend(SKIPPED_OUTPUTS_LEGEND.iter().map(|l| l.to_string()));
}

/// `state show <stack>` (human, single stack): the block with the legend, and the
/// docs/state-views.md, "Damaged containers (human modes only)" warnings for this record.
pub fn show_text(node: &ShowNode, now_ms: i64) -> Rendered {
    let warnings = text_warnings(&node.stack, &node.region, &node.record);
    let lines = state_block(&node.record, node.lock.as_ref(), now_ms, true);
    Rendered::new(join_lines(&lines), warnings)
}

/// `state show <stack> --show-nested` (human): the root block, then every descendant
/// depth-first under a `Nested stack:` header, then the legend once if any node
/// rendered a skipped-outputs block. Each node is warned about on its own.
pub fn show_nested_text(root: &ShowNode, now_ms: i64) -> Rendered {
    let mut warnings = Vec::new();
    let mut lines = Vec::new();
    let mut owes_legend = false;
    let mut stack: Vec<(&ShowNode, bool)> = vec![(root, true)];
    while let Some((node, is_root)) = stack.pop() {
        warnings.extend(text_warnings(&node.stack, &node.region, &node.record));
        if !is_root {
            lines.push(String::new());
            lines.push(format!("Nested stack: {}", strip(&node.stack)));
        }
        lines.extend(state_block(&node.record, node.lock.as_ref(), now_ms, false));
        owes_legend |= renders_skipped_block(&node.record);
        for child in node.children.iter().rev() {
            stack.push((child, false));
        }
    }
    if owes_legend {
        push_legend(&mut lines);
    }
    Rendered::new(join_lines(&lines), warnings)
}

/// `state show <stack> --json`: `{"state": <record as parsed>, "lock": <lock|null>}`.
/// No repair, no warning.
pub fn show_json(node: &ShowNode) -> Rendered {
    let mut payload = Map::new();
    payload.insert("state".into(), Value::Object(node.record.clone()));
    payload.insert("lock".into(), lock_json(node.lock.as_ref()));
    Rendered::new(json_payload(&Value::Object(payload)), Vec::new())
}

fn lock_json(lock: Option<&LockView>) -> Value {
    lock.map(|l| l.json.clone()).unwrap_or(Value::Null)
}

fn tree_json(node: &ShowNode) -> Value {
    let mut out = Map::new();
    out.insert("state".into(), Value::Object(node.record.clone()));
    out.insert("lock".into(), lock_json(node.lock.as_ref()));
    out.insert(
        "children".into(),
        Value::Array(node.children.iter().map(tree_json).collect()),
    );
    Value::Object(out)
}

/// `state show <stack> --show-nested --json`: the walked tree, records unrepaired; warns
/// (stderr) for every node whose `resources` bag is unreadable, since its empty
/// `children` looks exactly like a leaf.
pub fn show_nested_json(root: &ShowNode) -> Rendered {
    let mut warnings = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if resources_bag(&node.record).is_none() {
            warnings.push(malformed_resources_warning(&node.stack, &node.region));
        }
        stack.extend(node.children.iter().rev());
    }
    Rendered::new(json_payload(&tree_json(root)), warnings)
}

/// docs/state-views.md, "--show-nested": the logical ids of a record's nested-stack entries, in the record's
/// key order; none when its `resources` is not a map (the walk stops there).
pub fn nested_child_ids(record: &Map<String, Value>) -> Vec<String> {
    let Some(bag) = resources_bag(record) else {
        return Vec::new();
    };
    ordered_entries(bag)
        .into_iter()
        .filter(|(_, entry)| {
            matches!(entry, Value::Object(e)
                if e.get("resourceType").and_then(Value::as_str) == Some(NESTED_STACK_TYPE))
        })
        .map(|(id, _)| id.clone())
        .collect()
}
