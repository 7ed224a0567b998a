//! The next wave, computed incrementally (docs/destroy.md, "Waves" and "What unblocks what").
//!
//! Input: the delete graph of the records still in `state.json` plus the run's outcome
//! map and the ids with a delete in flight. A record is **ready** when every record that
//! must be deleted before it is settled (deleted / already gone / retained, or no longer
//! in state). A record that must follow a failed, skipped or blocked record is
//! **blocked** by the failing record's logical id; independent branches go on.
//! Nothing here is precomputed across calls: a resumed or retried wave invocation
//! recomputes the same answer from the same inputs.

use super::graph::DeleteGraph;
use super::model::RowOutcome;
use std::collections::{BTreeMap, BTreeSet};

/// Where each remaining record stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadySet {
    /// Start these now (every record that must go first is settled).
    pub ready: Vec<String>,
    /// Newly blocked this call: `(logical id, blocking logical id)`. Record these as
    /// `RowOutcome::Blocked { by }`.
    pub blocked: Vec<(String, String)>,
    /// Deletes in flight (poll them).
    pub in_flight: Vec<String>,
    /// Unsettled records still waiting for others.
    pub waiting: Vec<String>,
    /// Records still in state whose outcome says gone (a crash between the delete and the
    /// state write): remove them from state; they count as settled.
    pub remove_from_state: Vec<String>,
}

impl ReadySet {
    /// Nothing left to start, poll or wait for: the run can finish.
    pub fn is_finished(&self) -> bool {
        self.ready.is_empty() && self.in_flight.is_empty() && self.waiting.is_empty()
    }
}

#[derive(Clone)]
enum Status {
    Settled,
    /// Blocks its successors; carries the root failing logical id.
    Blocking(String),
    Unsettled,
}

