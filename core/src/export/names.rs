//! CloudFormation destination names (docs/export.md, "Step details" S4, "Names"): the default
//! mapping of a cdkd stack name, the `--cfn-stack-name` / `--cfn-child-stack-name
//! cdkd=cfn` overrides, and the refusal when a stack with the destination name exists.

use std::collections::BTreeMap;

use super::refusal::ExportRefusal;

/// CloudFormation's stack-name rule, also its length limit.
pub fn is_valid_cfn_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 128
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// The default CloudFormation name: every `~` becomes `-`.
pub fn default_cfn_name(cdkd_name: &str) -> String {
    cdkd_name.replace('~', "-")
}

/// Why a destination name, or a `--cfn-child-stack-name` token, is refused. Worded by
/// `core::view::export_input`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameRefusal {
    /// A token without `=`.
    NotAPair { token: String },
    /// A token with an empty side (after trimming).
    EmptySide { token: String },
    /// The CloudFormation side is not a valid stack name.
    InvalidOverride { cfn_stack: String },
    /// The same cdkd stack named twice.
    Twice { stack: String },
    /// The stack's destination name (its override, else the default mapping) is not a
    /// valid CloudFormation name.
    InvalidName { stack: String, cfn_stack: String },
}

/// Parses the `--cfn-child-stack-name cdkd=cfn` tokens: split at the first `=`, both
/// sides trimmed and non-empty, the CloudFormation side a valid name, no cdkd key twice.
pub fn parse_child_overrides(tokens: &[String]) -> Result<BTreeMap<String, String>, NameRefusal> {
    let mut out = BTreeMap::new();
    for token in tokens {
        let Some((k, v)) = token.split_once('=') else {
            return Err(NameRefusal::NotAPair {
                token: token.clone(),
            });
        };
        let (k, v) = (crate::text::js_trim(k), crate::text::js_trim(v));
        if k.is_empty() || v.is_empty() {
            return Err(NameRefusal::EmptySide {
                token: token.clone(),
            });
        }
        if !is_valid_cfn_name(v) {
            return Err(NameRefusal::InvalidOverride {
                cfn_stack: v.to_string(),
            });
        }
        if out.insert(k.to_string(), v.to_string()).is_some() {
            return Err(NameRefusal::Twice {
                stack: k.to_string(),
            });
        }
    }
    Ok(out)
}

/// The destination name of one stack: the override when given, else the default
/// mapping, refused when it is not a valid CloudFormation name. The flat path validates
/// too (decision on docs/export.md, "Decisions": CloudFormation would refuse it anyway, later).
pub fn cfn_name(
    cdkd_name: &str,
    is_root: bool,
    root_override: Option<&str>,
    child_overrides: &BTreeMap<String, String>,
) -> Result<String, NameRefusal> {
    let name = if is_root {
        root_override.map(str::to_string)
    } else {
        child_overrides.get(cdkd_name).cloned()
    }
    .unwrap_or_else(|| default_cfn_name(cdkd_name));
    if is_valid_cfn_name(&name) {
        Ok(name)
    } else {
        Err(NameRefusal::InvalidName {
            stack: cdkd_name.to_string(),
            cfn_stack: name,
        })
    }
}

/// What `DescribeStacks` said about a destination name.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", tag = "is")]
pub enum Destination {
    Absent,
    /// A stack exists, with its status (any status, REVIEW_IN_PROGRESS included).
    Exists {
        status: String,
    },
}

/// Reads a failed `DescribeStacks`: a message saying the stack "does not exist"
/// (case-insensitive) means absent; any other error must abort (`None`).
pub fn absent_from_error(message: &str) -> Option<Destination> {
    message
        .to_ascii_lowercase()
        .contains("does not exist")
        .then_some(Destination::Absent)
}

