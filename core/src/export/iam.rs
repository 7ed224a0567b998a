//! The AWS::IAM::Policy pre-delete (docs/export.md, "Pre-delete of recreate rows"): what phase 2 must detach
//! (from the record) and the template principals it will re-attach to, as data, with
//! the check comparing them. The plan refuses a known mismatch and warns about values it
//! cannot confirm (decision on docs/export.md, "Decisions"); the pre-delete step re-reads the same
//! data.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::params::{Binding, Ev, Unresolved};
use super::MASK;

/// What the record says to detach.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyTargets {
    pub policy_name: String,
    /// `None`: the record holds no such list at all (not even an empty one).
    pub roles: Option<Vec<String>>,
    pub users: Option<Vec<String>>,
    pub groups: Option<Vec<String>>,
    /// The role came from a legacy `policyName:roleName` id.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub legacy_role: bool,
}

/// One template value: known, or why it cannot be confirmed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Checked {
    Known { value: String },
    Unconfirmed { why: Unconfirmed },
}

/// Why a template value cannot be confirmed while planning. Worded by
/// `core::view::plan_warning`; `plan.json` keeps it as its words (a `Checked` of a
/// pre-delete), read back as [`Unconfirmed::Recorded`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum Unconfirmed {
    /// `Ref name` to the stack's own SSM-typed parameter: its submitted value is the SSM
    /// parameter's name.
    OwnSsmParameter { name: String },
    /// `Ref name` to a parameter that is not resolved (boxed: a plan's pre-delete holds
    /// many of these).
    RefUnresolved { name: String, why: Box<Unresolved> },
    /// `Ref name` names no parameter.
    NoSuchParameter { name: String },
    /// An intrinsic the plan does not evaluate.
    NotEvaluated,
    /// The value gave nothing to check.
    Empty,
    /// Read back from `plan.json`: the words as the plan wrote them.
    Recorded(String),
}

impl From<String> for Unconfirmed {
    fn from(words: String) -> Self {
        Unconfirmed::Recorded(words)
    }
}

/// One template value the check could not confirm: the `PolicyName`, or an entry of
/// `key` (`Roles`, `Users`, `Groups`). Worded by `core::view::plan_warning`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnconfirmedPrincipal {
    PolicyName(Unconfirmed),
    Entry { key: &'static str, why: Unconfirmed },
}

/// The template side of the check.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplatePrincipals {
    pub policy_name: Option<Checked>,
    pub roles: Vec<Checked>,
    pub users: Vec<Checked>,
    pub groups: Vec<Checked>,
}

/// The check's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckVerdict {
    Ok,
    /// Warn, naming each value.
    Unconfirmed(Vec<UnconfirmedPrincipal>),
    /// Refuse, naming each mismatch.
    Mismatch(Vec<PrincipalMismatch>),
}

/// One template principal (or policy name) the record does not cover
/// (`core::view::blocked` words it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrincipalMismatch {
    /// The template's `PolicyName` is another than the recorded one.
    PolicyName { template: String, recorded: String },
    /// `key` (`Roles`, `Users`, `Groups`) names `value`, which the record does not list.
    NotDetached { key: &'static str, value: String },
}

