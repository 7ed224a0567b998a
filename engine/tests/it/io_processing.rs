//! Input and output processing: InputPath, Parameters, ResultSelector, ResultPath,
//! OutputPath, with the examples of the Amazon States Language specification.

use crate::common;
use common::*;
use serde_json::json;

#[tokio::test]
async fn pass_result_path_merges_result_into_input_spec_example() {
    // ASL spec, "ResultPath": input {"master": {"detail": [1,2,3]}}, result "Hello"? The
    // spec example writes a result at $.master.detail.
    let out = ok(
        single(json!({"Type": "Pass", "Result": [4, 5, 6], "ResultPath": "$.master.detail", "End": true})),
        json!({"master": {"detail": [1, 2, 3]}}),
    )
    .await;
    assert_eq!(out, json!({"master": {"detail": [4, 5, 6]}}));
}

#[tokio::test]
async fn result_path_creates_missing_fields() {
    let out = ok(
        single(json!({"Type": "Pass", "Result": {"x": 1}, "ResultPath": "$.a.b", "End": true})),
        json!({"keep": true}),
    )
    .await;
    assert_eq!(out, json!({"keep": true, "a": {"b": {"x": 1}}}));
}

#[tokio::test]
async fn result_path_default_replaces_input_with_result() {
    let out = ok(
        single(json!({"Type": "Pass", "Result": {"r": 1}, "End": true})),
        json!({"in": 1}),
    )
    .await;
    assert_eq!(out, json!({"r": 1}));
}

#[tokio::test]
async fn result_path_null_discards_result_and_passes_input() {
    let out = ok(
        single(json!({"Type": "Pass", "Result": {"r": 1}, "ResultPath": null, "End": true})),
        json!({"in": 1}),
    )
    .await;
    assert_eq!(out, json!({"in": 1}));
}

#[tokio::test]
async fn result_path_into_a_non_object_fails_with_result_path_match_failure() {
    let f = failed(
        single(json!({"Type": "Pass", "Result": 1, "ResultPath": "$.a.b", "End": true})),
        json!({"a": "text"}),
    )
    .await;
    assert_eq!(f.error, "States.ResultPathMatchFailure");
}

#[tokio::test]
async fn result_path_combines_with_raw_input_not_input_path() {
    let out = ok(
        single(json!({"Type": "Pass", "InputPath": "$.a", "ResultPath": "$.copy", "End": true})),
        json!({"a": {"v": 1}, "b": 2}),
    )
    .await;
    assert_eq!(out, json!({"a": {"v": 1}, "b": 2, "copy": {"v": 1}}));
}

#[tokio::test]
async fn input_path_selects_effective_input() {
    let out = ok(
        single(json!({"Type": "Pass", "InputPath": "$.a", "End": true})),
        json!({"a": {"v": 1}}),
    )
    .await;
    assert_eq!(out, json!({"v": 1}));
}

#[tokio::test]
async fn input_path_null_gives_an_empty_object() {
    let out = ok(
        single(json!({"Type": "Pass", "InputPath": null, "End": true})),
        json!({"a": 1}),
    )
    .await;
    assert_eq!(out, json!({}));
}

#[tokio::test]
async fn input_path_missing_fails_with_states_runtime() {
    let f = failed(
        single(json!({"Type": "Pass", "InputPath": "$.nope", "End": true})),
        json!({}),
    )
    .await;
    assert_eq!(f.error, "States.Runtime");
    assert!(f.cause.contains("'S'"), "{}", f.cause);
}

#[tokio::test]
async fn output_path_null_gives_an_empty_object() {
    let out = ok(
        single(json!({"Type": "Pass", "OutputPath": null, "End": true})),
        json!({"a": 1}),
    )
    .await;
    assert_eq!(out, json!({}));
}

#[tokio::test]
async fn output_path_selects_part_of_the_output() {
    let out = ok(
        single(json!({"Type": "Pass", "Result": {"x": {"y": 3}}, "ResultPath": "$.r", "OutputPath": "$.r.x", "End": true})),
        json!({"a": 1}),
    )
    .await;
    assert_eq!(out, json!({"y": 3}));
}

#[tokio::test]
async fn parameters_dollar_keys_select_from_effective_input_spec_example() {
    // ASL spec, "Parameters": the "flagged" / "parts" example.
    let out = ok(
        single(json!({"Type": "Pass", "Parameters": {
            "flagged": true,
            "parts": {"first.$": "$.vals[0]", "last3.$": "$.vals[-3:]"}
        }, "End": true})),
        json!({"flagged": 7, "vals": [0, 10, 20, 30, 40, 50]}),
    )
    .await;
    assert_eq!(
        out,
        json!({"flagged": true, "parts": {"first": 0, "last3": [30, 40, 50]}})
    );
}

#[tokio::test]
async fn parameters_path_not_found_fails_with_states_runtime() {
    let f = failed(
        single(json!({"Type": "Pass", "Parameters": {"a.$": "$.nope"}, "End": true})),
        json!({}),
    )
    .await;
    assert_eq!(f.error, "States.Runtime");
    assert!(f.cause.contains("a.$"), "{}", f.cause);
}

