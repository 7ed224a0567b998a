//! JS-compatible JSON and the text treatments through the public API: docs/state-views.md §1.6a
//! table, deep values on a small (2 MiB) thread stack, --json payload round trip.

use cdkd_core::json::{
    json_payload, parse_json, stringify, stringify_pretty, MAX_PARSE_DEPTH, MAX_STRINGIFY_DEPTH,
};
use cdkd_core::text::{display_ident, flatten, strip, DEFAULT_CAP, UNRENDERABLE};
use serde_json::{json, Value};

#[test]
fn views_1_6a_four_treatments_at_a_glance() {
    // (input, human docs/state-views.md §1.1, diagnostic §1.2, identifier §1.4, --json §1.6)
    let rows: [(Value, &str, &str, &str, &str); 7] = [
        (
            json!("A\u{1b}[31mB"),
            "A[31mB",
            "A [31mB",
            "\"A [31mB\"",
            "\"A\\u001b[31mB\"\n",
        ),
        (json!("A\nB"), "AB", "A B", "\"A B\"", "\"A\\nB\"\n"),
        (
            json!("A\u{2028}B"),
            "A\u{2028}B",
            "A B",
            "\"A B\"",
            "\"A\\u2028B\"\n",
        ),
        (
            json!("A\u{202e}B"),
            "AB",
            "A B",
            "\"A B\"",
            "\"A\\u202eB\"\n",
        ),
        (
            json!("A\u{200b}B"),
            "A\u{200b}B",
            "A\u{200b}B",
            "\"A B\"",
            "\"A\\u200bB\"\n",
        ),
        (
            json!("\u{1b}\u{9b}\n"),
            "",
            "",
            UNRENDERABLE,
            "\"\\u001b\\u009b\\n\"\n",
        ),
        (Value::Null, "null", "", UNRENDERABLE, "null\n"),
    ];
    for (input, human, diag, ident, payload) in rows {
        let human_got = match &input {
            Value::String(s) => strip(s),
            other => strip(&other.to_string()),
        };
        assert_eq!(human_got, human, "human {input:?}");
        assert_eq!(flatten(Some(&input)), diag, "diagnostic {input:?}");
        assert_eq!(
            display_ident(Some(&input), DEFAULT_CAP),
            ident,
            "ident {input:?}"
        );
        assert_eq!(json_payload(&input), payload, "--json {input:?}");
    }
}

fn nested_mixed(depth: usize) -> String {
    let half = depth / 2;
    format!("{}1{}", "[{\"a\":".repeat(half), "}]".repeat(half))
}

#[test]
fn deep_values_are_safe_on_a_2_mib_thread() {
    let text = nested_mixed(MAX_PARSE_DEPTH);
    let worker = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || {
            let v = parse_json(text.as_bytes()).unwrap();
            let c = v.clone();
            assert!(c == v);
            assert_eq!(stringify(&v), None, "beyond the stringify budget");
            let payload = json_payload(&v);
            assert_eq!(parse_json(payload.as_bytes()).unwrap(), v);
        })
        .unwrap();
    worker.join().unwrap();
}

#[test]
fn stringify_budget_is_1000_levels() {
    let ok = parse_json(
        format!(
            "{}{}",
            "[".repeat(MAX_STRINGIFY_DEPTH),
            "]".repeat(MAX_STRINGIFY_DEPTH)
        )
        .as_bytes(),
    )
    .unwrap();
    assert!(stringify(&ok).is_some());
    let deep = json!([ok]);
    assert_eq!(stringify(&deep), None);
    assert_eq!(stringify_pretty(&deep), None);
}

#[test]
fn parse_json_refuses_absurd_nesting_by_name_without_overflow() {
    let text = format!("{}1{}", "{\"a\":".repeat(300_000), "}".repeat(300_000));
    let err = parse_json(text.as_bytes()).unwrap_err();
    assert!(err.contains("nesting"), "{err}");
}

#[test]
fn json_payload_parses_back_to_stored_values() {
    let v = parse_json(
        br#"{"b":1,"10":[1e21,-0,0.1],"2":"\u0085\u061c\u2066\ufeff\ud83d\ude00","__proto__":{"x":null}}"#,
    )
    .unwrap();
    let payload = json_payload(&v);
    assert!(payload.starts_with("{\n  \"2\": "), "{payload}");
    assert!(
        payload.contains("\\u0085\\u061c\\u2066\\ufeff\u{1f600}"),
        "{payload}"
    );
    assert!(payload.contains("1e+21"));
    let back = parse_json(payload.as_bytes()).unwrap();
    assert_eq!(stringify(&back), stringify(&v));
    assert!(payload.ends_with("}\n"));
}
