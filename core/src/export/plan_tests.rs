use super::*;
use crate::export::iam::PrincipalMismatch;
use crate::export::params::{ParamRefusal, SsmRead, UnreadSsm};
use crate::export::refusal::GateRefusal;
use crate::export::registry::TypeFacts;
use crate::export::template::Template;
use crate::state::parse_state;
use serde_json::json;

fn stack(name: &str, resources: Value, template: Value) -> StackInput {
    let mut rec =
        json!({"version": 10, "stackName": name, "region": "us-east-1", "resources": resources});
    if let Some((parent, lid)) = name.rsplit_once('~') {
        rec["parentStack"] = json!(parent);
        rec["parentLogicalId"] = json!(lid);
    }
    StackInput {
        stack: name.into(),
        region: Some("us-east-1".into()),
        record: parse_state(name, Some("us-east-1"), rec.to_string().as_bytes()).unwrap(),
        etag: None,
        template: Template::from_value(name, template).unwrap(),
        template_key: format!("cdkd/_runs/r1/templates/{name}.json"),
    }
}

fn bucket_row(id: &str) -> Value {
    json!({"physicalId": id, "resourceType": "AWS::S3::Bucket", "properties": {}, "observedProperties": {}})
}

fn facts() -> BTreeMap<String, TypeFacts> {
    let mut m = BTreeMap::new();
    m.insert(
        "AWS::S3::Bucket".to_string(),
        TypeFacts::Schema {
            primary_identifier: vec!["BucketName".into()],
            has_read_handler: true,
            provisioning_type: Some("FULLY_MUTABLE".into()),
        },
    );
    m
}

fn flat() -> TreeInput {
    TreeInput {
        root: stack(
            "App",
            json!({"B": bucket_row("b-1"), "CR": {"physicalId": "x", "resourceType": "Custom::X", "properties": {}, "observedProperties": {}},
                   "Stage": {"physicalId": "prod", "resourceType": "AWS::ApiGatewayV2::Stage", "properties": {"ApiId": "a1"}, "observedProperties": {}}}),
            json!({"Resources": {
                "B": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": "b-1"}},
                "CR": {"Type": "Custom::X"},
                "Stage": {"Type": "AWS::ApiGatewayV2::Stage"},
                "CDKMetadata": {"Type": "AWS::CDK::Metadata"}
            }}),
        ),
        children: BTreeMap::new(),
    }
}

/// Root → Middle → Leaf, each with one bucket.
fn nested() -> TreeInput {
    let nested_row = json!({"physicalId": "arn:aws:cloudformation:us-east-1:1:stack/x/1", "resourceType": "AWS::CloudFormation::Stack", "properties": {}, "observedProperties": {}});
    let root = stack(
        "Root",
        json!({"B": bucket_row("rb"), "Middle": nested_row.clone()}),
        json!({"Parameters": {"Stage": {"Type": "String", "Default": "dev"}, "Name": {"Type": "AWS::SSM::Parameter::Value<String>", "Default": "/app/name"}},
               "Resources": {"B": {"Type": "AWS::S3::Bucket"}, "Middle": {"Type": "AWS::CloudFormation::Stack", "Properties": {"Parameters": {"Stage": {"Ref": "Stage"}, "Name": {"Ref": "Name"}}}}}}),
    );
    let middle = stack(
        "Root~Middle",
        json!({"B": bucket_row("mb"), "Leaf": nested_row}),
        json!({"Parameters": {"Stage": {"Type": "String"}, "Name": {"Type": "String"}},
               "Resources": {"B": {"Type": "AWS::S3::Bucket"}, "Leaf": {"Type": "AWS::CloudFormation::Stack", "Properties": {"Parameters": {"Stage": {"Ref": "Stage"}}}}}}),
    );
    let leaf = stack(
        "Root~Middle~Leaf",
        json!({"B": bucket_row("lb")}),
        json!({"Parameters": {"Stage": {"Type": "String"}}, "Resources": {"B": {"Type": "AWS::S3::Bucket"}}}),
    );
    let mut children = BTreeMap::new();
    children.insert(middle.stack.clone(), middle);
    children.insert(leaf.stack.clone(), leaf);
    TreeInput { root, children }
}

