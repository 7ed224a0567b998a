//! The destroy plan without destroying (`cdkd-flow destroy --dry-run`), what the
//! confirmation before a real destroy lists, and which answer confirms it.
//!
//! [`plan_run`] computes, from the records alone, what a destroy run would do: the same
//! refusals as the `destroy-plan` step (`refusals::check_plan`: nested child alone,
//! importers, damaged record, cycle), then per stack the waves of the ready-set model
//! (`waves::ready_set`, dependents first) with each record's decision (`decide`): delete,
//! no-op, retain, fail or skip before any call, and what a failure would block. Nested
//! children come before their parent, as in a run. A held lock or an unknown stack is
//! found by the caller (it needs I/O) and set as the plan's refusal. The plan is data;
//! `core::view::plan` words it.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::contention::LockRefusal;
use crate::destroy::decide::{decide, DecideOptions, Decision, RecordFailure, RecordSkip, Route};
use crate::destroy::graph::DeleteGraph;
use crate::destroy::model::RowOutcome;
use crate::destroy::refusals::{check_plan, PlanVerdict, Refusal, RefusalOptions, StackRecord};
use crate::destroy::waves::ready_set;
use crate::keys::child_stack_name;
use crate::state::StateRecord;

/// What a run would do with one record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanAction {
    /// A delete call.
    Delete,
    /// `AWS::CDK::Metadata`: settled as deleted with no call.
    NoOp,
    /// `Retain` / `RetainExceptOnCreate`: no call; the resource stays in AWS.
    Retain,
    /// The nested stack's row: settled once its child stack (planned before it) is.
    NestedStack { child: String },
    /// Refused before any call: the row would fail and keep its record.
    Fail { error: RecordFailure },
    /// Declined before any call: the row would be skipped and keep its record.
    Skip { reason: RecordSkip },
    /// Not attempted: a record that must go first would fail or be skipped.
    Blocked { by: String },
}

/// One record in the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanStep {
    /// 1-based wave of the stack; `None` for a blocked record.
    pub wave: Option<u32>,
    pub logical_id: String,
    pub resource_type: String,
    pub physical_id: Option<String>,
    pub action: PlanAction,
}

/// One stack of a run, in the order its records would be settled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackPlan {
    pub stack: String,
    pub region: String,
    pub steps: Vec<PlanStep>,
}

/// Counts of a plan, by action.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanCounts {
    pub delete: u32,
    pub no_op: u32,
    pub retain: u32,
    pub nested: u32,
    pub fail: u32,
    pub skip: u32,
    pub blocked: u32,
}

impl PlanCounts {
    pub fn total(&self) -> u32 {
        self.delete + self.no_op + self.retain + self.nested + self.fail + self.skip + self.blocked
    }

    /// Something would be left in state.
    pub fn leaves_something(&self) -> bool {
        self.fail + self.skip + self.blocked > 0
    }
}

/// Why a run would be refused: nothing of it would be deleted. Worded by the plan view
/// (`core::view::plan`), each variant with its own value's words.
#[derive(Debug, Clone, PartialEq)]
pub enum RunRefusal {
    /// Destroy's refusals before anything is deleted (docs/destroy.md, "Refusals before
    /// anything is deleted"): [`check_plan`]'s, or a stopped export holding the records'
    /// resources (found by the caller, which reads CloudFormation).
    Destroy(Refusal),
    /// A lock another process holds on a stack of the run, or one that cannot be read
    /// (found by the caller, which reads S3).
    Lock(Box<LockRefusal>),
    /// Words from outside core, for the one caller that has nothing else: the CLI's
    /// dry run, with the tree loader's refusals (`cdkd_functions::destroy::load::
    /// LoadError::Refused`: no record, several regions, a tree too deep, a record the
    /// store refuses to read) and an export hold that could not be read
    /// (`HoldReadError`, carrying CloudFormation's error).
    Text(String),
}

