//! Template parameters (docs/export.md, "Parameters"): the root's `--parameter K=V` overrides and
//! Defaults, each nested child's values resolved root first against its parent (Ref and
//! Fn::GetAtt, a few string intrinsics), SSM-typed parent parameters handed to a child
//! as their stored value (read with `WithDecryption: false`), list types, NoEcho.

use std::collections::{BTreeMap, BTreeSet};

use crate::keys::partition;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::records::Row;
use super::template::Template;
use crate::state::StateRecord;
use crate::text::js_string;

/// Where a submitted value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ParamSource {
    Override,
    Default,
    /// Passed by the parent's nested-stack row.
    Parent,
}

/// One value submitted to a stack's change sets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedParameter {
    pub key: String,
    /// `None`: unresolved (a nested child only; its own Default must cover it).
    pub value: Option<String>,
    pub no_echo: bool,
    pub source: ParamSource,
}

/// A value inside intrinsic evaluation: a string, or a list (list-typed parameters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ev {
    Str(String),
    List(Vec<String>),
}

impl Ev {
    /// A bare `Ref` hands a list over comma-joined.
    pub fn joined(&self) -> String {
        match self {
            Ev::Str(s) => s.clone(),
            Ev::List(l) => l.join(","),
        }
    }
}

/// A parameter as the stack's own template sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Binding {
    Value(Ev),
    /// The stack's own SSM-typed parameter: its submitted value is the SSM parameter's
    /// name, never a known value for the stack itself.
    Ssm {
        name: String,
        list: bool,
    },
    Unresolved(Unresolved),
}

/// Why a value could not be resolved while planning (a nested child's parameter, or a
/// stack's own parameter with no value): the values as the evaluation met them (untrusted
/// names raw). Worded by `core::view::plan_warning`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unresolved {
    /// `Ref name` names no parameter, pseudo parameter or recorded row of the parent.
    RefUnknown { name: String },
    /// The SSM parameter `ssm_name` was not read yet.
    SsmNotRead { ssm_name: String },
    /// A dry run's failed SSM read, planned without its value.
    SsmUnread(UnreadSsm),
    /// `Fn::GetAtt resource.attribute` is not in the parent's record.
    GetAttMissing { resource: String, attribute: String },
    /// An intrinsic (`Fn::Join`, ...) whose argument has not the shape it takes.
    Malformed { intrinsic: &'static str },
    /// `Fn::Select`'s index is not a number.
    SelectIndexNotANumber,
    /// `Fn::Select`'s index is past the list's end.
    SelectIndexOutOfRange,
    /// `Fn::Select` over a value that is not a list.
    SelectOverNonList,
    /// An intrinsic (the object's one key) the planner does not evaluate.
    NotEvaluated { intrinsic: String },
    /// Neither a string nor a one-key object.
    NotAnIntrinsic,
    /// A child's parameter its parent passes no value for, with no Default.
    NoValueNoDefault,
}

/// An `ssm:GetParameter` answer (`WithDecryption: false`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SsmRead {
    /// `Type` (`String`, `StringList`, `SecureString`) and `Value`.
    Value {
        param_type: String,
        value: String,
    },
    Failed(String),
}

/// One stack's parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StackParams {
    /// Submitted to the stack's change sets, in order.
    pub submitted: Vec<ResolvedParameter>,
    /// Every declared parameter as the stack's template reads it.
    pub env: BTreeMap<String, Binding>,
    /// A nested child's parameters not resolved while planning (at most one entry).
    pub warnings: Vec<UnresolvedParameters>,
    /// A dry run's failed SSM reads, planned without their value.
    pub ssm_unread: Vec<UnreadSsm>,
}

/// A nested child's parameters that could not be resolved while planning, a warning of
/// the plan: `(key, why)`. Worded by
/// `core::view::plan_warning`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnresolvedParameters {
    pub stack: String,
    pub unresolved: Vec<(String, Unresolved)>,
}

/// Why the parameters refuse the plan. Worded by `core::view::export_input`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamRefusal {
    /// A `--parameter` token without `=`, or with nothing before it.
    NotKeyValue { token: String },
    /// A `--parameter` token whose key is blank once trimmed.
    EmptyKey { token: String },
    /// `--parameter` given to a template with no `Parameters` section.
    NoParametersSection,
    /// A `--parameter` key the template does not declare, with the keys it does.
    Undeclared { key: String, declared: Vec<String> },
    /// Declared parameters with neither a Default nor a `--parameter`.
    Missing { names: Vec<String> },
    /// A value or a tag a nested child's row passes, refused.
    Nested {
        child_stack: String,
        why: NestedRefusal,
    },
    /// A child's NoEcho value its parent passes other than as a plain `Ref` to one of
    /// the parent's parameters: it cannot be submitted (the plan stores it masked).
    NoEchoNotPlainRef { child_stack: String, key: String },
}

