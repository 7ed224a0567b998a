//! The AWS configuration: the SDK's default chain (profile, region, credentials), with
//! `AWS_ENDPOINT_URL` / `AWS_ENDPOINT_URL_S3` honoured by the SDK itself, and the S3
//! client built path-style when an endpoint is set (the local emulator).

use aws_config::{BehaviorVersion, Region, SdkConfig};

/// Region used when neither the caller nor the SDK chain names one.
pub const FALLBACK_REGION: &str = "us-east-1";

/// Loads the SDK configuration from the default chain. An explicit `profile` / `region`
/// wins over the chain; when no region is found anywhere, `us-east-1` is used.
pub async fn load_sdk_config(profile: Option<&str>, region: Option<&str>) -> SdkConfig {
    let mut loader = aws_config::defaults(BehaviorVersion::latest());
    if let Some(p) = profile.filter(|p| !p.is_empty()) {
        loader = loader.profile_name(p);
    }
    if let Some(r) = region.filter(|r| !r.is_empty()) {
        loader = loader.region(Region::new(r.to_owned()));
    }
    let cfg = loader.load().await;
    if cfg.region().is_some() {
        cfg
    } else {
        cfg.to_builder()
            .region(Region::from_static(FALLBACK_REGION))
            .build()
    }
}

/// True when S3 requests go to a configured endpoint (an emulator) rather than AWS:
/// `AWS_ENDPOINT_URL` (or the profile's `endpoint_url`) as loaded into the config, or
/// the S3-specific `AWS_ENDPOINT_URL_S3`.
pub fn endpoint_configured(cfg: &SdkConfig) -> bool {
    cfg.endpoint_url().is_some_and(|u| !u.is_empty())
        || std::env::var("AWS_ENDPOINT_URL_S3").is_ok_and(|u| !u.is_empty())
}

/// The URL CloudFormation reads an object of the state bucket at (a change set's
/// `TemplateURL`): path-style under a configured endpoint (the emulator), else the
/// bucket's virtual-hosted regional address.
pub fn object_url(cfg: &SdkConfig, bucket: &str, region: &str, key: &str) -> String {
    let endpoint = std::env::var("AWS_ENDPOINT_URL_S3")
        .ok()
        .filter(|u| !u.is_empty())
        .or_else(|| {
            cfg.endpoint_url()
                .filter(|u| !u.is_empty())
                .map(str::to_string)
        });
    match endpoint {
        Some(e) => format!("{}/{bucket}/{key}", e.trim_end_matches('/')),
        None => format!("https://{bucket}.s3.{region}.amazonaws.com/{key}"),
    }
}

/// The S3 client of this configuration; path-style addressing when an endpoint is set.
pub fn s3_client(cfg: &SdkConfig) -> aws_sdk_s3::Client {
    aws_sdk_s3::Client::from_conf(s3_config(cfg, None))
}

/// The S3 client of this configuration pinned to `region` (the state bucket's region).
pub fn s3_client_in_region(cfg: &SdkConfig, region: &str) -> aws_sdk_s3::Client {
    aws_sdk_s3::Client::from_conf(s3_config(cfg, Some(region)))
}

fn s3_config(cfg: &SdkConfig, region: Option<&str>) -> aws_sdk_s3::Config {
    let mut b = aws_sdk_s3::config::Builder::from(cfg);
    if endpoint_configured(cfg) {
        b = b.force_path_style(true);
    }
    if let Some(r) = region {
        b = b.region(Region::new(r.to_owned()));
    }
    b.build()
}

/// The CLI region of docs/state-and-lock.md §1.3: `--region`, else `AWS_REGION`, lower-cased; else
/// `us-east-1`. The profile's `region =` is deliberately not consulted. An empty value
/// counts as absent.
pub fn cli_region(flag: Option<&str>, aws_region_env: Option<&str>) -> String {
    flag.map(str::trim)
        .filter(|r| !r.is_empty())
        .or_else(|| aws_region_env.map(str::trim).filter(|r| !r.is_empty()))
        .map(str::to_lowercase)
        .unwrap_or_else(|| FALLBACK_REGION.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_region_flag_wins_over_env() {
        assert_eq!(
            cli_region(Some("eu-west-1"), Some("us-west-2")),
            "eu-west-1"
        );
    }

    #[test]
    fn cli_region_env_is_lower_cased() {
        assert_eq!(cli_region(None, Some("US-EAST-1")), "us-east-1");
    }

    #[test]
    fn cli_region_defaults_to_us_east_1() {
        assert_eq!(cli_region(None, None), "us-east-1");
        assert_eq!(cli_region(Some(""), Some("")), "us-east-1");
    }
}