/// The refusal for an existing destination, else `None`.
pub fn destination_refusal(
    cdkd_name: &str,
    cfn_name: &str,
    dest: &Destination,
) -> Option<ExportRefusal> {
    match dest {
        Destination::Absent => None,
        Destination::Exists { status } => Some(ExportRefusal::DestinationExists {
            stack: cdkd_name.to_string(),
            cfn_stack: cfn_name.to_string(),
            status: status.clone(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statement_8_review_in_progress_destination_refuses_naming_the_status() {
        let refusal = destination_refusal(
            "App",
            "App",
            &Destination::Exists {
                status: "REVIEW_IN_PROGRESS".into(),
            },
        )
        .unwrap();
        assert_eq!(
            refusal,
            ExportRefusal::DestinationExists {
                stack: "App".into(),
                cfn_stack: "App".into(),
                status: "REVIEW_IN_PROGRESS".into()
            }
        );
        let r = refusal.to_string();
        assert!(
            r.contains("REVIEW_IN_PROGRESS") && r.contains("--cfn-stack-name"),
            "{r}"
        );
        assert!(destination_refusal(
            "App",
            "App",
            &Destination::Exists {
                status: "ROLLBACK_COMPLETE".into()
            }
        )
        .is_some());
        assert_eq!(
            destination_refusal("App", "App", &Destination::Absent),
            None
        );
    }

    #[test]
    fn statement_9_describe_stacks_access_denied_is_not_absent() {
        assert_eq!(
            absent_from_error("Stack with id App does not exist"),
            Some(Destination::Absent)
        );
        assert_eq!(
            absent_from_error("Stack with id App DOES NOT EXIST"),
            Some(Destination::Absent)
        );
        assert_eq!(
            absent_from_error("User is not authorized to perform cloudformation:DescribeStacks"),
            None
        );
    }

    #[test]
    fn statement_78_child_default_name_and_override() {
        let none = BTreeMap::new();
        assert_eq!(cfn_name("Root~Db", false, None, &none).unwrap(), "Root-Db");
        let o = parse_child_overrides(&["Root~Db=db-prod".into()]).unwrap();
        assert_eq!(cfn_name("Root~Db", false, None, &o).unwrap(), "db-prod");
        assert_eq!(
            cfn_name("Root", true, Some("root-cfn"), &o).unwrap(),
            "root-cfn"
        );
    }

    #[test]
    fn statement_79_root_named_1app_refuses_without_cfn_stack_name() {
        let e = cfn_name("1app", true, None, &BTreeMap::new()).unwrap_err();
        assert_eq!(
            e,
            NameRefusal::InvalidName {
                stack: "1app".into(),
                cfn_stack: "1app".into()
            }
        );
        assert!(e.to_string().contains("--cfn-stack-name"), "{e}");
        assert!(cfn_name("1app", true, Some("app1"), &BTreeMap::new()).is_ok());
    }

    #[test]
    fn statement_80_duplicate_child_override_keys_refuse() {
        let e = parse_child_overrides(&["Root~Db=a".into(), " Root~Db = b".into()]).unwrap_err();
        assert_eq!(
            e,
            NameRefusal::Twice {
                stack: "Root~Db".into()
            }
        );
        assert!(e.to_string().contains("more than once"), "{e}");
        assert_eq!(
            parse_child_overrides(&["nokey".into()]),
            Err(NameRefusal::NotAPair {
                token: "nokey".into()
            })
        );
        assert_eq!(
            parse_child_overrides(&["=x".into()]),
            Err(NameRefusal::EmptySide { token: "=x".into() })
        );
        assert_eq!(
            parse_child_overrides(&["Root~Db=1bad".into()]),
            Err(NameRefusal::InvalidOverride {
                cfn_stack: "1bad".into()
            })
        );
    }

    #[test]
    fn cfn_name_rule() {
        assert!(is_valid_cfn_name("A-b-1"));
        assert!(!is_valid_cfn_name("a_b"));
        assert!(!is_valid_cfn_name(""));
        assert!(!is_valid_cfn_name(&"a".repeat(129)));
    }
}
