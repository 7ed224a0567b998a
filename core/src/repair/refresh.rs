//! `state refresh-observed` decisions (docs/repairs.md, "state refresh-observed [stacks...]"): the shape refusals, what
//! happens to each resource, how the results land in the record, and the tallies the
//! summary lines are rendered from (the `view::repair` module).
//!
//! The caller's order per run: [`precheck`] (several region-scoped targets) → prompt →
//! legacy refusal (the state views' `legacy_refusal`) → per target:
//! [`check_shape`], [`read_plan`] (ids to read), SSM answers
//! ([`crate::repair::ssm`]), the reads, [`apply_refresh`], save, release.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::redact::redact_by_position;
use super::ssm::SsmAnswers;
use super::{shown_id, shown_region, shown_stack};
use crate::json::ordered_entries;
use crate::state::kind_of;

/// A record refresh-observed will not read or write. The record is never repaired:
/// writing a cleaned-up copy would erase the evidence of the damage. Names the stack and
/// region as shown, the resource and the kind of value found; the way out (inspect the
/// record) is in its words, the repair view's (`core::view::repair`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShapeRefusal {
    ResourcesNotAMap {
        stack: String,
        region: String,
        kind: &'static str,
    },
    EntryNotAnObject {
        stack: String,
        region: String,
        logical_id: String,
        kind: &'static str,
    },
    EntryWithoutType {
        stack: String,
        region: String,
        logical_id: String,
    },
}

impl std::error::Error for ShapeRefusal {}

/// Refuses a record whose `resources` is not a map (absent, `null`, a scalar, a list),
/// or holds an entry that is not an object or has no string `resourceType`. Names stack
/// and region.
pub fn check_shape(
    record: &Map<String, Value>,
    stack: &str,
    region: &str,
) -> Result<(), ShapeRefusal> {
    let (stack_s, region_s) = (shown_stack(stack), shown_region(region));
    let resources = match record.get("resources") {
        Some(Value::Object(m)) => m,
        other => {
            return Err(ShapeRefusal::ResourcesNotAMap {
                stack: stack_s,
                region: region_s,
                kind: other.map_or("absent", kind_of),
            })
        }
    };
    for (id, entry) in ordered_entries(resources) {
        let Value::Object(e) = entry else {
            return Err(ShapeRefusal::EntryNotAnObject {
                stack: stack_s,
                region: region_s,
                logical_id: shown_id(id),
                kind: kind_of(entry),
            });
        };
        if !e.get("resourceType").is_some_and(Value::is_string) {
            return Err(ShapeRefusal::EntryWithoutType {
                stack: stack_s,
                region: region_s,
                logical_id: shown_id(id),
            });
        }
    }
    Ok(())
}

/// One target of a run, as the pre-check sees it.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub stack: &'a str,
    /// `None` for a legacy region-less ref (refused later, after the prompt).
    pub region: Option<&'a str>,
    /// `None` when no record exists (reported later, in the target's turn).
    pub record: Option<&'a Map<String, Value>>,
}

/// The pre-check of a run over several region-scoped targets: the first malformed
/// record refuses the whole run, before any prompt, lock or write. With at most one
/// region-scoped target there is nothing to check here (its own turn checks it).
pub fn precheck(targets: &[Target<'_>]) -> Result<(), ShapeRefusal> {
    /// A region-scoped target: stack, region, its record when it has one.
    type Scoped<'a> = (&'a str, &'a str, Option<&'a Map<String, Value>>);
    let scoped: Vec<Scoped<'_>> = targets
        .iter()
        .filter_map(|t| t.region.map(|r| (t.stack, r, t.record)))
        .collect();
    if scoped.len() < 2 {
        return Ok(());
    }
    for (stack, region, record) in scoped {
        if let Some(record) = record {
            check_shape(record, stack, region)?;
        }
    }
    Ok(())
}

/// What the run does with one resource before any read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// Marked `observedBaselineRefused`: never read, never refreshed.
    Refused,
    /// A skipped type, or no reader for it.
    Unsupported,
    /// Read from AWS.
    Read,
}

fn resource_type(entry: &Value) -> &str {
    entry
        .get("resourceType")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The plan for one entry; `has_reader` says whether a current-state reader exists for
/// a type.
pub fn plan_resource(entry: &Value, has_reader: &dyn Fn(&str) -> bool) -> Plan {
    let t = resource_type(entry);
    if super::ssm::is_baseline_refused(entry) {
        Plan::Refused
    } else if super::reading::SKIPPED_TYPES.contains(&t) || !has_reader(t) {
        Plan::Unsupported
    } else {
        Plan::Read
    }
}

/// Every resource with its plan, in record order (empty for a record without a map).
pub fn read_plan(
    record: &Map<String, Value>,
    has_reader: &dyn Fn(&str) -> bool,
) -> Vec<(String, Plan)> {
    match record.get("resources") {
        Some(Value::Object(m)) => ordered_entries(m)
            .into_iter()
            .map(|(id, e)| (id.clone(), plan_resource(e, has_reader)))
            .collect(),
        _ => Vec::new(),
    }
}

/// True when the record has no resources to refresh (the stack is skipped with an
/// info line).
pub fn has_no_resources(record: &Map<String, Value>) -> bool {
    record
        .get("resources")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty)
}

