//! A Task state's attempt: its timeouts, the function's invocation and the
//! `.waitForTaskToken` wait for an answer.

use serde_json::{json, Value};

use super::failures::payload_quota;
use super::run::{Cur, Run};
use crate::callback::Registration;
use crate::error::{names, Failure};
use crate::events::EventKind;
use crate::model::*;

/// How a task's work ended: with its result (or error), or out of time.
enum Ended {
    Done(Result<Value, Failure>),
    TimedOut(Failure),
}
impl Run {
    pub(super) async fn task_attempt(
        &self,
        c: &Cur<'_>,
        t: &TaskSpec,
        raw: Value,
        retry: u32,
    ) -> Result<Value, Failure> {
        let token = uuid::Uuid::new_v4().to_string();
        let ctx = self.ctx(c, retry, Some(("Task", json!({"Token": token}))));
        let eff = self.input_path(c, &raw, &ctx)?;
        let params = match &t.parameters {
            Some(p) => self.template(c, p, &eff, &ctx, "Parameters")?,
            None => eff.clone(),
        };
        let timeout = t
            .timeout
            .as_ref()
            .map(|s| self.seconds(c, s, &eff, "TimeoutSecondsPath"))
            .transpose()?;
        let heartbeat = t
            .heartbeat
            .as_ref()
            .map(|s| self.seconds(c, s, &eff, "HeartbeatSecondsPath"))
            .transpose()?;
        let resource_name = match &t.resource {
            Resource::LambdaInvoke => "arn:aws:states:::lambda:invoke".to_string(),
            Resource::LambdaInvokeWaitForTaskToken => {
                "arn:aws:states:::lambda:invoke.waitForTaskToken".to_string()
            }
            Resource::LambdaArn(a) => a.clone(),
            Resource::StartExecutionSync { v2: true } => {
                "arn:aws:states:::states:startExecution.sync:2".into()
            }
            Resource::StartExecutionSync { v2: false } => {
                "arn:aws:states:::states:startExecution.sync".into()
            }
            Resource::StartExecution => "arn:aws:states:::states:startExecution".into(),
        };
        self.emit(
            EventKind::TaskScheduled,
            Some(&c.state.name),
            Some(params.clone()),
            None,
            Some(json!({"resource": resource_name})),
        );
        self.emit(
            EventKind::TaskStarted,
            Some(&c.state.name),
            None,
            None,
            None,
        );
        let ended = match &t.resource {
            Resource::LambdaInvokeWaitForTaskToken => {
                self.wait_for_task_token(c, &token, params, timeout, heartbeat)
                    .await
            }
            other => {
                // A task that answers for itself: HeartbeatSeconds bounds it as
                // TimeoutSeconds does (nothing sends heartbeats).
                let limit = [timeout, heartbeat].into_iter().flatten().reduce(f64::min);
                let call = self.invoke(other, params);
                match limit {
                    None => Ended::Done(call.await),
                    Some(s) => {
                        match tokio::time::timeout(self.inner.options.scaled_timeout(s), call).await
                        {
                            Ok(r) => Ended::Done(r),
                            Err(_) => Ended::TimedOut(Failure::new(
                                names::TIMEOUT,
                                format!(
                                    "The task of state '{}' did not finish within {s} seconds.",
                                    c.state.name
                                ),
                            )),
                        }
                    }
                }
            }
        };
        let result = match ended {
            Ended::Done(r) => r,
            Ended::TimedOut(f) => {
                self.emit_full(
                    EventKind::TaskTimedOut,
                    Some(&c.state.name),
                    None,
                    None,
                    Some(&f),
                    None,
                );
                return Err(f);
            }
        };
        // A task's result over the quota is the task's failure (Retry and Catch see it).
        let result = result.and_then(|v| payload_quota(&resource_name, &v).map(|()| v));
        let result = match result {
            Ok(v) => {
                self.emit(
                    EventKind::TaskSucceeded,
                    Some(&c.state.name),
                    None,
                    Some(v.clone()),
                    None,
                );
                v
            }
            Err(f) => {
                self.emit_full(
                    EventKind::TaskFailed,
                    Some(&c.state.name),
                    None,
                    None,
                    Some(&f),
                    None,
                );
                return Err(f);
            }
        };
        self.state_output(c, &t.common, &raw, result, &ctx)
    }