fn gathered() -> Gathered {
    let mut g = Gathered {
        types: facts(),
        ..Default::default()
    };
    g.ssm.insert(
        "/app/name".into(),
        SsmRead::Value {
            param_type: "String".into(),
            value: "stored".into(),
        },
    );
    g
}

fn opts() -> PlanOptions {
    PlanOptions {
        include_non_importable: true,
        state_prefix: "cdkd".into(),
        ..Default::default()
    }
}

#[test]
fn plan_json_has_the_issue_shape() {
    let plan = plan_tree(&flat(), &opts(), &gathered()).unwrap();
    let v = serde_json::to_value(&plan).unwrap();
    let s = &v["stacks"][0];
    assert_eq!(s["stack"], "App");
    assert_eq!(s["region"], "us-east-1");
    assert_eq!(s["cfnStackName"], "App");
    assert_eq!(
        s["import"][0],
        json!({"logicalId": "B", "type": "AWS::S3::Bucket", "physicalId": "b-1", "identifier": {"BucketName": "b-1"}, "overlay": {"BucketName": "b-1"}})
    );
    assert_eq!(
        s["phase2"]["create"],
        json!([{"logicalId": "CR", "type": "Custom::X"}])
    );
    assert_eq!(s["phase2"]["recreate"][0]["physicalId"], "prod");
    assert_eq!(
        s["phase2"]["preDelete"][0],
        json!({"logicalId": "Stage", "type": "AWS::ApiGatewayV2::Stage", "action": "deleteStage", "apiId": "a1", "stageName": "prod"})
    );
    assert!(
        s["nested"].as_array().unwrap().is_empty() && s["blocked"].as_array().unwrap().is_empty()
    );
    let back: Plan = serde_json::from_value(v).unwrap();
    assert_eq!(back, plan);
}

#[test]
fn statement_86_three_level_tree_is_ordered_leaf_first_with_names_and_parameters() {
    let plan = plan_tree(&nested(), &opts(), &gathered()).unwrap();
    let names: Vec<_> = plan
        .stacks
        .iter()
        .map(|s| (s.stack.as_str(), s.cfn_stack_name.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("Root~Middle~Leaf", "Root-Middle-Leaf"),
            ("Root~Middle", "Root-Middle"),
            ("Root", "Root")
        ]
    );
    assert_eq!(
        plan.stacks[1].nested,
        [NestedRow {
            logical_id: "Leaf".into(),
            child_stack: "Root~Middle~Leaf".into(),
            cfn_stack_name: "Root-Middle-Leaf".into()
        }]
    );
    let middle: Vec<_> = plan.stacks[1]
        .parameters
        .iter()
        .map(|p| (p.key.as_str(), p.value.as_deref()))
        .collect();
    assert_eq!(middle, [("Stage", Some("dev")), ("Name", Some("stored"))]);
    assert_eq!(plan.stacks[0].parameters[0].value.as_deref(), Some("dev"));
    // The root's own change set submits the SSM name.
    assert_eq!(
        plan.stacks[2].parameters[1].value.as_deref(),
        Some("/app/name")
    );
    assert_eq!(plan.stacks[0].parent.as_deref(), Some("Root~Middle"));
}

#[test]
fn plan_needs_lists_one_type_the_ssm_names_and_every_destination() {
    let needs = plan_needs(&nested(), &opts()).unwrap();
    assert_eq!(needs.types, ["AWS::S3::Bucket"]);
    assert_eq!(needs.ssm_parameters, ["/app/name"]);
    assert_eq!(
        needs.destinations,
        ["Root", "Root-Middle", "Root-Middle-Leaf"]
    );
    assert!(needs.security_groups.is_empty());
}

