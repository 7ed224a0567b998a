//! What the two state repairs print (docs/repairs.md, "Output" and "Resources of one stack: state orphan <stack> --resource <id> [...]"): refresh-observed's
//! prompt, per-stack lines, run summary and warnings; orphan's audit table, removed
//! line, `--force` warnings and the abort. Pure; names, ids, types and AWS messages are
//! stripped (info lines) or flattened (warnings) onto one line.

use std::fmt;

use serde_json::Value;

use crate::json::{escape_invisible, json_payload, stringify};
use crate::ref_value::RefShape;
use crate::repair::orphan::{OrphanRefusal, RecordPart, RecordProblem};
use crate::repair::refresh::{Outcome, ResourceOutcome, ShapeRefusal, StackRefresh, Tally};
use crate::repair::rewrite::{
    LiveReadFailure, NeverCopiedValue, OrphanAborted, Reason, Rewrite, UnresolvedSite, ValueSource,
};
use crate::repair::secret::CredentialClass;
use crate::text::{flatten_str, or_unrenderable, strip};
use crate::view::state::list::{format_ref, RefView};
use crate::view::words::stack_region;
use crate::view::{join_lines, Rendered};

/// The usage refusal when neither a stack nor `--all` is given.
pub const REFRESH_USAGE: &str =
    "Stack name is required. Usage: cdkd-flow state refresh-observed '<stacks...>' | --all";

/// The info line when `--all` matches nothing.
pub const NO_STACKS_FOUND: &str = "No stacks found in state";

use crate::text::flattened as flat;

fn gone_part(gone: u32) -> String {
    if gone > 0 {
        format!(", {gone} gone (deleted outside cdkd)")
    } else {
        String::new()
    }
}

fn refused_part(refused: u32) -> String {
    if refused > 0 {
        format!(", {refused} refused (import baseline refusal)")
    } else {
        String::new()
    }
}

