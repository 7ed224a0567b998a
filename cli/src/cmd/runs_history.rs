//! `cdkd-flow runs expire` and `runs prune`: how long run folders
//! (`<prefix>/_runs/<run-id>/`) live (docs/runs.md). `expire` merges cdkd-flow's S3
//! lifecycle rule into the state bucket's lifecycle configuration; `prune` deletes the
//! folders of runs that ended more than a duration ago, keeping every run that runs,
//! waits for approval, may be resumed or cannot be told. The decisions are
//! `cdkd_core::retention`'s; a run's state is the one `runs list` shows
//! (`crate::run::listing::local_row` for a local run, the execution for a deployed one).

use cdkd_core::runs_note::RunsNote;
use std::collections::BTreeSet;
use std::process::ExitCode;

use cdkd_aws::sfn::{self, Execution, Sfn, SfnError};
use cdkd_aws::StateStore;
use cdkd_core::retention::{
    delete_batches, expiry_warning, is_recent, keys_left, kind_of_run, needs_root_lock,
    older_than_warning, parse_older_than, root_holder, runs_rule, verdict, with_root_lock,
    HolderExecution, KindWitness, PlanRun, RootHolder, RunFacts, RunFolder, RunStatus, UnknownWhy,
    Verdict, DEFAULT_EXPIRY_DAYS,
};
use cdkd_core::run::{RunId, RunKind};
use cdkd_core::view::retention::{
    expire_json, prune_json, render_expire, render_prune, ExpireResult, NotDeleted, PruneResult,
    PruneRow,
};
use cdkd_functions::runs::report_key;
use futures::StreamExt;
use serde_json::Value;

use super::machines::Machines;
use crate::context;
use crate::error::CliError;
use crate::global::GlobalOpts;
use crate::remote::{self, Kind};

const EXPIRE_HELP: &str = "\
Sets an S3 lifecycle rule on the run folders of the state bucket, <prefix>/_runs/, so \
that they do not grow for ever: every object there expires --days after its last write \
(on a versioned bucket its noncurrent versions a day after they stop being current, and \
incomplete multipart uploads are aborted after a day). The rule's id is \
cdkd-flow-runs:<prefix>. The bucket's lifecycle configuration is read and only that rule \
is added or replaced: every other rule is written back as it was. Nothing is written when \
the rule is already set (--dry-run: never). `make deploy` runs it (RUN_RETENTION_DAYS, \
default 90). Below 8 days it is refused: an export may wait 7 days for approval before it \
reads its plan and templates again. Below 30 days it warns: an interrupted export can be \
resumed only while its folder lives. S3 counts each object's age from its own last \
write: an export's plan.json and templates, written when it started, expire --days after \
the run started, even if it was resumed since. The CLI needs s3:GetLifecycleConfiguration and \
s3:PutLifecycleConfiguration on the bucket. For a bucket whose lifecycle you do not \
manage, prune instead (cdkd-flow runs prune --older-than 30d).";

const PRUNE_HELP: &str = "\
Deletes the folders <prefix>/_runs/<run-id>/ of runs that ended more than --older-than \
ago (30d, 12h, 2w, 1d12h), judged by the newest write in the folder, for buckets with no \
lifecycle rule (cdkd-flow runs expire). A run's state is the one runs list shows: a local \
run's from its run.json, report and lock (or process), a deployed run's from its \
execution (described through the deployed backend, when reachable) else from its files. \
Kept, and said why: a run still running, an export waiting for approval, a run whose \
state cannot be told, and an export that took its locks and did not migrate (the same \
export command may resume it from its folder; --include-resumable deletes those too). \
An export that ended but whose root stack's lock it, or a running resume of it, holds \
is kept as running. A --older-than under a day is accepted with a warning. Deletes go \
in DeleteObjects batches of up to 1000 keys; --dry-run lists what would go and deletes \
nothing. Exit 0 when every delete went through, 1 otherwise (the full result is printed \
either way; a folder with keys S3 refused is partly deleted). The CLI needs \
s3:ListBucket, s3:GetObject and s3:DeleteObject on <prefix>/_runs/*, and s3:GetObject \
on the locks (<prefix>/*/lock.json).";

