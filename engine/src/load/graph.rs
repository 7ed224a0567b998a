//! A definition's graph: the machine's own fields, its states and their transitions,
//! and the graphs nested in Parallel branches and Map processors.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::choice::choice;
use super::fields::{
    check_fields, get_path, invalid, io_path, reference_path, root, seconds, str_or_path, template,
    unsupported,
};
use super::retry::common;
use super::task::task;
use super::wait::wait;
use crate::error::LoadError;
use crate::model::*;

/// Parse and validate a whole definition.
pub fn load_definition(v: &Value) -> Result<Graph, LoadError> {
    let obj = v.as_object().ok_or_else(|| LoadError::Invalid {
        state: None,
        message: "the definition must be a JSON object".into(),
    })?;
    if let Some(q) = obj.get("QueryLanguage") {
        if q != "JSONPath" {
            return Err(LoadError::Unsupported {
                state: None,
                feature: format!("QueryLanguage {q} (only JSONPath is supported; JSONata is not)"),
            });
        }
    }
    check_fields(
        None,
        obj,
        &[
            "Comment",
            "StartAt",
            "States",
            "Version",
            "TimeoutSeconds",
            "QueryLanguage",
        ],
        "the definition",
    )?;
    let g = graph(obj, None)?;
    let mut seen = HashSet::new();
    unique_names(&g, &mut seen)?;
    Ok(g)
}

