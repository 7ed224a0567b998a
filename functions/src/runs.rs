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

/// The execution history limit the steps plan for: `CDKD_FLOW_HISTORY_LIMIT` (a test
/// setting), else Step Functions' 25,000 (docs/runs.md, "Continuing in a new execution").
pub fn history_limit() -> u64 {
    let raw = std::env::var(cdkd_core::continuation::HISTORY_LIMIT_ENV).ok();
    cdkd_core::continuation::history_limit(raw.as_deref())
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

/// Cached bytes by `bucket/key`, oldest first.
type Entries = std::collections::VecDeque<(String, std::sync::Arc<Vec<u8>>)>;

/// Run artifacts that never change once written (a run's `plan.json`, the templates
/// the CLI uploaded), by bucket and key, as this process wrote or read them: the last
/// [`ArtifactCache::CAPACITY`] of them. A run's folder is its own (a deployed run's id is
/// its execution name, which Step Functions never reuses with another input; a local
/// run's is its process's), so what was written there is what is read back.
#[derive(Clone, Default)]
pub struct ArtifactCache {
    entries: std::sync::Arc<std::sync::Mutex<Entries>>,
}

impl ArtifactCache {
    pub const CAPACITY: usize = 16;

    fn get(&self, id: &str) -> Option<std::sync::Arc<Vec<u8>>> {
        let entries = self.entries.lock().ok()?;
        entries
            .iter()
            .find(|(k, _)| k == id)
            .map(|(_, v)| v.clone())
    }

    fn keep(&self, id: String, bytes: std::sync::Arc<Vec<u8>>) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.retain(|(k, _)| *k != id);
            if entries.len() >= Self::CAPACITY {
                entries.pop_front();
            }
            entries.push_back((id, bytes));
        }
    }
}

fn cache_id(store: &StateStore, key: &str) -> String {
    format!("{}/{key}", store.bucket)
}

/// The bytes of an artifact that never changes once written (see [`ArtifactCache`]):
/// from `cache` when this process wrote or read it, else from S3; `None` when it does
/// not exist.
pub async fn read_immutable_raw(
    cache: &ArtifactCache,
    store: &StateStore,
    key: &str,
) -> Result<Option<std::sync::Arc<Vec<u8>>>, StepError> {
    let id = cache_id(store, key);
    if let Some(bytes) = cache.get(&id) {
        return Ok(Some(bytes));
    }
    let Some((bytes, _)) = store.get_raw(key).await? else {
        return Ok(None);
    };
    let bytes = std::sync::Arc::new(bytes);
    cache.keep(id, bytes.clone());
    Ok(Some(bytes))
}

/// [`read`] of an artifact that never changes once written, through `cache`.
pub async fn read_immutable<T: DeserializeOwned>(
    cache: &ArtifactCache,
    store: &StateStore,
    key: &str,
) -> Result<Option<T>, StepError> {
    let Some(bytes) = read_immutable_raw(cache, store, key).await? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        StepError::bad_input(format!(
            "run artifact s3://{}/{key} is not readable: {e}",
            store.bucket
        ))
    })
}

/// [`write`] of an artifact, kept in `cache` (an artifact that never changes once
/// written, or a local run's record: see [`write_run_record`]).
pub async fn write_immutable<T: Serialize>(
    cache: &ArtifactCache,
    store: &StateStore,
    key: &str,
    value: &T,
) -> Result<(), StepError> {
    let body = pretty(key, value)?;
    store.put_raw(key, body.clone()).await?;
    cache.keep(cache_id(store, key), std::sync::Arc::new(body));
    Ok(())
}

