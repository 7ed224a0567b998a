//! An S3/STS/Step Functions SDK error as the protocols need it: the HTTP status, the
//! error code, its class ([`crate::sdk_error`], the one classifier) and a one-line
//! message. Match on the class, status and code (S3's precondition failures have no
//! modeled variant), never on the deprecated `Unhandled`.

use aws_sdk_s3::error::ProvideErrorMetadata;
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use aws_smithy_runtime_api::client::result::SdkError;

use crate::sdk_error::{classify, classify_code, ErrorClass};

/// What an SDK call's failure was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// HTTP status, when a response came back.
    pub status: Option<u16>,
    /// The service's error code (`PreconditionFailed`, `NoSuchKey`...), when present.
    pub code: Option<String>,
    /// One line, sanitized, for messages.
    pub message: String,
    /// What the failure means ([`crate::sdk_error::classify`]).
    pub class: ErrorClass,
}

impl Failure {
    pub fn from_sdk<E>(e: &SdkError<E, HttpResponse>) -> Self
    where
        E: ProvideErrorMetadata + std::error::Error + 'static,
    {
        let status = e.raw_response().map(|r| r.status().as_u16());
        let code = e.code().map(str::to_owned);
        Failure {
            status,
            code,
            message: crate::sdk_message::readable(e),
            class: classify(e),
        }
    }

    /// A failure known only by its status, code and message (classified by
    /// [`crate::sdk_error::classify_code`]).
    pub fn from_parts(status: Option<u16>, code: Option<&str>, message: &str) -> Self {
        Failure {
            status,
            code: code.map(str::to_owned),
            message: message.to_owned(),
            class: classify_code(code, status, message),
        }
    }

    fn code_is(&self, c: &str) -> bool {
        self.code.as_deref() == Some(c)
    }

    /// A failed `If-Match` / `If-None-Match` (412), or S3's 409
    /// `ConditionalRequestConflict` for a racing conditional write: both mean "the object
    /// is not what you expected".
    pub fn is_precondition_failed(&self) -> bool {
        self.class == ErrorClass::Precondition
    }

    /// The object (not the bucket) does not exist.
    pub fn is_no_such_key(&self) -> bool {
        self.class == ErrorClass::NotFound && !self.code_is("NoSuchBucket")
    }

    /// The endpoint or a policy will not evaluate the condition: access denied (403), or
    /// 501 / `NotImplemented`.
    pub fn is_condition_unsupported(&self) -> bool {
        self.class == ErrorClass::AccessDenied
            || self.status == Some(501)
            || self.code_is("NotImplemented")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(status: Option<u16>, code: Option<&str>) -> Failure {
        Failure::from_parts(status, code, "")
    }

    #[test]
    fn precondition_failed_is_412_or_conditional_request_conflict() {
        assert!(f(Some(412), None).is_precondition_failed());
        assert!(f(None, Some("PreconditionFailed")).is_precondition_failed());
        assert!(f(Some(409), Some("ConditionalRequestConflict")).is_precondition_failed());
        assert!(!f(Some(409), Some("OperationAborted")).is_precondition_failed());
        assert!(!f(Some(404), Some("NoSuchKey")).is_precondition_failed());
    }

    #[test]
    fn no_such_bucket_is_not_a_missing_object() {
        assert!(f(Some(404), Some("NoSuchKey")).is_no_such_key());
        assert!(f(Some(404), None).is_no_such_key());
        assert!(!f(Some(404), Some("NoSuchBucket")).is_no_such_key());
        assert!(!f(Some(500), None).is_no_such_key());
    }

    #[test]
    fn condition_unsupported_is_403_or_501() {
        assert!(f(Some(403), Some("AccessDenied")).is_condition_unsupported());
        assert!(f(Some(501), Some("NotImplemented")).is_condition_unsupported());
        assert!(!f(Some(412), None).is_condition_unsupported());
    }
}
