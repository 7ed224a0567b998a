//! `cdkd-flow runs list | show | watch | stop | approve | reject`: the runs of the
//! deployed destroy, cleanup and export state machines, and with `--local` the local
//! runs read from the state bucket (`crate::run::listing`, docs/cli.md "Local runs"). A
//! `<run>` is an execution name (the run id, e.g. `destroy-MyApp-20261129T152232`) or a
//! full execution ARN.
//! `approve` / `reject` answer an export waiting for approval (docs/export.md, "Approval (export-approval)"),
//! a local one too (`--local`).

use std::process::ExitCode;
use std::time::Duration;

use cdkd_aws::config::load_sdk_config;
use cdkd_aws::sfn::{self, Execution, ExecutionSummary, Sfn, SfnError};
use cdkd_aws::SdkConfig;
use cdkd_core::export::approval::{checked_reason, task_answer, TaskAnswer};
use cdkd_core::run::RunKind;
use cdkd_core::runs_note::RunsNote;
use cdkd_core::view;
use cdkd_core::view::runs::ExecutionRow;
use cdkd_functions::runs;
use clap::Subcommand;
use serde_json::Value;

use super::machines::Machines;
use crate::context;
use crate::error::CliError;
use crate::global::GlobalOpts;
use crate::out::note;
use crate::remote::{self, Kind, WatchOpts};
use crate::run::local::{request_stop, StopRequest};
use crate::run::{run_store, RunPlace};
use cdkd_core::run::RunId;
use cdkd_core::runs::LocalState;
use cdkd_core::runs_refusal::{NoRequestWhy, RunsRefusal};

const STOP_HELP: &str = "\
Stops a run. By default the stop is graceful (destroy runs only): the run is asked to stop \
through its progress.json; it starts no new deletes, waits for the deletes in flight, \
keeps what is left in state, releases the stack's lock and writes its report. With --now \
the execution is stopped at once (StopExecution): nothing more runs, so the stack's lock \
stays held until it expires (30 minutes after its last renewal) or is removed with \
cdkd-flow force-unlock --run <run> (only that run's lock), once 15 minutes (the longest a \
destroy-wave step runs) have passed since the stop; no step writes its report, which the backend's run-ended step \
writes and tells instead (from Step Functions' status-change event). An export stopped \
this way is resumed \
by the same cdkd-flow export command, which takes its lock over: never force-unlock it, \
its destination stacks may already hold resources its records list.";

const APPROVE_HELP: &str = "\
Approves an export run that waits for approval (started with `cdkd-flow export ... \
--require-approval`): the decision (approved, who: <user>@<host>, when, --reason) is \
written into the run's <prefix>/_runs/<run>/approval.json over the version read, so of \
two people deciding at once one wins and the other is told who decided; a request \
already decided is refused naming who decided. Then the run is told: on the deployed \
backend through SendTaskSuccess (the CLI needs states:SendTaskSuccess on the export \
state machine's executions), the run goes on to the lock and the migration. With \
--local (a run of `cdkd-flow export --local --require-approval`, in the state bucket of \
the global options) only the decision is written: the export process waiting on it \
reads it within a few seconds and carries on. A run that has ended, or was interrupted \
(its process is gone), waits for nothing: it is refused, naming its state (and for an \
interrupted run the command that resumes it), and nothing is written.";

