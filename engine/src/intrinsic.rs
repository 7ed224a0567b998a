//! Intrinsic functions (`States.Format(...)` and friends): parsed at load time, evaluated
//! against the effective input and the context object.

use base64::Engine as _;
use serde_json::{Map, Value};

use crate::path::JsonPath;

/// The intrinsic functions this engine implements.
pub const FUNCTIONS: &[&str] = &[
    "States.Format",
    "States.StringToJson",
    "States.JsonToString",
    "States.Array",
    "States.ArrayPartition",
    "States.ArrayContains",
    "States.ArrayRange",
    "States.ArrayGetItem",
    "States.ArrayLength",
    "States.ArrayUnique",
    "States.Base64Encode",
    "States.Base64Decode",
    "States.Hash",
    "States.JsonMerge",
    "States.MathRandom",
    "States.MathAdd",
    "States.StringSplit",
    "States.UUID",
];

#[derive(Debug, Clone, PartialEq)]
pub struct Intrinsic {
    pub name: String,
    args: Vec<Arg>,
}

#[derive(Debug, Clone, PartialEq)]
enum Arg {
    /// A string literal: unescaped value and the raw text (States.Format needs `\{`).
    Str(String, String),
    Lit(Value),
    Path(JsonPath),
    Call(Intrinsic),
}

impl Intrinsic {
    /// Parse `States.Name(arg, ...)`; unknown functions are refused.
    pub fn parse(text: &str) -> Result<Intrinsic, String> {
        let chars: Vec<char> = text.chars().collect();
        let mut p = P { c: &chars, i: 0 };
        let f = p.call()?;
        p.ws();
        if p.i != chars.len() {
            return Err(format!("unexpected text after the call in '{text}'"));
        }
        Ok(f)
    }

    /// Evaluate; an error is the cause of a States.IntrinsicFailure (or, for a path that
    /// does not resolve, of a States.Runtime: see `IntrinsicError`).
    pub fn eval(&self, input: &Value, ctx: &Value) -> Result<Value, IntrinsicError> {
        let mut vals = Vec::with_capacity(self.args.len());
        for a in &self.args {
            vals.push(match a {
                Arg::Str(s, _) => Value::String(s.clone()),
                Arg::Lit(v) => v.clone(),
                Arg::Path(p) => {
                    let root = if p.context { ctx } else { input };
                    p.select(root).ok_or_else(|| {
                        IntrinsicError::Path(format!(
                            "The JsonPath argument '{}' of {} could not be found in the input",
                            p.text, self.name
                        ))
                    })?
                }
                Arg::Call(c) => c.eval(input, ctx)?,
            });
        }
        call(self, vals).map_err(|m| IntrinsicError::Failure(format!("{}: {m}", self.name)))
    }
}

/// An intrinsic evaluation failure.
#[derive(Debug, Clone, PartialEq)]
pub enum IntrinsicError {
    /// A path argument does not exist in the input.
    Path(String),
    /// The function refused its arguments.
    Failure(String),
}

fn want_n(v: &[Value], n: usize) -> Result<(), String> {
    if v.len() != n {
        return Err(format!("expected {n} argument(s), got {}", v.len()));
    }
    Ok(())
}

fn as_int(v: &Value) -> Result<i64, String> {
    if let Some(i) = v.as_i64() {
        return Ok(i);
    }
    match v.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(f as i64),
        _ => Err(format!("expected an integer, got {v}")),
    }
}

fn as_str(v: &Value) -> Result<&str, String> {
    v.as_str()
        .ok_or_else(|| format!("expected a string, got {v}"))
}

fn as_arr(v: &Value) -> Result<&Vec<Value>, String> {
    v.as_array()
        .ok_or_else(|| format!("expected an array, got {v}"))
}

