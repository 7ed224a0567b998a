//! refresh-observed decisions (docs/repairs.md, "state refresh-observed [stacks...]").

use std::collections::BTreeMap;

use cdkd_core::repair::refresh::{
    apply_refresh, check_shape, dry_run_tally, exit_code, has_no_resources, precheck, read_plan,
    Outcome, Plan, ReadResult, ShapeRefusal, Tally, Target,
};
use cdkd_core::repair::ssm::{is_baseline_refused, SsmAnswers};
use cdkd_core::view::repair::refresh_stack_line;
use serde_json::{json, Map, Value};

const NOW: i64 = 1_767_225_600_000;
const SM: &str = "{{resolve:secretsmanager:db:SecretString:pw}}";

fn rec(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn healthy() -> Map<String, Value> {
    rec(json!({"resources": {"Q": {"resourceType": "AWS::SQS::Queue", "physicalId": "q"}}}))
}

fn reads(pairs: &[(&str, ReadResult)]) -> BTreeMap<String, ReadResult> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

fn any_reader(_: &str) -> bool {
    true
}

#[test]
fn refresh_rule_6_1_statement_49_precheck_refuses_a_resources_list_naming_stack_and_region() {
    let good = healthy();
    let bad =
        rec(json!({"resources": [{"physicalId": "p", "resourceType": "T", "properties": {}}]}));
    let err = precheck(&[
        Target {
            stack: "App",
            region: Some("us-east-1"),
            record: Some(&good),
        },
        Target {
            stack: "Other",
            region: Some("eu-west-1"),
            record: Some(&bad),
        },
    ])
    .unwrap_err();
    assert_eq!(
        err,
        ShapeRefusal::ResourcesNotAMap {
            stack: "Other".into(),
            region: "eu-west-1".into(),
            kind: "an array"
        }
    );
    let text = err.to_string();
    assert!(
        text.contains("'Other' (eu-west-1)") && text.contains("'resources'"),
        "{text}"
    );
}

#[test]
fn refresh_rule_6_1_every_non_map_resources_is_refused() {
    for (v, kind) in [
        (json!({}), "absent"),
        (json!({"resources": null}), "null"),
        (json!({"resources": "abc"}), "a string"),
        (json!({"resources": 5}), "a number"),
        (json!({"resources": true}), "a boolean"),
        (json!({"resources": []}), "an array"),
    ] {
        match check_shape(&rec(v.clone()), "App", "us-east-1") {
            Err(ShapeRefusal::ResourcesNotAMap { kind: k, .. }) => assert_eq!(k, kind, "{v}"),
            other => panic!("{v}: {other:?}"),
        }
    }
}

#[test]
fn refresh_rule_6_1_entry_not_an_object_or_without_resource_type_is_refused() {
    let r = rec(json!({"resources": {"Q": {"resourceType": "T"}, "R": null}}));
    assert!(matches!(
        check_shape(&r, "App", "us-east-1"),
        Err(ShapeRefusal::EntryNotAnObject { ref logical_id, kind: "null", .. }) if logical_id == "R"
    ));
    let r = rec(json!({"resources": {"S": {"physicalId": "p"}}}));
    let err = check_shape(&r, "App", "us-east-1").unwrap_err();
    assert!(matches!(err, ShapeRefusal::EntryWithoutType { .. }));
    assert!(err.to_string().contains("resource 'S'") && err.to_string().contains("(us-east-1)"));
    let r = rec(json!({"resources": {"S": {"resourceType": 5}}}));
    assert!(matches!(
        check_shape(&r, "App", "us-east-1"),
        Err(ShapeRefusal::EntryWithoutType { .. })
    ));
}

#[test]
fn refresh_rule_6_1_refusals_flatten_untrusted_names() {
    let err = check_shape(&rec(json!({})), "Ev\nil", "us-\u{1b}east-1")
        .unwrap_err()
        .to_string();
    assert!(!err.contains('\n') && !err.contains('\u{1b}'), "{err}");
}

#[test]
fn refresh_rule_6_1_precheck_only_over_several_region_scoped_targets() {
    let bad = rec(json!({"resources": []}));
    // One region-scoped target: left to its own turn (step 6).
    assert!(precheck(&[Target {
        stack: "A",
        region: Some("us-east-1"),
        record: Some(&bad)
    }])
    .is_ok());
    // A legacy target does not count and is not checked here.
    assert!(precheck(&[
        Target {
            stack: "A",
            region: None,
            record: Some(&bad)
        },
        Target {
            stack: "B",
            region: Some("us-east-1"),
            record: Some(&healthy())
        },
    ])
    .is_ok());
    // A target with no record is left to its turn.
    let good = healthy();
    assert!(precheck(&[
        Target {
            stack: "A",
            region: Some("us-east-1"),
            record: None
        },
        Target {
            stack: "B",
            region: Some("us-east-1"),
            record: Some(&good)
        },
    ])
    .is_ok());
}

#[test]
fn refresh_rule_6_1_a_record_without_resources_is_skipped() {
    assert!(has_no_resources(&rec(json!({"resources": {}}))));
    assert!(!has_no_resources(&healthy()));
}

#[test]
fn refresh_rule_6_2_statement_52_refused_entry_counted_and_its_baseline_unchanged() {
    let mut r = rec(json!({"resources": {
        "Imported": {"resourceType": "AWS::S3::Bucket", "observedBaselineRefused": true, "observedProperties": {"old": 1}},
        "Q": {"resourceType": "AWS::SQS::Queue", "properties": {}}
    }}));
    assert!(is_baseline_refused(&r["resources"]["Imported"]));
    let out = apply_refresh(
        &mut r,
        &reads(&[
            ("Imported", ReadResult::Read(json!({"new": 2}))),
            ("Q", ReadResult::Read(json!({"D": 1}))),
        ]),
        &SsmAnswers::none(),
        NOW,
    );
    assert_eq!(
        out.tally,
        Tally {
            refreshed: 1,
            unsupported: 0,
            failed: 0,
            refused: 1,
            gone: 0,
        }
    );
    assert_eq!(
        r["resources"]["Imported"]["observedProperties"],
        json!({"old": 1})
    );
    assert!(refresh_stack_line("App", "us-east-1", &out.tally)
        .ends_with("1 refreshed, 0 unsupported, 0 failed, 1 refused (import baseline refusal)"));
}

#[test]
fn refresh_rule_6_2_observed_baseline_refused_must_be_exactly_true() {
    assert!(!is_baseline_refused(
        &json!({"observedBaselineRefused": "true"})
    ));
    assert!(!is_baseline_refused(&json!({"observedBaselineRefused": 1})));
    assert!(!is_baseline_refused(&json!({})));
}

#[test]
fn refresh_rule_6_2_skipped_type_and_no_reader_are_unsupported_gone_is_gone_all_untouched() {
    let mut r = rec(json!({"resources": {
        "Meta": {"resourceType": "AWS::CDK::Metadata"},
        "X": {"resourceType": "AWS::Unknown::Thing", "observedProperties": {"k": 1}},
        "Gone": {"resourceType": "AWS::SQS::Queue", "observedProperties": {"k": 2}},
        "Unread": {"resourceType": "AWS::SQS::Queue"}
    }}));
    let plan = read_plan(&r, &|t: &str| t != "AWS::Unknown::Thing");
    assert_eq!(
        plan,
        vec![
            ("Meta".to_string(), Plan::Unsupported),
            ("X".to_string(), Plan::Unsupported),
            ("Gone".to_string(), Plan::Read),
            ("Unread".to_string(), Plan::Read),
        ]
    );
    let out = apply_refresh(
        &mut r,
        &reads(&[
            ("Meta", ReadResult::Read(json!({}))),
            ("X", ReadResult::NoReader),
            ("Gone", ReadResult::Gone),
        ]),
        &SsmAnswers::none(),
        NOW,
    );
    assert_eq!(
        out.tally,
        Tally {
            unsupported: 3,
            gone: 1,
            ..Tally::default()
        }
    );
    assert_eq!(out.outcomes[2].outcome, Outcome::Gone);
    assert_eq!(exit_code(&out.tally), 2);
    assert_eq!(r["resources"]["X"]["observedProperties"], json!({"k": 1}));
    assert_eq!(
        r["resources"]["Gone"]["observedProperties"],
        json!({"k": 2})
    );
    assert!(r["resources"]["Meta"].get("observedProperties").is_none());
}

#[test]
fn refresh_rule_6_2_statement_56_failed_read_keeps_the_baseline_others_saved_exit_2() {
    let mut r = rec(json!({"resources": {
        "Bad": {"resourceType": "AWS::SQS::Queue", "observedProperties": {"kept": true}},
        "Good": {"resourceType": "AWS::SNS::Topic", "properties": {"TopicName": "t"}}
    }}));
    let out = apply_refresh(
        &mut r,
        &reads(&[
            ("Bad", ReadResult::Failed("AccessDenied".into())),
            ("Good", ReadResult::Read(json!({"TopicName": "t"}))),
        ]),
        &SsmAnswers::none(),
        NOW,
    );
    assert_eq!(out.tally.failed, 1);
    assert_eq!(
        out.outcomes[0].outcome,
        Outcome::Failed {
            message: "AccessDenied".into()
        }
    );
    assert_eq!(
        r["resources"]["Bad"]["observedProperties"],
        json!({"kept": true})
    );
    assert_eq!(
        r["resources"]["Good"]["observedProperties"],
        json!({"TopicName": "t"})
    );
    assert_eq!(exit_code(&out.tally), 2);
    assert_eq!(
        exit_code(&Tally {
            refreshed: 3,
            unsupported: 1,
            refused: 1,
            failed: 0,
            gone: 0,
        }),
        0
    );
}

#[test]
fn refresh_rule_6_2_statement_54_refreshed_baseline_is_redacted_by_position() {
    let mut r = rec(json!({"resources": {
        "Db": {"resourceType": "AWS::RDS::DBInstance", "properties": {"MasterUserPassword": SM, "Port": 5432}}
    }}));
    apply_refresh(
        &mut r,
        &reads(&[(
            "Db",
            ReadResult::Read(json!({"MasterUserPassword": "hunter2", "Port": 5432})),
        )]),
        &SsmAnswers::none(),
        NOW,
    );
    assert_eq!(
        r["resources"]["Db"]["observedProperties"],
        json!({"MasterUserPassword": SM, "Port": 5432})
    );
    assert_eq!(
        r["resources"]["Db"]["properties"]["MasterUserPassword"],
        json!(SM)
    );
}

#[test]
fn refresh_rule_6_2_absent_properties_stand_for_an_empty_record() {
    let mut r = rec(json!({"resources": {"Q": {"resourceType": "AWS::SQS::Queue"}}}));
    apply_refresh(
        &mut r,
        &reads(&[("Q", ReadResult::Read(json!({"A": 1})))]),
        &SsmAnswers::none(),
        NOW,
    );
    assert_eq!(r["resources"]["Q"]["observedProperties"], json!({"A": 1}));
}

#[test]
fn refresh_rule_6_2_statement_53_skipped_outputs_dropped_only_when_something_refreshed() {
    let base = json!({"resources": {"Q": {"resourceType": "AWS::SQS::Queue"}}, "skippedOutputs": {"Url": "abc"}, "lastModified": 1});
    let mut r = rec(base.clone());
    apply_refresh(
        &mut r,
        &reads(&[("Q", ReadResult::Read(json!({})))]),
        &SsmAnswers::none(),
        NOW,
    );
    assert!(r.get("skippedOutputs").is_none());
    assert_eq!(r["lastModified"], json!(NOW));

    let mut r = rec(base);
    let out = apply_refresh(
        &mut r,
        &reads(&[("Q", ReadResult::Failed("x".into()))]),
        &SsmAnswers::none(),
        NOW,
    );
    assert_eq!(out.tally.refreshed, 0);
    assert_eq!(r["skippedOutputs"], json!({"Url": "abc"}));
    assert_eq!(
        r["lastModified"],
        json!(NOW),
        "saved even when nothing was refreshed"
    );
}

#[test]
fn refresh_rule_6_2_record_fields_keep_their_order() {
    let mut r = rec(
        json!({"version": 10, "skippedOutputs": {}, "resources": {"Q": {"resourceType": "T"}}, "outputs": {}}),
    );
    apply_refresh(
        &mut r,
        &reads(&[("Q", ReadResult::Read(json!({})))]),
        &SsmAnswers::none(),
        NOW,
    );
    let keys: Vec<&String> = r.keys().collect();
    assert_eq!(keys, ["version", "resources", "outputs", "lastModified"]);
}

#[test]
fn refresh_rule_6_3_dry_run_tally_counts_what_would_be_read() {
    let r = rec(json!({"resources": {
        "A": {"resourceType": "AWS::SQS::Queue"},
        "B": {"resourceType": "AWS::CDK::Metadata"},
        "C": {"resourceType": "AWS::S3::Bucket", "observedBaselineRefused": true},
        "D": {"resourceType": "AWS::Nope::Nope"}
    }}));
    let t = dry_run_tally(&r, &|t: &str| t != "AWS::Nope::Nope");
    assert_eq!(
        t,
        Tally {
            refreshed: 1,
            unsupported: 2,
            failed: 0,
            refused: 1,
            gone: 0,
        }
    );
    assert_eq!(dry_run_tally(&healthy(), &any_reader).refreshed, 1);
}

#[test]
fn refresh_tally_adds_stacks_into_the_run() {
    let mut run = Tally::default();
    run.add(&Tally {
        refreshed: 1,
        unsupported: 2,
        failed: 3,
        refused: 4,
        gone: 0,
    });
    run.add(&Tally {
        refreshed: 1,
        unsupported: 0,
        failed: 0,
        refused: 1,
        gone: 0,
    });
    assert_eq!(
        run,
        Tally {
            refreshed: 2,
            unsupported: 2,
            failed: 3,
            refused: 5,
            gone: 0,
        }
    );
}

// ---------------------------------------------------------------------------------
// Which reader (docs/repairs.md, "Per resource" rule 2): core::repair::reading

use cdkd_core::repair::reading::{inline_policies_owned_elsewhere, read_route, ReadRoute};

#[test]
fn refresh_rule_6_2_reader_sdk_when_declared_else_cloud_control_else_unsupported() {
    assert_eq!(read_route("AWS::SQS::Queue", None, true), ReadRoute::Sdk);
    assert_eq!(
        read_route("AWS::SQS::Queue", Some("sdk"), true),
        ReadRoute::Sdk
    );
    assert_eq!(
        read_route("AWS::ECS::Cluster", None, false),
        ReadRoute::CloudControl
    );
    for t in [
        "Custom::Thing",
        "AWS::CloudFormation::CustomResource",
        "AWS::CloudFormation::Stack",
        "AWS::CloudFormation::WaitCondition",
        "AWS::CDK::Metadata",
    ] {
        assert_eq!(read_route(t, None, false), ReadRoute::Unsupported, "{t}");
    }
    // A skipped type stays unsupported even when something declares it.
    assert_eq!(
        read_route("AWS::CDK::Metadata", None, true),
        ReadRoute::Unsupported
    );
}

#[test]
fn refresh_rule_6_2_reader_a_cc_api_record_is_read_back_through_cloud_control() {
    assert_eq!(
        read_route("AWS::Events::Rule", Some("cc-api"), true),
        ReadRoute::CloudControl
    );
    // ... unless Cloud Control has nothing to read for the type.
    assert_eq!(
        read_route("Custom::X", Some("cc-api"), true),
        ReadRoute::Sdk
    );
}

#[test]
fn refresh_rule_6_2_role_reading_leaves_out_inline_policies_sibling_policies_own() {
    let r = rec(json!({"resources": {
        "Role": {"resourceType": "AWS::IAM::Role", "physicalId": "app-role"},
        "P1": {"resourceType": "AWS::IAM::Policy", "physicalId": "p1",
               "properties": {"PolicyName": "p1", "Roles": ["app-role"]}},
        "P2": {"resourceType": "AWS::IAM::Policy", "physicalId": "p2:app-role",
               "properties": {"Roles": ["arn:aws:iam::1:role/path/app-role"]}},
        "P3": {"resourceType": "AWS::IAM::Policy", "physicalId": "p3",
               "properties": {"PolicyName": "p3", "Roles": ["other-role"]}},
        "Dup": {"resourceType": "AWS::IAM::Policy", "physicalId": "p1",
               "properties": {"PolicyName": "p1", "Roles": ["app-role"]}}
    }}));
    assert_eq!(
        inline_policies_owned_elsewhere(&r, "app-role"),
        ["p1", "p2"]
    );
    assert!(inline_policies_owned_elsewhere(&r, "nobody").is_empty());
}

/// A read that finds the resource gone is reported as gone, by logical
/// id, with the `state orphan --resource` command that forgets it; the run exits 2; the
/// record keeps the old baseline.
#[test]
fn refresh_gone_resource_is_reported_gone_with_the_orphan_command_and_exit_2() {
    use cdkd_core::view::repair::{refresh_stack, refresh_summary};
    let mut r = rec(json!({"resources": {
        "Deleted": {"resourceType": "AWS::SQS::Queue", "observedProperties": {"old": true}},
        "Live": {"resourceType": "AWS::SNS::Topic", "properties": {"TopicName": "t"}}
    }}));
    let out = apply_refresh(
        &mut r,
        &reads(&[
            ("Deleted", ReadResult::Gone),
            ("Live", ReadResult::Read(json!({"TopicName": "t"}))),
        ]),
        &SsmAnswers::none(),
        NOW,
    );
    assert_eq!(out.tally.gone, 1);
    assert_eq!(out.tally.refreshed, 1);
    assert_eq!(
        r["resources"]["Deleted"]["observedProperties"],
        json!({"old": true})
    );
    assert_eq!(exit_code(&out.tally), 2);
    let shown = refresh_stack("App", "us-east-1", &out);
    assert!(
        shown
            .stdout
            .contains("1 refreshed, 0 unsupported, 0 failed, 1 gone (deleted outside cdkd)"),
        "{}",
        shown.stdout
    );
    assert_eq!(shown.warnings.len(), 1);
    assert!(
        shown.warnings[0].starts_with("  \u{2717} App/Deleted (AWS::SQS::Queue): gone"),
        "{}",
        shown.warnings[0]
    );
    assert!(
        shown.warnings[0].ends_with("forget it with: cdkd-flow state orphan App --stack-region us-east-1 --resource Deleted"),
        "{}",
        shown.warnings[0]
    );
    let summary = refresh_summary(&out.tally, false);
    assert!(summary
        .stdout
        .contains("0 failed, 1 gone (deleted outside cdkd)"));
    assert!(summary
        .warnings
        .iter()
        .any(|w| w.starts_with("error: 1 resource(s) were not refreshed")));
}

#[test]
fn refresh_gone_command_is_withheld_when_it_cannot_be_printed_faithfully() {
    use cdkd_core::repair::refresh::ResourceOutcome;
    use cdkd_core::view::repair::{orphan_resource_command, refresh_gone_warning};
    let o = ResourceOutcome {
        logical_id: "Bad\u{1b}[2J".into(),
        resource_type: "AWS::SQS::Queue".into(),
        outcome: Outcome::Gone,
    };
    let w = refresh_gone_warning("App", "us-east-1", &o).expect("a warning");
    assert!(!w.contains('\u{1b}'), "{w}");
    assert!(w.contains("cannot be printed faithfully"), "{w}");
    assert_eq!(
        orphan_resource_command("\u{d6}rd\u{e9}rs", "eu-west-1", "My Queue").as_deref(),
        Some("cdkd-flow state orphan '\u{d6}rd\u{e9}rs' --stack-region eu-west-1 --resource 'My Queue'")
    );
}
