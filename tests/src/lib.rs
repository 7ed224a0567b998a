//! Test harness for the end-to-end tests: clients pointed at the local AWS emulator
//! (moto server on 127.0.0.1, started by `scripts/with-emulator.sh` or `make test`), a
//! fresh bucket per test so tests run in parallel, and helpers for raw objects.
//!
//! A test that needs the emulator calls [`endpoint`] (directly or through [`sdk`]): it
//! panics when `AWS_ENDPOINT_URL` is unset, so such tests never pass silently without one.

pub mod cfn;
pub mod deleters;
pub mod export_bench;
pub mod faults;
pub mod fixtures;
pub mod provider;

use aws_config::SdkConfig;
use aws_sdk_s3::primitives::ByteStream;
use cdkd_aws::{LockManager, StateStore};

/// The emulator's account id (moto's fixed answer to `GetCallerIdentity`).
pub const EMULATOR_ACCOUNT: &str = "123456789012";

/// The emulator's endpoint. Panics unless it is a 127.0.0.1/localhost address, so no
/// test can reach anything else.
pub fn endpoint() -> String {
    let url = std::env::var("AWS_ENDPOINT_URL").unwrap_or_default();
    if url.is_empty() {
        panic!(
            "AWS_ENDPOINT_URL is not set: these tests need the local AWS emulator; \
             run under scripts/with-emulator.sh or make test"
        );
    }
    let local = url.starts_with("http://127.0.0.1:") || url.starts_with("http://localhost:");
    assert!(
        local,
        "AWS_ENDPOINT_URL={url} is not the local emulator on 127.0.0.1"
    );
    url
}

/// The SDK configuration the product builds, pointed at the emulator, in `us-east-1`.
pub async fn sdk() -> SdkConfig {
    endpoint();
    cdkd_aws::config::load_sdk_config(None, Some("us-east-1")).await
}

/// The product's S3 client (path-style under the endpoint).
pub async fn s3() -> aws_sdk_s3::Client {
    cdkd_aws::config::s3_client(&sdk().await)
}

/// A bucket name no other test uses (uuid-based, valid S3 name).
pub fn unique_bucket_name(tag: &str) -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    let tag: String = tag
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .take(20)
        .collect();
    format!("t-{tag}-{}", &id[..24])
}

/// Creates a bucket with exactly this name.
pub async fn create_bucket(s3: &aws_sdk_s3::Client, name: &str) {
    s3.create_bucket()
        .bucket(name)
        .send()
        .await
        .unwrap_or_else(|e| panic!("create bucket {name}: {e:?}"));
}

/// Creates a fresh, uniquely named bucket and returns its name.
pub async fn fresh_bucket(s3: &aws_sdk_s3::Client) -> String {
    let name = unique_bucket_name("cdkd");
    create_bucket(s3, &name).await;
    name
}

/// A fresh bucket created in `region` (its LocationConstraint), and the product's S3
/// client for that region: S3, and the emulator, answer a request signed for another
/// region with a 301 (docs/emulator.md, "AWS's limits").
pub async fn fresh_bucket_in(region: &str) -> (String, aws_sdk_s3::Client) {
    use aws_sdk_s3::types::{BucketLocationConstraint, CreateBucketConfiguration};
    let name = unique_bucket_name("cdkd");
    let s3 = cdkd_aws::config::s3_client_in_region(&sdk().await, region);
    s3.create_bucket()
        .bucket(&name)
        .create_bucket_configuration(
            CreateBucketConfiguration::builder()
                .location_constraint(BucketLocationConstraint::from(region))
                .build(),
        )
        .send()
        .await
        .unwrap_or_else(|e| panic!("create bucket {name} in {region}: {e:?}"));
    (name, s3)
}

/// Turns on versioning (to observe delete markers).
pub async fn enable_versioning(s3: &aws_sdk_s3::Client, bucket: &str) {
    use aws_sdk_s3::types::{BucketVersioningStatus, VersioningConfiguration};
    s3.put_bucket_versioning()
        .bucket(bucket)
        .versioning_configuration(
            VersioningConfiguration::builder()
                .status(BucketVersioningStatus::Enabled)
                .build(),
        )
        .send()
        .await
        .expect("enable versioning");
}

/// Writes raw bytes to a key; returns the quoted ETag.
pub async fn put_raw(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    key: &str,
    body: impl Into<Vec<u8>>,
) -> String {
    let out = s3
        .put_object()
        .bucket(bucket)
        .key(key)
        .body(ByteStream::from(body.into()))
        .send()
        .await
        .unwrap_or_else(|e| panic!("put {key}: {e:?}"));
    out.e_tag().expect("etag").to_owned()
}

/// Reads raw bytes and the ETag of a key; `None` when missing.
pub async fn get_raw(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    key: &str,
) -> Option<(Vec<u8>, String)> {
    match s3.get_object().bucket(bucket).key(key).send().await {
        Ok(out) => {
            let etag = out.e_tag().unwrap_or_default().to_owned();
            let bytes = out
                .body
                .collect()
                .await
                .expect("body")
                .into_bytes()
                .to_vec();
            Some((bytes, etag))
        }
        Err(e) => {
            let status = e.raw_response().map(|r| r.status().as_u16());
            assert_eq!(status, Some(404), "get {key}: {e:?}");
            None
        }
    }
}

