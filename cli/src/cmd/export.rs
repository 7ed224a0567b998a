//! `cdkd-flow export [<stack>] (--template PATH | --cdk-out DIR | --app CMD) --dry-run`:
//! reads the stack's templates (nested ones included; the stack may be left out when the
//! cloud assembly holds only one), uploads them under the run's prefix, runs the export
//! workflow (`statemachines/export.asl.json`: the `export-plan` step) in this process
//! (`--local`) or on the deployed state machine, and prints the plan it wrote: the
//! per-stack summary, or with `--json` the plan itself (docs/export.md, "Values printed in messages" and "Workflow").
//! Without `--dry-run` it then confirms (or, with `--require-approval`, lets the run wait
//! for `cdkd-flow runs approve`, docs/export.md, "Approval (export-approval)") and runs the migration, printing
//! its report.

use std::collections::BTreeMap;
use std::process::ExitCode;

use cdkd_aws::StateStore;
use cdkd_core::export::command::{ExportCommandRefusal, ExportNote};
use cdkd_core::export::execute::execution_refusal;
use cdkd_core::export::names;
use cdkd_core::export::plan::Plan;
use cdkd_core::export::resume::{live_refusal, not_ours_refusal, Verdict};
use cdkd_core::run::{RunId, RunKind};
use cdkd_core::text::flatten_str;
use cdkd_core::view::export::{assembly_line, template_read_line};
use cdkd_core::workflow_refusal::BackendRefusal;
use cdkd_engine::Outcome;
use cdkd_functions::export::ExportInput;
use cdkd_functions::{definitions, Deps};
use serde_json::Value;

pub use super::export_args::Args;
use crate::context;
use crate::error::CliError;
use crate::export_source::{read_templates, upload_templates, SourceError, TemplateSet};
use crate::global::GlobalOpts;
use crate::local;
use crate::out::note;
use crate::remote::{self, Kind};
use crate::run::artifacts::{print_plan_cached, print_report, read_plan};
use crate::run::follow::follow_local_steps;
use crate::run::local::{LocalOptions, LocalStart};
use crate::run::RunPlace;

pub async fn run(g: &GlobalOpts, a: Args) -> Result<ExitCode, CliError> {
    check_args(&a)?;
    let ctx = context::build(g).await?;
    let set = read_templates(&a.source(), a.stack.as_deref())
        .await
        .map_err(unnamed_stack_is_usage)?;
    // The stack's name as the assembly declares it (a display name given on the command
    // line names the same stack): its record, its uploaded template and the run's name.
    let name = set.root.stack.clone();
    let stack = flatten_str(&name);
    tell_templates(&a, &set, &stack);
    let cleared = match clear_the_way(&ctx, &a, &name, &set).await? {
        Ok(cleared) => cleared,
        Err(code) => return Ok(code),
    };
    cross_stack_scan(&a, &name, &set)?;
    let now = cdkd_aws::store::now_ms();
    let run_id = crate::run::ids::given_or(a.run_id.as_deref(), || {
        if a.local {
            crate::run::ids::default_run_id(RunKind::Export.as_str(), &name, now)
        } else {
            remote::execution_name(RunKind::Export.as_str(), &name, now)
        }
    })?;
    let deps = local_deps(&ctx, a.local).await;
    let uploaded = upload_templates(&deps.artifacts, &ctx.store, &run_id, &set).await?;
    note(ExportNote::Uploaded {
        stack: &name,
        run_id: &run_id,
        templates: uploaded.len(),
        bucket: &ctx.bucket,
        run_folder: &cdkd_functions::runs::run_prefix(&ctx.prefix, &run_id),
    });
    let input = ExportInput {
        stack: name.clone(),
        stack_region: cleared.record_region,
        state_bucket: ctx.bucket.clone(),
        state_prefix: ctx.prefix.clone(),
        templates: uploaded
            .into_iter()
            .map(|u| (u.stack, u.key))
            .collect::<BTreeMap<_, _>>(),
        options: a.options(),
        dry_run: true,
        require_approval: false,
        resume: None,
        plan_from: None,
        plan_for: None,
        destinations_seen: cleared.destinations_seen,
        take_over: cleared.take_over,
    };
    // A real run's plan run writes the plan into the run's folder: one plan per run.
    let plan_input = ExportInput {
        plan_for: (!a.dry_run).then(|| run_id.as_str().to_string()),
        ..input.clone()
    };
    let plan_input =
        serde_json::to_value(&plan_input).map_err(|e| CliError::Usage(e.to_string()))?;

    // The plan first, dry run or not: what is shown is what a real run imports.
    let plan_run = if a.dry_run {
        run_id.clone()
    } else {
        run_id.plan_run()
    };
    let plan_end = std::sync::Mutex::new(None);
    let plan = match plan_first(&ctx, &deps, &a, &stack, plan_input, &plan_run, &plan_end).await? {
        Ok(plan) => plan,
        Err(code) => return Ok(code),
    };
    // A local plan run of a real run that succeeded leaves its end unwritten: the run's
    // own `run.json`, written as it starts, says it (docs/runs.md, "The objects a run
    // writes"); it is written here when the run goes no further.
    match gate_after_plan(&a, &name, &plan_run, plan).await {
        Ok(Ok(_)) => {}
        other => {
            crate::run::local::record_deferred_end(&ctx.store, &plan_end).await;
            return other.map(|r| r.err().unwrap_or(ExitCode::SUCCESS));
        }
    }
    migrate(&ctx, &deps, &a, &name, input, &run_id, &plan_run).await
}

