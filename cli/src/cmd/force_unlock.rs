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
use cdkd_core::force_unlock::{
    ForceOutcome, ForceUnlockError, ForceUnlockFailures, ForceUnlockLine, Target,
};
use cdkd_core::keys::StackRef;

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

/// What was found at the lock key, for its line (`cdkd_core::force_unlock`).
fn outcome(found: &ForceReleased) -> ForceOutcome<'_> {
    match found {
        ForceReleased::Held(i) => ForceOutcome::Held(i),
        ForceReleased::Unreadable => ForceOutcome::Unreadable,
        ForceReleased::Absent => ForceOutcome::Absent,
        ForceReleased::Vanished(i) => ForceOutcome::Vanished(i.as_deref()),
        ForceReleased::Changed(i) => ForceOutcome::Changed(i.as_deref()),
        ForceReleased::ExportRun(i, _) => ForceOutcome::ExportRun(i),
        ForceReleased::OtherHolder(i) => ForceOutcome::OtherHolder(i.as_deref()),
        ForceReleased::Live(i) => ForceOutcome::Live(i),
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
                Ok(found) => {
                    let line = ForceUnlockLine {
                        stack,
                        target: &target,
                        outcome: outcome(&found),
                        now_ms: ctx.store.s3_now_ms(),
                    };
                    if line.outcome.released() {
                        crate::out::println(&line.to_string());
                    } else {
                        failed.push(line.to_string());
                    }
                }
                Err(e) => failed.push(
                    ForceUnlockError {
                        stack,
                        target: &target,
                        error: &e.to_string(),
                    }
                    .to_string(),
                ),
            }
        }
    }
    if failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(CliError::Aws(ForceUnlockFailures(&failed).to_string()))
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
            ForceUnlockFailures(&[
                "App (us-east-1): AccessDenied".into(),
                "B (legacy lock key): x".into()
            ])
            .to_string(),
            "Could not release 2 lock(s): App (us-east-1): AccessDenied; B (legacy lock key): x"
        );
    }

    #[test]
    fn force_unlock_line_quotes_an_unplain_stack_name() {
        let line = ForceUnlockLine {
            stack: "My Stack",
            target: &Target::Legacy,
            outcome: outcome(&ForceReleased::Absent),
            now_ms: 0,
        };
        assert!(line.outcome.released());
        assert_eq!(
            line.to_string(),
            "No lock found for stack \"My Stack\" (legacy lock key); nothing to release."
        );
    }
}
