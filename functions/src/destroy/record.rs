//! Reading and trimming a stack's `state.json` during a destroy (docs/destroy.md, "Crash safety: state written as it goes"):
//! after each confirmed delete the record loses that resource, written `If-Match` the
//! ETag read, so the file always lists a superset of what still exists.

use cdkd_aws::{LoadedState, Precondition, StateStore, StoreError};
use cdkd_core::state::{ResourcesShape, StateRecord};
use cdkd_core::text::flatten_str;
use cdkd_deleters::request::DeleteOptions;
use cdkd_deleters::{DeleteRequest, RunContext};
use serde_json::{Map, Value};

use crate::error::StepError;

/// The record's resources, or a refusal naming the stack when the bag is not an object.
pub fn resources_of(
    stack: &str,
    region: &str,
    record: &StateRecord,
) -> Result<Map<String, Value>, StepError> {
    match record.resources() {
        ResourcesShape::Map(m) => Ok(m.clone()),
        ResourcesShape::Absent | ResourcesShape::Null => Ok(Map::new()),
        ResourcesShape::Other(v) => Err(StepError::refused(format!(
            "Stack '{}' ({}): resources is {} in state.json, not an object; refusing to destroy from a damaged record",
            flatten_str(stack),
            flatten_str(region),
            cdkd_core::state::kind_of(v)
        ))),
    }
}

fn str_field(entry: &Map<String, Value>, key: &str) -> Option<String> {
    entry.get(key).and_then(Value::as_str).map(str::to_string)
}

/// The delete request for one record.
pub fn delete_request(
    logical_id: &str,
    entry: &Map<String, Value>,
    region: &str,
    attempt: u32,
    run: RunContext,
    options: DeleteOptions,
) -> DeleteRequest {
    DeleteRequest {
        logical_id: logical_id.to_string(),
        resource_type: str_field(entry, "resourceType").unwrap_or_default(),
        physical_id: str_field(entry, "physicalId").unwrap_or_default(),
        properties: entry.get("properties").cloned().unwrap_or(Value::Null),
        attributes: entry.get("attributes").cloned().unwrap_or(Value::Null),
        provisioned_by: str_field(entry, "provisionedBy"),
        region: region.to_string(),
        attempt,
        run,
        options,
    }
}

/// The partial-destroy snapshot: the record without `removed`, outputs cleared (a partly
/// destroyed stack must not advertise exports), `imports` / `outputReads` dropped; every
/// other field carried as it was.
pub fn trimmed(record: &StateRecord, removed: &[String]) -> StateRecord {
    let mut body = record.body.clone();
    if let Some(Value::Object(res)) = body.get_mut("resources") {
        for id in removed {
            res.shift_remove(id);
        }
    }
    if body.contains_key("outputs") {
        body.insert("outputs".into(), Value::Object(Map::new()));
    }
    body.shift_remove("imports");
    body.shift_remove("outputReads");
    StateRecord::from_body(body)
}

/// Writes the record without `removed`, conditional on the ETag read; on a conflict it
/// re-reads and tries again (a cdkd writer cannot hold our lock, but a hand edit can
/// race). Returns the record as written, or `None` when the record is gone.
pub async fn remove_resources(
    store: &StateStore,
    stack: &str,
    region: &str,
    mut loaded: LoadedState,
    removed: &[String],
) -> Result<Option<LoadedState>, StepError> {
    for _ in 0..4 {
        let next = trimmed(&loaded.record, removed);
        let pre = if loaded.migration_pending {
            Precondition::None
        } else {
            Precondition::IfMatch(loaded.etag.clone())
        };
        match store.put_state(stack, region, &next, pre).await {
            Ok(etag) => {
                return Ok(Some(LoadedState {
                    record: next,
                    etag,
                    migration_pending: false,
                }));
            }
            Err(StoreError::Conflict { .. }) => match store.get_state(stack, region).await? {
                Some(fresh) => loaded = fresh,
                None => return Ok(None),
            },
            Err(e) => return Err(e.into()),
        }
    }
    Err(StepError::new(
        crate::error::names::CONFLICT,
        format!(
            "state.json of stack '{}' ({}) kept changing under the destroy; retry",
            flatten_str(stack),
            flatten_str(region)
        ),
    ))
}
