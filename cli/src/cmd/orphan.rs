//! `cdkd-flow state orphan`: forget whole stacks (their records and locks; AWS is not
//! touched), or with `--resource` forget resources of one stack and rewrite the
//! references the rest of its record holds to them (docs/repairs.md, "state orphan"). Every decision
//! and every line printed is `cdkd_core::repair` / `cdkd_core::view::repair`'s; this file
//! reads, asks, locks and writes.

use std::process::ExitCode;

use cdkd_aws::store::Precondition;
use cdkd_aws::{HeldLock, LockContent, ReadLock, ReadLockOutcome};
use cdkd_core::keys::StackRef;
use cdkd_core::lock::{cli_owner, is_expired, LockInfo};
use cdkd_core::repair::orphan::{check_record, child_with_record, ref_values, resource_targets};
use cdkd_core::repair::orphan_command::OrphanCommandRefusal;
use cdkd_core::repair::rewrite::{live_reads_needed, LiveReads};
use cdkd_core::repair::rewrite::{rewrite, RefValues, Rewrite, ValueSource};
use cdkd_core::state::resolve_single;
use cdkd_core::state::StateRecord;
use cdkd_core::view::repair as v;
use cdkd_core::view::state::collate::ref_cmp;
use cdkd_core::view::state::list::RefView;
use cdkd_deleters::clients::readers_in_region;
use cdkd_deleters::read::registry::READ_CONCURRENCY;
use serde_json::{json, Value};

use crate::context::Ctx;
use crate::error::CliError;
use crate::records::{load_record, ref_view};

const HELP: &str = "\
Without --resource: removes the state record of each named stack, in every region it has \
one (or only --stack-region's), under the stack's lock: the lock is taken first and \
released once the record is gone. The AWS resources are NOT deleted: cdkd and cdkd-flow \
simply stop managing them. A stack locked by another process is refused, naming the \
holder (an expired lock is taken over), unless -f/--force, which takes over exactly the \
lock it read and refuses if that lock changed meanwhile; the command asks before \
removing unless -y/--yes or -f. A record whose resources a stopped cdkd-flow export \
holds in CloudFormation (its migration half done) is refused, naming the run: run the \
same export command again to finish it, or finish it by hand and pass --abandon-export.

With --resource <logicalId> (repeatable, one stack): removes only those resource records \
from the stack's record and rewrites every reference the remaining resources and outputs \
hold to them (Ref becomes the value CloudFormation's Ref returns for the type, read from \
the removed record by the type's rule, or the value --ref-value gives; Fn::GetAtt the \
attribute value; ${X} inside Fn::Sub likewise), under the stack's lock, saved with a conditional write. An attribute \
is read live from AWS (the type's SDK reader, else Cloud Control); when that is not \
possible (the resource is gone, no reader, a failed read, an undefined attribute) the \
reference is unresolved and the command refuses, naming every such reference; so does a \
Ref to a type whose Ref rule cdkd-flow does not know, naming the --ref-value to pass. With \
--force it continues: the value cached in the removed record is written in instead. A \
value that is never copied, live or cached (a credential-named attribute, any custom \
resource's attribute, a known secret-valued attribute, a value with a credential-named \
field, the mask, an unresolved {{resolve:...}} reference), keeps its intrinsic; such an \
attribute whose name or type alone says so is not even read.

Exit status: 0 done (or nothing to do), 1 a refusal or an AWS error, 2 a usage error \
(including a missing -y without a terminal).";

