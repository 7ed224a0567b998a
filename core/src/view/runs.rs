//! The runs of the deployed destroy and cleanup state machines, for people: the
//! `runs list` table and its `--json`, the head of `runs show`, and what a watch prints
//! about the execution itself (a failed step, the last line, the warning after an
//! abrupt stop). The CLI turns what Step Functions describes into [`ExecutionRow`] and
//! [`StepEvent`]; everything here is pure, and every value from AWS is flattened onto
//! one line.

use serde_json::{json, Value};

use crate::contention::{recovery_command, ContentionContext, Subject};
use crate::keys::DEFAULT_PREFIX;
use crate::text::flatten_str;
use crate::view::date::iso_seconds;
use crate::view::join_lines;

/// Which workflow a run is an execution of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    Destroy,
    Cleanup,
    Export,
}

impl RunKind {
    pub fn name(self) -> &'static str {
        match self {
            RunKind::Destroy => "destroy",
            RunKind::Cleanup => "cleanup",
            RunKind::Export => "export",
        }
    }
}

/// One execution as the views need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutionRow {
    /// The execution name (the run id).
    pub name: String,
    pub arn: String,
    /// `None` when its input names neither a stack nor a pattern.
    pub kind: Option<RunKind>,
    /// RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED...
    pub status: String,
    pub start_ms: i64,
    pub stop_ms: Option<i64>,
    /// The destroyed stack, or the cleanup's pattern.
    pub target: Option<String>,
    pub error: Option<String>,
    pub cause: Option<String>,
}

/// `FAILED (LockHeld: held by cdkd)`: the status, then the error and its cause when
/// the execution has one.
pub fn status_text(x: &ExecutionRow) -> String {
    let mut status = flatten_str(&x.status);
    if let Some(e) = x.error.as_deref().filter(|s| !s.is_empty()) {
        status.push_str(&format!(" ({}", flatten_str(e)));
        if let Some(c) = x.cause.as_deref().filter(|s| !s.is_empty()) {
            status.push_str(&format!(": {}", flatten_str(c)));
        }
        status.push(')');
    }
    status
}

fn target_cell(x: &ExecutionRow) -> String {
    match (x.kind, x.target.as_deref()) {
        (_, None) => "-".into(),
        (Some(RunKind::Cleanup), Some(t)) => format!("pattern {}", flatten_str(t)),
        (_, Some(t)) => flatten_str(t),
    }
}

/// The `runs list` table (`no runs` when there is none).
pub fn render_list(rows: &[ExecutionRow]) -> String {
    if rows.is_empty() {
        return "no runs\n".into();
    }
    let head = ["RUN", "KIND", "STATUS", "STARTED", "STOPPED", "STACK"];
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            [
                flatten_str(&r.name),
                r.kind.map(RunKind::name).unwrap_or("-").to_string(),
                flatten_str(&r.status),
                iso_seconds(r.start_ms),
                r.stop_ms.map(iso_seconds).unwrap_or_else(|| "-".into()),
                target_cell(r),
            ]
        })
        .collect();
    let mut w = head.map(str::len);
    for c in &cells {
        for (i, v) in c.iter().enumerate() {
            w[i] = w[i].max(v.chars().count());
        }
    }
    let line = |c: &[String]| {
        let mut s = String::new();
        for (i, v) in c.iter().enumerate() {
            s.push_str(v);
            if i + 1 < c.len() {
                s.push_str(&" ".repeat(w[i] - v.chars().count() + 2));
            }
        }
        s.trim_end().to_string()
    };
    let mut out = vec![line(&head.map(String::from))];
    out.extend(cells.iter().map(|c| line(c)));
    join_lines(&out)
}

/// The `runs list --json` array (values as Step Functions gave them: JSON escapes).
pub fn list_json(rows: &[ExecutionRow]) -> Value {
    Value::Array(
        rows.iter()
            .map(|r| {
                json!({
                    "name": r.name,
                    "executionArn": r.arn,
                    "kind": r.kind.map(RunKind::name),
                    "status": r.status,
                    "startDate": iso_seconds(r.start_ms),
                    "stopDate": r.stop_ms.map(iso_seconds),
                    "stack": if matches!(r.kind, Some(RunKind::Destroy | RunKind::Export)) { r.target.clone() } else { None },
                    "pattern": if r.kind == Some(RunKind::Cleanup) { r.target.clone() } else { None },
                })
            })
            .collect(),
    )
}

