//! `state list` (docs/state-views.md, "state list (alias ls)", testable statements 1-21).

use crate::views_common;

use cdkd_core::text::{display_ident_str, DEFAULT_CAP, STACK_NAME_CAP};
use cdkd_core::view::state::list::{
    list_json, list_long_json, list_long_text, list_plain, LockRead, LongInput, RecordRead, RefView,
};
use cdkd_core::view::state::tree::{build_tree, tree_json, tree_text, TreeEntry};
use serde_json::Value;
use views_common::rec;

fn r<'a>(stack: &'a str, region: Option<&'a str>) -> RefView<'a> {
    RefView { stack, region }
}

fn parse(s: &str) -> Value {
    cdkd_core::json::parse_json(s.as_bytes()).unwrap()
}

#[test]
fn list_01_sorts_by_name_then_region_legacy_last() {
    let refs = [
        r("B", Some("us-east-1")),
        r("A", Some("us-west-2")),
        r("A", Some("us-east-1")),
        r("A", None),
    ];
    assert_eq!(
        list_plain(&refs).stdout,
        "A (us-east-1)\nA (us-west-2)\nA\nB (us-east-1)\n"
    );
}

#[test]
fn list_02_empty_bucket_prints_nothing_and_json_prints_empty_array() {
    assert_eq!(list_plain(&[]).stdout, "");
    assert_eq!(list_json(&[]).stdout, "[]\n");
    assert_eq!(list_long_text(&[]).stdout, "");
    assert_eq!(list_long_json(&[]).stdout, "[]\n");
    assert_eq!(tree_text(&build_tree(vec![])).stdout, "");
    assert_eq!(tree_json(&build_tree(vec![])).stdout, "[]\n");
}

#[test]
fn list_03_name_with_space_is_quoted() {
    assert_eq!(
        list_plain(&[r("My Stack", Some("us-east-1"))]).stdout,
        "\"My Stack\" (us-east-1)\n"
    );
}

#[test]
fn list_04_planted_legacy_name_carrying_region_suffix_is_quoted_whole() {
    let out = list_plain(&[r("ProdStack (us-east-1)", None)]).stdout;
    assert_eq!(out, "\"ProdStack (us-east-1)\"\n");
    assert_ne!(out, "ProdStack (us-east-1)\n");
}

#[test]
fn list_05_escape_in_name_is_removed_and_quoted() {
    let out = list_plain(&[r("Evil\u{1b}[31mX", Some("us-east-1"))]).stdout;
    assert_eq!(out, "\"Evil [31mX\" (us-east-1)\n");
    assert!(!out.contains('\u{1b}'));
}

#[test]
fn list_06_identifier_cut_at_stack_cap_carries_tail_digest() {
    let name = "A".repeat(1200);
    assert_eq!(
        display_ident_str(&name, STACK_NAME_CAP),
        format!(
            "{} [cut: 48 more characters withheld, tail sha256:4739dcdbab0c377161c539af55d47c5c]",
            "A".repeat(1152)
        )
    );
}

#[test]
fn list_06_legacy_body_region_of_300_is_cut_at_255_with_digest() {
    let region = "r".repeat(300);
    let out = list_plain(&[r("Old", Some(&region))]).stdout;
    assert_eq!(
        out,
        format!(
            "Old ({} [cut: 45 more characters withheld, tail sha256:61ccd8ec238822b9f97d06147844c3c9])\n",
            "r".repeat(255)
        )
    );
}

#[test]
fn list_07_region_segment_of_265_is_cut_inside_parentheses() {
    let region = "r".repeat(265);
    assert_eq!(
        display_ident_str(&region, DEFAULT_CAP),
        format!(
            "{} [cut: 10 more characters withheld, tail sha256:52bfb770ff4c153e61a09af372bf62bc]",
            "r".repeat(255)
        )
    );
    let out = list_plain(&[r("S", Some(&region))]).stdout;
    assert!(out.starts_with(&format!("S ({} [cut: 10 more", "r".repeat(255))));
    assert!(out.ends_with("62bc])\n"));
}

#[test]
fn list_cut_values_differing_only_past_the_cut_render_differently() {
    let a = format!("{}x", "A".repeat(1200));
    let b = format!("{}y", "A".repeat(1200));
    assert_ne!(
        display_ident_str(&a, STACK_NAME_CAP),
        display_ident_str(&b, STACK_NAME_CAP)
    );
}