#[derive(Debug, clap::Args)]
#[command(long_about = HELP)]
pub struct Args {
    /// The stacks to forget (with --resource: exactly one).
    #[arg(required = true, value_name = "STACK")]
    pub stacks: Vec<String>,
    /// Only this region's record.
    #[arg(long)]
    pub stack_region: Option<String>,
    /// A resource of the stack to forget (repeatable); the stack's record stays.
    #[arg(long = "resource", value_name = "LOGICAL_ID")]
    pub resources: Vec<String>,
    /// With --resource: the value CloudFormation's Ref returns for a removed resource,
    /// written wherever the rest of the record refers to it with Ref (repeatable).
    #[arg(
        long = "ref-value",
        value_name = "LOGICAL_ID=VALUE",
        requires = "resources"
    )]
    pub ref_values: Vec<String>,
    /// Remove even when locked; with --resource, continue past unresolved references.
    #[arg(short = 'f', long)]
    pub force: bool,
    /// Whole stacks: forget a record even though a stopped cdkd-flow export's
    /// CloudFormation stack holds its resources (after finishing that migration by hand).
    #[arg(long, conflicts_with = "resources")]
    pub abandon_export: bool,
    /// Do not ask.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Print a JSON summary on stdout.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(ctx: &Ctx, a: &Args) -> Result<ExitCode, CliError> {
    if a.stack_region.as_deref() == Some("") {
        return Err(CliError::usage(cdkd_core::usage::Usage::EmptyStackRegion));
    }
    if a.resources.is_empty() {
        whole_stacks(ctx, a).await
    } else {
        let targets = resource_targets(&a.resources, a.stacks.len())
            .map_err(|e| CliError::Usage(e.to_string()))?;
        let supplied =
            ref_values(&a.ref_values, &targets).map_err(|e| CliError::Usage(e.to_string()))?;
        resources(ctx, a, &targets, &supplied).await
    }
}

// ---------------------------------------------------------------------------------
// Whole stacks (docs/repairs.md, "Whole stacks: state orphan <stacks...> [--stack-region R] [-f] [-y]")

/// The refs of `stack` the command targets: `--stack-region`'s alone (refused as every
/// state command refuses a region the stack has no record in), else every one, in the
/// listing's order (regions, then the legacy record).
fn targets(
    stack: &str,
    refs: &[StackRef],
    stack_region: Option<&str>,
) -> Result<Vec<StackRef>, CliError> {
    let mut mine: Vec<StackRef> = refs.iter().filter(|r| r.stack == stack).cloned().collect();
    mine.sort_by(|a, b| ref_cmp(&a.stack, a.region.as_deref(), &b.stack, b.region.as_deref()));
    mine.dedup();
    match stack_region {
        Some(r) if !mine.is_empty() => {
            let views: Vec<RefView<'_>> = mine.iter().map(ref_view).collect();
            let one = resolve_single(stack, &views, Some(r)).map_err(|r| CliError::refused(&r))?;
            Ok(vec![StackRef {
                stack: one.stack.to_string(),
                region: one.region.map(str::to_string),
            }])
        }
        _ => Ok(mine),
    }
}

/// The operation a whole-stack orphan's lock names.
const OPERATION: &str = "state-orphan";

/// The lock owner of this process: `<user>@<host>:<pid>`, as cdkd writes it.
fn owner() -> String {
    cli_owner(
        std::env::var("USER").ok().as_deref(),
        std::env::var("HOSTNAME").ok().as_deref(),
        std::process::id(),
    )
}

/// Releases a lock this command took; a failure is a warning.
async fn release(ctx: &Ctx, held: &HeldLock) {
    if let Err(e) = ctx.locks.release(held).await {
        eprintln!("{}", v::orphan_lock_not_released(&e.to_string()));
    }
}

async fn release_each(ctx: &Ctx, held: &[(HeldLock, Option<LockInfo>)]) {
    for (h, _) in held {
        release(ctx, h).await;
    }
}