/// The `runs show --json` object: the execution, its input and output, and the
/// destroy report when there is one.
pub fn show_json(
    x: &ExecutionRow,
    input: &Value,
    output: Option<&Value>,
    report: Option<&Value>,
) -> Value {
    json!({
        "name": x.name,
        "executionArn": x.arn,
        "kind": x.kind.map(RunKind::name),
        "status": x.status,
        "startDate": iso_seconds(x.start_ms),
        "stopDate": x.stop_ms.map(iso_seconds),
        "error": x.error,
        "cause": x.cause,
        "input": input,
        "output": output,
        "report": report,
    })
}

/// The head of `runs show`.
pub fn render_show_head(x: &ExecutionRow) -> String {
    let mut lines = vec![format!(
        "run {} ({})",
        flatten_str(&x.name),
        x.kind.map(RunKind::name).unwrap_or("unknown kind")
    )];
    lines.push(format!("  status:  {}", status_text(x)));
    lines.push(format!("  started: {}", iso_seconds(x.start_ms)));
    if let Some(t) = x.stop_ms {
        lines.push(format!("  stopped: {}", iso_seconds(t)));
    }
    match (x.kind, x.target.as_deref()) {
        (Some(RunKind::Cleanup), Some(p)) => lines.push(format!("  pattern: {}", flatten_str(p))),
        (_, Some(s)) => lines.push(format!("  stack:   {}", flatten_str(s))),
        _ => {}
    }
    join_lines(&lines)
}

/// What `runs show` prints for a destroy run that has written no report yet.
pub const NO_REPORT_YET: &str = "  no report yet\n";

/// What `runs show` prints for an export run that has written no plan yet.
pub const NO_PLAN_YET: &str = "  no plan yet\n";

/// `run <name>: <status>` (no newline): a watch's first line and each status change.
pub fn status_line(name: &str, status: &str) -> String {
    format!("run {}: {}", flatten_str(name), flatten_str(status))
}

/// The last line of a watch (no newline): the run's final status, and its error when
/// it has one.
pub fn final_line(x: &ExecutionRow) -> String {
    format!("run {}: {}", flatten_str(&x.name), status_text(x))
}

/// One event of an execution's history, as a watch reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepEvent<'a> {
    /// The event type (`TaskFailed`, `ExecutionAborted`...).
    pub kind: &'a str,
    pub error: Option<&'a str>,
    pub cause: Option<&'a str>,
}

/// One line for a step that failed or timed out (`  <state> failed: <error>: <cause>`),
/// `None` for any other event (the execution's own end included: the last line says it).
pub fn failed_step_line(e: &StepEvent<'_>, last_state: Option<&str>) -> Option<String> {
    let failed = e.kind.ends_with("Failed") || e.kind.ends_with("TimedOut");
    if !failed || e.kind.starts_with("Execution") {
        return None;
    }
    let state = last_state
        .map(flatten_str)
        .unwrap_or_else(|| "a step".into());
    Some(format!(
        "  {state} failed: {}: {}",
        flatten_str(e.error.unwrap_or(e.kind)),
        flatten_str(e.cause.unwrap_or(""))
    ))
}

