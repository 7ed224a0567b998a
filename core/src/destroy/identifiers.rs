//! Cloud Control identifiers for records cdkd wrote
//! through its SDK providers (docs/destroy.md, "Which identifier Cloud Control gets").
//!
//! Hazard: a wrong identifier can come back as NotFound, which reads as "already
//! deleted" and would drop a live resource from state. So only the "same value" types
//! use the physical id verbatim; the table below translates the others; a missing input
//! or an unverified type is a skip (record kept), never a guess.

use serde_json::{Map, Value};

/// How to address a record through Cloud Control.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CcIdentifier {
    /// Use this identifier as is.
    Identifier(String),
    /// Composite: join the values with `|` in the order of the type schema's
    /// `primaryIdentifier` (read from `DescribeType`, see [`join_in_schema_order`]).
    /// The fields are listed in the order this project believes the schema has; a
    /// caller that joins them in that order without `DescribeType` must not trust a
    /// NotFound answer for the result ([`CcIdentifier::trusted_not_found`]).
    Fields(Vec<(String, String)>),
    /// No Cloud Control identifier can be derived: use the type's SDK deleter.
    KeepSdk { reason: NoIdentifier },
    /// An input is missing or the type's identifier is unverified: skip the row (record
    /// kept) rather than guess.
    Skip { reason: NoIdentifier },
}

/// Why no Cloud Control identifier is sent for a record (docs/destroy.md, "Which
/// identifier Cloud Control gets"). Worded by `core::view::cc_identifier`; the words
/// become the deleter's message for the row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoIdentifier {
    /// The record has an empty physical id.
    NoPhysicalId { resource_type: String },
    /// The type's Cloud Control identifier is generated and not kept in state.
    Generated { resource_type: String },
    /// The type's Cloud Control identifier is not verified.
    Unverified { resource_type: String },
    /// The record lacks an input of the identifier (`what`: `properties.X` or
    /// `attributes.X`).
    Lacks {
        resource_type: String,
        what: &'static str,
    },
    /// A type not known to use its physical id as its Cloud Control identifier.
    NotKnown { resource_type: String },
    /// An `AWS::EC2::EIP` record holding one part of its identifier only.
    EipOnePart,
    /// An `AWS::EC2::VPCGatewayAttachment` physical id not of the form `<gateway>|<vpc>`.
    GatewayAttachmentShape,
    /// An `AWS::EC2::VPCGatewayAttachment` whose gateway kind is unknown.
    GatewayKindUnknown,
    /// An `AWS::WAFv2::WebACL` physical id that is not a WebACL ARN.
    NotWebAclArn,
}

impl CcIdentifier {
    /// The identifier to send without a `DescribeType` lookup: `Identifier` as is,
    /// `Fields` joined with `|` in the listed order. `None` for `KeepSdk` / `Skip`.
    pub fn as_sent(&self) -> Option<String> {
        match self {
            CcIdentifier::Identifier(s) => Some(s.clone()),
            CcIdentifier::Fields(f) => Some(
                f.iter()
                    .map(|(_, v)| v.as_str())
                    .collect::<Vec<_>>()
                    .join("|"),
            ),
            CcIdentifier::KeepSdk { .. } | CcIdentifier::Skip { .. } => None,
        }
    }

    /// Whether a NotFound answer for [`Self::as_sent`] may count as "already deleted"
    /// (docs/destroy.md, "Which identifier Cloud Control gets" hazard): only for an identifier known to be Cloud Control's, never for
    /// fields joined in an order not read from the schema.
    pub fn trusted_not_found(&self) -> bool {
        matches!(self, CcIdentifier::Identifier(_))
    }
}

/// Types whose SDK physical id is the Cloud Control identifier (docs/destroy.md, "Which identifier Cloud Control gets" "same value").
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

/// Composite ids cdkd already writes in Cloud Control form.
const ALREADY_COMPOSITE: &[&str] = &[
    "AWS::EC2::Route",
    "AWS::ApiGateway::Method",
    "AWS::S3Tables::Namespace",
];

