//! docs/state-views.md, "Order" ordering.
//!
//! - [`locale_cmp`]: JavaScript `a.localeCompare(b)` with no locale, which V8 answers
//!   with ICU's root collation (tertiary strength): case-insensitive first, lower case
//!   before upper case on a tie, punctuation and digits before letters. Backed by
//!   `icu_collator` with its compiled root data.
//! - [`code_unit_cmp`]: JavaScript `<` on strings (UTF-16 code units), used for stack
//!   references, where a region-less (legacy) ref sorts after every region.

use std::cmp::Ordering;
use std::sync::OnceLock;

use icu_collator::options::CollatorOptions;
use icu_collator::{Collator, CollatorBorrowed};

fn collator() -> Option<&'static CollatorBorrowed<'static>> {
    static COLLATOR: OnceLock<Option<CollatorBorrowed<'static>>> = OnceLock::new();
    COLLATOR
        .get_or_init(|| Collator::try_new(Default::default(), CollatorOptions::default()).ok())
        .as_ref()
}

/// `a.localeCompare(b)` under the root collation.
pub fn locale_cmp(a: &str, b: &str) -> Ordering {
    match collator() {
        Some(c) => c.compare(a, b),
        // The compiled data always loads; keep a total order regardless.
        None => a
            .to_lowercase()
            .cmp(&b.to_lowercase())
            .then_with(|| b.cmp(a)),
    }
}

/// Stable sort of `(key, value)` pairs by [`locale_cmp`] on the key, like
/// `Array.prototype.sort` with a `localeCompare` comparator (stable since ES2019).
pub fn sort_by_locale<K: AsRef<str>, V>(items: &mut [(K, V)]) {
    items.sort_by(|(a, _), (b, _)| locale_cmp(a.as_ref(), b.as_ref()));
}

/// JavaScript `<` on strings: compares UTF-16 code units.
pub fn code_unit_cmp(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// docs/state-views.md, "Order" order of stack references: by name, then by region (code units), a
/// missing region after every present one.
pub fn ref_cmp(
    a_name: &str,
    a_region: Option<&str>,
    b_name: &str,
    b_region: Option<&str>,
) -> Ordering {
    code_unit_cmp(a_name, b_name).then_with(|| match (a_region, b_region) {
        (Some(a), Some(b)) => code_unit_cmp(a, b),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locale_compare_orders_lower_before_upper_case_insensitively() {
        let mut v = vec![("b", ()), ("A", ()), ("a", ()), ("B", ())];
        sort_by_locale(&mut v);
        let keys: Vec<_> = v.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["a", "A", "b", "B"]);
    }

    #[test]
    fn locale_compare_puts_punctuation_and_digits_before_letters() {
        let mut v = vec![("b", ()), ("1a", ()), ("_x", ()), ("a", ())];
        sort_by_locale(&mut v);
        let keys: Vec<_> = v.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["_x", "1a", "a", "b"]);
    }

    #[test]
    fn code_unit_order_differs_from_code_point_order_above_bmp() {
        // U+FF61 is one unit 0xFF61; U+10000 is 0xD800 0xDC00: JS puts U+10000 first.
        assert_eq!(code_unit_cmp("\u{10000}", "\u{FF61}"), Ordering::Less);
        assert_eq!(code_unit_cmp("B", "a"), Ordering::Less);
    }

    #[test]
    fn legacy_ref_sorts_after_every_region_of_the_same_name() {
        assert_eq!(
            ref_cmp("A", None, "A", Some("us-west-2")),
            Ordering::Greater
        );
        assert_eq!(ref_cmp("A", None, "B", Some("us-east-1")), Ordering::Less);
    }
}
