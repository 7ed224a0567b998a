//! Property tests over parse + render: for arbitrary records (every field any JSON
//! value, strings full of control, bidi, zero-width and separator characters) no
//! renderer panics, no human view carries a byte below 0x20 other than `\n`, DEL, a C1
//! control or a bidi override/isolate/mark, every warning is one clean line, and every
//! `--json` output parses back to the stored values.

use crate::views_common;

use cdkd_core::json::parse_json;
use cdkd_core::view::state::list::{
    list_json, list_long_json, list_long_text, list_plain, LockRead, LongInput, RecordRead, RefView,
};
use cdkd_core::view::state::resources::{render_resources, ResourcesMode};
use cdkd_core::view::state::show::{
    show_json, show_nested_json, show_nested_text, show_text, ShowNode,
};
use cdkd_core::view::state::tree::{build_tree, tree_json, tree_text, TreeEntry};
use proptest::prelude::*;
use serde_json::{Map, Value};
use views_common::{has_forbidden_char, NOW};

fn nasty_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => proptest::char::range('a', 'e'),
        1 => Just(' '),
        1 => Just('~'),
        1 => Just('"'),
        1 => Just('\\'),
        2 => proptest::char::range('\u{0}', '\u{1f}'),
        1 => Just('\u{7f}'),
        1 => proptest::char::range('\u{80}', '\u{9f}'),
        1 => prop_oneof![Just('\u{200b}'), Just('\u{200c}'), Just('\u{200d}'), Just('\u{200e}'), Just('\u{200f}')],
        1 => proptest::char::range('\u{202a}', '\u{202e}'),
        1 => proptest::char::range('\u{2066}', '\u{2069}'),
        1 => prop_oneof![Just('\u{2028}'), Just('\u{2029}'), Just('\u{feff}'), Just('\u{ad}'), Just('\u{61c}')],
        1 => prop_oneof![Just('é'), Just('😀'), Just('\u{e0001}'), Just('…')],
    ]
}

fn nasty_string() -> impl Strategy<Value = String> {
    proptest::collection::vec(nasty_char(), 0..12).prop_map(|v| v.into_iter().collect())
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => nasty_string(),
        1 => (0u32..20).prop_map(|n| n.to_string()),
        1 => prop_oneof![Just("resourceType".to_string()), Just("physicalId".to_string()), Just("dependencies".to_string()), Just("attributes".to_string()), Just("properties".to_string()), Just("provisionedBy".to_string())],
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        nasty_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::vec((key(), inner), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn resource_entry() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => (
            prop_oneof![json_value(), Just(Value::String("AWS::CloudFormation::Stack".into()))],
            json_value(), json_value(), json_value(), json_value(), json_value(), any::<bool>()
        ).prop_map(|(t, p, d, a, pr, pb, refused)| {
            let mut m = Map::new();
            m.insert("resourceType".into(), t);
            m.insert("physicalId".into(), p);
            m.insert("dependencies".into(), d);
            m.insert("attributes".into(), a);
            m.insert("properties".into(), pr);
            m.insert("provisionedBy".into(), pb);
            if refused {
                m.insert("observedBaselineRefused".into(), Value::Bool(true));
            }
            Value::Object(m)
        }),
        1 => json_value(),
    ]
}

