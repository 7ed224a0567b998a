//! Run ids: the readable execution name of a deployed run, the millisecond name of a
//! local one, and the check of an id given by hand.

use cdkd_core::run::RunId;
use cdkd_core::time::iso_from_ms;

use crate::error::CliError;

/// A readable execution name (the run id): `<kind>-<stack>-<yyyymmddThhmmss>` (UTC),
/// within Step Functions' 80 characters of `[A-Za-z0-9-_]`; other characters of the
/// stack name become `_`.
pub fn execution_name(kind: &str, stack: &str, now_ms: i64) -> RunId {
    let clean = name_segment(stack);
    let iso = iso_from_ms(now_ms); // 2026-11-29T15:22:32.000Z
    let stamp: String = iso
        .chars()
        .take(19)
        .filter(|c| *c != '-' && *c != ':')
        .collect();
    RunId::from(format!("{kind}-{clean}-{stamp}"))
}

/// A local run's id: an execution name with the time in milliseconds (local runs are
/// never re-attached, so names must not repeat within a second).
pub fn default_run_id(kind: &str, stack: &str, now_ms: i64) -> RunId {
    RunId::from(format!("{kind}-{}-{now_ms}", name_segment(stack)))
}

/// A stack name as part of an execution name: `[A-Za-z0-9-_]` (anything else becomes
/// `_`), at most 48 characters, leaving room for the kind and the time.
pub fn name_segment(stack: &str) -> String {
    stack
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(48)
        .collect()
}

/// A run id given by hand must be a valid execution name (`cdkd_core::run::RunId::parse`,
/// the one check of an id given by hand): the id, checked, safe to print from then on.
pub fn check_execution_name(name: &str) -> Result<RunId, CliError> {
    RunId::parse(name).map_err(|why| {
        CliError::usage(cdkd_core::usage::Usage::NotARunId {
            given: name.to_string(),
            why,
        })
    })
}

/// The run id of a command that starts a run: the one given with `--run-id`, checked
/// ([`check_execution_name`]), or else the one `made` names.
pub fn given_or(given: Option<&str>, made: impl FnOnce() -> RunId) -> Result<RunId, CliError> {
    match given {
        Some(id) => check_execution_name(id),
        None => Ok(made()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2026-11-29T15:22:32.123Z
    const T: i64 = 1_795_965_752_123;

    #[test]
    fn execution_name_is_kind_stack_and_utc_second() {
        assert_eq!(iso_from_ms(T), "2026-11-29T15:22:32.123Z");
        assert_eq!(
            execution_name("destroy", "MyApp-dev", T),
            "destroy-MyApp-dev-20261129T152232"
        );
    }

    #[test]
    fn execution_name_replaces_characters_step_functions_refuses() {
        let n = execution_name("destroy", "a.b/c~d é", T);
        assert_eq!(n, "destroy-a_b_c_d__-20261129T152232");
        assert!(check_execution_name(&n).is_ok());
    }

    #[test]
    fn execution_name_stays_within_80_characters_for_long_stacks() {
        let n = execution_name("cleanup", &"x".repeat(200), T);
        assert!(n.len() <= 80, "{}", n.len());
        assert!(check_execution_name(&n).is_ok());
    }

    #[test]
    fn run_id_given_by_hand_must_be_a_valid_execution_name() {
        assert!(check_execution_name("destroy-app-1").is_ok());
        assert!(check_execution_name("").is_err());
        assert!(check_execution_name("a b").is_err());
        assert!(check_execution_name(&"a".repeat(81)).is_err());
    }

    #[test]
    fn a_run_id_given_with_run_id_is_checked_else_the_made_one_is_taken() {
        let made = || default_run_id("cleanup", "p", 5);
        assert_eq!(given_or(Some("mine-1"), made).unwrap(), "mine-1");
        assert_eq!(given_or(None, made).unwrap(), "cleanup-p-5");
        let refused = given_or(Some("a b"), made).unwrap_err().to_string();
        assert!(refused.contains("'a b' is not a valid run id"), "{refused}");
    }

    #[test]
    fn default_run_id_is_an_execution_name() {
        let id = default_run_id("destroy", "Shop~Net work", 5);
        assert_eq!(id, "destroy-Shop_Net_work-5");
    }
}
