//! A destroy run's report (`report.json`) as text, and the words for row outcomes every
//! destroy view shares ([`outcome_phrase`], [`outcome_counts`]). Pure; untrusted text
//! (ids, types, error messages from AWS) is stripped or flattened onto one line.

use crate::destroy::model::{DestroyReport, ReportCounts, RowOutcome, RunResult};
use crate::text::{flatten_str, or_unrenderable, strip};
use crate::view::join_lines;
use crate::view::words::{nonzero_counts, stack_region};

/// The settled records by outcome, `3 deleted, 1 failed`, each outcome named as in a
/// row (docs/destroy.md, "Terms"); `None` when nothing is settled.
pub fn outcome_counts(c: &ReportCounts) -> Option<String> {
    nonzero_counts(&[
        (c.deleted, "deleted"),
        (c.already_gone, "already gone"),
        (c.retained, "retained"),
        (c.skipped, "skipped"),
        (c.failed, "failed"),
        (c.blocked, "blocked"),
        (c.interrupted, "interrupted"),
    ])
}

/// The outcome as a line tail: `deleted`, `failed: <error>`, `blocked by <id>`,
/// `interrupted`.
pub fn outcome_phrase(o: &RowOutcome) -> String {
    match o {
        RowOutcome::Skipped { reason } => format!("skipped: {}", flatten_str(reason)),
        RowOutcome::Failed { error } => format!("failed: {}", flatten_str(error)),
        RowOutcome::Blocked { by } => format!("blocked by {}", or_unrenderable(strip(by))),
        other => other.label().to_string(),
    }
}

/// The destroy report of a run: one block per stack (children first), a row per
/// resource, and what to do next when something is left.
pub fn render_destroy_report(
    stacks: &[DestroyReport],
    complete: bool,
    aborted: Option<&str>,
) -> String {
    let mut out = Vec::new();
    for r in stacks {
        out.push(stack_head(r));
        let cell = |s: &str| or_unrenderable(strip(s));
        let id_w = r
            .rows
            .iter()
            .map(|x| cell(&x.logical_id).chars().count())
            .max()
            .unwrap_or(0);
        let ty_w = r
            .rows
            .iter()
            .map(|x| cell(&x.resource_type).chars().count())
            .max()
            .unwrap_or(0);
        for row in &r.rows {
            let id = cell(&row.logical_id);
            let ty = cell(&row.resource_type);
            let note = row
                .note
                .as_ref()
                .map(|n| format!(" ({})", flatten_str(&n.to_string())))
                .unwrap_or_default();
            out.push(format!(
                "  {id}{}  {ty}{}  {}{note}",
                " ".repeat(id_w - id.chars().count()),
                " ".repeat(ty_w - ty.chars().count()),
                outcome_phrase(&row.outcome)
            ));
        }
        if let Some(next) = &r.next_step {
            out.push(format!("  next: {}", flatten_str(&next.to_string())));
        }
    }
    if let Some(a) = aborted {
        out.push(stopped_line(a));
    }
    out.push(closing_line_of(stacks, complete));
    join_lines(&out)
}

/// The closing line of a report with these stacks: [`closing_line`], or, for a run that
/// ended before its plan (no stack reported: refused, or stopped while planning), that
/// nothing was destroyed.
pub fn closing_line_of(stacks: &[DestroyReport], complete: bool) -> String {
    if stacks.is_empty() && !complete {
        "Nothing was destroyed: the run ended before its plan was made; the state records are as they were.".to_string()
    } else {
        closing_line(complete)
    }
}

/// A stack's head line: `Destroyed Shop (us-east-1): 3 deleted, 1 retained`.
pub fn stack_head(r: &DestroyReport) -> String {
    let head = match r.result {
        RunResult::Clean => "Destroyed",
        RunResult::Partial => "Partly destroyed",
        RunResult::Interrupted => "Interrupted",
    };
    format!(
        "{head} {}: {}",
        stack_region(&r.stack, &r.region),
        outcome_counts(&r.counts).unwrap_or_else(|| "no resources".to_string())
    )
}

/// `The run stopped early: <cause>`.
pub fn stopped_line(cause: &str) -> String {
    format!("The run stopped early: {}", flatten_str(cause))
}

