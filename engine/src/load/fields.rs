//! Reading the fields states share (paths, templates, seconds, a string or its path)
//! and refusing the fields this engine does not implement.

use serde_json::{Map, Value};

use crate::error::LoadError;
use crate::intrinsic::Intrinsic;
use crate::model::*;
use crate::path::JsonPath;
use crate::template::Template;

pub(super) fn invalid(state: Option<&str>, message: &str) -> LoadError {
    LoadError::Invalid {
        state: state.map(str::to_string),
        message: message.to_string(),
    }
}

pub(super) fn unsupported(state: &str, feature: &str) -> LoadError {
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

pub(super) fn check_fields(
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
pub(super) fn get_path(
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
pub(super) fn io_path(
    state: &str,
    obj: &Map<String, Value>,
    field: &str,
) -> Result<Option<JsonPath>, LoadError> {
    match get_path(state, obj, field, true)? {
        None => Ok(Some(root())),
        Some(p) => Ok(p),
    }
}

pub(super) fn root() -> JsonPath {
    JsonPath::parse("$").unwrap_or_else(|_| unreachable!("'$' is a valid path"))
}

pub(super) fn reference_path(
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

pub(super) fn template(
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

pub(super) fn seconds(
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
pub(super) fn str_or_path(
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