/// No Cloud Control identifier is derivable: keep the SDK path.
const KEEP_SDK: &[&str] = &[
    "AWS::IAM::Policy",
    "AWS::Route53::RecordSet",
    "AWS::Glue::Table",
    "AWS::SNS::TopicPolicy",
    "AWS::SQS::QueuePolicy",
    "AWS::EC2::NetworkAclEntry",
];

/// Listed as unverified in docs/destroy.md, "Which identifier Cloud Control gets" (confirm with DescribeType + GetResource first).
const UNVERIFIED: &[&str] = &[
    "AWS::AppSync::ApiKey",
    "AWS::CloudWatch::AnomalyDetector",
    "AWS::Budgets::Budget",
    "AWS::CodeBuild::Project",
    "AWS::IAM::UserToGroupAddition",
    "AWS::IAM::AccessKey",
    "AWS::RDS::DBProxyTargetGroup",
    "AWS::CodeCommit::Repository",
];

fn skip(reason: NoIdentifier) -> CcIdentifier {
    CcIdentifier::Skip { reason }
}

fn str_field<'a>(m: Option<&'a Map<String, Value>>, k: &str) -> Option<&'a str> {
    m.and_then(|m| m.get(k))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The Cloud Control identifier for a record (docs/destroy.md, "Which identifier Cloud Control gets"). `provisioned_by == "cc-api"`
/// means the physical id already is Cloud Control's.
pub fn cloud_control_identifier(
    resource_type: &str,
    physical_id: &str,
    properties: Option<&Map<String, Value>>,
    attributes: Option<&Map<String, Value>>,
    provisioned_by: Option<&str>,
) -> CcIdentifier {
    let ty = resource_type;
    let pid = physical_id;
    if pid.is_empty() {
        return skip(NoIdentifier::NoPhysicalId {
            resource_type: ty.to_string(),
        });
    }
    if provisioned_by == Some("cc-api")
        || SAME_VALUE_TYPES.contains(&ty)
        || ALREADY_COMPOSITE.contains(&ty)
    {
        return CcIdentifier::Identifier(pid.to_string());
    }
    if KEEP_SDK.contains(&ty) {
        return CcIdentifier::KeepSdk {
            reason: NoIdentifier::Generated {
                resource_type: ty.to_string(),
            },
        };
    }
    if UNVERIFIED.contains(&ty) || ty.starts_with("AWS::DocDB::") {
        return skip(NoIdentifier::Unverified {
            resource_type: ty.to_string(),
        });
    }
    derived(ty, pid, properties, attributes).unwrap_or_else(|e| e)
}

