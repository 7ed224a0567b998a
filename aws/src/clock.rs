//! S3's clock as this process sees it (docs/state-and-lock.md, "Lock time is S3's"): the local clock, and
//! the offset between S3's clock and it, measured from the `Date` header of S3's
//! responses. Lock expiry is judged on S3's clock and the locks this process writes carry
//! S3-clock timestamps, so a machine whose clock is off neither takes over a live lock nor
//! writes a lock that is born expired.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::context::BeforeDeserializationInterceptorContextRef;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::ConfigBag;
use aws_smithy_types::date_time::{DateTime, Format};

/// Test hook: milliseconds added to this process's clock, to play a machine whose clock is
/// off (docs/state-and-lock.md, "Lock time is S3's"). Read once; anything but an integer counts as 0.
pub const CLOCK_SKEW_ENV: &str = "CDKD_FLOW_CLOCK_SKEW_MS";

/// How far below the kept offset a sample may fall and still be taken for the jitter of
/// whole-second `Date`s, not a stepped clock ([`S3Clock::observe`]).
pub const OFFSET_STEP_MS: i64 = 2_000;

/// A difference between the local clock and S3's beyond this is reported, once.
pub const SKEW_WARN_MS: i64 = 60_000;

fn env_skew_ms() -> i64 {
    static SKEW: OnceLock<i64> = OnceLock::new();
    *SKEW.get_or_init(|| {
        std::env::var(CLOCK_SKEW_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<i64>().ok())
            .unwrap_or(0)
    })
}

fn system_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// This process's clock: the system clock, plus the test hook's skew
/// ([`CLOCK_SKEW_ENV`]), in milliseconds since the epoch.
pub fn local_now_ms() -> i64 {
    system_ms().saturating_add(env_skew_ms())
}

/// S3's clock now, as this process measured it ([`S3Clock::system`]).
pub fn s3_now_ms() -> i64 {
    S3Clock::system().s3_now_ms()
}

/// Whether the skew warning was given in this process (it is given once).
static WARNED: AtomicBool = AtomicBool::new(false);

/// A local clock and its measured offset from S3's. Clones share the measurement; an
/// SDK interceptor ([`Intercept`]) that measures it from every response it sees.
#[derive(Debug, Clone)]
pub struct S3Clock {
    /// Added to the system clock (the test hook, or a test's own skew).
    skew_ms: i64,
    /// S3's clock minus the local one, from the latest response with a `Date`.
    offset_ms: Arc<Mutex<Option<i64>>>,
}

impl S3Clock {
    /// This process's clock (the system clock and the test hook's skew); every clone of
    /// it shares one measurement of S3's.
    pub fn system() -> S3Clock {
        static SYSTEM: OnceLock<S3Clock> = OnceLock::new();
        SYSTEM
            .get_or_init(|| S3Clock {
                skew_ms: env_skew_ms(),
                offset_ms: Arc::default(),
            })
            .clone()
    }

    /// A clock `skew_ms` off the system clock, with a measurement of its own (tests: a
    /// step or a CLI whose clock is off).
    pub fn skewed(skew_ms: i64) -> S3Clock {
        S3Clock {
            skew_ms,
            offset_ms: Arc::default(),
        }
    }

    /// The local clock, in ms since the epoch.
    pub fn local_now_ms(&self) -> i64 {
        system_ms().saturating_add(self.skew_ms)
    }

    /// S3's clock minus the local one; `None` until a response was seen.
    pub fn offset_ms(&self) -> Option<i64> {
        *self.offset_ms.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A time of the local clock on S3's (unchanged until an offset is measured).
    pub fn to_s3_ms(&self, local_ms: i64) -> i64 {
        local_ms.saturating_add(self.offset_ms().unwrap_or(0))
    }

    /// S3's clock now.
    pub fn s3_now_ms(&self) -> i64 {
        self.to_s3_ms(self.local_now_ms())
    }

    /// Records S3's clock `date_ms` (a response's `Date`) as read at local time
    /// `local_ms`. `Date` counts whole seconds, rounded down, and the response took a
    /// while to arrive: each sample is up to about a second behind S3's clock, never
    /// ahead of it, so the largest sample is kept. A sample more than
    /// [`OFFSET_STEP_MS`] below it means a clock was stepped (or a response was very
    /// slow): it replaces the kept one, which errs on the side of an earlier time. A
    /// difference of more than a minute is reported once per process.
    pub fn observe(&self, date_ms: i64, local_ms: i64) {
        let sample = date_ms.saturating_sub(local_ms);
        let offset = {
            let mut kept = self.offset_ms.lock().unwrap_or_else(|p| p.into_inner());
            let next = match *kept {
                Some(k) if sample <= k && sample >= k.saturating_sub(OFFSET_STEP_MS) => k,
                _ => sample,
            };
            *kept = Some(next);
            next
        };
        if offset.saturating_abs() > SKEW_WARN_MS && !WARNED.swap(true, Ordering::Relaxed) {
            tracing::warn!("{}", skew_warning(offset));
        }
    }
}

/// The warning of a local clock `offset_ms` (S3's minus the local) off S3's.
pub fn skew_warning(offset_ms: i64) -> String {
    let how = if offset_ms < 0 { "ahead of" } else { "behind" };
    format!(
        "This machine's clock is {} {how} S3's: lock times are taken and judged on S3's clock (docs/state-and-lock.md §5.1); cdkd processes on this machine judge them on the local clock.",
        cdkd_core::view::words::format_duration_ms(offset_ms.saturating_abs())
    )
}

impl Intercept for S3Clock {
    fn name(&self) -> &'static str {
        "S3Clock"
    }

    fn read_before_deserialization(
        &self,
        context: &BeforeDeserializationInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let local = self.local_now_ms();
        let date = context
            .response()
            .headers()
            .get("date")
            .and_then(|d| DateTime::from_str(d, Format::HttpDate).ok())
            .and_then(|d| d.to_millis().ok());
        if let Some(date) = date {
            self.observe(date, local);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skewed_clock_measures_its_offset_and_converts_to_s3_time() {
        let c = S3Clock::skewed(7_200_000);
        assert_eq!(c.offset_ms(), None);
        let local = c.local_now_ms();
        assert_eq!(c.to_s3_ms(local), local);
        c.observe(local - 7_200_000, local);
        assert_eq!(c.offset_ms(), Some(-7_200_000));
        assert!((c.s3_now_ms() - system_ms()).abs() < 5_000);
        assert!(
            c.clone().offset_ms().is_some(),
            "clones share the measurement"
        );
    }

    #[test]
    fn the_largest_recent_sample_is_kept_and_a_stepped_clock_replaces_it() {
        let c = S3Clock::skewed(0);
        c.observe(10_000, 10_400); // -400
        c.observe(11_000, 11_100); // -100: closer to S3's clock
        assert_eq!(c.offset_ms(), Some(-100));
        c.observe(12_000, 12_900); // -900: jitter, -100 is kept
        assert_eq!(c.offset_ms(), Some(-100));
        c.observe(13_000, 18_000); // -5000: the local clock stepped ahead
        assert_eq!(c.offset_ms(), Some(-5_000));
    }

    #[test]
    fn skew_warning_says_which_way_and_how_far() {
        assert!(skew_warning(-7_200_000).contains("is 120m0s ahead of S3's"));
        assert!(skew_warning(90_000).contains("is 1m30s behind S3's"));
    }
}
