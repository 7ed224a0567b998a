//! The words of an export's approval gate (docs/export.md, "Approval (export-approval)"):
//! the line printed while a run waits, what `runs show` says about the approval, the
//! commands that answer it, and the refusals and the rejection cause the decisions of
//! `export::approval` return.

use std::fmt;

use crate::export::approval::MAX_REASON_CHARS;
use crate::export::approval::{AlreadyDecided, Approval, Decision, ReasonTooLong, Rejection};
use crate::export::plain::shown;
use crate::text::{flatten_str, shell_quote};
use crate::time::iso_seconds;
use crate::view::refusal::TypedRefusal;

fn verb(d: &Decision) -> &'static str {
    if d.approved {
        "approved"
    } else {
        "rejected"
    }
}

fn with_reason(d: &Decision) -> String {
    match &d.reason {
        Some(r) => format!(": {}", flatten_str(r)),
        None => String::new(),
    }
}

/// `run <run> was already approved by <by> at <time>[: <reason>]; nothing was changed`.
impl fmt::Display for AlreadyDecided {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.decision;
        write!(
            f,
            "run {} was already {} by {} at {}{}; nothing was changed",
            self.run_id,
            verb(d),
            flatten_str(&d.by),
            iso_seconds(d.at_ms),
            with_reason(d)
        )
    }
}

impl TypedRefusal for AlreadyDecided {}

/// `export of <stack> rejected by <by>[: <reason>]; nothing was locked or changed`.
impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "export of {} rejected by {}{}; nothing was locked or changed",
            shown(&self.stack),
            flatten_str(&self.decision.by),
            with_reason(&self.decision)
        )
    }
}

impl fmt::Display for ReasonTooLong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the reason has {} characters; at most {MAX_REASON_CHARS} are kept",
            self.chars
        )
    }
}

/// `cdkd-flow runs approve <run>` / `reject`, with the options a local run's commands
/// need (`--local --state-bucket ...`), as printed while the run waits.
pub fn answer_commands(run_id: &str, extra: &str) -> (String, String) {
    let extra = if extra.is_empty() {
        String::new()
    } else {
        format!(" {extra}")
    };
    (
        format!("cdkd-flow runs approve {run_id}{extra}"),
        format!("cdkd-flow runs reject {run_id}{extra} --reason '...'"),
    )
}

/// What a local run's answer commands add (the run's request is found through the
/// bucket, not a state machine): `--local --state-bucket B`, and `--state-prefix P` when
/// not the default; each value shell-quoted when it is not plain, so a pasted command
/// names the same bucket and prefix and runs nothing else.
pub fn local_extra(bucket: &str, prefix: &str) -> String {
    let mut e = format!(
        "--local --state-bucket {}",
        shell_quote(&flatten_str(bucket))
    );
    if prefix != crate::keys::DEFAULT_PREFIX {
        e.push_str(&format!(
            " --state-prefix {}",
            shell_quote(&flatten_str(prefix))
        ));
    }
    e
}

/// The one line printed when an export waits for approval.
pub fn waiting_line(stack: &str, run_id: &str, extra: &str) -> String {
    let (approve, reject) = answer_commands(run_id, extra);
    format!(
        "export {}: run {} waits for approval before the lock; answer with: {approve}  or: {reject}",
        shown(stack),
        flatten_str(run_id)
    )
}

/// What `runs show` prints about a run's approval (before its plan).
pub fn render_status(a: &Approval) -> String {
    match &a.decision {
        None => {
            let (approve, reject) = answer_commands(&a.run_id, "");
            format!(
                "  waiting for approval since {} ({} stack(s), {} resource(s) to import, {} warning(s))\n  answer with: {approve}\n           or: {reject}\n",
                iso_seconds(a.requested_ms),
                a.summary.stacks,
                a.summary.import_rows,
                a.summary.warnings
            )
        }
        Some(d) => format!(
            "  {} by {} at {}{}\n",
            verb(d),
            flatten_str(&d.by),
            iso_seconds(d.at_ms),
            with_reason(d)
        ),
    }
}

