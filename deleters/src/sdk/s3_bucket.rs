//! `AWS::S3::Bucket`: DeleteBucket by name (docs/destroy.md, "SDK deleters", statement 53).
//!
//! A bucket that still holds objects is refused with a message naming it, unless the
//! record's tags include `aws-cdk:auto-delete-objects` = `true` (CDK's `autoDeleteObjects`):
//! then every object version and delete marker is deleted (`DeleteObjects`, batches of
//! up to 1000) and the bucket deleted. Emptying a large bucket takes longer than one call:
//! each call stops after its budget and answers `InFlight` with a [`Handle::Steps`] in
//! phase `emptying`; the next call lists from the start again (what was deleted is gone
//! from the listing), so nothing needs to be remembered between calls.

use std::time::{Duration, Instant};

use async_trait::async_trait;
use aws_sdk_s3::types::{Delete, ObjectIdentifier};

use crate::error::{aws_error_info, DeleteError, DeleteErrorKind};
use crate::guard;
use crate::progress::{now_ms, DeleteProgress, Handle};
use crate::read::props::{tag_list, Props};
use crate::read::{answered, found, ReadError, ReadRequest, Reader, SdkReader};
use crate::request::DeleteRequest;
use crate::steps::{At, Steps};
use crate::{Deleter, SdkDeleter};
use cdkd_core::run::HandlePhase;
use serde_json::{json, Value};

/// The tag CDK puts on a bucket whose objects may be deleted with it.
pub const AUTO_DELETE_TAG: &str = "aws-cdk:auto-delete-objects";
/// `DeleteObjects` takes at most 1000 keys.
pub const MAX_BATCH: usize = 1000;
/// How long one call empties before it answers `InFlight`.
pub const DEFAULT_CALL_BUDGET: Duration = Duration::from_secs(60);
/// How long emptying may go on across calls before the delete fails.
pub const EMPTY_DEADLINE_MS: u64 = 60 * 60 * 1000;
/// The step of a bucket being emptied.
const EMPTYING: Steps = Steps {
    phase: HandlePhase::Emptying,
    budget_ms: EMPTY_DEADLINE_MS,
};
/// Emptied, yet DeleteBucket still says "not empty" (objects written meanwhile): tries.
const EMPTY_ROUNDS: u32 = 3;

pub struct S3BucketDeleter {
    s3: aws_sdk_s3::Client,
    batch: usize,
    call_budget: Duration,
}

impl S3BucketDeleter {
    pub fn new(s3: aws_sdk_s3::Client) -> Self {
        S3BucketDeleter {
            s3,
            batch: MAX_BATCH,
            call_budget: DEFAULT_CALL_BUDGET,
        }
    }

    /// Keys per `DeleteObjects` batch (1..=1000; tests use small ones).
    pub fn with_batch(mut self, batch: usize) -> Self {
        self.batch = batch.clamp(1, MAX_BATCH);
        self
    }

    /// How long one call may empty before answering `InFlight`.
    pub fn with_call_budget(mut self, budget: Duration) -> Self {
        self.call_budget = budget;
        self
    }

    fn region(&self) -> Option<&str> {
        self.s3.config().region().map(|r| r.as_ref())
    }

    fn emptying(at: At) -> DeleteProgress {
        // Go on at once: the work is ours, not AWS's.
        EMPTYING.in_flight(Value::Null, at, now_ms())
    }

