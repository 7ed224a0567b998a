//! The words of an export's refusals of its inputs and of its gates (docs/export.md,
//! "Names", "Parameters", "Rows the template leaves out" and "Warnings and printing"):
//! a destination name or `--cfn-child-stack-name` token ([`NameRefusal`]), a parameter
//! of the root or of a nested child ([`ParamRefusal`]), and a gate a real run is refused
//! on without its flag ([`GateRefusal`]), which a dry run's plan shows as a warning
//! ([`gate_warning`]). The deciding modules (`export::names`, `export::params`,
//! `Plan::gates`) return the values and word nothing. Untrusted values are printed
//! through the plain-value rule (`export::plain::shown`) or flattened, as these
//! messages always were.

use std::fmt;

use crate::export::names::NameRefusal;
use crate::export::params::{NestedRefusal, ParamRefusal};
use crate::export::plain::shown;
use crate::export::refusal::GateRefusal;
use crate::export::template::AbsoluteAssetPath;
use crate::export::unmanaged::{UnmanagedRow, FLAG};
use crate::text::flatten_str;
use crate::view::refusal::TypedRefusal;

impl TypedRefusal for NameRefusal {}
impl TypedRefusal for ParamRefusal {}
impl TypedRefusal for GateRefusal {}

/// CloudFormation's stack-name rule, as the refusals say it.
const NAME_RULE: &str = "a letter, then letters, digits and hyphens, at most 128";

impl fmt::Display for NameRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const CHILD_FLAG: &str = "--cfn-child-stack-name";
        match self {
            NameRefusal::NotAPair { token } => {
                write!(f, "{CHILD_FLAG} {} is not of the form <cdkd>=<cfn>", shown(token))
            }
            NameRefusal::EmptySide { token } => write!(
                f,
                "{CHILD_FLAG} {} has an empty side; expected <cdkd>=<cfn>",
                shown(token)
            ),
            NameRefusal::InvalidOverride { cfn_stack } => write!(
                f,
                "{CHILD_FLAG}: {} is not a valid CloudFormation stack name ({NAME_RULE})",
                shown(cfn_stack)
            ),
            NameRefusal::Twice { stack } => {
                write!(f, "{CHILD_FLAG} names {} more than once", shown(stack))
            }
            NameRefusal::InvalidName { stack, cfn_stack } => write!(
                f,
                "stack {} maps to CloudFormation name {}, which is not a valid stack name ({NAME_RULE}); pass --cfn-stack-name for the root or {CHILD_FLAG} <cdkd>=<cfn> for a nested child",
                shown(stack),
                shown(cfn_stack)
            ),
        }
    }
}

impl fmt::Display for ParamRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamRefusal::NotKeyValue { token } => {
                write!(f, "--parameter {} is not of the form KEY=VALUE", shown(token))
            }
            ParamRefusal::EmptyKey { token } => {
                write!(f, "--parameter {} has an empty key", shown(token))
            }
            ParamRefusal::NoParametersSection => {
                f.write_str("--parameter was given, but the template declares no Parameters")
            }
            ParamRefusal::Undeclared { key, declared } => write!(
                f,
                "--parameter {} names no declared parameter; the template declares: {}",
                shown(key),
                shown_list(declared)
            ),
            ParamRefusal::Missing { names } => write!(
                f,
                "parameter(s) without a Default and without --parameter: {}; pass --parameter KEY=VALUE or declare a Default",
                shown_list(names)
            ),
            ParamRefusal::Nested { child_stack, why } => {
                write!(f, "nested stack {}: {why}", shown(child_stack))
            }
            ParamRefusal::NoEchoNotPlainRef { child_stack, key } => write!(
                f,
                "export of {}: the NoEcho parameter {} its parent passes is not a plain Ref to one of the parent's parameters, so it cannot be submitted (the plan stores it masked)",
                shown(child_stack),
                shown(key)
            ),
        }
    }
}

fn shown_list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| shown(n))
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for NestedRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const TAGS_WAY_OUT: &str = "CloudFormation adopts the nested stack only when the row's Tags match the stack's; write the tag as a literal Key and Value (or a Ref to a parameter of the parent) in the app, then export";
        match self {
            NestedRefusal::SecureString { param, ssm_name } => write!(
                f,
                "parameter {} is SSM-typed and names {}, a SecureString: cdkd-flow never reads it decrypted, and CloudFormation does not accept a SecureString for an SSM-typed parameter",
                shown(param),
                shown(ssm_name)
            ),
            NestedRefusal::SsmUnreadable(u) => write!(
                f,
                "could not read SSM parameter {} for parameter {} ({}); nothing was locked or written",
                shown(&u.ssm_name),
                shown(&u.param),
                flatten_str(&u.cause)
            ),
            NestedRefusal::TagsNotAList { kind } => write!(
                f,
                "the parent row's Tags is {kind}, not a list of Key/Value pairs; {TAGS_WAY_OUT}"
            ),
            NestedRefusal::TagUnresolved { tag } => write!(
                f,
                "the parent row's tag {} cannot be resolved while planning; {TAGS_WAY_OUT}",
                flatten_str(tag)
            ),
        }
    }
}

/// A real run's refusal on a gate.
impl fmt::Display for AbsoluteAssetPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "nested stack {} names an absolute template path in Metadata['aws:asset:path']; only a path relative to the parent template is read",
            flatten_str(&self.logical_id)
        )
    }
}

