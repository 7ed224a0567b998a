//! The stack tree a destroy plans from (docs/destroy.md, "Stacks and their order" and "Refusals before anything is deleted" and "Layout"): which
//! region's record a stack name means, which nested child records a record owns, how
//! deep a tree may go, and which other records the strong-reference scan reads. Pure:
//! `cdkd_functions::destroy::load` does the reads, and both the `destroy-plan` step and
//! the CLI's dry run call it.

use serde_json::Value;

use crate::destroy::refusals::needs_consumer_scan;
use crate::keys::{child_stack_name, StackRef};
use crate::state::NESTED_STACK_TYPE;
use crate::state::{ResolveRefusal, ResourcesShape, StateRecord};

/// Nested-stack records deeper than this are refused (CloudFormation stops at 5 levels;
/// a hand-edited loop must not recurse forever).
pub const MAX_NESTING: usize = 16;

/// Why a stack's tree cannot be loaded: no single record to work on, or too deep a
/// nesting. Worded by `core::view::refusal`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeRefusal {
    /// No record of the stack, or records in several regions (the state views' refusal).
    Resolve(ResolveRefusal),
    /// Only the legacy record without a region.
    LegacyOnly { stack: String },
    /// Nested more than [`MAX_NESTING`] levels below its root.
    TooDeep { stack: String, region: String },
}

/// The region of the record a destroy of `stack` works on: `asked` (`--stack-region`)
/// when given, else the only region the stack has state in. `Err` is the refusal.
pub fn record_region(
    stack: &str,
    asked: Option<&str>,
    refs: &[StackRef],
) -> Result<String, TreeRefusal> {
    if let Some(r) = asked.filter(|r| !r.is_empty()) {
        return Ok(r.to_string());
    }
    let mut regions: Vec<Option<&str>> = refs
        .iter()
        .filter(|r| r.stack == stack)
        .map(|r| r.region.as_deref())
        .collect();
    regions.dedup();
    match regions.as_slice() {
        [Some(r)] => Ok((*r).to_string()),
        [] => Err(TreeRefusal::Resolve(ResolveRefusal::NoState {
            stack: stack.to_string(),
        })),
        [None] => Err(TreeRefusal::LegacyOnly {
            stack: stack.to_string(),
        }),
        many => Err(TreeRefusal::Resolve(ResolveRefusal::SeveralRegions {
            stack: stack.to_string(),
            regions: many.iter().map(|r| r.map(str::to_string)).collect(),
        })),
    }
}

/// The refusal for a tree deeper than [`MAX_NESTING`] below its root, if `depth` is.
pub fn check_depth(stack: &str, region: &str, depth: usize) -> Result<(), TreeRefusal> {
    if depth > MAX_NESTING {
        return Err(TreeRefusal::TooDeep {
            stack: stack.to_string(),
            region: region.to_string(),
        });
    }
    Ok(())
}

