//! The per-record decision inside a wave (spec §2.8 steps 2–4, §4.1 pre-checks): retain,
//! no-op, refuse, skip, or delete through which route and with which final snapshot.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What to do with one ready record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// `Retain` / `RetainExceptOnCreate`: no AWS call, outcome `retained`, record kept.
    Retain,
    /// `AWS::CDK::Metadata` (and types AWS removes with their parent): outcome `deleted`
    /// with no AWS call.
    NoOp,
    /// Call a deleter.
    Delete(DeletePlan),
    /// Refused before any call (outcome `failed`, record kept).
    Fail { error: String },
    /// Declined before any call (outcome `skipped`, record kept).
    Skip { reason: String },
}

/// How to delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeletePlan {
    pub route: Route,
    pub final_snapshot: Option<FinalSnapshot>,
}

/// Which deleter family handles the record (spec §2.8 step 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `Custom::*` / `AWS::CloudFormation::CustomResource`: Delete request to the
    /// ServiceToken (spec §4).
    CustomResource,
    /// `AWS::CloudFormation::Stack`: the child stack first (spec §5).
    NestedStack,
    /// Recorded `provisionedBy: cc-api`: Cloud Control with the recorded id.
    CloudControl,
    /// A type whose SDK deleter must be used whatever `provisionedBy` says
    /// (`AWS::Scheduler::Schedule`: Cloud Control silently no-ops non-default groups;
    /// [`SDK_EVEN_WHEN_CC_API`]: Cloud Control leaves Lambda's VPC interfaces).
    Sdk,
    /// Not pinned: the deleter registry picks the type's SDK deleter, else Cloud
    /// Control with the identifier translation of spec §3.2.
    ByType,
}

/// Final snapshot handling for `DeletionPolicy: Snapshot` (spec §2.8 step 3). Carried
/// to the deleter in its request; a deleter that cannot honour it must refuse the delete
/// ([`FINAL_SNAPSHOT_UNSUPPORTED`]), never delete without the snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FinalSnapshot {
    /// Pass this identifier to the type's own delete call.
    Identifier(String),
    /// Create a snapshot, wait for it, then delete normally (EBS volume, Redshift
    /// cluster, ElastiCache replication group).
    SnapshotFirst,
}

impl FinalSnapshot {
    /// What the snapshot would have been, for messages.
    pub fn describe(&self) -> String {
        match self {
            FinalSnapshot::Identifier(id) => format!("final snapshot {id}"),
            FinalSnapshot::SnapshotFirst => "a snapshot taken before the delete".to_string(),
        }
    }
}

/// The refusal of a delete that would lose its final snapshot: no deleter for the record
/// can take one (Cloud Control has no snapshot parameter; no SDK deleter for the type
/// takes the identifier). Names the error code, type, logical id and stack.
pub fn final_snapshot_refusal(
    resource_type: &str,
    logical_id: &str,
    stack: &str,
    snapshot: &FinalSnapshot,
    why: &str,
) -> String {
    format!(
        "{FINAL_SNAPSHOT_UNSUPPORTED}: {resource_type} {logical_id} in stack {stack} has DeletionPolicy Snapshot ({}), but {why}; nothing was deleted. Snapshot and delete it by hand, or destroy with skipFinalSnapshot to delete it without a snapshot",
        snapshot.describe()
    )
}

/// Inputs of the decision that are not in the record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecideOptions {
    /// `skipFinalSnapshot`: ignore `DeletionPolicy: Snapshot`.
    pub skip_final_snapshot: bool,
    /// Now, ms since the epoch, for the final snapshot's UTC stamp.
    pub now_ms: u64,
}

/// Error code of a snapshot policy on a type that cannot take one (statement 20).
pub const FINAL_SNAPSHOT_UNSUPPORTED: &str = "FINAL_SNAPSHOT_UNSUPPORTED";

