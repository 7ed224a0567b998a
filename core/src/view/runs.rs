//! The runs of the deployed destroy and cleanup state machines, for people: the
//! `runs list` table and its `--json`, the head of `runs show`, and what a watch prints
//! about the execution itself (a failed step, the last line, the warning after an
//! abrupt stop). The CLI turns what Step Functions describes into [`ExecutionRow`] and
//! [`StepEvent`]; everything here is pure, and every value from AWS is flattened onto
//! one line. Local runs too: their table, head and last line, and the words of how one
//! is known interrupted or cannot be told (`Interruption`, `Unseen`).

use serde_json::{json, Value};

use std::fmt;

use crate::keys::DEFAULT_PREFIX;
use crate::run::{ExecutionStatus, Outcome, RunId, RunKind};
use crate::runs::{Interruption, LocalPhase, LocalRun, LocalState, Unseen};
use crate::text::flatten_str;
use crate::time::iso_seconds;
use crate::view::export_report::export_stage_text;
use crate::view::join_lines;
use crate::view::progress::destroy_wave_text;

/// One execution as the views need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutionRow {
    /// The execution name (the run id).
    pub name: RunId,
    pub arn: String,
    /// `None` when its input names neither a stack nor a pattern.
    pub kind: Option<RunKind>,
    /// RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED...
    pub status: ExecutionStatus,
    pub start_ms: i64,
    pub stop_ms: Option<i64>,
    /// The destroyed stack, or the cleanup's pattern.
    pub target: Option<String>,
    pub error: Option<String>,
    pub cause: Option<String>,
}

/// Why a deployed run listed from its folder has no status (no backend answered), and
/// what its report says when it has one.
pub fn unasked_execution(report_outcome: Option<&Outcome>) -> String {
    match report_outcome {
        Some(o) => format!(
            "no backend to ask; its report says {}",
            flatten_str(o.as_str())
        ),
        None => "no backend to ask; no report yet".into(),
    }
}

/// `FAILED (LockHeld: held by cdkd)`: the status, then the error and its cause when
/// the execution has one.
pub fn status_text(x: &ExecutionRow) -> String {
    let mut status = flatten_str(x.status.as_str());
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
    match (&x.kind, x.target.as_deref()) {
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
    let head = ["RUN", "KIND", "STATUS", "STARTED", "STOPPED", "STACK"].map(String::from);
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.name.to_string(),
                r.kind
                    .as_ref()
                    .map_or("-".into(), |k| flatten_str(k.name())),
                status_text(r),
                iso_seconds(r.start_ms),
                r.stop_ms.map(iso_seconds).unwrap_or_else(|| "-".into()),
                target_cell(r),
            ]
        })
        .collect();
    join_lines(&table(&head, &cells))
}

