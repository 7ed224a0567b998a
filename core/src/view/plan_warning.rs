//! The words of a plan's warnings ([`PlanWarning`], docs/export.md, "Warnings and
//! printing" and "Drift-baseline warning"). Untrusted values are sanitised where they
//! are printed, as the plan always printed them: a stack name by the identifier rule
//! (`display_ident_str`), logical ids and fields flattened, a child's name and parameter
//! keys by the printing rule (`shown`); `plan.json` stores these words ([`PlanWarning`]'s
//! serde goes through `String`).

use std::fmt;

use crate::export::iam::{Unconfirmed, UnconfirmedPrincipal};
use crate::export::params::{Unresolved, UnresolvedParameters};
use crate::export::plain::shown;
use crate::export::warning::{
    PlanWarning, RefreshAdvice, RefreshCommand, RefusedRemedy, ShowCommand,
};
use crate::text::{display_ident_str, flatten_str, or_unrenderable, shell_quote, STACK_NAME_CAP};
use crate::view::export_input::gate_warning;
use crate::view::words::describe_value;

/// How many logical ids a list names before "… and N more".
pub const LIST_CAP: usize = 10;

impl From<PlanWarning> for String {
    fn from(w: PlanWarning) -> String {
        w.to_string()
    }
}

impl fmt::Display for RefreshCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cdkd-flow state refresh-observed {} --stack-region {}",
            shell_quote(&self.stack),
            shell_quote(&self.region)
        )
    }
}

impl fmt::Display for ShowCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cdkd-flow state show {}", shell_quote(&self.name))?;
        match &self.region {
            Some(r) => write!(f, " --stack-region {}", shell_quote(r)),
            None => Ok(()),
        }
    }
}

impl fmt::Display for PlanWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanWarning::MalformedRows { stack, ids } => write!(
                f,
                "Stack {}: {} resources entr(ies) are not objects or carry no resource type, and are left out of the baseline tally: {}.",
                shown_stack(stack),
                ids.len(),
                listed(ids)
            ),
            PlanWarning::SchemaPredatesBaselines { stack, advice } => write!(
                f,
                "Stack {}: its state schema predates drift baselines; after the export, drift has no baseline to compare against. Deploy once, or {}",
                shown_stack(stack),
                refresh_advice(advice)
            ),
            PlanWarning::MissingBaselines {
                stack,
                missing,
                total,
                advice,
            } => write!(
                f,
                "Stack {}: {} of {total} resource(s) have no drift baseline: {}. {}",
                shown_stack(stack),
                missing.len(),
                listed(missing),
                capitalise(&refresh_advice(advice))
            ),
            PlanWarning::RefusedBaselines { stack, ids, remedy } => {
                refused(f, stack, ids, *remedy)
            }
            PlanWarning::OverlayScalar {
                logical_id,
                field,
                was,
                value,
            } => write!(
                f,
                "{}: Properties.{} was {}; the exported template now carries the scalar '{}'",
                flatten_str(logical_id),
                flatten_str(field),
                describe_value(was),
                flatten_str(value)
            ),
            PlanWarning::ChildParametersUnresolved(u) => u.fmt(f),
            PlanWarning::Identifier {
                logical_id,
                warning,
            } => write!(f, "{}: {warning}", flatten_str(logical_id)),
            PlanWarning::PrincipalsUnconfirmed {
                logical_id,
                unconfirmed,
            } => write!(
                f,
                "{}: the principals phase 2 attaches the policy to could not all be confirmed against the record: {}",
                flatten_str(logical_id),
                unconfirmed
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            PlanWarning::Gate(gate) => f.write_str(&gate_warning(gate)),
            PlanWarning::Recorded(words) => f.write_str(words),
        }
    }
}

impl fmt::Display for UnresolvedParameters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "nested stack {}: parameter(s) not resolved while planning: {}; the child template's Defaults must cover them",
            shown(&self.stack),
            self.unresolved
                .iter()
                .map(|(key, why)| format!("{} ({why})", shown(key)))
                .collect::<Vec<_>>()
                .join("; ")
        )
    }
}

