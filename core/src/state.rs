//! cdkd's `state.json` (docs/state-and-lock.md, "state.json"): a tolerant reader over untyped JSON and the
//! writer of docs/state-and-lock.md, "Writing a record".
//!
//! The record is kept as the whole parsed object ([`StateRecord::body`], insertion
//! ordered), so a writer preserves every field it does not interpret, at its position.
//! Accessors judge one field at a time and never panic; shape problems inside the record
//! are left to each command (read-only views repair and warn, writers refuse by name via
//! [`StateRecord::check_writable`]).

use std::ops::RangeInclusive;

use serde_json::{Map, Value};

use crate::js::js_number;
use crate::json::{parse_json, stringify};
use crate::keys::RefView;
use crate::text::{flatten_str, or_unrenderable, printable_str};

/// The schema version writers stamp.
pub const CURRENT_VERSION: u64 = 10;

/// The resource type of a nested stack: its entry's record is the child `<stack>~<id>`.
pub const NESTED_STACK_TYPE: &str = "AWS::CloudFormation::Stack";

/// Every schema version a reader accepts.
pub const SUPPORTED_VERSIONS: RangeInclusive<u64> = 1..=10;

/// One parsed `state.json`.
#[derive(Clone, Debug)]
pub struct StateRecord {
    /// The whole parsed object, nothing dropped (the region is the key's, see
    /// [`parse_state`]).
    pub body: Map<String, Value>,
    /// The body's own `region` when it differed from the key's region (docs/state-and-lock.md, "Reading a record"
    /// step 2, `divergentBodyRegion`); `None` when it agreed, was absent, or no key region was
    /// given.
    pub divergent_body_region: Option<Value>,
}

/// The shape of the `resources` member.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ResourcesShape<'a> {
    Absent,
    Null,
    Map(&'a Map<String, Value>),
    Other(&'a Value),
}

/// A nested child's valid link to its parent (docs/state-views.md, "--tree").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParentLink {
    pub stack: String,
    pub logical_id: Option<String>,
    pub region: Option<String>,
}

/// A record cdkd-flow refuses to read (or, for the `Malformed*` variants, to write).
/// Every message is one line; attacker-influenced values are flattened (stack names,
/// values) or printable (regions, docs/state-views.md, "Printable (stack names and regions in diagnostics)"), and an empty one reads `<unrenderable>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateError {
    InvalidJson {
        stack: String,
        message: String,
    },
    NotAnObject {
        stack: String,
        region: String,
        kind: &'static str,
    },
    UnsupportedVersion {
        stack: String,
        version: String,
    },
    MalformedContainer {
        stack: String,
        region: String,
        field: &'static str,
        kind: &'static str,
    },
    MalformedResource {
        stack: String,
        region: String,
        logical_id: String,
        kind: &'static str,
    },
}

impl std::error::Error for StateError {}

/// A custom resource's type: `Custom::*` or `AWS::CloudFormation::CustomResource`
/// (docs/destroy.md, "One record in a wave" step 4). Destroy, export and the repairs all ask this.
pub fn is_custom_resource(resource_type: &str) -> bool {
    resource_type.starts_with("Custom::") || resource_type == "AWS::CloudFormation::CustomResource"
}

/// The JSON kind of a value as a noun phrase (`an array`, `null`, …), for messages.
pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

use crate::text::flattened as shown_stack;

/// A record's region inside a refusal: printable, or "no region, legacy key".
pub(crate) fn shown_region(region: Option<&str>) -> String {
    match region {
        Some(r) => or_unrenderable(printable_str(r)),
        None => "no region, legacy key".to_string(),
    }
}

/// A version value as shown in the refusal: numbers in JS form, anything else as
/// compact JSON (so the string `"8"` is told apart from the number), flattened.
fn shown_version(v: &Value) -> String {
    let text = match v {
        Value::Number(n) => js_number(n),
        other => stringify(other).unwrap_or_else(|| "(unserializable)".to_string()),
    };
    let flat = or_unrenderable(flatten_str(&text));
    if flat.chars().count() > 64 {
        let cut: String = flat.chars().take(64).collect();
        format!("{cut}…")
    } else {
        flat
    }
}