/// What an abrupt stop leaves behind, from the run's execution input: the lock of its
/// stack stays held (the force-unlock command only when every value it needs prints
/// faithfully, docs/state-and-lock.md §7, as for a held lock); a cleanup's destroy runs
/// carry on.
pub fn aborted_warning(input: &Value) -> String {
    let text = |k: &str| input.get(k).and_then(Value::as_str);
    let Some(stack) = text("stack") else {
        return "warning: the run was stopped abruptly: the destroy runs it started and the locks they hold carry on until they end or expire".into();
    };
    let cmd = recovery_command(&ContentionContext {
        subject: Subject::Stack,
        stack,
        region: text("stackRegion"),
        profile: None,
        bucket: text("stateBucket"),
        prefix: text("statePrefix").unwrap_or(DEFAULT_PREFIX),
    });
    let how = match cmd {
        Some(c) => format!("or {c} removes it"),
        None => "or it is removed with cdkd-flow force-unlock".into(),
    };
    format!(
        "warning: the run was stopped abruptly: the lock of stack '{}' stays held until it expires (30 minutes after its last renewal) {how}",
        flatten_str(stack)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, kind: RunKind, status: &str, target: Option<&str>) -> ExecutionRow {
        ExecutionRow {
            name: name.into(),
            arn: format!("arn:aws:states:us-east-1:1:execution:M:{name}"),
            kind: Some(kind),
            status: status.into(),
            start_ms: 1_795_965_752_123,
            stop_ms: (status != "RUNNING").then_some(1_795_965_812_000),
            target: target.map(str::to_string),
            error: None,
            cause: None,
        }
    }

    #[test]
    fn list_table_aligns_columns_and_sanitizes_names() {
        let rows = vec![
            row(
                "destroy-app-20261129T152232",
                RunKind::Destroy,
                "RUNNING",
                Some("app\u{1b}[2J"),
            ),
            row(
                "cleanup-preview-_-20261129T152232",
                RunKind::Cleanup,
                "SUCCEEDED",
                Some("preview-*"),
            ),
        ];
        insta::assert_snapshot!(render_list(&rows));
        assert_eq!(render_list(&[]), "no runs\n");
    }

    #[test]
    fn list_json_has_name_kind_status_times_and_stack() {
        let v = list_json(&[row(
            "destroy-a-1",
            RunKind::Destroy,
            "ABORTED",
            Some("a\"b"),
        )]);
        assert_eq!(
            v,
            json!([{
                "name": "destroy-a-1",
                "executionArn": "arn:aws:states:us-east-1:1:execution:M:destroy-a-1",
                "kind": "destroy",
                "status": "ABORTED",
                "startDate": "2026-11-29T15:22:32Z",
                "stopDate": "2026-11-29T15:23:32Z",
                "stack": "a\"b",
                "pattern": null
            }])
        );
    }

    fn failed() -> ExecutionRow {
        ExecutionRow {
            error: Some("LockHeld".into()),
            cause: Some("held by\ncdkd".into()),
            ..row("destroy-a-1", RunKind::Destroy, "FAILED", Some("a"))
        }
    }

    #[test]
    fn show_head_names_status_error_times_and_stack() {
        insta::assert_snapshot!(render_show_head(&failed()));
        let cleanup = row("cleanup-p-1", RunKind::Cleanup, "RUNNING", Some("p-*"));
        assert!(render_show_head(&cleanup).ends_with("  pattern: p-*\n"));
        let unknown = ExecutionRow {
            kind: None,
            target: None,
            ..cleanup
        };
        assert!(render_show_head(&unknown).starts_with("run cleanup-p-1 (unknown kind)\n"));
    }

    #[test]
    fn final_line_names_status_error_and_cause_flattened() {
        assert_eq!(
            final_line(&failed()),
            "run destroy-a-1: FAILED (LockHeld: held by cdkd)"
        );
    }

    #[test]
    fn final_line_flattens_the_status_like_the_show_head() {
        // Every value from AWS is flattened onto one line, the status included.
        let x = row("destroy-a-1", RunKind::Destroy, "FAILED\n\u{1b}[2J", None);
        assert_eq!(final_line(&x), "run destroy-a-1: FAILED  [2J");
        assert!(render_show_head(&x).contains("  status:  FAILED  [2J\n"));
        assert_eq!(status_line("a\nb", "RUNNING\r"), "run a b: RUNNING");
    }

    #[test]
    fn failed_steps_are_rendered_with_the_state_they_happened_in() {
        let e = StepEvent {
            kind: "TaskFailed",
            error: Some("Transient"),
            cause: Some("throttled\r\n"),
        };
        assert_eq!(
            failed_step_line(&e, Some("Wave")).as_deref(),
            Some("  Wave failed: Transient: throttled")
        );
        let timed_out = StepEvent {
            kind: "TaskTimedOut",
            error: None,
            cause: None,
        };
        assert_eq!(
            failed_step_line(&timed_out, None).as_deref(),
            Some("  a step failed: TaskTimedOut: ")
        );
        let ok = StepEvent {
            kind: "TaskSucceeded",
            ..e
        };
        assert_eq!(failed_step_line(&ok, Some("Wave")), None);
        let end = StepEvent {
            kind: "ExecutionFailed",
            ..e
        };
        assert_eq!(failed_step_line(&end, None), None);
    }

    #[test]
    fn aborted_warning_says_the_lock_stays_held_and_sanitizes_the_stack() {
        let w = aborted_warning(&json!({"stack": "a\u{1b}[31m"}));
        assert!(w.contains("stays held until it expires"), "{w}");
        assert!(w.contains("removed with cdkd-flow force-unlock"), "{w}");
        assert!(!w.contains('\u{1b}'), "{w}");
    }

    #[test]
    fn aborted_warning_prints_the_force_unlock_command_for_printable_values() {
        let w = aborted_warning(&json!({"stack": "My App", "stackRegion": "eu-west-1",
            "stateBucket": "b", "statePrefix": "cdkd"}));
        assert!(
            w.ends_with("or cdkd-flow force-unlock 'My App' --stack-region eu-west-1 --state-bucket b removes it"),
            "{w}"
        );
    }

    #[test]
    fn aborted_warning_of_a_cleanup_says_its_destroy_runs_carry_on() {
        let w = aborted_warning(&json!({"pattern": "p-*"}));
        assert!(w.contains("the destroy runs it started"), "{w}");
    }
}
