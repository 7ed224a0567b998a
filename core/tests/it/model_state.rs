//! state.json reader and writer: docs/state-and-lock.md, "state.json" and "Reading a record" and "Writing a record" and testable statements
//! 15–18, 21–23; round trip for every schema version; malformed-record corpus; proptests.

use cdkd_core::json::{parse_json, stringify, stringify_pretty};
use cdkd_core::state::{
    parse_state, serialize_for_write, ParentLink, ResourcesShape, StateError, StateRecord,
    CURRENT_VERSION, SUPPORTED_VERSIONS,
};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

const NOW: i64 = 1_767_225_600_000;
const FIXTURE: &str = include_str!("fixtures/OracleStack.state.json");

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

fn write_and_reparse(bytes: &[u8], stack: &str, region: &str) -> (String, StateRecord) {
    let rec = parse_state(stack, Some(region), bytes).unwrap();
    let written = serialize_for_write(&rec, stack, region, NOW);
    let again = parse_state(stack, Some(region), written.as_bytes()).unwrap();
    (written, again)
}

// ---------- realistic records of every schema version ----------

fn bucket_entry() -> Value {
    json!({
        "physicalId": "app-bucket-1a2b3c",
        "resourceType": "AWS::S3::Bucket",
        "properties": {"BucketName": "app-bucket-1a2b3c", "Tags": [{"Key": "env", "Value": "prod"}]},
        "attributes": {"Arn": "arn:aws:s3:::app-bucket-1a2b3c"},
        "dependencies": []
    })
}

/// A record as cdkd of schema `v` wrote it: each version adds its fields.
fn record_of_version(v: u64) -> Value {
    let mut r = Map::new();
    r.insert("version".into(), json!(v));
    r.insert(
        "stackName".into(),
        json!(if v >= 6 { "Root~Child" } else { "App" }),
    );
    if v >= 2 {
        r.insert("region".into(), json!("eu-west-1"));
    }
    let mut bucket = obj(bucket_entry());
    if v >= 3 {
        bucket.insert(
            "observedProperties".into(),
            json!({"BucketName": "app-bucket-1a2b3c", "Tags": []}),
        );
    }
    if v >= 5 {
        bucket.insert("deletionPolicy".into(), json!("Retain"));
        bucket.insert("updateReplacePolicy".into(), json!("Retain"));
    }
    if v >= 7 {
        bucket.insert("provisionedBy".into(), json!("sdk"));
    }
    let mut queue = json!({
        "physicalId": "https://sqs.eu-west-1.amazonaws.com/111122223333/q",
        "resourceType": "AWS::SQS::Queue",
        "properties": {"VisibilityTimeout": 30, "Ratio": 0.5, "Big": 1e21},
        "attributes": {"Arn": "arn:aws:sqs:eu-west-1:111122223333:q"},
        "dependencies": ["Bucket"]
    });
    if v >= 7 {
        queue["provisionedBy"] = json!("cc-api");
    }
    if v >= 10 {
        queue["observedBaselineRefused"] = json!(true);
    }
    r.insert(
        "resources".into(),
        json!({"Bucket": Value::Object(bucket), "Queue": queue}),
    );
    r.insert(
        "outputs".into(),
        json!({"BucketName": "app-bucket-1a2b3c", "NameServers": ["ns-1", "ns-2"], "10": 1, "2": {"a": null}}),
    );
    if v >= 4 {
        r.insert(
            "imports".into(),
            json!([{"sourceStack": "Shared", "sourceRegion": "eu-west-1", "exportName": "VpcId"}]),
        );
    }
    if v >= 6 {
        r.insert("parentStack".into(), json!("Root"));
        r.insert("parentLogicalId".into(), json!("Child"));
        r.insert("parentRegion".into(), json!("eu-west-1"));
    }
    if v >= 8 {
        r.insert(
            "outputReads".into(),
            json!([{"sourceStack": "Other", "sourceRegion": "us-east-1", "outputName": "Url"}]),
        );
    }
    if v >= 9 {
        r.insert("exportNames".into(), json!(["BucketName"]));
    }
    if v >= 10 {
        r.insert("skippedOutputs".into(), json!({"Url": "0123456789abcdef"}));
        r.insert(
            "orphans".into(),
            json!([{"logicalId": "Old", "orphanedAt": 1767225500000_i64, "state": bucket_entry()}]),
        );
    }
    r.insert("lastModified".into(), json!(1_767_225_000_000_i64));
    Value::Object(r)
}

