//! lock.json (docs/state-and-lock.md, "lock.json") and the pure lock protocol rules ("The lock protocol"): statements 24, 29,
//! 31, 35, 36 and the expiry phrases of docs/state-and-lock.md, "The contention refusal".

use cdkd_core::lock::{
    flow_owner, is_expired, is_own_body, lock_expiry_ms, parse_lock, renew_interval_ms,
    renewal_due, LockBody, LockParseError, LOCK_TTL_MS,
};
use cdkd_core::view::words::{expiry_phrase, format_duration_ms};
use serde_json::{json, Value};

const NOW: i64 = 1_767_225_600_000;

#[test]
fn statement_24_lock_body_keys_in_order_and_ttl_30_minutes() {
    let body = LockBody::new(flow_owner("run-1"), NOW, LOCK_TTL_MS, None);
    let text = body.to_json();
    assert_eq!(
        text,
        format!(
            "{{\n  \"owner\": \"cdkd-flow:run-1\",\n  \"timestamp\": {NOW},\n  \"expiresAt\": {}\n}}",
            NOW + 1_800_000
        )
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["expiresAt"].as_i64().unwrap() - v["timestamp"].as_i64().unwrap(),
        1_800_000
    );

    let with_op = LockBody::new("o", NOW, LOCK_TTL_MS, Some("destroy".into())).to_json();
    let keys: Vec<String> = serde_json::from_str::<serde_json::Map<String, Value>>(&with_op)
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, ["owner", "timestamp", "expiresAt", "operation"]);
    // operation only when non-empty
    assert!(!LockBody::new("o", NOW, LOCK_TTL_MS, Some(String::new()))
        .to_json()
        .contains("operation"));
}

#[test]
fn lock_written_by_us_parses_as_cdkd_lock_info_shape() {
    let body = LockBody::new(flow_owner("r"), NOW, LOCK_TTL_MS, Some("destroy".into()));
    let info = parse_lock(body.to_json().as_bytes()).unwrap().unwrap();
    assert_eq!(info.owner, "cdkd-flow:r");
    assert_eq!(info.operation.as_deref(), Some("destroy"));
    assert_eq!(info.timestamp, Some(json!(NOW)));
    assert_eq!(info.expires_at, Some(json!(NOW + LOCK_TTL_MS)));
    assert!(is_own_body(&info, &body));
    assert!(!is_expired(&info, NOW));
}

#[test]
fn lock_in_cdkd_shape_without_operation_reads_its_holder() {
    let cdkd = "{\n  \"owner\": \"alice@workstation:4242\",\n  \"timestamp\": 1767225600000,\n  \"expiresAt\": 1767227400000\n}";
    let info = parse_lock(cdkd.as_bytes()).unwrap().unwrap();
    assert_eq!(info.owner, "alice@workstation:4242");
    assert_eq!(info.operation, None);
    assert_eq!(
        expiry_phrase(info.expiry_ms(), 1_767_225_600_000),
        "expires in 30m0s"
    );
}

#[test]
fn renewal_keeps_owner_timestamp_operation_and_moves_expiry() {
    let body = LockBody::new("o", NOW, LOCK_TTL_MS, Some("export".into()));
    let renewed = body.renewed(NOW + 120_000, LOCK_TTL_MS);
    assert_eq!(renewed.owner, body.owner);
    assert_eq!(renewed.timestamp, body.timestamp);
    assert_eq!(renewed.operation, body.operation);
    assert_eq!(renewed.expires_at, NOW + 120_000 + LOCK_TTL_MS);
    // The renew-412 check tells our landed body from another holder's.
    let landed = parse_lock(renewed.to_json().as_bytes()).unwrap().unwrap();
    assert!(is_own_body(&landed, &renewed));
    assert!(!is_own_body(&landed, &body));
    let other = LockBody {
        owner: "someone".into(),
        ..renewed.clone()
    };
    assert!(!is_own_body(&landed, &other));
}

