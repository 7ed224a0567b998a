//! The words of why no Cloud Control identifier is sent for a record (docs/destroy.md,
//! "Which identifier Cloud Control gets"): the deleter's message for the row, skipped or
//! needing an SDK deleter. The type is written as the record holds it.

use std::fmt;

use crate::destroy::identifiers::NoIdentifier;

impl fmt::Display for NoIdentifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoIdentifier::NoPhysicalId { resource_type } => {
                write!(f, "{resource_type} record has no physical id")
            }
            NoIdentifier::Generated { resource_type } => write!(
                f,
                "{resource_type} has a generated Cloud Control identifier that cannot be derived from state"
            ),
            NoIdentifier::Unverified { resource_type } => write!(
                f,
                "the Cloud Control identifier of {resource_type} is unverified; not deleting by guess"
            ),
            NoIdentifier::Lacks {
                resource_type,
                what,
            } => write!(
                f,
                "{resource_type} record lacks {what}, needed for its Cloud Control identifier"
            ),
            NoIdentifier::NotKnown { resource_type } => write!(
                f,
                "{resource_type} is not known to use its physical id as Cloud Control identifier; not deleting by guess"
            ),
            NoIdentifier::EipOnePart => f.write_str(
                "AWS::EC2::EIP record holds one part only; look the address up (DescribeAddresses) first",
            ),
            NoIdentifier::GatewayAttachmentShape => f.write_str(
                "AWS::EC2::VPCGatewayAttachment physical id is not <gateway>|<vpc>",
            ),
            NoIdentifier::GatewayKindUnknown => {
                f.write_str("AWS::EC2::VPCGatewayAttachment gateway kind is unknown")
            }
            NoIdentifier::NotWebAclArn => {
                f.write_str("AWS::WAFv2::WebACL physical id is not a WebACL ARN")
            }
        }
    }
}

/// A deleter's error message takes these words (`DeleteError::new` takes any
/// `Into<String>`).
impl From<NoIdentifier> for String {
    fn from(r: NoIdentifier) -> String {
        r.to_string()
    }
}

#[cfg(test)]
mod tests {
    use crate::destroy::identifiers::NoIdentifier;

    /// Every reason, with a hostile type where one is printed (written as the record
    /// holds it), each line escaped as a Rust string.
    #[test]
    fn the_words_of_every_missing_identifier() {
        let ty = || "AWS::X::Y\n\u{1b}[2J".to_string();
        let lines: Vec<String> = [
            NoIdentifier::NoPhysicalId {
                resource_type: ty(),
            },
            NoIdentifier::Generated {
                resource_type: ty(),
            },
            NoIdentifier::Unverified {
                resource_type: ty(),
            },
            NoIdentifier::Lacks {
                resource_type: ty(),
                what: "properties.RestApiId",
            },
            NoIdentifier::NotKnown {
                resource_type: ty(),
            },
            NoIdentifier::EipOnePart,
            NoIdentifier::GatewayAttachmentShape,
            NoIdentifier::GatewayKindUnknown,
            NoIdentifier::NotWebAclArn,
        ]
        .iter()
        .map(|r| format!("{:?}", r.to_string()))
        .collect();
        insta::assert_snapshot!(lines.join("\n"));
    }
}
