//! Building a reading in CloudFormation's shape: the helpers every reader shares.

use serde_json::{Map, Value};

/// A reading under construction: keys in insertion order, absent values left out.
#[derive(Debug, Default)]
pub struct Props(Map<String, Value>);

impl Props {
    pub fn new() -> Self {
        Props(Map::new())
    }

    /// Sets `key` when `value` is present.
    pub fn opt(&mut self, key: &str, value: Option<impl Into<Value>>) -> &mut Self {
        if let Some(v) = value {
            self.0.insert(key.to_owned(), v.into());
        }
        self
    }

    /// Sets `key`.
    pub fn set(&mut self, key: &str, value: impl Into<Value>) -> &mut Self {
        self.0.insert(key.to_owned(), value.into());
        self
    }

    /// Sets `key` to a list of strings when the list is not empty.
    pub fn list(&mut self, key: &str, items: Vec<String>) -> &mut Self {
        if !items.is_empty() {
            self.0.insert(
                key.to_owned(),
                Value::Array(items.into_iter().map(Value::String).collect()),
            );
        }
        self
    }

    /// Sets `key` to a JSON value that is not empty (`[]` and `{}` are left out).
    pub fn nonempty(&mut self, key: &str, v: Value) -> &mut Self {
        let empty = match &v {
            Value::Array(a) => a.is_empty(),
            Value::Object(m) => m.is_empty(),
            Value::Null => true,
            _ => false,
        };
        if !empty {
            self.0.insert(key.to_owned(), v);
        }
        self
    }

    pub fn build(self) -> Value {
        Value::Object(self.0)
    }
}

/// CloudFormation's `Tags`: `[{Key, Value}]`, sorted by key.
pub fn tag_list<K: Into<String>, V: Into<String>>(tags: impl IntoIterator<Item = (K, V)>) -> Value {
    let mut pairs: Vec<(String, String)> = tags
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
    pairs.sort();
    Value::Array(
        pairs
            .into_iter()
            .map(|(k, v)| serde_json::json!({"Key": k, "Value": v}))
            .collect(),
    )
}

/// A policy document as IAM returns it (URL-encoded JSON in most APIs, plain JSON in
/// some): parsed into an object; the text itself when it is not JSON.
pub fn policy_document(text: &str) -> Value {
    let decoded =
        if text.trim_start().starts_with('%') || text.contains("%7B") || text.contains("%22") {
            percent_decode(text)
        } else {
            text.to_owned()
        };
    serde_json::from_str(&decoded).unwrap_or(Value::String(decoded))
}

/// A JSON text (an event pattern, a redrive policy): parsed, or the text when it is not JSON.
pub fn json_text(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// `%XX` sequences decoded (`+` is kept: IAM encodes spaces as `%20`). Invalid sequences
/// and bytes that are not UTF-8 are kept as they are.
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_owned())
}

/// A number given as text (SQS attributes): the number, else the text.
pub fn number_text(text: &str) -> Value {
    text.parse::<i64>()
        .map(Value::from)
        .unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// `"true"` / `"false"` given as text: the boolean, else the text.
pub fn bool_text(text: &str) -> Value {
    match text {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        other => Value::String(other.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn iam_policy_documents_are_url_decoded_and_parsed() {
        let enc = "%7B%22Version%22%3A%222012-10-17%22%2C%22Statement%22%3A%5B%5D%7D";
        assert_eq!(
            policy_document(enc),
            json!({"Version": "2012-10-17", "Statement": []})
        );
        assert_eq!(policy_document(r#"{"a":1}"#), json!({"a": 1}));
        assert_eq!(policy_document("not json %zz"), json!("not json %zz"));
        assert_eq!(percent_decode("a%2"), "a%2");
    }

    #[test]
    fn tags_are_cloudformation_key_value_pairs_sorted_by_key() {
        assert_eq!(
            tag_list([("b", "2"), ("a", "1")]),
            json!([{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}])
        );
    }
}