/// Reads a key as UTF-8 text; `None` when missing.
pub async fn get_text(s3: &aws_sdk_s3::Client, bucket: &str, key: &str) -> Option<String> {
    get_raw(s3, bucket, key)
        .await
        .map(|(b, _)| String::from_utf8(b).expect("utf-8"))
}

/// Every key in the bucket (not url-encoded: the SDK's own listing).
pub async fn list_all_keys(s3: &aws_sdk_s3::Client, bucket: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut pages = s3.list_objects_v2().bucket(bucket).into_paginator().send();
    while let Some(page) = pages.next().await {
        let page = page.expect("list");
        out.extend(
            page.contents()
                .iter()
                .filter_map(|o| o.key().map(str::to_owned)),
        );
    }
    out
}

/// Versions and delete markers of one key: (number of versions, number of delete markers).
pub async fn version_counts(s3: &aws_sdk_s3::Client, bucket: &str, key: &str) -> (usize, usize) {
    let out = s3
        .list_object_versions()
        .bucket(bucket)
        .prefix(key)
        .send()
        .await
        .expect("list versions");
    let versions = out
        .versions()
        .iter()
        .filter(|v| v.key() == Some(key))
        .count();
    let markers = out
        .delete_markers()
        .iter()
        .filter(|v| v.key() == Some(key))
        .count();
    (versions, markers)
}

/// A state store over `bucket` with prefix `cdkd`, as the product builds it.
pub fn store(s3: &aws_sdk_s3::Client, bucket: &str) -> StateStore {
    store_with_prefix(s3, bucket, "cdkd")
}

/// A state store over `bucket` and `prefix`.
pub fn store_with_prefix(s3: &aws_sdk_s3::Client, bucket: &str, prefix: &str) -> StateStore {
    StateStore::new(
        s3.clone(),
        bucket,
        prefix,
        Some(EMULATOR_ACCOUNT.to_owned()),
    )
}

/// A lock manager over `bucket` with prefix `cdkd` and cdkd's TTL.
pub fn locks(s3: &aws_sdk_s3::Client, bucket: &str) -> LockManager {
    LockManager::new(store(s3, bucket), None)
}

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    cdkd_aws::store::now_ms()
}

/// A lock body in cdkd's own serialisation (`JSON.stringify(lock, null, 2)`).
pub fn cdkd_lock_body(
    owner: &str,
    timestamp: i64,
    expires_at: i64,
    operation: Option<&str>,
) -> String {
    let mut s = format!(
        "{{\n  \"owner\": {},\n  \"timestamp\": {timestamp},\n  \"expiresAt\": {expires_at}",
        serde_json::to_string(owner).expect("string")
    );
    if let Some(op) = operation {
        s.push_str(&format!(
            ",\n  \"operation\": {}",
            serde_json::to_string(op).expect("string")
        ));
    }
    s.push_str("\n}");
    s
}

/// What a CLI run printed and returned.
#[derive(Debug)]
pub struct CliRun {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the CLI binary `bin` (the CLI's tests pass `CARGO_BIN_EXE_cdkd-flow`) with
/// `args` against the emulator, with extra environment variables (and no state machine
/// from the environment unless given).
pub fn run_bin_env(bin: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> CliRun {
    let mut cmd = bin_command(bin, args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run cdkd-flow");
    CliRun {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `bin <args>` with the environment every test run of a binary gets: the emulator's
/// (checked to be on 127.0.0.1), `NO_COLOR`, no `RUST_LOG`, no state machine from the
/// environment. The caller sets stdio and any further variables.
pub fn bin_command(bin: &std::path::Path, args: &[&str]) -> std::process::Command {
    endpoint();
    let mut cmd = std::process::Command::new(bin);
    cmd.args(args)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .env_remove("CDKD_FLOW_DESTROY_STATE_MACHINE_ARN")
        .env_remove("CDKD_FLOW_CLEANUP_STATE_MACHINE_ARN")
        .env_remove("CDKD_FLOW_EXPORT_STATE_MACHINE_ARN");
    cmd
}

/// POSTs raw to the emulator (its own `/moto-api/...`, or a form-encoded AWS call the
/// SDKs here do not have) and returns the response; panics unless it is a 2xx.
pub async fn emulator_post(path: &str, body: &str, extra_headers: &str) -> String {
    emulator_request("POST", path, body, extra_headers).await
}

/// A raw `method` request to the emulator's own endpoint; the whole response (status
/// line, headers, body). Panics unless it is a 2xx.
pub async fn emulator_request(method: &str, path: &str, body: &str, extra_headers: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let url = endpoint();
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{extra_headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut s = tokio::net::TcpStream::connect(&addr).await.unwrap();
    s.write_all(req.as_bytes()).await.unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).await.unwrap();
    assert!(
        resp.starts_with("HTTP/1.1 2") || resp.starts_with("HTTP/1.0 2"),
        "{path}: {resp}"
    );
    resp
}

/// Turns the emulator's Step Functions interpreter on or off (emulator-wide: tests that
/// depend on it run one at a time).
pub async fn set_emulator_interpreter(on: bool) {
    let body = format!(r#"{{"stepfunctions": {{"execute_state_machine": {on}}}}}"#);
    emulator_post(
        "/moto-api/config",
        &body,
        "Content-Type: application/json\r\n",
    )
    .await;
}
