//! `AWS::KMS::Key`: ScheduleKeyDeletion with `PendingWindowInDays` from the record's
//! properties when valid (7-30), else 7, the minimum (docs/destroy.md, "SDK deleters"). A key already pending
//! deletion counts as deleted.

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::DeleteProgress;
use crate::read::props::{policy_document, tag_list, Props};
use crate::read::{answered, found, ReadError, ReadRequest, Reader, SdkReader};
use crate::request::DeleteRequest;
use crate::{Deleter, SdkDeleter};
use serde_json::Value;

pub const MIN_PENDING_WINDOW_DAYS: i32 = 7;

pub struct KmsKeyDeleter {
    kms: aws_sdk_kms::Client,
}

impl KmsKeyDeleter {
    pub fn new(kms: aws_sdk_kms::Client) -> Self {
        KmsKeyDeleter { kms }
    }
}

/// The window to request: the recorded `PendingWindowInDays` if it is 7..=30, else 7.
pub fn pending_window_days(req: &DeleteRequest) -> i32 {
    let recorded = req.properties.get("PendingWindowInDays").and_then(|v| {
        v.as_i64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse::<i64>().ok()))
    });
    match recorded {
        Some(d @ 7..=30) => d as i32,
        _ => MIN_PENDING_WINDOW_DAYS,
    }
}

/// A key id (UUID or `mrk-…`) or a key ARN in `region`.
fn is_key_id(id: &str, region: Option<&str>) -> bool {
    if id.starts_with("arn:") {
        return region.is_some_and(|r| guard::arn_in(id, "kms", r))
            && id
                .splitn(6, ':')
                .nth(5)
                .is_some_and(|r| r.starts_with("key/"));
    }
    let uuid = id.len() == 36
        && id.bytes().enumerate().all(|(i, b)| {
            if [8, 13, 18, 23].contains(&i) {
                b == b'-'
            } else {
                b.is_ascii_hexdigit()
            }
        });
    uuid || (id.starts_with("mrk-")
        && id.len() > 4
        && id[4..].bytes().all(|b| b.is_ascii_hexdigit()))
}

impl SdkDeleter for KmsKeyDeleter {
    const TYPES: &'static [&'static str] = &["AWS::KMS::Key"];
}

#[async_trait]
impl Deleter for KmsKeyDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let key = req.physical_id.as_str();
        let region = self.kms.config().region().map(|r| r.as_ref());
        // Already pending deletion: nothing to do (ScheduleKeyDeletion would fail, or
        // on some implementations silently move the date).
        match self.kms.describe_key().key_id(key).send().await {
            Ok(out) => {
                let state = out
                    .key_metadata()
                    .and_then(|m| m.key_state())
                    .map(|s| s.as_str());
                if matches!(state, Some("PendingDeletion" | "PendingReplicaDeletion")) {
                    return Ok(DeleteProgress::AlreadyGone);
                }
            }
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["NotFoundException"]) {
                    return guard::not_found(
                        req,
                        region,
                        is_key_id(key, region),
                        &format!("KMS says key {key} does not exist"),
                    );
                }
                return Err(DeleteError::from_aws(req, "DescribeKey", &info));
            }
        }
        let sent = self
            .kms
            .schedule_key_deletion()
            .key_id(key)
            .pending_window_in_days(pending_window_days(req))
            .send()
            .await;
        match sent {
            Ok(_) => Ok(DeleteProgress::Done),
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["NotFoundException"]) {
                    return guard::not_found(
                        req,
                        region,
                        is_key_id(key, region),
                        &format!("KMS says key {key} does not exist"),
                    );
                }
                if info.code_is(&["KMSInvalidStateException"]) {
                    let state = self
                        .kms
                        .describe_key()
                        .key_id(key)
                        .send()
                        .await
                        .ok()
                        .and_then(|o| {
                            o.key_metadata()
                                .and_then(|m| m.key_state())
                                .map(|s| s.as_str().to_owned())
                        });
                    if matches!(
                        state.as_deref(),
                        Some("PendingDeletion" | "PendingReplicaDeletion")
                    ) {
                        return Ok(DeleteProgress::AlreadyGone);
                    }
                }
                Err(DeleteError::from_aws(req, "ScheduleKeyDeletion", &info))
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Reader (docs/repairs.md, "Per resource"): DescribeKey, GetKeyPolicy, GetKeyRotationStatus,
// ListResourceTags. A key pending deletion reads as gone.

