//! The words of why a row is blocked (docs/export.md, "Classifying a stack's resources",
//! "Resolving one row", "Splitters (composite identifiers)", "Looking up a
//! security-group ingress rule id", "Import-support preflight" and "Pre-delete of
//! recreate rows"): each [`BlockReason`] and the families it nests (the identifier's
//! [`Unresolved`], the splitters' [`SplitError`], the security-group lookup's
//! [`SgError`], the preflight's [`PreflightBlock`], the pre-delete's [`PolicyError`],
//! [`PrincipalMismatch`] and [`StageError`]). The deciding modules return the values and
//! word nothing. `plan.json` stores a blocked row's reason as these words
//! ([`StoredBlockedRow`]). Untrusted values are flattened (or printed through the
//! plain-value rule) as these messages always were.

use std::fmt;

use crate::export::blocked::{BlockReason, RecordedArn, StageError, Unresolved};
use crate::export::iam::{PolicyError, PrincipalMismatch};
use crate::export::overlay::{OverlayRefusal, Unrepresentable};
use crate::export::plain::shown;
use crate::export::plan::{BlockedRow, StoredBlockedRow};
use crate::export::registry::{PreflightBlock, UnknownIdentifier};
use crate::export::sg::{SgError, SgFailure, SgTuple, MAX_PAGES};
use crate::export::splitters::{shape_remedy, SplitError, SplitShape, SplitWarning};
use crate::export::MASK;
use crate::text::flatten_str;
use crate::view::words::describe_value;

impl From<BlockedRow> for StoredBlockedRow {
    fn from(r: BlockedRow) -> Self {
        StoredBlockedRow {
            logical_id: r.logical_id,
            resource_type: r.resource_type,
            reason: r.reason.to_string(),
        }
    }
}

/// The way out of a resource cdkd-flow cannot import (`--leave-unmanaged`).
const LEAVE_UNMANAGED: &str =
    "remove the resource from the app and export with --leave-unmanaged (it keeps running, owned by nothing)";

/// `<id> (<type>): Properties.<field> is <value>; <why>. Declare the scalar '<v>' instead,
/// or drop the property override`.
impl fmt::Display for OverlayRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}): Properties.{} is {}; {}. Declare the scalar '{}' instead, or drop the property override",
            flatten_str(&self.logical_id),
            flatten_str(&self.resource_type),
            flatten_str(&self.field),
            describe_value(&self.current),
            self.shape,
            flatten_str(&self.value)
        )
    }
}

impl fmt::Display for Unrepresentable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unrepresentable::EmptyList => "it is an empty list: there is nothing to reconcile, and cdkd-flow will not invent a value",
            Unrepresentable::ListWithObject => "it is a list holding an object: rewriting it would discard the intrinsic it holds",
            Unrepresentable::ListWithListOrNull => "it is a list holding a list or null: it cannot be expressed as the declared scalar",
        })
    }
}

impl fmt::Display for BlockReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlockReason::NestedNotInRecord => f.write_str(
                "the template declares a nested stack that the parent's record does not (no row of type AWS::CloudFormation::Stack at this logical id); redeploy or re-import the parent stack, then export",
            ),
            BlockReason::NotDeployed => f.write_str(
                "cdkd state has no physical id for it (it was not deployed by cdkd, or its row is damaged); deploy the stack with cdkd, or remove the resource, then export",
            ),
            BlockReason::TypeMismatch {
                logical_id,
                template_type,
                recorded_type,
            } => write!(
                f,
                "the template declares {} as {} but the cdkd record holds {} at that logical id, so the IMPORT would fail after the lock: export with the template the stack was last deployed from, or bring the record up to date by deploying this template with cdkd, then export",
                flatten_str(logical_id),
                flatten_str(template_type),
                flatten_str(recorded_type)
            ),
            BlockReason::RecreateTurnedOff { resource_type } => write!(
                f,
                "{} has no CloudFormation IMPORT support, and --no-recreate-import-unsupported turns off deleting it before phase 2 and re-creating it there; drop that flag to re-enable recreation, or remove the resource from the stack",
                flatten_str(resource_type)
            ),
            BlockReason::Unsupported(why) => why.fmt(f),
            BlockReason::Identifier(cause) => {
                write!(f, "could not resolve resource identifier: {cause}")
            }
            BlockReason::Overlay(r) => r.fmt(f),
            BlockReason::Recorded(words) => f.write_str(words),
            BlockReason::Policy(e) => e.fmt(f),
            BlockReason::PrincipalMismatch(m) => {
                let m: Vec<String> = m.iter().map(ToString::to_string).collect();
                write!(
                    f,
                    "phase 2 would attach the policy to principals the pre-delete does not detach it from: {}",
                    m.join("; ")
                )
            }
            BlockReason::Stage(StageError::MaskedApiId) => masked_property(f, "ApiId"),
            BlockReason::Stage(StageError::NoApiId) => f.write_str(
                "the record holds no properties.ApiId, which the pre-delete needs to delete the stage; redeploy the stack, then export",
            ),
        }
    }
}

