//! The contention refusal (docs/state-and-lock.md, "The contention refusal"): statements 37–42, adapted to `cdkd-flow
//! force-unlock` (this CLI has the command), plus the suppression and quoting rules.

use cdkd_core::contention::{ContentionContext, Subject};
use cdkd_core::lock::{parse_lock, LockInfo};
use cdkd_core::view::contention::{contention_message, recovery_command};

const NOW: i64 = 1_767_225_600_000;

fn ctx<'a>(stack: &'a str, region: Option<&'a str>) -> ContentionContext<'a> {
    ContentionContext {
        subject: Subject::Stack,
        stack,
        region,
        profile: None,
        bucket: Some("cdkd-state-1"),
        prefix: "cdkd",
    }
}

fn lock(body: &str) -> LockInfo {
    parse_lock(body.as_bytes()).unwrap().unwrap()
}

fn live_bob() -> LockInfo {
    lock(&format!(
        r#"{{"owner":"bob@host:1","timestamp":{},"expiresAt":{},"operation":"deploy"}}"#,
        NOW - 1000,
        NOW + 252_000
    ))
}

#[test]
fn statement_37_live_lock_refusal_exact_text() {
    let msg = contention_message(&ctx("App", Some("us-east-1")), Some(&live_bob()), NOW);
    assert_eq!(
        msg,
        "Could not acquire lock for stack App (us-east-1) — held by bob@host:1, operation: deploy, since 2025-12-31T23:59:59.000Z, expires in 4m12s. That process is still running — wait for it to finish. Only if you are certain it is gone, run: cdkd-flow force-unlock App --stack-region us-east-1 --state-bucket cdkd-state-1"
    );
    assert!(!msg.contains('\n'));
}

#[test]
fn statement_38_state_prefix_only_when_not_default() {
    let c = ctx("App", Some("us-east-1"));
    let msg = contention_message(&c, Some(&live_bob()), NOW);
    assert!(!msg.contains("--state-prefix"), "{msg}");
    let c = ContentionContext {
        prefix: "team-a",
        ..c
    };
    let msg = contention_message(&c, Some(&live_bob()), NOW);
    assert!(msg.ends_with("--state-prefix team-a"), "{msg}");
    // An empty prefix is a different prefix and is printed.
    let c = ContentionContext { prefix: "", ..c };
    assert!(recovery_command(&c).unwrap().ends_with("--state-prefix ''"));
}

#[test]
fn statement_39_nested_name_shell_quoted_in_command() {
    let c = ContentionContext {
        subject: Subject::NestedStackChild,
        ..ctx("Root~Child", Some("us-east-1"))
    };
    let msg = contention_message(&c, Some(&live_bob()), NOW);
    assert!(msg.contains("cdkd-flow force-unlock 'Root~Child'"), "{msg}");
    assert!(
        msg.starts_with("Could not acquire lock for nested-stack child Root~Child (us-east-1)"),
        "{msg}"
    );
}

#[test]
fn statement_40_option_like_or_overlong_name_suppresses_command() {
    let long = "A".repeat(1153);
    for stack in ["--all", long.as_str()] {
        let msg = contention_message(&ctx(stack, Some("us-east-1")), Some(&live_bob()), NOW);
        assert!(msg.contains("No recovery command can be shown"), "{msg}");
        assert!(!msg.contains("force-unlock"), "{msg}");
        assert!(!msg.contains('\n'));
    }
    // Exactly 1152 characters is still printable.
    let ok = "A".repeat(1152);
    assert!(recovery_command(&ctx(&ok, Some("us-east-1"))).is_some());
}

