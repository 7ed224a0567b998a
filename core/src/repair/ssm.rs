//! Public SSM parameters embedded in a longer string (docs/repairs.md, "Public SSM parameters inside a longer value").
//!
//! A record's `properties` may hold `https://{{resolve:ssm:/app/host}}/health` (an old
//! import, an old writer, a hand edit). Whether the readback may replace that text
//! depends on the parameter's type, which only `ssm:GetParameter` (without decryption)
//! can tell. The flow, all but the fetch pure:
//!
//! 1. [`SsmScope::for_record`] decides whether calls may be made at all;
//! 2. [`ssm_needs`] / [`ssm_needs_for_record`] list the parameter names to fetch;
//! 3. the caller fetches each once, in the stack's region, and records an
//!    [`SsmAnswer`] per name in [`SsmAnswers`];
//! 4. the `redact` module's `redact_by_position` consults the answers through
//!    [`mixed_leaf`].
//!
//! A reference that is the whole value never needs a call: position alone decides it.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::dynref::{self, DynRef};

/// `observedBaselineRefused === true`: `cdkd import` refused this resource's baseline,
/// and no writer may fill one in (neither the refresh nor the SSM redaction).
pub fn is_baseline_refused(entry: &Value) -> bool {
    entry.get("observedBaselineRefused") == Some(&Value::Bool(true))
}

/// The type `GetParameter` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    String,
    StringList,
    SecureString,
    /// A type this code does not know; treated like `SecureString`.
    Other,
}

impl ParamType {
    /// From the SDK's type string (`String`, `StringList`, `SecureString`).
    pub fn from_aws(s: &str) -> Self {
        match s {
            "String" => ParamType::String,
            "StringList" => ParamType::StringList,
            "SecureString" => ParamType::SecureString,
            _ => ParamType::Other,
        }
    }

    /// Public configuration: the value may appear in a baseline.
    pub fn is_public(self) -> bool {
        matches!(self, ParamType::String | ParamType::StringList)
    }
}

/// What one `GetParameter` call (with `WithDecryption: false`) answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SsmAnswer {
    Parameter {
        param_type: ParamType,
        value: String,
    },
    /// Any failure, a missing `ssm:GetParameter` permission included.
    Failed,
}

/// Whether this stack's embedded SSM references may be looked up at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SsmScope {
    /// The parameter might live in another region than the stack's: no call is made
    /// and every embedded reference keeps its text.
    pub may_cross_region: bool,
}

impl SsmScope {
    /// The scope of a record in `stack_region`. `ancestors` are the records of a nested
    /// child's parent chain, nearest first; `None` when the chain could not be read whole
    /// (ignored for a stack that is not a nested child).
    pub fn for_record(
        record: &Map<String, Value>,
        stack_region: &str,
        ancestors: Option<&[&Map<String, Value>]>,
    ) -> Self {
        SsmScope {
            may_cross_region: may_read_other_region(record, stack_region, ancestors),
        }
    }
}

/// True when the stack might read from another region: an `imports` or `outputReads`
/// entry whose `sourceRegion` is not `stack_region` (or cannot be read, or the field is
/// not a list), or a nested child (`parentStack` present) whose ancestors are not all
/// known to read only `stack_region`.
pub fn may_read_other_region(
    record: &Map<String, Value>,
    stack_region: &str,
    ancestors: Option<&[&Map<String, Value>]>,
) -> bool {
    if reads_other_region(record, stack_region) {
        return true;
    }
    if !record.contains_key("parentStack") {
        return false;
    }
    match ancestors {
        None => true,
        Some(chain) => chain.is_empty() || chain.iter().any(|a| ancestor_crosses(a, stack_region)),
    }
}

fn ancestor_crosses(ancestor: &Map<String, Value>, stack_region: &str) -> bool {
    ancestor.get("region").and_then(Value::as_str) != Some(stack_region)
        || reads_other_region(ancestor, stack_region)
}

fn reads_other_region(record: &Map<String, Value>, stack_region: &str) -> bool {
    ["imports", "outputReads"]
        .iter()
        .any(|field| match record.get(*field) {
            None | Some(Value::Null) => false,
            Some(Value::Array(entries)) => entries
                .iter()
                .any(|e| e.get("sourceRegion").and_then(Value::as_str) != Some(stack_region)),
            Some(_) => true,
        })
}

