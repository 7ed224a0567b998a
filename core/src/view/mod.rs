//! Every view of cdkd-flow: pure functions from what the CLI gathered (records, plans,
//! run records, execution descriptions) to the text it prints. Nothing here does I/O;
//! untrusted text (names, ids, types, AWS error messages) is stripped or flattened onto
//! one line before it is returned, so nothing read can move the cursor or invent a line.
//!
//! - [`state`]: `state list | show | resources` (docs/state-views.md, "Text rules" and "state resources <stack>");
//! - [`plan`]: `destroy --dry-run` and the confirmation before a destroy;
//! - [`progress`]: live bars and settled lines of a destroy run;
//! - [`report`]: a destroy run's report; [`next_step`]: its next step and row notes;
//!   [`cc_identifier`]: why a record gets no Cloud Control identifier;
//! - [`cleanup`]: a cleanup run's summary;
//! - [`export`]: `export --dry-run` (the plan's summary, stack by stack); [`plan_warning`]:
//!   the plan's warnings; [`export_redo`]: the lines of an export report to do by hand;
//!   [`export_run`]: why an export run stops (a change set, a stack operation, a wait);
//! - [`runs`]: `runs list | show | watch` (executions of the deployed state machines);
//! - [`retention`]: `runs expire` and `runs prune` (docs/runs.md);
//! - [`workflow`]: `workflow run` (an execution of the local engine);
//! - [`approval`]: an export's approval gate (the waiting line, its status, the
//!   commands that answer it, the refusals and the rejection cause);
//! - [`notify`]: the subject and text of a run's message (docs/notifications.md);
//! - [`contention`]: a lock's contention (the refusal line, its advice, a lost lock, what a
//!   stopped destroy leaves held, the state flags of a printed command);
//! - [`refusal`]: the words of the typed refusals core's decisions return (export,
//!   final snapshot, lock contention, a local run's answer); [`export_input`]: those of
//!   an export's names, parameters and gates; [`source_error`]: why an export's
//!   templates could not be read;
//! - [`errors`]: the errors of core's readers and checks (a state record, a lock, the
//!   exports index, a stack name or run id, a cleanup's arguments, a template, the delete
//!   graph, the crash-safety invariant);
//! - shared pieces: [`words`] (counts as words); dates are `crate::time`'s (`toISOString`).

pub mod approval;
pub mod blocked;
pub mod cc_identifier;
pub mod cleanup;
pub mod command;
pub mod contention;
pub mod errors;
pub mod export;
pub mod export_input;
pub mod export_redo;
pub mod export_report;
pub mod export_run;
pub mod next_step;
pub mod notify;
pub mod plan;
pub mod plan_warning;
pub mod progress;
pub mod refusal;
pub mod repair;
pub mod report;
pub mod retention;
pub mod runs;
pub mod source_error;
pub mod state;
pub mod words;
pub mod workflow;

/// What a view prints: `stdout` exactly as it must be written (already ending in `\n`
/// when non-empty), and `warnings`, one line each, for stderr.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rendered {
    pub stdout: String,
    pub warnings: Vec<String>,
}

impl Rendered {
    pub fn new(stdout: String, warnings: Vec<String>) -> Self {
        Self { stdout, warnings }
    }
}

/// The one form of a failure line on the CLI (docs/cli.md, exit status): `error: ` and the
/// message flattened onto one line (docs/state-views.md, "Flatten (diagnostics)"). A message that already
/// begins with `error: ` is not prefixed twice.
pub fn error_line(message: &str) -> String {
    let flat = crate::text::flatten_str(message);
    if flat.starts_with("error: ") {
        flat
    } else {
        format!("error: {flat}")
    }
}

/// Lines joined by `\n` plus one final `\n`; no lines → no output at all.
pub(crate) fn join_lines(lines: &[String]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn error_line_prefixes_once_and_flattens() {
        assert_eq!(
            super::error_line("export App failed (X): a\nb"),
            "error: export App failed (X): a b"
        );
        assert_eq!(super::error_line("error: already"), "error: already");
        assert_eq!(super::error_line("\u{1b}[2Jx"), "error: [2Jx");
    }
}

/// What the views' tests share: a snapshot of every variant's words, and the check that
/// a value stored as its words (serde through `String`) reads back as them.
#[cfg(test)]
pub(crate) mod test_support {
    use std::fmt::{Debug, Display};

    use serde::{de::DeserializeOwned, Serialize};

    /// Each value's words, one per line.
    pub fn lines<T: Display>(items: &[T]) -> String {
        items
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// `value` is stored as exactly its words, and read back it is `recorded(words)`.
    pub fn assert_stored_as_words<T>(value: &T, recorded: impl Fn(String) -> T)
    where
        T: Serialize + DeserializeOwned + Display + PartialEq + Debug,
    {
        let words = value.to_string();
        let stored = serde_json::to_value(value).unwrap_or_default();
        assert_eq!(stored, serde_json::Value::String(words.clone()));
        let back: T = serde_json::from_value(stored).expect("words read back");
        assert_eq!(back, recorded(words));
    }
}
