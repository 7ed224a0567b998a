//! Redaction by position (docs/repairs.md, "Redaction by position"): refresh-observed's readback against the
//! record's own `properties`.

use cdkd_core::repair::redact::{corroborates, redact_by_position};
use cdkd_core::repair::ssm::SsmAnswers;
use cdkd_core::repair::MASK;
use serde_json::{json, Value};

const SM: &str = "{{resolve:secretsmanager:db:SecretString:pw}}";

fn redact(readback: Value, source: Value) -> Value {
    redact_by_position(&readback, &source, &SsmAnswers::none())
}

#[test]
fn redact_rule_6_4_statement_54_secretsmanager_expression_written_over_the_echo() {
    let out = redact(json!({"Password": "hunter2"}), json!({"Password": SM}));
    assert_eq!(out, json!({"Password": SM}));
}

#[test]
fn redact_rule_6_4_ssm_secure_and_whole_ssm_expressions_written_over_the_echo() {
    let out = redact(
        json!({"A": "s3cret", "B": "plain-but-whole", "C": 42}),
        json!({"A": "{{resolve:ssm-secure:/db/pw}}", "B": "{{resolve:ssm:/app/host}}", "C": "{{resolve:secretsmanager:x}}"}),
    );
    assert_eq!(
        out,
        json!({"A": "{{resolve:ssm-secure:/db/pw}}", "B": "{{resolve:ssm:/app/host}}", "C": "{{resolve:secretsmanager:x}}"})
    );
}

#[test]
fn redact_rule_6_4_whole_expression_wins_whatever_shape_aws_echoed() {
    let out = redact(json!({"P": {"value": "hunter2"}}), json!({"P": SM}));
    assert_eq!(out, json!({"P": SM}));
}

#[test]
fn redact_rule_6_4_reference_free_readback_stored_unchanged() {
    let rb = json!({"BucketName": "b", "Tags": [{"Key": "k", "Value": "v"}], "N": 3, "Extra": {"x": [1, 2]}});
    let src = json!({"BucketName": "b", "Tags": [{"Key": "other", "Value": "w"}]});
    assert_eq!(redact(rb.clone(), src), rb);
}

#[test]
fn redact_rule_6_4_readback_keys_the_record_lacks_kept_as_read_proto_included() {
    let rb = json!({"Password": "hunter2", "Arn": "arn:x", "__proto__": {"polluted": true}});
    let out = redact(rb, json!({"Password": SM}));
    assert_eq!(
        out,
        json!({"Password": SM, "Arn": "arn:x", "__proto__": {"polluted": true}})
    );
}

#[test]
fn redact_rule_6_4_record_keys_aws_did_not_echo_stay_absent() {
    let out = redact(json!({"Other": 1}), json!({"Password": SM, "Other": 1}));
    assert_eq!(out, json!({"Other": 1}));
}

#[test]
fn redact_rule_6_4_nested_maps_walked_by_key() {
    let src = json!({"Environment": {"Variables": {"DB_PW": SM, "MODE": "prod"}}});
    let rb =
        json!({"Environment": {"Variables": {"MODE": "prod", "DB_PW": "hunter2", "NEW": "x"}}});
    assert_eq!(
        redact(rb, src),
        json!({"Environment": {"Variables": {"MODE": "prod", "DB_PW": SM, "NEW": "x"}}})
    );
}

#[test]
fn redact_rule_6_4_list_paired_by_name_key_in_any_order() {
    let src = json!({"Env": [{"Name": "A", "Value": "1"}, {"Name": "PW", "Value": SM}]});
    let rb = json!({"Env": [{"Name": "PW", "Value": "hunter2"}, {"Name": "A", "Value": "1"}]});
    assert_eq!(
        redact(rb, src),
        json!({"Env": [{"Name": "PW", "Value": SM}, {"Name": "A", "Value": "1"}]})
    );
}

