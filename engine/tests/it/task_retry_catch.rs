//! Task dispatch (lambda:invoke, a Lambda ARN), timeouts, Retry and Catch.

use crate::common;
use std::time::Instant;

use cdkd_engine::{EngineOptions, EventKind, Outcome};
use common::*;
use serde_json::{json, Value};

fn invoke(function: &str, payload: Value) -> Value {
    json!({"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
           "Parameters": {"FunctionName": function, "Payload": payload}, "End": true})
}

#[tokio::test]
async fn lambda_invoke_wraps_the_result_like_the_lambda_integration() {
    let out = ok(
        single(invoke("cdkd-flow:test:echo", json!({"a.$": "$.a"}))),
        json!({"a": 1}),
    )
    .await;
    assert_eq!(out["Payload"], json!({"a": 1}));
    assert_eq!(out["StatusCode"], json!(200));
    assert_eq!(out["ExecutedVersion"], json!("$LATEST"));
    assert_eq!(out["SdkHttpMetadata"]["HttpStatusCode"], json!(200));
}

#[tokio::test]
async fn lambda_arn_resource_returns_the_raw_output() {
    // The handler sees the ARN; TestFunctions does not know it, so use a Dispatch.
    let mut d = cdkd_engine::Dispatch::new();
    let arn = "arn:aws:lambda:us-east-1:123456789012:function:echo";
    d.route(
        arn,
        std::sync::Arc::new(cdkd_engine::testfns::TestFunctions::new()),
    );
    struct Echo;
    #[async_trait::async_trait]
    impl cdkd_engine::TaskHandler for Echo {
        async fn invoke(&self, f: &str, p: Value) -> Result<Value, cdkd_engine::TaskError> {
            Ok(json!({"function": f, "payload": p}))
        }
    }
    d.route(arn, std::sync::Arc::new(Echo));
    let e = cdkd_engine::Engine::new(
        std::sync::Arc::new(d),
        EngineOptions {
            time_scale: 0.0,
            ..Default::default()
        },
    );
    let sm = machine(&single(
        json!({"Type": "Task", "Resource": arn, "End": true}),
    ));
    assert_eq!(
        e.run(&sm, json!({"x": 1})).await,
        Outcome::Succeeded(json!({"function": arn, "payload": {"x": 1}}))
    );
}

#[tokio::test]
async fn lambda_function_error_surfaces_its_error_type_and_message() {
    let f = failed(
        single(invoke(
            "cdkd-flow:test:fail",
            json!({"error": "LockHeld", "cause": "stack A is locked"}),
        )),
        json!({}),
    )
    .await;
    assert_eq!(
        (f.error.as_str(), f.cause.as_str()),
        ("LockHeld", "stack A is locked")
    );
}

#[tokio::test]
async fn unknown_function_fails_like_lambda_resource_not_found() {
    let f = failed(single(invoke("nope", json!({}))), json!({})).await;
    assert_eq!(f.error, "Lambda.ResourceNotFoundException");
}

#[tokio::test]
async fn timeout_seconds_produces_states_timeout() {
    let mut st = invoke("cdkd-flow:test:sleep", json!({"seconds": 5}));
    st["TimeoutSeconds"] = json!(1);
    let e = cdkd_engine::Engine::new(
        std::sync::Arc::new(cdkd_engine::testfns::TestFunctions::new()),
        EngineOptions {
            time_scale: 0.0,
            timeout_scale: 0.1,
            ..Default::default()
        },
    );
    let t = Instant::now();
    let o = e.run(&machine(&single(st)), json!({})).await;
    assert!(
        matches!(o, Outcome::Failed(ref f) if f.error == "States.Timeout"),
        "{o:?}"
    );
    assert!(t.elapsed().as_secs_f64() < 2.0);
}

#[tokio::test]
async fn heartbeat_seconds_produces_states_timeout() {
    let mut st = invoke("cdkd-flow:test:sleep", json!({"seconds": 5}));
    st["TimeoutSeconds"] = json!(100);
    st["HeartbeatSeconds"] = json!(1);
    let e = cdkd_engine::Engine::new(
        std::sync::Arc::new(cdkd_engine::testfns::TestFunctions::new()),
        EngineOptions {
            time_scale: 0.0,
            timeout_scale: 0.1,
            ..Default::default()
        },
    );
    let o = e.run(&machine(&single(st)), json!({})).await;
    assert!(
        matches!(o, Outcome::Failed(ref f) if f.error == "States.Timeout"),
        "{o:?}"
    );
}