/// The mask at a position the export reads in `properties`.
fn masked_property(f: &mut fmt::Formatter<'_>, field: &str) -> fmt::Result {
    write!(
        f,
        "the record's properties.{} holds the redaction mask {MASK}, and the export reads that value to build the import identifier. The record does not say what put the mask there, and re-deploying the same template may not clear it; remove the resource from the stack before exporting",
        flatten_str(field)
    )
}

impl fmt::Display for PreflightBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const REMEDIES: &str = "Remove it from the stack before exporting, or destroy it and let CloudFormation create it after the export; if AWS now supports importing this type, report it (--skip-import-support-preflight lets AWS answer)";
        match self {
            PreflightBlock::Dated {
                resource_type,
                measured,
            } => write!(
                f,
                "{} is not supported for import: CloudFormation rejects its IMPORT change set although the type registry reports a read handler (measured {measured}). {REMEDIES}.",
                flatten_str(resource_type)
            ),
            PreflightBlock::NoReadHandler { resource_type } => {
                let ty = flatten_str(resource_type);
                write!(
                    f,
                    "{ty} is not supported for import: its registry schema declares no read handler and its ProvisioningType is NON_PROVISIONABLE, so CreateChangeSet would fail with \"ResourceTypes [{ty}] are not supported for Import\". {REMEDIES}."
                )
            }
        }
    }
}

impl fmt::Display for UnknownIdentifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cause = match &self.cause {
            Some(c) => format!(" ({})", flatten_str(c)),
            None => String::new(),
        };
        write!(
            f,
            "primary identifier unknown for {}: the type registry gave no usable schema{cause} and the type is not in cdkd-flow's fallback table: when the registry call failed, fix its cause (cloudformation:DescribeType) and export again; otherwise {LEAVE_UNMANAGED}",
            flatten_str(&self.resource_type)
        )
    }
}