#[test]
fn redact_rule_6_4_list_paired_by_key_key_tags() {
    let src = json!({"Tags": [{"Key": "token", "Value": SM}, {"Key": "env", "Value": "prod"}]});
    let rb = json!({"Tags": [{"Key": "env", "Value": "prod"}, {"Key": "aws:cfn", "Value": "x"}, {"Key": "token", "Value": "hunter2"}]});
    assert_eq!(
        redact(rb, src),
        json!({"Tags": [{"Key": "env", "Value": "prod"}, {"Key": "aws:cfn", "Value": "x"}, {"Key": "token", "Value": SM}]})
    );
}

#[test]
fn redact_rule_6_4_name_is_the_identity_before_key() {
    // Both elements share Key "k"; Name tells them apart.
    let src = json!([{"Name": "a", "Key": "k", "V": SM}, {"Name": "b", "Key": "k", "V": "x"}]);
    let rb =
        json!([{"Name": "b", "Key": "k", "V": "x"}, {"Name": "a", "Key": "k", "V": "hunter2"}]);
    assert_eq!(
        redact(rb, src),
        json!([{"Name": "b", "Key": "k", "V": "x"}, {"Name": "a", "Key": "k", "V": SM}])
    );
}

#[test]
fn redact_rule_6_4_rewritten_identity_field_cannot_be_lined_up_masked() {
    let src = json!({"Env": [{"Name": "db_pw", "Value": SM}, {"Name": "A", "Value": "1"}]});
    let rb = json!({"Env": [{"Name": "A", "Value": "1"}, {"Name": "DB_PW", "Value": "hunter2"}]});
    assert_eq!(
        redact(rb, src),
        json!({"Env": [{"Name": "A", "Value": "1"}, MASK]})
    );
}

#[test]
fn redact_rule_6_4_unpaired_elements_kept_when_every_secret_found_its_partner() {
    let src = json!([{"Name": "PW", "Value": SM}]);
    let rb = json!([{"Name": "PW", "Value": "hunter2"}, {"Name": "Added", "Value": "x"}]);
    assert_eq!(
        redact(rb, src),
        json!([{"Name": "PW", "Value": SM}, {"Name": "Added", "Value": "x"}])
    );
}

#[test]
fn redact_rule_6_4_unkeyed_list_walked_by_position_when_positions_corroborate() {
    let src = json!({"Args": ["--user", "admin", "--password", SM]});
    let rb = json!({"Args": ["--user", "admin", "--password", "hunter2"]});
    assert_eq!(
        redact(rb, src),
        json!({"Args": ["--user", "admin", "--password", SM]})
    );
}

#[test]
fn redact_rule_6_4_unkeyed_list_in_another_order_cannot_be_lined_up_masked() {
    let src = json!({"Args": ["--password", SM]});
    let rb = json!({"Args": ["hunter2", "--password"]});
    assert_eq!(redact(rb, src), json!({"Args": MASK}));
}

#[test]
fn redact_rule_6_4_unkeyed_list_of_another_length_masked() {
    let src = json!({"Args": [SM]});
    let rb = json!({"Args": ["hunter2", "extra"]});
    assert_eq!(redact(rb, src), json!({"Args": MASK}));
}

#[test]
fn redact_rule_6_4_unkeyed_object_elements_need_the_same_keys_to_corroborate() {
    let src = json!([{"User": "u", "Pw": SM}]);
    assert_eq!(
        redact(json!([{"User": "u", "Pw": "hunter2"}]), src.clone()),
        json!([{"User": "u", "Pw": SM}])
    );
    assert_eq!(
        redact(
            json!([{"User": "u", "Pw": "hunter2", "More": 1}]),
            src.clone()
        ),
        json!(MASK)
    );
    assert_eq!(
        redact(json!([{"User": "v", "Pw": "hunter2"}]), src),
        json!(MASK)
    );
}

#[test]
fn redact_rule_6_4_duplicate_identities_fall_back_to_corroborated_position() {
    let src = json!([{"Name": "x", "V": SM}, {"Name": "x", "V": "plain"}]);
    assert_eq!(
        redact(
            json!([{"Name": "x", "V": "hunter2"}, {"Name": "x", "V": "plain"}]),
            src.clone()
        ),
        json!([{"Name": "x", "V": SM}, {"Name": "x", "V": "plain"}])
    );
    assert_eq!(
        redact(
            json!([{"Name": "x", "V": "plain"}, {"Name": "x", "V": "hunter2"}]),
            src
        ),
        json!(MASK)
    );
}