/// One destroy run: a stack as asked and its nested children.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPlan {
    /// The stack as asked.
    pub stack: String,
    /// Its record's region, once known.
    pub region: Option<String>,
    /// Children first, the stack as asked last.
    pub stacks: Vec<StackPlan>,
    /// Why the run would be refused (nothing would be deleted).
    pub refusal: Option<RunRefusal>,
}

impl RunPlan {
    /// A run refused before its records could be planned (no state, ambiguous region,
    /// unreadable record...).
    pub fn refused(stack: &str, region: Option<&str>, why: RunRefusal) -> Self {
        RunPlan {
            stack: stack.to_string(),
            region: region.map(str::to_string),
            stacks: Vec::new(),
            refusal: Some(why),
        }
    }

    pub fn counts(&self) -> PlanCounts {
        let mut c = PlanCounts::default();
        for step in self.stacks.iter().flat_map(|s| &s.steps) {
            match step.action {
                PlanAction::Delete => c.delete += 1,
                PlanAction::NoOp => c.no_op += 1,
                PlanAction::Retain => c.retain += 1,
                PlanAction::NestedStack { .. } => c.nested += 1,
                PlanAction::Fail { .. } => c.fail += 1,
                PlanAction::Skip { .. } => c.skip += 1,
                PlanAction::Blocked { .. } => c.blocked += 1,
            }
        }
        c
    }
}

/// Everything [`plan_run`] reads.
#[derive(Debug, Clone, Copy)]
pub struct PlanRequest<'a> {
    /// The stack as asked.
    pub stack: &'a str,
    pub region: &'a str,
    /// The stack's record and its nested children's, children first (depth-first
    /// post-order, as the `destroy-plan` step collects them).
    pub stacks: &'a [(String, StateRecord)],
    /// Other records of the region that may import what these stacks export (only read
    /// when one of them exports anything).
    pub others: &'a [StackRecord<'a>],
    pub allow_nested_child: bool,
    pub decide: DecideOptions,
}

/// Plans a run from its records (see the module doc). The first refusal wins and leaves
/// `stacks` empty: a refused run deletes nothing.
pub fn plan_run(req: &PlanRequest<'_>) -> RunPlan {
    let mut plans = Vec::new();
    // Child stack -> whether its plan is clean (what its parent's row waits for).
    let mut children_clean: BTreeMap<String, bool> = BTreeMap::new();
    for (stack, record) in req.stacks {
        let is_root = stack == req.stack;
        let opts = RefusalOptions {
            allow_nested_child: !is_root || req.allow_nested_child,
        };
        let target = StackRecord::from_state(stack, req.region, record);
        let graph = match check_plan(&target, req.others, opts) {
            Err(r) => return RunPlan::refused(req.stack, Some(req.region), RunRefusal::Destroy(r)),
            Ok(PlanVerdict::Empty) => None,
            Ok(PlanVerdict::Proceed { graph, .. }) => Some(graph),
        };
        let plan = match (&graph, record.body.get("resources")) {
            (Some(g), Some(Value::Object(resources))) => {
                plan_stack(stack, req.region, resources, g, &children_clean, req.decide)
            }
            _ => StackPlan {
                stack: stack.clone(),
                region: req.region.to_string(),
                steps: Vec::new(),
            },
        };
        let clean = !plan.steps.iter().any(|s| {
            matches!(
                s.action,
                PlanAction::Fail { .. } | PlanAction::Skip { .. } | PlanAction::Blocked { .. }
            )
        });
        children_clean.insert(stack.clone(), clean);
        plans.push(plan);
    }
    RunPlan {
        stack: req.stack.to_string(),
        region: Some(req.region.to_string()),
        stacks: plans,
        refusal: None,
    }
}