fn call(f: &Intrinsic, v: Vec<Value>) -> Result<Value, String> {
    match f.name.as_str() {
        "States.Format" => format(f, &v),
        "States.StringToJson" => {
            want_n(&v, 1)?;
            serde_json::from_str(as_str(&v[0])?).map_err(|e| format!("not JSON: {e}"))
        }
        "States.JsonToString" => {
            want_n(&v, 1)?;
            serde_json::to_string(&v[0])
                .map(Value::String)
                .map_err(|e| e.to_string())
        }
        "States.Array" => Ok(Value::Array(v)),
        "States.ArrayPartition"
        | "States.ArrayContains"
        | "States.ArrayRange"
        | "States.ArrayGetItem"
        | "States.ArrayLength"
        | "States.ArrayUnique" => array(&f.name, &v),
        "States.Base64Encode" | "States.Base64Decode" | "States.Hash" => encoding(&f.name, &v),
        "States.JsonMerge" => {
            want_n(&v, 3)?;
            if v[2] != Value::Bool(false) {
                return Err("only shallow merging (false) is supported".into());
            }
            let a = v[0]
                .as_object()
                .ok_or("the first argument must be an object")?;
            let b = v[1]
                .as_object()
                .ok_or("the second argument must be an object")?;
            let mut m: Map<String, Value> = a.clone();
            for (k, x) in b {
                m.insert(k.clone(), x.clone());
            }
            Ok(Value::Object(m))
        }
        "States.MathRandom" | "States.MathAdd" => math(&f.name, &v),
        "States.StringSplit" => {
            want_n(&v, 2)?;
            let s = as_str(&v[0])?;
            let d: Vec<char> = as_str(&v[1])?.chars().collect();
            Ok(Value::Array(
                s.split(|c| d.contains(&c))
                    .filter(|p| !p.is_empty())
                    .map(|p| Value::String(p.to_string()))
                    .collect(),
            ))
        }
        "States.UUID" => {
            want_n(&v, 0)?;
            Ok(Value::String(uuid::Uuid::new_v4().to_string()))
        }
        other => Err(format!("unknown intrinsic function {other}")),
    }
}

/// The array functions but States.Array: ArrayPartition, ArrayContains, ArrayRange,
/// ArrayGetItem, ArrayLength and ArrayUnique.
fn array(name: &str, v: &[Value]) -> Result<Value, String> {
    match name {
        "States.ArrayPartition" => {
            want_n(v, 2)?;
            let a = as_arr(&v[0])?;
            let n = as_int(&v[1])?;
            if n <= 0 {
                return Err("the chunk size must be a positive integer".into());
            }
            Ok(Value::Array(
                a.chunks(n as usize)
                    .map(|c| Value::Array(c.to_vec()))
                    .collect(),
            ))
        }
        "States.ArrayContains" => {
            want_n(v, 2)?;
            Ok(Value::Bool(
                as_arr(&v[0])?.iter().any(|x| json_eq(x, &v[1])),
            ))
        }
        "States.ArrayRange" => {
            want_n(v, 3)?;
            let (s, e, st) = (as_int(&v[0])?, as_int(&v[1])?, as_int(&v[2])?);
            if st == 0 {
                return Err("the step must not be 0".into());
            }
            let mut out = Vec::new();
            let mut i = s;
            while (st > 0 && i <= e) || (st < 0 && i >= e) {
                out.push(Value::from(i));
                if out.len() > 1000 {
                    return Err("the range has more than 1000 items".into());
                }
                i += st;
            }
            Ok(Value::Array(out))
        }
        "States.ArrayGetItem" => {
            want_n(v, 2)?;
            let a = as_arr(&v[0])?;
            let i = as_int(&v[1])?;
            if i < 0 || i as usize >= a.len() {
                return Err(format!("index {i} is out of bounds (length {})", a.len()));
            }
            Ok(a[i as usize].clone())
        }
        "States.ArrayLength" => {
            want_n(v, 1)?;
            Ok(Value::from(as_arr(&v[0])?.len()))
        }
        "States.ArrayUnique" => {
            want_n(v, 1)?;
            let mut out: Vec<Value> = Vec::new();
            for x in as_arr(&v[0])? {
                if !out.iter().any(|y| json_eq(x, y)) {
                    out.push(x.clone());
                }
            }
            Ok(Value::Array(out))
        }
        other => Err(format!("unknown intrinsic function {other}")),
    }
}

