//! CloudFormation dynamic references, `{{resolve:<service>:<body>}}`, inside record
//! strings (docs/repairs.md, "Redaction by position"). This is the one place that recognises them: redaction,
//! the SSM rule and orphan's never-copy list all ask here.
//!
//! Detection is deliberately wider than parsing: [`mentions_resolve`] is true for any
//! string that contains the opening `{{resolve:`, even an unterminated one, so a
//! damaged expression is still treated as a secret-bearing position.

use serde_json::Value;

/// The opening of every dynamic reference.
pub const OPEN: &str = "{{resolve:";
const CLOSE: &str = "}}";

/// One well-formed reference found inside a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DynRef<'a> {
    /// Byte offset of `{{` in the string.
    pub start: usize,
    /// Byte offset just past `}}`.
    pub end: usize,
    /// The service part: `secretsmanager`, `ssm-secure`, `ssm`, …
    pub service: &'a str,
    /// Everything after `<service>:` up to the closing `}}` (for `ssm`: the parameter
    /// name, optionally with a `:version` selector, or an ARN).
    pub body: &'a str,
    /// The whole expression, `{{resolve:...}}`.
    pub text: &'a str,
}

/// True when `s` contains the opening `{{resolve:` anywhere (terminated or not).
pub fn mentions_resolve(s: &str) -> bool {
    s.contains(OPEN)
}

/// The well-formed references in `s`, left to right. An opening without a closing
/// `}}`, or without a `:` after the service, is not listed (but [`mentions_resolve`]
/// still sees it).
pub fn references(s: &str) -> Vec<DynRef<'_>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(rel) = s[from..].find(OPEN) {
        let start = from + rel;
        let inner_from = start + OPEN.len();
        let Some(close_rel) = s[inner_from..].find(CLOSE) else {
            break;
        };
        let end = inner_from + close_rel + CLOSE.len();
        let inner = &s[inner_from..inner_from + close_rel];
        if let Some((service, body)) = inner.split_once(':') {
            out.push(DynRef {
                start,
                end,
                service,
                body,
                text: &s[start..end],
            });
        }
        from = end;
    }
    out
}

/// Every opening `{{resolve:` in `s` belongs to a well-formed reference.
pub fn all_well_formed(s: &str) -> bool {
    s.matches(OPEN).count() == references(s).len()
}

/// The reference when it is the whole of `s` (nothing before or after it).
pub fn whole_reference(s: &str) -> Option<DynRef<'_>> {
    let refs = references(s);
    match refs.as_slice() {
        [only] if only.start == 0 && only.end == s.len() => Some(*only),
        _ => None,
    }
}

/// True when any string anywhere inside `v` (object keys excluded) mentions a dynamic
/// reference.
pub fn holds_reference(v: &Value) -> bool {
    match v {
        Value::String(s) => mentions_resolve(s),
        Value::Array(items) => items.iter().any(holds_reference),
        Value::Object(m) => m.values().any(holds_reference),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_reference_with_service_and_body() {
        let s = "a{{resolve:ssm:/x}}b{{resolve:secretsmanager:db:SecretString:pw}}";
        let refs = references(s);
        assert_eq!(refs.len(), 2);
        assert_eq!(refs[0].service, "ssm");
        assert_eq!(refs[0].body, "/x");
        assert_eq!(
            refs[1].text,
            "{{resolve:secretsmanager:db:SecretString:pw}}"
        );
        assert!(whole_reference(s).is_none());
        assert!(whole_reference("{{resolve:ssm-secure:p}}").is_some());
    }

    #[test]
    fn unterminated_opening_is_mentioned_but_not_well_formed() {
        assert!(mentions_resolve("x{{resolve:ssm:/a"));
        assert!(references("x{{resolve:ssm:/a").is_empty());
        assert!(!all_well_formed("x{{resolve:ssm:/a"));
    }
}
