//! Load-time validation: unsupported features are refused with the state's name.

use std::collections::HashMap;

use cdkd_engine::{LoadError, StateMachine};
use serde_json::{json, Value};

fn load(def: Value) -> Result<StateMachine, LoadError> {
    StateMachine::from_value(def, &HashMap::new())
}

fn refusal(def: Value) -> String {
    match load(def) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("expected a refusal"),
    }
}

fn single(state: Value) -> Value {
    json!({"StartAt": "Step", "States": {"Step": state}})
}

#[test]
fn refuses_jsonata_query_language_at_top_level() {
    let m = refusal(
        json!({"QueryLanguage": "JSONata", "StartAt": "A", "States": {"A": {"Type": "Succeed"}}}),
    );
    assert!(m.contains("JSONata"), "{m}");
}

#[test]
fn refuses_jsonata_query_language_in_a_state_naming_it() {
    let m = refusal(single(
        json!({"Type": "Pass", "QueryLanguage": "JSONata", "End": true}),
    ));
    assert!(m.contains("state 'Step'") && m.contains("JSONata"), "{m}");
}

#[test]
fn accepts_explicit_jsonpath_query_language() {
    assert!(load(json!({"QueryLanguage": "JSONPath", "StartAt": "A", "States": {"A": {"Type": "Pass", "QueryLanguage": "JSONPath", "End": true}}})).is_ok());
}

