//! Snapshot corpus built from the rules of docs/state-views.md ("Text rules", "state show <stack>", "state resources <stack>") and its
//! checks (docs/state-views.md, "Checks"): every record is rendered through every view
//! (`state show` human and `--json`, `state resources` in its three modes, its
//! `state list --long` row) and the whole output pinned with insta. Every human rendering
//! is also checked for raw control characters, and every `--json` output is parsed back.

use crate::views_common;

use cdkd_core::json::parse_json;
use cdkd_core::view::state::list::{
    list_long_json, list_long_text, LockRead, LongInput, RecordRead, RefView,
};
use cdkd_core::view::state::resources::{render_resources, ResourcesMode};
use cdkd_core::view::state::show::{show_json, show_text, LockView, ShowNode};
use cdkd_core::view::Rendered;
use serde_json::{Map, Value};
use views_common::{has_forbidden_char, NOW};

struct Case {
    name: &'static str,
    stack: &'static str,
    region: &'static str,
    record: String,
    lock: Option<&'static str>,
}

fn case(name: &'static str, record: &str) -> Case {
    Case {
        name,
        stack: "App",
        region: "us-east-1",
        record: record.to_string(),
        lock: None,
    }
}

fn with_lock(mut c: Case, lock: &'static str) -> Case {
    c.lock = Some(lock);
    c
}

fn named(mut c: Case, stack: &'static str, region: &'static str) -> Case {
    c.stack = stack;
    c.region = region;
    c
}

const ESC_FIELDS: &str = r#"{"version":10,"stackName":"App\u001b[31m","region":"us-east-1","lastModified":1777458225000,
 "outputs":{"Out\u001b[2J":"v\u001b]0;title\u0007al"},
 "skippedOutputs":{"Sk\u001bip":"\u001b[31mabcdef0123456789"},
 "parentStack":"P\u001b[1m","parentRegion":"us-east-1\u001b","parentLogicalId":"C\u001b",
 "resources":{"Log\u001b[31mical":{"resourceType":"AWS::S3::\u001bBucket","physicalId":"phy\u001b[0m","provisionedBy":"sdk\u001b",
   "dependencies":["D\u001b[1m"],"attributes":{"A\u001b":"v\u001b"},"properties":{"P\u001b":{"k":"x\u001by"}}}}}"#;

