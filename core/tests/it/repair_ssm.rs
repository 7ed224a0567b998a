//! Public SSM parameters embedded in a longer value (docs/repairs.md, "Public SSM parameters inside a longer value").

use cdkd_core::repair::redact::redact_by_position;
use cdkd_core::repair::ssm::{
    arn_region, may_read_other_region, mixed_leaf, ssm_needs, ssm_needs_for_record, ParamType,
    SsmAnswer, SsmAnswers, SsmScope,
};
use serde_json::{json, Map, Value};

const URL: &str = "https://{{resolve:ssm:/app/host}}/health";

fn rec(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn answered(name: &str, answer: SsmAnswer) -> SsmAnswers {
    let mut a = SsmAnswers::new(SsmScope::default());
    a.insert(name, answer);
    a
}

fn param(t: ParamType, value: &str) -> SsmAnswer {
    SsmAnswer::Parameter {
        param_type: t,
        value: value.into(),
    }
}

#[test]
fn ssm_rule_statement_55_string_parameter_readback_becomes_the_baseline() {
    let a = answered("/app/host", param(ParamType::String, "api.example.com"));
    let out = redact_by_position(
        &json!({"Url": "https://api.example.com/health"}),
        &json!({"Url": URL}),
        &a,
    );
    assert_eq!(out, json!({"Url": "https://api.example.com/health"}));
}

#[test]
fn ssm_rule_string_list_parameter_is_public_too() {
    let a = answered("/app/hosts", param(ParamType::StringList, "a,b"));
    let text = "hosts={{resolve:ssm:/app/hosts}}";
    assert_eq!(
        mixed_leaf(&json!("hosts=a,b"), text, &a),
        json!("hosts=a,b")
    );
}

#[test]
fn ssm_rule_statement_55_secure_string_keeps_the_reference_text() {
    let a = answered(
        "/app/host",
        param(ParamType::SecureString, "api.example.com"),
    );
    assert_eq!(
        mixed_leaf(&json!("https://api.example.com/health"), URL, &a),
        json!(URL)
    );
}

#[test]
fn ssm_rule_statement_55_get_parameter_denied_keeps_the_reference_text() {
    let a = answered("/app/host", SsmAnswer::Failed);
    assert_eq!(
        mixed_leaf(&json!("https://api.example.com/health"), URL, &a),
        json!(URL)
    );
}

#[test]
fn ssm_rule_unknown_parameter_type_keeps_the_reference_text() {
    assert_eq!(ParamType::from_aws("Fancy"), ParamType::Other);
    let a = answered(
        "/app/host",
        param(ParamType::from_aws("Fancy"), "api.example.com"),
    );
    assert_eq!(
        mixed_leaf(&json!("https://api.example.com/health"), URL, &a),
        json!(URL)
    );
}

#[test]
fn ssm_rule_readback_must_equal_the_text_with_the_current_value_in_place() {
    let a = answered("/app/host", param(ParamType::String, "api.example.com"));
    for rb in [
        json!("https://other.example.com/health"),
        json!("https://api.example.com/health/"),
        json!(5),
    ] {
        assert_eq!(mixed_leaf(&rb, URL, &a), json!(URL), "{rb}");
    }
}

#[test]
fn ssm_rule_no_answer_keeps_the_reference_text() {
    assert_eq!(
        mixed_leaf(
            &json!("https://api.example.com/health"),
            URL,
            &SsmAnswers::none()
        ),
        json!(URL)
    );
}

#[test]
fn ssm_rule_a_whole_value_reference_needs_no_call() {
    let src = json!({"Host": "{{resolve:ssm:/app/host}}", "Url": URL});
    assert_eq!(
        ssm_needs(&src, SsmScope::default()),
        vec!["/app/host".to_string()]
    );
    assert!(ssm_needs(
        &json!({"Host": "{{resolve:ssm:/app/host}}"}),
        SsmScope::default()
    )
    .is_empty());
}

#[test]
fn ssm_rule_one_call_per_reference_and_only_for_public_ssm_leaves() {
    let src = json!({
        "A": URL,
        "B": ["x-{{resolve:ssm:/app/host}}", "{{resolve:ssm:/v:3}}/y"],
        "C": "u:{{resolve:ssm:/u}}:{{resolve:secretsmanager:pw}}",
        "D": "s-{{resolve:ssm-secure:/s}}"
    });
    assert_eq!(
        ssm_needs(&src, SsmScope::default()),
        vec!["/app/host".to_string(), "/v:3".to_string()]
    );
}

#[test]
fn ssm_rule_a_leaf_mixing_a_secret_reference_keeps_its_text() {
    let text = "u:{{resolve:ssm:/u}}:{{resolve:secretsmanager:pw}}";
    let a = answered("/u", param(ParamType::String, "bob"));
    assert_eq!(mixed_leaf(&json!("u:bob:hunter2"), text, &a), json!(text));
}

#[test]
fn ssm_rule_arn_carrying_a_region_needs_no_call_and_keeps_its_text() {
    let name = "arn:aws:ssm:eu-west-1:123456789012:parameter/app/host";
    assert_eq!(arn_region(name), Some("eu-west-1"));
    assert_eq!(arn_region("arn:aws:ssm::123:parameter/x"), None);
    let text = format!("https://{{{{resolve:ssm:{name}}}}}/health");
    assert!(ssm_needs(&json!(text), SsmScope::default()).is_empty());
    let a = answered(name, param(ParamType::String, "api.example.com"));
    assert_eq!(
        mixed_leaf(&json!("https://api.example.com/health"), &text, &a),
        json!(text)
    );
}

#[test]
fn ssm_rule_cross_region_imports_or_output_reads_mean_no_call() {
    let same = rec(
        json!({"imports": [{"sourceStack": "P", "sourceRegion": "us-east-1", "exportName": "E"}]}),
    );
    assert!(!may_read_other_region(&same, "us-east-1", None));
    let imports = rec(
        json!({"imports": [{"sourceStack": "P", "sourceRegion": "eu-west-1", "exportName": "E"}]}),
    );
    assert!(may_read_other_region(&imports, "us-east-1", None));
    let reads = rec(
        json!({"outputReads": [{"sourceStack": "P", "sourceRegion": "eu-west-1", "outputName": "O"}]}),
    );
    assert!(may_read_other_region(&reads, "us-east-1", None));
    let scope = SsmScope::for_record(&reads, "us-east-1", None);
    assert!(ssm_needs(&json!(URL), scope).is_empty());
    let mut a = SsmAnswers::new(scope);
    a.insert("/app/host", param(ParamType::String, "api.example.com"));
    assert_eq!(
        mixed_leaf(&json!("https://api.example.com/health"), URL, &a),
        json!(URL)
    );
}

#[test]
fn ssm_rule_unreadable_cross_stack_entries_count_as_cross_region() {
    for r in [
        json!({"imports": "x"}),
        json!({"imports": [{"sourceStack": "P"}]}),
        json!({"outputReads": [5]}),
    ] {
        assert!(
            may_read_other_region(&rec(r.clone()), "us-east-1", None),
            "{r}"
        );
    }
}

#[test]
fn ssm_rule_nested_child_needs_ancestors_proven_same_region() {
    let child = rec(json!({"parentStack": "Root", "parentRegion": "us-east-1"}));
    assert!(may_read_other_region(&child, "us-east-1", None));
    assert!(may_read_other_region(&child, "us-east-1", Some(&[])));
    let root = rec(json!({"region": "us-east-1"}));
    assert!(!may_read_other_region(&child, "us-east-1", Some(&[&root])));
    let crossing = rec(
        json!({"region": "us-east-1", "outputReads": [{"sourceStack": "X", "sourceRegion": "ap-south-1", "outputName": "O"}]}),
    );
    assert!(may_read_other_region(
        &child,
        "us-east-1",
        Some(&[&root, &crossing])
    ));
}

#[test]
fn ssm_needs_for_record_skips_refused_entries_and_deduplicates() {
    let record = rec(json!({"resources": {
        "A": {"resourceType": "T", "properties": {"U": URL}},
        "B": {"resourceType": "T", "properties": {"U": URL, "V": "x{{resolve:ssm:/b}}"}},
        "C": {"resourceType": "T", "observedBaselineRefused": true, "properties": {"U": "y{{resolve:ssm:/c}}"}}
    }}));
    assert_eq!(
        ssm_needs_for_record(&record, SsmScope::default()),
        vec!["/app/host".to_string(), "/b".to_string()]
    );
}
