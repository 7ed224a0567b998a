//! Typed delete errors, and what every deleter needs to know about a failed AWS call
//! (classified by `cdkd_aws::sdk_error`, the one classifier of SDK errors).

use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use aws_smithy_runtime_api::client::result::SdkError;
use aws_smithy_types::error::display::DisplayErrorContext;
use aws_smithy_types::error::metadata::ProvideErrorMetadata;
use cdkd_aws::sdk_error::{classify, ErrorClass};
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
    /// The row is skipped (docs/destroy.md, "One record in a wave" step 7): nothing was deleted and the record stays,
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

/// What the deleters need to know about a failed SDK call.
pub fn aws_error_info<E>(err: &SdkError<E, HttpResponse>) -> AwsErrorInfo
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    let class = classify(err);
    AwsErrorInfo {
        code: err.code().map(str::to_owned),
        status: err.raw_response().map(|r| r.status().as_u16()),
        message: DisplayErrorContext(err).to_string(),
        throttling: class == ErrorClass::Throttling,
        retryable: class.is_retryable(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_iam::operation::get_role::GetRoleError;
    use aws_smithy_runtime_api::http::StatusCode;
    use aws_smithy_types::body::SdkBody;
    use aws_smithy_types::error::ErrorMetadata;

    fn service_error(
        code: &str,
        status: u16,
        message: &str,
    ) -> SdkError<GetRoleError, HttpResponse> {
        let meta = ErrorMetadata::builder().code(code).message(message).build();
        let raw = HttpResponse::new(
            StatusCode::try_from(status).expect("a valid status"),
            SdkBody::empty(),
        );
        SdkError::service_error(GetRoleError::generic(meta), raw)
    }

    #[test]
    fn throttling_answers_are_retryable_and_flagged_as_throttling() {
        for code in cdkd_aws::sdk_error::THROTTLING_CODES {
            let info = aws_error_info(&service_error(code, 400, "x"));
            assert!(info.throttling && info.retryable, "{code}");
        }
        let info = aws_error_info(&service_error("Whatever", 429, "x"));
        assert!(info.throttling && info.retryable);
    }

    #[test]
    fn server_errors_and_dependency_violations_are_retryable_but_not_throttling() {
        for (code, status, message) in [
            ("InternalError", 500, "x"),
            ("ServiceUnavailable", 503, "x"),
            (
                "DependencyViolation",
                400,
                "resource sg-1 has a dependent object",
            ),
        ] {
            let info = aws_error_info(&service_error(code, status, message));
            assert!(info.retryable && !info.throttling, "{code}");
        }
    }

    #[test]
    fn not_found_wording_is_not_retryable_by_itself() {
        let info = aws_error_info(&service_error("NoSuchEntity", 404, "Role x does not exist"));
        assert!(!info.retryable && !info.throttling);
        assert!(info.code_is(&["NoSuchEntity"]));
        assert_eq!(info.status, Some(404));
    }
}
