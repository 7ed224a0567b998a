//! Scheduled cleanup: which state records a cleanup run destroys (the `cleanup`
//! command of docs/cli.md). Pure: the `cleanup-select` step lists the refs and reads each
//! record and lock, this module decides.
//!
//! Rules, checked in this order for every listed ref (the first that applies is the
//! skip reason):
//! 1. the stack name must match the pattern ([`NamePattern`]) — `pattern-mismatch`;
//! 2. a legacy record without a region is never destroyed by a schedule (the destroy
//!    workflow needs a region; migrate the record with any cdkd write) —
//!    `legacy-without-region`;
//! 3. the record's region must be one of the allowed regions (an empty list allows every
//!    region) — `region-not-allowed`;
//! 4. a record that could not be read is skipped, never guessed at — `unreadable`;
//! 5. a nested child (a valid parent link, or a `~` in its stack name) is destroyed with
//!    its parent, never on its own — `nested-child`;
//! 6. a stack with any `lock.json` (held, expired or unreadable) is skipped: someone is
//!    working on it or a run crashed and a human should look — `locked`;
//! 7. the record must carry a finite `lastModified` — `no-last-modified`;
//! 8. `now - lastModified` must be at least the minimum age — `too-young`.
//!
//! Rules 1–3 need only the listed ref ([`prefilter`]), so the step reads no record that
//! the pattern or the regions already rule out.

use serde::Serialize;

use crate::keys::StackRef;

/// A stack-name pattern. `*` matches any run of characters (also none), `?` exactly one
/// character; every other character matches itself, case-sensitively. The pattern must
/// match the whole name. There are no character classes and no escapes: a `*` or `?` in
/// a (hand-edited) stack name is matched by the wildcards, never literally.
/// The matching is the `wildmatch` crate's, which reads `*` and `?` so and nothing else.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamePattern(String);

/// A pattern or a duration that will not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CleanupError {
    EmptyPattern,
    BadDuration(String),
    ZeroDuration(String),
}

impl std::error::Error for CleanupError {}

impl NamePattern {
    pub fn parse(pattern: &str) -> Result<Self, CleanupError> {
        if pattern.is_empty() {
            return Err(CleanupError::EmptyPattern);
        }
        Ok(NamePattern(pattern.to_owned()))
    }

    /// Whole-name glob match.
    pub fn matches(&self, name: &str) -> bool {
        wildmatch::WildMatch::new(&self.0).matches(name)
    }
}

/// Parses a minimum age: one or more `<digits><unit>` parts, units `s`, `m`, `h`, `d`,
/// `w` (`7d`, `12h`, `30m`, `1d12h`). Returns milliseconds. Zero is refused. The text
/// must have exactly that shape (no spaces inside, no other units or spellings); the
/// `humantime` crate adds the parts up.
pub fn parse_duration_ms(text: &str) -> Result<i64, CleanupError> {
    let bad = || CleanupError::BadDuration(crate::text::flatten_str(text));
    let trimmed = text.trim();
    if !is_duration_shape(trimmed) {
        return Err(bad());
    }
    let total = humantime::parse_duration(trimmed).map_err(|_| bad())?;
    let total = i64::try_from(total.as_millis()).map_err(|_| bad())?;
    if total == 0 {
        return Err(CleanupError::ZeroDuration(crate::text::flatten_str(text)));
    }
    Ok(total)
}

/// Whether `text` is one or more `<digits><unit>` parts, units `s`, `m`, `h`, `d`, `w`.
fn is_duration_shape(text: &str) -> bool {
    !text.is_empty()
        && text.ends_with(['s', 'm', 'h', 'd', 'w'])
        && text.split_inclusive(['s', 'm', 'h', 'd', 'w']).all(|part| {
            let digits = &part[..part.len() - 1];
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
        })
}

/// What the step read for one ref.
#[derive(Clone, Debug, PartialEq)]
pub enum Observed {
    /// The record (and lock) were read.
    Read(RecordSummary),
    /// The record or its lock could not be read, or the record vanished; the message is
    /// one line.
    Unreadable(String),
}

/// What selection needs from a record and its lock.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordSummary {
    /// `StateRecord::last_modified()`.
    pub last_modified: Option<f64>,
    /// `StateRecord::parent_link().is_some()`.
    pub has_parent_link: bool,
    /// A `lock.json` exists for the ref (any body).
    pub locked: bool,
}

/// What a cleanup selects by.
#[derive(Clone, Debug)]
pub struct Criteria {
    pub pattern: NamePattern,
    pub min_age_ms: i64,
    /// Allowed record regions; empty allows every region.
    pub regions: Vec<String>,
    pub now_ms: i64,
}