/// `Refresh observedProperties for <n> stack(s) (<refs>)? (y/N) `, refs rendered as
/// identifiers.
pub fn refresh_prompt(refs: &[RefView<'_>]) -> String {
    let shown: Vec<String> = refs.iter().copied().map(format_ref).collect();
    format!(
        "Refresh observedProperties for {} stack(s) ({})? (y/N) ",
        refs.len(),
        shown.join(", ")
    )
}

/// `✓ <stack> (<region>): no resources in state, skipping`.
pub fn refresh_skip_line(stack: &str, region: &str) -> String {
    format!(
        "✓ {}: no resources in state, skipping",
        stack_region(stack, region)
    )
}

/// `✓ <stack> (<region>): <r> refreshed, <u> unsupported, <f> failed[, <g> gone
/// (deleted outside cdkd)][, <k> refused …]`.
pub fn refresh_stack_line(stack: &str, region: &str, t: &Tally) -> String {
    format!(
        "✓ {}: {} refreshed, {} unsupported, {} failed{}{}",
        stack_region(stack, region),
        t.refreshed,
        t.unsupported,
        t.failed,
        gone_part(t.gone),
        refused_part(t.refused)
    )
}

/// The dry-run line of one stack: `Plan <stack> (<region>): <n> resource(s) would be
/// refreshed, <u> unsupported[, <k> refused …]`.
pub fn refresh_plan_line(stack: &str, region: &str, t: &Tally) -> String {
    format!(
        "Plan {}: {} resource(s) would be refreshed, {} unsupported{}",
        stack_region(stack, region),
        t.refreshed,
        t.unsupported,
        refused_part(t.refused)
    )
}

/// The warning for a resource whose read threw; `None` for any other outcome.
pub fn refresh_failed_warning(stack: &str, o: &ResourceOutcome) -> Option<String> {
    let Outcome::Failed { message } = &o.outcome else {
        return None;
    };
    Some(format!(
        "  ✗ {}/{} ({}): readCurrentState failed — {}",
        flat(stack),
        flat(&o.logical_id),
        flat(&o.resource_type),
        flat(message)
    ))
}

/// `cdkd-flow state orphan <stack> --stack-region <region> --resource <id>`, each value
/// shell-quoted; `None` when the command cannot be printed faithfully (a value that
/// sanitising would change).
pub fn orphan_resource_command(stack: &str, region: &str, logical_id: &str) -> Option<String> {
    use crate::contention::command_value_ok as ok;
    use crate::text::shell_quote;
    (ok(stack) && ok(region) && ok(logical_id)).then(|| {
        format!(
            "cdkd-flow state orphan {} --stack-region {} --resource {}",
            shell_quote(stack),
            shell_quote(region),
            shell_quote(logical_id)
        )
    })
}

/// The warning for a resource whose read found it gone (deleted outside cdkd), with the
/// command that forgets it; `None` for any other outcome (docs/repairs.md, "Output").
pub fn refresh_gone_warning(stack: &str, region: &str, o: &ResourceOutcome) -> Option<String> {
    if o.outcome != Outcome::Gone {
        return None;
    }
    let forget = match orphan_resource_command(stack, region, &o.logical_id) {
        Some(cmd) => format!("forget it with: {cmd}"),
        None => "forget it with cdkd-flow state orphan --resource (the command cannot be printed faithfully)".to_string(),
    };
    Some(format!(
        "  ✗ {}/{} ({}): gone — not found in AWS (deleted outside cdkd); its previous observedProperties were kept; {forget}",
        flat(stack),
        flat(&o.logical_id),
        flat(&o.resource_type),
    ))
}

/// One refreshed stack: its line on stdout, a warning per failed read and per resource
/// found gone.
pub fn refresh_stack(stack: &str, region: &str, r: &StackRefresh) -> Rendered {
    let warnings = r
        .outcomes
        .iter()
        .filter_map(|o| {
            refresh_failed_warning(stack, o).or_else(|| refresh_gone_warning(stack, region, o))
        })
        .collect();
    Rendered::new(
        join_lines(&[refresh_stack_line(stack, region, &r.tally)]),
        warnings,
    )
}

/// `Failed to release lock for <stack> (<region>): <message>`.
pub fn release_failed_warning(stack: &str, region: &str, message: &str) -> String {
    format!(
        "Failed to release lock for {} ({}): {}",
        flat(stack),
        flat(region),
        flat(message)
    )
}

/// The end of a run: an empty line and the `Done:` (or `Plan:`) totals on stdout; on
/// stderr the refused-baseline warning when any resource was refused, and the partial
/// failure line when any read failed or found its resource gone (exit status 2, see
/// [`crate::repair::refresh::exit_code`]).
pub fn refresh_summary(run: &Tally, dry_run: bool) -> Rendered {
    let total = if dry_run {
        format!(
            "Plan: {} resource(s) would be refreshed, {} unsupported, {} would fail (--dry-run, no state was written)",
            run.refreshed, run.unsupported, run.failed
        )
    } else {
        format!(
            "Done: {} resource(s) refreshed, {} unsupported, {} failed{}",
            run.refreshed,
            run.unsupported,
            run.failed,
            gone_part(run.gone)
        )
    };
    let mut warnings = Vec::new();
    if run.refused > 0 {
        warnings.push(refused_warning(run.refused, dry_run));
    }
    if run.failed > 0 && !dry_run {
        warnings.push(format!(
            "error: Refresh completed with {} per-resource readCurrentState failure(s). Their previous observedProperties were kept; fix the cause and run cdkd-flow state refresh-observed again.",
            run.failed
        ));
    }
    if run.gone > 0 && !dry_run {
        warnings.push(format!(
            "error: {} resource(s) were not refreshed: AWS no longer has them (deleted outside cdkd). Their previous observedProperties were kept; forget each with the cdkd-flow state orphan --resource command printed above.",
            run.gone
        ));
    }
    Rendered::new(join_lines(&[String::new(), total]), warnings)
}

fn refused_warning(refused: u32, dry_run: bool) -> String {
    let verb = if dry_run { "would not be" } else { "were not" };
    format!(
        "{refused} resource(s) {verb} refreshed because a 'cdkd import' run refused their observed baseline. \
         A deploy that actually changes such a resource records a new one (a deploy with no changes does not); \
         until then drift is compared against the recorded properties."
    )
}

/// The words for a class of value (cached or live) the rewrite never copies.
pub fn class_phrase(c: CredentialClass) -> &'static str {
    match c {
        CredentialClass::CredentialNamedAttribute => "a credential-named attribute",
        CredentialClass::CustomResourceAttribute => "a custom resource's attribute",
        CredentialClass::SecretValuedAttribute => "a secret-valued attribute",
        CredentialClass::Mask => "the redaction mask ('***')",
        CredentialClass::DynamicReference => "an unresolved dynamic reference",
        CredentialClass::CredentialNamedField => "a value with a credential-named field",
    }
}

