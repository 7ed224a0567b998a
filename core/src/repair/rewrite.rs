//! The orphan rewrite (docs/repairs.md, "The rewrite"): every reference the surviving
//! records hold to the removed ones is replaced by the value it stands for.
//!
//! Sites, over each survivor's `properties` and `attributes` and over `outputs`:
//! `{"Ref": O}`, `{"Fn::GetAtt": [O, attr]}` / `{"Fn::GetAtt": "O.attr"}`, and the
//! `${O}` / `${O.attr}` placeholders of an `Fn::Sub` template; survivors' `dependencies`
//! lose the removed ids. The removed records are read from the record as it was before
//! the rewrite, so removed A referring to removed B still finds B.
//!
//! Live attribute reads are I/O, so the caller asks [`live_reads_needed`], reads the
//! attributes of each removed resource once (the reader is core's choice,
//! [`super::reading::attribute_route`]), turns each reading into the answer of each
//! attribute with [`live_answer`], and passes the answers as [`LiveReads`].

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::intrinsic::{getatt_parts, placeholders, single, sub_parts};
pub use super::removed::{
    attribute_value, live_answer, live_reads_needed, LiveAttr, LiveReadFailure, LiveReads,
};
use crate::ref_value::{ref_value, RefUnknown};

/// `Ref` values the user supplied (`--ref-value O=<value>`), by removed logical id: used
/// for every `Ref O` and `${O}` in place of the type's rule (docs/repairs.md, "Ref values by type").
pub type RefValues = BTreeMap<String, String>;
use super::removed::{cached_value, resources_of, snapshot, Removed};
use super::secret::{never_copied, never_copied_attribute, CredentialClass};
use super::MASK;
use crate::js::js_number;

/// Why a site kept its intrinsic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// The removed entry is not an object, or lacks a `resourceType` or a non-empty
    /// string `physicalId`.
    UnreadableRecord,
    /// The removed entry's `physicalId` is the mask.
    MaskedPhysicalId,
    /// `Ref O`: the value CloudFormation's `Ref` returns cannot be read from O's record
    /// ([`crate::ref_value::ref_value`]): its type has no known rule (`detail` is
    /// `None`), or the record does not have the shape the rule reads. The way out is
    /// `--ref-value O=<value>`, or `--force` to keep the `Ref`.
    RefUnknown {
        logical_id: String,
        resource_type: String,
        detail: Option<crate::ref_value::RefShape>,
    },
    LiveReadFailed(LiveReadFailure),
    LiveReadUndefined,
    /// The attribute's name or type alone puts it in a class never copied, so it is never
    /// read live ([`never_copied_attribute`]).
    NeverRead(CredentialClass),
    /// The live value is of a class never copied.
    LiveNeverCopied(CredentialClass),
    /// The caller supplied no live answer for it.
    NotRead,
    /// `--force`: the cache is absent, not a map, lacks the attribute, or holds an empty
    /// value.
    NoCachedValue,
    /// `--force`: the cached value is of a class never copied.
    NeverCopied(CredentialClass),
    /// An `Fn::Sub` placeholder resolved to a list or an object.
    NotText,
}

/// A site that keeps its intrinsic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnresolvedSite {
    /// Where: `Keeper.properties.Value`, `outputs.Url`.
    pub location: String,
    /// `Ref Gone`, `Gone.Arn`, `${Gone.Arn}`.
    pub reference: String,
    pub reason: Reason,
}

/// One change, for the audit table.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEntry {
    pub location: String,
    pub before: Value,
    pub after: Value,
}

/// A value the rewrite refused to copy (one per removed attribute, class and source).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeverCopiedValue {
    pub logical_id: String,
    pub attr: String,
    pub class: CredentialClass,
    pub source: ValueSource,
}

/// Where a value the rewrite refused came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueSource {
    /// The removed record's `attributes` (the `--force` fallback).
    Cached,
    /// The live read.
    Live,
}

/// The rewritten record and what the rewrite did.
#[derive(Debug, Clone, PartialEq)]
pub struct Rewrite {
    /// The record to save: the targets gone, references rewritten, `skippedOutputs`
    /// dropped, every other field (`exportNames`, `orphans`, …) carried.
    pub record: Map<String, Value>,
    /// The removed ids, in target order.
    pub removed: Vec<String>,
    pub audit: Vec<AuditEntry>,
    /// Sites kept as intrinsics (only non-empty under `--force`).
    pub unresolved: Vec<UnresolvedSite>,
    pub never_copied: Vec<NeverCopiedValue>,
}

/// Without `--force`, any unresolved site aborts the orphan: nothing is saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrphanAborted {
    pub unresolved: Vec<UnresolvedSite>,
}

impl std::error::Error for OrphanAborted {}