/// The Cloud Control identifier of a type that builds it from its record (properties,
/// attributes or physical id); `Err` holds why the record is skipped.
fn derived(
    ty: &str,
    pid: &str,
    properties: Option<&Map<String, Value>>,
    attributes: Option<&Map<String, Value>>,
) -> Result<CcIdentifier, CcIdentifier> {
    let prop = |k: &str| str_field(properties, k);
    let attr = |k: &str| str_field(attributes, k);
    let need = |v: Option<&str>, what: &'static str| -> Result<String, CcIdentifier> {
        v.map(str::to_string).ok_or_else(|| {
            skip(NoIdentifier::Lacks {
                resource_type: ty.to_string(),
                what,
            })
        })
    };
    Ok(match ty {
        "AWS::EC2::EIP" => {
            if pid.contains('|') {
                CcIdentifier::Identifier(pid.to_string())
            } else {
                return Err(skip(NoIdentifier::EipOnePart));
            }
        }
        "AWS::Lambda::EventInvokeConfig" => {
            if pid.contains('|') {
                CcIdentifier::Identifier(pid.to_string())
            } else {
                CcIdentifier::Identifier(format!("{pid}|$LATEST"))
            }
        }
        "AWS::ApiGateway::Resource" => CcIdentifier::Identifier(format!(
            "{}|{pid}",
            need(prop("RestApiId"), "properties.RestApiId")?
        )),
        "AWS::ApiGateway::Deployment" => CcIdentifier::Identifier(format!(
            "{pid}|{}",
            need(prop("RestApiId"), "properties.RestApiId")?
        )),
        "AWS::ApiGateway::Stage" | "AWS::ApiGateway::Authorizer" => CcIdentifier::Identifier(
            format!("{}|{pid}", need(prop("RestApiId"), "properties.RestApiId")?),
        ),
        "AWS::ApiGatewayV2::Integration" | "AWS::ApiGatewayV2::Route" => CcIdentifier::Identifier(
            format!("{}|{pid}", need(prop("ApiId"), "properties.ApiId")?),
        ),
        "AWS::ApiGatewayV2::Stage" => CcIdentifier::Fields(vec![
            ("ApiId".into(), need(prop("ApiId"), "properties.ApiId")?),
            ("StageName".into(), pid.to_string()),
        ]),
        "AWS::ApiGatewayV2::Authorizer" => CcIdentifier::Fields(vec![
            ("ApiId".into(), need(prop("ApiId"), "properties.ApiId")?),
            ("AuthorizerId".into(), pid.to_string()),
        ]),
        "AWS::EC2::VPCGatewayAttachment" => gateway_attachment(pid, properties)?,
        "AWS::EC2::SecurityGroupIngress" => {
            CcIdentifier::Identifier(need(attr("Id"), "attributes.Id")?)
        }
        "AWS::AppSync::DataSource" => {
            CcIdentifier::Identifier(need(attr("DataSourceArn"), "attributes.DataSourceArn")?)
        }
        "AWS::AppSync::Resolver" => {
            CcIdentifier::Identifier(need(attr("ResolverArn"), "attributes.ResolverArn")?)
        }
        "AWS::S3Tables::Table" => {
            CcIdentifier::Identifier(need(attr("TableARN"), "attributes.TableARN")?)
        }
        "AWS::S3Vectors::VectorBucket" => {
            CcIdentifier::Identifier(need(attr("VectorBucketArn"), "attributes.VectorBucketArn")?)
        }
        "AWS::Lambda::Permission" => {
            let statement = pid.rsplit_once('|').map_or(pid, |(_, s)| s);
            let function = need(prop("FunctionName"), "properties.FunctionName")?;
            CcIdentifier::Identifier(format!("{function}|{statement}"))
        }
        "AWS::ECS::Service" => CcIdentifier::Fields(vec![
            ("ServiceArn".into(), pid.to_string()),
            (
                "Cluster".into(),
                need(prop("Cluster"), "properties.Cluster")?,
            ),
        ]),
        "AWS::WAFv2::WebACL" => web_acl(pid)?,
        _ => {
            return Err(skip(NoIdentifier::NotKnown {
                resource_type: ty.to_string(),
            }))
        }
    })
}

/// An `AWS::EC2::VPCGatewayAttachment`'s identifier: the gateway's kind and the VPC, from
/// a physical id `<gateway>|<vpc>`.
fn gateway_attachment(
    pid: &str,
    properties: Option<&Map<String, Value>>,
) -> Result<CcIdentifier, CcIdentifier> {
    let prop = |k: &str| str_field(properties, k);
    let (gw, vpc) = pid
        .split_once('|')
        .ok_or_else(|| skip(NoIdentifier::GatewayAttachmentShape))?;
    let kind = if prop("InternetGatewayId").is_some() || gw.starts_with("igw-") {
        "IGW"
    } else if prop("VpnGatewayId").is_some() || gw.starts_with("vgw-") {
        "VGW"
    } else {
        return Err(skip(NoIdentifier::GatewayKindUnknown));
    };
    Ok(CcIdentifier::Identifier(format!("{kind}|{vpc}")))
}

/// An `AWS::WAFv2::WebACL`'s identifier: its name, id and scope, read from its ARN.
fn web_acl(pid: &str) -> Result<CcIdentifier, CcIdentifier> {
    // arn:<p>:wafv2:<region>:<account>:<regional|global>/webacl/<name>/<id>
    let res = pid.splitn(6, ':').nth(5).unwrap_or("");
    let parts: Vec<&str> = res.split('/').collect();
    let scope = match parts.first() {
        Some(&"regional") => "REGIONAL",
        Some(&"global") => "CLOUDFRONT",
        _ => return Err(skip(NoIdentifier::NotWebAclArn)),
    };
    if parts.len() != 4 || parts[1] != "webacl" {
        return Err(skip(NoIdentifier::NotWebAclArn));
    }
    Ok(CcIdentifier::Fields(vec![
        ("Name".into(), parts[2].to_string()),
        ("Id".into(), parts[3].to_string()),
        ("Scope".into(), scope.to_string()),
    ]))
}

