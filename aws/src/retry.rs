//! The one retry policy of the project: a call tried again after a doubling pause, up to
//! a number of retries, while its failure is one worth trying again. Used for throttled
//! AWS calls (`throttle`), a lost conditional write of the exports index (`exports`) and
//! the CLI's calls to Step Functions through a lost connection (`cli/src/remote.rs`).

use std::future::Future;
use std::time::Duration;

/// How many times a call is tried again, and the pauses in between: `first`, doubling,
/// never longer than `cap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub retries: u32,
    pub first: Duration,
    pub cap: Duration,
}

impl Backoff {
    /// A throttled call: 4 retries, 1 s doubling up to 8 s (about 15 s in all).
    pub const THROTTLED: Backoff = Backoff {
        retries: 4,
        first: Duration::from_secs(1),
        cap: Duration::from_secs(8),
    };

    /// A conditional write that lost to another writer: 4 retries (5 writes in all),
    /// 100 ms doubling up to 1 s.
    pub const LOST_WRITE: Backoff = Backoff {
        retries: 4,
        first: Duration::from_millis(100),
        cap: Duration::from_secs(1),
    };

    /// A connection that is lost (a laptop asleep, a dropped network): tried again for
    /// as long as it takes, 1 s doubling up to 30 s.
    pub const RECONNECT: Backoff = Backoff {
        retries: u32::MAX,
        first: Duration::from_secs(1),
        cap: Duration::from_secs(30),
    };

    /// The pause before retry number `retry` (0-based).
    pub fn delay(&self, retry: u32) -> Duration {
        let factor = 1u32.checked_shl(retry.min(31)).unwrap_or(u32::MAX);
        self.first.saturating_mul(factor).min(self.cap)
    }
}

/// Runs `call`, and while it fails with an error `again` says is worth trying again,
/// tries it again after [`Backoff::delay`], at most `backoff.retries` times; `on_retry`
/// is told of each such error before its pause. The last answer comes back as it is.
pub async fn retry_while<T, E, F, Fut>(
    backoff: &Backoff,
    mut call: F,
    again: impl Fn(&E) -> bool,
    mut on_retry: impl FnMut(&E),
) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut retry = 0;
    loop {
        match call().await {
            Err(e) if retry < backoff.retries && again(&e) => {
                on_retry(&e);
                tokio::time::sleep(backoff.delay(retry)).await;
                retry += 1;
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn pauses_double_up_to_the_cap() {
        let ms = |b: Backoff| -> Vec<u128> { (0..6).map(|r| b.delay(r).as_millis()).collect() };
        assert_eq!(
            ms(Backoff::THROTTLED),
            vec![1000, 2000, 4000, 8000, 8000, 8000]
        );
        assert_eq!(
            ms(Backoff::LOST_WRITE),
            vec![100, 200, 400, 800, 1000, 1000]
        );
        assert_eq!(
            ms(Backoff::RECONNECT),
            vec![1000, 2000, 4000, 8000, 16000, 30000]
        );
        assert_eq!(Backoff::RECONNECT.delay(u32::MAX), Duration::from_secs(30));
    }

    #[tokio::test(start_paused = true)]
    async fn tries_again_only_while_asked_and_at_most_the_retries() {
        let b = Backoff {
            retries: 2,
            first: Duration::from_millis(1),
            cap: Duration::from_millis(1),
        };
        let calls = Cell::new(0);
        let told = Cell::new(0);
        let out: Result<(), u32> = retry_while(
            &b,
            || {
                calls.set(calls.get() + 1);
                async { Err(7) }
            },
            |e| *e == 7,
            |_| told.set(told.get() + 1),
        )
        .await;
        assert_eq!((out, calls.get(), told.get()), (Err(7), 3, 2));
        calls.set(0);
        let out: Result<(), u32> = retry_while(
            &b,
            || {
                calls.set(calls.get() + 1);
                async { Err(8) }
            },
            |e| *e == 7,
            |_| {},
        )
        .await;
        assert_eq!((out, calls.get()), (Err(8), 1));
    }
}
