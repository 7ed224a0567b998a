//! A state's body: Pass, Succeed, Fail, Choice and Wait here; Task, Map and Parallel
//! through Retry and Catch.

use chrono::Utc;
use futures::FutureExt;
use serde_json::{json, Value};

use super::failures::runtime;
use super::run::{Cur, Run};
use crate::error::{names, Failure};
use crate::events::EventKind;
use crate::model::*;
use crate::path::JsonPath;
use crate::template::Template;

/// The prefix of the error names Step Functions reports itself: a state may report
/// errors with other names only ("Error names", Step Functions' error handling; the
/// States Language's "MUST NOT begin with the prefix States."). A Fail state whose error
/// begins with it ends the execution in States.Runtime, as moto's interpreter does
/// (docs/runs.md, "A run's error and cause").
const RESERVED_PREFIX: &str = "States.";

impl Run {
    /// Returns the next state (None = end) and the state's output.
    pub(super) async fn state_body(
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
            } => self
                .pass(c, result, parameters, result_path, raw)
                .map(|out| (next, out)),
            Kind::Succeed => {
                let ctx = self.ctx(c, 0, None);
                let eff = self.input_path(c, &raw, &ctx)?;
                Ok((None, self.output_path(c, eff, &ctx)?))
            }
            Kind::Fail { error, cause } => {
                let ctx = self.ctx(c, 0, None);
                let error = self.fail_field(c, error, "Error", &raw, &ctx)?;
                if error.starts_with(RESERVED_PREFIX) {
                    return Err(runtime(
                        &st.name,
                        c.entered_id,
                        &format!("The error name '{error}' begins with '{RESERVED_PREFIX}', which is reserved to Step Functions"),
                    ));
                }
                Err(Failure::new(
                    error,
                    self.fail_field(c, cause, "Cause", &raw, &ctx)?,
                ))
            }
            Kind::Choice { choices, default } => self.choice(c, choices, default, raw),
            Kind::Wait(w) => self.wait(c, w, raw).await.map(|out| (next, out)),
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

    /// A Pass state's output: its Result (or its Parameters, or its input) written at
    /// its ResultPath.
    fn pass(
        &self,
        c: &Cur<'_>,
        result: &Option<Value>,
        parameters: &Option<Template>,
        result_path: &Option<JsonPath>,
        raw: Value,
    ) -> Result<Value, Failure> {
        let ctx = self.ctx(c, 0, None);
        let eff = self.input_path(c, &raw, &ctx)?;
        let eff = match parameters {
            Some(t) => self.template(c, t, &eff, &ctx, "Parameters")?,
            None => eff,
        };
        let r = result.clone().unwrap_or(eff);
        let out = self.result_path(c, result_path, &raw, r)?;
        self.output_path(c, out, &ctx)
    }

    /// A Fail state's Error or Cause (`what`): a string, or what its path or intrinsic
    /// function gives, which must be a string.
    fn fail_field(
        &self,
        c: &Cur<'_>,
        x: &Option<StrOrPath>,
        what: &str,
        raw: &Value,
        ctx: &Value,
    ) -> Result<String, Failure> {
        let st = c.state;
        match x {
            None => Ok(String::new()),
            Some(StrOrPath::Str(s)) => Ok(s.clone()),
            Some(StrOrPath::Path(p)) => {
                let root = if p.context { ctx } else { raw };
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
            Some(StrOrPath::Call(f)) => match f.eval(raw, ctx) {
                Ok(Value::String(s)) => Ok(s),
                Ok(_) => Err(runtime(
                    &st.name,
                    c.entered_id,
                    &format!("The {what}Path function must return a string"),
                )),
                Err(e) => Err(Failure::new(names::INTRINSIC_FAILURE, format!("{e:?}"))),
            },
        }
    }

    /// A Choice state: the first rule that matches names the next state, else Default.
    fn choice(
        &self,
        c: &Cur<'_>,
        choices: &[(Rule, String)],
        default: &Option<String>,
        raw: Value,
    ) -> Result<(Option<String>, Value), Failure> {
        let st = c.state;
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

    /// A Wait state: waits its seconds (or until its timestamp), then passes its input on.
    async fn wait(&self, c: &Cur<'_>, w: &WaitSpec, raw: Value) -> Result<Value, Failure> {
        let st = c.state;
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
        self.output_path(c, eff, &ctx)
    }
}

fn until(t: &str) -> Option<f64> {
    let target = crate::choice::parse_timestamp(t)?;
    let ms = target.timestamp_millis() - Utc::now().timestamp_millis();
    Some((ms.max(0) as f64) / 1000.0)
}