/// One stack's waves: repeatedly take the ready set, settle it with each record's
/// decision (a delete is assumed to succeed), until nothing is ready.
pub fn plan_stack(
    stack: &str,
    region: &str,
    resources: &Map<String, Value>,
    graph: &DeleteGraph,
    children_clean: &BTreeMap<String, bool>,
    opts: DecideOptions,
) -> StackPlan {
    let mut outcomes: BTreeMap<String, RowOutcome> = BTreeMap::new();
    let mut steps = Vec::new();
    let none = BTreeSet::new();
    let field = |id: &str, k: &str| {
        resources
            .get(id)
            .and_then(|e| e.get(k))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let mut wave = 0u32;
    // Bounded by the number of records (each wave settles at least one).
    for _ in 0..=graph.len() {
        let rs = ready_set(graph, &outcomes, &none);
        for (id, by) in &rs.blocked {
            outcomes.insert(id.clone(), RowOutcome::Blocked { by: by.clone() });
        }
        if rs.ready.is_empty() {
            break;
        }
        wave += 1;
        for id in rs.ready {
            let entry = resources
                .get(&id)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let (outcome, action) = match decide(&entry, opts) {
                Decision::Retain => (RowOutcome::Retained, PlanAction::Retain),
                Decision::NoOp => (RowOutcome::Deleted, PlanAction::NoOp),
                Decision::Fail { error } => (
                    RowOutcome::Failed {
                        error: error.to_string(),
                    },
                    PlanAction::Fail { error },
                ),
                Decision::Skip { reason } => (
                    RowOutcome::Skipped {
                        reason: reason.to_string(),
                    },
                    PlanAction::Skip { reason },
                ),
                Decision::Delete(p) if p.route == Route::NestedStack => {
                    let child = child_stack_name(stack, &id);
                    let outcome = match children_clean.get(&child) {
                        Some(false) => RowOutcome::Failed {
                            error: "nested stack not fully destroyed".into(),
                        },
                        _ => RowOutcome::Deleted,
                    };
                    (outcome, PlanAction::NestedStack { child })
                }
                Decision::Delete(_) => (RowOutcome::Deleted, PlanAction::Delete),
            };
            outcomes.insert(id.clone(), outcome);
            steps.push(PlanStep {
                wave: Some(wave),
                resource_type: field(&id, "resourceType").unwrap_or_default(),
                physical_id: field(&id, "physicalId"),
                logical_id: id,
                action,
            });
        }
    }
    // Blocked records last, in record order.
    for node in graph.nodes() {
        if let Some(RowOutcome::Blocked { by }) = outcomes.get(&node.logical_id) {
            steps.push(PlanStep {
                wave: None,
                logical_id: node.logical_id.clone(),
                resource_type: node.resource_type.clone(),
                physical_id: field(&node.logical_id, "physicalId"),
                action: PlanAction::Blocked { by: by.clone() },
            });
        }
    }
    StackPlan {
        stack: stack.to_string(),
        region: region.to_string(),
        steps,
    }
}

/// Whether an answer to the destroy's question (`core::view::plan::CONFIRM_QUESTION`)
/// confirms (`y` or `yes`, any case).
pub fn is_confirmation(answer: &str) -> bool {
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// The records the plan's tests (here and the plan view's) plan from.
#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use serde_json::json;

    pub(crate) fn rec(v: Value) -> StateRecord {
        StateRecord::from_body(v.as_object().cloned().unwrap())
    }

    pub(crate) fn opts() -> DecideOptions {
        DecideOptions {
            skip_final_snapshot: false,
            now_ms: 0,
        }
    }

    pub(crate) fn shop() -> Vec<(String, StateRecord)> {
        vec![
            (
                "Shop~Network".into(),
                rec(json!({
                    "version": 10, "region": "us-east-1", "parentStack": "Shop", "parentLogicalId": "Network",
                    "resources": {
                        "ChildQueue": {"resourceType": "AWS::SQS::Queue", "physicalId": "https://q/child"},
                        "ChildParam": {"resourceType": "AWS::SSM::Parameter", "physicalId": "/p", "dependencies": ["ChildQueue"]}
                    }
                })),
            ),
            (
                "Shop".into(),
                rec(json!({
                    "version": 10, "region": "us-east-1",
                    "resources": {
                        "Topic": {"resourceType": "AWS::SNS::Topic", "physicalId": "arn:aws:sns:us-east-1:1:t"},
                        "Queue": {"resourceType": "AWS::SQS::Queue", "physicalId": "https://q/1", "dependencies": ["Topic"]},
                        "Role": {"resourceType": "AWS::IAM::Role", "physicalId": "r"},
                        "Policy": {"resourceType": "AWS::IAM::Policy", "physicalId": "p", "dependencies": ["Role"]},
                        "Keep": {"resourceType": "AWS::S3::Bucket", "physicalId": "b", "deletionPolicy": "Retain"},
                        "CDKMetadata": {"resourceType": "AWS::CDK::Metadata"},
                        "Network": {"resourceType": "AWS::CloudFormation::Stack", "physicalId": "arn:stack"}
                    }
                })),
            ),
        ]
    }

    pub(crate) fn plan(stacks: &[(String, StateRecord)], allow: bool) -> RunPlan {
        plan_run(&PlanRequest {
            stack: &stacks[stacks.len() - 1].0,
            region: "us-east-1",
            stacks,
            others: &[],
            allow_nested_child: allow,
            decide: opts(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{opts, plan, rec, shop};
    use super::*;
    use serde_json::json;

    #[test]
    fn dry_run_plan_refuses_a_nested_child_alone() {
        let stacks = vec![shop().remove(0)];
        let p = plan(&stacks, false);
        assert!(p.stacks.is_empty());
        let why = p.refusal.unwrap();
        assert!(
            matches!(&why, RunRefusal::Destroy(Refusal::NestedChild { parent, .. }) if parent == "Shop"),
            "{why:?}"
        );
        assert!(why.to_string().contains("it is a nested stack of 'Shop'"));
        let allowed = plan(&stacks, true);
        assert!(allowed.refusal.is_none());
    }

    #[test]
    fn dry_run_plan_refuses_a_stack_whose_exports_are_imported() {
        let stacks = vec![(
            "P".to_string(),
            rec(json!({"region": "us-east-1", "outputs": {"Arn": "x"},
                        "resources": {"T": {"resourceType": "AWS::SNS::Topic"}}})),
        )];
        let consumer = json!({"imports": [{"sourceStack": "P", "sourceRegion": "us-east-1", "exportName": "Arn"}]})
            .as_object()
            .cloned()
            .unwrap();
        let others = [StackRecord {
            stack: "C",
            key_region: "us-east-1",
            body: &consumer,
            divergent_body_region: None,
        }];
        let p = plan_run(&PlanRequest {
            stack: "P",
            region: "us-east-1",
            stacks: &stacks,
            others: &others,
            allow_nested_child: false,
            decide: opts(),
        });
        let why = p.refusal.unwrap();
        assert!(
            matches!(&why, RunRefusal::Destroy(Refusal::ActiveImports { .. })),
            "{why:?}"
        );
        assert!(why.to_string().contains("still imported by 'C'"));
    }

    #[test]
    fn dry_run_plan_of_a_failing_nested_child_fails_its_parent_row() {
        let mut stacks = shop();
        stacks[0].1 = rec(json!({
            "region": "us-east-1", "parentStack": "Shop",
            "resources": {"Hook": {"resourceType": "Custom::X"}}
        }));
        let p = plan(&stacks, false);
        let net = p.stacks[1]
            .steps
            .iter()
            .find(|s| s.logical_id == "Network")
            .unwrap();
        assert_eq!(
            net.action,
            PlanAction::NestedStack {
                child: "Shop~Network".into()
            }
        );
        assert_eq!(p.counts().skip, 1);
    }

    #[test]
    fn empty_stack_plans_no_rows_and_is_not_refused() {
        let stacks = vec![(
            "Empty".to_string(),
            rec(json!({"region": "us-east-1", "resources": {}})),
        )];
        let p = plan(&stacks, false);
        assert!(p.refusal.is_none());
        assert_eq!(p.counts().total(), 0);
    }

    #[test]
    fn confirmation_answer_yes_or_y_only() {
        assert!(is_confirmation("yes\n"));
        assert!(is_confirmation(" Y "));
        assert!(!is_confirmation(""));
        assert!(!is_confirmation("no"));
        assert!(!is_confirmation("yess"));
    }
}
