//! A run's message for people (docs/notifications.md, "The SNS message"): the [`Notice`] of a run's
//! approval request, of its end or of a cleanup's digest, its lines built from the run's
//! own renderings (the report's stack lines, the cleanup's summary), already one line
//! each; and the SNS subject and text of a notice, which only lay those lines out.

use serde_json::Value;

use crate::destroy::model::{DestroyReport, RowOutcome, RunResult};
use crate::export::approval::Approval;
use crate::export::plain::shown;
use crate::export::report::ExportReport;
use crate::notify::{
    cap_chars, cleanup_outcome, destroy_end_told, export_end, ApprovalDetail, CleanupDigest,
    Notice, NoticeKind, StackEntry, MAX_COMMAND_CHARS, MAX_LINES,
};
use crate::run::{Outcome, RunKind};
use crate::text::{flatten, flatten_str, js_string};
use crate::view::approval::answer_commands;
use crate::view::cleanup::render_cleanup;
use crate::view::export_report::stack_lines;
use crate::view::join_lines;
use crate::view::report::{closing_line_of, outcome_phrase, stack_head, stopped_line};
use crate::view::words::stack_region;

/// SNS takes a subject of fewer than 100 characters, printable ASCII on one line.
pub const MAX_SUBJECT_CHARS: usize = 99;

fn who(n: &Notice) -> String {
    match &n.stack {
        Some(s) => format!("{} {}", n.operation, shown(s)),
        None => n.operation.to_string(),
    }
}

fn cleanup_counts(n: &Notice) -> String {
    let Some(c) = &n.cleanup else {
        return n.outcome.to_string();
    };
    if c.dry_run {
        format!(
            "dry run: {} would be destroyed, {} skipped",
            c.destroyed_count.max(c.destroyed.len()),
            c.skipped_count.max(c.skipped.len())
        )
    } else {
        format!(
            "{}: {} destroyed, {} skipped, {} failed",
            n.outcome,
            c.destroyed_count.max(c.destroyed.len()),
            c.skipped_count.max(c.skipped.len()),
            c.failed_count.max(c.failed.len())
        )
    }
}

/// `cdkd-flow: export App waits for approval`, `cdkd-flow: destroy Shop failed
/// (partial)`, `cdkd-flow: cleanup finished: 2 destroyed, 1 skipped, 0 failed`: printable
/// ASCII (anything else becomes `?`), cut to [`MAX_SUBJECT_CHARS`].
pub fn subject(n: &Notice) -> String {
    let what = match n.kind {
        NoticeKind::ApprovalWaiting => "waits for approval".to_string(),
        NoticeKind::RunSucceeded => n.outcome.to_string(),
        NoticeKind::RunFailed if n.outcome == Outcome::Failed => "failed".to_string(),
        NoticeKind::RunFailed => format!("failed ({})", n.outcome),
        NoticeKind::CleanupFinished => cleanup_counts(n),
    };
    let text = format!("cdkd-flow: {} {what}", who(n));
    let ascii: String = text
        .chars()
        .map(|c| if (' '..='~').contains(&c) { c } else { '?' })
        .collect();
    if ascii.len() <= MAX_SUBJECT_CHARS {
        ascii
    } else {
        format!("{}...", &ascii[..MAX_SUBJECT_CHARS - 3])
    }
}

/// The message's text (the SNS `Message`, what an e-mail subscription shows): the
/// subject's words, the run, the summary, then the cause, the redo lines and the
/// commands under the headings the run's report uses, and where the report is.
pub fn body(n: &Notice) -> String {
    let mut out = vec![subject(n).trim_start_matches("cdkd-flow: ").to_string()];
    out.push(format!("Run: {}", n.run_id));
    if let Some(r) = &n.region {
        out.push(format!("Region: {}", flatten_str(r)));
    }
    out.push(String::new());
    out.extend(n.summary.iter().cloned());
    if let Some(c) = &n.cause {
        out.push(format!("Cause: {c}"));
    }
    let (redo_head, commands_head) = match n.kind {
        NoticeKind::ApprovalWaiting => ("", "Answer with one of:"),
        NoticeKind::RunSucceeded => ("Warnings:", "Check it:"),
        NoticeKind::RunFailed if n.outcome == Outcome::Interrupted => ("Next:", "Resume it:"),
        // Ended before its lock: nothing to do by hand, only what comes next.
        NoticeKind::RunFailed if matches!(n.outcome, Outcome::Refused | Outcome::Rejected) => {
            ("Next:", "Commands:")
        }
        NoticeKind::RunFailed => ("To do by hand:", "Commands:"),
        NoticeKind::CleanupFinished => ("", ""),
    };
    if !n.redo.is_empty() {
        out.push(redo_head.to_string());
        out.extend(n.redo.iter().map(|l| format!("  - {l}")));
    }
    if !n.commands.is_empty() {
        out.push(commands_head.to_string());
        out.extend(n.commands.iter().map(|c| format!("  {c}")));
    }
    if let Some(k) = &n.report_key {
        out.push(String::new());
        out.push(format!("Details: {}", flatten_str(k)));
    }
    join_lines(&out)
}

