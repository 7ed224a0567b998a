//! The state bucket (docs/state-and-lock.md, "Which bucket" and "Three regions"): its name (flag, env, else the account's
//! default, falling back to the legacy per-region default), the caller's account id (for
//! `ExpectedBucketOwner`), and the bucket's region.

use aws_config::SdkConfig;
use cdkd_core::text::flatten_str;

use crate::config::{s3_client, s3_client_in_region, FALLBACK_REGION};
use crate::s3err::Failure;
use crate::sdk_error::ErrorClass;

/// Errors of bucket resolution. Every message is one line.
#[derive(Debug, thiserror::Error)]
pub enum BucketError {
    #[error("Could not determine the AWS account (sts:GetCallerIdentity): {0}")]
    Account(String),
    #[error("No cdkd state bucket found for account {account}: neither {current} nor {legacy} exists. Run `cdkd bootstrap` first, or name the bucket with --state-bucket.")]
    NotFound {
        account: String,
        current: String,
        legacy: String,
    },
    #[error("Could not check whether state bucket {bucket} exists: {message}")]
    Probe { bucket: String, message: String },
}

/// Where the bucket name came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BucketSource {
    /// `--state-bucket`.
    Flag,
    /// `CDKD_STATE_BUCKET`.
    Env,
    /// `cdkd-state-<account>`.
    Default,
    /// `cdkd-state-<account>-<region>`.
    LegacyDefault,
}

/// The resolved state bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedBucket {
    pub name: String,
    pub source: BucketSource,
    /// Warnings already logged (also kept here for callers and tests).
    pub warnings: Vec<String>,
}

/// `cdkd-state-<account>`.
pub fn default_bucket_name(account: &str) -> String {
    format!("cdkd-state-{account}")
}

/// `cdkd-state-<account>-<cli region>`.
pub fn legacy_bucket_name(account: &str, cli_region: &str) -> String {
    format!("cdkd-state-{account}-{cli_region}")
}

/// The account id of the credentials in use (STS `GetCallerIdentity`).
pub async fn account_id(sdk: &SdkConfig) -> Result<String, BucketError> {
    let sts = aws_sdk_sts::Client::new(sdk);
    let out = sts
        .get_caller_identity()
        .send()
        .await
        .map_err(|e| BucketError::Account(Failure::from_sdk(&e).message))?;
    match out.account() {
        Some(a) if !a.is_empty() => Ok(a.to_owned()),
        _ => Err(BucketError::Account("the answer named no account".into())),
    }
}

/// Outcome of a `HeadBucket` probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    Exists,
    Missing,
}

async fn probe(
    client: &aws_sdk_s3::Client,
    bucket: &str,
    owner: Option<&str>,
) -> Result<Probe, BucketError> {
    match client
        .head_bucket()
        .bucket(bucket)
        .set_expected_bucket_owner(owner.map(str::to_owned))
        .send()
        .await
    {
        Ok(_) => Ok(Probe::Exists),
        Err(e) => {
            let f = Failure::from_sdk(&e);
            match f.class {
                _ if f.status == Some(301) => Ok(Probe::Exists),
                ErrorClass::AccessDenied => Ok(Probe::Exists),
                ErrorClass::NotFound => Ok(Probe::Missing),
                _ => Err(BucketError::Probe {
                    bucket: flatten_str(bucket),
                    message: f.message,
                }),
            }
        }
    }
}

/// True unless the bucket certainly holds no object under the literal prefix `cdkd/`
/// (any error counts as "has state").
async fn has_state(client: &aws_sdk_s3::Client, bucket: &str, owner: Option<&str>) -> bool {
    match client
        .list_objects_v2()
        .bucket(bucket)
        .prefix("cdkd/")
        .max_keys(1)
        .set_expected_bucket_owner(owner.map(str::to_owned))
        .send()
        .await
    {
        Ok(out) => !out.contents().is_empty(),
        Err(_) => true,
    }
}

