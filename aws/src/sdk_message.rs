//! The one readable line for an AWS SDK failure: what could not be reached or what the
//! service said, never the SDK's nested `Debug` form. That form goes to the debug log
//! (`cdkd-flow -v`), where it helps; in a message it hides the cause.
//!
//! - no answer (dispatch failure): `cannot reach the AWS endpoint <url> (<why>)`, the
//!   why from the connector (connection refused, timed out, a DNS or TLS failure...);
//! - the call timed out: `the AWS endpoint <url> did not answer in time`;
//! - an answer that could not be read: `the AWS endpoint <url> sent an answer that
//!   could not be read (<why>)`;
//! - the service refused: `<Code>: <message>`, else `<Code> (HTTP <status>)`, else
//!   `HTTP <status>: <error>`;
//! - the request could not be built: `the AWS request could not be built (<why>)`.
//!
//! The endpoint is the one the SDK's configuration chain takes from the environment
//! (`AWS_ENDPOINT_URL_<SERVICE>`, else `AWS_ENDPOINT_URL`); without one the line says
//! `the AWS endpoint` (the service's regional endpoint).

use std::error::Error;
use std::io;

use aws_sdk_s3::error::ProvideErrorMetadata;
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use aws_smithy_runtime_api::client::result::SdkError;
use cdkd_core::text::flatten_str;

/// One line, sanitized, saying what failed and why. The SDK's full `Debug` form is
/// logged at debug level.
pub fn readable<E>(e: &SdkError<E, HttpResponse>) -> String
where
    E: ProvideErrorMetadata + Error + 'static,
{
    tracing::debug!("AWS SDK error: {e:?}");
    let endpoint = endpoint_of::<E>(|k| std::env::var(k).ok());
    flatten_str(&describe(e, endpoint.as_deref()))
}

/// [`readable`] with the endpoint given (`None`: the service's own).
pub fn describe<E>(e: &SdkError<E, HttpResponse>, endpoint: Option<&str>) -> String
where
    E: ProvideErrorMetadata + Error + 'static,
{
    let at = match endpoint {
        Some(url) => format!("the AWS endpoint {url}"),
        None => "the AWS endpoint".to_string(),
    };
    match e {
        SdkError::DispatchFailure(d) => {
            let why = match d.as_connector_error() {
                Some(c) if c.is_timeout() => "timed out".to_string(),
                Some(c) => cause(c),
                None => source_cause(e),
            };
            format!("cannot reach {at} ({why})")
        }
        SdkError::TimeoutError(_) => format!("{at} did not answer in time"),
        SdkError::ResponseError(_) => {
            format!(
                "{at} sent an answer that could not be read ({})",
                source_cause(e)
            )
        }
        SdkError::ConstructionFailure(_) => {
            format!("the AWS request could not be built ({})", source_cause(e))
        }
        _ => {
            let status = e.raw_response().map(|r| r.status().as_u16());
            match (e.code(), e.message()) {
                (Some(c), Some(m)) => format!("{c}: {m}"),
                (Some(c), None) => match status {
                    Some(s) => format!("{c} (HTTP {s})"),
                    None => c.to_owned(),
                },
                _ => {
                    let what = e
                        .as_service_error()
                        .map(|s| s.to_string())
                        .unwrap_or_else(|| source_cause(e));
                    match status {
                        Some(s) => format!("HTTP {s}: {what}"),
                        None => what,
                    }
                }
            }
        }
    }
}

/// The endpoint the SDK takes from the environment for the service of `E` (its crate,
/// `aws_sdk_<service>`), else the global one; empty values count as absent.
fn endpoint_of<E>(env: impl Fn(&str) -> Option<String>) -> Option<String> {
    let service = std::any::type_name::<E>()
        .split("::")
        .next()
        .and_then(|krate| krate.strip_prefix("aws_sdk_"))
        .map(str::to_uppercase);
    service
        .and_then(|s| env(&format!("AWS_ENDPOINT_URL_{s}")))
        .filter(|u| !u.is_empty())
        .or_else(|| env("AWS_ENDPOINT_URL").filter(|u| !u.is_empty()))
}

fn source_cause<E>(e: &SdkError<E, HttpResponse>) -> String
where
    E: Error + 'static,
{
    match e.source() {
        Some(s) => cause(s),
        None => e.to_string(),
    }
}