/// The region an SSM parameter ARN names (`arn:<partition>:ssm:<region>:…`), when the
/// reference is an ARN with a non-empty region field.
pub fn arn_region(name: &str) -> Option<&str> {
    let mut parts = name.split(':');
    if parts.next() != Some("arn") {
        return None;
    }
    let region = parts.nth(2)?;
    (!region.is_empty()).then_some(region)
}

/// True when the reference must keep its text without a call: the scope may cross
/// regions, or the reference is an ARN naming a region.
pub fn needs_no_call(name: &str, scope: SsmScope) -> bool {
    scope.may_cross_region || arn_region(name).is_some()
}

/// The embedded public `ssm` references of a mixed leaf, when the leaf could ever take
/// the readback: every reference in it well formed and public `ssm`. `None` otherwise
/// (the leaf keeps the record's text whatever SSM says).
fn public_refs(text: &str) -> Option<Vec<DynRef<'_>>> {
    if !dynref::all_well_formed(text) || dynref::whole_reference(text).is_some() {
        return None;
    }
    let refs = dynref::references(text);
    (!refs.is_empty() && refs.iter().all(|r| r.service == "ssm")).then_some(refs)
}

/// Parameter names to fetch for one `properties` value: each embedded `ssm` reference of
/// a leaf that could take the readback, once, in first-seen order; none when the scope
/// forbids calls.
pub fn ssm_needs(source: &Value, scope: SsmScope) -> Vec<String> {
    let mut out = Vec::new();
    collect_needs(source, scope, &mut out);
    out
}

/// [`ssm_needs`] over every resource of a record that refresh-observed would read
/// (entries marked `observedBaselineRefused` are skipped), deduplicated.
pub fn ssm_needs_for_record(record: &Map<String, Value>, scope: SsmScope) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(Value::Object(resources)) = record.get("resources") {
        for entry in resources.values() {
            if is_baseline_refused(entry) {
                continue;
            }
            if let Some(props) = entry.get("properties") {
                collect_needs(props, scope, &mut out);
            }
        }
    }
    out
}

fn collect_needs(v: &Value, scope: SsmScope, out: &mut Vec<String>) {
    match v {
        Value::String(s) => {
            for r in public_refs(s).unwrap_or_default() {
                if !needs_no_call(r.body, scope) && !out.iter().any(|n| n == r.body) {
                    out.push(r.body.to_string());
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|x| collect_needs(x, scope, out)),
        Value::Object(m) => m.values().for_each(|x| collect_needs(x, scope, out)),
        _ => {}
    }
}

/// The answers the caller fetched, keyed by the names [`ssm_needs`] returned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SsmAnswers {
    scope: SsmScope,
    answers: BTreeMap<String, SsmAnswer>,
}

impl SsmAnswers {
    /// No answers: every embedded reference keeps its text.
    pub fn none() -> Self {
        Self::default()
    }

    /// An empty set of answers for a stack of this scope.
    pub fn new(scope: SsmScope) -> Self {
        SsmAnswers {
            scope,
            answers: BTreeMap::new(),
        }
    }

    /// Records what the call for `name` answered.
    pub fn insert(&mut self, name: impl Into<String>, answer: SsmAnswer) {
        self.answers.insert(name.into(), answer);
    }

    /// The current value of a public parameter, when one may be used for `name`: the
    /// scope allows calls, the name is no regional ARN, the call answered, and the type
    /// is `String` or `StringList`.
    pub fn public_value(&self, name: &str) -> Option<&str> {
        if needs_no_call(name, self.scope) {
            return None;
        }
        match self.answers.get(name)? {
            SsmAnswer::Parameter { param_type, value } if param_type.is_public() => Some(value),
            _ => None,
        }
    }
}

/// The baseline value for a mixed leaf (a string embedding a reference): the readback
/// when every embedded reference is a public parameter and the readback is exactly the
/// record's text with each parameter's current value in place; otherwise the record's
/// text.
pub fn mixed_leaf(readback: &Value, source_text: &str, answers: &SsmAnswers) -> Value {
    let keep = || Value::String(source_text.to_string());
    let Some(refs) = public_refs(source_text) else {
        return keep();
    };
    let mut expected = String::with_capacity(source_text.len());
    let mut at = 0;
    for r in &refs {
        let Some(value) = answers.public_value(r.body) else {
            return keep();
        };
        expected.push_str(&source_text[at..r.start]);
        expected.push_str(value);
        at = r.end;
    }
    expected.push_str(&source_text[at..]);
    match readback {
        Value::String(s) if *s == expected => readback.clone(),
        _ => keep(),
    }
}