/// The encoding functions: States.Base64Encode, Base64Decode and Hash.
fn encoding(name: &str, v: &[Value]) -> Result<Value, String> {
    match name {
        "States.Base64Encode" => {
            want_n(v, 1)?;
            Ok(Value::String(
                base64::engine::general_purpose::STANDARD.encode(as_str(&v[0])?),
            ))
        }
        "States.Base64Decode" => {
            want_n(v, 1)?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(as_str(&v[0])?)
                .map_err(|e| format!("not base64: {e}"))?;
            String::from_utf8(bytes)
                .map(Value::String)
                .map_err(|_| "the decoded data is not UTF-8".into())
        }
        "States.Hash" => {
            want_n(v, 2)?;
            let data = match &v[0] {
                Value::String(s) => s.clone(),
                other => serde_json::to_string(other).map_err(|e| e.to_string())?,
            };
            hash(data.as_bytes(), as_str(&v[1])?).map(Value::String)
        }
        other => Err(format!("unknown intrinsic function {other}")),
    }
}

/// The math functions: States.MathRandom and MathAdd.
fn math(name: &str, v: &[Value]) -> Result<Value, String> {
    match name {
        "States.MathRandom" => {
            if v.len() != 2 && v.len() != 3 {
                return Err(format!("expected 2 or 3 arguments, got {}", v.len()));
            }
            let (s, e) = (as_int(&v[0])?, as_int(&v[1])?);
            if e <= s {
                return Err("the end must be greater than the start".into());
            }
            use rand::{Rng, SeedableRng};
            let n = if v.len() == 3 {
                let seed = as_int(&v[2])? as u64;
                rand::rngs::StdRng::seed_from_u64(seed).gen_range(s..e)
            } else {
                rand::thread_rng().gen_range(s..e)
            };
            Ok(Value::from(n))
        }
        "States.MathAdd" => {
            want_n(v, 2)?;
            let (a, b) = (as_int(&v[0])?, as_int(&v[1])?);
            a.checked_add(b)
                .map(Value::from)
                .ok_or_else(|| "overflow".into())
        }
        other => Err(format!("unknown intrinsic function {other}")),
    }
}

/// Numbers compare by value (1 == 1.0), everything else structurally.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn hash(data: &[u8], algo: &str) -> Result<String, String> {
    use sha2::Digest;
    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }
    Ok(match algo {
        "MD5" => hex(&<md5::Md5 as md5::Digest>::digest(data)),
        "SHA-1" => hex(&sha1::Sha1::digest(data)),
        "SHA-256" => hex(&sha2::Sha256::digest(data)),
        "SHA-384" => hex(&sha2::Sha384::digest(data)),
        "SHA-512" => hex(&sha2::Sha512::digest(data)),
        other => return Err(format!("unsupported hash algorithm '{other}'")),
    })
}

fn format(f: &Intrinsic, v: &[Value]) -> Result<Value, String> {
    let raw = match f.args.first() {
        Some(Arg::Str(_, raw)) => raw.clone(),
        _ => return Err("the first argument must be a string literal".into()),
    };
    let mut args = v.iter().skip(1);
    let mut out = String::new();
    let chars: Vec<char> = raw.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            out.push(chars[i + 1]);
            i += 2;
        } else if c == '{' && chars.get(i + 1) == Some(&'}') {
            let a = args
                .next()
                .ok_or("the template has more {} placeholders than arguments")?;
            match a {
                Value::String(s) => out.push_str(s),
                Value::Number(_) | Value::Bool(_) | Value::Null => out.push_str(&a.to_string()),
                _ => return Err("arguments must be strings, numbers, booleans or null".into()),
            }
            i += 2;
        } else {
            out.push(c);
            i += 1;
        }
    }
    if args.next().is_some() {
        return Err("the template has fewer {} placeholders than arguments".into());
    }
    Ok(Value::String(out))
}

struct P<'a> {
    c: &'a [char],
    i: usize,
}

