//! Plan-time refusals (docs/destroy.md, "Refusals before anything is deleted" and "Cycles"): decided from the records alone, before the lock
//! is taken (and again under the lock), before anything is deleted. Every message names
//! the stack and the cause; record text is flattened onto one line.

use super::graph::{CycleError, DamagedResources, DeleteGraph, GraphWarning};
use crate::state::{kind_of, StateRecord};
use serde_json::{Map, Value};

/// One stack record as read: the key's stack name and region, and the body as stored
/// (before any region replacement).
#[derive(Debug, Clone, Copy)]
pub struct StackRecord<'a> {
    pub stack: &'a str,
    pub key_region: &'a str,
    pub body: &'a Map<String, Value>,
    /// The body's own region when the reader replaced it with the key's
    /// (`StateRecord::divergent_body_region`).
    pub divergent_body_region: Option<&'a Value>,
}

impl<'a> StackRecord<'a> {
    /// A record as `state::parse_state` returned it.
    pub fn from_state(stack: &'a str, key_region: &'a str, record: &'a StateRecord) -> Self {
        Self {
            stack,
            key_region,
            body: &record.body,
            divergent_body_region: record.divergent_body_region.as_ref(),
        }
    }
}

/// Plan options that change refusals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RefusalOptions {
    /// The `state destroy` escape hatch: destroy a nested child on its own.
    pub allow_nested_child: bool,
}

/// A consumer still importing one of this stack's exports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveImport {
    pub consumer_stack: String,
    pub consumer_region: String,
    pub export_name: String,
}

/// What is wrong with a damaged record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Damage {
    ResourcesAbsent,
    ResourcesNotObject { kind: &'static str },
    Entry(DamagedResources),
}

/// Why a destroy is refused. Its one-line message is its `Display`, the refusal views'
/// (`core::view::refusal`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// docs/destroy.md, "Refusals before anything is deleted" step 1, statement 27.
    NestedChild {
        stack: String,
        region: String,
        parent: String,
        parent_logical_id: Option<String>,
    },
    /// docs/destroy.md, "Refusals before anything is deleted" step 3, statement 21.
    ActiveImports {
        stack: String,
        region: String,
        consumers: Vec<ActiveImport>,
    },
    /// Malformed `resources` (docs/state-and-lock.md, "Fields": writers refuse by name).
    Damaged {
        stack: String,
        region: String,
        damage: Damage,
    },
    /// docs/state-and-lock.md, "Reading a record" region authority: the body names another region than its key.
    DivergentRegion {
        stack: String,
        region: String,
        body_kind: &'static str,
    },
    /// docs/destroy.md, "Cycles", statement 14.
    Cycle {
        stack: String,
        region: String,
        cycle: CycleError,
    },
    /// docs/destroy.md, "Refusals before anything is deleted" step 8, statement 56: a stopped export holds the record's
    /// resources in CloudFormation (`crate::export::held`). `flags`: the state bucket
    /// and prefix of a command the refusal prints (`core::view::contention::state_flags`).
    HeldByExport {
        stack: String,
        region: String,
        hold: Box<crate::export::held::ExportHold>,
        flags: Option<String>,
    },
}

impl Refusal {
    /// Error name for the workflow's `Catch` / the CLI exit status (docs/destroy.md, "Stacks and their order" step 5).
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::NestedChild { .. } => "NestedChildDestroy",
            Refusal::ActiveImports { .. } => "StackHasActiveImports",
            Refusal::Damaged { .. } => "DamagedRecord",
            Refusal::DivergentRegion { .. } => "DivergentRegion",
            Refusal::Cycle { .. } => "DependencyCycle",
            Refusal::HeldByExport { .. } => "HeldByExport",
        }
    }
}

impl std::error::Error for Refusal {}

/// What the plan found when nothing was refused.
#[derive(Debug, Clone)]
pub enum PlanVerdict {
    /// Zero records: take the lock, re-read, delete the file (docs/destroy.md, "Refusals before anything is deleted" step 2).
    Empty,
    /// Go on with this graph.
    Proceed {
        graph: DeleteGraph,
        warnings: Vec<GraphWarning>,
    },
}

/// The `outputs` keys other stacks can import (docs/state-and-lock.md, "Fields" and "The exports index" `exportNames` rule):
/// absent `exportNames` = every output key; present = its entries that are keys of `outputs`.
pub fn exportable_outputs(body: &Map<String, Value>) -> Vec<String> {
    let Some(outputs) = body.get("outputs").and_then(Value::as_object) else {
        return Vec::new();
    };
    match body.get("exportNames") {
        None => outputs.keys().cloned().collect(),
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .filter(|n| outputs.contains_key(*n))
            .map(str::to_string)
            .collect(),
        // A malformed exportNames cannot narrow anything: every key, to stay safe.
        Some(_) => outputs.keys().cloned().collect(),
    }
}