/// Why a nested child's parameter or tag refuses the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NestedRefusal {
    /// An SSM-typed parameter naming a SecureString.
    SecureString { param: String, ssm_name: String },
    /// A real run's failed SSM read (or a dry run's, met again by the real run that
    /// reuses its plan).
    SsmUnreadable(UnreadSsm),
    /// The parent row's `Tags` is not a list (`kind`: what it is instead).
    TagsNotAList { kind: &'static str },
    /// A tag (its JSON) that cannot be resolved while planning.
    TagUnresolved { tag: String },
}

/// An SSM parameter a nested child's value needed and that could not be read: a real
/// run refuses it; a dry run plans without the value and its plan keeps it
/// (`StackPlan::ssm_unread`), so that the real run reusing that plan refuses it too.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnreadSsm {
    pub ssm_name: String,
    /// The parent's SSM-typed parameter that names it.
    pub param: String,
    /// Why the read failed, as AWS said it.
    pub cause: String,
}

/// Parses `--parameter K=V` tokens: split at the first `=` (missing, or at position 0,
/// refuses), key trimmed and non-empty, value verbatim; a later duplicate wins.
pub fn parse_parameter_tokens(tokens: &[String]) -> Result<Vec<(String, String)>, ParamRefusal> {
    let mut out: Vec<(String, String)> = Vec::new();
    for t in tokens {
        let (k, v) = match t.split_once('=') {
            Some((k, v)) if !k.is_empty() => (crate::text::js_trim(k), v),
            _ => return Err(ParamRefusal::NotKeyValue { token: t.clone() }),
        };
        if k.is_empty() {
            return Err(ParamRefusal::EmptyKey { token: t.clone() });
        }
        match out.iter_mut().find(|(ek, _)| ek == k) {
            Some(e) => e.1 = v.to_string(),
            None => out.push((k.to_string(), v.to_string())),
        }
    }
    Ok(out)
}

fn ev_of(list: bool, s: String) -> Ev {
    if list {
        Ev::List(s.split(',').map(str::to_string).collect())
    } else {
        Ev::Str(s)
    }
}

/// The root's parameters (docs/export.md, "Root"): an override, else the Default
/// (stringified, arrays comma-joined); refuses an undeclared override key, overrides
/// with no Parameters section, and every parameter with neither.
pub fn resolve_root(
    template: &Template,
    overrides: &[(String, String)],
) -> Result<StackParams, ParamRefusal> {
    let decls = template.parameters();
    if !overrides.is_empty() && !template.has_parameters_section() {
        return Err(ParamRefusal::NoParametersSection);
    }
    let declared: Vec<&str> = decls.iter().map(|d| d.name).collect();
    if let Some((k, _)) = overrides
        .iter()
        .find(|(k, _)| !declared.contains(&k.as_str()))
    {
        return Err(ParamRefusal::Undeclared {
            key: k.clone(),
            declared: declared.iter().map(|d| d.to_string()).collect(),
        });
    }
    let mut out = StackParams::default();
    let mut missing = Vec::new();
    for d in &decls {
        let (value, source) = match overrides.iter().find(|(k, _)| k == d.name) {
            Some((_, v)) => (v.clone(), ParamSource::Override),
            None => match d.default {
                Some(v) => (js_string(v), ParamSource::Default),
                None => {
                    missing.push(d.name.to_string());
                    continue;
                }
            },
        };
        let binding = if d.is_ssm() {
            Binding::Ssm {
                name: value.clone(),
                list: d.is_list(),
            }
        } else {
            Binding::Value(ev_of(d.is_list(), value.clone()))
        };
        out.env.insert(d.name.to_string(), binding);
        out.submitted.push(ResolvedParameter {
            key: d.name.to_string(),
            value: Some(value),
            no_echo: d.no_echo,
            source,
        });
    }
    if !missing.is_empty() {
        return Err(ParamRefusal::Missing { names: missing });
    }
    Ok(out)
}

/// The parent's context for a child row's intrinsics.
pub struct ParentContext<'a> {
    pub template: &'a Template,
    pub record: &'a StateRecord,
    pub params: &'a StackParams,
    pub region: Option<&'a str>,
    /// The parent's CloudFormation name (`AWS::StackName` after the export).
    pub cfn_stack_name: &'a str,
}