/// Why the pre-delete cannot read what to detach the policy from
/// (`core::view::blocked` words it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicyError {
    /// The policy name (the physical id) is empty.
    NameEmpty,
    /// The policy name (the physical id) is the redaction mask.
    NameMasked,
    /// An entry of `properties.<key>` is the redaction mask.
    MaskedProperty { key: &'static str },
    /// An entry of `properties.<key>` is not a name.
    NotAName { key: &'static str },
    /// `properties.<key>` is not a list.
    NotAList { key: &'static str },
    /// The record of the policy names no role, user or group to detach it from.
    NothingToDetach { policy_name: String },
}

/// An IAM name: `[A-Za-z0-9+=,.@_-]`, 1–64 characters (the rule destroy applies).
pub fn is_iam_name(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+=,.@_-".contains(&b))
}

fn string_list(
    props: Option<&Map<String, Value>>,
    key: &'static str,
) -> Result<Option<Vec<String>>, PolicyError> {
    match props.and_then(|p| p.get(key)) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| match v.as_str() {
                Some(MASK) => Err(PolicyError::MaskedProperty { key }),
                Some(s) => Ok(s.to_string()),
                None => Err(PolicyError::NotAName { key }),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(PolicyError::NotAList { key }),
    }
}

/// Reads the detach set from the row: the policy name is the physical id, or the part
/// before the first `:` of a legacy `policyName:roleName` id; a legacy record holding no
/// principal list at all detaches from the id's role when it is an IAM name.
pub fn policy_targets(
    physical_id: &str,
    props: Option<&Map<String, Value>>,
) -> Result<PolicyTargets, PolicyError> {
    let (name, legacy_role) = match physical_id.split_once(':') {
        Some((n, r)) => (n, Some(r)),
        None => (physical_id, None),
    };
    if name.is_empty() {
        return Err(PolicyError::NameEmpty);
    }
    if name == MASK {
        return Err(PolicyError::NameMasked);
    }
    let mut t = PolicyTargets {
        policy_name: name.to_string(),
        roles: string_list(props, "Roles")?,
        users: string_list(props, "Users")?,
        groups: string_list(props, "Groups")?,
        legacy_role: false,
    };
    if t.roles.is_none() && t.users.is_none() && t.groups.is_none() {
        if let Some(role) = legacy_role.filter(|r| is_iam_name(r)) {
            t.roles = Some(vec![role.to_string()]);
            t.legacy_role = true;
        }
    }
    Ok(t)
}

/// The pre-delete's own refusal: nothing to detach from. Phase 2 evaluates it after
/// phase 1, before deleting anything.
pub fn nothing_to_detach(t: &PolicyTargets) -> Option<PolicyError> {
    let n = |l: &Option<Vec<String>>| l.as_ref().map_or(0, Vec::len);
    (n(&t.roles) + n(&t.users) + n(&t.groups) == 0).then(|| PolicyError::NothingToDetach {
        policy_name: t.policy_name.clone(),
    })
}

fn check_value(v: &Value, env: &BTreeMap<String, Binding>, out: &mut Vec<Checked>) {
    match v {
        Value::String(s) => out.push(Checked::Known { value: s.clone() }),
        Value::Object(m) if m.len() == 1 && m.get("Ref").is_some_and(Value::is_string) => {
            let name = m["Ref"].as_str().unwrap_or_default();
            match env.get(name) {
                Some(Binding::Value(Ev::Str(s))) => out.push(Checked::Known { value: s.clone() }),
                Some(Binding::Value(Ev::List(l))) => {
                    out.extend(l.iter().map(|s| Checked::Known { value: s.clone() }))
                }
                Some(Binding::Ssm { .. }) => out.push(Checked::Unconfirmed {
                    why: Unconfirmed::OwnSsmParameter {
                        name: name.to_string(),
                    },
                }),
                Some(Binding::Unresolved(r)) => out.push(Checked::Unconfirmed {
                    why: Unconfirmed::RefUnresolved {
                        name: name.to_string(),
                        why: Box::new(r.clone()),
                    },
                }),
                None => out.push(Checked::Unconfirmed {
                    why: Unconfirmed::NoSuchParameter {
                        name: name.to_string(),
                    },
                }),
            }
        }
        _ => out.push(Checked::Unconfirmed {
            why: Unconfirmed::NotEvaluated,
        }),
    }
}

/// Reads the template side: `Roles` / `Users` / `Groups` (a list, or a `Ref` to a list
/// parameter) and `PolicyName`, against the values this stack's change set submits.
pub fn template_principals(
    props: Option<&Map<String, Value>>,
    env: &BTreeMap<String, Binding>,
) -> TemplatePrincipals {
    let list = |key: &str| {
        let mut out = Vec::new();
        match props.and_then(|p| p.get(key)) {
            None => {}
            Some(Value::Array(a)) => a.iter().for_each(|v| check_value(v, env, &mut out)),
            Some(other) => check_value(other, env, &mut out),
        }
        out
    };
    let policy_name = props.and_then(|p| p.get("PolicyName")).map(|v| {
        let mut out = Vec::new();
        check_value(v, env, &mut out);
        out.into_iter().next().unwrap_or(Checked::Unconfirmed {
            why: Unconfirmed::Empty,
        })
    });
    TemplatePrincipals {
        policy_name,
        roles: list("Roles"),
        users: list("Users"),
        groups: list("Groups"),
    }
}

/// Compares the two sides: a known template principal (or name) the record does not
/// cover is a mismatch; an unconfirmed value is reported.
pub fn check(recorded: &PolicyTargets, template: &TemplatePrincipals) -> CheckVerdict {
    let mut mismatch = Vec::new();
    let mut unconfirmed = Vec::new();
    if let Some(c) = &template.policy_name {
        match c {
            Checked::Known { value } if *value != recorded.policy_name => {
                mismatch.push(PrincipalMismatch::PolicyName {
                    template: value.clone(),
                    recorded: recorded.policy_name.clone(),
                })
            }
            Checked::Unconfirmed { why } => {
                unconfirmed.push(UnconfirmedPrincipal::PolicyName(why.clone()))
            }
            _ => {}
        }
    }
    for (key, tpl, rec) in [
        ("Roles", &template.roles, &recorded.roles),
        ("Users", &template.users, &recorded.users),
        ("Groups", &template.groups, &recorded.groups),
    ] {
        let rec: &[String] = rec.as_deref().unwrap_or(&[]);
        for c in tpl {
            match c {
                Checked::Known { value } if !rec.contains(value) => {
                    mismatch.push(PrincipalMismatch::NotDetached {
                        key,
                        value: value.clone(),
                    })
                }
                Checked::Unconfirmed { why } => unconfirmed.push(UnconfirmedPrincipal::Entry {
                    key,
                    why: why.clone(),
                }),
                _ => {}
            }
        }
    }
    if !mismatch.is_empty() {
        CheckVerdict::Mismatch(mismatch)
    } else if !unconfirmed.is_empty() {
        CheckVerdict::Unconfirmed(unconfirmed)
    } else {
        CheckVerdict::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(pairs: &[(&str, Binding)]) -> BTreeMap<String, Binding> {
        pairs
            .iter()
            .map(|(k, b)| (k.to_string(), b.clone()))
            .collect()
    }

    #[test]
    fn statement_68_legacy_policy_id_without_principal_lists_detaches_from_its_role() {
        let t = policy_targets("P:my-role", json!({}).as_object()).unwrap();
        assert_eq!(t.policy_name, "P");
        assert_eq!(t.roles, Some(vec!["my-role".to_string()]));
        assert!(t.legacy_role);
        // An empty list is a list: the legacy role is not used.
        let t = policy_targets("P:my-role", json!({"Roles": []}).as_object()).unwrap();
        assert_eq!(t.roles, Some(vec![]));
        // A role that is not an IAM name is not used.
        let t = policy_targets("P:bad role", json!({}).as_object()).unwrap();
        assert_eq!(t.roles, None);
    }

    #[test]
    fn statement_67_empty_principal_lists_refuse_the_pre_delete() {
        let t = policy_targets(
            "P",
            json!({"Roles": [], "Users": [], "Groups": []}).as_object(),
        )
        .unwrap();
        assert_eq!(
            nothing_to_detach(&t),
            Some(PolicyError::NothingToDetach {
                policy_name: "P".into()
            })
        );
        let t = policy_targets("P", json!({"Roles": ["r"]}).as_object()).unwrap();
        assert!(nothing_to_detach(&t).is_none());
    }

    #[test]
    fn masked_principal_is_refused_at_the_read_position() {
        assert_eq!(
            policy_targets("P", json!({"Roles": ["***"]}).as_object()),
            Err(PolicyError::MaskedProperty { key: "Roles" })
        );
    }

    #[test]
    fn principal_check_ref_reads_the_submitted_value_and_ssm_is_never_known() {
        let e = env(&[
            ("RoleP", Binding::Value(Ev::Str("r1".into()))),
            (
                "Ssm",
                Binding::Ssm {
                    name: "/x".into(),
                    list: false,
                },
            ),
        ]);
        let props = json!({"PolicyName": "P", "Roles": [{"Ref": "RoleP"}, {"Ref": "Ssm"}, {"Fn::ImportValue": "x"}]});
        let tp = template_principals(props.as_object(), &e);
        assert_eq!(tp.roles[0], Checked::Known { value: "r1".into() });
        assert!(matches!(tp.roles[1], Checked::Unconfirmed { .. }));
        assert!(matches!(tp.roles[2], Checked::Unconfirmed { .. }));
        let rec = PolicyTargets {
            policy_name: "P".into(),
            roles: Some(vec!["r1".into()]),
            ..Default::default()
        };
        assert!(matches!(check(&rec, &tp), CheckVerdict::Unconfirmed(v) if v.len() == 2));
    }

    #[test]
    fn principal_check_known_mismatch_refuses() {
        let tp = template_principals(
            json!({"PolicyName": "Q", "Roles": ["r2"]}).as_object(),
            &BTreeMap::new(),
        );
        let rec = PolicyTargets {
            policy_name: "P".into(),
            roles: Some(vec!["r1".into()]),
            ..Default::default()
        };
        assert_eq!(
            check(&rec, &tp),
            CheckVerdict::Mismatch(vec![
                PrincipalMismatch::PolicyName {
                    template: "Q".into(),
                    recorded: "P".into(),
                },
                PrincipalMismatch::NotDetached {
                    key: "Roles",
                    value: "r2".into(),
                },
            ])
        );
        let ok = template_principals(
            json!({"PolicyName": "P", "Roles": ["r1"]}).as_object(),
            &BTreeMap::new(),
        );
        assert_eq!(check(&rec, &ok), CheckVerdict::Ok);
    }

    #[test]
    fn principal_check_list_parameter_expands() {
        let e = env(&[("Rs", Binding::Value(Ev::List(vec!["a".into(), "b".into()])))]);
        let tp = template_principals(json!({"Roles": {"Ref": "Rs"}}).as_object(), &e);
        assert_eq!(tp.roles.len(), 2);
    }
}
