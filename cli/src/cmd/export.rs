//! `cdkd-flow export [<stack>] (--template PATH | --cdk-out DIR | --app CMD) --dry-run`:
//! reads the stack's templates (nested ones included; the stack may be left out when the
//! cloud assembly holds only one), uploads them under the run's prefix, runs the export
//! workflow (`statemachines/export.asl.json`: the `export-plan` step) in this process
//! (`--local`) or on the deployed state machine, and prints the plan it wrote: the
//! per-stack summary, or with `--json` the plan itself (docs/export.md §8.3, §10).
//! Without `--dry-run` it then confirms (or, with `--require-approval`, lets the run wait
//! for `cdkd-flow runs approve`, docs/export.md §10.7) and runs the migration, printing
//! its report.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use cdkd_aws::StateStore;
use cdkd_core::export::plan::Plan;
use std::future::Future;

use cdkd_core::export::execute::{execution_refusal, ExportRun};
use cdkd_core::export::report::ExportReport;
use cdkd_core::export::unmanaged::Gate;
use cdkd_core::text::flatten_str;
use cdkd_core::view::export::{
    assembly_line, render_dry_run, render_migration_plan, template_read_line,
};
use cdkd_core::view::export_report::{export_bar_rows, progress_lines, render_report};
use cdkd_core::view::progress::changed_bar_lines;
use cdkd_engine::Outcome;
use cdkd_functions::export::{plan_key, ExportInput, ExportOptions, TemplateFrom};
use cdkd_functions::{definitions, Deps};
use serde_json::Value;

use crate::context;
use crate::error::CliError;
use crate::export_source::{
    read_templates, upload_templates, AppOptions, SourceError, TemplateSource,
};
use crate::global::GlobalOpts;
use crate::local;
use crate::remote::{self, Kind, RemoteArgs};

const HELP: &str = "\
Migrates a cdkd-managed stack into CloudFormation through IMPORT change sets, or with \
--dry-run plans the migration (nested stacks included). The templates come from \
--template (one JSON or YAML file, told apart by its content, not its name; no nested \
template is followed, so a nested stack that has a cdkd record is refused: export such \
a stack from the cloud assembly), --cdk-out (a synthesized cloud assembly: the stack's template and \
every nested template below it) or --app (the CDK app, run with CDK_OUTDIR set, then \
read as --cdk-out). STACK is required with --template; with --cdk-out or --app it may \
be left out when the assembly holds exactly one stack (several are refused, listing \
them). The templates are uploaded as JSON under <prefix>/_runs/<run-id>/templates/ in \
the state bucket, and the export workflow plans from them and from the stack's cdkd \
state.

The plan refuses, naming the stack and the cause: a CloudFormation stack that already \
has a destination name (in any status, REVIEW_IN_PROGRESS included), a missing or \
damaged state record (the root's or a nested child's), and any resource that cannot be \
imported (blocked rows are listed one per logical id). Every AWS call uses the record's \
region.

