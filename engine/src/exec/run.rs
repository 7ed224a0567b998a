//! One execution: its context object, its events (within the history limit) and the
//! walk from state to state.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use futures::future::BoxFuture;
use futures::FutureExt;
use serde_json::{json, Map, Value};

use super::failures::{history_limit_failure, payload_quota};
use crate::error::{names, Failure};
use crate::events::{Event, EventKind};
use crate::model::*;
use crate::{EngineOptions, Inner, StateMachine};

enum Step {
    Next(String, Value),
    End(Value),
}

pub(super) struct Run {
    pub(super) inner: Arc<Inner>,
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

/// The ARNs of state machine `sm` and of its execution `name`.
pub(super) fn arns(o: &EngineOptions, sm: &str, name: &str) -> (String, String) {
    (
        format!(
            "arn:aws:states:{}:{}:stateMachine:{sm}",
            o.region, o.account
        ),
        format!(
            "arn:aws:states:{}:{}:execution:{sm}:{name}",
            o.region, o.account
        ),
    )
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
        let (sm_arn, exec_arn) = arns(o, &sm.name, &name);
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
/// Per-state data the helpers need.
pub(super) struct Cur<'a> {
    pub(super) state: &'a State,
    pub(super) entered_id: u64,
    entered: DateTime<Utc>,
}

impl Run {
    pub(super) fn emit(
        &self,
        kind: EventKind,
        state: Option<&str>,
        input: Option<Value>,
        output: Option<Value>,
        details: Option<Value>,
    ) -> u64 {
        self.emit_full(kind, state, input, output, None, details)
    }

    pub(super) fn emit_full(
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

    pub(super) fn ctx(&self, c: &Cur, retry: u32, extra: Option<(&str, Value)>) -> Value {
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

    pub(super) async fn sleep(&self, seconds: f64) {
        let s = seconds * self.inner.options.time_scale;
        if s > 0.0 && s.is_finite() {
            tokio::time::sleep(Duration::from_secs_f64(s)).await;
        }
    }

    pub(super) fn run_graph<'a>(
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
}