/// Removes `targets` from the record and rewrites every reference to them (the record
/// passed the orphan's `check_record`). A `Ref` takes the value `supplied` gives for
/// it, else the value the type's `Ref` rule reads from the removed record
/// ([`crate::ref_value`]); a type without a known rule leaves the site unresolved. An
/// `Fn::GetAtt` takes the live value unless it is of a class never copied
/// ([`super::secret::never_copied`]). Without `force`, any site that cannot be resolved
/// aborts; with `force`, the removed record's cached attribute fills in where the live
/// read did not answer, unless it is of a class never copied, and unresolved sites keep
/// their intrinsic.
pub fn rewrite(
    record: &Map<String, Value>,
    targets: &[String],
    live: &LiveReads,
    supplied: &RefValues,
    force: bool,
) -> Result<Rewrite, OrphanAborted> {
    let empty = Map::new();
    let resources = resources_of(record).unwrap_or(&empty);
    let mut ctx = Ctx {
        removed: snapshot(resources, targets),
        live,
        supplied,
        force,
        audit: Vec::new(),
        unresolved: Vec::new(),
        never_copied: Vec::new(),
    };
    let mut survivors = Map::new();
    for (id, entry) in resources {
        if !targets.contains(id) {
            survivors.insert(id.clone(), ctx.entry(id, entry));
        }
    }
    let mut out = record.clone();
    out.insert("resources".to_string(), Value::Object(survivors));
    if let Some(outputs @ Value::Object(_)) = record.get("outputs") {
        out.insert("outputs".to_string(), ctx.value(outputs, "outputs"));
    }
    out.shift_remove("skippedOutputs");
    if !force && !ctx.unresolved.is_empty() {
        return Err(OrphanAborted {
            unresolved: ctx.unresolved,
        });
    }
    Ok(Rewrite {
        record: out,
        removed: targets
            .iter()
            .filter(|t| resources.contains_key(*t))
            .cloned()
            .collect(),
        audit: ctx.audit,
        unresolved: ctx.unresolved,
        never_copied: ctx.never_copied,
    })
}

struct Ctx<'a> {
    removed: BTreeMap<String, Removed<'a>>,
    live: &'a LiveReads,
    supplied: &'a RefValues,
    force: bool,
    audit: Vec<AuditEntry>,
    unresolved: Vec<UnresolvedSite>,
    never_copied: Vec<NeverCopiedValue>,
}

