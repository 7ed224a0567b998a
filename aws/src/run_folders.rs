//! The run folders of the state bucket (docs/runs.md): list every object under
//! `<prefix>/_runs/`, delete keys in DeleteObjects batches, read whether the bucket keeps
//! versions, and merge cdkd-flow's lifecycle rule into the bucket's lifecycle
//! configuration without touching the other rules. Decisions are `cdkd_core::retention`'s.

use aws_sdk_s3::error::ProvideErrorMetadata;
use aws_sdk_s3::types::{
    AbortIncompleteMultipartUpload, BucketLifecycleConfiguration, BucketVersioningStatus,
    ExpirationStatus, LifecycleExpiration, LifecycleRule, LifecycleRuleFilter,
    NoncurrentVersionExpiration, ObjectIdentifier,
};
use cdkd_core::keys::run_prefix;
use cdkd_core::retention::{
    rule_change, sooner_rules, ListedObject, ObservedRule, RetentionWarning, RuleChange, RunsRule,
};
use cdkd_core::text::flatten_str;

use crate::s3err::Failure;
use crate::store::{StateStore, StoreError};

/// What merging the rule did (or would do).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleMerge {
    pub change: RuleChange,
    /// The bucket's other rules, written back as they were read.
    pub other_rules: usize,
    /// Other rules that expire run objects sooner.
    pub warnings: Vec<RetentionWarning>,
}

/// A key one DeleteObjects request did not delete, with S3's code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError {
    pub key: String,
    pub error: String,
}

impl StateStore {
    fn bucket_error(&self, what: &str, f: Failure) -> StoreError {
        StoreError::Bucket {
            bucket: flatten_str(&self.bucket),
            operation: what.to_string(),
            message: f.message,
        }
    }

    /// Every object under `<prefix>/_runs/` with its size and last write (every page;
    /// `on_page` is told the count so far).
    pub async fn list_run_objects(
        &self,
        on_page: impl FnMut(usize),
    ) -> Result<Vec<ListedObject>, StoreError> {
        self.list_objects_under(&run_prefix(&self.prefix, ""), on_page)
            .await
    }

