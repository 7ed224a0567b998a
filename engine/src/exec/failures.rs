//! The failures the interpreter's parts share: a payload over the quota, a history at
//! its limit, a runtime error of a state.

use serde_json::Value;

use crate::error::{names, Failure, MAX_PAYLOAD_BYTES};

/// States.DataLimitExceeded when `v` is over the payload quota (its compact JSON text,
/// in UTF-8 bytes, as Step Functions counts it); `what` is the state's name, or a task's
/// resource, as the cause names it.
pub(super) fn payload_quota(what: &str, v: &Value) -> Result<(), Failure> {
    let size = serde_json::to_string(v).map_or(0, |s| s.len());
    if size <= MAX_PAYLOAD_BYTES {
        return Ok(());
    }
    Err(Failure::new(
        names::DATA_LIMIT_EXCEEDED,
        format!("The state/task '{what}' returned a result with a size exceeding the maximum number of bytes service limit."),
    ))
}

/// How Step Functions fails an execution whose history reached its limit.
pub(super) fn history_limit_failure(limit: u64) -> Failure {
    Failure::new(
        names::RUNTIME,
        format!("The execution reached the maximum number of history events ({limit})."),
    )
}

pub(super) fn runtime(state: &str, entered_event: u64, msg: &str) -> Failure {
    Failure::new(
        names::RUNTIME,
        format!("An error occurred while executing the state '{state}' (entered at the event id #{entered_event}). {msg}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn payload_quota_counts_utf8_bytes_of_compact_json_up_to_262144() {
        // {"s":"..."} is 8 bytes around the string.
        let at = |n: usize, c: &str| json!({"s": c.repeat(n)});
        assert!(payload_quota("S", &at(MAX_PAYLOAD_BYTES - 8, "x")).is_ok());
        let f = payload_quota("S", &at(MAX_PAYLOAD_BYTES - 7, "x")).unwrap_err();
        assert_eq!(f.error, names::DATA_LIMIT_EXCEEDED);
        assert_eq!(
            f.cause,
            "The state/task 'S' returned a result with a size exceeding the maximum number of bytes service limit."
        );
        // Two bytes a character, not a six-byte escape.
        assert!(payload_quota("S", &at((MAX_PAYLOAD_BYTES - 8) / 2, "é")).is_ok());
        assert!(payload_quota("S", &at((MAX_PAYLOAD_BYTES - 8) / 2 + 1, "é")).is_err());
    }
}
