//! A Choice state's rules: And, Or, Not and the comparison operators.

use serde_json::{Map, Value};

use super::fields::{check_fields, invalid, unsupported};
use crate::error::LoadError;
use crate::model::*;
use crate::path::JsonPath;

pub(super) fn choice(name: &str, obj: &Map<String, Value>) -> Result<Kind, LoadError> {
    let arr = obj
        .get("Choices")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| invalid(Some(name), "Choices (a non-empty array) is required"))?;
    let mut choices = Vec::new();
    for c in arr {
        let o = c
            .as_object()
            .ok_or_else(|| invalid(Some(name), "a choice rule must be an object"))?;
        let next = o
            .get("Next")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid(Some(name), "each top-level choice rule needs Next"))?
            .to_string();
        choices.push((rule(name, o, true)?, next));
    }
    let default = match obj.get("Default") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(invalid(Some(name), "Default must be a state name")),
    };
    Ok(Kind::Choice { choices, default })
}

fn rule(name: &str, o: &Map<String, Value>, top: bool) -> Result<Rule, LoadError> {
    let mut allowed: Vec<&str> = vec!["Comment"];
    if top {
        allowed.push("Next");
    }
    let sub = |v: &Value| -> Result<Rule, LoadError> {
        let so = v
            .as_object()
            .ok_or_else(|| invalid(Some(name), "a nested choice rule must be an object"))?;
        if so.contains_key("Next") {
            return Err(invalid(
                Some(name),
                "a nested choice rule may not have Next",
            ));
        }
        rule(name, so, false)
    };
    for (k, ctor) in [("And", 0), ("Or", 1)] {
        if let Some(v) = o.get(k) {
            let mut a = allowed.clone();
            a.push(k);
            check_fields(Some(name), o, &a, "a choice rule")?;
            let arr = v
                .as_array()
                .filter(|a| !a.is_empty())
                .ok_or_else(|| invalid(Some(name), &format!("{k} must be a non-empty array")))?;
            let rules = arr.iter().map(sub).collect::<Result<Vec<_>, _>>()?;
            return Ok(if ctor == 0 {
                Rule::And(rules)
            } else {
                Rule::Or(rules)
            });
        }
    }
    if let Some(v) = o.get("Not") {
        allowed.push("Not");
        check_fields(Some(name), o, &allowed, "a choice rule")?;
        return Ok(Rule::Not(Box::new(sub(v)?)));
    }
    test(name, o, &allowed)
}

/// A comparison: Variable, exactly one operator (`allowed` are the rule's other fields)
/// and the operator's value or path.
fn test(name: &str, o: &Map<String, Value>, allowed: &[&str]) -> Result<Rule, LoadError> {
    let variable = o.get("Variable").and_then(Value::as_str).ok_or_else(|| {
        match o
            .keys()
            .find(|k| !allowed.contains(&k.as_str()) && *k != "Variable")
        {
            Some(k) if k == "Condition" => unsupported(name, "JSONata Condition in a choice rule"),
            _ => invalid(
                Some(name),
                "a choice rule needs Variable (or And / Or / Not)",
            ),
        }
    })?;
    let variable =
        JsonPath::parse(variable).map_err(|e| invalid(Some(name), &format!("Variable: {e}")))?;
    let ops: Vec<&String> = o
        .keys()
        .filter(|k| !allowed.contains(&k.as_str()) && *k != "Variable")
        .collect();
    if ops.len() != 1 {
        return Err(invalid(
            Some(name),
            "a choice rule needs exactly one comparison operator",
        ));
    }
    let opname = ops[0].as_str();
    let arg = &o[opname];
    let (base, is_path) = match opname.strip_suffix("Path") {
        Some(b) if b != "Is" && !b.is_empty() && opname != "IsPresentPath" => (b, true),
        _ => (opname, false),
    };
    let op = operator(name, opname, base, is_path)?;
    let operand = operand(name, opname, arg, &op, is_path)?;
    Ok(Rule::Test {
        variable,
        op,
        operand,
    })
}

/// The operator `opname` names (`base` without its `Path` suffix).
fn operator(name: &str, opname: &str, base: &str, is_path: bool) -> Result<Op, LoadError> {
    let cmp = |s: &str| -> Option<Cmp> {
        Some(match s {
            "Equals" => Cmp::Eq,
            "LessThan" => Cmp::Lt,
            "GreaterThan" => Cmp::Gt,
            "LessThanEquals" => Cmp::Le,
            "GreaterThanEquals" => Cmp::Ge,
            _ => return None,
        })
    };
    Ok(if let Some(c) = base.strip_prefix("String").and_then(cmp) {
        Op::String(c)
    } else if let Some(c) = base.strip_prefix("Numeric").and_then(cmp) {
        Op::Numeric(c)
    } else if let Some(c) = base.strip_prefix("Timestamp").and_then(cmp) {
        Op::Timestamp(c)
    } else {
        match base {
            "BooleanEquals" => Op::Boolean,
            "StringMatches" if !is_path => Op::StringMatches,
            "IsNull" => Op::IsNull,
            "IsPresent" => Op::IsPresent,
            "IsNumeric" => Op::IsNumeric,
            "IsString" => Op::IsString,
            "IsBoolean" => Op::IsBoolean,
            "IsTimestamp" => Op::IsTimestamp,
            _ => return Err(unsupported(name, &format!("choice operator '{opname}'"))),
        }
    })
}

/// The operator's path (a `...Path` operator) or its value, of the operator's type.
fn operand(
    name: &str,
    opname: &str,
    arg: &Value,
    op: &Op,
    is_path: bool,
) -> Result<Operand, LoadError> {
    Ok(if is_path {
        let s = arg
            .as_str()
            .ok_or_else(|| invalid(Some(name), &format!("{opname} must be a path string")))?;
        Operand::Path(
            JsonPath::parse(s).map_err(|e| invalid(Some(name), &format!("{opname}: {e}")))?,
        )
    } else {
        let ok = match op {
            Op::String(_) | Op::StringMatches => arg.is_string(),
            Op::Numeric(_) => arg.is_number(),
            Op::Timestamp(_) => arg
                .as_str()
                .and_then(crate::choice::parse_timestamp)
                .is_some(),
            _ => arg.is_boolean(),
        };
        if !ok {
            return Err(invalid(
                Some(name),
                &format!("{opname} has a value of the wrong type: {arg}"),
            ));
        }
        Operand::Value(arg.clone())
    })
}