/// Why one value could not be resolved.
enum Miss {
    Unresolved(Unresolved),
    /// Refuses the plan (a real run's SSM failure, a SecureString).
    Refuse(NestedRefusal),
    /// An SSM parameter not read yet (the caller reads it and plans again).
    NotRead(Unresolved),
}

struct Eval<'a, 'b> {
    ctx: &'b ParentContext<'a>,
    ssm: &'b BTreeMap<String, SsmRead>,
    dry_run: bool,
    needed: &'b mut BTreeSet<String>,
    /// A dry run's failed SSM reads met so far.
    unread: Vec<UnreadSsm>,
}

impl Eval<'_, '_> {
    fn reference(&mut self, name: &str) -> Result<Ev, Miss> {
        if let Some(b) = self.ctx.params.env.get(name) {
            return match b {
                Binding::Value(ev) => Ok(ev.clone()),
                Binding::Unresolved(r) => Err(Miss::Unresolved(r.clone())),
                Binding::Ssm {
                    name: ssm_name,
                    list,
                } => self.ssm_value(name, ssm_name, *list),
            };
        }
        let region = self.ctx.region.unwrap_or("");
        match name {
            "AWS::Region" if !region.is_empty() => return Ok(Ev::Str(region.to_string())),
            "AWS::StackName" => return Ok(Ev::Str(self.ctx.cfn_stack_name.to_string())),
            "AWS::Partition" if !region.is_empty() => {
                return Ok(Ev::Str(partition(region).0.into()))
            }
            "AWS::URLSuffix" if !region.is_empty() => {
                return Ok(Ev::Str(partition(region).1.into()))
            }
            _ => {}
        }
        match Row::get(self.ctx.record, name).and_then(|r| r.physical_id()) {
            Some(p) => Ok(Ev::Str(p.to_string())),
            None => Err(Miss::Unresolved(Unresolved::RefUnknown {
                name: name.to_string(),
            })),
        }
    }

    fn ssm_value(&mut self, param: &str, ssm_name: &str, list: bool) -> Result<Ev, Miss> {
        match self.ssm.get(ssm_name) {
            None => {
                self.needed.insert(ssm_name.to_string());
                Err(Miss::NotRead(Unresolved::SsmNotRead {
                    ssm_name: ssm_name.to_string(),
                }))
            }
            Some(SsmRead::Value { param_type, .. }) if param_type == "SecureString" => {
                Err(Miss::Refuse(NestedRefusal::SecureString {
                    param: param.to_string(),
                    ssm_name: ssm_name.to_string(),
                }))
            }
            Some(SsmRead::Value { value, param_type }) => {
                Ok(ev_of(list || param_type == "StringList", value.clone()))
            }
            Some(SsmRead::Failed(cause)) => {
                let unread = UnreadSsm {
                    ssm_name: ssm_name.to_string(),
                    param: param.to_string(),
                    cause: cause.clone(),
                };
                if !self.dry_run {
                    return Err(Miss::Refuse(NestedRefusal::SsmUnreadable(unread)));
                }
                if !self.unread.contains(&unread) {
                    self.unread.push(unread.clone());
                }
                Err(Miss::Unresolved(Unresolved::SsmUnread(unread)))
            }
        }
    }

    fn get_att(&self, res: &str, attr: &str) -> Result<Ev, Miss> {
        let row = Row::get(self.ctx.record, res);
        match row.and_then(|r| r.attribute(attr)) {
            Some(Value::String(s)) => Ok(Ev::Str(s.clone())),
            Some(Value::Array(a)) if a.iter().all(Value::is_string) => Ok(Ev::List(
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect(),
            )),
            Some(Value::Number(_) | Value::Bool(_)) => Ok(Ev::Str(js_string(
                row.and_then(|r| r.attribute(attr)).unwrap_or(&Value::Null),
            ))),
            _ => Err(Miss::Unresolved(Unresolved::GetAttMissing {
                resource: res.to_string(),
                attribute: attr.to_string(),
            })),
        }
    }