impl SdkReader for KmsKeyDeleter {
    const READS: &'static [&'static str] = &["AWS::KMS::Key"];
    const ATTRIBUTES: &'static [(&'static str, &'static str)] =
        &[("AWS::KMS::Key", "Arn"), ("AWS::KMS::Key", "KeyId")];
}

impl KmsKeyDeleter {
    /// DescribeKey's metadata; `None` for a key that does not exist or is pending
    /// deletion.
    async fn live_key(
        &self,
        key: &str,
    ) -> Result<Option<aws_sdk_kms::types::KeyMetadata>, ReadError> {
        let sent = self.kms.describe_key().key_id(key).send().await;
        let Some(m) =
            found("DescribeKey", &["NotFoundException"], sent)?.and_then(|o| o.key_metadata)
        else {
            return Ok(None);
        };
        let state = m.key_state().map(|s| s.as_str());
        if matches!(state, Some("PendingDeletion" | "PendingReplicaDeletion")) {
            return Ok(None);
        }
        Ok(Some(m))
    }
}

#[async_trait]
impl Reader for KmsKeyDeleter {
    async fn read(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let key = req.physical_id.as_str();
        let Some(m) = self.live_key(key).await? else {
            return Ok(None);
        };
        let mut p = Props::new();
        p.opt("Description", m.description().filter(|d| !d.is_empty()));
        p.set("Enabled", m.enabled());
        p.opt("KeyUsage", m.key_usage().map(|u| u.as_str()));
        p.opt("KeySpec", m.key_spec().map(|s| s.as_str()));
        p.opt("MultiRegion", m.multi_region());
        let policy = answered(
            "GetKeyPolicy",
            self.kms
                .get_key_policy()
                .key_id(key)
                .policy_name("default")
                .send()
                .await,
        )?;
        p.opt("KeyPolicy", policy.policy().map(policy_document));
        if m.key_spec()
            .is_none_or(|s| s.as_str() == "SYMMETRIC_DEFAULT")
        {
            let rotation = answered(
                "GetKeyRotationStatus",
                self.kms.get_key_rotation_status().key_id(key).send().await,
            )?;
            p.set("EnableKeyRotation", rotation.key_rotation_enabled());
        }
        let tags = answered(
            "ListResourceTags",
            self.kms.list_resource_tags().key_id(key).send().await,
        )?;
        p.nonempty(
            "Tags",
            tag_list(tags.tags().iter().map(|t| (t.tag_key(), t.tag_value()))),
        );
        Ok(Some(p.build()))
    }

    /// DescribeKey: Arn, KeyId.
    async fn attributes(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let Some(m) = self.live_key(&req.physical_id).await? else {
            return Ok(None);
        };
        let mut p = Props::new();
        p.opt("Arn", m.arn());
        p.set("KeyId", m.key_id());
        Ok(Some(p.build()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kms_key_identifier_is_a_uuid_mrk_id_or_key_arn() {
        assert!(is_key_id("1234abcd-12ab-34cd-56ef-1234567890ab", None));
        assert!(is_key_id("mrk-1234abcd12ab34cd56ef1234567890ab", None));
        assert!(is_key_id(
            "arn:aws:kms:us-east-1:1:key/1234abcd-12ab-34cd-56ef-1234567890ab",
            Some("us-east-1")
        ));
        assert!(!is_key_id(
            "arn:aws:kms:eu-west-1:1:key/1234abcd-12ab-34cd-56ef-1234567890ab",
            Some("us-east-1")
        ));
        assert!(!is_key_id("alias/x", Some("us-east-1")));
    }
}
