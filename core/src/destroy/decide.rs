//! The per-record decision inside a wave (docs/destroy.md, "One record in a wave" steps 2–4, "Before sending anything" pre-checks): retain,
//! no-op, refuse, skip, or delete through which route and with which final snapshot.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What to do with one ready record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// `Retain` / `RetainExceptOnCreate`: no AWS call, outcome `retained`, record kept.
    Retain,
    /// [`NO_OP_TYPES`] (`AWS::CDK::Metadata` and types AWS removes with their parent):
    /// outcome `deleted` with no AWS call.
    NoOp,
    /// Call a deleter.
    Delete(DeletePlan),
    /// Refused before any call (outcome `failed`, record kept).
    Fail { error: RecordFailure },
    /// Declined before any call (outcome `skipped`, record kept).
    Skip { reason: RecordSkip },
}

/// Why a record is refused before any call (docs/destroy.md, "Before sending
/// anything"): the row fails and its record is kept. Worded by `core::view::refusal`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordFailure {
    /// `DeletionPolicy: Snapshot` on a type whose delete takes a final snapshot, but the
    /// record was created through Cloud Control, whose delete cannot take one.
    SnapshotThroughCloudControl { resource_type: String },
    /// `DeletionPolicy: Snapshot` on a type no deleter can snapshot.
    SnapshotUnsupported { resource_type: String },
    /// A custom resource whose `ServiceToken` is not a string.
    ServiceTokenNotString,
}

/// Why a record is declined before any call (docs/destroy.md, "Before sending
/// anything"): the row is skipped and its record is kept. Worded by
/// `core::view::refusal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordSkip {
    /// A custom resource with no recorded properties.
    NoProperties,
    /// A custom resource with no `ServiceToken`.
    NoServiceToken,
}

/// How to delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeletePlan {
    pub route: Route,
    pub final_snapshot: Option<FinalSnapshot>,
}

/// Where a record's delete goes (docs/destroy.md, "One record in a wave" step 4, docs/destroy.md, "Per-type notes"): the one routing
/// decision, made by [`route`]. The deleter registry only maps it to a deleter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// [`NO_OP_TYPES`]: nothing to delete in AWS; done with no call.
    NoOp,
    /// `Custom::*` / `AWS::CloudFormation::CustomResource`: Delete request to the
    /// ServiceToken (docs/destroy.md, "Custom resources").
    CustomResource,
    /// `AWS::CloudFormation::Stack`: the child stack first (docs/destroy.md, "Nested stacks").
    NestedStack,
    /// The SDK deleter that declares the type.
    Sdk,
    /// Cloud Control with the recorded id (or the identifier translation of docs/destroy.md, "Which identifier Cloud Control gets").
    CloudControl,
    /// No deleter may take it: Cloud Control must not ([`NOT_FOR_CLOUD_CONTROL`]) and no
    /// SDK deleter declares the type ([`NoDeleter`] says so).
    Unsupported,
}

/// What an SDK deleter can do, as the deleter declares it next to its code (cdkd-deleters).
/// Core's routing takes these as facts; the policy that uses them is [`route`]'s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SdkCapabilities {
    /// The deleter honours a final snapshot
    /// (`DeletionPolicy: Snapshot`, docs/destroy.md, "One record in a wave" step 3).
    pub final_snapshot: bool,
    /// The deleter does work Cloud Control's delete handler for the type leaves undone,
    /// and takes Cloud Control's identifier of the type as its physical id.
    pub completes_cloud_control: bool,
}

/// The deleters a destroy run has, as facts for [`route`] (implemented by cdkd-deleters'
/// registry; core cannot see the deleters themselves).
pub trait DeleterCatalog {
    /// The capabilities of the SDK deleter that declares `resource_type`, if one does.
    fn sdk_deleter(&self, resource_type: &str) -> Option<SdkCapabilities>;
}

/// A catalog without SDK deleters: what routing says when no deleter is known (a plan
/// preview that never calls AWS).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSdkDeleters;

impl DeleterCatalog for NoSdkDeleters {
    fn sdk_deleter(&self, _resource_type: &str) -> Option<SdkCapabilities> {
        None
    }
}

/// Final snapshot handling for `DeletionPolicy: Snapshot` (docs/destroy.md, "One record in a wave" step 3). Carried
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

/// The refusal of a delete that would lose its final snapshot
/// ([`FINAL_SNAPSHOT_UNSUPPORTED`]): no deleter for the record can take one. Names the
/// type, logical id and stack, the snapshot that was asked for, and `why` (the deleter's
/// reason, as it gives it); nothing was deleted. The way out: snapshot and delete it by
/// hand, or destroy with `skipFinalSnapshot`. Its words are the refusal views'
/// (`core::view::refusal`); a deleter's error takes them (`String::from`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinalSnapshotRefusal {
    pub resource_type: String,
    pub logical_id: String,
    pub stack: String,
    pub snapshot: FinalSnapshot,
    pub why: String,
}