    fn eval(&mut self, v: &Value) -> Result<Ev, Miss> {
        match v {
            Value::String(s) => Ok(Ev::Str(s.clone())),
            Value::Number(_) | Value::Bool(_) => Ok(Ev::Str(js_string(v))),
            Value::Array(items) => {
                let mut out = Vec::new();
                for i in items {
                    match self.eval(i)? {
                        Ev::Str(s) => out.push(s),
                        Ev::List(l) => out.extend(l),
                    }
                }
                Ok(Ev::List(out))
            }
            Value::Object(m) if m.len() == 1 => {
                let (k, arg) = m.iter().next().expect("one entry");
                match (k.as_str(), arg) {
                    ("Ref", Value::String(name)) => self.reference(name),
                    ("Fn::GetAtt", Value::Array(a)) => match a.as_slice() {
                        [Value::String(r), Value::String(at)] => self.get_att(r, at),
                        _ => Err(Miss::Unresolved(Unresolved::Malformed {
                            intrinsic: "Fn::GetAtt",
                        })),
                    },
                    ("Fn::GetAtt", Value::String(s)) => match s.split_once('.') {
                        Some((r, at)) => self.get_att(r, at),
                        None => Err(Miss::Unresolved(Unresolved::Malformed {
                            intrinsic: "Fn::GetAtt",
                        })),
                    },
                    ("Fn::Join", Value::Array(a)) => match a.as_slice() {
                        [Value::String(d), list] => match self.eval(list)? {
                            Ev::List(l) => Ok(Ev::Str(l.join(d))),
                            Ev::Str(s) => Ok(Ev::Str(s)),
                        },
                        _ => Err(Miss::Unresolved(Unresolved::Malformed {
                            intrinsic: "Fn::Join",
                        })),
                    },
                    ("Fn::Select", Value::Array(a)) => match a.as_slice() {
                        [idx, list] => {
                            let i =
                                self.eval(idx)?.joined().parse::<usize>().map_err(|_| {
                                    Miss::Unresolved(Unresolved::SelectIndexNotANumber)
                                })?;
                            match self.eval(list)? {
                                Ev::List(l) => l
                                    .get(i)
                                    .cloned()
                                    .map(Ev::Str)
                                    .ok_or(Miss::Unresolved(Unresolved::SelectIndexOutOfRange)),
                                Ev::Str(_) => Err(Miss::Unresolved(Unresolved::SelectOverNonList)),
                            }
                        }
                        _ => Err(Miss::Unresolved(Unresolved::Malformed {
                            intrinsic: "Fn::Select",
                        })),
                    },
                    ("Fn::Split", Value::Array(a)) => match a.as_slice() {
                        [Value::String(d), s] if !d.is_empty() => {
                            let s = self.eval(s)?.joined();
                            Ok(Ev::List(s.split(d.as_str()).map(str::to_string).collect()))
                        }
                        _ => Err(Miss::Unresolved(Unresolved::Malformed {
                            intrinsic: "Fn::Split",
                        })),
                    },
                    ("Fn::Sub", Value::String(s)) => self.sub(s, &serde_json::Map::new()),
                    ("Fn::Sub", Value::Array(a)) => match a.as_slice() {
                        [Value::String(s), Value::Object(vars)] => self.sub(s, vars),
                        _ => Err(Miss::Unresolved(Unresolved::Malformed {
                            intrinsic: "Fn::Sub",
                        })),
                    },
                    (other, _) => Err(Miss::Unresolved(Unresolved::NotEvaluated {
                        intrinsic: other.to_string(),
                    })),
                }
            }
            _ => Err(Miss::Unresolved(Unresolved::NotAnIntrinsic)),
        }
    }

    fn sub(&mut self, text: &str, vars: &serde_json::Map<String, Value>) -> Result<Ev, Miss> {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            if let Some(lit) = after.strip_prefix('!') {
                out.push_str("${");
                rest = lit;
                continue;
            }
            let Some(end) = after.find('}') else {
                return Err(Miss::Unresolved(Unresolved::Malformed {
                    intrinsic: "Fn::Sub",
                }));
            };
            let name = &after[..end];
            let v = match vars.get(name) {
                Some(v) => self.eval(v)?,
                None => match name.split_once('.') {
                    Some((r, at)) if !name.starts_with("AWS::") => self.get_att(r, at)?,
                    _ => self.reference(name)?,
                },
            };
            out.push_str(&v.joined());
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(Ev::Str(out))
    }
}