const REJECT_HELP: &str = "\
Rejects an export run that waits for approval (started with `cdkd-flow export ... \
--require-approval`): the decision (rejected, who: <user>@<host>, when, --reason) is \
written into the run's <prefix>/_runs/<run>/approval.json over the version read; a \
request already decided is refused naming who decided. The run then ends failed with \
the error Rejected and a cause naming who rejected it and why; nothing was locked or \
changed. On the deployed backend the run is told through SendTaskFailure (the CLI needs \
states:SendTaskFailure on the export state machine's executions); with --local only the \
decision is written and the waiting export process reads it (a local run that ended or \
was interrupted is refused, as by runs approve).";

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// List the latest runs: the deployed state machines' executions, then the local runs
    /// of the state bucket (no backend: the local runs alone; --local: only those).
    List(ListArgs),
    /// Show a run: its status, and its report when it has one (a local run, found by its
    /// id, also for an interrupted one the command that resumes it).
    Show(ShowArgs),
    /// Follow a run until it ends; exit 0 when it succeeded, 1 otherwise (--local: a
    /// local run, until it ends or is found interrupted).
    Watch(WatchArgs),
    /// Stop a run (gracefully by default; --now stops the execution at once).
    #[command(long_about = STOP_HELP)]
    Stop(StopArgs),
    /// Approve an export run that waits for approval (--require-approval).
    #[command(long_about = APPROVE_HELP)]
    Approve(AnswerArgs),
    /// Reject an export run that waits for approval; it ends failed, nothing changed.
    #[command(long_about = REJECT_HELP)]
    Reject(AnswerArgs),
    /// Set the S3 lifecycle rule that expires run folders (<prefix>/_runs/) N days after
    /// their last write, keeping the bucket's other rules.
    #[command(long_about = super::runs_history::expire_help())]
    Expire(super::runs_history::ExpireArgs),
    /// Delete the folders of runs that ended more than a duration ago (--dry-run lists
    /// them); running, approval-waiting and resumable runs are kept.
    #[command(long_about = super::runs_history::prune_help())]
    Prune(super::runs_history::PruneArgs),
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub machines: Machines,
    /// At most this many runs (the newest).
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// Print JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// The local runs (`cdkd-flow export|destroy --local`), read from their folders in the
    /// state bucket of the global options; no deployed backend is needed.
    #[arg(long)]
    pub local: bool,
}

#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The run: an execution name or a full execution ARN.
    pub run: String,
    #[command(flatten)]
    pub machines: Machines,
    /// Print JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// A local run (`cdkd-flow export|destroy --local`): read from its folder in the
    /// state bucket of the global options; no deployed backend is needed.
    #[arg(long)]
    pub local: bool,
}

#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    /// The run: an execution name or a full execution ARN.
    pub run: String,
    #[command(flatten)]
    pub machines: Machines,
    /// Print the final report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// A local run (`cdkd-flow export|destroy --local`): read from its folder in the
    /// state bucket of the global options; no deployed backend is needed.
    #[arg(long)]
    pub local: bool,
    /// Milliseconds between two polls.
    #[arg(long, hide = true, default_value_t = 5000)]
    pub poll_ms: u64,
}

#[derive(Debug, clap::Args)]
pub struct StopArgs {
    /// The run: an execution name or a full execution ARN.
    pub run: String,
    #[command(flatten)]
    pub machines: Machines,
    /// Stop the execution at once (the stack's lock stays held until it expires).
    #[arg(long)]
    pub now: bool,
}

#[derive(Debug, clap::Args)]
pub struct AnswerArgs {
    /// The run: an execution name or a full execution ARN (with --local: the run id).
    pub run: String,
    #[command(flatten)]
    pub machines: Machines,
    /// Why; kept in approval.json (a rejection's reason is in the run's failure cause).
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// A local run (`cdkd-flow export --local --require-approval`): write the decision
    /// only; the waiting export process acts on it.
    #[arg(long)]
    pub local: bool,
}

/// A `<run>` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunRef {
    /// A full execution ARN.
    Arn(String),
    /// An execution name (the run id).
    Name(String),
}

/// Parses a `<run>`: an ARN must be an execution ARN; a name must be a valid
/// execution name.
pub fn parse_run_ref(s: &str) -> Result<RunRef, CliError> {
    let s = s.trim();
    if s.starts_with("arn:") {
        if sfn::state_machine_of(s).is_some() {
            Ok(RunRef::Arn(s.to_string()))
        } else {
            Err(CliError::usage(
                cdkd_core::usage::Usage::NotAnExecutionArn {
                    given: s.to_string(),
                },
            ))
        }
    } else {
        crate::run::ids::check_execution_name(s)?;
        Ok(RunRef::Name(s.to_string()))
    }
}

/// The SDK configuration alone (runs need no state bucket of their own: a run's input
/// names its bucket).
async fn sdk(g: &GlobalOpts) -> SdkConfig {
    let env_region = std::env::var("AWS_REGION").ok();
    let region = cdkd_aws::config::explicit_region(g.region.as_deref(), env_region.as_deref());
    let profile = g.profile.clone().filter(|p| !p.is_empty());
    load_sdk_config(profile.as_deref(), region.as_deref()).await
}