/// Takes the lock of one record before it is deleted (docs/repairs.md, "Whole stacks: state orphan <stacks...> [--stack-region R] [-f] [-y]"): acquired as
/// this process (an expired lock is taken over). A live lock refuses with the
/// contention refusal, a lock object that is not a lock with its own; under `--force`
/// (never for an export run's lock) exactly the lock object read is taken over (`PUT If-Match` its ETag), and a lock
/// that changed in between refuses. Returns the lock held and, after a forced takeover,
/// the holder it displaced.
async fn take_lock(
    ctx: &Ctx,
    force: bool,
    stack: &str,
    region: Option<&str>,
    owner: &str,
) -> Result<(HeldLock, Option<LockInfo>), CliError> {
    let aws = |e: cdkd_aws::LockError| CliError::Aws(e.to_string());
    let mut message = String::new();
    // A lock released between the refusal and the read is tried again a few times.
    for _ in 0..3 {
        message = match ctx
            .locks
            .acquire(stack, region, owner, Some(OPERATION))
            .await
        {
            Ok(h) => return Ok((h, None)),
            Err(cdkd_aws::LockError::Held { message }) => message,
            Err(other) => return Err(aws(other)),
        };
        let Some(read) = ctx.locks.read_object(stack, region).await.map_err(aws)? else {
            continue;
        };
        // Not even `--force` takes over an export run's lock: the refusal says to wait
        // for the run or resume it (docs/state-and-lock.md, "The contention refusal").
        let export_run = read
            .content
            .info()
            .and_then(cdkd_core::contention::export_run)
            .is_some();
        if !force || export_run {
            return Err(CliError::refused(&match &read.content {
                LockContent::Malformed(detail) => OrphanCommandRefusal::LockMalformed {
                    ctx: ctx.contention(stack, region),
                    detail: detail.clone(),
                    force_removes: true,
                },
                LockContent::Lock(_) => OrphanCommandRefusal::Held { message },
            }));
        }
        match ctx
            .locks
            .take_over_read(stack, region, &read, owner, Some(OPERATION))
            .await
            .map_err(aws)?
        {
            Ok(h) => return Ok((h, read.content.info().cloned())),
            Err(ReadLockOutcome::Changed) => {
                return Err(CliError::refused(&OrphanCommandRefusal::LockChanged {
                    ctx: ctx.contention(stack, region),
                    was: read.content.info().cloned().map(Box::new),
                }))
            }
            Err(_) => continue,
        }
    }
    Err(CliError::refused(&OrphanCommandRefusal::Held { message }))
}

/// The refusal of a record whose resources a stopped export holds in CloudFormation and
/// has not migrated (`cdkd_core::export::held`); a migrated one is what the export's
/// report says to forget. A stack that cannot be read refuses too. A legacy record
/// (no region) was never exported: an export refuses it.
async fn held_by_export(
    ctx: &Ctx,
    stack: &str,
    region: Option<&str>,
) -> Result<Option<OrphanCommandRefusal<'static>>, CliError> {
    let Some(region) = region else {
        return Ok(None);
    };
    let Some(loaded) = ctx.store.get_state(stack, region).await? else {
        return Ok(None);
    };
    let records = [(stack.to_string(), loaded.record)];
    Ok(
        match cdkd_functions::destroy::load::export_hold(&ctx.sdk, &ctx.store, region, &records)
            .await
        {
            Ok(Some(hold)) if !hold.migrated => Some(OrphanCommandRefusal::HeldByExport {
                hold,
                flags: cdkd_core::view::contention::state_flags(&ctx.bucket, &ctx.prefix),
            }),
            Ok(_) => None,
            Err(e) => Some(OrphanCommandRefusal::HoldUnknown {
                error: e.to_string(),
            }),
        },
    )
}