/// The `--force` warning for a value it refused to copy (cached or read live); names the
/// class, never the value.
pub fn never_copied_warning(n: &NeverCopiedValue) -> String {
    let source = match n.source {
        ValueSource::Cached => "cached",
        ValueSource::Live => "live",
    };
    format!(
        "--force: the {source} value for {}.{} is {}, so it is not written into the referring resource; leaving the original intrinsic in place.",
        flat(&n.logical_id),
        flat(&n.attr),
        class_phrase(n.class)
    )
}

/// What a record holds instead of the shape its type's `Ref` rule reads.
impl fmt::Display for RefShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // The splitter's refusal, in its words (`view::blocked`).
            RefShape::Split(e) => e.fmt(f),
            RefShape::NoSplitter { resource_type } => write!(f, "no splitter reads {resource_type}"),
            RefShape::NoField { field } => write!(f, "the splitter gives no {field}"),
            RefShape::CustomEventBus => f.write_str("the rule is on a custom event bus, whose Ref value is not verified"),
            RefShape::NotARuleName => f.write_str("the physical id is neither arn:…:rule/<name> nor a rule name (a rule on a custom event bus has no verified Ref value)"),
            RefShape::NoArnAttribute { attr } => write!(f, "the record holds no usable attributes.{attr} (the ARN Ref returns)"),
            RefShape::EmptyOrMasked => f.write_str("the value is empty or holds the redaction mask"),
        }
    }
}

/// A failed live read of a removed resource's attributes, in one line naming the
/// resource, its type and the cause: `<logicalId> (<type>): <cause>`, each part
/// flattened. A failure given as words is written as given.
impl fmt::Display for LiveReadFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (logical_id, resource_type, cause) = match self {
            LiveReadFailure::Gone {
                logical_id,
                resource_type,
                physical_id,
            } => (
                logical_id,
                resource_type,
                format!("it no longer exists ({physical_id} was not found)"),
            ),
            LiveReadFailure::NoReader {
                logical_id,
                resource_type,
            } => (
                logical_id,
                resource_type,
                format!("no live reader for {resource_type}"),
            ),
            LiveReadFailure::Threw {
                logical_id,
                resource_type,
                message,
            } => (logical_id, resource_type, message.clone()),
            LiveReadFailure::Said(words) => return f.write_str(words),
        };
        write!(
            f,
            "{} ({}): {}",
            flat(logical_id),
            flat(resource_type),
            flat(&cause)
        )
    }
}

fn reason_phrase(r: &Reason) -> String {
    match r {
        Reason::UnreadableRecord => "the removed record is not a readable resource record".into(),
        Reason::MaskedPhysicalId => "the removed record's physicalId is the redaction mask".into(),
        Reason::RefUnknown {
            logical_id,
            resource_type,
            detail,
        } => {
            let why = match detail {
                None => format!(
                    "cdkd-flow does not know what CloudFormation's Ref returns for {}",
                    flat(resource_type)
                ),
                Some(d) => format!(
                    "the Ref value of {} cannot be read from the record: {}",
                    flat(resource_type),
                    flat(&d.to_string())
                ),
            };
            format!(
                "{why}; pass --ref-value {}=<the value Ref returns>, or --force to keep the Ref",
                flat(logical_id)
            )
        }
        Reason::LiveReadFailed(m) => format!("the live read failed: {}", flat(&m.to_string())),
        Reason::LiveReadUndefined => "the live read returned no value".into(),
        Reason::NotRead => "no live read was made".into(),
        Reason::NoCachedValue => "the live read did not answer and no cached value exists".into(),
        Reason::NeverCopied(c) => format!("the cached value is {}", class_phrase(*c)),
        Reason::NeverRead(c) => format!("{} is never read live", class_phrase(*c)),
        Reason::LiveNeverCopied(c) => format!("the live value is {}", class_phrase(*c)),
        Reason::NotText => "the value is not text, so it cannot be placed in Fn::Sub".into(),
    }
}

