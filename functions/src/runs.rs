//! Run artifacts under `<prefix>/_runs/<run-id>/` in the state bucket: `progress.json`
//! (what the next step needs to carry on) and `report.json` (what a person reads).

use cdkd_aws::StateStore;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::destroy::DestroyRun;
use crate::error::StepError;

pub use cdkd_core::keys::run_prefix;

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
    Ok(read_with_etag(store, key).await?.map(|(v, _etag)| v))
}

/// Reads a JSON artifact with the ETag it was read at; `None` when it does not exist.
async fn read_with_etag<T: DeserializeOwned>(
    store: &StateStore,
    key: &str,
) -> Result<Option<(T, String)>, StepError> {
    let Some((bytes, etag)) = store.get_raw(key).await? else {
        return Ok(None);
    };
    let value = serde_json::from_slice(&bytes).map_err(|e| {
        StepError::bad_input(format!(
            "run artifact s3://{}/{key} is not readable: {e}",
            store.bucket
        ))
    })?;
    Ok(Some((value, etag)))
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

/// `progress.json` of a destroy run, with the ETag it was read at: the wave step writes it
/// back only over that version, so a `runs stop` written in between is never lost.
pub struct Progress {
    pub key: String,
    pub rec: DestroyRun,
    etag: String,
}

impl Progress {
    /// Reads the run record; `None` when it does not exist.
    pub async fn read(store: &StateStore, key: &str) -> Result<Option<Progress>, StepError> {
        Ok(read_with_etag(store, key)
            .await?
            .map(|(rec, etag)| Progress {
                key: key.to_string(),
                rec,
                etag,
            }))
    }

    /// Saves the record over the version it was read at. When someone else wrote in
    /// between (only `cdkd-flow runs stop` does), their stop request is taken over and the
    /// save is tried again.
    pub async fn save(&mut self, store: &StateStore) -> Result<(), StepError> {
        for _ in 0..5 {
            let body = serde_json::to_vec_pretty(&self.rec).map_err(|e| {
                StepError::bad_input(format!("cannot serialize run artifact {}: {e}", self.key))
            })?;
            if let Some(etag) = store.put_raw_if_match(&self.key, body, &self.etag).await? {
                self.etag = etag;
                return Ok(());
            }
            let Some(current) = Progress::read(store, &self.key).await? else {
                return Err(StepError::bad_input(format!(
                    "run artifact s3://{}/{} was deleted during the run",
                    store.bucket, self.key
                )));
            };
            self.rec.stop_requested |= current.rec.stop_requested;
            self.etag = current.etag;
        }
        Err(StepError::new(
            crate::error::names::CONFLICT,
            format!("run artifact {} kept changing; will retry", self.key),
        ))
    }
}
