//! What a delete reports back: done, already gone, or still running with a handle that a
//! later call (possibly another Lambda invocation) resumes.

use serde::{Deserialize, Serialize};

/// The handle type is core's (one type for the deleters, the workflow and the
/// simulations): a `kind`-tagged enum, serializable into the run record.
pub use cdkd_core::destroy::handle::Handle;

/// Outcome of `Deleter::start` / `Deleter::poll` when no error occurred.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum DeleteProgress {
    /// The resource was deleted by this call (or the operation it polls finished).
    Done,
    /// Deleted, but something it leaves behind is the user's to clean up (a VPC Lambda
    /// function's network interfaces still there at the deadline): the report shows
    /// `warning` as the row's note.
    #[serde(rename_all = "camelCase")]
    DoneWithWarning { warning: String },
    /// The resource did not exist any more, and the deleter could confirm that (the
    /// physical id is that API's identifier and the client's region is the record's).
    AlreadyGone,
    /// The delete is running. Persist `handle` and call `poll` again at or after
    /// `expected_done_ms` (milliseconds since the Unix epoch).
    #[serde(rename_all = "camelCase")]
    InFlight {
        handle: Handle,
        expected_done_ms: u64,
    },
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Back-off delay after `polls` polls: `first_ms` growing ×1.5 (rounded up), capped.
pub fn backoff_ms(polls: u32, first_ms: u64, cap_ms: u64) -> u64 {
    let mut delay = first_ms;
    for _ in 0..polls {
        delay = (delay * 3).div_ceil(2);
        if delay >= cap_ms {
            return cap_ms;
        }
    }
    delay.min(cap_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cloud_control_poll_backoff_grows_by_half_up_to_ten_seconds() {
        let seq: Vec<u64> = (0..8).map(|p| backoff_ms(p, 1000, 10_000)).collect();
        assert_eq!(
            seq,
            vec![1000, 1500, 2250, 3375, 5063, 7595, 10_000, 10_000]
        );
    }

    #[test]
    fn in_flight_progress_round_trips_through_json_for_a_later_invocation() {
        let h = Handle::CloudControl {
            request_token: Some("rt".into()),
            client_token: "ct".into(),
            started_ms: 5,
            polls: 2,
        };
        let p = DeleteProgress::InFlight {
            handle: h,
            expected_done_ms: 9,
        };
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(
            json,
            r#"{"status":"inFlight","handle":{"kind":"cloudControl","requestToken":"rt","clientToken":"ct","startedMs":5,"polls":2},"expectedDoneMs":9}"#
        );
        let back: DeleteProgress = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p);
    }
}