/// Resolves the state bucket name (docs/state-and-lock.md, "Which bucket"): `flag`, else `env` (both verbatim,
/// empty counts as absent), else `cdkd-state-<account>` / the legacy
/// `cdkd-state-<account>-<cli_region>`, probed with `HeadBucket` from a `us-east-1`
/// client. `account` is the caller's account (needed only for the default).
pub async fn resolve_bucket(
    sdk: &SdkConfig,
    flag: Option<&str>,
    env: Option<&str>,
    account: Option<&str>,
    cli_region: &str,
) -> Result<ResolvedBucket, BucketError> {
    if let Some(b) = flag.filter(|b| !b.is_empty()) {
        return Ok(resolved(b, BucketSource::Flag, vec![]));
    }
    if let Some(b) = env.filter(|b| !b.is_empty()) {
        return Ok(resolved(b, BucketSource::Env, vec![]));
    }
    let account = match account {
        Some(a) => a.to_owned(),
        None => account_id(sdk).await?,
    };
    let current = default_bucket_name(&account);
    let legacy = legacy_bucket_name(&account, cli_region);
    let client = s3_client_in_region(sdk, FALLBACK_REGION);
    let owner = Some(account.as_str());
    let (cur, leg) = futures::join!(
        probe(&client, &current, owner),
        probe(&client, &legacy, owner)
    );
    let choice = match (cur?, leg?) {
        (Probe::Exists, Probe::Missing) => resolved(&current, BucketSource::Default, vec![]),
        (Probe::Missing, Probe::Exists) => resolved(
            &legacy,
            BucketSource::LegacyDefault,
            vec![format!(
                "Using the legacy state bucket {legacy}: the default state bucket is now {current}. Run `cdkd state migrate --region {cli_region}` to copy the state over."
            )],
        ),
        (Probe::Exists, Probe::Exists) => {
            let (cur_has, leg_has) = futures::join!(
                has_state(&client, &current, owner),
                has_state(&client, &legacy, owner)
            );
            if !cur_has && leg_has {
                resolved(
                    &legacy,
                    BucketSource::LegacyDefault,
                    vec![format!(
                        "Both {current} and the legacy {legacy} exist and only the legacy bucket holds state: using it. Run `cdkd state migrate --region {cli_region}` to copy the state over."
                    )],
                )
            } else {
                resolved(&current, BucketSource::Default, vec![])
            }
        }
        (Probe::Missing, Probe::Missing) => {
            return Err(BucketError::NotFound {
                account,
                current,
                legacy,
            })
        }
    };
    for w in &choice.warnings {
        tracing::warn!("{w}");
    }
    tracing::debug!("state bucket: {}", choice.name);
    Ok(choice)
}

fn resolved(name: &str, source: BucketSource, warnings: Vec<String>) -> ResolvedBucket {
    ResolvedBucket {
        name: name.to_owned(),
        source,
        warnings,
    }
}

/// Maps a `GetBucketLocation` constraint to a region: empty/absent is `us-east-1`, the
/// historic `EU` is `eu-west-1`.
pub fn region_of_location(constraint: Option<&str>) -> String {
    match constraint.map(str::trim) {
        None | Some("") => "us-east-1".into(),
        Some("EU") => "eu-west-1".into(),
        Some(r) => r.to_owned(),
    }
}

/// The bucket's region as S3 tells it (`GetBucketLocation`, with `ExpectedBucketOwner`,
/// from a client of `sdk`'s region: S3 answers it from any region); `Err` with the
/// failure's message when it does not answer.
pub async fn probe_bucket_region(
    sdk: &SdkConfig,
    bucket: &str,
    owner: Option<&str>,
) -> Result<String, String> {
    let client = s3_client(sdk);
    client
        .get_bucket_location()
        .bucket(bucket)
        .set_expected_bucket_owner(owner.map(str::to_owned))
        .send()
        .await
        .map(|out| region_of_location(out.location_constraint().map(|c| c.as_str())))
        .map_err(|e| Failure::from_sdk(&e).message)
}

/// The bucket's region ([`probe_bucket_region`]). A failed probe falls back to the
/// client's own region (the later operation surfaces the real error).
pub async fn bucket_region(sdk: &SdkConfig, bucket: &str, owner: Option<&str>) -> String {
    match probe_bucket_region(sdk, bucket, owner).await {
        Ok(region) => region,
        Err(message) => {
            tracing::debug!(
                "GetBucketLocation of {} failed: {}",
                flatten_str(bucket),
                message
            );
            client_region(sdk)
        }
    }
}

/// The region `sdk`'s clients sign for (`us-east-1` when it names none).
pub fn client_region(sdk: &SdkConfig) -> String {
    sdk.region()
        .map(|r| r.as_ref().to_owned())
        .unwrap_or_else(|| FALLBACK_REGION.into())
}

/// The S3 client for the state bucket: rebuilt for the bucket's region (S3 answers a
/// request signed for another region with a 301 the SDK does not follow; the emulator
/// does too, docs/emulator.md "AWS's limits").
pub async fn state_bucket_client(
    sdk: &SdkConfig,
    bucket: &str,
    owner: Option<&str>,
) -> aws_sdk_s3::Client {
    let region = bucket_region(sdk, bucket, owner).await;
    s3_client_in_region(sdk, &region)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_location_empty_is_us_east_1() {
        assert_eq!(region_of_location(None), "us-east-1");
        assert_eq!(region_of_location(Some("")), "us-east-1");
    }

    #[test]
    fn bucket_location_eu_is_eu_west_1() {
        assert_eq!(region_of_location(Some("EU")), "eu-west-1");
        assert_eq!(region_of_location(Some("ap-south-1")), "ap-south-1");
    }

    #[test]
    fn default_bucket_names() {
        assert_eq!(
            default_bucket_name("111122223333"),
            "cdkd-state-111122223333"
        );
        assert_eq!(
            legacy_bucket_name("111122223333", "us-east-1"),
            "cdkd-state-111122223333-us-east-1"
        );
    }
}