/// The `runs list --json` array (values as Step Functions gave them: JSON escapes).
pub fn list_json(rows: &[ExecutionRow]) -> Value {
    Value::Array(
        rows.iter()
            .map(|r| {
                json!({
                    "name": r.name,
                    "executionArn": r.arn,
                    "kind": r.kind.as_ref().map(RunKind::name),
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

/// `runs list` with a deployed backend: its executions, then the local runs of the
/// state bucket under a heading of their own (none: the executions alone).
pub fn render_list_all(rows: &[ExecutionRow], local: &[LocalRunRow]) -> String {
    let mut out = render_list(rows);
    if !local.is_empty() {
        out.push_str("\nlocal runs:\n");
        out.push_str(&render_local_list(local));
    }
    out
}

/// The `runs list --json` array with a deployed backend: the executions
/// ([`list_json`]), then each local run ([`local_run_json`]) marked `"local": true`.
pub fn list_all_json(rows: &[ExecutionRow], local: &[LocalRunRow]) -> Value {
    let mut all = match list_json(rows) {
        Value::Array(a) => a,
        _ => Vec::new(),
    };
    for r in local {
        let mut v = local_run_json(r);
        if let Some(o) = v.as_object_mut() {
            o.insert("local".into(), Value::Bool(true));
        }
        all.push(v);
    }
    Value::Array(all)
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
        "kind": x.kind.as_ref().map(RunKind::name),
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
        x.name,
        x.kind
            .as_ref()
            .map_or("unknown kind".into(), |k| flatten_str(k.name()))
    )];
    lines.push(format!("  status:  {}", status_text(x)));
    lines.push(format!("  started: {}", iso_seconds(x.start_ms)));
    if let Some(t) = x.stop_ms {
        lines.push(format!("  stopped: {}", iso_seconds(t)));
    }
    match (&x.kind, x.target.as_deref()) {
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
    format!("run {}: {}", x.name, status_text(x))
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

/// What an abrupt stop of run `run_id` leaves behind, from its execution input: a
/// destroy's deletes in flight and its lock (the force-unlock command of that run's
/// lock once a destroy-wave step can no longer be running,
/// [`crate::view::contention::destroy_stopped_cause`]); an export's lock, which its resume
/// takes over; a cleanup's destroy runs carry on.
pub fn aborted_warning(input: &Value, run_id: &str) -> String {
    let text = |k: &str| input.get(k).and_then(Value::as_str);
    let Some(stack) = text("stack") else {
        return "warning: the run was stopped abruptly: the destroy runs it started and the locks they hold carry on until they end or expire".into();
    };
    if RunKind::of_input(input) == Some(RunKind::Export) {
        // An export: its destination stacks may own resources its records still list;
        // unlocking would let a deploy or destroy act on them. Its resume takes the
        // lock over (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first").
        return format!(
            "warning: the run was stopped abruptly: its lock on stack '{}' stays held, and CloudFormation may already hold resources its cdkd record still lists; run the same cdkd-flow export command again to resume it (it takes the lock over; no force-unlock is needed, and none should be used)",
            flatten_str(stack)
        );
    }
    crate::view::contention::destroy_stopped_cause(
        text("stateBucket").unwrap_or_default(),
        text("statePrefix").unwrap_or(DEFAULT_PREFIX),
        run_id,
        &[(stack, text("stackRegion"))],
        "warning: the run was stopped abruptly",
        &format!(
            "once {} minutes have passed since the stop (the longest a destroy-wave step runs)",
            crate::contention::WAVE_TIMEOUT_S / 60
        ),
        None,
    )
}

/// One local run as `runs list | show --local` show it: its `run.json`, where it
/// stands (`phase`, from its progress) and its state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalRunRow {
    pub run: LocalRun,
    /// Shown as `planning`, `importing (phase 1)`, `wave 3: 5/8 resources settled` ...
    pub phase: LocalPhase,
    pub state: LocalState,
}

/// A local run's phase in words: `planning`, `waiting for approval`, `plan`, an
/// export's least advanced stack (`importing (phase 1)`, `locking` ...), a destroy's
/// wave (`wave 3: 5/8 resources settled`).
pub fn phase_text(p: &LocalPhase) -> String {
    match p {
        LocalPhase::Planning => "planning".into(),
        LocalPhase::WaitingForApproval => "waiting for approval".into(),
        LocalPhase::Plan => "plan".into(),
        LocalPhase::Export { stage, stopped } => export_stage_text(*stage, *stopped),
        LocalPhase::Destroy {
            waves,
            settled,
            total,
            stop_requested,
        } => destroy_wave_text(*waves, *settled, *total, *stop_requested),
    }
}

impl LocalRunRow {
    /// The command that resumes (runs again) an interrupted run; `None` for any other
    /// state or when its command line cannot be printed.
    pub fn resume_command(&self) -> Option<String> {
        match self.state {
            LocalState::Interrupted { .. } => self.run.resume_command(),
            _ => None,
        }
    }
}

/// `ended (migrated)`, `interrupted`, `running`.
fn local_status(r: &LocalRunRow) -> String {
    match &r.state {
        LocalState::Ended { outcome } => format!("ended ({})", flatten_str(outcome.as_str())),
        s => s.word().to_string(),
    }
}

fn local_kind(r: &LocalRunRow) -> String {
    let kind = flatten_str(r.run.kind.name());
    if r.run.plan_only {
        format!("{kind} (plan)")
    } else {
        kind
    }
}

/// What `runs show --local` says of an interrupted run whose command line cannot be
/// printed.
pub(crate) const RESUME_UNPRINTABLE: &str =
    "run the command that started it again (its command line cannot be printed here)";

/// The `runs list --local` table, newest first as given, then one line per
/// interrupted run naming the command that resumes it (`no local runs` when there is
/// none).
pub fn render_local_list(rows: &[LocalRunRow]) -> String {
    if rows.is_empty() {
        return "no local runs\n".into();
    }
    let head = [
        "RUN", "KIND", "STACK", "STATUS", "PHASE", "STARTED", "ENDED",
    ]
    .map(String::from);
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.run.run_id.to_string(),
                local_kind(r),
                flatten_str(&r.run.stack),
                local_status(r),
                phase_text(&r.phase),
                iso_seconds(r.run.started_ms),
                r.run
                    .ended_ms
                    .map(iso_seconds)
                    .unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    let mut out = table(&head, &cells);
    for r in rows {
        if let LocalState::Interrupted { why } = &r.state {
            let how = r
                .resume_command()
                .unwrap_or_else(|| RESUME_UNPRINTABLE.to_string());
            out.push(format!(
                "{} interrupted ({}): resume with {how}",
                r.run.run_id,
                flatten_str(&why.to_string())
            ));
        }
    }
    join_lines(&out)
}

/// Columns padded to their widest cell, two spaces apart, no trailing blanks.
fn table(head: &[String], cells: &[Vec<String>]) -> Vec<String> {
    let mut w: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for c in cells {
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
    let mut out = vec![line(head)];
    out.extend(cells.iter().map(|c| line(c)));
    out
}

/// One local run as JSON (`runs list --local --json` items, `runs show --local
/// --json`'s head): values as read, JSON-escaped.
pub fn local_run_json(r: &LocalRunRow) -> Value {
    let (outcome, why) = match &r.state {
        LocalState::Ended { outcome } => (Some(outcome.as_str()), None),
        LocalState::Interrupted { why } => (None, Some(why.to_string())),
        LocalState::Unknown { why } => (None, Some(why.to_string())),
        LocalState::Running => (None, None),
    };
    json!({
        "runId": r.run.run_id,
        "kind": r.run.kind,
        "planOnly": r.run.plan_only,
        "stack": r.run.stack,
        "stackRegion": r.run.stack_region,
        "status": r.state.word(),
        "outcome": outcome,
        "why": why,
        "phase": phase_text(&r.phase),
        "startDate": iso_seconds(r.run.started_ms),
        "endDate": r.run.ended_ms.map(iso_seconds),
        "host": r.run.host,
        "pid": r.run.pid,
        "resumeCommand": r.resume_command(),
    })
}

/// The `runs list --local --json` array.
pub fn local_list_json(rows: &[LocalRunRow]) -> Value {
    Value::Array(rows.iter().map(local_run_json).collect())
}

/// The head of `runs show --local`: kind, stack, status (and why), phase, times, the
/// process, and for an interrupted run the command that resumes it.
pub fn render_local_show_head(r: &LocalRunRow) -> String {
    let mut lines = vec![format!("run {} ({}, local)", r.run.run_id, local_kind(r))];
    lines.push(format!("  stack:   {}", flatten_str(&r.run.stack)));
    let status = match &r.state {
        LocalState::Interrupted { why } => {
            format!("{}: {}", r.state.word(), flatten_str(&why.to_string()))
        }
        LocalState::Unknown { why } => {
            format!("{}: {}", r.state.word(), flatten_str(&why.to_string()))
        }
        _ => local_status(r),
    };
    lines.push(format!("  status:  {status}"));
    lines.push(format!("  phase:   {}", phase_text(&r.phase)));
    lines.push(format!("  started: {}", iso_seconds(r.run.started_ms)));
    if let Some(t) = r.run.ended_ms {
        lines.push(format!("  ended:   {}", iso_seconds(t)));
    }
    lines.push(format!(
        "  process: {} on {}",
        r.run.pid,
        flatten_str(&r.run.host)
    ));
    if let LocalState::Interrupted { .. } = r.state {
        let how = r
            .resume_command()
            .unwrap_or_else(|| RESUME_UNPRINTABLE.to_string());
        lines.push(format!("  resume:  {how}"));
    }
    join_lines(&lines)
}

/// What `runs show --local` prints for a run with neither a report nor a plan yet.
pub const NOTHING_WRITTEN_YET: &str = "  no report or plan yet\n";

/// The last line of `runs watch --local` (no newline).
pub fn local_final_line(r: &LocalRunRow) -> String {
    match &r.state {
        LocalState::Interrupted { why } => format!(
            "run {}: interrupted ({}); resume with {}",
            r.run.run_id,
            flatten_str(&why.to_string()),
            r.resume_command()
                .unwrap_or_else(|| RESUME_UNPRINTABLE.to_string())
        ),
        _ => format!("run {}: {}", r.run.run_id, local_status(r)),
    }
}

/// Whether a local run that ended succeeded: its report says `migrated` (export) or
/// `destroyed` (destroy), or its process recorded `succeeded`.
pub fn local_succeeded(r: &LocalRunRow) -> bool {
    matches!(&r.state, LocalState::Ended { outcome } if outcome.is_success())
}

// ---------------------------------------------------------------------------------
// Why a local run stands where it stands

impl From<Interruption> for String {
    fn from(i: Interruption) -> String {
        i.to_string()
    }
}

impl From<Unseen> for String {
    fn from(u: Unseen) -> String {
        u.to_string()
    }
}

/// How a local run is known to be interrupted; the host is flattened onto one line.
impl fmt::Display for Interruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Interruption::CtrlC => f.write_str("it was interrupted (Ctrl-C)"),
            Interruption::ProcessGone { pid, host } => {
                write!(f, "its process {pid} on {} is gone", flatten_str(host))
            }
            Interruption::LockExpired { expires_ms } => {
                write!(f, "its lock expired at {}", iso_seconds(*expires_ms))
            }
            Interruption::Recorded(words) => f.write_str(words),
        }
    }
}

/// Why a local run's state cannot be told; the host is flattened onto one line.
impl fmt::Display for Unseen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unseen::NoLock { host, pid } => write!(
                f,
                "it runs on {} (process {pid}) and holds no lock to tell by",
                flatten_str(host)
            ),
            Unseen::Recorded(words) => f.write_str(words),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::execute::StackStage;

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
        let w = aborted_warning(&json!({"stack": "a\u{1b}[31m", "stateBucket": "b"}), "r1");
        assert!(w.contains("stays held until it expires"), "{w}");
        assert!(
            !w.contains("force-unlock"),
            "an unprintable stack gets no command: {w}"
        );
        assert!(!w.contains('\u{1b}'), "{w}");
    }

    #[test]
    fn no_message_advises_force_unlock_of_a_stopped_destroy_but_that_runs_own_lock_once_no_wave_runs(
    ) {
        let w = aborted_warning(
            &json!({"stack": "My App", "stackRegion": "eu-west-1",
            "stateBucket": "b", "statePrefix": "cdkd"}),
            "destroy-My-App-1",
        );
        assert!(
            w.ends_with("or once 15 minutes have passed since the stop (the longest a destroy-wave step runs) cdkd-flow force-unlock 'My App' --stack-region eu-west-1 --state-bucket b --run destroy-My-App-1 releases it"),
            "{w}"
        );
        assert!(w.contains("deletes in flight may still finish"), "{w}");
    }

    #[test]
    fn no_message_advises_force_unlock_for_an_export_stopped_abruptly() {
        for input in [
            json!({"stack": "Orders", "templates": {}}),
            json!({"stack": "Orders", "resume": "r1"}),
        ] {
            let w = aborted_warning(&input, "r1");
            assert!(
                w.contains("run the same cdkd-flow export command again to resume it"),
                "{w}"
            );
            assert!(
                !w.contains("force-unlock Orders") && !w.contains("removes it"),
                "{w}"
            );
        }
    }

    #[test]
    fn aborted_warning_of_a_cleanup_says_its_destroy_runs_carry_on() {
        let w = aborted_warning(&json!({"pattern": "p-*"}), "r1");
        assert!(w.contains("the destroy runs it started"), "{w}");
    }

    fn local(run_id: &str, kind: &str, state: LocalState, phase: LocalPhase) -> LocalRunRow {
        LocalRunRow {
            run: LocalRun {
                run_id: run_id.into(),
                kind: kind.into(),
                stack: "Orders\u{1b}[2J".into(),
                args: vec![
                    "--state-bucket".into(),
                    "b".into(),
                    kind.into(),
                    "Orders".into(),
                    "--template".into(),
                    "orders.json".into(),
                    "--local".into(),
                    "-y".into(),
                ],
                host: "laptop".into(),
                pid: 4242,
                started_ms: 1_795_965_752_123,
                ended_ms: matches!(state, LocalState::Ended { .. }).then_some(1_795_965_812_000),
                ..LocalRun::default()
            },
            phase,
            state,
        }
    }

    /// Every way a local run is known interrupted, or cannot be told, in words: a host
    /// read from `run.json` is flattened onto one line, words read back are as written.
    #[test]
    fn the_words_of_every_interruption_and_unseen_run() {
        let hostile = "lap\ntop\u{1b}[2J ";
        let lines = [
            Interruption::CtrlC.to_string(),
            Interruption::ProcessGone {
                pid: 4242,
                host: "laptop".into(),
            }
            .to_string(),
            Interruption::ProcessGone {
                pid: u32::MAX,
                host: hostile.into(),
            }
            .to_string(),
            Interruption::LockExpired {
                expires_ms: 1_795_965_700_000,
            }
            .to_string(),
            Interruption::Recorded("its process is gone".into()).to_string(),
            Unseen::NoLock {
                host: "ci-7".into(),
                pid: 9,
            }
            .to_string(),
            Unseen::NoLock {
                host: hostile.into(),
                pid: 0,
            }
            .to_string(),
            Unseen::Recorded("words as written".into()).to_string(),
        ];
        insta::assert_snapshot!(lines.join("\n"));
        // The JSON holds the words, and reads them back as written.
        let v = serde_json::to_value(Interruption::CtrlC).unwrap();
        assert_eq!(v, "it was interrupted (Ctrl-C)");
        let back: Interruption = serde_json::from_value(v).unwrap();
        assert_eq!(
            back,
            Interruption::Recorded("it was interrupted (Ctrl-C)".into())
        );
        let back: Unseen = serde_json::from_value(json!("x")).unwrap();
        assert_eq!(back, Unseen::Recorded("x".into()));
    }

    fn local_rows() -> Vec<LocalRunRow> {
        vec![
            local(
                "export-Orders-1795965752123",
                "export",
                LocalState::Interrupted {
                    why: Interruption::ProcessGone {
                        pid: 4242,
                        host: "laptop".into(),
                    },
                },
                LocalPhase::Export {
                    stage: Some(StackStage::Importing),
                    stopped: false,
                },
            ),
            local(
                "destroy-Orders-1795965700000",
                "destroy",
                LocalState::Ended {
                    outcome: "destroyed".into(),
                },
                LocalPhase::Destroy {
                    waves: 3,
                    settled: 4,
                    total: 4,
                    stop_requested: false,
                },
            ),
            local(
                "export-Orders-1795965600000",
                "export",
                LocalState::Running,
                LocalPhase::Export {
                    stage: Some(StackStage::Updating),
                    stopped: false,
                },
            ),
        ]
    }

    #[test]
    fn local_list_names_kind_stack_status_phase_times_and_the_resume_command() {
        insta::assert_snapshot!(render_local_list(&local_rows()));
        assert_eq!(render_local_list(&[]), "no local runs\n");
    }

    #[test]
    fn local_show_of_an_interrupted_run_names_why_and_the_resume_command() {
        insta::assert_snapshot!(render_local_show_head(&local_rows()[0]));
        let ended = render_local_show_head(&local_rows()[1]);
        assert!(ended.contains("  status:  ended (destroyed)\n"), "{ended}");
        assert!(
            ended.contains("  ended:   2026-11-29T15:23:32Z\n"),
            "{ended}"
        );
        assert!(!ended.contains("resume"), "{ended}");
    }

    #[test]
    fn local_run_json_has_status_outcome_and_resume_command_only_when_interrupted() {
        let v = local_list_json(&local_rows());
        assert_eq!(v[0]["status"], "interrupted");
        assert_eq!(
            v[0]["resumeCommand"],
            "cdkd-flow --state-bucket b export Orders --template orders.json --local -y"
        );
        assert_eq!(v[0]["why"], "its process 4242 on laptop is gone");
        assert_eq!(v[1]["status"], "ended");
        assert_eq!(v[1]["outcome"], "destroyed");
        assert_eq!(v[1]["resumeCommand"], Value::Null);
        assert_eq!(v[2]["status"], "running");
        assert_eq!(v[2]["endDate"], Value::Null);
        assert_eq!(v[0]["stack"], "Orders\u{1b}[2J");
    }

    #[test]
    fn local_final_line_and_success() {
        let rows = local_rows();
        assert_eq!(
            local_final_line(&rows[0]),
            "run export-Orders-1795965752123: interrupted (its process 4242 on laptop is gone); resume with cdkd-flow --state-bucket b export Orders --template orders.json --local -y"
        );
        assert_eq!(
            local_final_line(&rows[1]),
            "run destroy-Orders-1795965700000: ended (destroyed)"
        );
        assert!(local_succeeded(&rows[1]));
        assert!(!local_succeeded(&rows[0]));
        let mut unprintable = rows[0].clone();
        unprintable.run.args.push("a\nb".into());
        assert!(local_final_line(&unprintable).contains("cannot be printed"));
    }

    #[test]
    fn local_answer_of_a_run_that_waits_for_nothing_is_refused_naming_its_state() {
        let rows = local_rows();
        // The decision is `crate::runs::answer_refusal`; its words, the refusal view's.
        let local_answer_refusal = |r: &LocalRunRow, verb: &str, decided: Option<&str>| {
            crate::runs::answer_refusal(&r.run, &r.state, verb, decided).map(|r| r.to_string())
        };
        assert_eq!(
            local_answer_refusal(&rows[0], "approve", None).unwrap(),
            "run export-Orders-1795965752123 is interrupted (its process 4242 on laptop is gone): no export process waits for a decision, so nothing would act on one; nothing to approve. Resume it with cdkd-flow --state-bucket b export Orders --template orders.json --local -y"
        );
        assert_eq!(
            local_answer_refusal(&rows[1], "reject", Some("approved by alice@laptop at 2026-11-29T15:23:32Z")).unwrap(),
            "run destroy-Orders-1795965700000 has ended (destroyed); it was approved by alice@laptop at 2026-11-29T15:23:32Z: no export process waits for a decision, so nothing would act on one; nothing to reject"
        );
        assert_eq!(local_answer_refusal(&rows[2], "approve", None), None);
        let mut elsewhere = rows[2].clone();
        elsewhere.state = LocalState::Unknown {
            why: Unseen::NoLock {
                host: "other-host".into(),
                pid: 1,
            },
        };
        assert_eq!(local_answer_refusal(&elsewhere, "reject", None), None);
    }

    #[test]
    fn local_phases_of_export_and_destroy_runs() {
        use crate::export::execute::{ExportRun, StackProgress};
        use crate::view::export_report::export_phase;
        use crate::view::progress::{destroy_phase, RunProgress};
        let mut run = ExportRun::default();
        assert_eq!(export_phase(&run), "locking");
        for (stack, stage) in [("P~C", StackStage::Migrated), ("P", StackStage::Importing)] {
            run.stacks.push(StackProgress {
                stack: stack.into(),
                stage,
                ..StackProgress::default()
            });
        }
        assert_eq!(export_phase(&run), "importing (phase 1)");
        run.failure = Some("x".into());
        assert_eq!(export_phase(&run), "stopped");
        let p = RunProgress {
            run_id: "r".into(),
            stacks: vec![],
            waves: 2,
            stop_requested: true,
        };
        assert_eq!(
            destroy_phase(&p),
            "wave 2: 0/0 resources settled; stop requested"
        );
        assert_eq!(phase_text(&p.local_phase()), destroy_phase(&p));
        assert_eq!(phase_text(&LocalPhase::of_export(&run)), "stopped");
        assert_eq!(
            phase_text(&LocalPhase::WaitingForApproval),
            "waiting for approval"
        );
    }
}

/// One row per run (docs/runs.md, "Continuing in a new execution"): the executions a run
/// continued in (`<run id>--<n>`) fold into the row of its first execution, which takes
/// the status and end of the latest; a continuation whose first execution is not listed
/// stays a row of its own. The order of the first executions is kept.
pub fn one_row_per_run(rows: Vec<ExecutionRow>) -> Vec<ExecutionRow> {
    use crate::continuation::run_of_execution;
    use std::collections::BTreeMap;
    let firsts: std::collections::BTreeSet<RunId> = rows
        .iter()
        .filter(|r| run_of_execution(&r.name).1 == 1)
        .map(|r| r.name.clone())
        .collect();
    // The latest continuation of each listed run: (number, status, stop, error, cause).
    let mut latest: BTreeMap<String, (u32, ExecutionRow)> = BTreeMap::new();
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let (run, n) = run_of_execution(&r.name);
        if n >= 2 && firsts.contains(run) {
            let run = run.to_string();
            if latest.get(&run).is_none_or(|(m, _)| *m < n) {
                latest.insert(run, (n, r));
            }
        } else {
            out.push(r);
        }
    }
    for r in &mut out {
        if let Some((_, last)) = latest.remove(r.name.as_str()) {
            r.status = last.status;
            r.stop_ms = last.stop_ms;
            r.error = last.error;
            r.cause = last.cause;
        }
    }
    out
}

#[cfg(test)]
mod continued_rows {
    use super::*;

    fn row(name: &str, status: &str, start_ms: i64) -> ExecutionRow {
        ExecutionRow {
            name: name.into(),
            arn: format!("arn:aws:states:us-east-1:1:execution:d:{name}"),
            kind: Some(RunKind::Destroy),
            status: status.into(),
            start_ms,
            stop_ms: None,
            target: Some("Shop".into()),
            error: None,
            cause: None,
        }
    }

    #[test]
    fn a_continued_run_is_one_row_with_its_latest_status() {
        let rows = vec![
            row("d-Shop--3", "RUNNING", 30),
            row("other", "FAILED", 25),
            row("d-Shop--2", "SUCCEEDED", 20),
            row("d-Shop", "SUCCEEDED", 10),
            row("gone--2", "RUNNING", 5),
        ];
        let out = one_row_per_run(rows);
        let names: Vec<(&str, &str)> = out
            .iter()
            .map(|r| (r.name.as_str(), r.status.as_str()))
            .collect();
        assert_eq!(
            names,
            vec![
                ("other", "FAILED"),
                ("d-Shop", "RUNNING"),
                ("gone--2", "RUNNING")
            ]
        );
    }
}