/// Why a chain of errors failed: the kind of the first I/O error in it, in words, else
/// the innermost error's text (`(os error N)` left out).
fn cause(top: &(dyn Error + 'static)) -> String {
    let mut innermost: &(dyn Error + 'static) = top;
    let mut next = Some(top);
    while let Some(err) = next {
        if let Some(io) = err.downcast_ref::<io::Error>() {
            if let Some(words) = io_kind_words(io.kind()) {
                return words.to_string();
            }
        }
        innermost = err;
        next = err.source();
    }
    let text = innermost.to_string();
    let text = match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => text[..i].to_string(),
        _ => text,
    };
    lower_first(&text)
}

fn io_kind_words(kind: io::ErrorKind) -> Option<&'static str> {
    use io::ErrorKind as K;
    Some(match kind {
        K::ConnectionRefused => "connection refused",
        K::ConnectionReset => "connection reset",
        K::ConnectionAborted => "connection aborted",
        K::TimedOut => "timed out",
        K::NotConnected => "not connected",
        K::AddrNotAvailable => "address not available",
        K::HostUnreachable => "host unreachable",
        K::NetworkUnreachable => "network unreachable",
        K::BrokenPipe => "connection closed",
        K::UnexpectedEof => "connection closed early",
        _ => return None,
    })
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        // An acronym (`DNS error`) keeps its case.
        Some(f) if f.is_uppercase() && !c.clone().next().is_some_and(char::is_uppercase) => {
            f.to_lowercase().chain(c).collect()
        }
        _ => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_s3::operation::list_objects_v2::ListObjectsV2Error;
    use aws_smithy_runtime_api::client::result::ConnectorError;
    use aws_smithy_runtime_api::http::StatusCode;
    use aws_smithy_types::body::SdkBody;
    use aws_smithy_types::error::ErrorMetadata;

    type S3Error = SdkError<ListObjectsV2Error, HttpResponse>;

    /// An error that wraps another, as hyper's client error wraps the connect error.
    #[derive(Debug)]
    struct Wrap(&'static str, Box<dyn Error + Send + Sync>);
    impl std::fmt::Display for Wrap {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }
    impl Error for Wrap {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(self.1.as_ref())
        }
    }

    fn refused() -> S3Error {
        let io = io::Error::new(
            io::ErrorKind::ConnectionRefused,
            "Connection refused (os error 111)",
        );
        let chain = Wrap(
            "client error (Connect)",
            Box::new(Wrap("tcp connect error", Box::new(io))),
        );
        SdkError::dispatch_failure(ConnectorError::io(Box::new(chain)))
    }

    fn response(status: u16) -> HttpResponse {
        HttpResponse::new(
            StatusCode::try_from(status).expect("status"),
            SdkBody::empty(),
        )
    }

    #[test]
    fn unreachable_endpoint_names_the_endpoint_and_the_io_kind() {
        assert_eq!(
            describe(&refused(), Some("http://127.0.0.1:1")),
            "cannot reach the AWS endpoint http://127.0.0.1:1 (connection refused)"
        );
        assert_eq!(
            describe(&refused(), None),
            "cannot reach the AWS endpoint (connection refused)"
        );
    }

    #[test]
    fn no_debug_form_in_the_line() {
        let line = describe(&refused(), Some("http://127.0.0.1:1"));
        assert!(
            !line.contains("DispatchFailure") && !line.contains("ConnectorError"),
            "{line}"
        );
    }

    #[test]
    fn connector_timeout_and_call_timeout() {
        let e: S3Error = SdkError::dispatch_failure(ConnectorError::timeout("slow".into()));
        assert_eq!(
            describe(&e, Some("http://h")),
            "cannot reach the AWS endpoint http://h (timed out)"
        );
        let e: S3Error = SdkError::timeout_error("deadline");
        assert_eq!(
            describe(&e, Some("http://h")),
            "the AWS endpoint http://h did not answer in time"
        );
    }

    #[test]
    fn other_dispatch_failures_give_the_innermost_text() {
        let dns = Wrap(
            "dns error",
            Box::new(io::Error::other(
                "failed to lookup address information: Name or service not known",
            )),
        );
        let e: S3Error = SdkError::dispatch_failure(ConnectorError::other(Box::new(dns), None));
        assert_eq!(
            describe(&e, None),
            "cannot reach the AWS endpoint (failed to lookup address information: Name or service not known)"
        );
    }

    #[test]
    fn service_error_is_code_and_message() {
        let meta = ErrorMetadata::builder()
            .code("AccessDenied")
            .message("Access Denied")
            .build();
        let e: S3Error = SdkError::service_error(ListObjectsV2Error::generic(meta), response(403));
        assert_eq!(
            describe(&e, Some("http://h")),
            "AccessDenied: Access Denied"
        );
        let meta = ErrorMetadata::builder().code("NoSuchBucket").build();
        let e: S3Error = SdkError::service_error(ListObjectsV2Error::generic(meta), response(404));
        assert_eq!(describe(&e, None), "NoSuchBucket (HTTP 404)");
    }

    #[test]
    fn response_error_says_the_answer_was_unreadable() {
        let e: S3Error = SdkError::response_error("invalid XML", response(200));
        assert_eq!(
            describe(&e, Some("http://h")),
            "the AWS endpoint http://h sent an answer that could not be read (invalid XML)"
        );
    }

    #[test]
    fn the_service_endpoint_wins_over_the_global_one() {
        let env = |k: &str| match k {
            "AWS_ENDPOINT_URL_S3" => Some("http://s3.local".to_string()),
            "AWS_ENDPOINT_URL" => Some("http://all.local".to_string()),
            _ => None,
        };
        assert_eq!(
            endpoint_of::<ListObjectsV2Error>(env).as_deref(),
            Some("http://s3.local")
        );
        let env = |k: &str| (k == "AWS_ENDPOINT_URL").then(|| "http://all.local".to_string());
        assert_eq!(
            endpoint_of::<ListObjectsV2Error>(env).as_deref(),
            Some("http://all.local")
        );
        assert_eq!(
            endpoint_of::<ListObjectsV2Error>(|_| Some(String::new())),
            None
        );
    }
}
