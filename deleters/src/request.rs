//! What a deleter is asked to delete: one record of a stack's state plus the run context.

pub use cdkd_core::destroy::decide::FinalSnapshot;
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
    /// What the run asks of this delete beyond deleting (final snapshot, protection).
    /// Absent in requests persisted before it existed: then nothing is asked.
    #[serde(default)]
    pub options: DeleteOptions,
}

/// Per-delete options decided by the workflow (docs/destroy.md, "One record in a wave" steps 3 and 8).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteOptions {
    /// `DeletionPolicy: Snapshot` (and not `skipFinalSnapshot`): the delete must take this
    /// final snapshot. A deleter that cannot must refuse (`FINAL_SNAPSHOT_UNSUPPORTED`)
    /// without deleting anything (the `guard` module's `refuse_final_snapshot`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_snapshot: Option<FinalSnapshot>,
    /// `removeProtection`: turn the resource's deletion protection off before deleting.
    /// Without it a protected resource fails with a message saying so.
    #[serde(default)]
    pub remove_protection: bool,
}

impl DeleteRequest {
    /// `properties.Tags` (CloudFormation's `[{Key, Value}]` list) has `key` = `value`
    /// (compared case-insensitively for the value, as CDK writes `true`).
    pub fn has_tag(&self, key: &str, value: &str) -> bool {
        match self.properties.get("Tags") {
            Some(Value::Array(tags)) => tags.iter().any(|t| {
                t.get("Key").and_then(Value::as_str) == Some(key)
                    && t.get("Value")
                        .and_then(Value::as_str)
                        .is_some_and(|v| v.eq_ignore_ascii_case(value))
            }),
            _ => false,
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Value {
        json!({"logicalId": "Db", "resourceType": "AWS::RDS::DBInstance", "physicalId": "db",
               "region": "us-east-1",
               "run": {"runId": "r", "stack": "S", "stateBucket": "b", "statePrefix": "cdkd"}})
    }

    #[test]
    fn request_persisted_before_options_existed_still_parses_with_nothing_asked() {
        let r: DeleteRequest = serde_json::from_value(base()).unwrap();
        assert_eq!(r.options, DeleteOptions::default());
        assert_eq!(r.options.final_snapshot, None);
        assert!(!r.options.remove_protection);
    }

    #[test]
    fn final_snapshot_and_remove_protection_round_trip_in_the_request() {
        let mut v = base();
        v["options"] = json!({"finalSnapshot": {"identifier": "db-final-20261129-123456"}, "removeProtection": true});
        let r: DeleteRequest = serde_json::from_value(v).unwrap();
        assert_eq!(
            r.options.final_snapshot,
            Some(FinalSnapshot::Identifier("db-final-20261129-123456".into()))
        );
        assert!(r.options.remove_protection);
        let back: DeleteRequest =
            serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn auto_delete_objects_tag_is_read_from_recorded_tags() {
        let mut r: DeleteRequest = serde_json::from_value(base()).unwrap();
        assert!(!r.has_tag("aws-cdk:auto-delete-objects", "true"));
        r.properties = json!({"Tags": [{"Key": "x", "Value": "true"}, {"Key": "aws-cdk:auto-delete-objects", "Value": "true"}]});
        assert!(r.has_tag("aws-cdk:auto-delete-objects", "true"));
        r.properties = json!({"Tags": [{"Key": "aws-cdk:auto-delete-objects", "Value": "false"}]});
        assert!(!r.has_tag("aws-cdk:auto-delete-objects", "true"));
    }

    /// The one reading of a recorded property (the policy deleters' `Bucket`, `Queues`,
    /// `Topics`): a lone string stands for a list of one (a record written by hand or by
    /// an older cdkd), anything not a string is left out.
    #[test]
    fn property_reads_take_a_lone_string_as_a_list_and_leave_out_non_strings() {
        let mut r: DeleteRequest = serde_json::from_value(base()).unwrap();
        r.properties = json!({"Bucket": "b", "Count": 3, "Queues": ["q1", 7, "q2"], "Topics": "t"});
        assert_eq!(r.prop_str("Bucket"), Some("b"));
        assert_eq!(r.prop_str("Count"), None);
        assert_eq!(r.prop_str("Missing"), None);
        assert_eq!(r.prop_str_list("Queues"), vec!["q1", "q2"]);
        assert_eq!(r.prop_str_list("Topics"), vec!["t"]);
        assert_eq!(r.prop_str_list("Count"), Vec::<String>::new());
        assert_eq!(r.prop_str_list("Missing"), Vec::<String>::new());
    }
}
