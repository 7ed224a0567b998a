//! JSONPath as Step Functions' JSONPath query language uses it (the Jayway flavour):
//! `$`, `.name`, `['name']`, `[index]`, `[*]`, `.*`, `..name`, `[a,b]`, `[start:end:step]`
//! and simple filters `[?(@.x op literal)]`, plus reference paths (ResultPath) that
//! address a single node and can be written to.

use serde_json::{Map, Value};

/// A parsed path. `context` is true for `$$` paths (the context object).
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    pub text: String,
    pub context: bool,
    segs: Vec<Seg>,
}

#[derive(Debug, Clone, PartialEq)]
enum Seg {
    Name(String),
    Index(i64),
    Wildcard,
    Names(Vec<String>),
    Indices(Vec<i64>),
    Slice(Option<i64>, Option<i64>, i64),
    Descend(Box<Seg>),
    Filter(Filter),
}

#[derive(Debug, Clone, PartialEq)]
enum Filter {
    Exists(Vec<Seg>),
    Cmp(Vec<Seg>, CmpOp, Value),
    And(Box<Filter>, Box<Filter>),
    Or(Box<Filter>, Box<Filter>),
    Not(Box<Filter>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Why a path text could not be parsed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid JSONPath '{path}': {reason}")]
pub struct PathError {
    pub path: String,
    pub reason: String,
}

impl JsonPath {
    /// Parse `$...` or `$$...`.
    pub fn parse(text: &str) -> Result<JsonPath, PathError> {
        let err = |reason: &str| PathError {
            path: text.to_string(),
            reason: reason.to_string(),
        };
        let (context, rest) = if let Some(r) = text.strip_prefix("$$") {
            (true, r)
        } else if let Some(r) = text.strip_prefix('$') {
            (false, r)
        } else {
            return Err(err("a path must start with '$'"));
        };
        let chars: Vec<char> = rest.chars().collect();
        let mut p = Parser { c: &chars, i: 0 };
        let segs = p.segments().map_err(|r| err(&r))?;
        if p.i != chars.len() {
            return Err(err(&format!("unexpected text at offset {}", p.i + 1)));
        }
        Ok(JsonPath {
            text: text.to_string(),
            context,
            segs,
        })
    }

    /// A path with no wildcard, slice, union, descent or filter: it selects one node.
    pub fn is_definite(&self) -> bool {
        self.segs
            .iter()
            .all(|s| matches!(s, Seg::Name(_) | Seg::Index(_)))
    }

    /// True for `$` / `$$`.
    pub fn is_root(&self) -> bool {
        self.segs.is_empty()
    }

    /// Select from `root`. A definite path gives the node or None when it is missing; an
    /// indefinite path gives an array of every match (possibly empty), as Jayway does.
    pub fn select(&self, root: &Value) -> Option<Value> {
        if self.is_definite() {
            let mut cur = root;
            for s in &self.segs {
                cur = match s {
                    Seg::Name(n) => cur.as_object()?.get(n)?,
                    Seg::Index(i) => {
                        let a = cur.as_array()?;
                        a.get(norm_index(*i, a.len())?)?
                    }
                    _ => return None,
                };
            }
            return Some(cur.clone());
        }
        let mut nodes: Vec<&Value> = vec![root];
        for s in &self.segs {
            let mut next = Vec::new();
            for n in nodes {
                apply(s, n, &mut next);
            }
            nodes = next;
        }
        Some(Value::Array(nodes.into_iter().cloned().collect()))
    }

    /// Write `value` at this reference path inside `root` (ResultPath semantics): missing
    /// object fields are created; a step through something that is not an object (or an
    /// array for an index) fails.
    pub fn write(&self, root: Value, value: Value) -> Result<Value, String> {
        if self.segs.is_empty() {
            return Ok(value);
        }
        if !self.is_definite() {
            return Err(format!("'{}' is not a reference path", self.text));
        }
        let mut root = root;
        write_at(&mut root, &self.segs, value, &self.text)?;
        Ok(root)
    }
}

fn write_at(node: &mut Value, segs: &[Seg], value: Value, text: &str) -> Result<(), String> {
    let (first, rest) = match segs.split_first() {
        Some(x) => x,
        None => {
            *node = value;
            return Ok(());
        }
    };
    match first {
        Seg::Name(n) => {
            let obj = node
                .as_object_mut()
                .ok_or_else(|| format!("Unable to apply ReferencePath {text} to input: a field '{n}' can only be set in an object"))?;
            let child = obj
                .entry(n.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            if rest.is_empty() {
                *child = value;
                Ok(())
            } else {
                write_at(child, rest, value, text)
            }
        }
        Seg::Index(i) => {
            let arr = node.as_array_mut().ok_or_else(|| {
                format!("Unable to apply ReferencePath {text} to input: index [{i}] needs an array")
            })?;
            let len = arr.len();
            let idx = norm_index(*i, len).ok_or_else(|| {
                format!(
                    "Unable to apply ReferencePath {text} to input: index [{i}] is out of bounds"
                )
            })?;
            write_at(&mut arr[idx], rest, value, text)
        }
        _ => Err(format!("'{text}' is not a reference path")),
    }
}

fn norm_index(i: i64, len: usize) -> Option<usize> {
    let len_i = len as i64;
    let j = if i < 0 { len_i + i } else { i };
    if j < 0 || j >= len_i {
        None
    } else {
        Some(j as usize)
    }
}

fn apply<'a>(s: &Seg, n: &'a Value, out: &mut Vec<&'a Value>) {
    match s {
        Seg::Name(name) => {
            if let Some(v) = n.as_object().and_then(|o| o.get(name)) {
                out.push(v)
            }
        }
        Seg::Index(i) => {
            if let Some(a) = n.as_array() {
                if let Some(j) = norm_index(*i, a.len()) {
                    out.push(&a[j])
                }
            }
        }
        Seg::Wildcard => match n {
            Value::Object(o) => out.extend(o.values()),
            Value::Array(a) => out.extend(a.iter()),
            _ => {}
        },
        Seg::Names(names) => {
            if let Some(o) = n.as_object() {
                for name in names {
                    if let Some(v) = o.get(name) {
                        out.push(v)
                    }
                }
            }
        }
        Seg::Indices(ix) => {
            if let Some(a) = n.as_array() {
                for i in ix {
                    if let Some(j) = norm_index(*i, a.len()) {
                        out.push(&a[j])
                    }
                }
            }
        }
        Seg::Slice(start, end, step) => {
            if let Some(a) = n.as_array() {
                let len = a.len() as i64;
                let clamp = |x: i64| if x < 0 { (len + x).max(0) } else { x.min(len) };
                let s = start.map(clamp).unwrap_or(0);
                let e = end.map(clamp).unwrap_or(len);
                let mut i = s;
                while i < e {
                    out.push(&a[i as usize]);
                    i += (*step).max(1);
                }
            }
        }
        Seg::Descend(inner) => descend(inner, n, out),
        Seg::Filter(f) => {
            let items: Vec<&Value> = match n {
                Value::Array(a) => a.iter().collect(),
                Value::Object(o) => o.values().collect(),
                _ => vec![],
            };
            for it in items {
                if filter_matches(f, it) {
                    out.push(it)
                }
            }
        }
    }
}

fn descend<'a>(inner: &Seg, n: &'a Value, out: &mut Vec<&'a Value>) {
    apply(inner, n, out);
    match n {
        Value::Object(o) => o.values().for_each(|v| descend(inner, v, out)),
        Value::Array(a) => a.iter().for_each(|v| descend(inner, v, out)),
        _ => {}
    }
}

fn select_rel<'a>(segs: &[Seg], n: &'a Value) -> Option<&'a Value> {
    let mut cur = n;
    for s in segs {
        cur = match s {
            Seg::Name(name) => cur.as_object()?.get(name)?,
            Seg::Index(i) => {
                let a = cur.as_array()?;
                a.get(norm_index(*i, a.len())?)?
            }
            _ => return None,
        };
    }
    Some(cur)
}

