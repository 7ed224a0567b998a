//! Definition substitutions: every `${Name}` inside string values.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::error::LoadError;

/// Replace every `${Name}` inside string values. An unknown name is an error.
pub fn substitute(v: Value, subs: &HashMap<String, String>) -> Result<Value, LoadError> {
    Ok(match v {
        Value::String(s) => Value::String(subst_str(&s, subs)?),
        Value::Array(a) => Value::Array(
            a.into_iter()
                .map(|x| substitute(x, subs))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(m) => {
            let mut out = Map::with_capacity(m.len());
            for (k, x) in m {
                out.insert(k, substitute(x, subs)?);
            }
            Value::Object(out)
        }
        other => other,
    })
}

fn subst_str(s: &str, subs: &HashMap<String, String>) -> Result<String, LoadError> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let name = &after[..end];
        match subs.get(name) {
            Some(v) => out.push_str(v),
            None => {
                return Err(LoadError::MissingSubstitution {
                    name: name.to_string(),
                })
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