/// Names, each flattened, joined by `, `.
fn flat_list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| flatten_str(n))
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for Unresolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unresolved::PrimaryIdentifierUnknown(u) => u.fmt(f),
            Unresolved::RegistryChanged {
                resource_type,
                fields,
                expected,
            } => write!(
                f,
                "the type registry schema changed under cdkd-flow: {} now reports identifier [{}] instead of [{expected}]; cdkd-flow must be updated for it (report it): until then {LEAVE_UNMANAGED}",
                flatten_str(resource_type),
                flat_list(fields)
            ),
            Unresolved::MaskedAttribute { field } => write!(
                f,
                "the record's attributes.{field} holds the redaction mask {MASK} (cdkd import masks model keys it cannot certify as read-only), and that value would become the resource's identity in the import change set. Re-deploying does not clear it (the import re-masks it); remove the resource from the stack before exporting"
            ),
            Unresolved::NoRecordedRuleId { logical_id } => write!(
                f,
                "{} has no recorded rule id: either (1) the rule declares more than one source (e.g. CidrIp and CidrIpv6), so no single id was recorded: split it into one resource per source; or (2) the rule predates id recording, and a no-op redeploy cannot heal it: change a property, or destroy and redeploy it. Either way the row can be removed from the stack before exporting",
                flatten_str(logical_id)
            ),
            Unresolved::MalformedRuleId {
                logical_id,
                recorded,
                lookup,
            } => {
                write!(
                    f,
                    "{}: attributes.Id holds '{}', which is not a security-group rule id (sgr- followed by hexadecimal digits)",
                    flatten_str(logical_id),
                    flatten_str(recorded)
                )?;
                match lookup {
                    Some(e) => write!(f, "; looking the rule up by its physical id instead: {e}"),
                    None => f.write_str(
                        ": set attributes.Id to the rule's sgr- id, or remove the row from the stack before exporting (the rule stays in AWS)",
                    ),
                }
            }
            Unresolved::RuleLookup(e) => e.fmt(f),
            Unresolved::NoUsableArn {
                logical_id,
                field,
                recorded,
            } => {
                let what = match recorded {
                    RecordedArn::Missing => format!("attributes.{field} is missing"),
                    RecordedArn::Unusable(s) => format!(
                        "attributes.{field} holds '{}', not a usable ARN",
                        flatten_str(s)
                    ),
                    RecordedArn::NotAString => format!("attributes.{field} is not a string"),
                };
                write!(
                    f,
                    "{}: {what}, and the physical id is not the ARN either; redeploy once so the ARN is recorded",
                    flatten_str(logical_id)
                )
            }
            Unresolved::NoGraphQlApiArn => f.write_str(
                "the type registry identifies AWS::AppSync::GraphQLApi by Arn, and the record holds no usable attributes.Arn; redeploy once so the ARN is recorded",
            ),
            Unresolved::MaskedIdentifier { field } => write!(
                f,
                "the identifier value for {} is the redaction mask {MASK}; it would become the resource's identity in the import change set, so it is refused. Remove the resource from the stack before exporting",
                flatten_str(field)
            ),
            Unresolved::NoSplitter {
                resource_type,
                fields,
            } => write!(
                f,
                "the type registry reports {} identifier fields [{}] for {} and cdkd-flow has no splitter for it, so it cannot import it: {LEAVE_UNMANAGED}, or destroy it before exporting",
                fields.len(),
                flat_list(fields),
                flatten_str(resource_type)
            ),
            Unresolved::SplitterFailed {
                resource_type,
                error,
            } => {
                write!(
                    f,
                    "splitter for {} failed: {error}",
                    flatten_str(resource_type)
                )?;
                match shape_remedy(resource_type, error) {
                    Some((shape, parts)) => write!(
                        f,
                        "; cdkd records this type's physical id as {shape} ({parts} part(s)): re-deploy the resource with cdkd so its record holds that shape, or remove it from the app and export with --leave-unmanaged (it then keeps running, owned by nothing)"
                    ),
                    None => Ok(()),
                }
            }
            Unresolved::SplitterMismatch {
                resource_type,
                produced,
                needed,
                missing,
            } => write!(
                f,
                "splitter for {} produced [{}] but the registry needs [{}] (missing: {}); cdkd-flow must be updated for the type (report it): until then {LEAVE_UNMANAGED}",
                flatten_str(resource_type),
                produced.join(", "),
                flat_list(needed),
                missing.join(", ")
            ),
        }
    }
}