/// Joins [`CcIdentifier::Fields`] with `|` in the order of the schema's
/// `primaryIdentifier` (`["/properties/ApiId", "/properties/StageName"]`). `None` when
/// the schema names a field not given or the counts differ.
pub fn join_in_schema_order(
    fields: &[(String, String)],
    primary_identifier: &[String],
) -> Option<String> {
    if fields.len() != primary_identifier.len() {
        return None;
    }
    let mut parts = Vec::with_capacity(fields.len());
    for p in primary_identifier {
        let name = p.strip_prefix("/properties/").unwrap_or(p);
        parts.push(fields.iter().find(|(k, _)| k == name)?.1.as_str());
    }
    Some(parts.join("|"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn id(ty: &str, pid: &str, props: Value, attrs: Value) -> CcIdentifier {
        cloud_control_identifier(ty, pid, props.as_object(), attrs.as_object(), Some("sdk"))
    }

    fn ident(s: &str) -> CcIdentifier {
        CcIdentifier::Identifier(s.into())
    }

    #[test]
    fn same_value_types_use_physical_id_rule_3_2() {
        for ty in [
            "AWS::S3::Bucket",
            "AWS::SQS::Queue",
            "AWS::SSM::Parameter",
            "AWS::IAM::Role",
        ] {
            assert_eq!(id(ty, "x", json!({}), json!({})), ident("x"));
        }
    }

    #[test]
    fn cc_api_records_use_physical_id_verbatim() {
        assert_eq!(
            cloud_control_identifier("AWS::Foo::Bar", "a|b", None, None, Some("cc-api")),
            ident("a|b")
        );
    }

    #[test]
    fn unknown_sdk_type_is_skipped_never_guessed_rule_3_2_hazard() {
        assert!(matches!(
            id("AWS::Foo::Bar", "x", json!({}), json!({})),
            CcIdentifier::Skip { .. }
        ));
        assert!(matches!(
            id("AWS::IAM::AccessKey", "x", json!({}), json!({})),
            CcIdentifier::Skip { .. }
        ));
        assert!(matches!(
            id("AWS::DocDB::DBCluster", "x", json!({}), json!({})),
            CcIdentifier::Skip { .. }
        ));
    }

    #[test]
    fn generated_id_types_keep_sdk_path_rule_3_2() {
        for ty in KEEP_SDK {
            assert!(
                matches!(
                    id(ty, "x", json!({}), json!({})),
                    CcIdentifier::KeepSdk { .. }
                ),
                "{ty}"
            );
        }
    }

    #[test]
    fn api_gateway_translations_rule_3_2() {
        let p = json!({"RestApiId": "api1"});
        assert_eq!(
            id("AWS::ApiGateway::Resource", "res1", p.clone(), json!({})),
            ident("api1|res1")
        );
        assert_eq!(
            id("AWS::ApiGateway::Deployment", "dep1", p.clone(), json!({})),
            ident("dep1|api1")
        );
        assert_eq!(
            id("AWS::ApiGateway::Stage", "prod", p.clone(), json!({})),
            ident("api1|prod")
        );
        assert_eq!(
            id("AWS::ApiGateway::Authorizer", "au1", p, json!({})),
            ident("api1|au1")
        );
        assert!(matches!(
            id("AWS::ApiGateway::Resource", "res1", json!({}), json!({})),
            CcIdentifier::Skip { .. }
        ));
        let v2 = json!({"ApiId": "a"});
        assert_eq!(
            id("AWS::ApiGatewayV2::Route", "r", v2.clone(), json!({})),
            ident("a|r")
        );
        assert_eq!(
            id("AWS::ApiGatewayV2::Integration", "i", v2.clone(), json!({})),
            ident("a|i")
        );
        assert_eq!(
            id("AWS::ApiGatewayV2::Stage", "s", v2, json!({})),
            CcIdentifier::Fields(vec![
                ("ApiId".into(), "a".into()),
                ("StageName".into(), "s".into())
            ])
        );
    }

    #[test]
    fn gateway_attachment_gets_kind_prefix_rule_3_2() {
        assert_eq!(
            id(
                "AWS::EC2::VPCGatewayAttachment",
                "igw-1|vpc-2",
                json!({}),
                json!({})
            ),
            ident("IGW|vpc-2")
        );
        assert_eq!(
            id(
                "AWS::EC2::VPCGatewayAttachment",
                "x|vpc-2",
                json!({"VpnGatewayId": "x"}),
                json!({})
            ),
            ident("VGW|vpc-2")
        );
    }

    #[test]
    fn attribute_sourced_identifiers_rule_3_2() {
        assert_eq!(
            id(
                "AWS::EC2::SecurityGroupIngress",
                "sg|tcp|1|2",
                json!({}),
                json!({"Id": "sgr-9"})
            ),
            ident("sgr-9")
        );
        assert!(matches!(
            id(
                "AWS::EC2::SecurityGroupIngress",
                "sg|tcp|1|2",
                json!({}),
                json!({})
            ),
            CcIdentifier::Skip { .. }
        ));
        assert_eq!(
            id(
                "AWS::AppSync::Resolver",
                "a|Query|f",
                json!({}),
                json!({"ResolverArn": "arn:r"})
            ),
            ident("arn:r")
        );
    }

    #[test]
    fn lambda_permission_and_event_invoke_config_rule_3_2() {
        let p = json!({"FunctionName": "fn"});
        assert_eq!(
            id("AWS::Lambda::Permission", "stmt", p.clone(), json!({})),
            ident("fn|stmt")
        );
        assert_eq!(
            id("AWS::Lambda::Permission", "arn:f|stmt", p, json!({})),
            ident("fn|stmt")
        );
        assert_eq!(
            id("AWS::Lambda::EventInvokeConfig", "fn", json!({}), json!({})),
            ident("fn|$LATEST")
        );
    }

    #[test]
    fn eip_with_one_part_is_looked_up_not_guessed() {
        assert_eq!(
            id("AWS::EC2::EIP", "1.2.3.4|eipalloc-1", json!({}), json!({})),
            ident("1.2.3.4|eipalloc-1")
        );
        assert!(matches!(
            id("AWS::EC2::EIP", "1.2.3.4", json!({}), json!({})),
            CcIdentifier::Skip { .. }
        ));
    }

    #[test]
    fn wafv2_webacl_parsed_from_arn_rule_3_2() {
        let arn = "arn:aws:wafv2:us-east-1:123:regional/webacl/my-acl/abc-123";
        assert_eq!(
            id("AWS::WAFv2::WebACL", arn, json!({}), json!({})),
            CcIdentifier::Fields(vec![
                ("Name".into(), "my-acl".into()),
                ("Id".into(), "abc-123".into()),
                ("Scope".into(), "REGIONAL".into())
            ])
        );
    }

    #[test]
    fn joined_fields_are_sent_but_not_found_is_not_trusted_rule_3_2_hazard() {
        let arn = "arn:aws:wafv2:us-east-1:123:regional/webacl/my-acl/abc-123";
        let w = id("AWS::WAFv2::WebACL", arn, json!({}), json!({}));
        assert_eq!(w.as_sent().as_deref(), Some("my-acl|abc-123|REGIONAL"));
        assert!(!w.trusted_not_found());
        let s = id("AWS::SQS::Queue", "https://q", json!({}), json!({}));
        assert_eq!(s.as_sent().as_deref(), Some("https://q"));
        assert!(s.trusted_not_found());
        let k = id("AWS::IAM::Policy", "p", json!({}), json!({}));
        assert_eq!(k.as_sent(), None);
        assert!(!k.trusted_not_found());
    }

    #[test]
    fn fields_join_in_describe_type_order() {
        let f = vec![
            ("Id".to_string(), "i".to_string()),
            ("Name".to_string(), "n".to_string()),
        ];
        let order = vec!["/properties/Name".to_string(), "/properties/Id".to_string()];
        assert_eq!(join_in_schema_order(&f, &order).as_deref(), Some("n|i"));
        assert_eq!(join_in_schema_order(&f, &order[..1]), None);
    }
}