/// An export run waits for approval: the stack, the plan's counts, the two commands
/// that answer (naming the run as `answer_as`, [`crate::export::approval::answer_name`];
/// `extra`: what a local run's commands add, [`crate::view::approval::local_extra`])
/// and the run id.
pub fn approval_waiting(
    a: &Approval,
    region: Option<&str>,
    approval_key: &str,
    answer_as: &str,
    extra: &str,
) -> Notice {
    let (approve, reject) = answer_commands(answer_as, extra);
    let mut n = Notice::new(
        NoticeKind::ApprovalWaiting,
        RunKind::Export,
        &a.run_id,
        Outcome::WaitingForApproval,
    );
    n.stack = Some(a.stack.clone());
    n.region = region.map(str::to_string);
    n.summary = vec![
        format!(
            "export {}: run {} waits for approval before the lock",
            shown(&a.stack),
            a.run_id
        ),
        format!(
            "plan: {} stack(s), {} resource(s) to import, {} warning(s)",
            a.summary.stacks, a.summary.import_rows, a.summary.warnings
        ),
    ];
    n.commands = vec![approve.clone(), reject.clone()];
    n.report_key = Some(approval_key.to_string());
    n.approval = Some(ApprovalDetail {
        plan: a.summary,
        plan_key: a.plan_key.clone(),
        approve_command: approve,
        reject_command: reject,
    });
    capped(n)
}

/// An export run ended with its report: succeeded when it migrated, else failed (the
/// report's cause, redo lines and commands).
pub fn export_ended(
    r: &ExportReport,
    stack: &str,
    region: Option<&str>,
    report_key: &str,
) -> Notice {
    let mut n = Notice::new(export_end(r), RunKind::Export, &r.run_id, r.outcome.clone());
    n.stack = Some(stack.to_string());
    n.region = region.map(str::to_string);
    n.cause = r.cause.as_deref().map(flatten_str);
    n.summary = stack_lines(r);
    n.redo = r.redo.iter().map(|l| flatten_str(&l.to_string())).collect();
    n.commands = r.commands.clone();
    n.report_key = Some(report_key.to_string());
    capped(n)
}

/// A destroy run ended with its report (children first, the root last): succeeded when
/// every stack is destroyed, else failed, with what is left to do (failed and blocked
/// rows, each stack's next step). `refused`: it ended before its plan was made (outcome
/// `refused`; nothing was deleted, and nothing is advised).
#[allow(clippy::too_many_arguments)]
pub fn destroy_ended(
    run_id: &str,
    stack: &str,
    region: &str,
    stacks: &[DestroyReport],
    complete: bool,
    aborted: Option<&str>,
    refused: bool,
    report_key: &str,
) -> Notice {
    let interrupted = stacks.iter().any(|s| s.result == RunResult::Interrupted);
    let (kind, outcome) = destroy_end_told(complete, refused, aborted.is_some(), interrupted);
    let mut n = Notice::new(kind, RunKind::Destroy, run_id, outcome);
    n.stack = Some(stack.to_string());
    // A run refused before its plan may not know its region.
    n.region = (!region.is_empty()).then(|| region.to_string());
    n.cause = aborted.map(flatten_str);
    n.summary = stacks.iter().map(stack_head).collect();
    if let Some(a) = aborted {
        n.summary.push(stopped_line(a));
    }
    n.summary.push(closing_line_of(stacks, complete));
    for s in stacks {
        for row in &s.rows {
            if matches!(
                row.outcome,
                RowOutcome::Failed { .. } | RowOutcome::Blocked { .. }
            ) {
                n.redo.push(format!(
                    "{}: {} ({}) {}",
                    stack_region(&s.stack, &s.region),
                    flatten_str(&row.logical_id),
                    flatten_str(&row.resource_type),
                    outcome_phrase(&row.outcome)
                ));
            }
        }
        if let Some(next) = &s.next_step {
            n.redo.push(format!(
                "{}: next: {}",
                stack_region(&s.stack, &s.region),
                flatten_str(&next.to_string())
            ));
        }
    }
    n.report_key = Some(report_key.to_string());
    capped(n)
}