impl Ctx<'_> {
    fn entry(&mut self, id: &str, entry: &Value) -> Value {
        let Value::Object(e) = entry else {
            return entry.clone();
        };
        let mut e = e.clone();
        for field in ["properties", "attributes"] {
            if let Some(v) = e.get(field) {
                let new = self.value(v, &format!("{id}.{field}"));
                e.insert(field.to_string(), new);
            }
        }
        if let Some(Value::Array(deps)) = e.get("dependencies") {
            let kept: Vec<Value> = deps
                .iter()
                .filter(|d| !d.as_str().is_some_and(|d| self.removed.contains_key(d)))
                .cloned()
                .collect();
            if kept.len() != deps.len() {
                self.audit.push(AuditEntry {
                    location: format!("{id}.dependencies"),
                    before: Value::Array(deps.clone()),
                    after: Value::Array(kept.clone()),
                });
                e.insert("dependencies".to_string(), Value::Array(kept));
            }
        }
        Value::Object(e)
    }

    fn value(&mut self, v: &Value, loc: &str) -> Value {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(o)) = single(m, "Ref") {
                    if self.removed.contains_key(o.as_str()) {
                        let res = self.resolve_ref(o);
                        return self.site(v, loc, format!("Ref {o}"), res);
                    }
                }
                if let Some((o, attr)) = single(m, "Fn::GetAtt").and_then(getatt_parts) {
                    if self.removed.contains_key(o) {
                        let res = self.resolve_att(o, attr);
                        return self.site(v, loc, format!("{o}.{attr}"), res);
                    }
                }
                if let Some((t, vars)) = single(m, "Fn::Sub").and_then(sub_parts) {
                    return self.sub(v, t, vars, loc);
                }
                let out = m
                    .iter()
                    .map(|(k, x)| (k.clone(), self.value(x, &format!("{loc}.{k}"))));
                Value::Object(out.collect())
            }
            Value::Array(a) => Value::Array(
                a.iter()
                    .enumerate()
                    .map(|(i, x)| self.value(x, &format!("{loc}[{i}]")))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    fn site(
        &mut self,
        before: &Value,
        loc: &str,
        reference: String,
        res: Result<Value, Reason>,
    ) -> Value {
        match res {
            Ok(after) => {
                self.audit.push(AuditEntry {
                    location: loc.to_string(),
                    before: before.clone(),
                    after: after.clone(),
                });
                after
            }
            Err(reason) => {
                self.unresolved.push(UnresolvedSite {
                    location: loc.to_string(),
                    reference,
                    reason,
                });
                before.clone()
            }
        }
    }

    fn sub(
        &mut self,
        whole: &Value,
        template: &str,
        vars: Option<&Map<String, Value>>,
        loc: &str,
    ) -> Value {
        let mut text = String::with_capacity(template.len());
        let mut at = 0;
        for p in placeholders(template) {
            if vars.is_some_and(|m| m.contains_key(p.name)) {
                continue;
            }
            let res = match p.name.split_once('.') {
                None if self.removed.contains_key(p.name) => self.resolve_ref(p.name),
                Some((o, attr)) if self.removed.contains_key(o) => self.resolve_att(o, attr),
                _ => continue,
            };
            match res.and_then(|v| as_text(&v)) {
                Ok(s) => {
                    text.push_str(&template[at..p.start]);
                    text.push_str(&s);
                    at = p.end;
                }
                Err(reason) => self.unresolved.push(UnresolvedSite {
                    location: loc.to_string(),
                    reference: format!("${{{}}}", p.name),
                    reason,
                }),
            }
        }
        text.push_str(&template[at..]);
        let new_vars =
            vars.map(|m| self.value(&Value::Object(m.clone()), &format!("{loc}.Fn::Sub[1]")));
        let after = match new_vars {
            Some(vv) => json!({ "Fn::Sub": [text, vv] }),
            None if whole["Fn::Sub"].is_array() => json!({ "Fn::Sub": [text] }),
            None => json!({ "Fn::Sub": text }),
        };
        if text != template {
            self.audit.push(AuditEntry {
                location: loc.to_string(),
                before: whole.clone(),
                after: after.clone(),
            });
        }
        after
    }

    /// `Ref O`: the value the user supplied, else what the type's `Ref` rule reads from
    /// the removed record (docs/repairs.md, "Ref values by type"); never a guess.
    fn resolve_ref(&self, o: &str) -> Result<Value, Reason> {
        if let Some(v) = self.supplied.get(o) {
            return Ok(Value::String(v.clone()));
        }
        match self.removed.get(o) {
            Some(Removed::Readable { physical_id, .. }) if *physical_id == MASK => {
                Err(Reason::MaskedPhysicalId)
            }
            Some(Removed::Readable {
                resource_type,
                physical_id,
                properties,
                attributes,
            }) => ref_value(resource_type, physical_id, *properties, *attributes)
                .map(Value::String)
                .map_err(|e| Reason::RefUnknown {
                    logical_id: o.to_string(),
                    resource_type: resource_type.to_string(),
                    detail: match e {
                        RefUnknown::NoRule => None,
                        RefUnknown::Shape(s) => Some(s),
                    },
                }),
            _ => Err(Reason::UnreadableRecord),
        }
    }

    /// `O.attr`: once the live read answered, the recorded value when it may be served,
    /// else the live value unless it is of a class never copied; when the live read did
    /// not answer, under `--force` only, the recorded one (same rule). An attribute
    /// whose name or type alone is of such a class is never read, and a live answer for
    /// it is not used.
    fn resolve_att(&mut self, o: &str, attr: &str) -> Result<Value, Reason> {
        let Some(Removed::Readable {
            resource_type,
            attributes,
            ..
        }) = self.removed.get(o).copied()
        else {
            return Err(Reason::UnreadableRecord);
        };
        let failure = match never_copied_attribute(resource_type, attr) {
            Some(class) => Reason::NeverRead(class),
            None => match self.live.get(&(o.to_string(), attr.to_string())) {
                Some(LiveAttr::Value(v)) => {
                    // The read answered: the recorded value, when it may be served, has
                    // exactly GetAtt's shape (cdkd prefers it too); else the live one.
                    if let Ok(recorded) = cached_value(resource_type, attributes, attr) {
                        return Ok(recorded.clone());
                    }
                    match never_copied(resource_type, attr, v) {
                        None => return Ok(v.clone()),
                        Some(class) => {
                            self.refused(o, attr, class, ValueSource::Live);
                            return Err(Reason::LiveNeverCopied(class));
                        }
                    }
                }
                Some(LiveAttr::Undefined) => Reason::LiveReadUndefined,
                Some(LiveAttr::Failed(m)) => Reason::LiveReadFailed(m.clone()),
                None => Reason::NotRead,
            },
        };
        if !self.force {
            return Err(failure);
        }
        match cached_value(resource_type, attributes, attr) {
            Ok(v) => Ok(v.clone()),
            Err(None) if matches!(failure, Reason::NeverRead(_)) => Err(failure),
            Err(None) => Err(Reason::NoCachedValue),
            Err(Some(class)) => {
                self.refused(o, attr, class, ValueSource::Cached);
                Err(Reason::NeverCopied(class))
            }
        }
    }

    /// Notes a value not copied, once per attribute, class and source.
    fn refused(&mut self, o: &str, attr: &str, class: CredentialClass, source: ValueSource) {
        let n = NeverCopiedValue {
            logical_id: o.to_string(),
            attr: attr.to_string(),
            class,
            source,
        };
        if !self.never_copied.contains(&n) {
            self.never_copied.push(n);
        }
    }
}

fn as_text(v: &Value) -> Result<String, Reason> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(js_number(n)),
        Value::Bool(b) => Ok(b.to_string()),
        _ => Err(Reason::NotText),
    }
}
