//! The words of the errors core's readers and checks return: a state record, lock or
//! exports index that cannot be read, a stack name or run id given by hand that is
//! refused, a cleanup's arguments, a template, a record the delete graph cannot be built
//! from or that holds a cycle, and a broken crash-safety invariant. Each is a typed value
//! in its own module; only its words are here.

use std::fmt;

use crate::cleanup::CleanupError;
use crate::destroy::graph::{CycleError, DamagedResources};
use crate::destroy::invariant::InvariantViolation;
use crate::export::template::TemplateError;
use crate::exports::IndexError;
use crate::keys::{KeyError, StackNameError};
use crate::lock::LockParseError;
use crate::repair::rewrite::OrphanAborted;
use crate::run::{InvalidRunId, RunId};
use crate::state::StateError;

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateError::InvalidJson { stack, message } => write!(f, "State file for stack '{stack}' is not valid JSON: {message}"),
            StateError::NotAnObject { stack, region, kind } => write!(f, "State file for stack '{stack}' ({region}) is not a JSON object (its root is {kind})"),
            StateError::UnsupportedVersion { stack, version } => write!(f, "Unsupported state schema version {version} for stack '{stack}'. This cdkd-flow binary supports versions 1, 2, 3, 4, 5, 6, 7, 8, 9, 10. Upgrade cdkd-flow (or use an up-to-date cdkd) to a version that supports schema {version}."),
            StateError::MalformedContainer { stack, region, field, kind } => write!(f, "State record for stack '{stack}' ({region}) is malformed: '{field}' is {kind}, not a JSON object; refusing to write it"),
            StateError::MalformedResource { stack, region, logical_id, kind } => write!(f, "State record for stack '{stack}' ({region}) is malformed: resource '{logical_id}' is {kind}, not a JSON object; refusing to write it"),
        }
    }
}

impl fmt::Display for StackNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StackNameError::Empty => write!(f, "a stack name cannot be empty"),
            StackNameError::Invisible { shown, what, code } => write!(f, "'{shown}' is not a stack name any cdkd stack can have: it contains {what} (U+{code:04X})"),
        }
    }
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::BadEscape(v0) => write!(f, "listed key is not valid url encoding: {0}", v0),
            KeyError::NotUtf8(v0) => write!(f, "listed key does not decode to UTF-8: {0}", v0),
        }
    }
}

impl fmt::Display for CleanupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CleanupError::EmptyPattern => write!(f, "the stack-name pattern is empty"),
            CleanupError::BadDuration(v0) => write!(
                f,
                "minimum age '{0}' is not a duration like 7d, 12h or 30m",
                v0
            ),
            CleanupError::ZeroDuration(v0) => write!(
                f,
                "minimum age '{0}' is zero: a cleanup would destroy stacks just deployed",
                v0
            ),
        }
    }
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TemplateError::NotAnObject { stack, kind } => write!(f, "the template for stack {stack} is not a JSON object (its root is {kind})"),
            TemplateError::BadResources { stack, kind } => write!(f, "the template for stack {stack} has a 'Resources' section that is {kind}, not an object"),
        }
    }
}

impl fmt::Display for IndexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexError::Unreadable(v0) => write!(f, "exports index is unreadable: {0}", v0),
            IndexError::TooNew(v0) => write!(f, "exports index version {0} is newer than this cdkd-flow understands (1). Upgrade cdkd-flow.", v0),
        }
    }
}

impl fmt::Display for LockParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockParseError::InvalidJson(v0) => write!(f, "lock.json is not valid JSON: {0}", v0),
        }
    }
}

impl fmt::Display for DamagedResources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DamagedResources::EntryNotObject { logical_id } => {
                write!(f, "resource '{logical_id}' is not a JSON object")
            }
            DamagedResources::EntryWithoutType { logical_id } => {
                write!(f, "resource '{logical_id}' has no string resourceType")
            }
        }
    }
}

impl fmt::Display for InvariantViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvariantViolation::LiveWithoutRecord(v0) => write!(f, "resource '{0}' still exists but state.json no longer lists it", v0),
            InvariantViolation::StateGoneWhileLive(v0) => write!(f, "state.json was deleted while resource '{0}' (not retained) still exists", v0),
            InvariantViolation::OutOfOrder { deleted, before } => write!(f, "resource '{deleted}' was deleted while '{before}', which must go first, still exists"),
        }
    }
}

/// `dependency cycle: a -> b -> a; c -> d -> c`.
impl fmt::Display for CycleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let paths: Vec<String> = self.cycles.iter().map(|c| c.join(" -> ")).collect();
        write!(f, "dependency cycle: {}", paths.join("; "))
    }
}

impl fmt::Display for InvalidRunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not a valid run id: 1 to {} characters of A-Z a-z 0-9 - _",
            RunId::MAX_GIVEN
        )
    }
}

/// `Orphan aborted: <n> reference(s) could not be resolved` (each then listed by the
/// repair view).
impl fmt::Display for OrphanAborted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Orphan aborted: {} reference(s) could not be resolved",
            self.unresolved.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every error's words, with hostile values where a value is printed as given (the
    /// readers flatten what they put in; the CLI's error line flattens the whole line).
    #[test]
    fn the_words_of_every_core_error() {
        let h = || "x\ny'z".to_string();
        let lines: Vec<String> = vec![
            StateError::InvalidJson {
                stack: h(),
                message: h(),
            }
            .to_string(),
            StateError::NotAnObject {
                stack: h(),
                region: h(),
                kind: "an array",
            }
            .to_string(),
            StateError::UnsupportedVersion {
                stack: h(),
                version: "11".into(),
            }
            .to_string(),
            StateError::MalformedContainer {
                stack: h(),
                region: h(),
                field: "resources",
                kind: "a string",
            }
            .to_string(),
            StateError::MalformedResource {
                stack: h(),
                region: h(),
                logical_id: h(),
                kind: "null",
            }
            .to_string(),
            StackNameError::Empty.to_string(),
            StackNameError::Invisible {
                shown: h(),
                what: "a control character",
                code: 0x1b,
            }
            .to_string(),
            KeyError::BadEscape(h()).to_string(),
            KeyError::NotUtf8(h()).to_string(),
            CleanupError::EmptyPattern.to_string(),
            CleanupError::BadDuration(h()).to_string(),
            CleanupError::ZeroDuration("0d".into()).to_string(),
            TemplateError::NotAnObject {
                stack: h(),
                kind: "a number",
            }
            .to_string(),
            TemplateError::BadResources {
                stack: h(),
                kind: "a list",
            }
            .to_string(),
            IndexError::Unreadable(h()).to_string(),
            IndexError::TooNew("2".into()).to_string(),
            LockParseError::InvalidJson(h()).to_string(),
            DamagedResources::EntryNotObject { logical_id: h() }.to_string(),
            DamagedResources::EntryWithoutType { logical_id: h() }.to_string(),
            CycleError {
                cycles: vec![
                    vec!["a".into(), "b".into(), "a".into()],
                    vec!["c".into(), "c".into()],
                ],
            }
            .to_string(),
            InvariantViolation::LiveWithoutRecord(h()).to_string(),
            InvariantViolation::StateGoneWhileLive(h()).to_string(),
            InvariantViolation::OutOfOrder {
                deleted: h(),
                before: "B".into(),
            }
            .to_string(),
            InvalidRunId.to_string(),
            OrphanAborted { unresolved: vec![] }.to_string(),
        ];
        insta::assert_snapshot!(lines.join("\n---\n"));
    }
}
