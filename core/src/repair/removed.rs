//! The records an orphan removes, as the rewrite sees them (docs/repairs.md, "The rewrite"): a
//! snapshot taken before anything changes, the attribute values they cache, and the live
//! attribute reads the caller must answer beforehand.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::intrinsic::{getatt_parts, placeholders, single, sub_parts};
use super::refresh::ReadResult;
use super::secret::{never_copied, never_copied_attribute, CredentialClass};

/// What the live read of one attribute answered.
#[derive(Debug, Clone, PartialEq)]
pub enum LiveAttr {
    Value(Value),
    /// The read worked and the attribute is undefined.
    Undefined,
    Failed(LiveReadFailure),
}

/// Why the live read of a removed resource gave no answer: the resource, its type and
/// the cause. Worded by the repair view (`core::view::repair`) in one line,
/// `<logicalId> (<type>): <cause>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveReadFailure {
    /// The resource no longer exists (its physical id was not found).
    Gone {
        logical_id: String,
        resource_type: String,
        physical_id: String,
    },
    /// No reader reads the type.
    NoReader {
        logical_id: String,
        resource_type: String,
    },
    /// The read threw (`message`: AWS's or the reader's).
    Threw {
        logical_id: String,
        resource_type: String,
        message: String,
    },
    /// A failure given as words, written as given.
    Said(String),
}

impl From<String> for LiveReadFailure {
    fn from(words: String) -> Self {
        LiveReadFailure::Said(words)
    }
}

impl From<&str> for LiveReadFailure {
    fn from(words: &str) -> Self {
        LiveReadFailure::Said(words.to_string())
    }
}

/// Live answers keyed by `(logicalId, attribute)`.
pub type LiveReads = BTreeMap<(String, String), LiveAttr>;

/// A removed entry as the rewrite sees it: readable when it is an object with a string
/// `resourceType` and a non-empty string `physicalId`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Removed<'a> {
    Readable {
        resource_type: &'a str,
        physical_id: &'a str,
        properties: Option<&'a Map<String, Value>>,
        attributes: Option<&'a Map<String, Value>>,
    },
    Unreadable,
}

/// The removed entries (those of `targets` present in `resources`), read once.
pub(crate) fn snapshot<'a>(
    resources: &'a Map<String, Value>,
    targets: &[String],
) -> BTreeMap<String, Removed<'a>> {
    let read = |entry: &'a Value| {
        let e = entry.as_object()?;
        let resource_type = e.get("resourceType")?.as_str()?;
        let physical_id = e.get("physicalId")?.as_str().filter(|p| !p.is_empty())?;
        let properties = e.get("properties").and_then(Value::as_object);
        let attributes = e.get("attributes").and_then(Value::as_object);
        Some(Removed::Readable {
            resource_type,
            physical_id,
            properties,
            attributes,
        })
    };
    targets
        .iter()
        .filter_map(|t| {
            resources
                .get(t)
                .map(|e| (t.clone(), read(e).unwrap_or(Removed::Unreadable)))
        })
        .collect()
}

pub(crate) fn resources_of(record: &Map<String, Value>) -> Option<&Map<String, Value>> {
    record.get("resources").and_then(Value::as_object)
}

fn collect_reads(
    v: &Value,
    removed: &BTreeMap<String, Removed<'_>>,
    out: &mut Vec<(String, String)>,
) {
    let mut want = |o: &str, attr: &str| {
        let key = (o.to_string(), attr.to_string());
        let Some(Removed::Readable { resource_type, .. }) = removed.get(o) else {
            return;
        };
        // An attribute never copied whatever its value is never read either.
        if never_copied_attribute(resource_type, attr).is_none() && !out.contains(&key) {
            out.push(key);
        }
    };
    match v {
        Value::Object(m) => {
            if let Some((o, attr)) = single(m, "Fn::GetAtt").and_then(getatt_parts) {
                want(o, attr);
            }
            if let Some((t, vars)) = single(m, "Fn::Sub").and_then(sub_parts) {
                for p in placeholders(t) {
                    if let Some((o, attr)) = p.name.split_once('.') {
                        if !vars.is_some_and(|m| m.contains_key(p.name)) {
                            want(o, attr);
                        }
                    }
                }
            }
            m.values().for_each(|x| collect_reads(x, removed, out));
        }
        Value::Array(a) => a.iter().for_each(|x| collect_reads(x, removed, out)),
        _ => {}
    }
}