#[test]
fn statement_8_existing_destination_refuses_under_dry_run_too() {
    let mut g = gathered();
    g.destinations.insert(
        "App".into(),
        Destination::Exists {
            status: "REVIEW_IN_PROGRESS".into(),
        },
    );
    let o = PlanOptions {
        dry_run: true,
        ..opts()
    };
    assert!(plan_tree(&flat(), &o, &g)
        .unwrap_err()
        .to_string()
        .contains("REVIEW_IN_PROGRESS"));
    let mut g = gathered();
    g.destinations.insert(
        "Root-Middle-Leaf".into(),
        Destination::Exists {
            status: "CREATE_COMPLETE".into(),
        },
    );
    assert!(plan_tree(&nested(), &o, &g)
        .unwrap_err()
        .to_string()
        .contains("Root-Middle-Leaf"));
}

#[test]
fn statement_11_damaged_root_refuses_before_planning_also_in_dry_run() {
    let mut t = flat();
    t.root.record = parse_state("App", Some("us-east-1"), br#"{"resources":[]}"#).unwrap();
    let o = PlanOptions {
        dry_run: true,
        ..opts()
    };
    assert!(plan_tree(&t, &o, &gathered())
        .unwrap_err()
        .to_string()
        .contains("'resources' is an array"));
    assert!(plan_needs(&t, &o).is_err());
}

#[test]
fn damaged_child_refuses_before_any_child_is_planned() {
    let mut t = nested();
    let leaf = t.children.get_mut("Root~Middle~Leaf").unwrap();
    leaf.record = parse_state(
        "Root~Middle~Leaf",
        Some("us-east-1"),
        br#"{"resources":{"B":{"physicalId":"lb","properties":null}}}"#,
    )
    .unwrap();
    let e = plan_tree(&t, &opts(), &gathered()).unwrap_err();
    assert!(
        e.to_string().contains("Root~Middle~Leaf") && e.to_string().contains("properties"),
        "{e}"
    );
}

#[test]
fn statement_76_missing_child_record_refuses_naming_the_expected_key() {
    let mut t = nested();
    t.children.remove("Root~Middle");
    let e = plan_tree(&t, &opts(), &gathered()).unwrap_err();
    assert!(
        e.to_string().contains("Root~Middle")
            && e.to_string()
                .contains("cdkd/Root~Middle/us-east-1/state.json"),
        "{e}"
    );
}

#[test]
fn statement_77_child_in_another_region_refuses() {
    let mut t = nested();
    t.children.get_mut("Root~Middle").unwrap().region = Some("eu-west-1".into());
    assert!(plan_tree(&t, &opts(), &gathered())
        .unwrap_err()
        .to_string()
        .contains("cross-region"));
}

/// CloudFormation takes at most 500 resources in one stack: a template over that is
/// refused by the plan (a dry run too), before any lock, naming the limit and the count.
#[test]
fn rule_limits_a_stack_over_500_resources_is_refused_by_the_plan_naming_the_count() {
    let mut rows = serde_json::Map::new();
    let mut resources = serde_json::Map::new();
    for i in 0..501 {
        rows.insert(format!("B{i}"), bucket_row(&format!("b{i}")));
        resources.insert(format!("B{i}"), json!({"Type": "AWS::S3::Bucket"}));
    }
    let mut t = flat();
    t.root = stack(
        "App",
        Value::Object(rows),
        json!({ "Resources": resources }),
    );
    for dry_run in [false, true] {
        let o = PlanOptions { dry_run, ..opts() };
        let e = plan_tree(&t, &o, &gathered()).unwrap_err();
        assert!(
            e.to_string().contains("declares 501 resources")
                && e.to_string().contains("at most 500")
                && e.to_string().contains("nothing was locked"),
            "{e}"
        );
    }
}

/// The one region rule (`RegionConflict`), for a nested child's record as for a root's:
/// a record stored under `Root~Middle/us-east-1/` whose body says `us-west-2` is refused
/// before anything is planned (the plan comes before any lock), naming the record and
/// its key's region.
#[test]
fn rule_region_child_record_naming_another_region_than_its_key_is_refused_before_planning() {
    let mut t = nested();
    let middle = t.children.get_mut("Root~Middle").unwrap();
    let mut body = middle.record.body.clone();
    body.insert("region".into(), json!("us-west-2"));
    middle.record = parse_state(
        "Root~Middle",
        Some("us-east-1"),
        serde_json::to_string(&body).unwrap().as_bytes(),
    )
    .unwrap();
    for dry_run in [false, true] {
        let o = PlanOptions { dry_run, ..opts() };
        let e = plan_tree(&t, &o, &gathered()).unwrap_err();
        assert!(
            e.to_string()
                .contains("State record for stack Root~Middle (us-east-1)")
                && e.to_string()
                    .contains("different region (a string) than its key (us-east-1)"),
            "{e}"
        );
    }
}

#[test]
fn statement_82_blocked_row_in_a_grandchild_refuses_naming_that_stack() {
    let mut t = nested();
    let leaf = t.children.get_mut("Root~Middle~Leaf").unwrap();
    *leaf = stack(
        "Root~Middle~Leaf",
        json!({}),
        json!({"Parameters": {"Stage": {"Type": "String"}}, "Resources": {"B": {"Type": "AWS::S3::Bucket"}}}),
    );
    let plan = plan_tree(&t, &opts(), &gathered()).unwrap();
    let r = plan.blocked_refusal().unwrap().to_string();
    assert!(
        r.starts_with("1 resource(s) cannot be exported")
            && r.contains("[Root~Middle~Leaf] B (AWS::S3::Bucket)"),
        "{r}"
    );
}

#[test]
fn blocked_root_is_planned_alone() {
    let mut t = nested();
    t.root = stack(
        "Root",
        json!({"Middle": {"physicalId": "x", "resourceType": "AWS::CloudFormation::Stack", "properties": {}}}),
        json!({"Resources": {"B": {"Type": "AWS::S3::Bucket"}, "Middle": {"Type": "AWS::CloudFormation::Stack"}}}),
    );
    let plan = plan_tree(&t, &opts(), &gathered()).unwrap();
    assert_eq!(plan.stacks.len(), 1);
    assert!(plan.blocked_refusal().is_some());
}

#[test]
fn statement_14_only_cdk_metadata_is_an_empty_plan() {
    let t = TreeInput {
        root: stack(
            "App",
            json!({}),
            json!({"Resources": {"M": {"Type": "AWS::CDK::Metadata"}}}),
        ),
        children: BTreeMap::new(),
    };
    let plan = plan_tree(&t, &opts(), &gathered()).unwrap();
    assert!(plan.is_empty());
}

#[test]
fn statement_15_only_custom_resources_refuses_no_importable_resources() {
    let t = TreeInput {
        root: stack(
            "App",
            json!({}),
            json!({"Resources": {"C": {"Type": "Custom::X"}}}),
        ),
        children: BTreeMap::new(),
    };
    assert!(plan_tree(&t, &opts(), &gathered())
        .unwrap_err()
        .to_string()
        .contains("no importable resources"));
}

#[test]
fn statement_16_and_17_custom_resource_gate_warns_in_dry_run_and_refuses_otherwise() {
    // A dry run plans and keeps the gate for its plan to show.
    let o = PlanOptions {
        include_non_importable: false,
        dry_run: true,
        ..opts()
    };
    let plan = plan_tree(&flat(), &o, &gathered()).unwrap();
    let gate = GateRefusal::CustomResources { count: 1 };
    assert_eq!(plan.gates(false, false), std::slice::from_ref(&gate));
    assert!(gate.to_string().contains("--include-non-importable"));
    // The flag lets it be.
    assert_eq!(plan.gates(false, true), []);
    // A real run is refused on it.
    let o = PlanOptions {
        include_non_importable: false,
        ..opts()
    };
    assert_eq!(
        plan_tree(&flat(), &o, &gathered()).unwrap_err(),
        PlanRefusal::Gate(gate)
    );
    // With the flag, a real run plans.
    assert!(plan_tree(&flat(), &opts(), &gathered()).is_ok());
}

#[test]
fn statement_83_dry_run_resolves_child_parameters_and_ssm_failure_only_warns() {
    let mut g = gathered();
    g.ssm
        .insert("/app/name".into(), SsmRead::Failed("AccessDenied".into()));
    let o = PlanOptions {
        dry_run: true,
        ..opts()
    };
    let plan = plan_tree(&nested(), &o, &g).unwrap();
    assert_eq!(plan.stacks.len(), 3);
    assert!(
        plan.warnings
            .iter()
            .any(|w| w.to_string().contains("unconfirmed")),
        "{:?}",
        plan.warnings
    );
    // The real run planning itself refuses; the one reusing the dry plan refuses alike,
    // before any gate.
    let real = plan_tree(&nested(), &opts(), &g).unwrap_err();
    assert!(
        matches!(&real, PlanRefusal::Param(ParamRefusal::Nested { .. })),
        "{real:?}"
    );
    assert_eq!(plan.reuse_refusal(false, false), Some(real));
    let unread: Vec<&UnreadSsm> = plan.stacks.iter().flat_map(|s| &s.ssm_unread).collect();
    assert_eq!(unread.len(), 1, "{unread:?}");
    assert_eq!(unread[0].ssm_name, "/app/name");
    // A plan whose reads all succeeded keeps none.
    assert!(plan_tree(&nested(), &o, &gathered())
        .unwrap()
        .stacks
        .iter()
        .all(|s| s.ssm_unread.is_empty()));
}

#[test]
fn noecho_parameter_is_masked_in_the_plan() {
    let mut t = flat();
    t.root.template.body.insert(
        "Parameters".into(),
        json!({"Pw": {"Type": "String", "NoEcho": true}}),
    );
    let o = PlanOptions {
        parameters: vec!["Pw=hunter2".into()],
        ..opts()
    };
    let plan = plan_tree(&t, &o, &gathered()).unwrap();
    assert_eq!(plan.stacks[0].parameters[0].value.as_deref(), Some("***"));
    assert!(!serde_json::to_string(&plan).unwrap().contains("hunter2"));
}

#[test]
fn iam_policy_principal_mismatch_blocks_and_unconfirmed_warns() {
    let mut t = flat();
    t.root = stack(
        "App",
        json!({"B": bucket_row("b"), "P": {"physicalId": "pol", "resourceType": "AWS::IAM::Policy", "properties": {"Roles": ["r1"]}, "observedProperties": {}}}),
        json!({"Parameters": {"R": {"Type": "AWS::SSM::Parameter::Value<String>", "Default": "/r"}}, "Resources": {"B": {"Type": "AWS::S3::Bucket"}, "P": {"Type": "AWS::IAM::Policy", "Properties": {"PolicyName": "pol", "Roles": ["r2"]}}}}),
    );
    let plan = plan_tree(&t, &opts(), &gathered()).unwrap();
    assert_eq!(
        plan.stacks[0].blocked[0].reason,
        BlockReason::PrincipalMismatch(vec![PrincipalMismatch::NotDetached {
            key: "Roles",
            value: "r2".into()
        }])
    );
    t.root.template.body["Resources"]["P"]["Properties"]["Roles"] = json!([{"Ref": "R"}]);
    let plan = plan_tree(&t, &opts(), &gathered()).unwrap();
    assert!(plan.stacks[0].blocked.is_empty());
    assert!(
        plan.stacks[0]
            .warnings
            .iter()
            .any(|w| w.to_string().contains("SSM-typed")),
        "{:?}",
        plan.stacks[0].warnings
    );
    assert!(matches!(
        plan.stacks[0].phase2.pre_delete[0].action,
        PreDeleteAction::DetachPolicy { .. }
    ));
}

#[test]
fn statement_12_state_rows_absent_from_the_template_are_not_imported() {
    let mut t = flat();
    if let Some(Value::Object(r)) = t.root.record.body.get_mut("resources") {
        r.insert("Extra".into(), bucket_row("extra"));
    }
    let o = PlanOptions {
        leave_unmanaged: true,
        ..opts()
    };
    let plan = plan_tree(&t, &o, &gathered()).unwrap();
    assert!(plan.stacks[0]
        .import
        .iter()
        .all(|r| r.logical_id != "Extra"));
    assert_eq!(plan.stacks[0].unmanaged[0].logical_id, "Extra");
}

#[test]
fn child_record_without_parent_link_refuses() {
    let mut t = nested();
    let m = t.children.get_mut("Root~Middle").unwrap();
    m.record.body.remove("parentStack");
    assert!(plan_tree(&t, &opts(), &gathered())
        .unwrap_err()
        .to_string()
        .contains("parent link"));
}

/// The template's type and the record's disagree.
#[test]
fn type_mismatch_blocks_the_row_before_any_lock_naming_the_id_and_both_types() {
    let t = TreeInput {
        root: stack(
            "App",
            json!({"B": bucket_row("b-1"),
                   "EventsTopic": {"physicalId": "arn:aws:sns:us-east-1:1:t", "resourceType": "AWS::SNS::Topic", "properties": {}}}),
            json!({"Resources": {"B": {"Type": "AWS::S3::Bucket"}, "EventsTopic": {"Type": "AWS::SQS::Queue"}}}),
        ),
        children: BTreeMap::new(),
    };
    for dry_run in [true, false] {
        let o = PlanOptions { dry_run, ..opts() };
        let plan = plan_tree(&t, &o, &gathered()).unwrap();
        let b = &plan.stacks[0].blocked;
        assert_eq!(b.len(), 1, "{b:?}");
        assert_eq!(b[0].logical_id, "EventsTopic");
        assert_eq!(b[0].resource_type, "AWS::SQS::Queue");
        assert_eq!(
            b[0].reason,
            BlockReason::TypeMismatch {
                logical_id: "EventsTopic".into(),
                template_type: "AWS::SQS::Queue".into(),
                recorded_type: "AWS::SNS::Topic".into(),
            }
        );
        let refusal = plan.blocked_refusal().unwrap().to_string();
        assert!(
            refusal.contains("[App] EventsTopic (AWS::SQS::Queue)"),
            "{refusal}"
        );
        assert!(
            plan.stacks[0].import.is_empty()
                || plan.stacks[0]
                    .import
                    .iter()
                    .all(|r| r.logical_id != "EventsTopic")
        );
    }
    // The registry is not asked about a row it cannot import.
    let needs = plan_needs(&t, &opts()).unwrap();
    assert!(
        !needs.types.contains(&"AWS::SQS::Queue".to_string()),
        "{needs:?}"
    );
}

fn with_left_out() -> TreeInput {
    let mut t = flat();
    if let Some(Value::Object(r)) = t.root.record.body.get_mut("resources") {
        r.insert("Old".into(), bucket_row("old-bucket"));
        r.insert(
            "Meta".into(),
            json!({"physicalId": "m", "resourceType": "AWS::CDK::Metadata", "properties": {}}),
        );
        r.insert(
            "Never".into(),
            json!({"resourceType": "AWS::S3::Bucket", "properties": {}}),
        );
    }
    t
}

/// Rows the template leaves out are their own group; a real run
/// refuses them unless --leave-unmanaged, a dry run warns.
#[test]
fn left_unmanaged_rows_are_listed_and_a_real_run_refuses_without_leave_unmanaged() {
    let t = with_left_out();
    let needs = plan_needs(&t, &opts()).unwrap();
    assert!(needs.types.contains(&"AWS::S3::Bucket".to_string()));
    // A real run without the flag: refused before any lock, naming each row.
    let err = plan_tree(&t, &opts(), &gathered()).unwrap_err().to_string();
    assert!(
        err.contains("[App] Old (AWS::S3::Bucket) old-bucket"),
        "{err}"
    );
    assert!(err.contains("--leave-unmanaged"), "{err}");
    assert!(!err.contains("Meta") && !err.contains("Never"), "{err}");
    // A dry run plans, lists them and warns.
    let dry = PlanOptions {
        dry_run: true,
        ..opts()
    };
    let plan = plan_tree(&t, &dry, &gathered()).unwrap();
    let u = &plan.stacks[0].unmanaged;
    assert_eq!(u.len(), 1, "{u:?}");
    assert_eq!(
        (
            u[0].logical_id.as_str(),
            u[0].resource_type.as_str(),
            u[0].physical_id.as_str()
        ),
        ("Old", "AWS::S3::Bucket", "old-bucket")
    );
    assert_eq!(
        u[0].identifier,
        json!({"BucketName": "old-bucket"})
            .as_object()
            .unwrap()
            .clone()
    );
    assert_eq!(
        plan.gates(false, true),
        [GateRefusal::Unmanaged {
            rows: vec![("App".into(), u[0].clone())]
        }]
    );
    // With the flag: planned, no warning.
    let leave = PlanOptions {
        leave_unmanaged: true,
        ..opts()
    };
    let plan = plan_tree(&t, &leave, &gathered()).unwrap();
    assert_eq!(plan.stacks[0].unmanaged.len(), 1);
    assert_eq!(plan.gates(true, true), []);
    let json = serde_json::to_value(&plan).unwrap();
    assert_eq!(json["stacks"][0]["unmanaged"][0]["type"], "AWS::S3::Bucket");
}

/// A nested row's own Tags become the child's stack tags (every change
/// set of the child carries them), so the adopting row, which keeps them, matches.
#[test]
fn nested_row_tags_become_the_child_stack_tags_and_an_unresolvable_one_refuses() {
    let mut t = nested();
    if let Some(Value::Object(r)) = t.root.template.body.get_mut("Resources") {
        r["Middle"]["Properties"]["Tags"] =
            json!([{"Key": "team", "Value": "data"}, {"Key": "stage", "Value": {"Ref": "Stage"}}]);
    }
    let o = PlanOptions {
        dry_run: true,
        ..opts()
    };
    let plan = plan_tree(&t, &o, &gathered()).unwrap();
    let middle = plan
        .stacks
        .iter()
        .find(|s| s.stack == "Root~Middle")
        .unwrap();
    assert_eq!(
        middle.stack_tags,
        vec![
            ("team".to_string(), "data".to_string()),
            ("stage".to_string(), "dev".to_string())
        ]
    );
    let root = plan.stacks.iter().find(|s| s.stack == "Root").unwrap();
    assert!(root.stack_tags.is_empty());
    // A tag from the root's SSM-typed parameter: read like a passed parameter (the first
    // pass asks for it), then sent as the stored value.
    if let Some(Value::Object(r)) = t.root.template.body.get_mut("Resources") {
        r["Middle"]["Properties"]["Tags"] = json!([{"Key": "name", "Value": {"Ref": "Name"}}]);
    }
    let needs = plan_needs(&t, &o).unwrap();
    assert!(
        needs.ssm_parameters.contains(&"/app/name".to_string()),
        "{needs:?}"
    );
    let plan = plan_tree(&t, &o, &gathered()).unwrap();
    let middle = plan
        .stacks
        .iter()
        .find(|s| s.stack == "Root~Middle")
        .unwrap();
    assert_eq!(
        middle.stack_tags,
        vec![("name".to_string(), "stored".to_string())]
    );
    if let Some(Value::Object(r)) = t.root.template.body.get_mut("Resources") {
        r["Middle"]["Properties"]["Tags"] =
            json!([{"Key": "x", "Value": {"Fn::ImportValue": "y"}}]);
    }
    let err = plan_tree(&t, &o, &gathered()).unwrap_err().to_string();
    assert!(
        err.contains("Root~Middle") && err.contains("Fn::ImportValue") && err.contains("match"),
        "{err}"
    );
}

/// An oversized template is refused while planning, before any lock,
/// naming its largest resources by logical id and type.
#[test]
fn oversized_template_is_refused_while_planning_naming_the_largest_by_id_and_type() {
    let mut t = flat();
    if let Some(Value::Object(r)) = t.root.template.body.get_mut("Resources") {
        r["B"]["Properties"]["Tags"] = json!([{"Key": "blob", "Value": "x".repeat(1_100_000)}]);
    }
    let err = plan_tree(
        &t,
        &PlanOptions {
            dry_run: true,
            ..opts()
        },
        &gathered(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("phase 1 (IMPORT)"), "{err}");
    assert!(err.contains("B (AWS::S3::Bucket, "), "{err}");
    assert!(err.contains("nothing was locked"), "{err}");
}

/// The region rule destroy applies, applied by export too.
#[test]
fn region_conflict_export_refuses_a_record_whose_body_names_another_region() {
    let mut t = flat();
    let body = json!({"version": 10, "stackName": "App", "region": "eu-west-1",
                      "resources": {"B": bucket_row("b-1")}});
    t.root.record = parse_state("App", Some("us-east-1"), body.to_string().as_bytes()).unwrap();
    for dry_run in [true, false] {
        let o = PlanOptions { dry_run, ..opts() };
        let err = plan_tree(&t, &o, &gathered()).unwrap_err().to_string();
        assert!(
            err.contains("different region (a string) than its key (us-east-1)"),
            "{err}"
        );
        assert!(
            !err.contains("eu-west-1"),
            "the body's value is never printed: {err}"
        );
        assert!(err.contains("as destroy does"), "{err}");
        assert!(plan_needs(&t, &o).is_err());
    }
}

/// The blocked refusal as data: one entry per logical id within its stack, its reasons
/// folded under it in the plan's order; the same logical id in two stacks is two entries.
#[test]
fn blocked_refusal_is_one_entry_per_stack_and_logical_id_with_every_reason() {
    use crate::export::refusal::{BlockedResource, ExportRefusal};
    let row = |id: &str, reason: &str| BlockedRow {
        logical_id: id.into(),
        resource_type: "AWS::SQS::Queue".into(),
        reason: BlockReason::Recorded(reason.into()),
    };
    let stack = |name: &str, blocked: Vec<BlockedRow>| StackPlan {
        stack: name.into(),
        blocked,
        ..Default::default()
    };
    let plan = Plan {
        stacks: vec![
            stack(
                "App~Db",
                vec![row("Q", "one"), row("R", "r"), row("Q", "two")],
            ),
            stack("App", vec![row("Q", "three")]),
        ],
        warnings: Vec::new(),
    };
    let entry = |s: &str, id: &str, reasons: &[&str]| BlockedResource {
        stack: s.into(),
        logical_id: id.into(),
        resource_type: "AWS::SQS::Queue".into(),
        reasons: reasons
            .iter()
            .map(|r| BlockReason::Recorded(r.to_string()))
            .collect(),
    };
    assert_eq!(
        plan.blocked_refusal(),
        Some(ExportRefusal::Blocked {
            rows: vec![
                entry("App~Db", "Q", &["one", "two"]),
                entry("App~Db", "R", &["r"]),
                entry("App", "Q", &["three"]),
            ]
        })
    );
    assert_eq!(Plan::default().blocked_refusal(), None);
}

/// The plan's own refusals are data: the size rule's count, a child's missing record
/// and its expected key.
#[test]
fn plan_refusals_of_the_planner_are_typed() {
    use crate::export::refusal::ExportRefusal;
    let mut t = nested();
    t.children.remove("Root~Middle");
    assert_eq!(
        plan_tree(&t, &opts(), &gathered()).unwrap_err(),
        PlanRefusal::from(ExportRefusal::ChildWithoutRecord {
            child: "Root~Middle".into(),
            key: "cdkd/Root~Middle/us-east-1/state.json".into(),
        })
    );
    let mut t = nested();
    t.children.get_mut("Root~Middle").unwrap().region = Some("eu-west-1".into());
    assert_eq!(
        plan_tree(&t, &opts(), &gathered()).unwrap_err(),
        PlanRefusal::from(ExportRefusal::ChildInOtherRegion {
            child: "Root~Middle".into(),
            region: Some("eu-west-1".into()),
            root: "Root".into(),
            root_region: Some("us-east-1".into()),
        })
    );
}
