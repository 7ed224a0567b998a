//! `cdkd-flow force-unlock <stack> [--stack-region R]`: deletes a stack's `lock.json`
//! unconditionally (S&L §6.6, state-views §9) and says what it deleted.
//!
//! Which lock: `--stack-region R` → that region's lock only. Without it: the stack's one
//! record decides (a region-less legacy record → the legacy lock key); a stack with
//! records in several regions is refused with the regions listed; a stack with no record
//! → the CLI region.

use std::process::ExitCode;

use cdkd_aws::ForceReleased;
use cdkd_core::keys::StackRef;
use cdkd_core::text::{display_ident_str, flatten_str, DEFAULT_CAP, STACK_NAME_CAP};

use crate::context;
use crate::error::CliError;
use crate::global::GlobalOpts;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The stack whose lock to delete.
    pub stack: String,
    /// The region of the stack's record.
    #[arg(long)]
    pub stack_region: Option<String>,
}

/// Which lock key the command targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `<prefix>/<stack>/<region>/lock.json`.
    Region(String),
    /// `<prefix>/<stack>/lock.json`.
    Legacy,
}

/// Decides the target from the flag and the stack's refs (pure).
pub fn choose_target(
    stack: &str,
    stack_region: Option<&str>,
    refs: &[StackRef],
    cli_region: &str,
) -> Result<Target, CliError> {
    if let Some(r) = stack_region.filter(|r| !r.is_empty()) {
        return Ok(Target::Region(r.to_owned()));
    }
    let mine: Vec<&StackRef> = refs.iter().filter(|r| r.stack == stack).collect();
    match mine.as_slice() {
        [] => Ok(Target::Region(cli_region.to_owned())),
        [one] => Ok(match &one.region {
            Some(r) => Target::Region(r.clone()),
            None => Target::Legacy,
        }),
        many => {
            let regions: Vec<String> = many
                .iter()
                .map(|r| match &r.region {
                    Some(r) => display_ident_str(r, DEFAULT_CAP),
                    None => "(legacy)".into(),
                })
                .collect();
            Err(CliError::Refused(format!(
                "Stack {} has records in several regions: {}. Name the one to unlock with --stack-region <region>.",
                display_ident_str(stack, STACK_NAME_CAP),
                regions.join(", ")
            )))
        }
    }
}

/// The line printed after the delete (pure).
pub fn released_line(stack: &str, target: &Target, found: &ForceReleased) -> String {
    let stack = display_ident_str(stack, STACK_NAME_CAP);
    let where_ = match target {
        Target::Region(r) => format!("{stack} ({})", display_ident_str(r, DEFAULT_CAP)),
        Target::Legacy => format!("{stack} (legacy lock key)"),
    };
    match found {
        ForceReleased::Held(i) => {
            let owner = flatten_str(&i.owner);
            let owner = if owner.is_empty() {
                "(unnamed)".to_owned()
            } else {
                owner
            };
            let op = i
                .operation
                .as_deref()
                .map(flatten_str)
                .filter(|o| !o.is_empty())
                .map(|o| format!(", operation: {o}"))
                .unwrap_or_default();
            format!("Released lock for stack {where_}, owner: {owner}{op}")
        }
        ForceReleased::Unreadable => {
            format!("Deleted an unreadable lock object for stack {where_}.")
        }
        ForceReleased::Absent => format!("No lock found for stack {where_}; nothing to release."),
    }
}

pub async fn run(g: &GlobalOpts, a: Args) -> Result<ExitCode, CliError> {
    if a.stack.is_empty() {
        return Err(CliError::Usage(
            "Stack name is required. Usage: cdkd-flow force-unlock <stack-name>".into(),
        ));
    }
    let ctx = context::build(g).await?;
    let refs = if a.stack_region.as_deref().is_some_and(|r| !r.is_empty()) {
        Vec::new()
    } else {
        ctx.store
            .list_refs()
            .await
            .map_err(|e| CliError::Aws(e.to_string()))?
    };
    let target = choose_target(&a.stack, a.stack_region.as_deref(), &refs, &ctx.cli_region)?;
    let region = match &target {
        Target::Region(r) => Some(r.as_str()),
        Target::Legacy => None,
    };
    let found = ctx
        .locks
        .force_release_detailed(&a.stack, region)
        .await
        .map_err(|e| CliError::Aws(e.to_string()))?;
    println!("{}", released_line(&a.stack, &target, &found));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(stack: &str, region: Option<&str>) -> StackRef {
        StackRef::new(stack, region)
    }

    #[test]
    fn force_unlock_stack_region_flag_wins_over_the_listing() {
        let refs = [r("App", Some("eu-west-1")), r("App", Some("us-east-1"))];
        assert_eq!(
            choose_target("App", Some("ap-south-1"), &refs, "us-east-1").unwrap(),
            Target::Region("ap-south-1".into())
        );
    }

    #[test]
    fn force_unlock_empty_stack_region_counts_as_not_given() {
        let refs = [r("App", Some("eu-west-1"))];
        assert_eq!(
            choose_target("App", Some(""), &refs, "us-east-1").unwrap(),
            Target::Region("eu-west-1".into())
        );
    }

    #[test]
    fn force_unlock_legacy_only_record_targets_legacy_key() {
        let refs = [r("Leg", None), r("Other", Some("us-east-1"))];
        assert_eq!(
            choose_target("Leg", None, &refs, "us-east-1").unwrap(),
            Target::Legacy
        );
    }

    #[test]
    fn force_unlock_no_record_uses_cli_region() {
        assert_eq!(
            choose_target("Ghost", None, &[r("App", Some("eu-west-1"))], "us-west-2").unwrap(),
            Target::Region("us-west-2".into())
        );
    }

    #[test]
    fn force_unlock_several_regions_refused_naming_them() {
        let refs = [
            r("App", None),
            r("App", Some("eu-west-1")),
            r("App", Some("us-east-1")),
        ];
        let err = choose_target("App", None, &refs, "us-east-1").unwrap_err();
        assert!(matches!(err, CliError::Refused(_)));
        assert_eq!(
            err.to_string(),
            "Stack App has records in several regions: (legacy), eu-west-1, us-east-1. Name the one to unlock with --stack-region <region>."
        );
    }

    #[test]
    fn force_unlock_line_quotes_an_unplain_stack_name() {
        let line = released_line("My Stack", &Target::Legacy, &ForceReleased::Absent);
        assert_eq!(
            line,
            "No lock found for stack \"My Stack\" (legacy lock key); nothing to release."
        );
    }
}
