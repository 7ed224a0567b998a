//! JavaScript-compatible JSON (docs/state-and-lock.md, "JSON as JavaScript sees it", docs/state-views.md, "Values in human views" and "--json").
//!
//! cdkd is JavaScript: it reads records with `JSON.parse` and writes them with
//! `JSON.stringify`. This module reproduces what matters for byte parity and for not
//! rejecting what cdkd accepts: JS own-key order, the ECMAScript Number-to-String
//! algorithm, `JSON.stringify`'s string escapes, and the `--json` payload escaping.
//!
//! Decisions (documented here because docs/state-and-lock.md, "JSON as JavaScript sees it" asks for an explicit choice):
//! - Bytes are decoded as UTF-8 the way cdkd's SDK body does (`transformToString()`,
//!   Node's `Buffer#toString('utf8')`): invalid sequences become U+FFFD; a leading BOM
//!   is kept, so `JSON.parse` and this parser both refuse it.
//! - A number outside the double range (`1e400`) is refused (`JSON.parse` would read
//!   `Infinity`); no writer produces one.
//! - An escaped lone surrogate (`"\ud800"`) is refused by name: `serde_json` strings
//!   cannot hold one, and reading it lossily would change the value on the next write.
//! - Nesting: parsing runs on a growable stack (`serde_stacker`), so deep input never
//!   overflows it. Values deeper than [`MAX_PARSE_DEPTH`] are refused by name (and
//!   dismantled without recursion), because every later recursive step over a
//!   `serde_json::Value` (its `Clone`, `Drop`, `PartialEq`) would otherwise risk the
//!   stack. `JSON.parse` accepts deeper input; this is a deliberate difference.
//!   [`MAX_PARSE_DEPTH`] is well above [`MAX_STRINGIFY_DEPTH`], so a value too deep to
//!   stringify is still read and renders as `(unserializable)`.

use serde::Deserialize;
use serde_json::{Map, Value};
use unicode_general_category::{get_general_category, GeneralCategory};

use crate::js::{js_f64, js_number, MAX_STRINGIFY_DEPTH};

/// Deepest nesting [`parse_json`] accepts. Deeper input is refused by name.
///
/// Measured: `Value::clone` of a value about 1500 levels deep overflows a 2 MiB thread
/// stack (the default for test and tokio worker threads) in a debug build, and `Drop`
/// and `PartialEq` recurse the same way. 1100 keeps every ordinary operation on a
/// returned value safe while still leaving room above [`MAX_STRINGIFY_DEPTH`].
pub const MAX_PARSE_DEPTH: usize = 1100;

/// Parses JSON like `JSON.parse` (see the module notes for the explicit differences).
/// Duplicate keys: the last value wins, at the position of the first (records and locks,
/// docs/state-and-lock.md, "JSON as JavaScript sees it"; templates are read by [`parse_json_unique_keys`]).
/// The error is the parser's message, on one line.
pub fn parse_json(bytes: &[u8]) -> Result<Value, String> {
    let text = String::from_utf8_lossy(bytes);
    let text: &str = &text;
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let value = {
        let stacked = serde_stacker::Deserializer::new(&mut de);
        Value::deserialize(stacked).map_err(|e| parser_message(text, &e.to_string()))?
    };
    de.end().map_err(|e| parser_message(text, &e.to_string()))?;
    let depth = depth_of(&value);
    if depth > MAX_PARSE_DEPTH {
        dismantle(value);
        return Err(format!(
            "JSON nesting of {depth} levels exceeds the supported maximum of {MAX_PARSE_DEPTH}"
        ));
    }
    Ok(value)
}

/// Parses JSON like [`parse_json`], but refuses an object that repeats a key, naming the
/// key, where it is (its path from the document: `Resources.Bucket.Properties`, `the
/// document` for the top level) and the line and column of the repeat:
/// `duplicate key "Resources" in the document at line 3 column 13`. Templates are read
/// this way (docs/export.md, "Step details" S2): last-wins would silently drop the first of two
/// `Resources` blocks. Records and locks are not (docs/state-and-lock.md, "JSON as JavaScript sees it": they read
/// as cdkd's `JSON.parse` reads them).
pub fn parse_json_unique_keys(bytes: &[u8]) -> Result<Value, String> {
    let text = String::from_utf8_lossy(bytes);
    let mut de = serde_json::Deserializer::from_str(&text);
    de.disable_recursion_limit();
    let checked = {
        let stacked = serde_stacker::Deserializer::new(&mut de);
        check_unique_keys(stacked)
    };
    match checked {
        KeyCheck::Duplicate(dup, e) => {
            Err(format!("{dup} at line {} column {}", e.line(), e.column()))
        }
        // Any other problem is the ordinary parser's to tell.
        KeyCheck::Unique | KeyCheck::Unreadable(_) => parse_json(bytes),
    }
}

