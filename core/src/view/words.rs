//! Small pieces every view shares, so each is written once: a count with its noun
//! (`1 resource`, `2 resources`), a list of non-zero counts (`3 deleted, 1 failed`),
//! "N of M" (`1 of 2 destroys`), a stack with its region (`Shop (us-east-1)`), and a
//! template value, bounded (`describe_value`), and a lock's expiry and a duration
//! (`expires in 29m55s`, `1m0s`).
//!
//! Texts the docs fix word for word keep their own spelling (`<n> of <m> stack(s) could
//! not be fully read …`, docs/state-views.md, "--long"); these helpers are for cdkd-flow's
//! own views.

use serde_json::Value;

use crate::js::js_f64;
use crate::text::{flatten_str, or_unrenderable, strip};

/// `""` for one, `"s"` otherwise: the suffix of a regular English plural.
pub fn plural_s(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `1 resource`, `0 resources`, `2 resources` (`noun` takes a plain `s`).
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    format!("{n} {noun}{}", plural_s(n))
}

/// `1 of 2 destroys`: the noun agrees with the total.
pub fn n_of_m(n: impl Into<u64>, m: impl Into<u64>, noun: &str) -> String {
    let m = m.into();
    format!("{} of {}", n.into(), count(m, noun))
}

/// The non-zero counts as `<n> <word>`, joined by `, ` in the order given; `None` when
/// every count is zero.
pub fn nonzero_counts(parts: &[(u32, &str)]) -> Option<String> {
    let s: Vec<String> = parts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, w)| format!("{n} {w}"))
        .collect();
    (!s.is_empty()).then(|| s.join(", "))
}

/// `Shop (us-east-1)`: both stripped of control characters, each shown as
/// `<unrenderable>` when nothing printable is left.
pub fn stack_region(stack: &str, region: &str) -> String {
    format!(
        "{} ({})",
        or_unrenderable(strip(stack)),
        or_unrenderable(strip(region))
    )
}

/// A bounded description of a template value for a message (lists previewed up to 120
/// characters).
pub fn describe_value(v: &Value) -> String {
    let text = crate::json::stringify(v).unwrap_or_else(|| "(unserializable)".into());
    let flat = flatten_str(&text);
    if flat.chars().count() > 120 {
        format!("{}…", flat.chars().take(120).collect::<String>())
    } else {
        flat
    }
}

/// `expires in <d>` / `expired <d> ago` / `expires at an unknown time` (docs/state-and-lock.md
/// "The contention refusal"), of an expiry from `lock::lock_expiry_ms` and `now_ms` on the same (S3's) clock.
pub fn expiry_phrase(expiry_ms: Option<f64>, now_ms: i64) -> String {
    match expiry_ms {
        None => "expires at an unknown time".to_string(),
        Some(e) => {
            let left = e - now_ms as f64;
            if left > 0.0 {
                format!("expires in {}", format_duration_f64(left))
            } else {
                format!("expired {} ago", format_duration_f64(-left))
            }
        }
    }
}

/// `<n>s` below a minute, else `<m>m<s>s` (minutes unbounded), from whole seconds =
/// floor(ms / 1000).
pub fn format_duration_ms(ms: i64) -> String {
    format_duration_f64(ms as f64)
}

fn format_duration_f64(ms: f64) -> String {
    let secs = (ms / 1000.0).floor();
    if secs < 60.0 {
        format!("{}s", js_f64(secs))
    } else {
        let m = (secs / 60.0).floor();
        let s = secs - m * 60.0;
        format!("{}m{}s", js_f64(m), js_f64(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_words_one_resource_two_resources() {
        assert_eq!(count(1u32, "resource"), "1 resource");
        assert_eq!(count(2u32, "resource"), "2 resources");
        assert_eq!(count(0u32, "stack"), "0 stacks");
        assert_eq!(count(1usize as u64, "wave"), "1 wave");
    }

    #[test]
    fn n_of_m_agrees_with_the_total() {
        assert_eq!(n_of_m(1u32, 1u32, "destroy"), "1 of 1 destroy");
        assert_eq!(n_of_m(1u32, 2u32, "destroy"), "1 of 2 destroys");
    }

    #[test]
    fn nonzero_counts_skip_zeros_and_keep_the_order() {
        assert_eq!(
            nonzero_counts(&[(3, "deleted"), (0, "retained"), (1, "failed")]).as_deref(),
            Some("3 deleted, 1 failed")
        );
        assert_eq!(nonzero_counts(&[(0, "deleted")]), None);
    }

    #[test]
    fn stack_region_label_names_what_strips_to_nothing() {
        assert_eq!(stack_region("Shop", "us-east-1"), "Shop (us-east-1)");
        assert_eq!(
            stack_region("\u{1b}", "us-east-1"),
            "<unrenderable> (us-east-1)"
        );
    }

    #[test]
    fn describe_previews_long_lists_to_120_characters() {
        let v = serde_json::json!(vec!["x".repeat(50); 5]);
        assert_eq!(describe_value(&v).chars().count(), 121);
    }
}