#[derive(Debug, clap::Args)]
pub struct ExpireArgs {
    /// Days after its last write an object under <prefix>/_runs/ expires (at least 8).
    #[arg(long, default_value_t = DEFAULT_EXPIRY_DAYS, allow_negative_numbers = true)]
    pub days: i32,
    /// Say what would change; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct PruneArgs {
    /// Delete the folders of runs whose last write is older than this: 30d, 12h, 2w.
    #[arg(long, value_name = "DURATION")]
    pub older_than: String,
    /// List what would be deleted; delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Delete interrupted or failed exports too (the same command could have resumed them).
    #[arg(long)]
    pub include_resumable: bool,
    /// Print JSON on stdout.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub machines: Machines,
}

/// Help texts for the subcommands' `long_about`.
pub fn expire_help() -> &'static str {
    EXPIRE_HELP
}

pub fn prune_help() -> &'static str {
    PRUNE_HELP
}

/// `runs expire`.
pub async fn expire(g: &GlobalOpts, a: ExpireArgs) -> Result<ExitCode, CliError> {
    let ctx = context::build(g).await?;
    let rule = runs_rule(&ctx.prefix, a.days).map_err(|e| CliError::Usage(e.to_string()))?;
    let merged = ctx.store.merge_runs_rule(&rule, a.dry_run).await?;
    let mut warnings: Vec<_> = expiry_warning(a.days).into_iter().collect();
    warnings.extend(merged.warnings);
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    let r = ExpireResult {
        bucket: ctx.bucket.clone(),
        rule,
        change: merged.change,
        dry_run: a.dry_run,
        other_rules: merged.other_rules,
        warnings,
    };
    if a.json {
        crate::out::println(&serde_json::to_string_pretty(&expire_json(&r)).unwrap_or_default());
    } else {
        crate::out::print(&render_expire(&r));
    }
    Ok(ExitCode::SUCCESS)
}

/// How many folders are judged at once (each costs a few GETs).
const JUDGE_AT_ONCE: usize = 16;
/// Progress goes to stderr past this many listed objects or keys to delete.
const PROGRESS_FROM: usize = 1_000;

