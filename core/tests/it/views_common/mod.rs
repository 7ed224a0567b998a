//! Shared helpers of the `views_*` tests: records are parsed with the production JSON
//! reader, locks go through the production lock reader, the clock is fixed.
#![allow(dead_code)]

use cdkd_core::view::state::show::{LockView, ShowNode};
use serde_json::{Map, Value};

/// The fixed "now" of every test (2026-01-01T00:00:00.000Z).
pub const NOW: i64 = 1_767_225_600_000;

/// A record body from JSON text, through the production parser.
pub fn rec(text: &str) -> Map<String, Value> {
    match cdkd_core::json::parse_json(text.as_bytes()).expect("test record parses") {
        Value::Object(m) => m,
        other => panic!("test record is not an object: {other}"),
    }
}

/// A lock from its JSON text, read like S3's `lock.json` is read.
pub fn lock(text: &str) -> LockView {
    LockView::from_lock_bytes(text.as_bytes())
        .expect("test lock parses")
        .expect("test lock is an object")
}

/// A single node for `state show`.
pub fn node(
    stack: &str,
    region: &str,
    record: Map<String, Value>,
    lock: Option<LockView>,
) -> ShowNode {
    ShowNode {
        stack: stack.to_string(),
        region: region.to_string(),
        record,
        lock,
        children: Vec::new(),
    }
}

/// True when `s` holds a byte below 0x20 other than `\n`, DEL, a C1 control, or a bidi
/// override/isolate/mark character.
pub fn has_forbidden_char(s: &str) -> bool {
    s.chars().any(|c| {
        (c < ' ' && c != '\n')
            || ('\u{7f}'..='\u{9f}').contains(&c)
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}

/// Equality as JavaScript sees two parsed values: numbers are doubles (a stored
/// integer above 2^53 is the double nearest to it).
pub fn js_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| js_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| js_eq(v, w)))
        }
        _ => a == b,
    }
}