/// Why a ref is not destroyed.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum SkipReason {
    PatternMismatch,
    LegacyWithoutRegion,
    RegionNotAllowed,
    Unreadable {
        message: String,
    },
    NestedChild,
    Locked,
    NoLastModified,
    #[serde(rename_all = "camelCase")]
    TooYoung {
        age_ms: i64,
        min_age_ms: i64,
    },
}

/// A skipped ref with its reason.
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped {
    pub stack_ref: StackRef,
    pub reason: SkipReason,
}

/// The outcome: refs to destroy, in input order, and the rest with reasons.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    pub selected: Vec<StackRef>,
    pub skipped: Vec<Skipped>,
}

/// Rules 1–3: the decision that needs no read. `None` means "read the record".
pub fn prefilter(stack_ref: &StackRef, criteria: &Criteria) -> Option<SkipReason> {
    if !criteria.pattern.matches(&stack_ref.stack) {
        return Some(SkipReason::PatternMismatch);
    }
    let Some(region) = stack_ref.region.as_deref() else {
        return Some(SkipReason::LegacyWithoutRegion);
    };
    if !criteria.regions.is_empty() && !criteria.regions.iter().any(|r| r == region) {
        return Some(SkipReason::RegionNotAllowed);
    }
    None
}

/// Rules 4–8 for a ref that passed [`prefilter`].
pub fn judge(stack_ref: &StackRef, observed: &Observed, criteria: &Criteria) -> Option<SkipReason> {
    let summary = match observed {
        Observed::Unreadable(message) => {
            return Some(SkipReason::Unreadable {
                message: crate::text::flatten_str(message),
            })
        }
        Observed::Read(s) => s,
    };
    if summary.has_parent_link || stack_ref.stack.contains('~') {
        return Some(SkipReason::NestedChild);
    }
    if summary.locked {
        return Some(SkipReason::Locked);
    }
    let Some(last_modified) = summary.last_modified else {
        return Some(SkipReason::NoLastModified);
    };
    // Saturating float-to-int cast: a huge or negative lastModified stays ordered.
    let age_ms = (criteria.now_ms as f64 - last_modified).floor() as i64;
    if age_ms < criteria.min_age_ms {
        return Some(SkipReason::TooYoung {
            age_ms,
            min_age_ms: criteria.min_age_ms,
        });
    }
    None
}

/// Applies every rule. `observed` is `None` for a ref the caller did not read (it must
/// then fail [`prefilter`]; a ref that passes it without an observation is unreadable).
pub fn select(refs: &[(StackRef, Option<Observed>)], criteria: &Criteria) -> Selection {
    let mut out = Selection::default();
    for (stack_ref, observed) in refs {
        let reason = prefilter(stack_ref, criteria).or_else(|| match observed {
            Some(o) => judge(stack_ref, o, criteria),
            None => Some(SkipReason::Unreadable {
                message: "the record was not read".into(),
            }),
        });
        match reason {
            None => out.selected.push(stack_ref.clone()),
            Some(reason) => out.skipped.push(Skipped {
                stack_ref: stack_ref.clone(),
                reason,
            }),
        }
    }
    out
}

/// Stacks destroyed per turn of the cleanup's `Map` (docs/runs.md, "A cleanup's
/// lists"): the `Map`'s output holds one bounded result per stack of its batch, at most
/// about 1 KiB each (a failed destroy's cause cut by [`bounded_failure`]), so a batch
/// stays far below Step Functions' 256 KiB payload quota whatever the selection's size.
pub const BATCH_SIZE: usize = 40;

/// The next batch after `done` of `total` selected stacks: the indexes to destroy next
/// (empty when all were).
pub fn next_batch(done: usize, total: usize) -> std::ops::Range<usize> {
    let start = done.min(total);
    start..(start + BATCH_SIZE).min(total)
}

/// One destroy's result as the cleanup keeps it (`results.json`, docs/runs.md).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DestroyResult {
    pub stack: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_region: Option<String>,
    /// `SUCCEEDED` or `FAILED`.
    pub status: crate::run::ExecutionStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_arn: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

impl DestroyResult {
    pub fn failed(&self) -> bool {
        self.status != crate::run::ExecutionStatus::Succeeded
    }
}

