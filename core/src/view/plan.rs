//! The destroy plan without destroying (`cdkd-flow destroy --dry-run`) and the
//! confirmation listing shown before a real destroy.
//!
//! [`plan_run`] computes, from the records alone, what a destroy run would do: the same
//! refusals as the `destroy-plan` step (`refusals::check_plan`: nested child alone,
//! importers, damaged record, cycle), then per stack the waves of the ready-set model
//! (`waves::ready_set`, dependents first) with each record's decision (`decide`): delete,
//! no-op, retain, fail or skip before any call, and what a failure would block. Nested
//! children come before their parent, as in a run. A held lock or an unknown stack is
//! found by the caller (it needs I/O) and set as the plan's refusal.
//!
//! The renderers are pure; untrusted text is stripped or flattened onto one line.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::destroy::decide::{decide, DecideOptions, Decision, Route};
use crate::destroy::graph::DeleteGraph;
use crate::destroy::model::RowOutcome;
use crate::destroy::refusals::{check_plan, PlanVerdict, RefusalOptions, StackRecord};
use crate::destroy::waves::ready_set;
use crate::keys::child_stack_name;
use crate::state::StateRecord;
use crate::text::{flatten_str, or_unrenderable, strip};
use crate::view::join_lines;
use crate::view::words::{count, n_of_m, nonzero_counts, plural_s, stack_region};

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
    Fail { error: String },
    /// Declined before any call: the row would be skipped and keep its record.
    Skip { reason: String },
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

/// One destroy run: a stack as asked and its nested children.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunPlan {
    /// The stack as asked.
    pub stack: String,
    /// Its record's region, once known.
    pub region: Option<String>,
    /// Children first, the stack as asked last.
    pub stacks: Vec<StackPlan>,
    /// Why the run would be refused (nothing would be deleted), one line.
    pub refusal: Option<String>,
}