--dry-run prints, per stack (leaf first), the resources imported in phase 1 with their \
identifiers, the nested stacks adopted, what phase 2 creates or re-creates, the \
resolved parameters (NoEcho ones masked) and the warnings; --json prints the plan \
itself (the run's plan.json). A dry run takes no lock and writes nothing but the run's \
own artifacts.

Without --dry-run the plan is printed and confirmed (unless -y; without a terminal -y is \
required), then the migration runs: the stack's lock is taken, phase 1 imports the \
resources (an IMPORT change set without Outputs), phase 2 applies the full template \
(Outputs, Custom Resources) with an UPDATE change set, and the cdkd record is deleted and \
the lock released. On a failure no record is deleted, the lock is released and the \
report says what CloudFormation holds and what to redo by hand. IMPORT-unsupported \
resources are deleted before phase 2 re-creates them. Nested children are migrated \
first, then the parent adopts them (phase 1B); CloudFormation imports one level of \
nesting only, so a deeper tree is planned (--dry-run) but refused.

With --require-approval the plan is not confirmed here: the run writes \
<prefix>/_runs/<run-id>/approval.json after the plan and waits, before taking any lock, \
until `cdkd-flow runs approve <run>` or `cdkd-flow runs reject <run>` answers (with \
--local: `... --local`, and this process must keep running; it looks for the decision \
every few seconds). A rejection ends the run failed with nothing locked or changed; \
no decision within 7 days ends it the same way. The command prints the two commands \
on stderr and follows the run as without approval.

Without --local the deployed export state machine is started (from \
--state-machine-arn, else env CDKD_FLOW_EXPORT_STATE_MACHINE_ARN, else the backend \
stack's outputs) and watched until it ends; `cdkd-flow runs watch <run>` prints the \
same plan or report later.

Exit status: 0 when the plan has no refusal (dry run), the stack migrated, the plan \
had nothing to migrate or the confirmation was declined (nothing is locked or changed \
then), 1 when the export was refused or the run failed, 2 for a usage error (no STACK \
with --template or with an assembly of several stacks, a missing -y without a \
terminal).";

#[derive(Debug, clap::Args)]
#[command(long_about = HELP)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["template", "cdk_out", "app"])))]
pub struct Args {
    /// The cdkd stack to export (its nested children come along); required with
    /// --template, optional when the cloud assembly holds exactly one stack.
    #[arg(value_name = "STACK")]
    pub stack: Option<String>,
    /// One template file (JSON or YAML, told apart by its content) for STACK, which must
    /// then be given.
    #[arg(long, value_name = "PATH")]
    pub template: Option<PathBuf>,
    /// A synthesized cloud assembly (cdk.out).
    #[arg(long, value_name = "DIR")]
    pub cdk_out: Option<PathBuf>,
    /// The CDK app command (as in cdk.json's "app"); run with CDK_OUTDIR set.
    #[arg(long, value_name = "CMD")]
    pub app: Option<String>,
    /// The CloudFormation name of the root stack (default: the cdkd name).
    #[arg(long, value_name = "NAME")]
    pub cfn_stack_name: Option<String>,
    /// The CloudFormation name of a nested child, `<cdkd name>=<cfn name>` (repeatable;
    /// default: the cdkd name with `~` replaced by `-`).
    #[arg(long, value_name = "CDKD=CFN")]
    pub cfn_child_stack_name: Vec<String>,
    /// The region of the stack's record (needed when it has state in several).
    #[arg(long, value_name = "REGION")]
    pub stack_region: Option<String>,
    /// A root template parameter, `KEY=VALUE` (repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    pub parameter: Vec<String>,
    /// Let phase 2 create Custom Resources (runs their create handler again).
    #[arg(long)]
    pub include_non_importable: bool,
    /// Block the types IMPORT does not support instead of pre-deleting and re-creating them.
    #[arg(long)]
    pub no_recreate_import_unsupported: bool,
    /// Do not refuse on the type registry's import support or the dated block list.
    #[arg(long)]
    pub skip_import_support_preflight: bool,
    /// Refuse instead of warning when another stack reads this stack's outputs.
    #[arg(long)]
    pub strict_cross_stack: bool,
    /// Migrate although the record holds resources the template does not declare: they
    /// are not imported and keep running in AWS, owned by nothing once the record is
    /// deleted (the report says how to bring each back under management).
    #[arg(long)]
    pub leave_unmanaged: bool,
    /// Plan only: print the plan, take no lock, change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the plan as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Run the workflow in this process instead of starting the deployed state machine.
    #[arg(long)]
    pub local: bool,
    /// With --local: do not sleep in Wait states.
    #[arg(long, requires = "local")]
    pub fast: bool,
    /// Do not ask for confirmation.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Wait after the plan, before the lock, until `cdkd-flow runs approve <run>` (or
    /// `reject`) answers; replaces the confirmation.
    #[arg(long, conflicts_with = "dry_run")]
    pub require_approval: bool,
    /// A CloudFormation service role (ARN) the change sets are submitted with.
    #[arg(long)]
    pub role_arn: Option<String>,
    /// The run id (the execution name); default export-<stack>-<time>.
    #[arg(long)]
    pub run_id: Option<String>,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

impl Args {
    fn source(&self) -> TemplateSource {
        if let Some(p) = &self.template {
            TemplateSource::Template(p.clone())
        } else if let Some(d) = &self.cdk_out {
            TemplateSource::CdkOut(d.clone())
        } else {
            let mut o = AppOptions::new(self.app.clone().unwrap_or_default());
            if let Some(r) = self.stack_region.clone() {
                o.region = Some(r);
            }
            TemplateSource::App(o)
        }
    }

    fn options(&self) -> ExportOptions {
        ExportOptions {
            include_non_importable: self.include_non_importable,
            no_recreate_import_unsupported: self.no_recreate_import_unsupported,
            skip_import_support_preflight: self.skip_import_support_preflight,
            strict_cross_stack: self.strict_cross_stack,
            cfn_stack_name: self.cfn_stack_name.clone(),
            cfn_child_stack_names: self.cfn_child_stack_name.clone(),
            parameters: self.parameter.clone(),
            template_source: Some(if self.template.is_some() {
                TemplateFrom::File
            } else {
                TemplateFrom::Synth
            }),
            fast: self.fast,
            role_arn: self.role_arn.clone(),
            leave_unmanaged: self.leave_unmanaged,
        }
    }
}

pub async fn run(g: &GlobalOpts, a: Args) -> Result<ExitCode, CliError> {
    if a.stack.as_deref() == Some("") {
        return Err(CliError::Usage("a stack name cannot be empty".into()));
    }
    if a.stack.is_none() && a.template.is_some() {
        // Statement 3 (docs/export.md §12): a lone template names no stack.
        return Err(CliError::Usage(
            "--template needs the name of the stack to export: cdkd-flow export <STACK> --template <PATH>".into(),
        ));
    }
    if let Some(id) = &a.run_id {
        remote::check_execution_name(id)?;
    }
    let ctx = context::build(g).await?;
    let set = read_templates(&a.source(), a.stack.as_deref())
        .await
        .map_err(unnamed_stack_is_usage)?;
    // The stack's name as the assembly declares it (a display name given on the command
    // line names the same stack): its record, its uploaded template and the run's name.
    let name = set.root.stack.clone();
    let stack = flatten_str(&name);
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
        // Statement 81 (docs/export.md §12): the plan refuses a child that has a record,
        // for want of its template; say before planning why, and what reads it.
        let ids: Vec<String> = set
            .nested_without_template
            .iter()
            .map(|n| flatten_str(&n.logical_id))
            .collect();
        eprintln!(
            "warning: {stack} has nested stacks ({}) and --template reads no nested template: a child with a cdkd record is refused; export from the cloud assembly (--cdk-out or --app)",
            ids.join(", ")
        );
    }
    // The cross-stack consumer scan (docs/export.md §8.4): a warning, or with
    // --strict-cross-stack a refusal before anything is uploaded (a dry run only warns).
    let hits = cdkd_core::export::consumers::consumers(&name, &set.others);
    let strict = a.strict_cross_stack && !a.dry_run;
    match cdkd_core::export::consumers::verdict(&name, &hits, strict) {
        None => {}
        Some(Ok(warning)) if a.strict_cross_stack => {
            eprintln!("warning: {warning} (a real run is refused under --strict-cross-stack)")
        }
        Some(Ok(warning)) => eprintln!("warning: {warning}"),
        Some(Err(refusal)) => return Err(CliError::Refused(refusal)),
    }
    let now = cdkd_aws::store::now_ms();
    let run_id = a.run_id.clone().unwrap_or_else(|| {
        if a.local {
            super::destroy::default_run_id("export", &name, now)
        } else {
            remote::execution_name("export", &name, now)
        }
    });
    let uploaded = upload_templates(&ctx.store, &run_id, &set).await?;
    eprintln!(
        "export {stack}: run {run_id}, {} template(s) uploaded to s3://{}/{}",
        uploaded.len(),
        flatten_str(&ctx.bucket),
        flatten_str(&cdkd_functions::runs::run_prefix(&ctx.prefix, &run_id)),
    );
    let input = ExportInput {
        stack: name.clone(),
        stack_region: a.stack_region.clone(),
        state_bucket: ctx.bucket.clone(),
        state_prefix: ctx.prefix.clone(),
        templates: uploaded
            .into_iter()
            .map(|u| (u.stack, u.key))
            .collect::<BTreeMap<_, _>>(),
        options: a.options(),
        dry_run: true,
        require_approval: false,
    };
    let plan_input = serde_json::to_value(&input).map_err(|e| CliError::Usage(e.to_string()))?;
    let deps = Deps::from_sdk(ctx.sdk.clone(), ctx.store.expected_owner.clone()).await;

    // The plan first, dry run or not: what is shown is what a real run imports.
    let plan_run = if a.dry_run {
        run_id.clone()
    } else {
        format!("{run_id}-plan")
    };
    let plan = if a.local {
        eprintln!("export {stack}: planning");
        let outcome = run_local(&deps, plan_input.clone(), &plan_run, a.fast, None).await?;
        let printed = print_plan(&ctx.store, &plan_run, a.json && a.dry_run, a.dry_run).await?;
        if let Outcome::Failed(f) = outcome {
            // A plan with blocked rows ends its summary with the refusal; any other
            // failure (or --json, whose stdout is the plan alone) is said on stderr.
            let said = printed
                .as_ref()
                .is_some_and(|p| p.blocked_refusal().is_some());
            if said && !a.json {
                return Ok(ExitCode::from(1));
            }
            return Err(CliError::Refused(failure_line(&stack, &f.error, &f.cause)));
        }
        printed
    } else {
        // The deployed state machine; its watch prints the plan (crate::remote::watch).
        let code = remote::start_and_watch(
            &ctx.sdk,
            &a.remote,
            Kind::Export,
            &plan_run,
            &plan_input,
            a.json && a.dry_run,
        )
        .await?;
        if a.dry_run || code != ExitCode::SUCCESS {
            return Ok(code);
        }
        if a.remote.detach {
            // Detached, the plan run was only started: a real run needs its plan first.
            detached_plan(&ctx.sdk, &a.remote, &ctx.store, &stack, &plan_run).await?
        } else {
            read_plan(&ctx.store, &plan_run).await?
        }
    };
    if a.dry_run {
        if let Some(why) = plan.as_ref().and_then(|p| execution_refusal(&name, p)) {
            eprintln!("warning: a real run would be refused: {why}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(plan) = plan else {
        return Err(CliError::Refused(format!(
            "export {stack} refused: the plan run {plan_run} wrote no plan"
        )));
    };
    if plan.is_empty() {
        eprintln!("export {stack}: nothing to migrate (no importable resource, nothing for phase 2); nothing was changed");
        return Ok(ExitCode::SUCCESS);
    }
    // The tree CloudFormation cannot take, refused before the question and before any
    // lock: the same rule export-lock applies (docs/export.md §10.1).
    if let Some(why) = execution_refusal(&name, &plan) {
        return Err(CliError::Refused(why));
    }
    // Rows the template leaves out, refused before the question unless --leave-unmanaged
    // (docs/export.md §3.1): the gate the real run's plan applies.
    if let Gate::Refuse(why) = plan.unmanaged_gate(a.leave_unmanaged, false) {
        return Err(CliError::Refused(format!("export {stack} refused: {why}")));
    }
    if !a.yes && !a.require_approval {
        let question = format!(
            "Import these resources into CloudFormation and delete the cdkd record of {stack} afterwards? [y/N] "
        );
        match crate::ask::confirm(&question).await? {
            Some(true) => {}
            Some(false) => {
                eprintln!("export {stack}: cancelled; nothing was changed");
                return Ok(ExitCode::SUCCESS);
            }
            None => {
                return Err(CliError::Usage(format!(
                    "export {stack}: no terminal to confirm on; pass -y to migrate without asking"
                )))
            }
        }
    }
    let run_input = ExportInput {
        dry_run: false,
        require_approval: a.require_approval,
        ..input
    };
    let run_input = serde_json::to_value(&run_input).map_err(|e| CliError::Usage(e.to_string()))?;
    if a.require_approval {
        // The two commands that answer; the local ones name where the request is.
        let extra = if a.local {
            let mut e = format!("--local --state-bucket {}", flatten_str(&ctx.bucket));
            if ctx.prefix != cdkd_core::keys::DEFAULT_PREFIX {
                e.push_str(&format!(" --state-prefix {}", flatten_str(&ctx.prefix)));
            }
            e
        } else {
            String::new()
        };
        eprintln!(
            "{}",
            cdkd_core::export::approval::waiting_line(&name, &run_id, &extra)
        );
    }
    if !a.local {
        return remote::start_and_watch(
            &ctx.sdk,
            &a.remote,
            Kind::Export,
            &run_id,
            &run_input,
            a.json,
        )
        .await;
    }
    eprintln!("export {stack}: migrating (run {run_id})");
    let approval = a.require_approval.then_some(&ctx.store);
    let outcome = follow_steps(
        &ctx.store,
        &run_id,
        a.require_approval,
        run_local(&deps, run_input, &run_id, a.fast, approval),
    )
    .await?;
    let report = print_report(&ctx.store, &run_id, a.json).await?;
    match outcome {
        Outcome::Succeeded(_) => Ok(ExitCode::SUCCESS),
        Outcome::Failed(f) if report.is_some() => {
            eprintln!("{}", failure_line(&stack, &f.error, &f.cause));
            Ok(ExitCode::from(1))
        }
        Outcome::Failed(f) => Err(CliError::Refused(failure_line(&stack, &f.error, &f.cause))),
    }
}

/// No STACK and an assembly of several stacks (statement 5, docs/export.md §12) is a
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
        CliError::Refused(format!("'{}' is not a state machine ARN", flatten_str(&sm)))
    })?;
    let client = cdkd_aws::sfn::Sfn::for_arn(sdk, &arn);
    eprintln!("export {stack}: waiting for the plan of run {plan_run}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15 * 60);
    loop {
        if let Some(plan) = read_plan(store, plan_run).await? {
            if let Some(refusal) = plan.blocked_refusal() {
                return Err(CliError::Refused(refusal));
            }
            return Ok(Some(plan));
        }
        let x = remote::retrying("DescribeExecution", || client.describe(&arn)).await?;
        if x.is_finished() && x.status != "SUCCEEDED" {
            return Err(CliError::Refused(failure_line(
                stack,
                x.error.as_deref().unwrap_or(&x.status),
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
/// <cause>` otherwise.
pub fn failure_line(stack: &str, error: &str, cause: &str) -> String {
    if error == "Refused" {
        format!("export {stack} refused: {}", flatten_str(cause))
    } else {
        format!(
            "export {stack} failed ({}): {}",
            flatten_str(error),
            flatten_str(cause)
        )
    }
}

/// Runs the export definition in this process and waits for it. With `approval` (the
/// store of the run's artifacts), a decision written into the run's `approval.json`
/// answers the run's approval task (looked for every second with `fast`, else every 3).
async fn run_local(
    deps: &Deps,
    input: Value,
    run_id: &str,
    fast: bool,
    approval: Option<&StateStore>,
) -> Result<Outcome, CliError> {
    let subs = definitions::local_substitutions();
    let sm = local::definition(definitions::EXPORT, "cdkd-flow-export", &subs)?;
    let engine = local::engine(deps, fast);
    let run = {
        let engine = engine.clone();
        let run_id = run_id.to_string();
        tokio::spawn(async move { engine.run_named(&sm, input, &run_id).await })
    };
    tokio::pin!(run);
    let ended = match approval {
        None => run.await,
        Some(store) => loop {
            tokio::select! {
                r = &mut run => break r,
                _ = tokio::time::sleep(crate::approval::local_poll(fast)) => {
                    crate::approval::answer_local(&engine, store, run_id).await
                }
            }
        },
    };
    ended.map_err(|e| CliError::Refused(format!("the local run stopped: {e}")))
}

/// Runs `work` while printing on stderr a line per step the run `run_id` logs in its
/// `progress.json` (read every second, and once more at the end). With `approval` (a
/// run started with `requireApproval`), also a line when it waits for approval and one
/// when it is decided, read from its `approval.json` until then.
pub async fn follow_steps<T>(
    store: &StateStore,
    run_id: &str,
    approval: bool,
    work: impl Future<Output = T>,
) -> T {
    let key = cdkd_functions::runs::progress_key(&store.prefix, run_id);
    let shown = std::cell::Cell::new(0usize);
    let opts = crate::watch::WatchOptions::for_stderr(true);
    let drawer =
        std::cell::RefCell::new(opts.bars.then(|| crate::watch::Drawer::new(opts.bar_width)));
    let bars_shown = std::cell::RefCell::new(Vec::new());
    // 0: nothing said yet, 1: said it waits, 2: said the decision (or not asked).
    let approval_said = std::cell::Cell::new(if approval { 0u8 } else { 2 });
    let print_new = || async {
        if approval_said.get() < 2 {
            if let Ok(Some((a, _))) = crate::approval::read(store, run_id).await {
                let said = if a.decision.is_some() { 2 } else { 1 };
                if said > approval_said.get() {
                    let status = cdkd_core::export::approval::render_status(&a);
                    if let Some(first) = status.lines().next() {
                        crate::watch::status_line(first);
                    }
                    approval_said.set(said);
                }
            }
        }
        if let Ok(Some(run)) = cdkd_functions::runs::read::<ExportRun>(store, &key).await {
            let lines = progress_lines(&run, shown.get());
            let rows = export_bar_rows(&run);
            match drawer.borrow_mut().as_mut() {
                // A terminal: a live bar per stack, the step lines above them.
                Some(d) => d.show(&lines, &rows),
                None => {
                    for line in &lines {
                        crate::watch::status_line(line);
                    }
                    for line in changed_bar_lines(&bars_shown.borrow(), &rows, opts.bar_width) {
                        crate::watch::status_line(&line);
                    }
                }
            }
            *bars_shown.borrow_mut() = rows;
            shown.set(run.log.len());
        }
    };
    let ended = tokio::sync::Notify::new();
    let work = async {
        let out = work.await;
        ended.notify_one();
        out
    };
    let poller = async {
        loop {
            tokio::select! {
                _ = ended.notified() => break,
                _ = tokio::time::sleep(std::time::Duration::from_secs(1)) => print_new().await,
            }
        }
    };
    let (out, ()) = tokio::join!(work, poller);
    print_new().await;
    if let Some(d) = drawer.borrow_mut().as_mut() {
        d.finish();
    }
    out
}

/// The report a migrating run wrote, printed (the view, or with `json` the report
/// itself); `None` when the run wrote none.
pub async fn print_report(
    store: &StateStore,
    run_id: &str,
    json: bool,
) -> Result<Option<ExportReport>, CliError> {
    let key = cdkd_functions::runs::report_key(&store.prefix, run_id);
    let Some((body, _)) = store.get_raw(&key).await? else {
        return Ok(None);
    };
    let report: ExportReport = serde_json::from_slice(&body).map_err(|e| {
        CliError::Refused(format!(
            "the report s3://{}/{} cannot be read: {e}",
            flatten_str(&store.bucket),
            flatten_str(&key)
        ))
    })?;
    if json {
        crate::out::println(&serde_json::to_string_pretty(&report).unwrap_or_default());
    } else {
        crate::out::println(&render_report(&report));
    }
    Ok(Some(report))
}

/// The plan the run `run_id` wrote, unprinted.
async fn read_plan(store: &StateStore, run_id: &str) -> Result<Option<Plan>, CliError> {
    let key = plan_key(&store.prefix, run_id);
    let Some((body, _)) = store.get_raw(&key).await? else {
        return Ok(None);
    };
    serde_json::from_slice(&body).map(Some).map_err(|e| {
        CliError::Refused(format!(
            "the plan s3://{}/{} cannot be read: {e}",
            flatten_str(&store.bucket),
            flatten_str(&key)
        ))
    })
}

/// Prints the plan the run `run_id` wrote, if it wrote one: the summary on stdout, or
/// with `json` the plan itself (pretty JSON). Returns the plan printed.
pub async fn print_plan(
    store: &StateStore,
    run_id: &str,
    json: bool,
    dry_run: bool,
) -> Result<Option<Plan>, CliError> {
    let key = plan_key(&store.prefix, run_id);
    let Some((body, _)) = store.get_raw(&key).await? else {
        return Ok(None);
    };
    let unreadable = |e: serde_json::Error| {
        CliError::Refused(format!(
            "the plan s3://{}/{} cannot be read: {e}",
            flatten_str(&store.bucket),
            flatten_str(&key)
        ))
    };
    let raw: Value = serde_json::from_slice(&body).map_err(unreadable)?;
    let plan: Plan = serde_json::from_value(raw.clone()).map_err(unreadable)?;
    if json {
        crate::out::println(&serde_json::to_string_pretty(&raw).unwrap_or_default());
    } else if dry_run {
        crate::out::println(&render_dry_run(&plan));
    } else {
        crate::out::println(&render_migration_plan(&plan));
    }
    Ok(Some(plan))
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
