//! What the CloudFormation type registry says about a resource type
//! (docs/export.md, "The registry"), the fallback table used when it says nothing usable, and the
//! import-support preflight (docs/export.md, "Import-support preflight"). The caller calls `DescribeType` once per
//! distinct type of the whole plan (the set is the plan's `PlanNeeds::types`) and hands
//! the answers in as a map type → [`TypeFacts`].

use std::collections::BTreeMap;

use serde_json::Value;

/// `DescribeType`'s answer for one type, reduced to what the plan reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeFacts {
    /// The call answered with a usable schema (`primaryIdentifier` a non-empty array of
    /// strings, field names without `/properties/`).
    Schema {
        primary_identifier: Vec<String>,
        /// `handlers` is an object with an own `read` key.
        has_read_handler: bool,
        /// The response's `ProvisioningType`, verbatim.
        provisioning_type: Option<String>,
    },
    /// The call failed, or its schema was unusable: the fallback table answers.
    Unavailable { cause: String },
}

/// Whether the registry says the type can be imported (docs/export.md, "The registry").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportSupport {
    Importable,
    /// No read handler AND `NON_PROVISIONABLE`: both signals agree.
    Unsupported,
    /// Anything else, every fallback answer included. Never blocks.
    Unknown,
}

impl TypeFacts {
    /// Reads a `DescribeType` response: `schema` is its `Schema` string,
    /// `provisioning_type` its `ProvisioningType`. An unparsable schema or an unusable
    /// `primaryIdentifier` gives [`TypeFacts::Unavailable`].
    pub fn from_describe_type(schema: Option<&str>, provisioning_type: Option<&str>) -> Self {
        let Some(text) = schema else {
            return TypeFacts::Unavailable {
                cause: "the registry returned no schema".into(),
            };
        };
        let Ok(Value::Object(doc)) = serde_json::from_str::<Value>(text) else {
            return TypeFacts::Unavailable {
                cause: "the registry schema is not a JSON object".into(),
            };
        };
        let ids: Option<Vec<String>> = doc
            .get("primaryIdentifier")
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty())
            .and_then(|a| {
                a.iter()
                    .map(|v| {
                        v.as_str()
                            .map(|s| s.strip_prefix("/properties/").unwrap_or(s).to_string())
                    })
                    .collect()
            });
        let Some(primary_identifier) = ids else {
            return TypeFacts::Unavailable {
                cause: "the registry schema has no usable primaryIdentifier".into(),
            };
        };
        let has_read_handler = doc
            .get("handlers")
            .and_then(Value::as_object)
            .is_some_and(|h| h.contains_key("read"));
        TypeFacts::Schema {
            primary_identifier,
            has_read_handler,
            provisioning_type: provisioning_type.map(str::to_string),
        }
    }

    /// A failed call.
    pub fn unavailable(cause: impl Into<String>) -> Self {
        TypeFacts::Unavailable {
            cause: cause.into(),
        }
    }

    pub fn import_support(&self) -> ImportSupport {
        match self {
            TypeFacts::Schema {
                has_read_handler,
                provisioning_type,
                ..
            } => {
                if *has_read_handler {
                    ImportSupport::Importable
                } else if provisioning_type.as_deref() == Some("NON_PROVISIONABLE") {
                    ImportSupport::Unsupported
                } else {
                    ImportSupport::Unknown
                }
            }
            TypeFacts::Unavailable { .. } => ImportSupport::Unknown,
        }
    }
}

/// Neither the registry nor the fallback table knows the type's identifier: the type,
/// and the registry call's failure when it failed (`core::view::blocked` words it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownIdentifier {
    pub resource_type: String,
    /// [`TypeFacts::Unavailable`]'s cause.
    pub cause: Option<String>,
}

/// The type's identifier fields: the registry's, else the fallback table's single
/// field; `Err` names the type when neither knows it.
pub fn identifier_fields(
    resource_type: &str,
    facts: Option<&TypeFacts>,
) -> Result<Vec<String>, UnknownIdentifier> {
    if let Some(TypeFacts::Schema {
        primary_identifier, ..
    }) = facts
    {
        return Ok(primary_identifier.clone());
    }
    match fallback_field(resource_type) {
        Some(f) => Ok(vec![f.to_string()]),
        None => Err(UnknownIdentifier {
            resource_type: resource_type.to_string(),
            cause: match facts {
                Some(TypeFacts::Unavailable { cause }) => Some(cause.clone()),
                _ => None,
            },
        }),
    }
}