/// The arguments' own checks, before anything is read.
fn check_args(a: &Args) -> Result<(), CliError> {
    crate::global::check_stacks(&a.stack)?;
    if a.stack.is_none() && a.template.is_some() {
        // Statement 3 (docs/export.md, "Checks"): a lone template names no stack.
        return Err(CliError::usage(cdkd_core::usage::Usage::TemplateNeedsStack));
    }
    if let Some(id) = &a.run_id {
        remote::check_execution_name(id)?;
    }
    Ok(())
}

/// Says on stderr which assembly and which template files were read, and warns when
/// `--template` leaves nested stacks unread.
fn tell_templates(a: &Args, set: &TemplateSet, stack: &str) {
    if let Some(d) = &set.display_name {
        eprintln!(
            "{}",
            assembly_line(d, set.account.as_deref(), set.region.as_deref())
        );
    }
    for t in set.stacks() {
        let parent = t.parent.as_ref().map(|p| p.parent.as_str());
        let file = t.source.to_string_lossy();
        eprintln!(
            "{}",
            template_read_line(&t.stack, &file, &t.format.to_string(), parent)
        );
    }
    if a.template.is_some() && !set.nested_without_template.is_empty() {
        // Statement 81 (docs/export.md, "Checks"): the plan refuses a child that has a record,
        // for want of its template; say before planning why, and what reads it.
        note(ExportNote::NestedWithoutTemplate {
            stack,
            logical_ids: &set
                .nested_without_template
                .iter()
                .map(|n| n.logical_id.clone())
                .collect::<Vec<_>>(),
        });
    }
}

/// What the checks before planning hand on to the run's input.
struct Cleared {
    take_over: Vec<String>,
    record_region: Option<String>,
    destinations_seen: BTreeMap<String, names::Destination>,
}