/// Consumers among `others` whose `imports` name `(stack, region)` (docs/destroy.md, "Refusals before anything is deleted" step 3).
/// The record with the same name and region is skipped; a same-name record of another
/// region is a stranger. `outputReads` never block.
pub fn active_imports(target: &StackRecord<'_>, others: &[StackRecord<'_>]) -> Vec<ActiveImport> {
    let mut out = Vec::new();
    for o in others {
        if o.stack == target.stack && o.key_region == target.key_region {
            continue;
        }
        let Some(imports) = o.body.get("imports").and_then(Value::as_array) else {
            continue;
        };
        for imp in imports {
            let field = |k: &str| imp.get(k).and_then(Value::as_str);
            if field("sourceStack") == Some(target.stack)
                && field("sourceRegion") == Some(target.key_region)
            {
                out.push(ActiveImport {
                    consumer_stack: o.stack.to_string(),
                    consumer_region: o.key_region.to_string(),
                    export_name: field("exportName").unwrap_or("").to_string(),
                });
            }
        }
    }
    out
}

/// Whether the consumer scan is needed at all (statement 23: a stack that exports
/// nothing proceeds without reading any other record).
pub fn needs_consumer_scan(body: &Map<String, Value>) -> bool {
    !exportable_outputs(body).is_empty()
}