#[test]
fn round_trip_every_schema_version_1_to_10() {
    for v in SUPPORTED_VERSIONS {
        let original = record_of_version(v);
        let bytes = stringify_pretty(&original).unwrap();
        let stack = original["stackName"].as_str().unwrap().to_string();
        let (written, again) = write_and_reparse(bytes.as_bytes(), &stack, "eu-west-1");
        // Forced fields.
        assert_eq!(again.version(), Some(CURRENT_VERSION), "v{v}");
        assert_eq!(again.body["stackName"], json!(stack), "v{v}");
        assert_eq!(again.body["region"], json!("eu-west-1"), "v{v}");
        assert_eq!(again.last_modified(), Some(NOW as f64), "v{v}");
        // Every other field is preserved with its value.
        for (k, val) in original.as_object().unwrap() {
            if !["version", "stackName", "region", "lastModified"].contains(&k.as_str()) {
                assert_eq!(again.body.get(k), Some(val), "v{v} field {k}");
            }
        }
        // Writing what we wrote is byte-stable.
        let rewritten = serialize_for_write(&again, &stack, "eu-west-1", NOW);
        assert_eq!(rewritten, written, "v{v}");
        // Version-specific readings.
        if v >= 6 {
            assert_eq!(
                again.parent_link(),
                Some(ParentLink {
                    stack: "Root".into(),
                    logical_id: Some("Child".into()),
                    region: Some("eu-west-1".into())
                })
            );
        } else {
            assert_eq!(again.parent_link(), None);
        }
        assert_eq!(again.export_names().is_some(), v >= 9, "v{v}");
        assert_eq!(again.orphans().is_some(), v >= 10, "v{v}");
        assert!(matches!(again.resources(), ResourcesShape::Map(m) if m.len() == 2));
        assert!(again.check_writable(&stack, "eu-west-1").is_ok());
    }
}

#[test]
fn round_trip_v1_legacy_record_without_region_gains_key_region_appended() {
    let bytes = stringify_pretty(&record_of_version(1)).unwrap();
    let rec = parse_state("App", None, bytes.as_bytes()).unwrap();
    assert_eq!(rec.region(), None);
    assert!(rec.is_region_less());
    let written = serialize_for_write(&rec, "App", "us-east-1", NOW);
    let v: Value = parse_json(written.as_bytes()).unwrap();
    assert_eq!(
        keys(&v),
        [
            "version",
            "stackName",
            "resources",
            "outputs",
            "lastModified",
            "region"
        ]
    );
}

#[test]
fn fixture_written_by_cdkd_rewrites_byte_identically_apart_from_version() {
    let rec = parse_state("OracleStack", Some("us-east-1"), FIXTURE.as_bytes()).unwrap();
    assert_eq!(rec.version(), Some(8));
    assert!(rec.divergent_body_region.is_none());
    let last = rec.last_modified().unwrap() as i64;
    let written = serialize_for_write(&rec, "OracleStack", "us-east-1", last);
    let expected = FIXTURE.replacen("\"version\": 8,", "\"version\": 10,", 1);
    assert_eq!(written, expected);
}

// ---------- docs/state-and-lock.md, "Checks" statements ----------

#[test]
fn statement_15_version_11_refused_with_upgrade_message() {
    let err = parse_state(
        "App",
        Some("us-east-1"),
        br#"{"version": 11, "resources": {}}"#,
    )
    .unwrap_err();
    assert!(matches!(err, StateError::UnsupportedVersion { .. }));
    let msg = err.to_string();
    assert!(msg.contains("Unsupported state schema version 11"), "{msg}");
    assert!(msg.contains("Upgrade cdkd"), "{msg}");
    assert!(msg.contains("for stack 'App'"), "{msg}");
    assert!(msg.contains("1, 2, 3, 4, 5, 6, 7, 8, 9, 10"), "{msg}");
    assert!(!msg.contains('\n'));
}

