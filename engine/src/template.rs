//! Payload templates (Parameters, ResultSelector, ItemSelector): fields whose name ends in
//! `.$` take their value from a path of the input, a `$$.` path of the context object, or
//! an intrinsic function.

use serde_json::{Map, Value};

use crate::intrinsic::{Intrinsic, IntrinsicError};
use crate::path::JsonPath;

#[derive(Debug, Clone, PartialEq)]
pub enum Template {
    Literal(Value),
    Path(JsonPath),
    Call(Intrinsic),
    Object(Vec<(String, Template)>),
    Array(Vec<Template>),
}

/// A template field that could not be resolved.
#[derive(Debug, Clone, PartialEq)]
pub enum TemplateError {
    /// A path (of the input or the context object) selects nothing: States.Runtime.
    Path { field: String, path: String },
    /// An intrinsic function failed: States.IntrinsicFailure.
    Intrinsic { field: String, message: String },
}

impl Template {
    /// Compile a template; `Err` names the offending field.
    pub fn compile(v: &Value) -> Result<Template, String> {
        match v {
            Value::Object(m) => {
                let mut fields = Vec::with_capacity(m.len());
                for (k, x) in m {
                    if let Some(name) = k.strip_suffix(".$") {
                        let s = x.as_str().ok_or_else(|| {
                            format!(
                                "field '{k}' must be a string (a path or an intrinsic function)"
                            )
                        })?;
                        let t = if s.starts_with('$') {
                            Template::Path(
                                JsonPath::parse(s).map_err(|e| format!("field '{k}': {e}"))?,
                            )
                        } else if s.starts_with("States.") {
                            Template::Call(
                                Intrinsic::parse(s).map_err(|e| format!("field '{k}': {e}"))?,
                            )
                        } else {
                            return Err(format!(
                                "field '{k}' must hold a path ($..., $$...) or an intrinsic function (States....), found '{s}'"
                            ));
                        };
                        fields.push((name.to_string(), t));
                    } else {
                        fields.push((k.clone(), Template::compile(x)?));
                    }
                }
                Ok(Template::Object(fields))
            }
            Value::Array(a) => Ok(Template::Array(
                a.iter().map(Template::compile).collect::<Result<_, _>>()?,
            )),
            other => Ok(Template::Literal(other.clone())),
        }
    }

    /// Resolve against the effective input and the context object.
    pub fn eval(&self, input: &Value, ctx: &Value) -> Result<Value, TemplateError> {
        self.eval_field(input, ctx, "")
    }

    fn eval_field(&self, input: &Value, ctx: &Value, field: &str) -> Result<Value, TemplateError> {
        match self {
            Template::Literal(v) => Ok(v.clone()),
            Template::Path(p) => {
                let root = if p.context { ctx } else { input };
                p.select(root).ok_or_else(|| TemplateError::Path {
                    field: format!("{field}.$"),
                    path: p.text.clone(),
                })
            }
            Template::Call(c) => c.eval(input, ctx).map_err(|e| match e {
                IntrinsicError::Path(m) | IntrinsicError::Failure(m) => TemplateError::Intrinsic {
                    field: format!("{field}.$"),
                    message: m,
                },
            }),
            Template::Object(fields) => {
                let mut m = Map::with_capacity(fields.len());
                for (k, t) in fields {
                    m.insert(k.clone(), t.eval_field(input, ctx, k)?);
                }
                Ok(Value::Object(m))
            }
            Template::Array(a) => Ok(Value::Array(
                a.iter()
                    .map(|t| t.eval_field(input, ctx, field))
                    .collect::<Result<_, _>>()?,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parameters_dollar_keys_take_paths_context_and_intrinsics() {
        let t = Template::compile(&json!({
            "flagged": true,
            "parts": {"first.$": "$.vals[0]", "last.$": "$.vals[-1:]"},
            "exec.$": "$$.Execution.Name",
            "n.$": "States.ArrayLength($.vals)",
            "list": [{"x.$": "$.vals[1]"}]
        }))
        .unwrap();
        let out = t
            .eval(
                &json!({"vals": [1, 2, 3]}),
                &json!({"Execution": {"Name": "e"}}),
            )
            .unwrap();
        assert_eq!(
            out,
            json!({"flagged": true, "parts": {"first": 1, "last": [3]}, "exec": "e", "n": 3, "list": [{"x": 2}]})
        );
    }

    #[test]
    fn parameters_missing_path_names_the_field() {
        let t = Template::compile(&json!({"a.$": "$.nope"})).unwrap();
        assert_eq!(
            t.eval(&json!({}), &json!({})),
            Err(TemplateError::Path {
                field: "a.$".into(),
                path: "$.nope".into()
            })
        );
        assert!(Template::compile(&json!({"a.$": "nope"})).is_err());
        assert!(Template::compile(&json!({"a.$": 1})).is_err());
    }
}
