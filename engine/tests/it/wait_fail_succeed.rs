//! Wait (really waits, scaled by time_scale), Succeed, Fail.

use crate::common;
use std::time::Instant;

use common::*;
use serde_json::json;

async fn timed(
    def: serde_json::Value,
    input: serde_json::Value,
    scale: f64,
) -> (cdkd_engine::Outcome, f64) {
    let e = engine(scale);
    let t = Instant::now();
    let o = e.run(&machine(&def), input).await;
    (o, t.elapsed().as_secs_f64())
}

#[tokio::test]
async fn wait_seconds_really_waits_scaled_by_time_scale() {
    let (o, s) = timed(
        single(json!({"Type": "Wait", "Seconds": 10, "End": true})),
        json!({"a": 1}),
        0.03,
    )
    .await;
    assert_eq!(o, cdkd_engine::Outcome::Succeeded(json!({"a": 1})));
    assert!((0.28..2.0).contains(&s), "waited {s}s");
}

#[tokio::test]
async fn wait_time_scale_zero_does_not_wait() {
    let (_, s) = timed(
        single(json!({"Type": "Wait", "Seconds": 3600, "End": true})),
        json!({}),
        0.0,
    )
    .await;
    assert!(s < 1.0, "waited {s}s");
}

#[tokio::test]
async fn wait_seconds_path_reads_the_input() {
    let (o, s) = timed(
        single(json!({"Type": "Wait", "SecondsPath": "$.w", "End": true})),
        json!({"w": 10}),
        0.03,
    )
    .await;
    assert!(matches!(o, cdkd_engine::Outcome::Succeeded(_)));
    assert!((0.28..2.0).contains(&s), "waited {s}s");
}

#[tokio::test]
async fn wait_seconds_path_not_an_integer_fails_with_states_runtime() {
    let f = failed(
        single(json!({"Type": "Wait", "SecondsPath": "$.w", "End": true})),
        json!({"w": "ten"}),
    )
    .await;
    assert_eq!(f.error, "States.Runtime");
}

#[tokio::test]
async fn wait_timestamp_waits_until_then() {
    let at = (chrono::Utc::now() + chrono::Duration::seconds(10))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let (_, s) = timed(
        single(json!({"Type": "Wait", "Timestamp": at, "End": true})),
        json!({}),
        0.03,
    )
    .await;
    assert!((0.15..2.0).contains(&s), "waited {s}s");
}

#[tokio::test]
async fn wait_timestamp_in_the_past_does_not_wait() {
    let (_, s) = timed(
        single(json!({"Type": "Wait", "Timestamp": "2001-01-01T00:00:00Z", "End": true})),
        json!({}),
        1.0,
    )
    .await;
    assert!(s < 1.0, "waited {s}s");
}

#[tokio::test]
async fn wait_timestamp_path_reads_the_input() {
    let at = (chrono::Utc::now() + chrono::Duration::seconds(10))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let (o, s) = timed(
        single(json!({"Type": "Wait", "TimestampPath": "$.at", "End": true})),
        json!({"at": at}),
        0.03,
    )
    .await;
    assert!(matches!(o, cdkd_engine::Outcome::Succeeded(_)));
    assert!((0.15..2.0).contains(&s), "waited {s}s");
    let f = failed(
        single(json!({"Type": "Wait", "TimestampPath": "$.at", "End": true})),
        json!({"at": "soon"}),
    )
    .await;
    assert_eq!(f.error, "States.Runtime");
}

#[tokio::test]
async fn succeed_ends_with_its_output_path() {
    let out = ok(
        single(json!({"Type": "Succeed", "OutputPath": "$.a"})),
        json!({"a": [1]}),
    )
    .await;
    assert_eq!(out, json!([1]));
}

#[tokio::test]
async fn fail_reports_error_and_cause() {
    let f = failed(
        single(json!({"Type": "Fail", "Error": "ErrorA", "Cause": "Kaiju attack"})),
        json!({}),
    )
    .await;
    assert_eq!(
        (f.error.as_str(), f.cause.as_str()),
        ("ErrorA", "Kaiju attack")
    );
}

#[tokio::test]
async fn fail_error_path_and_cause_path_read_the_input() {
    let f = failed(
        single(json!({"Type": "Fail", "ErrorPath": "$.e.Error", "CausePath": "$.e.Cause"})),
        json!({"e": {"Error": "LockHeld", "Cause": "held by ci"}}),
    )
    .await;
    assert_eq!(
        (f.error.as_str(), f.cause.as_str()),
        ("LockHeld", "held by ci")
    );
}

#[tokio::test]
async fn fail_cause_path_may_be_an_intrinsic() {
    let f = failed(
        single(json!({"Type": "Fail", "Error": "E", "CausePath": "States.Format('stack {} failed', $.s)"})),
        json!({"s": "A"}),
    )
    .await;
    assert_eq!(f.cause, "stack A failed");
}

/// An error name beginning `States.` is reserved to Step Functions ("Error names"): a
/// Fail state ending with one is a runtime error, as in moto's interpreter
/// (docs/runs.md, "A run's error and cause").
#[tokio::test]
async fn fail_with_a_reserved_error_name_is_a_runtime_error() {
    for state in [
        json!({"Type": "Fail", "ErrorPath": "$.e.Error", "CausePath": "$.e.Cause"}),
        json!({"Type": "Fail", "Error": "States.Timeout", "Cause": "late"}),
    ] {
        let f = failed(
            single(state),
            json!({"e": {"Error": "States.Permissions", "Cause": "not allowed"}}),
        )
        .await;
        assert_eq!(f.error, "States.Runtime", "{f:?}");
        assert!(f.cause.contains("reserved"), "{f:?}");
    }
}