#[test]
fn statement_16_version_string_refused_float_accepted_absent_accepted() {
    let err = parse_state(
        "App",
        Some("us-east-1"),
        br#"{"version": "8", "resources": {}}"#,
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains(r#"Unsupported state schema version "8""#),
        "{err}"
    );
    let rec = parse_state(
        "App",
        Some("us-east-1"),
        br#"{"version": 8.0, "resources": {}}"#,
    )
    .unwrap();
    assert_eq!(rec.version(), Some(8));
    let rec = parse_state("App", Some("us-east-1"), br#"{"resources": {}}"#).unwrap();
    assert_eq!(rec.version(), None);
    assert_eq!(rec.version_value(), None);
}

#[test]
fn reader_rule_version_refuses_null_zero_eleven_fraction_and_other_kinds() {
    for bad in [
        "null", "0", "11", "2.5", "-1", "true", "[8]", "{}", "99", "\"7\"", "1e3",
    ] {
        let body = format!(r#"{{"version": {bad}, "resources": {{}}}}"#);
        let err = parse_state("App", Some("us-east-1"), body.as_bytes()).unwrap_err();
        assert!(
            matches!(err, StateError::UnsupportedVersion { .. }),
            "{bad}: {err}"
        );
    }
    for good in ["1", "10", "1.0", "1e1", "7"] {
        let body = format!(r#"{{"version": {good}, "resources": {{}}}}"#);
        assert!(
            parse_state("App", Some("us-east-1"), body.as_bytes()).is_ok(),
            "{good}"
        );
    }
}

#[test]
fn reader_rule_version_refusal_flattens_attacker_values() {
    let body = br#"{"version": "x\n\u001b[2Jy"}"#;
    let msg = parse_state("A\nB", None, body).unwrap_err().to_string();
    assert!(!msg.contains('\n') && !msg.contains('\u{1b}'), "{msg:?}");
    assert!(msg.contains("for stack 'A B'"), "{msg}");
}

#[test]
fn statement_17_unknown_field_kept_with_value_and_position() {
    let body = br#"{ "version": 10, "stackName": "X", "region": "us-east-1", "resources": {}, "outputs": {}, "futureField": [1], "lastModified": 1 }"#;
    let (written, again) = write_and_reparse(body, "X", "us-east-1");
    assert_eq!(again.body["futureField"], json!([1]));
    assert_eq!(
        keys(&Value::Object(again.body)),
        [
            "version",
            "stackName",
            "region",
            "resources",
            "outputs",
            "futureField",
            "lastModified"
        ]
    );
    assert!(
        written.contains("\"futureField\": [\n    1\n  ],"),
        "{written}"
    );
}

#[test]
fn statement_18_save_stamps_key_stack_and_version_10() {
    let body = br#"{"version": 3, "stackName": "Y", "region": "us-east-1", "resources": {}}"#;
    let rec = parse_state("App", Some("us-east-1"), body).unwrap();
    let written = serialize_for_write(&rec, "App", "us-east-1", NOW);
    assert!(written.contains("\"stackName\": \"App\""), "{written}");
    assert!(written.contains("\"version\": 10"), "{written}");
    assert!(!written.contains("\"Y\""));
}

#[test]
fn statement_21_saved_body_two_space_indent_no_trailing_newline() {
    let rec = parse_state("App", Some("us-east-1"), br#"{"resources":{"R":{"a":[]}}}"#).unwrap();
    let written = serialize_for_write(&rec, "App", "us-east-1", NOW);
    assert!(written.ends_with('}'));
    assert!(!written.ends_with('\n'));
    assert_eq!(
        written,
        format!(
            "{{\n  \"resources\": {{\n    \"R\": {{\n      \"a\": []\n    }}\n  }},\n  \"lastModified\": {NOW},\n  \"version\": 10,\n  \"stackName\": \"App\",\n  \"region\": \"us-east-1\"\n}}"
        )
    );
}

#[test]
fn statement_22_outputs_serialised_in_js_key_order() {
    let rec = parse_state(
        "App",
        Some("us-east-1"),
        br#"{"outputs": {"b": 1, "10": 2, "2": 3}}"#,
    )
    .unwrap();
    let written = serialize_for_write(&rec, "App", "us-east-1", NOW);
    let p2 = written.find("\"2\"").unwrap();
    let p10 = written.find("\"10\"").unwrap();
    let pb = written.find("\"b\"").unwrap();
    assert!(p2 < p10 && p10 < pb, "{written}");
}

#[test]
fn statement_23_export_names_empty_kept_and_absent_never_gained() {
    let (w, again) = write_and_reparse(
        br#"{"resources": {}, "exportNames": []}"#,
        "App",
        "us-east-1",
    );
    assert_eq!(again.export_names(), Some(&json!([])));
    assert!(w.contains("\"exportNames\": []"));
    let (w, again) = write_and_reparse(br#"{"resources": {}}"#, "App", "us-east-1");
    assert_eq!(again.export_names(), None);
    assert!(!w.contains("exportNames"));
}

#[test]
fn region_authority_key_region_wins_and_divergent_body_region_kept_aside() {
    for (body_region, divergent) in [
        (r#""eu-west-1""#, Some(json!("eu-west-1"))),
        ("null", Some(Value::Null)),
        (r#""""#, Some(json!(""))),
        ("0", Some(json!(0))),
        (r#""us-east-1""#, None),
    ] {
        let body = format!(r#"{{"stackName": "App", "region": {body_region}, "resources": {{}}}}"#);
        let rec = parse_state("App", Some("us-east-1"), body.as_bytes()).unwrap();
        assert_eq!(rec.region(), Some(&json!("us-east-1")), "{body_region}");
        assert_eq!(rec.divergent_body_region, divergent, "{body_region}");
        // The region keeps its position.
        assert_eq!(
            keys(&Value::Object(rec.body.clone())),
            ["stackName", "region", "resources"]
        );
    }
    let rec = parse_state("App", Some("us-east-1"), br#"{"resources": {}}"#).unwrap();
    assert_eq!(rec.region(), None);
    assert_eq!(rec.divergent_body_region, None);
}

#[test]
fn reader_rule_invalid_json_refused_with_flattened_parser_message() {
    let err = parse_state("App\u{1b}", Some("us-east-1"), b"{\"a\": \n").unwrap_err();
    assert!(matches!(err, StateError::InvalidJson { .. }));
    let msg = err.to_string();
    assert!(
        msg.starts_with("State file for stack 'App' is not valid JSON: "),
        "{msg}"
    );
    assert!(!msg.contains('\n'));
}

#[test]
fn reader_rule_non_object_root_refused_naming_stack_and_region() {
    for (body, kind) in [
        ("[]", "an array"),
        ("42", "a number"),
        ("null", "null"),
        ("\"s\"", "a string"),
    ] {
        let err = parse_state("App", Some("us-east-1"), body.as_bytes()).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "State file for stack 'App' (us-east-1) is not a JSON object (its root is {kind})"
            )
        );
    }
    let err = parse_state("App", Some("\u{1b}"), b"[]").unwrap_err();
    assert!(err.to_string().contains("(<unrenderable>)"), "{err}");
}

#[test]
fn accessors_judge_fields_one_at_a_time() {
    let rec = parse_state(
        "App",
        Some("us-east-1"),
        br#"{"lastModified": "yesterday", "parentStack": ["Root"], "resources": null}"#,
    )
    .unwrap();
    assert_eq!(rec.last_modified(), None);
    assert_eq!(rec.parent_link(), None);
    assert_eq!(rec.resources(), ResourcesShape::Null);
    let rec = parse_state("A", None, br#"{"parentStack": "Root", "parentRegion": 5}"#).unwrap();
    assert_eq!(
        rec.parent_link(),
        None,
        "non-string parentRegion drops the link"
    );
    let rec = parse_state(
        "A",
        None,
        br#"{"parentStack": "Root", "parentLogicalId": 5}"#,
    )
    .unwrap();
    assert_eq!(
        rec.parent_link(),
        Some(ParentLink {
            stack: "Root".into(),
            logical_id: None,
            region: None
        })
    );
    assert_eq!(rec.resources(), ResourcesShape::Absent);
}

// ---------- malformed-record corpus ----------

/// (name, body, Some(kind of refusal) or None when it reads)
fn corpus() -> Vec<(&'static str, Vec<u8>, Option<&'static str>)> {
    let deep = format!(
        "{{\"resources\": {{\"R\": {}1{}}}}}",
        "[".repeat(1050),
        "]".repeat(1050)
    );
    let too_deep = format!(
        "{{\"resources\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    vec![
        ("resources a list", br#"{"version":10,"resources":[{"physicalId":"p","resourceType":"T","properties":{}}]}"#.to_vec(), None),
        ("resources null", br#"{"version":10,"resources":null}"#.to_vec(), None),
        ("resources a string", br#"{"version":10,"resources":"abcdef"}"#.to_vec(), None),
        ("resources absent", br#"{"version":10}"#.to_vec(), None),
        ("entry null", br#"{"resources":{"R":null}}"#.to_vec(), None),
        ("entry number", br#"{"resources":{"R":42,"S":1.5}}"#.to_vec(), None),
        ("entry without type", br#"{"resources":{"R":{"physicalId":"p"}}}"#.to_vec(), None),
        ("outputs a string", br#"{"resources":{},"outputs":"abcdef"}"#.to_vec(), None),
        ("outputs null", br#"{"resources":{},"outputs":null}"#.to_vec(), None),
        ("missing region", br#"{"version":2,"stackName":"App","resources":{}}"#.to_vec(), None),
        ("region a number", br#"{"version":2,"region":5,"resources":{}}"#.to_vec(), None),
        ("duplicate keys", br#"{"resources":{},"resources":{"R":{}},"version":3,"version":4}"#.to_vec(), None),
        ("proto key", br#"{"__proto__":{"x":1},"resources":{"__proto__":{}}}"#.to_vec(), None),
        ("deep nesting", deep.into_bytes(), None),
        ("huge number", br#"{"resources":{},"n":123456789012345678901234567890}"#.to_vec(), None),
        ("version string 7", br#"{"version":"7","resources":{}}"#.to_vec(), Some("version")),
        ("version 99", br#"{"version":99,"resources":{}}"#.to_vec(), Some("version")),
        ("version null", br#"{"version":null,"resources":{}}"#.to_vec(), Some("version")),
        ("non-object root", b"[1,2,3]".to_vec(), Some("root")),
        ("root null", b"null".to_vec(), Some("root")),
        ("lone surrogate", br#"{"resources":{"R":{"physicalId":"\ud800"}}}"#.to_vec(), Some("json")),
        ("too deep", too_deep.into_bytes(), Some("json")),
        ("truncated", br#"{"resources":{"#.to_vec(), Some("json")),
        ("empty", b"".to_vec(), Some("json")),
        ("binary", vec![0, 159, 146, 150, 255], Some("json")),
    ]
}

fn exercise(rec: &StateRecord) {
    let _ = (
        rec.version(),
        rec.stack_name(),
        rec.region(),
        rec.resources_value(),
    );
    let _ = (rec.outputs_value(), rec.last_modified(), rec.parent_link());
    let _ = (
        rec.skipped_outputs(),
        rec.export_names(),
        rec.imports(),
        rec.orphans(),
    );
    let _ = rec.resources();
    let _ = rec.check_writable("App", "us-east-1");
    let written = serialize_for_write(rec, "App", "us-east-1", NOW);
    // What we write is read back, and keeps every field.
    let again = parse_state("App", Some("us-east-1"), written.as_bytes()).unwrap();
    for k in rec.body.keys() {
        assert!(again.body.contains_key(k));
    }
}

#[test]
fn malformed_record_corpus_each_reads_or_is_refused_by_name_none_panics() {
    for (name, body, refusal) in corpus() {
        let got = parse_state("App", Some("us-east-1"), &body);
        match (refusal, &got) {
            (None, Ok(rec)) => exercise(rec),
            (Some("version"), Err(e @ StateError::UnsupportedVersion { .. })) => {
                assert!(
                    e.to_string().contains("Unsupported state schema version"),
                    "{name}"
                )
            }
            (Some("root"), Err(e @ StateError::NotAnObject { .. })) => {
                assert!(e.to_string().contains("'App' (us-east-1)"), "{name}")
            }
            (Some("json"), Err(e @ StateError::InvalidJson { .. })) => {
                assert!(e.to_string().contains("'App' is not valid JSON"), "{name}")
            }
            _ => panic!("{name}: unexpected {got:?}"),
        }
        if let Err(e) = &got {
            assert!(!e.to_string().contains('\n'), "{name}");
        }
    }
}

#[test]
fn malformed_record_corpus_writers_refuse_bad_shapes_by_name() {
    let cases = [
        (r#"{"resources":[]}"#, "'resources' is an array"),
        (r#"{"resources":null}"#, "'resources' is null"),
        (r#"{"resources":"abc"}"#, "'resources' is a string"),
        (r#"{}"#, "'resources' is absent"),
        (r#"{"resources":{"R":null}}"#, "resource 'R' is null"),
        (r#"{"resources":{"R\n":7}}"#, "resource 'R' is a number"),
        (r#"{"resources":{},"outputs":"x"}"#, "'outputs' is a string"),
    ];
    for (body, want) in cases {
        let rec = parse_state("App", Some("us-east-1"), body.as_bytes()).unwrap();
        let msg = rec
            .check_writable("App", "us-east-1")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("stack 'App' (us-east-1)"), "{msg}");
        assert!(msg.contains(want), "{body}: {msg}");
    }
}

#[test]
fn lone_surrogate_refused_by_name() {
    let err = parse_state("App", Some("us-east-1"), br#"{"a":"\udfff"}"#).unwrap_err();
    assert!(err.to_string().contains("lone UTF-16 surrogate"), "{err}");
}

// ---------- proptests ----------

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-z0-9]{0,4}|version|region|resources", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn parse_state_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = parse_state("App", Some("us-east-1"), &bytes);
        let _ = parse_state("App", None, &bytes);
    }

    #[test]
    fn parse_state_never_panics_on_arbitrary_json_and_round_trips(v in arb_json(), version in prop_oneof![Just(None), (0u64..13).prop_map(Some)]) {
        let mut body = match v { Value::Object(m) => m, other => { let mut m = Map::new(); m.insert("resources".into(), other); m } };
        if let Some(n) = version { body.insert("version".into(), json!(n)); }
        let bytes = stringify_pretty(&Value::Object(body.clone())).unwrap();
        match parse_state("App", Some("us-east-1"), bytes.as_bytes()) {
            Ok(rec) => {
                let written = serialize_for_write(&rec, "App", "us-east-1", NOW);
                let again = parse_state("App", Some("us-east-1"), written.as_bytes()).unwrap();
                for (k, val) in &body {
                    if !["version", "stackName", "region", "lastModified"].contains(&k.as_str()) {
                        // Numbers are compared as JS sees them (doubles).
                        prop_assert_eq!(again.body.get(k).and_then(stringify), stringify(val));
                    }
                }
                prop_assert_eq!(serialize_for_write(&again, "App", "us-east-1", NOW), written);
            }
            Err(e) => {
                let refused_version = matches!(e, StateError::UnsupportedVersion { .. });
                prop_assert!(refused_version, "unexpected refusal: {}", e);
            }
        }
    }
}