/// One unresolved site: `  <location>: <reference> (<why>)`.
pub fn unresolved_line(s: &UnresolvedSite) -> String {
    format!(
        "  {}: {} ({})",
        flat(&s.location),
        flat(&s.reference),
        reason_phrase(&s.reason)
    )
}

/// The abort without `--force`: the headline, then one line per site.
pub fn orphan_aborted(a: &OrphanAborted) -> String {
    let mut lines = vec![a.to_string()];
    lines.extend(a.unresolved.iter().map(unresolved_line));
    lines.join("\n")
}

fn json_cell(v: &Value) -> String {
    escape_invisible(&stringify(v).unwrap_or_else(|| "(unserializable)".to_string()))
}

/// The audit table: `  <location>: <before> -> <after>`, values as compact JSON.
pub fn audit_lines(r: &Rewrite) -> Vec<String> {
    r.audit
        .iter()
        .map(|a| {
            format!(
                "  {}: {} -> {}",
                or_unrenderable(strip(&a.location)),
                json_cell(&a.before),
                json_cell(&a.after)
            )
        })
        .collect()
}

/// `Removed <n> resource record(s) from state: <ids>`.
pub fn removed_line(ids: &[String]) -> String {
    let shown: Vec<String> = ids.iter().map(|i| or_unrenderable(strip(i))).collect();
    format!(
        "Removed {} resource record(s) from state: {}",
        ids.len(),
        shown.join(", ")
    )
}

/// A saved orphan: the audit table (when anything changed) and the removed line on
/// stdout; on stderr each refused cached value and, under `--force`, the unresolved
/// sites kept as intrinsics.
pub fn orphan_report(r: &Rewrite) -> Rendered {
    let mut lines = Vec::new();
    if !r.audit.is_empty() {
        lines.push("Rewritten references:".to_string());
        lines.extend(audit_lines(r));
    }
    lines.push(removed_line(&r.removed));
    let mut warnings: Vec<String> = r.never_copied.iter().map(never_copied_warning).collect();
    if !r.unresolved.is_empty() {
        warnings.push(format!(
            "--force: continuing despite {} unresolved reference(s)",
            r.unresolved.len()
        ));
        warnings.extend(r.unresolved.iter().map(unresolved_line));
    }
    Rendered::new(join_lines(&lines), warnings)
}

// ---------------------------------------------------------------------------------
// `state orphan` of whole stacks (docs/repairs.md, "Whole stacks: state orphan <stacks...> [--stack-region R] [-f] [-y]") and the prompts of "Resources of one stack: state orphan <stack> --resource <id> [...]"

/// `No state found for stack: <stack>, skipping` (whole-stack orphan of an unknown name).
pub fn orphan_no_state(stack: &str) -> String {
    format!("No state found for stack: {}, skipping", flat(stack))
}

/// The refusal of a whole-stack orphan of a record whose resources a stopped export holds
/// in CloudFormation (docs/repairs.md, "Whole stacks: state orphan <stacks...> [--stack-region R] [-f] [-y]" step 0, `crate::export::held`): the migration
/// is half done; resume it, or finish it by hand and forget the record with
/// `--abandon-export`. `flags`: the state bucket and prefix of the command it prints.
pub fn orphan_held_by_export(
    hold: &crate::export::held::ExportHold,
    flags: Option<&str>,
) -> String {
    format!(
        "refusing to forget stack '{}' ({}): {}",
        crate::text::display_ident_str(&hold.record, crate::text::STACK_NAME_CAP),
        or_unrenderable(crate::text::printable_str(&hold.region)),
        hold.orphan_reason(flags)
    )
}

