//! `state orphan --resource` decisions before the rewrite (docs/repairs.md, "Resources of one stack: state orphan <stack> --resource <id> [...]"):
//! the arguments, the record refusals taken under the lock, and the unknown-id refusal.
//! The rewrite itself is [`crate::repair::rewrite`].

use serde_json::{Map, Value};

use super::rewrite::RefValues;
use super::{shown_id, shown_region, shown_stack};
use crate::json::ordered_entries;
use crate::state::kind_of;

/// A `--resource` run cdkd-flow refuses. Nothing is saved; a lock taken is released.
/// Its words are the repair view's (`core::view::repair`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrphanRefusal {
    /// `--resource` with more than one stack (how many).
    SeveralStacks(usize),
    /// An empty `--resource` value.
    EmptyResourceId,
    /// The record cannot be read as a record.
    Unreadable {
        stack: String,
        region: String,
        problem: RecordProblem,
    },
    /// A `--ref-value` that is not `<LogicalId>=<value>`.
    RefValueSyntax(String),
    /// A `--ref-value` naming no `--resource` id.
    RefValueNotTarget(String),
    /// A `--ref-value` given twice for one id.
    RefValueTwice(String),
    /// `--resource` ids not in the record, and the ones it has.
    UnknownIds {
        stack: String,
        region: String,
        missing: String,
        available: String,
    },
}

impl std::error::Error for OrphanRefusal {}

/// What makes a record unreadable to `--resource` (docs/repairs.md, "Resources of one
/// stack: state orphan <stack> --resource <id> [...]" step 4). Kinds are
/// [`kind_of`]'s words; logical ids are flattened onto one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordProblem {
    /// A part of the record of the wrong kind (`found`: `None` when absent).
    Part {
        part: RecordPart,
        found: Option<&'static str>,
    },
    /// A surviving entry that is not an object.
    EntryNotAnObject {
        logical_id: String,
        kind: &'static str,
    },
    /// A surviving entry without a string `resourceType`.
    EntryWithoutType { logical_id: String },
    /// A surviving entry whose `properties` or `attributes` (`field`) is not a map.
    EntryField {
        logical_id: String,
        field: &'static str,
        kind: &'static str,
    },
}

/// A part of a record: `resources` and `outputs` are maps, `orphans` a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordPart {
    Resources,
    Outputs,
    Orphans,
}

/// The `--resource` values as targets: refused for more than one stack or an empty
/// value; duplicates collapse to their first occurrence.
pub fn resource_targets(ids: &[String], stack_count: usize) -> Result<Vec<String>, OrphanRefusal> {
    if ids.iter().any(String::is_empty) {
        return Err(OrphanRefusal::EmptyResourceId);
    }
    if stack_count > 1 {
        return Err(OrphanRefusal::SeveralStacks(stack_count));
    }
    let mut out: Vec<String> = Vec::new();
    for id in ids {
        if !out.contains(id) {
            out.push(id.clone());
        }
    }
    Ok(out)
}

/// The `--ref-value <LogicalId>=<value>` arguments (docs/repairs.md, "Ref values by type"): split at the
/// first `=`; both sides non-empty, the id one of `targets`, each id once. Refused before
/// any lock.
pub fn ref_values(args: &[String], targets: &[String]) -> Result<RefValues, OrphanRefusal> {
    let mut out = RefValues::new();
    for arg in args {
        let Some((id, value)) = arg
            .split_once('=')
            .filter(|(i, v)| !i.is_empty() && !v.is_empty())
        else {
            return Err(OrphanRefusal::RefValueSyntax(shown_id(arg)));
        };
        if !targets.iter().any(|t| t == id) {
            return Err(OrphanRefusal::RefValueNotTarget(shown_id(id)));
        }
        if out.insert(id.to_string(), value.to_string()).is_some() {
            return Err(OrphanRefusal::RefValueTwice(shown_id(id)));
        }
    }
    Ok(out)
}