/// What stands in the way, read before planning (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first"): a lock held
/// by anyone else, a live run, this record's interrupted run (resumed), a destination
/// stack that is nobody's run. The exit code when the command ends here (a resume ran).
async fn clear_the_way(
    ctx: &crate::context::Ctx,
    a: &Args,
    name: &str,
    set: &TemplateSet,
) -> Result<Result<Cleared, ExitCode>, CliError> {
    let mut take_over = Vec::new();
    let mut record_region = a.stack_region.clone();
    let mut destinations_seen = BTreeMap::new();
    if let Ok(cfn_root) = names::cfn_name(name, true, a.cfn_stack_name.as_deref(), &BTreeMap::new())
    {
        let overrides = names::parse_child_overrides(&a.cfn_child_stack_name).unwrap_or_default();
        let children: Vec<(String, String)> = set
            .stacks()
            .filter(|t| t.parent.is_some())
            .filter_map(|t| {
                let cfn = names::cfn_name(&t.stack, false, None, &overrides).ok()?;
                Some((t.stack.clone(), cfn))
            })
            .collect();
        let before = crate::resume::before_export(
            ctx,
            name,
            a.stack_region.as_deref(),
            &cfn_root,
            &children,
            &a.remote,
        )
        .await?;
        record_region = before.record_region.clone();
        destinations_seen = before.destinations_seen.clone();
        match before.verdict {
            Verdict::Fresh { take_over: t } => take_over = t,
            Verdict::Locked => {
                return Err(CliError::refused(&crate::resume::locked_refusal(
                    ctx,
                    name,
                    Some(&before.region),
                    before.lock.as_ref(),
                )))
            }
            Verdict::Live { holder, known } => {
                let rec =
                    crate::run::artifacts::read_export_progress(&ctx.store, holder.run_id()).await;
                let at = rec.as_ref().and_then(|r| r.log.last()).map(String::as_str);
                return Err(CliError::refused(&live_refusal(name, &holder, known, at)));
            }
            Verdict::NotOurs { status } if !a.dry_run => {
                return Err(CliError::refused(&not_ours_refusal(
                    name, &cfn_root, &status,
                )))
            }
            // A dry run plans: its plan refuses the destination row.
            Verdict::NotOurs { .. } => {}
            Verdict::Resume { run_id, take_over } => {
                return resume_run(ctx, a, name, &cfn_root, run_id, take_over)
                    .await
                    .map(Err)
            }
        }
    }
    Ok(Ok(Cleared {
        take_over,
        record_region,
        destinations_seen,
    }))
}

/// The cross-stack consumer scan (docs/export.md, "Cross-stack consumers"): a warning, or with
/// --strict-cross-stack a refusal before anything is uploaded (a dry run only warns).
fn cross_stack_scan(a: &Args, name: &str, set: &TemplateSet) -> Result<(), CliError> {
    let hits = cdkd_core::export::consumers::consumers(name, &set.others);
    let strict = a.strict_cross_stack && !a.dry_run;
    match cdkd_core::export::consumers::verdict(name, &hits, strict) {
        None => {}
        Some(Ok(reads)) => note(ExportNote::CrossStack {
            reads: &reads,
            strict: a.strict_cross_stack,
        }),
        Some(Err(refusal)) => return Err(CliError::refused(&refusal)),
    }
    Ok(())
}

/// The plan run, in this process or on the deployed state machine: the plan it wrote,
/// or the exit code when the command ends with it (a dry run, a refused plan).
async fn plan_first(
    ctx: &crate::context::Ctx,
    deps: &Deps,
    a: &Args,
    stack: &str,
    plan_input: Value,
    plan_run: &RunId,
    plan_end: &std::sync::Mutex<Option<cdkd_core::runs::LocalRun>>,
) -> Result<Result<Option<Plan>, ExitCode>, CliError> {
    Ok(Ok(if a.local {
        note(ExportNote::Planning { stack });
        let defer = (!a.dry_run).then_some(plan_end);
        let outcome = run_local(
            deps,
            plan_input.clone(),
            plan_run,
            a.fast,
            None,
            false,
            defer,
        )
        .await?;
        // The plan this process's plan step just wrote, from memory.
        let printed = print_plan_cached(
            &deps.artifacts,
            &ctx.store,
            plan_run,
            a.json && a.dry_run,
            a.dry_run,
        )
        .await?;
        if let Outcome::Failed(f) = outcome {
            // A plan with blocked rows ends its summary with the refusal, and stderr
            // gets its `error:` line; any other failure (or --json, whose stdout is the
            // plan alone) is said on stderr only.
            let said = printed.as_ref().and_then(|p| p.blocked_refusal());
            if let (Some(refusal), false) = (said, a.json) {
                let line = failure_line(stack, "Refused", &refusal.to_string());
                eprintln!("{}", cdkd_core::view::error_line(&line));
                return Ok(Err(ExitCode::from(1)));
            }
            return Err(CliError::refused(&ExportCommandRefusal::failed(
                stack, &f.error, &f.cause,
            )));
        }
        printed
    } else {
        // The deployed state machine; its watch prints the plan (crate::remote::watch).
        let code = remote::start_and_watch(
            &ctx.sdk,
            &a.remote,
            Kind::Export,
            plan_run,
            &plan_input,
            a.json && a.dry_run,
        )
        .await?;
        if a.dry_run || code != ExitCode::SUCCESS {
            return Ok(Err(code));
        }
        if a.remote.detach {
            // Detached, the plan run was only started: a real run needs its plan first.
            detached_plan(&ctx.sdk, &a.remote, &ctx.store, stack, plan_run).await?
        } else {
            read_plan(&ctx.store, plan_run).await?
        }
    }))
}