async fn whole_stacks(ctx: &Ctx, a: &Args) -> Result<ExitCode, CliError> {
    let refs = ctx.store.list_refs().await?;
    let owner = owner();
    let mut removed: Vec<Value> = Vec::new();
    let mut seen: Vec<&String> = Vec::new();
    for stack in &a.stacks {
        if seen.contains(&stack) {
            continue;
        }
        seen.push(stack);
        let chosen = targets(stack, &refs, a.stack_region.as_deref())?;
        if chosen.is_empty() {
            eprintln!("{}", v::orphan_no_state(stack));
            continue;
        }
        // A record a stopped export holds in CloudFormation stands for a migration half
        // done (docs/repairs.md, "Whole stacks: state orphan <stacks...> [--stack-region R] [-f] [-y]" step 0): refused, before any lock, unless
        // --abandon-export.
        if !a.abandon_export {
            for t in &chosen {
                if let Some(why) = held_by_export(ctx, stack, t.region.as_deref()).await? {
                    return Err(CliError::refused(&why));
                }
            }
        }
        // Every record's lock first: a record is deleted only under its own lock, and
        // its lock is then released by the ETag this command holds, so a lock someone
        // else takes meanwhile is never deleted.
        let mut held: Vec<(HeldLock, Option<LockInfo>)> = Vec::new();
        for t in &chosen {
            match take_lock(ctx, a.force, stack, t.region.as_deref(), &owner).await {
                Ok(h) => held.push(h),
                Err(e) => {
                    release_each(ctx, &held).await;
                    return Err(e);
                }
            }
        }
        if !(a.yes || a.force) {
            let views: Vec<RefView<'_>> = chosen.iter().map(ref_view).collect();
            let answer =
                crate::ask::confirm(&v::orphan_stacks_prompt(&views, &ctx.bucket, &ctx.prefix))
                    .await;
            match answer {
                Ok(Some(true)) => {}
                Ok(Some(false)) => {
                    release_each(ctx, &held).await;
                    eprintln!("{}", v::orphan_cancelled(stack));
                    continue;
                }
                Ok(None) => {
                    release_each(ctx, &held).await;
                    return Err(CliError::usage(cdkd_core::usage::Usage::NoTerminal(
                        cdkd_core::usage::NoTerminalFor::OrphanResources,
                    )));
                }
                Err(e) => {
                    release_each(ctx, &held).await;
                    return Err(e);
                }
            }
        }
        for (i, (t, (lock, displaced))) in chosen.iter().zip(&held).enumerate() {
            if let Some(info) = displaced
                .as_ref()
                .filter(|d| !is_expired(d, ctx.store.s3_now_ms()))
            {
                eprintln!(
                    "warning: {}",
                    v::orphan_live_lock_warning(
                        stack,
                        t.region.as_deref(),
                        &info.owner,
                        info.operation.as_deref()
                    )
                );
            }
            let deleted = match t.region.as_deref() {
                Some(region) => ctx.store.delete_state(stack, region).await,
                None => ctx.store.delete_legacy_state(stack).await,
            };
            if let Err(e) = deleted {
                release_each(ctx, &held[i..]).await;
                return Err(e.into());
            }
            release(ctx, lock).await;
            if !a.json {
                crate::out::println(&v::orphan_removed_stack(ref_view(t)));
            }
            removed.push(json!({"stack": stack, "region": t.region}));
        }
    }
    if a.json {
        crate::out::println(
            &serde_json::to_string_pretty(&json!({ "removed": removed })).unwrap_or_default(),
        );
    }
    Ok(ExitCode::SUCCESS)
}

// ---------------------------------------------------------------------------------
// Resources of one stack (docs/repairs.md, "Resources of one stack: state orphan <stack> --resource <id> [...]")

async fn resources(
    ctx: &Ctx,
    a: &Args,
    targets: &[String],
    supplied: &RefValues,
) -> Result<ExitCode, CliError> {
    let stack = &a.stacks[0];
    let region = crate::records::resolve(ctx, stack, a.stack_region.as_deref()).await?;
    let owner = owner();
    let held = match ctx
        .locks
        .acquire(stack, Some(&region), &owner, Some("state-orphan"))
        .await
    {
        Ok(h) => h,
        Err(cdkd_aws::LockError::Held { message }) => {
            // A lock object whose body is not a lock: say so rather than name no holder.
            let refusal = match ctx.locks.read_object(stack, Some(&region)).await {
                Ok(Some(ReadLock {
                    content: LockContent::Malformed(detail),
                    ..
                })) => OrphanCommandRefusal::LockMalformed {
                    ctx: ctx.contention(stack, Some(&region)),
                    detail,
                    force_removes: false,
                },
                _ => OrphanCommandRefusal::Held { message },
            };
            return Err(CliError::refused(&refusal));
        }
        Err(other) => return Err(CliError::Aws(other.to_string())),
    };
    let result = resources_locked(ctx, a, stack, &region, targets, supplied).await;
    release(ctx, &held).await;
    result
}

