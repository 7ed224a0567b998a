//! The interpreter: runs a graph of states with Step Functions' input/output processing,
//! Retry, Catch, Map, Parallel and the context object.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt, TryStreamExt};
use serde_json::{json, Map, Value};

use crate::callback::Registration;
use crate::error::{names, Failure, MAX_PAYLOAD_BYTES};
use crate::events::{Event, EventKind};
use crate::model::*;
use crate::path::JsonPath;
use crate::template::{Template, TemplateError};
use crate::{Inner, StateMachine};

enum Step {
    Next(String, Value),
    End(Value),
}

/// How a task's work ended: with its result (or error), or out of time.
enum Ended {
    Done(Result<Value, Failure>),
    TimedOut(Failure),
}

struct Run {
    inner: Arc<Inner>,
    exec_name: String,
    /// `Execution` and `StateMachine` parts of the context object.
    base_ctx: Map<String, Value>,
    events: AtomicU64,
    /// The events Step Functions' history would hold so far (the engine's own
    /// `WaitStateWaiting` and `StateRetryScheduled` are not among them).
    counted: AtomicU64,
    /// Set once an event would have been the history limit's last one without ending
    /// the execution ([`EngineOptions::history_limit`](crate::EngineOptions)).
    history_full: tokio::sync::Notify,
    full: std::sync::atomic::AtomicBool,
}

fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Run a whole execution: events ExecutionStarted ... ExecutionSucceeded/Failed.
pub(crate) fn run_execution(
    inner: Arc<Inner>,
    sm: StateMachine,
    input: Value,
    name: String,
) -> BoxFuture<'static, Result<Value, Failure>> {
    async move {
        let o = &inner.options;
        let sm_arn = format!(
            "arn:aws:states:{}:{}:stateMachine:{}",
            o.region, o.account, sm.name
        );
        let exec_arn = format!(
            "arn:aws:states:{}:{}:execution:{}:{}",
            o.region, o.account, sm.name, name
        );
        let mut base = Map::new();
        base.insert(
            "Execution".into(),
            json!({
                "Id": exec_arn,
                "Input": input.clone(),
                "Name": name,
                "RoleArn": format!("arn:aws:iam::{}:role/cdkd-flow-local", o.account),
                "StartTime": ts(Utc::now()),
                "RedriveCount": 0,
            }),
        );
        base.insert(
            "StateMachine".into(),
            json!({"Id": sm_arn, "Name": sm.name}),
        );
        let run = Run {
            inner: inner.clone(),
            exec_name: name.clone(),
            base_ctx: base,
            events: AtomicU64::new(0),
            counted: AtomicU64::new(0),
            history_full: tokio::sync::Notify::new(),
            full: std::sync::atomic::AtomicBool::new(false),
        };
        run.emit(
            EventKind::ExecutionStarted,
            None,
            Some(input.clone()),
            None,
            None,
        );
        let graph = sm.graph.clone();
        let graph_fut = run.run_graph(&graph, input);
        // docs/emulator.md, "Step Functions execution history": event number `limit`
        // is ExecutionSucceeded or ExecutionFailed; the graph stops where it stands.
        let fut = async {
            tokio::select! {
                r = graph_fut => r,
                _ = run.history_full.notified() => Err(history_limit_failure(run.inner.options.history_limit)),
            }
        };
        let res = match sm.timeout_seconds {
            Some(t) => match tokio::time::timeout(run.inner.options.scaled_timeout(t), fut).await {
                Ok(r) => r,
                Err(_) => {
                    let f =
                        Failure::new(names::TIMEOUT, "The execution timed out (TimeoutSeconds).");
                    run.emit_full(
                        EventKind::ExecutionTimedOut,
                        None,
                        None,
                        None,
                        Some(&f),
                        None,
                    );
                    return Err(f);
                }
            },
            None => fut.await,
        };
        // Whatever a state made of it (a branch's failure...), the limit ended it.
        let res = if run.full.load(Ordering::SeqCst) {
            Err(history_limit_failure(run.inner.options.history_limit))
        } else {
            res
        };
        match &res {
            Ok(v) => run.emit(
                EventKind::ExecutionSucceeded,
                None,
                None,
                Some(v.clone()),
                None,
            ),
            Err(f) => run.emit_full(EventKind::ExecutionFailed, None, None, None, Some(f), None),
        };
        res
    }
    .boxed()
}