impl fmt::Display for GateRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GateRefusal::Unmanaged { rows } => {
                let listed: Vec<String> = rows
                    .iter()
                    .map(|(stack, r)| format!("[{}] {}", shown(stack), describe(r)))
                    .collect();
                write!(
                    f,
                    "{} resource(s) of the cdkd record are not in the template, so the export would not import them and would delete the record, leaving them running in AWS, owned by nothing: {}. Declare them in the app to migrate them too; or, to delete them, deploy the app with cdkd first (cdkd deletes what the template no longer declares); or pass {FLAG} to leave them as they are",
                    rows.len(),
                    listed.join(", ")
                )
            }
            GateRefusal::CustomResources { count } => write!(
                f,
                "{count} Custom Resource(s) cannot be imported; phase 2 creates them again, which re-runs their create handlers. Pass --include-non-importable to accept that"
            ),
        }
    }
}

/// A gate as a dry run's plan shows it: the refusal's words, and for rows left
/// unmanaged that a real run is refused.
pub fn gate_warning(gate: &GateRefusal) -> String {
    match gate {
        GateRefusal::Unmanaged { .. } => {
            format!("{gate} (a real run without {FLAG} is refused)")
        }
        GateRefusal::CustomResources { .. } => gate.to_string(),
    }
}

/// `L (T) <physical id>` of a row left unmanaged, for the gate and the plan.
pub fn describe(r: &UnmanagedRow) -> String {
    let ty = if r.resource_type.is_empty() {
        "no type recorded".to_string()
    } else {
        flatten_str(&r.resource_type)
    };
    format!(
        "{} ({ty}) {}",
        flatten_str(&r.logical_id),
        shown(&r.physical_id)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(logical_id: &str, resource_type: &str, physical_id: &str) -> UnmanagedRow {
        UnmanagedRow {
            logical_id: logical_id.into(),
            resource_type: resource_type.into(),
            physical_id: physical_id.into(),
            identifier: Default::default(),
        }
    }

    #[test]
    fn the_words_of_every_input_refusal_and_gate() {
        let lines: Vec<String> = [
            NameRefusal::NotAPair {
                token: "nokey".into(),
            }
            .to_string(),
            NameRefusal::EmptySide { token: "=x".into() }.to_string(),
            NameRefusal::InvalidOverride {
                cfn_stack: "1bad".into(),
            }
            .to_string(),
            NameRefusal::Twice {
                stack: "Root~Db".into(),
            }
            .to_string(),
            NameRefusal::InvalidName {
                stack: "1app".into(),
                cfn_stack: "1app".into(),
            }
            .to_string(),
            ParamRefusal::NotKeyValue { token: "A".into() }.to_string(),
            ParamRefusal::EmptyKey {
                token: " =1".into(),
            }
            .to_string(),
            ParamRefusal::NoParametersSection.to_string(),
            ParamRefusal::Undeclared {
                key: "Typo".into(),
                declared: vec!["Stage".into(), "bad name".into()],
            }
            .to_string(),
            ParamRefusal::Missing {
                names: vec!["Need".into(), "Also".into()],
            }
            .to_string(),
            ParamRefusal::NoEchoNotPlainRef {
                child_stack: "App~Db".into(),
                key: "Joined".into(),
            }
            .to_string(),
            ParamRefusal::Nested {
                child_stack: "App~Db".into(),
                why: NestedRefusal::SecureString {
                    param: "Name".into(),
                    ssm_name: "/app/name".into(),
                },
            }
            .to_string(),
            ParamRefusal::Nested {
                child_stack: "App~Db".into(),
                why: NestedRefusal::SsmUnreadable(crate::export::params::UnreadSsm {
                    ssm_name: "/app/name".into(),
                    param: "Name".into(),
                    cause: "AccessDenied:\nnot allowed".into(),
                }),
            }
            .to_string(),
            ParamRefusal::Nested {
                child_stack: "App~Db".into(),
                why: NestedRefusal::TagsNotAList { kind: "an object" },
            }
            .to_string(),
            ParamRefusal::Nested {
                child_stack: "App~Db".into(),
                why: NestedRefusal::TagUnresolved {
                    tag: r#"{"Key":"k","Value":{"Fn::ImportValue":"x"}}"#.into(),
                },
            }
            .to_string(),
        ]
        .into_iter()
        .chain(
            [
                GateRefusal::Unmanaged {
                    rows: vec![
                        ("App".into(), row("Old", "AWS::S3::Bucket", "old-bucket")),
                        ("App~Db".into(), row("Gone", "", "id with space")),
                    ],
                },
                GateRefusal::CustomResources { count: 2 },
            ]
            .iter()
            .flat_map(|g| [g.to_string(), gate_warning(g)]),
        )
        .collect();
        insta::assert_snapshot!(lines.join("\n"));
    }

    /// A nested stack row naming an absolute template path: the refusal names the row,
    /// flattened.
    #[test]
    fn absolute_asset_path_words_with_a_hostile_logical_id() {
        let r = crate::export::template::AbsoluteAssetPath {
            logical_id: "Child\nFake\x1b[2J".into(),
        };
        insta::assert_snapshot!(r.to_string());
    }
}
