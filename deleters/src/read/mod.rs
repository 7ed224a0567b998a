//! Current-state readers for `state refresh-observed` (docs/repairs.md, "Per resource") and for the
//! live attribute reads of `state orphan --resource` (docs/repairs.md, "Live attribute reads").
//!
//! - [`Reader`]: reads one resource's current properties, named and shaped as
//!   CloudFormation's, so they line up with the record's `properties` for redaction by
//!   position; and, where the reader declares them, its current GetAtt attributes.
//!   `Ok(None)` means the resource is gone.
//! - [`SdkReader`]: what a reader beside an SDK deleter declares (the types it reads),
//!   as [`crate::SdkDeleter`] declares the types it deletes. Each SDK deleter module in
//!   [`crate::sdk`] that reads its type implements both on the same client.
//! - [`crate::cloudcontrol::read::CloudControlReader`]: `GetResource` for every other
//!   type Cloud Control reads.
//! - [`Readers`]: the registry; it asks core which reader a record (or an attribute of
//!   it) goes to (`cdkd_core::repair::reading::{read_route, attribute_route}`) and turns
//!   the answer into core's `ReadResult`.
//! - [`refresh`]: one stack's refresh under its lock, saved with `If-Match`.

pub mod props;
pub mod refresh;
pub mod registry;

use async_trait::async_trait;
use serde_json::Value;

pub use registry::Readers;

/// One record to read.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadRequest {
    pub logical_id: String,
    pub resource_type: String,
    pub physical_id: String,
    /// The record's `properties` (`Value::Null` when absent).
    pub properties: Value,
    /// The record's `attributes` (`Value::Null` when absent).
    pub attributes: Value,
    /// The record's `provisionedBy`.
    pub provisioned_by: Option<String>,
    /// Inline policies other resources of the record own on this resource (an
    /// `AWS::IAM::Role`'s sibling `AWS::IAM::Policy` entries): left out of the reading.
    pub owned_elsewhere: Vec<String>,
}

/// Why a read gave no reading.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// No reader can read this record after all (Cloud Control does not read the type,
    /// or no identifier can be derived from the record): counted unsupported.
    #[error("{0}")]
    Unsupported(String),
    /// An AWS call failed.
    #[error("{action} failed: {message}")]
    Aws { action: String, message: String },
    /// The answer could not be used.
    #[error("{0}")]
    Failed(String),
}

impl ReadError {
    /// An AWS call's failure, described by [`crate::error::aws_error_info`].
    pub fn aws(action: &str, info: &crate::error::AwsErrorInfo) -> Self {
        ReadError::Aws {
            action: action.to_owned(),
            message: info.message.clone(),
        }
    }
}

/// Reads resources of one kind.
#[async_trait]
pub trait Reader: Send + Sync {
    /// The resource's current properties as CloudFormation names them; `Ok(None)` when
    /// AWS says the resource does not exist.
    async fn read(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError>;

    /// The resource's current GetAtt attributes (docs/repairs.md, "Live attribute reads"), an object keyed
    /// by attribute name (a dotted name may also be reached through nested objects);
    /// `Ok(None)` when AWS says the resource does not exist. An SDK reader answers the
    /// attributes it declares ([`SdkReader::ATTRIBUTES`]); Cloud Control answers its
    /// whole resource model. Default: this reader reads no attributes.
    async fn attributes(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        Err(ReadError::Unsupported(format!(
            "no live attribute reader for {}",
            req.resource_type
        )))
    }
}

/// An SDK reader's declaration, next to its code: the CloudFormation types it reads and
/// the GetAtt attributes it reads live. [`Readers::with_sdk`] collects it.
pub trait SdkReader: Reader + 'static {
    /// The types this reader serves.
    const READS: &'static [&'static str];
    /// The `(type, attribute)` pairs [`Reader::attributes`] answers; any other attribute
    /// of the type goes to Cloud Control (core's `attribute_route`).
    const ATTRIBUTES: &'static [(&'static str, &'static str)] = &[];
}

type SdkResult<O, E> = Result<
    O,
    aws_smithy_runtime_api::client::result::SdkError<
        E,
        aws_smithy_runtime_api::client::orchestrator::HttpResponse,
    >,
>;

/// The output of a reading call; `Ok(None)` when its error code is one of `missing`
/// (the resource does not exist), the call's failure otherwise.
pub fn found<O, E>(
    action: &str,
    missing: &[&str],
    r: SdkResult<O, E>,
) -> Result<Option<O>, ReadError>
where
    E: aws_smithy_types::error::metadata::ProvideErrorMetadata + std::error::Error + 'static,
{
    match r {
        Ok(o) => Ok(Some(o)),
        Err(e) => {
            if crate::error::aws_error_info(&e).code_is(missing) {
                Ok(None)
            } else {
                Err(aws_failure(action, &e))
            }
        }
    }
}

/// The output of a reading call, or its failure.
pub fn answered<O, E>(action: &str, r: SdkResult<O, E>) -> Result<O, ReadError>
where
    E: aws_smithy_types::error::metadata::ProvideErrorMetadata + std::error::Error + 'static,
{
    r.map_err(|e| aws_failure(action, &e))
}

/// A failed call in one readable line (the SDK's full form is logged at debug level).
pub fn aws_failure<E>(
    action: &str,
    e: &aws_smithy_runtime_api::client::result::SdkError<
        E,
        aws_smithy_runtime_api::client::orchestrator::HttpResponse,
    >,
) -> ReadError
where
    E: aws_smithy_types::error::metadata::ProvideErrorMetadata + std::error::Error + 'static,
{
    ReadError::Aws {
        action: action.to_owned(),
        message: cdkd_aws::sdk_message::readable(e),
    }
}
