//! State rows as the export reads them, the damaged-record refusal (docs/export.md
//! "Step details" S5 and N1), and the snapshot of the record a plan was made from, which the lock
//! compares with the record under the lock ("The lock (export-lock)").

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::state::{kind_of, ResourcesShape, StateRecord};
use crate::text::{display_ident_str, flatten_str, or_unrenderable, STACK_NAME_CAP};

/// A record the export refuses to read, by name (root: at the state load, before any
/// lock; a nested child: before any child is planned or locked; dry runs too). The way
/// out is repairing the record; its words are the refusal views' (`core::view::refusal`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DamagedRecord {
    Resources {
        stack: String,
        region: String,
        kind: &'static str,
    },
    Properties {
        stack: String,
        region: String,
        logical_id: String,
        kind: &'static str,
    },
    /// The rule destroy applies too (`crate::state::RegionConflict`), worded as destroy
    /// words it; `key_region` is the region of the key, as loaded.
    RegionConflict {
        stack: String,
        region: String,
        conflict: crate::state::RegionConflict,
        key_region: String,
    },
}

impl std::error::Error for DamagedRecord {}

use crate::state::shown_region;

/// The damaged-record check: `resources` must be an object, and every resource entry
/// that is an object must carry an object `properties` (absent counts as damaged). Then
/// the region rule destroy applies too: a record with resources whose body names another
/// region than its key is refused.
/// Entries that are not objects are not refused here: they get the malformed-row warning
/// (docs/export.md, "Drift-baseline warning") and are blocked only when the template declares them.
pub fn check_exportable(
    record: &StateRecord,
    stack: &str,
    region: Option<&str>,
) -> Result<(), DamagedRecord> {
    let shown = display_ident_str(stack, STACK_NAME_CAP);
    let rows = match record.resources() {
        ResourcesShape::Map(m) => m,
        ResourcesShape::Absent => {
            return Err(DamagedRecord::Resources {
                stack: shown,
                region: shown_region(region),
                kind: "absent",
            })
        }
        ResourcesShape::Null => {
            return Err(DamagedRecord::Resources {
                stack: shown,
                region: shown_region(region),
                kind: "null",
            })
        }
        ResourcesShape::Other(v) => {
            return Err(DamagedRecord::Resources {
                stack: shown,
                region: shown_region(region),
                kind: kind_of(v),
            })
        }
    };
    for (id, entry) in crate::json::ordered_entries(rows) {
        let Value::Object(row) = entry else { continue };
        let kind = match row.get("properties") {
            Some(Value::Object(_)) => continue,
            None => "absent",
            Some(v) => kind_of(v),
        };
        return Err(DamagedRecord::Properties {
            stack: shown,
            region: shown_region(region),
            logical_id: or_unrenderable(flatten_str(id)),
            kind,
        });
    }
    if let Some(key_region) = region {
        if let Some(c) = crate::state::RegionConflict::of(
            &record.body,
            record.divergent_body_region.as_ref(),
            key_region,
        ) {
            return Err(DamagedRecord::RegionConflict {
                stack: shown,
                region: shown_region(region),
                conflict: c,
                key_region: key_region.to_string(),
            });
        }
    }
    Ok(())
}

/// The record's rows (empty when `resources` is not an object).
pub fn rows(record: &StateRecord) -> Option<&Map<String, Value>> {
    match record.resources() {
        ResourcesShape::Map(m) => Some(m),
        _ => None,
    }
}

/// One state row, read field by field.
#[derive(Clone, Copy, Debug)]
pub struct Row<'a> {
    pub body: &'a Map<String, Value>,
}

impl<'a> Row<'a> {
    /// The row at `logical_id` when it is an object.
    pub fn get(record: &'a StateRecord, logical_id: &str) -> Option<Row<'a>> {
        rows(record)?
            .get(logical_id)?
            .as_object()
            .map(|body| Row { body })
    }

    /// `resourceType` when it is a non-empty string.
    pub fn resource_type(&self) -> Option<&'a str> {
        self.body
            .get("resourceType")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }

