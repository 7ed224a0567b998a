//! Which Cloud Control identifier to delete a record by (docs/destroy.md, "Which identifier Cloud Control gets"). The table itself is
//! core's ([`cdkd_core::destroy::identifiers`]); this module turns its answer into what
//! the deleter sends, and whether NotFound for it may count as deleted. A wrong
//! identifier can come back as NotFound, which would drop a live resource from state, so
//! only an identifier known to be Cloud Control's is trusted.

use cdkd_core::destroy::identifiers::{cloud_control_identifier as core_identifier, CcIdentifier};
use serde_json::Value;

use crate::error::{DeleteError, DeleteErrorKind};
use crate::request::DeleteRequest;

/// The identifier to send and whether NotFound for it may be trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CcTarget {
    pub identifier: String,
    /// True when the identifier is known to be Cloud Control's primary identifier.
    pub verified: bool,
}

/// The Cloud Control target for `req`, or the error that ends the row without a call:
/// `Skipped` when an input is missing or the identifier is unverified (record kept, no
/// guess), `Unsupported` when only an SDK deleter could address the type.
pub fn cloud_control_target(req: &DeleteRequest) -> Result<CcTarget, DeleteError> {
    let ident = core_identifier(
        &req.resource_type,
        &req.physical_id,
        req.properties.as_object(),
        req.attributes.as_object(),
        req.provisioned_by.as_deref(),
    );
    match ident.as_sent() {
        Some(identifier) => Ok(CcTarget {
            identifier,
            verified: ident.trusted_not_found(),
        }),
        None => match ident {
            CcIdentifier::KeepSdk { reason } => Err(DeleteError::new(
                req,
                DeleteErrorKind::Unsupported,
                format!("{reason}; it needs an SDK deleter, and none is configured for it"),
            )),
            CcIdentifier::Skip { reason } => Err(DeleteError::skipped(req, reason)),
            CcIdentifier::Identifier(_) | CcIdentifier::Fields(_) => {
                Err(DeleteError::skipped(req, "no Cloud Control identifier"))
            }
        },
    }
}

/// How long a Cloud Control delete of `resource_type` may stay in progress (docs/destroy.md, "Cloud Control").
pub fn poll_cap_ms(resource_type: &str) -> u64 {
    const MIN: u64 = 60_000;
    match resource_type {
        "AWS::OpenSearchService::Domain"
        | "AWS::Elasticsearch::Domain"
        | "AWS::Redshift::Cluster"
        | "AWS::ElastiCache::ReplicationGroup"
        | "AWS::ElastiCache::CacheCluster"
        | "AWS::RDS::DBInstance"
        | "AWS::RDS::DBCluster" => 60 * MIN,
        "AWS::EKS::Cluster" => 30 * MIN,
        _ => 15 * MIN,
    }
}