impl RunPlan {
    /// A run refused before its records could be planned (no state, ambiguous region,
    /// unreadable record...).
    pub fn refused(stack: &str, region: Option<&str>, why: impl Into<String>) -> Self {
        RunPlan {
            stack: stack.to_string(),
            region: region.map(str::to_string),
            stacks: Vec::new(),
            refusal: Some(why.into()),
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
            Err(r) => return RunPlan::refused(req.stack, Some(req.region), r.to_string()),
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
            let (action, outcome) = match decide(&entry, opts) {
                Decision::Retain => (PlanAction::Retain, RowOutcome::Retained),
                Decision::NoOp => (PlanAction::NoOp, RowOutcome::Deleted),
                Decision::Fail { error } => (
                    PlanAction::Fail {
                        error: error.to_string(),
                    },
                    RowOutcome::Failed {
                        error: error.to_string(),
                    },
                ),
                Decision::Skip { reason } => (
                    PlanAction::Skip {
                        reason: reason.to_string(),
                    },
                    RowOutcome::Skipped {
                        reason: reason.to_string(),
                    },
                ),
                Decision::Delete(p) if p.route == Route::NestedStack => {
                    let child = child_stack_name(stack, &id);
                    let outcome = match children_clean.get(&child) {
                        Some(false) => RowOutcome::Failed {
                            error: "nested stack not fully destroyed".into(),
                        },
                        _ => RowOutcome::Deleted,
                    };
                    (PlanAction::NestedStack { child }, outcome)
                }
                Decision::Delete(_) => (PlanAction::Delete, RowOutcome::Deleted),
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

fn action_text(a: &PlanAction) -> String {
    match a {
        PlanAction::Delete => "delete".into(),
        PlanAction::NoOp => "no-op (nothing to delete in AWS)".into(),
        PlanAction::Retain => "retain (DeletionPolicy: stays in AWS)".into(),
        PlanAction::NestedStack { child } => {
            format!(
                "nested stack: settled with {}",
                or_unrenderable(strip(child))
            )
        }
        PlanAction::Fail { error } => format!("would fail: {}", flatten_str(error)),
        PlanAction::Skip { reason } => format!("would be skipped: {}", flatten_str(reason)),
        PlanAction::Blocked { by } => format!("blocked by {}", or_unrenderable(strip(by))),
    }
}

fn counts_text(c: &PlanCounts) -> String {
    nonzero_counts(&[
        (c.delete, "to delete"),
        (c.nested, "nested stack"),
        (c.no_op, "no-op"),
        (c.retain, "retained"),
        (c.fail, "would fail"),
        (c.skip, "would be skipped"),
        (c.blocked, "blocked"),
    ])
    .unwrap_or_else(|| "no resources".into())
}

fn stack_counts(s: &StackPlan) -> PlanCounts {
    RunPlan {
        stack: String::new(),
        region: None,
        stacks: vec![s.clone()],
        refusal: None,
    }
    .counts()
}

/// The `--dry-run` output: per run (in the order the runs would go), its stacks children
/// first, every record with its wave and action, then a summary. Ends with a newline.
pub fn render_plan(runs: &[RunPlan]) -> String {
    let mut out = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let region = run.region.as_deref().unwrap_or("region unknown");
        if let Some(why) = &run.refusal {
            out.push(format!(
                "{}. {}: refused: {}",
                i + 1,
                stack_region(&run.stack, region),
                flatten_str(why)
            ));
            continue;
        }
        out.push(format!(
            "{}. {}: {}",
            i + 1,
            stack_region(&run.stack, region),
            counts_text(&run.counts())
        ));
        for s in &run.stacks {
            let c = stack_counts(s);
            let waves = s.steps.iter().filter_map(|x| x.wave).max().unwrap_or(0);
            out.push(format!(
                "  {}: {} in {}",
                stack_region(&s.stack, &s.region),
                c.total(),
                count(waves, "wave")
            ));
            let cell = |v: &str| or_unrenderable(strip(v));
            let id_w = s
                .steps
                .iter()
                .map(|x| cell(&x.logical_id).chars().count())
                .max()
                .unwrap_or(0);
            let ty_w = s
                .steps
                .iter()
                .map(|x| cell(&x.resource_type).chars().count())
                .max()
                .unwrap_or(0);
            for step in &s.steps {
                let id = cell(&step.logical_id);
                let ty = cell(&step.resource_type);
                let wave = step
                    .wave
                    .map(|w| format!("wave {w}"))
                    .unwrap_or_else(|| "  -   ".into());
                out.push(format!(
                    "    {wave:<7} {id}{}  {ty}{}  {}",
                    " ".repeat(id_w - id.chars().count()),
                    " ".repeat(ty_w - ty.chars().count()),
                    action_text(&step.action)
                ));
            }
        }
    }
    let refused = runs.iter().filter(|r| r.refusal.is_some()).count();
    let total: u32 = runs.iter().map(|r| r.counts().total()).sum();
    let stacks: usize = runs.iter().map(|r| r.stacks.len()).sum();
    out.push(if refused > 0 {
        format!(
            "Dry run: nothing was deleted. {} would be refused.",
            refused_of(refused, runs.len())
        )
    } else {
        format!(
            "Dry run: nothing was deleted. {} in {} would be settled in this order.",
            count(total, "resource"),
            count(stacks as u64, "stack")
        )
    });
    join_lines(&out)
}

/// `1 of 2 destroys`: how many runs of a destroy are refused.
pub fn refused_of(refused: usize, runs: usize) -> String {
    n_of_m(refused as u64, runs as u64, "destroy")
}

/// The error when some runs of a destroy are refused (the refusals are printed before
/// it): `1 of 2 destroys refused; nothing was deleted`.
pub fn refused_summary(refused: usize, runs: usize) -> String {
    format!("{} refused; nothing was deleted", refused_of(refused, runs))
}

/// The question that ends the confirmation (printed without a newline).
pub const CONFIRM_QUESTION: &str = "Destroy these resources? Type 'yes' to go on: ";

/// Whether an answer to [`CONFIRM_QUESTION`] confirms (`y` or `yes`, any case).
pub fn is_confirmation(answer: &str) -> bool {
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// What the confirmation lists before [`CONFIRM_QUESTION`]: the stacks (children
/// included), their resource counts, and at most `cap` resources in the order they
/// would be settled. `location` names the state bucket and prefix. Ends with a newline.
pub fn render_confirmation(runs: &[RunPlan], location: &str, cap: usize) -> String {
    let stacks: usize = runs.iter().map(|r| r.stacks.len()).sum();
    let total: u32 = runs.iter().map(|r| r.counts().total()).sum();
    let mut out = vec![format!(
        "This destroys {} ({}) recorded in {}:",
        count(stacks as u64, "stack"),
        count(total, "resource"),
        flatten_str(location)
    )];
    let mut shown = 0usize;
    let mut hidden = 0usize;
    for s in runs.iter().flat_map(|r| &r.stacks) {
        out.push(format!(
            "  {}: {}",
            stack_region(&s.stack, &s.region),
            counts_text(&stack_counts(s))
        ));
        for step in &s.steps {
            if shown >= cap {
                hidden += 1;
                continue;
            }
            shown += 1;
            let phys = step
                .physical_id
                .as_deref()
                .map(|p| format!("  {}", flatten_str(p)))
                .unwrap_or_default();
            let tail = match &step.action {
                PlanAction::Delete | PlanAction::NoOp | PlanAction::NestedStack { .. } => {
                    String::new()
                }
                other => format!("  [{}]", action_text(other)),
            };
            out.push(format!(
                "    {}  {}{phys}{tail}",
                or_unrenderable(strip(&step.logical_id)),
                or_unrenderable(strip(&step.resource_type))
            ));
        }
    }
    if hidden > 0 {
        out.push(format!(
            "  ... and {hidden} more (cdkd-flow destroy --dry-run lists them all)"
        ));
    }
    let retained: u32 = runs.iter().map(|r| r.counts().retain).sum();
    if retained > 0 {
        let one = retained == 1;
        out.push(format!(
            "{} stay{} in AWS; {} record{} go{} with the state file.",
            count(retained, "retained resource"),
            if one { "s" } else { "" },
            if one { "its" } else { "their" },
            plural_s(u64::from(retained)),
            if one { "es" } else { "" },
        ));
    }
    join_lines(&out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(v: Value) -> StateRecord {
        StateRecord::from_body(v.as_object().cloned().unwrap())
    }

    fn opts() -> DecideOptions {
        DecideOptions {
            skip_final_snapshot: false,
            now_ms: 0,
        }
    }

    fn shop() -> Vec<(String, StateRecord)> {
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

    fn plan(stacks: &[(String, StateRecord)], allow: bool) -> RunPlan {
        plan_run(&PlanRequest {
            stack: &stacks[stacks.len() - 1].0,
            region: "us-east-1",
            stacks,
            others: &[],
            allow_nested_child: allow,
            decide: opts(),
        })
    }

    #[test]
    fn dry_run_plan_orders_dependents_first_children_before_parent() {
        let p = plan(&shop(), false);
        assert!(p.refusal.is_none());
        assert_eq!(p.stacks[0].stack, "Shop~Network");
        let order: Vec<&str> = p.stacks[1]
            .steps
            .iter()
            .map(|s| s.logical_id.as_str())
            .collect();
        let pos = |id: &str| order.iter().position(|x| *x == id).unwrap();
        assert!(pos("Queue") < pos("Topic"), "{order:?}");
        assert!(pos("Policy") < pos("Role"), "{order:?}");
        assert_eq!(p.stacks[0].steps[0].logical_id, "ChildParam");
        insta::assert_snapshot!(render_plan(&[p]));
    }

    #[test]
    fn dry_run_plan_names_rows_that_would_fail_and_what_they_block() {
        let stacks = vec![(
            "Db".to_string(),
            rec(json!({
                "region": "us-east-1",
                "resources": {
                    "Vol": {"resourceType": "AWS::SNS::Topic", "deletionPolicy": "Snapshot", "dependencies": ["Key"]},
                    "Key": {"resourceType": "AWS::KMS::Key"},
                    "Hook": {"resourceType": "Custom::Cleanup", "properties": {}},
                    "Other": {"resourceType": "AWS::SQS::Queue"}
                }
            })),
        )];
        let p = plan(&stacks, false);
        let c = p.counts();
        assert_eq!((c.fail, c.skip, c.blocked, c.delete), (1, 1, 1, 1));
        assert!(c.leaves_something());
        let key = p.stacks[0]
            .steps
            .iter()
            .find(|s| s.logical_id == "Key")
            .unwrap();
        assert_eq!(key.action, PlanAction::Blocked { by: "Vol".into() });
        assert_eq!(key.wave, None);
        insta::assert_snapshot!(render_plan(&[p]));
    }

    #[test]
    fn dry_run_plan_refuses_a_nested_child_alone() {
        let stacks = vec![shop().remove(0)];
        let p = plan(&stacks, false);
        assert!(p.stacks.is_empty());
        assert!(p
            .refusal
            .as_deref()
            .unwrap()
            .contains("it is a nested stack of 'Shop'"));
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
        assert!(p
            .refusal
            .as_deref()
            .unwrap()
            .contains("still imported by 'C'"));
    }

    #[test]
    fn dry_run_plan_refuses_a_cycle_naming_its_path() {
        let stacks = vec![(
            "Loop".to_string(),
            rec(json!({"region": "us-east-1", "resources": {
                "A": {"resourceType": "T", "dependencies": ["B"]},
                "B": {"resourceType": "T", "dependencies": ["A"]}}})),
        )];
        let p = plan(&stacks, false);
        let why = p.refusal.clone().unwrap();
        assert!(
            why.contains("dependency cycle") && why.contains("A -> B"),
            "{why}"
        );
        let lock = RunPlan::refused(
            "Held",
            Some("us-east-1"),
            "Could not acquire lock for stack Held (us-east-1) — held by someone.",
        );
        insta::assert_snapshot!(render_plan(&[p, lock]));
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
    fn confirmation_lists_stacks_counts_and_a_capped_list_of_resources() {
        let p = plan(&shop(), false);
        let text = render_confirmation(&[p], "s3://bucket/cdkd", 5);
        assert!(text.contains("... and 4 more"), "{text}");
        insta::assert_snapshot!(text);
    }

    #[test]
    fn confirmation_flattens_untrusted_text() {
        let stacks = vec![(
            "S".to_string(),
            rec(json!({"region": "us-east-1", "resources": {
                "Bad\u{1b}[2J": {"resourceType": "AWS::SNS::Topic", "physicalId": "line1\nline2\u{9b}"}}})),
        )];
        let text = render_confirmation(&[plan(&stacks, false)], "s3://b/cdkd", 10);
        assert!(!text.contains('\u{1b}') && !text.contains('\u{9b}'));
        assert_eq!(text.lines().count(), 3, "{text}");
    }

    #[test]
    fn confirmation_answer_yes_or_y_only() {
        assert!(is_confirmation("yes\n"));
        assert!(is_confirmation(" Y "));
        assert!(!is_confirmation(""));
        assert!(!is_confirmation("no"));
        assert!(!is_confirmation("yess"));
    }

    #[test]
    fn refused_summary_says_n_of_m_destroys() {
        assert_eq!(
            refused_summary(1, 1),
            "1 of 1 destroy refused; nothing was deleted"
        );
        assert_eq!(
            refused_summary(1, 2),
            "1 of 2 destroys refused; nothing was deleted"
        );
    }

    #[test]
    fn plan_counts_are_words_one_resource_one_stack_one_wave() {
        let stacks = vec![(
            "One".to_string(),
            rec(json!({"region": "us-east-1", "resources": {
                "T": {"resourceType": "AWS::SNS::Topic", "physicalId": "t"}}})),
        )];
        let p = plan(&stacks, false);
        let text = render_plan(std::slice::from_ref(&p));
        assert!(text.contains("  One (us-east-1): 1 in 1 wave\n"), "{text}");
        assert!(
            text.ends_with("1 resource in 1 stack would be settled in this order.\n"),
            "{text}"
        );
        let confirm = render_confirmation(&[p], "s3://b/cdkd", 10);
        assert!(
            confirm.starts_with("This destroys 1 stack (1 resource) recorded in s3://b/cdkd:\n"),
            "{confirm}"
        );
    }
}
