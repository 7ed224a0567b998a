//! `cdkd-flow destroy <stack>... [--stack-region R] [--local] [--dry-run] [-y]`: plans
//! every stack from its state (the same refusals and order as the workflow's plan step),
//! prints the plan (`--dry-run`) or asks for confirmation (unless `-y`), then runs the
//! destroy workflow for each stack, one after the other, consumers before producers,
//! showing a bar per stack and a line per resource as it settles, and the report.

use std::process::ExitCode;
use std::sync::Arc;

use cdkd_core::contention::{Contention, ContentionContext, LockRefusal, Subject};
use cdkd_core::destroy::decide::DecideOptions;
use cdkd_core::destroy::dry_run::{plan_run, PlanRequest, RunPlan, RunRefusal};
use cdkd_core::destroy::model::RunResult;
use cdkd_core::destroy::order::destroy_order;
use cdkd_core::destroy::refusals::{Refusal, StackRecord};
use cdkd_core::destroy_command::{DestroyCommandRefusal, DestroyNote, DestroyStop};
use cdkd_core::lock::is_expired;
use cdkd_core::run::{RunId, RunKind};
use cdkd_core::text::flatten_str;
use cdkd_core::view::plan::{refused_summary, render_confirmation, render_plan, CONFIRM_QUESTION};
use cdkd_engine::{Event, EventKind, Outcome};
use cdkd_functions::destroy::finish::RunReport;
use cdkd_functions::destroy::load::{
    consumers, export_hold, load_tree, HoldReadError, LoadError, StackTree,
};
use cdkd_functions::destroy::DestroyInput;
use cdkd_functions::{definitions, Deps};

use crate::context::{self, Ctx};
use crate::error::CliError;
use crate::global::GlobalOpts;
use crate::local;
use crate::remote::{self, Kind, RemoteArgs};
use crate::run::local::{run_local, LocalOptions, LocalStart};
use crate::run::watch::{watch_progress, WatchOptions, Watched};

const HELP: &str = "\
Deletes every resource recorded in each stack's cdkd state, dependents first, from the \
state alone (no template), and its nested children before it. Several stacks are \
destroyed one after the other, each as its own run, a stack that imports from another \
before it. Before anything is deleted every stack is planned from its record: a nested \
child on its own, a stack whose exports another stack still imports, a damaged record, \
a dependency cycle or a lock held by another process refuses the whole command, and \
nothing is deleted.

--dry-run prints the plan (the waves in the order they would be deleted, retained \
resources, no-ops, rows that would fail and what they would block, refusals) and \
changes nothing. Otherwise the command lists what it will delete and asks for 'yes' on \
the terminal; -y/--yes skips the question, and without a terminal on stdin it is \
required.

While a run goes, each stack has a progress bar (plain lines when stderr is not a \
terminal) and every resource gets a line as it settles. The stack's lock is held for \
the whole run (cdkd and cdkd-flow exclude each other through it). Confirmed deletes are \
removed from state.json as they happen, so an interrupted run can simply be started \
again. A resource that fails keeps everything it depends on in state (reported as \
'blocked by'); independent resources are still deleted. The report is also written to \
<prefix>/_runs/<run-id>/report.json in the state bucket.

