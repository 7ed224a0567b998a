//! Which Cloud Control identifier to delete a record by (spec §3.2). A wrong identifier
//! can come back as NotFound, which would drop a live resource from state, so every
//! identifier carries whether it is known to be Cloud Control's: only then may NotFound
//! count as deleted.

use crate::request::DeleteRequest;

/// The identifier to send and whether NotFound for it may be trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CcIdentifier {
    pub identifier: String,
    /// True when the identifier is known to be Cloud Control's primary identifier.
    pub verified: bool,
}

/// Why no Cloud Control identifier can be built (the row is skipped, record kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoIdentifier(pub String);

/// Types whose SDK-written physical id is already Cloud Control's identifier.
pub const SAME_VALUE_TYPES: &[&str] = &[
    "AWS::S3::Bucket",
    "AWS::IAM::Role",
    "AWS::IAM::User",
    "AWS::IAM::Group",
    "AWS::IAM::InstanceProfile",
    "AWS::IAM::ManagedPolicy",
    "AWS::Lambda::Function",
    "AWS::DynamoDB::Table",
    "AWS::DynamoDB::GlobalTable",
    "AWS::SQS::Queue",
    "AWS::SNS::Topic",
    "AWS::Logs::LogGroup",
    "AWS::EC2::VPC",
    "AWS::EC2::Subnet",
    "AWS::EC2::SecurityGroup",
    "AWS::EC2::InternetGateway",
    "AWS::EC2::RouteTable",
    "AWS::EC2::NatGateway",
    "AWS::CloudFront::Distribution",
    "AWS::CloudFront::CloudFrontOriginAccessIdentity",
    "AWS::Route53::HostedZone",
    "AWS::SecretsManager::Secret",
    "AWS::Events::Rule",
    "AWS::Events::EventBus",
    "AWS::ApiGatewayV2::Api",
    "AWS::CloudWatch::Alarm",
    "AWS::Kinesis::Stream",
    "AWS::SSM::Parameter",
    "AWS::StepFunctions::StateMachine",
    "AWS::Cognito::UserPool",
    "AWS::ECR::Repository",
    "AWS::ECS::Cluster",
    "AWS::ECS::TaskDefinition",
    "AWS::ElasticLoadBalancingV2::LoadBalancer",
    "AWS::ElasticLoadBalancingV2::TargetGroup",
    "AWS::ElasticLoadBalancingV2::Listener",
    "AWS::KMS::Key",
    "AWS::KMS::Alias",
    "AWS::Lambda::Url",
    "AWS::EFS::FileSystem",
    "AWS::EFS::AccessPoint",
    "AWS::CertificateManager::Certificate",
];

/// Types whose only Cloud Control identifier is generated and cannot be derived from
/// what cdkd records: they need their own deleter.
pub const NO_CC_IDENTIFIER_TYPES: &[&str] = &[
    "AWS::IAM::Policy",
    "AWS::Route53::RecordSet",
    "AWS::Glue::Table",
    "AWS::SNS::TopicPolicy",
    "AWS::SQS::QueuePolicy",
    "AWS::EC2::NetworkAclEntry",
];

fn prop<'a>(req: &'a DeleteRequest, key: &str) -> Result<&'a str, NoIdentifier> {
    req.prop_str(key).filter(|s| !s.is_empty()).ok_or_else(|| {
        NoIdentifier(format!(
            "the record's properties lack {key}, needed to build the Cloud Control identifier of {}",
            req.resource_type
        ))
    })
}

fn attr<'a>(req: &'a DeleteRequest, key: &str) -> Result<&'a str, NoIdentifier> {
    req.attr_str(key).filter(|s| !s.is_empty()).ok_or_else(|| {
        NoIdentifier(format!(
            "the record's attributes lack {key}, needed to build the Cloud Control identifier of {}",
            req.resource_type
        ))
    })
}

fn verified(identifier: String) -> Result<CcIdentifier, NoIdentifier> {
    Ok(CcIdentifier {
        identifier,
        verified: true,
    })
}

fn unverified(identifier: String) -> Result<CcIdentifier, NoIdentifier> {
    Ok(CcIdentifier {
        identifier,
        verified: false,
    })
}