/// A `version` value a reader accepts: a JSON number strictly equal to one of 1..=10.
pub fn accepted_version(v: &Value) -> Option<u64> {
    let f = v.as_f64()?;
    SUPPORTED_VERSIONS.clone().find(|n| *n as f64 == f)
}

/// Reads one record (docs/state-and-lock.md, "Versions, readers and writers" reader rules, "Reading a record" region authority).
///
/// - invalid JSON → [`StateError::InvalidJson`]; a non-object root →
///   [`StateError::NotAnObject`] naming stack and region;
/// - `version` must be absent or a JSON number equal to 1..=10, else
///   [`StateError::UnsupportedVersion`];
/// - with `key_region` given, a body `region` that is present and not that string is
///   replaced (in place) by the key's region and kept in
///   [`StateRecord::divergent_body_region`].
///
/// Nothing else is validated.
pub fn parse_state(
    stack: &str,
    key_region: Option<&str>,
    bytes: &[u8],
) -> Result<StateRecord, StateError> {
    let value = parse_json(bytes).map_err(|message| StateError::InvalidJson {
        stack: shown_stack(stack),
        message: or_unrenderable(flatten_str(&message)),
    })?;
    let mut body = match value {
        Value::Object(map) => map,
        other => {
            return Err(StateError::NotAnObject {
                stack: shown_stack(stack),
                region: shown_region(key_region),
                kind: kind_of(&other),
            })
        }
    };
    if let Some(v) = body.get("version") {
        if accepted_version(v).is_none() {
            return Err(StateError::UnsupportedVersion {
                stack: shown_stack(stack),
                version: shown_version(v),
            });
        }
    }
    let mut divergent_body_region = None;
    if let Some(kr) = key_region {
        let agrees = match body.get("region") {
            None => true,
            Some(Value::String(s)) => s == kr,
            Some(_) => false,
        };
        if !agrees {
            divergent_body_region = body.insert("region".to_string(), Value::String(kr.into()));
        }
    }
    Ok(StateRecord {
        body,
        divergent_body_region,
    })
}

/// A stack whose only record is a legacy, region-less one: the state commands refuse
/// it by name before any lock is read (docs/state-views.md, "What every state command
/// shares"). The way out is a cdkd write, which migrates it to the region-scoped layout
/// (`cdkd deploy <stack>`, printed only when the name can be pasted safely). Its words
/// are the state views' (`core::view::state::resolve`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyOnly {
    pub stack: String,
}

/// Why a stack name (and `--stack-region`, when given) does not name one listed record
/// (docs/state-views.md, "What every state command shares"). Regions are as listed:
/// `None` is the legacy region-less record. Its words are the state views'
/// (`core::view::state::resolve`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolveRefusal {
    /// No record of the stack at all.
    NoState { stack: String },
    /// `--stack-region` names a region the stack has no record in; `seen` are the
    /// regions it has records in.
    NotInRegion {
        stack: String,
        region: String,
        seen: Vec<Option<String>>,
    },
    /// Records in several regions and no `--stack-region` to pick one.
    SeveralRegions {
        stack: String,
        regions: Vec<Option<String>>,
    },
}

/// Picks the one ref `stack` names (with `--stack-region` when given), or the refusal.
pub fn resolve_single<'a>(
    stack: &str,
    refs: &[RefView<'a>],
    requested_region: Option<&str>,
) -> Result<RefView<'a>, ResolveRefusal> {
    let matches: Vec<RefView<'a>> = refs.iter().copied().filter(|r| r.stack == stack).collect();
    let regions = || -> Vec<Option<String>> {
        matches
            .iter()
            .map(|r| r.region.map(str::to_string))
            .collect()
    };
    if matches.is_empty() {
        return Err(ResolveRefusal::NoState {
            stack: stack.to_string(),
        });
    }
    if let Some(want) = requested_region {
        return matches
            .iter()
            .copied()
            .find(|r| r.region == Some(want))
            .ok_or_else(|| ResolveRefusal::NotInRegion {
                stack: stack.to_string(),
                region: want.to_string(),
                seen: regions(),
            });
    }
    if matches.len() == 1 {
        return Ok(matches[0]);
    }
    Err(ResolveRefusal::SeveralRegions {
        stack: stack.to_string(),
        regions: regions(),
    })
}

