//! The execution history limit (docs/emulator.md, "Step Functions execution history"):
//! event number `history_limit` ends the execution; if it is not ExecutionSucceeded the
//! execution fails with States.Runtime.

use std::sync::{Arc, Mutex};

use cdkd_engine::testfns::TestFunctions;
use cdkd_engine::{Engine, EngineOptions, Event, EventKind, Outcome};
use serde_json::{json, Value};

use crate::common::machine;

fn limited(limit: u64) -> (Engine, Arc<Mutex<Vec<Event>>>) {
    let log: Arc<Mutex<Vec<Event>>> = Arc::default();
    let l2 = log.clone();
    let e = Engine::new(
        Arc::new(TestFunctions::new()),
        EngineOptions {
            time_scale: 0.0,
            history_limit: limit,
            ..EngineOptions::default()
        },
    )
    .with_observer(Arc::new(move |ev: &Event| {
        l2.lock().unwrap().push(ev.clone())
    }));
    (e, log)
}

/// A Pass/Choice loop counting `$.n` up to `$.until` (4 events a turn).
fn counting_loop() -> Value {
    json!({
        "StartAt": "Count",
        "States": {
            "Count": {"Type": "Pass", "Parameters": {"n.$": "States.MathAdd($.n, 1)", "until.$": "$.until"}, "Next": "More"},
            "More": {"Type": "Choice", "Choices": [{"Variable": "$.n", "NumericLessThanPath": "$.until", "Next": "Count"}], "Default": "Done"},
            "Done": {"Type": "Succeed"}
        }
    })
}

#[tokio::test]
async fn a_loop_past_the_history_limit_fails_with_states_runtime_at_event_limit() {
    let (e, log) = limited(50);
    let o = e
        .run(&machine(&counting_loop()), json!({"n": 0, "until": 1000}))
        .await;
    let Outcome::Failed(f) = o else {
        panic!("expected a failure, got {o:?}")
    };
    assert_eq!(f.error, "States.Runtime");
    assert_eq!(
        f.cause,
        "The execution reached the maximum number of history events (50)."
    );
    let log = log.lock().unwrap();
    let last = log.last().unwrap();
    assert_eq!(last.kind, EventKind::ExecutionFailed);
    assert_eq!(last.id, 50, "event 50 is the failure");
    assert_eq!(log.len(), 50, "49 events of the run, then the failure");
}

#[tokio::test]
async fn an_execution_whose_last_event_is_the_limit_succeeds() {
    // ExecutionStarted, 3 turns of 4 events, Succeed's 2 events (entered and
    // exited), ExecutionSucceeded: 16 events, the limit.
    let (e, log) = limited(100);
    let o = e
        .run(&machine(&counting_loop()), json!({"n": 0, "until": 3}))
        .await;
    assert!(matches!(o, Outcome::Succeeded(_)), "{o:?}");
    let n = log.lock().unwrap().len() as u64;
    let (e, _) = limited(n);
    let o = e
        .run(&machine(&counting_loop()), json!({"n": 0, "until": 3}))
        .await;
    assert!(matches!(o, Outcome::Succeeded(_)), "{n} events: {o:?}");
    let (e, _) = limited(n - 1);
    let o = e
        .run(&machine(&counting_loop()), json!({"n": 0, "until": 3}))
        .await;
    assert!(matches!(o, Outcome::Failed(_)), "{} events: {o:?}", n - 1);
}

#[test]
fn the_default_limit_is_step_functions_quota() {
    assert_eq!(cdkd_engine::MAX_HISTORY_EVENTS, 25_000);
}
