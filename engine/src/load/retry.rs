//! Retry and Catch of Task, Map and Parallel states, with ResultSelector and ResultPath.

use serde_json::{Map, Value};

use super::fields::{check_fields, invalid, reference_path, template};
use crate::error::LoadError;
use crate::model::*;

pub(super) fn common(name: &str, obj: &Map<String, Value>) -> Result<Common, LoadError> {
    Ok(Common {
        result_selector: template(name, obj, "ResultSelector")?,
        result_path: reference_path(name, obj, "ResultPath")?,
        retry: retriers(name, obj)?,
        catch: catchers(name, obj)?,
    })
}

fn error_equals(name: &str, o: &Map<String, Value>, what: &str) -> Result<Vec<String>, LoadError> {
    let arr = o
        .get("ErrorEquals")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| {
            invalid(
                Some(name),
                &format!("each {what} needs a non-empty ErrorEquals"),
            )
        })?;
    let mut out = Vec::new();
    for e in arr {
        out.push(
            e.as_str()
                .ok_or_else(|| invalid(Some(name), "ErrorEquals holds strings"))?
                .to_string(),
        );
    }
    if out.iter().any(|e| e == "States.ALL") && out.len() != 1 {
        return Err(invalid(
            Some(name),
            &format!("States.ALL must appear alone in a {what}'s ErrorEquals"),
        ));
    }
    Ok(out)
}

fn all_last(name: &str, lists: &[&Vec<String>], what: &str) -> Result<(), LoadError> {
    for (i, l) in lists.iter().enumerate() {
        if l.iter().any(|e| e == "States.ALL") && i + 1 != lists.len() {
            return Err(invalid(
                Some(name),
                &format!("a {what} with States.ALL must be the last one"),
            ));
        }
    }
    Ok(())
}

fn retriers(name: &str, obj: &Map<String, Value>) -> Result<Vec<Retrier>, LoadError> {
    let Some(v) = obj.get("Retry") else {
        return Ok(vec![]);
    };
    let arr = v
        .as_array()
        .ok_or_else(|| invalid(Some(name), "Retry must be an array"))?;
    let mut out = Vec::new();
    for r in arr {
        let o = r
            .as_object()
            .ok_or_else(|| invalid(Some(name), "a retrier must be an object"))?;
        check_fields(
            Some(name),
            o,
            &[
                "ErrorEquals",
                "IntervalSeconds",
                "MaxAttempts",
                "BackoffRate",
                "MaxDelaySeconds",
                "JitterStrategy",
                "Comment",
            ],
            "a retrier",
        )?;
        let interval =
            match o.get("IntervalSeconds") {
                None => 1.0,
                Some(v) => v.as_u64().filter(|n| *n >= 1).ok_or_else(|| {
                    invalid(Some(name), "IntervalSeconds must be a positive integer")
                })? as f64,
            };
        let max_attempts =
            match o.get("MaxAttempts") {
                None => 3,
                Some(v) => v.as_u64().filter(|n| *n <= 99_999_999).ok_or_else(|| {
                    invalid(Some(name), "MaxAttempts must be a non-negative integer")
                })? as u32,
            };
        let backoff = match o.get("BackoffRate") {
            None => 2.0,
            Some(v) => v
                .as_f64()
                .filter(|n| *n >= 1.0)
                .ok_or_else(|| invalid(Some(name), "BackoffRate must be a number >= 1.0"))?,
        };
        let max_delay =
            match o.get("MaxDelaySeconds") {
                None => None,
                Some(v) => Some(v.as_u64().filter(|n| *n >= 1).ok_or_else(|| {
                    invalid(Some(name), "MaxDelaySeconds must be a positive integer")
                })? as f64),
            };
        let jitter = match o.get("JitterStrategy") {
            None => Jitter::None,
            Some(v) if v == "FULL" => Jitter::Full,
            Some(v) if v == "NONE" => Jitter::None,
            Some(_) => return Err(invalid(Some(name), "JitterStrategy must be FULL or NONE")),
        };
        out.push(Retrier {
            error_equals: error_equals(name, o, "retrier")?,
            interval_seconds: interval,
            max_attempts,
            backoff_rate: backoff,
            max_delay_seconds: max_delay,
            jitter,
        });
    }
    all_last(
        name,
        &out.iter().map(|r| &r.error_equals).collect::<Vec<_>>(),
        "retrier",
    )?;
    Ok(out)
}

fn catchers(name: &str, obj: &Map<String, Value>) -> Result<Vec<Catcher>, LoadError> {
    let Some(v) = obj.get("Catch") else {
        return Ok(vec![]);
    };
    let arr = v
        .as_array()
        .ok_or_else(|| invalid(Some(name), "Catch must be an array"))?;
    let mut out = Vec::new();
    for c in arr {
        let o = c
            .as_object()
            .ok_or_else(|| invalid(Some(name), "a catcher must be an object"))?;
        check_fields(
            Some(name),
            o,
            &["ErrorEquals", "Next", "ResultPath", "Comment"],
            "a catcher",
        )?;
        out.push(Catcher {
            error_equals: error_equals(name, o, "catcher")?,
            next: o
                .get("Next")
                .and_then(Value::as_str)
                .ok_or_else(|| invalid(Some(name), "each catcher needs Next"))?
                .to_string(),
            result_path: reference_path(name, o, "ResultPath")?,
        });
    }
    all_last(
        name,
        &out.iter().map(|c| &c.error_equals).collect::<Vec<_>>(),
        "catcher",
    )?;
    Ok(out)
}
