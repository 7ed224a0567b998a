//! The S3 key layout of cdkd state (docs/state-and-lock.md, "Key layout") and the ordering of stack refs
//! (docs/state-views.md, "Order").

use std::cmp::Ordering;

/// Default `--state-prefix`.
pub const DEFAULT_PREFIX: &str = "cdkd";

/// One state record's identity: a stack and its record region (`None` for a legacy
/// region-less record).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StackRef {
    pub stack: String,
    pub region: Option<String>,
}

impl StackRef {
    pub fn new(stack: impl Into<String>, region: Option<impl Into<String>>) -> Self {
        StackRef {
            stack: stack.into(),
            region: region.map(Into::into),
        }
    }
}

/// Compares strings by UTF-16 code units, like JS `<`.
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

impl Ord for StackRef {
    /// docs/state-views.md, "Order": stack name, then region, both by UTF-16 code units; a region-less
    /// ref sorts after every region of the same name.
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_utf16(&self.stack, &other.stack).then_with(|| match (&self.region, &other.region) {
            (Some(a), Some(b)) => cmp_utf16(a, b),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        })
    }
}

impl PartialOrd for StackRef {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A stack reference as listed, borrowed: a region-less one is a legacy v1 record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefView<'a> {
    pub stack: &'a str,
    pub region: Option<&'a str>,
}

/// `{prefix}/{stack}/{region}/state.json`.
pub fn state_key(prefix: &str, stack: &str, region: &str) -> String {
    format!("{prefix}/{stack}/{region}/state.json")
}

/// `{prefix}/{stack}/state.json` (legacy v1, read-only).
pub fn legacy_state_key(prefix: &str, stack: &str) -> String {
    format!("{prefix}/{stack}/state.json")
}

/// `{prefix}/{stack}/{region}/lock.json`, or the legacy `{prefix}/{stack}/lock.json`
/// when `region` is `None`.
pub fn lock_key(prefix: &str, stack: &str, region: Option<&str>) -> String {
    match region {
        Some(region) => format!("{prefix}/{stack}/{region}/lock.json"),
        None => format!("{prefix}/{stack}/lock.json"),
    }
}

/// `{prefix}/_index/{region}/exports.json`.
pub fn exports_index_key(prefix: &str, region: &str) -> String {
    format!("{prefix}/_index/{region}/exports.json")
}

/// `{prefix}/{stack}/{region}/rollback-journal.json`.
pub fn rollback_journal_key(prefix: &str, stack: &str, region: &str) -> String {
    format!("{prefix}/{stack}/{region}/rollback-journal.json")
}

/// Where a destroy keeps a destroyed record's `orphans` entries (resources still in AWS
/// that no record lists): `{prefix}/_orphans/{stack}/{region}/{run_id}.json`, outside
/// `_runs/` so that neither `runs prune` nor the lifecycle rule deletes the only list of
/// them (docs/runs.md, "The objects a run writes", docs/destroy.md, "How a stack finishes"). A CloudFormation stack name cannot start
/// with `_`, so no record shares the folder.
pub fn orphans_key(prefix: &str, stack: &str, region: &str, run_id: &str) -> String {
    format!("{prefix}/_orphans/{stack}/{region}/{run_id}.json")
}

/// A run's folder, where its artifacts live (plan, progress, approval, report,
/// transient uploads): `{prefix}/_runs/{run_id}`.
pub fn run_prefix(prefix: &str, run_id: &str) -> String {
    format!("{prefix}/_runs/{run_id}")
}

/// A nested child's stack name: `{parent}~{logical_id}`.
pub fn child_stack_name(parent: &str, logical_id: &str) -> String {
    format!("{parent}~{logical_id}")
}

/// The `ListObjectsV2` prefix: `{prefix}/`.
pub fn list_prefix(prefix: &str) -> String {
    format!("{prefix}/")
}

/// What a listed key names (docs/state-and-lock.md, "Listing the records" step 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListedKey {
    /// `{prefix}/{stack}/{region}/state.json`.
    State { stack: String, region: String },
    /// `{prefix}/{stack}/state.json`; the region is inside the body.
    LegacyState { stack: String },
}

/// Classifies a listed key: only keys ending `/state.json` under `{prefix}/` count; 3
/// segments is a region-scoped record (skipped if a segment is empty), 2 a legacy
/// record (skipped if the stack is empty), any other depth is ignored.
pub fn parse_listed_key(prefix: &str, key: &str) -> Option<ListedKey> {
    Some(match split_listed(prefix, key, "state.json")? {
        (stack, Some(region)) => ListedKey::State { stack, region },
        (stack, None) => ListedKey::LegacyState { stack },
    })
}

/// A listed lock key by the same rules (docs/state-views.md, "A lock left without a record"): `{prefix}/{stack}/{region}/lock.json`
/// is the lock of `(stack, region)`, `{prefix}/{stack}/lock.json` the legacy lock of `stack`.
pub fn parse_listed_lock_key(prefix: &str, key: &str) -> Option<StackRef> {
    let (stack, region) = split_listed(prefix, key, "lock.json")?;
    Some(StackRef { stack, region })
}

