//! JavaScript's own rules for numbers and nesting, as cdkd's TypeScript applies them:
//! the lowest layer of core's text handling, which `json` (parsing and `JSON.stringify`)
//! and `text` (the sanitisers) both build on.

use serde_json::Number;

/// Nesting budget of `JSON.stringify` as core writes it (the `json` module's `stringify`
/// and `stringify_pretty`): a container nested deeper than this makes them return `None`
/// (the caller prints `(unserializable)`).
pub const MAX_STRINGIFY_DEPTH: usize = 1000;

/// ECMAScript `Number::toString` of a JSON number (which JS holds as a double).
pub fn js_number(n: &Number) -> String {
    let f = if let Some(u) = n.as_u64() {
        u as f64
    } else if let Some(i) = n.as_i64() {
        i as f64
    } else {
        n.as_f64().unwrap_or(f64::NAN)
    };
    js_f64(f)
}

/// ECMAScript `Number::toString` of a double (`NaN`, `Infinity` included).
pub fn js_f64(f: f64) -> String {
    if f == 0.0 {
        return "0".to_string();
    }
    ryu_js::Buffer::new().format(f).to_string()
}