#[tokio::test]
async fn parameters_intrinsic_failure_is_states_intrinsic_failure() {
    let f = failed(
        single(json!({"Type": "Pass", "Parameters": {"a.$": "States.ArrayGetItem($.l, 5)"}, "End": true})),
        json!({"l": [1]}),
    )
    .await;
    assert_eq!(f.error, "States.IntrinsicFailure");
}

#[tokio::test]
async fn result_selector_shapes_the_task_result_before_result_path() {
    let out = ok(
        single(json!({
            "Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {"FunctionName": "cdkd-flow:test:echo", "Payload": {"n.$": "$.n"}},
            "ResultSelector": {"doubled.$": "States.MathAdd($.Payload.n, $.Payload.n)", "code.$": "$.StatusCode"},
            "ResultPath": "$.result", "End": true
        })),
        json!({"n": 21}),
    )
    .await;
    assert_eq!(
        out,
        json!({"n": 21, "result": {"doubled": 42, "code": 200}})
    );
}

#[tokio::test]
async fn context_object_execution_and_state_fields() {
    let (e, _) = recording(0.0);
    let sm = machine(&json!({"StartAt": "First", "States": {"First": {"Type": "Pass", "Parameters": {
        "id.$": "$$.Execution.Id", "name.$": "$$.Execution.Name", "start.$": "$$.Execution.StartTime",
        "input.$": "$$.Execution.Input", "state.$": "$$.State.Name", "entered.$": "$$.State.EnteredTime",
        "sm.$": "$$.StateMachine.Name"
    }, "End": true}}}))
    .with_name("demo");
    let out = match e.run_named(&sm, json!({"k": "v"}), "exec-1").await {
        cdkd_engine::Outcome::Succeeded(v) => v,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        out["id"],
        json!("arn:aws:states:us-east-1:123456789012:execution:demo:exec-1")
    );
    assert_eq!(out["name"], json!("exec-1"));
    assert_eq!(out["input"], json!({"k": "v"}));
    assert_eq!(out["state"], json!("First"));
    assert_eq!(out["sm"], json!("demo"));
    for k in ["start", "entered"] {
        let s = out[k].as_str().unwrap();
        assert!(
            chrono::DateTime::parse_from_rfc3339(s).is_ok() && s.ends_with('Z'),
            "{s}"
        );
    }
}

#[tokio::test]
async fn context_object_task_token_is_available_in_task_parameters() {
    let out = ok(
        single(json!({"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {"FunctionName": "cdkd-flow:test:echo", "Payload": {"token.$": "$$.Task.Token"}},
            "OutputPath": "$.Payload", "End": true})),
        json!({}),
    )
    .await;
    assert!(out["token"].as_str().is_some_and(|t| !t.is_empty()));
}

// ---------------------------------------------------------------- payload quota

/// `{"s": "..."}` whose compact JSON is exactly `size` UTF-8 bytes of `c` (1 or 2 bytes).
fn padded(size: usize, c: &str) -> serde_json::Value {
    let room = size - 8;
    let n = room / c.len();
    json!({"s": format!("{}{}", c.repeat(n), "x".repeat(room - n * c.len()))})
}

#[tokio::test]
async fn payload_quota_a_state_output_of_262144_utf8_bytes_passes_one_more_fails() {
    let max = cdkd_engine::MAX_PAYLOAD_BYTES;
    assert_eq!(max, 262_144);
    let pass = single(json!({"Type": "Pass", "End": true}));
    for c in ["x", "é"] {
        let input = padded(max, c);
        assert_eq!(serde_json::to_string(&input).unwrap().len(), max);
        assert_eq!(ok(pass.clone(), input.clone()).await, input);
    }
    // A Parameters field of 8 bytes (`,"t":"x"`) on an input 7 bytes short of the limit.
    let grow = single(json!({"Type": "Pass", "Parameters": {"s.$": "$.s", "t": "x"}, "End": true}));
    let f = failed(grow, padded(max - 7, "é")).await;
    assert_eq!(f.error, "States.DataLimitExceeded");
    assert_eq!(
        f.cause,
        "The state/task 'S' returned a result with a size exceeding the maximum number of bytes service limit."
    );
}

#[tokio::test]
async fn payload_quota_a_state_output_over_it_fails_the_execution_whatever_the_catch() {
    let branch = |n: &str| json!({"StartAt": n, "States": {n: {"Type": "Pass", "End": true}}});
    for caught in ["States.ALL", "States.DataLimitExceeded"] {
        let def = json!({"StartAt": "Both", "States": {
            "Both": {"Type": "Parallel", "Branches": [branch("B1"), branch("B2")],
                     "Catch": [{"ErrorEquals": [caught], "Next": "Caught"}], "End": true},
            "Caught": {"Type": "Pass", "End": true}}});
        let f = failed(def, padded(cdkd_engine::MAX_PAYLOAD_BYTES / 2 + 100, "x")).await;
        assert_eq!(f.error, "States.DataLimitExceeded", "{caught}");
        assert!(f.cause.contains("'Both'"), "{}", f.cause);
    }
}