/// The refusal of `--force` when the lock it read changed before it could take it over
/// (docs/repairs.md, "Whole stacks: state orphan <stacks...> [--stack-region R] [-f] [-y]"): `was` the holder read, when readable. Nothing was changed,
/// and the newer lock is never removed.
pub fn orphan_lock_changed(
    ctx: &crate::contention::ContentionContext<'_>,
    was: Option<&crate::lock::LockInfo>,
) -> String {
    let region = ctx
        .region
        .map(|r| or_unrenderable(crate::text::printable_str(r)))
        .unwrap_or_else(|| "legacy".into());
    let was = match was {
        Some(i) if !flatten_str(&i.owner).is_empty() => {
            format!("held by {}", flatten_str(&i.owner))
        }
        Some(_) => "held by an unnamed holder".to_string(),
        None => "not a readable lock".to_string(),
    };
    format!(
        "The lock of stack '{}' ({region}) changed after it was read (it was {was}); nothing was changed: another process renewed or took it since, and its newer lock and the record are kept.",
        crate::text::display_ident_str(ctx.stack, crate::text::STACK_NAME_CAP)
    )
}

/// The refusal for a lock object whose body is not a lock (invalid JSON, or JSON that
/// is not an object): `detail` says which. Whole stacks (`force_removes`): `--force`
/// removes it anyway; with `--resource` only `force-unlock` clears it.
pub fn orphan_lock_malformed(
    ctx: &crate::contention::ContentionContext<'_>,
    detail: &str,
    force_removes: bool,
) -> String {
    let region = ctx
        .region
        .map(|r| or_unrenderable(crate::text::printable_str(r)))
        .unwrap_or_else(|| "legacy".into());
    let head = format!(
        "Stack '{}' ({region}) has a malformed lock ({}); nothing was changed.",
        crate::text::display_ident_str(ctx.stack, crate::text::STACK_NAME_CAP),
        flat(detail)
    );
    const FORCE: &str = "pass --force to remove it with the record.";
    let none = crate::view::contention::NO_RECOVERY_COMMAND;
    match (
        crate::view::contention::recovery_command(ctx),
        force_removes,
    ) {
        (Some(cmd), true) => format!("{head} Clear it with: {cmd}, or {FORCE}"),
        (Some(cmd), false) => format!("{head} Clear it with: {cmd}"),
        (None, true) => format!("{head} {none} Or {FORCE}"),
        (None, false) => format!("{head} {none}"),
    }
}

