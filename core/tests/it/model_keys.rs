//! S3 key layout (docs/state-and-lock.md, "Key layout" and "Listing the records") and ref ordering (docs/state-views.md, "Order"):
//! statements 8–11 as parse tests.

use cdkd_core::keys::{
    decode_url_listed_key, parse_listed_key, KeyError, ListedKey, StackRef, DEFAULT_PREFIX,
};

fn refs_of(keys: &[&str]) -> Vec<ListedKey> {
    keys.iter()
        .filter_map(|k| parse_listed_key(DEFAULT_PREFIX, k))
        .collect()
}

fn state(stack: &str, region: &str) -> ListedKey {
    ListedKey::State {
        stack: stack.into(),
        region: region.into(),
    }
}

#[test]
fn statement_8_same_stack_in_two_regions_is_two_refs() {
    let mut got = refs_of(&[
        "cdkd/App/us-east-1/state.json",
        "cdkd/App/eu-west-1/state.json",
    ]);
    got.sort_by_key(|k| format!("{k:?}"));
    assert_eq!(got, [state("App", "eu-west-1"), state("App", "us-east-1")]);
}

#[test]
fn statement_9_two_segment_key_is_a_legacy_ref() {
    assert_eq!(
        refs_of(&["cdkd/Old/state.json"]),
        [ListedKey::LegacyState {
            stack: "Old".into()
        }]
    );
}

#[test]
fn statement_10_other_depths_index_and_lock_produce_no_ref() {
    assert!(refs_of(&[
        "cdkd/a/b/c/state.json",
        "cdkd/_index/us-east-1/exports.json",
        "cdkd/App/us-east-1/lock.json",
        "cdkd/App/us-east-1/rollback-journal.json",
        "cdkd/App/us-east-1/deployments/1/state.json",
        "cdkd/state.json",
        "other/App/us-east-1/state.json",
        "cdkdx/App/us-east-1/state.json",
    ])
    .is_empty());
}

#[test]
fn listing_rule_empty_segments_are_skipped() {
    assert!(refs_of(&[
        "cdkd//us-east-1/state.json",
        "cdkd/App//state.json",
        "cdkd//state.json",
    ])
    .is_empty());
}

#[test]
fn listing_rule_nested_custom_prefix_parity_flaw_kept() {
    // docs/state-and-lock.md, "Listing the records": listing under `cdkd` sees `cdkd/team-a/S/state.json` as stack
    // `team-a` in "region" `S` (cdkd has the same flaw).
    assert_eq!(
        refs_of(&["cdkd/team-a/S/state.json"]),
        [state("team-a", "S")]
    );
    assert_eq!(
        parse_listed_key("cdkd/team-a", "cdkd/team-a/S/us-east-1/state.json"),
        Some(state("S", "us-east-1"))
    );
}

#[test]
fn statement_11_url_encoded_listing_plus_is_space_and_percent_2b_is_plus() {
    let decoded = decode_url_listed_key("cdkd/My+Stack/us-east-1/state.json").unwrap();
    assert_eq!(refs_of(&[&decoded]), [state("My Stack", "us-east-1")]);
    let decoded = decode_url_listed_key("cdkd/My%2BStack/us-east-1/state.json").unwrap();
    assert_eq!(refs_of(&[&decoded]), [state("My+Stack", "us-east-1")]);
}

#[test]
fn url_listing_decodes_cr_and_utf8_and_refuses_bad_escapes() {
    assert_eq!(decode_url_listed_key("a%0Db").unwrap(), "a\rb");
    assert_eq!(decode_url_listed_key("caf%C3%A9").unwrap(), "caf\u{e9}");
    assert_eq!(decode_url_listed_key("a%2b%25").unwrap(), "a+%");
    for bad in ["a%", "a%2", "a%zz", "%G0"] {
        assert!(
            matches!(decode_url_listed_key(bad), Err(KeyError::BadEscape(_))),
            "{bad}"
        );
    }
    assert!(matches!(
        decode_url_listed_key("a%FFb"),
        Err(KeyError::NotUtf8(_))
    ));
    let msg = decode_url_listed_key("x\n%").unwrap_err().to_string();
    assert!(!msg.contains('\n'), "{msg}");
}