fn filter_matches(f: &Filter, n: &Value) -> bool {
    match f {
        Filter::Exists(p) => select_rel(p, n).is_some(),
        Filter::Not(x) => !filter_matches(x, n),
        Filter::And(a, b) => filter_matches(a, n) && filter_matches(b, n),
        Filter::Or(a, b) => filter_matches(a, n) || filter_matches(b, n),
        Filter::Cmp(p, op, lit) => {
            let Some(v) = select_rel(p, n) else {
                return false;
            };
            let ord = match (v, lit) {
                (Value::Number(a), Value::Number(b)) => a
                    .as_f64()
                    .zip(b.as_f64())
                    .and_then(|(a, b)| a.partial_cmp(&b)),
                (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
                _ => {
                    return match op {
                        CmpOp::Eq => v == lit,
                        CmpOp::Ne => v != lit,
                        _ => false,
                    }
                }
            };
            let Some(o) = ord else { return false };
            use std::cmp::Ordering::*;
            match op {
                CmpOp::Eq => o == Equal,
                CmpOp::Ne => o != Equal,
                CmpOp::Lt => o == Less,
                CmpOp::Le => o != Greater,
                CmpOp::Gt => o == Greater,
                CmpOp::Ge => o != Less,
            }
        }
    }
}

struct Parser<'a> {
    c: &'a [char],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.c.get(self.i).copied()
    }
    fn eat(&mut self, ch: char) -> bool {
        if self.peek() == Some(ch) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn ws(&mut self) {
        while matches!(self.peek(), Some(c) if c.is_whitespace()) {
            self.i += 1;
        }
    }

    fn segments(&mut self) -> Result<Vec<Seg>, String> {
        let mut segs = Vec::new();
        while let Some(c) = self.peek() {
            match c {
                '.' => {
                    self.i += 1;
                    if self.eat('.') {
                        let inner = if self.peek() == Some('[') {
                            self.bracket()?
                        } else {
                            self.dot_member()?
                        };
                        segs.push(Seg::Descend(Box::new(inner)));
                    } else {
                        segs.push(self.dot_member()?);
                    }
                }
                '[' => segs.push(self.bracket()?),
                _ => break,
            }
        }
        Ok(segs)
    }

    fn dot_member(&mut self) -> Result<Seg, String> {
        if self.eat('*') {
            return Ok(Seg::Wildcard);
        }
        let start = self.i;
        while let Some(c) = self.peek() {
            if c == '.' || c == '[' || c == ')' || c == ' ' || c == ',' {
                break;
            }
            self.i += 1;
        }
        if self.i == start {
            return Err("empty field name".into());
        }
        Ok(Seg::Name(self.c[start..self.i].iter().collect()))
    }

    fn quoted(&mut self) -> Result<String, String> {
        let q = self.peek().ok_or("unterminated quote")?;
        self.i += 1;
        let mut s = String::new();
        loop {
            let c = self.peek().ok_or("unterminated quote")?;
            self.i += 1;
            if c == '\\' {
                let n = self.peek().ok_or("unterminated quote")?;
                self.i += 1;
                s.push(n);
            } else if c == q {
                return Ok(s);
            } else {
                s.push(c);
            }
        }
    }

    fn int(&mut self) -> Result<i64, String> {
        let start = self.i;
        if self.peek() == Some('-') {
            self.i += 1;
        }
        while matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
            self.i += 1;
        }
        let t: String = self.c[start..self.i].iter().collect();
        t.parse::<i64>()
            .map_err(|_| format!("expected an integer, found '{t}'"))
    }

    fn bracket(&mut self) -> Result<Seg, String> {
        self.i += 1; // '['
        self.ws();
        let seg = match self.peek() {
            Some('*') => {
                self.i += 1;
                Seg::Wildcard
            }
            Some('\'') | Some('"') => {
                let mut names = vec![self.quoted()?];
                self.ws();
                while self.eat(',') {
                    self.ws();
                    names.push(self.quoted()?);
                    self.ws();
                }
                if names.len() == 1 {
                    Seg::Name(names.remove(0))
                } else {
                    Seg::Names(names)
                }
            }
            Some('?') => {
                self.i += 1;
                self.ws();
                if !self.eat('(') {
                    return Err("a filter must be written [?(...)]".into());
                }
                let f = self.filter_or()?;
                self.ws();
                if !self.eat(')') {
                    return Err("unterminated filter".into());
                }
                Seg::Filter(f)
            }
            Some(':') => self.slice(None)?,
            Some(c) if c == '-' || c.is_ascii_digit() => {
                let first = self.int()?;
                self.ws();
                if self.peek() == Some(':') {
                    self.slice(Some(first))?
                } else {
                    let mut ix = vec![first];
                    while self.eat(',') {
                        self.ws();
                        ix.push(self.int()?);
                        self.ws();
                    }
                    if ix.len() == 1 {
                        Seg::Index(first)
                    } else {
                        Seg::Indices(ix)
                    }
                }
            }
            _ => return Err("unsupported bracket expression".into()),
        };
        self.ws();
        if !self.eat(']') {
            return Err("expected ']'".into());
        }
        Ok(seg)
    }

    fn slice(&mut self, start: Option<i64>) -> Result<Seg, String> {
        self.eat(':');
        self.ws();
        let end = if matches!(self.peek(), Some(c) if c == '-' || c.is_ascii_digit()) {
            Some(self.int()?)
        } else {
            None
        };
        self.ws();
        let step = if self.eat(':') {
            self.ws();
            self.int()?
        } else {
            1
        };
        if step <= 0 {
            return Err("a slice step must be positive".into());
        }
        Ok(Seg::Slice(start, end, step))
    }

    fn filter_or(&mut self) -> Result<Filter, String> {
        let mut left = self.filter_and()?;
        loop {
            self.ws();
            if self.c[self.i..].starts_with(&['|', '|']) {
                self.i += 2;
                let right = self.filter_and()?;
                left = Filter::Or(Box::new(left), Box::new(right));
            } else {
                return Ok(left);
            }
        }
    }

    fn filter_and(&mut self) -> Result<Filter, String> {
        let mut left = self.filter_atom()?;
        loop {
            self.ws();
            if self.c[self.i..].starts_with(&['&', '&']) {
                self.i += 2;
                let right = self.filter_atom()?;
                left = Filter::And(Box::new(left), Box::new(right));
            } else {
                return Ok(left);
            }
        }
    }

    fn filter_atom(&mut self) -> Result<Filter, String> {
        self.ws();
        if self.eat('!') {
            return Ok(Filter::Not(Box::new(self.filter_atom()?)));
        }
        if self.eat('(') {
            let f = self.filter_or()?;
            self.ws();
            if !self.eat(')') {
                return Err("expected ')' in filter".into());
            }
            return Ok(f);
        }
        if !self.eat('@') {
            return Err("a filter term must start with '@'".into());
        }
        let segs = self.segments()?;
        if !segs
            .iter()
            .all(|s| matches!(s, Seg::Name(_) | Seg::Index(_)))
        {
            return Err("a filter may only use simple paths".into());
        }
        self.ws();
        let ops = [
            ("==", CmpOp::Eq),
            ("!=", CmpOp::Ne),
            ("<=", CmpOp::Le),
            (">=", CmpOp::Ge),
            ("<", CmpOp::Lt),
            (">", CmpOp::Gt),
        ];
        for (t, op) in ops {
            let tc: Vec<char> = t.chars().collect();
            if self.c[self.i..].starts_with(&tc) {
                self.i += tc.len();
                self.ws();
                let lit = self.literal()?;
                return Ok(Filter::Cmp(segs, op, lit));
            }
        }
        Ok(Filter::Exists(segs))
    }

    fn literal(&mut self) -> Result<Value, String> {
        match self.peek() {
            Some('\'') | Some('"') => Ok(Value::String(self.quoted()?)),
            _ => {
                let start = self.i;
                while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '+')
                {
                    self.i += 1;
                }
                let t: String = self.c[start..self.i].iter().collect();
                serde_json::from_str::<Value>(&t)
                    .map_err(|_| format!("bad literal '{t}' in filter"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sel(p: &str, v: &Value) -> Option<Value> {
        JsonPath::parse(p).unwrap().select(v)
    }

    #[test]
    fn jsonpath_definite_paths_select_one_node_or_none() {
        let v = json!({"a": {"b": [10, 20, {"c": "x"}]}, "k y": 1});
        assert_eq!(sel("$", &v), Some(v.clone()));
        assert_eq!(sel("$.a.b[1]", &v), Some(json!(20)));
        assert_eq!(sel("$.a.b[-1].c", &v), Some(json!("x")));
        assert_eq!(sel("$['k y']", &v), Some(json!(1)));
        assert_eq!(sel("$.a.missing", &v), None);
        assert_eq!(sel("$.a.b[9]", &v), None);
    }

    #[test]
    fn jsonpath_indefinite_paths_return_arrays() {
        let v = json!({"items": [{"n": 1, "t": "a"}, {"n": 2, "t": "b"}, {"n": 3}]});
        assert_eq!(sel("$.items[*].n", &v), Some(json!([1, 2, 3])));
        assert_eq!(sel("$..t", &v), Some(json!(["a", "b"])));
        assert_eq!(sel("$.items[0:2].n", &v), Some(json!([1, 2])));
        assert_eq!(sel("$.items[0,2].n", &v), Some(json!([1, 3])));
        assert_eq!(sel("$.items[?(@.n > 1)].n", &v), Some(json!([2, 3])));
        assert_eq!(sel("$.items[?(@.t == 'a')].n", &v), Some(json!([1])));
        assert_eq!(sel("$.items[?(@.t)].n", &v), Some(json!([1, 2])));
        assert_eq!(sel("$.nothing[*]", &v), Some(json!([])));
    }

    #[test]
    fn reference_path_write_creates_fields_and_refuses_non_objects() {
        let p = JsonPath::parse("$.a.b").unwrap();
        assert_eq!(
            p.write(json!({"x": 1}), json!(2)).unwrap(),
            json!({"x": 1, "a": {"b": 2}})
        );
        assert!(p.write(json!({"a": "s"}), json!(2)).is_err());
        assert!(p.write(json!("s"), json!(2)).is_err());
        let root = JsonPath::parse("$").unwrap();
        assert_eq!(root.write(json!({"x": 1}), json!(5)).unwrap(), json!(5));
    }

    #[test]
    fn jsonpath_parse_errors() {
        assert!(JsonPath::parse("a.b").is_err());
        assert!(JsonPath::parse("$.a[").is_err());
        assert!(JsonPath::parse("$.a[?(x)]").is_err());
    }
}