    /// Deletes up to 1000 keys in one DeleteObjects request (quiet: only failures come
    /// back). A request that fails as a whole is an error; keys S3 refused one by one
    /// are returned.
    pub async fn delete_keys(&self, batch: &[String]) -> Result<Vec<KeyError>, StoreError> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<ObjectIdentifier> = batch
            .iter()
            .filter_map(|k| ObjectIdentifier::builder().key(k).build().ok())
            .collect();
        let failed = self
            .delete_objects_batch(ids)
            .await
            .map_err(|f| self.bucket_error("DeleteObjects", f))?;
        Ok(failed
            .into_iter()
            .map(|(key, error)| KeyError { key, error })
            .collect())
    }

    /// Whether the bucket keeps versions (versioning enabled or suspended).
    pub async fn is_versioned(&self) -> Result<bool, StoreError> {
        let out = self
            .client
            .get_bucket_versioning()
            .bucket(&self.bucket)
            .set_expected_bucket_owner(self.expected_owner.clone())
            .send()
            .await
            .map_err(|e| self.bucket_error("GetBucketVersioning", Failure::from_sdk(&e)))?;
        Ok(matches!(
            out.status(),
            Some(BucketVersioningStatus::Enabled | BucketVersioningStatus::Suspended)
        ))
    }

    /// Merges `want` into the bucket's lifecycle configuration (docs/runs.md, "The lifecycle rule (cdkd-flow runs expire, make deploy)"): the
    /// configuration is read; the rule with `want`'s id is added or replaced, every other
    /// rule written back as it was read (and the configuration's default minimum
    /// transition size with them); nothing is written when the rule is already there,
    /// nor under `dry_run`.
    pub async fn merge_runs_rule(
        &self,
        want: &RunsRule,
        dry_run: bool,
    ) -> Result<RuleMerge, StoreError> {
        let (rules, min_size) = match self
            .client
            .get_bucket_lifecycle_configuration()
            .bucket(&self.bucket)
            .set_expected_bucket_owner(self.expected_owner.clone())
            .send()
            .await
        {
            Ok(out) => (
                out.rules().to_vec(),
                out.transition_default_minimum_object_size().cloned(),
            ),
            Err(e) if e.code() == Some("NoSuchLifecycleConfiguration") => (Vec::new(), None),
            Err(e) => {
                return Err(
                    self.bucket_error("GetBucketLifecycleConfiguration", Failure::from_sdk(&e))
                )
            }
        };
        let observed: Vec<ObservedRule> = rules.iter().map(observe).collect();
        let ours = observed
            .iter()
            .position(|r| r.id.as_deref() == Some(want.id.as_str()));
        let change = rule_change(ours.map(|i| &observed[i]), want);
        let others: Vec<LifecycleRule> = rules
            .into_iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != ours)
            .map(|(_, r)| modernized(r))
            .collect();
        let merge = RuleMerge {
            change,
            other_rules: others.len(),
            warnings: sooner_rules(&observed, want),
        };
        if change == RuleChange::Unchanged || dry_run {
            return Ok(merge);
        }
        let mut all = others;
        all.push(sdk_rule(want).map_err(|m| StoreError::Bucket {
            bucket: flatten_str(&self.bucket),
            operation: "PutBucketLifecycleConfiguration".into(),
            message: m,
        })?);
        let config = BucketLifecycleConfiguration::builder()
            .set_rules(Some(all))
            .build()
            .map_err(|e| StoreError::Bucket {
                bucket: flatten_str(&self.bucket),
                operation: "PutBucketLifecycleConfiguration".into(),
                message: flatten_str(&e.to_string()),
            })?;
        self.client
            .put_bucket_lifecycle_configuration()
            .bucket(&self.bucket)
            .lifecycle_configuration(config)
            .set_transition_default_minimum_object_size(min_size)
            .set_expected_bucket_owner(self.expected_owner.clone())
            .send()
            .await
            .map_err(|e| {
                self.bucket_error("PutBucketLifecycleConfiguration", Failure::from_sdk(&e))
            })?;
        Ok(merge)
    }
}

/// A rule written before S3 had filters (its prefix on the rule itself, no `Filter`) as
/// the same rule with a `Filter` of that prefix: written back beside ours, which has a
/// `Filter`, a configuration must not mix the two forms. Any other rule as it is.
#[allow(deprecated)]
fn modernized(r: LifecycleRule) -> LifecycleRule {
    if r.filter().is_some() {
        return r;
    }
    let prefix = r.prefix().unwrap_or_default().to_string();
    let mut b = LifecycleRule::builder()
        .set_expiration(r.expiration().cloned())
        .set_id(r.id().map(str::to_string))
        .filter(LifecycleRuleFilter::builder().prefix(prefix).build())
        .status(r.status().clone())
        .set_noncurrent_version_expiration(r.noncurrent_version_expiration().cloned())
        .set_abort_incomplete_multipart_upload(r.abort_incomplete_multipart_upload().cloned());
    if !r.transitions().is_empty() {
        b = b.set_transitions(Some(r.transitions().to_vec()));
    }
    if !r.noncurrent_version_transitions().is_empty() {
        b = b.set_noncurrent_version_transitions(Some(r.noncurrent_version_transitions().to_vec()));
    }
    b.build().unwrap_or(r)
}

