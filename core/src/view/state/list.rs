//! docs/state-views.md, "Plain" and "--long --json" `state list`: plain rows, `--json`, `--long` and `--long --json`.

use serde_json::{Map, Value};

use crate::json::json_payload;
use crate::text::{display_ident_str, or_unrenderable, printable_str, DEFAULT_CAP, STACK_NAME_CAP};
use crate::time::iso_timestamp_or_none;
use crate::view::state::collate::ref_cmp;
use crate::view::{join_lines, Rendered};

/// Fixed reason: the record read failed (invalid JSON, unsupported version, S3 error).
pub const STATE_READ_FAILED: &str =
    "state record could not be read; run `cdkd-flow state show` for the error";
/// Fixed reason: the record's `resources` is present and not a JSON object.
pub const RESOURCES_MALFORMED: &str =
    "resources is not a JSON object; run `cdkd-flow state show --json` to see the record";
/// Fixed reason: the lock read failed for a region-scoped ref.
pub const LOCK_READ_FAILED: &str =
    "lock could not be read; run `cdkd-flow state show` for the error";
/// Fixed reason: the lock read failed for a legacy ref (`state show` refuses those
/// before reading the lock, so no command is named).
pub const LEGACY_LOCK_READ_FAILED: &str = "lock could not be read";

/// The marker of a stack whose lock has no record beside it (docs/state-views.md, "A lock left without a record").
pub const LOCK_WITHOUT_RECORD: &str = "[lock without record]";
/// `--long`'s resources reason of such a stack.
pub const NO_RECORD: &str = "none (no state record; only its lock remains)";

/// A stack reference as listed (the domain's, `crate::keys`; named here too, where the
/// listing views take it).
pub use crate::keys::RefView;

/// docs/state-views.md, "Plain" one row: `<stack>` or `<stack> (<region>)`, both rendered by "Identifiers (rows of state list, prompts, the contention refusal)".
pub fn format_ref(r: RefView<'_>) -> String {
    let name = display_ident_str(r.stack, STACK_NAME_CAP);
    match r.region {
        Some(region) if !region.is_empty() => {
            format!("{name} ({})", display_ident_str(region, DEFAULT_CAP))
        }
        _ => name,
    }
}