fn record() -> impl Strategy<Value = Map<String, Value>> {
    (
        prop_oneof![
            3 => proptest::collection::vec((key(), resource_entry()), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            1 => json_value(),
        ],
        json_value(),
        json_value(),
        json_value(),
        json_value(),
        json_value(),
        proptest::collection::vec((key(), json_value()), 0..3),
    )
        .prop_map(|(resources, outputs, skipped, name, lm, parent, extra)| {
            let mut m = Map::new();
            m.insert("stackName".into(), name);
            m.insert("resources".into(), resources);
            m.insert("outputs".into(), outputs);
            m.insert("skippedOutputs".into(), skipped);
            m.insert("lastModified".into(), lm);
            m.insert("parentStack".into(), parent.clone());
            m.insert("parentRegion".into(), parent);
            for (k, v) in extra {
                m.insert(k, v);
            }
            m
        })
}

fn clean_human(s: &str) -> bool {
    !has_forbidden_char(s)
}

fn clean_warnings(w: &[String]) -> bool {
    w.iter()
        .all(|l| !has_forbidden_char(l) && !l.contains('\n'))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn props_show_and_resources_never_panic_and_stay_clean(rec in record(), stack in nasty_string(), region in nasty_string(), child in record()) {
        // Through the real parser: serialise, parse back, render.
        let text = serde_json::to_string(&Value::Object(rec.clone())).unwrap();
        let parsed = match parse_json(text.as_bytes()).unwrap() { Value::Object(m) => m, _ => unreachable!() };
        let mut node = ShowNode { stack: stack.clone(), region: region.clone(), record: parsed.clone(), lock: None, children: Vec::new() };
        node.children.push(ShowNode { stack: format!("{stack}~C"), region: region.clone(), record: child, lock: None, children: Vec::new() });

        let t = show_text(&node, NOW);
        prop_assert!(clean_human(&t.stdout), "show: {:?}", t.stdout);
        prop_assert!(clean_warnings(&t.warnings));
        let n = show_nested_text(&node, NOW);
        prop_assert!(clean_human(&n.stdout));
        prop_assert!(clean_warnings(&n.warnings));

        let j = show_json(&node);
        prop_assert!(!has_forbidden_char(&j.stdout));
        let back = parse_json(j.stdout.as_bytes()).unwrap();
        prop_assert!(views_common::js_eq(&back["state"], &Value::Object(parsed.clone())));
        let nj = show_nested_json(&node);
        let back = parse_json(nj.stdout.as_bytes()).unwrap();
        prop_assert!(views_common::js_eq(&back["children"][0]["state"], &Value::Object(node.children[0].record.clone())));
        prop_assert!(clean_warnings(&nj.warnings));

        for mode in [ResourcesMode::Plain, ResourcesMode::Long, ResourcesMode::Json] {
            let r = render_resources(&stack, &region, &parsed, mode);
            prop_assert!(!has_forbidden_char(&r.stdout));
            prop_assert!(clean_warnings(&r.warnings));
            if mode == ResourcesMode::Json {
                prop_assert!(parse_json(r.stdout.as_bytes()).is_ok());
            }
        }
    }

    #[test]
    fn props_list_and_tree_never_panic_and_stay_clean(names in proptest::collection::vec((nasty_string(), proptest::option::of(nasty_string())), 0..6), rec in record()) {
        let refs: Vec<RefView<'_>> = names.iter().map(|(s, r)| RefView { stack: s, region: r.as_deref() }).collect();
        let p = list_plain(&refs);
        prop_assert!(clean_human(&p.stdout));
        prop_assert_eq!(p.stdout.lines().count(), refs.len());
        let j = list_json(&refs);
        let back = parse_json(j.stdout.as_bytes()).unwrap();
        let mut stored: Vec<Value> = names.iter().map(|(s, _)| Value::String(s.clone())).collect();
        let mut got: Vec<Value> = back.as_array().unwrap().iter().map(|o| o["stackName"].clone()).collect();
        stored.sort_by_key(|v| v.to_string());
        got.sort_by_key(|v| v.to_string());
        prop_assert_eq!(stored, got);

        let rows: Vec<LongInput<'_>> = refs.iter().enumerate().map(|(i, r)| LongInput {
            r: *r,
            record: match i % 3 { 0 => RecordRead::Found(&rec), 1 => RecordRead::Failed, _ => RecordRead::NotFound },
            lock: match i % 4 { 0 => LockRead::Locked, 1 => LockRead::Failed, _ => LockRead::Unlocked },
        }).collect();
        let lt = list_long_text(&rows);
        prop_assert!(clean_human(&lt.stdout));
        prop_assert!(clean_warnings(&lt.warnings));
        prop_assert!(parse_json(list_long_json(&rows).stdout.as_bytes()).is_ok());

        let entries: Vec<TreeEntry> = names.iter().enumerate().map(|(i, (s, r))| {
            if i % 2 == 0 { TreeEntry::from_record(s, r.as_deref(), &rec) } else {
                TreeEntry { stack: s.clone(), region: r.clone(), parent_stack: Some(names[0].0.clone()), parent_logical_id: None, parent_region: names[0].1.clone() }
            }
        }).collect();
        let roots = build_tree(entries);
        let tt = tree_text(&roots);
        prop_assert!(clean_human(&tt.stdout));
        prop_assert_eq!(tt.stdout.lines().count(), names.iter().map(|(s, r)| (s.clone(), r.clone().unwrap_or_default())).collect::<std::collections::HashSet<_>>().len());
        prop_assert!(parse_json(tree_json(&roots).stdout.as_bytes()).is_ok());
    }
}