/// A failed destroy's result, bounded: its error and cause flattened onto one line and
/// cut to [`crate::notify::MAX_LINE_CHARS`] characters (a `startExecution.sync` failure's
/// cause is the child execution's whole description, up to 32,768 characters).
pub fn bounded_failure(
    stack: &str,
    stack_region: Option<&str>,
    error: &str,
    cause: &str,
) -> DestroyResult {
    let cut = |s: &str| crate::notify::cap_chars(&crate::text::flatten_str(s));
    DestroyResult {
        stack: stack.to_string(),
        stack_region: stack_region.map(str::to_string),
        status: crate::run::ExecutionStatus::Failed,
        execution_arn: None,
        error: Some(cut(error)),
        cause: Some(cut(cause)),
    }
}

/// At most this many failed stacks are named in a cleanup's summary (and in the cause of
/// its `CleanupIncomplete`); `results.json` has them all.
pub const MAX_NAMED_FAILURES: usize = 30;

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400_000;
    const NOW: i64 = 1_800_000_000_000;

    fn criteria(pattern: &str, regions: &[&str]) -> Criteria {
        Criteria {
            pattern: NamePattern::parse(pattern).unwrap(),
            min_age_ms: 7 * DAY,
            regions: regions.iter().map(|s| s.to_string()).collect(),
            now_ms: NOW,
        }
    }

    fn r(stack: &str, region: Option<&str>) -> StackRef {
        StackRef::new(stack, region)
    }

    fn old() -> Observed {
        Observed::Read(RecordSummary {
            last_modified: Some((NOW - 8 * DAY) as f64),
            has_parent_link: false,
            locked: false,
        })
    }

    fn one(stack_ref: StackRef, observed: Observed, c: &Criteria) -> Option<SkipReason> {
        let s = select(&[(stack_ref, Some(observed))], c);
        s.skipped.first().map(|k| k.reason.clone())
    }

    #[test]
    fn pattern_star_matches_any_run_including_empty() {
        let p = NamePattern::parse("pr-*").unwrap();
        assert!(p.matches("pr-"));
        assert!(p.matches("pr-123-web"));
        assert!(!p.matches("prod"));
        assert!(!p.matches("xpr-1"));
        assert!(NamePattern::parse("*-preview")
            .unwrap()
            .matches("a-b-preview"));
        assert!(NamePattern::parse("a*b*c").unwrap().matches("aXbYbZc"));
        assert!(!NamePattern::parse("a*b*c").unwrap().matches("aXbYbZ"));
        assert!(NamePattern::parse("*").unwrap().matches(""));
    }

    #[test]
    fn pattern_question_mark_matches_exactly_one_character() {
        let p = NamePattern::parse("pr-??").unwrap();
        assert!(p.matches("pr-12"));
        assert!(p.matches("pr-ü1"));
        assert!(!p.matches("pr-1"));
        assert!(!p.matches("pr-123"));
    }

    #[test]
    fn pattern_must_match_the_whole_name_case_sensitively() {
        let p = NamePattern::parse("Preview").unwrap();
        assert!(p.matches("Preview"));
        assert!(!p.matches("preview"));
        assert!(!p.matches("Preview2"));
    }

    /// The hand-written matcher `wildmatch` replaced (greedy `*`, backtracking to the
    /// last star), kept as the measure the crate must agree with.
    fn matches_before(pattern: &str, name: &str) -> bool {
        let p: Vec<char> = pattern.chars().collect();
        let s: Vec<char> = name.chars().collect();
        let (mut pi, mut si) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        while si < s.len() {
            if pi < p.len() && (p[pi] == '?' || (p[pi] != '*' && p[pi] == s[si])) {
                pi += 1;
                si += 1;
            } else if pi < p.len() && p[pi] == '*' {
                star = Some((pi, si));
                pi += 1;
            } else if let Some((sp, ss)) = star {
                pi = sp + 1;
                si = ss + 1;
                star = Some((sp, ss + 1));
            } else {
                return false;
            }
        }
        p[pi..].iter().all(|c| *c == '*')
    }

    proptest::proptest! {
        #[test]
        fn pattern_matches_as_the_hand_written_matcher_did(
            pattern in r"[ab*?ü\\\[\]-]{1,8}",
            name in r"[ab*?ü\\\[\]-]{0,10}",
        ) {
            let p = NamePattern::parse(&pattern).unwrap();
            proptest::prop_assert_eq!(p.matches(&name), matches_before(&pattern, &name));
        }
    }

    #[test]
    fn pattern_empty_is_refused() {
        assert_eq!(NamePattern::parse(""), Err(CleanupError::EmptyPattern));
    }

    #[test]
    fn duration_parses_days_hours_minutes_and_combinations() {
        assert_eq!(parse_duration_ms("7d"), Ok(7 * DAY));
        assert_eq!(parse_duration_ms("12h"), Ok(12 * 3_600_000));
        assert_eq!(parse_duration_ms("30m"), Ok(30 * 60_000));
        assert_eq!(parse_duration_ms("45s"), Ok(45_000));
        assert_eq!(parse_duration_ms("2w"), Ok(14 * DAY));
        assert_eq!(parse_duration_ms("1d12h"), Ok(DAY + 12 * 3_600_000));
    }

    #[test]
    fn duration_without_unit_or_with_unknown_unit_is_refused() {
        for bad in ["", "7", "d", "7x", "7 d", "-7d", "7.5d", "d7"] {
            assert!(
                matches!(parse_duration_ms(bad), Err(CleanupError::BadDuration(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn duration_overflow_is_refused() {
        assert!(matches!(
            parse_duration_ms("99999999999999999999d"),
            Err(CleanupError::BadDuration(_))
        ));
        assert!(matches!(
            parse_duration_ms("9999999999999w"),
            Err(CleanupError::BadDuration(_))
        ));
    }

    /// Forms `humantime` alone would take are refused: only today's shape is a duration.
    #[test]
    fn duration_takes_only_digits_and_the_five_units() {
        for bad in [
            "1d 12h", "7days", "7 days", "1ms", "1us", "1ns", "1y", "1M", "7D", "1h30", "1sec",
            "+7d", "7dd", "١d",
        ] {
            assert!(
                matches!(parse_duration_ms(bad), Err(CleanupError::BadDuration(_))),
                "{bad}"
            );
        }
        assert_eq!(parse_duration_ms(" 7d "), Ok(7 * DAY));
        assert_eq!(parse_duration_ms("007d"), Ok(7 * DAY));
        assert_eq!(parse_duration_ms("1w1d1h1m1s"), Ok(8 * DAY + 3_661_000));
        assert_eq!(
            parse_duration_ms("0d0h"),
            Err(CleanupError::ZeroDuration("0d0h".into()))
        );
    }

    #[test]
    fn duration_zero_is_refused() {
        assert!(matches!(
            parse_duration_ms("0d"),
            Err(CleanupError::ZeroDuration(_))
        ));
    }

    #[test]
    fn old_unlocked_matching_top_level_stack_is_selected() {
        let c = criteria("pr-*", &[]);
        let s = select(&[(r("pr-1", Some("eu-west-1")), Some(old()))], &c);
        assert_eq!(s.selected, vec![r("pr-1", Some("eu-west-1"))]);
        assert!(s.skipped.is_empty());
    }

    #[test]
    fn pattern_mismatch_is_skipped_without_reading() {
        let c = criteria("pr-*", &[]);
        let s = select(&[(r("prod", Some("eu-west-1")), None)], &c);
        assert_eq!(s.skipped[0].reason, SkipReason::PatternMismatch);
        assert_eq!(
            prefilter(&r("prod", Some("eu-west-1")), &c),
            Some(SkipReason::PatternMismatch)
        );
    }

    #[test]
    fn legacy_record_without_region_is_skipped() {
        let c = criteria("pr-*", &[]);
        assert_eq!(
            one(r("pr-1", None), old(), &c),
            Some(SkipReason::LegacyWithoutRegion)
        );
    }

    #[test]
    fn region_not_allowed_is_skipped_and_empty_list_allows_all() {
        let c = criteria("pr-*", &["us-east-1"]);
        assert_eq!(
            one(r("pr-1", Some("eu-west-1")), old(), &c),
            Some(SkipReason::RegionNotAllowed)
        );
        assert_eq!(one(r("pr-1", Some("us-east-1")), old(), &c), None);
        let any = criteria("pr-*", &[]);
        assert_eq!(one(r("pr-1", Some("ap-south-1")), old(), &any), None);
    }

    #[test]
    fn unreadable_record_is_skipped_with_flattened_message() {
        let c = criteria("pr-*", &[]);
        let got = one(
            r("pr-1", Some("eu-west-1")),
            Observed::Unreadable("bad\njson".into()),
            &c,
        );
        assert_eq!(
            got,
            Some(SkipReason::Unreadable {
                message: "bad json".into()
            })
        );
    }

    #[test]
    fn unread_ref_that_passes_prefilter_counts_as_unreadable() {
        let c = criteria("pr-*", &[]);
        let s = select(&[(r("pr-1", Some("eu-west-1")), None)], &c);
        assert!(matches!(s.skipped[0].reason, SkipReason::Unreadable { .. }));
        assert!(s.selected.is_empty());
    }

    #[test]
    fn nested_child_with_parent_link_is_skipped() {
        let c = criteria("pr-*", &[]);
        let child = Observed::Read(RecordSummary {
            last_modified: Some(0.0),
            has_parent_link: true,
            locked: false,
        });
        assert_eq!(
            one(r("pr-1", Some("eu-west-1")), child, &c),
            Some(SkipReason::NestedChild)
        );
    }

    #[test]
    fn nested_child_by_tilde_name_is_skipped_even_without_parent_link() {
        let c = criteria("pr-*", &[]);
        assert_eq!(
            one(r("pr-1~Db", Some("eu-west-1")), old(), &c),
            Some(SkipReason::NestedChild)
        );
    }

    #[test]
    fn locked_stack_is_skipped() {
        let c = criteria("pr-*", &[]);
        let locked = Observed::Read(RecordSummary {
            last_modified: Some(0.0),
            has_parent_link: false,
            locked: true,
        });
        assert_eq!(
            one(r("pr-1", Some("eu-west-1")), locked, &c),
            Some(SkipReason::Locked)
        );
    }

    #[test]
    fn record_without_last_modified_is_skipped() {
        let c = criteria("pr-*", &[]);
        let none = Observed::Read(RecordSummary {
            last_modified: None,
            has_parent_link: false,
            locked: false,
        });
        assert_eq!(
            one(r("pr-1", Some("eu-west-1")), none, &c),
            Some(SkipReason::NoLastModified)
        );
    }

    #[test]
    fn too_young_is_skipped_and_exact_minimum_age_is_selected() {
        let c = criteria("pr-*", &[]);
        let at = |lm: i64| {
            Observed::Read(RecordSummary {
                last_modified: Some(lm as f64),
                has_parent_link: false,
                locked: false,
            })
        };
        assert_eq!(
            one(r("pr-1", Some("eu-west-1")), at(NOW - DAY), &c),
            Some(SkipReason::TooYoung {
                age_ms: DAY,
                min_age_ms: 7 * DAY
            })
        );
        assert_eq!(
            one(r("pr-1", Some("eu-west-1")), at(NOW - 7 * DAY), &c),
            None
        );
        // A lastModified in the future is young, never selected.
        assert!(matches!(
            one(r("pr-1", Some("eu-west-1")), at(NOW + DAY), &c),
            Some(SkipReason::TooYoung { .. })
        ));
    }

    #[test]
    fn rules_apply_in_documented_order() {
        let c = criteria("pr-*", &["us-east-1"]);
        // Mismatch wins over everything; region over unreadable; child over lock.
        assert_eq!(
            one(r("prod~X", None), Observed::Unreadable("x".into()), &c),
            Some(SkipReason::PatternMismatch)
        );
        assert_eq!(
            one(
                r("pr-1", Some("eu-west-1")),
                Observed::Unreadable("x".into()),
                &c
            ),
            Some(SkipReason::RegionNotAllowed)
        );
        let child_locked = Observed::Read(RecordSummary {
            last_modified: None,
            has_parent_link: true,
            locked: true,
        });
        assert_eq!(
            one(r("pr-1", Some("us-east-1")), child_locked, &c),
            Some(SkipReason::NestedChild)
        );
    }

    #[test]
    fn skip_reasons_serialize_kebab_case_with_details() {
        let v = serde_json::to_value(SkipReason::TooYoung {
            age_ms: 1,
            min_age_ms: 2,
        })
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({"reason": "too-young", "ageMs": 1, "minAgeMs": 2})
        );
        let v = serde_json::to_value(SkipReason::LegacyWithoutRegion).unwrap();
        assert_eq!(v, serde_json::json!({"reason": "legacy-without-region"}));
    }

    #[test]
    fn batches_cover_the_selection_once_in_order_and_end_empty() {
        let mut done = 0;
        let mut seen = Vec::new();
        loop {
            let b = next_batch(done, 95);
            if b.is_empty() {
                break;
            }
            assert!(b.len() <= BATCH_SIZE);
            seen.extend(b.clone());
            done = b.end;
        }
        assert_eq!(seen, (0..95).collect::<Vec<_>>());
        assert!(next_batch(0, 0).is_empty());
        assert!(next_batch(200, 95).is_empty());
    }

    #[test]
    fn a_failed_destroys_cause_is_cut_to_one_bounded_line() {
        let cause = format!("line one\n{}", "x".repeat(40_000));
        let r = bounded_failure("pr-1", Some("us-east-1"), "States.TaskFailed", &cause);
        assert!(r.failed());
        let c = r.cause.unwrap();
        assert_eq!(c.chars().count(), crate::notify::MAX_LINE_CHARS);
        assert!(c.starts_with("line one x"), "{c}");
        assert!(c.ends_with('…'));
        assert_eq!(r.error.as_deref(), Some("States.TaskFailed"));
    }
}