/// States.DataLimitExceeded when `v` is over the payload quota (its compact JSON text,
/// in UTF-8 bytes, as Step Functions counts it); `what` is the state's name, or a task's
/// resource, as the cause names it.
fn payload_quota(what: &str, v: &Value) -> Result<(), Failure> {
    let size = serde_json::to_string(v).map_or(0, |s| s.len());
    if size <= MAX_PAYLOAD_BYTES {
        return Ok(());
    }
    Err(Failure::new(
        names::DATA_LIMIT_EXCEEDED,
        format!("The state/task '{what}' returned a result with a size exceeding the maximum number of bytes service limit."),
    ))
}

/// How Step Functions fails an execution whose history reached its limit.
fn history_limit_failure(limit: u64) -> Failure {
    Failure::new(
        names::RUNTIME,
        format!("The execution reached the maximum number of history events ({limit})."),
    )
}

fn runtime(state: &str, entered_event: u64, msg: &str) -> Failure {
    Failure::new(
        names::RUNTIME,
        format!("An error occurred while executing the state '{state}' (entered at the event id #{entered_event}). {msg}"),
    )
}

/// Whether a retrier's or catcher's ErrorEquals takes `error`. States.Runtime is never
/// retried or caught; States.DataLimitExceeded is "a terminal error that can't be caught
/// by the States.ALL error type" (Step Functions, error handling): only a list naming it
/// takes it.
fn error_matches(list: &[String], error: &str) -> bool {
    if error == names::RUNTIME {
        return false;
    }
    if error == names::DATA_LIMIT_EXCEEDED {
        return list.iter().any(|e| e == error);
    }
    list.iter().any(|e| {
        e == error || e == names::ALL || (e == names::TASK_FAILED && error != names::TIMEOUT)
    })
}

/// Per-state data the helpers need.
struct Cur<'a> {
    state: &'a State,
    entered_id: u64,
    entered: DateTime<Utc>,
}

impl Run {
    fn emit(
        &self,
        kind: EventKind,
        state: Option<&str>,
        input: Option<Value>,
        output: Option<Value>,
        details: Option<Value>,
    ) -> u64 {
        self.emit_full(kind, state, input, output, None, details)
    }

    fn emit_full(
        &self,
        kind: EventKind,
        state: Option<&str>,
        input: Option<Value>,
        output: Option<Value>,
        failure: Option<&Failure>,
        details: Option<Value>,
    ) -> u64 {
        let ends = matches!(
            kind,
            EventKind::ExecutionSucceeded
                | EventKind::ExecutionFailed
                | EventKind::ExecutionTimedOut
        );
        let counts = !matches!(
            kind,
            EventKind::WaitStateWaiting | EventKind::StateRetryScheduled
        );
        if !ends && self.full.load(Ordering::SeqCst) {
            // Past the limit: nothing more is recorded but the execution's end.
            return self.events.load(Ordering::SeqCst);
        }
        if counts && !ends {
            let n = self.counted.fetch_add(1, Ordering::SeqCst) + 1;
            if n >= self.inner.options.history_limit {
                // This event would be the history's last without ending it: it is not
                // recorded, and the execution's failure takes its place.
                self.full.store(true, Ordering::SeqCst);
                self.history_full.notify_one();
                return self.events.load(Ordering::SeqCst);
            }
        }
        let id = self.events.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some(obs) = &self.inner.observer {
            obs(&Event {
                id,
                timestamp: Utc::now(),
                execution: self.exec_name.clone(),
                kind,
                state: state.map(str::to_string),
                input,
                output,
                error: failure.map(|f| f.error.clone()),
                cause: failure.map(|f| f.cause.clone()),
                details,
            });
        }
        id
    }