/// Runs every plan-time check in the order of docs/destroy.md, "Refusals before anything is deleted" and returns the first
/// refusal, or the graph.
/// `others` are the other records already read (unreadable ones left out: the scan
/// ignores them, statement 24); pass `&[]` when [`needs_consumer_scan`] is false.
pub fn check_plan(
    target: &StackRecord<'_>,
    others: &[StackRecord<'_>],
    opts: RefusalOptions,
) -> Result<PlanVerdict, Refusal> {
    let stack = target.stack.to_string();
    let region = target.key_region.to_string();
    let body = target.body;

    // 1. Child-only destroy.
    if !opts.allow_nested_child {
        if let Some(parent) = body.get("parentStack").filter(|v| !v.is_null()) {
            return Err(Refusal::NestedChild {
                stack,
                region,
                parent: crate::text::js_string(parent),
                parent_logical_id: body
                    .get("parentLogicalId")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            });
        }
    }

    // Damaged resources object.
    let resources = match body.get("resources") {
        None => {
            return Err(Refusal::Damaged {
                stack,
                region,
                damage: Damage::ResourcesAbsent,
            })
        }
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(Refusal::Damaged {
                stack,
                region,
                damage: Damage::ResourcesNotObject {
                    kind: kind_of(other),
                },
            })
        }
    };

    // 2. Empty stack path.
    if resources.is_empty() {
        return Ok(PlanVerdict::Empty);
    }

    // Region authority (docs/state-and-lock.md, "Reading a record"): the one rule export applies too.
    if let Some(c) =
        crate::state::RegionConflict::of(body, target.divergent_body_region, target.key_region)
    {
        return Err(Refusal::DivergentRegion {
            stack,
            region,
            body_kind: c.body_kind,
        });
    }

    // 3. Strong references.
    if needs_consumer_scan(body) {
        let consumers = active_imports(target, others);
        if !consumers.is_empty() {
            return Err(Refusal::ActiveImports {
                stack,
                region,
                consumers,
            });
        }
    }

    // Graph: damaged entries, then cycles.
    let graph = DeleteGraph::build(resources).map_err(|e| Refusal::Damaged {
        stack: stack.clone(),
        region: region.clone(),
        damage: Damage::Entry(e),
    })?;
    graph.check_acyclic().map_err(|cycle| Refusal::Cycle {
        stack,
        region,
        cycle,
    })?;
    let warnings = graph.warnings().to_vec();
    Ok(PlanVerdict::Proceed { graph, warnings })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn rec<'a>(stack: &'a str, region: &'a str, b: &'a Map<String, Value>) -> StackRecord<'a> {
        StackRecord {
            stack,
            key_region: region,
            body: b,
            divergent_body_region: None,
        }
    }

    fn producer() -> Map<String, Value> {
        body(json!({
            "version": 9, "stackName": "P", "region": "us-east-1",
            "resources": {"T": {"resourceType": "AWS::SNS::Topic", "physicalId": "t"}},
            "outputs": {"TopicArn": "arn:t"}
        }))
    }

    /// The one region rule (`crate::state::RegionConflict`), as read
    /// through `parse_state` and on a raw body; export applies the same one.
    #[test]
    fn region_conflict_destroy_refuses_a_record_whose_body_names_another_region() {
        let raw = json!({"version": 10, "stackName": "P", "region": "eu-west-1",
                         "resources": {"T": {"resourceType": "AWS::SNS::Topic", "physicalId": "t"}}});
        let read =
            crate::state::parse_state("P", Some("us-east-1"), raw.to_string().as_bytes()).unwrap();
        let via_reader = StackRecord::from_state("P", "us-east-1", &read);
        let b = body(raw.clone());
        for target in [via_reader, rec("P", "us-east-1", &b)] {
            let err = check_plan(&target, &[], RefusalOptions::default()).unwrap_err();
            assert_eq!(err.code(), "DivergentRegion");
            let msg = err.to_string();
            assert!(
                msg.starts_with("refusing to destroy stack 'P' (us-east-1): the record's body names a different region (a string) than its key (us-east-1)"),
                "{msg}"
            );
            assert!(!msg.contains("eu-west-1"), "{msg}");
        }
        // No resources: nothing to conflict with (the empty path).
        let empty = body(json!({"region": "eu-west-1", "resources": {}}));
        assert!(matches!(
            check_plan(
                &rec("P", "us-east-1", &empty),
                &[],
                RefusalOptions::default()
            ),
            Ok(PlanVerdict::Empty)
        ));
        assert_eq!(
            crate::state::RegionConflict::of(&b, None, "us-east-1"),
            Some(crate::state::RegionConflict {
                body_kind: "a string"
            })
        );
        assert_eq!(
            crate::state::RegionConflict::of(&b, None, "eu-west-1"),
            None
        );
    }

    #[test]
    fn nested_child_alone_is_refused_statement_27() {
        let b = body(json!({"parentStack": "P", "parentLogicalId": "Child",
                            "resources": {"T": {"resourceType": "AWS::SNS::Topic"}}}));
        let err = check_plan(
            &rec("P~Child", "us-east-1", &b),
            &[],
            RefusalOptions::default(),
        )
        .unwrap_err();
        assert_eq!(err.code(), "NestedChildDestroy");
        let msg = err.to_string();
        assert!(
            msg.contains("'P~Child'") && msg.contains("'P'") && msg.contains("Child"),
            "{msg}"
        );
        let ok = check_plan(
            &rec("P~Child", "us-east-1", &b),
            &[],
            RefusalOptions {
                allow_nested_child: true,
            },
        );
        assert!(matches!(ok, Ok(PlanVerdict::Proceed { .. })));
    }

    #[test]
    fn active_import_in_same_region_refuses_statement_21() {
        let p = producer();
        let c = body(json!({"resources": {}, "imports": [
            {"sourceStack": "P", "sourceRegion": "us-east-1", "exportName": "P:TopicArn"}]}));
        let err = check_plan(
            &rec("P", "us-east-1", &p),
            &[rec("C", "us-east-1", &c)],
            RefusalOptions::default(),
        )
        .unwrap_err();
        assert_eq!(
            err,
            Refusal::ActiveImports {
                stack: "P".into(),
                region: "us-east-1".into(),
                consumers: vec![ActiveImport {
                    consumer_stack: "C".into(),
                    consumer_region: "us-east-1".into(),
                    export_name: "P:TopicArn".into()
                }]
            }
        );
        assert!(err
            .to_string()
            .contains("'C' (us-east-1) importing 'P:TopicArn'"));
    }

    #[test]
    fn import_from_other_region_does_not_block_statement_22() {
        let p = producer();
        let c = body(json!({"imports": [
            {"sourceStack": "P", "sourceRegion": "eu-west-1", "exportName": "X"}]}));
        assert!(check_plan(
            &rec("P", "us-east-1", &p),
            &[rec("C", "us-east-1", &c)],
            RefusalOptions::default()
        )
        .is_ok());
    }

    #[test]
    fn empty_outputs_need_no_scan_statement_23() {
        let mut p = producer();
        p.insert("outputs".into(), json!({}));
        assert!(!needs_consumer_scan(&p));
        let c = body(json!({"imports": [
            {"sourceStack": "P", "sourceRegion": "us-east-1", "exportName": "X"}]}));
        assert!(check_plan(
            &rec("P", "us-east-1", &p),
            &[rec("C", "us-east-1", &c)],
            RefusalOptions::default()
        )
        .is_ok());
    }

    #[test]
    fn export_names_rule_absent_means_every_output_key_s_and_l_3_1() {
        let p = producer();
        assert_eq!(exportable_outputs(&p), vec!["TopicArn"]);
        let mut q = p.clone();
        q.insert("exportNames".into(), json!([]));
        assert!(exportable_outputs(&q).is_empty());
        assert!(!needs_consumer_scan(&q));
        q.insert("exportNames".into(), json!(["TopicArn", "NotAnOutput"]));
        assert_eq!(exportable_outputs(&q), vec!["TopicArn"]);
    }

    #[test]
    fn same_name_same_region_is_self_other_region_is_not_rule_2_2_3() {
        let p = producer();
        let me = body(json!({"imports": [
            {"sourceStack": "P", "sourceRegion": "us-east-1", "exportName": "X"}]}));
        assert!(
            active_imports(&rec("P", "us-east-1", &p), &[rec("P", "us-east-1", &me)]).is_empty()
        );
        assert_eq!(
            active_imports(&rec("P", "us-east-1", &p), &[rec("P", "eu-west-1", &me)]).len(),
            1
        );
    }

    #[test]
    fn damaged_record_is_refused_by_name() {
        for (b, want) in [
            (json!({}), "has no resources object"),
            (
                json!({"resources": []}),
                "resources is an array, not an object",
            ),
            (
                json!({"resources": {"A": null}}),
                "resource 'A' is not an object",
            ),
            (
                json!({"resources": {"A": {"physicalId": "x"}}}),
                "resource 'A' has no resourceType",
            ),
        ] {
            let b = body(b);
            let err =
                check_plan(&rec("S", "us-east-1", &b), &[], RefusalOptions::default()).unwrap_err();
            assert_eq!(err.code(), "DamagedRecord");
            let msg = err.to_string();
            assert!(
                msg.starts_with(
                    "refusing to destroy stack 'S' (us-east-1): the state record is damaged"
                ),
                "{msg}"
            );
            assert!(msg.ends_with(want), "{msg}");
        }
    }

    #[test]
    fn divergent_body_region_with_resources_is_refused_s_and_l_2_2() {
        let b = body(json!({"region": "eu-west-1",
                            "resources": {"T": {"resourceType": "AWS::SNS::Topic"}}}));
        let err =
            check_plan(&rec("S", "us-east-1", &b), &[], RefusalOptions::default()).unwrap_err();
        assert_eq!(err.code(), "DivergentRegion");
        assert!(
            !err.to_string().contains("eu-west-1"),
            "the value itself is not shown"
        );
        // Empty: the empty-stack path, not a refusal.
        let e = body(json!({"region": "eu-west-1", "resources": {}}));
        assert!(matches!(
            check_plan(&rec("S", "us-east-1", &e), &[], RefusalOptions::default()),
            Ok(PlanVerdict::Empty)
        ));
        let n = body(json!({"region": null, "resources": {"T": {"resourceType": "X"}}}));
        assert!(check_plan(&rec("S", "us-east-1", &n), &[], RefusalOptions::default()).is_err());
    }

    #[test]
    fn divergent_region_seen_through_parsed_record_s_and_l_2_2() {
        let bytes = br#"{"region": "eu-west-1", "resources": {"T": {"resourceType": "X"}}}"#;
        let record = crate::state::parse_state("S", Some("us-east-1"), bytes).unwrap();
        let err = check_plan(
            &StackRecord::from_state("S", "us-east-1", &record),
            &[],
            RefusalOptions::default(),
        )
        .unwrap_err();
        assert_eq!(err.code(), "DivergentRegion");
    }

    #[test]
    fn zero_records_take_the_empty_path_statement_28() {
        let b = body(json!({"resources": {}}));
        assert!(matches!(
            check_plan(&rec("S", "us-east-1", &b), &[], RefusalOptions::default()),
            Ok(PlanVerdict::Empty)
        ));
    }

    #[test]
    fn cycle_refused_before_anything_statement_14() {
        let b = body(json!({"resources": {
            "A": {"resourceType": "T", "dependencies": ["B"]},
            "B": {"resourceType": "T", "dependencies": ["A"]}}}));
        let err =
            check_plan(&rec("S", "us-east-1", &b), &[], RefusalOptions::default()).unwrap_err();
        assert_eq!(err.code(), "DependencyCycle");
        assert_eq!(
            err.to_string(),
            "refusing to destroy stack 'S' (us-east-1): dependency cycle: A -> B -> A; nothing was deleted"
        );
    }

    #[test]
    fn untrusted_names_are_flattened_in_messages() {
        let b = body(json!({"parentStack": "P\n\u{1b}[31mevil", "resources": {}}));
        let err = check_plan(
            &rec("S\r\nx", "us-east-1", &b),
            &[],
            RefusalOptions::default(),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            !msg.contains('\n') && !msg.contains('\r') && !msg.contains('\u{1b}'),
            "{msg}"
        );
    }
}
