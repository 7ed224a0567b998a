//! The steps a delete takes before its delete call (docs/destroy.md, "SDK deleters" and
//! "Cloud Control"): turning protection off, emptying a bucket. One home for the
//! [`Handle::Steps`] a deleter answers while a step runs and for reading it back in a
//! later call, and for the [`Handle::AwaitGone`] of the wait after the delete call; what
//! each step does stays in its deleter's module.
//!
//! A deleter names its phase once ([`Steps`]: the word and the budget of the whole
//! phase), builds the first handle from when the delete began ([`Steps::first`]), and
//! on `poll` reads the handle back ([`Steps::resume`]), checks the deadline
//! ([`At::past_deadline`]) and counts the poll ([`At::next`]) before it answers
//! in flight again ([`Steps::in_flight`]). The wait until gone goes the same way
//! ([`resume_gone`], [`await_gone`]).

use serde_json::Value;

use cdkd_core::run::HandlePhase;

use crate::error::{DeleteError, DeleteErrorKind};
use crate::progress::{DeleteProgress, Handle};
use crate::request::DeleteRequest;
use crate::sdk::eni::{deadline_ms, past_deadline};

/// A deleter's phase of steps: its word in `progress.json` and how long the phase may
/// take in all, from when the delete began.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Steps {
    pub phase: HandlePhase,
    pub budget_ms: u64,
}

/// Where a delete stands in its phase: when the delete began, the phase's deadline, the
/// polls (or attempts, or batches) so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct At {
    pub started_ms: u64,
    pub deadline_ms: u64,
    pub polls: u32,
}

impl Steps {
    /// The phase of a delete that began at `started_ms`, before any poll: its deadline is
    /// the budget after that.
    pub fn first(&self, started_ms: u64) -> At {
        At::start(started_ms, self.budget_ms)
    }

    /// In flight in this phase at `at`, with the deleter's small state `data`; the caller
    /// should poll again at `expected_done_ms`.
    pub fn in_flight(&self, data: Value, at: At, expected_done_ms: u64) -> DeleteProgress {
        DeleteProgress::InFlight {
            handle: Handle::Steps {
                phase: self.phase.clone(),
                data,
                started_ms: at.started_ms,
                deadline_ms: at.deadline_ms,
                polls: at.polls,
            },
            expected_done_ms,
        }
    }

    /// A handle of this phase read back, with its data; `None` for any other handle.
    pub fn resume<'h>(&self, handle: &'h Handle) -> Option<(At, &'h Value)> {
        match handle {
            Handle::Steps {
                phase,
                data,
                started_ms,
                deadline_ms,
                polls,
            } if *phase == self.phase => Some((
                At {
                    started_ms: *started_ms,
                    deadline_ms: *deadline_ms,
                    polls: *polls,
                },
                data,
            )),
            _ => None,
        }
    }
}

/// Waiting until the resource is gone after its delete call, at `at`; the caller
/// should poll again at `expected_done_ms`.
pub fn await_gone(at: At, expected_done_ms: u64) -> DeleteProgress {
    DeleteProgress::InFlight {
        handle: Handle::AwaitGone {
            started_ms: at.started_ms,
            deadline_ms: at.deadline_ms,
            polls: at.polls,
        },
        expected_done_ms,
    }
}

/// A [`Handle::AwaitGone`] read back; `None` for any other handle.
pub fn resume_gone(handle: &Handle) -> Option<At> {
    match handle {
        Handle::AwaitGone {
            started_ms,
            deadline_ms,
            polls,
        } => Some(At {
            started_ms: *started_ms,
            deadline_ms: *deadline_ms,
            polls: *polls,
        }),
        _ => None,
    }
}

impl At {
    /// A delete that began at `started_ms` with `budget_ms` to finish, before any poll.
    pub fn start(started_ms: u64, budget_ms: u64) -> At {
        At {
            started_ms,
            deadline_ms: deadline_ms(started_ms, budget_ms),
            polls: 0,
        }
    }

    /// Whether the phase's budget is spent at `now_ms` (strictly after its deadline).
    pub fn past_deadline(&self, now_ms: u64) -> bool {
        past_deadline(now_ms, self.deadline_ms)
    }

    /// The deadline check of a poll: past it at `now_ms`, the delete of `req` fails as
    /// timed out with the message `what` writes (what the resource still is).
    pub fn within_deadline(
        &self,
        req: &DeleteRequest,
        now_ms: u64,
        what: impl FnOnce() -> String,
    ) -> Result<(), DeleteError> {
        if self.past_deadline(now_ms) {
            return Err(DeleteError::new(req, DeleteErrorKind::Timeout, what()));
        }
        Ok(())
    }