/// The records and the locks without one (docs/state-views.md, "A lock left without a record"), sorted together;
/// `true` marks a lock without a record.
fn merged<'a>(refs: &[RefView<'a>], lone_locks: &[RefView<'a>]) -> Vec<(RefView<'a>, bool)> {
    let mut v: Vec<(RefView<'a>, bool)> = refs
        .iter()
        .map(|r| (*r, false))
        .chain(lone_locks.iter().map(|r| (*r, true)))
        .collect();
    v.sort_by(|(a, _), (b, _)| ref_cmp(a.stack, a.region, b.stack, b.region));
    v
}

/// A row, with the marker when it is a lock without a record.
fn marked(r: RefView<'_>, lone: bool) -> String {
    if lone {
        format!("{} {LOCK_WITHOUT_RECORD}", format_ref(r))
    } else {
        format_ref(r)
    }
}

/// `state list` (plain): one row per ref, sorted; nothing at all when empty.
pub fn list_plain(refs: &[RefView<'_>]) -> Rendered {
    list_plain_with_locks(refs, &[])
}

/// `state list` (plain) with the locks that have no record (docs/state-views.md, "A lock left without a record"):
/// their rows carry [`LOCK_WITHOUT_RECORD`].
pub fn list_plain_with_locks(refs: &[RefView<'_>], lone_locks: &[RefView<'_>]) -> Rendered {
    let lines: Vec<String> = merged(refs, lone_locks)
        .into_iter()
        .map(|(r, lone)| marked(r, lone))
        .collect();
    Rendered::new(join_lines(&lines), Vec::new())
}

/// `state list --json`: `[{"stackName", "region"}]`, raw values, sorted.
pub fn list_json(refs: &[RefView<'_>]) -> Rendered {
    list_json_with_locks(refs, &[])
}

/// `state list --json` with the locks that have no record: theirs carry
/// `"lockWithoutRecord": true`.
pub fn list_json_with_locks(refs: &[RefView<'_>], lone_locks: &[RefView<'_>]) -> Rendered {
    let items = merged(refs, lone_locks)
        .into_iter()
        .map(|(r, lone)| {
            let mut m = Map::new();
            m.insert("stackName".into(), Value::String(r.stack.to_string()));
            m.insert(
                "region".into(),
                r.region
                    .map_or(Value::Null, |s| Value::String(s.to_string())),
            );
            if lone {
                m.insert("lockWithoutRecord".into(), Value::Bool(true));
            }
            Value::Object(m)
        })
        .collect();
    Rendered::new(json_payload(&Value::Array(items)), Vec::new())
}

/// What reading one ref's record gave.
#[derive(Debug, Clone, Copy)]
pub enum RecordRead<'a> {
    /// Not read (a legacy region-less ref) or vanished: counts as 0 resources.
    NotFound,
    /// The read failed (S3 error, invalid JSON, unsupported version, non-object root).
    Failed,
    Found(&'a Map<String, Value>),
    /// No record was listed: the row is a lock without a record (docs/state-views.md, "A lock left without a record").
    LockWithoutRecord,
}

/// What reading one ref's lock gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockRead {
    Unlocked,
    /// A lock object was read, expired or not.
    Locked,
    Failed,
}

/// One `--long` input row.
#[derive(Debug, Clone, Copy)]
pub struct LongInput<'a> {
    pub r: RefView<'a>,
    pub record: RecordRead<'a>,
    pub lock: LockRead,
}

/// One `--long` row, as computed (the `--long --json` object).
#[derive(Debug, Clone, PartialEq)]
pub struct LongRow {
    pub stack_name: String,
    pub region: Option<String>,
    pub resource_count: Option<usize>,
    pub last_modified: Option<String>,
    pub locked: Option<bool>,
    pub state_read_error: Option<&'static str>,
    pub lock_read_error: Option<&'static str>,
    /// A lock without a record (docs/state-views.md, "A lock left without a record").
    pub lock_without_record: bool,
}

/// docs/state-views.md, "--long" resource count: absent/`null`
/// → 0, a map → its size, anything else → none.
pub fn resource_count(record: &Map<String, Value>) -> Option<usize> {
    match record.get("resources") {
        None | Some(Value::Null) => Some(0),
        Some(Value::Object(m)) => Some(m.len()),
        Some(_) => None,
    }
}

/// Computes one `--long` row from its two independent reads.
pub fn long_row(input: &LongInput<'_>) -> LongRow {
    let (resource_count, last_modified, state_read_error) = match input.record {
        RecordRead::NotFound => (Some(0), None, None),
        RecordRead::LockWithoutRecord => (None, None, None),
        RecordRead::Failed => (None, None, Some(STATE_READ_FAILED)),
        RecordRead::Found(rec) => {
            let count = resource_count(rec);
            let reason = count.is_none().then_some(RESOURCES_MALFORMED);
            (
                count,
                iso_timestamp_or_none(rec.get("lastModified")),
                reason,
            )
        }
    };
    let (locked, lock_read_error) = match input.lock {
        LockRead::Unlocked => (Some(false), None),
        LockRead::Locked => (Some(true), None),
        LockRead::Failed if input.r.region.is_some() => (None, Some(LOCK_READ_FAILED)),
        LockRead::Failed => (None, Some(LEGACY_LOCK_READ_FAILED)),
    };
    LongRow {
        stack_name: input.r.stack.to_string(),
        region: input.r.region.map(str::to_string),
        resource_count,
        last_modified,
        locked,
        state_read_error,
        lock_read_error,
        lock_without_record: matches!(input.record, RecordRead::LockWithoutRecord),
    }
}

fn long_rows(inputs: &[LongInput<'_>]) -> (Vec<LongRow>, Vec<String>) {
    let mut inputs = inputs.to_vec();
    inputs.sort_by(|a, b| ref_cmp(a.r.stack, a.r.region, b.r.stack, b.r.region));
    let rows: Vec<LongRow> = inputs.iter().map(long_row).collect();
    let degraded = rows
        .iter()
        .filter(|r| r.state_read_error.is_some() || r.lock_read_error.is_some())
        .count();
    let warnings = if degraded > 0 {
        vec![format!(
            "{degraded} of {} stack(s) could not be fully read or counted; their rows say why.",
            rows.len()
        )]
    } else {
        Vec::new()
    };
    (rows, warnings)
}

/// `state list --long` (text).
pub fn list_long_text(inputs: &[LongInput<'_>]) -> Rendered {
    let (rows, warnings) = long_rows(inputs);
    let mut lines = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            lines.push(String::new());
        }
        lines.push(marked(
            RefView {
                stack: &row.stack_name,
                region: row.region.as_deref(),
            },
            row.lock_without_record,
        ));
        let region = match row.region.as_deref() {
            None => "(legacy)".to_string(),
            Some(r) => or_unrenderable(printable_str(r)),
        };
        lines.push(format!("  Region: {region}"));
        lines.push(match (row.state_read_error, row.resource_count) {
            _ if row.lock_without_record => format!("  Resources: {NO_RECORD}"),
            (Some(reason), _) => format!("  Resources: unknown ({reason})"),
            (None, n) => format!("  Resources: {}", n.unwrap_or(0)),
        });
        lines.push(format!(
            "  Last Modified: {}",
            row.last_modified.as_deref().unwrap_or("unknown")
        ));
        lines.push(match (row.lock_read_error, row.locked) {
            (Some(reason), _) => format!("  Lock: unknown ({reason})"),
            (None, Some(true)) => "  Lock: locked".to_string(),
            (None, _) => "  Lock: unlocked".to_string(),
        });
    }
    Rendered::new(join_lines(&lines), warnings)
}

fn opt_str(s: Option<&str>) -> Value {
    s.map_or(Value::Null, |s| Value::String(s.to_string()))
}

/// `state list --long --json`: objects with exactly the keys `stackName, region,
/// resourceCount, lastModified, locked, stateReadError, lockReadError`, and
/// `lockWithoutRecord: true` last on a lock without a record.
pub fn list_long_json(inputs: &[LongInput<'_>]) -> Rendered {
    let (rows, warnings) = long_rows(inputs);
    let items = rows
        .into_iter()
        .map(|row| {
            let mut m = Map::new();
            m.insert("stackName".into(), Value::String(row.stack_name));
            m.insert("region".into(), opt_str(row.region.as_deref()));
            m.insert(
                "resourceCount".into(),
                row.resource_count
                    .map_or(Value::Null, |n| Value::from(n as u64)),
            );
            m.insert("lastModified".into(), opt_str(row.last_modified.as_deref()));
            m.insert("locked".into(), row.locked.map_or(Value::Null, Value::Bool));
            m.insert("stateReadError".into(), opt_str(row.state_read_error));
            m.insert("lockReadError".into(), opt_str(row.lock_read_error));
            if row.lock_without_record {
                m.insert("lockWithoutRecord".into(), Value::Bool(true));
            }
            Value::Object(m)
        })
        .collect();
    Rendered::new(json_payload(&Value::Array(items)), warnings)
}
