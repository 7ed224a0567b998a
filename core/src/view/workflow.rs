//! `workflow run` (an execution of the local engine), for people: a progress line per
//! engine event (stderr) and the result (stdout), or the result as one JSON line with
//! `--json`. The CLI turns the engine's event and outcome into [`EngineEvent`] and
//! [`WorkflowResult`]. Control characters are shown escaped (`\u{1b}`, `\n`), so a
//! state's error or output is readable and cannot drive the terminal.

use serde_json::{json, Value};

/// One engine event as the progress line shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EngineEvent<'a> {
    /// 1-based, per execution.
    pub id: u64,
    /// The event type (`TaskStateEntered`, `ExecutionFailed`...).
    pub kind: &'a str,
    pub state: Option<&'a str>,
    pub error: Option<&'a str>,
    /// Resource, map index, retry delay...
    pub details: Option<&'a Value>,
}

/// How an execution ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WorkflowResult<'a> {
    Succeeded(&'a Value),
    Failed { error: &'a str, cause: &'a str },
}

/// Terminal-safe text: control characters are shown escaped.
fn escape_controls(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// One progress line for an event: `   3 TaskStateEntered Plan error=... {details}`.
pub fn event_line(e: &EngineEvent<'_>) -> String {
    let mut line = format!("{:>4} {}", e.id, e.kind);
    if let Some(s) = e.state {
        line.push_str(&format!(" {}", escape_controls(s)));
    }
    if let Some(err) = e.error {
        line.push_str(&format!(" error={}", escape_controls(err)));
    }
    if let Some(d) = e.details {
        line.push_str(&format!(" {}", escape_controls(&d.to_string())));
    }
    line
}

/// The `--json` result line: exactly `{"status":"SUCCEEDED","output":...}` or
/// `{"status":"FAILED","error":"...","cause":"..."}`.
pub fn result_json(o: &WorkflowResult<'_>) -> String {
    match o {
        WorkflowResult::Succeeded(v) => json!({"status": "SUCCEEDED", "output": v}).to_string(),
        WorkflowResult::Failed { error, cause } => {
            json!({"status": "FAILED", "error": error, "cause": cause}).to_string()
        }
    }
}

/// The human result (no final newline): the status, then the output (pretty JSON) or
/// the error and its cause.
pub fn result_text(o: &WorkflowResult<'_>) -> String {
    match o {
        WorkflowResult::Succeeded(v) => format!(
            "status: SUCCEEDED\noutput: {}",
            serde_json::to_string_pretty(v)
                .unwrap_or_default()
                .lines()
                .map(escape_controls)
                .collect::<Vec<_>>()
                .join("\n")
        ),
        WorkflowResult::Failed { error, cause } => format!(
            "status: FAILED\nerror: {}\ncause: {}",
            escape_controls(error),
            escape_controls(cause)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_json_result_has_exactly_status_and_output_or_error_and_cause() {
        let out = json!({"a": [1]});
        assert_eq!(
            result_json(&WorkflowResult::Succeeded(&out)),
            r#"{"status":"SUCCEEDED","output":{"a":[1]}}"#
        );
        assert_eq!(
            result_json(&WorkflowResult::Failed {
                error: "LockHeld",
                cause: "held by \"x\""
            }),
            r#"{"status":"FAILED","error":"LockHeld","cause":"held by \"x\""}"#
        );
    }

    #[test]
    fn workflow_text_result_escapes_control_characters() {
        let t = result_text(&WorkflowResult::Failed {
            error: "E\u{1b}[31m",
            cause: "a\nb",
        });
        assert_eq!(t, "status: FAILED\nerror: E\\u{1b}[31m\ncause: a\\nb");
    }

    #[test]
    fn workflow_text_result_of_a_success_is_pretty_json_with_escapes() {
        let out = json!({"name": "x\u{7}", "n": [1, 2]});
        insta::assert_snapshot!(result_text(&WorkflowResult::Succeeded(&out)));
    }

    #[test]
    fn workflow_event_lines_name_id_kind_state_error_and_details() {
        let details = json!({"resource": "cdkd-flow:test:echo"});
        let lines = [
            event_line(&EngineEvent {
                id: 1,
                kind: "ExecutionStarted",
                state: None,
                error: None,
                details: None,
            }),
            event_line(&EngineEvent {
                id: 2,
                kind: "TaskStateEntered",
                state: Some("Plan\u{1b}[2J"),
                error: None,
                details: Some(&details),
            }),
            event_line(&EngineEvent {
                id: 12,
                kind: "TaskFailed",
                state: Some("Plan"),
                error: Some("States.Timeout\n"),
                details: None,
            }),
        ];
        insta::assert_snapshot!(lines.join("\n"));
    }
}