/// The real run, once its plan is accepted: in this process (its report printed) or on
/// the deployed state machine.
async fn migrate(
    ctx: &crate::context::Ctx,
    deps: &Deps,
    a: &Args,
    name: &str,
    input: ExportInput,
    run_id: &RunId,
    plan_run: &RunId,
) -> Result<ExitCode, CliError> {
    let stack = flatten_str(name);
    let run_input = ExportInput {
        dry_run: false,
        require_approval: a.require_approval,
        // The plan just shown is the run's: one plan per run.
        plan_from: Some(plan_run.as_str().to_string()),
        ..input
    };
    let run_input = serde_json::to_value(&run_input).map_err(|e| CliError::Usage(e.to_string()))?;
    if a.require_approval {
        // The two commands that answer; the local ones name where the request is.
        let extra = if a.local {
            cdkd_core::view::approval::local_extra(&ctx.bucket, &ctx.prefix)
        } else {
            String::new()
        };
        eprintln!(
            "{}",
            cdkd_core::view::approval::waiting_line(name, run_id, &extra)
        );
    }
    if !a.local {
        return remote::start_and_watch(
            &ctx.sdk,
            &a.remote,
            Kind::Export,
            run_id,
            &run_input,
            a.json,
        )
        .await;
    }
    note(ExportNote::Migrating {
        stack: &stack,
        run_id,
    });
    let approval = a.require_approval.then_some(&ctx.store);
    let outcome = follow_local_steps(
        deps,
        &ctx.store,
        run_id,
        a.require_approval,
        run_local(deps, run_input, run_id, a.fast, approval, false, None),
    )
    .await?;
    finish_local(&ctx.store, &stack, run_id, outcome, a.json).await
}

/// What follows a plan before the real run starts: the plan itself (go on), or the exit
/// code of a run that ends here (a dry run, nothing to migrate, a refusal, a "no").
async fn gate_after_plan(
    a: &Args,
    name: &str,
    plan_run: &RunId,
    plan: Option<Plan>,
) -> Result<Result<Plan, ExitCode>, CliError> {
    let stack = flatten_str(name);
    if a.dry_run {
        if let Some(why) = plan.as_ref().and_then(|p| execution_refusal(name, p)) {
            note(ExportNote::WouldBeRefused { why: &why });
        }
        return Ok(Err(ExitCode::SUCCESS));
    }
    let Some(plan) = plan else {
        return Err(CliError::refused(&ExportCommandRefusal::NoPlan {
            stack: name.to_string(),
            plan_run: plan_run.clone(),
        }));
    };
    if plan.is_empty() {
        note(ExportNote::NothingToMigrate { stack: name });
        return Ok(Err(ExitCode::SUCCESS));
    }
    // The tree CloudFormation cannot take, refused before the question and before any
    // lock: the same rule export-lock applies (docs/export.md, "The lock (export-lock)").
    if let Some(why) = execution_refusal(name, &plan) {
        return Err(CliError::refused(&why));
    }
    // What the real run refuses on the plan it reuses, refused before the question: an
    // SSM parameter the plan could not read, rows the template leaves out unless
    // --leave-unmanaged, Custom Resources unless --include-non-importable (docs/export.md,
    // "Planning").
    if let Some(why) = plan.reuse_refusal(a.leave_unmanaged, a.include_non_importable) {
        return Err(CliError::refused(&ExportCommandRefusal::Reuse {
            stack: name.to_string(),
            why,
        }));
    }
    if !a.yes && !a.require_approval {
        let question = ExportNote::AskMigrate { stack: name }.to_string();
        match crate::ask::confirm(&question).await? {
            Some(true) => {}
            Some(false) => {
                note(ExportNote::Cancelled { stack: name });
                return Ok(Err(ExitCode::SUCCESS));
            }
            None => {
                return Err(CliError::usage(cdkd_core::usage::Usage::NoTerminal(
                    cdkd_core::usage::NoTerminalFor::Export { stack },
                )))
            }
        }
    }
    Ok(Ok(plan))
}