#[test]
fn list_08_json_escapes_line_separator_csi_and_escape() {
    let out = list_json(&[
        r("a\u{2028}b", Some("us-east-1")),
        r("c\u{9b}d", Some("us-east-1")),
        r("e\u{1b}f", Some("us-east-1")),
    ])
    .stdout;
    assert!(out.contains("\\u2028") && !out.contains('\u{2028}'));
    assert!(out.contains("\\u009b") && !out.contains('\u{9b}'));
    assert!(out.contains("\\u001b") && !out.contains('\u{1b}'));
    // Parses back to exactly the stored names.
    let v = parse(&out);
    assert_eq!(v[0]["stackName"], "a\u{2028}b");
    assert_eq!(v[1]["stackName"], "c\u{9b}d");
    assert_eq!(v[2]["stackName"], "e\u{1b}f");
}

#[test]
fn list_json_legacy_region_is_null() {
    let out = list_json(&[r("Old", None)]).stdout;
    assert_eq!(
        out,
        "[\n  {\n    \"stackName\": \"Old\",\n    \"region\": null\n  }\n]\n"
    );
}

#[test]
fn list_09_invalid_json_record_degrades_its_row_with_fixed_reason_and_warns() {
    let rows = [LongInput {
        r: r("Bad", Some("us-east-1")),
        record: RecordRead::Failed,
        lock: LockRead::Unlocked,
    }];
    let out = list_long_text(&rows);
    assert!(out.stdout.contains(
        "\n  Resources: unknown (state record could not be read; run `cdkd-flow state show` for the error)\n"
    ));
    assert_eq!(
        out.warnings,
        ["1 of 1 stack(s) could not be fully read or counted; their rows say why."]
    );
}

