//! Retrying a call that AWS throttled, and only that (docs/export.md, "The registry" and "Looking up a security-group ingress rule id"): the
//! registry read and each page of a security-group listing are tried again after a
//! doubling pause, up to a number of retries, when [`crate::sdk_error::classify`] says
//! the answer was throttling. Any other failure comes back at once. (The SDK's own retry
//! layer runs below this one, as for every other client of the project.)

use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use aws_smithy_runtime_api::client::result::SdkError;
use aws_smithy_types::error::metadata::ProvideErrorMetadata;
use std::future::Future;

use crate::retry::retry_while;
use crate::sdk_error::{classify, ErrorClass};

/// How many times a throttled call is tried again (`Backoff::THROTTLED`): the project's
/// one retry policy, `crate::retry`.
pub use crate::retry::Backoff;

/// A call that failed, with its class (`Throttling` when it was still throttled after
/// every retry).
#[derive(Debug)]
pub struct Failed<E> {
    pub error: SdkError<E, HttpResponse>,
    pub class: ErrorClass,
}

/// Runs `call`, trying it again after a pause while the answer is throttling, at most
/// `backoff.retries` times.
pub async fn on_throttling<T, E, F, Fut>(backoff: &Backoff, call: F) -> Result<T, Failed<E>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, SdkError<E, HttpResponse>>>,
    E: ProvideErrorMetadata,
{
    retry_while(
        backoff,
        call,
        |e| classify(e) == ErrorClass::Throttling,
        |_| {},
    )
    .await
    .map_err(|error| Failed {
        class: classify(&error),
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use aws_smithy_runtime_api::http::StatusCode;
    use aws_smithy_types::body::SdkBody;
    use aws_smithy_types::error::ErrorMetadata;
    use std::cell::Cell;

    type E = SdkError<ErrorMetadata, HttpResponse>;

    fn answer(code: &str, status: u16) -> E {
        let meta = ErrorMetadata::builder().code(code).message("m").build();
        let resp = HttpResponse::new(StatusCode::try_from(status).unwrap(), SdkBody::empty());
        SdkError::service_error(meta, resp)
    }

    const NO_WAIT: Backoff = Backoff {
        retries: 4,
        first: Duration::ZERO,
        cap: Duration::ZERO,
    };

    #[tokio::test]
    async fn a_throttled_call_is_tried_again_until_it_answers() {
        let calls = Cell::new(0);
        let r: Result<u32, Failed<ErrorMetadata>> = on_throttling(&NO_WAIT, || {
            calls.set(calls.get() + 1);
            let n = calls.get();
            async move {
                if n < 3 {
                    Err(answer("Throttling", 400))
                } else {
                    Ok(n)
                }
            }
        })
        .await;
        assert_eq!(r.unwrap(), 3);
    }

    #[tokio::test]
    async fn still_throttled_after_four_retries_comes_back_as_throttling() {
        let calls = Cell::new(0);
        let r: Result<(), Failed<ErrorMetadata>> = on_throttling(&NO_WAIT, || {
            calls.set(calls.get() + 1);
            async { Err(answer("RequestLimitExceeded", 503)) }
        })
        .await;
        assert_eq!(calls.get(), 5, "one call and four retries");
        assert_eq!(r.unwrap_err().class, ErrorClass::Throttling);
    }

    #[tokio::test]
    async fn any_other_failure_is_not_retried() {
        for (code, status, class) in [
            ("UnauthorizedOperation", 403, ErrorClass::AccessDenied),
            ("InternalError", 500, ErrorClass::Transient),
            ("InvalidGroup.NotFound", 400, ErrorClass::NotFound),
        ] {
            let calls = Cell::new(0);
            let r: Result<(), Failed<ErrorMetadata>> = on_throttling(&NO_WAIT, || {
                calls.set(calls.get() + 1);
                async move { Err(answer(code, status)) }
            })
            .await;
            assert_eq!(calls.get(), 1, "{code}");
            assert_eq!(r.unwrap_err().class, class, "{code}");
        }
    }

    #[test]
    fn pauses_double_from_one_second_up_to_eight() {
        let b = Backoff::THROTTLED;
        let secs: Vec<u64> = (0..6).map(|r| b.delay(r).as_secs()).collect();
        assert_eq!(secs, vec![1, 2, 4, 8, 8, 8]);
        assert_eq!(b.delay(u32::MAX), b.cap);
    }
}