/// The warning and question before whole stacks are forgotten.
pub fn orphan_stacks_prompt(refs: &[RefView<'_>], bucket: &str, prefix: &str) -> String {
    let shown: Vec<String> = refs.iter().copied().map(format_ref).collect();
    let shown = shown.join(", ");
    format!(
        "WARNING: This removes cdkd's state record for [{shown}] only. AWS resources will NOT be deleted.\n\
         To delete the resources as well, use cdkd-flow destroy instead.\n\
         Remove state for {shown} from s3://{}/{}/? (y/N): ",
        flat(bucket),
        flat(prefix)
    )
}

/// `warning: Failed to release lock: <error>` (a lock the orphan took).
pub fn orphan_lock_not_released(error: &str) -> String {
    format!("warning: Failed to release lock: {}", flat(error))
}

/// `Cancelled removal of state for stack: <stack>`.
pub fn orphan_cancelled(stack: &str) -> String {
    format!("Cancelled removal of state for stack: {}", flat(stack))
}

/// The warning before a live lock is deleted with the record.
pub fn orphan_live_lock_warning(
    stack: &str,
    region: Option<&str>,
    owner: &str,
    operation: Option<&str>,
) -> String {
    let op = operation
        .map(flatten_str)
        .filter(|o| !o.is_empty())
        .map(|o| format!(", operation: {o}"))
        .unwrap_or_default();
    format!(
        "Force-releasing a LIVE lock on {} held by {}{op}. That process may write the record again with its next state write.",
        stack_region(stack, region.unwrap_or("legacy")),
        flat(owner)
    )
}

/// `✓ Removed state for stack: <ref>`.
pub fn orphan_removed_stack(r: RefView<'_>) -> String {
    format!("✓ Removed state for stack: {}", format_ref(r))
}

/// The question before resource records are removed (docs/repairs.md, "Resources of one stack: state orphan <stack> --resource <id> [...]" step 8).
pub fn orphan_resources_prompt(ids: &[String], stack: &str, region: &str) -> String {
    let shown: Vec<String> = ids.iter().map(|i| or_unrenderable(strip(i))).collect();
    let shown = shown.join(", ");
    let at = stack_region(stack, region);
    format!(
        "This removes cdkd's state record of {} resource(s) [{shown}] from {at} only; the AWS resources and the stack's other records are kept.\n\
         Remove the record(s) of {shown} from state for {at}? (y/N): ",
        ids.len()
    )
}

/// `Cancelled removal of resource record(s) for stack: <stack>`.
pub fn orphan_resources_cancelled(stack: &str) -> String {
    format!(
        "Cancelled removal of resource record(s) for stack: {}",
        flat(stack)
    )
}

/// The refusal when a target is a nested stack with its own child record: drop the
/// child first (docs/repairs.md, "Resources of one stack: state orphan <stack> --resource <id> [...]" step 6).
pub fn orphan_child_record(
    child: &str,
    child_region: Option<&str>,
    bucket: &str,
    prefix: &str,
) -> String {
    let mut cmd = format!("cdkd-flow state orphan {}", crate::text::shell_quote(child));
    if let Some(r) = child_region {
        cmd.push_str(&format!(" --stack-region {}", crate::text::shell_quote(r)));
    }
    cmd.push_str(&format!(
        " --state-bucket {}",
        crate::text::shell_quote(bucket)
    ));
    if prefix != crate::keys::DEFAULT_PREFIX {
        cmd.push_str(&format!(
            " --state-prefix {}",
            crate::text::shell_quote(prefix)
        ));
    }
    let printable = crate::text::printable_str(&cmd) == cmd;
    format!(
        "'{}' is a nested stack with its own state record; its resources would be orphaned with no record. Drop the child with: {}",
        or_unrenderable(strip(child)),
        if printable { cmd } else { "(the command cannot be printed faithfully; see cdkd-flow state list --long)".into() }
    )
}

/// The refusal when the conditional save of a refreshed record fails because another
/// writer saved the record after it was read: nothing was written, the other writer's
/// record stands.
pub fn refresh_stale(stack: &str, region: &str) -> String {
    format!(
        "State for stack '{}' ({}) was modified by another process while it was being refreshed; nothing was written and the other writer's record was left as it is. Run 'cdkd-flow state refresh-observed' again.",
        flat(stack),
        flat(region)
    )
}

/// What happened to one stack of a run, for [`refresh_json`].
#[derive(Debug, Clone, Copy)]
pub enum StackSummary<'a> {
    /// The record has no resources: skipped.
    Skipped,
    /// `--dry-run`: what would be read.
    Planned(&'a Tally),
    /// Refreshed and saved.
    Refreshed(&'a StackRefresh),
}

fn tally_json(t: &Tally) -> Value {
    serde_json::json!({
        "refreshed": t.refreshed,
        "unsupported": t.unsupported,
        "failed": t.failed,
        "refused": t.refused,
        "gone": t.gone,
    })
}

fn outcome_json(o: &ResourceOutcome) -> Value {
    let (name, message) = match &o.outcome {
        Outcome::Refreshed => ("refreshed", None),
        Outcome::Unsupported => ("unsupported", None),
        Outcome::Gone => ("gone", None),
        Outcome::Failed { message } => ("failed", Some(message.as_str())),
        Outcome::Refused => ("refused", None),
    };
    let mut v = serde_json::json!({
        "logicalId": o.logical_id,
        "resourceType": o.resource_type,
        "outcome": name,
    });
    if let Some(m) = message {
        v["message"] = Value::String(m.to_string());
    }
    v
}

/// `--json`: one object with the run's totals and, per stack, its counts and (for a
/// refreshed stack) every resource's outcome. Invisible characters are escaped.
pub fn refresh_json(
    stacks: &[(&str, &str, StackSummary<'_>)],
    run: &Tally,
    dry_run: bool,
) -> String {
    let rows: Vec<Value> = stacks
        .iter()
        .map(|(stack, region, s)| {
            let mut row = serde_json::json!({"stack": stack, "region": region});
            match s {
                StackSummary::Skipped => row["skipped"] = Value::Bool(true),
                StackSummary::Planned(t) => row["planned"] = tally_json(t),
                StackSummary::Refreshed(r) => {
                    row["counts"] = tally_json(&r.tally);
                    row["resources"] = r.outcomes.iter().map(outcome_json).collect();
                }
            }
            row
        })
        .collect();
    let v = serde_json::json!({
        "dryRun": dry_run,
        "stacks": rows,
        "total": tally_json(run),
        "exitCode": crate::repair::refresh::exit_code(run),
    });
    json_payload(&v)
}
/// The words of [`ShapeRefusal`]: the stack and region, what is wrong, and that the
/// record is left as it is, with the command that shows it.
impl fmt::Display for ShapeRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const LEFT: &str =
            "The record is left as it is; inspect it with 'cdkd-flow state show --json'.";
        match self {
            ShapeRefusal::ResourcesNotAMap {
                stack,
                region,
                kind,
            } => write!(
                f,
                "Refusing to refresh stack '{stack}' ({region}): 'resources' in its state record is {kind}, not a JSON object. {LEFT}"
            ),
            ShapeRefusal::EntryNotAnObject {
                stack,
                region,
                logical_id,
                kind,
            } => write!(
                f,
                "Refusing to refresh stack '{stack}' ({region}): resource '{logical_id}' in its state record is {kind}, not a JSON object. {LEFT}"
            ),
            ShapeRefusal::EntryWithoutType {
                stack,
                region,
                logical_id,
            } => write!(
                f,
                "Refusing to refresh stack '{stack}' ({region}): resource '{logical_id}' in its state record has no resourceType. {LEFT}"
            ),
        }
    }
}

impl crate::view::refusal::TypedRefusal for ShapeRefusal {}

/// The words of [`OrphanRefusal`].
impl fmt::Display for OrphanRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OrphanRefusal::SeveralStacks(n) => write!(
                f,
                "--resource names resources of ONE stack, but {n} stacks were given"
            ),
            OrphanRefusal::EmptyResourceId => {
                f.write_str("--resource needs a logical id; an empty value was given")
            }
            OrphanRefusal::Unreadable {
                stack,
                region,
                problem,
            } => write!(
                f,
                "Refusing to remove resource records from '{stack}' ({region}): {problem}. Nothing was saved."
            ),
            OrphanRefusal::RefValueSyntax(v) => write!(
                f,
                "--ref-value takes <LogicalId>=<value>; '{v}' has no '=' or an empty side"
            ),
            OrphanRefusal::RefValueNotTarget(v) => write!(
                f,
                "--ref-value names '{v}', which is not one of the --resource ids"
            ),
            OrphanRefusal::RefValueTwice(v) => {
                write!(f, "--ref-value gives '{v}' more than once")
            }
            OrphanRefusal::UnknownIds {
                stack,
                region,
                missing,
                available,
            } => write!(
                f,
                "Resource(s) not in state for {stack} ({region}): {missing}. Available logical IDs: {available}"
            ),
        }
    }
}