/// A child's parameters (docs/export.md, "Children"): each key the parent row's
/// `Properties.Parameters` passes, resolved against the parent; the child's own Defaults
/// fill the rest of its environment. SSM names that must be read and were not in `ssm`
/// are added to `needed` (the caller reads them and plans again). A real run refuses on
/// an SSM read failure; a dry run warns and plans without the value.
pub fn resolve_child(
    child_stack: &str,
    child_template: &Template,
    parent: &ParentContext<'_>,
    row_parameters: Option<&Value>,
    ssm: &BTreeMap<String, SsmRead>,
    dry_run: bool,
    needed: &mut BTreeSet<String>,
) -> Result<StackParams, ParamRefusal> {
    let mut out = StackParams::default();
    let passed = row_parameters
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut ev = Eval {
        ctx: parent,
        ssm,
        dry_run,
        needed,
        unread: Vec::new(),
    };
    let mut unresolved = Vec::new();
    for (key, v) in &passed {
        let decl = child_template.parameter(key);
        let list = decl.as_ref().is_some_and(|d| d.is_list());
        let (value, binding) = match ev.eval(v) {
            Ok(e) => {
                let s = e.joined();
                let binding = if decl.as_ref().is_some_and(|d| d.is_ssm()) {
                    Binding::Ssm {
                        name: s.clone(),
                        list,
                    }
                } else {
                    Binding::Value(ev_of(list, s.clone()))
                };
                (Some(s), binding)
            }
            Err(Miss::Refuse(why)) => return Err(nested(child_stack, why)),
            Err(Miss::Unresolved(r) | Miss::NotRead(r)) => {
                unresolved.push((key.clone(), r.clone()));
                (None, Binding::Unresolved(r))
            }
        };
        out.env.insert(key.clone(), binding);
        out.submitted.push(ResolvedParameter {
            key: key.clone(),
            value,
            no_echo: decl.as_ref().is_some_and(|d| d.no_echo),
            source: ParamSource::Parent,
        });
    }
    for d in child_template.parameters() {
        if out.env.contains_key(d.name) {
            continue;
        }
        let b = match d.default {
            Some(v) if d.is_ssm() => Binding::Ssm {
                name: js_string(v),
                list: d.is_list(),
            },
            Some(v) => Binding::Value(ev_of(d.is_list(), js_string(v))),
            None => Binding::Unresolved(Unresolved::NoValueNoDefault),
        };
        out.env.insert(d.name.to_string(), b);
    }
    if !unresolved.is_empty() {
        out.warnings.push(UnresolvedParameters {
            stack: child_stack.to_string(),
            unresolved,
        });
    }
    out.ssm_unread = ev.unread;
    Ok(out)
}

/// A nested child's stack tags (docs/export.md, "Nested stacks (export-flip, export-adopt)"): its parent row's `Tags`
/// (`[{Key, Value}]`), each value resolved against the parent like a passed parameter.
/// The adopting row keeps the row's own Tags and CloudFormation requires them to match
/// the child's, so a tag that cannot be resolved while planning refuses the plan, naming
/// it.
pub fn resolve_row_tags(
    child_stack: &str,
    parent: &ParentContext<'_>,
    row_tags: Option<&Value>,
    ssm: &BTreeMap<String, SsmRead>,
    dry_run: bool,
    needed: &mut BTreeSet<String>,
) -> Result<Vec<(String, String)>, ParamRefusal> {
    let Some(v) = row_tags else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = v else {
        let kind = crate::state::kind_of(v);
        return Err(nested(child_stack, NestedRefusal::TagsNotAList { kind }));
    };
    let mut ev = Eval {
        ctx: parent,
        ssm,
        dry_run,
        needed,
        unread: Vec::new(),
    };
    let mut out = Vec::new();
    for item in items {
        let key = item.get("Key").map(|k| ev.eval(k));
        let value = item.get("Value").map(|k| ev.eval(k));
        match (key, value) {
            // An SSM value not read yet: the planning pass after the reads resolves it.
            (Some(Err(Miss::NotRead(_))), _) | (_, Some(Err(Miss::NotRead(_)))) => {}
            (Some(Ok(k)), Some(Ok(v))) => out.push((k.joined(), v.joined())),
            (_, Some(Err(Miss::Refuse(why)))) | (Some(Err(Miss::Refuse(why))), _) => {
                return Err(nested(child_stack, why))
            }
            _ => {
                let tag = item.to_string();
                return Err(nested(child_stack, NestedRefusal::TagUnresolved { tag }));
            }
        }
    }
    Ok(out)
}