#[test]
fn statement_41_lock_without_expires_at_reads_unknown_time_never_nan() {
    let l = lock(r#"{"owner":"bob@host:1","timestamp":1}"#);
    let msg = contention_message(&ctx("App", Some("us-east-1")), Some(&l), NOW);
    assert!(
        msg.contains(
            "held by bob@host:1, since 1970-01-01T00:00:00.001Z, expires at an unknown time."
        ),
        "{msg}"
    );
    assert!(!msg.contains("NaN"));
}

#[test]
fn statement_42_empty_owner_is_unnamed_holder_with_weaker_advice() {
    let l = lock(&format!(r#"{{"owner":"","expiresAt":{}}}"#, NOW + 60_000));
    let msg = contention_message(&ctx("App", Some("us-east-1")), Some(&l), NOW);
    assert!(
        msg.contains("held by an unnamed holder, expires in 1m0s."),
        "{msg}"
    );
    assert!(
        msg.contains("Wait for it to finish, or if you are certain no other process is active, run: cdkd-flow force-unlock App"),
        "{msg}"
    );
    assert!(!msg.contains("still running"));
}

#[test]
fn contention_default_text_when_lock_unreadable_or_absent() {
    let msg = contention_message(&ctx("App", Some("us-east-1")), None, NOW);
    assert_eq!(
        msg,
        "Could not acquire lock for stack App (us-east-1) — another cdkd process holds it. Wait for it to finish, or if you are certain no other process is active, run: cdkd-flow force-unlock App --stack-region us-east-1 --state-bucket cdkd-state-1"
    );
}

#[test]
fn contention_subject_noun_changes_only() {
    let c = ContentionContext {
        subject: Subject::NestedStack,
        ..ctx("App", Some("us-east-1"))
    };
    assert!(contention_message(&c, None, NOW)
        .starts_with("Could not acquire lock for nested stack App (us-east-1) — "));
}

#[test]
fn contention_command_order_profile_bucket_prefix_and_quoting() {
    let c = ContentionContext {
        profile: Some("prod-caf\u{e9}"),
        bucket: Some("my-bucket"),
        prefix: "cdkd/team-a",
        ..ctx("App", Some("us-east-1"))
    };
    assert_eq!(
        recovery_command(&c).unwrap(),
        "cdkd-flow force-unlock App --stack-region us-east-1 --profile 'prod-caf\u{e9}' --state-bucket my-bucket --state-prefix cdkd/team-a"
    );
    let c = ContentionContext {
        bucket: None,
        ..ctx("It's", Some("us-east-1"))
    };
    assert_eq!(
        recovery_command(&c).unwrap(),
        "cdkd-flow force-unlock 'It'\\''s' --stack-region us-east-1"
    );
}

#[test]
fn contention_legacy_lock_omits_stack_region() {
    let c = ctx("Old", None);
    assert_eq!(
        recovery_command(&c).unwrap(),
        "cdkd-flow force-unlock Old --state-bucket cdkd-state-1"
    );
    assert!(
        contention_message(&c, None, NOW).starts_with("Could not acquire lock for stack Old — ")
    );
}

#[test]
fn contention_suppression_altered_empty_or_dash_values() {
    let base = ctx("App", Some("us-east-1"));
    let cases: Vec<ContentionContext> = vec![
        ContentionContext {
            stack: "Caf\u{200b}e",
            ..base
        }, // altered by printable (a zero-width space)
        ContentionContext {
            stack: "A\u{1b}[2J",
            ..base
        }, // control character
        ContentionContext {
            region: Some(""),
            ..base
        }, // empty region
        ContentionContext {
            region: Some("us-east-1\n"),
            ..base
        }, // altered region
        ContentionContext {
            region: Some("-x"),
            ..base
        }, // option-like region
        ContentionContext {
            profile: Some("p\u{2028}"),
            ..base
        }, // altered profile
        ContentionContext {
            bucket: Some("-b"),
            ..base
        }, // option-like bucket
        ContentionContext {
            prefix: "a\u{7f}",
            ..base
        }, // altered prefix
        ContentionContext {
            prefix: " cdkd",
            ..base
        }, // padding trimmed away
    ];
    for c in cases {
        let msg = contention_message(&c, Some(&live_bob()), NOW);
        assert!(
            msg.contains("No recovery command can be shown"),
            "{c:?}: {msg}"
        );
        assert!(!msg.contains("force-unlock"), "{c:?}");
        assert!(!msg.contains('\n') && !msg.contains('\u{1b}'), "{c:?}");
    }
}

#[test]
fn contention_head_renders_untrusted_stack_and_region_safely() {
    let c = ctx("My Stack\u{1b}[31m", Some("\u{1b}"));
    let msg = contention_message(&c, None, NOW);
    assert!(
        msg.starts_with("Could not acquire lock for stack \"My Stack [31m\" (<unrenderable>) — "),
        "{msg}"
    );
}

#[test]
fn contention_non_ascii_stack_name_is_printed_whole_in_the_command() {
    let c = ContentionContext {
        stack: "\u{d6}rd\u{e9}rs",
        ..ctx("App", Some("us-east-1"))
    };
    let msg = contention_message(&c, Some(&live_bob()), NOW);
    assert!(
        msg.contains("cdkd-flow force-unlock '\u{d6}rd\u{e9}rs' --stack-region us-east-1"),
        "{msg}"
    );
    assert!(
        msg.starts_with("Could not acquire lock for stack \"\u{d6}rd\u{e9}rs\" (us-east-1)"),
        "{msg}"
    );
}

/// A cdkd-flow destroy run's lock names the command that watches the run, then the
/// force-unlock only once the run has ended; a report's cause keeps neither.
#[test]
fn contention_a_destroy_runs_lock_names_its_watch_command_before_the_unlock() {
    for (owner, watch) in [
        (
            "cdkd-flow:destroy-App-1",
            "cdkd-flow runs watch destroy-App-1)",
        ),
        (
            "cdkd-flow:destroy-App-2@host:7",
            "cdkd-flow runs watch destroy-App-2 --local)",
        ),
    ] {
        let l = lock(&format!(
            r#"{{"owner":"{owner}","timestamp":1,"expiresAt":{},"operation":"destroy"}}"#,
            NOW + 60_000
        ));
        let msg = contention_message(&ctx("App", Some("us-east-1")), Some(&l), NOW);
        assert!(
            msg.contains(&format!(
                "It is a cdkd-flow destroy run: if it is still going, wait for it ({watch}. Only if you are certain it has ended, run: cdkd-flow force-unlock App --stack-region us-east-1"
            )),
            "{msg}"
        );
        assert!(!msg.contains("That process is still running"), "{msg}");
        let cause = cdkd_core::view::contention::without_unlock_advice(&msg);
        assert!(
            cause.ends_with("expires in 1m0s.") && !cause.contains("force-unlock"),
            "{cause}"
        );
    }
    // Another operation of a cdkd-flow owner (not destroy, not export) keeps the default.
    let l = lock(&format!(
        r#"{{"owner":"cdkd-flow:x","timestamp":1,"expiresAt":{},"operation":"deploy"}}"#,
        NOW + 60_000
    ));
    let msg = contention_message(&ctx("App", Some("us-east-1")), Some(&l), NOW);
    assert!(msg.contains("That process is still running"), "{msg}");
}

/// docs/state-and-lock.md, "Renewal", "Fencing a write": a lock is still the holder's when its
/// owner and acquisition timestamp are the ones it wrote, whatever its expiry (a renewal
/// whose answer was lost); the `Lost` error names what stands there now.
#[test]
fn statement_45b_same_acquisition_and_what_a_lost_lock_names() {
    use cdkd_core::lock::{is_same_acquisition, LockBody};
    use cdkd_core::view::contention::lost_lock_reason;
    let body = LockBody::new("cdkd-flow:r1", NOW, 1_800_000, Some("destroy".into()));
    let renewed = lock(&format!(
        r#"{{"owner":"cdkd-flow:r1","timestamp":{NOW},"expiresAt":{},"operation":"destroy"}}"#,
        NOW + 3_600_000
    ));
    assert!(is_same_acquisition(&renewed, &body));
    let again = lock(&format!(
        r#"{{"owner":"cdkd-flow:r1","timestamp":{},"expiresAt":{}}}"#,
        NOW + 1,
        NOW + 3_600_000
    ));
    assert!(!is_same_acquisition(&again, &body), "another acquisition");
    assert!(!is_same_acquisition(&live_bob(), &body));

    assert_eq!(
        lost_lock_reason(false, None, NOW),
        "it was removed (a force-unlock, or by hand)"
    );
    assert_eq!(
        lost_lock_reason(true, Some(&live_bob()), NOW),
        "it is held by bob@host:1, operation: deploy, since 2025-12-31T23:59:59.000Z, expires in 4m12s now"
    );
    assert_eq!(
        lost_lock_reason(true, None, NOW),
        "another process replaced it with an object that is not a readable lock"
    );
}