#[test]
fn statement_29_non_finite_expires_at_counts_as_expired() {
    for exp in [
        r#""soon""#,
        "{}",
        r#""1767227400000""#,
        "null",
        "[]",
        "true",
    ] {
        let body = format!(r#"{{"owner":"a","timestamp":1,"expiresAt":{exp}}}"#);
        let info = parse_lock(body.as_bytes()).unwrap().unwrap();
        assert!(is_expired(&info, NOW), "{exp}");
    }
    let info = parse_lock(br#"{"owner":"a"}"#).unwrap().unwrap();
    assert!(is_expired(&info, NOW), "absent");
}

#[test]
fn takeover_expiry_test_is_now_at_or_after_expires_at() {
    let at = |e: i64| {
        parse_lock(format!(r#"{{"expiresAt":{e}}}"#).as_bytes())
            .unwrap()
            .unwrap()
    };
    assert!(is_expired(&at(NOW), NOW));
    assert!(is_expired(&at(NOW - 1), NOW));
    assert!(!is_expired(&at(NOW + 1), NOW));
}

#[test]
fn statement_31_renewal_interval_quarter_ttl_clamped() {
    assert_eq!(renew_interval_ms(LOCK_TTL_MS), 120_000);
    assert_eq!(renew_interval_ms(120_000), 30_000);
    assert_eq!(renew_interval_ms(2_000), 1_000);
    assert_eq!(renew_interval_ms(3_600_000), 120_000);
}

/// A lock is renewed only when its renewal is due (one interval after its last
/// renewal, `expiresAt` - TTL), not on every step that merely looks.
#[test]
fn renewal_due_one_interval_after_the_last_renewal_never_before() {
    let renewed_at = NOW;
    let expires = renewed_at + LOCK_TTL_MS;
    assert!(!renewal_due(expires, renewed_at, LOCK_TTL_MS));
    assert!(!renewal_due(expires, renewed_at + 119_999, LOCK_TTL_MS));
    assert!(renewal_due(expires, renewed_at + 120_000, LOCK_TTL_MS));
    // Past its expiry (a process asleep): due, and the renewal finds out whether it is lost.
    assert!(renewal_due(expires, expires + 1, LOCK_TTL_MS));
    // A short TTL: a quarter of it.
    assert!(renewal_due(renewed_at + 8_000, renewed_at + 2_000, 8_000));
    assert!(!renewal_due(renewed_at + 8_000, renewed_at + 1_999, 8_000));
}

#[test]
fn statement_35_owner_control_characters_flattened_at_read() {
    let info = parse_lock(br#"{"owner": "a\u001b[2Jb", "timestamp": 1, "expiresAt": 2}"#)
        .unwrap()
        .unwrap();
    assert_eq!(info.owner, "a [2Jb");
}

#[test]
fn statement_36_lock_without_owner_reads_empty_owner() {
    let info = parse_lock(br#"{"timestamp": 1, "expiresAt": 2}"#)
        .unwrap()
        .unwrap();
    assert_eq!(info.owner, "");
    let info = parse_lock(br#"{"owner": null}"#).unwrap().unwrap();
    assert_eq!(info.owner, "");
}

#[test]
fn lock_read_coerces_wrongly_typed_owner_and_operation() {
    let info = parse_lock(br#"{"owner": {"toString": null}, "operation": {"a": 1}}"#)
        .unwrap()
        .unwrap();
    assert_eq!(info.owner, "[object Object]");
    assert_eq!(info.operation.as_deref(), Some("[object Object]"));
    let info = parse_lock(br#"{"owner": 42, "operation": "dep\u2028loy "}"#)
        .unwrap()
        .unwrap();
    assert_eq!(info.owner, "42");
    assert_eq!(info.operation.as_deref(), Some("dep loy"));
    // Unknown fields pass through.
    let info = parse_lock(br#"{"owner": "o", "extra": [1]}"#)
        .unwrap()
        .unwrap();
    assert_eq!(info.raw["extra"], json!([1]));
}

#[test]
fn lock_read_non_object_is_no_lock_and_invalid_json_is_an_error() {
    for body in ["null", "42", "[]", "\"s\""] {
        assert!(parse_lock(body.as_bytes()).unwrap().is_none(), "{body}");
    }
    let err = parse_lock(b"{\"owner\": \"\xc3\xa9\n").unwrap_err();
    let LockParseError::InvalidJson(msg) = &err;
    assert!(msg.is_ascii() && !msg.contains('\n'), "{msg:?}");
    assert!(err.to_string().starts_with("lock.json is not valid JSON: "));
}

#[test]
fn expiry_phrase_s_and_l_7_forms() {
    let e = |v: Value| expiry_phrase(lock_expiry_ms(None, Some(&v), None), NOW);
    assert_eq!(e(json!(NOW + 252_000)), "expires in 4m12s");
    assert_eq!(e(json!(NOW + 600_500)), "expires in 10m0s");
    assert_eq!(e(json!(NOW - 120_000)), "expired 2m0s ago");
    assert_eq!(e(json!(NOW - 30_000)), "expired 30s ago");
    assert_eq!(e(json!(NOW)), "expired 0s ago");
    assert_eq!(e(json!(NOW + 999)), "expires in 0s");
    assert_eq!(e(json!(NOW + 7_500_000)), "expires in 125m0s");
    assert_eq!(e(json!(NOW as f64 + 1500.5)), "expires in 1s");
    for v in [
        json!("soon"),
        json!({}),
        json!("1767225600000"),
        Value::Null,
    ] {
        assert_eq!(e(v), "expires at an unknown time");
    }
    assert_eq!(
        expiry_phrase(lock_expiry_ms(None, None, None), NOW),
        "expires at an unknown time"
    );
    let huge = e(json!(1e300));
    assert!(
        !huge.contains("NaN") && huge.starts_with("expires in "),
        "{huge}"
    );
}

#[test]
fn duration_format_whole_seconds_minutes_unbounded() {
    assert_eq!(format_duration_ms(59_999), "59s");
    assert_eq!(format_duration_ms(60_000), "1m0s");
    assert_eq!(format_duration_ms(252_000), "4m12s");
    assert_eq!(format_duration_ms(7_500_000), "125m0s");
    assert_eq!(format_duration_ms(0), "0s");
}

// docs/state-and-lock.md, "Lock time is S3's" (statement 46): lock time is S3's. `W` is when S3 wrote the
// lock object (its LastModified); `now` is S3's clock.

const W: i64 = 1_767_225_600_000;
const TWO_HOURS: i64 = 7_200_000;

/// A lock written by S3 at `W` whose body says `timestamp` and `expiresAt`.
fn written(timestamp: Option<i64>, expires_at: i64) -> cdkd_core::lock::LockInfo {
    let body = match timestamp {
        Some(t) => {
            json!({"owner": "someone@otherhost:1234", "timestamp": t, "expiresAt": expires_at, "operation": "deploy"})
        }
        None => json!({"owner": "someone@otherhost:1234", "expiresAt": expires_at}),
    };
    parse_lock(body.to_string().as_bytes())
        .unwrap()
        .unwrap()
        .written_at(Some(W))
}

#[test]
fn lock_time_is_s3s_a_fresh_lock_is_live_for_its_whole_ttl_whatever_its_writers_clock() {
    for writer_off in [0, -TWO_HOURS, TWO_HOURS] {
        let t = W + writer_off;
        let lock = written(Some(t), t + LOCK_TTL_MS);
        assert_eq!(
            lock.expiry_ms(),
            Some((W + LOCK_TTL_MS) as f64),
            "{writer_off}"
        );
        assert!(!is_expired(&lock, W + 1_000), "{writer_off}: a second old");
        assert!(!is_expired(&lock, W + LOCK_TTL_MS - 1), "{writer_off}");
        assert!(is_expired(&lock, W + LOCK_TTL_MS), "{writer_off}");
        assert_eq!(
            expiry_phrase(lock.expiry_ms(), W + 1_000),
            "expires in 29m59s",
            "{writer_off}"
        );
    }
}

#[test]
fn lock_time_is_s3s_a_writer_two_hours_behind_is_not_born_expired() {
    let t = W - TWO_HOURS;
    let lock = written(Some(t), t + LOCK_TTL_MS);
    // cdkd's rule on a right clock calls it expired 90 minutes ago...
    let body_only = lock.clone().written_at(None);
    assert!(is_expired(&body_only, W + 1_000));
    // ...judged from S3's write it has 30 minutes to live.
    assert!(!is_expired(&lock, W + 1_000));
}

#[test]
fn lock_time_is_s3s_a_writer_two_hours_ahead_does_not_hold_the_lock_two_hours_longer() {
    let t = W + TWO_HOURS;
    let lock = written(Some(t), t + LOCK_TTL_MS);
    assert!(is_expired(&lock, W + LOCK_TTL_MS));
}

#[test]
fn lock_time_is_s3s_a_renewed_lock_lives_one_ttl_from_its_last_write() {
    // Taken three hours ago (timestamp kept), renewed at W: expiresAt = W + TTL.
    let lock = written(Some(W - 3 * 3_600_000), W + LOCK_TTL_MS);
    assert_eq!(lock.expiry_ms(), Some((W + LOCK_TTL_MS) as f64));
    // The same renewal by a writer two hours behind: still one TTL from W.
    let lock = written(
        Some(W - TWO_HOURS - 3 * 3_600_000),
        W - TWO_HOURS + LOCK_TTL_MS,
    );
    assert_eq!(lock.expiry_ms(), Some((W + LOCK_TTL_MS) as f64));
}

#[test]
fn lock_time_is_s3s_no_lifetime_left_is_expired_when_read() {
    for (t, e) in [(W - 60_000, W - 60_000), (W, W - 1_000), (1, 0)] {
        let lock = written(Some(t), e);
        assert_eq!(lock.expiry_ms(), Some(W as f64), "{t} {e}");
        assert!(is_expired(&lock, W), "{t} {e}");
    }
}

#[test]
fn lock_time_is_s3s_without_timestamp_the_writers_clock_is_taken_as_s3s() {
    assert_eq!(
        written(None, W + 600_000).expiry_ms(),
        Some((W + 600_000) as f64)
    );
    assert_eq!(
        written(None, W + 10 * LOCK_TTL_MS).expiry_ms(),
        Some((W + LOCK_TTL_MS) as f64)
    );
    assert_eq!(written(None, W - 1).expiry_ms(), Some(W as f64));
}

#[test]
fn lock_time_is_s3s_non_finite_expires_at_is_expired_and_no_object_is_cdkds_rule() {
    let info = parse_lock(br#"{"owner":"a","timestamp":1,"expiresAt":"soon"}"#)
        .unwrap()
        .unwrap()
        .written_at(Some(W));
    assert_eq!(info.expiry_ms(), None);
    assert!(is_expired(&info, W));
    // Without LastModified: expiresAt itself.
    assert_eq!(
        lock_expiry_ms(Some(&json!(W)), Some(&json!(W + 5)), None),
        Some((W + 5) as f64)
    );
}

// Statement 50: a takeover says EXPIRED only of an expired lock.
#[test]
fn takeover_warning_says_expired_only_for_an_expired_lock() {
    use cdkd_core::lock::{same_run, takeover_of};
    use cdkd_core::view::contention::takeover_warning;
    let takeover_warning = |expired: bool, at: &str, previous: &str, new: &str, expiry: &str| {
        takeover_warning(takeover_of(expired, previous, new), at, previous, expiry)
    };
    let run = "cdkd-flow:export-App-1@laptop:41";
    let resume = "cdkd-flow:export-App-1@laptop:97";
    let own = takeover_warning(false, "App (us-east-1)", run, resume, "expires in 29m55s");
    assert_eq!(
        own,
        "Took over this run's own lock for stack: App (us-east-1), owner: cdkd-flow:export-App-1@laptop:41, expires in 29m55s"
    );
    assert!(!own.contains("EXPIRED"));
    let ended = takeover_warning(
        false,
        "App (us-east-1)",
        "cdkd-flow:export-App-0@laptop:3",
        resume,
        "expires in 1m0s",
    );
    assert!(ended.starts_with("Took over the lock of an ended run for stack: App (us-east-1)"));
    let expired = takeover_warning(
        true,
        "App (us-east-1)",
        "dead@host:1",
        resume,
        "expired 1m0s ago",
    );
    assert_eq!(
        expired,
        "Took over an EXPIRED lock for stack: App (us-east-1), owner: dead@host:1, expired 1m0s ago"
    );
    assert!(same_run("cdkd-flow:r1", "cdkd-flow:r1@h:1"));
    assert!(same_run("bob@h:1", "bob@h:1"));
    assert!(!same_run("cdkd-flow:r1", "cdkd-flow:r2"));
    assert!(!same_run("bob@h:1", "bob@h:2"));
}