impl P<'_> {
    fn ws(&mut self) {
        while matches!(self.c.get(self.i), Some(c) if c.is_whitespace()) {
            self.i += 1;
        }
    }

    fn call(&mut self) -> Result<Intrinsic, String> {
        self.ws();
        let start = self.i;
        while matches!(self.c.get(self.i), Some(c) if c.is_ascii_alphanumeric() || *c == '.') {
            self.i += 1;
        }
        let name: String = self.c[start..self.i].iter().collect();
        if !FUNCTIONS.contains(&name.as_str()) {
            return Err(format!("unsupported intrinsic function '{name}'"));
        }
        self.ws();
        if self.c.get(self.i) != Some(&'(') {
            return Err(format!("expected '(' after {name}"));
        }
        self.i += 1;
        let mut args = Vec::new();
        self.ws();
        if self.c.get(self.i) == Some(&')') {
            self.i += 1;
        } else {
            loop {
                args.push(self.arg()?);
                self.ws();
                match self.c.get(self.i) {
                    Some(',') => self.i += 1,
                    Some(')') => {
                        self.i += 1;
                        break;
                    }
                    _ => return Err(format!("expected ',' or ')' in the arguments of {name}")),
                }
            }
        }
        Ok(Intrinsic { name, args })
    }

    fn arg(&mut self) -> Result<Arg, String> {
        self.ws();
        match self.c.get(self.i) {
            Some('\'') => {
                self.i += 1;
                let mut val = String::new();
                let mut raw = String::new();
                loop {
                    let c = *self.c.get(self.i).ok_or("unterminated string literal")?;
                    self.i += 1;
                    if c == '\\' {
                        let n = *self.c.get(self.i).ok_or("unterminated string literal")?;
                        self.i += 1;
                        val.push(n);
                        raw.push('\\');
                        raw.push(n);
                    } else if c == '\'' {
                        return Ok(Arg::Str(val, raw));
                    } else {
                        val.push(c);
                        raw.push(c);
                    }
                }
            }
            Some('$') => {
                let start = self.i;
                let mut depth = 0i32;
                let mut quote: Option<char> = None;
                while let Some(&c) = self.c.get(self.i) {
                    if let Some(q) = quote {
                        if c == q {
                            quote = None;
                        }
                    } else if c == '\'' || c == '"' {
                        quote = Some(c);
                    } else if c == '[' || c == '(' {
                        depth += 1;
                    } else if c == ']' || (c == ')' && depth > 0) {
                        depth -= 1;
                    } else if depth == 0 && (c == ',' || c == ')') {
                        break;
                    }
                    self.i += 1;
                }
                let text: String = self.c[start..self.i].iter().collect();
                JsonPath::parse(text.trim())
                    .map(Arg::Path)
                    .map_err(|e| e.to_string())
            }
            Some('S') => Ok(Arg::Call(self.call()?)),
            Some(_) => {
                let start = self.i;
                while matches!(self.c.get(self.i), Some(c) if !(*c == ',' || *c == ')')) {
                    self.i += 1;
                }
                let text: String = self.c[start..self.i].iter().collect();
                let t = text.trim();
                match serde_json::from_str::<Value>(t) {
                    Ok(v @ (Value::Number(_) | Value::Bool(_) | Value::Null)) => Ok(Arg::Lit(v)),
                    _ => Err(format!("invalid intrinsic argument '{t}'")),
                }
            }
            None => Err("missing argument".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(text: &str, input: Value) -> Result<Value, IntrinsicError> {
        Intrinsic::parse(text)
            .unwrap()
            .eval(&input, &json!({"Execution": {"Name": "ex1"}}))
    }

    #[test]
    fn intrinsic_format_fills_placeholders_and_honours_escapes() {
        assert_eq!(
            ev(
                "States.Format('Hello, my name is {}.', $.name)",
                json!({"name": "Arnav"})
            )
            .unwrap(),
            json!("Hello, my name is Arnav.")
        );
        assert_eq!(
            ev(
                "States.Format('{} is {} \\{\\} \\'q\\'', $.n, true)",
                json!({"n": 1.5})
            )
            .unwrap(),
            json!("1.5 is true {} 'q'")
        );
        assert_eq!(
            ev("States.Format('run {}', $$.Execution.Name)", json!({})).unwrap(),
            json!("run ex1")
        );
        assert!(matches!(
            ev("States.Format('{}')", json!({})),
            Err(IntrinsicError::Failure(_))
        ));
        assert!(matches!(
            ev("States.Format('{}', $.o)", json!({"o": {}})),
            Err(IntrinsicError::Failure(_))
        ));
    }

    #[test]
    fn intrinsic_string_to_json_and_json_to_string_round_trip() {
        assert_eq!(
            ev("States.StringToJson($.s)", json!({"s": "{\"a\":[1,2]}"})).unwrap(),
            json!({"a": [1, 2]})
        );
        assert_eq!(
            ev("States.JsonToString($.o)", json!({"o": {"b": 1, "a": "x"}})).unwrap(),
            json!("{\"b\":1,\"a\":\"x\"}")
        );
        assert!(ev("States.StringToJson('nope')", json!({})).is_err());
    }

    #[test]
    fn intrinsic_array_functions() {
        assert_eq!(
            ev("States.Array('a', 1, $.x, null)", json!({"x": [true]})).unwrap(),
            json!(["a", 1, [true], null])
        );
        assert_eq!(
            ev(
                "States.ArrayPartition($.a, 2)",
                json!({"a": [1, 2, 3, 4, 5]})
            )
            .unwrap(),
            json!([[1, 2], [3, 4], [5]])
        );
        assert_eq!(
            ev("States.ArrayContains($.a, 3)", json!({"a": [1, 2, 3]})).unwrap(),
            json!(true)
        );
        assert_eq!(
            ev("States.ArrayRange(1, 9, 2)", json!({})).unwrap(),
            json!([1, 3, 5, 7, 9])
        );
        assert_eq!(
            ev("States.ArrayGetItem($.a, 1)", json!({"a": [1, 2, 3]})).unwrap(),
            json!(2)
        );
        assert!(ev("States.ArrayGetItem($.a, 3)", json!({"a": [1, 2, 3]})).is_err());
        assert_eq!(
            ev("States.ArrayLength($.a)", json!({"a": [1, 2, 3]})).unwrap(),
            json!(3)
        );
        assert_eq!(
            ev("States.ArrayUnique($.a)", json!({"a": [1, 2, 1, "1", 2]})).unwrap(),
            json!([1, 2, "1"])
        );
        assert!(ev("States.ArrayRange(1, 2000, 1)", json!({})).is_err());
    }

    #[test]
    fn intrinsic_math_string_encoding_functions() {
        assert_eq!(
            ev("States.MathAdd($.v, -1)", json!({"v": 111})).unwrap(),
            json!(110)
        );
        let r = ev("States.MathRandom(1, 10)", json!({}))
            .unwrap()
            .as_i64()
            .unwrap();
        assert!((1..10).contains(&r));
        assert_eq!(
            ev("States.StringSplit('1,2;3', ',;')", json!({})).unwrap(),
            json!(["1", "2", "3"])
        );
        assert_eq!(
            ev("States.Base64Encode('Data to encode')", json!({})).unwrap(),
            json!("RGF0YSB0byBlbmNvZGU=")
        );
        assert_eq!(
            ev("States.Base64Decode('RGF0YSB0byBlbmNvZGU=')", json!({})).unwrap(),
            json!("Data to encode")
        );
        assert_eq!(
            ev("States.Hash('input data', 'SHA-1')", json!({})).unwrap(),
            json!("aaff4a450a104cd177d28d18d74485e8cae074b7")
        );
        assert_eq!(
            ev(
                "States.JsonMerge($.a, $.b, false)",
                json!({"a": {"x": 1, "y": {"p": 1}}, "b": {"y": {"q": 2}, "z": 3}})
            )
            .unwrap(),
            json!({"x": 1, "y": {"q": 2}, "z": 3})
        );
        let u = ev("States.UUID()", json!({})).unwrap();
        assert_eq!(u.as_str().unwrap().len(), 36);
    }

    #[test]
    fn intrinsic_nested_calls_and_missing_paths() {
        assert_eq!(
            ev(
                "States.ArrayLength(States.StringSplit($.s, ','))",
                json!({"s": "a,b,c"})
            )
            .unwrap(),
            json!(3)
        );
        assert!(matches!(
            ev("States.ArrayLength($.nope)", json!({})),
            Err(IntrinsicError::Path(_))
        ));
        assert!(Intrinsic::parse("States.Nope(1)").is_err());
        assert!(Intrinsic::parse("States.Format('x'").is_err());
    }
}