    /// `physicalId` when it is a non-empty string.
    pub fn physical_id(&self) -> Option<&'a str> {
        self.body
            .get("physicalId")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }

    pub fn properties(&self) -> Option<&'a Map<String, Value>> {
        self.body.get("properties").and_then(Value::as_object)
    }

    pub fn property(&self, key: &str) -> Option<&'a Value> {
        self.properties().and_then(|p| p.get(key))
    }

    pub fn attributes(&self) -> Option<&'a Map<String, Value>> {
        self.body.get("attributes").and_then(Value::as_object)
    }

    pub fn attribute(&self, key: &str) -> Option<&'a Value> {
        self.attributes().and_then(|a| a.get(key))
    }
}

/// What the plan read of one record (docs/export.md, "The lock (export-lock)"), kept in `plan.json` so that
/// the lock step can tell, under the lock, whether the record is still the one planned,
/// whole: the object's ETag at plan time, a digest of each row by logical id, and a
/// digest of each other top-level field but `lastModified` (every writer stamps it; it
/// says nothing about what the record holds). Digests are SHA-256 over the value with
/// its object keys sorted and its numbers as JavaScript prints them, so a rewrite of the
/// same content in another key order counts as unchanged.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannedRecord {
    /// The quoted ETag of `state.json` as the plan read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// Logical id → digest of the row.
    pub rows: BTreeMap<String, String>,
    /// Top-level field → digest (`resources` only when it is not an object).
    pub fields: BTreeMap<String, String>,
}

/// The fields left out of [`PlannedRecord::fields`].
const UNCOMPARED_FIELDS: [&str; 1] = ["lastModified"];

impl PlannedRecord {
    /// The snapshot of `record`, read at `etag`.
    pub fn of(record: &StateRecord, etag: Option<&str>) -> PlannedRecord {
        let rows = rows(record)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), digest(v))).collect())
            .unwrap_or_default();
        let fields = record
            .body
            .iter()
            .filter(|(k, v)| {
                let rows_field = k.as_str() == "resources" && v.is_object();
                !(rows_field || UNCOMPARED_FIELDS.contains(&k.as_str()))
            })
            .map(|(k, v)| (k.clone(), digest(v)))
            .collect();
        PlannedRecord {
            etag: etag.map(str::to_string),
            rows,
            fields,
        }
    }

    /// What differs in `current` (read at `etag`) from the record this snapshot was
    /// taken of: nothing when the ETag is the same object's, else row by row and field
    /// by field.
    pub fn changes(&self, current: &StateRecord, etag: Option<&str>) -> RecordChanges {
        if etag.is_some() && etag == self.etag.as_deref() {
            return RecordChanges::default();
        }
        let now = PlannedRecord::of(current, etag);
        let (added, removed, changed) = diff(&self.rows, &now.rows);
        let (f_added, f_removed, f_changed) = diff(&self.fields, &now.fields);
        let mut fields: Vec<String> = f_added
            .into_iter()
            .chain(f_removed)
            .chain(f_changed)
            .collect();
        fields.sort();
        RecordChanges {
            gone: false,
            added,
            removed,
            changed,
            fields,
        }
    }
}

/// Keys only in `after`, only in `before`, and in both with another digest; each sorted.
fn diff(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> (Vec<String>, Vec<String>, Vec<String>) {
    let added = after
        .keys()
        .filter(|k| !before.contains_key(*k))
        .cloned()
        .collect();
    let mut removed = Vec::new();
    let mut changed = Vec::new();
    for (k, d) in before {
        match after.get(k) {
            None => removed.push(k.clone()),
            Some(now) if now != d => changed.push(k.clone()),
            Some(_) => {}
        }
    }
    (added, removed, changed)
}

/// How a record read under the lock differs from the one the plan read
/// ([`PlannedRecord::changes`]); empty when it is the same.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordChanges {
    /// The record is gone.
    pub gone: bool,
    /// Rows by logical id.
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
    /// Top-level fields added, removed or changed (`outputs`, `orphans` ...).
    pub fields: Vec<String>,
}

/// Ids named per group of `RecordChanges::describe` (the refusal views'); the rest are
/// counted.
pub const CHANGES_NAMED: usize = 10;

impl RecordChanges {
    pub fn is_empty(&self) -> bool {
        !self.gone
            && self.added.is_empty()
            && self.removed.is_empty()
            && self.changed.is_empty()
            && self.fields.is_empty()
    }
}

