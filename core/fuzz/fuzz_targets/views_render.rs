//! Fuzz parse + render: arbitrary bytes are read as a state record (and as a lock) the
//! way S3 bodies are read, then rendered through every state view. Fails on a panic,
//! on a raw control/bidi character in a human view, on a multi-line warning, and on a
//! `--json` output that does not parse back.
//!
//! Run: `cd core/fuzz && cargo +nightly fuzz run views_render -- -max_total_time=300`
#![no_main]

use cdkd_core::json::parse_json;
use cdkd_core::view::state::list::{list_long_json, list_long_text, list_plain, LockRead, LongInput, RecordRead, RefView};
use cdkd_core::view::state::resources::{render_resources, ResourcesMode};
use cdkd_core::view::state::show::{show_json, show_nested_json, show_nested_text, show_text, LockView, ShowNode};
use cdkd_core::view::state::tree::{build_tree, tree_json, tree_text, TreeEntry};
use cdkd_core::view::Rendered;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn forbidden(s: &str) -> bool {
    s.chars().any(|c| {
        (c < ' ' && c != '\n')
            || ('\u{7f}'..='\u{9f}').contains(&c)
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}

fn human(r: &Rendered) {
    assert!(!forbidden(&r.stdout), "raw control character in a human view");
    json_warnings(r);
}

fn json_warnings(r: &Rendered) {
    for w in &r.warnings {
        assert!(!forbidden(w) && !w.contains('\n'), "warning is not one clean line");
    }
}

fn json(r: &Rendered) -> Value {
    assert!(!forbidden(&r.stdout), "raw control character in --json");
    json_warnings(r);
    parse_json(r.stdout.as_bytes()).expect("--json output parses back")
}

fuzz_target!(|data: &[u8]| {
    // The same bytes as a lock body.
    let lock = LockView::from_lock_bytes(data).ok().flatten();
    let Ok(Value::Object(record)) = parse_json(data) else {
        return;
    };
    let name = record.get("stackName").and_then(Value::as_str).unwrap_or("App").to_string();
    let region = record.get("region").and_then(Value::as_str).unwrap_or("us-east-1").to_string();
    let mut node = ShowNode { stack: name.clone(), region: region.clone(), record: record.clone(), lock, children: Vec::new() };
    node.children.push(ShowNode { stack: format!("{name}~C"), region: region.clone(), record: record.clone(), lock: None, children: Vec::new() });

    human(&show_text(&node, 1_767_225_600_000));
    human(&show_nested_text(&node, 1_767_225_600_000));
    let v = json(&show_json(&node));
    assert!(v.get("state").is_some());
    json(&show_nested_json(&node));
    for mode in [ResourcesMode::Plain, ResourcesMode::Long] {
        human(&render_resources(&name, &region, &record, mode));
    }
    json(&render_resources(&name, &region, &record, ResourcesMode::Json));

    let refs = [RefView { stack: &name, region: Some(&region) }, RefView { stack: &name, region: None }];
    human(&list_plain(&refs));
    let rows = [
        LongInput { r: refs[0], record: RecordRead::Found(&record), lock: LockRead::Locked },
        LongInput { r: refs[1], record: RecordRead::NotFound, lock: LockRead::Failed },
    ];
    human(&list_long_text(&rows));
    json(&list_long_json(&rows));
    let roots = build_tree(vec![
        TreeEntry::from_record(&name, Some(&region), &record),
        TreeEntry::unlinked(&name, None),
    ]);
    human(&tree_text(&roots));
    json(&tree_json(&roots));
});