    /// Deletes one batch of object versions / delete markers. `Ok(0)` when none is left.
    async fn delete_one_batch(&self, req: &DeleteRequest) -> Result<usize, DeleteError> {
        let bucket = req.physical_id.as_str();
        let listed = self
            .s3
            .list_object_versions()
            .bucket(bucket)
            .max_keys(i32::try_from(self.batch).unwrap_or(1000))
            .send()
            .await
            .map_err(|e| DeleteError::from_aws(req, "ListObjectVersions", &aws_error_info(&e)))?;
        let mut ids = Vec::new();
        let versions = listed.versions().iter().map(|v| (v.key(), v.version_id()));
        let markers = listed
            .delete_markers()
            .iter()
            .map(|m| (m.key(), m.version_id()));
        for (key, version) in versions.chain(markers).take(self.batch) {
            let Some(key) = key else { continue };
            let id = ObjectIdentifier::builder()
                .key(key)
                .set_version_id(version.map(str::to_owned))
                .build()
                .map_err(|e| DeleteError::failed(req, format!("DeleteObjects request: {e}")))?;
            ids.push(id);
        }
        if ids.is_empty() {
            return Ok(0);
        }
        let n = ids.len();
        let delete = Delete::builder()
            .set_objects(Some(ids))
            .quiet(true)
            .build()
            .map_err(|e| DeleteError::failed(req, format!("DeleteObjects request: {e}")))?;
        let out = self
            .s3
            .delete_objects()
            .bucket(bucket)
            .delete(delete)
            .send()
            .await
            .map_err(|e| DeleteError::from_aws(req, "DeleteObjects", &aws_error_info(&e)))?;
        if let Some(first) = out.errors().first() {
            let mut err = DeleteError::failed(
                req,
                format!(
                    "emptying bucket {bucket}: {} object(s) could not be deleted, first {} ({}): {}",
                    out.errors().len(),
                    first.key().unwrap_or("?"),
                    first.code().unwrap_or("?"),
                    first.message().unwrap_or("")
                ),
            );
            err.retryable = true;
            return Err(err);
        }
        Ok(n)
    }

    /// Empties for up to the call budget, then deletes the bucket. `InFlight` when the
    /// budget ran out first.
    async fn empty_then_delete(
        &self,
        req: &DeleteRequest,
        at: At,
    ) -> Result<DeleteProgress, DeleteError> {
        at.within_deadline(req, now_ms(), || {
            format!(
                "bucket {} still not empty after {} min of deleting its objects",
                req.physical_id,
                EMPTY_DEADLINE_MS / 60_000
            )
        })?;
        let until = Instant::now() + self.call_budget;
        for _ in 0..EMPTY_ROUNDS {
            loop {
                if self.delete_one_batch(req).await? == 0 {
                    break;
                }
                if Instant::now() >= until {
                    return Ok(Self::emptying(at.next()));
                }
            }
            match self.delete_bucket(req).await? {
                Deleted::Yes(p) => return Ok(p),
                // Written to meanwhile: empty again.
                Deleted::NotEmpty => {}
            }
        }
        let mut err = DeleteError::new(
            req,
            DeleteErrorKind::NotEmpty,
            format!(
                "bucket {} was emptied {EMPTY_ROUNDS} times and is still not empty: something keeps writing to it",
                req.physical_id
            ),
        );
        err.retryable = true;
        Err(err)
    }

    async fn delete_bucket(&self, req: &DeleteRequest) -> Result<Deleted, DeleteError> {
        let bucket = req.physical_id.as_str();
        match self.s3.delete_bucket().bucket(bucket).send().await {
            Ok(_) => Ok(Deleted::Yes(DeleteProgress::Done)),
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["NoSuchBucket"]) {
                    return guard::not_found(
                        req,
                        self.region(),
                        is_bucket_name(bucket),
                        &format!("S3 says bucket {bucket} does not exist"),
                    )
                    .map(Deleted::Yes);
                }
                if info.code_is(&["BucketNotEmpty"]) {
                    return Ok(Deleted::NotEmpty);
                }
                Err(DeleteError::from_aws(req, "DeleteBucket", &info))
            }
        }
    }
}

enum Deleted {
    Yes(DeleteProgress),
    NotEmpty,
}

/// S3 bucket naming rules (3-63 of lower-case letters, digits, `.` and `-`, starting and
/// ending with a letter or digit): only such an id is a bucket name.
pub fn is_bucket_name(id: &str) -> bool {
    let ok_chars = id
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-');
    let edge = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    (3..=63).contains(&id.len()) && ok_chars && edge(id.bytes().next()) && edge(id.bytes().last())
}

