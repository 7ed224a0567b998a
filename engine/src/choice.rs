//! Choice rules: comparisons of the JSONPath query language, And / Or / Not, Is* tests.

use std::cmp::Ordering;

use chrono::{DateTime, FixedOffset};
use serde_json::Value;

use crate::model::{Cmp, Op, Operand, Rule};

/// Parse an RFC 3339 timestamp as Step Functions accepts it (upper-case T, Z or offset).
pub fn parse_timestamp(s: &str) -> Option<DateTime<FixedOffset>> {
    if !s.contains('T') {
        return None;
    }
    DateTime::parse_from_rfc3339(s).ok()
}

/// `Err` is a States.Runtime cause (a Variable or a *Path operand that selects nothing).
pub fn eval(rule: &Rule, input: &Value, ctx: &Value) -> Result<bool, String> {
    match rule {
        Rule::And(rs) => {
            for r in rs {
                if !eval(r, input, ctx)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        Rule::Or(rs) => {
            for r in rs {
                if eval(r, input, ctx)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        Rule::Not(r) => Ok(!eval(r, input, ctx)?),
        Rule::Test {
            variable,
            op,
            operand,
        } => {
            let root = if variable.context { ctx } else { input };
            let var = variable.select(root);
            if *op == Op::IsPresent {
                let want = operand_bool(operand);
                return Ok(var.is_some() == want);
            }
            let Some(var) = var else {
                return Err(format!(
                    "Invalid path '{}': The choice state's condition path references an invalid value.",
                    variable.text
                ));
            };
            let rhs = match operand {
                Operand::Value(v) => v.clone(),
                Operand::Path(p) => {
                    let root = if p.context { ctx } else { input };
                    p.select(root).ok_or_else(|| {
                        format!(
                            "Invalid path '{}': The choice state's condition path references an invalid value.",
                            p.text
                        )
                    })?
                }
            };
            Ok(test(*op, &var, &rhs))
        }
    }
}

fn operand_bool(o: &Operand) -> bool {
    matches!(o, Operand::Value(Value::Bool(true)))
}

fn cmp_ok(c: Cmp, o: Ordering) -> bool {
    match c {
        Cmp::Eq => o == Ordering::Equal,
        Cmp::Lt => o == Ordering::Less,
        Cmp::Gt => o == Ordering::Greater,
        Cmp::Le => o != Ordering::Greater,
        Cmp::Ge => o != Ordering::Less,
    }
}

fn test(op: Op, var: &Value, rhs: &Value) -> bool {
    let want = rhs.as_bool() == Some(true);
    match op {
        Op::String(c) => match (var.as_str(), rhs.as_str()) {
            (Some(a), Some(b)) => cmp_ok(c, a.cmp(b)),
            _ => false,
        },
        Op::StringMatches => match (var.as_str(), rhs.as_str()) {
            (Some(a), Some(p)) => string_matches(a, p),
            _ => false,
        },
        Op::Numeric(c) => match (var.as_f64(), rhs.as_f64()) {
            (Some(a), Some(b)) if var.is_number() && rhs.is_number() => {
                a.partial_cmp(&b).is_some_and(|o| cmp_ok(c, o))
            }
            _ => false,
        },
        Op::Boolean => match (var.as_bool(), rhs.as_bool()) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        },
        Op::Timestamp(c) => match (
            var.as_str().and_then(parse_timestamp),
            rhs.as_str().and_then(parse_timestamp),
        ) {
            (Some(a), Some(b)) => cmp_ok(c, a.cmp(&b)),
            _ => false,
        },
        Op::IsNull => var.is_null() == want,
        Op::IsNumeric => var.is_number() == want,
        Op::IsString => var.is_string() == want,
        Op::IsBoolean => var.is_boolean() == want,
        Op::IsTimestamp => var.as_str().and_then(parse_timestamp).is_some() == want,
        Op::IsPresent => want,
    }
}

/// `*` matches any run of characters; `\*` and `\\` are literal.
pub fn string_matches(s: &str, pattern: &str) -> bool {
    #[derive(Debug, PartialEq)]
    enum T {
        Lit(char),
        Star,
    }
    let mut toks = Vec::new();
    let mut it = pattern.chars();
    while let Some(c) = it.next() {
        match c {
            '\\' => match it.next() {
                Some(n) => toks.push(T::Lit(n)),
                None => toks.push(T::Lit('\\')),
            },
            '*' => toks.push(T::Star),
            c => toks.push(T::Lit(c)),
        }
    }
    let s: Vec<char> = s.chars().collect();
    // Classic wildcard matching with backtracking on the last star.
    let (mut i, mut j) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        if j < toks.len() && toks[j] == T::Lit(s[i]) {
            i += 1;
            j += 1;
        } else if j < toks.len() && toks[j] == T::Star {
            star = Some((j, i));
            j += 1;
        } else if let Some((sj, si)) = star {
            j = sj + 1;
            i = si + 1;
            star = Some((sj, si + 1));
        } else {
            return false;
        }
    }
    while j < toks.len() && toks[j] == T::Star {
        j += 1;
    }
    j == toks.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_matches_wildcards_and_escapes() {
        assert!(string_matches("log-2024.txt", "log-*.txt"));
        assert!(string_matches("anything", "*"));
        assert!(!string_matches("log-2024.csv", "log-*.txt"));
        assert!(string_matches("a*b", "a\\*b"));
        assert!(!string_matches("axb", "a\\*b"));
        assert!(string_matches("abcbc", "a*bc"));
    }

    #[test]
    fn timestamps_need_rfc3339_with_t() {
        assert!(parse_timestamp("2016-03-14T01:59:00Z").is_some());
        assert!(parse_timestamp("2016-03-14T01:59:00.123+02:00").is_some());
        assert!(parse_timestamp("2016-03-14 01:59:00Z").is_none());
        assert!(parse_timestamp("yesterday").is_none());
    }
}