async fn resources_locked(
    ctx: &Ctx,
    a: &Args,
    stack: &str,
    region: &str,
    targets: &[String],
    supplied: &RefValues,
) -> Result<ExitCode, CliError> {
    let loaded = load_record(ctx, stack, region).await?;
    let body = &loaded.record.body;
    check_record(body, stack, region, targets).map_err(|e| CliError::refused(&e))?;
    // A target that is a nested stack with a record of its own: drop the child first.
    let refs = ctx.store.list_refs().await?;
    let views: Vec<RefView<'_>> = refs.iter().map(ref_view).collect();
    if let Some((child, at)) = child_with_record(stack, region, targets, &views) {
        return Err(CliError::refused(&OrphanCommandRefusal::ChildRecord {
            child,
            child_region: at,
            bucket: ctx.bucket.clone(),
            prefix: ctx.prefix.clone(),
        }));
    }
    let live = live_reads(ctx, region, body, targets).await;
    let rw = rewrite(body, targets, &live, supplied, a.force)
        .map_err(|aborted| CliError::refused(&OrphanCommandRefusal::Aborted(aborted)))?;
    let report = v::orphan_report(&rw);
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    if !(a.yes || a.force) {
        match crate::ask::confirm(&v::orphan_resources_prompt(&rw.removed, stack, region)).await? {
            None => {
                return Err(CliError::usage(cdkd_core::usage::Usage::NoTerminal(
                    cdkd_core::usage::NoTerminalFor::OrphanStacks,
                )))
            }
            Some(false) => {
                eprintln!("{}", v::orphan_resources_cancelled(stack));
                return Ok(ExitCode::SUCCESS);
            }
            Some(true) => {}
        }
    }
    let record = StateRecord::from_body(rw.record.clone());
    if loaded.migration_pending {
        ctx.store
            .migrate_legacy_state(stack, region, &record)
            .await?;
    } else {
        ctx.store
            .put_state(
                stack,
                region,
                &record,
                Precondition::IfMatch(loaded.etag.clone()),
            )
            .await?;
    }
    if a.json {
        crate::out::println(
            &serde_json::to_string_pretty(&summary_json(stack, region, &rw)).unwrap_or_default(),
        );
    } else {
        crate::out::print(&report.stdout);
    }
    Ok(ExitCode::SUCCESS)
}

/// The live answers the rewrite asks for (docs/repairs.md, "Live attribute reads"): the attributes of each
/// removed resource read from AWS in the stack's region, through the reader core picks
/// per attribute, at most [`READ_CONCURRENCY`] reads at once.
async fn live_reads(
    ctx: &Ctx,
    region: &str,
    body: &serde_json::Map<String, Value>,
    targets: &[String],
) -> LiveReads {
    let pairs = live_reads_needed(body, targets);
    if pairs.is_empty() {
        return LiveReads::new();
    }
    readers_in_region(&ctx.sdk, region)
        .read_live_attributes(body, &pairs, READ_CONCURRENCY)
        .await
}

/// `--json`: what was removed and rewritten, and what kept its intrinsic.
fn summary_json(stack: &str, region: &str, rw: &Rewrite) -> Value {
    json!({
        "stack": stack,
        "region": region,
        "removed": rw.removed,
        "rewritten": rw.audit.iter().map(|e| json!({
            "location": e.location, "before": e.before, "after": e.after
        })).collect::<Vec<_>>(),
        "unresolved": rw.unresolved.iter().map(|u| json!({
            "location": u.location, "reference": u.reference
        })).collect::<Vec<_>>(),
        "neverCopied": rw.never_copied.iter().map(|n| json!({
            "logicalId": n.logical_id, "attribute": n.attr,
            "source": match n.source { ValueSource::Live => "live", ValueSource::Cached => "cached" }
        })).collect::<Vec<_>>(),
    })
}
