//! The dry-run summary (docs/export.md, "Values printed in messages"): one header line per stack, leaf first,
//! then its rows. Every physical id, identifier value, stack name and parameter value
//! goes through the plain-value rule ([`crate::export::plain::shown`]); logical ids, types and
//! messages are flattened onto one line. Blocked rows are listed once, by the
//! refusal that ends the summary ([`Plan::blocked_refusal`]).

use crate::export::plain::shown;
use crate::export::plan::{Plan, PreDeleteAction, StackPlan};
use crate::text::flatten_str;

fn plural(n: usize, one: &str) -> String {
    format!("{n} {one}(s)")
}

/// `[<cdkd>] → CFn stack '<cfn>': N leaf import(s)[, M nested-child adoption(s)][, K
/// phase-2 CREATE(s)][, R pre-delete + re-CREATE]`.
pub fn header(s: &StackPlan) -> String {
    let mut parts = vec![plural(s.import.len(), "leaf import")];
    if !s.nested.is_empty() {
        parts.push(plural(s.nested.len(), "nested-child adoption"));
    }
    if !s.phase2.create.is_empty() {
        parts.push(plural(s.phase2.create.len(), "phase-2 CREATE"));
    }
    if !s.phase2.recreate.is_empty() {
        parts.push(format!(
            "{} pre-delete + re-CREATE",
            s.phase2.recreate.len()
        ));
    }
    format!(
        "[{}] → CFn stack '{}': {}",
        shown(&s.stack),
        shown(&s.cfn_stack_name),
        parts.join(", ")
    )
}

fn recreate_note(resource_type: &str) -> &'static str {
    match resource_type {
        "AWS::ApiGatewayV2::Stage" => "unavailable for about 10 s between the pre-delete and phase 2; the HttpApi URL does not change",
        "AWS::IAM::Policy" => "the permissions it grants are absent between the pre-delete and phase 2",
        _ => "absent between the pre-delete and phase 2",
    }
}

fn stack_lines(s: &StackPlan, out: &mut Vec<String>) {
    out.push(header(s));
    let row = |id: &str, ty: &str| format!("{} ({})", flatten_str(id), flatten_str(ty));
    if !s.import.is_empty() {
        out.push("  Import (phase 1):".into());
        for r in &s.import {
            let ids: Vec<String> = r
                .identifier
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{}={}",
                        flatten_str(k),
                        shown(v.as_str().unwrap_or_default())
                    )
                })
                .collect();
            out.push(format!(
                "    {} ← {}",
                row(&r.logical_id, &r.resource_type),
                ids.join(", ")
            ));
        }
    }
    if !s.nested.is_empty() {
        out.push("  Nested stacks (adopted after their own import):".into());
        for n in &s.nested {
            out.push(format!(
                "    {} → [{}] (CFn stack '{}')",
                flatten_str(&n.logical_id),
                shown(&n.child_stack),
                shown(&n.cfn_stack_name)
            ));
        }
    }
    if !s.phase2.create.is_empty() {
        out.push("  Phase 2 CREATE:".into());
        for r in &s.phase2.create {
            out.push(format!("    {}", row(&r.logical_id, &r.resource_type)));
        }
    }
    if !s.phase2.recreate.is_empty() {
        out.push("  Pre-delete, then re-CREATE in phase 2:".into());
        for r in &s.phase2.recreate {
            out.push(format!(
                "    {} {}: {}",
                row(&r.logical_id, &r.resource_type),
                shown(&r.physical_id),
                recreate_note(&r.resource_type)
            ));
        }
        for p in &s.phase2.pre_delete {
            if let PreDeleteAction::DetachPolicy { recorded, .. } = &p.action {
                let list = |l: &Option<Vec<String>>| {
                    l.as_ref()
                        .map(|v| {
                            v.iter()
                                .map(|x| shown(x).to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        })
                        .unwrap_or_else(|| "(none recorded)".into())
                };
                out.push(format!(
                    "    {}: detach {} from roles [{}], users [{}], groups [{}]",
                    flatten_str(&p.logical_id),
                    shown(&recorded.policy_name),
                    list(&recorded.roles),
                    list(&recorded.users),
                    list(&recorded.groups)
                ));
            }
        }
    }
    if !s.unmanaged.is_empty() {
        out.push(
            "  Left unmanaged (in the cdkd record, not in the template: not imported, and owned by nothing once the record is deleted):"
                .into(),
        );
        for r in &s.unmanaged {
            out.push(format!("    {}", crate::view::export_input::describe(r)));
        }
    }
    if !s.parameters.is_empty() {
        let ps: Vec<String> = s
            .parameters
            .iter()
            .map(|p| {
                let v = match (&p.value, p.no_echo) {
                    (None, _) => "(unresolved)".to_string(),
                    (Some(_), true) => crate::export::MASK.to_string(),
                    (Some(v), false) => shown(v).to_string(),
                };
                format!("{}={v}", flatten_str(&p.key))
            })
            .collect();
        out.push(format!("  Parameters: {}", ps.join(", ")));
    }
    for w in &s.warnings {
        out.push(format!("  Warning: {}", flatten_str(&w.to_string())));
    }
}

