//! Map (inline) and Parallel: ordering, context, concurrency, failure propagation.

use crate::common;
use std::time::Instant;

use cdkd_engine::{EventKind, Outcome};
use common::*;
use serde_json::json;

fn pass_processor() -> serde_json::Value {
    json!({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}})
}

#[tokio::test]
async fn map_items_path_runs_the_processor_per_item_in_order() {
    let def = single(
        json!({"Type": "Map", "ItemsPath": "$.items", "ItemProcessor": {"StartAt": "P", "States": {
        "P": {"Type": "Pass", "Parameters": {"double.$": "States.MathAdd($.n, $.n)"}, "End": true}}}, "End": true}),
    );
    let out = ok(def, json!({"items": [{"n": 1}, {"n": 2}, {"n": 3}]})).await;
    assert_eq!(out, json!([{"double": 2}, {"double": 4}, {"double": 6}]));
}

#[tokio::test]
async fn map_without_items_path_iterates_the_effective_input() {
    let def = single(
        json!({"Type": "Map", "InputPath": "$.l", "ItemProcessor": pass_processor(), "End": true}),
    );
    assert_eq!(ok(def, json!({"l": [1, 2]})).await, json!([1, 2]));
}

#[tokio::test]
async fn map_item_selector_sees_map_item_value_and_index_and_the_map_input() {
    let def = single(json!({"Type": "Map", "ItemsPath": "$.items",
        "ItemSelector": {"value.$": "$$.Map.Item.Value", "index.$": "$$.Map.Item.Index", "shared.$": "$.shared"},
        "ItemProcessor": pass_processor(), "End": true}));
    let out = ok(def, json!({"shared": "s", "items": ["a", "b"]})).await;
    assert_eq!(
        out,
        json!([{"value": "a", "index": 0, "shared": "s"}, {"value": "b", "index": 1, "shared": "s"}])
    );
}

#[tokio::test]
async fn map_legacy_iterator_and_parameters_work_like_item_processor_and_item_selector() {
    let def = single(json!({"Type": "Map", "ItemsPath": "$.items",
        "Parameters": {"v.$": "$$.Map.Item.Value"}, "Iterator": pass_processor(), "End": true}));
    assert_eq!(ok(def, json!({"items": [7]})).await, json!([{"v": 7}]));
}

#[tokio::test]
async fn map_result_selector_and_result_path_apply_to_the_results_array() {
    let def = single(
        json!({"Type": "Map", "ItemsPath": "$.items", "ItemProcessor": pass_processor(),
        "ResultSelector": {"count.$": "States.ArrayLength($)"}, "ResultPath": "$.summary", "End": true}),
    );
    assert_eq!(
        ok(def, json!({"items": [1, 2, 3]})).await,
        json!({"items": [1, 2, 3], "summary": {"count": 3}})
    );
}

#[tokio::test]
async fn map_items_not_an_array_fails_with_states_runtime() {
    let def = single(
        json!({"Type": "Map", "ItemsPath": "$.items", "ItemProcessor": pass_processor(), "End": true}),
    );
    assert_eq!(
        failed(def, json!({"items": {"a": 1}})).await.error,
        "States.Runtime"
    );
}

#[tokio::test]
async fn map_keeps_item_order_when_iterations_finish_out_of_order() {
    let def = single(
        json!({"Type": "Map", "ItemsPath": "$.items", "ItemProcessor": {"StartAt": "Sleep", "States": {
        "Sleep": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
              "Parameters": {"FunctionName": "cdkd-flow:test:sleep", "Payload.$": "$"}, "OutputPath": "$.Payload.id", "End": true}}},
        "End": true}),
    );
    let out = ok(def, json!({"items": [{"id": 0, "seconds": 0.3}, {"id": 1, "seconds": 0.0}, {"id": 2, "seconds": 0.1}]})).await;
    assert_eq!(out, json!([0, 1, 2]));
}

#[tokio::test]
async fn map_max_concurrency_limits_parallel_iterations() {
    let mk = |c: u64| {
        single(
            json!({"Type": "Map", "ItemsPath": "$.items", "MaxConcurrency": c, "ItemProcessor": {"StartAt": "Sleep", "States": {
        "Sleep": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
              "Parameters": {"FunctionName": "cdkd-flow:test:sleep", "Payload": {"seconds": 0.2}}, "End": true}}},
        "End": true}),
        )
    };
    let input = json!({"items": [1, 2, 3, 4]});
    let t = Instant::now();
    ok(mk(1), input.clone()).await;
    let serial = t.elapsed().as_secs_f64();
    let t = Instant::now();
    ok(mk(0), input).await;
    let unlimited = t.elapsed().as_secs_f64();
    assert!(serial >= 0.75, "MaxConcurrency 1 took {serial}s");
    assert!(unlimited < 0.6, "MaxConcurrency 0 took {unlimited}s");
}

#[tokio::test]
async fn map_max_concurrency_one_starts_iterations_in_item_order() {
    let (e, log) = recording(0.0);
    let def = single(
        json!({"Type": "Map", "MaxConcurrency": 1, "ItemProcessor": pass_processor(), "End": true}),
    );
    e.run(&machine(&def), json!([10, 11, 12])).await;
    let idx: Vec<u64> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|ev| ev.kind == EventKind::MapIterationStarted)
        .map(|ev| ev.details.as_ref().unwrap()["index"].as_u64().unwrap())
        .collect();
    assert_eq!(idx, vec![0, 1, 2]);
}

