//! What `export` finds before it plans (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first"): the root's lock, whether
//! the run holding it is alive, and the destination stack with the tags naming the
//! record and run that created it. Every decision is `cdkd_core::export::resume`'s; this
//! file reads, and tells a local process or a deployed execution dead from alive.

use cdkd_aws::cfn::Cfn;
use cdkd_core::contention::Contention;
use cdkd_core::destroy::tree::record_region;
use cdkd_core::export::names::Destination;
use cdkd_core::export::refusal::ExportRefusal;
use cdkd_core::export::resume::{owning_run, verdict, Found, Liveness, Verdict};
use cdkd_core::lock::{parse_flow_owner, FlowHolder, LockInfo};
use std::collections::BTreeMap;

use crate::context::Ctx;
use crate::error::CliError;
use crate::remote::{self, Kind, RemoteArgs};

/// What the export command does, with what it read.
pub struct Before {
    pub verdict: Verdict,
    /// The region of the lock read (the record's, else the CLI's).
    pub region: String,
    /// The record's region, as given or found by listing the records: passed on to the
    /// plan, which then lists nothing again (docs/export.md, "Requests").
    pub record_region: Option<String>,
    /// The destination stacks described here, in the record's region (none when it is
    /// not known): the plan takes them as read (`ExportInput::destinations_seen`).
    pub destinations_seen: BTreeMap<String, Destination>,
    pub lock: Option<LockInfo>,
}

/// Reads the root's lock and destination and decides (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first").
pub async fn before_export(
    ctx: &Ctx,
    stack: &str,
    stack_region: Option<&str>,
    cfn_name: &str,
    children: &[(String, String)],
    remote: &RemoteArgs,
) -> Result<Before, CliError> {
    let region = match stack_region.filter(|r| !r.is_empty()) {
        Some(r) => Some(r.to_string()),
        None => {
            let refs = ctx.store.list_refs().await?;
            record_region(stack, None, &refs).ok()
        }
    };
    let lock_region = region.clone().unwrap_or_else(|| ctx.cli_region.clone());
    let lock = ctx
        .store
        .get_lock(stack, Some(&lock_region))
        .await?
        .map(|(info, _)| info);
    let root_liveness = match lock.as_ref().and_then(|l| parse_flow_owner(&l.owner)) {
        Some(holder) => liveness(ctx, &holder, remote).await,
        None => Liveness::Unknown,
    };
    // The children's locks: a run killed between two lock writes leaves some of them
    // held by it (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first"). Each holder is looked up once.
    let mut seen: Vec<(String, Liveness)> = lock
        .iter()
        .map(|l| (l.owner.clone(), root_liveness))
        .collect();
    let mut child_locks: Vec<(LockInfo, Liveness)> = Vec::new();
    for (child, _) in children {
        let Some((info, _)) = ctx.store.get_lock(child, Some(&lock_region)).await? else {
            continue;
        };
        let known = seen.iter().find(|(o, _)| *o == info.owner).map(|(_, v)| *v);
        let alive = match (known, parse_flow_owner(&info.owner)) {
            (Some(v), _) => v,
            (None, Some(holder)) => liveness(ctx, &holder, remote).await,
            (None, None) => Liveness::Unknown,
        };
        seen.push((info.owner.clone(), alive));
        child_locks.push((info, alive));
    }
    let child_locks: Vec<(&LockInfo, Liveness)> =
        child_locks.iter().map(|(l, v)| (l, *v)).collect();
    let cfn = Cfn::new(&ctx.sdk, Some(&lock_region), None);
    let describe = |name: String| {
        let cfn = &cfn;
        async move {
            cfn.describe_stack(&name).await.map_err(|e| {
                CliError::refused(&ExportRefusal::DestinationUnreadable {
                    cfn_stack: name.clone(),
                    error: e.message,
                })
            })
        }
    };
    let seen = |d: Option<&cdkd_aws::changeset::StackStatus>| match d {
        Some(d) => Destination::Exists {
            status: d.status.clone(),
        },
        None => Destination::Absent,
    };
    let destination = describe(cfn_name.to_string()).await?;
    let mut destinations_seen = BTreeMap::new();
    destinations_seen.insert(cfn_name.to_string(), seen(destination.as_ref()));
    // A tree whose root was not submitted yet: its children's stacks say whose run it is.
    let mut child_runs = Vec::new();
    if destination.is_none() {
        for (child, child_cfn) in children {
            let d = describe(child_cfn.clone()).await?;
            destinations_seen.insert(child_cfn.clone(), seen(d.as_ref()));
            if let Some(d) = d {
                child_runs.extend(owning_run(&d.tags, child));
            }
        }
    }
    if region.is_none() {
        // Described in the CLI's region, which may not be the record's.
        destinations_seen.clear();
    }
    let found = Found {
        stack,
        lock: lock.as_ref(),
        liveness: root_liveness,
        child_locks: &child_locks,
        destination: destination
            .as_ref()
            .map(|d| (d.status.as_str(), d.tags.as_slice())),
        child_runs: &child_runs,
        now_ms: ctx.store.s3_now_ms(),
    };
    let verdict = verdict(&found);
    Ok(Before {
        verdict,
        region: lock_region,
        record_region: region,
        destinations_seen,
        lock,
    })
}

/// The refusal for the root's lock held by anyone but an export run: the contention
/// destroy names (holder, operation, since when, expiry, force-unlock), judged on S3's
/// clock.
pub fn locked_refusal(
    ctx: &Ctx,
    stack: &str,
    region: Option<&str>,
    lock: Option<&LockInfo>,
) -> ExportRefusal {
    let c = ctx.contention(stack, region);
    let now = ctx.store.s3_now_ms();
    cdkd_core::export::resume::locked_refusal(stack, Contention::new(&c, lock, now))
}

/// Whether the run `holder` names is alive: a local process of this host is looked up, a
/// deployed execution described.
async fn liveness(ctx: &Ctx, holder: &FlowHolder, remote: &RemoteArgs) -> Liveness {
    match holder {
        FlowHolder::Local { host, pid, .. } => {
            if crate::host::host_name() != *host {
                return Liveness::Unknown;
            }
            if crate::host::process_alive(*pid) {
                Liveness::Alive
            } else {
                Liveness::Ended
            }
        }
        FlowHolder::Deployed { run_id } => {
            let Ok(sm) = remote::resolve_state_machine(
                &ctx.sdk,
                Kind::Export,
                remote.state_machine_arn.as_deref(),
                &remote.backend_stack,
            )
            .await
            else {
                return Liveness::Unknown;
            };
            let Some(arn) = cdkd_aws::sfn::execution_arn(&sm, run_id) else {
                return Liveness::Unknown;
            };
            let client = cdkd_aws::sfn::Sfn::for_arn(&ctx.sdk, &arn);
            // A run that continued in a new execution (docs/runs.md, "Continuing in a new
            // execution") lives in its latest.
            let latest = match client.describe(&arn).await {
                Ok(x) => remote::latest_execution(&client, x).await.map_err(|_| ()),
                Err(_) => Err(()),
            };
            match latest {
                Ok(x) if x.status == "RUNNING" => Liveness::Alive,
                Ok(_) => Liveness::Ended,
                Err(_) => Liveness::Unknown,
            }
        }
    }
}