#[test]
fn refuses_distributed_map_naming_the_state() {
    let m = refusal(single(
        json!({"Type": "Map", "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
        "StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}, "End": true}),
    ));
    assert!(
        m.contains("state 'Step'") && m.contains("Distributed Map"),
        "{m}"
    );
}

#[test]
fn refuses_map_item_reader_result_writer_and_tolerated_failure() {
    for (field, v) in [
        (
            "ItemReader",
            json!({"Resource": "arn:aws:states:::s3:getObject"}),
        ),
        (
            "ResultWriter",
            json!({"Resource": "arn:aws:states:::s3:putObject"}),
        ),
        ("ItemBatcher", json!({"MaxItemsPerBatch": 2})),
        ("ToleratedFailurePercentage", json!(10)),
    ] {
        let mut st = json!({"Type": "Map", "ItemProcessor": {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}, "End": true});
        st[field] = v;
        let m = refusal(single(st));
        assert!(
            m.contains("state 'Step'") && m.contains(field),
            "{field}: {m}"
        );
    }
}

#[test]
fn refuses_an_unknown_state_type() {
    let m = refusal(single(json!({"Type": "Sleep", "End": true})));
    assert!(m.contains("state 'Step'") && m.contains("Sleep"), "{m}");
}

#[test]
fn refuses_an_unknown_field_naming_it() {
    let m = refusal(single(json!({"Type": "Pass", "Resulto": 1, "End": true})));
    assert!(m.contains("state 'Step'") && m.contains("Resulto"), "{m}");
}

#[test]
fn refuses_a_field_of_another_state_type() {
    let m = refusal(single(json!({"Type": "Pass", "Retry": [], "End": true})));
    assert!(m.contains("state 'Step'") && m.contains("Retry"), "{m}");
}

#[test]
fn refuses_variables_assign() {
    let m = refusal(single(
        json!({"Type": "Pass", "Assign": {"x": 1}, "End": true}),
    ));
    assert!(m.contains("state 'Step'") && m.contains("Assign"), "{m}");
}

#[test]
fn refuses_unsupported_task_resources() {
    let m = refusal(single(
        json!({"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage", "Parameters": {}, "End": true}),
    ));
    assert!(
        m.contains("state 'Step'") && m.contains("sqs:sendMessage"),
        "{m}"
    );
    let m = refusal(single(
        json!({"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken", "Parameters": {"MessageBody": {"t.$": "$$.Task.Token"}}, "End": true}),
    ));
    assert!(m.contains("sqs:sendMessage.waitForTaskToken"), "{m}");
}

#[test]
fn refuses_lambda_invoke_without_function_name() {
    let m = refusal(single(
        json!({"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"Payload": {}}, "End": true}),
    ));
    assert!(
        m.contains("state 'Step'") && m.contains("FunctionName"),
        "{m}"
    );
}

#[test]
fn refuses_an_unknown_intrinsic_function() {
    let m = refusal(single(
        json!({"Type": "Pass", "Parameters": {"a.$": "States.Nope($.x)"}, "End": true}),
    ));
    assert!(
        m.contains("state 'Step'") && m.contains("States.Nope"),
        "{m}"
    );
}

#[test]
fn refuses_an_invalid_path() {
    let m = refusal(single(
        json!({"Type": "Pass", "InputPath": "a.b", "End": true}),
    ));
    assert!(m.contains("state 'Step'") && m.contains("InputPath"), "{m}");
}

#[test]
fn refuses_a_result_path_that_is_not_a_reference_path() {
    let m = refusal(single(
        json!({"Type": "Pass", "ResultPath": "$.a[*]", "End": true}),
    ));
    assert!(
        m.contains("state 'Step'") && m.contains("ResultPath"),
        "{m}"
    );
}

#[test]
fn refuses_a_missing_transition_target() {
    let m = refusal(single(json!({"Type": "Pass", "Next": "Nowhere"})));
    assert!(m.contains("state 'Step'") && m.contains("Nowhere"), "{m}");
}

#[test]
fn refuses_a_state_without_next_or_end() {
    let m = refusal(single(json!({"Type": "Pass"})));
    assert!(m.contains("state 'Step'"), "{m}");
}

#[test]
fn refuses_states_all_not_alone_or_not_last() {
    let m = refusal(single(
        json!({"Type": "Parallel", "Branches": [{"StartAt": "A", "States": {"A": {"Type": "Succeed"}}}],
        "Retry": [{"ErrorEquals": ["States.ALL"]}, {"ErrorEquals": ["X"]}], "End": true}),
    ));
    assert!(m.contains("States.ALL"), "{m}");
    let m = refusal(single(
        json!({"Type": "Parallel", "Branches": [{"StartAt": "A", "States": {"A": {"Type": "Succeed"}}}],
        "Catch": [{"ErrorEquals": ["States.ALL", "X"], "Next": "Step"}], "End": true}),
    ));
    assert!(m.contains("States.ALL"), "{m}");
}

#[test]
fn refuses_an_unknown_choice_operator_and_jsonata_condition() {
    let m = refusal(
        json!({"StartAt": "C", "States": {"C": {"Type": "Choice", "Choices": [{"Variable": "$.a", "StringContains": "x", "Next": "C"}]}}}),
    );
    assert!(
        m.contains("state 'C'") && m.contains("StringContains"),
        "{m}"
    );
    let m = refusal(
        json!({"StartAt": "C", "States": {"C": {"Type": "Choice", "Choices": [{"Condition": "{% true %}", "Next": "C"}]}}}),
    );
    assert!(m.contains("state 'C'") && m.contains("Condition"), "{m}");
}

#[test]
fn refuses_a_choice_operand_of_the_wrong_type() {
    let m = refusal(
        json!({"StartAt": "C", "States": {"C": {"Type": "Choice", "Choices": [{"Variable": "$.a", "NumericEquals": "1", "Next": "C"}]}}}),
    );
    assert!(
        m.contains("state 'C'") && m.contains("NumericEquals"),
        "{m}"
    );
}

#[test]
fn refuses_transitions_out_of_a_parallel_branch() {
    let m = refusal(json!({"StartAt": "P", "States": {
        "P": {"Type": "Parallel", "Branches": [{"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "Done"}}}], "Next": "Done"},
        "Done": {"Type": "Succeed"}}}));
    assert!(m.contains("state 'A'") && m.contains("Done"), "{m}");
}

#[test]
fn refuses_a_wait_with_two_durations() {
    let m = refusal(single(
        json!({"Type": "Wait", "Seconds": 1, "SecondsPath": "$.s", "End": true}),
    ));
    assert!(m.contains("state 'Step'"), "{m}");
}

#[test]
fn refuses_invalid_json() {
    assert!(matches!(
        StateMachine::load("{", &HashMap::new()),
        Err(LoadError::Json(_))
    ));
}

#[test]
fn substitutions_replace_names_in_string_values() {
    let def = r#"{"StartAt":"A","States":{"A":{"Type":"Pass","Result":"${Greeting}, ${Who}!","End":true}}}"#;
    let subs = HashMap::from([
        ("Greeting".to_string(), "Hello".to_string()),
        ("Who".to_string(), "\"q\"".to_string()),
    ]);
    let sm = StateMachine::load(def, &subs).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let e = cdkd_engine::Engine::new(
        std::sync::Arc::new(cdkd_engine::NoTasks),
        Default::default(),
    );
    assert_eq!(
        rt.block_on(e.run(&sm, json!({}))),
        cdkd_engine::Outcome::Succeeded(json!("Hello, \"q\"!"))
    );
}

#[test]
fn substitutions_missing_name_is_refused_naming_it() {
    let def = r#"{"StartAt":"A","States":{"A":{"Type":"Pass","Result":"${Nope}","End":true}}}"#;
    let e = StateMachine::load(def, &HashMap::new()).unwrap_err();
    assert_eq!(
        e,
        LoadError::MissingSubstitution {
            name: "Nope".into()
        }
    );
    assert!(e.to_string().contains("${Nope}"));
}

#[test]
fn refuses_duplicate_state_names_across_branches() {
    let m = refusal(json!({"StartAt": "P", "States": {
        "P": {"Type": "Parallel", "Branches": [
            {"StartAt": "B", "States": {"B": {"Type": "Succeed"}}},
            {"StartAt": "B", "States": {"B": {"Type": "Succeed"}}}], "End": true}}}));
    assert!(
        m.contains("state 'B'") && m.contains("already exists"),
        "{m}"
    );
}