#[tokio::test]
async fn execution_timeout_seconds_produces_states_timeout() {
    let def = json!({"TimeoutSeconds": 1, "StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 50, "End": true}}});
    let e = cdkd_engine::Engine::new(
        std::sync::Arc::new(cdkd_engine::NoTasks),
        EngineOptions {
            time_scale: 1.0,
            timeout_scale: 0.1,
            ..Default::default()
        },
    );
    let o = e.run(&machine(&def), json!({})).await;
    assert!(
        matches!(o, Outcome::Failed(ref f) if f.error == "States.Timeout"),
        "{o:?}"
    );
}

fn flaky(failures: u64, retry: Value) -> Value {
    let mut st = invoke(
        "cdkd-flow:test:flaky",
        json!({"key.$": "$$.Execution.Name", "failures": failures, "error": "Transient"}),
    );
    st["Retry"] = retry;
    st["OutputPath"] = json!("$.Payload");
    single(st)
}

#[tokio::test]
async fn retry_runs_again_until_success() {
    let out = ok(
        flaky(2, json!([{"ErrorEquals": ["Transient"], "MaxAttempts": 3}])),
        json!({}),
    )
    .await;
    assert_eq!(out["attempts"], json!(3));
}

#[tokio::test]
async fn retry_max_attempts_exhausted_fails_with_the_last_error() {
    let f = failed(
        flaky(5, json!([{"ErrorEquals": ["Transient"], "MaxAttempts": 2}])),
        json!({}),
    )
    .await;
    assert_eq!(f.error, "Transient");
    assert!(f.cause.contains("call 3"), "{}", f.cause);
}

#[tokio::test]
async fn retry_max_attempts_zero_never_retries() {
    let f = failed(
        flaky(1, json!([{"ErrorEquals": ["Transient"], "MaxAttempts": 0}])),
        json!({}),
    )
    .await;
    assert_eq!(f.error, "Transient");
}

#[tokio::test]
async fn retry_states_all_and_task_failed_match_any_error() {
    for e in ["States.ALL", "States.TaskFailed"] {
        let out = ok(flaky(1, json!([{"ErrorEquals": [e]}])), json!({})).await;
        assert_eq!(out["attempts"], json!(2), "{e}");
    }
}

#[tokio::test]
async fn retry_non_matching_error_is_not_retried() {
    let f = failed(
        flaky(1, json!([{"ErrorEquals": ["Other"], "MaxAttempts": 5}])),
        json!({}),
    )
    .await;
    assert_eq!(f.error, "Transient");
}

#[tokio::test]
async fn retry_first_matching_retrier_counts_its_own_attempts() {
    // The first retrier matches and allows 1 retry; the second (States.ALL) is never
    // consulted for this error.
    let f = failed(
        flaky(3, json!([{"ErrorEquals": ["Transient"], "MaxAttempts": 1}, {"ErrorEquals": ["States.ALL"], "MaxAttempts": 5}])),
        json!({}),
    )
    .await;
    assert!(f.cause.contains("call 2"), "{}", f.cause);
}

#[tokio::test]
async fn retry_intervals_follow_backoff_rate_and_max_delay() {
    let (e, log) = recording(0.0);
    let def = flaky(
        4,
        json!([{"ErrorEquals": ["Transient"], "IntervalSeconds": 2, "BackoffRate": 3, "MaxDelaySeconds": 10, "MaxAttempts": 4}]),
    );
    let o = e.run(&machine(&def), json!({})).await;
    assert!(matches!(o, Outcome::Succeeded(_)));
    let delays: Vec<f64> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|ev| ev.kind == EventKind::StateRetryScheduled)
        .map(|ev| {
            ev.details.as_ref().unwrap()["delaySeconds"]
                .as_f64()
                .unwrap()
        })
        .collect();
    assert_eq!(delays, vec![2.0, 6.0, 10.0, 10.0]);
}

#[tokio::test]
async fn retry_intervals_really_wait_scaled() {
    let e = engine(0.05);
    let def = flaky(
        2,
        json!([{"ErrorEquals": ["Transient"], "IntervalSeconds": 2, "BackoffRate": 2}]),
    );
    let t = Instant::now();
    assert!(matches!(
        e.run(&machine(&def), json!({})).await,
        Outcome::Succeeded(_)
    ));
    let s = t.elapsed().as_secs_f64();
    assert!(
        (0.28..3.0).contains(&s),
        "waited {s}s (expected (2+4)*0.05)"
    );
}

#[tokio::test]
async fn retry_context_retry_count_is_visible() {
    let mut st = invoke(
        "cdkd-flow:test:flaky",
        json!({"key.$": "$$.Execution.Name", "failures": 2, "retry.$": "$$.State.RetryCount"}),
    );
    st["Retry"] = json!([{"ErrorEquals": ["States.ALL"]}]);
    st["ResultSelector"] = json!({"retry.$": "$$.State.RetryCount"});
    let out = ok(single(st), json!({})).await;
    assert_eq!(out, json!({"retry": 2}));
}

fn caught(result_path: Value) -> Value {
    let mut st = invoke(
        "cdkd-flow:test:fail",
        json!({"error": "LockHeld", "cause": "held"}),
    );
    st["Catch"] =
        json!([{"ErrorEquals": ["LockHeld"], "ResultPath": result_path, "Next": "Handler"}]);
    json!({"StartAt": "T", "States": {"T": st, "Handler": {"Type": "Pass", "End": true}}})
}

#[tokio::test]
async fn catch_result_path_merges_the_error_output_into_the_input() {
    let out = ok(caught(json!("$.error")), json!({"in": 1})).await;
    assert_eq!(
        out,
        json!({"in": 1, "error": {"Error": "LockHeld", "Cause": "held"}})
    );
}

#[tokio::test]
async fn catch_default_result_path_replaces_input_with_error_output() {
    let def = {
        let mut st = invoke(
            "cdkd-flow:test:fail",
            json!({"error": "LockHeld", "cause": "held"}),
        );
        st["Catch"] = json!([{"ErrorEquals": ["States.ALL"], "Next": "Handler"}]);
        json!({"StartAt": "T", "States": {"T": st, "Handler": {"Type": "Pass", "End": true}}})
    };
    assert_eq!(
        ok(def, json!({"in": 1})).await,
        json!({"Error": "LockHeld", "Cause": "held"})
    );
}

#[tokio::test]
async fn catch_result_path_null_keeps_the_input() {
    assert_eq!(
        ok(caught(Value::Null), json!({"in": 1})).await,
        json!({"in": 1})
    );
}

#[tokio::test]
async fn catch_applies_after_retries_are_exhausted() {
    let mut st = invoke(
        "cdkd-flow:test:flaky",
        json!({"key": "k", "failures": 9, "error": "Transient"}),
    );
    st["Retry"] = json!([{"ErrorEquals": ["Transient"], "MaxAttempts": 2}]);
    st["Catch"] = json!([{"ErrorEquals": ["Transient"], "ResultPath": "$.err", "Next": "H"}]);
    let def = json!({"StartAt": "T", "States": {"T": st, "H": {"Type": "Pass", "OutputPath": "$.err.Cause", "End": true}}});
    assert_eq!(
        ok(def, json!({})).await,
        json!("call 3 of k fails on purpose")
    );
}

#[tokio::test]
async fn catch_states_all_does_not_catch_states_runtime() {
    let def = json!({"StartAt": "T", "States": {
        "T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
              "Parameters": {"FunctionName": "cdkd-flow:test:echo", "Payload.$": "$.missing"},
              "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "H"}], "End": true},
        "H": {"Type": "Succeed"}}});
    assert_eq!(failed(def, json!({})).await.error, "States.Runtime");
}

#[tokio::test]
async fn catch_task_failed_does_not_catch_timeout_but_states_timeout_does() {
    let mk = |e: &str| {
        let mut st = invoke("cdkd-flow:test:sleep", json!({"seconds": 5}));
        st["TimeoutSeconds"] = json!(1);
        st["Catch"] = json!([{"ErrorEquals": [e], "Next": "H"}]);
        json!({"StartAt": "T", "States": {"T": st, "H": {"Type": "Pass", "Result": "caught", "End": true}}})
    };
    let e = cdkd_engine::Engine::new(
        std::sync::Arc::new(cdkd_engine::testfns::TestFunctions::new()),
        EngineOptions {
            time_scale: 0.0,
            timeout_scale: 0.05,
            ..Default::default()
        },
    );
    let o = e.run(&machine(&mk("States.TaskFailed")), json!({})).await;
    assert!(
        matches!(o, Outcome::Failed(ref f) if f.error == "States.Timeout"),
        "{o:?}"
    );
    let o = e.run(&machine(&mk("States.Timeout")), json!({})).await;
    assert_eq!(o, Outcome::Succeeded(json!("caught")));
}

#[tokio::test]
async fn events_are_named_like_the_execution_history() {
    let (e, log) = recording(0.0);
    let def = json!({"StartAt": "T", "States": {
        "T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
              "Parameters": {"FunctionName": "cdkd-flow:test:echo", "Payload": {}}, "Next": "C"},
        "C": {"Type": "Choice", "Choices": [{"Variable": "$.StatusCode", "NumericEquals": 200, "Next": "W"}]},
        "W": {"Type": "Wait", "Seconds": 1, "End": true}}});
    assert!(matches!(
        e.run(&machine(&def), json!({})).await,
        Outcome::Succeeded(_)
    ));
    let names: Vec<String> = log
        .lock()
        .unwrap()
        .iter()
        .map(|ev| ev.kind.name())
        .collect();
    assert_eq!(
        names,
        [
            "ExecutionStarted",
            "TaskStateEntered",
            "TaskScheduled",
            "TaskStarted",
            "TaskSucceeded",
            "TaskStateExited",
            "ChoiceStateEntered",
            "ChoiceStateExited",
            "WaitStateEntered",
            "WaitStateWaiting",
            "WaitStateExited",
            "ExecutionSucceeded"
        ]
    );
    let ids: Vec<u64> = log.lock().unwrap().iter().map(|ev| ev.id).collect();
    assert_eq!(ids, (1..=12).collect::<Vec<_>>());
}