/// A deletion-protection property Cloud Control can turn off with `UpdateResource`
/// before the delete (docs/destroy.md, "Cloud Control" `removeProtection`): the JSON-patch value that means
/// "off" for the type, or `None` for types without one.
pub fn protection_off_patch(resource_type: &str) -> Option<(&'static str, Value)> {
    Some(match resource_type {
        "AWS::DSQL::Cluster" => ("/DeletionProtectionEnabled", Value::Bool(false)),
        "AWS::NeptuneGraph::Graph" => ("/DeletionProtection", Value::Bool(false)),
        "AWS::SMSVOICE::ProtectConfiguration" => ("/DeletionProtectionEnabled", Value::Bool(false)),
        "AWS::VerifiedPermissions::PolicyStore" => (
            "/DeletionProtection",
            serde_json::json!({"Mode": "DISABLED"}),
        ),
        "AWS::EKS::Cluster" | "AWS::RDS::GlobalCluster" | "AWS::DocDB::GlobalCluster" => {
            ("/DeletionProtection", Value::Bool(false))
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::RunContext;
    use serde_json::json;

    fn req(t: &str, id: &str, props: Value, attrs: Value, by: Option<&str>) -> DeleteRequest {
        DeleteRequest {
            logical_id: "L".into(),
            resource_type: t.into(),
            physical_id: id.into(),
            properties: props,
            attributes: attrs,
            provisioned_by: by.map(str::to_owned),
            region: "us-east-1".into(),
            attempt: 0,
            run: RunContext {
                run_id: "r".into(),
                stack: "S".into(),
                state_bucket: "b".into(),
                state_prefix: "cdkd".into(),
            },
            options: Default::default(),
        }
    }

    fn cc(t: &str, id: &str, props: Value, attrs: Value) -> Result<CcTarget, DeleteError> {
        cloud_control_target(&req(t, id, props, attrs, Some("sdk")))
    }

    #[test]
    fn cc_api_records_use_the_physical_id_verbatim_and_trust_not_found() {
        let r = cloud_control_target(&req(
            "AWS::Foo::Bar",
            "a|b",
            json!({}),
            json!({}),
            Some("cc-api"),
        ))
        .unwrap();
        assert_eq!(
            r,
            CcTarget {
                identifier: "a|b".into(),
                verified: true
            }
        );
    }

    #[test]
    fn same_value_types_use_the_sdk_physical_id() {
        let r = cc(
            "AWS::Events::Rule",
            "arn:aws:events:us-east-1:1:rule/r",
            json!({}),
            json!({}),
        )
        .unwrap();
        assert!(r.verified);
        assert_eq!(r.identifier, "arn:aws:events:us-east-1:1:rule/r");
    }

    #[test]
    fn identifier_translation_webacl_is_sent_in_schema_order_but_not_found_untrusted() {
        let r = cc(
            "AWS::WAFv2::WebACL",
            "arn:aws:wafv2:us-east-1:1:regional/webacl/acl/abc",
            json!({}),
            json!({}),
        )
        .unwrap();
        assert_eq!(r.identifier, "acl|abc|REGIONAL");
        assert!(!r.verified);
    }

    #[test]
    fn identifier_translation_missing_input_skips_instead_of_guessing() {
        let e = cc("AWS::ApiGateway::Stage", "prod", json!({}), json!({})).unwrap_err();
        assert_eq!(e.kind, DeleteErrorKind::Skipped);
    }

    #[test]
    fn types_without_a_derivable_cc_identifier_need_an_sdk_deleter() {
        let e = cc(
            "AWS::Route53::RecordSet",
            "Z|a.example.com|A",
            json!({}),
            json!({}),
        )
        .unwrap_err();
        assert_eq!(e.kind, DeleteErrorKind::Unsupported);
    }

    #[test]
    fn unknown_sdk_written_types_are_skipped_never_sent_by_guess_rule_3_2() {
        let e = cc("AWS::Foo::Bar", "x", json!({}), json!({})).unwrap_err();
        assert_eq!(e.kind, DeleteErrorKind::Skipped);
    }

    #[test]
    fn cloud_control_poll_cap_is_15_min_60_for_slow_types_30_for_eks() {
        assert_eq!(poll_cap_ms("AWS::SQS::Queue"), 15 * 60_000);
        assert_eq!(poll_cap_ms("AWS::RDS::DBCluster"), 60 * 60_000);
        assert_eq!(poll_cap_ms("AWS::EKS::Cluster"), 30 * 60_000);
    }

    #[test]
    fn remove_protection_patches_the_types_of_spec_3_1() {
        assert_eq!(
            protection_off_patch("AWS::EKS::Cluster"),
            Some(("/DeletionProtection", Value::Bool(false)))
        );
        assert_eq!(
            protection_off_patch("AWS::VerifiedPermissions::PolicyStore"),
            Some(("/DeletionProtection", json!({"Mode": "DISABLED"})))
        );
        assert_eq!(
            protection_off_patch("AWS::DSQL::Cluster").map(|p| p.0),
            Some("/DeletionProtectionEnabled")
        );
        assert_eq!(protection_off_patch("AWS::SQS::Queue"), None);
    }
}