/// The child stack names of a record's `AWS::CloudFormation::Stack` rows, in row order
/// (a child whose record is missing is simply not loaded: its row deletes as gone).
pub fn nested_children(stack: &str, record: &StateRecord) -> Vec<String> {
    match record.resources() {
        ResourcesShape::Map(m) => m
            .iter()
            .filter(|(_, e)| {
                e.get("resourceType").and_then(Value::as_str) == Some(NESTED_STACK_TYPE)
            })
            .map(|(id, _)| child_stack_name(stack, id))
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether the strong-reference scan must read other records for `tree` at all: only
/// when one of its records exports something (statement 23).
pub fn tree_needs_consumer_scan(tree: &[(String, StateRecord)]) -> bool {
    tree.iter().any(|(_, r)| needs_consumer_scan(&r.body))
}

/// The other records of `region` the strong-reference scan reads for `tree`
/// (docs/destroy.md, "Refusals before anything is deleted" step 3), in listing order: none when no record of the tree exports
/// anything (statement 23); never a record of the tree itself, nor one of `gone_before` (stacks
/// an earlier run of the same command destroys first).
pub fn consumer_scan_targets(
    refs: &[StackRef],
    region: &str,
    tree: &[(String, StateRecord)],
    gone_before: &[String],
) -> Vec<String> {
    if !tree_needs_consumer_scan(tree) {
        return Vec::new();
    }
    refs.iter()
        .filter(|r| r.region.as_deref() == Some(region))
        .filter(|r| !tree.iter().any(|(s, _)| *s == r.stack))
        .filter(|r| !gone_before.contains(&r.stack))
        .map(|r| r.stack.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::parse_state;

    fn r(stack: &str, region: Option<&str>) -> StackRef {
        StackRef {
            stack: stack.into(),
            region: region.map(str::to_string),
        }
    }

    fn record(stack: &str, body: &str) -> (String, StateRecord) {
        (
            stack.to_string(),
            parse_state(stack, Some("us-east-1"), body.as_bytes()).expect("record parses"),
        )
    }

    #[test]
    fn stack_region_given_is_used_without_the_listing() {
        assert_eq!(
            record_region("A", Some("eu-west-1"), &[]).as_deref(),
            Ok("eu-west-1")
        );
    }

    #[test]
    fn the_only_region_is_the_record_region() {
        let refs = [r("A", Some("us-west-2")), r("B", Some("us-east-1"))];
        assert_eq!(record_region("A", None, &refs).as_deref(), Ok("us-west-2"));
    }

    #[test]
    fn several_regions_need_stack_region() {
        let refs = [r("A", Some("eu-west-1")), r("A", Some("us-east-1"))];
        let e = record_region("A", None, &refs).unwrap_err();
        assert_eq!(
            e,
            TreeRefusal::Resolve(ResolveRefusal::SeveralRegions {
                stack: "A".into(),
                regions: vec![Some("eu-west-1".into()), Some("us-east-1".into())]
            })
        );
        let e = e.to_string();
        assert!(e.contains("multiple regions: eu-west-1, us-east-1"), "{e}");
    }

    #[test]
    fn a_legacy_only_record_is_refused() {
        let e = record_region("A", None, &[r("A", None)]).unwrap_err();
        assert_eq!(e, TreeRefusal::LegacyOnly { stack: "A".into() });
        let e = e.to_string();
        assert!(e.contains("legacy state record"), "{e}");
    }

    #[test]
    fn no_record_is_refused() {
        let e = record_region("A", None, &[r("B", Some("us-east-1"))]).unwrap_err();
        assert_eq!(
            e,
            TreeRefusal::Resolve(ResolveRefusal::NoState { stack: "A".into() })
        );
        let e = e.to_string();
        assert!(e.starts_with("No state found for stack 'A'."), "{e}");
    }

    #[test]
    fn nesting_deeper_than_the_cap_is_refused() {
        assert!(check_depth("A", "us-east-1", MAX_NESTING).is_ok());
        assert_eq!(
            check_depth("A", "us-east-1", MAX_NESTING + 1),
            Err(TreeRefusal::TooDeep {
                stack: "A".into(),
                region: "us-east-1".into()
            })
        );
        assert_eq!(
            check_depth("A\n", "us-east-1", MAX_NESTING + 1)
                .unwrap_err()
                .to_string(),
            format!("Stack 'A' (us-east-1) is nested more than {MAX_NESTING} levels deep; refusing to destroy")
        );
    }

    #[test]
    fn children_are_the_nested_stack_rows() {
        let (_, rec) = record(
            "P",
            r#"{"version":10,"region":"us-east-1","resources":{
                "Net":{"resourceType":"AWS::CloudFormation::Stack"},
                "Q":{"resourceType":"AWS::SQS::Queue"}}}"#,
        );
        assert_eq!(nested_children("P", &rec), vec!["P~Net".to_string()]);
    }

    #[test]
    fn a_stack_without_exports_reads_no_other_record() {
        let tree = [record(
            "P",
            r#"{"version":10,"region":"us-east-1","resources":{}}"#,
        )];
        let refs = [r("C", Some("us-east-1"))];
        assert!(consumer_scan_targets(&refs, "us-east-1", &tree, &[]).is_empty());
    }

    #[test]
    fn the_consumer_scan_skips_the_tree_other_regions_and_stacks_gone_before() {
        let tree = [record(
            "P",
            r#"{"version":10,"region":"us-east-1","resources":{},
                "outputs":{"O":{"value":"v","exportName":"X"}}}"#,
        )];
        let refs = [
            r("A", Some("us-east-1")),
            r("B", Some("eu-west-1")),
            r("C", Some("us-east-1")),
            r("D", Some("us-east-1")),
            r("P", Some("us-east-1")),
        ];
        let gone = ["C".to_string()];
        assert_eq!(
            consumer_scan_targets(&refs, "us-east-1", &tree, &gone),
            vec!["A".to_string(), "D".to_string()]
        );
    }
}