/// The Cloud Control identifier for `req`.
pub fn cloud_control_identifier(req: &DeleteRequest) -> Result<CcIdentifier, NoIdentifier> {
    let id = req.physical_id.as_str();
    if id.is_empty() {
        return Err(NoIdentifier("the record has an empty physical id".into()));
    }
    // Written through Cloud Control: the id is Cloud Control's own.
    if req.provisioned_by.as_deref() == Some("cc-api") {
        return verified(id.to_owned());
    }
    let t = req.resource_type.as_str();
    if SAME_VALUE_TYPES.contains(&t) {
        return verified(id.to_owned());
    }
    if NO_CC_IDENTIFIER_TYPES.contains(&t) {
        return Err(NoIdentifier(format!(
            "{t} has no Cloud Control identifier that can be derived from the record"
        )));
    }
    let last = id.rsplit('|').next().unwrap_or(id);
    match t {
        // Composite ids already in Cloud Control form.
        "AWS::EC2::Route" | "AWS::ApiGateway::Method" | "AWS::S3Tables::Namespace" => verified(id.to_owned()),
        "AWS::EC2::EIP" if id.contains('|') => verified(id.to_owned()),
        "AWS::EC2::EIP" => Err(NoIdentifier(
            "an EIP recorded with only one part of <publicIp>|<allocationId> needs a DescribeAddresses lookup".into(),
        )),
        "AWS::Lambda::EventInvokeConfig" if id.contains('|') => verified(id.to_owned()),
        "AWS::Lambda::EventInvokeConfig" => verified(format!("{id}|$LATEST")),
        // Translations (SDK id -> Cloud Control fields).
        "AWS::ApiGateway::Resource" | "AWS::ApiGateway::Authorizer" => {
            verified(format!("{}|{id}", prop(req, "RestApiId")?))
        }
        "AWS::ApiGateway::Deployment" => verified(format!("{id}|{}", prop(req, "RestApiId")?)),
        "AWS::ApiGateway::Stage" => verified(format!("{}|{id}", prop(req, "RestApiId")?)),
        "AWS::ApiGatewayV2::Integration" | "AWS::ApiGatewayV2::Route" => {
            verified(format!("{}|{id}", prop(req, "ApiId")?))
        }
        // Order not confirmed with DescribeType: NotFound cannot be trusted.
        "AWS::ApiGatewayV2::Stage" | "AWS::ApiGatewayV2::Authorizer" => {
            unverified(format!("{}|{id}", prop(req, "ApiId")?))
        }
        "AWS::EC2::VPCGatewayAttachment" => {
            let (gw, vpc) = id
                .split_once('|')
                .ok_or_else(|| NoIdentifier(format!("expected <gateway id>|<vpc id>, got {id}")))?;
            let kind = if gw.starts_with("igw-") || req.prop_str("InternetGatewayId").is_some() {
                "IGW"
            } else if gw.starts_with("vgw-") || req.prop_str("VpnGatewayId").is_some() {
                "VGW"
            } else {
                return Err(NoIdentifier(format!("cannot tell the gateway kind of {gw}")));
            };
            verified(format!("{kind}|{vpc}"))
        }
        "AWS::EC2::SecurityGroupIngress" => verified(attr(req, "Id")?.to_owned()),
        "AWS::AppSync::DataSource" => verified(attr(req, "DataSourceArn")?.to_owned()),
        "AWS::AppSync::Resolver" => verified(attr(req, "ResolverArn")?.to_owned()),
        "AWS::S3Tables::Table" => verified(attr(req, "TableARN")?.to_owned()),
        "AWS::Lambda::Permission" => verified(format!("{}|{last}", prop(req, "FunctionName")?)),
        "AWS::ECS::Service" => unverified(format!("{id}|{}", prop(req, "Cluster")?)),
        "AWS::WAFv2::WebACL" => {
            // arn:aws:wafv2:<region>:<account>:<regional|global>/webacl/<name>/<id>
            let resource = id.splitn(6, ':').nth(5).unwrap_or("");
            let parts: Vec<&str> = resource.split('/').collect();
            match parts.as_slice() {
                [scope, "webacl", name, wid] => {
                    let scope = match *scope {
                        "regional" => "REGIONAL",
                        "global" => "CLOUDFRONT",
                        other => return Err(NoIdentifier(format!("unknown WebACL scope {other}"))),
                    };
                    verified(format!("{name}|{wid}|{scope}"))
                }
                _ => Err(NoIdentifier(format!("not a WebACL ARN: {id}"))),
            }
        }
        "AWS::CodeCommit::Repository" | "AWS::S3Vectors::VectorBucket" => Err(NoIdentifier(format!(
            "{t} needs an identifier lookup that is not implemented"
        ))),
        // Anything else: send the id as recorded, but never trust NotFound for it.
        _ => unverified(id.to_owned()),
    }
}