    /// A `.waitForTaskToken` task: the token is registered, the function invoked (a
    /// failing invoke fails the task), its result ignored, and the task waits for
    /// `Engine::send_task_success` / `send_task_failure`. TimeoutSeconds bounds the
    /// whole task; HeartbeatSeconds the time without a heartbeat (from the start, then
    /// from each `send_task_heartbeat`). Both are scaled by `timeout_scale`.
    async fn wait_for_task_token(
        &self,
        c: &Cur<'_>,
        token: &str,
        params: Value,
        timeout: Option<f64>,
        heartbeat: Option<f64>,
    ) -> Ended {
        let callbacks = &self.inner.callbacks;
        let waiting = callbacks.register(token);
        let _registered = Registration {
            callbacks,
            token: token.to_string(),
        };
        let scaled = |s: f64| self.inner.options.scaled_timeout(s);
        let name = &c.state.name;
        let answer = waiting.answer;
        let work = async {
            let submitted = self.invoke(&Resource::LambdaInvoke, params).await?;
            self.emit(
                EventKind::TaskSubmitted,
                Some(name),
                None,
                Some(submitted),
                None,
            );
            answer.await.unwrap_or_else(|_| {
                Err(Failure::new(
                    names::RUNTIME,
                    format!("the task token of state '{name}' was dropped unanswered"),
                ))
            })
        };
        tokio::pin!(work);
        let overall = async {
            match timeout {
                Some(s) => tokio::time::sleep(scaled(s)).await,
                None => futures::future::pending::<()>().await,
            }
        };
        tokio::pin!(overall);
        loop {
            let beat = waiting.beat.notified();
            let silent = async {
                match heartbeat {
                    Some(s) => tokio::time::sleep(scaled(s)).await,
                    None => futures::future::pending::<()>().await,
                }
            };
            tokio::select! {
                r = &mut work => return Ended::Done(r),
                _ = beat => continue,
                _ = silent => {
                    return Ended::TimedOut(Failure::new(
                        names::TIMEOUT,
                        format!(
                            "The task of state '{name}' sent no heartbeat within {} seconds.",
                            heartbeat.unwrap_or_default()
                        ),
                    ))
                }
                _ = &mut overall => {
                    return Ended::TimedOut(Failure::new(
                        names::TIMEOUT,
                        format!(
                            "The task of state '{name}' was not answered within {} seconds.",
                            timeout.unwrap_or_default()
                        ),
                    ))
                }
            }
        }
    }

    async fn invoke(&self, r: &Resource, params: Value) -> Result<Value, Failure> {
        match r {
            Resource::LambdaInvoke | Resource::LambdaInvokeWaitForTaskToken => {
                let function = params
                    .get("FunctionName")
                    .and_then(Value::as_str)
                    .ok_or_else(|| {
                        Failure::new(
                            names::RUNTIME,
                            "lambda:invoke: FunctionName must be a string",
                        )
                    })?
                    .to_string();
                let payload = params.get("Payload").cloned().unwrap_or_else(|| json!({}));
                let out = self
                    .inner
                    .handler
                    .invoke(&function, payload)
                    .await
                    .map_err(|e| Failure::new(e.error, e.cause))?;
                Ok(json!({
                    "ExecutedVersion": "$LATEST",
                    "Payload": out,
                    "SdkHttpMetadata": {"AllHttpHeaders": {}, "HttpHeaders": {}, "HttpStatusCode": 200},
                    "SdkResponseMetadata": {"RequestId": uuid::Uuid::new_v4().to_string()},
                    "StatusCode": 200
                }))
            }
            Resource::LambdaArn(arn) => self
                .inner
                .handler
                .invoke(arn, params)
                .await
                .map_err(|e| Failure::new(e.error, e.cause)),
            Resource::StartExecutionSync { v2 } => self.start_execution(params, Some(*v2)).await,
            Resource::StartExecution => self.start_execution(params, None).await,
        }
    }
}