    fn ctx(&self, c: &Cur, retry: u32, extra: Option<(&str, Value)>) -> Value {
        let mut m = self.base_ctx.clone();
        m.insert(
            "State".into(),
            json!({"EnteredTime": ts(c.entered), "Name": c.state.name, "RetryCount": retry}),
        );
        if let Some((k, v)) = extra {
            m.insert(k.into(), v);
        }
        Value::Object(m)
    }

    async fn sleep(&self, seconds: f64) {
        let s = seconds * self.inner.options.time_scale;
        if s > 0.0 && s.is_finite() {
            tokio::time::sleep(Duration::from_secs_f64(s)).await;
        }
    }

    fn run_graph<'a>(
        &'a self,
        g: &'a Graph,
        input: Value,
    ) -> BoxFuture<'a, Result<Value, Failure>> {
        async move {
            let mut name = g.start_at.clone();
            let mut input = input;
            loop {
                if self.full.load(Ordering::SeqCst) {
                    return Err(history_limit_failure(self.inner.options.history_limit));
                }
                let st = g.states.get(&name).ok_or_else(|| {
                    Failure::new(names::RUNTIME, format!("no state named '{name}'"))
                })?;
                match self.run_state(st, input).await? {
                    Step::Next(n, out) => {
                        name = n;
                        input = out;
                    }
                    Step::End(out) => return Ok(out),
                }
            }
        }
        .boxed()
    }

    fn input_path(&self, c: &Cur, raw: &Value, ctx: &Value) -> Result<Value, Failure> {
        match &c.state.input_path {
            None => Ok(json!({})),
            Some(p) => {
                let root = if p.context { ctx } else { raw };
                p.select(root).ok_or_else(|| {
                    runtime(
                        &c.state.name,
                        c.entered_id,
                        &format!(
                            "Invalid path '{}' : No results for path: {}",
                            p.text, p.text
                        ),
                    )
                })
            }
        }
    }

    fn output_path(&self, c: &Cur, v: Value, ctx: &Value) -> Result<Value, Failure> {
        match &c.state.output_path {
            None => Ok(json!({})),
            Some(p) if p.is_root() && !p.context => Ok(v),
            Some(p) => {
                let root = if p.context { ctx } else { &v };
                p.select(root).ok_or_else(|| {
                    runtime(
                        &c.state.name,
                        c.entered_id,
                        &format!(
                            "Invalid path '{}' : No results for path: {}",
                            p.text, p.text
                        ),
                    )
                })
            }
        }
    }

    fn template(
        &self,
        c: &Cur,
        t: &Template,
        input: &Value,
        ctx: &Value,
        field: &str,
    ) -> Result<Value, Failure> {
        t.eval(input, ctx).map_err(|e| match e {
            TemplateError::Path { field: f, path } => runtime(
                &c.state.name,
                c.entered_id,
                &format!(
                    "The JSONPath '{path}' specified for the field '{f}' could not be found in the input '{}'",
                    serde_json::to_string(input).unwrap_or_default()
                ),
            ),
            TemplateError::Intrinsic { field: f, message } => Failure::new(
                names::INTRINSIC_FAILURE,
                format!("The intrinsic function in {field} field '{f}' failed: {message}"),
            ),
        })
    }

    /// What a Task, Map or Parallel state passes on once its work produced `result`:
    /// ResultSelector applied to the result, ResultPath writing it into the raw input,
    /// OutputPath selecting from that (in this order, as Step Functions does).
    fn state_output(
        &self,
        c: &Cur,
        common: &Common,
        raw: &Value,
        result: Value,
        ctx: &Value,
    ) -> Result<Value, Failure> {
        let selected = match &common.result_selector {
            Some(s) => self.template(c, s, &result, ctx, "ResultSelector")?,
            None => result,
        };
        let out = self.result_path(c, &common.result_path, raw, selected)?;
        self.output_path(c, out, ctx)
    }

    fn result_path(
        &self,
        c: &Cur,
        rp: &Option<JsonPath>,
        raw: &Value,
        result: Value,
    ) -> Result<Value, Failure> {
        match rp {
            None => Ok(raw.clone()),
            Some(p) => p.write(raw.clone(), result).map_err(|m| {
                Failure::new(
                    names::RESULT_PATH_MATCH_FAILURE,
                    format!("State '{}': {m}", c.state.name),
                )
            }),
        }
    }

    async fn run_state(&self, st: &State, raw: Value) -> Result<Step, Failure> {
        let ty = st.kind.type_name();
        let entered = Utc::now();
        let entered_id = self.emit(
            EventKind::StateEntered(ty),
            Some(&st.name),
            Some(raw.clone()),
            None,
            None,
        );
        let c = Cur {
            state: st,
            entered_id,
            entered,
        };
        // A state's output over the quota fails the execution: it is checked after the
        // state's own Retry and Catch, which never see it.
        let res = self
            .state_body(&c, raw)
            .await
            .and_then(|(next, out)| payload_quota(&st.name, &out).map(|()| (next, out)));
        match res {
            Ok((next, out)) => {
                self.emit(
                    EventKind::StateExited(ty),
                    Some(&st.name),
                    None,
                    Some(out.clone()),
                    None,
                );
                Ok(match next {
                    Some(n) => Step::Next(n, out),
                    None => Step::End(out),
                })
            }
            Err(f) => Err(f),
        }
    }

    /// Returns the next state (None = end) and the state's output.
    async fn state_body(
        &self,
        c: &Cur<'_>,
        raw: Value,
    ) -> Result<(Option<String>, Value), Failure> {
        let st = c.state;
        let next = st.next.clone();
        match &st.kind {
            Kind::Pass {
                result,
                parameters,
                result_path,
            } => {
                let ctx = self.ctx(c, 0, None);
                let eff = self.input_path(c, &raw, &ctx)?;
                let eff = match parameters {
                    Some(t) => self.template(c, t, &eff, &ctx, "Parameters")?,
                    None => eff,
                };
                let r = result.clone().unwrap_or(eff);
                let out = self.result_path(c, result_path, &raw, r)?;
                Ok((next, self.output_path(c, out, &ctx)?))
            }
            Kind::Succeed => {
                let ctx = self.ctx(c, 0, None);
                let eff = self.input_path(c, &raw, &ctx)?;
                Ok((None, self.output_path(c, eff, &ctx)?))
            }
            Kind::Fail { error, cause } => {
                let ctx = self.ctx(c, 0, None);
                let eval = |x: &Option<StrOrPath>, what: &str| -> Result<String, Failure> {
                    match x {
                        None => Ok(String::new()),
                        Some(StrOrPath::Str(s)) => Ok(s.clone()),
                        Some(StrOrPath::Path(p)) => {
                            let root = if p.context { &ctx } else { &raw };
                            match p.select(root) {
                                Some(Value::String(s)) => Ok(s),
                                Some(_) => Err(runtime(
                                    &st.name,
                                    c.entered_id,
                                    &format!("The {what}Path '{}' must select a string", p.text),
                                )),
                                None => Err(runtime(
                                    &st.name,
                                    c.entered_id,
                                    &format!("Invalid path '{}' : No results for path", p.text),
                                )),
                            }
                        }
                        Some(StrOrPath::Call(f)) => match f.eval(&raw, &ctx) {
                            Ok(Value::String(s)) => Ok(s),
                            Ok(_) => Err(runtime(
                                &st.name,
                                c.entered_id,
                                &format!("The {what}Path function must return a string"),
                            )),
                            Err(e) => Err(Failure::new(names::INTRINSIC_FAILURE, format!("{e:?}"))),
                        },
                    }
                };
                Err(Failure::new(eval(error, "Error")?, eval(cause, "Cause")?))
            }
            Kind::Choice { choices, default } => {
                let ctx = self.ctx(c, 0, None);
                let eff = self.input_path(c, &raw, &ctx)?;
                let mut target = None;
                for (rule, n) in choices {
                    let hit = crate::choice::eval(rule, &eff, &ctx)
                        .map_err(|m| runtime(&st.name, c.entered_id, &m))?;
                    if hit {
                        target = Some(n.clone());
                        break;
                    }
                }
                let target = match target.or_else(|| default.clone()) {
                    Some(t) => t,
                    None => {
                        return Err(Failure::new(
                            names::NO_CHOICE_MATCHED,
                            format!(
                            "No Choice Rules matched and no Default is specified in state '{}'.",
                            st.name
                        ),
                        ))
                    }
                };
                Ok((Some(target), self.output_path(c, eff, &ctx)?))
            }
            Kind::Wait(w) => {
                let ctx = self.ctx(c, 0, None);
                let eff = self.input_path(c, &raw, &ctx)?;
                let secs = match w {
                    WaitSpec::Seconds(s) => self.seconds(c, s, &eff, "SecondsPath")?,
                    WaitSpec::Timestamp(t) => until(t).unwrap_or(0.0),
                    WaitSpec::TimestampPath(p) => {
                        let v = p.select(&eff).ok_or_else(|| {
                            runtime(
                                &st.name,
                                c.entered_id,
                                &format!("Invalid path '{}' : No results for path", p.text),
                            )
                        })?;
                        let s = v.as_str().ok_or_else(|| {
                            runtime(
                                &st.name,
                                c.entered_id,
                                &format!(
                                    "The TimestampPath '{}' must select a timestamp string",
                                    p.text
                                ),
                            )
                        })?;
                        if crate::choice::parse_timestamp(s).is_none() {
                            return Err(runtime(&st.name, c.entered_id, &format!("The TimestampPath '{}' selects '{s}', which is not an RFC 3339 timestamp", p.text)));
                        }
                        until(s).unwrap_or(0.0)
                    }
                };
                self.emit(
                    EventKind::WaitStateWaiting,
                    Some(&st.name),
                    None,
                    None,
                    Some(json!({"seconds": secs})),
                );
                self.sleep(secs).await;
                Ok((next, self.output_path(c, eff, &ctx)?))
            }
            Kind::Task(t) => self
                .retry_catch(c, &t.common, raw, |retry, raw| {
                    self.task_attempt(c, t, raw, retry).boxed()
                })
                .await
                .map(|(n, v)| (n.or(next), v)),
            Kind::Map(m) => self
                .retry_catch(c, &m.common, raw, |retry, raw| {
                    self.map_attempt(c, m, raw, retry).boxed()
                })
                .await
                .map(|(n, v)| (n.or(next), v)),
            Kind::Parallel(p) => self
                .retry_catch(c, &p.common, raw, |retry, raw| {
                    self.parallel_attempt(c, p, raw, retry).boxed()
                })
                .await
                .map(|(n, v)| (n.or(next), v)),
        }
    }

    fn seconds(&self, c: &Cur, s: &Seconds, eff: &Value, field: &str) -> Result<f64, Failure> {
        match s {
            Seconds::Fixed(n) => Ok(*n),
            Seconds::Path(p) => {
                let v = p.select(eff).ok_or_else(|| {
                    runtime(
                        &c.state.name,
                        c.entered_id,
                        &format!("Invalid path '{}' : No results for path", p.text),
                    )
                })?;
                match v.as_f64() {
                    Some(n) if n >= 0.0 && n.fract() == 0.0 => Ok(n),
                    _ => Err(runtime(
                        &c.state.name,
                        c.entered_id,
                        &format!(
                            "The {field} '{}' must select a non-negative integer, found {v}",
                            p.text
                        ),
                    )),
                }
            }
        }
    }

    /// Retry and Catch around one state's attempts. Returns (Some(catcher's Next), output)
    /// when a catcher took the error.
    async fn retry_catch<'a, F>(
        &'a self,
        c: &Cur<'a>,
        common: &'a Common,
        raw: Value,
        attempt: F,
    ) -> Result<(Option<String>, Value), Failure>
    where
        F: Fn(u32, Value) -> BoxFuture<'a, Result<Value, Failure>>,
    {
        let mut counts = vec![0u32; common.retry.len()];
        let mut total = 0u32;
        loop {
            let f = match attempt(total, raw.clone()).await {
                Ok(v) => return Ok((None, v)),
                Err(f) => f,
            };
            if let Some(i) = common
                .retry
                .iter()
                .position(|r| error_matches(&r.error_equals, &f.error))
            {
                let r = &common.retry[i];
                if counts[i] < r.max_attempts {
                    let d = retry_delay(r, counts[i]);
                    counts[i] += 1;
                    total += 1;
                    self.emit_full(
                        EventKind::StateRetryScheduled,
                        Some(&c.state.name),
                        None,
                        None,
                        Some(&f),
                        Some(json!({"attempt": total, "delaySeconds": d})),
                    );
                    self.sleep(d).await;
                    continue;
                }
            }
            if let Some(cat) = common
                .catch
                .iter()
                .find(|k| error_matches(&k.error_equals, &f.error))
            {
                let err = json!({"Error": f.error, "Cause": f.cause});
                let out = self.result_path(c, &cat.result_path, &raw, err)?;
                return Ok((Some(cat.next.clone()), out));
            }
            return Err(f);
        }
    }

    async fn task_attempt(
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

    /// `sync`: `Some(v2)` waits for the execution (`.sync`, `.sync:2`); `None` starts it
    /// and answers at once, as StartExecution does.
    async fn start_execution(&self, params: Value, sync: Option<bool>) -> Result<Value, Failure> {
        let arn = params
            .get("StateMachineArn")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                Failure::new(
                    names::RUNTIME,
                    "startExecution: StateMachineArn must be a string",
                )
            })?
            .to_string();
        let sm = {
            let machines = self.inner.machines.read().map_err(|_| {
                Failure::new(names::RUNTIME, "the state machine registry is poisoned")
            })?;
            machines
                .get(&arn)
                .or_else(|| {
                    machines
                        .iter()
                        .find(|(k, _)| k.rsplit(':').next() == arn.rsplit(':').next())
                        .map(|(_, v)| v)
                })
                .cloned()
        };
        let Some(sm) = sm else {
            return Err(Failure::new(
                "StepFunctions.StateMachineDoesNotExistException",
                format!(
                    "State Machine Does Not Exist: '{arn}' (not registered with the local engine)"
                ),
            ));
        };
        let input = match params.get("Input") {
            None => json!({}),
            Some(Value::String(s)) => serde_json::from_str(s).map_err(|e| {
                Failure::new(
                    "StepFunctions.InvalidExecutionInputException",
                    format!("Input is not JSON: {e}"),
                )
            })?,
            Some(v) => v.clone(),
        };
        let name = params
            .get("Name")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let o = &self.inner.options;
        let sm_arn = format!(
            "arn:aws:states:{}:{}:stateMachine:{}",
            o.region, o.account, sm.name
        );
        let exec_arn = format!(
            "arn:aws:states:{}:{}:execution:{}:{}",
            o.region, o.account, sm.name, name
        );
        let start = Utc::now().timestamp_millis();
        let Some(v2) = sync else {
            let handle = tokio::spawn(run_execution(
                self.inner.clone(),
                sm,
                input.clone(),
                name.clone(),
            ));
            if let Ok(mut started) = self.inner.started.lock() {
                started.insert(name.clone(), handle);
            }
            return Ok(json!({"ExecutionArn": exec_arn, "StartDate": start}));
        };
        let res = run_execution(self.inner.clone(), sm, input.clone(), name.clone()).await;
        let stop = Utc::now().timestamp_millis();
        let enc = |v: &Value| {
            if v2 {
                v.clone()
            } else {
                Value::String(v.to_string())
            }
        };
        let mut d = json!({
            "ExecutionArn": exec_arn,
            "Input": enc(&input),
            "InputDetails": {"Included": true},
            "Name": name,
            "RedriveCount": 0,
            "RedriveStatus": "NOT_REDRIVABLE",
            "StartDate": start,
            "StateMachineArn": sm_arn,
            "StopDate": stop,
        });
        match res {
            Ok(out) => {
                d["Output"] = enc(&out);
                d["OutputDetails"] = json!({"Included": true});
                d["Status"] = json!("SUCCEEDED");
                Ok(d)
            }
            Err(f) => {
                d["Status"] = json!("FAILED");
                d["Error"] = json!(f.error);
                d["Cause"] = json!(f.cause);
                d["RedriveStatus"] = json!("REDRIVABLE");
                Err(Failure::new(names::TASK_FAILED, d.to_string()))
            }
        }
    }

    async fn map_attempt(
        &self,
        c: &Cur<'_>,
        m: &MapSpec,
        raw: Value,
        retry: u32,
    ) -> Result<Value, Failure> {
        let ctx = self.ctx(c, retry, None);
        let eff = self.input_path(c, &raw, &ctx)?;
        let items = match &m.items_path {
            None => eff.clone(),
            Some(p) => {
                let root = if p.context { &ctx } else { &eff };
                p.select(root).ok_or_else(|| {
                    runtime(
                        &c.state.name,
                        c.entered_id,
                        &format!("Invalid path '{}' : No results for path", p.text),
                    )
                })?
            }
        };
        let Value::Array(items) = items else {
            return Err(runtime(
                &c.state.name,
                c.entered_id,
                "Map state input must be an array (check ItemsPath)",
            ));
        };
        let conc = match &m.max_concurrency {
            None => 0.0,
            Some(s) => self.seconds(c, s, &eff, "MaxConcurrencyPath")?,
        };
        let n = if conc <= 0.0 {
            items.len().max(1)
        } else {
            conc as usize
        };
        self.emit(
            EventKind::MapStateStarted,
            Some(&c.state.name),
            None,
            None,
            Some(json!({"length": items.len()})),
        );
        let mut inputs = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let v = match &m.item_selector {
                Some(t) => {
                    let ictx = self.ctx(
                        c,
                        retry,
                        Some(("Map", json!({"Item": {"Index": i, "Value": item}}))),
                    );
                    self.template(c, t, &eff, &ictx, "ItemSelector")?
                }
                None => item,
            };
            inputs.push((i, v));
        }
        let name = &c.state.name;
        let res: Result<Vec<Value>, Failure> =
            futures::stream::iter(inputs.into_iter().map(|(i, v)| async move {
                self.emit(
                    EventKind::MapIterationStarted,
                    Some(name),
                    Some(v.clone()),
                    None,
                    Some(json!({"index": i})),
                );
                match self.run_graph(&m.processor, v).await {
                    Ok(out) => {
                        self.emit(
                            EventKind::MapIterationSucceeded,
                            Some(name),
                            None,
                            Some(out.clone()),
                            Some(json!({"index": i})),
                        );
                        Ok(out)
                    }
                    Err(f) => {
                        self.emit_full(
                            EventKind::MapIterationFailed,
                            Some(name),
                            None,
                            None,
                            Some(&f),
                            Some(json!({"index": i})),
                        );
                        Err(f)
                    }
                }
            }))
            .buffered(n)
            .try_collect()
            .await;
        let results = match res {
            Ok(r) => {
                self.emit(EventKind::MapStateSucceeded, Some(name), None, None, None);
                Value::Array(r)
            }
            Err(f) => {
                self.emit_full(
                    EventKind::MapStateFailed,
                    Some(name),
                    None,
                    None,
                    Some(&f),
                    None,
                );
                return Err(f);
            }
        };
        self.state_output(c, &m.common, &raw, results, &ctx)
    }

    async fn parallel_attempt(
        &self,
        c: &Cur<'_>,
        p: &ParallelSpec,
        raw: Value,
        retry: u32,
    ) -> Result<Value, Failure> {
        let ctx = self.ctx(c, retry, None);
        let eff = self.input_path(c, &raw, &ctx)?;
        let input = match &p.parameters {
            Some(t) => self.template(c, t, &eff, &ctx, "Parameters")?,
            None => eff,
        };
        let name = &c.state.name;
        self.emit(
            EventKind::ParallelStateStarted,
            Some(name),
            None,
            None,
            Some(json!({"branches": p.branches.len()})),
        );
        let res = futures::future::try_join_all(
            p.branches.iter().map(|b| self.run_graph(b, input.clone())),
        )
        .await;
        let results = match res {
            Ok(r) => {
                self.emit(
                    EventKind::ParallelStateSucceeded,
                    Some(name),
                    None,
                    None,
                    None,
                );
                Value::Array(r)
            }
            Err(f) => {
                self.emit_full(
                    EventKind::ParallelStateFailed,
                    Some(name),
                    None,
                    None,
                    Some(&f),
                    None,
                );
                return Err(f);
            }
        };
        self.state_output(c, &p.common, &raw, results, &ctx)
    }
}