    /// The same phase one poll later: what the next handle carries.
    pub fn next(self) -> At {
        At {
            polls: self.polls.saturating_add(1),
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const UNPROTECT: Steps = Steps {
        phase: HandlePhase::Unprotect,
        budget_ms: 100,
    };

    #[test]
    fn a_phase_is_written_and_read_back_with_its_deadline_and_polls() {
        let at = UNPROTECT.first(1_000);
        assert_eq!(
            at,
            At {
                started_ms: 1_000,
                deadline_ms: 1_100,
                polls: 0
            }
        );
        let DeleteProgress::InFlight {
            handle,
            expected_done_ms,
        } = UNPROTECT.in_flight(json!({"requestToken": "t"}), at.next(), 7)
        else {
            panic!("in flight")
        };
        assert_eq!(expected_done_ms, 7);
        assert_eq!(
            serde_json::to_value(&handle).unwrap(),
            json!({"kind": "steps", "phase": "unprotect", "data": {"requestToken": "t"},
                   "startedMs": 1_000, "deadlineMs": 1_100, "polls": 1})
        );
        let (back, data) = UNPROTECT.resume(&handle).unwrap();
        assert_eq!(back, at.next());
        assert_eq!(data["requestToken"], "t");
        assert!(!back.past_deadline(1_100));
        assert!(back.past_deadline(1_101));
        let req: DeleteRequest = serde_json::from_value(json!({
            "logicalId": "T", "resourceType": "AWS::DynamoDB::Table", "physicalId": "t",
            "region": "us-east-1",
            "run": {"runId": "r", "stack": "S", "stateBucket": "b", "statePrefix": "cdkd"}
        }))
        .unwrap();
        assert!(back.within_deadline(&req, 1_100, || unreachable!()).is_ok());
        let late = back
            .within_deadline(&req, 1_101, || "still there".into())
            .unwrap_err();
        assert_eq!(
            (late.kind, late.message.as_str(), late.retryable),
            (DeleteErrorKind::Timeout, "still there", false)
        );
    }

    #[test]
    fn another_phase_or_kind_of_handle_is_not_resumed() {
        let emptying = Steps {
            phase: HandlePhase::Emptying,
            budget_ms: 100,
        };
        let DeleteProgress::InFlight { handle, .. } =
            emptying.in_flight(Value::Null, emptying.first(0), 0)
        else {
            panic!("in flight")
        };
        assert!(UNPROTECT.resume(&handle).is_none());
        assert!(emptying.resume(&handle).is_some());
        let gone = Handle::AwaitGone {
            started_ms: 0,
            deadline_ms: 1,
            polls: 0,
        };
        assert!(UNPROTECT.resume(&gone).is_none());
        // A phase this version does not know is never resumed as a known one.
        let other = Handle::Steps {
            phase: HandlePhase::from("draining"),
            data: Value::Null,
            started_ms: 0,
            deadline_ms: 1,
            polls: 0,
        };
        assert!(UNPROTECT.resume(&other).is_none());
    }

    #[test]
    fn the_wait_until_gone_is_written_and_read_back() {
        let at = At {
            started_ms: 5,
            deadline_ms: 9,
            polls: 2,
        };
        let DeleteProgress::InFlight {
            handle,
            expected_done_ms,
        } = await_gone(at, 8)
        else {
            panic!("in flight")
        };
        assert_eq!(expected_done_ms, 8);
        assert_eq!(
            serde_json::to_value(&handle).unwrap(),
            json!({"kind": "awaitGone", "startedMs": 5, "deadlineMs": 9, "polls": 2})
        );
        assert_eq!(resume_gone(&handle), Some(at));
        assert!(UNPROTECT.resume(&handle).is_none());
        let DeleteProgress::InFlight { handle, .. } = UNPROTECT.in_flight(Value::Null, at, 0)
        else {
            panic!("in flight")
        };
        assert_eq!(resume_gone(&handle), None);
    }

    #[test]
    fn polls_count_without_overflow() {
        let at = At {
            started_ms: 0,
            deadline_ms: u64::MAX,
            polls: u32::MAX,
        };
        assert_eq!(at.next().polls, u32::MAX);
        assert_eq!(UNPROTECT.first(u64::MAX - 1).deadline_ms, u64::MAX);
    }
}
