//! Choice: every comparison operator of the JSONPath query language, the *Path variants,
//! And / Or / Not, the Is* tests, Default and States.NoChoiceMatched.

use crate::common;
use common::*;
use serde_json::{json, Value};

/// Runs one rule against `input`: "yes" when it matches, "no" (the Default) otherwise.
async fn decide(rule: Value, input: Value) -> &'static str {
    let mut r = rule;
    r["Next"] = json!("Yes");
    let def = json!({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "Choices": [r], "Default": "No"},
        "Yes": {"Type": "Pass", "Result": "yes", "End": true},
        "No": {"Type": "Pass", "Result": "no", "End": true}
    }});
    match ok(def, input).await.as_str() {
        Some("yes") => "yes",
        _ => "no",
    }
}

#[tokio::test]
async fn choice_string_comparisons() {
    let i = json!({"s": "b", "t": "b", "u": "c"});
    assert_eq!(
        decide(json!({"Variable": "$.s", "StringEquals": "b"}), i.clone()).await,
        "yes"
    );
    assert_eq!(
        decide(json!({"Variable": "$.s", "StringEquals": "x"}), i.clone()).await,
        "no"
    );
    assert_eq!(
        decide(json!({"Variable": "$.s", "StringLessThan": "c"}), i.clone()).await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.s", "StringGreaterThan": "a"}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.s", "StringLessThanEquals": "b"}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.s", "StringGreaterThanEquals": "c"}),
            i.clone()
        )
        .await,
        "no"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.s", "StringEqualsPath": "$.t"}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.s", "StringLessThanPath": "$.u"}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.u", "StringGreaterThanPath": "$.s"}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.s", "StringLessThanEqualsPath": "$.t"}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.s", "StringGreaterThanEqualsPath": "$.u"}),
            i.clone()
        )
        .await,
        "no"
    );
}

#[tokio::test]
async fn choice_string_comparison_on_a_number_is_false() {
    assert_eq!(
        decide(
            json!({"Variable": "$.n", "StringEquals": "1"}),
            json!({"n": 1})
        )
        .await,
        "no"
    );
}

#[tokio::test]
async fn choice_string_matches_wildcard() {
    let i = json!({"f": "log-2024.txt"});
    assert_eq!(
        decide(
            json!({"Variable": "$.f", "StringMatches": "log-*.txt"}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(json!({"Variable": "$.f", "StringMatches": "*.csv"}), i).await,
        "no"
    );
}

#[tokio::test]
async fn choice_numeric_comparisons() {
    let i = json!({"n": 5, "m": 5.0, "k": 7});
    assert_eq!(
        decide(json!({"Variable": "$.n", "NumericEquals": 5}), i.clone()).await,
        "yes"
    );
    assert_eq!(
        decide(json!({"Variable": "$.m", "NumericEquals": 5}), i.clone()).await,
        "yes"
    );
    assert_eq!(
        decide(json!({"Variable": "$.n", "NumericLessThan": 5}), i.clone()).await,
        "no"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.n", "NumericGreaterThan": 4.5}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.n", "NumericLessThanEquals": 5}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.n", "NumericGreaterThanEquals": 6}),
            i.clone()
        )
        .await,
        "no"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.n", "NumericEqualsPath": "$.m"}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.n", "NumericLessThanPath": "$.k"}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.k", "NumericGreaterThanPath": "$.n"}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.n", "NumericLessThanEqualsPath": "$.m"}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.n", "NumericGreaterThanEqualsPath": "$.k"}),
            i.clone()
        )
        .await,
        "no"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.s", "NumericEquals": 1}),
            json!({"s": "1"})
        )
        .await,
        "no"
    );
}

#[tokio::test]
async fn choice_boolean_comparisons() {
    let i = json!({"b": true, "c": true, "s": "true"});
    assert_eq!(
        decide(json!({"Variable": "$.b", "BooleanEquals": true}), i.clone()).await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.b", "BooleanEquals": false}),
            i.clone()
        )
        .await,
        "no"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.b", "BooleanEqualsPath": "$.c"}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(json!({"Variable": "$.s", "BooleanEquals": true}), i).await,
        "no"
    );
}

#[tokio::test]
async fn choice_timestamp_comparisons() {
    let i = json!({"t": "2016-08-18T17:33:00Z", "u": "2016-08-18T19:33:00+02:00", "later": "2017-01-01T00:00:00Z"});
    assert_eq!(
        decide(
            json!({"Variable": "$.t", "TimestampEquals": "2016-08-18T17:33:00Z"}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.t", "TimestampEqualsPath": "$.u"}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.t", "TimestampLessThan": "2016-08-19T00:00:00Z"}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.t", "TimestampGreaterThan": "2016-08-19T00:00:00Z"}),
            i.clone()
        )
        .await,
        "no"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.t", "TimestampLessThanEquals": "2016-08-18T17:33:00Z"}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.t", "TimestampGreaterThanEquals": "2016-08-18T17:33:01Z"}),
            i.clone()
        )
        .await,
        "no"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.t", "TimestampLessThanPath": "$.later"}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.later", "TimestampGreaterThanPath": "$.t"}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.t", "TimestampLessThanEqualsPath": "$.u"}),
            i.clone()
        )
        .await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.t", "TimestampGreaterThanEqualsPath": "$.later"}),
            i
        )
        .await,
        "no"
    );
}

