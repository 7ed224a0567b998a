//! `<prefix>/_index/<region>/exports.json` (docs/state-and-lock.md, "The exports index"): a per-region derived view
//! of which stack produces which export. Never the source of truth; these are its pure parts.

use serde_json::{Map, Value};

use crate::destroy::refusals::exportable_outputs;

/// Newest index version this project reads and writes.
pub const INDEX_VERSION: u64 = 1;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexError {
    /// The index is not JSON or not an object: rebuild it.
    Unreadable(String),
    /// Written by a newer cdkd.
    TooNew(String),
}

impl std::error::Error for IndexError {}

/// Parses an index body. A missing or non-numeric `indexVersion` above 1 is refused.
pub fn parse_index(bytes: &[u8]) -> Result<Map<String, Value>, IndexError> {
    let v = crate::json::parse_json(bytes).map_err(IndexError::Unreadable)?;
    let Value::Object(map) = v else {
        return Err(IndexError::Unreadable("not a JSON object".into()));
    };
    match map.get("indexVersion") {
        Some(Value::Number(n)) if n.as_f64().is_some_and(|f| f <= INDEX_VERSION as f64) => Ok(map),
        Some(other) => Err(IndexError::TooNew(crate::text::flatten(Some(other)))),
        None => Err(IndexError::TooNew("(absent)".into())),
    }
}

/// Drops every export owned by `(stack, region)`. Returns whether anything changed.
pub fn remove_producer(index: &mut Map<String, Value>, stack: &str, region: &str) -> bool {
    let Some(Value::Object(exports)) = index.get_mut("exports") else {
        return false;
    };
    let before = exports.len();
    exports.retain(|_, e| {
        !(e.get("producerStack").and_then(Value::as_str) == Some(stack)
            && e.get("producerRegion").and_then(Value::as_str) == Some(region))
    });
    exports.len() != before
}

/// Builds the index of `region` from its records: every importable output of each.
pub fn rebuild<'a>(
    region: &str,
    records: impl IntoIterator<Item = (&'a str, &'a Map<String, Value>)>,
    now_ms: i64,
) -> Map<String, Value> {
    let mut exports = Map::new();
    for (stack, body) in records {
        let outputs = body.get("outputs").and_then(Value::as_object);
        for name in exportable_outputs(body) {
            let value = outputs
                .and_then(|o| o.get(&name))
                .cloned()
                .unwrap_or(Value::Null);
            let mut entry = Map::new();
            entry.insert("value".into(), value);
            entry.insert("producerStack".into(), Value::String(stack.to_string()));
            entry.insert("producerRegion".into(), Value::String(region.to_string()));
            exports.insert(name, Value::Object(entry));
        }
    }
    let mut index = Map::new();
    index.insert("indexVersion".into(), Value::from(INDEX_VERSION));
    index.insert("region".into(), Value::String(region.to_string()));
    index.insert("exports".into(), Value::Object(exports));
    index.insert("lastModified".into(), Value::from(now_ms));
    index
}

/// The bytes cdkd writes (`JSON.stringify(index, null, 2)`).
pub fn serialize(index: &Map<String, Value>) -> String {
    crate::json::stringify_pretty(&Value::Object(index.clone())).unwrap_or_else(|| "{}".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn exports_index_remove_drops_only_the_producers_own_region_entries() {
        let mut idx = obj(
            json!({"indexVersion": 1, "region": "us-east-1", "exports": {
            "A": {"value": 1, "producerStack": "Shop", "producerRegion": "us-east-1"},
            "B": {"value": 2, "producerStack": "Shop", "producerRegion": "eu-west-1"},
            "C": {"value": 3, "producerStack": "Other", "producerRegion": "us-east-1"}}}),
        );
        assert!(remove_producer(&mut idx, "Shop", "us-east-1"));
        assert_eq!(
            idx["exports"],
            json!({
            "B": {"value": 2, "producerStack": "Shop", "producerRegion": "eu-west-1"},
            "C": {"value": 3, "producerStack": "Other", "producerRegion": "us-east-1"}})
        );
        assert!(
            !remove_producer(&mut idx, "Shop", "us-east-1"),
            "a second removal changes nothing"
        );
    }

    #[test]
    fn exports_index_newer_version_is_refused_with_upgrade() {
        let e = parse_index(br#"{"indexVersion": 2, "exports": {}}"#).unwrap_err();
        assert!(e.to_string().contains("Upgrade"), "{e}");
        assert!(matches!(
            parse_index(b"not json"),
            Err(IndexError::Unreadable(_))
        ));
    }

    #[test]
    fn exports_index_rebuild_honours_export_names() {
        let a = obj(json!({"outputs": {"X": "x", "Y": "y"}, "exportNames": ["Y"]}));
        let b = obj(json!({"outputs": {"Z": [1, 2]}}));
        let idx = rebuild("us-east-1", [("A", &a), ("B", &b)], 7);
        assert_eq!(
            Value::Object(idx),
            json!({"indexVersion": 1, "region": "us-east-1", "exports": {
            "Y": {"value": "y", "producerStack": "A", "producerRegion": "us-east-1"},
            "Z": {"value": [1, 2], "producerStack": "B", "producerRegion": "us-east-1"}}, "lastModified": 7})
        );
    }
}