/// Why a value was not resolved while planning: a name by the printing rule (`shown`),
/// an intrinsic and an SSM read's cause flattened.
impl fmt::Display for Unresolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unresolved::RefUnknown { name } => write!(
                f,
                "Ref {} resolves to nothing the parent knows",
                shown(name)
            ),
            Unresolved::SsmNotRead { ssm_name } => {
                write!(f, "the SSM parameter {} was not read", shown(ssm_name))
            }
            Unresolved::SsmUnread(u) => write!(
                f,
                "could not read SSM parameter {} for parameter {} ({}); planned without it, so nested IAM principals read as unconfirmed",
                shown(&u.ssm_name),
                shown(&u.param),
                flatten_str(&u.cause)
            ),
            Unresolved::GetAttMissing {
                resource,
                attribute,
            } => write!(
                f,
                "Fn::GetAtt {}.{} is not in the parent's record",
                shown(resource),
                shown(attribute)
            ),
            Unresolved::Malformed { intrinsic } => write!(f, "malformed {intrinsic}"),
            Unresolved::SelectIndexNotANumber => f.write_str("Fn::Select index is not a number"),
            Unresolved::SelectIndexOutOfRange => f.write_str("Fn::Select index out of range"),
            Unresolved::SelectOverNonList => f.write_str("Fn::Select over a non-list"),
            Unresolved::NotEvaluated { intrinsic } => write!(
                f,
                "{} is not resolved while planning",
                flatten_str(intrinsic)
            ),
            Unresolved::NotAnIntrinsic => {
                f.write_str("the value is not a string or a supported intrinsic")
            }
            Unresolved::NoValueNoDefault => f.write_str("no value passed and no Default"),
        }
    }
}

impl From<Unconfirmed> for String {
    fn from(u: Unconfirmed) -> String {
        u.to_string()
    }
}

/// Why a principal cannot be confirmed: a parameter's name by the printing rule
/// (`shown`), an unresolved parameter's reason flattened.
impl fmt::Display for Unconfirmed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unconfirmed::OwnSsmParameter { name } => write!(
                f,
                "Ref {} is the stack's own SSM-typed parameter; its submitted value is the SSM parameter's name",
                shown(name)
            ),
            Unconfirmed::RefUnresolved { name, why } => write!(
                f,
                "Ref {} is not resolved ({})",
                shown(name),
                flatten_str(&why.to_string())
            ),
            Unconfirmed::NoSuchParameter { name } => {
                write!(f, "Ref {} names no parameter", shown(name))
            }
            Unconfirmed::NotEvaluated => f.write_str("an intrinsic the plan does not evaluate"),
            Unconfirmed::Empty => f.write_str("empty"),
            Unconfirmed::Recorded(words) => f.write_str(words),
        }
    }
}

impl fmt::Display for UnconfirmedPrincipal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnconfirmedPrincipal::PolicyName(why) => write!(f, "PolicyName ({why})"),
            UnconfirmedPrincipal::Entry { key, why } => write!(f, "{key} entry ({why})"),
        }
    }
}

/// A refused-baselines warning, by what clears the baseline.
fn refused(
    f: &mut fmt::Formatter<'_>,
    stack: &str,
    ids: &[String],
    remedy: RefusedRemedy,
) -> fmt::Result {
    let (stack, ids) = (shown_stack(stack), listed(ids));
    match remedy {
        RefusedRemedy::DeployFixes => write!(
            f,
            "Stack {stack}: cdkd import refused the baseline of {ids}; deploying a change to the resource restores it."
        ),
        RefusedRemedy::ParameterBound => write!(
            f,
            "Stack {stack}: cdkd import refused the baseline of {ids} over a template parameter whose deployed value could not be proved; only replacing the resource, or re-importing it while a CloudFormation stack can prove the value, clears it."
        ),
        RefusedRemedy::CannotTell => write!(
            f,
            "Stack {stack}: cdkd import refused the baseline of {ids}, recorded without its reason; with --template, or for a resource the template no longer defines, the export cannot tell whether deploying a change restores it or only replacing the resource does."
        ),
    }
}

