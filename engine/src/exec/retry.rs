//! Retry and Catch around a state's attempts, and the delay before each retry.

use futures::future::BoxFuture;
use serde_json::{json, Value};

use super::run::{Cur, Run};
use crate::error::{names, Failure};
use crate::events::EventKind;
use crate::model::*;

/// Whether a retrier's or catcher's ErrorEquals takes `error`. States.Runtime is never
/// retried or caught; States.DataLimitExceeded is "a terminal error that can't be caught
/// by the States.ALL error type" (Step Functions, error handling): only a list naming it
/// takes it.
pub(super) fn error_matches(list: &[String], error: &str) -> bool {
    if error == names::RUNTIME {
        return false;
    }
    if error == names::DATA_LIMIT_EXCEEDED {
        return list.iter().any(|e| e == error);
    }
    list.iter().any(|e| {
        e == error || e == names::ALL || (e == names::TASK_FAILED && error != names::TIMEOUT)
    })
}

impl Run {
    /// Retry and Catch around one state's attempts. Returns (Some(catcher's Next), output)
    /// when a catcher took the error.
    pub(super) async fn retry_catch<'a, F>(
        &'a self,
        c: &Cur<'a>,
        common: &'a Common,
        raw: Value,
        attempt: F,
    ) -> Result<(Option<String>, Value), Failure>
    where
        F: Fn(u32, Value) -> BoxFuture<'a, Result<Value, Failure>>,
    {
        let mut counts = vec![0u32; common.retry.len()];
        let mut total = 0u32;
        loop {
            let f = match attempt(total, raw.clone()).await {
                Ok(v) => return Ok((None, v)),
                Err(f) => f,
            };
            if let Some(i) = common
                .retry
                .iter()
                .position(|r| error_matches(&r.error_equals, &f.error))
            {
                let r = &common.retry[i];
                if counts[i] < r.max_attempts {
                    let d = retry_delay(r, counts[i]);
                    counts[i] += 1;
                    total += 1;
                    self.emit_full(
                        EventKind::StateRetryScheduled,
                        Some(&c.state.name),
                        None,
                        None,
                        Some(&f),
                        Some(json!({"attempt": total, "delaySeconds": d})),
                    );
                    self.sleep(d).await;
                    continue;
                }
            }
            if let Some(cat) = common
                .catch
                .iter()
                .find(|k| error_matches(&k.error_equals, &f.error))
            {
                let err = json!({"Error": f.error, "Cause": f.cause});
                let out = self.result_path(c, &cat.result_path, &raw, err)?;
                return Ok((Some(cat.next.clone()), out));
            }
            return Err(f);
        }
    }
}

/// The delay before retry number `count + 1` of retrier `r`, in seconds.
pub(crate) fn retry_delay(r: &Retrier, count: u32) -> f64 {
    let mut d = r.interval_seconds * r.backoff_rate.powi(count as i32);
    if let Some(m) = r.max_delay_seconds {
        d = d.min(m);
    }
    if r.jitter == Jitter::Full {
        use rand::Rng;
        d = rand::thread_rng().gen_range(0.0..=d);
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(interval: f64, backoff: f64, max_delay: Option<f64>, jitter: Jitter) -> Retrier {
        Retrier {
            error_equals: vec!["States.ALL".into()],
            interval_seconds: interval,
            max_attempts: 5,
            backoff_rate: backoff,
            max_delay_seconds: max_delay,
            jitter,
        }
    }

    #[test]
    fn retry_backoff_is_interval_times_rate_to_the_attempt() {
        let x = r(3.0, 2.0, None, Jitter::None);
        assert_eq!(
            [0, 1, 2, 3].map(|n| retry_delay(&x, n)),
            [3.0, 6.0, 12.0, 24.0]
        );
    }

    #[test]
    fn retry_max_delay_seconds_caps_the_backoff() {
        let x = r(3.0, 2.0, Some(10.0), Jitter::None);
        assert_eq!(
            [0, 1, 2, 3].map(|n| retry_delay(&x, n)),
            [3.0, 6.0, 10.0, 10.0]
        );
    }

    #[test]
    fn retry_full_jitter_stays_between_zero_and_the_backoff() {
        let x = r(4.0, 2.0, None, Jitter::Full);
        for _ in 0..200 {
            let d = retry_delay(&x, 2);
            assert!((0.0..=16.0).contains(&d));
        }
    }

    #[test]
    fn retry_error_matching_rules() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(error_matches(&v(&["States.ALL"]), "LockHeld"));
        assert!(!error_matches(&v(&["States.ALL"]), "States.Runtime"));
        assert!(error_matches(&v(&["States.TaskFailed"]), "LockHeld"));
        assert!(!error_matches(&v(&["States.TaskFailed"]), "States.Timeout"));
        assert!(error_matches(&v(&["States.Timeout"]), "States.Timeout"));
        assert!(!error_matches(&v(&["A", "B"]), "C"));
        let limit = names::DATA_LIMIT_EXCEEDED;
        assert!(!error_matches(&v(&["States.ALL"]), limit));
        assert!(!error_matches(&v(&["States.TaskFailed"]), limit));
        assert!(error_matches(&v(&[limit]), limit));
    }
}
