//! Redaction of an AWS readback by position (docs/repairs.md, "Redaction by position").
//!
//! refresh-observed stores what AWS reports as the drift baseline. AWS echoes secrets
//! decrypted, so every position where the record's own `properties` (the *source*) hold
//! a `{{resolve:...}}` reference gets the stored expression back instead of the echoed
//! value. Nothing is synthesised or resolved: the position is the whole mechanism.
//!
//! The walk pairs readback and source:
//! - objects by key; readback keys the source lacks are kept as read;
//! - lists by identity key (the first of `Name`, `Key` an element has) when every source
//!   element has a distinct one, else by position when the positions corroborate the
//!   alignment ([`corroborates`]);
//! - a source string that is one whole reference writes the expression; a longer string
//!   embedding one keeps the source text unless the SSM rule lets the readback through
//!   ([`super::ssm::mixed_leaf`]).
//!
//! Fail closed: where the source subtree holds a reference and the two sides cannot be
//! paired, the position gets the mask `***`.

use serde_json::{Map, Value};

use super::dynref::{holds_reference, whole_reference};
use super::ssm::{mixed_leaf, SsmAnswers};
use super::MASK;

/// The baseline to store: `readback` with every reference-bearing position of `source`
/// (the record's `properties`) redacted. A reference-free `source` returns the readback
/// unchanged.
pub fn redact_by_position(readback: &Value, source: &Value, ssm: &SsmAnswers) -> Value {
    walk(readback, source, ssm)
}

fn mask() -> Value {
    Value::String(MASK.to_string())
}

fn walk(rb: &Value, src: &Value, ssm: &SsmAnswers) -> Value {
    if !holds_reference(src) {
        return rb.clone();
    }
    match src {
        Value::String(text) => walk_string(rb, text, ssm),
        Value::Object(s) if is_intrinsic(s) => {
            if rb == src {
                rb.clone()
            } else {
                mask()
            }
        }
        Value::Object(s) => match rb {
            Value::Object(r) => Value::Object(walk_object(r, s, ssm)),
            _ => mask(),
        },
        Value::Array(s) => match rb {
            Value::Array(r) => walk_list(r, s, ssm),
            _ => mask(),
        },
        // Scalars other than strings hold no reference.
        _ => rb.clone(),
    }
}

fn walk_string(rb: &Value, text: &str, ssm: &SsmAnswers) -> Value {
    if whole_reference(text).is_some() {
        Value::String(text.to_string())
    } else {
        mixed_leaf(rb, text, ssm)
    }
}

/// An unresolved intrinsic: a one-key object whose key is `Ref` or `Fn::…`. Its
/// resolved form is not knowable here, so only an identical readback pairs with it.
fn is_intrinsic(m: &Map<String, Value>) -> bool {
    m.len() == 1
        && m.keys()
            .next()
            .is_some_and(|k| k == "Ref" || k.starts_with("Fn::"))
}

fn walk_object(
    rb: &Map<String, Value>,
    src: &Map<String, Value>,
    ssm: &SsmAnswers,
) -> Map<String, Value> {
    rb.iter()
        .map(|(k, v)| {
            let out = match src.get(k) {
                Some(s) => walk(v, s, ssm),
                None => v.clone(),
            };
            (k.clone(), out)
        })
        .collect()
}

/// The identity of a list element: the first of `Name`, `Key` it carries, with its
/// value.
fn identity(v: &Value) -> Option<(&'static str, &Value)> {
    let m = v.as_object()?;
    ["Name", "Key"]
        .into_iter()
        .find_map(|k| m.get(k).map(|id| (k, id)))
}

/// The source elements' identities when every element has one and no two are equal.
fn keyed(src: &[Value]) -> Option<Vec<(&'static str, &Value)>> {
    let ids: Vec<_> = src.iter().map(identity).collect::<Option<_>>()?;
    let distinct = ids
        .iter()
        .enumerate()
        .all(|(i, a)| ids[..i].iter().all(|b| a != b));
    distinct.then_some(ids)
}

fn walk_list(rb: &[Value], src: &[Value], ssm: &SsmAnswers) -> Value {
    match keyed(src) {
        Some(ids) => walk_keyed(rb, src, &ids, ssm),
        None if rb.len() == src.len() && rb.iter().zip(src).all(|(r, s)| corroborates(r, s)) => {
            Value::Array(rb.iter().zip(src).map(|(r, s)| walk(r, s, ssm)).collect())
        }
        None => mask(),
    }
}

/// Pairs elements by identity. Readback elements without a partner are kept as read,
/// unless a reference-bearing source element also went without one: then the partner
/// may be among them under a rewritten identity, and each unpaired element is masked.
fn walk_keyed(
    rb: &[Value],
    src: &[Value],
    ids: &[(&'static str, &Value)],
    ssm: &SsmAnswers,
) -> Value {
    let partner = |r: &Value| identity(r).and_then(|id| ids.iter().position(|s| *s == id));
    let partners: Vec<Option<usize>> = rb.iter().map(partner).collect();
    let orphaned_secret = src
        .iter()
        .enumerate()
        .any(|(i, s)| holds_reference(s) && !partners.contains(&Some(i)));
    let out = rb
        .iter()
        .zip(&partners)
        .map(|(r, p)| match p {
            Some(i) => walk(r, &src[*i], ssm),
            None if orphaned_secret => mask(),
            None => r.clone(),
        })
        .collect();
    Value::Array(out)
}

/// Whether a readback element may be taken as the echo of the source element at the
/// same position of an unkeyed list:
/// - a reference-free source element: the readback equals it;
/// - a reference-bearing string: the readback is a scalar (not an object or list);
/// - a reference-bearing object: the readback is an object with exactly the same keys,
///   each pair corroborating (an intrinsic object: the readback equals it);
/// - a reference-bearing list: a list of the same length, each pair corroborating.
pub fn corroborates(rb: &Value, src: &Value) -> bool {
    if !holds_reference(src) {
        return rb == src;
    }
    match (src, rb) {
        (Value::String(_), r) => !r.is_object() && !r.is_array(),
        (Value::Object(s), _) if is_intrinsic(s) => rb == src,
        (Value::Object(s), Value::Object(r)) => {
            s.len() == r.len()
                && s.iter()
                    .all(|(k, sv)| r.get(k).is_some_and(|rv| corroborates(rv, sv)))
        }
        (Value::Array(s), Value::Array(r)) => {
            s.len() == r.len() && s.iter().zip(r).all(|(sv, rv)| corroborates(rv, sv))
        }
        _ => false,
    }
}
