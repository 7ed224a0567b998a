//! CloudFormation's `Ref` return value per resource type, from what a cdkd record holds
//! (docs/repairs.md, "Ref values by type"). It sits with the types' identifier rules
//! ([`crate::destroy::identifiers`] for Cloud Control, [`crate::export::identifier`] and
//! `export::splitters` for import): cdkd's physical id is often, but not always, what
//! `Ref` returns. A composite id (`<deploymentId>|<restApiId>`, `<publicIp>|<allocationId>`)
//! holds the `Ref` value as one part; some types record an ARN where `Ref` returns a name,
//! or a composite where `Ref` returns an ARN cdkd records as an attribute.
//!
//! [`REF_RULES`] is the one table. A type is in it only when its `Ref` return value was
//! checked against the CloudFormation resource reference ("Return values / Ref") and the
//! shape of cdkd's physical id for it is known; every other type has no rule, and
//! [`ref_value`] refuses it rather than guess.

use serde_json::{Map, Value};

use crate::export::identifier::usable_recorded;
use crate::export::splitters::{split_identifier, SplitError};
use crate::export::MASK;

/// How a type's `Ref` value is read from its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefRule {
    /// `Ref` returns what cdkd records as the physical id.
    PhysicalId,
    /// cdkd records a composite id; `Ref` returns one of its fields, read by the type's
    /// export splitter (`export::splitters`, docs/export.md, "Splitters (composite identifiers)"), the one reader of
    /// cdkd's composite ids: `DeploymentId` of `<deploymentId>|<restApiId>`, `PublicIp`
    /// of `<publicIp>|<allocationId>`, the child id of `<restApiId>|<child>` (a bare
    /// child id with the recorded `properties.RestApiId`).
    SplitField(&'static str),
    /// cdkd records the rule ARN (`arn:…:rule/<name>`) or, in older records, the name;
    /// `Ref` returns the rule name. A rule on a custom bus (`rule/<bus>/<name>`, or an
    /// `EventBusName` other than `default`) has no verified rule.
    EventsRuleName,
    /// cdkd records a composite id; `Ref` returns the resource's ARN, which cdkd records
    /// in `attributes.<name>` (a physical id that is itself a bare ARN serves too), usable
    /// as export reads a recorded ARN (docs/export.md, "Types whose physical id is not CloudFormation's identifier": `arn:`, the service, no `|`).
    ArnAttribute {
        attr: &'static str,
        service: &'static str,
    },
}

/// Every type whose `Ref` rule is known: type, rule, and what `Ref` returns according to
/// the CloudFormation resource reference.
pub const REF_RULES: &[(&str, RefRule, &str)] = &[
    ("AWS::S3::Bucket", RefRule::PhysicalId, "the bucket name"),
    ("AWS::SQS::Queue", RefRule::PhysicalId, "the queue URL"),
    ("AWS::SNS::Topic", RefRule::PhysicalId, "the topic ARN"),
    ("AWS::IAM::Role", RefRule::PhysicalId, "the role name"),
    ("AWS::IAM::User", RefRule::PhysicalId, "the user name"),
    ("AWS::IAM::Group", RefRule::PhysicalId, "the group name"),
    (
        "AWS::IAM::InstanceProfile",
        RefRule::PhysicalId,
        "the instance profile name",
    ),
    (
        "AWS::IAM::ManagedPolicy",
        RefRule::PhysicalId,
        "the policy ARN",
    ),
    (
        "AWS::Lambda::Function",
        RefRule::PhysicalId,
        "the function name",
    ),
    (
        "AWS::Lambda::LayerVersion",
        RefRule::PhysicalId,
        "the layer version ARN",
    ),
    (
        "AWS::DynamoDB::Table",
        RefRule::PhysicalId,
        "the table name",
    ),
    (
        "AWS::Logs::LogGroup",
        RefRule::PhysicalId,
        "the log group name",
    ),
    ("AWS::KMS::Key", RefRule::PhysicalId, "the key ID"),
    (
        "AWS::SSM::Parameter",
        RefRule::PhysicalId,
        "the parameter name",
    ),
    ("AWS::EC2::VPC", RefRule::PhysicalId, "the VPC ID"),
    ("AWS::EC2::Subnet", RefRule::PhysicalId, "the subnet ID"),
    (
        "AWS::EC2::SecurityGroup",
        RefRule::PhysicalId,
        "the security group ID",
    ),
    (
        "AWS::EC2::InternetGateway",
        RefRule::PhysicalId,
        "the internet gateway ID",
    ),
    (
        "AWS::EC2::RouteTable",
        RefRule::PhysicalId,
        "the route table ID",
    ),
    (
        "AWS::EC2::NatGateway",
        RefRule::PhysicalId,
        "the NAT gateway ID",
    ),
    (
        "AWS::EC2::EIP",
        RefRule::SplitField("PublicIp"),
        "the Elastic IP address",
    ),
    (
        "AWS::SecretsManager::Secret",
        RefRule::PhysicalId,
        "the secret ARN",
    ),
    (
        "AWS::StepFunctions::StateMachine",
        RefRule::PhysicalId,
        "the state machine ARN",
    ),
    (
        "AWS::CloudWatch::Alarm",
        RefRule::PhysicalId,
        "the alarm name",
    ),
    (
        "AWS::ECR::Repository",
        RefRule::PhysicalId,
        "the repository name",
    ),
    ("AWS::ECS::Cluster", RefRule::PhysicalId, "the cluster name"),
    (
        "AWS::Kinesis::Stream",
        RefRule::PhysicalId,
        "the stream name",
    ),
    (
        "AWS::CloudFront::Distribution",
        RefRule::PhysicalId,
        "the distribution ID",
    ),
    (
        "AWS::Events::EventBus",
        RefRule::PhysicalId,
        "the event bus name",
    ),
    (
        "AWS::Events::Rule",
        RefRule::EventsRuleName,
        "the rule name",
    ),
    (
        "AWS::ApiGateway::RestApi",
        RefRule::PhysicalId,
        "the REST API ID",
    ),
    (
        "AWS::ApiGateway::Deployment",
        RefRule::SplitField("DeploymentId"),
        "the deployment ID",
    ),
    (
        "AWS::ApiGateway::Resource",
        RefRule::SplitField("ResourceId"),
        "the resource ID",
    ),
    (
        "AWS::ApiGateway::Stage",
        RefRule::SplitField("StageName"),
        "the stage name",
    ),
    (
        "AWS::ApiGateway::Authorizer",
        RefRule::SplitField("AuthorizerId"),
        "the authorizer ID",
    ),
    (
        "AWS::ApiGateway::Model",
        RefRule::SplitField("Name"),
        "the model name",
    ),
    (
        "AWS::ApiGateway::RequestValidator",
        RefRule::SplitField("RequestValidatorId"),
        "the request validator ID",
    ),
    (
        "AWS::AppSync::DataSource",
        RefRule::ArnAttribute {
            attr: "DataSourceArn",
            service: ":appsync:",
        },
        "the data source ARN",
    ),
    (
        "AWS::AppSync::Resolver",
        RefRule::ArnAttribute {
            attr: "ResolverArn",
            service: ":appsync:",
        },
        "the resolver ARN",
    ),
    (
        "AWS::AppSync::ApiKey",
        RefRule::ArnAttribute {
            attr: "Arn",
            service: ":appsync:",
        },
        "the API key ARN",
    ),
];

