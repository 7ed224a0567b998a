//! The backend as deployed (docs/testing.md, "The deployed group"): these tests run only
//! under `scripts/with-emulator.sh --backend`, which creates the stack `cdkd-flow` from
//! `infra/template.yaml` in the emulator. Every run here is started without `--local`:
//! moto's own Step Functions interpreter runs the real definitions, each Task invokes
//! the `cdkd-step` binary through the Lambda Runtime API under its function's role, and
//! the emulator enforces IAM for every request. No test calls a step in-process or
//! writes a step's artifacts itself.
//!
//! Run: `scripts/with-emulator.sh --backend target/debug/deps/e2e-<hash> --test-threads=1 deployed::`
//! (scripts/run-e2e.sh does it as the group `deployed`).

mod cleanup;
mod continuation;
mod destroy;
mod export;
mod iam;
mod inbox;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use cdkd_tests as h;
use serde_json::Value;

/// The deployed backend the environment names: its stack and the state bucket its
/// functions may touch.
pub struct Backend {
    pub stack: String,
    pub bucket: String,
}

/// The backend `scripts/with-emulator.sh --backend` deployed; panics without one, so
/// that these tests never pass without it.
pub fn backend() -> Backend {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let (Some(stack), Some(bucket)) = (
        var("CDKD_FLOW_BACKEND_STACK"),
        var("CDKD_FLOW_STATE_BUCKET"),
    ) else {
        panic!(
            "CDKD_FLOW_BACKEND_STACK / CDKD_FLOW_STATE_BUCKET are not set: the deployed \
             tests need the backend deployed into the emulator; run them under \
             scripts/with-emulator.sh --backend"
        );
    };
    Backend { stack, bucket }
}

impl Backend {
    /// `cdkd-flow --state-bucket <bucket> <args>` (never `--local`).
    pub fn cli(&self, args: &[&str]) -> h::CliRun {
        let mut all = vec!["--state-bucket", self.bucket.as_str()];
        all.extend_from_slice(args);
        assert!(
            !all.contains(&"--local"),
            "a deployed test runs no local run"
        );
        crate::run_cli_env(&all, &[])
    }

    /// The backend stack's outputs.
    pub async fn outputs(&self) -> BTreeMap<String, String> {
        let stack = h::cfn::described(&self.stack)
            .await
            .unwrap_or_else(|| panic!("no backend stack {}", self.stack));
        h::cfn::outputs(&stack).into_iter().collect()
    }

    /// The execution ARN of run `run_id` of the state machine behind output `output`.
    pub async fn execution_arn(&self, output: &str, run_id: &str) -> String {
        let machine = self
            .outputs()
            .await
            .remove(output)
            .unwrap_or_else(|| panic!("the backend stack has no output {output}"));
        format!(
            "{}:{run_id}",
            machine.replacen(":stateMachine:", ":execution:", 1)
        )
    }
}

/// The execution's history, every page.
pub async fn history(execution_arn: &str) -> Vec<aws_sdk_sfn::types::HistoryEvent> {
    let sfn = aws_sdk_sfn::Client::new(&h::sdk().await);
    let mut out = Vec::new();
    let mut token = None;
    loop {
        let page = sfn
            .get_execution_history()
            .execution_arn(execution_arn)
            .set_next_token(token)
            .send()
            .await
            .unwrap_or_else(|e| panic!("history of {execution_arn}: {e:?}"));
        out.extend(page.events);
        token = page.next_token;
        if token.is_none() {
            return out;
        }
    }
}

/// The steps (function handlers, by the functions' names `...<Step>Function...`) whose
/// Lambda task the execution scheduled, in order; panics when a Task of the history is
/// anything but a Lambda invoke.
pub async fn lambda_steps(execution_arn: &str) -> Vec<String> {
    let mut steps = Vec::new();
    for e in history(execution_arn).await {
        if let Some(d) = e.task_scheduled_event_details() {
            assert_eq!(
                d.resource_type(),
                "lambda",
                "a Task that is not Lambda: {d:?}"
            );
            let params: Value = serde_json::from_str(d.parameters()).unwrap_or(Value::Null);
            let f = params["FunctionName"].as_str().unwrap_or_default();
            steps.push(f.rsplit([':', '/']).next().unwrap_or(f).to_string());
        }
    }
    steps
}

/// The invocations the emulator's Lambda ran so far (its test facility): function
/// name, request id, error type (absent when it succeeded).
pub async fn invocations() -> Vec<Value> {
    let raw = h::emulator_request("GET", "/_cdkd_emulator/lambda/invocations", "", "").await;
    let body = raw.split("\r\n\r\n").nth(1).unwrap_or_default();
    let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{raw}: {e}"));
    v["invocations"].as_array().cloned().unwrap_or_default()
}

/// Waits until `f` holds, looking every 200 ms, at most `timeout`.
pub async fn wait_until<F, Fut>(what: &str, timeout: Duration, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + timeout;
    while !f().await {
        assert!(Instant::now() < deadline, "{what}: not within {timeout:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The execution's status.
pub async fn status(execution_arn: &str) -> String {
    aws_sdk_sfn::Client::new(&h::sdk().await)
        .describe_execution()
        .execution_arn(execution_arn)
        .send()
        .await
        .unwrap_or_else(|e| panic!("describe {execution_arn}: {e:?}"))
        .status
        .as_str()
        .to_string()
}

pub fn uniq(tag: &str) -> String {
    format!("{tag}-{}", &uuid::Uuid::new_v4().simple().to_string()[..10])
}

/// The emulator's Step Functions settings (`/moto-api/config`): the history limit and
/// the time scale of Wait states (docs/emulator.md).
pub async fn sfn_config() -> Value {
    let raw = h::emulator_request("GET", "/moto-api/config", "", "").await;
    let body = raw.split("\r\n\r\n").nth(1).unwrap_or_default();
    serde_json::from_str::<Value>(body).unwrap_or_default()["stepfunctions"].clone()
}

pub async fn set_sfn_config(v: &Value) {
    h::emulator_post(
        "/moto-api/config",
        &serde_json::json!({ "stepfunctions": v }).to_string(),
        "Content-Type: application/json\r\n",
    )
    .await;
}
