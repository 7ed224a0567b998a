//! JS-compatible JSON and the text treatments through the public API: docs/state-views.md, "--json"a
//! table, deep values on a small (2 MiB) thread stack, --json payload round trip.

use cdkd_core::js::MAX_STRINGIFY_DEPTH;
use cdkd_core::json::{
    json_payload, parse_json, parse_json_unique_keys, stringify, stringify_pretty, MAX_PARSE_DEPTH,
};
use cdkd_core::text::{display_ident, flatten, strip, DEFAULT_CAP, UNRENDERABLE};
use serde_json::{json, Value};

#[test]
fn views_1_6a_four_treatments_at_a_glance() {
    // (input, human docs/state-views.md, "Strip (values in human views)", diagnostic "Flatten (diagnostics)", identifier "Identifiers (rows of state list, prompts, the contention refusal)", --json "--json")
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

// --- duplicate keys: templates refuse them by name, records read them as JSON.parse ----

#[test]
fn template_json_a_duplicate_key_is_refused_naming_the_key_its_path_and_line() {
    let two_resources = br#"{
  "Resources": {"A": {"Type": "AWS::SNS::Topic"}},
  "Resources": {"B": {"Type": "AWS::SQS::Queue"}}
}"#;
    let err = parse_json_unique_keys(two_resources).unwrap_err();
    assert_eq!(
        err,
        r#"duplicate key "Resources" in the document at line 3 column 13"#
    );
    // Deeper: the path names every step, indexes included.
    let deep = br#"{"Resources": {"B": {"Type": "AWS::S3::Bucket", "Properties": {
        "Tags": [{"Key": "a", "Value": "1", "Key": "b"}]}}}}"#;
    let err = parse_json_unique_keys(deep).unwrap_err();
    assert!(
        err.starts_with(r#"duplicate key "Key" in Resources.B.Properties.Tags[0] at line 2"#),
        "{err}"
    );
    // The same key in two objects is no duplicate; the value is what parse_json reads.
    let fine = br#"{"A": {"K": 1}, "B": {"K": 2}, "C": [{"K": 1}, {"K": 2}]}"#;
    assert_eq!(
        parse_json_unique_keys(fine).unwrap(),
        parse_json(fine).unwrap()
    );
    // Other errors are the ordinary parser's.
    assert_eq!(
        parse_json_unique_keys(br#"{"A": }"#).unwrap_err(),
        parse_json(br#"{"A": }"#).unwrap_err()
    );
    // A key that does not print plainly is flattened and quoted.
    let err = parse_json_unique_keys(b"{\"a\\nb\": 1, \"a\\nb\": 2}").unwrap_err();
    assert!(
        err.starts_with(r#"duplicate key "a b" in the document"#),
        "{err}"
    );
}

#[test]
fn record_json_a_duplicate_key_keeps_javascripts_last_value_at_the_first_position() {
    // docs/state-and-lock.md, "JSON as JavaScript sees it": records and locks read as cdkd's JSON.parse does.
    let v = parse_json(br#"{"resources": {"A": 1}, "version": 3, "resources": {"B": 2}}"#).unwrap();
    assert_eq!(
        stringify(&v).unwrap(),
        r#"{"resources":{"B":2},"version":3}"#
    );
    assert!(parse_json_unique_keys(br#"{"resources": {}, "resources": {}}"#).is_err());
}

#[test]
fn template_json_a_duplicate_key_deep_down_is_found_without_overflow() {
    let depth = 2_000;
    let text = format!(
        "{}{{\"k\":1,\"k\":2}}{}",
        "{\"a\":".repeat(depth),
        "}".repeat(depth)
    );
    let worker = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || parse_json_unique_keys(text.as_bytes()).unwrap_err())
        .unwrap();
    let err = worker.join().unwrap();
    assert!(
        err.starts_with("duplicate key \"k\" in a.a.a.a.a.a.a.a.….a.a.a.a.a.a.a.a at line 1"),
        "{err}"
    );
}
