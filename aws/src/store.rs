//! The S3 state store (docs/state-and-lock.md, "Key layout"): list every record under a prefix, read a record
//! with its ETag (legacy fallback included), write it conditionally, delete it, read raw objects
//! and the lock. Every call carries `ExpectedBucketOwner` when the owner is known.

use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::EncodingType;
use cdkd_core::keys::{self, ListedKey, StackRef};
use cdkd_core::lock::{parse_lock, LockInfo};
use cdkd_core::state::{parse_state, serialize_for_write, StateError, StateRecord};
use cdkd_core::text::flatten_str;

use crate::clock::S3Clock;
use crate::s3err::Failure;

/// Errors of the state store. Every message is one line.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A conditional state write lost: someone else wrote the record first.
    #[error("State has been modified by another process. Expected ETag: {expected}, but state has changed.")]
    Conflict { expected: String },
    /// Reading a record failed (not "no record": that is `Ok(None)`).
    #[error("Failed to get state for stack '{stack}' ({region}): {message}")]
    Get {
        stack: String,
        region: String,
        message: String,
    },
    /// The record was read but refused (bad JSON, unsupported version...): the parse
    /// error, printed flattened onto one line.
    #[error("{}", flatten_str(&.0.to_string()))]
    Refused(StateError),
    /// Writing a record failed for a reason other than its precondition.
    #[error("Failed to save state for stack '{stack}' ({region}): {message}")]
    Save {
        stack: String,
        region: String,
        message: String,
    },
    /// Deleting a record failed.
    #[error("Failed to delete state for stack '{stack}' ({region}): {message}")]
    Delete {
        stack: String,
        region: String,
        /// The object whose delete failed (the region key, or the legacy key).
        key: String,
        message: String,
    },
    /// Listing the records failed, or a listed key would not decode.
    #[error("Failed to list state records under '{prefix}/': {message}")]
    List { prefix: String, message: String },
    /// A raw object read/write failed.
    #[error("Failed to access s3://{bucket}/{key}: {message}")]
    Object {
        bucket: String,
        key: String,
        message: String,
    },
    /// A bucket-level call (lifecycle, versioning, DeleteObjects) failed.
    #[error("{operation} on s3://{bucket} failed: {message}")]
    Bucket {
        bucket: String,
        operation: String,
        message: String,
    },
    /// The lock object exists but is not valid JSON.
    #[error("Failed to get lock info for stack '{stack}': {message}")]
    LockRead { stack: String, message: String },
}

/// The condition of a state write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Precondition {
    /// `If-Match: <etag>`: update the record read with this (quoted) ETag.
    IfMatch(String),
    /// `If-None-Match: *`: create, fail if anything is there.
    IfNoneMatch,
    /// No condition (cdkd's first write of a new record, or a legacy migration).
    None,
}

/// A record as read, with the ETag that a later `If-Match` write needs.
#[derive(Debug, Clone)]
pub struct LoadedState {
    pub record: StateRecord,
    /// The ETag with its double quotes, exactly as S3 returned it.
    pub etag: String,
    /// The record came from the legacy region-less key; the next save migrates it.
    pub migration_pending: bool,
}

/// The state store over one bucket and prefix.
#[derive(Debug, Clone)]
pub struct StateStore {
    pub client: aws_sdk_s3::Client,
    pub bucket: String,
    pub prefix: String,
    /// The account id sent as `ExpectedBucketOwner` (docs/state-and-lock.md, "ExpectedBucketOwner"), when known.
    pub expected_owner: Option<String>,
    /// The local clock and S3's, measured from the `Date` of this store's responses
    /// (docs/state-and-lock.md, "Lock time is S3's").
    pub clock: S3Clock,
}

/// An object as read: its bytes, quoted ETag, and when S3 wrote it.
#[derive(Debug, Clone)]
pub struct RawObject {
    pub bytes: Vec<u8>,
    /// The ETag with its double quotes, exactly as S3 returned it.
    pub etag: String,
    /// The object's `LastModified`, ms since the epoch on S3's clock, when S3 said.
    pub last_modified_ms: Option<i64>,
}

