//! The approval gate of an export run (docs/export.md, "Approval (export-approval)"): `approval.json` under
//! `<prefix>/_runs/<run-id>/`, written by the `export-approval` step with the task
//! token the run waits on, and decided once by `cdkd-flow runs approve|reject`. Every
//! rule about who may write what is here; the step and the CLI only move the bytes
//! (the CLI's write is conditional on the ETag it read, so of two people deciding at
//! once only one wins).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::run::RunId;
use crate::text::flatten_str;

/// The file's name under the run's folder.
pub const APPROVAL_FILE: &str = "approval.json";

/// The error a rejection fails the approval task with (SendTaskFailure's `error`).
pub const REJECTED: &str = "Rejected";

/// The longest `--reason`, in characters (SendTaskFailure takes a cause of 32,768).
pub const MAX_REASON_CHARS: usize = 1000;

/// `<prefix>/_runs/<run-id>/approval.json`.
pub fn approval_key(prefix: &str, run_id: &str) -> String {
    format!(
        "{}/{APPROVAL_FILE}",
        crate::keys::run_prefix(prefix, run_id)
    )
}

/// `approval.json`: one request for one attempt of the approval task, and its decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// The cdkd stack the run exports.
    pub stack: String,
    pub run_id: RunId,
    /// The task token the run waits on (`$$.Task.Token` of this attempt).
    pub token: String,
    /// When the step wrote the request, epoch milliseconds.
    pub requested_ms: i64,
    /// The run's plan (`<prefix>/_runs/<run-id>/plan.json`): what is approved.
    pub plan_key: String,
    pub summary: PlanSummary,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
}

/// The plan's counts, for a person deciding from the request alone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PlanSummary {
    /// Stacks planned (the root and its nested children).
    pub stacks: usize,
    /// Phase-1 import rows over every stack.
    pub import_rows: usize,
    pub warnings: usize,
}

/// A person's answer, once written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub approved: bool,
    /// Who decided: `<user>@<host>` of the CLI that wrote the decision.
    pub by: String,
    /// When, epoch milliseconds.
    pub at_ms: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What the approval step does with the `approval.json` it finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestWrite {
    /// Write a new, undecided request for this token.
    Write,
    /// Leave the file as it is: it is this very attempt's request (the step was invoked
    /// twice for one attempt), decided or not.
    Keep,
}

/// The request to write for `token` over what is there. A request for another token
/// belongs to an attempt that has ended (Step Functions runs a new attempt only after
/// the previous one failed), so nobody can answer it any more: it is replaced, decided
/// or not, and the new request waits for a new decision.
pub fn request_write(existing: Option<&Approval>, token: &str) -> RequestWrite {
    match existing {
        Some(a) if a.token == token => RequestWrite::Keep,
        _ => RequestWrite::Write,
    }
}

/// A `--reason` longer than [`MAX_REASON_CHARS`]: how many characters it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReasonTooLong {
    pub chars: usize,
}

/// A `--reason` as it is stored: one line, none when empty; refused when longer than
/// [`MAX_REASON_CHARS`].
pub fn checked_reason(reason: Option<&str>) -> Result<Option<String>, ReasonTooLong> {
    let Some(r) = reason else { return Ok(None) };
    let flat = flatten_str(r);
    let flat = flat.trim();
    if flat.is_empty() {
        return Ok(None);
    }
    if flat.chars().count() > MAX_REASON_CHARS {
        return Err(ReasonTooLong {
            chars: flat.chars().count(),
        });
    }
    Ok(Some(flat.to_string()))
}

/// What a person answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub approved: bool,
    pub by: String,
    pub at_ms: i64,
    pub reason: Option<String>,
}

/// A request decided already: the run, and who decided, when, how and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlreadyDecided {
    pub run_id: RunId,
    pub decision: Decision,
}

/// The decided record, or why the request may not be decided: it is decided already
/// (naming who decided, when, and how). The reason must have passed
/// [`checked_reason`].
pub fn decide(request: &Approval, answer: Answer) -> Result<Approval, AlreadyDecided> {
    if let Some(d) = &request.decision {
        return Err(AlreadyDecided {
            run_id: request.run_id.clone(),
            decision: d.clone(),
        });
    }
    let by = flatten_str(&answer.by);
    Ok(Approval {
        decision: Some(Decision {
            approved: answer.approved,
            by: if by.is_empty() { "unknown".into() } else { by },
            at_ms: answer.at_ms,
            reason: answer.reason,
        }),
        ..request.clone()
    })
}

/// The cause a rejection fails the run with (and what `runs show` prints after it):
/// the stack exported and the decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    pub stack: String,
    pub decision: Decision,
}

/// How a decision answers the task: SendTaskSuccess with the decision as output, or
/// SendTaskFailure with [`REJECTED`] and the [`Rejection`] as its cause.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskAnswer {
    Success(Value),
    Failure { error: String, cause: Rejection },
}

pub fn task_answer(request: &Approval, d: &Decision) -> TaskAnswer {
    if d.approved {
        TaskAnswer::Success(serde_json::to_value(d).unwrap_or(Value::Null))
    } else {
        TaskAnswer::Failure {
            error: REJECTED.into(),
            cause: Rejection {
                stack: request.stack.clone(),
                decision: d.clone(),
            },
        }
    }
}

/// The decision a local run waiting on `token` acts on: the record's, when the record
/// is this token's and decided.
pub fn decision_for<'a>(record: &'a Approval, token: &str) -> Option<&'a Decision> {
    record.decision.as_ref().filter(|_| record.token == token)
}

