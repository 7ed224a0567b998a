//! Helpers of the deleter tests against the emulator: a region's SDK configuration, the
//! registry built from it, a request as the workflow persists it, and a delete polled
//! until it is no longer in flight.

use aws_config::SdkConfig;
use cdkd_deleters::clients::{registry_from_config, s3_client};
use cdkd_deleters::{DeleteError, DeleteProgress, DeleteRequest, Registry};
use serde_json::{json, Value};

/// The region every test record lives in.
pub const HOME: &str = "us-east-1";
/// Another region, whose clients cannot confirm a deletion (region guard).
pub const OTHER: &str = "eu-west-1";

/// Emulator configuration for `region` (panics unless AWS_ENDPOINT_URL is the local
/// emulator, so these tests never pass without one and never reach anything else).
pub async fn cfg(region: &str) -> SdkConfig {
    let url = std::env::var("AWS_ENDPOINT_URL").unwrap_or_default();
    assert!(
        url.starts_with("http://127.0.0.1:") || url.starts_with("http://localhost:"),
        "AWS_ENDPOINT_URL={url:?} is not the local emulator: run under scripts/with-emulator.sh"
    );
    cdkd_aws::config::load_sdk_config(None, Some(region)).await
}

/// The deleter registry of `region`.
pub async fn registry(region: &str) -> Registry {
    let c = cfg(region).await;
    registry_from_config(&c, s3_client(&c))
}

/// A name no other test uses.
pub fn unique(tag: &str) -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("{tag}-{}", &id[..16])
}

/// A request as the workflow persists it (parsed, so that fields added later keep
/// their defaults).
pub fn req(resource_type: &str, physical_id: &str, properties: Value) -> DeleteRequest {
    serde_json::from_value(json!({
        "logicalId": "Thing",
        "resourceType": resource_type,
        "physicalId": physical_id,
        "properties": properties,
        "provisionedBy": "sdk",
        "region": HOME,
        "run": {
            "runId": "run-test",
            "stack": "TestStack",
            "stateBucket": "unused",
            "statePrefix": "cdkd"
        }
    }))
    .expect("a well-formed test request")
}

/// Starts the delete and polls it until it is no longer in flight.
pub async fn delete(reg: &Registry, r: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
    let mut progress = reg.start(r).await?;
    for _ in 0..100 {
        let DeleteProgress::InFlight { handle, .. } = &progress else {
            return Ok(progress);
        };
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        progress = reg.poll(r, handle).await?;
    }
    panic!("delete of {} still in flight", r.physical_id);
}
