//! `cdkd-flow force-unlock <stack>... [--stack-region R] [--if-expired]`: deletes stacks'
//! `lock.json`, whoever holds it, but only the lock it read and shows (`If-Match` its
//! ETag; docs/state-and-lock.md, "Force-unlock: only the lock that was read", docs/state-views.md, "force-unlock [stacks...]"), and says what it deleted.
//!
//! Which locks (docs/state-views.md, "force-unlock [stacks...]" step 2): `--stack-region R` → that region's lock only (no
//! other key touched, not even the region-less one). Without it: the lock of every record
//! of that name in the listing (a region-less legacy record → the legacy lock key); a
//! stack with no record → the CLI region. A lock that cannot be deleted is reported and
//! the walk goes on; the command then exits 1 naming every lock it could not release
//! (docs/state-views.md, "force-unlock [stacks...]" step 4).

use std::process::ExitCode;

use cdkd_aws::ForceReleased;
use cdkd_core::keys::StackRef;
use cdkd_core::lock::LockInfo;
use cdkd_core::text::{display_ident_str, flatten_str, DEFAULT_CAP, STACK_NAME_CAP};
use cdkd_core::view::words::expiry_phrase;

use crate::context;
use crate::error::CliError;
use crate::global::GlobalOpts;

const HELP: &str = "\
Deletes a stack's lock.json, whoever holds it. Use it only when the holder is gone (a \
crashed cdkd or cdkd-flow run): running it against a live holder leaves two writers on \
one stack. It deletes only the lock it read and names: a lock renewed or taken in \
between is left in place, and the command says so (exit 1). With --if-expired a lock \
that has not expired is left in place too (exit 1), and with --run RUN_ID a lock that \
cdkd-flow run does not hold (exit 1). A lock a cdkd-flow export run holds \
is left in place (exit 1) unless --abandon-export is given: the export's CloudFormation \
stack may already own resources the record lists; the same export command resumes the \
run and takes its lock over.

Without --stack-region every record of the stack is unlocked (each region, and the \
legacy region-less lock key when the stack has a legacy record); a stack without any \
record has its lock looked up in the CLI region (--region / AWS_REGION, else us-east-1). \
A missing lock is success. When a lock cannot be deleted the others are still tried and \
the command exits 1 naming every lock it could not release.";

#[derive(Debug, clap::Args)]
#[command(long_about = HELP)]
pub struct Args {
    /// The stacks whose locks to delete.
    pub stacks: Vec<String>,
    /// A stack whose lock to delete (same as a positional name; may be repeated).
    #[arg(long = "stack", value_name = "NAME")]
    pub stack_flag: Vec<String>,
    /// Only this region's record of the stack (no other lock key is touched).
    #[arg(long)]
    pub stack_region: Option<String>,
    /// Delete a lock only when it has expired (or is not a readable lock).
    #[arg(long)]
    pub if_expired: bool,
    /// Also delete a lock a cdkd-flow export run holds. Its CloudFormation stack may
    /// already own resources the record still lists, and a deploy or destroy of the
    /// record could then delete them: to carry on, run the same export command again
    /// instead (it resumes the run and takes the lock over).
    #[arg(long)]
    pub abandon_export: bool,
    /// Delete a lock only when this cdkd-flow run holds it (its owner is
    /// `cdkd-flow:RUN_ID`, or a local run's `cdkd-flow:RUN_ID@host:pid`); any other
    /// holder's lock is left in place (exit 1). What cdkd-flow prints for a run's own
    /// lock carries it, so that the command, run late, never deletes a later holder's.
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
}

/// Which lock key the command targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `<prefix>/<stack>/<region>/lock.json`.
    Region(String),
    /// `<prefix>/<stack>/lock.json`.
    Legacy,
}

/// Decides the lock keys of one stack from the flag and the listing (pure, docs/state-views.md, "force-unlock [stacks...]"
/// step 2): the flag's region alone; else every ref of that name (regions in listing order, the
/// legacy key last); else the CLI region.
pub fn choose_targets(
    stack: &str,
    stack_region: Option<&str>,
    refs: &[StackRef],
    cli_region: &str,
) -> Vec<Target> {
    if let Some(r) = stack_region.filter(|r| !r.is_empty()) {
        return vec![Target::Region(r.to_owned())];
    }
    let mut regions: Vec<Target> = refs
        .iter()
        .filter(|r| r.stack == stack)
        .filter_map(|r| r.region.clone().map(Target::Region))
        .collect();
    regions.sort_by(|a, b| match (a, b) {
        (Target::Region(a), Target::Region(b)) => a.cmp(b),
        _ => std::cmp::Ordering::Equal,
    });
    regions.dedup();
    if refs.iter().any(|r| r.stack == stack && r.region.is_none()) {
        regions.push(Target::Legacy);
    }
    if regions.is_empty() {
        regions.push(Target::Region(cli_region.to_owned()));
    }
    regions
}