#[test]
fn redact_rule_6_4_different_structure_from_aws_masked() {
    assert_eq!(
        redact(
            json!({"Conn": "user:hunter2"}),
            json!({"Conn": {"User": "u", "Pw": SM}})
        ),
        json!({"Conn": MASK})
    );
    assert_eq!(
        redact(json!({"L": {"0": "hunter2"}}), json!({"L": [SM]})),
        json!({"L": MASK})
    );
    assert_eq!(
        redact(json!({"Conn": null}), json!({"Conn": {"Pw": SM}})),
        json!({"Conn": MASK})
    );
}

#[test]
fn redact_rule_6_4_unresolved_fn_join_facing_a_string_masked() {
    let src = json!({"Url": {"Fn::Join": ["", ["postgres://u:", SM, "@h"]]}});
    let rb = json!({"Url": "postgres://u:hunter2@h"});
    assert_eq!(redact(rb, src), json!({"Url": MASK}));
}

#[test]
fn redact_rule_6_4_unresolved_fn_sub_facing_a_string_or_object_masked() {
    let src = json!({"Url": {"Fn::Sub": format!("postgres://u:{SM}@${{Host}}")}});
    assert_eq!(
        redact(json!({"Url": "postgres://u:hunter2@h"}), src.clone()),
        json!({"Url": MASK})
    );
    assert_eq!(
        redact(json!({"Url": {"Fn::Sub": "postgres://u:hunter2@h"}}), src),
        json!({"Url": MASK})
    );
}

#[test]
fn redact_rule_6_4_mixed_leaf_takes_the_record_text() {
    let text = format!("postgres://u:{SM}@h");
    let out = redact(
        json!({"Url": "postgres://u:hunter2@h"}),
        json!({"Url": text}),
    );
    assert_eq!(out, json!({"Url": text}));
}

#[test]
fn redact_rule_6_4_unterminated_expression_still_counts_as_a_reference() {
    let src = json!({"P": "x{{resolve:secretsmanager:db"});
    assert_eq!(redact(json!({"P": "hunter2"}), src.clone()), src);
}

#[test]
fn redact_rule_6_4_nested_lists_in_maps_in_lists() {
    let src = json!({"Containers": [
        {"Name": "app", "Secrets": [{"Name": "PW", "ValueFrom": SM}], "Args": ["a", SM]},
        {"Name": "side", "Env": [{"Name": "X", "Value": "1"}]}
    ]});
    let rb = json!({"Containers": [
        {"Name": "side", "Env": [{"Name": "X", "Value": "1"}, {"Name": "Y", "Value": "2"}]},
        {"Name": "app", "Secrets": [{"Name": "PW", "ValueFrom": "hunter2"}], "Args": ["hunter2", "a"], "Cpu": 256}
    ]});
    assert_eq!(
        redact(rb, src),
        json!({"Containers": [
            {"Name": "side", "Env": [{"Name": "X", "Value": "1"}, {"Name": "Y", "Value": "2"}]},
            {"Name": "app", "Secrets": [{"Name": "PW", "ValueFrom": SM}], "Args": MASK, "Cpu": 256}
        ]})
    );
}

#[test]
fn redact_keyed_list_whose_elements_aws_turned_into_strings_masks_each() {
    let src = json!([{"Name": "PW", "Value": SM}]);
    assert_eq!(redact(json!(["PW=hunter2"]), src), json!([MASK]));
}

#[test]
fn corroboration_definition_reference_free_equal_reference_scalar_same_keys() {
    assert!(corroborates(&json!("x"), &json!("x")));
    assert!(!corroborates(&json!("y"), &json!("x")));
    assert!(corroborates(&json!("hunter2"), &json!(SM)));
    assert!(!corroborates(&json!({"a": 1}), &json!(SM)));
    assert!(corroborates(&json!({"a": "p"}), &json!({"a": SM})));
    assert!(!corroborates(&json!({"b": "p"}), &json!({"a": SM})));
    assert!(corroborates(&json!(["p"]), &json!([SM])));
    assert!(!corroborates(&json!(["p", "q"]), &json!([SM])));
}