/// The record refusals (taken under the lock, before the rewrite), then the unknown-id
/// refusal:
/// - `resources` not a map; `outputs` present and not a map; `orphans` present and not a
///   list;
/// - a surviving entry (one not in `targets`) that is not an object, has no string
///   `resourceType`, or has `properties` / `attributes` present and not a map. The
///   entries being removed are exempt: dropping a torn entry is a way out of it;
/// - a target that is not an own key of `resources`.
pub fn check_record(
    record: &Map<String, Value>,
    stack: &str,
    region: &str,
    targets: &[String],
) -> Result<(), OrphanRefusal> {
    let refuse = |problem: RecordProblem| OrphanRefusal::Unreadable {
        stack: shown_stack(stack),
        region: shown_region(region),
        problem,
    };
    let resources = match record.get("resources") {
        Some(Value::Object(m)) => m,
        other => return Err(refuse(not_a(RecordPart::Resources, other))),
    };
    match record.get("outputs") {
        None | Some(Value::Object(_)) => {}
        other => return Err(refuse(not_a(RecordPart::Outputs, other))),
    }
    match record.get("orphans") {
        None | Some(Value::Array(_)) => {}
        other => return Err(refuse(not_a(RecordPart::Orphans, other))),
    }
    for (id, entry) in ordered_entries(resources) {
        if targets.contains(id) {
            continue;
        }
        if let Some(problem) = surviving_entry_problem(id, entry) {
            return Err(refuse(problem));
        }
    }
    check_known(resources, stack, region, targets)
}

fn not_a(part: RecordPart, v: Option<&Value>) -> RecordProblem {
    RecordProblem::Part {
        part,
        found: v.map(kind_of),
    }
}

fn surviving_entry_problem(id: &str, entry: &Value) -> Option<RecordProblem> {
    let logical_id = shown_id(id);
    let Value::Object(e) = entry else {
        return Some(RecordProblem::EntryNotAnObject {
            logical_id,
            kind: kind_of(entry),
        });
    };
    if !e.get("resourceType").is_some_and(Value::is_string) {
        return Some(RecordProblem::EntryWithoutType { logical_id });
    }
    for field in ["properties", "attributes"] {
        match e.get(field) {
            None | Some(Value::Object(_)) => {}
            Some(v) => {
                return Some(RecordProblem::EntryField {
                    logical_id,
                    field,
                    kind: kind_of(v),
                })
            }
        }
    }
    None
}

fn check_known(
    resources: &Map<String, Value>,
    stack: &str,
    region: &str,
    targets: &[String],
) -> Result<(), OrphanRefusal> {
    let missing: Vec<String> = targets
        .iter()
        .filter(|t| !resources.contains_key(t.as_str()))
        .map(|t| shown_id(t))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let available: Vec<String> = ordered_entries(resources)
        .into_iter()
        .map(|(id, _)| shown_id(id))
        .collect();
    Err(OrphanRefusal::UnknownIds {
        stack: shown_stack(stack),
        region: shown_region(region),
        missing: missing.join(", "),
        available: if available.is_empty() {
            "(none)".to_string()
        } else {
            available.join(", ")
        },
    })
}

/// A target that is a nested stack with a record of its own (docs/repairs.md, "Resources of one stack: state orphan <stack> --resource <id> [...]" step
/// 6): the child `<stack>~<target>` and the region to name in the command that drops it
/// (`stack`'s region when the child has a record there, else its first other region;
/// `None` for a region-less child). `refs` is the listing, re-read under the lock.
pub fn child_with_record(
    stack: &str,
    region: &str,
    targets: &[String],
    refs: &[crate::keys::RefView<'_>],
) -> Option<(String, Option<String>)> {
    targets.iter().find_map(|t| {
        let child = format!("{stack}~{t}");
        let regions: Vec<Option<&str>> = refs
            .iter()
            .filter(|r| r.stack == child)
            .map(|r| r.region)
            .collect();
        if regions.is_empty() {
            return None;
        }
        let at = if regions.contains(&Some(region)) {
            Some(region)
        } else {
            regions.iter().flatten().next().copied()
        };
        Some((child, at.map(str::to_string)))
    })
}
