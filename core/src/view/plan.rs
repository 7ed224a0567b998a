//! The words of the destroy plan (`destroy::dry_run`, which decides): the
//! `cdkd-flow destroy --dry-run` output, the confirmation listing shown before a real
//! destroy and its question, and the refusal summary.
//!
//! The renderers are pure; untrusted text is stripped or flattened onto one line.

use std::fmt;

use crate::destroy::dry_run::{PlanAction, PlanCounts, RunPlan, RunRefusal, StackPlan};
use crate::text::{flatten_str, or_unrenderable, strip};
use crate::view::join_lines;
use crate::view::words::{count, n_of_m, nonzero_counts, plural_s, stack_region};

/// The words of [`RunRefusal`]: each refusal's own.
impl fmt::Display for RunRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunRefusal::Destroy(r) => r.fmt(f),
            RunRefusal::Lock(r) => r.fmt(f),
            RunRefusal::Text(words) => f.write_str(words),
        }
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
        PlanAction::Fail { error } => format!("would fail: {}", flatten_str(&error.to_string())),
        PlanAction::Skip { reason } => {
            format!("would be skipped: {}", flatten_str(&reason.to_string()))
        }
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
                flatten_str(&why.to_string())
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
    use crate::destroy::dry_run::test_support::{plan, rec, shop};
    use serde_json::json;

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
    fn dry_run_plan_refuses_a_cycle_naming_its_path() {
        let stacks = vec![(
            "Loop".to_string(),
            rec(json!({"region": "us-east-1", "resources": {
                "A": {"resourceType": "T", "dependencies": ["B"]},
                "B": {"resourceType": "T", "dependencies": ["A"]}}})),
        )];
        let p = plan(&stacks, false);
        let why = p.refusal.clone().unwrap().to_string();
        assert!(
            why.contains("dependency cycle") && why.contains("A -> B"),
            "{why}"
        );
        let lock = RunPlan::refused(
            "Held",
            Some("us-east-1"),
            RunRefusal::Text(
                "Could not acquire lock for stack Held (us-east-1) — held by someone.".into(),
            ),
        );
        insta::assert_snapshot!(render_plan(&[p, lock]));
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
