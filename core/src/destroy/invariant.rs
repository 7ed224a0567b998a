//! Crash-safety invariants of a destroy (docs/destroy.md, "Crash safety: state written as it goes"), as pure checkers that tests (and a
//! paranoid step) can apply at any instant:
//!
//! * **superset**: state never lists a resource that is gone without also keeping every
//!   one that exists — every live resource of the stack still has its record while
//!   `state.json` exists; once the file is deleted, only retained resources may live on.
//! * **order**: a resource is only deleted when every record that must be deleted before
//!   it is gone (or retained).

use super::graph::DeleteGraph;
use std::collections::BTreeSet;

/// A broken invariant, naming the logical id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvariantViolation {
    LiveWithoutRecord(String),
    StateGoneWhileLive(String),
    OutOfOrder { deleted: String, before: String },
}

impl std::error::Error for InvariantViolation {}

/// Superset invariant. `live`: logical ids of the stack whose resource exists in AWS;
/// `state`: the logical ids in `state.json`, `None` once the file is deleted;
/// `retain_policy`: ids whose `deletionPolicy` retains them (they outlive the file).
pub fn check_state_superset(
    live: &BTreeSet<String>,
    state: Option<&BTreeSet<String>>,
    retain_policy: &BTreeSet<String>,
) -> Result<(), InvariantViolation> {
    match state {
        Some(records) => match live.iter().find(|id| !records.contains(*id)) {
            Some(id) => Err(InvariantViolation::LiveWithoutRecord(id.clone())),
            None => Ok(()),
        },
        None => match live.iter().find(|id| !retain_policy.contains(*id)) {
            Some(id) => Err(InvariantViolation::StateGoneWhileLive(id.clone())),
            None => Ok(()),
        },
    }
}

/// Order invariant for one delete taking effect: every record that must be deleted
/// before `deleted` (in the plan-time graph) is gone or retained.
pub fn check_delete_order(
    graph: &DeleteGraph,
    live: &BTreeSet<String>,
    retain_policy: &BTreeSet<String>,
    deleted: &str,
) -> Result<(), InvariantViolation> {
    let Some(i) = graph.index_of(deleted) else {
        return Ok(());
    };
    for &p in graph.predecessors(i) {
        let before = &graph.nodes()[p].logical_id;
        if live.contains(before) && !retain_policy.contains(before) {
            return Err(InvariantViolation::OutOfOrder {
                deleted: deleted.to_string(),
                before: before.clone(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(ids: &[&str]) -> BTreeSet<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn stale_record_is_fine_missing_record_for_live_resource_is_not_rule_2_11() {
        // A record whose resource is gone (crash before the write) is allowed.
        assert!(check_state_superset(&set(&["A"]), Some(&set(&["A", "B"])), &set(&[])).is_ok());
        assert_eq!(
            check_state_superset(&set(&["A", "C"]), Some(&set(&["A", "B"])), &set(&[])),
            Err(InvariantViolation::LiveWithoutRecord("C".into()))
        );
    }

    #[test]
    fn deleted_state_file_may_leave_only_retained_resources_statement_15() {
        assert!(check_state_superset(&set(&["R"]), None, &set(&["R"])).is_ok());
        assert_eq!(
            check_state_superset(&set(&["R", "X"]), None, &set(&["R"])),
            Err(InvariantViolation::StateGoneWhileLive("X".into()))
        );
    }

    #[test]
    fn delete_order_requires_dependents_gone_or_retained() {
        let g = DeleteGraph::build(
            json!({
                "Fn": {"resourceType": "T", "dependencies": ["Role"]},
                "Keep": {"resourceType": "T", "dependencies": ["Role"], "deletionPolicy": "Retain"},
                "Role": {"resourceType": "T"}
            })
            .as_object()
            .unwrap(),
        )
        .unwrap();
        let retain = set(&["Keep"]);
        assert_eq!(
            check_delete_order(&g, &set(&["Fn", "Keep", "Role"]), &retain, "Role"),
            Err(InvariantViolation::OutOfOrder {
                deleted: "Role".into(),
                before: "Fn".into()
            })
        );
        assert!(check_delete_order(&g, &set(&["Keep", "Role"]), &retain, "Role").is_ok());
    }
}