const SNAPSHOT_ON_DELETE: [&str; 5] = [
    "AWS::RDS::DBInstance",
    "AWS::RDS::DBCluster",
    "AWS::Neptune::DBCluster",
    "AWS::DocDB::DBCluster",
    "AWS::ElastiCache::CacheCluster",
];
const SNAPSHOT_FIRST: [&str; 3] = [
    "AWS::EC2::Volume",
    "AWS::Redshift::Cluster",
    "AWS::ElastiCache::ReplicationGroup",
];

/// `shouldRetainResource`: exactly `Retain` and `RetainExceptOnCreate`.
pub fn should_retain(entry: &Map<String, Value>) -> bool {
    matches!(
        entry.get("deletionPolicy").and_then(Value::as_str),
        Some("Retain" | "RetainExceptOnCreate")
    )
}

/// Types whose SDK deleter is used even for a record Cloud Control created
/// (`provisionedBy: cc-api`; this project's deviation from cdkd, which sends those to
/// Cloud Control): Cloud Control deletes a VPC Lambda function without the network
/// interfaces Lambda leaves behind, and gives up on a security group still held by
/// them, where the SDK deleters sweep the interfaces and wait for the group (30 min);
/// an EC2 instance's API-termination protection is turned off through EC2 (spec §3.1
/// removeProtection), which the SDK deleter does. Cloud Control's identifier of these
/// types is the physical id the SDK deleter takes (function name, group id, instance id).
pub const SDK_EVEN_WHEN_CC_API: &[&str] = &[
    "AWS::Lambda::Function",
    "AWS::EC2::SecurityGroup",
    "AWS::EC2::Instance",
];

/// Custom-resource types (spec §2.8 step 4).
pub fn is_custom_resource(resource_type: &str) -> bool {
    resource_type.starts_with("Custom::") || resource_type == "AWS::CloudFormation::CustomResource"
}

/// Decides what to do with one record (spec §2.8 steps 2–4).
pub fn decide(entry: &Map<String, Value>, opts: DecideOptions) -> Decision {
    if should_retain(entry) {
        return Decision::Retain;
    }
    let ty = entry
        .get("resourceType")
        .and_then(Value::as_str)
        .unwrap_or("");
    let cc_pinned = entry.get("provisionedBy").and_then(Value::as_str) == Some("cc-api");
    let snapshot = entry.get("deletionPolicy").and_then(Value::as_str) == Some("Snapshot")
        && !opts.skip_final_snapshot;

    let mut final_snapshot = None;
    if snapshot {
        if SNAPSHOT_ON_DELETE.contains(&ty) {
            if cc_pinned {
                return Decision::Fail {
                    error: format!(
                        "{FINAL_SNAPSHOT_UNSUPPORTED}: {ty} was created through Cloud Control, whose delete cannot take a final snapshot; delete it by hand or destroy with skipFinalSnapshot"
                    ),
                };
            }
            let in_cluster = ty == "AWS::RDS::DBInstance"
                && entry
                    .get("properties")
                    .and_then(|p| p.get("DBClusterIdentifier"))
                    .is_some_and(|v| !v.is_null());
            if !in_cluster {
                let physical = entry
                    .get("physicalId")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let limit = if ty == "AWS::ElastiCache::CacheCluster" {
                    50
                } else {
                    255
                };
                final_snapshot = Some(FinalSnapshot::Identifier(final_snapshot_identifier(
                    physical,
                    limit,
                    opts.now_ms,
                )));
            }
        } else if SNAPSHOT_FIRST.contains(&ty) {
            final_snapshot = Some(FinalSnapshot::SnapshotFirst);
        } else {
            return Decision::Fail {
                error: format!(
                    "{FINAL_SNAPSHOT_UNSUPPORTED}: DeletionPolicy Snapshot is not supported for {ty}; delete it by hand or destroy with skipFinalSnapshot"
                ),
            };
        }
    }

    if ty == "AWS::CDK::Metadata" {
        return Decision::NoOp;
    }
    let route = if is_custom_resource(ty) {
        match custom_resource_precheck(entry) {
            Ok(()) => Route::CustomResource,
            Err(d) => return d,
        }
    } else if ty == "AWS::CloudFormation::Stack" {
        Route::NestedStack
    } else if ty == "AWS::Scheduler::Schedule" || (cc_pinned && SDK_EVEN_WHEN_CC_API.contains(&ty))
    {
        Route::Sdk
    } else if cc_pinned {
        Route::CloudControl
    } else {
        Route::ByType
    };
    Decision::Delete(DeletePlan {
        route,
        final_snapshot,
    })
}

