//! `arn:aws:states:::states:startExecution.sync:2` (and `.sync`): child executions.

use crate::common;
use std::collections::HashMap;

use cdkd_engine::{EventKind, Outcome, StateMachine};
use common::*;
use serde_json::json;

fn parent(resource: &str) -> serde_json::Value {
    single(json!({"Type": "Task", "Resource": resource,
        "Parameters": {"StateMachineArn": "${ChildArn}", "Input": {"n.$": "$.n", "AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$": "$$.Execution.Id"}, "Name": "child-1"},
        "End": true}))
}

fn setup(
    child: serde_json::Value,
    resource: &str,
) -> (
    cdkd_engine::Engine,
    StateMachine,
    std::sync::Arc<std::sync::Mutex<Vec<cdkd_engine::Event>>>,
) {
    let (e, log) = recording(0.0);
    let arn = e.state_machine_arn("child");
    e.register(arn.clone(), machine(&child).with_name("child"));
    let subs = HashMap::from([("ChildArn".to_string(), arn)]);
    let p = StateMachine::from_value(parent(resource), &subs)
        .unwrap()
        .with_name("parent");
    (e, p, log)
}

#[tokio::test]
async fn start_execution_sync2_returns_the_child_output_as_json() {
    let child = single(
        json!({"Type": "Pass", "Parameters": {"double.$": "States.MathAdd($.n, $.n)"}, "End": true}),
    );
    let (e, p, log) = setup(child, "arn:aws:states:::states:startExecution.sync:2");
    let out = match e.run(&p, json!({"n": 4})).await {
        Outcome::Succeeded(v) => v,
        other => panic!("{other:?}"),
    };
    assert_eq!(out["Output"], json!({"double": 8}));
    assert_eq!(out["Status"], json!("SUCCEEDED"));
    assert_eq!(out["Name"], json!("child-1"));
    assert_eq!(
        out["ExecutionArn"],
        json!("arn:aws:states:us-east-1:123456789012:execution:child:child-1")
    );
    assert_eq!(
        out["StateMachineArn"],
        json!("arn:aws:states:us-east-1:123456789012:stateMachine:child")
    );
    assert_eq!(out["Input"]["n"], json!(4));
    assert!(out["StartDate"].is_i64() && out["StopDate"].is_i64());
    // The child's events reach the observer under the child's execution name.
    assert!(log
        .lock()
        .unwrap()
        .iter()
        .any(|ev| ev.execution == "child-1" && ev.kind == EventKind::ExecutionSucceeded));
}

#[tokio::test]
async fn start_execution_sync_v1_returns_output_as_a_json_string() {
    let child = single(json!({"Type": "Pass", "Result": {"a": 1}, "End": true}));
    let (e, p, _) = setup(child, "arn:aws:states:::states:startExecution.sync");
    let Outcome::Succeeded(out) = e.run(&p, json!({"n": 1})).await else {
        panic!()
    };
    assert_eq!(out["Output"], json!("{\"a\":1}"));
}

#[tokio::test]
async fn start_execution_sync2_child_failure_is_states_task_failed_with_the_child_error() {
    let child =
        single(json!({"Type": "Fail", "Error": "DestroyIncomplete", "Cause": "2 resources left"}));
    let (e, p, _) = setup(child, "arn:aws:states:::states:startExecution.sync:2");
    let Outcome::Failed(f) = e.run(&p, json!({"n": 1})).await else {
        panic!()
    };
    assert_eq!(f.error, "States.TaskFailed");
    let cause: serde_json::Value = serde_json::from_str(&f.cause).unwrap();
    assert_eq!(cause["Status"], json!("FAILED"));
    assert_eq!(cause["Error"], json!("DestroyIncomplete"));
    assert_eq!(cause["Cause"], json!("2 resources left"));
}