#[tokio::test]
async fn choice_and_or_not_spec_example() {
    // ASL spec: And of NumericGreaterThanEquals 20 and NumericLessThan 30.
    let rule = json!({"And": [
        {"Variable": "$.value", "NumericGreaterThanEquals": 20},
        {"Variable": "$.value", "NumericLessThan": 30}
    ]});
    assert_eq!(decide(rule.clone(), json!({"value": 25})).await, "yes");
    assert_eq!(decide(rule, json!({"value": 30})).await, "no");
    let or = json!({"Or": [{"Variable": "$.a", "BooleanEquals": true}, {"Variable": "$.b", "BooleanEquals": true}]});
    assert_eq!(
        decide(or.clone(), json!({"a": false, "b": true})).await,
        "yes"
    );
    assert_eq!(decide(or, json!({"a": false, "b": false})).await, "no");
    let not = json!({"Not": {"Variable": "$.type", "StringEquals": "Private"}});
    assert_eq!(decide(not.clone(), json!({"type": "Public"})).await, "yes");
    assert_eq!(decide(not, json!({"type": "Private"})).await, "no");
}

#[tokio::test]
async fn choice_is_type_tests() {
    let i = json!({"n": null, "num": 1.5, "s": "x", "b": false, "ts": "2024-01-01T00:00:00Z"});
    assert_eq!(
        decide(json!({"Variable": "$.n", "IsNull": true}), i.clone()).await,
        "yes"
    );
    assert_eq!(
        decide(json!({"Variable": "$.s", "IsNull": true}), i.clone()).await,
        "no"
    );
    assert_eq!(
        decide(json!({"Variable": "$.num", "IsNumeric": true}), i.clone()).await,
        "yes"
    );
    assert_eq!(
        decide(json!({"Variable": "$.s", "IsNumeric": false}), i.clone()).await,
        "yes"
    );
    assert_eq!(
        decide(json!({"Variable": "$.s", "IsString": true}), i.clone()).await,
        "yes"
    );
    assert_eq!(
        decide(json!({"Variable": "$.b", "IsBoolean": true}), i.clone()).await,
        "yes"
    );
    assert_eq!(
        decide(json!({"Variable": "$.ts", "IsTimestamp": true}), i.clone()).await,
        "yes"
    );
    assert_eq!(
        decide(json!({"Variable": "$.s", "IsTimestamp": true}), i.clone()).await,
        "no"
    );
    assert_eq!(
        decide(json!({"Variable": "$.s", "IsPresent": true}), i.clone()).await,
        "yes"
    );
    assert_eq!(
        decide(
            json!({"Variable": "$.missing", "IsPresent": true}),
            i.clone()
        )
        .await,
        "no"
    );
    assert_eq!(
        decide(json!({"Variable": "$.missing", "IsPresent": false}), i).await,
        "yes"
    );
}

#[tokio::test]
async fn choice_variable_may_read_the_context_object() {
    assert_eq!(
        decide(
            json!({"Variable": "$$.State.Name", "StringEquals": "C"}),
            json!({})
        )
        .await,
        "yes"
    );
}

#[tokio::test]
async fn choice_first_matching_rule_wins() {
    let def = json!({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "Choices": [
            {"Variable": "$.n", "NumericGreaterThan": 1, "Next": "A"},
            {"Variable": "$.n", "NumericGreaterThan": 0, "Next": "B"}
        ]},
        "A": {"Type": "Pass", "Result": "A", "End": true},
        "B": {"Type": "Pass", "Result": "B", "End": true}
    }});
    assert_eq!(ok(def, json!({"n": 5})).await, json!("A"));
}

#[tokio::test]
async fn choice_no_match_and_no_default_fails_with_no_choice_matched() {
    let def = json!({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "Choices": [{"Variable": "$.n", "NumericEquals": 1, "Next": "A"}]},
        "A": {"Type": "Succeed"}
    }});
    assert_eq!(
        failed(def, json!({"n": 2})).await.error,
        "States.NoChoiceMatched"
    );
}

#[tokio::test]
async fn choice_missing_variable_fails_with_states_runtime() {
    let def = json!({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "Choices": [{"Variable": "$.n", "NumericEquals": 1, "Next": "A"}], "Default": "A"},
        "A": {"Type": "Succeed"}
    }});
    assert_eq!(failed(def, json!({})).await.error, "States.Runtime");
}

#[tokio::test]
async fn choice_input_and_output_path_apply() {
    let def = json!({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "InputPath": "$.in", "OutputPath": "$.v", "Choices": [{"Variable": "$.v", "NumericEquals": 1, "Next": "A"}]},
        "A": {"Type": "Succeed"}
    }});
    assert_eq!(ok(def, json!({"in": {"v": 1}})).await, json!(1));
}