/// `  <stack>: <file> (<format>)[, nested in <parent>]`: one template the command read
/// (stderr, before the run starts).
pub fn template_read_line(stack: &str, file: &str, format: &str, parent: Option<&str>) -> String {
    let nested = parent
        .map(|p| format!(", nested in {}", shown(p)))
        .unwrap_or_default();
    format!(
        "  {}: {} ({}){nested}",
        shown(stack),
        flatten_str(file),
        flatten_str(format)
    )
}

/// `  cloud assembly stack <display>[, environment aws://<account>/<region>]`, when the
/// templates came from one.
pub fn assembly_line(display: &str, account: Option<&str>, region: Option<&str>) -> String {
    let env = match (account, region) {
        (Some(a), Some(r)) => format!(", environment aws://{}/{}", flatten_str(a), flatten_str(r)),
        (None, Some(r)) => format!(", region {}", flatten_str(r)),
        _ => String::new(),
    };
    format!("  cloud assembly stack {}{env}", shown(display))
}

/// The whole dry-run summary, ending with what the dry run did not do.
pub fn render_dry_run(plan: &Plan) -> String {
    render_plan(plan, true)
}

/// The summary of the plan a migration is about to carry out: the dry run's, ending
/// with the question's subject instead of what a dry run did not do.
pub fn render_migration_plan(plan: &Plan) -> String {
    render_plan(plan, false)
}

