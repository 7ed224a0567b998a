//! Typed delete errors and the classification of AWS SDK errors (throttling, transient,
//! not found) that every deleter shares.

use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use aws_smithy_runtime_api::client::result::SdkError;
use aws_smithy_types::error::display::DisplayErrorContext;
use aws_smithy_types::error::metadata::ProvideErrorMetadata;
use serde::{Deserialize, Serialize};

use crate::request::DeleteRequest;

/// Why a delete did not finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DeleteErrorKind {
    /// The delete call failed; `retryable` says whether trying again may help.
    Failed,
    /// The resource was reported missing but the deleter cannot trust that answer (wrong
    /// region, or a physical id that is not the API's identifier). The record stays.
    CannotConfirmDeletion,
    /// An S3 bucket still holds objects; nothing was deleted.
    NotEmpty,
    /// The row is skipped (spec §2.8 step 7): nothing was deleted and the record stays,
    /// for instance a custom resource whose handler answered FAILED, or a record that
    /// lacks what its delete needs.
    Skipped,
    /// The delete did not finish before its deadline.
    Timeout,
    /// No deleter can handle this resource type (or this identifier form).
    Unsupported,
}

/// A delete that did not finish. Its `Display` names the type and the physical id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[error("{resource_type} {physical_id}: {message}")]
pub struct DeleteError {
    pub kind: DeleteErrorKind,
    pub resource_type: String,
    pub physical_id: String,
    pub message: String,
    /// Trying the same step again later may succeed (throttling, 5xx, transient state).
    pub retryable: bool,
    /// The error is a throttling answer (a subset of `retryable`).
    pub throttling: bool,
}

impl DeleteError {
    pub fn new(req: &DeleteRequest, kind: DeleteErrorKind, message: impl Into<String>) -> Self {
        DeleteError {
            kind,
            resource_type: req.resource_type.clone(),
            physical_id: req.physical_id.clone(),
            message: message.into(),
            retryable: false,
            throttling: false,
        }
    }

    pub fn failed(req: &DeleteRequest, message: impl Into<String>) -> Self {
        Self::new(req, DeleteErrorKind::Failed, message)
    }

    pub fn skipped(req: &DeleteRequest, message: impl Into<String>) -> Self {
        Self::new(req, DeleteErrorKind::Skipped, message)
    }

    pub fn retryable(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
        self
    }

    /// Builds the error for an AWS call that failed in a way the deleter does not handle.
    pub fn from_aws(req: &DeleteRequest, action: &str, info: &AwsErrorInfo) -> Self {
        DeleteError {
            kind: DeleteErrorKind::Failed,
            resource_type: req.resource_type.clone(),
            physical_id: req.physical_id.clone(),
            message: format!("{action} failed: {}", info.message),
            retryable: info.retryable,
            throttling: info.throttling,
        }
    }

    /// A name for Step Functions `Retry`/`Catch` matching and reports.
    pub fn error_name(&self) -> &'static str {
        match self.kind {
            DeleteErrorKind::Failed if self.throttling => "Throttling",
            DeleteErrorKind::Failed if self.retryable => "Transient",
            DeleteErrorKind::Failed => "DeleteFailed",
            DeleteErrorKind::CannotConfirmDeletion => "CannotConfirmDeletion",
            DeleteErrorKind::NotEmpty => "BucketNotEmpty",
            DeleteErrorKind::Skipped => "Skipped",
            DeleteErrorKind::Timeout => "DeleteTimeout",
            DeleteErrorKind::Unsupported => "Unsupported",
        }
    }
}

/// Error codes AWS uses for throttling (spec §2.8 step 6).
pub const THROTTLING_CODES: &[&str] = &[
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestLimitExceeded",
    "TooManyRequestsException",
    "RequestThrottled",
    "RequestThrottledException",
    "SlowDown",
    "LimitExceededException",
    "ProvisionedThroughputExceededException",
    "EC2ThrottledException",
    "BandwidthLimitExceeded",
    "PriorRequestNotComplete",
    "TransactionInProgressException",
];

/// Message fragments of transient conditions worth retrying (spec §2.8 step 6). Not-found
/// wording is deliberately absent: every deleter decides not-found itself.
pub const TRANSIENT_PHRASES: &[&str] = &[
    "DependencyViolation",
    "has dependencies and cannot be deleted",
    "can't be deleted since it has",
    "because it is in use",
    "Rate exceeded",
    "Too Many Requests",
    "concurrent update operation",
    "conflicting conditional operation",
    "currently in the following state: Pending",
    "Unable to complete operation due to concurrent modification",
    "There is an operation running on the Cluster",
];

/// What the deleters need to know about one failed AWS call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwsErrorInfo {
    /// The service's error code (`NoSuchBucket`, `ThrottlingException`, ...).
    pub code: Option<String>,
    /// HTTP status of the response, when there was one.
    pub status: Option<u16>,
    /// Full description (code, message and cause chain).
    pub message: String,
    pub throttling: bool,
    pub retryable: bool,
}

impl AwsErrorInfo {
    pub fn code_is(&self, codes: &[&str]) -> bool {
        self.code.as_deref().is_some_and(|c| codes.contains(&c))
    }
}

/// Classifies an SDK error.
pub fn aws_error_info<E>(err: &SdkError<E, HttpResponse>) -> AwsErrorInfo
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    let code = err.code().map(str::to_owned);
    let status = err.raw_response().map(|r| r.status().as_u16());
    let message = DisplayErrorContext(err).to_string();
    let (throttling, retryable) = match err {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            (false, true)
        }
        SdkError::ConstructionFailure(_) => (false, false),
        _ => classify_service_error(code.as_deref(), status, &message),
    };
    AwsErrorInfo {
        code,
        status,
        message,
        throttling,
        retryable,
    }
}

/// (throttling, retryable) for a service answer.
pub fn classify_service_error(
    code: Option<&str>,
    status: Option<u16>,
    message: &str,
) -> (bool, bool) {
    let throttling = code.is_some_and(|c| THROTTLING_CODES.contains(&c))
        || status == Some(429)
        || message.contains("Too Many Requests")
        || message.contains("Rate exceeded");
    let retryable = throttling
        || matches!(status, Some(500 | 502 | 503 | 504))
        || TRANSIENT_PHRASES.iter().any(|p| message.contains(p));
    (throttling, retryable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttling_codes_are_retryable_and_flagged_as_throttling() {
        for code in THROTTLING_CODES {
            assert_eq!(
                classify_service_error(Some(code), Some(400), "x"),
                (true, true),
                "{code}"
            );
        }
    }

    #[test]
    fn http_429_is_throttling_and_5xx_is_retryable() {
        assert_eq!(classify_service_error(None, Some(429), "x"), (true, true));
        for s in [500, 502, 503, 504] {
            assert_eq!(classify_service_error(None, Some(s), "x"), (false, true));
        }
        assert_eq!(classify_service_error(None, Some(400), "x"), (false, false));
    }

    #[test]
    fn dependency_violation_message_is_transient_but_not_throttling() {
        assert_eq!(
            classify_service_error(
                Some("DependencyViolation"),
                Some(400),
                "resource sg-1 has a dependent object: DependencyViolation"
            ),
            (false, true)
        );
    }

    #[test]
    fn not_found_wording_is_not_retryable_by_itself() {
        assert_eq!(
            classify_service_error(Some("NoSuchEntity"), Some(404), "Role x does not exist"),
            (false, false)
        );
    }
}