/// Spec §4.1: no properties or no `ServiceToken` → skipped; a non-string token → failed.
fn custom_resource_precheck(entry: &Map<String, Value>) -> Result<(), Decision> {
    let Some(props) = entry.get("properties").and_then(Value::as_object) else {
        return Err(Decision::Skip {
            reason: "custom resource has no recorded properties, so its handler cannot be called"
                .into(),
        });
    };
    match props.get("ServiceToken") {
        None | Some(Value::Null) => Err(Decision::Skip {
            reason: "custom resource has no ServiceToken, so its handler cannot be called".into(),
        }),
        Some(Value::String(_)) => Ok(()),
        Some(_) => Err(Decision::Fail {
            error: "custom resource ServiceToken is not a string".into(),
        }),
    }
}

/// Final snapshot identifier (spec §2.8 step 3): physical id lowered, non `[a-z0-9-]` →
/// `-`, runs of `-` collapsed, `-` trimmed, `r` prefixed unless it starts with a letter,
/// truncated so the whole name fits `limit`, then `-final-YYYYMMDD-HHMMSS` (UTC).
/// A `-` left at the end by the truncation is trimmed too (AWS refuses `--`).
pub fn final_snapshot_identifier(physical_id: &str, limit: usize, now_ms: u64) -> String {
    let mut base = String::with_capacity(physical_id.len());
    for c in physical_id.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' {
            c
        } else {
            '-'
        };
        if c == '-' && base.ends_with('-') {
            continue;
        }
        base.push(c);
    }
    let mut base = base.trim_matches('-').to_string();
    if !base.starts_with(|c: char| c.is_ascii_lowercase()) {
        base.insert(0, 'r');
    }
    let suffix = format!("-final-{}", utc_stamp(now_ms));
    let room = limit.saturating_sub(suffix.len()).max(1);
    base.truncate(room);
    let base = base.trim_end_matches('-');
    format!("{base}{suffix}")
}