// ---------------------------------------------------------------- payload quota

/// An echo task whose result (the input, wrapped by lambda:invoke) is over the quota.
fn big_echo(extra: Value) -> (Value, Value) {
    let mut task = invoke("cdkd-flow:test:echo", json!({"s.$": "$.s"}));
    for (k, v) in extra.as_object().unwrap() {
        task[k] = v.clone();
    }
    let def = json!({"StartAt": "Echo", "States": {
        "Echo": task,
        "Caught": {"Type": "Pass", "Parameters": {"caught.$": "$.Error"}, "End": true}}});
    let input = json!({"s": "x".repeat(cdkd_engine::MAX_PAYLOAD_BYTES - 100)});
    (def, input)
}

#[tokio::test]
async fn payload_quota_states_all_neither_retries_nor_catches_a_task_result_over_it() {
    let (def, input) = big_echo(json!({
        "Retry": [{"ErrorEquals": ["States.ALL"], "MaxAttempts": 3}],
        "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Caught"}]}));
    let (e, log) = recording(0.0);
    let Outcome::Failed(f) = e.run(&machine(&def), input).await else {
        panic!("the task's result over the quota was caught")
    };
    assert_eq!(f.error, "States.DataLimitExceeded");
    assert!(
        f.cause
            .contains("exceeding the maximum number of bytes service limit"),
        "{}",
        f.cause
    );
    let log = log.lock().unwrap();
    let count = |k: EventKind| log.iter().filter(|ev| ev.kind == k).count();
    assert_eq!(count(EventKind::TaskScheduled), 1, "retried");
    assert_eq!(count(EventKind::TaskFailed), 1);
    assert_eq!(count(EventKind::TaskSucceeded), 0);
}

#[tokio::test]
async fn payload_quota_a_catcher_naming_data_limit_exceeded_catches_a_task_result_over_it() {
    let (def, input) = big_echo(json!({
        "Catch": [{"ErrorEquals": ["States.DataLimitExceeded"], "Next": "Caught"}]}));
    assert_eq!(
        ok(def, input).await,
        json!({"caught": "States.DataLimitExceeded"})
    );
}