fn corpus() -> Vec<Case> {
    let oracle = include_str!("fixtures/OracleStack.state.json").to_string();
    let d = cdkd_core::js::MAX_STRINGIFY_DEPTH + 20;
    let deep = format!("{}{}", "[".repeat(d), "]".repeat(d));
    let many: String = (0..40)
        .map(|i| format!(r#""R{i:02}":{{"resourceType":"AWS::SQS::Queue","physicalId":"q{i}"}}"#))
        .collect::<Vec<_>>()
        .join(",");
    let long_name = "N".repeat(300);
    vec![
        // Well-formed records, as cdkd writes them.
        named(case("oracle_stack", &oracle), "OracleStack", "us-east-1"),
        case("minimal_v10", r#"{"version":10,"stackName":"App","region":"us-east-1","resources":{},"outputs":{},"lastModified":1777458225000}"#),
        case("full_v10", r#"{"version":10,"stackName":"App","region":"us-east-1","resources":{"Queue":{"physicalId":"https://sqs/q","resourceType":"AWS::SQS::Queue","properties":{"VisibilityTimeout":30},"attributes":{"Arn":"arn:aws:sqs:us-east-1:1:q","QueueName":"q"},"dependencies":["Topic"],"provisionedBy":"cc-api"},"Topic":{"physicalId":"arn:t","resourceType":"AWS::SNS::Topic","properties":{},"attributes":{},"dependencies":[],"provisionedBy":"sdk"}},"outputs":{"QueueUrl":"https://sqs/q","NameServers":["ns1","ns2"],"Obj":{"a":1}},"exportNames":["QueueUrl"],"lastModified":1777458225000}"#),
        case("legacy_v1_with_region", r#"{"version":1,"stackName":"App","region":"us-east-1","resources":{"B":{"physicalId":"b","resourceType":"AWS::S3::Bucket","properties":{}}},"lastModified":1600000000000}"#),
        case("nested_child_v6", r#"{"version":6,"stackName":"Root~Child","region":"us-east-1","parentStack":"Root","parentLogicalId":"Child","parentRegion":"us-east-1","resources":{},"lastModified":1777458225000}"#),
        case("parent_with_nested_stack_row", r#"{"version":10,"stackName":"Root","region":"us-east-1","resources":{"Child":{"physicalId":"arn:aws:cloudformation:us-east-1:1:stack/Root-Child/x","resourceType":"AWS::CloudFormation::Stack","properties":{"TemplateURL":"s3://x"}}}}"#),
        case("skipped_outputs_cut_and_exact", r#"{"version":10,"resources":{},"outputs":{"Kept":"v"},"skippedOutputs":{"Url":"0123456789abcdef","Exact":"0123456789ab","short":"ab"}}"#),
        case("skipped_outputs_wrong_types", r#"{"version":10,"resources":{},"skippedOutputs":{"N":12345678901234567890,"Null":null,"Obj":{"digest":"abc"},"Arr":[1,2],"T":true}}"#),
        case("skipped_outputs_unserializable", &format!(r#"{{"version":10,"resources":{{}},"skippedOutputs":{{"Deep":{deep}}}}}"#)),
        case("skipped_outputs_surrogate_pair_at_cut", r#"{"resources":{},"skippedOutputs":{"E":"01234567890😀xyz"}}"#),
        case("observed_baseline_refused", r#"{"version":10,"resources":{"B":{"resourceType":"AWS::S3::Bucket","physicalId":"b","observedBaselineRefused":true},"C":{"resourceType":"AWS::S3::Bucket","physicalId":"c","observedBaselineRefused":false}}}"#),
        case("locale_order_mixed_case", r#"{"resources":{"b":{},"A":{},"a":{},"B":{},"_x":{},"1a":{},"Ab":{},"ab":{}}}"#),
        case("integer_like_keys_order", r#"{"resources":{"R":{"attributes":{"b":1,"10":2,"2":3},"properties":{"z":0,"0":1}}},"outputs":{"b":1,"10":2,"2":3}}"#),
        case("many_resources", &format!(r#"{{"version":10,"resources":{{{many}}}}}"#)),
        // Control, bidi, zero-width and separator characters in every rendered field.
        case("escape_in_every_field", ESC_FIELDS),
        case("newline_in_every_field", &ESC_FIELDS.replace("\\u001b", "\\n")),
        case("c1_csi_in_every_field", &ESC_FIELDS.replace("\\u001b", "\\u009b")),
        case("del_in_every_field", &ESC_FIELDS.replace("\\u001b", "\\u007f")),
        case("bidi_override_in_every_field", &ESC_FIELDS.replace("\\u001b", "\\u202e")),
        case("bidi_isolate_in_every_field", &ESC_FIELDS.replace("\\u001b", "\\u2066")),
        case("bidi_mark_in_every_field", &ESC_FIELDS.replace("\\u001b", "\\u200f")),
        case("zero_width_in_every_field", &ESC_FIELDS.replace("\\u001b", "\\u200b")),
        case("line_separator_in_every_field", &ESC_FIELDS.replace("\\u001b", "\\u2028")),
        case("paragraph_separator_in_every_field", &ESC_FIELDS.replace("\\u001b", "\\u2029")),
        case("bom_and_soft_hyphen_in_fields", &ESC_FIELDS.replace("\\u001b", "\\ufeff\\u00ad")),
        case("cr_tab_in_fields", &ESC_FIELDS.replace("\\u001b", "\\r\\t")),
        case("logical_id_spelled_like_a_header", r#"{"resources":{"Skipped outputs:":{"resourceType":"T"},"  Lock: unlocked":{"resourceType":"T"}}}"#),
        case("key_only_control_characters", r#"{"resources":{"\u001b\u0007":{"resourceType":"T"}},"outputs":{"\n":"x"}}"#),
        // Wrongly typed fields.
        case("physical_id_number", r#"{"resources":{"R":{"resourceType":"T","physicalId":42}}}"#),
        case("physical_id_object", r#"{"resources":{"R":{"resourceType":"T","physicalId":{"a":1}}}}"#),
        case("physical_id_null_and_string_null", r#"{"resources":{"R":{"resourceType":"T","physicalId":null},"S":{"resourceType":"T","physicalId":"null"}}}"#),
        case("resource_type_array", r#"{"resources":{"R":{"resourceType":["AWS::S3::Bucket"],"physicalId":"p"}}}"#),
        case("numbers_js_format", r#"{"resources":{"R":{"resourceType":"T","physicalId":1e21,"attributes":{"small":1e-7,"neg0":-0,"big":123456789012345678901234,"f":0.1}}}}"#),
        case("booleans_as_values", r#"{"resources":{"R":{"resourceType":true,"physicalId":false,"provisionedBy":true}}}"#),
        case("provisioned_by_null_and_absent", r#"{"resources":{"N":{"resourceType":"T","provisionedBy":null},"A":{"resourceType":"T"},"C":{"resourceType":"T","provisionedBy":"cc-api"}}}"#),
        case("dependencies_literal_none", r#"{"resources":{"R":{"resourceType":"T","dependencies":["(none)"]}}}"#),
        case("dependencies_null", r#"{"resources":{"R":{"resourceType":"T","dependencies":null}}}"#),
        case("dependencies_string_and_mixed", r#"{"resources":{"S":{"resourceType":"T","dependencies":"Solo"},"M":{"resourceType":"T","dependencies":["A",{"toString":null},7,null]}}}"#),
        case("stack_name_number", r#"{"stackName":42,"region":"us-east-1","resources":{}}"#),
        case("stack_name_object", r#"{"stackName":{"toString":null},"resources":{}}"#),
        case("version_absent", r#"{"stackName":"App","resources":{}}"#),
        case("last_modified_null", r#"{"resources":{},"lastModified":null}"#),
        case("last_modified_string_iso", r#"{"resources":{},"lastModified":"2026-04-29T10:23:45.123Z"}"#),
        case("last_modified_string_word", r#"{"resources":{},"lastModified":"yesterday"}"#),
        case("last_modified_out_of_range", r#"{"resources":{},"lastModified":1e300}"#),
        case("last_modified_true", r#"{"resources":{},"lastModified":true}"#),
        case("parent_fields_wrong_types", r#"{"resources":{},"parentStack":["Root"],"parentRegion":5,"parentLogicalId":null}"#),
        case("deep_property_unserializable", &format!(r#"{{"resources":{{"R":{{"resourceType":"T","properties":{{"Deep":{deep}}}}}}}}}"#)),
        // Null and non-object resource entries.
        case("null_resource_entry", r#"{"stackName":"App","resources":{"R":null}}"#),
        case("scalar_resource_entries", r#"{"resources":{"N":5,"S":"str","B":false,"A":[1,2]}}"#),
        // Malformed containers.
        case("resources_string", r#"{"resources":"abcdef"}"#),
        case("resources_list_of_resources", r#"{"resources":[{"physicalId":"p","resourceType":"T","properties":{}}]}"#),
        case("resources_number", r#"{"resources":5}"#),
        case("resources_boolean", r#"{"resources":true}"#),
        case("resources_null", r#"{"resources":null}"#),
        case("resources_absent", r#"{"stackName":"App"}"#),
        case("outputs_string", r#"{"resources":{},"outputs":"abcdef"}"#),
        case("outputs_list", r#"{"resources":{},"outputs":["a","b"]}"#),
        case("outputs_null", r#"{"resources":{},"outputs":null}"#),
        case("skipped_outputs_string", r#"{"resources":{},"skippedOutputs":"abc"}"#),
        case("skipped_outputs_empty", r#"{"resources":{},"skippedOutputs":{}}"#),
        case("attributes_string_properties_list", r#"{"resources":{"R":{"resourceType":"T","attributes":"x","properties":[1,2]},"S":{"resourceType":"T","attributes":7}}}"#),
        case("attributes_null_properties_null", r#"{"resources":{"R":{"resourceType":"T","attributes":null,"properties":null}}}"#),
        case("every_container_malformed", r#"{"resources":{"R":{"attributes":"a","properties":"p"}},"outputs":1,"skippedOutputs":[]}"#),
        // Names: long, spaced, bracketed, planted.
        named(case("stack_name_with_space_and_brackets", r#"{"resources":{}}"#), "ProdStack (us-east-1)", "us-east-1"),
        named(case("stack_name_nested_tilde", r#"{"resources":"x"}"#), "Root~Child~Deep", "eu-west-1"),
        named(case("stack_name_long", r#"{"resources":5}"#), Box::leak(long_name.into_boxed_str()), "us-east-1"),
        named(case("stack_name_shell_metachar", r#"{"resources":null}"#), "a'; rm -rf / #", "us-east-1"),
        named(case("stack_name_only_controls", r#"{"resources":[]}"#), "\u{1b}\u{7}", "\u{200b}"),
        // Locks of every shape.
        with_lock(case("lock_live_with_operation", r#"{"resources":{}}"#), r#"{"owner":"alice@ws:1","operation":"deploy","timestamp":1767225000000,"expiresAt":1767226200500}"#),
        with_lock(case("lock_expired", r#"{"resources":{}}"#), r#"{"owner":"bob@ws:2","timestamp":1767200000000,"expiresAt":1767225570000}"#),
        with_lock(case("lock_expires_at_object", r#"{"resources":{}}"#), r#"{"owner":"carol","expiresAt":{}}"#),
        with_lock(case("lock_expires_at_string", r#"{"resources":{}}"#), r#"{"owner":"carol","expiresAt":"soon"}"#),
        with_lock(case("lock_expires_at_numeric_string", r#"{"resources":{}}"#), r#"{"owner":"carol","expiresAt":"1767226200000"}"#),
        with_lock(case("lock_expires_at_absent", r#"{"resources":{}}"#), r#"{"owner":"carol"}"#),
        with_lock(case("lock_owner_object", r#"{"resources":{}}"#), r#"{"owner":{"toString":null},"operation":{"a":1},"expiresAt":1767226200000}"#),
        with_lock(case("lock_owner_controls", r#"{"resources":{}}"#), "{\"owner\":\"ev\\u001b[31mil\\nLock: unlocked\",\"operation\":\"\\u202edeploy\",\"expiresAt\":1767226200000}"),
        with_lock(case("lock_owner_absent_extra_fields", r#"{"resources":{}}"#), r#"{"expiresAt":1767232800000,"custom":{"x":[1]},"timestamp":"t"}"#),
        with_lock(case("lock_long_duration", r#"{"resources":{}}"#), r#"{"owner":"cdkd-flow:run-1","operation":"destroy","expiresAt":1767233100000}"#),
        // Records that cannot be read at all (list --long degrades the row).
        case("invalid_json", r#"{"resources": {"#),
        case("root_not_object", r#"[1,2,3]"#),
        case("root_null", "null"),
    ]
}

fn load(c: &Case) -> Result<Map<String, Value>, String> {
    match parse_json(c.record.as_bytes())? {
        Value::Object(m) => Ok(m),
        other => Err(format!(
            "root is {}",
            if other.is_null() {
                "null"
            } else {
                "not an object"
            }
        )),
    }
}

fn section(out: &mut String, title: &str, r: &Rendered) {
    out.push_str(&format!("===== {title} (stdout)\n{}", r.stdout));
    for w in &r.warnings {
        out.push_str(&format!("----- stderr: {w}\n"));
    }
}

fn check_human(name: &str, view: &str, r: &Rendered) {
    assert!(
        !has_forbidden_char(&r.stdout),
        "{name}: {view} stdout holds a control character"
    );
    for w in &r.warnings {
        assert!(
            !has_forbidden_char(w) && !w.contains('\n'),
            "{name}: {view} warning not one clean line"
        );
    }
}

fn check_json(name: &str, view: &str, r: &Rendered) -> Value {
    assert!(
        !has_forbidden_char(&r.stdout),
        "{name}: {view} holds a raw control character"
    );
    for c in ['\u{2028}', '\u{2029}', '\u{200b}', '\u{feff}', '\u{ad}'] {
        assert!(!r.stdout.contains(c), "{name}: {view} holds raw {c:?}");
    }
    parse_json(r.stdout.as_bytes()).unwrap_or_else(|e| panic!("{name}: {view} does not parse: {e}"))
}

#[test]
fn corpus_has_at_least_sixty_records() {
    assert!(corpus().len() >= 60, "{}", corpus().len());
}

#[test]
fn corpus_snapshots() {
    for c in corpus() {
        let mut out = String::new();
        let lock = c.lock.map(|l| {
            LockView::from_lock_bytes(l.as_bytes())
                .unwrap()
                .expect("lock object")
        });
        let r = RefView {
            stack: c.stack,
            region: Some(c.region),
        };
        let lock_read = if lock.is_some() {
            LockRead::Locked
        } else {
            LockRead::Unlocked
        };
        match load(&c) {
            Ok(record) => {
                let node = ShowNode {
                    stack: c.stack.to_string(),
                    region: c.region.to_string(),
                    record: record.clone(),
                    lock,
                    children: Vec::new(),
                };
                let show = show_text(&node, NOW);
                check_human(c.name, "show", &show);
                section(&mut out, "state show", &show);
                let json = show_json(&node);
                let v = check_json(c.name, "show --json", &json);
                assert!(
                    views_common::js_eq(&v["state"], &Value::Object(record.clone())),
                    "{}: show --json round trip",
                    c.name
                );
                section(&mut out, "state show --json", &json);
                for (mode, title) in [
                    (ResourcesMode::Plain, "state resources"),
                    (ResourcesMode::Long, "state resources --long"),
                    (ResourcesMode::Json, "state resources --json"),
                ] {
                    let res = render_resources(c.stack, c.region, &record, mode);
                    if mode == ResourcesMode::Json {
                        check_json(c.name, title, &res);
                    } else {
                        check_human(c.name, title, &res);
                    }
                    section(&mut out, title, &res);
                }
                let rows = [LongInput {
                    r,
                    record: RecordRead::Found(&record),
                    lock: lock_read,
                }];
                let long = list_long_text(&rows);
                check_human(c.name, "list --long", &long);
                section(&mut out, "state list --long", &long);
                let long_json = list_long_json(&rows);
                check_json(c.name, "list --long --json", &long_json);
                section(&mut out, "state list --long --json", &long_json);
            }
            Err(e) => {
                out.push_str(&format!(
                    "===== record refused at read: {}\n",
                    cdkd_core::text::flatten_str(&e)
                ));
                let rows = [LongInput {
                    r,
                    record: RecordRead::Failed,
                    lock: lock_read,
                }];
                let long = list_long_text(&rows);
                check_human(c.name, "list --long", &long);
                section(&mut out, "state list --long", &long);
            }
        }
        insta::assert_snapshot!(format!("corpus__{}", c.name), out);
    }
}
