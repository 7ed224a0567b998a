//! Classification of every template resource of one stack (docs/export.md, "Classifying a stack's resources"): first
//! matching rule wins, in template order.

use std::collections::BTreeMap;

use serde_json::Value;

use super::blocked::BlockReason;
use super::identifier::{self, Resolved};
use super::overlay;
use super::records::Row;
use super::registry::{preflight_block, TypeFacts};
use super::sg::SgLookup;
use super::template::{Template, CDK_METADATA, NESTED_STACK};
use crate::keys::child_stack_name;
use crate::state::StateRecord;

/// Types CloudFormation cannot import that the export deletes between the phases and
/// lets phase 2 create again (docs/export.md, "Classifying a stack's resources" rule 5).
pub const RECREATE_TYPES: &[&str] = &["AWS::ApiGatewayV2::Stage", "AWS::IAM::Policy"];

pub use crate::state::is_custom_resource;

pub fn is_recreate_type(resource_type: &str) -> bool {
    RECREATE_TYPES.contains(&resource_type)
}

/// Planning switches that change a classification.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassifyOptions {
    /// `--no-recreate-import-unsupported`: recreate rows become blocked.
    pub no_recreate_import_unsupported: bool,
    /// `--skip-import-support-preflight`.
    pub skip_import_support_preflight: bool,
}