/// Computes the ready set (docs/destroy.md, "Waves" wave definition, "What unblocks what" blocking).
///
/// `outcomes`: outcomes recorded in this run; `in_flight`: logical ids with a persisted
/// handle. The graph must be acyclic (checked at plan time; a subgraph of an acyclic
/// graph is acyclic). Lists keep the graph's record order.
pub fn ready_set(
    graph: &DeleteGraph,
    outcomes: &BTreeMap<String, RowOutcome>,
    in_flight: &BTreeSet<String>,
) -> ReadySet {
    let n = graph.len();
    let mut status: Vec<Option<Status>> = vec![None; n];
    let mut out = ReadySet::default();
    let mut ready = BTreeSet::new();
    let mut blocked = BTreeMap::new();
    let mut flying = BTreeSet::new();
    let mut waiting = BTreeSet::new();
    let mut remove = BTreeSet::new();
    for i in graph.topo_order() {
        let id = &graph.nodes()[i].logical_id;
        let s = match outcomes.get(id) {
            Some(o) if o.is_settled() => {
                if o.removes_record() {
                    remove.insert(i);
                }
                Status::Settled
            }
            Some(RowOutcome::Blocked { by }) => Status::Blocking(by.clone()),
            Some(o) if o.blocks() => Status::Blocking(id.clone()),
            _ => {
                let first_blocker = graph
                    .predecessors(i)
                    .iter()
                    .find_map(|&p| match &status[p] {
                        Some(Status::Blocking(root)) => Some(root.clone()),
                        _ => None,
                    });
                if let Some(root) = first_blocker {
                    blocked.insert(i, root.clone());
                    Status::Blocking(root)
                } else {
                    if in_flight.contains(id) {
                        flying.insert(i);
                    } else if graph
                        .predecessors(i)
                        .iter()
                        .all(|&p| matches!(status[p], Some(Status::Settled)))
                    {
                        ready.insert(i);
                    } else {
                        waiting.insert(i);
                    }
                    Status::Unsettled
                }
            }
        };
        status[i] = Some(s);
    }
    // Nodes on a cycle never get a status; they wait forever (plan refuses cycles).
    for (i, s) in status.iter().enumerate() {
        if s.is_none() {
            waiting.insert(i);
        }
    }
    let name = |i: &usize| graph.nodes()[*i].logical_id.clone();
    out.ready = ready.iter().map(name).collect();
    out.blocked = blocked
        .iter()
        .map(|(i, by)| (name(i), by.clone()))
        .collect();
    out.in_flight = flying.iter().map(name).collect();
    out.waiting = waiting.iter().map(name).collect();
    out.remove_from_state = remove.iter().map(name).collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn graph(v: Value) -> DeleteGraph {
        DeleteGraph::build(v.as_object().unwrap()).unwrap()
    }

    fn outcomes(list: &[(&str, RowOutcome)]) -> BTreeMap<String, RowOutcome> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    fn failed() -> RowOutcome {
        RowOutcome::Failed {
            error: "boom".into(),
        }
    }

    fn chain() -> DeleteGraph {
        // Fn ⇒ Role ⇒ Policy... (Fn depends on Role, Role on Key); Topic independent.
        graph(json!({
            "Fn": {"resourceType": "AWS::Lambda::Function", "dependencies": ["Role"]},
            "Role": {"resourceType": "AWS::IAM::Role", "dependencies": ["Key"]},
            "Key": {"resourceType": "AWS::KMS::Key"},
            "Topic": {"resourceType": "AWS::SNS::Topic"}
        }))
    }

    #[test]
    fn first_wave_is_records_nothing_depends_on_rule_2_6() {
        let r = ready_set(&chain(), &BTreeMap::new(), &BTreeSet::new());
        assert_eq!(r.ready, vec!["Fn", "Topic"]);
        assert_eq!(r.waiting, vec!["Role", "Key"]);
        assert!(!r.is_finished());
    }

    #[test]
    fn ready_set_recomputed_from_remaining_records_after_delete() {
        // Fn deleted and removed from state: the graph is rebuilt without it.
        let g = graph(json!({
            "Role": {"resourceType": "AWS::IAM::Role", "dependencies": ["Key"]},
            "Key": {"resourceType": "AWS::KMS::Key"}
        }));
        let r = ready_set(
            &g,
            &outcomes(&[("Fn", RowOutcome::Deleted)]),
            &BTreeSet::new(),
        );
        assert_eq!(r.ready, vec!["Role"]);
        assert_eq!(r.waiting, vec!["Key"]);
    }

    #[test]
    fn not_static_levels_a_record_starts_as_soon_as_its_dependents_settle() {
        // Long chain A ⇒ B ⇒ C and short D ⇒ E: E is ready once D is gone even though
        // A's branch is still running.
        let g = graph(json!({
            "A": {"resourceType": "T", "dependencies": ["B"]},
            "B": {"resourceType": "T", "dependencies": ["C"]},
            "C": {"resourceType": "T"},
            "D": {"resourceType": "T", "dependencies": ["E"]},
            "E": {"resourceType": "T"}
        }));
        let r = ready_set(
            &g,
            &outcomes(&[("D", RowOutcome::Deleted)]),
            &BTreeSet::from(["A".to_string()]),
        );
        assert_eq!(r.ready, vec!["E"]);
        assert_eq!(r.in_flight, vec!["A"]);
        assert_eq!(r.remove_from_state, vec!["D"]);
    }

    #[test]
    fn retained_record_settles_its_dependencies_statement_15() {
        let g = graph(json!({
            "R": {"resourceType": "AWS::S3::Bucket", "deletionPolicy": "Retain", "dependencies": ["K"]},
            "K": {"resourceType": "AWS::KMS::Key"}
        }));
        let r = ready_set(
            &g,
            &outcomes(&[("R", RowOutcome::Retained)]),
            &BTreeSet::new(),
        );
        assert_eq!(r.ready, vec!["K"]);
        assert!(
            r.remove_from_state.is_empty(),
            "retained records stay in state"
        );
    }

    #[test]
    fn failed_record_blocks_what_it_must_precede_statement_32() {
        let r = ready_set(&chain(), &outcomes(&[("Fn", failed())]), &BTreeSet::new());
        assert_eq!(
            r.blocked,
            vec![
                ("Role".to_string(), "Fn".to_string()),
                ("Key".to_string(), "Fn".to_string())
            ]
        );
        assert!(
            r.ready.contains(&"Topic".to_string()),
            "independent branch goes on"
        );
        assert!(!r.ready.contains(&"Role".to_string()));
    }

    #[test]
    fn skipped_record_blocks_like_a_failure_rule_2_7() {
        let r = ready_set(
            &chain(),
            &outcomes(&[(
                "Fn",
                RowOutcome::Skipped {
                    reason: "handler FAILED".into(),
                },
            )]),
            &BTreeSet::new(),
        );
        assert_eq!(r.blocked.len(), 2);
        assert!(r.blocked.iter().all(|(_, by)| by == "Fn"));
    }

    #[test]
    fn blocked_names_root_failure_and_stays_blocked_on_recompute() {
        let o = outcomes(&[
            ("Fn", failed()),
            ("Role", RowOutcome::Blocked { by: "Fn".into() }),
        ]);
        let r = ready_set(&chain(), &o, &BTreeSet::new());
        assert_eq!(r.blocked, vec![("Key".to_string(), "Fn".to_string())]);
        assert!(r.ready == vec!["Topic".to_string()]);
    }

    #[test]
    fn blocking_wins_over_waiting_on_other_unsettled_records() {
        // K must follow both A (failed) and B (in flight): blocked now, not waiting.
        let g = graph(json!({
            "A": {"resourceType": "T", "dependencies": ["K"]},
            "B": {"resourceType": "T", "dependencies": ["K"]},
            "K": {"resourceType": "T"}
        }));
        let r = ready_set(
            &g,
            &outcomes(&[("A", failed())]),
            &BTreeSet::from(["B".to_string()]),
        );
        assert_eq!(r.blocked, vec![("K".to_string(), "A".to_string())]);
        assert_eq!(r.in_flight, vec!["B"]);
    }

    #[test]
    fn failed_in_one_wave_keeps_siblings_going_statement_31() {
        let g = graph(json!({
            "A": {"resourceType": "T"}, "B": {"resourceType": "T"}, "C": {"resourceType": "T"}
        }));
        let r = ready_set(
            &g,
            &outcomes(&[("A", RowOutcome::Deleted), ("B", failed())]),
            &BTreeSet::new(),
        );
        assert_eq!(r.ready, vec!["C"]);
        assert!(r.blocked.is_empty());
    }

    #[test]
    fn everything_settled_is_finished() {
        let g = graph(json!({"A": {"resourceType": "T"}, "B": {"resourceType": "T"}}));
        let r = ready_set(
            &g,
            &outcomes(&[("A", RowOutcome::Retained), ("B", failed())]),
            &BTreeSet::new(),
        );
        assert!(r.is_finished());
    }

    #[test]
    fn type_rules_order_waves_statement_2_and_3() {
        let g = graph(json!({
            "Fn": {"resourceType": "AWS::Lambda::Function"},
            "Sub": {"resourceType": "AWS::EC2::Subnet"},
            "Sg": {"resourceType": "AWS::EC2::SecurityGroup"}
        }));
        let r = ready_set(&g, &BTreeMap::new(), &BTreeSet::new());
        assert_eq!(r.ready, vec!["Fn"]);
        let r = ready_set(
            &g,
            &outcomes(&[("Fn", RowOutcome::AlreadyGone)]),
            &BTreeSet::new(),
        );
        assert_eq!(r.ready, vec!["Sub", "Sg"]);
    }
}