/// The refusal of a delete that would lose its final snapshot: no deleter for the record
/// can take one (Cloud Control has no snapshot parameter; no SDK deleter for the type
/// takes the identifier).
pub fn final_snapshot_refusal(
    resource_type: &str,
    logical_id: &str,
    stack: &str,
    snapshot: &FinalSnapshot,
    why: &str,
) -> FinalSnapshotRefusal {
    FinalSnapshotRefusal {
        resource_type: resource_type.to_string(),
        logical_id: logical_id.to_string(),
        stack: stack.to_string(),
        snapshot: snapshot.clone(),
        why: why.to_string(),
    }
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

/// Types deleted with no AWS call, counted `deleted` (docs/destroy.md, "SDK deleters"): the CDK's
/// metadata record, and types AWS deletes with their parent or manages itself.
pub const NO_OP_TYPES: &[&str] = &[
    "AWS::CDK::Metadata",
    "AWS::CloudFormation::WaitConditionHandle",
    "AWS::AppSync::GraphQLSchema",
    "AWS::EC2::SubnetNetworkAclAssociation",
];

/// Types Cloud Control must not delete (docs/destroy.md, "SDK deleters"): it refuses them, silently
/// no-ops (`AWS::Scheduler::Schedule` in a non-default group), or skips cleanup their
/// delete needs. Without an SDK deleter they are [`Route::Unsupported`].
pub const NOT_FOR_CLOUD_CONTROL: &[&str] = &[
    "AWS::IAM::Role",
    "AWS::IAM::Policy",
    "AWS::IAM::User",
    "AWS::IAM::Group",
    "AWS::IAM::InstanceProfile",
    "AWS::Lambda::LayerVersion",
    "AWS::S3::BucketPolicy",
    "AWS::CloudFormation::WaitCondition",
    "AWS::CloudFormation::CustomResource",
    "AWS::Route53::HostedZone",
    "AWS::Scheduler::Schedule",
];

/// Where a record's delete goes (docs/destroy.md, "One record in a wave" step 4, with this project's default to Cloud
/// Control): no-op types → nothing; custom resources → their handler; nested stacks → the
/// workflow; a record Cloud Control created (`provisionedBy: cc-api`) → Cloud Control, so
/// the identifier Cloud Control recorded is the one it is asked about, unless Cloud
/// Control must not take the type or the type's SDK deleter completes what Cloud
/// Control's handler leaves undone (this project's deviation from cdkd, which sends
/// those to Cloud Control); otherwise the type's SDK deleter, else Cloud Control, else
/// unsupported.
pub fn route<C: DeleterCatalog + ?Sized>(
    resource_type: &str,
    provisioned_by: Option<&str>,
    deleters: &C,
) -> Route {
    if NO_OP_TYPES.contains(&resource_type) {
        return Route::NoOp;
    }
    if is_custom_resource(resource_type) {
        return Route::CustomResource;
    }
    if resource_type == "AWS::CloudFormation::Stack" {
        return Route::NestedStack;
    }
    let cc_allowed = !NOT_FOR_CLOUD_CONTROL.contains(&resource_type);
    let sdk = deleters.sdk_deleter(resource_type);
    let cc_pinned = provisioned_by == Some("cc-api");
    match sdk {
        Some(caps) if !(cc_pinned && cc_allowed) || caps.completes_cloud_control => Route::Sdk,
        _ if cc_allowed => Route::CloudControl,
        _ => Route::Unsupported,
    }
}

/// Why a [`Route::Unsupported`] record cannot be deleted: no deleter serves its type.
/// Its words are the refusal views' (`core::view::refusal`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoDeleter {
    pub resource_type: String,
}

pub use crate::state::is_custom_resource;

/// Decides what to do with one record when no deleter is known: [`decide_with`] and
/// [`NoSdkDeleters`] (a plan preview: a type an SDK deleter would take is routed to
/// Cloud Control or unsupported here; the run decides with its registry).
pub fn decide(entry: &Map<String, Value>, opts: DecideOptions) -> Decision {
    decide_with(entry, opts, &NoSdkDeleters)
}