/// A record whose body names another region than its key (docs/state-and-lock.md, "Reading a record"),
/// refused by destroy (docs/destroy.md, "Refusals before anything is deleted" step 5) and by export (docs/export.md, "Step details"
/// S5) when it has resources: it may describe resources in another region. Carries the
/// kind of the body's value, never the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegionConflict {
    pub body_kind: &'static str,
}

impl RegionConflict {
    /// The one rule: `divergent` is what the reader kept aside
    /// ([`StateRecord::divergent_body_region`]); a body whose `region` still differs from
    /// `key_region` (a body not read through [`parse_state`]) counts the same. A record
    /// without resources conflicts with nothing.
    pub fn of(
        body: &Map<String, Value>,
        divergent: Option<&Value>,
        key_region: &str,
    ) -> Option<RegionConflict> {
        let has_resources = body
            .get("resources")
            .and_then(Value::as_object)
            .is_some_and(|m| !m.is_empty());
        if !has_resources {
            return None;
        }
        divergent
            .or_else(|| {
                body.get("region")
                    .filter(|r| r.as_str() != Some(key_region))
            })
            .map(|r| RegionConflict {
                body_kind: kind_of(r),
            })
    }
}

/// The record as cdkd's `saveState` writes it (docs/state-and-lock.md, "Writing a record"): `lastModified` =
/// `now_ms`, then `version` = 10, `stackName` = `stack`, `region` = `region`, each replaced at its
/// existing position or appended in that order (cdkd's callers set `lastModified` on the
/// record before `saveState` spreads the three forced fields over it). Every other
/// field is preserved at its position; keys in JS order; `JSON.stringify(…, null, 2)`
/// bytes without a trailing newline.
pub fn serialize_for_write(record: &StateRecord, stack: &str, region: &str, now_ms: i64) -> String {
    let mut body = record.body.clone();
    body.insert("lastModified".to_string(), Value::from(now_ms));
    body.insert("version".to_string(), Value::from(CURRENT_VERSION));
    body.insert("stackName".to_string(), Value::String(stack.to_string()));
    body.insert("region".to_string(), Value::String(region.to_string()));
    crate::json::stringify_pretty_unbounded(&Value::Object(body))
}

impl StateRecord {
    /// A record over an already parsed body (no divergent region).
    pub fn from_body(body: Map<String, Value>) -> Self {
        StateRecord {
            body,
            divergent_body_region: None,
        }
    }

    /// The raw `version` member (absent → `None`).
    pub fn version_value(&self) -> Option<&Value> {
        self.body.get("version")
    }

    /// The schema version when it is an accepted one; `None` when absent (a record read
    /// by [`parse_state`] has no other possibility).
    pub fn version(&self) -> Option<u64> {
        self.version_value().and_then(accepted_version)
    }

    pub fn stack_name(&self) -> Option<&Value> {
        self.body.get("stackName")
    }

    pub fn region(&self) -> Option<&Value> {
        self.body.get("region")
    }

    /// The region when it is a JSON string.
    pub fn region_str(&self) -> Option<&str> {
        self.region().and_then(Value::as_str)
    }

    pub fn resources_value(&self) -> Option<&Value> {
        self.body.get("resources")
    }

