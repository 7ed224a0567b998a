//! `arn:aws:states:::lambda:invoke.waitForTaskToken`: the function gets `$$.Task.Token`,
//! its result is ignored, and the task ends when the token is answered
//! (`Engine::send_task_success` / `send_task_failure`), with Retry, Catch, TimeoutSeconds
//! and HeartbeatSeconds as for any task.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use cdkd_engine::{
    CallbackError, Engine, EngineOptions, Event, EventKind, Outcome, StateMachine, TaskError,
    TaskHandler,
};
use serde_json::{json, Value};

use crate::common::machine;

/// Records every payload it is invoked with; `fail` fails like a Lambda error.
#[derive(Default)]
struct Inbox {
    got: Mutex<Vec<Value>>,
}

#[async_trait]
impl TaskHandler for Inbox {
    async fn invoke(&self, function: &str, payload: Value) -> Result<Value, TaskError> {
        if function == "fail" {
            return Err(TaskError::new("Lambda.Unknown", "the function crashed"));
        }
        self.got.lock().unwrap().push(payload);
        Ok(json!({"ignored": true}))
    }
}

impl Inbox {
    /// The token of the `n`-th invocation (1-based), once it came.
    async fn token(&self, n: usize) -> String {
        let t0 = Instant::now();
        loop {
            if let Some(p) = self.got.lock().unwrap().get(n - 1) {
                return p["token"].as_str().expect("a token").to_string();
            }
            assert!(t0.elapsed() < Duration::from_secs(5), "no invocation {n}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    fn calls(&self) -> usize {
        self.got.lock().unwrap().len()
    }
}

fn engine(inbox: &Arc<Inbox>, timeout_scale: f64) -> Engine {
    Engine::new(
        inbox.clone(),
        EngineOptions {
            time_scale: 0.0,
            timeout_scale,
            ..Default::default()
        },
    )
}

/// A `.waitForTaskToken` task named `Approval` on `function`, passing the token and `x`,
/// with `extra` fields, then `Next: Done` (a Pass state).
fn callback_machine(function: &str, extra: Value) -> StateMachine {
    let mut task = json!({
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
        "Parameters": {
            "FunctionName": function,
            "Payload": {"token.$": "$$.Task.Token", "x.$": "$.x"}
        },
        "Next": "Done"
    });
    for (k, v) in extra.as_object().unwrap() {
        task[k] = v.clone();
    }
    machine(&json!({
        "StartAt": "Approval",
        "States": {
            "Approval": task,
            "Done": {"Type": "Pass", "End": true},
            "NotApproved": {"Type": "Fail", "ErrorPath": "$.error.Error", "CausePath": "$.error.Cause"}
        }
    }))
}

fn start(e: &Engine, sm: StateMachine, input: Value) -> tokio::task::JoinHandle<Outcome> {
    let e = e.clone();
    tokio::spawn(async move { e.run(&sm, input).await })
}

async fn ended(h: tokio::task::JoinHandle<Outcome>) -> Outcome {
    tokio::time::timeout(Duration::from_secs(10), h)
        .await
        .expect("the execution ended")
        .unwrap()
}

#[tokio::test]
async fn the_callback_output_is_the_result_through_result_selector_and_result_path() {
    let inbox = Arc::new(Inbox::default());
    let log: Arc<Mutex<Vec<Event>>> = Arc::default();
    let l2 = log.clone();
    let e = engine(&inbox, 1.0).with_observer(Arc::new(move |ev: &Event| {
        l2.lock().unwrap().push(ev.clone())
    }));
    let sm = callback_machine(
        "approve-fn",
        json!({"ResultSelector": {"ok.$": "$.approved", "by.$": "$.by"}, "ResultPath": "$.approval"}),
    );
    let run = start(&e, sm, json!({"x": 7}));
    let token = inbox.token(1).await;
    // The function got the token and its input; its own result does not end the task.
    assert_eq!(inbox.got.lock().unwrap()[0]["x"], json!(7));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!run.is_finished());
    assert_eq!(e.waiting_task_tokens(), vec![token.clone()]);
    e.send_task_success(&token, json!({"approved": true, "by": "alice"}))
        .unwrap();
    assert_eq!(
        ended(run).await,
        Outcome::Succeeded(json!({"x": 7, "approval": {"ok": true, "by": "alice"}}))
    );
    assert!(e.waiting_task_tokens().is_empty());
    let log = log.lock().unwrap();
    let submitted = log
        .iter()
        .find(|ev| ev.kind == EventKind::TaskSubmitted)
        .expect("a TaskSubmitted event");
    assert_eq!(
        submitted.output.as_ref().unwrap()["Payload"],
        json!({"ignored": true})
    );
    let succeeded = log
        .iter()
        .find(|ev| ev.kind == EventKind::TaskSucceeded)
        .expect("a TaskSucceeded event");
    assert_eq!(
        succeeded.output,
        Some(json!({"approved": true, "by": "alice"}))
    );
}

#[tokio::test]
async fn a_task_failure_is_caught_by_catch_like_any_task_error() {
    let inbox = Arc::new(Inbox::default());
    let e = engine(&inbox, 1.0);
    let sm = callback_machine(
        "approve-fn",
        json!({"Catch": [{"ErrorEquals": ["Rejected"], "ResultPath": "$.error", "Next": "NotApproved"}]}),
    );
    let run = start(&e, sm, json!({"x": 1}));
    let token = inbox.token(1).await;
    e.send_task_failure(&token, "Rejected", "rejected by bob: not today")
        .unwrap();
    match ended(run).await {
        Outcome::Failed(f) => {
            assert_eq!(f.error, "Rejected");
            assert_eq!(f.cause, "rejected by bob: not today");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_retried_task_invokes_again_with_a_new_token_and_the_old_one_is_refused() {
    let inbox = Arc::new(Inbox::default());
    let e = engine(&inbox, 1.0);
    let sm = callback_machine(
        "approve-fn",
        json!({"Retry": [{"ErrorEquals": ["Flaky"], "MaxAttempts": 1}], "ResultPath": "$.approval"}),
    );
    let run = start(&e, sm, json!({"x": 1}));
    let first = inbox.token(1).await;
    e.send_task_failure(&first, "Flaky", "try again").unwrap();
    let second = inbox.token(2).await;
    assert_ne!(first, second);
    assert!(matches!(
        e.send_task_success(&first, json!({})),
        Err(CallbackError::TaskDoesNotExist { .. })
    ));
    e.send_task_success(&second, json!({"n": 2})).unwrap();
    assert_eq!(
        ended(run).await,
        Outcome::Succeeded(json!({"x": 1, "approval": {"n": 2}}))
    );
    assert_eq!(inbox.calls(), 2);
}

#[tokio::test]
async fn no_answer_within_timeout_seconds_is_states_timeout_and_forgets_the_token() {
    let inbox = Arc::new(Inbox::default());
    let e = engine(&inbox, 0.05);
    let sm = callback_machine("approve-fn", json!({"TimeoutSeconds": 2}));
    let t0 = Instant::now();
    let run = start(&e, sm, json!({"x": 1}));
    let token = inbox.token(1).await;
    match ended(run).await {
        Outcome::Failed(f) => {
            assert_eq!(f.error, "States.Timeout");
            assert!(f.cause.contains("'Approval'"), "{}", f.cause);
        }
        other => panic!("{other:?}"),
    }
    assert!(t0.elapsed() < Duration::from_secs(3));
    assert!(matches!(
        e.send_task_success(&token, json!({})),
        Err(CallbackError::TaskDoesNotExist { .. })
    ));
    assert!(e.waiting_task_tokens().is_empty());
}

#[tokio::test]
async fn heartbeats_keep_the_task_alive_past_heartbeat_seconds() {
    let inbox = Arc::new(Inbox::default());
    // HeartbeatSeconds 2 scaled to 0.2 s; answered after 0.6 s of heartbeats.
    let e = engine(&inbox, 0.1);
    let sm = callback_machine(
        "approve-fn",
        json!({"HeartbeatSeconds": 2, "ResultPath": "$.approval"}),
    );
    let run = start(&e, sm, json!({"x": 1}));
    let token = inbox.token(1).await;
    for _ in 0..12 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        e.send_task_heartbeat(&token).unwrap();
    }
    e.send_task_success(&token, json!(true)).unwrap();
    assert_eq!(
        ended(run).await,
        Outcome::Succeeded(json!({"x": 1, "approval": true}))
    );
}

#[tokio::test]
async fn no_heartbeat_within_heartbeat_seconds_is_states_timeout() {
    let inbox = Arc::new(Inbox::default());
    let e = engine(&inbox, 0.05);
    let sm = callback_machine(
        "approve-fn",
        json!({"TimeoutSeconds": 1000, "HeartbeatSeconds": 2}),
    );
    let run = start(&e, sm, json!({"x": 1}));
    inbox.token(1).await;
    match ended(run).await {
        Outcome::Failed(f) => {
            assert_eq!(f.error, "States.Timeout");
            assert!(f.cause.contains("heartbeat"), "{}", f.cause);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_timeout_is_caught_by_catch() {
    let inbox = Arc::new(Inbox::default());
    let e = engine(&inbox, 0.01);
    let sm = callback_machine(
        "approve-fn",
        json!({"TimeoutSeconds": 1,
               "Catch": [{"ErrorEquals": ["States.Timeout"], "ResultPath": "$.error", "Next": "Done"}]}),
    );
    let out = ended(start(&e, sm, json!({"x": 1}))).await;
    match out {
        Outcome::Succeeded(v) => assert_eq!(v["error"]["Error"], json!("States.Timeout")),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_failing_invoke_fails_the_task_without_waiting() {
    let inbox = Arc::new(Inbox::default());
    let e = engine(&inbox, 1.0);
    let sm = callback_machine("fail", json!({}));
    match ended(start(&e, sm, json!({"x": 1}))).await {
        Outcome::Failed(f) => {
            assert_eq!(f.error, "Lambda.Unknown");
            assert_eq!(f.cause, "the function crashed");
        }
        other => panic!("{other:?}"),
    }
    assert!(e.waiting_task_tokens().is_empty());
}

#[tokio::test]
async fn an_unknown_or_already_answered_token_is_an_error() {
    let inbox = Arc::new(Inbox::default());
    let e = engine(&inbox, 1.0);
    let err = e.send_task_success("no-such-token", json!({})).unwrap_err();
    assert_eq!(
        err,
        CallbackError::TaskDoesNotExist {
            token: "no-such-token".into()
        }
    );
    assert!(err.to_string().contains("no-such-token"), "{err}");
    assert!(e.send_task_failure("no-such-token", "E", "c").is_err());
    assert!(e.send_task_heartbeat("no-such-token").is_err());
    let run = start(
        &e,
        callback_machine("approve-fn", json!({})),
        json!({"x": 1}),
    );
    let token = inbox.token(1).await;
    e.send_task_success(&token, json!({})).unwrap();
    assert!(e.send_task_success(&token, json!({})).is_err());
    assert!(matches!(ended(run).await, Outcome::Succeeded(_)));
}

#[test]
fn wait_for_task_token_must_pass_the_token() {
    let def = json!({"StartAt": "A", "States": {"A": {
        "Type": "Task", "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
        "Parameters": {"FunctionName": "f", "Payload": {"x.$": "$.x"}}, "End": true}}});
    let err = StateMachine::from_value(def, &HashMap::new()).unwrap_err();
    assert!(err.to_string().contains("$$.Task.Token"), "{err}");
    assert!(err.to_string().contains("state 'A'"), "{err}");
    let def = json!({"StartAt": "A", "States": {"A": {
        "Type": "Task", "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
        "Parameters": {"Payload": {"t.$": "$$.Task.Token"}}, "End": true}}});
    let err = StateMachine::from_value(def, &HashMap::new()).unwrap_err();
    assert!(err.to_string().contains("FunctionName"), "{err}");
}
