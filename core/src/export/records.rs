//! State rows as the export reads them, and the damaged-record refusal
//! (docs/export.md §2.4 S5 and N1).

use serde_json::{Map, Value};

use crate::state::{kind_of, ResourcesShape, StateRecord};
use crate::text::{display_ident_str, flatten_str, or_unrenderable, STACK_NAME_CAP};

/// A record the export refuses to read, by name (root: at the state load, before any
/// lock; a nested child: before any child is planned or locked; dry runs too).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DamagedRecord {
    #[error("State record for stack {stack} ({region}) is damaged: 'resources' is {kind}, not a JSON object. Export refuses it; repair the record first.")]
    Resources {
        stack: String,
        region: String,
        kind: &'static str,
    },
    #[error("State record for stack {stack} ({region}) is damaged: the 'properties' of resource {logical_id} is {kind}, not a JSON object. Export refuses it; repair the record first.")]
    Properties {
        stack: String,
        region: String,
        logical_id: String,
        kind: &'static str,
    },
    /// The rule destroy applies too (`crate::state::RegionConflict`).
    #[error("State record for stack {stack} ({region}): {reason}. Export refuses it, as destroy does; nothing was locked or written.")]
    RegionConflict {
        stack: String,
        region: String,
        reason: String,
    },
}

use crate::state::shown_region;

/// The damaged-record check: `resources` must be an object, and every resource entry
/// that is an object must carry an object `properties` (absent counts as damaged). Then
/// the region rule destroy applies too: a record with resources whose body names another
/// region than its key is refused.
/// Entries that are not objects are not refused here: they get the malformed-row warning
/// (docs/export.md §8.1) and are blocked only when the template declares them.
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
                reason: c.reason(key_region),
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