fn entries(out: &Value, key: &str, f: impl Fn(&Value, &mut StackEntry)) -> Vec<StackEntry> {
    out.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|v| {
                    let mut e = StackEntry {
                        stack: js_string(v.get("stack").unwrap_or(&Value::Null)),
                        region: v
                            .get("stackRegion")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        ..StackEntry::default()
                    };
                    f(v, &mut e);
                    e
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A cleanup ended: its summary (the cleanup workflow's `Summary`, or `DryRunSummary`,
/// output) as a digest: what it destroyed (or would), skipped and why, and what failed.
pub fn cleanup_finished(run_id: &str, out: &Value) -> Notice {
    let dry = out.get("dryRun").and_then(Value::as_bool).unwrap_or(false);
    let failed = entries(out, "failed", |v, e| {
        e.error = Some(format!(
            "{}: {}",
            flatten(v.get("error")),
            cap_chars(&flatten(v.get("cause")))
        ))
    });
    // A cleanup that could not finish (its `Failed` state: the error it caught).
    let broke = out.get("error").filter(|e| !e.is_null());
    let any_failed =
        !failed.is_empty() || out.get("failedCount").and_then(Value::as_u64).unwrap_or(0) != 0;
    let outcome = cleanup_outcome(broke.is_some(), dry, any_failed);
    let mut n = Notice::new(
        NoticeKind::CleanupFinished,
        RunKind::Cleanup,
        run_id,
        outcome,
    );
    n.cause = broke.map(|e| format!("{}: {}", flatten(Some(e)), flatten(out.get("cause"))));
    n.summary = render_cleanup(out).lines().map(str::to_string).collect();
    let destroyed = entries(out, if dry { "selected" } else { "succeeded" }, |_, _| {});
    let skipped = entries(out, "skipped", |v, e| {
        e.reason = Some(flatten(v.get("reason")))
    });
    // The lists, or the summary's counts when the lists could not be read.
    let counted = |list: &Vec<StackEntry>, key: &str| {
        let n = out.get(key).and_then(Value::as_u64).unwrap_or(0);
        list.len().max(usize::try_from(n).unwrap_or(usize::MAX))
    };
    n.cleanup = Some(CleanupDigest {
        dry_run: dry,
        destroyed_count: counted(
            &destroyed,
            if dry {
                "selectedCount"
            } else {
                "succeededCount"
            },
        ),
        skipped_count: counted(&skipped, "skippedCount"),
        failed_count: counted(&failed, "failedCount"),
        destroyed,
        skipped,
        failed,
    });
    capped(n)
}

/// Cuts every list at [`MAX_LINES`] and every line at [`crate::notify::MAX_LINE_CHARS`].
fn capped(mut n: Notice) -> Notice {
    let mut cut = false;
    for list in [&mut n.summary, &mut n.redo] {
        cut |= cap_lines(list);
    }
    cut |= cap_commands(&mut n.commands);
    if let Some(c) = &mut n.cleanup {
        for list in [&mut c.destroyed, &mut c.skipped, &mut c.failed] {
            if list.len() > MAX_LINES {
                list.truncate(MAX_LINES);
                cut = true;
            }
        }
    }
    n.cause = n.cause.map(|c| cap_chars(&c));
    n.truncated = cut;
    n
}

/// A command is never cut inside (a cut command would run with its last flags lost):
/// one longer than [`MAX_COMMAND_CHARS`] is left out whole, and so are those past
/// [`MAX_LINES`]; a last line then says how many, and that the report has them. True
/// when any was left out.
fn cap_commands(list: &mut Vec<String>) -> bool {
    let before = list.len();
    list.retain(|c| c.chars().count() <= MAX_COMMAND_CHARS);
    if list.len() > MAX_LINES {
        list.truncate(MAX_LINES - 1);
    }
    let left_out = before - list.len();
    if left_out == 0 {
        return false;
    }
    list.push(format!(
        "… {left_out} more command(s) in the run's report (too long for a message)"
    ));
    true
}

/// True when the list was cut; its last line then says how many more there were.
fn cap_lines(list: &mut Vec<String>) -> bool {
    for l in list.iter_mut() {
        *l = cap_chars(l);
    }
    if list.len() <= MAX_LINES {
        return false;
    }
    let more = list.len() - (MAX_LINES - 1);
    list.truncate(MAX_LINES - 1);
    list.push(format!("… and {more} more in the run's report"));
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::destroy::model::{build_report, PlannedRow, RowOutcome};
    use crate::export::approval::{Approval, PlanSummary};
    use crate::export::execute::StackStage;
    use crate::export::report::{ended_early, ExportReport, StackReport};
    use crate::notify::DETAIL_VERSION;
    use crate::view::approval::local_extra;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn request() -> Approval {
        Approval {
            stack: "App".into(),
            run_id: "export-App-20261129T152232".into(),
            token: "tok-1".into(),
            requested_ms: 1_795_965_752_000,
            plan_key: "cdkd/_runs/export-App-20261129T152232/plan.json".into(),
            summary: PlanSummary {
                stacks: 2,
                import_rows: 7,
                warnings: 1,
            },
            decision: None,
        }
    }

    fn export_report(outcome: &str) -> ExportReport {
        ExportReport {
            run_id: "export-App-1".into(),
            kind: "export".into(),
            outcome: outcome.into(),
            cause: (outcome == "failed").then(|| "ChangeSetFailed: Resource\nQueue exists".into()),
            stacks: vec![StackReport {
                stack: "App".into(),
                cfn_stack_name: "App".into(),
                stage: if outcome == "failed" {
                    StackStage::Importing
                } else {
                    StackStage::Cleaned
                },
                imported_resources: 3,
                record_deleted: outcome != "failed",
            }],
            redo: if outcome == "failed" {
                vec![crate::export::redo::Redo::Recorded(
                    "App: delete the stack App CloudFormation left in REVIEW_IN_PROGRESS".into(),
                )]
            } else {
                vec![]
            },
            commands: vec![
                "aws cloudformation describe-stacks --stack-name App --region us-east-1".into(),
            ],
            unmanaged: vec![],
        }
    }

    fn rendered(n: &Notice) -> String {
        format!(
            "subject: {}\ndetail-type: {}\n---\n{}---\n{}",
            subject(n),
            n.kind.detail_type(),
            body(n),
            serde_json::to_string_pretty(n).unwrap()
        )
    }

    #[test]
    fn approval_message_names_the_stack_the_plan_the_two_commands_and_the_run() {
        let n = approval_waiting(
            &request(),
            Some("us-east-1"),
            "cdkd/_runs/export-App-20261129T152232/approval.json",
            "export-App-20261129T152232",
            "",
        );
        assert_eq!(n.version, DETAIL_VERSION);
        let text = body(&n);
        assert!(
            text.contains("cdkd-flow runs approve export-App-20261129T152232\n"),
            "{text}"
        );
        assert!(
            text.contains("cdkd-flow runs reject export-App-20261129T152232 --reason"),
            "{text}"
        );
        insta::assert_snapshot!(rendered(&n));
    }

    #[test]
    fn approval_message_of_a_deployed_run_names_its_execution_arn_found_from_any_region() {
        let arn = "arn:aws:states:eu-west-1:123456789012:execution:cdkd-flow-export:export-App-20261129T152232";
        let name = crate::export::approval::answer_name("export-App-20261129T152232", arn);
        let n = approval_waiting(&request(), Some("us-east-1"), "k", name, "");
        assert_eq!(n.commands[0], format!("cdkd-flow runs approve {arn}"));
        // Not an execution ARN (an engine's id, nothing): the run id.
        for other in [
            "",
            "local:exec",
            "arn:aws:states:eu-west-1:1:stateMachine:x",
        ] {
            assert_eq!(
                crate::export::approval::answer_name("r1", other),
                "r1",
                "{other}"
            );
        }
    }

    #[test]
    fn approval_message_of_a_local_run_names_where_its_request_is() {
        let n = approval_waiting(
            &request(),
            None,
            "k",
            "export-App-20261129T152232",
            &local_extra("b", "cdkd"),
        );
        assert_eq!(
            n.commands[0],
            "cdkd-flow runs approve export-App-20261129T152232 --local --state-bucket b"
        );
    }

    #[test]
    fn export_success_message_carries_the_report_summary() {
        let n = export_ended(
            &export_report("migrated"),
            "App",
            Some("us-east-1"),
            "cdkd/_runs/export-App-1/report.json",
        );
        assert_eq!(n.kind, NoticeKind::RunSucceeded);
        insta::assert_snapshot!(rendered(&n));
    }

    #[test]
    fn export_failure_message_carries_the_cause_and_the_redo_lines_flattened() {
        let n = export_ended(
            &export_report("failed"),
            "App",
            None,
            "cdkd/_runs/export-App-1/report.json",
        );
        assert_eq!(n.kind, NoticeKind::RunFailed);
        assert_eq!(
            n.cause.as_deref(),
            Some("ChangeSetFailed: Resource Queue exists")
        );
        insta::assert_snapshot!(rendered(&n));
    }

    /// The notice of a destroy of Shop's two rows with these outcomes.
    fn shop(o: &BTreeMap<String, RowOutcome>, complete: bool, aborted: Option<&str>) -> Notice {
        let (rows, _) = destroy_rows();
        let r = build_report("destroy-Shop-1", "Shop", "us-east-1", &rows, o, false);
        destroy_ended(
            "destroy-Shop-1",
            "Shop",
            "us-east-1",
            &[r],
            complete,
            aborted,
            false,
            "cdkd/_runs/destroy-Shop-1/report.json",
        )
    }

    fn destroy_rows() -> (Vec<PlannedRow>, BTreeMap<String, RowOutcome>) {
        let rows = vec![
            PlannedRow {
                logical_id: "Topic".into(),
                resource_type: "AWS::SNS::Topic".into(),
                physical_id: Some("arn:topic".into()),
            },
            PlannedRow {
                logical_id: "Queue".into(),
                resource_type: "AWS::SQS::Queue".into(),
                physical_id: Some("q".into()),
            },
        ];
        (rows, BTreeMap::new())
    }

    #[test]
    fn destroy_success_message_summarises_each_stack() {
        let (_, mut o) = destroy_rows();
        o.insert("Topic".into(), RowOutcome::Deleted);
        o.insert("Queue".into(), RowOutcome::Deleted);
        let n = shop(&o, true, None);
        assert_eq!(n.kind, NoticeKind::RunSucceeded);
        insta::assert_snapshot!(rendered(&n));
    }

    #[test]
    fn destroy_failure_message_lists_failed_and_blocked_rows_and_the_next_step() {
        let (_, mut o) = destroy_rows();
        o.insert(
            "Queue".into(),
            RowOutcome::Failed {
                error: "AccessDenied:\nnot allowed".into(),
            },
        );
        o.insert("Topic".into(), RowOutcome::Blocked { by: "Queue".into() });
        let n = shop(&o, false, None);
        assert_eq!(
            (n.kind, n.outcome.as_str()),
            (NoticeKind::RunFailed, "partial")
        );
        insta::assert_snapshot!(rendered(&n));
    }

    #[test]
    fn destroy_abort_message_says_what_stopped_it() {
        let n = shop(
            &BTreeMap::new(),
            false,
            Some("LockLost: the lock\nwas taken"),
        );
        assert_eq!(n.outcome, "failed");
        assert_eq!(n.cause.as_deref(), Some("LockLost: the lock was taken"));
        assert!(
            subject(&n).ends_with("destroy Shop failed"),
            "{}",
            subject(&n)
        );
    }

    #[test]
    fn cleanup_digest_says_what_it_destroyed_skipped_and_why_and_what_failed() {
        let out = json!({"dryRun": false,
            "selected": [{"stack": "preview-1", "stackRegion": "us-east-1"}, {"stack": "preview-2", "stackRegion": "eu-west-1"}],
            "skipped": [{"stack": "preview-3", "stackRegion": "us-east-1", "reason": "locked"}],
            "succeeded": [{"stack": "preview-1", "stackRegion": "us-east-1", "status": "SUCCEEDED"}],
            "failed": [{"stack": "preview-2", "stackRegion": "eu-west-1", "status": "FAILED", "error": "LockHeld", "cause": "held by\nbob"}],
            "succeededCount": 1, "failedCount": 1});
        let n = cleanup_finished("cleanup-preview-1", &out);
        assert_eq!(n.outcome, "incomplete");
        insta::assert_snapshot!(rendered(&n));
    }

    #[test]
    fn cleanup_dry_run_digest_says_what_would_be_destroyed() {
        let out = json!({"dryRun": true,
            "selected": [{"stack": "preview-1", "stackRegion": "us-east-1"}],
            "skipped": []});
        let n = cleanup_finished("cleanup-preview-2", &out);
        assert_eq!(
            subject(&n),
            "cdkd-flow: cleanup dry run: 1 would be destroyed, 0 skipped"
        );
        assert_eq!(n.cleanup.as_ref().map(|c| c.destroyed.len()), Some(1));
    }

    #[test]
    fn cleanup_digest_of_300_destroyed_counts_them_all_and_lists_30() {
        let ok: Vec<_> = (0..300)
            .map(|i| json!({"stack": format!("pr-{i}"), "stackRegion": "us-east-1", "status": "SUCCEEDED"}))
            .collect();
        let skipped: Vec<_> = (0..4700)
            .map(|i| json!({"stack": format!("main-{i}"), "stackRegion": "us-east-1", "reason": "pattern-mismatch"}))
            .collect();
        let out = json!({"dryRun": false, "selected": ok.clone(), "skipped": skipped,
            "succeeded": ok, "failed": [], "succeededCount": 300, "failedCount": 0});
        let n = cleanup_finished("cleanup-pr-1", &out);
        assert_eq!(
            subject(&n),
            "cdkd-flow: cleanup finished: 300 destroyed, 4700 skipped, 0 failed"
        );
        let c = n.cleanup.as_ref().unwrap();
        assert_eq!((c.destroyed.len(), c.destroyed_count), (30, 300));
        assert_eq!((c.skipped.len(), c.skipped_count), (30, 4700));
        assert!(n.truncated);
        assert!(serde_json::to_vec(&n).unwrap().len() < 64 * 1024);
    }

    #[test]
    fn cleanup_that_could_not_finish_says_it_failed_and_why() {
        let out = json!({"error": "States.TaskFailed", "cause": "the state bucket\nis gone",
            "selected": [{"stack": "pr-1", "stackRegion": "us-east-1"}], "skipped": [],
            "succeeded": [], "failed": []});
        let n = cleanup_finished("cleanup-pr-2", &out);
        assert_eq!(n.outcome, "failed");
        assert_eq!(
            n.cause.as_deref(),
            Some("States.TaskFailed: the state bucket is gone")
        );
        assert!(
            subject(&n).starts_with("cdkd-flow: cleanup failed: 0 destroyed"),
            "{}",
            subject(&n)
        );
        assert!(
            n.summary[0].starts_with("cleanup failed: States.TaskFailed"),
            "{:?}",
            n.summary
        );
    }

    #[test]
    fn subject_is_printable_ascii_under_100_characters() {
        let mut a = request();
        a.stack = format!("Ördérs\u{1b}[2J{}", "x".repeat(200));
        let n = approval_waiting(&a, None, "k", &a.run_id, "");
        let s = subject(&n);
        assert!(s.len() <= MAX_SUBJECT_CHARS, "{}", s.len());
        assert!(s.chars().all(|c| (' '..='~').contains(&c)), "{s}");
        assert!(!body(&n).contains('\u{1b}'));
    }

    #[test]
    fn a_command_is_never_cut_inside_a_long_one_is_left_to_the_report() {
        let mut r = export_report("failed");
        let long = format!(
            "cdkd-flow export App --local {} --state-bucket b",
            "--parameter K=<value> ".repeat(200)
        );
        r.commands = vec![long.clone(), "cdkd-flow runs show r".into()];
        let n = export_ended(&r, "App", Some("us-east-1"), "k");
        assert!(n.truncated);
        assert_eq!(n.commands[0], "cdkd-flow runs show r");
        assert!(n.commands[1].contains("more command(s) in the run's report"));
        let text = body(&n);
        assert!(
            !text.contains("--parameter K=<value> --parameter"),
            "{text}"
        );
        // A command that fits is carried whole, however far past a line's cut.
        r.commands = vec![long[..600].to_string()];
        let n = export_ended(&r, "App", Some("us-east-1"), "k");
        assert_eq!(n.commands, [long[..600].to_string()]);
    }

    #[test]
    fn a_report_of_many_rows_is_cut_in_the_message() {
        let rows: Vec<PlannedRow> = (0..100)
            .map(|i| PlannedRow {
                logical_id: format!("Q{i}"),
                resource_type: "AWS::SQS::Queue".into(),
                physical_id: Some(format!("q{i}")),
            })
            .collect();
        let o: BTreeMap<String, RowOutcome> = rows
            .iter()
            .map(|r| {
                (
                    r.logical_id.clone(),
                    RowOutcome::Failed {
                        error: "x".repeat(2000),
                    },
                )
            })
            .collect();
        let r = build_report("d", "Shop", "us-east-1", &rows, &o, false);
        let n = destroy_ended("d", "Shop", "us-east-1", &[r], false, None, false, "k");
        assert!(n.truncated);
        assert_eq!(n.redo.len(), crate::notify::MAX_LINES);
        assert!(serde_json::to_vec(&n).unwrap().len() < 64 * 1024);
    }

    /// The message of a run that ended before its lock (a deployed
    /// one's `*Failed` states, a local one's refusal): outcome `refused`, the cause
    /// without the force-unlock advice, nothing to do by hand but what comes next.
    #[test]
    fn export_refused_at_its_lock_message_names_the_holder_and_advises_no_unlock() {
        let r = ended_early(
            "export-App-1",
            None,
            "LockHeld",
            &crate::view::contention::refused_cause(
                "LockHeld",
                "Could not acquire lock for stack App (us-east-1) \u{2014} held by alice@laptop (deploy). That process is still running \u{2014} wait for it to finish. Only if you are certain it is gone, run: cdkd-flow force-unlock App --stack-region us-east-1; nothing was submitted",
            ),
            None,
        );
        let n = export_ended(
            &r,
            "App",
            Some("us-east-1"),
            "cdkd/_runs/export-App-1/report.json",
        );
        assert_eq!(n.kind, NoticeKind::RunFailed);
        assert_eq!(subject(&n), "cdkd-flow: export App failed (refused)");
        let text = rendered(&n);
        assert!(
            !text.contains("force-unlock") && !text.contains("To do by hand"),
            "{text}"
        );
        insta::assert_snapshot!(text);
    }

    #[test]
    fn destroy_refused_before_its_plan_message_says_nothing_was_destroyed() {
        let n = destroy_ended(
            "destroy-Shop-1",
            "Shop",
            "us-east-1",
            &[],
            false,
            Some("Refused: Shop is exported to CloudFormation"),
            true,
            "cdkd/_runs/destroy-Shop-1/report.json",
        );
        assert_eq!(n.outcome, "refused");
        assert_eq!(subject(&n), "cdkd-flow: destroy Shop failed (refused)");
        assert!(n.redo.is_empty() && n.commands.is_empty(), "{n:?}");
        insta::assert_snapshot!(rendered(&n));
    }

    #[test]
    fn long_lists_are_cut_and_say_how_many_more() {
        let mut lines: Vec<String> = (0..45).map(|i| format!("line {i}")).collect();
        assert!(cap_lines(&mut lines));
        assert_eq!(lines.len(), crate::notify::MAX_LINES);
        assert_eq!(lines.last().unwrap(), "… and 16 more in the run's report");
        let long = "x".repeat(crate::notify::MAX_LINE_CHARS + 10);
        assert_eq!(
            cap_chars(&long).chars().count(),
            crate::notify::MAX_LINE_CHARS
        );
    }
}