/// The fallback table: a single identifier field per type (docs/export.md, "The registry").
pub const FALLBACK_IDENTIFIERS: &[(&str, &str)] = &[
    ("AWS::S3::Bucket", "BucketName"),
    ("AWS::IAM::Role", "RoleName"),
    ("AWS::IAM::ManagedPolicy", "PolicyArn"),
    ("AWS::IAM::User", "UserName"),
    ("AWS::IAM::Group", "GroupName"),
    ("AWS::IAM::InstanceProfile", "InstanceProfileName"),
    ("AWS::Lambda::Function", "FunctionName"),
    ("AWS::DynamoDB::Table", "TableName"),
    ("AWS::SQS::Queue", "QueueUrl"),
    ("AWS::SNS::Topic", "TopicArn"),
    ("AWS::Logs::LogGroup", "LogGroupName"),
    ("AWS::EC2::VPC", "VpcId"),
    ("AWS::EC2::Subnet", "SubnetId"),
    ("AWS::EC2::SecurityGroup", "GroupId"),
    ("AWS::EC2::InternetGateway", "InternetGatewayId"),
    ("AWS::EC2::RouteTable", "RouteTableId"),
    ("AWS::EC2::NatGateway", "NatGatewayId"),
    ("AWS::CloudFront::Distribution", "Id"),
    ("AWS::CloudFront::CloudFrontOriginAccessIdentity", "Id"),
    ("AWS::Route53::HostedZone", "Id"),
    ("AWS::SecretsManager::Secret", "Id"),
    ("AWS::Events::Rule", "Arn"),
    ("AWS::Events::EventBus", "Name"),
    ("AWS::ApiGateway::RestApi", "RestApiId"),
    ("AWS::ApiGatewayV2::Api", "ApiId"),
    ("AWS::CloudWatch::Alarm", "AlarmName"),
    ("AWS::Kinesis::Stream", "Name"),
    ("AWS::SSM::Parameter", "Name"),
    ("AWS::StepFunctions::StateMachine", "Arn"),
    ("AWS::Cognito::UserPool", "UserPoolId"),
    ("AWS::ECR::Repository", "RepositoryName"),
];

/// Exact-match lookup (a type string such as `constructor` resolves to nothing).
pub fn fallback_field(resource_type: &str) -> Option<&'static str> {
    FALLBACK_IDENTIFIERS
        .iter()
        .find(|(t, _)| *t == resource_type)
        .map(|(_, f)| *f)
}

/// Types CreateChangeSet refuses to import although the registry looks importable, with
/// when and where that was measured (docs/export.md, "Import-support preflight").
pub const DATED_BLOCK_LIST: &[(&str, &str)] =
    &[("AWS::AppSync::GraphQLApi", "us-east-1, September 2026")];

pub fn dated_block(resource_type: &str) -> Option<&'static str> {
    DATED_BLOCK_LIST
        .iter()
        .find(|(t, _)| *t == resource_type)
        .map(|(_, when)| *when)
}

/// Why the preflight blocks a type (`core::view::blocked` words it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreflightBlock {
    /// On the dated block list: CloudFormation rejects its IMPORT although the registry
    /// reports a read handler (`measured`: when and where).
    Dated {
        resource_type: String,
        measured: &'static str,
    },
    /// No read handler and `NON_PROVISIONABLE`: CreateChangeSet would refuse it.
    NoReadHandler { resource_type: String },
}

/// The preflight verdict for one type: `Some(why)` blocks every resource of it.
/// `skip` (`--skip-import-support-preflight`) disables both the registry heuristic and
/// the dated block list (docs/export.md, "Decisions", decision on "Import-support preflight").
pub fn preflight_block(
    resource_type: &str,
    facts: Option<&TypeFacts>,
    skip: bool,
) -> Option<PreflightBlock> {
    if skip {
        return None;
    }
    if let Some(measured) = dated_block(resource_type) {
        return Some(PreflightBlock::Dated {
            resource_type: resource_type.to_string(),
            measured,
        });
    }
    if facts.map(TypeFacts::import_support) == Some(ImportSupport::Unsupported) {
        return Some(PreflightBlock::NoReadHandler {
            resource_type: resource_type.to_string(),
        });
    }
    None
}