/// `runs prune`.
pub async fn prune(g: &GlobalOpts, a: PruneArgs) -> Result<ExitCode, CliError> {
    let older_ms = parse_older_than(&a.older_than).map_err(|e| CliError::Usage(e.to_string()))?;
    if let Some(w) = older_than_warning(&a.older_than, older_ms) {
        eprintln!("warning: {w}");
    }
    let ctx = context::build(g).await?;
    let store = &ctx.store;
    let objects = store
        .list_run_objects(|n| {
            if n >= PROGRESS_FROM {
                eprintln!("{}", RunsNote::Listed { objects: n });
            }
        })
        .await?;
    let folders = cdkd_core::retention::run_folders(&ctx.prefix, objects);
    let ids: BTreeSet<&str> = folders.iter().map(|f| f.run_id.as_str()).collect();
    let now = cdkd_aws::store::now_ms();
    let (recent, old): (Vec<&RunFolder>, Vec<&RunFolder>) =
        folders.iter().partition(|f| is_recent(f, now, older_ms));

    // Resolved when a folder first needs an execution described.
    let machines = LazyMachines {
        sdk: &ctx.sdk,
        flags: &a.machines,
        cell: tokio::sync::OnceCell::new(),
    };
    let judged: Vec<(PruneRow, &RunFolder)> = futures::stream::iter(old)
        .map(|f| {
            let has_plan_run = ids.contains(f.run_id.plan_run().as_str());
            let machines = &machines;
            async move {
                let plan_run = plan_run_of(store, f, has_plan_run).await;
                let facts = facts_of(store, f, plan_run, machines).await;
                let v = verdict(f, &facts, now, older_ms, a.include_resumable);
                (
                    PruneRow {
                        run_id: f.run_id.clone(),
                        kind: facts.kind,
                        objects: f.keys.len(),
                        bytes: f.bytes,
                        last_write_ms: f.last_write_ms,
                        verdict: v,
                        left: 0,
                    },
                    f,
                )
            }
        })
        .buffered(JUDGE_AT_ONCE)
        .collect()
        .await;

    let doomed: Vec<&RunFolder> = judged
        .iter()
        .filter(|(r, _)| r.verdict == Verdict::Delete)
        .map(|(_, f)| *f)
        .collect();
    let (not_deleted, versioned) = if !a.dry_run && !doomed.is_empty() {
        delete_folders(store, &doomed).await
    } else {
        (Vec::new(), false)
    };
    let refused: BTreeSet<&str> = not_deleted.iter().map(|n| n.key.as_str()).collect();
    let rows = judged
        .into_iter()
        .map(|(r, f)| PruneRow {
            left: if r.verdict == Verdict::Delete {
                keys_left(f, &refused)
            } else {
                0
            },
            ..r
        })
        .collect();
    let r = PruneResult {
        bucket: ctx.bucket.clone(),
        older_than: a.older_than.clone(),
        dry_run: a.dry_run,
        rows,
        recent_runs: recent.len(),
        recent_objects: recent.iter().map(|f| f.keys.len()).sum(),
        recent_bytes: recent.iter().map(|f| f.bytes).sum(),
        not_deleted,
        versioned,
    };
    if a.json {
        crate::out::println(&serde_json::to_string_pretty(&prune_json(&r)).unwrap_or_default());
    } else {
        crate::out::print(&render_prune(&r));
    }
    Ok(if r.complete() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Deletes the keys of the `doomed` folders in batches (progress on stderr past
/// [`PROGRESS_FROM`] keys): the keys not deleted, and whether the bucket keeps versions.
async fn delete_folders(
    store: &cdkd_aws::StateStore,
    doomed: &[&RunFolder],
) -> (Vec<NotDeleted>, bool) {
    let mut not_deleted = Vec::new();
    let batches = delete_batches(doomed.iter().copied());
    let total: usize = batches.iter().map(Vec::len).sum();
    let mut done = 0;
    for batch in &batches {
        match store.delete_keys(batch).await {
            Ok(failed) => not_deleted.extend(failed.into_iter().map(|k| NotDeleted {
                key: k.key,
                error: k.error,
            })),
            // A request refused whole (AccessDenied): its keys are all still there;
            // the folders earlier batches deleted are gone all the same, so the
            // result is printed in full (docs/runs.md, "Pruning (cdkd-flow runs prune --older-than D)" step 4).
            Err(e) => {
                let error = e.to_string();
                not_deleted.extend(batch.iter().map(|k| NotDeleted {
                    key: k.clone(),
                    error: error.clone(),
                }));
            }
        }
        done += batch.len();
        if total >= PROGRESS_FROM {
            eprintln!("{}", RunsNote::Deleted { done, total });
        }
    }
    let versioned = match store.is_versioned().await {
        Ok(v) => v,
        Err(e) => {
            tracing::debug!("versioning not read: {e}");
            false
        }
    };
    (not_deleted, versioned)
}

/// The deployed state machines, resolved once, when the first folder needs them.
struct LazyMachines<'a> {
    sdk: &'a cdkd_aws::SdkConfig,
    flags: &'a Machines,
    cell: tokio::sync::OnceCell<DeployedRuns>,
}

impl LazyMachines<'_> {
    async fn get(&self) -> &DeployedRuns {
        self.cell
            .get_or_init(|| async {
                let d = DeployedRuns::resolve(self.sdk, self.flags).await;
                if d.machines.is_empty() {
                    let backend_stack = &self.flags.backend_stack;
                    eprintln!("{}", RunsNote::NoStateMachine { backend_stack });
                }
                d
            })
            .await
    }
}

/// The deployed state machines prune could resolve, to describe a run without
/// `run.json` by its execution; a kind that does not resolve is told from its files.
struct DeployedRuns {
    sdk: cdkd_aws::SdkConfig,
    machines: Vec<(RunKind, String)>,
}

impl DeployedRuns {
    async fn resolve(sdk: &cdkd_aws::SdkConfig, m: &Machines) -> DeployedRuns {
        let mut machines = Vec::new();
        for (kind, flag) in [
            (Kind::Destroy, m.destroy_state_machine_arn.as_deref()),
            (Kind::Export, m.export_state_machine_arn.as_deref()),
            (Kind::Cleanup, m.cleanup_state_machine_arn.as_deref()),
        ] {
            match remote::resolve_state_machine(sdk, kind, flag, &m.backend_stack).await {
                Ok(arn) => machines.push((kind.into(), arn)),
                Err(e) => {
                    tracing::info!("{kind} runs without run.json are told from their files: {e}")
                }
            }
        }
        DeployedRuns {
            sdk: sdk.clone(),
            machines,
        }
    }

    /// The run's execution, when a state machine of the run's kind (any, when its id
    /// names none) has it, with the kind of the machine that answered.
    async fn describe(
        &self,
        kind: Option<RunKind>,
        run_id: &RunId,
    ) -> Option<(RunKind, Execution)> {
        for (k, sm) in &self.machines {
            if kind.as_ref().is_some_and(|kind| kind != k) {
                continue;
            }
            let arn = sfn::execution_arn(sm, run_id)?;
            let client = Sfn::for_arn(&self.sdk, &arn);
            match client.describe(&arn).await {
                // A run that continued in new executions is as its latest (docs/runs.md,
                // "Continuing in a new execution"): its folder is alive while that runs.
                Ok(x) => match crate::remote::latest_execution(&client, x).await {
                    Ok(x) => return Some((k.clone(), x)),
                    Err(e) => {
                        tracing::info!("run {run_id}: {e}");
                        return None;
                    }
                },
                Err(SfnError::NoSuchExecution { .. }) => continue,
                Err(e) => {
                    tracing::info!("run {run_id}: {e}");
                    return None;
                }
            }
        }
        None
    }
}

/// The export's plan run beside folder `f`: its process (the export's CLI) is read only
/// for a folder of uploads alone, which is what it would tell apart.
async fn plan_run_of(store: &StateStore, f: &RunFolder, has_plan_run: bool) -> PlanRun {
    if !has_plan_run {
        return PlanRun::Absent;
    }
    let plan = f.run_id.plan_run();
    if f.files.only_uploads() && crate::run::listing::process_of_run_alive(store, &plan).await {
        PlanRun::ProcessAlive
    } else {
        PlanRun::Ended
    }
}

/// What is known of a folder's run: a local run as `runs list --local` tells it; a
/// deployed one by its execution, else by its files; then, for an export that ended or
/// was interrupted, the lock of its root stack (a resume may be running it again). A file
/// that cannot be read (a damaged report, a refused GET) makes the run's state unknown:
/// it is kept, and says why.
async fn facts_of(
    store: &StateStore,
    f: &RunFolder,
    plan_run: PlanRun,
    deployed: &LazyMachines<'_>,
) -> RunFacts {
    let kind_by_files = || {
        kind_of_run(
            &f.run_id,
            &KindWitness {
                plan: f.files.plan,
                ..KindWitness::default()
            },
        )
    };
    let facts = match read_facts(store, f, plan_run, deployed).await {
        Ok(facts) => facts,
        Err(e) => {
            return RunFacts {
                kind: kind_by_files(),
                plan_only: false,
                status: RunStatus::Unknown {
                    why: UnknownWhy::Unreadable(e.to_string()),
                },
            }
        }
    };
    if !needs_root_lock(f, &facts) {
        return facts;
    }
    match root_lock_status(store, f, &facts, deployed).await {
        Ok(status) => RunFacts { status, ..facts },
        Err(e) => RunFacts {
            status: RunStatus::Unknown {
                why: UnknownWhy::RootLockUnreadable(e.to_string()),
            },
            ..facts
        },
    }
}

/// The run's status once the lock of its root stack (the stack of its progress without
/// a parent, in its region) is read, and the execution holding it described when it is
/// another deployed run's (`cdkd_core::retention::with_root_lock`).
async fn root_lock_status(
    store: &StateStore,
    f: &RunFolder,
    facts: &RunFacts,
    deployed: &LazyMachines<'_>,
) -> Result<RunStatus, CliError> {
    let Some(progress) = crate::run::artifacts::read_export_progress(store, &f.run_id).await else {
        // No progress that reads: no resume can take this run over.
        return Ok(facts.status.clone());
    };
    let Some(root) = progress.stacks.iter().find(|s| s.parent.is_none()) else {
        return Ok(facts.status.clone());
    };
    let lock = store
        .get_lock(&root.stack, Some(&root.region))
        .await?
        .map(|(info, _)| info);
    let holder = root_holder(lock.as_ref(), &f.run_id, store.s3_now_ms());
    let execution = match &holder {
        RootHolder::Execution(name) => Some(
            match deployed
                .get()
                .await
                .describe(Some(RunKind::Export), name)
                .await
            {
                Some((_, x)) => {
                    let input: Value = x
                        .input
                        .as_deref()
                        .and_then(|i| serde_json::from_str(i).ok())
                        .unwrap_or(Value::Null);
                    HolderExecution::Described {
                        writes_into: crate::run::run_folder(&x.name, &input).into(),
                        status: x.status,
                    }
                }
                None => HolderExecution::Undescribed,
            },
        ),
        _ => None,
    };
    Ok(with_root_lock(
        facts.status.clone(),
        &f.run_id,
        &holder,
        execution.as_ref(),
    ))
}

async fn read_facts(
    store: &StateStore,
    f: &RunFolder,
    plan_run: PlanRun,
    deployed: &LazyMachines<'_>,
) -> Result<RunFacts, CliError> {
    if f.files.run_json {
        if let Some(row) = crate::run::listing::local_row(store, &f.run_id).await? {
            return Ok(RunFacts {
                kind: kind_of_run(
                    &f.run_id,
                    &KindWitness {
                        run_json: Some(row.run.kind.as_str()),
                        plan: f.files.plan,
                        ..KindWitness::default()
                    },
                ),
                plan_only: row.run.plan_only,
                status: RunStatus::of_local(&row.state),
            });
        }
    }
    let report: Option<Value> = if f.files.report {
        crate::run::artifacts::read_json(store, &report_key(&store.prefix, &f.run_id), "report")
            .await?
    } else {
        None
    };
    let report_kind = report
        .as_ref()
        .and_then(|r| r.get("kind"))
        .and_then(Value::as_str);
    let by_files = KindWitness {
        plan: f.files.plan,
        report: report_kind,
        ..KindWitness::default()
    };
    let described = deployed
        .get()
        .await
        .describe(kind_of_run(&f.run_id, &by_files), &f.run_id)
        .await;
    let kind = kind_of_run(
        &f.run_id,
        &KindWitness {
            machine: described.as_ref().map(|(k, _)| k),
            ..by_files
        },
    );
    let outcome = report
        .map(|r| crate::run::listing::outcome_of_report(store, &f.run_id, kind.clone(), r))
        .transpose()?;
    if let Some((_, x)) = described {
        return Ok(RunFacts {
            kind,
            plan_only: false,
            status: RunStatus::of_execution(&x.status, outcome.as_ref()),
        });
    }
    let approval_pending = f.files.approval
        && !f.files.report
        && matches!(
            crate::approval::read(store, &f.run_id).await?,
            Some((a, _)) if a.decision.is_none()
        );
    Ok(RunFacts {
        kind,
        plan_only: false,
        status: RunStatus::of_files(&f.files, outcome.as_ref(), approval_pending, plan_run),
    })
}
