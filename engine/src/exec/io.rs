//! A state's input and output processing: InputPath, Parameters and ResultSelector
//! templates, ResultPath, OutputPath, and the seconds a field or its path gives.

use serde_json::{json, Value};

use super::failures::runtime;
use super::run::{Cur, Run};
use crate::error::{names, Failure};
use crate::model::*;
use crate::path::JsonPath;
use crate::template::{Template, TemplateError};

impl Run {
    pub(super) fn input_path(&self, c: &Cur, raw: &Value, ctx: &Value) -> Result<Value, Failure> {
        match &c.state.input_path {
            None => Ok(json!({})),
            Some(p) => {
                let root = if p.context { ctx } else { raw };
                select(c, p, root)
            }
        }
    }

    pub(super) fn output_path(&self, c: &Cur, v: Value, ctx: &Value) -> Result<Value, Failure> {
        match &c.state.output_path {
            None => Ok(json!({})),
            Some(p) if p.is_root() && !p.context => Ok(v),
            Some(p) => {
                let root = if p.context { ctx } else { &v };
                select(c, p, root)
            }
        }
    }

    pub(super) fn template(
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
    pub(super) fn state_output(
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

    pub(super) fn result_path(
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

    pub(super) fn seconds(
        &self,
        c: &Cur,
        s: &Seconds,
        eff: &Value,
        field: &str,
    ) -> Result<f64, Failure> {
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
}

/// What path `p` selects from `root`; nothing selected is the state's runtime error.
fn select(c: &Cur, p: &JsonPath, root: &Value) -> Result<Value, Failure> {
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