/// Decides what to do with one record (docs/destroy.md, "One record in a wave" steps 2–4), routing with the run's
/// `deleters`.
pub fn decide_with<C: DeleterCatalog + ?Sized>(
    entry: &Map<String, Value>,
    opts: DecideOptions,
    deleters: &C,
) -> Decision {
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
                    error: RecordFailure::SnapshotThroughCloudControl {
                        resource_type: ty.to_string(),
                    },
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
                error: RecordFailure::SnapshotUnsupported {
                    resource_type: ty.to_string(),
                },
            };
        }
    }

    let provisioned_by = entry.get("provisionedBy").and_then(Value::as_str);
    let route = match route(ty, provisioned_by, deleters) {
        Route::NoOp => return Decision::NoOp,
        Route::CustomResource => match custom_resource_precheck(entry) {
            Ok(()) => Route::CustomResource,
            Err(d) => return d,
        },
        other => other,
    };
    Decision::Delete(DeletePlan {
        route,
        final_snapshot,
    })
}

/// docs/destroy.md, "Before sending anything": no properties or no `ServiceToken` → skipped; a non-string token → failed.
fn custom_resource_precheck(entry: &Map<String, Value>) -> Result<(), Decision> {
    let Some(props) = entry.get("properties").and_then(Value::as_object) else {
        return Err(Decision::Skip {
            reason: RecordSkip::NoProperties,
        });
    };
    match props.get("ServiceToken") {
        None | Some(Value::Null) => Err(Decision::Skip {
            reason: RecordSkip::NoServiceToken,
        }),
        Some(Value::String(_)) => Ok(()),
        Some(_) => Err(Decision::Fail {
            error: RecordFailure::ServiceTokenNotString,
        }),
    }
}

