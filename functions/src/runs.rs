//! Run artifacts under `<prefix>/_runs/<run-id>/` in the state bucket: `progress.json`
//! (what the next step needs to carry on) and `report.json` (what a person reads).

use cdkd_aws::StateStore;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::StepError;

pub fn run_prefix(prefix: &str, run_id: &str) -> String {
    format!("{prefix}/_runs/{run_id}")
}

pub fn progress_key(prefix: &str, run_id: &str) -> String {
    format!("{}/progress.json", run_prefix(prefix, run_id))
}

pub fn report_key(prefix: &str, run_id: &str) -> String {
    format!("{}/report.json", run_prefix(prefix, run_id))
}

/// Reads a JSON artifact; `None` when it does not exist.
pub async fn read<T: DeserializeOwned>(
    store: &StateStore,
    key: &str,
) -> Result<Option<T>, StepError> {
    let Some((bytes, _etag)) = store.get_raw(key).await? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        StepError::bad_input(format!(
            "run artifact s3://{}/{key} is not readable: {e}",
            store.bucket
        ))
    })
}

/// Writes a JSON artifact (pretty, so a person can read it in the console).
pub async fn write<T: Serialize>(
    store: &StateStore,
    key: &str,
    value: &T,
) -> Result<(), StepError> {
    let body = serde_json::to_vec_pretty(value)
        .map_err(|e| StepError::bad_input(format!("cannot serialize run artifact {key}: {e}")))?;
    store.put_raw(key, body).await?;
    Ok(())
}