/// State names are unique across the whole machine, nested branches and processors
/// included (Step Functions refuses duplicates).
fn unique_names<'a>(g: &'a Graph, seen: &mut HashSet<&'a str>) -> Result<(), LoadError> {
    let mut names: Vec<&String> = g.states.keys().collect();
    names.sort();
    for n in names {
        if !seen.insert(n.as_str()) {
            return Err(invalid(Some(n), "a state with this name already exists (state names are unique across the machine, branches included)"));
        }
        match &g.states[n].kind {
            Kind::Map(m) => unique_names(&m.processor, seen)?,
            Kind::Parallel(p) => {
                for b in &p.branches {
                    unique_names(b, seen)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Top-level TimeoutSeconds, if any.
pub fn machine_timeout(v: &Value) -> Result<Option<f64>, LoadError> {
    match v.get("TimeoutSeconds") {
        None => Ok(None),
        Some(t) => t
            .as_u64()
            .filter(|n| *n > 0)
            .map(|n| Some(n as f64))
            .ok_or_else(|| invalid(None, "TimeoutSeconds must be a positive integer")),
    }
}
fn graph(obj: &Map<String, Value>, owner: Option<&str>) -> Result<Graph, LoadError> {
    let start_at = obj
        .get("StartAt")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(owner, "StartAt (a string) is required"))?
        .to_string();
    let states_v = obj
        .get("States")
        .and_then(Value::as_object)
        .ok_or_else(|| invalid(owner, "States (an object) is required"))?;
    if states_v.is_empty() {
        return Err(invalid(owner, "States must not be empty"));
    }
    let mut states = HashMap::new();
    for (name, sv) in states_v {
        if name.chars().count() > 80 {
            return Err(invalid(
                Some(name),
                "a state name may have at most 80 characters",
            ));
        }
        states.insert(name.clone(), state(name, sv)?);
    }
    if !states.contains_key(&start_at) {
        return Err(invalid(
            owner,
            &format!("StartAt '{start_at}' is not a state"),
        ));
    }
    let names: HashSet<&String> = states.keys().collect();
    for s in states.values() {
        let mut targets: Vec<&String> = Vec::new();
        if let Some(n) = &s.next {
            targets.push(n);
        }
        match &s.kind {
            Kind::Choice { choices, default } => {
                targets.extend(choices.iter().map(|(_, n)| n));
                targets.extend(default.iter());
            }
            Kind::Task(t) => targets.extend(t.common.catch.iter().map(|c| &c.next)),
            Kind::Map(m) => targets.extend(m.common.catch.iter().map(|c| &c.next)),
            Kind::Parallel(p) => targets.extend(p.common.catch.iter().map(|c| &c.next)),
            _ => {}
        }
        for t in targets {
            if !names.contains(t) {
                return Err(invalid(
                    Some(&s.name),
                    &format!("the transition target '{t}' is not a state of the same scope"),
                ));
            }
        }
    }
    Ok(Graph { start_at, states })
}
const IO_FIELDS: &[&str] = &[
    "Type",
    "Comment",
    "Next",
    "End",
    "InputPath",
    "OutputPath",
    "QueryLanguage",
];

fn state(name: &str, v: &Value) -> Result<State, LoadError> {
    let obj = v
        .as_object()
        .ok_or_else(|| invalid(Some(name), "a state must be a JSON object"))?;
    if let Some(q) = obj.get("QueryLanguage") {
        if q != "JSONPath" {
            return Err(unsupported(name, &format!("QueryLanguage {q} (JSONata)")));
        }
    }
    let ty = obj
        .get("Type")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(Some(name), "Type (a string) is required"))?;
    let extra = own_fields(name, ty)?;
    let mut allowed: Vec<&str> = if ty == "Fail" {
        vec!["Type", "Comment", "QueryLanguage"]
    } else {
        IO_FIELDS.to_vec()
    };
    allowed.extend_from_slice(extra);
    check_fields(Some(name), obj, &allowed, &format!("a {ty} state"))?;
    let next = transition(name, ty, obj)?;
    let (input_path, output_path) = if ty == "Fail" {
        (Some(root()), Some(root()))
    } else {
        (
            io_path(name, obj, "InputPath")?,
            io_path(name, obj, "OutputPath")?,
        )
    };
    let kind = kind(name, ty, obj)?;
    Ok(State {
        name: name.to_string(),
        kind,
        next,
        input_path,
        output_path,
    })
}

/// The fields a state of type `ty` has besides Type, Comment, Next, End and its paths;
/// an unknown type is refused.
fn own_fields(name: &str, ty: &str) -> Result<&'static [&'static str], LoadError> {
    Ok(match ty {
        "Task" => &[
            "Resource",
            "Parameters",
            "ResultSelector",
            "ResultPath",
            "Retry",
            "Catch",
            "TimeoutSeconds",
            "TimeoutSecondsPath",
            "HeartbeatSeconds",
            "HeartbeatSecondsPath",
        ],
        "Pass" => &["Result", "ResultPath", "Parameters"],
        "Choice" => &["Choices", "Default"],
        "Wait" => &["Seconds", "SecondsPath", "Timestamp", "TimestampPath"],
        "Succeed" => &[],
        "Fail" => &["Error", "ErrorPath", "Cause", "CausePath"],
        "Map" => &[
            "ItemsPath",
            "ItemSelector",
            "Parameters",
            "ItemProcessor",
            "Iterator",
            "MaxConcurrency",
            "MaxConcurrencyPath",
            "ResultSelector",
            "ResultPath",
            "Retry",
            "Catch",
        ],
        "Parallel" => &[
            "Branches",
            "Parameters",
            "ResultSelector",
            "ResultPath",
            "Retry",
            "Catch",
        ],
        other => return Err(unsupported(name, &format!("state type '{other}'"))),
    })
}

/// The state's Next (None at its end). Choice, Succeed and Fail have neither Next nor
/// End; any other state exactly one of them.
fn transition(name: &str, ty: &str, obj: &Map<String, Value>) -> Result<Option<String>, LoadError> {
    let next = obj.get("Next");
    let end = obj.get("End");
    Ok(match ty {
        "Choice" | "Succeed" | "Fail" => {
            if next.is_some() || end.is_some() {
                return Err(invalid(
                    Some(name),
                    &format!("a {ty} state may not have Next or End"),
                ));
            }
            None
        }
        _ => match (next, end) {
            (Some(Value::String(n)), None) => Some(n.clone()),
            (None, Some(Value::Bool(true))) => None,
            (Some(_), Some(_)) => {
                return Err(invalid(Some(name), "Next and End are mutually exclusive"))
            }
            (None, Some(_)) => return Err(invalid(Some(name), "End must be true")),
            (Some(_), None) => return Err(invalid(Some(name), "Next must be a state name")),
            (None, None) => return Err(invalid(Some(name), "a state needs Next or End: true")),
        },
    })
}

/// The state's own part, read as its type says.
fn kind(name: &str, ty: &str, obj: &Map<String, Value>) -> Result<Kind, LoadError> {
    Ok(match ty {
        "Task" => Kind::Task(Box::new(task(name, obj)?)),
        "Pass" => Kind::Pass {
            result: obj.get("Result").cloned(),
            parameters: template(name, obj, "Parameters")?,
            result_path: reference_path(name, obj, "ResultPath")?,
        },
        "Choice" => choice(name, obj)?,
        "Wait" => wait(name, obj)?,
        "Succeed" => Kind::Succeed,
        "Fail" => Kind::Fail {
            error: str_or_path(name, obj, "Error", "ErrorPath")?,
            cause: str_or_path(name, obj, "Cause", "CausePath")?,
        },
        "Map" => Kind::Map(Box::new(map(name, obj)?)),
        "Parallel" => parallel(name, obj)?,
        // own_fields refused any other type.
        _ => unreachable!("checked above"),
    })
}

/// A Parallel state: its branches, each a graph of its own, and its Parameters.
fn parallel(name: &str, obj: &Map<String, Value>) -> Result<Kind, LoadError> {
    let branches = obj
        .get("Branches")
        .and_then(Value::as_array)
        .filter(|b| !b.is_empty())
        .ok_or_else(|| invalid(Some(name), "Branches (a non-empty array) is required"))?;
    let mut gs = Vec::new();
    for b in branches {
        let bo = b
            .as_object()
            .ok_or_else(|| invalid(Some(name), "each branch must be an object"))?;
        check_fields(
            Some(name),
            bo,
            &["StartAt", "States", "Comment"],
            "a Parallel branch",
        )?;
        gs.push(Arc::new(graph(bo, Some(name))?));
    }
    Ok(Kind::Parallel(Box::new(ParallelSpec {
        branches: gs,
        parameters: template(name, obj, "Parameters")?,
        common: common(name, obj)?,
    })))
}
fn map(name: &str, obj: &Map<String, Value>) -> Result<MapSpec, LoadError> {
    let (proc_v, field) = match (obj.get("ItemProcessor"), obj.get("Iterator")) {
        (Some(p), None) => (p, "ItemProcessor"),
        (None, Some(i)) => (i, "Iterator"),
        (Some(_), Some(_)) => {
            return Err(invalid(
                Some(name),
                "ItemProcessor and Iterator are mutually exclusive",
            ))
        }
        (None, None) => {
            return Err(invalid(
                Some(name),
                "a Map state needs ItemProcessor (or Iterator)",
            ))
        }
    };
    let po = proc_v
        .as_object()
        .ok_or_else(|| invalid(Some(name), &format!("{field} must be an object")))?;
    if let Some(pc) = po.get("ProcessorConfig") {
        let pco = pc
            .as_object()
            .ok_or_else(|| invalid(Some(name), "ProcessorConfig must be an object"))?;
        match pco.get("Mode").and_then(Value::as_str) {
            None | Some("INLINE") => {}
            Some("DISTRIBUTED") => {
                return Err(unsupported(
                    name,
                    "Distributed Map (ItemProcessor.ProcessorConfig.Mode DISTRIBUTED)",
                ))
            }
            Some(m) => {
                return Err(invalid(
                    Some(name),
                    &format!("unknown ProcessorConfig.Mode '{m}'"),
                ))
            }
        }
        check_fields(Some(name), pco, &["Mode"], "ProcessorConfig")?;
    }
    check_fields(
        Some(name),
        po,
        &["StartAt", "States", "Comment", "ProcessorConfig"],
        field,
    )?;
    if obj.contains_key("ItemSelector") && obj.contains_key("Parameters") {
        return Err(invalid(
            Some(name),
            "ItemSelector and Parameters are mutually exclusive",
        ));
    }
    let item_selector = match template(name, obj, "ItemSelector")? {
        Some(t) => Some(t),
        None => template(name, obj, "Parameters")?,
    };
    let items_path = get_path(name, obj, "ItemsPath", false)?.flatten();
    Ok(MapSpec {
        items_path,
        item_selector,
        processor: Arc::new(graph(po, Some(name))?),
        max_concurrency: seconds(name, obj, "MaxConcurrency", "MaxConcurrencyPath")?,
        common: common(name, obj)?,
    })
}