#[test]
fn list_10_string_resources_has_no_count_and_json_count_is_null() {
    let body = rec(r#"{"version":2,"stackName":"S","region":"us-east-1","resources":"abcdef"}"#);
    let rows = [LongInput {
        r: r("S", Some("us-east-1")),
        record: RecordRead::Found(&body),
        lock: LockRead::Unlocked,
    }];
    let text = list_long_text(&rows);
    assert!(text.stdout.contains(
        "\n  Resources: unknown (resources is not a JSON object; run `cdkd-flow state show --json` to see the record)\n"
    ));
    assert_eq!(text.warnings.len(), 1);
    let json = parse(&list_long_json(&rows).stdout);
    assert_eq!(json[0]["resourceCount"], Value::Null);
    assert_eq!(
        json[0]["stateReadError"],
        "resources is not a JSON object; run `cdkd-flow state show --json` to see the record"
    );
}

#[test]
fn list_11_null_resources_counts_zero_without_reason() {
    let body = rec(r#"{"version":2,"resources":null}"#);
    let rows = [LongInput {
        r: r("S", Some("us-east-1")),
        record: RecordRead::Found(&body),
        lock: LockRead::Unlocked,
    }];
    let out = list_long_text(&rows);
    assert!(out.stdout.contains("\n  Resources: 0\n"));
    assert!(out.warnings.is_empty());
}

#[test]
fn list_12_legacy_row_reads_legacy_zero_unknown_and_commandless_lock_reason() {
    let ok = [LongInput {
        r: r("Old", None),
        record: RecordRead::NotFound,
        lock: LockRead::Unlocked,
    }];
    assert_eq!(
        list_long_text(&ok).stdout,
        "Old\n  Region: (legacy)\n  Resources: 0\n  Last Modified: unknown\n  Lock: unlocked\n"
    );
    let failed = [LongInput {
        lock: LockRead::Failed,
        ..ok[0]
    }];
    let out = list_long_text(&failed);
    assert!(out
        .stdout
        .ends_with("  Lock: unknown (lock could not be read)\n"));
    assert_eq!(out.warnings.len(), 1);
}

#[test]
fn list_region_scoped_lock_failure_names_state_show() {
    let rows = [LongInput {
        r: r("S", Some("us-east-1")),
        record: RecordRead::NotFound,
        lock: LockRead::Failed,
    }];
    assert!(list_long_text(&rows).stdout.ends_with(
        "  Lock: unknown (lock could not be read; run `cdkd-flow state show` for the error)\n"
    ));
}

#[test]
fn list_13_expired_lock_reads_locked() {
    let rows = [LongInput {
        r: r("S", Some("us-east-1")),
        record: RecordRead::NotFound,
        lock: LockRead::Locked,
    }];
    assert!(list_long_text(&rows).stdout.ends_with("  Lock: locked\n"));
}

#[test]
fn list_14_non_numeric_last_modified_reads_unknown() {
    for lm in [r#""yesterday""#, "null", "1e300", r#""2026-01-01""#, "{}"] {
        let body = rec(&format!(r#"{{"resources":{{}},"lastModified":{lm}}}"#));
        let rows = [LongInput {
            r: r("S", Some("us-east-1")),
            record: RecordRead::Found(&body),
            lock: LockRead::Unlocked,
        }];
        assert!(
            list_long_text(&rows)
                .stdout
                .contains("\n  Last Modified: unknown\n"),
            "{lm}"
        );
    }
    let body = rec(r#"{"resources":{"a":{}},"lastModified":1777458225000}"#);
    let rows = [LongInput {
        r: r("S", Some("us-east-1")),
        record: RecordRead::Found(&body),
        lock: LockRead::Unlocked,
    }];
    assert_eq!(
        list_long_text(&rows).stdout,
        "S (us-east-1)\n  Region: us-east-1\n  Resources: 1\n  Last Modified: 2026-04-29T10:23:45.000Z\n  Lock: unlocked\n"
    );
}

#[test]
fn list_15_long_json_objects_have_exactly_the_keys_in_order() {
    let body = rec(r#"{"resources":{}}"#);
    let rows = [LongInput {
        r: r("S", Some("us-east-1")),
        record: RecordRead::Found(&body),
        lock: LockRead::Locked,
    }];
    let v = parse(&list_long_json(&rows).stdout);
    let keys: Vec<&String> = v[0].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "stackName",
            "region",
            "resourceCount",
            "lastModified",
            "locked",
            "stateReadError",
            "lockReadError"
        ]
    );
}

#[test]
fn list_long_blocks_are_separated_by_one_empty_line() {
    let rows = [
        LongInput {
            r: r("B", Some("us-east-1")),
            record: RecordRead::NotFound,
            lock: LockRead::Unlocked,
        },
        LongInput {
            r: r("A", Some("us-east-1")),
            record: RecordRead::NotFound,
            lock: LockRead::Unlocked,
        },
    ];
    insta::assert_snapshot!(list_long_text(&rows).stdout);
}

fn linked(stack: &str, region: &str, parent: &str, parent_region: &str) -> TreeEntry {
    TreeEntry {
        stack: stack.into(),
        region: Some(region.into()),
        parent_stack: Some(parent.into()),
        parent_logical_id: Some(stack.rsplit('~').next().unwrap().into()),
        parent_region: Some(parent_region.into()),
    }
}

#[test]
fn list_17_tree_links_child_under_parent() {
    let entries = vec![
        TreeEntry::unlinked("Root", Some("us-east-1")),
        linked("Root~A", "us-east-1", "Root", "us-east-1"),
    ];
    assert_eq!(
        tree_text(&build_tree(entries)).stdout,
        "Root (us-east-1)\n└── Root~A (us-east-1)\n"
    );
}

#[test]
fn list_tree_draws_tree1_connectors() {
    let entries = vec![
        TreeEntry::unlinked("Root", Some("us-east-1")),
        linked("Root~B", "us-east-1", "Root", "us-east-1"),
        linked("Root~A", "us-east-1", "Root", "us-east-1"),
        linked("Root~A~Deep", "us-east-1", "Root~A", "us-east-1"),
    ];
    assert_eq!(
        tree_text(&build_tree(entries)).stdout,
        "Root (us-east-1)\n├── Root~A (us-east-1)\n│   └── Root~A~Deep (us-east-1)\n└── Root~B (us-east-1)\n"
    );
}

#[test]
fn list_18_child_whose_parent_is_in_another_region_is_a_root_keeping_its_link() {
    let entries = vec![
        TreeEntry::unlinked("Root", Some("us-east-1")),
        linked("Root~A", "us-east-1", "Root", "eu-west-1"),
    ];
    let roots = build_tree(entries);
    assert_eq!(
        tree_text(&roots).stdout,
        "Root (us-east-1)\nRoot~A (us-east-1)\n"
    );
    let v = parse(&tree_json(&roots).stdout);
    assert_eq!(v[1]["parentStack"], "Root");
    assert_eq!(v[1]["parentRegion"], "eu-west-1");
    let keys: Vec<&String> = v[1].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "stackName",
            "region",
            "parentStack",
            "parentLogicalId",
            "parentRegion",
            "children"
        ]
    );
}

#[test]
fn list_19_list_valued_parent_stack_drops_the_link() {
    let body = rec(r#"{"parentStack":["Root"],"parentRegion":"us-east-1","parentLogicalId":"A"}"#);
    let entries = vec![
        TreeEntry::unlinked("Root", Some("us-east-1")),
        TreeEntry::from_record("Root~A", Some("us-east-1"), &body),
    ];
    let v = parse(&tree_json(&build_tree(entries)).stdout);
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert_eq!(v[1]["parentStack"], Value::Null);
    assert_eq!(v[1]["parentLogicalId"], Value::Null);
}

#[test]
fn list_tree_non_string_parent_region_drops_the_whole_link() {
    let body = rec(r#"{"parentStack":"Root","parentRegion":5,"parentLogicalId":"A"}"#);
    let e = TreeEntry::from_record("Root~A", Some("us-east-1"), &body);
    assert_eq!(e, TreeEntry::unlinked("Root~A", Some("us-east-1")));
    let body = rec(r#"{"parentStack":"Root","parentLogicalId":7}"#);
    let e = TreeEntry::from_record("Root~A", Some("us-east-1"), &body);
    assert_eq!(e.parent_stack.as_deref(), Some("Root"));
    assert_eq!(e.parent_logical_id, None);
    assert_eq!(e.parent_region, None);
}

#[test]
fn list_20_chain_of_102_splits_into_101_nodes_and_a_new_root() {
    let mut entries = vec![TreeEntry::unlinked("N000", Some("r"))];
    for i in 1..102 {
        entries.push(linked(
            &format!("N{i:03}"),
            "r",
            &format!("N{:03}", i - 1),
            "r",
        ));
    }
    let roots = build_tree(entries);
    assert_eq!(roots.len(), 2);
    fn count(n: &cdkd_core::view::state::tree::TreeNode) -> usize {
        1 + n.children.iter().map(count).sum::<usize>()
    }
    assert_eq!(roots[0].entry.stack, "N000");
    assert_eq!(count(&roots[0]), 101);
    assert_eq!(roots[1].entry.stack, "N101");
    assert_eq!(count(&roots[1]), 1);
    // The re-rooted node keeps its parent link in --tree --json.
    let v = parse(&tree_json(&roots).stdout);
    assert_eq!(v[1]["parentStack"], "N100");
}

#[test]
fn list_21_mutual_parents_are_both_roots() {
    let entries = vec![linked("A", "r", "B", "r"), linked("B", "r", "A", "r")];
    assert_eq!(tree_text(&build_tree(entries)).stdout, "A (r)\nB (r)\n");
    let entries = vec![
        linked("Self", "r", "Self", "r"),
        linked("Kid", "r", "Self", "r"),
    ];
    assert_eq!(
        tree_text(&build_tree(entries)).stdout,
        "Self (r)\n└── Kid (r)\n"
    );
}

#[test]
fn list_tree_label_with_connector_is_quoted() {
    let entries = vec![TreeEntry::unlinked("└── Fake", Some("us-east-1"))];
    assert_eq!(
        tree_text(&build_tree(entries)).stdout,
        // Box-drawing characters print (docs/state-views.md, "Printable (stack names and regions in diagnostics)"); the quotes keep the label
        // apart from the connectors the view draws.
        "\"\u{2514}\u{2500}\u{2500} Fake\" (us-east-1)\n"
    );
}

// ------------------ docs/state-views.md, "A lock left without a record" a lock left without a record

#[test]
fn state_list_lock_without_record_rows_carry_the_marker_in_every_mode() {
    use cdkd_core::view::state::list::{list_json_with_locks, list_plain_with_locks};
    let records = [r("B", Some("us-east-1")), r("A", Some("us-east-1"))];
    let lone = [
        r("Orders", Some("us-east-1")),
        r("A", Some("eu-west-1")),
        r("Old", None),
    ];
    insta::assert_snapshot!(
        "state_list_lock_without_record_plain",
        list_plain_with_locks(&records, &lone).stdout
    );
    let json = parse(&list_json_with_locks(&records, &lone).stdout);
    let marked: Vec<(String, Option<bool>)> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["stackName"].as_str().unwrap().to_string(),
                o.get("lockWithoutRecord").and_then(Value::as_bool),
            )
        })
        .collect();
    assert_eq!(
        marked,
        [
            ("A".to_string(), Some(true)),
            ("A".to_string(), None),
            ("B".to_string(), None),
            ("Old".to_string(), Some(true)),
            ("Orders".to_string(), Some(true)),
        ]
    );
    let record = rec(r#"{"resources":{"Q":{}},"lastModified":1767225600000}"#);
    let rows = [
        LongInput {
            r: r("A", Some("us-east-1")),
            record: RecordRead::Found(&record),
            lock: LockRead::Unlocked,
        },
        LongInput {
            r: r("Orders", Some("us-east-1")),
            record: RecordRead::LockWithoutRecord,
            lock: LockRead::Locked,
        },
    ];
    let long = list_long_text(&rows);
    assert!(long.warnings.is_empty(), "{:?}", long.warnings);
    insta::assert_snapshot!("state_list_lock_without_record_long", long.stdout);
    let v = parse(&list_long_json(&rows).stdout);
    assert_eq!(v[0].get("lockWithoutRecord"), None);
    assert_eq!(v[1]["lockWithoutRecord"], Value::Bool(true));
    assert_eq!(v[1]["resourceCount"], Value::Null);
    assert_eq!(v[1]["stateReadError"], Value::Null);
    assert_eq!(v[1]["locked"], Value::Bool(true));
}
