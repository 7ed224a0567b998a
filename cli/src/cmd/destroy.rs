//! `cdkd-flow destroy <stack> --local`: runs the destroy workflow (the same definition
//! that Step Functions runs) in-process with cdkd-engine, printing a line per wave on
//! stderr and the report at the end.

use std::process::ExitCode;
use std::sync::Arc;

use cdkd_engine::{Engine, EngineOptions, Event, EventKind, Outcome, StateMachine};
use cdkd_functions::destroy::finish::RunReport;
use cdkd_functions::destroy::DestroyInput;
use cdkd_functions::{definitions, runs, Deps};

use crate::local::LocalSteps;
use serde_json::Value;

use crate::context;
use crate::error::CliError;
use crate::global::GlobalOpts;

const HELP: &str = "\
Deletes every resource recorded in the stack's cdkd state, dependents first, from the \
state alone (no template), and its nested children before it. The stack's lock is held \
for the whole run (cdkd and cdkd-flow exclude each other through it). Confirmed deletes \
are removed from state.json as they happen, so an interrupted run can simply be started \
again. A resource that fails keeps everything it depends on in state (reported as \
'blocked by'); independent resources are still deleted. The report is also written to \
<prefix>/_runs/<run-id>/report.json in the state bucket.

Exit status: 0 when everything was destroyed, 1 when something is left or the destroy \
was refused, 2 for a usage error.";

#[derive(Debug, clap::Args)]
#[command(long_about = HELP)]
pub struct Args {
    /// The stack to destroy (its nested children come along).
    pub stack: String,
    /// The region of the stack's record (needed when the stack has state in several).
    #[arg(long)]
    pub stack_region: Option<String>,
    /// Run the workflow in this process instead of starting the deployed state machine.
    #[arg(long)]
    pub local: bool,
    /// With --local: do not sleep in Wait states (poll again at once).
    #[arg(long, requires = "local")]
    pub fast: bool,
    /// Destroy a nested child stack on its own.
    #[arg(long)]
    pub allow_nested_child: bool,
    /// Ignore DeletionPolicy: Snapshot (no final snapshot is taken: data loss).
    #[arg(long)]
    pub skip_final_snapshot: bool,
    /// The run id (the execution name); default destroy-<stack>-<time>.
    #[arg(long)]
    pub run_id: Option<String>,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

pub fn default_run_id(kind: &str, stack: &str, now_ms: i64) -> String {
    // Execution names allow [A-Za-z0-9-_] and 80 characters.
    let clean: String = stack
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(48)
        .collect();
    format!("{kind}-{clean}-{now_ms}")
}

pub async fn run(g: &GlobalOpts, a: Args) -> Result<ExitCode, CliError> {
    if !a.local {
        return Err(CliError::Usage(
            "destroy runs with --local for now: starting the deployed state machine comes with the AWS backend (make deploy)".into(),
        ));
    }
    let ctx = context::build(g).await?;
    let deps = Deps::from_sdk(ctx.sdk.clone(), ctx.store.expected_owner.clone()).await;
    let run_id = a
        .run_id
        .clone()
        .unwrap_or_else(|| default_run_id("destroy", &a.stack, cdkd_aws::store::now_ms()));
    let input = DestroyInput {
        stack: a.stack.clone(),
        stack_region: a.stack_region.clone(),
        state_bucket: ctx.bucket.clone(),
        state_prefix: ctx.prefix.clone(),
        allow_nested_child: a.allow_nested_child,
        skip_final_snapshot: a.skip_final_snapshot,
        remove_protection: false,
    };
    let input = serde_json::to_value(&input).map_err(|e| CliError::Usage(e.to_string()))?;
    let sm = StateMachine::load(definitions::DESTROY, &definitions::local_substitutions())
        .map_err(|e| CliError::Refused(format!("the destroy definition does not load: {e}")))?
        .with_name("cdkd-flow-destroy");
    let options = EngineOptions {
        time_scale: if a.fast { 0.0 } else { 1.0 },
        ..EngineOptions::default()
    };
    let engine = Engine::new(Arc::new(LocalSteps { deps: deps.clone() }), options)
        .with_observer(Arc::new(progress_line));
    eprintln!(
        "destroy {}: run {run_id}",
        cdkd_core::text::flatten_str(&a.stack)
    );
    let outcome = engine.run_named(&sm, input, &run_id).await;

    let store = deps.store(&ctx.bucket, &ctx.prefix);
    let report: Option<RunReport> = runs::read(&store, &runs::report_key(&ctx.prefix, &run_id))
        .await
        .ok()
        .flatten();
    let (complete, failure) = match &outcome {
        Outcome::Succeeded(_) => (true, None),
        Outcome::Failed(f) => (false, Some(format!("{}: {}", f.error, f.cause))),
    };
    match (&report, a.json) {
        (Some(r), true) => println!("{}", serde_json::to_string_pretty(r).unwrap_or_default()),
        (Some(r), false) => print!(
            "{}",
            cdkd_core::runview::render_destroy_report(&r.stacks, r.complete, r.aborted.as_deref())
        ),
        (None, _) => {}
    }
    match (complete, report.is_some(), failure) {
        (true, _, _) => Ok(ExitCode::SUCCESS),
        (false, true, _) => Ok(ExitCode::from(1)),
        // Refused before anything was planned: the plan's message is the error.
        (false, false, f) => Err(CliError::Refused(
            f.unwrap_or_else(|| "the destroy failed".into()),
        )),
    }
}

/// One line on stderr per wave and per step that failed.
fn progress_line(e: &Event) {
    match &e.kind {
        EventKind::TaskSucceeded if e.state.as_deref() == Some("Wave") => {
            let out = e.output.as_ref();
            let remaining = out
                .and_then(|o| o.pointer("/Payload/remaining"))
                .and_then(Value::as_u64)
                .unwrap_or(0);
            let wait = out
                .and_then(|o| o.pointer("/Payload/waitSeconds"))
                .and_then(Value::as_u64)
                .unwrap_or(0);
            if wait > 0 {
                eprintln!("  wave: {remaining} resource(s) left, next check in {wait}s");
            } else {
                eprintln!("  wave: {remaining} resource(s) left");
            }
        }
        EventKind::TaskFailed => {
            let state = e.state.as_deref().unwrap_or("a step");
            let error = e.error.as_deref().unwrap_or("");
            let cause = e.cause.as_deref().unwrap_or("");
            eprintln!(
                "  {state} failed: {error}: {}",
                cdkd_core::text::flatten_str(cause)
            );
        }
        _ => {}
    }
}
