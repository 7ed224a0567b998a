//! The four text treatments for untrusted values (docs/state-views.md, "Strip (values in human views)" and "Identifiers (rows of state list, prompts, the contention refusal)") and shell quoting
//! (docs/state-and-lock.md, "The contention refusal"). `--json` escaping is the `json` module's `json_payload`.

use crate::js::{js_number, MAX_STRINGIFY_DEPTH};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Placeholder for a value that is empty after sanitising (docs/state-views.md, "Printable (stack names and regions in diagnostics)").
pub const UNRENDERABLE: &str = "<unrenderable>";
/// Identifier cap for stack names: 128 + 4 × (1 + 255) (docs/state-views.md, "Identifiers (rows of state list, prompts, the contention refusal)").
pub const STACK_NAME_CAP: usize = 1152;
/// Default identifier cap (regions and the rest; docs/state-views.md, "Identifiers (rows of state list, prompts, the contention refusal)").
pub const DEFAULT_CAP: usize = 255;

fn in_strip_set(c: char) -> bool {
    matches!(c as u32,
        0x00..=0x1F | 0x7F..=0x9F | 0x200E | 0x200F | 0x202A..=0x202E | 0x2066..=0x2069)
}

fn in_flatten_set(c: char) -> bool {
    matches!(c as u32,
        0x00..=0x1F | 0x7F..=0x9F | 0x2028 | 0x2029 | 0x202A..=0x202E | 0x2066..=0x2069)
}

fn is_js_trim(c: char) -> bool {
    matches!(c as u32,
        0x09..=0x0D | 0x20 | 0xA0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F
        | 0x205F | 0x3000 | 0xFEFF)
}

/// docs/state-views.md, "Strip (values in human views)" Strip: removes C0, DEL,
/// C1 and the bidi marks/overrides/isolates; no trim.
pub fn strip(s: &str) -> String {
    s.chars().filter(|c| !in_strip_set(*c)).collect()
}

/// ECMAScript `String.prototype.trim` (its whitespace + line-terminator set).
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_trim)
}

/// JS `String(v)`. Arrays are joined with `,` (null elements empty, nested arrays
/// flattened), objects are `[object Object]`, numbers use the ECMAScript algorithm.
/// Where JS coercion would throw (an array holding an object with an own `toString`
/// key, or arrays nested beyond the stringify budget) the result is `[object Object]`,
/// the text cdkd's sanitiser falls back to.
pub fn js_string(v: &Value) -> String {
    match v {
        Value::Array(_) => {
            let mut out = String::new();
            match join_array(&mut out, v, 0) {
                Ok(()) => out,
                Err(()) => "[object Object]".to_string(),
            }
        }
        _ => scalar_string(v),
    }
}

fn scalar_string(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => js_number(n),
        Value::String(s) => s.clone(),
        Value::Array(_) | Value::Object(_) => "[object Object]".to_string(),
    }
}

fn join_array(out: &mut String, v: &Value, depth: usize) -> Result<(), ()> {
    match v {
        Value::Array(items) => {
            if depth >= MAX_STRINGIFY_DEPTH {
                return Err(());
            }
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                match item {
                    Value::Null => {}
                    Value::Array(_) => join_array(out, item, depth + 1)?,
                    Value::Object(o) if o.contains_key("toString") => return Err(()),
                    other => out.push_str(&scalar_string(other)),
                }
            }
            Ok(())
        }
        other => {
            out.push_str(&scalar_string(other));
            Ok(())
        }
    }
}

/// docs/state-views.md, "Flatten (diagnostics)" Flatten (diagnostics): absent/null → `""`, else `String(v)` with every
/// C0, DEL, C1, U+2028/2029 and bidi override/isolate turned into a space, then JS-trimmed.
pub fn flatten(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(v) => flatten_str(&js_string(v)),
    }
}

/// docs/state-views.md, "Flatten (diagnostics)" Flatten of a string.
pub fn flatten_str(s: &str) -> String {
    let replaced: String = s
        .chars()
        .map(|c| if in_flatten_set(c) { ' ' } else { c })
        .collect();
    js_trim(&replaced).to_string()
}

/// [`flatten_str`], with `<unrenderable>` for what flattens to nothing: a name or id
/// inside a one-line message.
pub fn flattened(s: &str) -> String {
    or_unrenderable(flatten_str(s))
}

