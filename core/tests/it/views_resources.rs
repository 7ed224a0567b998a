//! `state resources` (docs/state-views.md, "state resources <stack>", testable statements 43-48).

use crate::views_common;

use cdkd_core::view::state::resources::{render_resources, ResourcesMode};
use cdkd_core::view::state::show::show_text;
use views_common::{node, rec, NOW};

fn run(record: &str, mode: ResourcesMode) -> cdkd_core::view::Rendered {
    render_resources("App", "us-east-1", &rec(record), mode)
}

#[test]
fn resources_43_plain_listing_orders_by_locale_compare() {
    let out = run(
        r#"{"resources":{"b":{"resourceType":"T","physicalId":"p"},"A":{"resourceType":"T","physicalId":"p"},"a":{"resourceType":"T","physicalId":"p"},"B":{"resourceType":"T","physicalId":"p"}}}"#,
        ResourcesMode::Plain,
    );
    let ids: Vec<&str> = out.stdout.lines().map(|l| &l[..1]).collect();
    assert_eq!(ids, ["a", "A", "b", "B"]);
}

#[test]
fn resources_44_plain_columns_pad_to_rendered_widths() {
    let out = run(
        r#"{"resources":{"R1":{"resourceType":"AWS::S3::Bucket","physicalId":"bkt"},"LongId":{"resourceType":"AWS::SQS::Queue","physicalId":"url"}}}"#,
        ResourcesMode::Plain,
    );
    assert_eq!(
        out.stdout,
        "LongId  AWS::SQS::Queue  url\nR1      AWS::S3::Bucket  bkt\n"
    );
}

#[test]
fn resources_plain_widths_are_measured_after_stripping() {
    let out = run(
        "{\"resources\":{\"A\\u001b\\u001b\\u001b\":{\"resourceType\":\"T\",\"physicalId\":\"p\"},\"BB\":{\"resourceType\":\"T\",\"physicalId\":\"q\"}}}",
        ResourcesMode::Plain,
    );
    assert_eq!(out.stdout, "A   T  p\nBB  T  q\n");
}

#[test]
fn resources_45_null_entry_json_projection_and_plain_row() {
    let json = run(r#"{"resources":{"R":null}}"#, ResourcesMode::Json);
    assert_eq!(
        json.stdout,
        "[\n  {\n    \"logicalId\": \"R\",\n    \"dependencies\": [],\n    \"attributes\": {}\n  }\n]\n"
    );
    let plain = run(r#"{"resources":{"R":null}}"#, ResourcesMode::Plain);
    assert_eq!(plain.stdout, "R  undefined  undefined\n");
}

#[test]
fn resources_46_null_dependencies_read_none_here_but_null_in_show() {
    let record = r#"{"resources":{"R":{"resourceType":"T","dependencies":null}}}"#;
    assert!(run(record, ResourcesMode::Long)
        .stdout
        .contains("\n  Dependencies: (none)\n"));
    let show = show_text(&node("App", "us-east-1", rec(record), None), NOW).stdout;
    assert!(show.contains("\n  Dependencies: null\n"));
}

#[test]
fn resources_47_string_attributes_warn_only_in_long_and_json() {
    let record = r#"{"resources":{"R":{"resourceType":"T","attributes":"x"},"S":{"resourceType":"T","attributes":"y"}}}"#;
    assert!(run(record, ResourcesMode::Plain).warnings.is_empty());
    let long = run(record, ResourcesMode::Long);
    assert_eq!(long.warnings.len(), 1);
    assert!(long.warnings[0].contains("has a non-object 'attributes' —"));
    assert!(!long.warnings[0].contains("'properties'"));
    assert_eq!(long.stdout.matches("  Attributes: (none)").count(), 2);
    let json = run(record, ResourcesMode::Json);
    assert_eq!(json.warnings.len(), 1);
    assert!(json.stdout.contains("\"attributes\": {}"));
}

#[test]
fn resources_never_mention_properties_outputs_or_skipped_outputs() {
    let record = r#"{"outputs":"o","skippedOutputs":[1],"resources":{"R":{"resourceType":"T","properties":"p"}}}"#;
    for mode in [
        ResourcesMode::Plain,
        ResourcesMode::Long,
        ResourcesMode::Json,
    ] {
        assert!(run(record, mode).warnings.is_empty(), "{mode:?}");
    }
}

#[test]
fn resources_48_long_never_prints_properties_or_provisioned_by() {
    let out = run(
        r#"{"resources":{"R":{"resourceType":"T","physicalId":"p","provisionedBy":"sdk","properties":{"A":1},"attributes":{"Arn":"arn:x","10":2},"dependencies":["Q"]}}}"#,
        ResourcesMode::Long,
    );
    assert!(!out.stdout.contains("Properties"));
    assert!(!out.stdout.contains("ProvisionedBy"));
    assert_eq!(
        out.stdout,
        "R\n  Type: T\n  PhysicalID: p\n  Dependencies: Q\n  Attributes:\n    10: 2\n    Arn: arn:x\n"
    );
}

#[test]
fn resources_unreadable_bag_warns_in_every_mode_and_renders_nothing() {
    for mode in [
        ResourcesMode::Plain,
        ResourcesMode::Long,
        ResourcesMode::Json,
    ] {
        let r = run(r#"{"resources":"abcdef"}"#, mode);
        assert_eq!(r.warnings.len(), 1, "{mode:?}");
        assert!(r.warnings[0].contains("has no readable 'resources' map"));
        let expected = if mode == ResourcesMode::Json {
            "[]\n"
        } else {
            ""
        };
        assert_eq!(r.stdout, expected);
    }
}

#[test]
fn resources_long_blocks_separated_by_one_empty_line() {
    let out = run(
        r#"{"resources":{"B":{"resourceType":"T"},"A":{"resourceType":"T","physicalId":{"x":[1]}}}}"#,
        ResourcesMode::Long,
    );
    insta::assert_snapshot!(out.stdout);
}