/// One resource's category.
#[derive(Clone, Debug, PartialEq)]
pub enum Category {
    /// `AWS::CDK::Metadata`: never imported, never blocked; phase 2 restores it.
    CdkMetadata,
    /// A nested-stack row adopted in phase 1B.
    Nested { child_stack: String },
    /// A Custom Resource: created fresh in phase 2 (re-runs its create handler).
    Create,
    /// An IMPORT-unsupported type deleted before phase 2 and created by it.
    Recreate { physical_id: String },
    /// Imported in phase 1.
    Import(Resolved),
    /// Refused, with every reason that applies.
    Blocked(Vec<BlockReason>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Classified {
    pub logical_id: String,
    pub resource_type: String,
    pub category: Category,
}

/// docs/export.md, "Classifying a stack's resources" rule 2c: the record holds another type at the template's logical id.
/// Two Custom Resource spellings (`Custom::*`, `AWS::CloudFormation::CustomResource`)
/// count as one type; a row without a type is planned with the template's.
fn type_mismatch(lid: &str, template_type: &str, row: Option<&Row<'_>>) -> Option<BlockReason> {
    let recorded = row?.resource_type()?;
    if recorded == template_type
        || (is_custom_resource(recorded) && is_custom_resource(template_type))
    {
        return None;
    }
    Some(BlockReason::TypeMismatch {
        logical_id: lid.to_string(),
        template_type: template_type.to_string(),
        recorded_type: recorded.to_string(),
    })
}

/// Classifies every resource of `template` against `record` (docs/export.md, "Classifying a stack's resources").
pub fn classify_stack(
    stack: &str,
    template: &Template,
    record: &StateRecord,
    facts: &BTreeMap<String, TypeFacts>,
    sg_lookups: &BTreeMap<String, SgLookup>,
    opts: ClassifyOptions,
) -> Vec<Classified> {
    template
        .resources()
        .into_iter()
        .map(|res| {
            let lid = res.logical_id;
            let rt = res.resource_type;
            let row = Row::get(record, lid);
            let category = classify_one(
                stack,
                lid,
                rt,
                row,
                res.properties(),
                facts,
                sg_lookups,
                opts,
            );
            Classified {
                logical_id: lid.to_string(),
                resource_type: rt.to_string(),
                category,
            }
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn classify_one(
    stack: &str,
    lid: &str,
    rt: &str,
    row: Option<Row<'_>>,
    template_props: Option<&serde_json::Map<String, Value>>,
    facts: &BTreeMap<String, TypeFacts>,
    sg_lookups: &BTreeMap<String, SgLookup>,
    opts: ClassifyOptions,
) -> Category {
    if rt == CDK_METADATA {
        return Category::CdkMetadata;
    }
    if rt == NESTED_STACK {
        return match row.and_then(|r| r.resource_type()) {
            Some(NESTED_STACK) => Category::Nested {
                child_stack: child_stack_name(stack, lid),
            },
            _ => Category::Blocked(vec![BlockReason::NestedNotInRecord]),
        };
    }
    if let Some(reason) = type_mismatch(lid, rt, row.as_ref()) {
        return Category::Blocked(vec![reason]);
    }
    if is_custom_resource(rt) {
        return Category::Create;
    }
    let Some((row, physical_id)) = row.and_then(|r| r.physical_id().map(|p| (r, p))) else {
        return Category::Blocked(vec![BlockReason::NotDeployed]);
    };
    if is_recreate_type(rt) {
        return if opts.no_recreate_import_unsupported {
            Category::Blocked(vec![BlockReason::RecreateTurnedOff {
                resource_type: rt.to_string(),
            }])
        } else {
            Category::Recreate {
                physical_id: physical_id.to_string(),
            }
        };
    }
    let type_facts = facts.get(rt);
    if let Some(why) = preflight_block(rt, type_facts, opts.skip_import_support_preflight) {
        return Category::Blocked(vec![BlockReason::Unsupported(why)]);
    }
    let resolved = match identifier::resolve(lid, rt, type_facts, &row, sg_lookups) {
        Ok(r) => r,
        Err(cause) => return Category::Blocked(vec![cause.into()]),
    };
    let refusals = overlay::refusals(
        lid,
        rt,
        template_props,
        &resolved.identifier,
        &resolved.overlay_fields,
    );
    if !refusals.is_empty() {
        return Category::Blocked(
            refusals
                .into_iter()
                .map(|r| BlockReason::Overlay(Box::new(r)))
                .collect(),
        );
    }
    Category::Import(resolved)
}

/// The types the registry must answer for one stack: every row that reaches the
/// preflight (not CDK metadata, nested rows, Custom Resources, recreate types, rows
/// without a physical id, or rows whose recorded type is another). `AWS::IAM::Policy` never reaches the registry.
pub fn types_needing_registry<'a>(template: &'a Template, record: &StateRecord) -> Vec<&'a str> {
    template
        .resources()
        .into_iter()
        .filter(|r| {
            let rt = r.resource_type;
            rt != CDK_METADATA
                && rt != NESTED_STACK
                && !is_custom_resource(rt)
                && !is_recreate_type(rt)
                && Row::get(record, r.logical_id).is_some_and(|row| {
                    row.physical_id().is_some()
                        && type_mismatch(r.logical_id, rt, Some(&row)).is_none()
                })
        })
        .map(|r| r.resource_type)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::blocked::Unresolved;
    use crate::export::registry::{PreflightBlock, TypeFacts, UnknownIdentifier};
    use crate::state::parse_state;
    use serde_json::json;

    fn rec(resources: Value) -> StateRecord {
        let body = json!({"version": 10, "resources": resources});
        parse_state("App", Some("us-east-1"), body.to_string().as_bytes()).unwrap()
    }

    fn tpl(resources: Value) -> Template {
        Template::from_value("App", json!({"Resources": resources})).unwrap()
    }

    fn facts(pairs: &[(&str, &[&str], bool, &str)]) -> BTreeMap<String, TypeFacts> {
        pairs
            .iter()
            .map(|(t, ids, read, prov)| {
                (
                    t.to_string(),
                    TypeFacts::Schema {
                        primary_identifier: ids.iter().map(|s| s.to_string()).collect(),
                        has_read_handler: *read,
                        provisioning_type: Some(prov.to_string()),
                    },
                )
            })
            .collect()
    }

    fn run(
        t: &Template,
        r: &StateRecord,
        f: &BTreeMap<String, TypeFacts>,
        o: ClassifyOptions,
    ) -> Vec<Classified> {
        classify_stack("App", t, r, f, &BTreeMap::new(), o)
    }

    #[test]
    fn classify_cdk_metadata_is_dropped_never_blocked() {
        let out = run(
            &tpl(json!({"CDKMetadata": {"Type": "AWS::CDK::Metadata"}})),
            &rec(json!({})),
            &BTreeMap::new(),
            Default::default(),
        );
        assert_eq!(out[0].category, Category::CdkMetadata);
    }

    #[test]
    fn classify_nested_stack_row_needs_a_nested_state_row() {
        let t = tpl(json!({
            "Child": {"Type": "AWS::CloudFormation::Stack"},
            "Missing": {"Type": "AWS::CloudFormation::Stack"},
            "Untyped": {"Type": "AWS::CloudFormation::Stack"},
            "Other": {"Type": "AWS::CloudFormation::Stack"}
        }));
        let r = rec(json!({
            "Child": {"physicalId": "arn:child", "resourceType": "AWS::CloudFormation::Stack", "properties": {}},
            "Untyped": {"physicalId": "arn:x", "properties": {}},
            "Other": {"physicalId": "b", "resourceType": "AWS::S3::Bucket", "properties": {}}
        }));
        let out = run(&t, &r, &BTreeMap::new(), Default::default());
        assert_eq!(
            out[0].category,
            Category::Nested {
                child_stack: "App~Child".into()
            }
        );
        for c in &out[1..] {
            assert_eq!(
                c.category,
                Category::Blocked(vec![BlockReason::NestedNotInRecord]),
                "{}",
                c.logical_id
            );
        }
    }

    #[test]
    fn classify_custom_resources_are_phase_two_creates_without_state_check() {
        let t = tpl(
            json!({"A": {"Type": "Custom::Thing"}, "B": {"Type": "AWS::CloudFormation::CustomResource"}}),
        );
        let out = run(&t, &rec(json!({})), &BTreeMap::new(), Default::default());
        assert!(out.iter().all(|c| c.category == Category::Create));
    }

    #[test]
    fn classify_row_without_physical_id_is_blocked_as_not_deployed() {
        let t = tpl(
            json!({"A": {"Type": "AWS::S3::Bucket"}, "B": {"Type": "AWS::S3::Bucket"}, "C": {"Type": "AWS::S3::Bucket"}}),
        );
        let r = rec(
            json!({"B": {"physicalId": "", "resourceType": "AWS::S3::Bucket", "properties": {}}, "C": null}),
        );
        let out = run(&t, &r, &BTreeMap::new(), Default::default());
        assert!(out
            .iter()
            .all(|c| c.category == Category::Blocked(vec![BlockReason::NotDeployed])));
    }

    #[test]
    fn statement_18_stage_with_no_recreate_flag_is_blocked_naming_how_to_re_enable() {
        let t = tpl(json!({"S": {"Type": "AWS::ApiGatewayV2::Stage"}}));
        let r = rec(
            json!({"S": {"physicalId": "prod", "resourceType": "AWS::ApiGatewayV2::Stage", "properties": {"ApiId": "a"}}}),
        );
        let out = run(
            &t,
            &r,
            &BTreeMap::new(),
            ClassifyOptions {
                no_recreate_import_unsupported: true,
                ..Default::default()
            },
        );
        assert_eq!(
            out[0].category,
            Category::Blocked(vec![BlockReason::RecreateTurnedOff {
                resource_type: "AWS::ApiGatewayV2::Stage".into()
            }])
        );
        let out = run(&t, &r, &BTreeMap::new(), Default::default());
        assert_eq!(
            out[0].category,
            Category::Recreate {
                physical_id: "prod".into()
            }
        );
    }

    #[test]
    fn statement_19_iam_policy_never_needs_describe_type_and_is_a_recreate_row() {
        let t = tpl(json!({"P": {"Type": "AWS::IAM::Policy"}, "B": {"Type": "AWS::S3::Bucket"}}));
        let r = rec(json!({
            "P": {"physicalId": "pol", "resourceType": "AWS::IAM::Policy", "properties": {"Roles": ["r"]}},
            "B": {"physicalId": "b", "resourceType": "AWS::S3::Bucket", "properties": {}}
        }));
        assert_eq!(types_needing_registry(&t, &r), ["AWS::S3::Bucket"]);
        // Even a registry answer that would refuse it is never consulted.
        let f = facts(&[
            ("AWS::IAM::Policy", &["Id"], false, "NON_PROVISIONABLE"),
            ("AWS::S3::Bucket", &["BucketName"], true, "FULLY_MUTABLE"),
        ]);
        let out = run(&t, &r, &f, Default::default());
        assert_eq!(
            out[0].category,
            Category::Recreate {
                physical_id: "pol".into()
            }
        );
        assert!(matches!(out[1].category, Category::Import(_)));
    }

    #[test]
    fn statement_20_every_unsupported_resource_is_blocked_in_one_pass() {
        let t = tpl(json!({
            "A": {"Type": "AWS::Glue::Table"}, "B": {"Type": "AWS::SQS::QueuePolicy"}, "C": {"Type": "AWS::SNS::TopicPolicy"}
        }));
        let r = rec(json!({
            "A": {"physicalId": "a", "resourceType": "AWS::Glue::Table", "properties": {}},
            "B": {"physicalId": "b", "resourceType": "AWS::SQS::QueuePolicy", "properties": {}},
            "C": {"physicalId": "c", "resourceType": "AWS::SNS::TopicPolicy", "properties": {}}
        }));
        let f = facts(&[
            ("AWS::Glue::Table", &["Id"], false, "NON_PROVISIONABLE"),
            ("AWS::SQS::QueuePolicy", &["Id"], false, "NON_PROVISIONABLE"),
            ("AWS::SNS::TopicPolicy", &["Id"], false, "NON_PROVISIONABLE"),
        ]);
        let out = run(&t, &r, &f, Default::default());
        assert!(out.iter().all(|c| matches!(
            &c.category,
            Category::Blocked(r) if r == &[BlockReason::Unsupported(PreflightBlock::NoReadHandler {
                resource_type: c.resource_type.clone()
            })]
        )));
        let out = run(
            &t,
            &r,
            &f,
            ClassifyOptions {
                skip_import_support_preflight: true,
                ..Default::default()
            },
        );
        assert!(out
            .iter()
            .all(|c| matches!(c.category, Category::Import(_))));
    }

    #[test]
    fn statement_24_five_buckets_need_one_registry_type() {
        let mut tr = serde_json::Map::new();
        let mut rr = serde_json::Map::new();
        for i in 0..5 {
            tr.insert(format!("B{i}"), json!({"Type": "AWS::S3::Bucket"}));
            rr.insert(format!("B{i}"), json!({"physicalId": format!("b{i}"), "resourceType": "AWS::S3::Bucket", "properties": {}}));
        }
        let t = tpl(Value::Object(tr));
        let r = rec(Value::Object(rr));
        let types = crate::export::registry::distinct(types_needing_registry(&t, &r));
        assert_eq!(types, ["AWS::S3::Bucket"]);
    }

    #[test]
    fn classify_overlay_refusal_blocks_at_plan_time() {
        let t = tpl(
            json!({"N": {"Type": "AWS::SQS::Queue", "Properties": {"QueueUrl": [{"Ref": "X"}]}}}),
        );
        let r = rec(
            json!({"N": {"physicalId": "https://q", "resourceType": "AWS::SQS::Queue", "properties": {}}}),
        );
        let out = run(
            &t,
            &r,
            &facts(&[("AWS::SQS::Queue", &["QueueUrl"], true, "FULLY_MUTABLE")]),
            Default::default(),
        );
        let Category::Blocked(reasons) = &out[0].category else {
            panic!("{:?}", out[0])
        };
        assert!(
            matches!(&reasons[0], BlockReason::Overlay(w) if w.to_string().contains("discard the intrinsic")),
            "{:?}",
            reasons[0]
        );
    }

    #[test]
    fn classify_identifier_failure_is_wrapped() {
        let t = tpl(json!({"X": {"Type": "AWS::Foo::Bar"}}));
        let r = rec(
            json!({"X": {"physicalId": "x", "resourceType": "AWS::Foo::Bar", "properties": {}}}),
        );
        let out = run(&t, &r, &BTreeMap::new(), Default::default());
        assert_eq!(
            out[0].category,
            Category::Blocked(vec![BlockReason::Identifier(
                Unresolved::PrimaryIdentifierUnknown(UnknownIdentifier {
                    resource_type: "AWS::Foo::Bar".into(),
                    cause: None,
                })
            )])
        );
    }

    #[test]
    fn type_mismatch_template_and_record_types_disagree_is_blocked_naming_both() {
        let t = tpl(json!({
            "EventsTopic": {"Type": "AWS::SQS::Queue"},
            "Seed": {"Type": "Custom::Seed"},
            "Hook": {"Type": "Custom::Hook"},
            "Later": {"Type": "AWS::SNS::Topic"}
        }));
        let r = rec(json!({
            "EventsTopic": {"physicalId": "arn:aws:sns:us-east-1:1:t", "resourceType": "AWS::SNS::Topic", "properties": {}},
            "Seed": {"physicalId": "s", "resourceType": "AWS::CloudFormation::CustomResource", "properties": {}},
            "Hook": {"physicalId": "h", "resourceType": "AWS::Lambda::Function", "properties": {}},
            "Later": {"physicalId": "arn:t2", "properties": {}}
        }));
        let f = facts(&[
            ("AWS::SQS::Queue", &["QueueUrl"], true, "FULLY_MUTABLE"),
            ("AWS::SNS::Topic", &["TopicArn"], true, "FULLY_MUTABLE"),
        ]);
        let out = run(&t, &r, &f, Default::default());
        assert_eq!(
            out[0].category,
            Category::Blocked(vec![BlockReason::TypeMismatch {
                logical_id: "EventsTopic".into(),
                template_type: "AWS::SQS::Queue".into(),
                recorded_type: "AWS::SNS::Topic".into(),
            }])
        );
        // Custom Resource spellings are one type; a row without a type takes the template's.
        assert_eq!(out[1].category, Category::Create);
        assert!(
            matches!(&out[2].category, Category::Blocked(r) if matches!(&r[0], BlockReason::TypeMismatch { recorded_type, .. } if recorded_type == "AWS::Lambda::Function"))
        );
        assert!(matches!(out[3].category, Category::Import(_)));
        assert_eq!(types_needing_registry(&t, &r), ["AWS::SNS::Topic"]);
    }

    #[test]
    fn row_with_physical_id_but_no_type_is_planned_from_the_template_type() {
        let t = tpl(json!({"B": {"Type": "AWS::S3::Bucket"}}));
        let r = rec(json!({"B": {"physicalId": "b", "properties": {}}}));
        let out = run(&t, &r, &BTreeMap::new(), Default::default());
        assert!(matches!(out[0].category, Category::Import(_)));
    }
}