/// A key an object (mapping) repeats, and where: `duplicate key "<key>" in <path>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DuplicateKey {
    pub key: String,
    /// `Resources.Bucket.Properties`, `Tags[0]`, `the document`.
    pub path: String,
}

impl std::fmt::Display for DuplicateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "duplicate key {} in {}",
            Value::from(crate::text::flatten_str(&self.key)),
            self.path
        )
    }
}

/// What [`check_unique_keys`] found: every object's keys unique; the first repeat, with
/// the format's error that stopped the walk there (its position); or a document the
/// format cannot read (its own error).
#[derive(Debug)]
pub enum KeyCheck<E> {
    Unique,
    Duplicate(DuplicateKey, E),
    Unreadable(E),
}

/// Walks one document of any serde format and stops at the first object (mapping) that
/// repeats a key. Keys that are scalars are compared as text (`1` and `"1"` alike, as
/// JSON keeps them); YAML tags (`!Ref`) are looked through. One rule for JSON and YAML
/// templates (the CLI reads YAML with it too).
pub fn check_unique_keys<'de, D: serde::Deserializer<'de>>(d: D) -> KeyCheck<D::Error> {
    let mut walk = Walk::default();
    match serde::de::DeserializeSeed::deserialize(UniqueKeys { walk: &mut walk }, d) {
        Ok(()) => KeyCheck::Unique,
        Err(e) => match walk.found {
            Some(dup) => KeyCheck::Duplicate(dup, e),
            None => KeyCheck::Unreadable(e),
        },
    }
}

/// Where the walk is, and the repeat it found.
#[derive(Default)]
struct Walk {
    path: Vec<PathStep>,
    found: Option<DuplicateKey>,
}

/// One step of a key path.
enum PathStep {
    Key(String),
    Index(usize),
}

/// Steps of a key path named in full; a deeper path keeps its first and last halves.
const KEY_PATH_STEPS: usize = 16;

/// `Resources.Bucket.Properties`, `Tags[0]`; `the document` when empty; a path deeper
/// than [`KEY_PATH_STEPS`] elides its middle (`a.a.….a`).
fn key_path(path: &[PathStep]) -> String {
    if path.is_empty() {
        return "the document".into();
    }
    let elided = PathStep::Key("…".into());
    let shown: Vec<&PathStep> = if path.len() > KEY_PATH_STEPS {
        let half = KEY_PATH_STEPS / 2;
        path[..half]
            .iter()
            .chain(std::iter::once(&elided))
            .chain(&path[path.len() - half..])
            .collect()
    } else {
        path.iter().collect()
    };
    let mut s = String::new();
    for step in shown {
        match step {
            PathStep::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(&crate::text::flatten_str(k));
            }
            PathStep::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

struct UniqueKeys<'p> {
    walk: &'p mut Walk,
}

impl<'de> serde::de::DeserializeSeed<'de> for UniqueKeys<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for UniqueKeys<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_i128<E>(self, _: i128) -> Result<(), E> {
        Ok(())
    }
    fn visit_u128<E>(self, _: u128) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_bytes<E>(self, _: &[u8]) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
    fn visit_newtype_struct<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        loop {
            self.walk.path.push(PathStep::Index(i));
            let more = seq.next_element_seed(UniqueKeys {
                walk: &mut *self.walk,
            })?;
            self.walk.path.pop();
            if more.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key_seed(KeyText {
            seen: &mut seen,
            walk: &mut *self.walk,
        })? {
            // A key that is not a scalar is never compared (a template's reader refuses
            // it by name).
            self.walk
                .path
                .push(PathStep::Key(key.unwrap_or_else(|| "?".into())));
            map.next_value_seed(UniqueKeys {
                walk: &mut *self.walk,
            })?;
            self.walk.path.pop();
        }
        Ok(())
    }

    fn visit_enum<A: serde::de::EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
        use serde::de::VariantAccess;
        let (serde::de::IgnoredAny, variant) = data.variant()?;
        variant.newtype_variant_seed(self)
    }
}