/// Every distinct type the facts map must answer, for a set of types (sorted, once each).
pub fn distinct<'a>(types: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut m: BTreeMap<&str, ()> = BTreeMap::new();
    for t in types {
        m.insert(t, ());
    }
    m.into_keys().map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(ids: &str, handlers: &str) -> String {
        format!(r#"{{"typeName":"X","primaryIdentifier":{ids},"handlers":{handlers}}}"#)
    }

    #[test]
    fn registry_schema_field_names_drop_the_properties_prefix() {
        let f = TypeFacts::from_describe_type(
            Some(&schema(
                r#"["/properties/ApiId","/properties/ApiKeyId"]"#,
                r#"{"read":{}}"#,
            )),
            Some("FULLY_MUTABLE"),
        );
        assert_eq!(
            identifier_fields("AWS::AppSync::ApiKey", Some(&f)).unwrap(),
            ["ApiId", "ApiKeyId"]
        );
        assert_eq!(f.import_support(), ImportSupport::Importable);
    }

    #[test]
    fn registry_unusable_schema_falls_back_to_the_table() {
        for s in [
            None,
            Some("not json"),
            Some(r#"{"primaryIdentifier":[]}"#),
            Some(r#"{"primaryIdentifier":[1]}"#),
        ] {
            let f = TypeFacts::from_describe_type(s, Some("NON_PROVISIONABLE"));
            assert!(matches!(f, TypeFacts::Unavailable { .. }), "{s:?}");
            assert_eq!(f.import_support(), ImportSupport::Unknown);
        }
    }

    #[test]
    fn statement_20_no_read_handler_and_non_provisionable_is_unsupported() {
        for handlers in ["null", "[]", r#"{"create":{}}"#, r#"["read"]"#] {
            let f = TypeFacts::from_describe_type(
                Some(&schema(r#"["/properties/Id"]"#, handlers)),
                Some("NON_PROVISIONABLE"),
            );
            assert_eq!(f.import_support(), ImportSupport::Unsupported, "{handlers}");
            assert!(preflight_block("AWS::Glue::Table", Some(&f), false).is_some());
        }
        let no_handlers = TypeFacts::from_describe_type(
            Some(r#"{"primaryIdentifier":["/properties/Id"]}"#),
            Some("NON_PROVISIONABLE"),
        );
        assert_eq!(no_handlers.import_support(), ImportSupport::Unsupported);
    }

    #[test]
    fn statement_21_no_read_handler_but_fully_mutable_is_not_blocked() {
        let f = TypeFacts::from_describe_type(
            Some(&schema(r#"["/properties/Id"]"#, "{}")),
            Some("FULLY_MUTABLE"),
        );
        assert_eq!(f.import_support(), ImportSupport::Unknown);
        assert_eq!(preflight_block("AWS::X::Y", Some(&f), false), None);
        let none =
            TypeFacts::from_describe_type(Some(&schema(r#"["/properties/Id"]"#, "{}")), None);
        assert_eq!(none.import_support(), ImportSupport::Unknown);
    }

    #[test]
    fn statement_22_describe_type_failure_uses_the_fallback_table_and_never_blocks() {
        let f = TypeFacts::unavailable("AccessDenied");
        assert_eq!(
            identifier_fields("AWS::S3::Bucket", Some(&f)).unwrap(),
            ["BucketName"]
        );
        assert_eq!(preflight_block("AWS::S3::Bucket", Some(&f), false), None);
        assert_eq!(
            identifier_fields("AWS::Foo::Bar", Some(&f)),
            Err(UnknownIdentifier {
                resource_type: "AWS::Foo::Bar".into(),
                cause: Some("AccessDenied".into()),
            })
        );
    }

    #[test]
    fn statement_23_skip_import_support_preflight_plans_the_type() {
        let f = TypeFacts::from_describe_type(
            Some(&schema(r#"["/properties/Id"]"#, "{}")),
            Some("NON_PROVISIONABLE"),
        );
        assert!(preflight_block("AWS::Glue::Table", Some(&f), false).is_some());
        assert_eq!(preflight_block("AWS::Glue::Table", Some(&f), true), None);
    }

    #[test]
    fn statement_40_graphql_api_is_blocked_up_front_despite_a_read_handler() {
        let f = TypeFacts::from_describe_type(
            Some(&schema(r#"["/properties/Arn"]"#, r#"{"read":{}}"#)),
            Some("FULLY_MUTABLE"),
        );
        assert_eq!(
            preflight_block("AWS::AppSync::GraphQLApi", Some(&f), false),
            Some(PreflightBlock::Dated {
                resource_type: "AWS::AppSync::GraphQLApi".into(),
                measured: "us-east-1, September 2026",
            })
        );
        // The skip flag bypasses the dated list too (decision on docs/export.md, "Import-support preflight").
        assert_eq!(
            preflight_block("AWS::AppSync::GraphQLApi", Some(&f), true),
            None
        );
    }

    #[test]
    fn fallback_lookup_is_exact_match_only() {
        assert_eq!(fallback_field("constructor"), None);
        assert_eq!(fallback_field("toString"), None);
        assert_eq!(fallback_field("AWS::SQS::Queue"), Some("QueueUrl"));
    }
}