/// `YYYYMMDD-HHMMSS` in UTC.
fn utc_stamp(now_ms: u64) -> String {
    // "YYYY-MM-DDTHH:MM:SS.sssZ" → digits only.
    let iso = crate::render::date::iso_from_ms(now_ms.min(8_640_000_000_000_000) as i64);
    let digits: String = iso.chars().take(19).filter(char::is_ascii_digit).collect();
    format!("{}-{}", &digits[..8], &digits[8..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    // 2026-11-29 12:34:56 UTC
    const NOW: u64 = 1_795_955_696_000;

    fn opts() -> DecideOptions {
        DecideOptions {
            skip_final_snapshot: false,
            now_ms: NOW,
        }
    }

    #[test]
    fn retain_policies_make_no_call_statement_15() {
        for p in ["Retain", "RetainExceptOnCreate"] {
            let e = entry(json!({"resourceType": "AWS::S3::Bucket", "deletionPolicy": p}));
            assert_eq!(decide(&e, opts()), Decision::Retain);
        }
    }

    #[test]
    fn no_or_delete_policy_is_deleted_statement_17() {
        for e in [
            json!({"resourceType": "AWS::SNS::Topic"}),
            json!({"resourceType": "AWS::SNS::Topic", "deletionPolicy": "Delete"}),
        ] {
            assert_eq!(
                decide(&entry(e), opts()),
                Decision::Delete(DeletePlan {
                    route: Route::ByType,
                    final_snapshot: None
                })
            );
        }
    }

    #[test]
    fn cdk_metadata_is_a_no_op_delete() {
        let e = entry(json!({"resourceType": "AWS::CDK::Metadata"}));
        assert_eq!(decide(&e, opts()), Decision::NoOp);
    }

    #[test]
    fn rds_instance_snapshot_policy_carries_final_identifier_statement_18() {
        let e = entry(
            json!({"resourceType": "AWS::RDS::DBInstance", "physicalId": "My_DB.1",
                             "deletionPolicy": "Snapshot", "provisionedBy": "sdk"}),
        );
        assert_eq!(
            decide(&e, opts()),
            Decision::Delete(DeletePlan {
                route: Route::ByType,
                final_snapshot: Some(FinalSnapshot::Identifier(
                    "my-db-1-final-20261129-123456".into()
                ))
            })
        );
        let skip = DecideOptions {
            skip_final_snapshot: true,
            ..opts()
        };
        assert_eq!(
            decide(&e, skip),
            Decision::Delete(DeletePlan {
                route: Route::ByType,
                final_snapshot: None
            })
        );
    }

    #[test]
    fn rds_instance_in_cluster_gets_no_final_snapshot_rule_2_8_3() {
        let e = entry(
            json!({"resourceType": "AWS::RDS::DBInstance", "physicalId": "db",
                             "deletionPolicy": "Snapshot",
                             "properties": {"DBClusterIdentifier": "c"}}),
        );
        assert_eq!(
            decide(&e, opts()),
            Decision::Delete(DeletePlan {
                route: Route::ByType,
                final_snapshot: None
            })
        );
    }

    #[test]
    fn snapshot_policy_on_cloud_control_record_fails_without_call_statement_19() {
        let e = entry(
            json!({"resourceType": "AWS::RDS::DBInstance", "physicalId": "db",
                             "deletionPolicy": "Snapshot", "provisionedBy": "cc-api"}),
        );
        let Decision::Fail { error } = decide(&e, opts()) else {
            panic!()
        };
        assert!(error.starts_with(FINAL_SNAPSHOT_UNSUPPORTED));
    }

    #[test]
    fn snapshot_policy_on_bucket_fails_unsupported_statement_20() {
        let e = entry(json!({"resourceType": "AWS::S3::Bucket", "deletionPolicy": "Snapshot"}));
        let Decision::Fail { error } = decide(&e, opts()) else {
            panic!()
        };
        assert!(error.contains(FINAL_SNAPSHOT_UNSUPPORTED));
        assert!(error.contains("AWS::S3::Bucket"));
    }

    #[test]
    fn snapshot_first_types_snapshot_then_delete_rule_2_8_3() {
        let e = entry(json!({"resourceType": "AWS::EC2::Volume", "deletionPolicy": "Snapshot"}));
        assert_eq!(
            decide(&e, opts()),
            Decision::Delete(DeletePlan {
                route: Route::ByType,
                final_snapshot: Some(FinalSnapshot::SnapshotFirst)
            })
        );
    }

    #[test]
    fn final_snapshot_refusal_names_code_type_logical_id_and_stack_rule_2_8_3() {
        let m = final_snapshot_refusal(
            "AWS::RDS::DBInstance",
            "Db",
            "Shop",
            &FinalSnapshot::Identifier("db-final-20261129-123456".into()),
            "Cloud Control's delete has no snapshot parameter",
        );
        assert!(
            m.starts_with("FINAL_SNAPSHOT_UNSUPPORTED: AWS::RDS::DBInstance Db in stack Shop"),
            "{m}"
        );
        assert!(m.contains("db-final-20261129-123456"), "{m}");
        assert!(m.contains("nothing was deleted"), "{m}");
    }

    #[test]
    fn final_snapshot_serializes_for_the_delete_request() {
        let v = serde_json::to_value(FinalSnapshot::Identifier("x".into())).unwrap();
        assert_eq!(v, json!({"identifier": "x"}));
        let v = serde_json::to_value(FinalSnapshot::SnapshotFirst).unwrap();
        assert_eq!(v, json!("snapshotFirst"));
        assert_eq!(
            serde_json::from_value::<FinalSnapshot>(json!({"identifier": "x"})).unwrap(),
            FinalSnapshot::Identifier("x".into())
        );
    }

    #[test]
    fn final_snapshot_identifier_sanitizes_prefixes_and_truncates() {
        assert_eq!(
            final_snapshot_identifier("--9Abc__def--", 255, NOW),
            "r9abc-def-final-20261129-123456"
        );
        let long = "a".repeat(80);
        let id = final_snapshot_identifier(&long, 50, NOW);
        assert_eq!(id.len(), 50);
        assert!(id.ends_with("-final-20261129-123456"));
        let id = final_snapshot_identifier(&format!("{}-b", "a".repeat(27)), 50, NOW);
        assert!(!id.contains("--"), "{id}");
        assert_eq!(
            final_snapshot_identifier("", 255, 0),
            "r-final-19700101-000000"
        );
    }

    #[test]
    fn routes_follow_type_and_provisioned_by_rule_2_8_4() {
        let r = |v: Value| match decide(&entry(v), opts()) {
            Decision::Delete(p) => p.route,
            d => panic!("{d:?}"),
        };
        assert_eq!(
            r(json!({"resourceType": "Custom::X", "properties": {"ServiceToken": "arn"}})),
            Route::CustomResource
        );
        assert_eq!(
            r(
                json!({"resourceType": "AWS::CloudFormation::CustomResource", "properties": {"ServiceToken": "arn"}})
            ),
            Route::CustomResource
        );
        assert_eq!(
            r(json!({"resourceType": "AWS::CloudFormation::Stack"})),
            Route::NestedStack
        );
        assert_eq!(
            r(json!({"resourceType": "AWS::Logs::LogGroup", "provisionedBy": "cc-api"})),
            Route::CloudControl
        );
        assert_eq!(
            r(json!({"resourceType": "AWS::Logs::LogGroup"})),
            Route::ByType
        );
    }

    #[test]
    fn cc_api_lambda_function_and_security_group_go_to_their_sdk_deleter_that_sweeps_interfaces() {
        let r = |v: Value| match decide(&entry(v), opts()) {
            Decision::Delete(p) => p.route,
            d => panic!("{d:?}"),
        };
        for t in SDK_EVEN_WHEN_CC_API {
            assert_eq!(
                r(json!({"resourceType": t, "provisionedBy": "cc-api"})),
                Route::Sdk,
                "{t}"
            );
            assert_eq!(r(json!({"resourceType": t})), Route::ByType, "{t}");
        }
    }

    #[test]
    fn scheduler_schedule_never_goes_through_cloud_control_statement_54() {
        let e = entry(
            json!({"resourceType": "AWS::Scheduler::Schedule", "provisionedBy": "cc-api",
                             "properties": {"GroupName": "g"}}),
        );
        assert_eq!(
            decide(&e, opts()),
            Decision::Delete(DeletePlan {
                route: Route::Sdk,
                final_snapshot: None
            })
        );
    }

    #[test]
    fn custom_resource_without_service_token_is_skipped_statement_42() {
        let e = entry(json!({"resourceType": "Custom::X", "properties": {}}));
        assert!(matches!(decide(&e, opts()), Decision::Skip { .. }));
        let e = entry(json!({"resourceType": "Custom::X"}));
        assert!(matches!(decide(&e, opts()), Decision::Skip { .. }));
        let e = entry(json!({"resourceType": "Custom::X", "properties": {"ServiceToken": 3}}));
        assert!(matches!(decide(&e, opts()), Decision::Fail { .. }));
    }

    #[test]
    fn utc_stamp_matches_known_dates() {
        assert_eq!(utc_stamp(0), "19700101-000000");
        assert_eq!(utc_stamp(951_782_400_000), "20000229-000000");
        assert_eq!(utc_stamp(NOW), "20261129-123456");
    }
}