/// The `Ref` rule of a type, `None` when it is not known.
pub fn ref_rule(resource_type: &str) -> Option<RefRule> {
    REF_RULES
        .iter()
        .find(|(t, _, _)| *t == resource_type)
        .map(|(_, r, _)| *r)
}

/// Why no `Ref` value can be read from a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefUnknown {
    /// The type has no rule in [`REF_RULES`].
    NoRule,
    /// The record does not have the shape the rule reads.
    Shape(RefShape),
}

/// What the record holds instead of the shape its type's rule reads (its words are the
/// repair view's, `core::view::repair`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefShape {
    /// The splitter refused the physical id.
    Split(SplitError),
    /// No splitter reads the type.
    NoSplitter { resource_type: String },
    /// The splitter gives no value for the field the rule reads.
    NoField { field: &'static str },
    /// An EventBridge rule on a custom event bus.
    CustomEventBus,
    /// An EventBridge rule's physical id is neither its ARN nor its name.
    NotARuleName,
    /// No recorded attribute (nor the physical id) is a usable ARN.
    NoArnAttribute { attr: &'static str },
    /// The value is empty or holds the redaction mask.
    EmptyOrMasked,
}

fn shape(what: RefShape) -> RefUnknown {
    RefUnknown::Shape(what)
}

/// The value CloudFormation's `Ref` returns for a resource of `resource_type` whose cdkd
/// record holds `physical_id`, `properties` and `attributes` (docs/repairs.md, "Ref values by type"). A
/// value holding the mask is never returned.
pub fn ref_value(
    resource_type: &str,
    physical_id: &str,
    properties: Option<&Map<String, Value>>,
    attributes: Option<&Map<String, Value>>,
) -> Result<String, RefUnknown> {
    let rule = ref_rule(resource_type).ok_or(RefUnknown::NoRule)?;
    let value = match rule {
        RefRule::PhysicalId => physical_id.to_string(),
        RefRule::SplitField(field) => {
            let split = match split_identifier(resource_type, physical_id, properties) {
                Some(r) => r.map_err(|e| shape(RefShape::Split(e)))?,
                None => {
                    return Err(shape(RefShape::NoSplitter {
                        resource_type: resource_type.to_string(),
                    }))
                }
            };
            match split.values.into_iter().find(|(k, _)| k == field) {
                Some((_, v)) => v,
                None => return Err(shape(RefShape::NoField { field })),
            }
        }
        RefRule::EventsRuleName => {
            let bus = properties
                .and_then(|p| p.get("EventBusName"))
                .and_then(Value::as_str);
            if bus.is_some_and(|b| b != "default") {
                return Err(shape(RefShape::CustomEventBus));
            }
            let name = if physical_id.starts_with("arn:") {
                physical_id
                    .splitn(6, ':')
                    .nth(5)
                    .and_then(|r| r.strip_prefix("rule/"))
                    .unwrap_or("")
            } else {
                physical_id
            };
            if name.is_empty() || name.contains(['/', ':', '|']) {
                return Err(shape(RefShape::NotARuleName));
            }
            name.to_string()
        }
        RefRule::ArnAttribute { attr, service } => {
            let usable = |s: &str| usable_recorded(s, service);
            let recorded = attributes.and_then(|a| a.get(attr)).and_then(Value::as_str);
            match recorded.and_then(usable).or_else(|| usable(physical_id)) {
                Some(arn) => arn,
                None => return Err(shape(RefShape::NoArnAttribute { attr })),
            }
        }
    };
    if value.is_empty() || value.contains(MASK) {
        return Err(shape(RefShape::EmptyOrMasked));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table lists each type once.
    #[test]
    fn ref_rules_name_each_type_once() {
        for (i, (t, _, _)) in REF_RULES.iter().enumerate() {
            assert!(
                REF_RULES[i + 1..].iter().all(|(u, _, _)| u != t),
                "{t} twice"
            );
        }
    }
}