/// The shape as an expected-shape error spells it.
fn shape_words(shape: SplitShape) -> String {
    match shape {
        SplitShape::Method => "restApiId|resourceId|httpMethod".into(),
        SplitShape::Pair(a, b) => format!("{a}|{b}"),
        SplitShape::Gateway => "<gateway>|<vpcId>".into(),
        SplitShape::Association => "<associationId>|<vpcId>".into(),
        SplitShape::Route => "<routeTableId>|<destination>".into(),
        SplitShape::Eip => "<publicIp>|<allocationId>".into(),
        SplitShape::FunctionQualifier => "<functionName>|<qualifier>".into(),
    }
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SplitError::Blank => f.write_str("the physical id is blank"),
            SplitError::EmptySegment { physical_id } => write!(
                f,
                "the physical id '{}' has an empty segment",
                flatten_str(physical_id)
            ),
            SplitError::SegmentCount { expected, got } => match expected {
                SplitShape::Association => {
                    write!(f, "expected <associationId>|<vpcId>, got {got} segments")
                }
                SplitShape::Eip => write!(
                    f,
                    "expected <publicIp>|<allocationId> (a bare id is refused), got {got} segment(s)"
                ),
                other => write!(
                    f,
                    "expected {}, got {got} segment(s)",
                    shape_words(*other)
                ),
            },
            SplitError::TooManySegments { got } => {
                write!(f, "expected at most 2 segments, got {got}")
            }
            SplitError::EmptyPart { expected } => {
                write!(f, "expected {}, a segment is empty", shape_words(*expected))
            }
            SplitError::BlankPart { expected } => {
                write!(f, "expected {}, a segment is blank", shape_words(*expected))
            }
            SplitError::NotEipPair => {
                f.write_str("expected one eipalloc-… segment and one dotted-quad public IP")
            }
            SplitError::ReversedAssociation { segment } => write!(
                f,
                "the first segment '{}' is not a vpc-cidr-assoc-… id (a reversed id is refused)",
                flatten_str(segment)
            ),
            SplitError::NotAVpcId { value } => {
                write!(f, "'{}' is not a VPC id", flatten_str(value))
            }
            SplitError::MaskedProperty { field } => masked_property(f, field),
            SplitError::MissingParent { field } => write!(
                f,
                "the state row is missing properties.{field} (the parent identifier); the record is likely corrupt or from an old cdkd: redeploy the stack, then export"
            ),
            SplitError::UnknownAttachmentType { segment } => write!(
                f,
                "cannot tell the attachment type (IGW or VGW) from '{}' or the recorded gateway ids",
                flatten_str(segment)
            ),
            SplitError::RouteDestinationMismatch {
                destination,
                recorded,
            } => write!(
                f,
                "the physical id's destination '{}' does not match the recorded destination {}; stale state could import one route and let phase 2 replace a different one",
                flatten_str(destination),
                flat_list(recorded)
            ),
            SplitError::EmptyStatementId => f.write_str("the statement id is empty"),
        }
    }
}

impl fmt::Display for SplitWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SplitWarning::RouteDestinationDiffers {
                destination,
                recorded,
            } => write!(
                f,
                "the route's identifier destination '{}' differs from the recorded destination {} (not comparable as IPv4 or a prefix list); if they name different routes, phase 2 may replace the wrong one",
                flatten_str(destination),
                flat_list(recorded)
            ),
        }
    }
}

/// `<group> <protocol> <from>-<to>`.
fn tuple_words(t: &SgTuple) -> String {
    format!(
        "{} {} {}-{}",
        flatten_str(&t.group_id),
        flatten_str(&t.protocol),
        t.from_port,
        t.to_port
    )
}