impl crate::view::refusal::TypedRefusal for OrphanRefusal {}

/// What makes a record unreadable to `--resource`, inside [`OrphanRefusal`]'s line.
impl fmt::Display for RecordProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordProblem::Part { part, found } => {
                let (name, expected) = match part {
                    RecordPart::Resources => ("resources", "JSON object"),
                    RecordPart::Outputs => ("outputs", "JSON object"),
                    RecordPart::Orphans => ("orphans", "list"),
                };
                let found = found.unwrap_or("absent");
                write!(f, "'{name}' is {found}, not a {expected}")
            }
            RecordProblem::EntryNotAnObject { logical_id, kind } => {
                write!(f, "resource '{logical_id}' is {kind}, not a JSON object")
            }
            RecordProblem::EntryWithoutType { logical_id } => {
                write!(f, "resource '{logical_id}' has no resourceType")
            }
            RecordProblem::EntryField {
                logical_id,
                field,
                kind,
            } => write!(
                f,
                "resource '{logical_id}' has '{field}' that is {kind}, not a JSON object"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::export::splitters::SplitError;
    use crate::ref_value::RefShape;

    /// Every reason a record does not have the shape its type's `Ref` rule reads, with a
    /// hostile value where one is printed.
    #[test]
    fn the_words_of_every_ref_shape() {
        let lines: Vec<String> = [
            RefShape::Split(SplitError::Blank),
            RefShape::Split(SplitError::EmptySegment {
                physical_id: "a||b\n".into(),
            }),
            RefShape::NoSplitter {
                resource_type: "AWS::X::Y".into(),
            },
            RefShape::NoField { field: "ApiId" },
            RefShape::CustomEventBus,
            RefShape::NotARuleName,
            RefShape::NoArnAttribute { attr: "Arn" },
            RefShape::EmptyOrMasked,
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        insta::assert_snapshot!(lines.join("\n"));
    }

    /// Every way a live read of a removed resource fails, with hostile values where
    /// they are printed (each part is flattened), each line escaped as a Rust string.
    #[test]
    fn the_words_of_every_live_read_failure() {
        use crate::repair::rewrite::LiveReadFailure;
        let h = |s: &str| format!("{s}\n\u{1b}[2J\r");
        let lines: Vec<String> = [
            LiveReadFailure::Gone {
                logical_id: h("Db"),
                resource_type: h("AWS::RDS::DBCluster"),
                physical_id: h("db-1"),
            },
            LiveReadFailure::NoReader {
                logical_id: h("Odd"),
                resource_type: h("AWS::Some::Thing"),
            },
            LiveReadFailure::Threw {
                logical_id: h("Busy"),
                resource_type: h("AWS::ECS::Cluster"),
                message: h("GetResource failed:\nThrottling"),
            },
            LiveReadFailure::Threw {
                logical_id: "\n".into(),
                resource_type: String::new(),
                message: " ".into(),
            },
            LiveReadFailure::from("AccessDenied"),
            LiveReadFailure::from(h("as given")),
        ]
        .iter()
        .map(|f| format!("{:?}", f.to_string()))
        .collect();
        insta::assert_snapshot!(lines.join("\n"));
    }

    /// Every record problem `--resource` refuses, inside the refusal's line; logical ids
    /// arrive flattened (as `check_record` makes them).
    #[test]
    fn the_words_of_every_record_problem() {
        use crate::repair::orphan::{OrphanRefusal, RecordPart, RecordProblem};
        let problems = [
            RecordProblem::Part {
                part: RecordPart::Resources,
                found: None,
            },
            RecordProblem::Part {
                part: RecordPart::Outputs,
                found: Some("a string"),
            },
            RecordProblem::Part {
                part: RecordPart::Orphans,
                found: Some("an object"),
            },
            RecordProblem::EntryNotAnObject {
                logical_id: crate::text::flattened("S\n\u{1b}[2J"),
                kind: "null",
            },
            RecordProblem::EntryWithoutType {
                logical_id: crate::text::flattened("\r\n"),
            },
            RecordProblem::EntryField {
                logical_id: "S".into(),
                field: "attributes",
                kind: "an array",
            },
        ];
        let lines: Vec<String> = problems
            .into_iter()
            .map(|problem| {
                OrphanRefusal::Unreadable {
                    stack: "App".into(),
                    region: "us-east-1".into(),
                    problem,
                }
                .to_string()
            })
            .collect();
        insta::assert_snapshot!(lines.join("\n"));
    }
}