fn flag(m: &Machines, kind: Kind) -> Option<&str> {
    match kind {
        Kind::Destroy => m.destroy_state_machine_arn.as_deref(),
        Kind::Cleanup => m.cleanup_state_machine_arn.as_deref(),
        Kind::Export => m.export_state_machine_arn.as_deref(),
    }
}

/// The state machines that resolve, with the errors of those that do not.
async fn machines(
    sdk: &SdkConfig,
    m: &Machines,
    kinds: &[Kind],
) -> (Vec<(Kind, String)>, Vec<CliError>) {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    for k in kinds {
        match remote::resolve_state_machine(sdk, *k, flag(m, *k), &m.backend_stack).await {
            Ok(arn) => found.push((*k, arn)),
            Err(e) => errors.push(e),
        }
    }
    (found, errors)
}

/// Every workflow `runs list` lists.
const ALL_KINDS: [Kind; 3] = [Kind::Destroy, Kind::Cleanup, Kind::Export];

/// The kinds to look a named run up under, the likely one first (its id's kind,
/// `cdkd_core::retention::kind_of_id`).
fn kinds_for_name(name: &str) -> [Kind; 3] {
    match cdkd_core::retention::kind_of_id(name) {
        Some(RunKind::Cleanup) => [Kind::Cleanup, Kind::Destroy, Kind::Export],
        Some(RunKind::Export) => [Kind::Export, Kind::Destroy, Kind::Cleanup],
        _ => [Kind::Destroy, Kind::Cleanup, Kind::Export],
    }
}

/// A run found, or why no deployed backend could be asked for it (a name only: an ARN
/// names its state machine itself).
enum Lookup {
    Found(Sfn, Execution),
    Unbacked(CliError),
}

/// Finds a run: describes an ARN directly, or looks a name up under each state machine.
async fn find_run(sdk: &SdkConfig, m: &Machines, run: &str) -> Result<(Sfn, Execution), CliError> {
    match look_up(sdk, m, run).await? {
        Lookup::Found(client, x) => Ok((client, x)),
        Lookup::Unbacked(why) => Err(why),
    }
}

async fn look_up(sdk: &SdkConfig, m: &Machines, run: &str) -> Result<Lookup, CliError> {
    match parse_run_ref(run)? {
        RunRef::Arn(arn) => {
            let client = Sfn::for_arn(sdk, &arn);
            let x = remote::retrying("DescribeExecution", || client.describe(&arn)).await?;
            Ok(Lookup::Found(client, x))
        }
        RunRef::Name(name) => {
            let (found, mut errors) = machines(sdk, m, &kinds_for_name(&name)).await;
            if found.is_empty() {
                return Ok(Lookup::Unbacked(errors.remove(0)));
            }
            for (_, sm) in &found {
                let Some(arn) = sfn::execution_arn(sm, &name) else {
                    continue;
                };
                let client = Sfn::for_arn(sdk, &arn);
                match remote::retrying("DescribeExecution", || client.describe(&arn)).await {
                    Ok(x) => return Ok(Lookup::Found(client, x)),
                    Err(SfnError::NoSuchExecution { .. }) => continue,
                    Err(e) => return Err(e.into()),
                }
            }
            Err(CliError::refused(&RunsRefusal::NoRunNamed {
                run: name.to_string(),
                under: found.iter().map(|(_, a)| a.to_string()).collect(),
            }))
        }
    }
}

pub async fn run(g: &GlobalOpts, c: RunsCommand) -> Result<ExitCode, CliError> {
    match c {
        RunsCommand::Approve(a) => return answer(g, a, true).await,
        RunsCommand::Reject(a) => return answer(g, a, false).await,
        RunsCommand::Expire(a) => return super::runs_history::expire(g, a).await,
        RunsCommand::Prune(a) => return super::runs_history::prune(g, a).await,
        _ => {}
    }
    match &c {
        RunsCommand::List(a) if a.local => return list_local(g, a).await,
        RunsCommand::Show(a) if a.local => return show_local(g, a).await,
        RunsCommand::Watch(a) if a.local => return watch_local(g, a).await,
        // A run id of a local run is found in its folder first: no backend is needed.
        RunsCommand::Show(a) if is_local_run(g, &a.run).await => return show_local(g, a).await,
        RunsCommand::Watch(a) if is_local_run(g, &a.run).await => return watch_local(g, a).await,
        _ => {}
    }
    let sdk = sdk(g).await;
    match c {
        RunsCommand::List(a) => list(g, &sdk, a).await,
        RunsCommand::Show(a) => show(g, &sdk, a).await,
        RunsCommand::Watch(a) => {
            let (client, x) = match look_up(&sdk, &a.machines, &a.run).await? {
                Lookup::Found(client, x) => (client, x),
                Lookup::Unbacked(why) => {
                    return super::runs_unbacked::from_folder(g, &a.run, a.json, true, why).await
                }
            };
            let opts = WatchOpts {
                poll: Duration::from_millis(a.poll_ms),
                json: a.json,
            };
            remote::watch(&sdk, &client, &x.arn, &opts).await
        }
        RunsCommand::Stop(a) => stop(&sdk, a).await,
        RunsCommand::Approve(_)
        | RunsCommand::Reject(_)
        | RunsCommand::Expire(_)
        | RunsCommand::Prune(_) => unreachable!("answered above"),
    }
}

