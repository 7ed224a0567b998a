//! Which reader re-reads a resource for refresh-observed (docs/repairs.md, "Per resource") and which
//! reads an attribute live for orphan (docs/repairs.md, "Live attribute reads"), and the cross-resource context a reader
//! needs. The readers themselves are the deleters
//! crate's (one home per type: a reader lives beside the deleter of its type); this is
//! the one routing decision over what they declare.

use serde_json::{Map, Value};

use crate::json::ordered_entries;
use crate::state::is_custom_resource;

/// Types the provider registry skips: never read, counted as unsupported.
pub const SKIPPED_TYPES: &[&str] = &["AWS::CDK::Metadata"];

/// Where the current state of a record is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ReadRoute {
    /// The type's own SDK reader (declared beside its deleter).
    Sdk,
    /// Cloud Control `GetResource`.
    CloudControl,
    /// No reader: the resource counts as unsupported and keeps its baseline.
    Unsupported,
}

/// Types Cloud Control has nothing to read for: custom resources (their handler is a
/// Lambda function or topic, not a resource), nested stacks (their record is read on its
/// own), CloudFormation's wait conditions, and the CDK's metadata.
pub const NOT_READ_BY_CLOUD_CONTROL: &[&str] = &[
    "AWS::CDK::Metadata",
    "AWS::CloudFormation::Stack",
    "AWS::CloudFormation::WaitCondition",
    "AWS::CloudFormation::WaitConditionHandle",
];

/// True when Cloud Control may be asked for a record of this type.
pub fn cloud_control_reads(resource_type: &str) -> bool {
    !resource_type.is_empty()
        && !is_custom_resource(resource_type)
        && !NOT_READ_BY_CLOUD_CONTROL.contains(&resource_type)
        && !SKIPPED_TYPES.contains(&resource_type)
}

/// The reader of a record: a record Cloud Control created (`provisionedBy: cc-api`) is
/// read back through Cloud Control, whose identifier its physical id is; otherwise the
/// type's SDK reader when one is declared, else Cloud Control when it reads the type,
/// else none.
pub fn read_route(
    resource_type: &str,
    provisioned_by: Option<&str>,
    has_sdk_reader: bool,
) -> ReadRoute {
    let cc = cloud_control_reads(resource_type);
    if SKIPPED_TYPES.contains(&resource_type) {
        ReadRoute::Unsupported
    } else if provisioned_by == Some("cc-api") && cc {
        ReadRoute::CloudControl
    } else if has_sdk_reader {
        ReadRoute::Sdk
    } else if cc {
        ReadRoute::CloudControl
    } else {
        ReadRoute::Unsupported
    }
}

/// The reader of GetAtt attribute `attr` of a record, for orphan's live reads
/// (docs/repairs.md, "Live attribute reads"): the same order as [`read_route`], where the type's SDK reader
/// counts only when it declares that attribute (`sdk_reads_attribute`): a record Cloud
/// Control created → Cloud Control; an SDK reader that reads the attribute → it; any
/// other type or attribute Cloud Control reads → Cloud Control, whose resource model
/// holds the read-only attributes; else none.
pub fn attribute_route(
    resource_type: &str,
    provisioned_by: Option<&str>,
    sdk_reads_attribute: bool,
) -> ReadRoute {
    read_route(resource_type, provisioned_by, sdk_reads_attribute)
}

/// The inline policies other resources of the record own on `role` (`AWS::IAM::Policy`
/// entries whose `Roles` name it, by name or ARN): the role's reader leaves them out, so
/// the role's baseline holds only the policies its own `Policies` property declares.
/// Names in record order, once each.
pub fn inline_policies_owned_elsewhere(record: &Map<String, Value>, role: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let Some(Value::Object(resources)) = record.get("resources") else {
        return out;
    };
    for (_, entry) in ordered_entries(resources) {
        if entry.get("resourceType").and_then(Value::as_str) != Some("AWS::IAM::Policy") {
            continue;
        }
        let props = entry.get("properties");
        let names_role = props
            .and_then(|p| p.get("Roles"))
            .and_then(Value::as_array)
            .is_some_and(|roles| {
                roles
                    .iter()
                    .filter_map(Value::as_str)
                    .any(|r| principal_name(r) == role)
            });
        if !names_role {
            continue;
        }
        let name = props
            .and_then(|p| p.get("PolicyName"))
            .and_then(Value::as_str)
            .or_else(|| {
                entry
                    .get("physicalId")
                    .and_then(Value::as_str)
                    .map(|p| p.split(':').next().unwrap_or(p))
            });
        if let Some(n) = name.filter(|n| !n.is_empty()) {
            if !out.iter().any(|o| o == n) {
                out.push(n.to_string());
            }
        }
    }
    out
}

/// A principal given as a name or as an ARN (`arn:aws:iam::1:role/path/name`) → the name.
pub fn principal_name(p: &str) -> &str {
    if p.starts_with("arn:") {
        p.rsplit('/').next().unwrap_or(p)
    } else {
        p
    }
}