/// Reads an export run's `progress.json`: in a local run (`deps.local`), what this
/// process last wrote there when it did (see `Deps::written`), else from S3, with the
/// ETag it was read at (`None` when it came from this process's memory): a deployed
/// step writes the record back only over that version ([`write_run_record_over`]).
pub async fn read_run_record_tagged<T: DeserializeOwned>(
    deps: &crate::Deps,
    store: &StateStore,
    key: &str,
) -> Result<Option<(T, Option<String>)>, StepError> {
    if deps.local.is_some() {
        if let Some(bytes) = deps.written.get(&cache_id(store, key)) {
            return serde_json::from_slice(&bytes)
                .map(|v| Some((v, None)))
                .map_err(|e| {
                    StepError::bad_input(format!("run artifact {key} is not readable: {e}"))
                });
        }
    }
    Ok(read_with_etag(store, key)
        .await?
        .map(|(v, etag)| (v, Some(etag))))
}

/// What a local run's steps last wrote at `key` in this process (see `Deps::written`),
/// without reading S3; `None` when they wrote nothing there yet.
pub fn remembered<T: DeserializeOwned>(
    deps: &crate::Deps,
    store: &StateStore,
    key: &str,
) -> Option<T> {
    let bytes = deps.written.get(&cache_id(store, key))?;
    serde_json::from_slice(&bytes).ok()
}

/// Writes an export run's `progress.json`, and keeps it in memory for the next step of
/// a local run (see [`read_run_record_tagged`]).
pub async fn write_run_record<T: Serialize>(
    deps: &crate::Deps,
    store: &StateStore,
    key: &str,
    value: &T,
) -> Result<(), StepError> {
    write_run_record_over(deps, store, key, value, None)
        .await
        .map(|_| ())
}

/// Writes an export run's `progress.json` (docs/export.md, "Requests: read once, and the benchmark", "The record's own
/// fence"). A local run's is kept in memory too and written unconditionally: its process
/// is the record's only writer while it lives. A deployed step's is written only over
/// `read_at`, the version it read (when it read one): a record another invocation wrote
/// in between (the resume of this run, having taken its locks over; a step retried while
/// its first attempt still runs) is never overwritten, and the step stops with
/// `Conflict`. Returns the new ETag of a deployed write.
pub async fn write_run_record_over<T: Serialize>(
    deps: &crate::Deps,
    store: &StateStore,
    key: &str,
    value: &T,
    read_at: Option<&str>,
) -> Result<Option<String>, StepError> {
    if deps.local.is_some() {
        return write_immutable(&deps.written, store, key, value)
            .await
            .map(|()| None);
    }
    let body = pretty(key, value)?;
    let Some(etag) = read_at else {
        return Ok(Some(store.put_raw(key, body).await?));
    };
    match store.put_raw_if_match(key, body, etag).await? {
        Some(new) => Ok(Some(new)),
        None => Err(StepError::new(
            crate::error::names::CONFLICT,
            format!(
                "s3://{}/{key} changed after this step read it: another invocation writes this run (its resume, or a retry of this step); this one wrote nothing there",
                store.bucket
            ),
        )),
    }
}

/// A run artifact's body: pretty JSON, so a person can read it in the console.
fn pretty<T: Serialize>(key: &str, value: &T) -> Result<Vec<u8>, StepError> {
    serde_json::to_vec_pretty(value)
        .map_err(|e| StepError::bad_input(format!("cannot serialize run artifact {key}: {e}")))
}

/// Forgets how a run ended: deletes its `report.json` and its end markers
/// (`notified-run-succeeded.json`, `notified-run-failed.json`), so that the run, going on
/// again in the same folder (a resume), reports and tells its new end
/// (docs/notifications.md, "Once per run and kind: at most once").
pub async fn forget_end(store: &StateStore, run_id: &str) -> Result<(), StepError> {
    store
        .delete_object(&report_key(&store.prefix, run_id))
        .await?;
    for key in cdkd_core::notify::end_notice_keys(&store.prefix, run_id) {
        store.delete_object(&key).await?;
    }
    Ok(())
}

/// Writes a JSON artifact (pretty, so a person can read it in the console).
pub async fn write<T: Serialize>(
    store: &StateStore,
    key: &str,
    value: &T,
) -> Result<(), StepError> {
    let body = pretty(key, value)?;
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