impl fmt::Display for SgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const ESCAPE: &str =
            "Or remove the row from the stack before exporting; the rule stays in AWS.";
        const AMBIGUITY: &str = "Either (1) the resource declares more than one source (for example CidrIp and CidrIpv6), so AWS created one rule per source: split it into one resource per source; or (2) two resources differ only by their source, which the physical id does not carry: set the row's attributes.Id to the right rule id, or drop the row.";
        match self {
            SgError::Unreadable { physical_id } => write!(
                f,
                "cannot read the security-group rule physical id '{}' as groupId|ipProtocol|fromPort|toPort; repair the physicalId or set attributes.Id to the rule id. {ESCAPE}",
                flatten_str(physical_id)
            ),
            SgError::TooManyPages { group_id } => write!(
                f,
                "could not see the whole security group {}: its rules did not fit in {MAX_PAGES} pages. {ESCAPE}",
                flatten_str(group_id)
            ),
            SgError::ListFailed {
                group_id,
                failure,
                message,
            } => {
                let advice = match failure {
                    SgFailure::Auth => "grant ec2:DescribeSecurityGroupRules, then retry",
                    SgFailure::Throttled => {
                        "the call was throttled (no permission is missing); retry later"
                    }
                    SgFailure::Other => "retry once the cause is fixed",
                };
                write!(
                    f,
                    "could not list the rules of security group {} ({}): {advice}. {ESCAPE}",
                    flatten_str(group_id),
                    flatten_str(message)
                )
            }
            SgError::UnusableIds {
                tuple,
                unusable,
                usable,
                ambiguous,
            } => {
                let unusable: Vec<String> = unusable
                    .iter()
                    .map(|id| {
                        id.as_deref()
                            .map(flatten_str)
                            .unwrap_or_else(|| "<absent>".into())
                    })
                    .collect();
                write!(
                    f,
                    "security group {}: AWS reports a matching rule without a usable sgr- id ({})",
                    tuple_words(tuple),
                    unusable.join(", ")
                )?;
                if !usable.is_empty() {
                    write!(f, "; readable candidate(s): {}", usable.join(", "))?;
                }
                f.write_str(".")?;
                if *ambiguous {
                    write!(f, " {AMBIGUITY}")?;
                }
                write!(f, " {ESCAPE}")
            }
            SgError::NoMatch { tuple } => write!(
                f,
                "no ingress rule of security group {} matches: it was revoked outside cdkd, or the record is in another region; redeploy, then retry. {ESCAPE}",
                tuple_words(tuple)
            ),
            SgError::Ambiguous { tuple, rule_ids } => write!(
                f,
                "{} ingress rules of security group {} match ({}). {AMBIGUITY} {ESCAPE}",
                rule_ids.len(),
                tuple_words(tuple),
                rule_ids.join(", ")
            ),
        }
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyError::NameEmpty => f.write_str("the policy name (the physical id) is empty"),
            PolicyError::NameMasked => {
                f.write_str("the policy name (the physical id) is the redaction mask")
            }
            PolicyError::MaskedProperty { key } => masked_property(f, key),
            PolicyError::NotAName { key } => write!(
                f,
                "the record's properties.{key} holds a value that is not a name"
            ),
            PolicyError::NotAList { key } => {
                write!(f, "the record's properties.{key} is not a list")
            }
            PolicyError::NothingToDetach { policy_name } => write!(
                f,
                "the record of policy {} names no role, user or group to detach it from; run cdkd-flow state refresh-observed on the stack, or detach it by hand, then run the phase-2 update",
                shown(policy_name)
            ),
        }
    }
}