/// How long a Cloud Control delete of `resource_type` may stay in progress (spec §3.1).
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::RunContext;
    use serde_json::json;

    fn req(
        t: &str,
        id: &str,
        props: serde_json::Value,
        attrs: serde_json::Value,
        by: Option<&str>,
    ) -> DeleteRequest {
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
        }
    }

    fn cc(
        t: &str,
        id: &str,
        props: serde_json::Value,
        attrs: serde_json::Value,
    ) -> Result<CcIdentifier, NoIdentifier> {
        cloud_control_identifier(&req(t, id, props, attrs, Some("sdk")))
    }

    #[test]
    fn cc_api_records_use_the_physical_id_verbatim_and_trust_not_found() {
        let r = cloud_control_identifier(&req(
            "AWS::Foo::Bar",
            "a|b",
            json!({}),
            json!({}),
            Some("cc-api"),
        ))
        .unwrap();
        assert_eq!(
            r,
            CcIdentifier {
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
    fn identifier_translation_api_gateway_resource_prefixes_rest_api_id() {
        let r = cc(
            "AWS::ApiGateway::Resource",
            "res1",
            json!({"RestApiId": "api1"}),
            json!({}),
        )
        .unwrap();
        assert_eq!(r.identifier, "api1|res1");
    }

    #[test]
    fn identifier_translation_api_gateway_deployment_puts_deployment_first() {
        let r = cc(
            "AWS::ApiGateway::Deployment",
            "dep1",
            json!({"RestApiId": "api1"}),
            json!({}),
        )
        .unwrap();
        assert_eq!(r.identifier, "dep1|api1");
    }

    #[test]
    fn identifier_translation_gateway_attachment_uses_igw_or_vgw_tag() {
        let r = cc(
            "AWS::EC2::VPCGatewayAttachment",
            "igw-1|vpc-1",
            json!({}),
            json!({}),
        )
        .unwrap();
        assert_eq!(r.identifier, "IGW|vpc-1");
        let r = cc(
            "AWS::EC2::VPCGatewayAttachment",
            "vgw-1|vpc-1",
            json!({}),
            json!({}),
        )
        .unwrap();
        assert_eq!(r.identifier, "VGW|vpc-1");
    }

    #[test]
    fn identifier_translation_security_group_ingress_uses_the_sgr_attribute() {
        let r = cc(
            "AWS::EC2::SecurityGroupIngress",
            "sg-1|tcp|80|80",
            json!({}),
            json!({"Id": "sgr-9"}),
        )
        .unwrap();
        assert_eq!(r.identifier, "sgr-9");
        assert!(cc(
            "AWS::EC2::SecurityGroupIngress",
            "sg-1|tcp|80|80",
            json!({}),
            json!({})
        )
        .is_err());
    }

    #[test]
    fn identifier_translation_lambda_permission_is_function_and_statement() {
        let r = cc(
            "AWS::Lambda::Permission",
            "arn:aws:lambda:us-east-1:1:function:f|stmt",
            json!({"FunctionName": "f"}),
            json!({}),
        )
        .unwrap();
        assert_eq!(r.identifier, "f|stmt");
    }

    #[test]
    fn identifier_translation_event_invoke_config_bare_name_means_latest() {
        let r = cc("AWS::Lambda::EventInvokeConfig", "fn", json!({}), json!({})).unwrap();
        assert_eq!(r.identifier, "fn|$LATEST");
    }

    #[test]
    fn identifier_translation_webacl_parses_name_id_scope_from_the_arn() {
        let r = cc(
            "AWS::WAFv2::WebACL",
            "arn:aws:wafv2:us-east-1:1:regional/webacl/acl/abc",
            json!({}),
            json!({}),
        )
        .unwrap();
        assert_eq!(r.identifier, "acl|abc|REGIONAL");
    }

    #[test]
    fn identifier_translation_missing_input_skips_instead_of_guessing() {
        assert!(cc("AWS::ApiGateway::Stage", "prod", json!({}), json!({})).is_err());
    }

    #[test]
    fn types_without_a_derivable_cc_identifier_are_refused() {
        assert!(cc(
            "AWS::Route53::RecordSet",
            "Z|a.example.com|A",
            json!({}),
            json!({})
        )
        .is_err());
    }

    #[test]
    fn unknown_sdk_written_types_are_sent_verbatim_but_not_found_is_not_trusted() {
        let r = cc("AWS::Foo::Bar", "x", json!({}), json!({})).unwrap();
        assert_eq!(
            r,
            CcIdentifier {
                identifier: "x".into(),
                verified: false
            }
        );
    }

    #[test]
    fn cloud_control_poll_cap_is_15_min_60_for_slow_types_30_for_eks() {
        assert_eq!(poll_cap_ms("AWS::SQS::Queue"), 15 * 60_000);
        assert_eq!(poll_cap_ms("AWS::RDS::DBCluster"), 60 * 60_000);
        assert_eq!(poll_cap_ms("AWS::EKS::Cluster"), 30 * 60_000);
    }
}
