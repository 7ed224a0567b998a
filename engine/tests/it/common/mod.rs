#![allow(dead_code)]
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cdkd_engine::testfns::TestFunctions;
use cdkd_engine::{Engine, EngineOptions, Event, Failure, Outcome, StateMachine};
use serde_json::Value;

pub fn machine(def: &Value) -> StateMachine {
    StateMachine::from_value(def.clone(), &HashMap::new()).unwrap()
}

pub fn engine(time_scale: f64) -> Engine {
    Engine::new(
        Arc::new(TestFunctions::new()),
        EngineOptions {
            time_scale,
            ..EngineOptions::default()
        },
    )
}

pub async fn run(def: Value, input: Value) -> Outcome {
    engine(0.0).run(&machine(&def), input).await
}

pub async fn ok(def: Value, input: Value) -> Value {
    match run(def, input).await {
        Outcome::Succeeded(v) => v,
        Outcome::Failed(f) => panic!("expected success, got {f:?}"),
    }
}

pub async fn failed(def: Value, input: Value) -> Failure {
    match run(def, input).await {
        Outcome::Failed(f) => f,
        Outcome::Succeeded(v) => panic!("expected failure, got {v}"),
    }
}

/// An engine that records every event.
pub fn recording(time_scale: f64) -> (Engine, Arc<Mutex<Vec<Event>>>) {
    let log: Arc<Mutex<Vec<Event>>> = Arc::default();
    let l2 = log.clone();
    let e = engine(time_scale).with_observer(Arc::new(move |ev: &Event| {
        l2.lock().unwrap().push(ev.clone())
    }));
    (e, log)
}

/// A one-state machine.
pub fn single(state: Value) -> Value {
    serde_json::json!({"StartAt": "S", "States": {"S": state}})
}
