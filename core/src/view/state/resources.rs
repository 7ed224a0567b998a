//! docs/state-views.md, "state resources <stack>" `state resources`: plain columns, `--long` blocks, `--json` projection.
//! Properties are never shown; attributes only in `--long` and `--json`.

use serde_json::{Map, Value};

use crate::json::{json_payload, ordered_entries};
use crate::text::strip;
use crate::view::state::collate::sort_by_locale;
use crate::view::state::repair::{
    malformed_containers_warning, malformed_resources_warning, read_container, resources_bag,
    Container,
};
use crate::view::state::value::{format_dependency_list, format_value};
use crate::view::{join_lines, Rendered};

/// Output mode of `state resources` (`--json` wins over `--long`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourcesMode {
    Plain,
    Long,
    Json,
}

/// One resource's projection (docs/state-views.md, "state resources <stack>"): null/non-object entries read as `{}`.
struct Projection<'a> {
    logical_id: &'a str,
    resource_type: Option<&'a Value>,
    physical_id: Option<&'a Value>,
    /// The stored value, or `[]` when absent or `null`.
    dependencies: Value,
    /// The stored map, or empty (absent, `null`, or repaired).
    attributes: Option<&'a Map<String, Value>>,
}

fn project(record: &Map<String, Value>) -> (Vec<Projection<'_>>, bool) {
    let mut attributes_repaired = false;
    let mut rows: Vec<(&String, Projection<'_>)> = resources_bag(record)
        .map(ordered_entries)
        .unwrap_or_default()
        .into_iter()
        .map(|(id, entry)| {
            let e = entry.as_object();
            let get = |k: &str| e.and_then(|m| m.get(k));
            let attrs = read_container(get("attributes"));
            attributes_repaired |= attrs.is_repaired();
            let dependencies = match get("dependencies") {
                None | Some(Value::Null) => Value::Array(Vec::new()),
                Some(v) => v.clone(),
            };
            let p = Projection {
                logical_id: id.as_str(),
                resource_type: get("resourceType"),
                physical_id: get("physicalId"),
                dependencies,
                attributes: attrs.map(),
            };
            (id, p)
        })
        .collect();
    sort_by_locale(&mut rows);
    (
        rows.into_iter().map(|(_, p)| p).collect(),
        attributes_repaired,
    )
}

fn projection_json(p: &Projection<'_>) -> Value {
    let mut m = Map::new();
    m.insert("logicalId".into(), Value::String(p.logical_id.to_string()));
    if let Some(t) = p.resource_type {
        m.insert("resourceType".into(), t.clone());
    }
    if let Some(id) = p.physical_id {
        m.insert("physicalId".into(), id.clone());
    }
    m.insert("dependencies".into(), p.dependencies.clone());
    m.insert(
        "attributes".into(),
        Value::Object(p.attributes.cloned().unwrap_or_default()),
    );
    Value::Object(m)
}

/// UTF-16 length, what JavaScript's `padEnd` measures.
fn js_len(s: &str) -> usize {
    s.encode_utf16().count()
}

fn pad_end(s: &str, width: usize) -> String {
    let mut out = s.to_string();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(js_len(s))));
    out
}

/// `state resources <stack>` in the given mode. `stack`/`region` name the record in the
/// warnings.
pub fn render_resources(
    stack: &str,
    region: &str,
    record: &Map<String, Value>,
    mode: ResourcesMode,
) -> Rendered {
    let mut warnings = Vec::new();
    if resources_bag(record).is_none() {
        warnings.push(malformed_resources_warning(stack, region));
    }
    let (rows, attributes_repaired) = project(record);
    if attributes_repaired && mode != ResourcesMode::Plain {
        warnings.push(malformed_containers_warning(
            stack,
            region,
            &[Container::Attributes],
        ));
    }
    let stdout = match mode {
        ResourcesMode::Json => {
            json_payload(&Value::Array(rows.iter().map(projection_json).collect()))
        }
        ResourcesMode::Long => {
            let mut lines = Vec::new();
            for (i, p) in rows.iter().enumerate() {
                if i > 0 {
                    lines.push(String::new());
                }
                lines.push(strip(p.logical_id));
                lines.push(format!("  Type: {}", format_value(p.resource_type)));
                lines.push(format!("  PhysicalID: {}", format_value(p.physical_id)));
                lines.push(format!(
                    "  Dependencies: {}",
                    format_dependency_list(Some(&p.dependencies))
                ));
                let attrs = p.attributes.map(ordered_entries).unwrap_or_default();
                if attrs.is_empty() {
                    lines.push("  Attributes: (none)".to_string());
                } else {
                    lines.push("  Attributes:".to_string());
                    for (k, v) in attrs {
                        lines.push(format!("    {}: {}", strip(k), format_value(Some(v))));
                    }
                }
            }
            join_lines(&lines)
        }
        ResourcesMode::Plain => {
            let cells: Vec<(String, String, String)> = rows
                .iter()
                .map(|p| {
                    (
                        strip(p.logical_id),
                        format_value(p.resource_type),
                        format_value(p.physical_id),
                    )
                })
                .collect();
            let id_w = cells.iter().map(|c| js_len(&c.0)).max().unwrap_or(0);
            let ty_w = cells.iter().map(|c| js_len(&c.1)).max().unwrap_or(0);
            let lines: Vec<String> = cells
                .iter()
                .map(|(id, ty, pid)| format!("{}  {}  {pid}", pad_end(id, id_w), pad_end(ty, ty_w)))
                .collect();
            join_lines(&lines)
        }
    };
    Rendered::new(stdout, warnings)
}
