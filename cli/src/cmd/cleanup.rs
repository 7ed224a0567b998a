//! `cdkd-flow cleanup --pattern P --older-than 7d [--dry-run] --local`: the scheduled
//! cleanup workflow (`statemachines/cleanup.asl.json`) run in-process: select the stacks
//! whose name matches and whose record is old enough, then run the destroy workflow on
//! each as a child execution (`states:startExecution.sync:2`), drawing each destroy's
//! progress as it goes (a bar per stack, a line per settled resource).

use std::process::ExitCode;
use std::sync::Arc;

use cdkd_core::runs_refusal::RunEndRefusal;
use cdkd_engine::{Event, EventKind, Outcome};
use cdkd_functions::definitions;
use serde_json::{json, Value};

use crate::context;
use crate::error::CliError;
use crate::global::GlobalOpts;
use crate::local;
use crate::remote::{self, Kind};
use crate::run::watch::{show_progress, RunIds, WatchOptions};

const HELP: &str = "\
Selects every stack whose name matches --pattern (`*` any run of characters, `?` one \
character, the whole name, case-sensitive) and whose state record was last modified at \
least --older-than ago (30m, 12h, 7d, 1w), skipping locked stacks, nested children (they \
go with their parent), legacy records without a region and unreadable records; then \
destroys each selected stack with the destroy workflow, at most 4 at once. One failed \
destroy does not stop the others. --dry-run only prints the selection. This is what the \
EventBridge schedule of the deployed backend runs. Without --local the deployed cleanup \
state machine is started (--state-machine-arn, else env CDKD_FLOW_CLEANUP_STATE_MACHINE_ARN, \
else the output of the backend stack) and watched until it ends.

Exit status: 0 when every selected stack was destroyed (or on a dry run), 1 otherwise.";

#[derive(Debug, clap::Args)]
#[command(long_about = HELP)]
pub struct Args {
    /// Stack-name pattern (`*` and `?`).
    #[arg(long)]
    pub pattern: String,
    /// Minimum age of the record by its lastModified (e.g. 7d, 12h, 30m).
    #[arg(long, value_name = "AGE")]
    pub older_than: String,
    /// Only these regions (repeat or comma-separate); default every region.
    #[arg(long = "region-filter", value_name = "REGION", value_delimiter = ',')]
    pub regions: Vec<String>,
    /// Print what would be destroyed; destroy nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Run the workflow in this process instead of starting the deployed state machine.
    #[arg(long)]
    pub local: bool,
    /// With --local: do not sleep in Wait states.
    #[arg(long, requires = "local")]
    pub fast: bool,
    /// The run id (the execution name); default cleanup-<pattern>-<yyyymmddThhmmss>.
    #[arg(long)]
    pub run_id: Option<String>,
    #[command(flatten)]
    pub remote: crate::remote::RemoteArgs,
}

/// The execution input, the same for a local run and the deployed state machine.
fn input(bucket: &str, prefix: &str, a: &Args) -> Value {
    json!({
        "stateBucket": bucket,
        "statePrefix": prefix,
        "pattern": a.pattern,
        "minimumAge": a.older_than,
        "regions": a.regions,
        "dryRun": a.dry_run,
    })
}

pub async fn run(g: &GlobalOpts, a: Args) -> Result<ExitCode, CliError> {
    let ctx = context::build(g).await?;
    let run_id = crate::run::ids::given_or(a.run_id.as_deref(), || {
        remote::execution_name(
            cdkd_core::run::RunKind::Cleanup.as_str(),
            &a.pattern,
            cdkd_aws::store::now_ms(),
        )
    })?;
    if !a.local {
        let input = input(&ctx.bucket, &ctx.prefix, &a);
        return remote::start_and_watch(&ctx.sdk, &a.remote, Kind::Cleanup, &run_id, &input, false)
            .await;
    }
    let deps = ctx.step_deps().await;
    // The `Summary` state's output: when a destroy failed the run ends in
    // `CleanupIncomplete` with no output, and the summary is what the user reads.
    let summary: Arc<std::sync::Mutex<Option<Value>>> = Arc::default();
    let sink = summary.clone();
    // Every destroy run the cleanup starts (a child execution, named by the engine), so
    // that its progress is drawn as it goes, as for a remote cleanup.
    let children = RunIds::default();
    let found = children.clone();
    let own = run_id.clone();
    let engine = local::engine(&deps, a.fast).with_observer(Arc::new(move |e: &Event| {
        if e.kind == EventKind::StateExited("Pass")
            && e.state.as_deref() == Some(remote::SUMMARY_STATE)
        {
            if let Ok(mut s) = sink.lock() {
                *s = e.output.clone();
            }
        }
        if e.kind == EventKind::ExecutionStarted && own != e.execution {
            found.add(&e.execution);
        }
    }));
    let mut subs = definitions::local_substitutions();
    let destroy = local::definition(definitions::DESTROY, "cdkd-flow-destroy", &subs)?;
    let destroy_arn = engine.state_machine_arn("cdkd-flow-destroy");
    engine.register(destroy_arn.clone(), destroy);
    subs.insert("DestroyStateMachineArn".into(), destroy_arn);
    let cleanup = local::definition(definitions::CLEANUP, "cdkd-flow-cleanup", &subs)?;
    let input = input(&ctx.bucket, &ctx.prefix, &a);
    let opts = WatchOptions {
        print_report: false,
        ..WatchOptions::for_stderr(false)
    };
    let run = engine.run_named(&cleanup, input, &run_id);
    let outcome = show_progress(&ctx.store, &ctx.prefix, &children, run, &opts).await;
    match outcome {
        Outcome::Succeeded(out) => {
            let out = crate::run::cleanup_with_lists(&ctx.store, &run_id, &out).await;
            crate::out::print(&cdkd_core::view::cleanup::render_cleanup(&out));
            if let Some(line) = cdkd_core::view::cleanup::cleanup_failure_line(&out) {
                eprintln!("{line}");
            }
            let failed = out.get("failedCount").and_then(Value::as_u64).unwrap_or(0);
            Ok(if failed == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Outcome::Failed(f) => {
            let seen = summary.lock().ok().and_then(|s| s.clone());
            match seen {
                // Some destroys failed: the summary says which; exit 1.
                Some(out) if f.error == "CleanupIncomplete" => {
                    let out = crate::run::cleanup_with_lists(&ctx.store, &run_id, &out).await;
                    crate::out::print(&cdkd_core::view::cleanup::render_cleanup(&out));
                    if let Some(line) = cdkd_core::view::cleanup::cleanup_failure_line(&out) {
                        eprintln!("{line}");
                    }
                    Ok(ExitCode::from(1))
                }
                _ => Err(CliError::refused(&RunEndRefusal::CleanupFailed {
                    error: f.error.clone(),
                    cause: f.cause.clone(),
                })),
            }
        }
    }
}