/// The value a step submits for a child's NoEcho parameter `key`, which the plan stores
/// masked (docs/export.md, "Children"): re-resolved from the parent, when the parent's row
/// passes it as a plain `{"Ref": P}` to a parameter P of the parent; `parent` holds the
/// parent's resolved parameters (for the root: `resolve_root` over the `--parameter`
/// values). `Err` names why it cannot be: any other expression is only resolved by the
/// plan, which never stores the value.
pub fn no_echo_value(
    child_stack: &str,
    key: &str,
    row_parameters: Option<&Value>,
    parent: &StackParams,
) -> Result<String, ParamRefusal> {
    let expr = row_parameters.and_then(|p| p.get(key));
    let referenced = expr
        .and_then(Value::as_object)
        .filter(|m| m.len() == 1)
        .and_then(|m| m.get("Ref"))
        .and_then(Value::as_str);
    let found = referenced.and_then(|p| {
        parent
            .submitted
            .iter()
            .find(|r| r.key == p)
            .and_then(|r| r.value.clone())
    });
    found.ok_or_else(|| ParamRefusal::NoEchoNotPlainRef {
        child_stack: child_stack.to_string(),
        key: key.to_string(),
    })
}

fn nested(child_stack: &str, why: NestedRefusal) -> ParamRefusal {
    ParamRefusal::Nested {
        child_stack: child_stack.to_string(),
        why,
    }
}