#[test]
fn views_1_7_refs_order_by_utf16_then_region_less_last() {
    let mut refs = [
        StackRef::new("B", Some("us-east-1")),
        StackRef::new("A", Some("us-west-2")),
        StackRef::new("A", None::<String>),
        StackRef::new("A", Some("us-east-1")),
    ];
    refs.sort();
    let shown: Vec<String> = refs
        .iter()
        .map(|r| format!("{} {:?}", r.stack, r.region))
        .collect();
    assert_eq!(
        shown,
        [
            "A Some(\"us-east-1\")",
            "A Some(\"us-west-2\")",
            "A None",
            "B Some(\"us-east-1\")"
        ]
    );
}

#[test]
fn views_1_7_utf16_code_unit_order_differs_from_code_point_order() {
    // U+FF5E (BMP, 0xFF5E) vs U+1F600 (surrogates 0xD83D…): UTF-16 puts the astral
    // character first, code point order the other way round.
    let mut refs = [
        StackRef::new("\u{ff5e}", Some("r")),
        StackRef::new("\u{1f600}", Some("r")),
    ];
    refs.sort();
    assert_eq!(refs[0].stack, "\u{1f600}");
}

/// A stack name no cdkd stack can have is refused by name, before any
/// AWS call; real names (nested, spaced, non-ASCII) pass.
#[test]
fn stack_name_argument_with_control_characters_is_refused() {
    use cdkd_core::keys::{check_stack_name, StackNameError};
    for ok in [
        "App",
        "Parent~Child",
        "My Stack",
        "\u{d6}rd\u{e9}rs",
        "\u{6ce8}\u{6587}",
    ] {
        assert_eq!(check_stack_name(ok), Ok(()), "{ok:?}");
    }
    assert_eq!(check_stack_name(""), Err(StackNameError::Empty));
    let e = check_stack_name("App\nInjected").unwrap_err();
    assert_eq!(
        e.to_string(),
        "'App Injected' is not a stack name any cdkd stack can have: it contains a control character (U+000A)"
    );
    assert!(matches!(
        check_stack_name("A\u{1b}[2J"),
        Err(StackNameError::Invisible { code: 0x1b, .. })
    ));
    assert!(matches!(
        check_stack_name("A\u{202e}B"),
        Err(StackNameError::Invisible {
            what: "an invisible formatting character",
            ..
        })
    ));
}

#[test]
fn state_list_lock_without_record_lock_keys_parse_like_record_keys() {
    use cdkd_core::keys::parse_listed_lock_key;
    let p = |k: &str| parse_listed_lock_key(DEFAULT_PREFIX, k);
    assert_eq!(
        p("cdkd/App/us-east-1/lock.json"),
        Some(StackRef::new("App", Some("us-east-1")))
    );
    assert_eq!(
        p("cdkd/App/lock.json"),
        Some(StackRef::new("App", None::<&str>))
    );
    for not_a_lock in [
        "cdkd/App/us-east-1/state.json",
        "cdkd/App/us-east-1/lock.json.bak",
        "cdkd/a/b/c/lock.json",
        "cdkd//us-east-1/lock.json",
        "cdkd/lock.json",
        "other/App/us-east-1/lock.json",
    ] {
        assert_eq!(p(not_a_lock), None, "{not_a_lock}");
    }
}

#[test]
fn state_list_lock_without_record_only_locks_with_no_record_beside_them() {
    use cdkd_core::keys::locks_without_record;
    let s = |stack: &str, region: Option<&str>| StackRef::new(stack, region);
    let locks = [
        s("App", Some("us-east-1")),   // its record is there
        s("Gone", Some("us-east-1")),  // no record
        s("Moved", Some("eu-west-1")), // a legacy record whose body names eu-west-1
        s("Leg", None),                // a legacy record: its legacy lock has one
        s("LegGone", None),            // no legacy record
    ];
    let records = [
        s("App", Some("us-east-1")),
        s("Moved", Some("eu-west-1")),
        s("Leg", None),
        s("LegGone", Some("us-east-1")),
    ];
    let legacy = ["Moved".to_string(), "Leg".to_string()];
    assert_eq!(
        locks_without_record(&locks, &records, &legacy),
        [s("Gone", Some("us-east-1")), s("LegGone", None)]
    );
}
