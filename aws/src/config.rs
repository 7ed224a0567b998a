//! The AWS configuration: the SDK's default chain (profile, region, credentials), with
//! `AWS_ENDPOINT_URL` / `AWS_ENDPOINT_URL_S3` honoured by the SDK itself, and the S3
//! client built path-style when an endpoint is set (the local emulator).

use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_smithy_http_client::proxy::ProxyConfig;
use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};
use aws_smithy_http_client::{Builder, ConnectorBuilder};
use aws_smithy_runtime_api::client::http::SharedHttpClient;

/// Region used when neither the caller nor the SDK chain names one.
pub const FALLBACK_REGION: &str = "us-east-1";

/// The HTTPS client of every AWS call: what the SDK's default client is (hyper 1, rustls,
/// the connector settings and sleep of each client, `HTTPS_PROXY` / `NO_PROXY` from the
/// environment), with rustls on ring instead of aws-lc (docs/testing.md, "One build, one feature set" says why).
pub fn https_client() -> SharedHttpClient {
    Builder::new().build_with_connector_fn(|settings, components| {
        let mut conn = ConnectorBuilder::default().tls_provider(Provider::Rustls(CryptoMode::Ring));
        conn.set_connector_settings(settings.cloned());
        if let Some(c) = components {
            conn.set_sleep_impl(c.sleep_impl());
        }
        conn.set_proxy_config(Some(ProxyConfig::from_env()));
        conn.build()
    })
}

/// Loads the SDK configuration from the default chain, every client on [`https_client`].
/// An explicit `profile` / `region` wins over the chain; when no region is found
/// anywhere, `us-east-1` is used.
pub async fn load_sdk_config(profile: Option<&str>, region: Option<&str>) -> SdkConfig {
    let mut loader = aws_config::defaults(BehaviorVersion::latest()).http_client(https_client());
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

/// The CLI region of docs/state-and-lock.md, "Three regions": `--region`, else `AWS_REGION`, lower-cased; else
/// `us-east-1`. The profile's `region =` is deliberately not consulted. An empty value
/// counts as absent.
pub fn cli_region(flag: Option<&str>, aws_region_env: Option<&str>) -> String {
    explicit_region(flag, aws_region_env).unwrap_or_else(|| FALLBACK_REGION.to_owned())
}

/// The region the user named: `--region`, else `AWS_REGION`, lower-cased; `None` leaves
/// it to the SDK's chain (the profile's `region =`; [`load_sdk_config`] falls back to
/// `us-east-1`). An empty value counts as absent.
pub fn explicit_region(flag: Option<&str>, aws_region_env: Option<&str>) -> Option<String> {
    flag.map(str::trim)
        .filter(|r| !r.is_empty())
        .or_else(|| aws_region_env.map(str::trim).filter(|r| !r.is_empty()))
        .map(str::to_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The client speaks TLS (rustls on ring is wired in): a request to an `https`
    /// endpoint opens with a TLS handshake record. The listener is on 127.0.0.1 and
    /// hangs up after the first bytes, so the call fails, as a dispatch failure.
    #[tokio::test]
    async fn https_client_opens_a_tls_handshake_with_rustls_on_ring() {
        use aws_sdk_sts::config::{Credentials, SharedCredentialsProvider};
        use tokio::io::AsyncReadExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let first = tokio::spawn(async move {
            let (mut sock, _) = listener.accept().await.unwrap();
            let mut head = [0u8; 3];
            sock.read_exact(&mut head).await.unwrap();
            head
        });
        let cfg = SdkConfig::builder()
            .http_client(https_client())
            .behavior_version(BehaviorVersion::latest())
            .region(Region::from_static("us-east-1"))
            .endpoint_url(format!("https://127.0.0.1:{port}"))
            .credentials_provider(SharedCredentialsProvider::new(Credentials::for_tests()))
            .retry_config(aws_config::retry::RetryConfig::disabled())
            .build();
        let err = aws_sdk_sts::Client::new(&cfg)
            .get_caller_identity()
            .send()
            .await
            .expect_err("the listener never answers");
        let head = first.await.unwrap();
        // A TLS record: content type 22 (handshake), protocol major version 3.
        assert_eq!(head[..2], [0x16, 0x03], "not a TLS handshake: {head:?}");
        assert!(
            matches!(err, aws_sdk_sts::error::SdkError::DispatchFailure(_)),
            "{err:?}"
        );
    }

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

    /// The SDK's clients get only a region the user named: none leaves the profile's.
    #[test]
    fn explicit_region_is_the_flag_else_the_env_lower_cased_else_none() {
        assert_eq!(
            explicit_region(Some(" EU-West-1 "), Some("us-west-2")).as_deref(),
            Some("eu-west-1")
        );
        assert_eq!(
            explicit_region(Some(""), Some("AP-South-1")).as_deref(),
            Some("ap-south-1")
        );
        assert_eq!(explicit_region(None, Some("  ")), None);
        assert_eq!(explicit_region(None, None), None);
    }
}