/// docs/state-views.md, "Printable (stack names and regions in diagnostics)" Printable: coercion as in "Flatten (diagnostics)", every code point that does
/// not print as itself ([`is_unprintable`]) → space, trimmed. Letters, marks, digits,
/// punctuation and symbols of any script stay (`Ördérs` prints whole). May return `""`
/// (wrap with [`or_unrenderable`] in prose).
pub fn printable(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(v) => printable_str(&js_string(v)),
    }
}

/// docs/state-views.md, "Printable (stack names and regions in diagnostics)" Printable of a string.
pub fn printable_str(s: &str) -> String {
    let replaced: String = s
        .chars()
        .map(|c| if is_unprintable(c) { ' ' } else { c })
        .collect();
    js_trim(&replaced).to_string()
}

/// docs/state-views.md, "Printable (stack names and regions in diagnostics)": a code point that does not print as itself on a terminal:
/// C0 and DEL, and the Unicode categories Cc (C1), Cf (bidi controls, zero-width
/// characters), Zl, Zp, Zs other than the space, Co (private use) and Cn (unassigned).
/// Terminal escapes start with ESC (Cc) or a C1 control, so none survives.
pub fn is_unprintable(c: char) -> bool {
    use unicode_general_category::{get_general_category, GeneralCategory as G};
    if c.is_ascii() {
        return !(' '..='~').contains(&c);
    }
    matches!(
        get_general_category(c),
        G::Control
            | G::Format
            | G::LineSeparator
            | G::ParagraphSeparator
            | G::SpaceSeparator
            | G::PrivateUse
            | G::Unassigned
    )
}

/// `""` → [`UNRENDERABLE`]; anything else unchanged.
pub fn or_unrenderable(s: String) -> String {
    if s.is_empty() {
        UNRENDERABLE.to_string()
    } else {
        s
    }
}

/// docs/state-views.md, "Identifiers (rows of state list, prompts, the contention refusal)" identifier rendering of a
/// record value. Absent and `null` → [`UNRENDERABLE`].
pub fn display_ident(v: Option<&Value>, cap: usize) -> String {
    match v {
        None | Some(Value::Null) => UNRENDERABLE.to_string(),
        Some(v) => display_ident_str(&js_string(v), cap),
    }
}

fn is_bare_ident(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b":_@./+=,~-".contains(&b))
}