Without --local the deployed destroy state machine is started, one execution per stack \
named destroy-<stack>-<time> (the state machine from --state-machine-arn, else env \
CDKD_FLOW_DESTROY_STATE_MACHINE_ARN, else the backend stack's outputs), and watched \
until it ends; --detach returns once it has started (follow it with `cdkd-flow runs \
watch <run>`). Closing the terminal does not stop a deployed run.

Exit status: 0 when everything was destroyed (or the dry run refused nothing), 1 when \
something is left, a destroy was refused or the confirmation was declined, 2 for a \
usage error (including a missing -y when stdin is not a terminal).";

/// Resources listed in the confirmation before `... and N more`.
const CONFIRM_CAP: usize = 30;

#[derive(Debug, clap::Args)]
#[command(long_about = HELP)]
pub struct Args {
    /// The stacks to destroy (their nested children come along).
    #[arg(required = true, value_name = "STACK")]
    pub stacks: Vec<String>,
    /// The region of the stacks' records (needed when a stack has state in several).
    #[arg(long)]
    pub stack_region: Option<String>,
    /// Run the workflow in this process instead of starting the deployed state machine.
    #[arg(long)]
    pub local: bool,
    /// With --local: do not sleep in Wait states (poll again at once).
    #[arg(long, requires = "local")]
    pub fast: bool,
    /// Print the plan (order, retained, refusals); delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask for confirmation.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Destroy a nested child stack on its own.
    #[arg(long)]
    pub allow_nested_child: bool,
    /// Ignore DeletionPolicy: Snapshot (no final snapshot is taken: data loss).
    #[arg(long)]
    pub skip_final_snapshot: bool,
    /// Turn per-resource deletion protection off before deleting.
    #[arg(long)]
    pub remove_protection: bool,
    /// The run id (the execution name) of a single-stack destroy; default
    /// destroy-<stack>-<time>.
    #[arg(long)]
    pub run_id: Option<String>,
    /// Print the report as JSON on stdout (an array with one report per stack when
    /// several are destroyed).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// The stacks named, each once in the order given, with the checks of the arguments.
fn distinct_stacks(a: &Args) -> Result<Vec<String>, CliError> {
    if let Some(id) = &a.run_id {
        crate::run::ids::check_execution_name(id)?;
    }
    let mut stacks: Vec<String> = Vec::new();
    crate::global::check_stacks(&a.stacks)?;
    for s in &a.stacks {
        if !stacks.contains(s) {
            stacks.push(s.clone());
        }
    }
    if a.run_id.is_some() && stacks.len() > 1 {
        return Err(CliError::usage(cdkd_core::usage::Usage::RunIdOfSeveral));
    }
    Ok(stacks)
}

/// What comes before any run: a dry run's plan (and its exit code), the refusals, the
/// confirmation. `None` when the runs go ahead.
async fn before_runs(
    ctx: &crate::context::Ctx,
    a: &Args,
    plans: &[RunPlan],
) -> Result<Option<ExitCode>, CliError> {
    if a.dry_run {
        crate::out::print(&render_plan(plans));
        let refused = plans.iter().filter(|p| p.refusal.is_some()).count();
        if refused == 0 {
            return Ok(Some(ExitCode::SUCCESS));
        }
        // The plan says why; stderr gets the failure line (docs/cli.md).
        eprintln!(
            "{}",
            cdkd_core::view::error_line(&refused_summary(refused, plans.len()))
        );
        return Ok(Some(ExitCode::from(1)));
    }
    let refused: Vec<&RunRefusal> = plans.iter().filter_map(|p| p.refusal.as_ref()).collect();
    if !refused.is_empty() {
        for why in &refused {
            eprintln!("{}", cdkd_core::view::error_line(&why.to_string()));
        }
        return Err(CliError::refused(&DestroyCommandRefusal::Refused {
            refused: refused.len(),
            runs: plans.len(),
        }));
    }
    if !a.yes {
        confirm(plans, &format!("s3://{}/{}", ctx.bucket, ctx.prefix)).await?;
    }
    Ok(None)
}

pub async fn run(g: &GlobalOpts, a: Args) -> Result<ExitCode, CliError> {
    let stacks = distinct_stacks(&a)?;
    let ctx = context::build(g).await?;
    let plans = plan_all(&ctx, &stacks, &a).await?;
    if let Some(code) = before_runs(&ctx, &a, &plans).await? {
        return Ok(code);
    }

    let mut deps = ctx.step_deps().await;
    if a.local {
        // The locks of a local run name this host and process (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first").
        deps.local = Some(crate::local::this_process());
    }
    let store = deps.store(&ctx.bucket, &ctx.prefix).await;
    let opts = WatchOptions::for_stderr(a.json);
    let mut reports: Vec<RunReport> = Vec::new();
    let mut all_clean = true;
    for (i, plan) in plans.iter().enumerate() {
        let now = cdkd_aws::store::now_ms();
        let run_id = crate::run::ids::given_or(a.run_id.as_deref(), || {
            if a.local {
                // Local runs are never re-attached: millisecond names keep them apart.
                crate::run::ids::default_run_id("destroy", &plan.stack, now)
            } else {
                crate::run::ids::execution_name("destroy", &plan.stack, now)
            }
        })?;
        let started = DestroyNote::Started {
            stack: &plan.stack,
            run_id: &run_id,
        };
        eprintln!("{started}");
        let input = DestroyInput {
            stack: plan.stack.clone(),
            stack_region: plan.region.clone().or_else(|| a.stack_region.clone()),
            state_bucket: ctx.bucket.clone(),
            state_prefix: ctx.prefix.clone(),
            allow_nested_child: a.allow_nested_child,
            skip_final_snapshot: a.skip_final_snapshot,
            remove_protection: a.remove_protection,
        };
        if !a.local {
            // The deployed state machine: started under a readable execution name (a
            // retried command re-attaches to the same run), then watched.
            let code = remote::start_and_watch(
                &ctx.sdk,
                &a.remote,
                Kind::Destroy,
                &run_id,
                &serde_json::to_value(&input).map_err(|e| CliError::Usage(e.to_string()))?,
                a.json,
            )
            .await?;
            if code != ExitCode::SUCCESS {
                all_clean = false;
            }
            continue;
        }
        let done = start_local(&deps, &store, &input, &run_id, a.fast)?;
        let watched = watch_progress(&store, &ctx.prefix, &run_id, done, &opts).await;
        let verdict = verdict(&plan.stack, &watched);
        if let Some(r) = watched.report {
            reports.push(r);
        }
        match verdict {
            Verdict::Clean => {}
            Verdict::Partial => {
                all_clean = false;
                let partial = DestroyNote::Partial { stack: &plan.stack };
                eprintln!("{}", cdkd_core::view::error_line(&partial.to_string()));
            }
            Verdict::Stopped(why) => {
                all_clean = false;
                let left: Vec<String> = plans[i + 1..].iter().map(|p| p.stack.clone()).collect();
                if why.is_some() || !left.is_empty() {
                    let stopped = DestroyNote::Stopped {
                        why: why.as_ref(),
                        not_started: &left,
                    };
                    eprintln!("{}", cdkd_core::view::error_line(&stopped.to_string()));
                }
                break;
            }
        }
    }
    if a.json && !reports.is_empty() {
        let out = match reports.as_slice() {
            [one] if plans.len() == 1 => serde_json::to_string_pretty(one),
            many => serde_json::to_string_pretty(many),
        };
        crate::out::println(&out.unwrap_or_default());
    }
    Ok(if all_clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// How one run ended, for the loop over stacks.
enum Verdict {
    /// Everything destroyed (retained resources allowed).
    Clean,
    /// Something failed, was skipped or blocked: the next stack still goes.
    Partial,
    /// Interrupted, refused or aborted: no further stack starts.
    Stopped(Option<DestroyStop>),
}

fn verdict(stack: &str, w: &Watched<Result<Outcome, String>>) -> Verdict {
    let said = || w.output.as_ref().err().cloned().map(DestroyStop::Said);
    let failed = match &w.output {
        Ok(Outcome::Failed(f)) => Some((f.error.clone(), f.cause.clone())),
        _ => None,
    };
    match &w.report {
        Some(r) if r.complete => Verdict::Clean,
        Some(r) => {
            let interrupted = r.stacks.iter().any(|s| s.result == RunResult::Interrupted);
            if r.aborted.is_some() {
                // A local run stopped by Ctrl-C says so, naming the command to run again;
                // a run a step stopped (a lost lock...) names the stack and the cause.
                let stopped = failed.map(|(error, cause)| DestroyStop::StepStopped {
                    stack: stack.to_string(),
                    error,
                    cause,
                });
                Verdict::Stopped(said().or(stopped))
            } else if interrupted {
                Verdict::Stopped(said())
            } else {
                Verdict::Partial
            }
        }
        // Refused before anything was planned (a lock taken since the plan...).
        None => {
            let failed = match failed {
                Some((error, cause)) => DestroyStop::Failed { error, cause },
                None => DestroyStop::NoReport,
            };
            Verdict::Stopped(Some(said().unwrap_or(failed)))
        }
    }
}

/// Asks on stderr, reads the answer from stdin; refuses at once when stdin is not a
/// terminal (a pipe or CI would otherwise hang or answer by accident).
async fn confirm(plans: &[RunPlan], location: &str) -> Result<(), CliError> {
    let question = format!(
        "{}{CONFIRM_QUESTION}",
        render_confirmation(plans, location, CONFIRM_CAP)
    );
    match crate::ask::confirm(&question).await? {
        None => Err(CliError::usage(cdkd_core::usage::Usage::NoTerminal(
            cdkd_core::usage::NoTerminalFor::Destroy,
        ))),
        Some(true) => Ok(()),
        Some(false) => Err(CliError::refused(&DestroyCommandRefusal::NotConfirmed)),
    }
}

/// Starts the destroy workflow in this process as a local run (the engine on its own
/// task, crate::run::local: run.json, Ctrl-C, a report on every end) and returns what
/// resolves when it ends.
fn start_local<'a>(
    deps: &Deps,
    store: &'a cdkd_aws::StateStore,
    input: &DestroyInput,
    run_id: &'a RunId,
    fast: bool,
) -> Result<impl std::future::Future<Output = Result<Outcome, String>> + 'a, CliError> {
    let input = serde_json::to_value(input).map_err(|e| CliError::Usage(e.to_string()))?;
    let subs = definitions::local_substitutions();
    let sm = local::definition(definitions::DESTROY, "cdkd-flow-destroy", &subs)?;
    let engine = local::engine(deps, fast).with_observer(Arc::new(step_failure));
    let start = LocalStart::of_input(RunKind::Destroy, &input);
    let notify = deps.notify.clone();
    Ok(async move {
        let o = LocalOptions {
            store,
            start,
            approval_poll: None,
            notify: notify.as_ref(),
            resumes: false,
            defer_end: None,
        };
        run_local(engine, sm, input, run_id, o)
            .await
            .map_err(|e| e.to_string())
    })
}

/// A step that failed (and may be retried) is logged; the bars show the rest.
fn step_failure(e: &Event) {
    if let EventKind::TaskFailed = &e.kind {
        tracing::warn!(
            "{} failed: {}: {}",
            e.state.as_deref().unwrap_or("a step"),
            e.error.as_deref().unwrap_or(""),
            flatten_str(e.cause.as_deref().unwrap_or(""))
        );
    }
}

// ---------------------------------------------------------------------------------
// Planning from the records (read only): what --dry-run prints and the prompt lists.

/// Plans every stack, in the order the runs would go (consumers before producers).
async fn plan_all(ctx: &Ctx, stacks: &[String], a: &Args) -> Result<Vec<RunPlan>, CliError> {
    let mut loaded: Vec<StackTree> = Vec::new();
    let mut plans: Vec<RunPlan> = Vec::new();
    for s in stacks {
        match load_tree(&ctx.store, s, a.stack_region.as_deref()).await {
            Ok(t) => loaded.push(t),
            Err(LoadError::Refused { region, message }) => plans.push(RunPlan::refused(
                s,
                region.as_deref(),
                RunRefusal::Text(message),
            )),
            Err(LoadError::Store(e)) => return Err(e.into()),
        }
    }
    // Consumers first (docs/destroy.md, "Stacks and their order" step 4), from each root record's imports /
    // outputReads.
    let order: Vec<usize> = {
        let (at, roots): (Vec<usize>, Vec<StackRecord<'_>>) = loaded
            .iter()
            .enumerate()
            .filter_map(|(i, t)| Some((i, StackRecord::from_state(&t.stack, &t.region, t.root()?))))
            .unzip();
        destroy_order(&roots).into_iter().map(|k| at[k]).collect()
    };
    let now = cdkd_aws::store::now_ms();
    let mut gone_before: Vec<String> = Vec::new();
    for i in order {
        let l = &loaded[i];
        // The stacks destroyed earlier in this command are gone by the time this one runs.
        let others = consumers(&ctx.store, l, &gone_before).await?;
        let other_refs: Vec<StackRecord<'_>> = others
            .iter()
            .map(|(s, r)| StackRecord::from_state(s, &l.region, r))
            .collect();
        let mut plan = plan_run(&PlanRequest {
            stack: &l.stack,
            region: &l.region,
            stacks: &l.records,
            others: &other_refs,
            allow_nested_child: a.allow_nested_child,
            decide: DecideOptions {
                skip_final_snapshot: a.skip_final_snapshot,
                now_ms: now.max(0) as u64,
            },
        });
        if plan.refusal.is_none() {
            plan.refusal = lock_refusal(ctx, l)
                .await?
                .map(|r| RunRefusal::Lock(Box::new(r)));
        }
        if plan.refusal.is_none() {
            plan.refusal = match export_refusal(ctx, l).await {
                Ok(held) => held.map(RunRefusal::Destroy),
                Err(unread) => Some(RunRefusal::Text(unread.to_string())),
            };
        }
        gone_before.extend(l.records.iter().map(|(s, _)| s.clone()));
        plans.push(plan);
    }
    Ok(plans)
}

/// A record of the run whose resources a stopped export holds in CloudFormation
/// (docs/destroy.md, "Refusals before anything is deleted" step 8): the refusal the plan step gives, said before the
/// question. A stack that cannot be read refuses too (the read error): the destroy never
/// goes on without knowing.
async fn export_refusal(ctx: &Ctx, l: &StackTree) -> Result<Option<Refusal>, HoldReadError> {
    Ok(export_hold(&ctx.sdk, &ctx.store, &l.region, &l.records)
        .await?
        .map(|hold| Refusal::HeldByExport {
            stack: hold.record.clone(),
            region: l.region.clone(),
            flags: cdkd_core::view::contention::state_flags(&ctx.bucket, &ctx.prefix),
            hold: Box::new(hold),
        }))
}

/// A lock another process holds on any stack of the run (an expired lock is taken over
/// by the run, so it does not refuse), or one that cannot be read. Judged on S3's clock (docs/state-and-lock.md, "Lock time is S3's").
async fn lock_refusal(ctx: &Ctx, l: &StackTree) -> Result<Option<LockRefusal>, CliError> {
    for (stack, record) in &l.records {
        let subject = if record.body.get("parentStack").is_some_and(|p| !p.is_null()) {
            Subject::NestedStackChild
        } else {
            Subject::Stack
        };
        let c = ContentionContext {
            subject,
            stack,
            region: Some(&l.region),
            profile: ctx.profile.as_deref(),
            bucket: Some(&ctx.bucket),
            prefix: &ctx.prefix,
        };
        let found = ctx.store.get_lock(stack, Some(&l.region)).await;
        let now = ctx.store.s3_now_ms();
        match found {
            Ok(None) => {}
            Ok(Some((info, _))) if is_expired(&info, now) => {}
            Ok(Some((info, _))) => {
                return Ok(Some(LockRefusal::Held(Contention::new(
                    &c,
                    Some(&info),
                    now,
                ))))
            }
            Err(e) => {
                return Ok(Some(LockRefusal::Unreadable {
                    contention: Contention::new(&c, None, now),
                    error: e.to_string(),
                }))
            }
        }
    }
    Ok(None)
}