impl fmt::Display for PrincipalMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrincipalMismatch::PolicyName { template, recorded } => write!(
                f,
                "PolicyName {} differs from the recorded policy name {}",
                shown(template),
                shown(recorded)
            ),
            PrincipalMismatch::NotDetached { key, value } => write!(
                f,
                "{key} names {}, which the record does not detach from",
                shown(value)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::plan::{Plan, StackPlan};

    fn tuple() -> SgTuple {
        SgTuple {
            group_id: "sg-1\n".into(),
            protocol: "tcp".into(),
            from_port: 443,
            to_port: 443,
        }
    }

    fn split(resource_type: &str, error: SplitError) -> BlockReason {
        BlockReason::Identifier(Unresolved::SplitterFailed {
            resource_type: resource_type.into(),
            error,
        })
    }

    /// Every reason's words, one per line, with hostile values (a newline, an escape)
    /// where the words print an untrusted one: flattened, or not shown, as always.
    #[test]
    fn the_words_of_every_block_reason() {
        let hostile = "bad\nvalue\u{1b}[2J";
        let sg = |e: SgError| BlockReason::Identifier(Unresolved::RuleLookup(Box::new(e)));
        let mut reasons = vec![
            BlockReason::NestedNotInRecord,
            BlockReason::NotDeployed,
            BlockReason::TypeMismatch {
                logical_id: "Events\nTopic".into(),
                template_type: "AWS::SQS::Queue".into(),
                recorded_type: hostile.into(),
            },
            BlockReason::RecreateTurnedOff {
                resource_type: "AWS::ApiGatewayV2::Stage".into(),
            },
            BlockReason::Unsupported(PreflightBlock::Dated {
                resource_type: "AWS::AppSync::GraphQLApi".into(),
                measured: "us-east-1, September 2026",
            }),
            BlockReason::Unsupported(PreflightBlock::NoReadHandler {
                resource_type: "AWS::Glue::Table\n".into(),
            }),
            BlockReason::Overlay(Box::new(OverlayRefusal {
                logical_id: "N\nx".into(),
                resource_type: "AWS::S3Tables::Namespace\u{1b}".into(),
                field: "Name\r\nspace".into(),
                current: serde_json::json!([]),
                value: "analytics\n'x".into(),
                shape: Unrepresentable::EmptyList,
            })),
            BlockReason::Overlay(Box::new(OverlayRefusal {
                logical_id: "N".into(),
                resource_type: "AWS::S3Tables::Namespace".into(),
                field: "Namespace".into(),
                current: serde_json::json!([{"Ref": "X"}, "y".repeat(130)]),
                value: "analytics".into(),
                shape: Unrepresentable::ListWithObject,
            })),
            BlockReason::Overlay(Box::new(OverlayRefusal {
                logical_id: "N".into(),
                resource_type: "AWS::S3Tables::Namespace".into(),
                field: "Namespace".into(),
                current: serde_json::json!([null]),
                value: "analytics".into(),
                shape: Unrepresentable::ListWithListOrNull,
            })),
            BlockReason::Policy(PolicyError::NameEmpty),
            BlockReason::Policy(PolicyError::NameMasked),
            BlockReason::Policy(PolicyError::MaskedProperty { key: "Roles" }),
            BlockReason::Policy(PolicyError::NotAName { key: "Users" }),
            BlockReason::Policy(PolicyError::NotAList { key: "Groups" }),
            BlockReason::Policy(PolicyError::NothingToDetach {
                policy_name: hostile.into(),
            }),
            BlockReason::Policy(PolicyError::NothingToDetach {
                policy_name: "P".into(),
            }),
            BlockReason::PrincipalMismatch(vec![
                PrincipalMismatch::PolicyName {
                    template: hostile.into(),
                    recorded: "P".into(),
                },
                PrincipalMismatch::NotDetached {
                    key: "Roles",
                    value: "r2".into(),
                },
            ]),
            BlockReason::Stage(StageError::MaskedApiId),
            BlockReason::Stage(StageError::NoApiId),
            BlockReason::Recorded("words as a plan.json holds them".into()),
        ];
        let unresolved = vec![
            Unresolved::PrimaryIdentifierUnknown(UnknownIdentifier {
                resource_type: "AWS::Foo::Bar".into(),
                cause: None,
            }),
            Unresolved::PrimaryIdentifierUnknown(UnknownIdentifier {
                resource_type: "AWS::Foo::Bar".into(),
                cause: Some("Access\nDenied".into()),
            }),
            Unresolved::RegistryChanged {
                resource_type: "AWS::AppSync::Resolver".into(),
                fields: vec!["ResolverArn".into(), hostile.into()],
                expected: "ResolverArn".into(),
            },
            Unresolved::MaskedAttribute {
                field: "DataSourceArn".into(),
            },
            Unresolved::NoRecordedRuleId {
                logical_id: "Rule\n1".into(),
            },
            Unresolved::MalformedRuleId {
                logical_id: "Rule".into(),
                recorded: hostile.into(),
                lookup: None,
            },
            Unresolved::MalformedRuleId {
                logical_id: "Rule".into(),
                recorded: "rule-7".into(),
                lookup: Some(Box::new(SgError::NoMatch { tuple: tuple() })),
            },
            Unresolved::NoUsableArn {
                logical_id: "Table".into(),
                field: "TableARN".into(),
                recorded: RecordedArn::Missing,
            },
            Unresolved::NoUsableArn {
                logical_id: "Table".into(),
                field: "TableARN".into(),
                recorded: RecordedArn::Unusable(hostile.into()),
            },
            Unresolved::NoUsableArn {
                logical_id: "Table".into(),
                field: "TableARN".into(),
                recorded: RecordedArn::NotAString,
            },
            Unresolved::NoGraphQlApiArn,
            Unresolved::MaskedIdentifier {
                field: "BucketName".into(),
            },
            Unresolved::NoSplitter {
                resource_type: "AWS::Foo::Bar".into(),
                fields: vec!["A".into(), "B\nC".into()],
            },
            Unresolved::SplitterMismatch {
                resource_type: "AWS::AppSync::ApiKey".into(),
                produced: vec!["ApiId".into(), "ApiKeyId".into()],
                needed: vec!["ApiId".into(), "Other".into()],
                missing: vec!["Other".into()],
            },
        ];
        reasons.extend(unresolved.into_iter().map(BlockReason::Identifier));
        reasons.extend(
            [
                SgError::Unreadable {
                    physical_id: "sg-1|t\ncp".into(),
                },
                SgError::TooManyPages {
                    group_id: "sg-1".into(),
                },
                SgError::ListFailed {
                    group_id: "sg-1".into(),
                    failure: SgFailure::Auth,
                    message: hostile.into(),
                },
                SgError::ListFailed {
                    group_id: "sg-1".into(),
                    failure: SgFailure::Throttled,
                    message: "Rate exceeded".into(),
                },
                SgError::ListFailed {
                    group_id: "sg-1".into(),
                    failure: SgFailure::Other,
                    message: "boom".into(),
                },
                SgError::UnusableIds {
                    tuple: tuple(),
                    unusable: vec![None, Some(hostile.into())],
                    usable: vec!["sgr-0b".into()],
                    ambiguous: true,
                },
                SgError::UnusableIds {
                    tuple: tuple(),
                    unusable: vec![None],
                    usable: Vec::new(),
                    ambiguous: false,
                },
                SgError::NoMatch { tuple: tuple() },
                SgError::Ambiguous {
                    tuple: tuple(),
                    rule_ids: vec!["sgr-0a".into(), "sgr-0b".into()],
                },
            ]
            .into_iter()
            .map(sg),
        );
        let pair = SplitShape::Pair("TableBucketARN", "Namespace");
        reasons.extend([
            split("AWS::Lambda::EventInvokeConfig", SplitError::Blank),
            split(
                "AWS::ApiGateway::Method",
                SplitError::EmptySegment {
                    physical_id: "a||b\n".into(),
                },
            ),
            split(
                "AWS::ApiGateway::Method",
                SplitError::SegmentCount {
                    expected: SplitShape::Method,
                    got: 2,
                },
            ),
            split(
                "AWS::S3Tables::Namespace",
                SplitError::SegmentCount {
                    expected: pair,
                    got: 1,
                },
            ),
            split(
                "AWS::EC2::VPCGatewayAttachment",
                SplitError::SegmentCount {
                    expected: SplitShape::Gateway,
                    got: 1,
                },
            ),
            split(
                "AWS::EC2::VPCCidrBlock",
                SplitError::SegmentCount {
                    expected: SplitShape::Association,
                    got: 3,
                },
            ),
            split(
                "AWS::EC2::Route",
                SplitError::SegmentCount {
                    expected: SplitShape::Route,
                    got: 1,
                },
            ),
            split(
                "AWS::EC2::EIP",
                SplitError::SegmentCount {
                    expected: SplitShape::Eip,
                    got: 1,
                },
            ),
            split(
                "AWS::ApiGateway::Stage",
                SplitError::TooManySegments { got: 3 },
            ),
            split(
                "AWS::S3Tables::Namespace",
                SplitError::EmptyPart { expected: pair },
            ),
            split(
                "AWS::EC2::VPCGatewayAttachment",
                SplitError::EmptyPart {
                    expected: SplitShape::Gateway,
                },
            ),
            split(
                "AWS::EC2::VPCCidrBlock",
                SplitError::EmptyPart {
                    expected: SplitShape::Association,
                },
            ),
            split(
                "AWS::EC2::Route",
                SplitError::BlankPart {
                    expected: SplitShape::Route,
                },
            ),
            split(
                "AWS::EC2::EIP",
                SplitError::BlankPart {
                    expected: SplitShape::Eip,
                },
            ),
            split(
                "AWS::Lambda::EventInvokeConfig",
                SplitError::BlankPart {
                    expected: SplitShape::FunctionQualifier,
                },
            ),
            split("AWS::EC2::EIP", SplitError::NotEipPair),
            split(
                "AWS::EC2::VPCCidrBlock",
                SplitError::ReversedAssociation {
                    segment: "vpc-1".into(),
                },
            ),
            split(
                "AWS::EC2::VPCCidrBlock",
                SplitError::NotAVpcId {
                    value: hostile.into(),
                },
            ),
            split(
                "AWS::ApiGatewayV2::Integration",
                SplitError::MaskedProperty {
                    field: "ApiId".into(),
                },
            ),
            split(
                "AWS::ApiGatewayV2::Integration",
                SplitError::MissingParent {
                    field: "ApiId".into(),
                },
            ),
            split(
                "AWS::EC2::VPCGatewayAttachment",
                SplitError::UnknownAttachmentType {
                    segment: hostile.into(),
                },
            ),
            split(
                "AWS::EC2::Route",
                SplitError::RouteDestinationMismatch {
                    destination: "pl-aaa".into(),
                    recorded: vec!["10.0.0.0/8".into(), hostile.into()],
                },
            ),
            split("AWS::Lambda::Permission", SplitError::EmptyStatementId),
        ]);
        let mut lines: Vec<String> = reasons.iter().map(ToString::to_string).collect();
        lines.push(
            SplitWarning::RouteDestinationDiffers {
                destination: "::/0".into(),
                recorded: vec!["::0/0".into(), hostile.into()],
            }
            .to_string(),
        );
        insta::assert_snapshot!(lines.join("\n"));
    }

    fn plan_with_blocked_rows() -> Plan {
        let row = |logical_id: &str, resource_type: &str, reason: BlockReason| BlockedRow {
            logical_id: logical_id.into(),
            resource_type: resource_type.into(),
            reason,
        };
        Plan {
            stacks: vec![StackPlan {
                stack: "App".into(),
                cfn_stack_name: "App".into(),
                template_key: "k".into(),
                blocked: vec![
                    row(
                        "Nested",
                        "AWS::CloudFormation::Stack",
                        BlockReason::NestedNotInRecord,
                    ),
                    row(
                        "Stage",
                        "AWS::ApiGatewayV2::Stage",
                        BlockReason::Stage(StageError::NoApiId),
                    ),
                    row(
                        "Eip",
                        "AWS::EC2::EIP",
                        split("AWS::EC2::EIP", SplitError::NotEipPair),
                    ),
                ],
                ..Default::default()
            }],
            warnings: Vec::new(),
        }
    }

    /// `plan.json` holds a blocked row's reason as its words, byte for byte as before
    /// the reasons were typed; read back, each is [`BlockReason::Recorded`], worded
    /// unchanged, and written again identically.
    #[test]
    fn plan_json_stores_a_blocked_reason_as_its_words_and_reads_it_back() {
        let plan = plan_with_blocked_rows();
        let json = serde_json::to_string(&plan).unwrap();
        assert_eq!(
            json,
            r#"{"stacks":[{"stack":"App","region":null,"cfnStackName":"App","templateKey":"k","import":[],"phase2":{"create":[],"recreate":[],"preDelete":[]},"nested":[],"parameters":[],"blocked":[{"logicalId":"Nested","type":"AWS::CloudFormation::Stack","reason":"the template declares a nested stack that the parent's record does not (no row of type AWS::CloudFormation::Stack at this logical id); redeploy or re-import the parent stack, then export"},{"logicalId":"Stage","type":"AWS::ApiGatewayV2::Stage","reason":"the record holds no properties.ApiId, which the pre-delete needs to delete the stage; redeploy the stack, then export"},{"logicalId":"Eip","type":"AWS::EC2::EIP","reason":"could not resolve resource identifier: splitter for AWS::EC2::EIP failed: expected one eipalloc-… segment and one dotted-quad public IP; cdkd records this type's physical id as <public IP>|<eipalloc-… id> (2 part(s)): re-deploy the resource with cdkd so its record holds that shape, or remove it from the app and export with --leave-unmanaged (it then keeps running, owned by nothing)"}],"warnings":[]}],"warnings":[]}"#
        );
        let back: Plan = serde_json::from_str(&json).unwrap();
        let words = |p: &Plan| -> Vec<String> {
            p.stacks[0]
                .blocked
                .iter()
                .map(|b| b.reason.to_string())
                .collect()
        };
        assert_eq!(words(&back), words(&plan));
        assert!(back.stacks[0]
            .blocked
            .iter()
            .all(|b| matches!(b.reason, BlockReason::Recorded(_))));
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
        assert_eq!(
            back.blocked_refusal().unwrap().to_string(),
            plan.blocked_refusal().unwrap().to_string()
        );
    }
}
