//! docs/state-views.md, "Values in human views" `formatAttributeValue` and the row helpers built on it: the dependency
//! list, `Last Modified`, and the skipped-output digest preview.

use serde_json::Value;

use crate::js::js_number;
use crate::json::stringify;
use crate::text::strip;
use crate::time::{iso_from_ms, time_value};

/// What a value nothing can serialise renders as.
pub const UNSERIALIZABLE: &str = "(unserializable)";

/// Placeholder for an absent or empty dependency list (ordinary text, not reserved).
pub const NONE: &str = "(none)";

/// Code points of a skipped-output digest shown by `state show`.
pub const DIGEST_PREVIEW_LEN: usize = 12;

/// docs/state-views.md, "Values in human views": render one record value for a human row. `None` is the absent value
/// (`undefined`). Never fails: a wrong type prints as itself, a value too deep to
/// serialise prints [`UNSERIALIZABLE`].
pub fn format_value(v: Option<&Value>) -> String {
    match v {
        None => "undefined".to_string(),
        Some(Value::Null) => "null".to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => strip(&js_number(n)),
        Some(Value::String(s)) => strip(s),
        Some(v @ (Value::Array(_) | Value::Object(_))) => match stringify(v) {
            Some(json) => strip(&json),
            None => UNSERIALIZABLE.to_string(),
        },
    }
}

/// docs/state-views.md, "Human layout" `Dependencies:` row value: `(none)` when absent or an empty array; an
/// array's elements each through [`format_value`], joined with `, `; any other value (including
/// `null`) through [`format_value`].
pub fn format_dependency_list(v: Option<&Value>) -> String {
    match v {
        None => NONE.to_string(),
        Some(Value::Array(items)) if items.is_empty() => NONE.to_string(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|d| format_value(Some(d)))
            .collect::<Vec<_>>()
            .join(", "),
        Some(other) => format_value(Some(other)),
    }
}

/// docs/state-views.md, "Human layout" `Last Modified:` of `state show`: `new Date(v).toISOString()` when that
/// succeeds, else the value through [`format_value`].
pub fn format_last_modified(v: Option<&Value>) -> String {
    match v.and_then(time_value) {
        Some(ms) => iso_from_ms(ms),
        None => format_value(v),
    }
}

/// docs/state-views.md, "Skipped outputs" digest preview: the digest through [`format_value`] first, then cut to
/// [`DIGEST_PREVIEW_LEN`] code points with `…` appended only when something was cut;
/// [`UNSERIALIZABLE`] is shown whole.
pub fn digest_preview(digest: &Value) -> String {
    let full = format_value(Some(digest));
    if full == UNSERIALIZABLE {
        return full;
    }
    match full.char_indices().nth(DIGEST_PREVIEW_LEN) {
        Some((cut, _)) => format!("{}…", &full[..cut]),
        None => full,
    }
}
