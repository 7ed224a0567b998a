//! `state show` (docs/state-views.md, "state show <stack>", testable statements 22-42).

use crate::views_common;

use cdkd_core::state::resolve_single;
use cdkd_core::view::state::list::RefView;
use cdkd_core::view::state::resolve::{legacy_refusal, missing_nested_child};
use cdkd_core::view::state::show::{
    lock_summary, nested_child_ids, show_json, show_nested_json, show_nested_text, show_text,
    ShowNode,
};
use serde_json::Value;
use views_common::{lock, node, rec, NOW};

fn text(record: &str) -> String {
    show_text(&node("App", "us-east-1", rec(record), None), NOW).stdout
}

fn lines(s: &str) -> Vec<&str> {
    s.lines().collect()
}

#[test]
fn show_22_lock_row_unlocked_and_locked_with_operation() {
    assert!(text(r#"{"resources":{}}"#).contains("\n  Lock: unlocked\n"));
    let l = lock(&format!(
        r#"{{"owner":"alice@ws:1","operation":"deploy","expiresAt":{}}}"#,
        NOW + 600_500
    ));
    assert_eq!(
        lock_summary(Some(&l), NOW),
        "locked by alice@ws:1 (operation: deploy), expires in 10m0s"
    );
    let out = show_text(
        &node("App", "us-east-1", rec(r#"{"resources":{}}"#), Some(l)),
        NOW,
    )
    .stdout;
    assert!(out.contains("\n  Lock: locked by alice@ws:1 (operation: deploy), expires in 10m0s\n"));
}

#[test]
fn show_23_lock_expiry_past_and_non_finite() {
    let l = lock(&format!(
        r#"{{"owner":"bob","expiresAt":{}}}"#,
        NOW - 30_000
    ));
    assert!(lock_summary(Some(&l), NOW).ends_with("expired 30s ago"));
    for exp in [
        r#","expiresAt":{}"#,
        r#","expiresAt":"soon""#,
        "",
        r#","expiresAt":"123""#,
    ] {
        let l = lock(&format!(r#"{{"owner":"bob"{exp}}}"#));
        let row = lock_summary(Some(&l), NOW);
        assert!(row.ends_with("expires at an unknown time"), "{exp}: {row}");
        assert!(!row.contains("NaN"));
    }
}

#[test]
fn show_24_object_owner_reads_object_object() {
    let l = lock(r#"{"owner":{"toString":null},"operation":{"a":1},"expiresAt":{}}"#);
    assert_eq!(
        lock_summary(Some(&l), NOW),
        "locked by [object Object] (operation: [object Object]), expires at an unknown time"
    );
}

#[test]
fn show_lock_owner_and_operation_are_flattened_where_read() {
    let l = lock("{\"owner\":\"ev\\nil\\u001b[2J\",\"operation\":\"\\u202edeploy\"}");
    let row = lock_summary(Some(&l), NOW);
    assert_eq!(
        row,
        "locked by ev il [2J (operation: deploy), expires at an unknown time"
    );
}

#[test]
fn show_lock_without_operation_or_empty_operation_has_no_operation_part() {
    let l = lock(r#"{"owner":"bob","operation":"","expiresAt":{}}"#);
    assert_eq!(
        lock_summary(Some(&l), NOW),
        "locked by bob, expires at an unknown time"
    );
}

#[test]
fn show_25_output_key_and_value_are_stripped() {
    let out = text("{\"resources\":{},\"outputs\":{\"Ex\\u001b[31mport\":\"a\\nb\"}}");
    assert!(out.contains("\nOutputs:\n  Ex[31mport: ab\n"), "{out}");
}

#[test]
fn show_26_bidi_override_inside_object_property_is_removed() {
    let out = text(
        r#"{"resources":{"R":{"resourceType":"T","properties":{"Tags":[{"Key":"env","Value":"pr\u202eod"}]}}}}"#,
    );
    assert!(
        out.contains("\n    Tags: [{\"Key\":\"env\",\"Value\":\"prod\"}]\n"),
        "{out}"
    );
}

#[test]
fn show_27_escape_removed_from_string_and_json_escaped_inside_object() {
    let out = text(r#"{"resources":{"R":{"properties":{"S":"a\u001bb","O":{"k":"x\u001by"}}}}}"#);
    assert!(out.contains("\n    S: ab\n"));
    assert!(out.contains("\n    O: {\"k\":\"x\\u001by\"}\n"), "{out}");
    assert!(!out.contains('\u{1b}'));
}

#[test]
fn show_28_null_resource_entry_renders_defaults_and_json_keeps_null() {
    let record = r#"{"stackName":"App","region":"us-east-1","resources":{"R":null}}"#;
    let out = text(record);
    let l = lines(&out);
    let at = l.iter().position(|x| *x == "Resources (1):").unwrap();
    assert_eq!(
        &l[at..],
        [
            "Resources (1):",
            "",
            "R",
            "  Type: undefined",
            "  PhysicalID: undefined",
            "  ProvisionedBy: (sdk, legacy default)",
            "  Dependencies: (none)",
            "  Attributes: (none)",
            "  Properties: (none)",
        ]
    );
    let json = show_json(&node("App", "us-east-1", rec(record), None)).stdout;
    assert!(json.contains("\"R\": null"));
}

#[test]
fn show_28_number_string_and_boolean_entries_render_like_empty_objects() {
    let out = text(r#"{"resources":{"N":5,"S":"x","B":true}}"#);
    assert_eq!(out.matches("  Type: undefined").count(), 3);
}

#[test]
fn show_29_dependency_list_none_null_and_values() {
    let dep = |d: &str| {
        text(&format!(
            r#"{{"resources":{{"R":{{"dependencies":{d}}}}}}}"#
        ))
    };
    assert!(dep(r#"["(none)"]"#).contains("\n  Dependencies: (none)\n"));
    assert!(dep("[]").contains("\n  Dependencies: (none)\n"));
    assert!(dep("null").contains("\n  Dependencies: null\n"));
    assert!(dep(r#"["A","B"]"#).contains("\n  Dependencies: A, B\n"));
    assert!(dep(r#"["A",{"x":1},7]"#).contains("\n  Dependencies: A, {\"x\":1}, 7\n"));
    assert!(dep(r#""Solo""#).contains("\n  Dependencies: Solo\n"));
}

#[test]
fn show_30_physical_id_number_and_object() {
    assert!(text(r#"{"resources":{"R":{"physicalId":42}}}"#).contains("\n  PhysicalID: 42\n"));
    assert!(text(r#"{"resources":{"R":{"physicalId":{"a":1}}}}"#)
        .contains("\n  PhysicalID: {\"a\":1}\n"));
    assert!(text(r#"{"resources":{"R":{"physicalId":1e21}}}"#).contains("\n  PhysicalID: 1e+21\n"));
}

#[test]
fn show_31_missing_version_and_null_last_modified() {
    let out = text(r#"{"resources":{},"lastModified":null}"#);
    assert!(out.contains("\n  Version: undefined\n"));
    assert!(out.contains("\n  Last Modified: 1970-01-01T00:00:00.000Z\n"));
    assert!(text(r#"{"resources":{}}"#).contains("\n  Last Modified: undefined\n"));
    assert!(
        text(r#"{"resources":{},"lastModified":1e300}"#).contains("\n  Last Modified: 1e+300\n")
    );
    assert!(text(r#"{"resources":{},"lastModified":true}"#)
        .contains("\n  Last Modified: 1970-01-01T00:00:00.001Z\n"));
    assert!(text(r#"{"resources":{},"lastModified":"2026-04-29"}"#)
        .contains("\n  Last Modified: 2026-04-29T00:00:00.000Z\n"));
}

#[test]
fn show_32_skipped_digest_preview_cut_exact_and_null() {
    let sk = |v: &str| {
        text(&format!(
            r#"{{"resources":{{}},"skippedOutputs":{{"Url":{v}}}}}"#
        ))
    };
    assert!(sk(r#""0123456789abcdef""#).contains("\nSkipped outputs:\n  Url: 0123456789ab…\n"));
    let exact = sk(r#""0123456789ab""#);
    assert!(exact.contains("\n  Url: 0123456789ab\n") && !exact.contains('…'));
    assert!(sk("null").contains("\n  Url: null\n"));
    // Control characters are stripped before the cut.
    assert!(sk(r#""\u001b0123456789abcdef""#).contains("\n  Url: 0123456789ab…\n"));
}

#[test]
fn show_32_unserializable_digest_is_shown_whole() {
    let d = cdkd_core::js::MAX_STRINGIFY_DEPTH + 20;
    let deep = format!("{}{}", "[".repeat(d), "]".repeat(d));
    let out = text(&format!(
        r#"{{"resources":{{}},"skippedOutputs":{{"Url":{deep}}}}}"#
    ));
    assert!(
        out.contains("\n  Url: (unserializable)\n"),
        "{}",
        &out[..200]
    );
}

#[test]
fn show_33_empty_or_absent_skipped_outputs_prints_no_block_no_legend() {
    for r in [
        r#"{"resources":{},"skippedOutputs":{}}"#,
        r#"{"resources":{}}"#,
        r#"{"resources":{},"skippedOutputs":null}"#,
    ] {
        let out = text(r);
        assert!(!out.contains("Skipped outputs:"));
        assert!(!out.contains("The last deploy could not resolve"));
    }
}

#[test]
fn show_34_legend_starts_at_column_zero() {
    let out = text(r#"{"resources":{},"skippedOutputs":{"B":"x","a":"y"}}"#);
    assert!(out.contains(
        "\nSkipped outputs:\n  a: y\n  B: x\n\nThe last deploy could not resolve the keys listed under `Skipped outputs:`\n"
    ));
    assert!(out
        .lines()
        .any(|l| l == "Binding rule: `bindingSkippedOutputs` in src/analyzer/skipped-outputs.ts."));
}

fn nested_tree() -> ShowNode {
    let mut root = node(
        "P",
        "us-east-1",
        rec(
            r#"{"stackName":"P","resources":{"C1":{"resourceType":"AWS::CloudFormation::Stack"},"C2":{"resourceType":"AWS::CloudFormation::Stack"}}}"#,
        ),
        None,
    );
    root.children.push(node(
        "P~C1",
        "us-east-1",
        rec(r#"{"stackName":"P~C1","resources":{},"skippedOutputs":{"X":"d1"}}"#),
        None,
    ));
    root.children.push(node(
        "P~C2",
        "us-east-1",
        rec(r#"{"stackName":"P~C2","resources":{},"skippedOutputs":{"Y":"d2"}}"#),
        None,
    ));
    root
}

#[test]
fn show_35_nested_legend_once_after_last_child() {
    let out = show_nested_text(&nested_tree(), NOW).stdout;
    assert_eq!(out.matches("The last deploy could not resolve").count(), 1);
    let legend_at = out.find("The last deploy could not resolve").unwrap();
    let last_child_at = out.find("Nested stack: P~C2").unwrap();
    assert!(legend_at > last_child_at);
    assert!(out.contains("\n  Y: d2\n\nResources (0):\n\nThe last deploy"));
    assert!(out
        .ends_with("Binding rule: `bindingSkippedOutputs` in src/analyzer/skipped-outputs.ts.\n"));
    insta::assert_snapshot!(out);
}

#[test]
fn show_36_string_outputs_prints_no_block_warns_once_and_json_keeps_it() {
    let record = r#"{"stackName":"App","resources":{},"outputs":"abcdef"}"#;
    let r = show_text(&node("App", "us-east-1", rec(record), None), NOW);
    assert!(!r.stdout.contains("Outputs:"));
    assert_eq!(r.warnings.len(), 1);
    assert!(r.warnings[0].contains("'outputs'"));
    let json = show_json(&node("App", "us-east-1", rec(record), None));
    assert!(json.stdout.contains("\"outputs\": \"abcdef\""));
    assert!(json.warnings.is_empty());
}

#[test]
fn show_37_list_resources_renders_zero_and_warns_only_in_text() {
    let record = r#"{"resources":[{"physicalId":"p","resourceType":"T","properties":{}}]}"#;
    let r = show_text(&node("App", "us-east-1", rec(record), None), NOW);
    assert!(r.stdout.contains("\nResources (0):\n"));
    assert_eq!(r.warnings.len(), 1);
    assert!(r.warnings[0].contains("'resources'"));
    assert!(show_json(&node("App", "us-east-1", rec(record), None))
        .warnings
        .is_empty());
}

#[test]
fn show_38_nested_json_child_with_unreadable_bag_has_empty_children_and_warns() {
    let mut root = node(
        "P",
        "us-east-1",
        rec(r#"{"resources":{"C":{"resourceType":"AWS::CloudFormation::Stack"}}}"#),
        None,
    );
    let child = rec(r#"{"resources":5}"#);
    assert!(nested_child_ids(&child).is_empty());
    root.children.push(node("P~C", "us-east-1", child, None));
    let r = show_nested_json(&root);
    let v = cdkd_core::json::parse_json(r.stdout.as_bytes()).unwrap();
    assert_eq!(v["children"][0]["children"], Value::Array(vec![]));
    assert_eq!(v["children"][0]["state"]["resources"], 5);
    assert_eq!(r.warnings.len(), 1);
    assert!(r.warnings[0].contains("'P~C'"));
}

#[test]
fn show_nested_text_judges_each_record_on_its_own_bag() {
    let mut root = node(
        "P",
        "us-east-1",
        rec(
            r#"{"resources":{"C":{"resourceType":"AWS::CloudFormation::Stack","physicalId":"arn"}}}"#,
        ),
        None,
    );
    root.children.push(node(
        "P~C",
        "us-east-1",
        rec(r#"{"resources":"abc"}"#),
        None,
    ));
    let r = show_nested_text(&root, NOW);
    assert!(r.stdout.contains("\nResources (1):\n\nC\n"));
    assert!(r.stdout.contains("\nNested stack: P~C\n"));
    assert!(r.stdout.ends_with("\nResources (0):\n"));
    assert_eq!(r.warnings.len(), 1);
    assert!(
        r.warnings[0].starts_with("State for 'P~C' (us-east-1) has no readable 'resources' map")
    );
}

#[test]
fn show_nested_child_ids_follow_record_key_order_and_exact_type() {
    let r = rec(
        r#"{"resources":{"b":{"resourceType":"AWS::CloudFormation::Stack"},"10":{"resourceType":"AWS::CloudFormation::Stack"},"a":{"resourceType":"aws::cloudformation::stack"},"n":null}}"#,
    );
    assert_eq!(nested_child_ids(&r), ["10", "b"]);
}

#[test]
fn show_39_missing_nested_child_is_refused_by_name() {
    let msg = missing_nested_child("P", "Child", "P~Child", "us-east-1");
    assert!(msg.starts_with("cdkd state is missing nested-child 'P~Child' (us-east-1)."));
    let msg = missing_nested_child("P", "C\nX", "P~C\nX", "us-east-1");
    assert!(!msg.contains('\n'));
}

#[test]
fn show_40_observed_baseline_row_only_when_exactly_true() {
    let row = "  ObservedBaseline: REFUSED by 'cdkd import' — no baseline will be captured (deploy a change to this resource to restore one)";
    let with = text(
        r#"{"resources":{"B":{"resourceType":"AWS::S3::Bucket","observedBaselineRefused":true}}}"#,
    );
    assert!(with.lines().any(|l| l == row));
    for v in ["false", r#""true""#, "1"] {
        let out = text(&format!(
            r#"{{"resources":{{"B":{{"resourceType":"AWS::S3::Bucket","observedBaselineRefused":{v}}}}}}}"#
        ));
        assert!(!out.contains("ObservedBaseline"));
    }
    assert!(
        !text(r#"{"resources":{"B":{"resourceType":"AWS::S3::Bucket"}}}"#)
            .contains("ObservedBaseline")
    );
}

#[test]
fn show_41_two_regions_without_stack_region_is_refused_listing_both() {
    let refs = [
        RefView {
            stack: "App",
            region: Some("us-east-1"),
        },
        RefView {
            stack: "App",
            region: Some("eu-west-1"),
        },
    ];
    let err = resolve_single("App", &refs, None).unwrap_err().to_string();
    assert_eq!(
        err,
        "Stack 'App' has state in multiple regions: us-east-1, eu-west-1. Re-run with --stack-region <region> to disambiguate."
    );
    assert_eq!(
        resolve_single("App", &refs, Some("eu-west-1"))
            .unwrap()
            .region,
        Some("eu-west-1")
    );
    let err = resolve_single("App", &refs, Some("ap-south-1"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "No state found for stack 'App' in region 'ap-south-1'. Available regions: us-east-1, eu-west-1."
    );
    let err = resolve_single("Nope", &refs, None).unwrap_err().to_string();
    assert_eq!(
        err,
        "No state found for stack 'Nope'. Run 'cdkd-flow state list' to see available stacks."
    );
}

#[test]
fn show_ambiguous_regions_are_ascii_only_in_the_refusal() {
    let refs = [
        RefView {
            stack: "App",
            region: Some("us-east-1\nX"),
        },
        RefView {
            stack: "App",
            region: None,
        },
    ];
    let err = resolve_single("App", &refs, None).unwrap_err().to_string();
    assert_eq!(
        err,
        "Stack 'App' has state in multiple regions: us-east-1 X, (legacy). Re-run with --stack-region <region> to disambiguate."
    );
}

#[test]
fn show_42_legacy_only_record_is_refused_with_migrate_line() {
    let refs = [RefView {
        stack: "Old",
        region: None,
    }];
    let r = resolve_single("Old", &refs, None).unwrap();
    assert_eq!(r.region, None);
    assert_eq!(
        legacy_refusal("Old"),
        "Stack 'Old' has only a legacy state record without a region. A cdkd write migrates it to the region-scoped layout; re-run this command after it.\nMigrate with: cdkd deploy Old"
    );
    assert!(legacy_refusal("Root~Child").ends_with("Migrate with: cdkd deploy 'Root~Child'"));
    for bad in ["-all", "a*b", "a/b", "x\u{1b}y"] {
        let msg = legacy_refusal(bad);
        assert!(
            msg.contains(
                "Migrate with: cdkd deploy '<stack>' (the stack name is not shown because"
            ),
            "{msg}"
        );
    }
}

#[test]
fn show_outputs_keep_record_key_order_and_resources_sort_by_locale() {
    let out = text(r#"{"resources":{"b":{},"A":{},"a":{},"B":{}},"outputs":{"z":1,"10":2,"2":3}}"#);
    assert!(out.contains("\nOutputs:\n  2: 3\n  10: 2\n  z: 1\n"));
    let ids: Vec<&str> = out
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with(' ') && l.len() == 1)
        .collect();
    assert_eq!(ids, ["a", "A", "b", "B"]);
}

#[test]
fn show_parent_row_variants() {
    assert!(text(
        r#"{"resources":{},"parentStack":"P","parentRegion":"us-east-1","parentLogicalId":"C"}"#
    )
    .contains("\n  Parent: P (us-east-1), logical id: C\n"));
    assert!(text(r#"{"resources":{},"parentStack":"P"}"#).contains("\n  Parent: P\n"));
    assert!(
        text(r#"{"resources":{},"parentStack":null,"parentRegion":""}"#)
            .contains("\n  Parent: null\n")
    );
    assert!(!text(r#"{"resources":{}}"#).contains("Parent:"));
}

#[test]
fn show_region_row_only_when_truthy() {
    assert!(text(r#"{"resources":{},"region":"us-east-1"}"#).contains("\n  Region: us-east-1\n"));
    assert!(!text(r#"{"resources":{},"region":""}"#).contains("Region:"));
}

#[test]
fn show_json_escapes_and_parses_back_to_the_record() {
    let record = "{\"stackName\":\"A\\u2028B\",\"resources\":{\"R\\u202e\":{\"physicalId\":\"\\u200b\\u00ad\\ufeff\"}},\"b\":1,\"10\":2}";
    let node = node("App", "us-east-1", rec(record), None);
    let out = show_json(&node).stdout;
    assert!(!views_common::has_forbidden_char(&out));
    for raw in ['\u{2028}', '\u{202e}', '\u{200b}', '\u{ad}', '\u{feff}'] {
        assert!(!out.contains(raw));
    }
    let v = cdkd_core::json::parse_json(out.as_bytes()).unwrap();
    assert_eq!(v["state"], Value::Object(rec(record)));
    assert_eq!(v["lock"], Value::Null);
    // JS key order: integer-like keys first.
    assert!(out.find("\"10\": 2").unwrap() < out.find("\"stackName\"").unwrap());
}

// ------------------ docs/state-views.md, "A lock without a record" a lock left without a record

fn lone_ctx<'a>(
    stack: &'a str,
    region: Option<&'a str>,
) -> cdkd_core::contention::ContentionContext<'a> {
    cdkd_core::contention::ContentionContext {
        subject: cdkd_core::contention::Subject::Stack,
        stack,
        region,
        profile: None,
        bucket: Some("cdkd-state-1"),
        prefix: "cdkd",
    }
}

fn export_lock(expires_at: i64) -> cdkd_core::view::state::show::LockView {
    lock(&format!(
        r#"{{"owner":"cdkd-flow:export-Orders-20260101T000000","timestamp":{},"expiresAt":{expires_at},"operation":"export"}}"#,
        NOW - 300_000
    ))
}

#[test]
fn state_show_lock_without_record_live_lock_names_the_holder_and_prints_no_command() {
    use cdkd_core::view::state::show::{lock_without_record_text, LoneLock};
    let l = export_lock(NOW + 1_500_000);
    let out = lock_without_record_text(
        &lone_ctx("Orders", Some("us-east-1")),
        LoneLock::Held(&l),
        NOW,
    );
    assert!(!out.stdout.contains("force-unlock"), "{}", out.stdout);
    insta::assert_snapshot!(out.stdout);
}

#[test]
fn state_show_lock_without_record_expired_lock_prints_the_command_that_clears_it() {
    use cdkd_core::view::state::show::{lock_without_record_text, LoneLock};
    let l = export_lock(NOW - 1_000);
    let out = lock_without_record_text(
        &lone_ctx("Orders", Some("us-east-1")),
        LoneLock::Held(&l),
        NOW,
    );
    assert!(out.stdout.contains(
        "Clear it with: cdkd-flow force-unlock Orders --stack-region us-east-1 --state-bucket cdkd-state-1 --if-expired\n"
    ));
    insta::assert_snapshot!(out.stdout);
}

#[test]
fn state_show_lock_without_record_malformed_lock_and_legacy_key() {
    use cdkd_core::view::state::show::{lock_without_record_text, LoneLock};
    let out = lock_without_record_text(
        &lone_ctx("Old", None),
        LoneLock::Malformed("the lock body is not a JSON object"),
        NOW,
    );
    insta::assert_snapshot!(out.stdout);
    // A name the command cannot carry: the sentence that says so, never a command.
    let out = lock_without_record_text(
        &lone_ctx("--all", Some("us-east-1")),
        LoneLock::Malformed("x"),
        NOW,
    );
    assert!(
        out.stdout.contains("No recovery command can be shown"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("force-unlock"), "{}", out.stdout);
}

#[test]
fn state_show_lock_without_record_json_has_a_null_state() {
    use cdkd_core::view::state::show::{lock_without_record_json, LoneLock};
    let l = export_lock(NOW + 1_000);
    let v: Value =
        serde_json::from_str(&lock_without_record_json(LoneLock::Held(&l)).stdout).unwrap();
    assert_eq!(v["state"], Value::Null);
    assert_eq!(
        v["lock"]["owner"],
        "cdkd-flow:export-Orders-20260101T000000"
    );
    let v: Value =
        serde_json::from_str(&lock_without_record_json(LoneLock::Malformed("why")).stdout).unwrap();
    assert_eq!(v["lock"], Value::Null);
    assert_eq!(v["lockError"], "why");
}