/// The report's last line: whether the records are gone.
pub fn closing_line(complete: bool) -> String {
    if complete {
        "Every stack is destroyed; its state records are deleted.".to_string()
    } else {
        "Not everything was destroyed: the state records keep what is left.".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::destroy::model::{build_report, PlannedRow};
    use std::collections::BTreeMap;

    fn planned(id: &str, ty: &str) -> PlannedRow {
        PlannedRow {
            logical_id: id.into(),
            resource_type: ty.into(),
            physical_id: Some(format!("{id}-phys")),
        }
    }

    #[test]
    fn destroy_report_clean_run_names_every_row() {
        let rows = vec![
            planned("Topic", "AWS::SNS::Topic"),
            planned("Queue", "AWS::SQS::Queue"),
            planned("Keep", "AWS::S3::Bucket"),
        ];
        let mut o = BTreeMap::new();
        o.insert("Topic".to_string(), RowOutcome::Deleted);
        o.insert("Queue".to_string(), RowOutcome::AlreadyGone);
        o.insert("Keep".to_string(), RowOutcome::Retained);
        let r = build_report("run-1", "Shop", "us-east-1", &rows, &o, false);
        insta::assert_snapshot!(render_destroy_report(&[r], true, None));
    }

    #[test]
    fn destroy_report_partial_run_says_what_blocked_what_and_flattens_errors() {
        let rows = vec![
            planned("Role", "AWS::IAM::Role"),
            planned("Policy", "AWS::IAM::Policy"),
            planned("Fn\u{1b}[31m", "AWS::Lambda::Function"),
        ];
        let mut o = BTreeMap::new();
        o.insert(
            "Policy".to_string(),
            RowOutcome::Failed {
                error: "AccessDenied:\nnot allowed".into(),
            },
        );
        o.insert(
            "Role".to_string(),
            RowOutcome::Blocked {
                by: "Policy".into(),
            },
        );
        o.insert("Fn\u{1b}[31m".to_string(), RowOutcome::Deleted);
        let r = build_report("run-2", "Shop", "us-east-1", &rows, &o, false);
        let text = render_destroy_report(&[r], false, Some("Transient: S3\nslow"));
        assert!(
            !text.contains('\u{1b}'),
            "no raw escape reaches the terminal"
        );
        insta::assert_snapshot!(text);
    }

    #[test]
    fn destroy_report_row_whose_delete_may_still_run_carries_the_note() {
        // docs/destroy.md, "Stopping a run": a stop after a crash that lost a handle must say which
        // resources may still be deleting in AWS.
        let rows = vec![
            planned("Db", "AWS::Neptune::DBCluster"),
            planned("Q", "AWS::SQS::Queue"),
        ];
        let mut o = BTreeMap::new();
        o.insert("Q".to_string(), RowOutcome::Deleted);
        let mut r = build_report("run-3", "Shop", "us-east-1", &rows, &o, true);
        crate::destroy::model::note_unconfirmed_deletes(&mut r, &["Db".to_string()]);
        let text = render_destroy_report(&[r], false, Some("stopped"));
        assert!(text.contains("may still be deleting in AWS"), "{text}");
        insta::assert_snapshot!(text);
    }

    #[test]
    fn an_interrupted_row_is_named_interrupted_in_rows_and_counts() {
        // docs/destroy.md, "Terms": the row outcome is `interrupted`; the stack's counts name
        // it the same way.
        let rows = vec![planned("Q", "AWS::SQS::Queue")];
        let r = build_report("run-4", "Shop", "us-east-1", &rows, &BTreeMap::new(), true);
        let text = render_destroy_report(&[r], false, Some("stopped"));
        assert!(
            text.starts_with("Interrupted Shop (us-east-1): 1 interrupted\n"),
            "{text}"
        );
        assert!(
            text.contains("  Q  AWS::SQS::Queue  interrupted\n"),
            "{text}"
        );
        assert!(!text.contains("not attempted"), "{text}");
    }

    #[test]
    fn blocked_by_an_id_that_strips_to_nothing_names_the_placeholder() {
        // A value that strips to nothing is shown as `<unrenderable>`, never as nothing.
        assert_eq!(
            outcome_phrase(&RowOutcome::Blocked {
                by: "\u{1b}".into()
            }),
            "blocked by <unrenderable>"
        );
        let rows = vec![planned("\u{7}", "AWS::SQS::Queue")];
        let mut o = BTreeMap::new();
        o.insert("\u{7}".to_string(), RowOutcome::Deleted);
        let r = build_report("run-5", "\u{1b}", "us-east-1", &rows, &o, false);
        let text = render_destroy_report(&[r], true, None);
        assert!(
            text.starts_with("Destroyed <unrenderable> (us-east-1): 1 deleted\n"),
            "{text}"
        );
        assert!(
            text.contains("  <unrenderable>  AWS::SQS::Queue  deleted\n"),
            "{text}"
        );
    }
}