/// `<stack> (<region>)` or `<stack> (legacy lock key)`, rendered for a terminal.
fn where_(stack: &str, target: &Target) -> String {
    let stack = display_ident_str(stack, STACK_NAME_CAP);
    match target {
        Target::Region(r) => format!("{stack} ({})", display_ident_str(r, DEFAULT_CAP)),
        Target::Legacy => format!("{stack} (legacy lock key)"),
    }
}

/// `<owner>[, operation: <op>]` of a lock as read.
fn holder(i: &LockInfo) -> String {
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
    format!("{owner}{op}")
}

/// What the command says of one lock (pure): `Ok` the line printed, `Err` why the lock
/// was not released (the command then exits 1 naming it).
pub fn released_line(
    stack: &str,
    target: &Target,
    found: &ForceReleased,
    now_ms: i64,
) -> Result<String, String> {
    let where_ = where_(stack, target);
    let was = |i: &Option<Box<LockInfo>>| match i {
        Some(i) => format!("held by {}", holder(i)),
        None => "not a readable lock".to_owned(),
    };
    match found {
        ForceReleased::Held(i) => Ok(format!(
            "Released lock for stack {where_}, owner: {}",
            holder(i)
        )),
        ForceReleased::Unreadable => Ok(format!(
            "Deleted an unreadable lock object for stack {where_}."
        )),
        ForceReleased::Absent => Ok(format!(
            "No lock found for stack {where_}; nothing to release."
        )),
        ForceReleased::Vanished(i) => Ok(format!(
            "The lock for stack {where_} ({}) was released by its holder before it could be deleted; nothing to release.",
            was(i)
        )),
        ForceReleased::Changed(i) => Err(format!(
            "{where_}: the lock changed after it was read (it was {}); nothing was deleted and the newer lock was left in place",
            was(i)
        )),
        ForceReleased::ExportRun(i, _) => Err(format!(
            "{where_}: the lock is held by {}; it was left in place. {}",
            holder(i),
            cdkd_core::contention::export_run(i)
                .map(|run| cdkd_core::view::contention::export_advice(&run))
                .unwrap_or_default()
        )),
        ForceReleased::OtherHolder(Some(i)) => Err(format!(
            "{where_}: the lock is held by {}, not by the run --run names; it was left in place (--run)",
            holder(i)
        )),
        ForceReleased::OtherHolder(None) => Err(format!(
            "{where_}: the lock is not a readable lock, so no run can be seen to hold it; it was left in place (--run)"
        )),
        ForceReleased::Live(i) => Err(format!(
            "{where_}: the lock is held by {} and {}; it has not expired, so it was left in place (--if-expired)",
            holder(i),
            expiry_phrase(i.expiry_ms(), now_ms)
        )),
    }
}

/// Whether the stack has a record at the lock's key (`None` region: the legacy key); a
/// record that cannot be read counts as there.
async fn has_record(store: &cdkd_aws::StateStore, stack: &str, region: Option<&str>) -> bool {
    let key = match region {
        Some(r) => cdkd_core::keys::state_key(&store.prefix, stack, r),
        None => cdkd_core::keys::legacy_state_key(&store.prefix, stack),
    };
    !matches!(store.get_raw(&key).await, Ok(None))
}

/// The closing error when some locks could not be deleted (pure).
pub fn failures_line(failed: &[String]) -> String {
    format!(
        "Could not release {} lock(s): {}",
        failed.len(),
        failed.join("; ")
    )
}