/// A record's stack name in a drift warning (docs/state-views.md, "Printable (stack
/// names and regions in diagnostics)").
fn shown_stack(stack: &str) -> String {
    display_ident_str(stack, STACK_NAME_CAP)
}

/// The advice of the missing-baselines warning, lower-case first.
fn refresh_advice(advice: &RefreshAdvice) -> String {
    let inspect = |show: &Option<ShowCommand>| {
        show.as_ref()
            .map(|c| format!(" Inspect it with: {c}"))
            .unwrap_or_default()
    };
    match advice {
        RefreshAdvice::RepairFirst { show } => format!(
            "repair the record first (cdkd-flow state refresh-observed refuses a record holding such a row), then capture baselines.{}",
            inspect(show)
        ),
        RefreshAdvice::LegacyRecord { show } => format!(
            "this is a legacy record with no region: migrate it first (any cdkd write does), then capture baselines with cdkd-flow state refresh-observed.{}",
            inspect(show)
        ),
        RefreshAdvice::Capture { command } => {
            format!("capture them, then run cdkd drift; the capture command: {command}")
        }
        RefreshAdvice::NoCommand { show } => format!(
            "capture them with cdkd-flow state refresh-observed for this stack (no command is printed: the stack name or region does not render exactly as loaded).{}",
            inspect(show)
        ),
    }
}

