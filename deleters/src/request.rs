//! What a deleter is asked to delete: one record of a stack's state plus the run context.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The run this delete belongs to. Custom-resource responses are written under
/// `<state_prefix>/_runs/<run_id>/cr/` in `state_bucket`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunContext {
    pub run_id: String,
    pub stack: String,
    pub state_bucket: String,
    pub state_prefix: String,
}

/// One record to delete.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteRequest {
    pub logical_id: String,
    pub resource_type: String,
    pub physical_id: String,
    /// The record's `properties` (`Value::Null` when the record has none).
    #[serde(default)]
    pub properties: Value,
    /// The record's `attributes` (`Value::Null` when the record has none).
    #[serde(default)]
    pub attributes: Value,
    /// The record's `provisionedBy` (`sdk`, `cc-api`, or absent).
    #[serde(default)]
    pub provisioned_by: Option<String>,
    /// The region recorded in the stack's state (`state.region`): the region guard
    /// compares every client's region with it.
    pub region: String,
    /// 0 for the first attempt; the caller increments it when it starts the delete again
    /// after a failed attempt (Cloud Control derives a fresh ClientToken from it, so a
    /// resumed attempt reuses its token and a new attempt does not).
    #[serde(default)]
    pub attempt: u32,
    pub run: RunContext,
}

impl DeleteRequest {
    /// `properties[key]` as a string, if it is one.
    pub fn prop_str(&self, key: &str) -> Option<&str> {
        self.properties.get(key).and_then(Value::as_str)
    }

    /// `attributes[key]` as a string, if it is one.
    pub fn attr_str(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).and_then(Value::as_str)
    }

    /// `properties[key]` as a list of strings (non-strings are left out).
    pub fn prop_str_list(&self, key: &str) -> Vec<String> {
        match self.properties.get(key) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            Some(Value::String(s)) => vec![s.clone()],
            _ => Vec::new(),
        }
    }
}