/// Final snapshot identifier (docs/destroy.md, "One record in a wave" step 3): physical id lowered, non `[a-z0-9-]` →
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
    let iso = crate::time::iso_from_ms(now_ms.min(8_640_000_000_000_000) as i64);
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

    /// A catalog of SDK deleters for the tests: `(type, capabilities)`.
    struct Catalog<'a>(&'a [(&'a str, SdkCapabilities)]);

    impl DeleterCatalog for Catalog<'_> {
        fn sdk_deleter(&self, resource_type: &str) -> Option<SdkCapabilities> {
            self.0
                .iter()
                .find(|(t, _)| *t == resource_type)
                .map(|(_, c)| *c)
        }
    }

    const PLAIN: SdkCapabilities = SdkCapabilities {
        final_snapshot: false,
        completes_cloud_control: false,
    };
    const COMPLETES_CC: SdkCapabilities = SdkCapabilities {
        final_snapshot: false,
        completes_cloud_control: true,
    };

    /// A delete through `route` without a final snapshot.
    fn deleted_via(route: Route) -> Decision {
        Decision::Delete(DeletePlan {
            route,
            final_snapshot: None,
        })
    }

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
                    route: Route::CloudControl,
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
                route: Route::CloudControl,
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
                route: Route::CloudControl,
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
                route: Route::CloudControl,
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
        assert_eq!(
            error,
            RecordFailure::SnapshotThroughCloudControl {
                resource_type: "AWS::RDS::DBInstance".into()
            }
        );
        assert!(error.to_string().starts_with(FINAL_SNAPSHOT_UNSUPPORTED));
    }

    #[test]
    fn snapshot_policy_on_bucket_fails_unsupported_statement_20() {
        let e = entry(json!({"resourceType": "AWS::S3::Bucket", "deletionPolicy": "Snapshot"}));
        let Decision::Fail { error } = decide(&e, opts()) else {
            panic!()
        };
        assert_eq!(
            error,
            RecordFailure::SnapshotUnsupported {
                resource_type: "AWS::S3::Bucket".into()
            }
        );
        let error = error.to_string();
        assert!(error.contains(FINAL_SNAPSHOT_UNSUPPORTED));
        assert!(error.contains("AWS::S3::Bucket"));
    }

    #[test]
    fn snapshot_first_types_snapshot_then_delete_rule_2_8_3() {
        let e = entry(json!({"resourceType": "AWS::EC2::Volume", "deletionPolicy": "Snapshot"}));
        assert_eq!(
            decide(&e, opts()),
            Decision::Delete(DeletePlan {
                route: Route::CloudControl,
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
        assert_eq!(m.stack, "Shop");
        assert_eq!(
            m.snapshot,
            FinalSnapshot::Identifier("db-final-20261129-123456".into())
        );
        let m = String::from(m);
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
            Route::CloudControl
        );
    }

    #[test]
    fn routing_a_type_with_an_sdk_deleter_uses_it_unless_cloud_control_created_the_record() {
        let c = Catalog(&[("AWS::SQS::Queue", PLAIN)]);
        assert_eq!(route("AWS::SQS::Queue", None, &c), Route::Sdk);
        assert_eq!(route("AWS::SQS::Queue", Some("sdk"), &c), Route::Sdk);
        assert_eq!(
            route("AWS::SQS::Queue", Some("cc-api"), &c),
            Route::CloudControl
        );
        assert_eq!(route("AWS::Events::Archive", None, &c), Route::CloudControl);
    }

    #[test]
    fn cc_api_record_goes_to_the_sdk_deleter_that_completes_what_cloud_control_leaves() {
        let c = Catalog(&[("AWS::Lambda::Function", COMPLETES_CC)]);
        assert_eq!(
            route("AWS::Lambda::Function", Some("cc-api"), &c),
            Route::Sdk
        );
        // Without that deleter, Cloud Control as for any other type.
        assert_eq!(
            route("AWS::Lambda::Function", Some("cc-api"), &NoSdkDeleters),
            Route::CloudControl
        );
        let e = entry(json!({"resourceType": "AWS::Lambda::Function", "provisionedBy": "cc-api"}));
        assert_eq!(decide_with(&e, opts(), &c), deleted_via(Route::Sdk));
    }

    #[test]
    fn types_cloud_control_must_not_delete_use_their_sdk_deleter_or_are_unsupported() {
        let c = Catalog(&[("AWS::IAM::User", PLAIN)]);
        for t in NOT_FOR_CLOUD_CONTROL {
            let expected = if *t == "AWS::IAM::User" {
                Route::Sdk
            } else if *t == "AWS::CloudFormation::CustomResource" {
                Route::CustomResource
            } else {
                Route::Unsupported
            };
            assert_eq!(route(t, Some("cc-api"), &c), expected, "{t}");
            assert_eq!(route(t, None, &c), expected, "{t}");
        }
        let why = NoDeleter {
            resource_type: "AWS::IAM::User".into(),
        };
        assert!(why.to_string().starts_with("no deleter for AWS::IAM::User"));
    }

    #[test]
    fn scheduler_schedule_never_goes_through_cloud_control_statement_54() {
        let e = entry(
            json!({"resourceType": "AWS::Scheduler::Schedule", "provisionedBy": "cc-api",
                             "properties": {"GroupName": "g"}}),
        );
        let with_sdk = Catalog(&[("AWS::Scheduler::Schedule", PLAIN)]);
        assert_eq!(decide_with(&e, opts(), &with_sdk), deleted_via(Route::Sdk));
        assert_eq!(decide(&e, opts()), deleted_via(Route::Unsupported));
    }

    /// Core said only `AWS::CDK::Metadata` was a no-op while the deleter registry had four
    /// types; the type table of docs/destroy.md, "SDK deleters" names the four: the metadata
    /// record, and what AWS deletes with its parent. `WaitCondition` is not one of them: it
    /// is a real resource Cloud Control refuses, so it is unsupported without a deleter.
    #[test]
    fn no_op_types_are_metadata_and_what_aws_deletes_with_the_parent_rule_3_3() {
        for t in [
            "AWS::CDK::Metadata",
            "AWS::CloudFormation::WaitConditionHandle",
            "AWS::AppSync::GraphQLSchema",
            "AWS::EC2::SubnetNetworkAclAssociation",
        ] {
            let e = entry(json!({"resourceType": t, "provisionedBy": "cc-api"}));
            assert_eq!(decide(&e, opts()), Decision::NoOp, "{t}");
            assert_eq!(route(t, None, &Catalog(&[(t, PLAIN)])), Route::NoOp, "{t}");
        }
        let e = entry(json!({"resourceType": "AWS::CloudFormation::WaitCondition"}));
        assert_eq!(decide(&e, opts()), deleted_via(Route::Unsupported));
    }

    #[test]
    fn custom_resource_without_service_token_is_skipped_statement_42() {
        let e = entry(json!({"resourceType": "Custom::X", "properties": {}}));
        assert_eq!(
            decide(&e, opts()),
            Decision::Skip {
                reason: RecordSkip::NoServiceToken
            }
        );
        let e = entry(json!({"resourceType": "Custom::X"}));
        assert_eq!(
            decide(&e, opts()),
            Decision::Skip {
                reason: RecordSkip::NoProperties
            }
        );
        let e = entry(json!({"resourceType": "Custom::X", "properties": {"ServiceToken": 3}}));
        assert_eq!(
            decide(&e, opts()),
            Decision::Fail {
                error: RecordFailure::ServiceTokenNotString
            }
        );
    }

    #[test]
    fn utc_stamp_matches_known_dates() {
        assert_eq!(utc_stamp(0), "19700101-000000");
        assert_eq!(utc_stamp(951_782_400_000), "20000229-000000");
        assert_eq!(utc_stamp(NOW), "20261129-123456");
    }
}