/// `(stack, region)` of `{prefix}/{stack}/{region}/{file}`, `(stack, None)` of
/// `{prefix}/{stack}/{file}`; any other depth, or an empty segment, is nothing.
fn split_listed(prefix: &str, key: &str, file: &str) -> Option<(String, Option<String>)> {
    let rest = key.strip_prefix(&list_prefix(prefix))?;
    let segments: Vec<&str> = rest.split('/').collect();
    match segments.as_slice() {
        [stack, region, f] if *f == file && !stack.is_empty() && !region.is_empty() => {
            Some(((*stack).to_string(), Some((*region).to_string())))
        }
        [stack, f] if *f == file && !stack.is_empty() => Some(((*stack).to_string(), None)),
        _ => None,
    }
}

/// A stack name given on the command line that no cdkd stack can have
/// (docs/cli.md, "Stack names"): refused as a usage error before any AWS call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StackNameError {
    Empty,
    Invisible {
        /// The name flattened (docs/state-views.md, "Flatten (diagnostics)").
        shown: String,
        what: &'static str,
        code: u32,
    },
}

impl std::error::Error for StackNameError {}

/// Checks a stack name argument: non-empty, and free of control characters (C0, DEL, C1:
/// a newline, an escape) and of the other characters that do not print (Unicode Cf, Zl,
/// Zp: bidi controls, zero-width characters, line and paragraph separators). Nested
/// children (`Parent~Child`), spaces and printable non-ASCII text are accepted.
pub fn check_stack_name(name: &str) -> Result<(), StackNameError> {
    if name.is_empty() {
        return Err(StackNameError::Empty);
    }
    match name.chars().find(|c| crate::json::is_invisible(*c)) {
        None => Ok(()),
        Some(c) => Err(StackNameError::Invisible {
            shown: crate::text::or_unrenderable(crate::text::flatten_str(name)),
            what: if c.is_control() {
                "a control character"
            } else {
                "an invisible formatting character"
            },
            code: c as u32,
        }),
    }
}

/// The locks that have no record beside them (docs/state-views.md, "A lock left without a record"), in `locks` order:
/// the lock of `(stack, region)` when no record ref is `(stack, region)` (a legacy record
/// whose body names that region counts as one), the legacy lock of `stack` when `stack`
/// has no legacy record. `legacy_stacks`: the stacks that have a legacy record key.
pub fn locks_without_record(
    locks: &[StackRef],
    records: &[StackRef],
    legacy_stacks: &[String],
) -> Vec<StackRef> {
    locks
        .iter()
        .filter(|l| match &l.region {
            Some(_) => !records.contains(l),
            None => !legacy_stacks.contains(&l.stack),
        })
        .cloned()
        .collect()
}

/// A listed key that will not decode under `EncodingType=url`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyError {
    BadEscape(String),
    NotUtf8(String),
}

impl std::error::Error for KeyError {}

/// Decodes a key listed with `EncodingType=url`: `+` becomes a space first, then
/// percent-escapes are decoded. A malformed escape or non-UTF-8 result is an error
/// (the listing is refused; the message is flattened).
pub fn decode_url_listed_key(raw: &str) -> Result<String, KeyError> {
    let shown = || crate::text::flatten_str(raw);
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| KeyError::BadEscape(shown()))?;
                out.push(hex);
                i += 3;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| KeyError::NotUtf8(shown()))
}

/// The partition of `region` and its DNS suffix: `("aws", "amazonaws.com")`,
/// `("aws-cn", "amazonaws.com.cn")` for `cn-*`, `("aws-us-gov", "amazonaws.com")` for
/// `us-gov-*` (what `AWS::Partition` and `AWS::URLSuffix` resolve to).
pub fn partition(region: &str) -> (&'static str, &'static str) {
    if region.starts_with("cn-") {
        ("aws-cn", "amazonaws.com.cn")
    } else if region.starts_with("us-gov-") {
        ("aws-us-gov", "amazonaws.com")
    } else {
        ("aws", "amazonaws.com")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_layout_s_and_l_2() {
        assert_eq!(
            state_key("cdkd", "App", "us-east-1"),
            "cdkd/App/us-east-1/state.json"
        );
        assert_eq!(legacy_state_key("cdkd", "App"), "cdkd/App/state.json");
        assert_eq!(
            lock_key("cdkd", "App", Some("us-east-1")),
            "cdkd/App/us-east-1/lock.json"
        );
        assert_eq!(lock_key("cdkd", "App", None), "cdkd/App/lock.json");
        assert_eq!(
            exports_index_key("cdkd", "eu-west-1"),
            "cdkd/_index/eu-west-1/exports.json"
        );
        assert_eq!(
            rollback_journal_key("cdkd", "App", "us-east-1"),
            "cdkd/App/us-east-1/rollback-journal.json"
        );
        assert_eq!(
            orphans_key("cdkd", "App", "us-east-1", "destroy-App-1"),
            "cdkd/_orphans/App/us-east-1/destroy-App-1.json"
        );
        // Not a record, nor under the run folders prune and the lifecycle rule delete.
        let k = orphans_key("cdkd", "App", "us-east-1", "destroy-App-1");
        assert_eq!(parse_listed_key("cdkd", &k), None);
        assert!(!k.starts_with(&run_prefix("cdkd", "")));
        assert_eq!(child_stack_name(&child_stack_name("A", "B"), "C"), "A~B~C");
        assert_eq!(list_prefix("cdkd"), "cdkd/");
    }

    #[test]
    fn empty_prefix_is_taken_literally() {
        assert_eq!(state_key("", "App", "r"), "/App/r/state.json");
        assert_eq!(
            parse_listed_key("", "/App/r/state.json"),
            Some(ListedKey::State {
                stack: "App".into(),
                region: "r".into()
            })
        );
    }
}