/// How a deployed run's approval message names it in its commands: the execution's ARN
/// (`$$.Execution.Id`) when it is one, which `runs approve` finds without the backend
/// stack's outputs or the approver's region; else the run id (docs/export.md, "Approval (export-approval)").
pub fn answer_name<'a>(run_id: &'a str, execution: &'a str) -> &'a str {
    let arn = execution.starts_with("arn:")
        && execution.contains(":states:")
        && execution.contains(":execution:");
    if arn {
        execution
    } else {
        run_id
    }
}

/// A request and answers the tests of the gate and of its words share.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;

    // 2026-11-29T15:22:32Z
    pub const T: i64 = 1_795_965_752_000;

    pub fn request(token: &str) -> Approval {
        Approval {
            stack: "App".into(),
            run_id: "export-App-20261129T152232".into(),
            token: token.into(),
            requested_ms: T,
            plan_key: "cdkd/_runs/export-App-20261129T152232/plan.json".into(),
            summary: PlanSummary {
                stacks: 1,
                import_rows: 3,
                warnings: 0,
            },
            decision: None,
        }
    }

    pub fn answer(approved: bool, reason: Option<&str>) -> Answer {
        Answer {
            approved,
            by: "alice@laptop".into(),
            at_ms: T + 60_000,
            reason: reason.map(str::to_string),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{answer, request, T};
    use super::*;
    use serde_json::json;

    #[test]
    fn approval_json_has_the_documented_shape() {
        let a = decide(&request("tok-1"), answer(false, Some("not today"))).unwrap();
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            json!({
                "stack": "App", "runId": "export-App-20261129T152232", "token": "tok-1",
                "requestedMs": T, "planKey": "cdkd/_runs/export-App-20261129T152232/plan.json",
                "summary": {"stacks": 1, "importRows": 3, "warnings": 0},
                "decision": {"approved": false, "by": "alice@laptop", "atMs": T + 60_000, "reason": "not today"}
            })
        );
        let undecided = serde_json::to_value(request("tok-1")).unwrap();
        assert!(undecided.get("decision").is_none(), "{undecided}");
        let back: Approval = serde_json::from_value(undecided).unwrap();
        assert_eq!(back, request("tok-1"));
        assert_eq!(approval_key("cdkd", "r1"), "cdkd/_runs/r1/approval.json");
    }

    #[test]
    fn the_first_request_of_a_run_is_written() {
        assert_eq!(request_write(None, "tok-1"), RequestWrite::Write);
    }

    #[test]
    fn a_new_token_replaces_an_undecided_request_of_an_earlier_attempt() {
        assert_eq!(
            request_write(Some(&request("tok-1")), "tok-2"),
            RequestWrite::Write
        );
    }

    #[test]
    fn a_new_token_replaces_a_request_decided_for_an_earlier_attempt_whose_task_has_ended() {
        let decided = decide(&request("tok-1"), answer(true, None)).unwrap();
        assert_eq!(request_write(Some(&decided), "tok-2"), RequestWrite::Write);
    }

    #[test]
    fn the_same_token_again_keeps_the_request_and_its_decision() {
        assert_eq!(
            request_write(Some(&request("tok-1")), "tok-1"),
            RequestWrite::Keep
        );
        let decided = decide(&request("tok-1"), answer(false, None)).unwrap();
        assert_eq!(request_write(Some(&decided), "tok-1"), RequestWrite::Keep);
    }

    #[test]
    fn an_undecided_request_may_be_approved_and_the_decision_records_who_when_and_why() {
        let a = decide(&request("tok-1"), answer(true, Some("looks right"))).unwrap();
        assert_eq!(
            a.decision,
            Some(Decision {
                approved: true,
                by: "alice@laptop".into(),
                at_ms: T + 60_000,
                reason: Some("looks right".into())
            })
        );
        assert_eq!(a.token, "tok-1");
        assert_eq!(a.requested_ms, T);
    }

    #[test]
    fn a_reason_is_kept_on_one_line_and_an_empty_one_is_none() {
        assert_eq!(
            checked_reason(Some("two\nlines ")).unwrap(),
            Some("two lines".into())
        );
        assert_eq!(checked_reason(Some("  ")).unwrap(), None);
        assert_eq!(checked_reason(None).unwrap(), None);
        let long = "x".repeat(MAX_REASON_CHARS + 1);
        assert_eq!(
            checked_reason(Some(&long)).unwrap_err(),
            ReasonTooLong { chars: 1001 }
        );
        assert!(checked_reason(Some(&"x".repeat(MAX_REASON_CHARS))).is_ok());
    }

    #[test]
    fn an_approval_answers_the_task_with_the_decision_and_a_rejection_fails_it() {
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
        assert_eq!(
            task_answer(&r, &d),
            TaskAnswer::Failure {
                error: "Rejected".into(),
                cause: Rejection {
                    stack: "App".into(),
                    decision: d.clone()
                }
            }
        );
        let err = decide(&r, answer(true, None)).unwrap_err();
        assert_eq!(err.decision, d);
    }

    #[test]
    fn a_local_run_acts_only_on_a_decision_for_the_token_it_waits_on() {
        let undecided = request("tok-1");
        assert_eq!(decision_for(&undecided, "tok-1"), None);
        let decided = decide(&undecided, answer(true, None)).unwrap();
        assert!(decision_for(&decided, "tok-1").is_some());
        assert_eq!(decision_for(&decided, "tok-2"), None);
    }
}