/// docs/state-views.md, "Identifiers (rows of state list, prompts, the contention refusal)" identifier rendering: sanitised as "Printable (stack names and regions in diagnostics)"; bare when sanitising
/// changed nothing and the text is a plain ASCII identifier, else a JSON string literal;
/// cut at `cap` code points with the
/// `[cut: N more characters withheld, tail sha256:<32 hex>]` marker.
pub fn display_ident_str(raw: &str, cap: usize) -> String {
    if raw.is_empty() {
        return UNRENDERABLE.to_string();
    }
    let clean = printable_str(raw);
    if clean.is_empty() {
        return UNRENDERABLE.to_string();
    }
    let (kept, tail) = split_at_chars(&clean, cap);
    let mut out = if clean == raw && is_bare_ident(kept) {
        kept.to_string()
    } else {
        let mut q = String::with_capacity(kept.len() + 2);
        q.push('"');
        for c in kept.chars() {
            if c == '"' || c == '\\' {
                q.push('\\');
            }
            q.push(c);
        }
        q.push('"');
        q
    };
    if !tail.is_empty() {
        let digest = Sha256::digest(tail.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        out.push_str(&format!(
            " [cut: {} more characters withheld, tail sha256:{}]",
            tail.chars().count(),
            &hex[..32]
        ));
    }
    out
}

/// `s` cut after `cap` code points: (kept, withheld).
pub fn split_at_chars(s: &str, cap: usize) -> (&str, &str) {
    match s.char_indices().nth(cap) {
        Some((i, _)) => s.split_at(i),
        None => (s, ""),
    }
}

/// docs/state-and-lock.md, "The contention refusal" shell quoting: bare when non-empty and entirely `[A-Za-z0-9._/@:+-]`,
/// else single quotes with `'` written as `'\''`.
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._/@:+-".contains(&b));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn views_1_6a_table_human_diagnostic_ident_columns() {
        // (input, strip docs/state-views.md, "Strip (values in human views)", flatten "Flatten (diagnostics)", ident "Identifiers (rows of state list, prompts, the contention refusal)")
        let rows = [
            ("A\u{1b}[31mB", "A[31mB", "A [31mB", "\"A [31mB\""),
            ("A\nB", "AB", "A B", "\"A B\""),
            ("A\u{2028}B", "A\u{2028}B", "A B", "\"A B\""),
            ("A\u{202e}B", "AB", "A B", "\"A B\""),
            ("A\u{200b}B", "A\u{200b}B", "A\u{200b}B", "\"A B\""),
            (
                "\u{d6}rd\u{e9}rs",
                "\u{d6}rd\u{e9}rs",
                "\u{d6}rd\u{e9}rs",
                "\"\u{d6}rd\u{e9}rs\"",
            ),
            ("\u{1b}\u{7}\n", "", "", UNRENDERABLE),
        ];
        for (input, human, diag, ident) in rows {
            assert_eq!(strip(input), human, "strip {input:?}");
            assert_eq!(flatten_str(input), diag, "flatten {input:?}");
            assert_eq!(
                display_ident_str(input, DEFAULT_CAP),
                ident,
                "ident {input:?}"
            );
        }
        assert_eq!(flatten(Some(&Value::Null)), "");
        assert_eq!(flatten(None), "");
        assert_eq!(display_ident(Some(&Value::Null), DEFAULT_CAP), UNRENDERABLE);
        assert_eq!(
            or_unrenderable(flatten(Some(&json!("\u{1b}")))),
            UNRENDERABLE
        );
    }

    #[test]
    fn strip_removes_only_the_offending_code_points_without_trim() {
        assert_eq!(strip(" a\u{9b}b\u{2066}c "), " abc ");
        assert_eq!(strip("x\u{200f}y\u{2029}"), "xy\u{2029}");
    }

    #[test]
    fn js_trim_uses_the_ecmascript_set() {
        assert_eq!(js_trim("\u{feff}\u{3000}\t a \u{a0}\u{2028}"), "a");
        // U+0085 (NEL) is not JS whitespace; Rust's trim would remove it.
        assert_eq!(js_trim("\u{85}a"), "\u{85}a");
        assert_eq!(js_trim("\u{200b}a"), "\u{200b}a");
    }

    #[test]
    fn js_string_coerces_like_javascript() {
        assert_eq!(js_string(&json!(null)), "null");
        assert_eq!(js_string(&json!(true)), "true");
        assert_eq!(js_string(&json!(1e21)), "1e+21");
        assert_eq!(js_string(&json!({"a": 1})), "[object Object]");
        assert_eq!(
            js_string(&json!([1, null, [2, [3, null]], "x", {}])),
            "1,,2,3,,x,[object Object]"
        );
        assert_eq!(js_string(&json!([])), "");
        assert_eq!(js_string(&json!({"toString": null})), "[object Object]");
        assert_eq!(js_string(&json!([{"toString": 1}])), "[object Object]");
    }

    #[test]
    fn flatten_coerces_non_strings_and_trims() {
        assert_eq!(flatten(Some(&json!(42))), "42");
        assert_eq!(flatten(Some(&json!({"toString": null}))), "[object Object]");
        assert_eq!(flatten(Some(&json!(["a\n", "b"]))), "a ,b");
        assert_eq!(flatten_str("\u{2067}x\u{9f}"), "x");
    }

    #[test]
    fn printable_keeps_non_ascii_text_and_may_be_empty() {
        assert_eq!(printable(Some(&json!("us-east-1"))), "us-east-1");
        assert_eq!(printable_str("caf\u{e9} x"), "caf\u{e9} x");
        assert_eq!(printable_str("\u{d6}rd\u{e9}rs"), "\u{d6}rd\u{e9}rs");
        // Decomposed (a combining mark) and other scripts print whole too.
        assert_eq!(printable_str("O\u{308}rders"), "O\u{308}rders");
        assert_eq!(
            printable_str("\u{6ce8}\u{6587}-\u{3b1}"),
            "\u{6ce8}\u{6587}-\u{3b1}"
        );
        assert_eq!(printable_str("\u{e9}\u{1b}"), "\u{e9}");
        assert_eq!(printable_str("\u{1b}\u{7}"), "");
        assert_eq!(printable(None), "");
    }

    #[test]
    fn printable_neutralises_controls_escapes_and_invisible_characters() {
        // ESC / CSI (a terminal escape), C1 CSI, a newline, bidi override and isolate,
        // zero-width space, line separator, no-break space, private use, unassigned.
        assert_eq!(printable_str("A\u{1b}[31mB"), "A [31mB");
        assert_eq!(printable_str("A\u{9b}31mB"), "A 31mB");
        assert_eq!(printable_str("A\nB\rC"), "A B C");
        assert_eq!(printable_str("A\u{202e}B\u{2066}C"), "A B C");
        assert_eq!(printable_str("A\u{200b}B\u{2028}C"), "A B C");
        assert_eq!(printable_str("A\u{a0}B\u{e000}C\u{378}D"), "A B C D");
        for c in [
            '\u{1b}', '\u{7f}', '\u{85}', '\u{9b}', '\u{200e}', '\u{feff}', '\u{3000}',
        ] {
            assert!(is_unprintable(c), "{c:?}");
        }
        for c in ['a', ' ', '~', '\u{e9}', '\u{308}', '\u{6ce8}', '\u{20ac}'] {
            assert!(!is_unprintable(c), "{c:?}");
        }
    }

    #[test]
    fn display_ident_keeps_non_ascii_quoted_and_cuts_by_code_points() {
        assert_eq!(
            display_ident_str("\u{d6}rd\u{e9}rs", STACK_NAME_CAP),
            "\"\u{d6}rd\u{e9}rs\""
        );
        let got = display_ident_str(&"\u{e9}".repeat(258), DEFAULT_CAP);
        assert!(
            got.starts_with(&format!(
                "\"{}\" [cut: 3 more characters",
                "\u{e9}".repeat(255)
            )),
            "{got}"
        );
    }

    #[test]
    fn display_ident_bare_only_when_unaltered_and_plain() {
        assert_eq!(
            display_ident_str("Parent~Child", STACK_NAME_CAP),
            "Parent~Child"
        );
        assert_eq!(
            display_ident_str("My Stack", STACK_NAME_CAP),
            "\"My Stack\""
        );
        assert_eq!(display_ident_str(" App", STACK_NAME_CAP), "\"App\"");
        assert_eq!(
            display_ident_str("ProdStack (us-east-1)", STACK_NAME_CAP),
            "\"ProdStack (us-east-1)\""
        );
        assert_eq!(display_ident_str("a\"b\\c", DEFAULT_CAP), "\"a\\\"b\\\\c\"");
        assert_eq!(display_ident_str("", DEFAULT_CAP), UNRENDERABLE);
        assert_eq!(display_ident(Some(&json!(42)), DEFAULT_CAP), "42");
    }

    #[test]
    fn display_ident_cut_marker_views_statement_6() {
        let got = display_ident_str(&"A".repeat(1200), STACK_NAME_CAP);
        assert_eq!(
            got,
            format!(
                "{} [cut: 48 more characters withheld, tail sha256:4739dcdbab0c377161c539af55d47c5c]",
                "A".repeat(1152)
            )
        );
        let got = display_ident_str(&"r".repeat(300), DEFAULT_CAP);
        assert_eq!(
            got,
            format!(
                "{} [cut: 45 more characters withheld, tail sha256:61ccd8ec238822b9f97d06147844c3c9]",
                "r".repeat(255)
            )
        );
    }

    #[test]
    fn display_ident_cut_marker_views_statement_7() {
        let got = display_ident_str(&"r".repeat(265), DEFAULT_CAP);
        assert_eq!(
            got,
            format!(
                "{} [cut: 10 more characters withheld, tail sha256:52bfb770ff4c153e61a09af372bf62bc]",
                "r".repeat(255)
            )
        );
    }

    #[test]
    fn shell_quote_s_and_l_7_rule() {
        assert_eq!(shell_quote("App"), "App");
        assert_eq!(shell_quote("cdkd/team-a"), "cdkd/team-a");
        assert_eq!(shell_quote("Root~Child"), "'Root~Child'");
        assert_eq!(shell_quote("prod-caf\u{e9}"), "'prod-caf\u{e9}'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