/// The report of a local run that ended, and the command's exit code.
async fn finish_local(
    store: &StateStore,
    stack: &str,
    run_id: &RunId,
    outcome: Outcome,
    json: bool,
) -> Result<ExitCode, CliError> {
    // A migrated run's output carries the report its last step wrote: printed from
    // there, not read back (docs/export.md, "Requests").
    let carried = match &outcome {
        Outcome::Succeeded(v) => v.get("report").and_then(|r| {
            serde_json::from_value::<cdkd_core::export::report::ExportReport>(r.clone()).ok()
        }),
        Outcome::Failed(_) => None,
    };
    let report = match carried {
        Some(r) => {
            crate::run::artifacts::print_export_report(&r, json);
            Some(r)
        }
        None => print_report(store, run_id, json).await?,
    };
    match outcome {
        Outcome::Succeeded(_) => Ok(ExitCode::SUCCESS),
        Outcome::Failed(f) if report.is_some() => {
            eprintln!(
                "{}",
                cdkd_core::view::error_line(&failure_line(stack, &f.error, &f.cause))
            );
            Ok(ExitCode::from(1))
        }
        Outcome::Failed(f) => Err(CliError::refused(&ExportCommandRefusal::failed(
            stack, &f.error, &f.cause,
        ))),
    }
}

/// The steps' dependencies; a local run's locks name this host and process.
async fn local_deps(ctx: &crate::context::Ctx, local: bool) -> Deps {
    let mut deps = ctx.step_deps().await;
    if local {
        deps.local = Some(crate::local::this_process());
    }
    deps
}

/// Deletes the locks of a migrated run's stacks still held by one of the `ended` runs
/// the CLI found (a release that failed): each only as read, so a lock taken since is
/// left in place.
async fn release_ended_locks(
    ctx: &crate::context::Ctx,
    shown: &str,
    rec: Option<&cdkd_core::export::execute::ExportRun>,
    ended: &[String],
) {
    let Some(rec) = rec.filter(|_| !ended.is_empty()) else {
        return;
    };
    for s in &rec.stacks {
        let Ok(Some(read)) = ctx.locks.read_object(&s.stack, Some(&s.region)).await else {
            continue;
        };
        let cdkd_aws::LockContent::Lock(info) = &read.content else {
            continue;
        };
        if !ended.contains(&info.owner) {
            continue;
        }
        match ctx
            .locks
            .delete_read(&s.stack, Some(&s.region), &read)
            .await
        {
            Ok(cdkd_aws::ReadLockOutcome::Done) => note(ExportNote::EndedLockReleased {
                stack: shown,
                lock_stack: &s.stack,
                owner: &info.owner,
            }),
            Ok(_) => {}
            Err(e) => note(ExportNote::EndedLockKept {
                stack: shown,
                lock_stack: &s.stack,
                error: &e.to_string(),
            }),
        }
    }
}