/// A key as text (`None`: a key that is not a scalar, which is never compared), refused
/// when its object already has it: the error is raised while the key is read, so the
/// format places it at the repeat.
struct KeyText<'a> {
    seen: &'a mut std::collections::HashSet<String>,
    walk: &'a mut Walk,
}

impl KeyText<'_> {
    fn admit<E: serde::de::Error>(self, key: String) -> Result<Option<String>, E> {
        if self.seen.insert(key.clone()) {
            return Ok(Some(key));
        }
        self.walk.found = Some(DuplicateKey {
            path: key_path(&self.walk.path),
            key,
        });
        Err(E::custom("duplicate key"))
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for KeyText<'_> {
    type Value = Option<String>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Option<String>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for KeyText<'_> {
    type Value = Option<String>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Option<String>, E> {
        self.admit(v.to_string())
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Option<String>, E> {
        self.admit(v.to_string())
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Option<String>, E> {
        self.admit(v.to_string())
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Option<String>, E> {
        self.admit(v.to_string())
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Option<String>, E> {
        self.admit(js_f64(v))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Option<String>, E> {
        self.admit("null".into())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<Option<String>, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<Option<String>, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(None)
    }
    fn visit_enum<A: serde::de::EnumAccess<'de>>(
        self,
        data: A,
    ) -> Result<Option<String>, A::Error> {
        use serde::de::VariantAccess;
        let (serde::de::IgnoredAny, variant) = data.variant()?;
        variant.newtype_variant_seed(self)
    }
}

fn parser_message(text: &str, msg: &str) -> String {
    match find_lone_surrogate(text) {
        Some(unit) => format!(
            "lone UTF-16 surrogate escape \\u{unit:04x} in a string is not supported ({msg})"
        ),
        None => msg.to_string(),
    }
}

/// The first escaped lone surrogate (`\ud800` not followed by a low surrogate escape, or
/// a low surrogate escape without a high one) inside a string literal of `text`.
fn find_lone_surrogate(text: &str) -> Option<u16> {
    let b = text.as_bytes();
    let hex4 = |i: usize| -> Option<u16> {
        let s = b.get(i..i + 4)?;
        u16::from_str_radix(std::str::from_utf8(s).ok()?, 16).ok()
    };
    let escape_at = |i: usize| -> Option<u16> {
        if b.get(i) == Some(&b'\\') && b.get(i + 1) == Some(&b'u') {
            hex4(i + 2)
        } else {
            None
        }
    };
    let mut in_string = false;
    let mut i = 0;
    while i < b.len() {
        match (in_string, b[i]) {
            (false, b'"') => in_string = true,
            (true, b'"') => in_string = false,
            (true, b'\\') => {
                if let Some(unit) = escape_at(i) {
                    if (0xD800..0xDC00).contains(&unit) {
                        match escape_at(i + 6) {
                            Some(low) if (0xDC00..0xE000).contains(&low) => {
                                i += 12;
                                continue;
                            }
                            _ => return Some(unit),
                        }
                    }
                    if (0xDC00..0xE000).contains(&unit) {
                        return Some(unit);
                    }
                    i += 6;
                    continue;
                }
                i += 2;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Nesting depth without recursion: a scalar is 0, `[]`/`{}` is 1, `[[1]]` is 2.
pub fn depth_of(v: &Value) -> usize {
    let mut max = 0;
    let mut stack: Vec<(&Value, usize)> = vec![(v, 0)];
    while let Some((v, d)) = stack.pop() {
        match v {
            Value::Array(a) => {
                max = max.max(d + 1);
                stack.extend(a.iter().map(|c| (c, d + 1)));
            }
            Value::Object(o) => {
                max = max.max(d + 1);
                stack.extend(o.values().map(|c| (c, d + 1)));
            }
            _ => {}
        }
    }
    max
}

/// Drops a value of any depth without recursing.
fn dismantle(v: Value) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(a) => stack.extend(a),
            Value::Object(o) => stack.extend(o.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Canonical array index of JS: `"0"` or a digit string without leading zero whose
/// value is below 2^32 − 1.
pub fn array_index(key: &str) -> Option<u32> {
    let b = key.as_bytes();
    if b.is_empty() || b.len() > 10 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if b.len() > 1 && b[0] == b'0' {
        return None;
    }
    let n: u64 = key.parse().ok()?;
    if n < u64::from(u32::MAX) {
        u32::try_from(n).ok()
    } else {
        None
    }
}

/// JS own-key order: array-index keys ascending numerically, then the rest in
/// insertion order.
pub fn ordered_entries(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut indexed: Vec<(u32, (&String, &Value))> = Vec::new();
    let mut rest: Vec<(&String, &Value)> = Vec::new();
    for (k, v) in map {
        match array_index(k) {
            Some(i) => indexed.push((i, (k, v))),
            None => rest.push((k, v)),
        }
    }
    indexed.sort_by_key(|(i, _)| *i);
    indexed.into_iter().map(|(_, e)| e).chain(rest).collect()
}

/// `JSON.stringify(v)` (compact). `None` when nesting exceeds [`MAX_STRINGIFY_DEPTH`].
pub fn stringify(v: &Value) -> Option<String> {
    let mut out = String::new();
    write_value(&mut out, v, None, 0, MAX_STRINGIFY_DEPTH).ok()?;
    Some(out)
}

/// `JSON.stringify(v, null, 2)`. `None` when nesting exceeds [`MAX_STRINGIFY_DEPTH`].
pub fn stringify_pretty(v: &Value) -> Option<String> {
    let mut out = String::new();
    write_value(&mut out, v, Some(2), 0, MAX_STRINGIFY_DEPTH).ok()?;
    Some(out)
}

/// `JSON.stringify(v, null, 2)` with no depth budget. The writer grows its stack on the
/// heap when needed (`stacker`), so no depth can overflow it. Used for writing records
/// back, where dropping data is not an option.
pub fn stringify_pretty_unbounded(v: &Value) -> String {
    let mut out = String::new();
    // Cannot fail: the budget is never reached.
    let _ = write_value(&mut out, v, Some(2), 0, usize::MAX);
    out
}

/// The `--json` payload of docs/state-views.md, "--json": `JSON.stringify(v, null, 2)` with every raw
/// Cc/Cf/Zl/Zp code point (except the layout `\n`) escaped as lowercase `\uXXXX` per
/// UTF-16 unit, plus a final `\n`.
///
/// Fallback: a value deeper than [`MAX_STRINGIFY_DEPTH`] (where cdkd's `JSON.stringify`
/// would fail) is still serialised in full, by [`stringify_pretty_unbounded`]: the
/// payload stays a faithful, parseable serialisation and nothing panics.
pub fn json_payload(v: &Value) -> String {
    let pretty = stringify_pretty(v).unwrap_or_else(|| stringify_pretty_unbounded(v));
    let mut text = escape_invisible(&pretty);
    text.push('\n');
    text
}

/// Escapes every Cc/Cf/Zl/Zp code point except `\n` as lowercase `\uXXXX` per UTF-16
/// code unit (docs/state-views.md, "--json" step 2).
pub fn escape_invisible(s: &str) -> String {
    if s.bytes().all(|b| (b' '..=b'~').contains(&b) || b == b'\n') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c != '\n' && is_invisible(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{:04x}", u));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// True for Unicode general categories Cc, Cf, Zl, Zp.
pub fn is_invisible(c: char) -> bool {
    // Printable ASCII is never Cc/Cf/Zl/Zp: skip the table for the common case.
    if (' '..='~').contains(&c) {
        return false;
    }
    matches!(
        get_general_category(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    )
}

/// Writes one JSON string literal with `JSON.stringify`'s escapes.
pub fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

struct TooDeep;

fn newline(out: &mut String, indent: Option<usize>, level: usize) {
    if let Some(n) = indent {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', n * level));
    }
}

fn write_value(
    out: &mut String,
    v: &Value,
    indent: Option<usize>,
    depth: usize,
    budget: usize,
) -> Result<(), TooDeep> {
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
        write_value_inner(out, v, indent, depth, budget)
    })
}

fn write_value_inner(
    out: &mut String,
    v: &Value,
    indent: Option<usize>,
    depth: usize,
    budget: usize,
) -> Result<(), TooDeep> {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&js_number(n)),
        Value::String(s) => write_json_string(out, s),
        Value::Array(a) => {
            if depth >= budget {
                return Err(TooDeep);
            }
            if a.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            out.push('[');
            for (i, item) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent, depth + 1);
                write_value(out, item, indent, depth + 1, budget)?;
            }
            newline(out, indent, depth);
            out.push(']');
        }
        Value::Object(o) => {
            if depth >= budget {
                return Err(TooDeep);
            }
            if o.is_empty() {
                out.push_str("{}");
                return Ok(());
            }
            out.push('{');
            for (i, (k, item)) in ordered_entries(o).into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent, depth + 1);
                write_json_string(out, k);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                write_value(out, item, indent, depth + 1, budget)?;
            }
            newline(out, indent, depth);
            out.push('}');
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn num(s: &str) -> String {
        match parse_json(s.as_bytes()).unwrap() {
            Value::Number(n) => js_number(&n),
            other => panic!("not a number: {other}"),
        }
    }

    #[test]
    fn js_number_uses_ecmascript_number_to_string() {
        assert_eq!(num("1e21"), "1e+21");
        assert_eq!(num("1e20"), "100000000000000000000");
        assert_eq!(num("0.0000001"), "1e-7");
        assert_eq!(num("0.000001"), "0.000001");
        assert_eq!(num("-0"), "0");
        assert_eq!(num("-0.0"), "0");
        assert_eq!(num("8.0"), "8");
        assert_eq!(num("2.5"), "2.5");
        assert_eq!(num("-12"), "-12");
        assert_eq!(num("0.1"), "0.1");
        assert_eq!(num("123456789012345678901"), "123456789012345680000");
        assert_eq!(num("18446744073709551615"), "18446744073709552000");
        assert_eq!(num("9007199254740993"), "9007199254740992");
        assert_eq!(num("1.7976931348623157e308"), "1.7976931348623157e+308");
    }

    #[test]
    fn key_order_puts_array_indices_first_numerically() {
        let v =
            parse_json(br#"{"b":1,"10":2,"2":3,"01":4,"4294967295":5,"4294967294":6}"#).unwrap();
        let keys: Vec<&str> = ordered_entries(v.as_object().unwrap())
            .into_iter()
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(keys, ["2", "10", "4294967294", "b", "01", "4294967295"]);
    }

    #[test]
    fn duplicate_keys_last_value_wins_at_first_position() {
        let v = parse_json(br#"{"a":1,"b":2,"a":3}"#).unwrap();
        assert_eq!(stringify(&v).unwrap(), r#"{"a":3,"b":2}"#);
    }

    #[test]
    fn stringify_matches_json_stringify_escapes() {
        let v = json!("q\" b\\ \u{8}\u{c}\n\r\t\u{1}\u{1b}\u{7f}\u{2028}/é");
        assert_eq!(
            stringify(&v).unwrap(),
            "\"q\\\" b\\\\ \\b\\f\\n\\r\\t\\u0001\\u001b\u{7f}\u{2028}/é\""
        );
    }

    #[test]
    fn stringify_pretty_matches_json_stringify_indent_2() {
        let v = parse_json(br#"{"a":[],"b":{},"c":[1,{"d":null}],"e":true}"#).unwrap();
        assert_eq!(
            stringify_pretty(&v).unwrap(),
            "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": null\n    }\n  ],\n  \"e\": true\n}"
        );
        assert_eq!(
            stringify(&v).unwrap(),
            r#"{"a":[],"b":{},"c":[1,{"d":null}],"e":true}"#
        );
    }

    fn nested(depth: usize) -> Vec<u8> {
        let mut s = "[".repeat(depth);
        s.push_str(&"]".repeat(depth));
        s.into_bytes()
    }

    #[test]
    fn stringify_returns_none_beyond_depth_budget() {
        let ok = parse_json(&nested(MAX_STRINGIFY_DEPTH)).unwrap();
        assert!(stringify(&ok).is_some());
        let deep = parse_json(&nested(MAX_STRINGIFY_DEPTH + 1)).unwrap();
        assert_eq!(stringify(&deep), None);
        assert_eq!(stringify_pretty(&deep), None);
        let payload = json_payload(&deep);
        assert!(payload.starts_with("[\n  [\n"));
        assert!(payload.ends_with("]\n"));
        assert_eq!(parse_json(payload.as_bytes()).unwrap(), deep);
        assert_eq!(payload, format!("{}\n", stringify_pretty_unbounded(&deep)));
    }

    #[test]
    fn parse_json_refuses_very_deep_nesting_by_name_without_crashing() {
        let err = parse_json(&nested(200_000)).unwrap_err();
        assert!(err.contains("nesting"), "{err}");
        let v = parse_json(&nested(MAX_PARSE_DEPTH)).unwrap();
        assert_eq!(depth_of(&v), MAX_PARSE_DEPTH);
        dismantle(v);
    }

    #[test]
    fn parse_json_refuses_lone_surrogate_by_name() {
        let err = parse_json(br#"{"a":"\ud800"}"#).unwrap_err();
        assert!(
            err.contains("lone UTF-16 surrogate escape \\ud800"),
            "{err}"
        );
        let err = parse_json(br#"{"a":"\uDC00x"}"#).unwrap_err();
        assert!(err.contains("surrogate escape \\udc00"), "{err}");
        let err = parse_json(br#"{"a":"\ud800\u0041"}"#).unwrap_err();
        assert!(err.contains("surrogate"), "{err}");
        // An escaped backslash followed by text is not an escape; other errors keep the
        // parser's own message.
        let err = parse_json(br#"{"a":"\\ud800", }"#).unwrap_err();
        assert!(!err.contains("surrogate"), "{err}");
        // A valid pair is fine.
        let v = parse_json(br#""\ud83d\ude00""#).unwrap();
        assert_eq!(v, json!("\u{1f600}"));
    }

    #[test]
    fn parse_json_decodes_like_node_buffer_to_string() {
        assert!(
            parse_json(b"\xef\xbb\xbf{}").is_err(),
            "JSON.parse refuses a BOM"
        );
        assert_eq!(parse_json(b"\"a\xffb\"").unwrap(), json!("a\u{fffd}b"));
        assert!(parse_json(b"{} x").is_err());
        assert!(parse_json(b"").is_err());
    }

    #[test]
    fn json_payload_escapes_cc_cf_zl_zp_lowercase_per_utf16_unit() {
        let v =
            json!({"k": "A\u{2028}B\u{9b}C\u{7f}D\u{202e}E\u{200b}F\u{e0001}G\u{ad}H\u{1b}I\nJ"});
        assert_eq!(
            json_payload(&v),
            "{\n  \"k\": \"A\\u2028B\\u009bC\\u007fD\\u202eE\\u200bF\\udb40\\udc01G\\u00adH\\u001bI\\nJ\"\n}\n"
        );
        // Round trip: the payload parses back to the value.
        assert_eq!(parse_json(json_payload(&v).as_bytes()).unwrap(), v);
    }

    #[test]
    fn json_payload_of_views_table_1_6a() {
        let cases = [
            ("A\u{1b}[31mB", "\"A\\u001b[31mB\"\n"),
            ("A\nB", "\"A\\nB\"\n"),
            ("A\u{2028}B", "\"A\\u2028B\"\n"),
            ("A\u{202e}B", "\"A\\u202eB\"\n"),
            ("A\u{200b}B", "\"A\\u200bB\"\n"),
        ];
        for (input, want) in cases {
            assert_eq!(json_payload(&json!(input)), want, "{input:?}");
        }
        assert_eq!(json_payload(&Value::Null), "null\n");
    }

    #[test]
    fn snapshot_json_payload_escapes_and_key_order() {
        let v = parse_json(
            br#"{"name":"A\u001b[31mB\u2028C\u009bD\u200bE\udb40\udc01","b":1,"10":[1e21,-0,1e-7],"2":{"nested":"x\u007fy"},"empty":{},"list":[]}"#,
        )
        .unwrap();
        insta::assert_snapshot!(json_payload(&v));
    }
}