    pub fn resources(&self) -> ResourcesShape<'_> {
        match self.resources_value() {
            None => ResourcesShape::Absent,
            Some(Value::Null) => ResourcesShape::Null,
            Some(Value::Object(m)) => ResourcesShape::Map(m),
            Some(other) => ResourcesShape::Other(other),
        }
    }

    pub fn outputs_value(&self) -> Option<&Value> {
        self.body.get("outputs")
    }

    /// `lastModified` when it is a finite JSON number.
    pub fn last_modified(&self) -> Option<f64> {
        self.body
            .get("lastModified")
            .and_then(Value::as_f64)
            .filter(|f| f.is_finite())
    }

    /// The v6 parent link, only when valid (docs/state-views.md, "--tree"): `parentStack` a JSON string
    /// and `parentRegion` absent or a string; `parentLogicalId` kept only if a string.
    pub fn parent_link(&self) -> Option<ParentLink> {
        let stack = self.body.get("parentStack")?.as_str()?;
        let region = match self.body.get("parentRegion") {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return None,
        };
        let logical_id = self
            .body
            .get("parentLogicalId")
            .and_then(Value::as_str)
            .map(str::to_string);
        Some(ParentLink {
            stack: stack.to_string(),
            logical_id,
            region,
        })
    }

    pub fn skipped_outputs(&self) -> Option<&Value> {
        self.body.get("skippedOutputs")
    }

    /// `exportNames` (v9). Absent ≠ empty: absent means every output key is importable.
    pub fn export_names(&self) -> Option<&Value> {
        self.body.get("exportNames")
    }

    pub fn imports(&self) -> Option<&Value> {
        self.body.get("imports")
    }

    pub fn output_reads(&self) -> Option<&Value> {
        self.body.get("outputReads")
    }

    /// `orphans`: must be carried forward verbatim by every writer.
    pub fn orphans(&self) -> Option<&Value> {
        self.body.get("orphans")
    }

    /// True when the record was read from a legacy region-less body (no `region`
    /// string).
    pub fn is_region_less(&self) -> bool {
        self.region_str().is_none()
    }

    /// Writers refuse a record whose shape they cannot read (docs/state-and-lock.md, "Versions, readers and writers"):
    /// `resources` absent, null or not an object, a resource entry that is not an object, or
    /// `outputs` present but not an object. Names stack, region, field and kind.
    pub fn check_writable(&self, stack: &str, region: &str) -> Result<(), StateError> {
        let malformed = |field: &'static str, kind: &'static str| StateError::MalformedContainer {
            stack: shown_stack(stack),
            region: shown_region(Some(region)),
            field,
            kind,
        };
        match self.resources() {
            ResourcesShape::Absent => return Err(malformed("resources", "absent")),
            ResourcesShape::Null => return Err(malformed("resources", "null")),
            ResourcesShape::Other(v) => return Err(malformed("resources", kind_of(v))),
            ResourcesShape::Map(m) => {
                for (id, entry) in crate::json::ordered_entries(m) {
                    if !entry.is_object() {
                        return Err(StateError::MalformedResource {
                            stack: shown_stack(stack),
                            region: shown_region(Some(region)),
                            logical_id: or_unrenderable(flatten_str(id)),
                            kind: kind_of(entry),
                        });
                    }
                }
            }
        }
        match self.outputs_value() {
            None | Some(Value::Object(_)) => Ok(()),
            Some(v) => Err(malformed("outputs", kind_of(v))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_serialize_for_write_v10_record_in_js_key_order() {
        let body = br#"{"version":9,"stackName":"Old","region":"eu-west-1","resources":{"b":{"physicalId":"p","resourceType":"AWS::SQS::Queue","properties":{"N":1e21,"F":0.5},"observedBaselineRefused":true},"10":{"physicalId":"q","resourceType":"T","properties":{}},"2":null},"outputs":{"b":1,"10":["ns-1","ns-2"],"2":{}},"exportNames":[],"orphans":[{"logicalId":"O","orphanedAt":1,"state":{}}],"futureField":"\u001b\u2028","lastModified":5}"#;
        let rec = parse_state("Root~Child", Some("us-east-1"), body).unwrap();
        assert_eq!(
            rec.divergent_body_region,
            Some(Value::String("eu-west-1".into()))
        );
        insta::assert_snapshot!(serialize_for_write(
            &rec,
            "Root~Child",
            "us-east-1",
            1_767_225_600_000
        ));
    }
}