/// Resumes this record's interrupted run `run_id` (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first"): asks first
/// (`-y` answers yes), then runs the definition from its `Resume` state, locally under
/// the run's own name, or deployed as a new execution.
async fn resume_run(
    ctx: &crate::context::Ctx,
    a: &Args,
    name: &str,
    cfn_root: &str,
    run_id: RunId,
    take_over: Vec<String>,
) -> Result<ExitCode, CliError> {
    let stack = flatten_str(name);
    let rec = crate::run::artifacts::read_export_progress(&ctx.store, &run_id).await;
    let last_step = rec.as_ref().and_then(|r| r.log.last()).map(String::as_str);
    let report = crate::run::artifacts::read_export_report(&ctx.store, &run_id)
        .await
        .ok()
        .flatten();
    if report.is_some_and(|r| r.outcome == cdkd_core::run::Outcome::Migrated) {
        // Nothing is left of the run but its report, and the locks a release that
        // failed left to the ended run.
        note(ExportNote::AlreadyMigrated {
            stack: name,
            run_id: &run_id,
            cfn: cfn_root,
        });
        release_ended_locks(ctx, &stack, rec.as_ref(), &take_over).await;
        print_report(&ctx.store, &run_id, a.json).await?;
        return Ok(ExitCode::SUCCESS);
    }
    note(ExportNote::Interrupted {
        stack: name,
        run_id: &run_id,
        last_step,
        cfn: cfn_root,
    });
    if a.dry_run {
        note(ExportNote::DryRunOfInterrupted {
            stack: name,
            run_id: &run_id,
        });
        return Ok(ExitCode::SUCCESS);
    }
    if !a.yes {
        let question = ExportNote::AskResume {
            stack: name,
            run_id: &run_id,
        }
        .to_string();
        match crate::ask::confirm(&question).await? {
            Some(true) => {}
            Some(false) => {
                note(ExportNote::NotResumed {
                    stack: name,
                    run_id: &run_id,
                });
                return Ok(ExitCode::SUCCESS);
            }
            None => {
                return Err(CliError::usage(cdkd_core::usage::Usage::NoTerminal(
                    cdkd_core::usage::NoTerminalFor::ExportResume {
                        stack,
                        run_id: run_id.to_string(),
                    },
                )))
            }
        }
    }
    let input = ExportInput {
        stack: name.to_string(),
        stack_region: a.stack_region.clone(),
        state_bucket: ctx.bucket.clone(),
        state_prefix: ctx.prefix.clone(),
        templates: BTreeMap::new(),
        options: a.options(),
        dry_run: false,
        require_approval: false,
        resume: Some(run_id.as_str().to_string()),
        plan_from: None,
        plan_for: None,
        destinations_seen: BTreeMap::new(),
        take_over,
    };
    let input = serde_json::to_value(&input).map_err(|e| CliError::Usage(e.to_string()))?;
    if !a.local {
        let execution = remote::execution_name("resume", name, cdkd_aws::store::now_ms());
        return remote::start_and_watch(
            &ctx.sdk,
            &a.remote,
            Kind::Export,
            &execution,
            &input,
            a.json,
        )
        .await;
    }
    note(ExportNote::Resuming {
        stack: name,
        run_id: &run_id,
    });
    let deps = local_deps(ctx, true).await;
    let outcome = follow_local_steps(
        &deps,
        &ctx.store,
        &run_id,
        false,
        run_local(&deps, input, &run_id, a.fast, None, true, None),
    )
    .await?;
    finish_local(&ctx.store, &stack, &run_id, outcome, a.json).await
}

/// No STACK and an assembly of several stacks (statement 5, docs/export.md, "Checks") is a
/// usage error like the other missing arguments (exit 2); its message lists the stacks.
fn unnamed_stack_is_usage(e: SourceError) -> CliError {
    let unnamed = |e: &SourceError| matches!(e, SourceError::StackNotNamed { .. });
    match &e {
        SourceError::StackNotNamed { .. } => CliError::Usage(e.to_string()),
        SourceError::Synthesized { source, .. } if unnamed(source) => {
            CliError::Usage(e.to_string())
        }
        _ => e.into(),
    }
}