/// The delay before retry number `count + 1` of retrier `r`, in seconds.
pub(crate) fn retry_delay(r: &Retrier, count: u32) -> f64 {
    let mut d = r.interval_seconds * r.backoff_rate.powi(count as i32);
    if let Some(m) = r.max_delay_seconds {
        d = d.min(m);
    }
    if r.jitter == Jitter::Full {
        use rand::Rng;
        d = rand::thread_rng().gen_range(0.0..=d);
    }
    d
}

fn until(t: &str) -> Option<f64> {
    let target = crate::choice::parse_timestamp(t)?;
    let ms = target.timestamp_millis() - Utc::now().timestamp_millis();
    Some((ms.max(0) as f64) / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(interval: f64, backoff: f64, max_delay: Option<f64>, jitter: Jitter) -> Retrier {
        Retrier {
            error_equals: vec!["States.ALL".into()],
            interval_seconds: interval,
            max_attempts: 5,
            backoff_rate: backoff,
            max_delay_seconds: max_delay,
            jitter,
        }
    }

    #[test]
    fn retry_backoff_is_interval_times_rate_to_the_attempt() {
        let x = r(3.0, 2.0, None, Jitter::None);
        assert_eq!(
            [0, 1, 2, 3].map(|n| retry_delay(&x, n)),
            [3.0, 6.0, 12.0, 24.0]
        );
    }

    #[test]
    fn retry_max_delay_seconds_caps_the_backoff() {
        let x = r(3.0, 2.0, Some(10.0), Jitter::None);
        assert_eq!(
            [0, 1, 2, 3].map(|n| retry_delay(&x, n)),
            [3.0, 6.0, 10.0, 10.0]
        );
    }

    #[test]
    fn retry_full_jitter_stays_between_zero_and_the_backoff() {
        let x = r(4.0, 2.0, None, Jitter::Full);
        for _ in 0..200 {
            let d = retry_delay(&x, 2);
            assert!((0.0..=16.0).contains(&d));
        }
    }

    #[test]
    fn retry_error_matching_rules() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(error_matches(&v(&["States.ALL"]), "LockHeld"));
        assert!(!error_matches(&v(&["States.ALL"]), "States.Runtime"));
        assert!(error_matches(&v(&["States.TaskFailed"]), "LockHeld"));
        assert!(!error_matches(&v(&["States.TaskFailed"]), "States.Timeout"));
        assert!(error_matches(&v(&["States.Timeout"]), "States.Timeout"));
        assert!(!error_matches(&v(&["A", "B"]), "C"));
        let limit = names::DATA_LIMIT_EXCEEDED;
        assert!(!error_matches(&v(&["States.ALL"]), limit));
        assert!(!error_matches(&v(&["States.TaskFailed"]), limit));
        assert!(error_matches(&v(&[limit]), limit));
    }

    #[test]
    fn payload_quota_counts_utf8_bytes_of_compact_json_up_to_262144() {
        // {"s":"..."} is 8 bytes around the string.
        let at = |n: usize, c: &str| json!({"s": c.repeat(n)});
        assert!(payload_quota("S", &at(MAX_PAYLOAD_BYTES - 8, "x")).is_ok());
        let f = payload_quota("S", &at(MAX_PAYLOAD_BYTES - 7, "x")).unwrap_err();
        assert_eq!(f.error, names::DATA_LIMIT_EXCEEDED);
        assert_eq!(
            f.cause,
            "The state/task 'S' returned a result with a size exceeding the maximum number of bytes service limit."
        );
        // Two bytes a character, not a six-byte escape.
        assert!(payload_quota("S", &at((MAX_PAYLOAD_BYTES - 8) / 2, "é")).is_ok());
        assert!(payload_quota("S", &at((MAX_PAYLOAD_BYTES - 8) / 2 + 1, "é")).is_err());
    }
}