/// What reading one resource's current state gave.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadResult {
    /// The readback, before redaction.
    Read(Value),
    /// The resource is gone (the read answered nothing).
    Gone,
    /// No reader for the type after all.
    NoReader,
    /// The read threw; the message is AWS's or the reader's.
    Failed(String),
}

/// The outcome of one resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Refreshed,
    Unsupported,
    /// The read found no resource: it was deleted outside cdkd (docs/repairs.md, "Per resource").
    Gone,
    Failed {
        message: String,
    },
    Refused,
}

/// One resource's outcome with what the warning line names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceOutcome {
    pub logical_id: String,
    pub resource_type: String,
    pub outcome: Outcome,
}

/// Counts per outcome, for one stack or a whole run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub refreshed: u32,
    pub unsupported: u32,
    pub failed: u32,
    pub refused: u32,
    /// Read and not found: deleted outside cdkd.
    pub gone: u32,
}

impl Tally {
    /// Adds another tally (a stack's into the run's).
    pub fn add(&mut self, other: &Tally) {
        self.refreshed += other.refreshed;
        self.unsupported += other.unsupported;
        self.failed += other.failed;
        self.refused += other.refused;
        self.gone += other.gone;
    }

    fn count(&mut self, o: &Outcome) {
        match o {
            Outcome::Refreshed => self.refreshed += 1,
            Outcome::Unsupported => self.unsupported += 1,
            Outcome::Failed { .. } => self.failed += 1,
            Outcome::Refused => self.refused += 1,
            Outcome::Gone => self.gone += 1,
        }
    }
}

/// The dry-run tally of one record: the resources that would be read count as
/// refreshed; nothing fails because nothing is read.
pub fn dry_run_tally(record: &Map<String, Value>, has_reader: &dyn Fn(&str) -> bool) -> Tally {
    let mut t = Tally::default();
    for (_, plan) in read_plan(record, has_reader) {
        match plan {
            Plan::Refused => t.refused += 1,
            Plan::Unsupported => t.unsupported += 1,
            Plan::Read => t.refreshed += 1,
        }
    }
    t
}

/// What [`apply_refresh`] did to one stack.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StackRefresh {
    pub outcomes: Vec<ResourceOutcome>,
    pub tally: Tally,
}

/// Lands the reads in the record (which passed [`check_shape`]), in record order:
/// - a refused entry is counted refused whatever was read, its baseline untouched;
/// - a skipped type, [`ReadResult::NoReader`] or no result at all → unsupported,
///   baseline untouched;
/// - [`ReadResult::Gone`] → gone (deleted outside cdkd), baseline kept;
/// - [`ReadResult::Failed`] → failed, baseline kept;
/// - [`ReadResult::Read`] → `observedProperties` = the readback redacted by position
///   against the entry's `properties` (`{}` when absent) → refreshed.
///
/// Then `lastModified` = `now_ms`, and `skippedOutputs` is dropped when at least one
/// resource was refreshed.
pub fn apply_refresh(
    record: &mut Map<String, Value>,
    reads: &BTreeMap<String, ReadResult>,
    ssm: &SsmAnswers,
    now_ms: i64,
) -> StackRefresh {
    let mut result = StackRefresh::default();
    if let Some(Value::Object(resources)) = record.get_mut("resources") {
        let ids: Vec<String> = ordered_entries(resources)
            .into_iter()
            .map(|(k, _)| k.clone())
            .collect();
        for id in ids {
            let Some(entry) = resources.get_mut(&id) else {
                continue;
            };
            let outcome = refresh_entry(entry, reads.get(&id), ssm);
            result.tally.count(&outcome);
            result.outcomes.push(ResourceOutcome {
                resource_type: resource_type(entry).to_string(),
                logical_id: id,
                outcome,
            });
        }
    }
    record.insert("lastModified".to_string(), Value::from(now_ms));
    if result.tally.refreshed > 0 {
        record.shift_remove("skippedOutputs");
    }
    result
}

fn refresh_entry(entry: &mut Value, read: Option<&ReadResult>, ssm: &SsmAnswers) -> Outcome {
    if super::ssm::is_baseline_refused(entry) {
        return Outcome::Refused;
    }
    if super::reading::SKIPPED_TYPES.contains(&resource_type(entry)) {
        return Outcome::Unsupported;
    }
    match read {
        None | Some(ReadResult::NoReader) => Outcome::Unsupported,
        Some(ReadResult::Gone) => Outcome::Gone,
        Some(ReadResult::Failed(message)) => Outcome::Failed {
            message: message.clone(),
        },
        Some(ReadResult::Read(readback)) => {
            let Value::Object(e) = entry else {
                return Outcome::Unsupported;
            };
            let empty = Value::Object(Map::new());
            let source = e.get("properties").unwrap_or(&empty);
            let baseline = redact_by_position(readback, source, ssm);
            e.insert("observedProperties".to_string(), baseline);
            Outcome::Refreshed
        }
    }
}

/// The exit status of a run (docs/repairs.md, "Output"): 2 when some resources were not
/// refreshed because their read failed or found them gone, else 0.
pub fn exit_code(run: &Tally) -> i32 {
    if run.failed > 0 || run.gone > 0 {
        2
    } else {
        0
    }
}
