//! The words of why an export run stops (docs/export.md, "Workflow" and "Waiting
//! (export-poll)"): a change set that failed, a stack operation that failed and the
//! resources its events name, a wait given up, a run in which no work can start. The
//! steps put these words into the failure the run records (`progress.json`, the report),
//! as they always did; CloudFormation's reasons and statuses and the names are
//! flattened onto one line where they are printed.

use std::fmt;

use crate::export::execute::{
    ChangeSetFailure, ChangeSetState, ChangeSetStop, FailedResource, GaveUp, NoWorkCanStart,
    Pending, StackFailure,
};
use crate::text::flatten_str;

impl fmt::Display for ChangeSetFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChangeSetFailure::NotExecutable { execution } => write!(
                f,
                "the change set cannot be executed (execution status {execution})"
            ),
            ChangeSetFailure::Reason(reason) => f.write_str(&flatten_str(reason)),
            ChangeSetFailure::Deleted { status } => {
                write!(f, "the change set was deleted ({status})")
            }
            ChangeSetFailure::UnexpectedStatus { status } => {
                write!(f, "unexpected change set status {}", flatten_str(status))
            }
        }
    }
}

impl fmt::Display for ChangeSetStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChangeSetStop::NoChanges { phase } => write!(
                f,
                "{} change set FAILED: it holds no changes",
                phase.change_set_type()
            ),
            ChangeSetStop::Failed { phase, cause } => {
                write!(f, "{} change set FAILED: {cause}", phase.change_set_type())
            }
        }
    }
}

/// A change set's state as the execute step's failure names it: the state's debug form,
/// a failure's cause as a quoted string (`Pending`, `NoChanges`, `Failed("...")`).
pub fn change_set_state_named(state: &ChangeSetState) -> String {
    match state {
        ChangeSetState::Failed(cause) => format!("Failed({:?})", cause.to_string()),
        other => format!("{other:?}"),
    }
}

/// `<STATUS>` or `<STATUS>: <reason>`.
impl fmt::Display for StackFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.reason {
            Some(r) => write!(f, "{}: {}", self.status, flatten_str(r)),
            None => f.write_str(&self.status),
        }
    }
}

/// `<LogicalId> (<Type>): <reason>`.
impl fmt::Display for FailedResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}): {}",
            flatten_str(&self.logical_id),
            self.resource_type
                .as_deref()
                .map(flatten_str)
                .unwrap_or_else(|| "<unknown>".into()),
            self.reason
                .as_deref()
                .map(flatten_str)
                .unwrap_or_else(|| "<no reason reported>".into())
        )
    }
}

impl fmt::Display for GaveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.pending {
            Pending::ChangeSet { .. } => "the change set to be created",
            Pending::Stack { .. } => "the stack operation to finish",
        };
        write!(
            f,
            "{}: gave up waiting for {what} after {} s (ceiling {} s)",
            self.pending.phase().label(),
            self.waited_s,
            self.pending.ceiling_s()
        )
    }
}

impl fmt::Display for NoWorkCanStart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "export run {}: no work can start for {} and nothing is in flight",
            self.run_id,
            flatten_str(&self.stack)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::execute::{change_set_state, failure_lines, next_action, StackEvent};
    use crate::export::phases::Phase;
    use crate::export::plan::{Plan, StackPlan};

    fn s(v: &str) -> String {
        v.to_string()
    }

    /// Every way a change set, a stack operation or a wait stops a run, hostile values
    /// wherever CloudFormation's words or a name are printed.
    #[test]
    fn the_words_of_every_stop_of_an_export_run() {
        let causes = [
            ChangeSetFailure::NotExecutable {
                execution: s("OBSOLETE"),
            },
            ChangeSetFailure::Reason(s("Resource Queue\ndoes not exist\u{1b}[2J")),
            ChangeSetFailure::Deleted {
                status: s("DELETE_COMPLETE"),
            },
            ChangeSetFailure::UnexpectedStatus {
                status: s("WEIRD\r\n\u{7}"),
            },
        ];
        let mut lines: Vec<String> = causes.iter().map(ToString::to_string).collect();
        lines.push(
            ChangeSetStop::NoChanges {
                phase: Phase::Import,
            }
            .to_string(),
        );
        lines.push(ChangeSetStop::NoChanges { phase: Phase::Flip }.to_string());
        for (phase, cause) in [Phase::Import, Phase::Update, Phase::Adopt, Phase::Flip]
            .into_iter()
            .zip(causes.iter().cloned())
        {
            lines.push(ChangeSetStop::Failed { phase, cause }.to_string());
        }
        lines.push(change_set_state_named(&ChangeSetState::NoChanges));
        lines.push(change_set_state_named(&change_set_state(
            "FAILED",
            None,
            Some("say \"no\"\n"),
        )));
        lines.extend(
            [
                StackFailure {
                    status: s("IMPORT_ROLLBACK_COMPLETE"),
                    reason: Some(s("Import failed:\n\u{1b}[31m denied")),
                },
                StackFailure {
                    status: s("UPDATE_FAILED"),
                    reason: None,
                },
            ]
            .iter()
            .map(ToString::to_string),
        );
        let event = |id: &str, ty: Option<&str>, reason: Option<&str>| StackEvent {
            logical_id: Some(s(id)),
            resource_type: ty.map(s),
            status: s("IMPORT_FAILED"),
            reason: reason.map(s),
        };
        let events = [
            event("Queue", Some("AWS::SQS::Queue"), Some("Resource not found")),
            event("A\nB\u{1b}[2J", Some("T\ny"), Some("r\r\nx")),
            event("Topic", None, Some("")),
        ];
        lines.extend(failure_lines(&events).iter().map(ToString::to_string));
        for pending in [
            Pending::ChangeSet {
                phase: Phase::Import,
                arn: s("arn"),
            },
            Pending::Stack {
                phase: Phase::Adopt,
            },
        ] {
            lines.push(
                GaveUp {
                    pending,
                    waited_s: 3601,
                }
                .to_string(),
            );
        }
        insta::assert_snapshot!(lines.join("\n"));
    }

    #[test]
    fn a_run_in_which_no_work_can_start_names_the_stack_flattened() {
        let plan = Plan {
            stacks: vec![StackPlan {
                stack: s("App~Db\n\u{1b}[2J"),
                ..Default::default()
            }],
            warnings: vec![],
        };
        let run = crate::export::execute::ExportRun {
            run_id: serde_json::from_str("\"run-1\"").unwrap_or_default(),
            stacks: vec![crate::export::execute::StackProgress {
                stack: s("App~Db\n\u{1b}[2J"),
                ..Default::default()
            }],
            ..Default::default()
        };
        let err = next_action(&plan, &run, &[], 0)
            .map(|_| ())
            .map_err(|e| e.to_string());
        insta::assert_snapshot!(err.err().unwrap_or_default());
    }
}
