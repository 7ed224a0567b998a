//! A run's id: the name of its folder (`<prefix>/_runs/<run-id>/`), of its first
//! execution and of its lock's owner (`cdkd-flow:<run-id>`).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::text::flatten_str;

/// A run's id, kept exactly as it was given or found (it names keys, executions and
/// locks), and printed safely: its `Display` flattens it onto one line, which changes
/// nothing of an id [`RunId::parse`] accepted. Serialized as the bare string.
///
/// It enters in two ways: given by hand (`--run-id`, `runs show <run-id>`), checked by
/// [`RunId::parse`]; or found where a run wrote it (a record, an execution's name, a
/// listed key), taken as it is (`From`), since a deployed run's execution may have been
/// named by Step Functions' own, looser rule.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(String);

/// Why a run id given by hand is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidRunId;

impl std::error::Error for InvalidRunId {}

impl RunId {
    /// The longest id given by hand: Step Functions' longest execution name.
    pub const MAX_GIVEN: usize = 80;

    /// A run id given by hand: a valid execution name, 1 to [`RunId::MAX_GIVEN`]
    /// characters of `A-Z a-z 0-9 - _` (so also a plain key segment and a plain word).
    pub fn parse(given: &str) -> Result<RunId, InvalidRunId> {
        let ok = !given.is_empty()
            && given.len() <= Self::MAX_GIVEN
            && given
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if ok {
            Ok(RunId(given.to_string()))
        } else {
            Err(InvalidRunId)
        }
    }

    /// The id as it is (for keys, executions and comparisons; print it with `Display`).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id of its plan run: `<run-id>-plan` (an export's plan, before the run).
    pub fn plan_run(&self) -> RunId {
        RunId(format!("{}-plan", self.0))
    }
}

/// Flattened onto one line: an id found in a record or a listing is printed safely.
impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&flatten_str(&self.0))
    }
}

impl std::ops::Deref for RunId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for RunId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for RunId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

/// An id found where a run wrote it, taken as it is.
impl From<&str> for RunId {
    fn from(found: &str) -> Self {
        RunId(found.to_string())
    }
}

/// An id found where a run wrote it, taken as it is.
impl From<String> for RunId {
    fn from(found: String) -> Self {
        RunId(found)
    }
}

impl From<RunId> for String {
    fn from(id: RunId) -> Self {
        id.0
    }
}

impl std::str::FromStr for RunId {
    type Err = InvalidRunId;
    fn from_str(given: &str) -> Result<Self, Self::Err> {
        RunId::parse(given)
    }
}

impl PartialEq<str> for RunId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for RunId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for RunId {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_run_id_given_by_hand_is_a_valid_execution_name() {
        assert_eq!(RunId::parse("export-App-1").unwrap(), "export-App-1");
        assert_eq!(RunId::parse(&"a".repeat(80)).unwrap().len(), 80);
        for bad in ["", "a b", "a/b", "a.b", "é", "a\nb", &"a".repeat(81)] {
            assert_eq!(RunId::parse(bad), Err(InvalidRunId), "{bad:?}");
        }
        assert_eq!(
            InvalidRunId.to_string(),
            "not a valid run id: 1 to 80 characters of A-Z a-z 0-9 - _"
        );
        assert_eq!("r-1".parse::<RunId>().unwrap(), RunId::from("r-1"));
    }

    #[test]
    fn a_run_id_is_a_bare_string_in_json_and_read_as_found() {
        let id = RunId::parse("destroy-Shop-20261129T152232").unwrap();
        assert_eq!(json!(id), json!("destroy-Shop-20261129T152232"));
        // An execution Step Functions named by its own rule reads as it is.
        let found: RunId = serde_json::from_value(json!("nightly.run@2")).unwrap();
        assert_eq!(found.as_str(), "nightly.run@2");
        assert_eq!(json!(found), json!("nightly.run@2"));
    }

    #[test]
    fn a_run_id_prints_on_one_line_whatever_was_found() {
        assert_eq!(RunId::from("r\n1\u{1b}[2J").to_string(), "r 1 [2J");
        let plain = RunId::parse("export-App-1").unwrap();
        assert_eq!(plain.to_string(), plain.as_str());
        assert_eq!(plain.plan_run(), "export-App-1-plan");
    }
}
