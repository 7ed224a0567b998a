//! `cleanup-select` against the emulator: records of various ages, names, regions,
//! locks, nested children, a legacy region-less record and an unreadable record; only
//! old, unlocked, matching top-level stacks in an allowed region are selected. The
//! selection is written to the run folder's `selection.json`; the step returns counts and
//! the first batch (docs/runs.md, "A cleanup's lists").

use std::sync::Arc;

use cdkd_functions::steps;
use cdkd_functions::Deps;
use cdkd_tests as h;
use serde_json::{json, Value};

const DAY: i64 = 86_400_000;
const NOW: i64 = 1_800_000_000_000;

fn record(stack: &str, region: &str, last_modified: Option<i64>, parent: Option<&str>) -> String {
    let mut body = json!({
        "version": 10,
        "region": region,
        "stackName": stack,
        "resources": {},
        "outputs": {},
    });
    if let Some(lm) = last_modified {
        body["lastModified"] = json!(lm);
    }
    if let Some(p) = parent {
        body["parentStack"] = json!(p);
        body["parentRegion"] = json!(region);
        body["parentLogicalId"] = json!("Child");
    }
    serde_json::to_string_pretty(&body).unwrap()
}

fn reason_of(out: &Value, stack: &str, region: Option<&str>) -> String {
    out["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stack"] == stack && s["stackRegion"].as_str() == region)
        .unwrap_or_else(|| panic!("{stack} not skipped: {out:#}"))["reason"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn cleanup_select_keeps_only_old_unlocked_matching_top_level_stacks() {
    let sdk = h::sdk().await;
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let old = Some(NOW - 10 * DAY);
    let put = |key: String, body: String| {
        let s3 = s3.clone();
        let bucket = bucket.clone();
        async move { h::put_raw(&s3, &bucket, &key, body).await }
    };
    // Selected.
    put(
        "cdkd/pr-1/us-east-1/state.json".into(),
        record("pr-1", "us-east-1", old, None),
    )
    .await;
    put(
        "cdkd/pr-2/eu-west-1/state.json".into(),
        record("pr-2", "eu-west-1", old, None),
    )
    .await;
    // Too young.
    put(
        "cdkd/pr-3/us-east-1/state.json".into(),
        record("pr-3", "us-east-1", Some(NOW - DAY), None),
    )
    .await;
    // Pattern mismatch.
    put(
        "cdkd/prod/us-east-1/state.json".into(),
        record("prod", "us-east-1", old, None),
    )
    .await;
    // Locked (an expired lock counts too).
    put(
        "cdkd/pr-4/us-east-1/state.json".into(),
        record("pr-4", "us-east-1", old, None),
    )
    .await;
    put(
        "cdkd/pr-4/us-east-1/lock.json".into(),
        h::cdkd_lock_body("someone", NOW - 1, NOW - 1, Some("deploy")),
    )
    .await;
    // Nested child (linked to pr-1).
    put(
        "cdkd/pr-1~Child/us-east-1/state.json".into(),
        record("pr-1~Child", "us-east-1", old, Some("pr-1")),
    )
    .await;
    // Region not allowed.
    put(
        "cdkd/pr-5/ap-south-1/state.json".into(),
        record("pr-5", "ap-south-1", old, None),
    )
    .await;
    // Legacy region-less record.
    put(
        "cdkd/pr-6/state.json".into(),
        r#"{"version": 1, "stackName": "pr-6", "resources": {}, "lastModified": 1}"#.into(),
    )
    .await;
    // Unreadable record.
    put("cdkd/pr-7/us-east-1/state.json".into(), "{not json".into()).await;
    // No lastModified.
    put(
        "cdkd/pr-8/us-east-1/state.json".into(),
        record("pr-8", "us-east-1", None, None),
    )
    .await;
    // Another prefix is never looked at.
    put(
        "other/pr-9/us-east-1/state.json".into(),
        record("pr-9", "us-east-1", old, None),
    )
    .await;

    let mut deps = Deps::from_sdk(sdk.clone(), None).await;
    deps.now_ms = Arc::new(|| NOW);
    let turn = steps::invoke(
        "cleanup-select",
        json!({"runId": "cleanup-sel-1", "input": {
            "stateBucket": bucket,
            "pattern": "pr-*",
            "minimumAge": "7d",
            "regions": "us-east-1,eu-west-1",
            "dryRun": "false"
        }}),
        &deps,
    )
    .await
    .unwrap();

    let selected = json!([
        {"stack": "pr-1", "stackRegion": "us-east-1"},
        {"stack": "pr-2", "stackRegion": "eu-west-1"},
    ]);
    assert_eq!(turn["batch"], selected, "{turn:#}");
    assert_eq!(turn["more"], json!(true));
    assert_eq!(turn["dryRun"], json!(false));
    assert_eq!(turn["selectedCount"], json!(2));
    assert_eq!(turn["skippedCount"], json!(8));
    assert_eq!(turn["statePrefix"], json!("cdkd"));
    assert_eq!(
        turn["selectionKey"],
        json!("cdkd/_runs/cleanup-sel-1/selection.json")
    );
    let out: Value = serde_json::from_str(
        &h::get_text(&s3, &bucket, "cdkd/_runs/cleanup-sel-1/selection.json")
            .await
            .expect("selection.json written"),
    )
    .unwrap();
    assert_eq!(out["selected"], selected, "{out:#}");
    assert_eq!(out["dryRun"], json!(false));
    assert_eq!(
        h::get_text(&s3, &bucket, "cdkd/_runs/cleanup-sel-1/results.json")
            .await
            .map(|t| serde_json::from_str::<Value>(&t).unwrap()),
        Some(json!({"results": []}))
    );
    assert_eq!(reason_of(&out, "pr-3", Some("us-east-1")), "too-young");
    assert_eq!(
        reason_of(&out, "prod", Some("us-east-1")),
        "pattern-mismatch"
    );
    assert_eq!(reason_of(&out, "pr-4", Some("us-east-1")), "locked");
    assert_eq!(
        reason_of(&out, "pr-1~Child", Some("us-east-1")),
        "nested-child"
    );
    assert_eq!(
        reason_of(&out, "pr-5", Some("ap-south-1")),
        "region-not-allowed"
    );
    assert_eq!(reason_of(&out, "pr-6", None), "legacy-without-region");
    assert_eq!(reason_of(&out, "pr-7", Some("us-east-1")), "unreadable");
    assert_eq!(
        reason_of(&out, "pr-8", Some("us-east-1")),
        "no-last-modified"
    );
    assert_eq!(out["skipped"].as_array().unwrap().len(), 8, "{out:#}");
    assert!(!out.to_string().contains("pr-9"));
}

#[tokio::test]
async fn cleanup_select_refuses_a_bad_minimum_age_as_bad_input() {
    let sdk = h::sdk().await;
    let deps = Deps::from_sdk(sdk, None).await;
    let err = steps::invoke(
        "cleanup-select",
        json!({"runId": "r", "input": {"stateBucket": "b", "pattern": "pr-*", "minimumAge": "7"}}),
        &deps,
    )
    .await
    .unwrap_err();
    assert_eq!(err.name, "BadInput");
    assert!(err.message.contains("minimum age '7'"), "{}", err.message);
}
