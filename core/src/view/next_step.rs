//! The words of a destroy report's next step and row notes (docs/destroy.md, "How a
//! stack finishes"); `report.json` and `progress.json` store these words (the types'
//! serde goes through `String`).

use std::fmt;

use crate::destroy::next_step::{Again, LockGone, NextStep, RowNote};

impl From<NextStep> for String {
    fn from(n: NextStep) -> String {
        n.to_string()
    }
}

impl From<LockGone> for String {
    fn from(l: LockGone) -> String {
        l.to_string()
    }
}

impl From<RowNote> for String {
    fn from(n: RowNote) -> String {
        n.to_string()
    }
}

/// The rows that may still be deleting first, then the command, then the lock.
impl fmt::Display for NextStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let again = self.again.as_ref().map(ToString::to_string);
        let mut text = match (self.maybe_deleting.is_empty(), again) {
            (true, again) => again,
            (false, again) => {
                let warn = format!(
                    "{} resource(s) may still be deleting in AWS (a delete request was sent and its end was not seen): {}; check them in AWS before running the destroy again",
                    self.maybe_deleting.len(),
                    self.maybe_deleting.join(", ")
                );
                Some(match again {
                    Some(step) => format!("{warn}. Then: {step}"),
                    None => warn,
                })
            }
        };
        if let Some(lock) = &self.lock {
            text = Some(match text {
                Some(step) => format!("{step}; {lock}"),
                None => lock.to_string(),
            });
        }
        f.write_str(text.as_deref().unwrap_or_default())
    }
}

impl fmt::Display for Again {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Again::Finish { kept, command } => write!(
                f,
                "state.json keeps the {kept} resource(s) not destroyed; run `cdkd-flow destroy {command}` again to finish"
            ),
            Again::FixFirst {
                failed,
                skipped,
                blocked,
                command,
            } => write!(
                f,
                "state.json keeps {failed} failed, {skipped} skipped and {blocked} blocked resource(s); fix the failures, then run `cdkd-flow destroy {command}` again"
            ),
            Again::Recorded(words) => f.write_str(words),
        }
    }
}

impl fmt::Display for LockGone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self {
            LockGone::Taken => "held by another process",
            LockGone::Gone => "already gone",
            LockGone::Recorded(words) => return f.write_str(words),
        };
        write!(
            f,
            "the stack's lock was {what} when the run released it, right after deleting the record under its own lock (checked just before): someone removed the run's lock meanwhile (a force-unlock?); check that no other process changed the stack"
        )
    }
}

impl fmt::Display for RowNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RowNote::MaybeDeleting => f.write_str(
                "unknown: a delete request was sent and its end was not seen; the resource may still be deleting in AWS",
            ),
            RowNote::Said(words) => f.write_str(words),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_next_step() -> Vec<NextStep> {
        let finish = Again::Finish {
            kept: 2,
            command: "App --state-bucket team-state".into(),
        };
        let fix = Again::FixFirst {
            failed: 1,
            skipped: 2,
            blocked: 3,
            command: "App".into(),
        };
        let step = |maybe: &[&str], again: Option<&Again>, lock: Option<LockGone>| NextStep {
            maybe_deleting: maybe.iter().map(|s| s.to_string()).collect(),
            again: again.cloned(),
            lock,
        };
        vec![
            step(&[], Some(&finish), None),
            step(&[], Some(&fix), None),
            step(&["B", "C"], Some(&finish), None),
            step(&["B"], None, None),
            step(&[], Some(&fix), Some(LockGone::Taken)),
            step(&[], None, Some(LockGone::Gone)),
            step(&["B"], Some(&finish), Some(LockGone::Gone)),
            step(&["B"], None, Some(LockGone::Taken)),
            NextStep::from("a next step read back".to_string()),
            step(
                &[],
                None,
                Some(LockGone::Recorded("a lock note read back".into())),
            ),
        ]
    }

    #[test]
    fn the_words_of_every_next_step_and_row_note() {
        let mut lines: Vec<String> = every_next_step().iter().map(ToString::to_string).collect();
        lines.push(RowNote::MaybeDeleting.to_string());
        lines.push(RowNote::Said("what a deleter said".into()).to_string());
        insta::assert_snapshot!(lines.join("\n"));
    }

    /// Stored as their words and read back as them (`report.json`, `progress.json`).
    #[test]
    fn a_next_step_a_lock_note_and_a_row_note_are_stored_as_their_words() {
        for n in every_next_step() {
            let stored = serde_json::to_value(&n).unwrap_or_default();
            assert_eq!(stored, serde_json::Value::String(n.to_string()));
            let back: NextStep = serde_json::from_value(stored).unwrap_or_default();
            assert_eq!(back.to_string(), n.to_string());
        }
        for l in [LockGone::Taken, LockGone::Gone] {
            let stored = serde_json::to_value(&l).unwrap_or_default();
            let back: LockGone = serde_json::from_value(stored).unwrap_or(LockGone::Gone);
            assert_eq!(back, LockGone::Recorded(l.to_string()));
        }
        let stored = serde_json::to_value(RowNote::MaybeDeleting).unwrap_or_default();
        let back: RowNote = serde_json::from_value(stored).unwrap_or(RowNote::MaybeDeleting);
        assert_eq!(back, RowNote::Said(RowNote::MaybeDeleting.to_string()));
    }
}