/// The `(logicalId, attribute)` pairs whose live value the rewrite needs: every
/// `Fn::GetAtt` site and `${O.attr}` placeholder naming a readable removed record, once,
/// in record order. Unreadable removed records need no read (they resolve nothing), and
/// neither does an attribute whose name or type alone puts it in a class never copied
/// ([`never_copied_attribute`]): a credential is never fetched.
pub fn live_reads_needed(record: &Map<String, Value>, targets: &[String]) -> Vec<(String, String)> {
    let Some(resources) = resources_of(record) else {
        return Vec::new();
    };
    let removed = snapshot(resources, targets);
    let mut out = Vec::new();
    for (id, entry) in resources {
        if targets.contains(id) {
            continue;
        }
        for field in ["properties", "attributes"] {
            if let Some(v) = entry.get(field) {
                collect_reads(v, &removed, &mut out);
            }
        }
    }
    if let Some(outputs) = record.get("outputs") {
        collect_reads(outputs, &removed, &mut out);
    }
    out
}

/// The removed record's cached `attributes[attr]` when it may be served: `Err(None)`
/// when there is none (no map, no own key, `null` or `""`), `Err(Some(class))` when it
/// is of a class never copied.
pub(crate) fn cached_value<'a>(
    resource_type: &str,
    attributes: Option<&'a Map<String, Value>>,
    attr: &str,
) -> Result<&'a Value, Option<CredentialClass>> {
    let v = attributes.and_then(|m| m.get(attr)).ok_or(None)?;
    if v.is_null() || v.as_str() == Some("") {
        return Err(None);
    }
    match never_copied(resource_type, attr, v) {
        Some(class) => Err(Some(class)),
        None => Ok(v),
    }
}

/// The value of GetAtt attribute `attr` in a reading of a resource's attributes: the key
/// `attr` itself, else, for a dotted name (`Endpoint.Address`), the path through nested
/// objects, as Cloud Control's resource model nests them. `null` counts as absent.
pub fn attribute_value<'a>(reading: &'a Value, attr: &str) -> Option<&'a Value> {
    let found = reading.get(attr).or_else(|| {
        attr.split('.')
            .try_fold(reading, |v, part| v.as_object()?.get(part))
    });
    found.filter(|v| !v.is_null())
}

/// The live answer for attribute `attr` of removed record `logical_id` (of
/// `resource_type`, physical id `physical_id`) from the read of its attributes
/// (docs/repairs.md, "Live attribute reads"): the value when the reading has it, undefined when the read
/// worked and the attribute is absent, a failure naming the resource, its type and the
/// cause (gone, no reader, the read's error) otherwise.
pub fn live_answer(
    read: &ReadResult,
    logical_id: &str,
    resource_type: &str,
    physical_id: &str,
    attr: &str,
) -> LiveAttr {
    match read {
        ReadResult::Read(reading) => match attribute_value(reading, attr) {
            Some(v) => LiveAttr::Value(v.clone()),
            None => LiveAttr::Undefined,
        },
        ReadResult::Gone => LiveAttr::Failed(LiveReadFailure::Gone {
            logical_id: logical_id.to_string(),
            resource_type: resource_type.to_string(),
            physical_id: physical_id.to_string(),
        }),
        ReadResult::NoReader => LiveAttr::Failed(LiveReadFailure::NoReader {
            logical_id: logical_id.to_string(),
            resource_type: resource_type.to_string(),
        }),
        ReadResult::Failed(m) => LiveAttr::Failed(LiveReadFailure::Threw {
            logical_id: logical_id.to_string(),
            resource_type: resource_type.to_string(),
            message: m.clone(),
        }),
    }
}