/// SHA-256 (hex) of `v` with object keys sorted and numbers as JavaScript prints them;
/// iterative, so any depth a record can hold is digested without recursion.
pub fn digest(v: &Value) -> String {
    enum Step<'a> {
        Value(&'a Value),
        Key(&'a str),
        Lit(&'static str),
    }
    let mut h = Sha256::new();
    let mut stack = vec![Step::Value(v)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Lit(s) => h.update(s.as_bytes()),
            Step::Key(k) => {
                h.update(Value::from(k).to_string().as_bytes());
                h.update(b":");
            }
            Step::Value(Value::Object(m)) => {
                h.update(b"{");
                stack.push(Step::Lit("}"));
                let mut entries: Vec<(&String, &Value)> = m.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                for (i, (k, v)) in entries.into_iter().enumerate().rev() {
                    stack.push(Step::Value(v));
                    stack.push(Step::Key(k));
                    if i > 0 {
                        stack.push(Step::Lit(","));
                    }
                }
            }
            Step::Value(Value::Array(a)) => {
                h.update(b"[");
                stack.push(Step::Lit("]"));
                for (i, v) in a.iter().enumerate().rev() {
                    stack.push(Step::Value(v));
                    if i > 0 {
                        stack.push(Step::Lit(","));
                    }
                }
            }
            Step::Value(Value::Number(n)) => h.update(crate::js::js_number(n).as_bytes()),
            Step::Value(scalar) => h.update(scalar.to_string().as_bytes()),
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(body: &str) -> StateRecord {
        crate::state::parse_state("App", Some("us-east-1"), body.as_bytes()).unwrap()
    }

    #[test]
    fn statement_11_resources_array_is_refused_by_name() {
        let r = rec(r#"{"version":10,"resources":[{"physicalId":"b"}]}"#);
        let err = check_exportable(&r, "App", Some("us-east-1")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "State record for stack App (us-east-1) is damaged: 'resources' is an array, not a JSON object. Export refuses it; repair the record first."
        );
    }

    #[test]
    fn damaged_record_every_non_object_resources_shape_refuses() {
        for (body, kind) in [
            (r#"{"version":10}"#, "absent"),
            (r#"{"resources":null}"#, "null"),
            (r#"{"resources":"x"}"#, "a string"),
            (r#"{"resources":1}"#, "a number"),
            (r#"{"resources":true}"#, "a boolean"),
        ] {
            match check_exportable(&rec(body), "App", Some("us-east-1")) {
                Err(DamagedRecord::Resources { kind: k, .. }) => assert_eq!(k, kind),
                other => panic!("{body}: {other:?}"),
            }
        }
    }

    #[test]
    fn damaged_record_properties_not_an_object_refuses_naming_the_row() {
        for (props, kind) in [
            ("null", "null"),
            ("[]", "an array"),
            ("\"x\"", "a string"),
            ("3", "a number"),
            ("false", "a boolean"),
        ] {
            let body = format!(
                r#"{{"resources":{{"Ok":{{"physicalId":"a","resourceType":"T","properties":{{}}}},"Bad\n":{{"physicalId":"b","resourceType":"T","properties":{props}}}}}}}"#
            );
            let err = check_exportable(&rec(&body), "App", None).unwrap_err();
            assert_eq!(
                err,
                DamagedRecord::Properties {
                    stack: "App".into(),
                    region: "no region, legacy key".into(),
                    logical_id: "Bad".into(),
                    kind
                }
            );
        }
        let absent = rec(r#"{"resources":{"A":{"physicalId":"a"}}}"#);
        assert!(matches!(
            check_exportable(&absent, "App", None),
            Err(DamagedRecord::Properties { kind: "absent", .. })
        ));
    }

    #[test]
    fn damaged_record_non_object_rows_are_left_to_the_malformed_row_warning() {
        let r = rec(r#"{"resources":{"A":null,"B":"x","C":{"physicalId":"c","properties":{}}}}"#);
        assert!(check_exportable(&r, "App", Some("us-east-1")).is_ok());
        assert!(Row::get(&r, "A").is_none());
        let c = Row::get(&r, "C").unwrap();
        assert_eq!(c.physical_id(), Some("c"));
        assert_eq!(c.resource_type(), None);
    }
}