/// A rule as the decisions read it. A rule written before S3 had filters carries its
/// prefix on the rule itself (the SDK's deprecated `prefix`): it is read as one.
#[allow(deprecated)]
fn observe(r: &LifecycleRule) -> ObservedRule {
    let filter = r.filter();
    let filter_is_prefix_only = filter.is_none_or(|f| {
        f.tag().is_none()
            && f.and().is_none()
            && f.object_size_greater_than().is_none()
            && f.object_size_less_than().is_none()
    });
    let prefix = if filter_is_prefix_only {
        filter
            .and_then(LifecycleRuleFilter::prefix)
            .or(r.prefix())
            .map(str::to_string)
            .or_else(|| Some(String::new()))
    } else {
        None
    };
    // Where the rule can reach run objects: they carry no tags, so a tag filter (alone or
    // in an `And`) never does; a size condition reaches some.
    let (scope, sized) = match filter {
        None => (Some(r.prefix().unwrap_or_default().to_string()), false),
        Some(f) if f.tag().is_some() => (None, false),
        Some(f) => match f.and() {
            Some(and) if !and.tags().is_empty() => (None, false),
            Some(and) => (
                Some(and.prefix().unwrap_or_default().to_string()),
                and.object_size_greater_than().is_some() || and.object_size_less_than().is_some(),
            ),
            None => (
                Some(f.prefix().or(r.prefix()).unwrap_or_default().to_string()),
                f.object_size_greater_than().is_some() || f.object_size_less_than().is_some(),
            ),
        },
    };
    let exp = r.expiration();
    ObservedRule {
        id: r.id().map(str::to_string),
        enabled: *r.status() == ExpirationStatus::Enabled,
        prefix,
        scope,
        sized,
        expiration_days: exp.and_then(LifecycleExpiration::days),
        noncurrent_days: r
            .noncurrent_version_expiration()
            .and_then(NoncurrentVersionExpiration::noncurrent_days),
        abort_multipart_days: r
            .abort_incomplete_multipart_upload()
            .and_then(AbortIncompleteMultipartUpload::days_after_initiation),
        other_parts: !filter_is_prefix_only
            || !r.transitions().is_empty()
            || !r.noncurrent_version_transitions().is_empty()
            || exp
                .is_some_and(|e| e.date().is_some() || e.expired_object_delete_marker().is_some())
            || r.noncurrent_version_expiration()
                .is_some_and(|n| n.newer_noncurrent_versions().is_some()),
    }
}

/// cdkd-flow's rule as the SDK writes it.
fn sdk_rule(want: &RunsRule) -> Result<LifecycleRule, String> {
    LifecycleRule::builder()
        .id(&want.id)
        .status(ExpirationStatus::Enabled)
        .filter(LifecycleRuleFilter::builder().prefix(&want.prefix).build())
        .expiration(
            LifecycleExpiration::builder()
                .days(want.expiration_days)
                .build(),
        )
        .noncurrent_version_expiration(
            NoncurrentVersionExpiration::builder()
                .noncurrent_days(want.noncurrent_days)
                .build(),
        )
        .abort_incomplete_multipart_upload(
            AbortIncompleteMultipartUpload::builder()
                .days_after_initiation(want.abort_multipart_days)
                .build(),
        )
        .build()
        .map_err(|e| flatten_str(&e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_s3::types::{ExpirationStatus, LifecycleExpiration};

    /// A legacy rule (prefix on the rule) is written back as the same rule with a
    /// `Filter` of that prefix; a rule with a filter is left as it is.
    #[test]
    #[allow(deprecated)]
    fn a_legacy_prefix_rule_is_written_back_with_a_filter_of_that_prefix() {
        let legacy = LifecycleRule::builder()
            .id("logs")
            .prefix("logs/")
            .status(ExpirationStatus::Enabled)
            .expiration(LifecycleExpiration::builder().days(30).build())
            .build()
            .unwrap();
        let m = modernized(legacy);
        assert_eq!(m.prefix(), None);
        assert_eq!(m.filter().and_then(|f| f.prefix()), Some("logs/"));
        assert_eq!(m.id(), Some("logs"));
        assert_eq!(m.expiration().and_then(|e| e.days()), Some(30));
        assert_eq!(m.status(), &ExpirationStatus::Enabled);
        let filtered = m.clone();
        assert_eq!(modernized(filtered), m);
    }
}
