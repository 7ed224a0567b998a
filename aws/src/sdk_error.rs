//! The one classifier of AWS SDK errors: what a failed call means to the caller
//! (throttled, not found, a failed condition, denied, worth retrying, or none of these).
//! The state store, the lock, Step Functions and the deleters all classify here; a
//! caller that knows more about one API (which "not found" code names which missing
//! thing) refines the class, it never keeps a list of its own.
//!
//! Precedence, first match wins: throttling, precondition, not found, access denied,
//! transient, other.

use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use aws_smithy_runtime_api::client::result::SdkError;
use aws_smithy_types::error::metadata::ProvideErrorMetadata;

/// What a failed AWS call means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// The service asked us to slow down: retry later (docs/destroy.md, "One record in a wave" step 6).
    Throttling,
    /// The thing asked about does not exist (the API's own code says which thing).
    NotFound,
    /// A conditional request's condition failed (412 `PreconditionFailed`, S3's 409
    /// `ConditionalRequestConflict` for a racing conditional write): the object is not
    /// what the caller expected.
    Precondition,
    /// The caller may not do this (403, `AccessDenied`...).
    AccessDenied,
    /// No answer, a server error, or a condition that passes by itself: retry later.
    Transient,
    /// Anything else: retrying the same call will not help.
    Other,
}

impl ErrorClass {
    /// Worth retrying unchanged: throttling or transient.
    pub fn is_retryable(self) -> bool {
        matches!(self, ErrorClass::Throttling | ErrorClass::Transient)
    }
}

/// Error codes AWS uses for throttling: the AWS SDK's own retry list (the union of the
/// lists this project kept before; see the tests).
pub const THROTTLING_CODES: &[&str] = &[
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestThrottledException",
    "TooManyRequestsException",
    "ProvisionedThroughputExceededException",
    "TransactionInProgressException",
    "RequestLimitExceeded",
    "BandwidthLimitExceeded",
    "LimitExceededException",
    "RequestThrottled",
    "SlowDown",
    "PriorRequestNotComplete",
    "EC2ThrottledException",
];

/// Message fragments of throttling answers that carry no throttling code.
pub const THROTTLING_PHRASES: &[&str] = &["Too Many Requests", "Rate exceeded"];

/// Error codes of transient server-side failures, whatever the HTTP status (S3's
/// `RequestTimeout` comes with a 400). `ServiceInternalError` and `NetworkFailure` are
/// Cloud Control's handler codes for the same.
pub const TRANSIENT_CODES: &[&str] = &[
    "RequestTimeout",
    "RequestTimeoutException",
    "ServiceUnavailable",
    "InternalFailure",
    "InternalServerError",
    "InternalError",
    "ServiceInternalError",
    "NetworkFailure",
];

/// Message fragments of transient conditions worth retrying (docs/destroy.md, "One record in a wave" step
/// 6). Not-found wording is deliberately absent: not found is decided by code.
pub const TRANSIENT_PHRASES: &[&str] = &[
    "DependencyViolation",
    "has dependencies and cannot be deleted",
    "can't be deleted since it has",
    "because it is in use",
    "concurrent update operation",
    "conflicting conditional operation",
    "currently in the following state: Pending",
    "Unable to complete operation due to concurrent modification",
    "There is an operation running on the Cluster",
];

/// Codes of a failed condition.
pub const PRECONDITION_CODES: &[&str] = &["PreconditionFailed", "ConditionalRequestConflict"];

/// Codes that say the thing asked about does not exist. EC2's `<Thing>.NotFound` codes
/// count too.
pub const NOT_FOUND_CODES: &[&str] = &[
    "NotFound",
    "NoSuchKey",
    "NoSuchBucket",
    "NoSuchEntity",
    "NotFoundException",
    "ResourceNotFoundException",
];

/// Codes of a refused permission.
pub const ACCESS_DENIED_CODES: &[&str] = &[
    "AccessDenied",
    "AccessDeniedException",
    "UnauthorizedOperation",
    "AuthorizationError",
];

/// Classifies a service's answer from its error code, HTTP status and message. Neither
/// a code nor a status means no answer came back: transient.
pub fn classify_code(code: Option<&str>, status: Option<u16>, message: &str) -> ErrorClass {
    let code_in = |list: &[&str]| code.is_some_and(|c| list.contains(&c));
    // A phrase may stand in the message or be the code itself (`DependencyViolation`).
    let says = |list: &[&str]| {
        list.iter()
            .any(|p| message.contains(p) || code.is_some_and(|c| c.contains(p)))
    };
    if code_in(THROTTLING_CODES) || status == Some(429) || says(THROTTLING_PHRASES) {
        ErrorClass::Throttling
    } else if code_in(PRECONDITION_CODES) || status == Some(412) {
        ErrorClass::Precondition
    } else if code_in(NOT_FOUND_CODES)
        || code.is_some_and(|c| c.ends_with(".NotFound"))
        || status == Some(404)
    {
        ErrorClass::NotFound
    } else if code_in(ACCESS_DENIED_CODES) || status == Some(403) {
        ErrorClass::AccessDenied
    } else if code_in(TRANSIENT_CODES)
        || status.is_some_and(is_transient_status)
        || says(TRANSIENT_PHRASES)
        || (code.is_none() && status.is_none())
    {
        ErrorClass::Transient
    } else {
        ErrorClass::Other
    }
}

/// 5xx except 501 (the server does not implement the request: retrying cannot help).
fn is_transient_status(status: u16) -> bool {
    (500..600).contains(&status) && status != 501
}