fn render_plan(plan: &Plan, dry_run: bool) -> String {
    let mut out = Vec::new();
    for s in &plan.stacks {
        stack_lines(s, &mut out);
    }
    for w in &plan.warnings {
        out.push(format!("Warning: {}", flatten_str(&w.to_string())));
    }
    match plan.blocked_refusal() {
        Some(r) => out.push(r.to_string()),
        None if plan.is_empty() => out
            .push("Nothing to migrate: the template holds no resource to import or create.".into()),
        None if dry_run => out.push(
            "Dry run: no lock was taken, no change set was created, and state is unchanged.".into(),
        ),
        None => out.push(
            "Migration: phase 1 imports these resources into CloudFormation, phase 2 applies the full template (Outputs included), then the cdkd record is deleted.".into(),
        ),
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::blocked::BlockReason;
    use crate::export::iam::{PolicyTargets, TemplatePrincipals};
    use crate::export::params::ParamSource;
    use crate::export::plan::*;
    use crate::export::warning::{PlanWarning, RefreshAdvice, RefreshCommand};
    use serde_json::{json, Map, Value};

    fn ident(pairs: &[(&str, &str)]) -> Map<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect()
    }

    fn leaf() -> StackPlan {
        StackPlan {
            stack: "Root~Db".into(),
            region: Some("us-east-1".into()),
            cfn_stack_name: "Root-Db".into(),
            template_key: "k".into(),
            parent: Some("Root".into()),
            import: vec![
                ImportRow {
                    logical_id: "Table".into(),
                    resource_type: "AWS::DynamoDB::Table".into(),
                    physical_id: "t1".into(),
                    identifier: ident(&[("TableName", "t1")]),
                    overlay: Map::new(),
                },
                ImportRow {
                    logical_id: "Key".into(),
                    resource_type: "AWS::AppSync::ApiKey".into(),
                    physical_id: "api1|da2-k".into(),
                    identifier: ident(&[("ApiId", "api1"), ("ApiKeyId", "da2-k")]),
                    overlay: Map::new(),
                },
                ImportRow {
                    logical_id: "Odd".into(),
                    resource_type: "AWS::S3::Bucket".into(),
                    physical_id: "b\nrm".into(),
                    identifier: ident(&[("BucketName", "b\nrm")]),
                    overlay: Map::new(),
                },
            ],
            parameters: vec![
                PlanParameter {
                    key: "Stage".into(),
                    value: Some("prod".into()),
                    no_echo: false,
                    source: ParamSource::Parent,
                },
                PlanParameter {
                    key: "Pw".into(),
                    value: Some("***".into()),
                    no_echo: true,
                    source: ParamSource::Parent,
                },
                PlanParameter {
                    key: "Later".into(),
                    value: None,
                    no_echo: false,
                    source: ParamSource::Parent,
                },
            ],
            ..Default::default()
        }
    }

    fn root() -> StackPlan {
        StackPlan {
            stack: "Root".into(),
            region: Some("us-east-1".into()),
            cfn_stack_name: "Root".into(),
            template_key: "k".into(),
            import: vec![ImportRow {
                logical_id: "Bucket".into(),
                resource_type: "AWS::S3::Bucket".into(),
                physical_id: "b".into(),
                identifier: ident(&[("BucketName", "b")]),
                overlay: Map::new(),
            }],
            nested: vec![NestedRow {
                logical_id: "Db".into(),
                child_stack: "Root~Db".into(),
                cfn_stack_name: "Root-Db".into(),
            }],
            phase2: Phase2 {
                create: vec![TypedRow {
                    logical_id: "Seed".into(),
                    resource_type: "Custom::Seed".into(),
                }],
                recreate: vec![
                    RecreateRow {
                        logical_id: "Stage".into(),
                        resource_type: "AWS::ApiGatewayV2::Stage".into(),
                        physical_id: "prod".into(),
                        properties: Map::new(),
                    },
                    RecreateRow {
                        logical_id: "Pol".into(),
                        resource_type: "AWS::IAM::Policy".into(),
                        physical_id: "pol".into(),
                        properties: Map::new(),
                    },
                ],
                pre_delete: vec![PreDeleteRow {
                    logical_id: "Pol".into(),
                    resource_type: "AWS::IAM::Policy".into(),
                    action: PreDeleteAction::DetachPolicy {
                        recorded: PolicyTargets {
                            policy_name: "pol".into(),
                            roles: Some(vec!["r1".into()]),
                            ..Default::default()
                        },
                        template: TemplatePrincipals::default(),
                    },
                }],
            },
            warnings: vec![PlanWarning::MissingBaselines {
                stack: "Root".into(),
                missing: vec!["X".into()],
                total: 3,
                advice: RefreshAdvice::Capture {
                    command: RefreshCommand {
                        stack: "Root".into(),
                        region: "us-east-1".into(),
                    },
                },
            }],
            ..Default::default()
        }
    }

    #[test]
    fn template_lines_name_file_format_parent_and_environment() {
        assert_eq!(
            template_read_line("A~B", "/t/b.json", "JSON", Some("A")),
            "  A~B: /t/b.json (JSON), nested in A"
        );
        assert_eq!(
            template_read_line("A", "a.yaml", "YAML", None),
            "  A: a.yaml (YAML)"
        );
        assert_eq!(
            assembly_line("Stage/A", Some("123456789012"), Some("us-east-1")),
            "  cloud assembly stack Stage/A, environment aws://123456789012/us-east-1"
        );
        assert_eq!(assembly_line("A", None, None), "  cloud assembly stack A");
    }

    #[test]
    fn summary_nested_tree_one_header_per_stack_leaf_first() {
        let plan = Plan {
            stacks: vec![leaf(), root()],
            warnings: vec![],
        };
        insta::assert_snapshot!(render_dry_run(&plan));
    }

    #[test]
    fn summary_before_a_migration_ends_with_what_the_migration_does_not_a_dry_run_line() {
        let plan = Plan {
            stacks: vec![leaf()],
            warnings: vec![],
        };
        let text = render_migration_plan(&plan);
        let last = text.lines().last().unwrap_or_default();
        assert!(last.starts_with("Migration: phase 1 imports"), "{last}");
        assert!(!text.contains("Dry run:"));
        let dry = render_dry_run(&plan);
        assert_eq!(
            text.lines().count(),
            dry.lines().count(),
            "only the last line differs"
        );
    }

    #[test]
    fn summary_blocked_rows_end_with_the_refusal() {
        let mut s = leaf();
        s.import.clear();
        s.parameters.clear();
        s.blocked = vec![
            BlockedRow {
                logical_id: "Api".into(),
                resource_type: "AWS::AppSync::GraphQLApi".into(),
                reason: BlockReason::Recorded("not supported for import".into()),
            },
            BlockedRow {
                logical_id: "Ns".into(),
                resource_type: "AWS::S3Tables::Namespace".into(),
                reason: BlockReason::Recorded("first\nsecond".into()),
            },
            BlockedRow {
                logical_id: "Ns".into(),
                resource_type: "AWS::S3Tables::Namespace".into(),
                reason: BlockReason::Recorded("third".into()),
            },
        ];
        let plan = Plan {
            stacks: vec![s],
            warnings: vec![PlanWarning::Recorded(
                "1 Custom Resource(s) cannot be imported".into(),
            )],
        };
        insta::assert_snapshot!(render_dry_run(&plan));
    }

    /// The rows the template leaves out are their own group.
    #[test]
    fn summary_lists_rows_left_unmanaged_as_their_own_group() {
        let mut s = leaf();
        s.import.truncate(1);
        s.parameters.clear();
        s.unmanaged = vec![
            crate::export::unmanaged::UnmanagedRow {
                logical_id: "OldQueue".into(),
                resource_type: "AWS::SQS::Queue".into(),
                physical_id: "https://sqs.us-east-1.amazonaws.com/1/old".into(),
                identifier: Map::new(),
            },
            crate::export::unmanaged::UnmanagedRow {
                logical_id: "Untyped".into(),
                resource_type: String::new(),
                physical_id: "-rf".into(),
                identifier: Map::new(),
            },
        ];
        let plan = Plan {
            stacks: vec![s],
            warnings: vec![],
        };
        insta::assert_snapshot!(render_dry_run(&plan));
    }

    #[test]
    fn summary_header_counts_only_what_is_there() {
        let mut s = leaf();
        s.import.truncate(1);
        assert_eq!(
            header(&s),
            "[Root~Db] → CFn stack 'Root-Db': 1 leaf import(s)"
        );
        assert_eq!(
            header(&root()),
            "[Root] → CFn stack 'Root': 1 leaf import(s), 1 nested-child adoption(s), 1 phase-2 CREATE(s), 2 pre-delete + re-CREATE"
        );
    }
}