pub async fn run(g: &GlobalOpts, a: Args) -> Result<ExitCode, CliError> {
    let stacks: Vec<String> = a.stacks.iter().chain(&a.stack_flag).cloned().collect();
    if stacks.is_empty() || stacks.iter().any(String::is_empty) {
        return Err(CliError::usage(
            cdkd_core::usage::Usage::ForceUnlockNeedsStack,
        ));
    }
    crate::global::check_stacks(&stacks)?;
    let ctx = context::build(g).await?;
    let refs = if a.stack_region.as_deref().is_some_and(|r| !r.is_empty()) {
        Vec::new()
    } else {
        // A failure to list aborts at once (docs/state-views.md, "force-unlock [stacks...]" step 4).
        ctx.store.list_refs().await?
    };
    let mut failed = Vec::new();
    for stack in &stacks {
        for target in choose_targets(stack, a.stack_region.as_deref(), &refs, &ctx.cli_region) {
            let region = match &target {
                Target::Region(r) => Some(r.as_str()),
                Target::Legacy => None,
            };
            let mut found = ctx
                .locks
                .force_release_detailed(
                    stack,
                    region,
                    a.if_expired,
                    a.abandon_export,
                    a.run.as_deref().filter(|r| !r.is_empty()),
                )
                .await;
            if let Ok(ForceReleased::ExportRun(info, read)) = &found {
                if !has_record(&ctx.store, stack, region).await {
                    // An export run's lock with no record beside it: no deploy or destroy
                    // of a record can delete what its CloudFormation stack owns
                    // (docs/state-and-lock.md, "The contention refusal"). Exactly the lock read is deleted (one
                    // taken since is left in place), and under --if-expired only once it
                    // has expired.
                    found = if a.if_expired
                        && !cdkd_core::lock::is_expired(info, ctx.store.s3_now_ms())
                    {
                        Ok(ForceReleased::Live(info.clone()))
                    } else {
                        let read = read.clone();
                        ctx.locks.delete_read_lock(stack, region, &read).await
                    };
                }
            }
            match found {
                Ok(found) => match released_line(stack, &target, &found, ctx.store.s3_now_ms()) {
                    Ok(line) => crate::out::println(&line),
                    Err(line) => failed.push(line),
                },
                Err(e) => {
                    let line = format!(
                        "{}: {}",
                        where_(stack, &target),
                        flatten_str(&e.to_string())
                    );
                    failed.push(line);
                }
            }
        }
    }
    if failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(CliError::Aws(failures_line(&failed)))
    }
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
            choose_targets("App", Some("ap-south-1"), &refs, "us-east-1"),
            vec![Target::Region("ap-south-1".into())]
        );
    }

    #[test]
    fn force_unlock_empty_stack_region_counts_as_not_given() {
        let refs = [r("App", Some("eu-west-1"))];
        assert_eq!(
            choose_targets("App", Some(""), &refs, "us-east-1"),
            vec![Target::Region("eu-west-1".into())]
        );
    }

    #[test]
    fn force_unlock_legacy_only_record_targets_legacy_key() {
        let refs = [r("Leg", None), r("Other", Some("us-east-1"))];
        assert_eq!(
            choose_targets("Leg", None, &refs, "us-east-1"),
            vec![Target::Legacy]
        );
    }

    #[test]
    fn force_unlock_no_record_uses_cli_region() {
        assert_eq!(
            choose_targets("Ghost", None, &[r("App", Some("eu-west-1"))], "us-west-2"),
            vec![Target::Region("us-west-2".into())]
        );
    }

    #[test]
    fn force_unlock_statement_64_every_region_and_the_legacy_key() {
        let refs = [
            r("App", None),
            r("App", Some("us-east-1")),
            r("Other", Some("eu-west-1")),
            r("App", Some("eu-west-1")),
        ];
        assert_eq!(
            choose_targets("App", None, &refs, "us-east-1"),
            vec![
                Target::Region("eu-west-1".into()),
                Target::Region("us-east-1".into()),
                Target::Legacy
            ]
        );
        assert_eq!(
            choose_targets("App", Some("us-east-1"), &refs, "us-east-1"),
            vec![Target::Region("us-east-1".into())]
        );
    }

    #[test]
    fn force_unlock_failures_are_named_together() {
        assert_eq!(
            failures_line(&[
                "App (us-east-1): AccessDenied".into(),
                "B (legacy lock key): x".into()
            ]),
            "Could not release 2 lock(s): App (us-east-1): AccessDenied; B (legacy lock key): x"
        );
    }

    #[test]
    fn force_unlock_line_quotes_an_unplain_stack_name() {
        let line = released_line("My Stack", &Target::Legacy, &ForceReleased::Absent, 0);
        assert_eq!(
            line.as_deref(),
            Ok("No lock found for stack \"My Stack\" (legacy lock key); nothing to release.")
        );
    }
}
