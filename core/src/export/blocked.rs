//! Why a row of the state record cannot be imported (docs/export.md, "Classifying a
//! stack's resources"), as data: the classification, the identifier's resolution, the
//! splitters, the security-group lookup, the registry's preflight and the pre-delete
//! return a [`BlockReason`], which the plan keeps per blocked row and the blocked
//! refusal folds per resource. Only `core::view::blocked` words them; `plan.json` stores
//! their words, and a plan read back holds them as [`BlockReason::Recorded`].

use super::iam::{PolicyError, PrincipalMismatch};
use super::overlay::OverlayRefusal;
use super::registry::{PreflightBlock, UnknownIdentifier};
use super::sg::SgError;
use super::splitters::SplitError;

/// Why one row is blocked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockReason {
    /// The template declares a nested stack the parent's record holds no
    /// `AWS::CloudFormation::Stack` row for at that logical id.
    NestedNotInRecord,
    /// The record holds no physical id for the row.
    NotDeployed,
    /// The record holds another type than the template at this logical id.
    TypeMismatch {
        logical_id: String,
        template_type: String,
        recorded_type: String,
    },
    /// An IMPORT-unsupported type `--no-recreate-import-unsupported` keeps from being
    /// deleted and re-created.
    RecreateTurnedOff { resource_type: String },
    /// The import-support preflight refuses the type.
    Unsupported(PreflightBlock),
    /// The identifier could not be resolved.
    Identifier(Unresolved),
    /// An identifier field the template holds in a shape the overlay cannot write
    /// (`export::overlay::refusals`).
    Overlay(Box<OverlayRefusal>),
    /// The IAM policy's pre-delete could not read what to detach.
    Policy(PolicyError),
    /// Phase 2 would attach the policy to principals the pre-delete does not detach it
    /// from (each entry one mismatch, in the check's order).
    PrincipalMismatch(Vec<PrincipalMismatch>),
    /// The stage's pre-delete has no usable `properties.ApiId`.
    Stage(StageError),
    /// A plan read from `plan.json`: the words as the planner wrote them.
    Recorded(String),
}

/// Why the identifier of a row could not be resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unresolved {
    /// Neither the registry nor the fallback table names the type's identifier.
    PrimaryIdentifierUnknown(UnknownIdentifier),
    /// The registry reports `fields` for a type whose identifier cdkd-flow reads from a
    /// recorded attribute (`expected`).
    RegistryChanged {
        resource_type: String,
        fields: Vec<String>,
        expected: String,
    },
    /// The recorded attribute holding the identifier is the redaction mask.
    MaskedAttribute { field: String },
    /// A security-group ingress row without a recorded rule id, and no lookup of it.
    NoRecordedRuleId { logical_id: String },
    /// A security-group ingress row whose `attributes.Id` is no rule id: looked up by its
    /// physical id instead (`lookup` why that failed), or not looked up (`None`).
    MalformedRuleId {
        logical_id: String,
        recorded: String,
        lookup: Option<Box<SgError>>,
    },
    /// The security-group rule lookup by physical id failed.
    RuleLookup(Box<SgError>),
    /// Neither the recorded attribute `field` nor the physical id is a usable ARN.
    NoUsableArn {
        logical_id: String,
        field: String,
        recorded: RecordedArn,
    },
    /// An `AWS::AppSync::GraphQLApi` identified by Arn without a usable `attributes.Arn`.
    NoGraphQlApiArn,
    /// The resolved identifier holds the redaction mask at `field`.
    MaskedIdentifier { field: String },
    /// The registry reports several identifier fields and no splitter reads the type.
    NoSplitter {
        resource_type: String,
        fields: Vec<String>,
    },
    /// The type's splitter refused the recorded physical id or properties.
    SplitterFailed {
        resource_type: String,
        error: SplitError,
    },
    /// The splitter produced other fields than the registry needs.
    SplitterMismatch {
        resource_type: String,
        produced: Vec<String>,
        needed: Vec<String>,
        missing: Vec<String>,
    },
}

/// What the record holds at the attribute that should carry an ARN.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordedArn {
    /// Absent or `null`.
    Missing,
    /// A string that is not a usable ARN.
    Unusable(String),
    /// Not a string.
    NotAString,
}

/// Why a stage's pre-delete cannot name its API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StageError {
    /// `properties.ApiId` is the redaction mask.
    MaskedApiId,
    /// No non-empty `properties.ApiId`.
    NoApiId,
}

impl From<Unresolved> for BlockReason {
    fn from(u: Unresolved) -> Self {
        BlockReason::Identifier(u)
    }
}

impl From<UnknownIdentifier> for Unresolved {
    fn from(u: UnknownIdentifier) -> Self {
        Unresolved::PrimaryIdentifierUnknown(u)
    }
}
