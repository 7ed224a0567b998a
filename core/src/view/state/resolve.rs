//! docs/state-views.md, "What every state command shares": the words of single-record
//! resolution's refusal (`state::resolve_single` decides) and the other refusals those
//! commands raise by name. Stack names and regions inside these messages are
//! printable (docs/state-views.md, "Printable (stack names and regions in diagnostics)"), `<unrenderable>` when nothing is left.

use crate::state::{LegacyOnly, ResolveRefusal};
use crate::text::{flatten_str, or_unrenderable, printable_str, shell_quote, STACK_NAME_CAP};

fn safe(s: &str) -> String {
    or_unrenderable(printable_str(s))
}

fn region_label(region: Option<&str>) -> String {
    match region {
        None => "(legacy)".to_string(),
        Some(region) => safe(region),
    }
}

fn region_labels(regions: &[Option<String>]) -> String {
    regions
        .iter()
        .map(|r| region_label(r.as_deref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The words of [`ResolveRefusal`] (`state::resolve_single`'s refusal).
impl std::fmt::Display for ResolveRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResolveRefusal::NoState { stack } => write!(
                f,
                "No state found for stack '{}'. Run 'cdkd-flow state list' to see available stacks.",
                safe(stack)
            ),
            ResolveRefusal::NotInRegion {
                stack,
                region,
                seen,
            } => write!(
                f,
                "No state found for stack '{}' in region '{}'. Available regions: {}.",
                safe(stack),
                safe(region),
                region_labels(seen)
            ),
            ResolveRefusal::SeveralRegions { stack, regions } => write!(
                f,
                "Stack '{}' has state in multiple regions: {}. Re-run with --stack-region <region> to disambiguate.",
                safe(stack),
                region_labels(regions)
            ),
        }
    }
}

impl crate::view::refusal::TypedRefusal for ResolveRefusal {}

/// Why a stack name cannot be printed inside a pasteable `cdkd deploy` command.
fn withhold_reason(stack: &str) -> Option<&'static str> {
    let clean = printable_str(stack);
    if clean.is_empty() {
        Some("it renders as nothing")
    } else if clean != stack {
        Some("it does not render exactly")
    } else if clean.chars().count() > STACK_NAME_CAP {
        Some("it is too long")
    } else if clean.starts_with('-') {
        Some("it begins with '-'")
    } else if clean.contains(['*', '/']) {
        Some("'cdkd deploy' reads '*' and '/' in it as a pattern")
    } else {
        None
    }
}

/// The refusal for a stack whose only record is a legacy region-less one (raised
/// before the lock is read). The second line names `cdkd deploy <name>` only when the
/// name can be pasted safely; otherwise a quoted hole and the reason.
pub fn legacy_refusal(stack: &str) -> String {
    let migrate = match withhold_reason(stack) {
        None => format!("Migrate with: cdkd deploy {}", shell_quote(stack)),
        Some(why) => format!(
            "Migrate with: cdkd deploy '<stack>' (the stack name is not shown because {why})"
        ),
    };
    format!(
        "Stack '{}' has only a legacy state record without a region. A cdkd write migrates it \
         to the region-scoped layout; re-run this command after it.\n{migrate}",
        safe(stack)
    )
}

/// The words of [`LegacyOnly`]: [`legacy_refusal`] of its stack.
impl std::fmt::Display for LegacyOnly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&legacy_refusal(&self.stack))
    }
}

impl crate::view::refusal::TypedRefusal for LegacyOnly {}

/// The refusal for a listed ref whose record is gone by the time it is read.
pub fn no_state_found(stack: &str, region: &str, bucket: &str, prefix: &str) -> String {
    format!(
        "No state found for stack '{}' ({}) in s3://{}/{}/. Run 'cdkd-flow state list' to see available stacks.",
        safe(stack),
        safe(region),
        flatten_str(bucket),
        flatten_str(prefix)
    )
}

/// The refusal when `--show-nested` cannot find a child record.
pub fn missing_nested_child(parent: &str, logical_id: &str, child: &str, region: &str) -> String {
    format!(
        "cdkd state is missing nested-child '{}' ({}). Parent stack '{}' lists '{}' as an \
         AWS::CloudFormation::Stack row but no child state record exists for it. The cdkd state \
         tree is inconsistent; re-deploy the parent stack to refresh it.",
        safe(child),
        safe(region),
        safe(parent),
        safe(logical_id)
    )
}