/// The record opts in to having its objects deleted with it.
pub fn auto_delete_objects(req: &DeleteRequest) -> bool {
    req.has_tag(AUTO_DELETE_TAG, "true")
}

impl SdkDeleter for S3BucketDeleter {
    const TYPES: &'static [&'static str] = &["AWS::S3::Bucket"];
}

#[async_trait]
impl Deleter for S3BucketDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        guard::refuse_final_snapshot(req, "S3 buckets have no snapshots")?;
        let bucket = req.physical_id.as_str();
        match self.delete_bucket(req).await? {
            Deleted::Yes(p) => Ok(p),
            Deleted::NotEmpty if auto_delete_objects(req) => {
                self.empty_then_delete(req, EMPTYING.first(now_ms())).await
            }
            Deleted::NotEmpty => Err(DeleteError::new(
                req,
                DeleteErrorKind::NotEmpty,
                format!(
                    "bucket {bucket} is not empty; cdkd-flow deletes objects only of a bucket tagged {AUTO_DELETE_TAG}=true (CDK autoDeleteObjects): empty the bucket (every object version too, if versioning was ever on) and run the destroy again"
                ),
            )),
        }
    }

    async fn poll(
        &self,
        req: &DeleteRequest,
        handle: &Handle,
    ) -> Result<DeleteProgress, DeleteError> {
        match EMPTYING.resume(handle) {
            Some((at, _)) if auto_delete_objects(req) => self.empty_then_delete(req, at).await,
            _ => super::no_poll(req, handle),
        }
    }
}

// ---------------------------------------------------------------------------------
// Reader (docs/repairs.md, "Per resource"): HeadBucket, then versioning, encryption, the public
// access block and tags (each absent setting is left out). Attributes (docs/repairs.md, "Live attribute reads"): HeadBucket
// (the bucket exists; its region), from which the names CloudFormation derives follow.

impl SdkReader for S3BucketDeleter {
    const READS: &'static [&'static str] = &["AWS::S3::Bucket"];
    const ATTRIBUTES: &'static [(&'static str, &'static str)] = &[
        ("AWS::S3::Bucket", "Arn"),
        ("AWS::S3::Bucket", "DomainName"),
        ("AWS::S3::Bucket", "DualStackDomainName"),
        ("AWS::S3::Bucket", "RegionalDomainName"),
        ("AWS::S3::Bucket", "WebsiteURL"),
    ];
}

/// Regions whose website endpoint is `s3-website-<region>` (the others use
/// `s3-website.<region>`).
const DASHED_WEBSITE_REGIONS: &[&str] = &[
    "us-east-1",
    "us-west-1",
    "us-west-2",
    "ap-southeast-1",
    "ap-southeast-2",
    "ap-northeast-1",
    "eu-west-1",
    "sa-east-1",
    "us-gov-west-1",
];

/// The GetAtt attributes of bucket `bucket` in `region`, as CloudFormation derives them
/// from the name and the region.
pub fn bucket_attributes(bucket: &str, region: &str) -> Value {
    let (partition, suffix) = cdkd_core::keys::partition(region);
    let website = if DASHED_WEBSITE_REGIONS.contains(&region) {
        format!("http://{bucket}.s3-website-{region}.{suffix}")
    } else {
        format!("http://{bucket}.s3-website.{region}.{suffix}")
    };
    json!({
        "Arn": format!("arn:{partition}:s3:::{bucket}"),
        "DomainName": format!("{bucket}.s3.{suffix}"),
        "DualStackDomainName": format!("{bucket}.s3.dualstack.{region}.{suffix}"),
        "RegionalDomainName": format!("{bucket}.s3.{region}.{suffix}"),
        "WebsiteURL": website,
    })
}

