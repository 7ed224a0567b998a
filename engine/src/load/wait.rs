//! A Wait state's fields: exactly one of Seconds, SecondsPath, Timestamp, TimestampPath.

use serde_json::{Map, Value};

use super::fields::{get_path, invalid, seconds};
use crate::error::LoadError;
use crate::model::*;

pub(super) fn wait(name: &str, obj: &Map<String, Value>) -> Result<Kind, LoadError> {
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