/// `approved by <by> at <time>[: <reason>]`: a decided request's decision on one line, as
/// `runs show` says it.
pub fn decision_words(a: &Approval) -> String {
    render_status(a).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::approval::fixtures::{answer, request, T};
    use crate::export::approval::{decide, task_answer, TaskAnswer};
    use serde_json::json;

    #[test]
    fn a_decided_request_may_not_be_decided_again_and_the_refusal_names_who_decided() {
        let a = decide(&request("tok-1"), answer(false, Some("wrong account"))).unwrap();
        let mut bob = answer(true, None);
        bob.by = "bob@desk".into();
        let err = decide(&a, bob).unwrap_err().to_string();
        assert_eq!(
            err,
            "run export-App-20261129T152232 was already rejected by alice@laptop at 2026-11-29T15:23:32Z: wrong account; nothing was changed"
        );
        let approved = decide(&request("tok-1"), answer(true, None)).unwrap();
        let err = decide(&approved, answer(false, None))
            .unwrap_err()
            .to_string();
        assert!(err.contains("already approved by alice@laptop"), "{err}");
    }

    #[test]
    fn an_approval_answers_the_task_with_the_decision_and_a_rejection_fails_it_naming_who_and_why()
    {
        let a = decide(&request("tok-1"), answer(true, None)).unwrap();
        let d = a.decision.clone().unwrap();
        assert_eq!(
            task_answer(&a, &d),
            TaskAnswer::Success(
                json!({"approved": true, "by": "alice@laptop", "atMs": T + 60_000})
            )
        );
        let r = decide(&request("tok-1"), answer(false, Some("not today"))).unwrap();
        let d = r.decision.clone().unwrap();
        let TaskAnswer::Failure { error, cause } = task_answer(&r, &d) else {
            panic!("a rejection fails the task");
        };
        assert_eq!(error, "Rejected");
        assert_eq!(
            cause.to_string(),
            "export of App rejected by alice@laptop: not today; nothing was locked or changed"
        );
    }

    #[test]
    fn the_waiting_line_names_both_commands() {
        let line = waiting_line("App", "export-App-1", "--local --state-bucket b");
        assert_eq!(
            line,
            "export App: run export-App-1 waits for approval before the lock; answer with: cdkd-flow runs approve export-App-1 --local --state-bucket b  or: cdkd-flow runs reject export-App-1 --local --state-bucket b --reason '...'"
        );
        assert!(!line.contains('\n'));
    }

    #[test]
    fn runs_show_says_a_run_waits_with_the_commands_or_who_decided() {
        let s = render_status(&request("tok-1"));
        assert!(s.starts_with("  waiting for approval since 2026-11-29T15:22:32Z (1 stack(s), 3 resource(s) to import, 0 warning(s))"), "{s}");
        assert!(
            s.contains("cdkd-flow runs approve export-App-20261129T152232\n"),
            "{s}"
        );
        assert!(
            s.contains("cdkd-flow runs reject export-App-20261129T152232 --reason"),
            "{s}"
        );
        let d = decide(&request("tok-1"), answer(true, Some("ok"))).unwrap();
        assert_eq!(
            render_status(&d),
            "  approved by alice@laptop at 2026-11-29T15:23:32Z: ok\n"
        );
    }

    /// Every word of the gate, with hostile values where a read value is printed.
    #[test]
    fn approval_words_with_hostile_values() {
        let hostile = Decision {
            approved: false,
            by: "mallory@\x1b[2Jbox\nline".into(),
            at_ms: T,
            reason: Some("two\nlines\x1b[31m red".into()),
        };
        let mut req = request("tok-1");
        req.stack = "App\nFake line".into();
        let lines = [
            AlreadyDecided {
                run_id: req.run_id.clone(),
                decision: hostile.clone(),
            }
            .to_string(),
            Rejection {
                stack: req.stack.clone(),
                decision: hostile.clone(),
            }
            .to_string(),
            ReasonTooLong { chars: 1001 }.to_string(),
            waiting_line(&req.stack, "export-App-1", &local_extra("b\nx", "p re")),
            render_status(&req),
            render_status(&Approval {
                decision: Some(hostile),
                ..req.clone()
            }),
        ];
        insta::assert_snapshot!(lines.join("\n---\n"));
    }

    /// A prefix or bucket that is not plain is quoted in the printed commands: pasted,
    /// they name the same values and run nothing else.
    #[test]
    fn local_answer_commands_quote_a_prefix_that_is_not_plain() {
        assert_eq!(
            local_extra("my-bucket", "cdkd"),
            "--local --state-bucket my-bucket"
        );
        assert_eq!(
            local_extra("my-bucket", "team/cdkd"),
            "--local --state-bucket my-bucket --state-prefix team/cdkd"
        );
        assert_eq!(
            local_extra("my-bucket", "p; rm -rf ~"),
            "--local --state-bucket my-bucket --state-prefix 'p; rm -rf ~'"
        );
        assert_eq!(
            local_extra("b", "it's"),
            "--local --state-bucket b --state-prefix 'it'\\''s'"
        );
    }
}
