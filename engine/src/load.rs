//! Load a definition: parse the JSON, apply definition substitutions, and validate every
//! state against what this engine implements. Anything else is refused by name.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::LoadError;
use crate::intrinsic::Intrinsic;
use crate::model::*;
use crate::path::JsonPath;
use crate::template::Template;

/// Replace every `${Name}` inside string values. An unknown name is an error.
pub fn substitute(v: Value, subs: &HashMap<String, String>) -> Result<Value, LoadError> {
    Ok(match v {
        Value::String(s) => Value::String(subst_str(&s, subs)?),
        Value::Array(a) => Value::Array(
            a.into_iter()
                .map(|x| substitute(x, subs))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(m) => {
            let mut out = Map::with_capacity(m.len());
            for (k, x) in m {
                out.insert(k, substitute(x, subs)?);
            }
            Value::Object(out)
        }
        other => other,
    })
}

fn subst_str(s: &str, subs: &HashMap<String, String>) -> Result<String, LoadError> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let name = &after[..end];
        match subs.get(name) {
            Some(v) => out.push_str(v),
            None => {
                return Err(LoadError::MissingSubstitution {
                    name: name.to_string(),
                })
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

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

fn invalid(state: Option<&str>, message: &str) -> LoadError {
    LoadError::Invalid {
        state: state.map(str::to_string),
        message: message.to_string(),
    }
}

fn unsupported(state: &str, feature: &str) -> LoadError {
    LoadError::Unsupported {
        state: Some(state.to_string()),
        feature: feature.to_string(),
    }
}

/// Fields Step Functions knows but this engine refuses, with the reason.
const REFUSED_FIELDS: &[(&str, &str)] = &[
    ("QueryLanguage", "QueryLanguage JSONata"),
    ("Assign", "variables (Assign)"),
    ("Arguments", "Arguments (JSONata)"),
    ("Output", "Output (JSONata)"),
    ("Credentials", "Task Credentials"),
    ("ItemReader", "Map ItemReader (Distributed Map)"),
    ("ResultWriter", "Map ResultWriter (Distributed Map)"),
    ("ItemBatcher", "Map ItemBatcher (Distributed Map)"),
    ("Label", "Map Label (Distributed Map)"),
    (
        "ToleratedFailurePercentage",
        "Map ToleratedFailurePercentage (Distributed Map)",
    ),
    (
        "ToleratedFailureCount",
        "Map ToleratedFailureCount (Distributed Map)",
    ),
    (
        "ToleratedFailurePercentagePath",
        "Map ToleratedFailurePercentagePath (Distributed Map)",
    ),
    (
        "ToleratedFailureCountPath",
        "Map ToleratedFailureCountPath (Distributed Map)",
    ),
];

fn check_fields(
    state: Option<&str>,
    obj: &Map<String, Value>,
    allowed: &[&str],
    what: &str,
) -> Result<(), LoadError> {
    for k in obj.keys() {
        if allowed.contains(&k.as_str()) {
            continue;
        }
        if let Some((_, feature)) = REFUSED_FIELDS.iter().find(|(f, _)| f == k) {
            if k == "QueryLanguage" && obj.get(k) == Some(&Value::String("JSONPath".into())) {
                continue;
            }
            return Err(LoadError::Unsupported {
                state: state.map(str::to_string),
                feature: feature.to_string(),
            });
        }
        return Err(LoadError::Unsupported {
            state: state.map(str::to_string),
            feature: format!("unknown field '{k}' in {what}"),
        });
    }
    Ok(())
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

fn get_path(
    state: &str,
    obj: &Map<String, Value>,
    field: &str,
    nullable: bool,
) -> Result<Option<Option<JsonPath>>, LoadError> {
    match obj.get(field) {
        None => Ok(None),
        Some(Value::Null) if nullable => Ok(Some(None)),
        Some(Value::String(s)) => JsonPath::parse(s)
            .map(|p| Some(Some(p)))
            .map_err(|e| invalid(Some(state), &format!("{field}: {e}"))),
        Some(_) => Err(invalid(
            Some(state),
            &format!(
                "{field} must be a path string{}",
                if nullable { " or null" } else { "" }
            ),
        )),
    }
}

/// InputPath / OutputPath: default `$`, null allowed.
fn io_path(
    state: &str,
    obj: &Map<String, Value>,
    field: &str,
) -> Result<Option<JsonPath>, LoadError> {
    match get_path(state, obj, field, true)? {
        None => Ok(Some(root())),
        Some(p) => Ok(p),
    }
}

fn root() -> JsonPath {
    JsonPath::parse("$").unwrap_or_else(|_| unreachable!("'$' is a valid path"))
}

fn reference_path(
    state: &str,
    obj: &Map<String, Value>,
    field: &str,
) -> Result<Option<JsonPath>, LoadError> {
    let p = match get_path(state, obj, field, true)? {
        None => Some(root()),
        Some(p) => p,
    };
    if let Some(p) = &p {
        if !p.is_definite() || p.context {
            return Err(invalid(
                Some(state),
                &format!(
                    "{field} must be a reference path (no wildcards, filters or $$), found '{}'",
                    p.text
                ),
            ));
        }
    }
    Ok(p)
}

fn template(
    state: &str,
    obj: &Map<String, Value>,
    field: &str,
) -> Result<Option<Template>, LoadError> {
    match obj.get(field) {
        None => Ok(None),
        Some(v) => Template::compile(v)
            .map(Some)
            .map_err(|e| invalid(Some(state), &format!("{field}: {e}"))),
    }
}

fn seconds(
    state: &str,
    obj: &Map<String, Value>,
    field: &str,
    path_field: &str,
) -> Result<Option<Seconds>, LoadError> {
    if obj.contains_key(field) && obj.contains_key(path_field) {
        return Err(invalid(
            Some(state),
            &format!("{field} and {path_field} are mutually exclusive"),
        ));
    }
    if let Some(v) = obj.get(field) {
        let n = v.as_u64().ok_or_else(|| {
            invalid(
                Some(state),
                &format!("{field} must be a non-negative integer"),
            )
        })?;
        return Ok(Some(Seconds::Fixed(n as f64)));
    }
    Ok(get_path(state, obj, path_field, false)?
        .flatten()
        .map(Seconds::Path))
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
    let extra: &[&str] = match ty {
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
    };
    let mut allowed: Vec<&str> = if ty == "Fail" {
        vec!["Type", "Comment", "QueryLanguage"]
    } else {
        IO_FIELDS.to_vec()
    };
    allowed.extend_from_slice(extra);
    check_fields(Some(name), obj, &allowed, &format!("a {ty} state"))?;

    // Transitions.
    let next = obj.get("Next");
    let end = obj.get("End");
    let next = match ty {
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
    };
    let (input_path, output_path) = if ty == "Fail" {
        (Some(root()), Some(root()))
    } else {
        (
            io_path(name, obj, "InputPath")?,
            io_path(name, obj, "OutputPath")?,
        )
    };

    let kind = match ty {
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
        "Parallel" => {
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
            Kind::Parallel(Box::new(ParallelSpec {
                branches: gs,
                parameters: template(name, obj, "Parameters")?,
                common: common(name, obj)?,
            }))
        }
        _ => unreachable!("checked above"),
    };
    Ok(State {
        name: name.to_string(),
        kind,
        next,
        input_path,
        output_path,
    })
}

fn str_or_path(
    name: &str,
    obj: &Map<String, Value>,
    f: &str,
    pf: &str,
) -> Result<Option<StrOrPath>, LoadError> {
    if obj.contains_key(f) && obj.contains_key(pf) {
        return Err(invalid(
            Some(name),
            &format!("{f} and {pf} are mutually exclusive"),
        ));
    }
    if let Some(v) = obj.get(f) {
        let s = v
            .as_str()
            .ok_or_else(|| invalid(Some(name), &format!("{f} must be a string")))?;
        return Ok(Some(StrOrPath::Str(s.to_string())));
    }
    match obj.get(pf) {
        None => Ok(None),
        Some(Value::String(s)) if s.starts_with("States.") => Intrinsic::parse(s)
            .map(|c| Some(StrOrPath::Call(c)))
            .map_err(|e| invalid(Some(name), &format!("{pf}: {e}"))),
        Some(Value::String(s)) => JsonPath::parse(s)
            .map(|p| Some(StrOrPath::Path(p)))
            .map_err(|e| invalid(Some(name), &format!("{pf}: {e}"))),
        Some(_) => Err(invalid(Some(name), &format!("{pf} must be a string"))),
    }
}

fn common(name: &str, obj: &Map<String, Value>) -> Result<Common, LoadError> {
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

fn task(name: &str, obj: &Map<String, Value>) -> Result<TaskSpec, LoadError> {
    let res = obj
        .get("Resource")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(Some(name), "Resource (a string) is required"))?;
    let resource = match res {
        "arn:aws:states:::lambda:invoke" => Resource::LambdaInvoke,
        "arn:aws:states:::lambda:invoke.waitForTaskToken" => Resource::LambdaInvokeWaitForTaskToken,
        "arn:aws:states:::states:startExecution.sync:2" => Resource::StartExecutionSync { v2: true },
        "arn:aws:states:::states:startExecution.sync" => Resource::StartExecutionSync { v2: false },
        "arn:aws:states:::states:startExecution" => Resource::StartExecution,
        r if is_lambda_arn(r) => Resource::LambdaArn(r.to_string()),
        r => return Err(unsupported(name, &format!("Task resource '{r}' (supported: arn:aws:states:::lambda:invoke[.waitForTaskToken], a Lambda function ARN, arn:aws:states:::states:startExecution[.sync[:2]])"))),
    };
    let parameters = template(name, obj, "Parameters")?;
    if matches!(
        resource,
        Resource::LambdaInvoke | Resource::LambdaInvokeWaitForTaskToken
    ) {
        let has_fn = matches!(&parameters, Some(Template::Object(f)) if f.iter().any(|(k, _)| k == "FunctionName"));
        if !has_fn {
            return Err(invalid(
                Some(name),
                "lambda:invoke needs Parameters.FunctionName",
            ));
        }
    }
    if resource == Resource::LambdaInvokeWaitForTaskToken
        && !passes_task_token(obj.get("Parameters"))
    {
        // Nobody could answer the task: it would wait until its timeout.
        return Err(invalid(
            Some(name),
            "lambda:invoke.waitForTaskToken must pass $$.Task.Token in its Parameters",
        ));
    }
    if matches!(
        resource,
        Resource::StartExecutionSync { .. } | Resource::StartExecution
    ) {
        let has = matches!(&parameters, Some(Template::Object(f)) if f.iter().any(|(k, _)| k == "StateMachineArn"));
        if !has {
            return Err(invalid(
                Some(name),
                "startExecution needs Parameters.StateMachineArn",
            ));
        }
    }
    Ok(TaskSpec {
        resource,
        parameters,
        common: common(name, obj)?,
        timeout: seconds(name, obj, "TimeoutSeconds", "TimeoutSecondsPath")?,
        heartbeat: seconds(name, obj, "HeartbeatSeconds", "HeartbeatSecondsPath")?,
    })
}

/// Some `<key>.$` of the Parameters reads the context's `$$.Task.Token`.
fn passes_task_token(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Object(m)) => m.iter().any(|(k, x)| {
            (k.ends_with(".$") && x.as_str().is_some_and(|s| s.contains("$$.Task.Token")))
                || passes_task_token(Some(x))
        }),
        Some(Value::Array(a)) => a.iter().any(|x| passes_task_token(Some(x))),
        _ => false,
    }
}

fn is_lambda_arn(r: &str) -> bool {
    let parts: Vec<&str> = r.splitn(7, ':').collect();
    parts.len() >= 7 && parts[0] == "arn" && parts[2] == "lambda" && parts[5] == "function"
}

fn wait(name: &str, obj: &Map<String, Value>) -> Result<Kind, LoadError> {
    let present: Vec<&str> = ["Seconds", "SecondsPath", "Timestamp", "TimestampPath"]
        .into_iter()
        .filter(|f| obj.contains_key(*f))
        .collect();
    if present.len() != 1 {
        return Err(invalid(
            Some(name),
            "a Wait state needs exactly one of Seconds, SecondsPath, Timestamp, TimestampPath",
        ));
    }
    Ok(Kind::Wait(match present[0] {
        "Seconds" | "SecondsPath" => WaitSpec::Seconds(
            seconds(name, obj, "Seconds", "SecondsPath")?
                .ok_or_else(|| invalid(Some(name), "Seconds"))?,
        ),
        "Timestamp" => {
            let s = obj["Timestamp"]
                .as_str()
                .ok_or_else(|| invalid(Some(name), "Timestamp must be a string"))?;
            if crate::choice::parse_timestamp(s).is_none() {
                return Err(invalid(
                    Some(name),
                    &format!("Timestamp '{s}' is not an RFC 3339 timestamp"),
                ));
            }
            WaitSpec::Timestamp(s.to_string())
        }
        _ => WaitSpec::TimestampPath(
            get_path(name, obj, "TimestampPath", false)?
                .flatten()
                .ok_or_else(|| invalid(Some(name), "TimestampPath must be a path"))?,
        ),
    }))
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

fn choice(name: &str, obj: &Map<String, Value>) -> Result<Kind, LoadError> {
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
    let op = if let Some(c) = base.strip_prefix("String").and_then(cmp) {
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
    };
    let operand = if is_path {
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
    };
    Ok(Rule::Test {
        variable,
        op,
        operand,
    })
}