/// The plan of a detached plan run: `plan.json` as soon as the run wrote it (the plan
/// step writes it before the run ends), the run's failure if it ended without one, a
/// plan with blocked rows refused. Gives up after 15 minutes.
async fn detached_plan(
    sdk: &cdkd_aws::SdkConfig,
    remote: &remote::RemoteArgs,
    store: &StateStore,
    stack: &str,
    plan_run: &str,
) -> Result<Option<Plan>, CliError> {
    let sm = remote::resolve_state_machine(
        sdk,
        Kind::Export,
        remote.state_machine_arn.as_deref(),
        &remote.backend_stack,
    )
    .await?;
    let arn = cdkd_aws::sfn::execution_arn(&sm, plan_run).ok_or_else(|| {
        CliError::refused(&BackendRefusal::NotAStateMachineArn { arn: sm.clone() })
    })?;
    let client = cdkd_aws::sfn::Sfn::for_arn(sdk, &arn);
    note(ExportNote::WaitingForPlan {
        stack,
        plan_run: &plan_run.into(),
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15 * 60);
    loop {
        if let Some(plan) = read_plan(store, plan_run).await? {
            if let Some(refusal) = plan.blocked_refusal() {
                return Err(CliError::refused(&refusal));
            }
            return Ok(Some(plan));
        }
        let x = remote::retrying("DescribeExecution", || client.describe(&arn)).await?;
        if x.is_finished() && x.status != "SUCCEEDED" {
            return Err(CliError::refused(&ExportCommandRefusal::failed(
                stack,
                x.error.as_deref().unwrap_or(x.status.as_str()),
                x.cause
                    .as_deref()
                    .unwrap_or("the plan run ended without a plan"),
            )));
        }
        if x.is_finished() || std::time::Instant::now() > deadline {
            return read_plan(store, plan_run).await;
        }
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    }
}

/// `export <stack> refused: <cause>` for a refusal, `export <stack> failed (<error>):
/// <cause>` otherwise (the words of [`ExportCommandRefusal::Failed`]).
pub fn failure_line(stack: &str, error: &str, cause: &str) -> String {
    ExportCommandRefusal::failed(stack, error, cause).to_string()
}

/// Runs the export definition in this process as a local run (crate::run::local:
/// run.json, Ctrl-C, a report on every end) and waits for it. With `approval` (the
/// store of the run's artifacts), a decision written into the run's `approval.json`
/// answers the run's approval task (looked for every second with `fast`, else every 3).
async fn run_local(
    deps: &Deps,
    input: Value,
    run_id: &RunId,
    fast: bool,
    approval: Option<&StateStore>,
    resumes: bool,
    defer_end: Option<&std::sync::Mutex<Option<cdkd_core::runs::LocalRun>>>,
) -> Result<Outcome, CliError> {
    let subs = definitions::local_substitutions();
    let sm = local::definition(definitions::EXPORT, "cdkd-flow-export", &subs)?;
    let engine = local::engine(deps, fast);
    let place = RunPlace::of_input(&input)
        .ok_or_else(|| CliError::usage(cdkd_core::usage::Usage::NoStateBucket))?;
    let store = deps.store(&place.bucket, &place.prefix).await;
    let o = LocalOptions {
        store: &store,
        start: LocalStart::of_input(RunKind::Export, &input),
        approval_poll: approval.map(|_| crate::approval::local_poll(fast)),
        notify: deps.notify.as_ref(),
        resumes,
        defer_end,
    };
    crate::run::local::run_local(engine, sm, input, run_id, o).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_line_says_refused_for_a_refusal_and_names_the_error_otherwise() {
        assert_eq!(
            failure_line(
                "App",
                "Refused",
                "a CloudFormation stack named App exists\n(CREATE_COMPLETE)"
            ),
            "export App refused: a CloudFormation stack named App exists (CREATE_COMPLETE)"
        );
        assert_eq!(
            failure_line("App", "Transient", "timeout"),
            "export App failed (Transient): timeout"
        );
    }
}
