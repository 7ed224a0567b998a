//! Tiny functions for trying definitions with Task states without the project's steps
//! (used by tests and by `cdkd-flow workflow run`). Names:
//! - `cdkd-flow:test:echo`  returns its payload;
//! - `cdkd-flow:test:fail`  fails with `payload.error` (default `TestError`) and
//!   `payload.cause`;
//! - `cdkd-flow:test:flaky` fails with `payload.error` (default `Flaky`) the first
//!   `payload.failures` (default 1) times it is called with `payload.key`, then returns
//!   `{"key": ..., "attempts": n}`;
//! - `cdkd-flow:test:sleep` sleeps `payload.seconds` (real time), then returns its payload.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::task::{TaskError, TaskHandler};

pub const ECHO: &str = "cdkd-flow:test:echo";
pub const FAIL: &str = "cdkd-flow:test:fail";
pub const FLAKY: &str = "cdkd-flow:test:flaky";
pub const SLEEP: &str = "cdkd-flow:test:sleep";
pub const NAMES: &[&str] = &[ECHO, FAIL, FLAKY, SLEEP];

#[derive(Default)]
pub struct TestFunctions {
    calls: Mutex<HashMap<String, u64>>,
}

impl TestFunctions {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `function` names one of the test functions.
    pub fn knows(function: &str) -> bool {
        NAMES.contains(&function)
    }
}

fn field<'a>(p: &'a Value, k: &str) -> Option<&'a Value> {
    p.as_object().and_then(|o| o.get(k))
}

#[async_trait]
impl TaskHandler for TestFunctions {
    async fn invoke(&self, function: &str, payload: Value) -> Result<Value, TaskError> {
        match function {
            ECHO => Ok(payload),
            FAIL => Err(TaskError::new(
                field(&payload, "error")
                    .and_then(Value::as_str)
                    .unwrap_or("TestError"),
                field(&payload, "cause")
                    .and_then(Value::as_str)
                    .unwrap_or("test:fail was asked to fail"),
            )),
            FLAKY => {
                let key = field(&payload, "key")
                    .and_then(Value::as_str)
                    .unwrap_or("default")
                    .to_string();
                let failures = field(&payload, "failures")
                    .and_then(Value::as_u64)
                    .unwrap_or(1);
                let n = {
                    let mut calls = self
                        .calls
                        .lock()
                        .map_err(|_| TaskError::new("TestError", "the call counter is poisoned"))?;
                    let c = calls.entry(key.clone()).or_insert(0);
                    *c += 1;
                    *c
                };
                if n <= failures {
                    Err(TaskError::new(
                        field(&payload, "error")
                            .and_then(Value::as_str)
                            .unwrap_or("Flaky"),
                        format!("call {n} of {key} fails on purpose"),
                    ))
                } else {
                    Ok(json!({"key": key, "attempts": n}))
                }
            }
            SLEEP => {
                let s = field(&payload, "seconds")
                    .and_then(Value::as_f64)
                    .unwrap_or(1.0);
                if s > 0.0 && s.is_finite() {
                    tokio::time::sleep(Duration::from_secs_f64(s)).await;
                }
                Ok(payload)
            }
            other => Err(TaskError::new(
                "Lambda.ResourceNotFoundException",
                format!("Function not found: {other}"),
            )),
        }
    }
}
