//! Reading the intrinsics the orphan rewrite replaces (docs/repairs.md, "The rewrite"): one-key
//! objects, `Fn::GetAtt` targets in both forms, and `Fn::Sub` templates with their
//! `${...}` placeholders.

use serde_json::{Map, Value};

/// The value of a one-key object's only key, when that key is `key`.
pub(crate) fn single<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    (m.len() == 1).then(|| m.get(key)).flatten()
}

/// The target and attribute of an `Fn::GetAtt` value: `[O, attr]` or `"O.attr"`.
pub(crate) fn getatt_parts(v: &Value) -> Option<(&str, &str)> {
    match v {
        Value::Array(a) => match a.as_slice() {
            [Value::String(o), Value::String(attr)] => Some((o, attr)),
            _ => None,
        },
        Value::String(s) => s.split_once('.'),
        _ => None,
    }
}

/// A `${name}` placeholder of an `Fn::Sub` template (`${!literal}` is not one).
pub(crate) struct Placeholder<'a> {
    pub start: usize,
    pub end: usize,
    pub name: &'a str,
}

/// The placeholders of a template, left to right.
pub(crate) fn placeholders(t: &str) -> Vec<Placeholder<'_>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(rel) = t[from..].find("${") {
        let start = from + rel;
        if t[start + 2..].starts_with('!') {
            from = start + 3;
            continue;
        }
        let Some(close) = t[start + 2..].find('}') else {
            break;
        };
        let end = start + 2 + close + 1;
        out.push(Placeholder {
            start,
            end,
            name: &t[start + 2..end - 1],
        });
        from = end;
    }
    out
}

/// The template and variable map of an `Fn::Sub` argument.
pub(crate) fn sub_parts(arg: &Value) -> Option<(&str, Option<&Map<String, Value>>)> {
    match arg {
        Value::String(t) => Some((t, None)),
        Value::Array(a) => match a.as_slice() {
            [Value::String(t)] => Some((t, None)),
            [Value::String(t), Value::Object(vars)] => Some((t, Some(vars))),
            _ => None,
        },
        _ => None,
    }
}