/// Classifies a failed SDK call: no answer (dispatch failure, timeout, an unreadable
/// answer) is transient, a request that could not be built is `Other`, and a service's
/// answer goes by [`classify_code`] (phrases are looked for in its code and message).
pub fn classify<E>(err: &SdkError<E, HttpResponse>) -> ErrorClass
where
    E: ProvideErrorMetadata,
{
    match err {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            ErrorClass::Transient
        }
        SdkError::ConstructionFailure(_) => ErrorClass::Other,
        _ => {
            let code = err.code();
            let status = err.raw_response().map(|r| r.status().as_u16());
            let message = format!("{} {}", code.unwrap_or(""), err.message().unwrap_or(""));
            classify_code(code, status, &message)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ErrorClass::*;

    #[test]
    fn codes_and_statuses_classify_by_table() {
        let table: &[(Option<&str>, Option<u16>, &str, ErrorClass)] = &[
            (Some("ThrottlingException"), Some(400), "", Throttling),
            (Some("SlowDown"), Some(503), "", Throttling),
            (None, Some(429), "", Throttling),
            (Some("Whatever"), Some(400), "Rate exceeded", Throttling),
            (Some("PreconditionFailed"), Some(412), "", Precondition),
            (None, Some(412), "", Precondition),
            (
                Some("ConditionalRequestConflict"),
                Some(409),
                "",
                Precondition,
            ),
            (Some("OperationAborted"), Some(409), "", Other),
            (Some("NoSuchKey"), Some(404), "", NotFound),
            (Some("NoSuchBucket"), Some(404), "", NotFound),
            (None, Some(404), "", NotFound),
            (Some("NoSuchEntity"), Some(404), "", NotFound),
            (Some("ResourceNotFoundException"), Some(400), "", NotFound),
            (Some("InvalidGroup.NotFound"), Some(400), "", NotFound),
            (Some("AccessDenied"), Some(403), "", AccessDenied),
            (None, Some(403), "", AccessDenied),
            (Some("AccessDeniedException"), Some(400), "", AccessDenied),
            (Some("UnauthorizedOperation"), Some(403), "", AccessDenied),
            (Some("InternalError"), Some(500), "", Transient),
            (None, Some(502), "", Transient),
            (None, Some(503), "", Transient),
            (None, Some(504), "", Transient),
            (Some("RequestTimeout"), Some(400), "", Transient),
            (
                Some("DependencyViolation"),
                Some(400),
                "sg-1 has a dependent object",
                Transient,
            ),
            (
                Some("Conflict"),
                Some(400),
                "because it is in use",
                Transient,
            ),
            (None, None, "", Transient),
            (Some("ValidationError"), Some(400), "", Other),
            (Some("NotImplemented"), Some(501), "", Other),
            (None, Some(400), "", Other),
        ];
        for (code, status, message, class) in table {
            assert_eq!(
                classify_code(*code, *status, message),
                *class,
                "{code:?} {status:?} {message:?}"
            );
        }
    }

    #[test]
    fn only_throttling_and_transient_are_retryable() {
        assert!(Throttling.is_retryable());
        assert!(Transient.is_retryable());
        for c in [NotFound, Precondition, AccessDenied, Other] {
            assert!(!c.is_retryable(), "{c:?}");
        }
    }

    /// The deleters' list was the SDK's fourteen codes; Step Functions' own list had only
    /// `ThrottlingException`, `Throttling` and `TooManyRequestsException`. One list now:
    /// the union, so a Step Functions answer like `RequestLimitExceeded` is retried too.
    #[test]
    fn every_throttling_code_of_either_old_list_is_throttling() {
        for code in THROTTLING_CODES {
            assert_eq!(
                classify_code(Some(code), Some(400), "x"),
                Throttling,
                "{code}"
            );
        }
        for code in [
            "ThrottledException",
            "RequestLimitExceeded",
            "SlowDown",
            "ProvisionedThroughputExceededException",
            "EC2ThrottledException",
            "PriorRequestNotComplete",
            "TransactionInProgressException",
            "LimitExceededException",
            "BandwidthLimitExceeded",
            "RequestThrottled",
            "RequestThrottledException",
        ] {
            assert!(
                classify_code(Some(code), Some(400), "").is_retryable(),
                "{code}"
            );
        }
    }

    /// Step Functions counted `ServiceUnavailable`, `InternalFailure`,
    /// `InternalServerError` and `RequestTimeout` as worth retrying whatever the status;
    /// the deleters did only for a 500/502/503/504. One rule now: these codes are
    /// transient at any status (S3 sends `RequestTimeout` with a 400).
    #[test]
    fn transient_codes_are_transient_whatever_the_status() {
        for code in [
            "ServiceUnavailable",
            "InternalFailure",
            "InternalServerError",
            "RequestTimeout",
        ] {
            assert_eq!(
                classify_code(Some(code), Some(400), ""),
                Transient,
                "{code}"
            );
        }
    }

    /// Step Functions retried every status from 500 up, the deleters only 500, 502, 503
    /// and 504. One rule now: every 5xx but 501 Not Implemented, which a retry cannot fix
    /// (and which the state store reads as "the endpoint will not evaluate the condition").
    #[test]
    fn server_errors_are_transient_except_not_implemented() {
        for s in [500, 502, 503, 504, 507, 599] {
            assert_eq!(classify_code(None, Some(s), ""), Transient, "{s}");
        }
        assert_eq!(classify_code(None, Some(501), ""), Other);
    }

    /// The deleters counted "Too Many Requests" / "Rate exceeded" in a message as
    /// throttling; Step Functions did not look at messages. One rule now: it is throttling.
    #[test]
    fn throttling_wording_without_a_throttling_code_is_throttling() {
        assert_eq!(
            classify_code(Some("ServiceException"), Some(400), "Rate exceeded"),
            Throttling
        );
        assert_eq!(
            classify_code(None, Some(400), "Too Many Requests"),
            Throttling
        );
    }
}