#[tokio::test]
async fn map_iteration_failure_fails_the_map_with_the_same_error() {
    let def = single(
        json!({"Type": "Map", "ItemProcessor": {"StartAt": "C", "States": {
        "C": {"Type": "Choice", "Choices": [{"Variable": "$", "NumericEquals": 2, "Next": "Boom"}], "Default": "Ok"},
        "Boom": {"Type": "Fail", "Error": "ItemFailed", "Cause": "item 2"},
        "Ok": {"Type": "Succeed"}}}, "End": true}),
    );
    let f = failed(def, json!([1, 2, 3])).await;
    assert_eq!(
        (f.error.as_str(), f.cause.as_str()),
        ("ItemFailed", "item 2")
    );
}

#[tokio::test]
async fn map_catch_takes_an_iteration_failure() {
    let def = json!({"StartAt": "M", "States": {
        "M": {"Type": "Map", "ItemsPath": "$.l", "ItemProcessor": {"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "E", "Cause": "c"}}},
              "Catch": [{"ErrorEquals": ["E"], "ResultPath": "$.err", "Next": "H"}], "End": true},
        "H": {"Type": "Pass", "OutputPath": "$.err", "End": true}}});
    assert_eq!(
        ok(def, json!({"l": [1]})).await,
        json!({"Error": "E", "Cause": "c"})
    );
}

#[tokio::test]
async fn map_empty_array_gives_an_empty_result() {
    let def = single(json!({"Type": "Map", "ItemProcessor": pass_processor(), "End": true}));
    assert_eq!(ok(def, json!([])).await, json!([]));
}

fn branch(result: serde_json::Value) -> serde_json::Value {
    json!({"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": result, "End": true}}})
}

#[tokio::test]
async fn parallel_outputs_an_array_in_branch_order() {
    let def = single(json!({"Type": "Parallel", "Branches": [
        {"StartAt": "W", "States": {"W": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {"FunctionName": "cdkd-flow:test:sleep", "Payload": {"seconds": 0.2, "b": "first"}},
            "OutputPath": "$.Payload.b", "End": true}}},
        branch(json!("second"))], "End": true}));
    assert_eq!(ok(def, json!({})).await, json!(["first", "second"]));
}

#[tokio::test]
async fn parallel_branches_get_the_same_input_and_parameters_apply() {
    let def = single(
        json!({"Type": "Parallel", "Parameters": {"v.$": "$.x"}, "Branches": [
        {"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}},
        {"StartAt": "B", "States": {"B": {"Type": "Pass", "InputPath": "$.v", "End": true}}}],
        "ResultSelector": {"first.$": "$[0]", "second.$": "$[1]"}, "ResultPath": "$.r", "End": true}),
    );
    assert_eq!(
        ok(def, json!({"x": 5})).await,
        json!({"x": 5, "r": {"first": {"v": 5}, "second": 5}})
    );
}

#[tokio::test]
async fn parallel_branch_failure_fails_the_state_with_the_branch_error() {
    let def = single(json!({"Type": "Parallel", "Branches": [
        branch(json!(1)),
        {"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "BranchBroke", "Cause": "b2"}}}], "End": true}));
    let f = failed(def, json!({})).await;
    assert_eq!((f.error.as_str(), f.cause.as_str()), ("BranchBroke", "b2"));
}

#[tokio::test]
async fn parallel_failure_stops_the_other_branches() {
    let def = single(json!({"Type": "Parallel", "Branches": [
        {"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 30, "End": true}}},
        {"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "Stop"}}}], "End": true}));
    let e = engine(1.0);
    let t = Instant::now();
    let o = e.run(&machine(&def), json!({})).await;
    assert!(matches!(o, Outcome::Failed(ref f) if f.error == "Stop"));
    assert!(t.elapsed().as_secs_f64() < 5.0);
}

#[tokio::test]
async fn parallel_retry_reruns_every_branch() {
    let def = single(
        json!({"Type": "Parallel", "Branches": [{"StartAt": "T", "States": {"T": {
        "Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
        "Parameters": {"FunctionName": "cdkd-flow:test:flaky", "Payload": {"key": "p", "failures": 1}},
        "OutputPath": "$.Payload.attempts", "End": true}}}],
        "Retry": [{"ErrorEquals": ["Flaky"]}], "End": true}),
    );
    assert_eq!(ok(def, json!({})).await, json!([2]));
}

#[tokio::test]
async fn parallel_catch_takes_a_branch_failure() {
    let def = json!({"StartAt": "P", "States": {
        "P": {"Type": "Parallel", "Branches": [{"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "E", "Cause": "c"}}}],
              "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.e", "Next": "H"}], "End": true},
        "H": {"Type": "Succeed"}}});
    assert_eq!(
        ok(def, json!({"a": 1})).await,
        json!({"a": 1, "e": {"Error": "E", "Cause": "c"}})
    );
}

#[tokio::test]
async fn nested_map_in_parallel() {
    let def = single(json!({"Type": "Parallel", "Branches": [
        {"StartAt": "M", "States": {"M": {"Type": "Map", "ItemsPath": "$.l", "ItemProcessor": {"StartAt": "Q", "States": {"Q": {"Type": "Pass", "End": true}}}, "End": true}}},
        branch(json!("x"))], "End": true}));
    assert_eq!(ok(def, json!({"l": [1, 2]})).await, json!([[1, 2], "x"]));
}