#[tokio::test]
async fn start_execution_unknown_state_machine_fails() {
    let (e, _) = recording(0.0);
    let subs = HashMap::from([(
        "ChildArn".to_string(),
        "arn:aws:states:us-east-1:123456789012:stateMachine:nope".to_string(),
    )]);
    let p = StateMachine::from_value(
        parent("arn:aws:states:::states:startExecution.sync:2"),
        &subs,
    )
    .unwrap();
    let Outcome::Failed(f) = e.run(&p, json!({"n": 1})).await else {
        panic!()
    };
    assert_eq!(f.error, "StepFunctions.StateMachineDoesNotExistException");
}

#[tokio::test]
async fn start_execution_in_a_map_runs_one_child_per_item() {
    let (e, _) = recording(0.0);
    let arn = e.state_machine_arn("child");
    e.register(
        arn.clone(),
        machine(&single(json!({"Type": "Pass", "End": true}))).with_name("child"),
    );
    let def = single(
        json!({"Type": "Map", "ItemsPath": "$.stacks", "ItemProcessor": {"StartAt": "D", "States": {"D": {
        "Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2",
        "Parameters": {"StateMachineArn": arn, "Input": {"stack.$": "$"}}, "OutputPath": "$.Output.stack", "End": true}}}, "End": true}),
    );
    let Outcome::Succeeded(out) = e.run(&machine(&def), json!({"stacks": ["A", "B"]})).await else {
        panic!()
    };
    assert_eq!(out, json!(["A", "B"]));
}

/// StartExecution's names (API_StartExecution: "Executions with the same name and input
/// are considered idempotent"): a second start of a running execution with its name and
/// input is the same start; with another input, or once it has ended,
/// `StepFunctions.ExecutionAlreadyExistsException` (as moto's interpreter names it).
#[tokio::test]
async fn start_execution_name_is_used_once_the_same_start_while_it_runs() {
    let (e, _) = recording(1.0);
    let arn = e.state_machine_arn("child");
    e.register(
        arn.clone(),
        machine(&single(json!({"Type": "Wait", "Seconds": 1, "End": true}))).with_name("child"),
    );
    let start = |input: serde_json::Value, next: &str| {
        json!({"Type": "Task", "Resource": "arn:aws:states:::states:startExecution",
               "Parameters": {"StateMachineArn": "${ChildArn}", "Name": "c1", "Input": input},
               "ResultPath": format!("$.{}", next.to_lowercase()),
               "Catch": [{"ErrorEquals": ["StepFunctions.ExecutionAlreadyExistsException"],
                          "ResultPath": format!("$.{}Refused", next.to_lowercase()), "Next": next}],
               "Next": next})
    };
    let def = json!({"StartAt": "First", "States": {
        "First": start(json!({"a": 1}), "Again"),
        "Again": start(json!({"a": 1}), "Other"),
        "Other": start(json!({"a": 2}), "Later"),
        "Later": {"Type": "Wait", "Seconds": 2, "Next": "Closed"},
        "Closed": start(json!({"a": 1}), "Done"),
        "Done": {"Type": "Pass", "End": true}}});
    let subs = HashMap::from([("ChildArn".to_string(), arn)]);
    let p = StateMachine::from_value(def, &subs)
        .unwrap()
        .with_name("parent");
    let out = match e.run(&p, json!({})).await {
        Outcome::Succeeded(v) => v,
        other => panic!("{other:?}"),
    };
    let child = "arn:aws:states:us-east-1:123456789012:execution:child:c1";
    // Each state's result lands under the name of the state after it.
    assert_eq!(out["again"]["ExecutionArn"], json!(child), "{out}");
    assert_eq!(
        out["other"]["ExecutionArn"],
        json!(child),
        "the same start: {out}"
    );
    assert_eq!(
        out["other"]["StartDate"], out["again"]["StartDate"],
        "{out}"
    );
    assert!(out.get("otherRefused").is_none(), "{out}");
    for refused in ["laterRefused", "doneRefused"] {
        assert_eq!(
            out[refused]["Error"],
            json!("StepFunctions.ExecutionAlreadyExistsException"),
            "{refused}: {out}"
        );
    }
}