/// Milliseconds since the epoch, from this process's clock
/// ([`crate::clock::local_now_ms`]; lock times use S3's clock, [`StateStore::s3_now_ms`]).
pub fn now_ms() -> i64 {
    crate::clock::local_now_ms()
}

impl StateStore {
    pub fn new(
        client: aws_sdk_s3::Client,
        bucket: impl Into<String>,
        prefix: impl Into<String>,
        expected_owner: Option<String>,
    ) -> Self {
        StateStore {
            client,
            bucket: bucket.into(),
            prefix: prefix.into(),
            expected_owner,
            clock: S3Clock::system(),
        }
    }

    /// The same store on another clock (tests: a process whose clock is off).
    pub fn with_clock(mut self, clock: S3Clock) -> Self {
        self.clock = clock;
        self
    }

    /// S3's clock now, as this store measured it (docs/state-and-lock.md, "Lock time is S3's"): the time
    /// every lock decision and view is made at.
    pub fn s3_now_ms(&self) -> i64 {
        self.clock.s3_now_ms()
    }

    /// Measures S3's clock when no response has been seen yet: one `HeadObject` of
    /// `key` (any answer carries a `Date`). A failure only leaves the local clock in use.
    pub(crate) async fn calibrate(&self, key: &str) {
        if self.clock.offset_ms().is_some() {
            return;
        }
        let _ = self
            .client
            .head_object()
            .bucket(&self.bucket)
            .key(key)
            .set_expected_bucket_owner(self.expected_owner.clone())
            .customize()
            .interceptor(self.clock.clone())
            .send()
            .await;
    }

    fn object_error(&self, key: &str, f: Failure) -> StoreError {
        StoreError::Object {
            bucket: flatten_str(&self.bucket),
            key: flatten_str(key),
            message: f.message,
        }
    }

    /// Every key under `<prefix>/`, decoded (ListObjectsV2 with `EncodingType=url`,
    /// following continuation tokens verbatim). A key that will not decode refuses the
    /// listing.
    pub async fn list_keys(&self) -> Result<Vec<String>, StoreError> {
        let listed = self
            .list_objects_under(&keys::list_prefix(&self.prefix), |_| {})
            .await?;
        Ok(listed.into_iter().map(|o| o.key).collect())
    }