/// Redacts a NoEcho value for anything printed or stored in the plan.
pub fn shown_value(p: &ResolvedParameter) -> Option<String> {
    if p.no_echo {
        p.value.as_ref().map(|_| super::MASK.to_string())
    } else {
        p.value.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::parse_state;
    use serde_json::json;

    #[test]
    fn a_no_echo_child_parameter_passed_as_a_ref_to_a_root_parameter_is_resolved_again() {
        let root = tpl(json!({"Parameters": {
            "DbPassword": {"Type": "String", "NoEcho": true},
            "Env": {"Type": "String", "Default": "dev"}
        }, "Resources": {}}));
        let params = resolve_root(&root, &[("DbPassword".into(), "s3cret".into())]).unwrap();
        let row = json!({"Password": {"Ref": "DbPassword"}, "Joined": {"Fn::Join": ["", [{"Ref": "DbPassword"}]]}});
        assert_eq!(
            no_echo_value("App~Db", "Password", Some(&row), &params).unwrap(),
            "s3cret"
        );
        let err = no_echo_value("App~Db", "Joined", Some(&row), &params).unwrap_err();
        assert_eq!(
            err,
            ParamRefusal::NoEchoNotPlainRef {
                child_stack: "App~Db".into(),
                key: "Joined".into()
            }
        );
        assert!(err.to_string().contains("is not a plain Ref"), "{err}");
        assert!(no_echo_value("App~Db", "Missing", Some(&row), &params).is_err());
        assert!(no_echo_value("App~Db", "Password", None, &params).is_err());
    }

    fn tpl(v: Value) -> Template {
        Template::from_value("T", v).unwrap()
    }

    fn rec(v: Value) -> StateRecord {
        parse_state("Root", Some("us-east-1"), v.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn parameter_tokens_split_at_first_equals_and_later_duplicates_win() {
        let p = parse_parameter_tokens(&["A=1".into(), " B =x=y".into(), "A=".into()]).unwrap();
        assert_eq!(
            p,
            [
                ("A".to_string(), "".to_string()),
                ("B".to_string(), "x=y".to_string())
            ]
        );
        assert_eq!(
            parse_parameter_tokens(&["=1".into()]),
            Err(ParamRefusal::NotKeyValue { token: "=1".into() })
        );
        assert_eq!(
            parse_parameter_tokens(&["A".into()]),
            Err(ParamRefusal::NotKeyValue { token: "A".into() })
        );
        assert_eq!(
            parse_parameter_tokens(&[" =1".into()]),
            Err(ParamRefusal::EmptyKey {
                token: " =1".into()
            })
        );
    }

    #[test]
    fn statement_74_unknown_override_refuses_listing_declared_parameters() {
        let t = tpl(
            json!({"Parameters": {"Stage": {"Type": "String", "Default": "dev"}}, "Resources": {}}),
        );
        let e = resolve_root(&t, &[("Typo".into(), "1".into())]).unwrap_err();
        assert_eq!(
            e,
            ParamRefusal::Undeclared {
                key: "Typo".into(),
                declared: vec!["Stage".into()]
            }
        );
        let e = e.to_string();
        assert!(e.contains("Typo") && e.contains("Stage"), "{e}");
        let none = tpl(json!({"Resources": {}}));
        let e = resolve_root(&none, &[("A".into(), "1".into())]).unwrap_err();
        assert_eq!(e, ParamRefusal::NoParametersSection);
        assert!(e.to_string().contains("declares no Parameters"));
    }

    #[test]
    fn statement_75_parameter_without_default_or_override_refuses_naming_it() {
        let t = tpl(
            json!({"Parameters": {"Need": {"Type": "String"}, "Has": {"Default": 3}}, "Resources": {}}),
        );
        let e = resolve_root(&t, &[]).unwrap_err();
        assert_eq!(
            e,
            ParamRefusal::Missing {
                names: vec!["Need".into()]
            }
        );
        let e = e.to_string();
        assert!(e.contains("Need") && !e.contains("Has"), "{e}");
    }

    #[test]
    fn root_defaults_are_stringified_and_lists_comma_joined() {
        let t = tpl(json!({"Parameters": {
            "N": {"Type": "Number", "Default": 3},
            "L": {"Type": "CommaDelimitedList", "Default": ["a", "b"]},
            "S": {"Type": "AWS::SSM::Parameter::Value<String>", "Default": "/app/name"},
            "P": {"Type": "String", "NoEcho": true}
        }, "Resources": {}}));
        let p = resolve_root(&t, &[("P".into(), "secret".into())]).unwrap();
        let vals: Vec<_> = p
            .submitted
            .iter()
            .map(|r| r.value.clone().unwrap())
            .collect();
        assert_eq!(vals, ["3", "a,b", "/app/name", "secret"]);
        assert_eq!(
            p.env["L"],
            Binding::Value(Ev::List(vec!["a".into(), "b".into()]))
        );
        assert_eq!(
            p.env["S"],
            Binding::Ssm {
                name: "/app/name".into(),
                list: false
            }
        );
        assert_eq!(shown_value(&p.submitted[3]).as_deref(), Some("***"));
        assert_eq!(p.submitted[3].source, ParamSource::Override);
    }

    fn parent_setup() -> (Template, StateRecord) {
        let t = tpl(json!({"Parameters": {
            "Stage": {"Type": "String"},
            "Name": {"Type": "AWS::SSM::Parameter::Value<String>", "Default": "/app/name"},
            "Subnets": {"Type": "AWS::SSM::Parameter::Value<List<String>>", "Default": "/app/subnets"},
            "Cidrs": {"Type": "CommaDelimitedList", "Default": "10.0.0.0/16,10.1.0.0/16"}
        }, "Resources": {"Bucket": {"Type": "AWS::S3::Bucket"}, "Child": {"Type": "AWS::CloudFormation::Stack"}}}));
        let r = rec(
            json!({"resources": {"Bucket": {"physicalId": "b-1", "resourceType": "AWS::S3::Bucket", "properties": {}, "attributes": {"Arn": "arn:aws:s3:::b-1"}}}}),
        );
        (t, r)
    }

    fn child(
        params: Value,
        ssm: &BTreeMap<String, SsmRead>,
        dry_run: bool,
    ) -> (Result<StackParams, ParamRefusal>, BTreeSet<String>) {
        let (pt, pr) = parent_setup();
        let pp = resolve_root(&pt, &[("Stage".into(), "production".into())]).unwrap();
        let ctx = ParentContext {
            template: &pt,
            record: &pr,
            params: &pp,
            region: Some("us-east-1"),
            cfn_stack_name: "Root",
        };
        let ct = tpl(
            json!({"Parameters": {"Secret": {"Type": "String", "NoEcho": true}, "Own": {"Type": "String", "Default": "d"}}, "Resources": {}}),
        );
        let mut needed = BTreeSet::new();
        let r = resolve_child(
            "Root~Child",
            &ct,
            &ctx,
            Some(&params),
            ssm,
            dry_run,
            &mut needed,
        );
        (r, needed)
    }

    #[test]
    fn statement_91_child_ref_to_a_root_override_submits_its_value() {
        let (r, _) = child(
            json!({"Stage": {"Ref": "Stage"}, "Arn": {"Fn::GetAtt": ["Bucket", "Arn"]}, "B": {"Ref": "Bucket"}, "N": 5, "J": {"Fn::Join": ["-", [{"Ref": "Stage"}, {"Ref": "AWS::Region"}]]}}),
            &BTreeMap::new(),
            false,
        );
        let r = r.unwrap();
        let vals: Vec<_> = r
            .submitted
            .iter()
            .map(|p| (p.key.as_str(), p.value.clone().unwrap()))
            .collect();
        assert_eq!(
            vals,
            [
                ("Stage", "production".to_string()),
                ("Arn", "arn:aws:s3:::b-1".into()),
                ("B", "b-1".into()),
                ("N", "5".into()),
                ("J", "production-us-east-1".into())
            ]
        );
        assert!(r.warnings.is_empty());
        assert_eq!(r.env["Own"], Binding::Value(Ev::Str("d".into())));
    }

    #[test]
    fn statement_92_unknown_ref_warns_and_proceeds() {
        let (r, _) = child(json!({"X": {"Ref": "Unknown"}}), &BTreeMap::new(), false);
        let r = r.unwrap();
        assert_eq!(r.submitted[0].value, None);
        assert_eq!(r.warnings.len(), 1);
    }

    #[test]
    fn statement_93_parent_ssm_parameter_passed_to_child_submits_the_stored_value() {
        let (r, needed) = child(json!({"Name": {"Ref": "Name"}}), &BTreeMap::new(), false);
        assert_eq!(needed.into_iter().collect::<Vec<_>>(), ["/app/name"]);
        assert_eq!(r.unwrap().submitted[0].value, None);
        let mut ssm = BTreeMap::new();
        ssm.insert(
            "/app/name".to_string(),
            SsmRead::Value {
                param_type: "String".into(),
                value: "stored".into(),
            },
        );
        let (r, needed) = child(json!({"Name": {"Ref": "Name"}}), &ssm, false);
        assert!(needed.is_empty());
        assert_eq!(r.unwrap().submitted[0].value.as_deref(), Some("stored"));
    }

    #[test]
    fn ssm_list_parameter_is_a_list_inside_the_row_and_joined_for_a_bare_ref() {
        let mut ssm = BTreeMap::new();
        ssm.insert(
            "/app/subnets".to_string(),
            SsmRead::Value {
                param_type: "StringList".into(),
                value: "s1,s2".into(),
            },
        );
        let (r, _) = child(
            json!({"First": {"Fn::Select": [0, {"Ref": "Subnets"}]}, "All": {"Ref": "Subnets"}, "C": {"Fn::Join": [";", {"Ref": "Cidrs"}]}}),
            &ssm,
            false,
        );
        let r = r.unwrap();
        let vals: Vec<_> = r
            .submitted
            .iter()
            .map(|p| p.value.clone().unwrap())
            .collect();
        assert_eq!(vals, ["s1", "s1,s2", "10.0.0.0/16;10.1.0.0/16"]);
    }

    #[test]
    fn statement_94_ssm_read_failure_in_dry_run_plans_without_the_value() {
        let mut ssm = BTreeMap::new();
        ssm.insert(
            "/app/name".to_string(),
            SsmRead::Failed("AccessDenied".into()),
        );
        let (r, _) = child(json!({"Name": {"Ref": "Name"}}), &ssm, true);
        let r = r.unwrap();
        assert_eq!(r.submitted[0].value, None);
        let w = r.warnings[0].to_string();
        assert!(w.contains("unconfirmed"), "{w}");
        let (r, _) = child(json!({"Name": {"Ref": "Name"}}), &ssm, false);
        let e = r.unwrap_err();
        assert!(
            matches!(&e, ParamRefusal::Nested { why: NestedRefusal::SsmUnreadable(u), .. } if u.cause == "AccessDenied"),
            "{e:?}"
        );
        assert!(e.to_string().contains("nothing was locked"));
    }

    #[test]
    fn secure_string_ssm_parameter_is_refused() {
        let mut ssm = BTreeMap::new();
        ssm.insert(
            "/app/name".to_string(),
            SsmRead::Value {
                param_type: "SecureString".into(),
                value: "AQIC...".into(),
            },
        );
        let (r, _) = child(json!({"Name": {"Ref": "Name"}}), &ssm, true);
        let e = r.unwrap_err();
        assert!(
            matches!(
                &e,
                ParamRefusal::Nested {
                    why: NestedRefusal::SecureString { .. },
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("SecureString"));
    }

    #[test]
    fn child_noecho_value_is_masked_when_shown() {
        let (r, _) = child(json!({"Secret": {"Ref": "Stage"}}), &BTreeMap::new(), false);
        let r = r.unwrap();
        assert!(r.submitted[0].no_echo);
        assert_eq!(shown_value(&r.submitted[0]).as_deref(), Some("***"));
        assert_eq!(r.submitted[0].value.as_deref(), Some("production"));
    }

    #[test]
    fn sub_resolves_parameters_and_attributes() {
        let (r, _) = child(
            json!({"S": {"Fn::Sub": "${Stage}-${Bucket.Arn}-${AWS::Partition}-${!Literal}"}}),
            &BTreeMap::new(),
            false,
        );
        assert_eq!(
            r.unwrap().submitted[0].value.as_deref(),
            Some("production-arn:aws:s3:::b-1-aws-${Literal}")
        );
    }
}