/// Whether `run` names a local run in the state bucket (its `run.json`); false when the
/// bucket cannot be read, so that the deployed lookup says what is wrong.
async fn is_local_run(g: &GlobalOpts, run: &str) -> bool {
    if !matches!(parse_run_ref(run), Ok(RunRef::Name(_))) {
        return false;
    }
    let Ok(ctx) = context::build(g).await else {
        return false;
    };
    crate::run::listing::find_local(&ctx.store, &RunId::from(run))
        .await
        .is_ok()
}

/// The local runs of the state bucket of the global options, for `runs list`.
async fn local_rows(
    g: &GlobalOpts,
    limit: usize,
) -> Result<Vec<view::runs::LocalRunRow>, CliError> {
    let ctx = context::build(g).await?;
    crate::run::listing::list_local(&ctx.store, limit).await
}

/// `runs list`: every run, deployed and local (docs/cli.md "runs list"). Without a
/// deployed backend the local runs are listed, with a note; with one, its executions,
/// then the local runs.
async fn list(g: &GlobalOpts, sdk: &SdkConfig, a: ListArgs) -> Result<ExitCode, CliError> {
    let (found, mut errors) = machines(sdk, &a.machines, &ALL_KINDS).await;
    if found.is_empty() {
        let backend = errors.remove(0);
        let unreadable = |local: CliError| {
            CliError::refused(&RunsRefusal::NoBackendNorLocal {
                backend: backend.to_string(),
                local: local.to_string(),
            })
        };
        let ctx = context::build(g).await.map_err(unreadable)?;
        let rows = crate::run::listing::list_local(&ctx.store, a.limit)
            .await
            .map_err(unreadable)?;
        // The deployed runs' folders, their executions unasked (docs/cli.md "runs list").
        let deployed = match crate::run::folders::deployed_rows(&ctx.store, a.limit).await {
            Ok(rows) => rows,
            Err(e) => {
                note(RunsNote::FoldersUnread {
                    error: &e.to_string(),
                });
                Vec::new()
            }
        };
        note(RunsNote::ListingWithoutBackend {
            backend: &backend.to_string(),
        });
        if deployed.is_empty() {
            print_local_list(&rows, a.json);
        } else if a.json {
            let v = view::runs::list_all_json(&deployed, &rows);
            crate::out::println(&serde_json::to_string_pretty(&v).unwrap_or_default());
        } else {
            crate::out::print(&view::runs::render_list_all(&deployed, &rows));
        }
        return Ok(ExitCode::SUCCESS);
    }
    for e in &errors {
        eprintln!("warning: {e}");
    }
    let local = match local_rows(g, a.limit).await {
        Ok(rows) => rows,
        Err(e) => {
            note(RunsNote::LocalNotListed {
                error: &e.to_string(),
            });
            Vec::new()
        }
    };
    let mut all: Vec<(Kind, ExecutionSummary)> = Vec::new();
    for (kind, sm) in &found {
        let client = Sfn::for_arn(sdk, sm);
        let xs = remote::retrying("ListExecutions", || client.list(sm, a.limit)).await?;
        all.extend(xs.into_iter().map(|x| (*kind, x)));
    }
    all.sort_by_key(|x| std::cmp::Reverse(x.1.start_ms));
    all.truncate(a.limit);
    // ListExecutions carries no input: describe each row for its stack.
    let rows: Vec<ExecutionRow> =
        futures::future::join_all(all.into_iter().map(|(kind, x)| async move {
            let client = Sfn::for_arn(sdk, &x.arn);
            let target = client
                .describe(&x.arn)
                .await
                .ok()
                .and_then(|d| remote::target_of_execution(&d));
            ExecutionRow {
                name: x.name,
                arn: x.arn,
                kind: Some(kind.into()),
                status: x.status,
                start_ms: x.start_ms,
                stop_ms: x.stop_ms,
                target,
                error: None,
                cause: None,
            }
        }))
        .await;
    let rows = view::runs::one_row_per_run(rows);
    if a.json {
        let v = view::runs::list_all_json(&rows, &local);
        crate::out::println(&serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        crate::out::print(&view::runs::render_list_all(&rows, &local));
    }
    Ok(ExitCode::SUCCESS)
}

fn print_local_list(rows: &[view::runs::LocalRunRow], json: bool) {
    if json {
        crate::out::println(
            &serde_json::to_string_pretty(&view::runs::local_list_json(rows)).unwrap_or_default(),
        );
    } else {
        crate::out::print(&view::runs::render_local_list(rows));
    }
}

async fn show(g: &GlobalOpts, sdk: &SdkConfig, a: ShowArgs) -> Result<ExitCode, CliError> {
    let x = match look_up(sdk, &a.machines, &a.run).await? {
        Lookup::Found(_, x) => x,
        Lookup::Unbacked(why) => {
            return super::runs_unbacked::from_folder(g, &a.run, a.json, false, why).await
        }
    };
    // A run that continued in new executions shows its latest.
    let x = remote::latest_execution(&Sfn::for_arn(sdk, &x.arn), x).await?;
    let input = remote::input_of(&x);
    let kind = Kind::of_input(&input);
    let report = match (kind, RunPlace::of_input(&input)) {
        (Some(Kind::Destroy), Some(p)) => {
            let store = run_store(sdk, &p).await;
            let folder = &crate::run::run_folder(&x.name, &input);
            crate::run::watch::read_report(&store, &store.prefix, folder).await
        }
        _ => None,
    };
    let output: Option<Value> = x
        .output
        .as_deref()
        .and_then(|o| serde_json::from_str(o).ok());
    if a.json {
        let report = report.as_ref().and_then(|r| serde_json::to_value(r).ok());
        let mut v = view::runs::show_json(
            &remote::execution_row(&x),
            &input,
            output.as_ref(),
            report.as_ref(),
        );
        // An export's approval request, decided or not, as approval.json holds it.
        if let (Some(Kind::Export), Some(p), Some(obj)) =
            (kind, RunPlace::of_input(&input), v.as_object_mut())
        {
            let store = run_store(sdk, &p).await;
            if let Some((a, _)) = crate::approval::read(&store, &x.name).await? {
                obj.insert(
                    "approval".into(),
                    serde_json::to_value(&a).unwrap_or(Value::Null),
                );
            }
        }
        crate::out::println(&serde_json::to_string_pretty(&v).unwrap_or_default());
        return Ok(ExitCode::SUCCESS);
    }
    crate::out::print(&view::runs::render_show_head(&remote::execution_row(&x)));
    match (kind, report, output) {
        (Some(Kind::Destroy), Some(r), _) => crate::out::print(
            &view::report::render_destroy_report(&r.stacks, r.complete, r.aborted.as_deref()),
        ),
        (Some(Kind::Destroy), None, _) => crate::out::print(view::runs::NO_REPORT_YET),
        (Some(Kind::Cleanup), _, Some(out)) => {
            // The lists are in the run folder (docs/runs.md, "A cleanup's lists").
            let out = match RunPlace::of_input(&input) {
                Some(p) => {
                    let store = run_store(sdk, &p).await;
                    crate::run::cleanup_with_lists(&store, &x.name, &out).await
                }
                None => out,
            };
            crate::out::print(&view::cleanup::render_cleanup(&out))
        }
        (Some(Kind::Export), _, _) => {
            // A migrating run's report, else the plan the run wrote, as `export
            // --dry-run` prints it; a run waiting for approval says so first, with the
            // plan it waits on.
            if let Some(p) = RunPlace::of_input(&input) {
                let store = run_store(sdk, &p).await;
                if let Some((a, _)) = crate::approval::read(&store, &x.name).await? {
                    crate::out::print(&view::approval::render_status(&a));
                    if a.decision.is_none() && !x.is_finished() {
                        if crate::run::artifacts::print_plan(&store, &x.name, false, false)
                            .await?
                            .is_none()
                        {
                            crate::out::print(view::runs::NO_PLAN_YET);
                        }
                        return Ok(ExitCode::SUCCESS);
                    }
                }
                let folder = &crate::run::run_folder(&x.name, &input);
                if crate::run::artifacts::print_execution_report(&store, &x.name, folder, false)
                    .await?
                    .is_none()
                    && crate::run::artifacts::print_plan(&store, folder, false, true)
                        .await?
                        .is_none()
                {
                    crate::out::print(view::runs::NO_PLAN_YET);
                }
            }
        }
        _ => {}
    }
    Ok(ExitCode::SUCCESS)
}

async fn stop(sdk: &SdkConfig, a: StopArgs) -> Result<ExitCode, CliError> {
    let (client, x) = find_run(sdk, &a.machines, &a.run).await?;
    let name = &x.name;
    if x.is_finished() {
        note(RunsNote::AlreadyEnded {
            run: name,
            status: x.status.as_str(),
        });
        return Ok(ExitCode::SUCCESS);
    }
    let input = remote::input_of(&x);
    let kind = Kind::of_input(&input);
    if a.now {
        remote::retrying("StopExecution", || {
            client.stop(&x.arn, "StoppedByUser", "cdkd-flow runs stop --now")
        })
        .await?;
        note(RunsNote::StoppedNow { run: name });
        eprintln!("{}", view::runs::aborted_warning(&input, &x.name));
        return Ok(ExitCode::SUCCESS);
    }
    if kind != Some(Kind::Destroy) {
        return Err(CliError::usage(cdkd_core::usage::Usage::NoGracefulStop {
            run: name.to_string(),
        }));
    }
    let place = RunPlace::of_input(&input)
        .ok_or_else(|| CliError::refused(&RunsRefusal::NoStateBucket { run: name.clone() }))?;
    let store = run_store(sdk, &place).await;
    let key = runs::progress_key(&place.prefix, &x.name);
    match request_stop(&store, &key).await.map_err(|e| {
        CliError::refused(&RunsRefusal::StopFailed {
            run: name.clone(),
            error: e.to_string(),
        })
    })? {
        None => Err(CliError::refused(&RunsRefusal::NoProgressYet {
            run: name.clone(),
        })),
        Some(StopRequest::AlreadyRequested) => {
            note(RunsNote::StopAlreadyRequested { run: name });
            Ok(ExitCode::SUCCESS)
        }
        Some(StopRequest::Requested) => {
            note(RunsNote::StopRequested { run: name });
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `runs approve` / `runs reject`: the decision into approval.json (conditional), then,
/// for a deployed run, SendTaskSuccess / SendTaskFailure with the task token it holds.
async fn answer(g: &GlobalOpts, a: AnswerArgs, approved: bool) -> Result<ExitCode, CliError> {
    let verb = if approved { "approve" } else { "reject" };
    let reason = checked_reason(a.reason.as_deref())
        .map_err(|why| CliError::usage(cdkd_core::usage::Usage::ReasonTooLong { verb, why }))?;
    if a.local {
        let run = crate::run::ids::check_execution_name(&a.run)?;
        let ctx = context::build(g).await?;
        // A run that ended or was interrupted has no process waiting on the decision.
        let row = crate::run::listing::local_row(&ctx.store, &run).await?;
        if let Some(row) = &row {
            let decided = match crate::approval::read(&ctx.store, &run).await {
                Ok(Some((request, _))) if request.decision.is_some() => {
                    Some(view::approval::decision_words(&request))
                }
                _ => None,
            };
            let refusal =
                cdkd_core::runs::answer_refusal(&row.run, &row.state, verb, decided.as_deref());
            if let Some(why) = refusal {
                return Err(CliError::refused(&why));
            }
        }
        let decided = crate::approval::record_decision(
            &ctx.store,
            &run,
            approved,
            reason,
            NoRequestWhy::NoLocalExport,
        )
        .await?;
        let unseen = match row.as_ref().map(|r| &r.state) {
            Some(LocalState::Unknown { why }) => Some(why),
            _ => None,
        };
        note(RunsNote::LocalDecided {
            decided: &decided,
            unseen,
        });
        return Ok(ExitCode::SUCCESS);
    }
    let sdk = sdk(g).await;
    let (client, x) = find_run(&sdk, &a.machines, &a.run).await?;
    let name = &x.name;
    let input = remote::input_of(&x);
    if Kind::of_input(&input) != Some(Kind::Export) {
        return Err(CliError::refused(&RunsRefusal::NotExport {
            run: name.clone(),
        }));
    }
    if x.is_finished() {
        let row = remote::execution_row(&x);
        return Err(CliError::refused(&RunsRefusal::AlreadyEnded {
            run: name.clone(),
            status: row.status,
            error: row.error,
            cause: row.cause,
            verb: verb.to_string(),
        }));
    }
    let place = RunPlace::of_input(&input)
        .ok_or_else(|| CliError::refused(&RunsRefusal::NoStateBucket { run: name.clone() }))?;
    let store = run_store(&sdk, &place).await;
    let asked = Kind::requires_approval(&input);
    let no_request = if asked {
        NoRequestWhy::StillPlanning
    } else {
        NoRequestWhy::NotRequested
    };
    let decided =
        crate::approval::record_decision(&store, &x.name, approved, reason, no_request).await?;
    let Some(d) = decided.decision.as_ref() else {
        return Err(CliError::refused(&RunsRefusal::NoDecision {
            run: name.clone(),
        }));
    };
    let token = decided.token.clone();
    let sent = match task_answer(&decided, d) {
        TaskAnswer::Success(output) => {
            let output = output.to_string();
            remote::retrying("SendTaskSuccess", || {
                client.send_task_success(&token, &output)
            })
            .await
        }
        TaskAnswer::Failure { error, cause } => {
            let cause = cause.to_string();
            remote::retrying("SendTaskFailure", || {
                client.send_task_failure(&token, &error, &cause)
            })
            .await
        }
    };
    sent.map_err(|e| {
        CliError::Aws(
            RunsNote::NotTold {
                run: name,
                decided: &decided,
                error: &e.to_string(),
            }
            .to_string(),
        )
    })?;
    note(RunsNote::Decided {
        run: name,
        decided: &decided,
    });
    Ok(ExitCode::SUCCESS)
}

/// `runs list --local`: the local runs in the state bucket, newest first.
async fn list_local(g: &GlobalOpts, a: &ListArgs) -> Result<ExitCode, CliError> {
    let ctx = context::build(g).await?;
    let rows = crate::run::listing::list_local(&ctx.store, a.limit).await?;
    print_local_list(&rows, a.json);
    Ok(ExitCode::SUCCESS)
}

/// `runs show --local`: where the run stands, then its report, else its plan.
async fn show_local(g: &GlobalOpts, a: &ShowArgs) -> Result<ExitCode, CliError> {
    let run = crate::run::ids::check_execution_name(&a.run)?;
    let ctx = context::build(g).await?;
    let row = crate::run::listing::find_local(&ctx.store, &run).await?;
    if a.json {
        let mut v = view::runs::local_run_json(&row);
        let report: Option<Value> = crate::run::artifacts::read_json(
            &ctx.store,
            &runs::report_key(&ctx.prefix, &run),
            "report",
        )
        .await?;
        if let Some(obj) = v.as_object_mut() {
            obj.insert("report".into(), report.unwrap_or(Value::Null));
        }
        crate::out::println(&serde_json::to_string_pretty(&v).unwrap_or_default());
        return Ok(ExitCode::SUCCESS);
    }
    crate::out::print(&view::runs::render_local_show_head(&row));
    print_local_artifacts(&ctx.store, &row, false).await?;
    Ok(ExitCode::SUCCESS)
}

/// A local run's report (an export's, else its plan), as `runs show` prints it.
async fn print_local_artifacts(
    store: &cdkd_aws::StateStore,
    row: &view::runs::LocalRunRow,
    json: bool,
) -> Result<(), CliError> {
    let id = &row.run.run_id;
    if row.run.kind == RunKind::Export {
        if crate::run::artifacts::print_report(store, id, json)
            .await?
            .is_none()
            && crate::run::artifacts::print_plan(store, id, json, row.run.plan_only)
                .await?
                .is_none()
        {
            crate::out::print(view::runs::NOTHING_WRITTEN_YET);
        }
        return Ok(());
    }
    match crate::run::watch::read_report(store, &store.prefix, id).await {
        Some(r) if json => {
            crate::out::println(&serde_json::to_string_pretty(&r).unwrap_or_default())
        }
        Some(r) => crate::out::print(&crate::run::watch::report_text(&r)),
        None if json => {}
        None => crate::out::print(view::runs::NO_REPORT_YET),
    }
    Ok(())
}

/// `runs watch --local`: follows a local run (its steps or bars from progress.json)
/// until it has ended or is found interrupted, then prints its report; exit 0 when it
/// succeeded.
async fn watch_local(g: &GlobalOpts, a: &WatchArgs) -> Result<ExitCode, CliError> {
    let run = crate::run::ids::check_execution_name(&a.run)?;
    let ctx = context::build(g).await?;
    let store = &ctx.store;
    let first = crate::run::listing::find_local(store, &run).await?;
    eprintln!("{}", view::runs::status_line(&run, first.state.word()));
    let poll = Duration::from_millis(a.poll_ms);
    let settled = crate::run::listing::until_settled(store, &run, poll);
    let row = if first.run.kind == RunKind::Export {
        crate::run::follow::follow_steps(store, &run, false, settled).await?
    } else {
        let opts = crate::run::watch::WatchOptions {
            poll,
            print_report: false,
            ..crate::run::watch::WatchOptions::for_stderr(a.json)
        };
        let ids = crate::run::watch::RunIds::one(&run);
        crate::run::watch::show_progress(store, &ctx.prefix, &ids, settled, &opts).await?
    };
    print_local_artifacts(store, &row, a.json).await?;
    eprintln!("{}", view::runs::local_final_line(&row));
    Ok(if view::runs::local_succeeded(&row) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ref_is_an_execution_arn_or_a_name() {
        let arn = "arn:aws:states:us-east-1:123456789012:execution:cdkd-flow-destroy:destroy-a-1";
        assert_eq!(parse_run_ref(arn).unwrap(), RunRef::Arn(arn.into()));
        assert_eq!(
            parse_run_ref(" destroy-a-20261129T152232 ").unwrap(),
            RunRef::Name("destroy-a-20261129T152232".into())
        );
    }

    #[test]
    fn run_ref_refuses_a_state_machine_arn_and_invalid_names() {
        let e = parse_run_ref("arn:aws:states:us-east-1:1:stateMachine:M").unwrap_err();
        assert!(e.to_string().contains("not an execution ARN"), "{e}");
        assert!(parse_run_ref("a/b").is_err());
        assert!(parse_run_ref("").is_err());
    }

    #[test]
    fn named_cleanup_runs_are_looked_up_under_cleanup_first() {
        assert_eq!(kinds_for_name("cleanup-p-1")[0], Kind::Cleanup);
        assert_eq!(kinds_for_name("destroy-a-1")[0], Kind::Destroy);
        assert_eq!(kinds_for_name("other")[0], Kind::Destroy);
        // A deployed resume is an execution of the export state machine.
        assert_eq!(kinds_for_name("resume-Orders-2")[0], Kind::Export);
    }

    #[test]
    fn an_execution_reads_as_a_row_with_kind_and_target_from_its_input() {
        let x = Execution {
            arn: "arn".into(),
            state_machine_arn: "sm".into(),
            name: "cleanup-p-1".into(),
            status: "FAILED".into(),
            start_ms: 1_795_965_752_123,
            stop_ms: Some(1_795_965_812_000),
            input: Some(r#"{"pattern":"p-*","stateBucket":"b"}"#.into()),
            output: None,
            error: Some("CleanupIncomplete".into()),
            cause: None,
        };
        let row = remote::execution_row(&x);
        assert_eq!(row.kind, Some(cdkd_core::run::RunKind::Cleanup));
        assert_eq!(row.target.as_deref(), Some("p-*"));
        assert_eq!(row.error.as_deref(), Some("CleanupIncomplete"));
        let bad = Execution {
            input: Some("not json".into()),
            ..x
        };
        assert_eq!(
            (
                remote::execution_row(&bad).kind,
                remote::execution_row(&bad).target
            ),
            (None, None)
        );
    }
}