/// S3's answers for a setting that was never made.
const NOT_CONFIGURED: &[&str] = &[
    "NoSuchTagSet",
    "NoSuchTagSetError",
    "ServerSideEncryptionConfigurationNotFoundError",
    "NoSuchPublicAccessBlockConfiguration",
];

#[async_trait]
impl Reader for S3BucketDeleter {
    async fn read(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let bucket = req.physical_id.as_str();
        let s3 = &self.s3;
        let head = s3.head_bucket().bucket(bucket).send().await;
        if found("HeadBucket", &["NotFound", "NoSuchBucket"], head)?.is_none() {
            return Ok(None);
        }
        let mut p = Props::new();
        p.set("BucketName", bucket);
        let versioning = answered(
            "GetBucketVersioning",
            s3.get_bucket_versioning().bucket(bucket).send().await,
        )?;
        p.opt(
            "VersioningConfiguration",
            versioning.status().map(|s| json!({"Status": s.as_str()})),
        );
        let enc = s3.get_bucket_encryption().bucket(bucket).send().await;
        if let Some(rules) = found("GetBucketEncryption", NOT_CONFIGURED, enc)?
            .and_then(|e| e.server_side_encryption_configuration().cloned())
        {
            let rules: Vec<Value> = rules
                .rules()
                .iter()
                .map(|r| {
                    let mut out = Props::new();
                    if let Some(d) = r.apply_server_side_encryption_by_default() {
                        let mut by = Props::new();
                        by.set("SSEAlgorithm", d.sse_algorithm().as_str());
                        by.opt("KMSMasterKeyID", d.kms_master_key_id());
                        out.set("ServerSideEncryptionByDefault", by.build());
                    }
                    out.opt("BucketKeyEnabled", r.bucket_key_enabled());
                    out.build()
                })
                .collect();
            p.nonempty(
                "BucketEncryption",
                json!({"ServerSideEncryptionConfiguration": rules}),
            );
        }
        let pab = s3.get_public_access_block().bucket(bucket).send().await;
        if let Some(c) = found("GetPublicAccessBlock", NOT_CONFIGURED, pab)?
            .and_then(|o| o.public_access_block_configuration().cloned())
        {
            let mut b = Props::new();
            b.opt("BlockPublicAcls", c.block_public_acls());
            b.opt("BlockPublicPolicy", c.block_public_policy());
            b.opt("IgnorePublicAcls", c.ignore_public_acls());
            b.opt("RestrictPublicBuckets", c.restrict_public_buckets());
            p.nonempty("PublicAccessBlockConfiguration", b.build());
        }
        let tags = s3.get_bucket_tagging().bucket(bucket).send().await;
        if let Some(t) = found("GetBucketTagging", NOT_CONFIGURED, tags)? {
            p.nonempty(
                "Tags",
                tag_list(t.tag_set().iter().map(|t| (t.key(), t.value()))),
            );
        }
        Ok(Some(p.build()))
    }

    async fn attributes(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let bucket = req.physical_id.as_str();
        let head = self.s3.head_bucket().bucket(bucket).send().await;
        let Some(head) = found("HeadBucket", &["NotFound", "NoSuchBucket"], head)? else {
            return Ok(None);
        };
        let Some(region) = head.bucket_region().or(self.region()) else {
            return Err(ReadError::Failed(format!(
                "the region of bucket {bucket} is unknown"
            )));
        };
        Ok(Some(bucket_attributes(bucket, region)))
    }
}

#[cfg(test)]
mod tests {
    use super::is_bucket_name;

    #[test]
    fn bucket_name_rule_accepts_cdk_names_and_rejects_arns() {
        assert!(is_bucket_name("oraclestack-bucket83908e77"));
        assert!(!is_bucket_name("arn:aws:s3:::b"));
        assert!(!is_bucket_name("Upper"));
        assert!(!is_bucket_name("ab"));
        assert!(!is_bucket_name("-ab"));
    }
}