    /// Every object under `list_prefix` with its size and last write, decoded, every
    /// page (`on_page` is told the count so far). A key that will not decode refuses the
    /// listing.
    pub(crate) async fn list_objects_under(
        &self,
        list_prefix: &str,
        mut on_page: impl FnMut(usize),
    ) -> Result<Vec<cdkd_core::retention::ListedObject>, StoreError> {
        let list_err = |message: String| StoreError::List {
            prefix: flatten_str(list_prefix.strip_suffix('/').unwrap_or(list_prefix)),
            message,
        };
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let resp = self
                .client
                .list_objects_v2()
                .bucket(&self.bucket)
                .prefix(list_prefix)
                .encoding_type(EncodingType::Url)
                .set_continuation_token(token.take())
                .set_expected_bucket_owner(self.expected_owner.clone())
                .send()
                .await
                .map_err(|e| list_err(Failure::from_sdk(&e).message))?;
            for obj in resp.contents() {
                let Some(raw) = obj.key() else { continue };
                let key = keys::decode_url_listed_key(raw)
                    .map_err(|e| list_err(flatten_str(&e.to_string())))?;
                out.push(cdkd_core::retention::ListedObject {
                    key,
                    size: obj.size().unwrap_or(0),
                    last_modified_ms: obj
                        .last_modified()
                        .and_then(|t| t.to_millis().ok())
                        .unwrap_or(0),
                });
            }
            on_page(out.len());
            match (resp.is_truncated(), resp.next_continuation_token()) {
                (Some(true), Some(t)) if !t.is_empty() => token = Some(t.to_owned()),
                _ => break,
            }
        }
        Ok(out)
    }

    /// The listed keys that name state records, classified (docs/state-and-lock.md, "Listing the records" step 2), in
    /// listing order, not de-duplicated.
    pub async fn list_record_keys(&self) -> Result<Vec<(String, ListedKey)>, StoreError> {
        Ok(self.record_keys(self.list_keys().await?))
    }

    fn record_keys(&self, keys: Vec<String>) -> Vec<(String, ListedKey)> {
        keys.into_iter()
            .filter_map(|k| keys::parse_listed_key(&self.prefix, &k).map(|l| (k, l)))
            .collect()
    }

    /// Every record ref under the prefix (docs/state-and-lock.md, "Listing the records"): region-scoped keys give
    /// `(stack, region)`; a legacy key gives the body's `region` when it is a JSON string,
    /// else none (a read failure never fails the listing). De-duplicated, sorted.
    pub async fn list_refs(&self) -> Result<Vec<StackRef>, StoreError> {
        Ok(self.refs_of(self.list_record_keys().await?).await)
    }

    async fn refs_of(&self, listed: Vec<(String, ListedKey)>) -> Vec<StackRef> {
        let mut refs = std::collections::BTreeSet::new();
        for (key, listed) in listed {
            match listed {
                ListedKey::State { stack, region } => {
                    refs.insert(StackRef {
                        stack,
                        region: Some(region),
                    });
                }
                ListedKey::LegacyState { stack } => {
                    let region = self.legacy_body_region(&key).await;
                    refs.insert(StackRef { stack, region });
                }
            }
        }
        refs.into_iter().collect()
    }

    /// One listing, as the state views read it (docs/state-views.md, "A lock left without a record"): the record refs
    /// (as [`Self::list_refs`]) and the locks that have no record beside them, sorted.
    pub async fn list_refs_and_lone_locks(
        &self,
    ) -> Result<(Vec<StackRef>, Vec<StackRef>), StoreError> {
        let all = self.list_keys().await?;
        let mut locks: Vec<StackRef> = all
            .iter()
            .filter_map(|k| keys::parse_listed_lock_key(&self.prefix, k))
            .collect();
        locks.sort();
        locks.dedup();
        let listed = self.record_keys(all);
        let legacy: Vec<String> = listed
            .iter()
            .filter_map(|(_, l)| match l {
                ListedKey::LegacyState { stack } => Some(stack.clone()),
                ListedKey::State { .. } => None,
            })
            .collect();
        let refs = self.refs_of(listed).await;
        let lone = keys::locks_without_record(&locks, &refs, &legacy);
        Ok((refs, lone))
    }

    /// The `region` of a legacy body when it is a JSON string; `None` on any failure.
    async fn legacy_body_region(&self, key: &str) -> Option<String> {
        match self.get_raw(key).await {
            Ok(Some((bytes, _))) => match cdkd_core::json::parse_json(&bytes) {
                Ok(v) => v.get("region").and_then(|r| r.as_str()).map(str::to_owned),
                Err(e) => {
                    tracing::debug!("legacy record body is not JSON: {}", flatten_str(&e));
                    None
                }
            },
            Ok(None) => None,
            Err(e) => {
                tracing::debug!("could not read a legacy record body: {e}");
                None
            }
        }
    }

    /// An object's bytes and quoted ETag; `Ok(None)` when the key does not exist.
    pub async fn get_raw(&self, key: &str) -> Result<Option<(Vec<u8>, String)>, StoreError> {
        Ok(self.get_object(key).await?.map(|o| (o.bytes, o.etag)))
    }

    /// An object with its ETag and `LastModified`; `Ok(None)` when the key does not
    /// exist. The response's `Date` is measured as S3's clock.
    pub async fn get_object(&self, key: &str) -> Result<Option<RawObject>, StoreError> {
        let resp = match self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(key)
            .set_expected_bucket_owner(self.expected_owner.clone())
            .customize()
            .interceptor(self.clock.clone())
            .send()
            .await
        {
            Ok(r) => r,
            Err(e) => {
                let f = Failure::from_sdk(&e);
                if f.is_no_such_key() {
                    return Ok(None);
                }
                return Err(self.object_error(key, f));
            }
        };
        let etag = resp.e_tag().map(str::to_owned);
        let last_modified_ms = resp.last_modified().and_then(|t| t.to_millis().ok());
        let bytes = resp
            .body
            .collect()
            .await
            .map_err(|e| StoreError::Object {
                bucket: flatten_str(&self.bucket),
                key: flatten_str(key),
                message: flatten_str(&format!("reading the body: {e}")),
            })?
            .into_bytes()
            .to_vec();
        match etag {
            Some(etag) if !etag.is_empty() => Ok(Some(RawObject {
                bytes,
                etag,
                last_modified_ms,
            })),
            _ => Err(StoreError::Object {
                bucket: flatten_str(&self.bucket),
                key: flatten_str(key),
                message: "the response carried no ETag".into(),
            }),
        }
    }

    /// Writes an object (`Content-Type: application/json`) under a condition; returns the
    /// new quoted ETag, or the classified failure for the caller to map (a failed
    /// condition is `is_precondition_failed`).
    pub(crate) async fn put_raw_conditional(
        &self,
        key: &str,
        body: Vec<u8>,
        pre: &Precondition,
    ) -> Result<String, Failure> {
        let mut req = self
            .client
            .put_object()
            .bucket(&self.bucket)
            .key(key)
            .content_type("application/json")
            .content_length(body.len() as i64)
            .body(ByteStream::from(body))
            .set_expected_bucket_owner(self.expected_owner.clone());
        match pre {
            Precondition::IfMatch(etag) => req = req.if_match(etag),
            Precondition::IfNoneMatch => req = req.if_none_match("*"),
            Precondition::None => {}
        }
        let resp = req
            .customize()
            .interceptor(self.clock.clone())
            .send()
            .await
            .map_err(|e| Failure::from_sdk(&e))?;
        match resp.e_tag() {
            Some(t) if !t.is_empty() => Ok(t.to_owned()),
            _ => Err(Failure::from_parts(
                None,
                None,
                "the response carried no ETag",
            )),
        }
    }

    /// Writes an object only if its ETag is still `etag`; returns the new ETag, or `None`
    /// when the object changed in between (the precondition failed).
    pub async fn put_raw_if_match(
        &self,
        key: &str,
        body: Vec<u8>,
        etag: &str,
    ) -> Result<Option<String>, StoreError> {
        match self
            .put_raw_conditional(key, body, &Precondition::IfMatch(etag.to_owned()))
            .await
        {
            Ok(t) => Ok(Some(t)),
            Err(f) if f.is_precondition_failed() => Ok(None),
            Err(f) => Err(self.object_error(key, f)),
        }
    }

    /// Creates an object only if no object has its key (`If-None-Match: *`); `false`
    /// when one already exists.
    pub async fn put_raw_if_absent(&self, key: &str, body: Vec<u8>) -> Result<bool, StoreError> {
        match self
            .put_raw_conditional(key, body, &Precondition::IfNoneMatch)
            .await
        {
            Ok(_) => Ok(true),
            Err(f) if f.is_precondition_failed() => Ok(false),
            Err(f) => Err(self.object_error(key, f)),
        }
    }

    /// Writes an object unconditionally; returns its ETag.
    pub async fn put_raw(&self, key: &str, body: Vec<u8>) -> Result<String, StoreError> {
        self.put_raw_conditional(key, body, &Precondition::None)
            .await
            .map_err(|f| self.object_error(key, f))
    }

    /// Deletes an object of the bucket (a run's transient upload); a missing key is
    /// success.
    pub async fn delete_object(&self, key: &str) -> Result<(), StoreError> {
        self.delete_raw(key, None)
            .await
            .map_err(|f| self.object_error(key, f))
    }

    /// Deletes an object, optionally `If-Match`. A missing key is success.
    pub(crate) async fn delete_raw(
        &self,
        key: &str,
        if_match: Option<&str>,
    ) -> Result<(), Failure> {
        match self.delete_raw_strict(key, if_match).await {
            Err(f) if f.is_no_such_key() => Ok(()),
            other => other,
        }
    }

    /// Deletes an object, optionally `If-Match`; a missing key comes back as the failure
    /// (`is_no_such_key`).
    pub(crate) async fn delete_raw_strict(
        &self,
        key: &str,
        if_match: Option<&str>,
    ) -> Result<(), Failure> {
        self.delete_raw_versioned(key, if_match).await.map(|_| ())
    }

    /// [`Self::delete_raw_strict`], telling whether the bucket keeps versions: S3 answers
    /// a delete on a bucket whose versioning was ever enabled with a delete marker
    /// (`x-amz-delete-marker`, `x-amz-version-id`), and one on a bucket that never had
    /// versioning with neither: it then holds no older version of the key.
    pub(crate) async fn delete_raw_versioned(
        &self,
        key: &str,
        if_match: Option<&str>,
    ) -> Result<bool, Failure> {
        self.client
            .delete_object()
            .bucket(&self.bucket)
            .key(key)
            .set_if_match(if_match.map(str::to_owned))
            .set_expected_bucket_owner(self.expected_owner.clone())
            .send()
            .await
            .map(|out| out.delete_marker() == Some(true) || out.version_id().is_some())
            .map_err(|e| Failure::from_sdk(&e))
    }

    /// One quiet `DeleteObjects` request (at most 1,000 objects): the objects S3 did not
    /// delete, each as `(key, "<code>: <message>")`, flattened. `Err`: the request failed.
    pub(crate) async fn delete_objects_batch(
        &self,
        ids: Vec<aws_sdk_s3::types::ObjectIdentifier>,
    ) -> Result<Vec<(String, String)>, Failure> {
        let delete = aws_sdk_s3::types::Delete::builder()
            .set_objects(Some(ids))
            .quiet(true)
            .build()
            .map_err(|e| Failure {
                status: None,
                code: None,
                message: flatten_str(&e.to_string()),
                class: crate::sdk_error::ErrorClass::Other,
            })?;
        let out = self
            .client
            .delete_objects()
            .bucket(&self.bucket)
            .delete(delete)
            .set_expected_bucket_owner(self.expected_owner.clone())
            .send()
            .await
            .map_err(|e| Failure::from_sdk(&e))?;
        Ok(out
            .errors()
            .iter()
            .map(|e| {
                (
                    e.key().unwrap_or_default().to_string(),
                    flatten_str(&format!(
                        "{}: {}",
                        e.code().unwrap_or("Error"),
                        e.message().unwrap_or_default()
                    )),
                )
            })
            .collect())
    }

    /// Deletes the noncurrent versions of exactly `key` (rows of `ListObjectVersions`
    /// whose `IsLatest` is false, delete markers included) in batches of at most 1000;
    /// the current version is never touched. Returns how many were deleted. On an
    /// unversioned bucket there is nothing to delete.
    pub async fn purge_noncurrent_versions(&self, key: &str) -> Result<usize, StoreError> {
        use aws_sdk_s3::types::ObjectIdentifier;
        let mut doomed: Vec<ObjectIdentifier> = Vec::new();
        let (mut key_marker, mut version_marker): (Option<String>, Option<String>) = (None, None);
        loop {
            let out = self
                .client
                .list_object_versions()
                .bucket(&self.bucket)
                .prefix(key)
                .set_key_marker(key_marker.take())
                .set_version_id_marker(version_marker.take())
                .set_expected_bucket_owner(self.expected_owner.clone())
                .send()
                .await
                .map_err(|e| self.object_error(key, Failure::from_sdk(&e)))?;
            let rows = out
                .versions()
                .iter()
                .map(|v| (v.key(), v.version_id(), v.is_latest()))
                .chain(
                    out.delete_markers()
                        .iter()
                        .map(|m| (m.key(), m.version_id(), m.is_latest())),
                );
            for (k, version, latest) in rows {
                if k == Some(key) && latest != Some(true) {
                    if let Some(v) = version.filter(|v| !v.is_empty() && *v != "null") {
                        if let Ok(id) = ObjectIdentifier::builder().key(key).version_id(v).build() {
                            doomed.push(id);
                        }
                    }
                }
            }
            if out.is_truncated() == Some(true) {
                key_marker = out.next_key_marker().map(str::to_owned);
                version_marker = out.next_version_id_marker().map(str::to_owned);
                if key_marker.is_none() && version_marker.is_none() {
                    break;
                }
            } else {
                break;
            }
        }
        let total = doomed.len();
        for batch in doomed.chunks(1000) {
            let failed = self
                .delete_objects_batch(batch.to_vec())
                .await
                .map_err(|f| self.object_error(key, f))?;
            if let Some((_, err)) = failed.first() {
                return Err(StoreError::Object {
                    bucket: flatten_str(&self.bucket),
                    key: flatten_str(key),
                    message: format!("could not delete a noncurrent version: {err}"),
                });
            }
        }
        Ok(total)
    }

    /// Reads one record (docs/state-and-lock.md, "Reading a record"): the region key, else the legacy key when its
    /// body's region is absent/falsy or equal to `region` (then `migration_pending`).
    pub async fn get_state(
        &self,
        stack: &str,
        region: &str,
    ) -> Result<Option<LoadedState>, StoreError> {
        let get_err = |e: StoreError| StoreError::Get {
            stack: flatten_str(stack),
            region: flatten_str(region),
            message: match e {
                StoreError::Object { message, .. } => message,
                other => flatten_str(&other.to_string()),
            },
        };
        let key = keys::state_key(&self.prefix, stack, region);
        if let Some((bytes, etag)) = self.get_raw(&key).await.map_err(get_err)? {
            let record = parse_state(stack, Some(region), &bytes).map_err(StoreError::Refused)?;
            return Ok(Some(LoadedState {
                record,
                etag,
                migration_pending: false,
            }));
        }
        let legacy = keys::legacy_state_key(&self.prefix, stack);
        let Some((bytes, etag)) = self.get_raw(&legacy).await.map_err(get_err)? else {
            return Ok(None);
        };
        let record = parse_state(stack, None, &bytes).map_err(StoreError::Refused)?;
        if let Some(body_region) = record.body.get("region") {
            if is_truthy(body_region) && body_region.as_str() != Some(region) {
                return Ok(None);
            }
        }
        tracing::warn!(
            "stack '{}' has a legacy region-less state record; the next save migrates it to the region-scoped layout ({})",
            flatten_str(stack),
            flatten_str(region)
        );
        Ok(Some(LoadedState {
            record,
            etag,
            migration_pending: true,
        }))
    }

    /// Writes one record to its region key (docs/state-and-lock.md, "Writing a record"); returns the new quoted
    /// ETag. A failed precondition is `StoreError::Conflict`, never an overwrite.
    pub async fn put_state(
        &self,
        stack: &str,
        region: &str,
        record: &StateRecord,
        pre: Precondition,
    ) -> Result<String, StoreError> {
        let key = keys::state_key(&self.prefix, stack, region);
        let body = serialize_for_write(record, stack, region, now_ms());
        match self
            .put_raw_conditional(&key, body.into_bytes(), &pre)
            .await
        {
            Ok(etag) => Ok(etag),
            Err(f) if f.is_precondition_failed() && pre != Precondition::None => {
                Err(StoreError::Conflict {
                    expected: match &pre {
                        Precondition::IfMatch(e) => flatten_str(e),
                        _ => "(none: the record was to be created)".into(),
                    },
                })
            }
            Err(f) => Err(StoreError::Save {
                stack: flatten_str(stack),
                region: flatten_str(region),
                message: f.message,
            }),
        }
    }

    /// Saves a record read from the legacy key to its region key (unconditionally: the
    /// legacy ETag belongs to another key), then deletes the legacy key best-effort.
    pub async fn migrate_legacy_state(
        &self,
        stack: &str,
        region: &str,
        record: &StateRecord,
    ) -> Result<String, StoreError> {
        let etag = self
            .put_state(stack, region, record, Precondition::None)
            .await?;
        if let Err(e) = self.delete_legacy_state(stack).await {
            tracing::warn!("{e}");
        }
        tracing::info!(
            "Migrated state for stack {} to region-scoped layout ({})",
            flatten_str(stack),
            flatten_str(region)
        );
        Ok(etag)
    }

    /// Deletes `<prefix>/<stack>/state.json` only.
    pub async fn delete_legacy_state(&self, stack: &str) -> Result<(), StoreError> {
        let legacy = keys::legacy_state_key(&self.prefix, stack);
        self.delete_raw(&legacy, None)
            .await
            .map_err(|f| StoreError::Delete {
                stack: flatten_str(stack),
                region: "legacy".into(),
                key: legacy.clone(),
                message: f.message,
            })
    }

    /// Deletes a record (docs/state-and-lock.md, "Deleting a record"): the region key; the legacy key too when its
    /// body's region equals `region`; the rollback journal best-effort.
    pub async fn delete_state(&self, stack: &str, region: &str) -> Result<(), StoreError> {
        let del_err = |key: &str| {
            let key = key.to_string();
            move |f: Failure| StoreError::Delete {
                stack: flatten_str(stack),
                region: flatten_str(region),
                key,
                message: f.message,
            }
        };
        let key = keys::state_key(&self.prefix, stack, region);
        self.delete_raw(&key, None).await.map_err(del_err(&key))?;
        let legacy = keys::legacy_state_key(&self.prefix, stack);
        if self.legacy_body_region(&legacy).await.as_deref() == Some(region) {
            self.delete_raw(&legacy, None)
                .await
                .map_err(del_err(&legacy))?;
        }
        let journal = keys::rollback_journal_key(&self.prefix, stack, region);
        if let Err(f) = self.delete_raw(&journal, None).await {
            tracing::warn!(
                "could not delete the rollback journal of stack '{}' ({}): {}",
                flatten_str(stack),
                flatten_str(region),
                f.message
            );
        }
        Ok(())
    }

    /// The lock of `(stack, region)` (`None` region: the legacy lock key) with its ETag,
    /// and when S3 wrote it (`LockInfo::written_ms`). `Ok(None)` when there is no lock
    /// object or its body is not a JSON object.
    pub async fn get_lock(
        &self,
        stack: &str,
        region: Option<&str>,
    ) -> Result<Option<(LockInfo, String)>, StoreError> {
        let key = keys::lock_key(&self.prefix, stack, region);
        let Some(obj) = self.get_object(&key).await? else {
            return Ok(None);
        };
        match parse_lock(&obj.bytes) {
            Ok(Some(info)) => Ok(Some((info.written_at(obj.last_modified_ms), obj.etag))),
            Ok(None) => Ok(None),
            Err(e) => Err(StoreError::LockRead {
                stack: flatten_str(stack),
                message: flatten_str(&e.to_string()),
            }),
        }
    }
}

/// JavaScript truthiness of a JSON value.
fn is_truthy(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Null => false,
        serde_json::Value::Bool(b) => *b,
        serde_json::Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        serde_json::Value::String(s) => !s.is_empty(),
        serde_json::Value::Array(_) | serde_json::Value::Object(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::is_truthy;
    use serde_json::json;

    #[test]
    fn legacy_region_truthiness_follows_javascript() {
        assert!(!is_truthy(&json!(null)));
        assert!(!is_truthy(&json!("")));
        assert!(!is_truthy(&json!(0)));
        assert!(!is_truthy(&json!(false)));
        assert!(is_truthy(&json!("eu-west-1")));
        assert!(is_truthy(&json!([])));
        assert!(is_truthy(&json!(1)));
    }
}