/// Up to [`LIST_CAP`] ids, flattened, then "… and N more".
fn listed(ids: &[String]) -> String {
    let mut out: Vec<String> = ids
        .iter()
        .take(LIST_CAP)
        .map(|i| or_unrenderable(flatten_str(i)))
        .collect();
    if ids.len() > LIST_CAP {
        out.push(format!("… and {} more", ids.len() - LIST_CAP));
    }
    out.join(", ")
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::plan::{Plan, StackPlan};
    use crate::export::refusal::GateRefusal;
    use crate::export::splitters::SplitWarning;
    use crate::export::unmanaged::UnmanagedRow;
    use crate::view::test_support::lines;
    use serde_json::json;

    fn s(v: &str) -> String {
        v.to_string()
    }

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("R{i:02}")).collect()
    }

    fn show(name: &str, region: Option<&str>) -> Option<ShowCommand> {
        Some(ShowCommand {
            name: s(name),
            region: region.map(s),
        })
    }

    /// Every variant, each advice, and hostile values wherever an untrusted value is
    /// printed.
    fn every_warning() -> Vec<PlanWarning> {
        let hostile_ids = vec![s("A\nB"), s("\u{1b}[31mRed"), s(""), s("-dash")];
        let mut warnings = vec![
            PlanWarning::MalformedRows {
                stack: s("App"),
                ids: hostile_ids.clone(),
            },
            PlanWarning::MalformedRows {
                stack: s("App\u{1b}[2J\nx"),
                ids: ids(12),
            },
            PlanWarning::SchemaPredatesBaselines {
                stack: s("App"),
                advice: RefreshAdvice::Capture {
                    command: RefreshCommand {
                        stack: s("Root~Child"),
                        region: s("us-east-1"),
                    },
                },
            },
            PlanWarning::SchemaPredatesBaselines {
                stack: s(""),
                advice: RefreshAdvice::LegacyRecord { show: None },
            },
        ];
        let advice = [
            RefreshAdvice::RepairFirst {
                show: show("App", Some("us-east-1")),
            },
            RefreshAdvice::RepairFirst { show: None },
            RefreshAdvice::LegacyRecord {
                show: show("it's", None),
            },
            RefreshAdvice::Capture {
                command: RefreshCommand {
                    stack: s("App"),
                    region: s("us-east-1"),
                },
            },
            RefreshAdvice::NoCommand {
                show: show("App [2J", Some("eu west")),
            },
            RefreshAdvice::NoCommand { show: None },
        ];
        warnings.extend(
            advice
                .into_iter()
                .map(|advice| PlanWarning::MissingBaselines {
                    stack: s("App"),
                    missing: ids(11),
                    total: 13,
                    advice,
                }),
        );
        warnings.extend(
            [
                RefusedRemedy::DeployFixes,
                RefusedRemedy::ParameterBound,
                RefusedRemedy::CannotTell,
            ]
            .into_iter()
            .map(|remedy| PlanWarning::RefusedBaselines {
                stack: s("-App"),
                ids: hostile_ids.clone(),
                remedy,
            }),
        );
        warnings.extend(others());
        warnings
    }

    fn others() -> Vec<PlanWarning> {
        vec![
            PlanWarning::OverlayScalar {
                logical_id: s("Q\nx"),
                field: s("Name\u{1b}"),
                was: json!(["a\nb", 5, vec!["x".repeat(50); 3]]),
                value: s("v\r\nw"),
            },
            PlanWarning::OverlayScalar {
                logical_id: s("N"),
                field: s("Namespace"),
                was: json!(null),
                value: s("analytics"),
            },
            PlanWarning::ChildParametersUnresolved(UnresolvedParameters {
                stack: s("App~Db\n"),
                unresolved: vec![
                    (s("Plain"), Unresolved::RefUnknown { name: s("X") }),
                    (
                        s("bad key"),
                        Unresolved::Malformed {
                            intrinsic: "Fn::Join",
                        },
                    ),
                ],
            }),
            PlanWarning::Identifier {
                logical_id: s("Route\u{1b}[2J"),
                warning: SplitWarning::RouteDestinationDiffers {
                    destination: s("10.0.0.0/16\n"),
                    recorded: vec![s("pl-1"), s("x\ny")],
                },
            },
            PlanWarning::PrincipalsUnconfirmed {
                logical_id: s("Policy\nx"),
                unconfirmed: vec![
                    UnconfirmedPrincipal::PolicyName(Unconfirmed::Empty),
                    UnconfirmedPrincipal::Entry {
                        key: "Roles",
                        why: Unconfirmed::NotEvaluated,
                    },
                ],
            },
            PlanWarning::Gate(GateRefusal::CustomResources { count: 2 }),
            PlanWarning::Gate(GateRefusal::Unmanaged {
                rows: vec![(
                    s("App"),
                    UnmanagedRow {
                        logical_id: s("Left\nOver"),
                        resource_type: s("AWS::SQS::Queue"),
                        physical_id: s("https://q\u{1b}"),
                        identifier: serde_json::Map::new(),
                    },
                )],
            }),
            PlanWarning::Recorded(s("a warning read back")),
        ]
    }

    #[test]
    fn the_words_of_every_plan_warning() {
        insta::assert_snapshot!(lines(&every_warning()));
    }

    /// Every reason a value is unresolved or a principal unconfirmed, hostile values
    /// wherever an untrusted one is printed.
    #[test]
    fn the_words_of_every_unresolved_and_unconfirmed_reason() {
        use crate::export::params::UnreadSsm;
        let unresolved = vec![
            Unresolved::RefUnknown { name: s("Bucket") },
            Unresolved::RefUnknown {
                name: s("A\nB\u{1b}[2J"),
            },
            Unresolved::SsmNotRead {
                ssm_name: s("/app/\nname"),
            },
            Unresolved::SsmUnread(UnreadSsm {
                ssm_name: s("/app/name"),
                param: s("Name\r"),
                cause: s("AccessDenied:\nnot\u{1b}[31m allowed"),
            }),
            Unresolved::GetAttMissing {
                resource: s("Bucket"),
                attribute: s("Arn\n"),
            },
            Unresolved::Malformed {
                intrinsic: "Fn::Sub",
            },
            Unresolved::SelectIndexNotANumber,
            Unresolved::SelectIndexOutOfRange,
            Unresolved::SelectOverNonList,
            Unresolved::NotEvaluated {
                intrinsic: s("Fn::Bad\n\u{1b}[2J"),
            },
            Unresolved::NotAnIntrinsic,
            Unresolved::NoValueNoDefault,
        ];
        let mut unconfirmed = vec![
            Unconfirmed::OwnSsmParameter { name: s("Ssm") },
            Unconfirmed::OwnSsmParameter { name: s("x y") },
            Unconfirmed::NoSuchParameter { name: s("Gh\nost") },
            Unconfirmed::NotEvaluated,
            Unconfirmed::Empty,
            Unconfirmed::Recorded(s("words read back")),
        ];
        unconfirmed.extend(unresolved.iter().map(|why| Unconfirmed::RefUnresolved {
            name: s("RoleP"),
            why: Box::new(why.clone()),
        }));
        let principals = [
            UnconfirmedPrincipal::PolicyName(Unconfirmed::Empty),
            UnconfirmedPrincipal::Entry {
                key: "Groups",
                why: Unconfirmed::NoSuchParameter { name: s("\u{7}") },
            },
        ];
        let text = unresolved
            .iter()
            .map(ToString::to_string)
            .chain(unconfirmed.iter().map(ToString::to_string))
            .chain(principals.iter().map(ToString::to_string))
            .collect::<Vec<_>>()
            .join("\n");
        insta::assert_snapshot!(text);
    }

    /// `plan.json` keeps an unconfirmed template principal's reason as its words, and
    /// reads it back as [`Unconfirmed::Recorded`].
    #[test]
    fn a_pre_delete_stores_its_unconfirmed_reasons_as_words() {
        use crate::export::iam::{Checked, TemplatePrincipals};
        let why = Unconfirmed::RefUnresolved {
            name: s("RoleP"),
            why: Box::new(Unresolved::NotEvaluated {
                intrinsic: s("Fn::If\n"),
            }),
        };
        let typed = TemplatePrincipals {
            policy_name: Some(Checked::Unconfirmed {
                why: Unconfirmed::Empty,
            }),
            roles: vec![
                Checked::Known { value: s("r1") },
                Checked::Unconfirmed { why: why.clone() },
            ],
            ..Default::default()
        };
        let stored = serde_json::to_value(&typed).unwrap_or_default();
        assert_eq!(
            stored,
            json!({
                "policyName": {"kind": "unconfirmed", "why": "empty"},
                "roles": [
                    {"kind": "known", "value": "r1"},
                    {"kind": "unconfirmed", "why": "Ref RoleP is not resolved (Fn::If is not resolved while planning)"}
                ],
                "users": [],
                "groups": []
            })
        );
        let back: TemplatePrincipals = serde_json::from_value(stored.clone()).unwrap_or_default();
        assert_eq!(
            back.roles[1],
            Checked::Unconfirmed {
                why: Unconfirmed::Recorded(why.to_string())
            }
        );
        assert_eq!(serde_json::to_value(&back).unwrap_or_default(), stored);
    }

    /// `plan.json` keeps the words: a plan with typed warnings is stored as the plan of
    /// their words, and reads back with them as [`PlanWarning::Recorded`].
    #[test]
    fn a_plan_stores_its_warnings_as_words_and_reads_them_back_as_recorded() {
        let typed = Plan {
            stacks: vec![StackPlan {
                stack: s("App"),
                warnings: every_warning(),
                ..Default::default()
            }],
            warnings: others(),
        };
        let words = |w: &[PlanWarning]| -> Vec<PlanWarning> {
            w.iter()
                .map(|w| PlanWarning::Recorded(w.to_string()))
                .collect()
        };
        let recorded = Plan {
            stacks: vec![StackPlan {
                warnings: words(&typed.stacks[0].warnings),
                ..typed.stacks[0].clone()
            }],
            warnings: words(&typed.warnings),
        };
        let stored = serde_json::to_string(&typed).unwrap_or_default();
        assert_eq!(stored, serde_json::to_string(&recorded).unwrap_or_default());
        let stored_words = serde_json::to_value(&typed).unwrap_or_default();
        assert_eq!(
            stored_words["warnings"][0],
            json!(typed.warnings[0].to_string())
        );
        let back: Plan = serde_json::from_str(&stored).unwrap_or_default();
        assert_eq!(back, recorded);
        assert_eq!(
            serde_json::to_string(&back).unwrap_or_default(),
            stored,
            "read back and stored again, byte for byte"
        );
    }
}
