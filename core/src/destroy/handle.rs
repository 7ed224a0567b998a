//! The resumable handle of a delete in flight (docs/destroy.md, "The workflow" and "In the workflow"): what a wave invocation
//! persists in the run record so that the next invocation resumes the delete instead of
//! starting it again. One type for the whole workspace: the deleters return it, the
//! workflow stores it in `progress.json`, the simulations model it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::run::HandlePhase;

/// Resumable state of a delete in flight. Serialized with a `kind` tag; every field added
/// after the first release has a serde default, so handles persisted by an earlier
/// version still parse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Handle {
    /// A Cloud Control `DeleteResource` request. `request_token: None` is a write-ahead
    /// intent: the request may or may not have been sent; re-sending it with the same
    /// `client_token` is idempotent, so it can never become a second, different delete.
    #[serde(rename_all = "camelCase")]
    CloudControl {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_token: Option<String>,
        client_token: String,
        started_ms: u64,
        /// Status polls so far (drives the 1 s ×1.5 → 10 s back-off).
        #[serde(default)]
        polls: u32,
    },
    /// A custom-resource Delete request awaiting its response object.
    #[serde(rename_all = "camelCase")]
    CustomResource {
        request_id: String,
        /// Key of the response object in the state bucket.
        response_key: String,
        deadline_ms: u64,
        /// Response polls so far (drives the 2 s ×1.5 → 30 s back-off).
        #[serde(default)]
        polls: u32,
    },
    /// An SDK delete that completes asynchronously (for instance a DynamoDB table in
    /// `DELETING`): poll re-describes the resource until it is gone.
    #[serde(rename_all = "camelCase")]
    AwaitGone {
        started_ms: u64,
        deadline_ms: u64,
        #[serde(default)]
        polls: u32,
    },
    /// An SDK delete with steps before the delete call itself, each of which may take
    /// longer than one call (turning deletion protection off and waiting for the table
    /// to be ACTIVE again; emptying a bucket in batches). `phase` names the step the
    /// deleter resumes; `data` is small deleter-specific state.
    #[serde(rename_all = "camelCase")]
    Steps {
        phase: HandlePhase,
        #[serde(default, skip_serializing_if = "Value::is_null")]
        data: Value,
        started_ms: u64,
        deadline_ms: u64,
        #[serde(default)]
        polls: u32,
    },
}

impl Handle {
    /// Polls (or batches) so far.
    pub fn polls(&self) -> u32 {
        match self {
            Handle::CloudControl { polls, .. }
            | Handle::CustomResource { polls, .. }
            | Handle::AwaitGone { polls, .. }
            | Handle::Steps { polls, .. } => *polls,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn handle_round_trips_through_json_for_a_later_invocation() {
        let h = Handle::CloudControl {
            request_token: Some("rt".into()),
            client_token: "ct".into(),
            started_ms: 5,
            polls: 2,
        };
        let json = serde_json::to_value(&h).unwrap();
        assert_eq!(
            json,
            json!({"kind": "cloudControl", "requestToken": "rt", "clientToken": "ct", "startedMs": 5, "polls": 2})
        );
        assert_eq!(serde_json::from_value::<Handle>(json).unwrap(), h);
        let steps = Handle::Steps {
            phase: HandlePhase::Emptying,
            data: Value::Null,
            started_ms: 1,
            deadline_ms: 2,
            polls: 3,
        };
        let json = serde_json::to_value(&steps).unwrap();
        assert_eq!(
            json,
            json!({"kind": "steps", "phase": "emptying", "startedMs": 1, "deadlineMs": 2, "polls": 3})
        );
        assert_eq!(serde_json::from_value::<Handle>(json).unwrap(), steps);
    }

    #[test]
    fn cloud_control_intent_without_request_token_omits_it_and_parses_back() {
        let h = Handle::CloudControl {
            request_token: None,
            client_token: "ct".into(),
            started_ms: 0,
            polls: 0,
        };
        let text = serde_json::to_string(&h).unwrap();
        assert!(!text.contains("requestToken"), "{text}");
        assert_eq!(serde_json::from_str::<Handle>(&text).unwrap(), h);
    }

    #[test]
    fn a_steps_handle_of_a_phase_this_version_does_not_know_still_parses_and_writes_back() {
        let v = json!({"kind": "steps", "phase": "draining", "startedMs": 1, "deadlineMs": 2, "polls": 0});
        let h: Handle = serde_json::from_value(v.clone()).unwrap();
        assert!(
            matches!(&h, Handle::Steps { phase: HandlePhase::Other(p), .. } if p == "draining")
        );
        assert_eq!(serde_json::to_value(&h).unwrap(), v);
    }

    #[test]
    fn handles_persisted_before_the_polls_default_still_parse() {
        let h: Handle =
            serde_json::from_value(json!({"kind": "awaitGone", "startedMs": 1, "deadlineMs": 2}))
                .unwrap();
        assert_eq!(h.polls(), 0);
    }
}
