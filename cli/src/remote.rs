//! Runs on the deployed backend: find the state machine (`--state-machine-arn`, the
//! environment, or the backend stack's outputs), start an execution with a readable
//! name (the run id), and watch it until it ends: status changes and failed steps from
//! the execution history, progress from `<prefix>/_runs/<run-id>/progress.json`, the
//! report at the end. Transient errors (a dropped connection, a laptop asleep) are
//! retried with backoff, so a watch resumes where it was.

use cdkd_core::runs_note::RunsNote;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Duration;

use cdkd_aws::retry::{retry_while, Backoff};
use cdkd_aws::sfn::{self, Execution, Sfn, SfnError};
use cdkd_aws::SdkConfig;
use cdkd_core::run::{RunId, RunKind};
use cdkd_core::text::flatten_str;
use cdkd_core::view;
use cdkd_core::view::runs::ExecutionRow;
use cdkd_core::workflow_refusal::{BackendRefusal, NoMachineWhy};
use serde_json::Value;

use crate::error::CliError;
// Run ids have their home in crate::run::ids; the deployed path names runs with these.
pub use crate::run::ids::{check_execution_name, execution_name};
use crate::run::watch::{show_progress, status_line, watch_progress, RunIds, WatchOptions};
use crate::run::{run_store, RunPlace};

/// The backend stack `make deploy` creates (`stack_name` in infra/samconfig.toml).
pub const DEFAULT_BACKEND_STACK: &str = "cdkd-flow";

/// Which workflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Destroy,
    Cleanup,
    Export,
}

impl From<Kind> for RunKind {
    fn from(k: Kind) -> Self {
        match k {
            Kind::Destroy => RunKind::Destroy,
            Kind::Cleanup => RunKind::Cleanup,
            Kind::Export => RunKind::Export,
        }
    }
}

/// The kind's word, as core writes it (`RunKind`'s: destroy, cleanup, export).
impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        RunKind::from(*self).fmt(f)
    }
}

impl Kind {
    /// The environment variable that names the state machine.
    pub fn env_var(self) -> &'static str {
        match self {
            Kind::Destroy => "CDKD_FLOW_DESTROY_STATE_MACHINE_ARN",
            Kind::Cleanup => "CDKD_FLOW_CLEANUP_STATE_MACHINE_ARN",
            Kind::Export => "CDKD_FLOW_EXPORT_STATE_MACHINE_ARN",
        }
    }

    /// The backend stack's output (infra/template.yaml `Outputs`).
    pub fn output_key(self) -> &'static str {
        match self {
            Kind::Destroy => "DestroyStateMachineArn",
            Kind::Cleanup => "CleanupStateMachineArn",
            Kind::Export => "ExportStateMachineArn",
        }
    }

    /// Whether an export run's input asks for the approval gate (`requireApproval`).
    pub fn requires_approval(input: &Value) -> bool {
        input.get("requireApproval").and_then(Value::as_bool) == Some(true)
    }

    /// The kind of a run from its execution input (`RunKind::of_input`).
    pub fn of_input(input: &Value) -> Option<Kind> {
        match RunKind::of_input(input)? {
            RunKind::Export => Some(Kind::Export),
            RunKind::Destroy => Some(Kind::Destroy),
            RunKind::Cleanup => Some(Kind::Cleanup),
            RunKind::Other(_) => None,
        }
    }
}

/// Options of a command that starts a run on the deployed backend.
#[derive(Debug, Clone, clap::Args)]
pub struct RemoteArgs {
    /// The deployed state machine to start (default: env CDKD_FLOW_<KIND>_STATE_MACHINE_ARN,
    /// else the backend stack's output).
    #[arg(long, value_name = "ARN")]
    pub state_machine_arn: Option<String>,
    /// The CloudFormation stack of the deployed backend, whose outputs name the state
    /// machines.
    #[arg(long, value_name = "STACK", default_value = DEFAULT_BACKEND_STACK)]
    pub backend_stack: String,
    /// Start the run and return at once (watch it later with `cdkd-flow runs watch`).
    #[arg(long, conflicts_with = "local")]
    pub detach: bool,
    /// Milliseconds between two polls of a watch.
    #[arg(long, hide = true, default_value_t = 5000)]
    pub poll_ms: u64,
}

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The state machine of `kind`: `flag`, else the environment, else the backend stack's
/// output. The error names every source tried.
pub async fn resolve_state_machine(
    sdk: &SdkConfig,
    kind: Kind,
    flag: Option<&str>,
    backend_stack: &str,
) -> Result<String, CliError> {
    if let Some(f) = flag.map(str::trim).filter(|f| !f.is_empty()) {
        return Ok(f.to_string());
    }
    if let Some(v) = env_nonempty(kind.env_var()) {
        return Ok(v.trim().to_string());
    }
    let why = match sfn::stack_output(sdk, backend_stack, kind.output_key()).await {
        Ok(Some(arn)) => return Ok(arn),
        Ok(None) => NoMachineWhy::NoOutput {
            stack: backend_stack.to_string(),
            output_key: kind.output_key().to_string(),
        },
        Err(e) => NoMachineWhy::Error(e.to_string()),
    };
    Err(CliError::refused(&no_state_machine(kind, why)))
}

/// The refusal when no source names the state machine.
pub fn no_state_machine(kind: Kind, why: NoMachineWhy) -> BackendRefusal {
    BackendRefusal::NoStateMachine {
        kind: kind.into(),
        env_var: kind.env_var().to_string(),
        why,
    }
}

/// Retries `f` while it fails with a transient error, with backoff (1 s doubling to 30 s,
/// `Backoff::RECONNECT`), printing one line when the connection is lost and one when it
/// is back.
pub async fn retrying<T, F, Fut>(what: &str, f: F) -> Result<T, SfnError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, SfnError>>,
{
    let mut lost = false;
    let out = retry_while(&Backoff::RECONNECT, f, SfnError::is_transient, |e| {
        if !lost {
            let error = e.to_string();
            status_line(
                &RunsNote::ConnectionLost {
                    error: &error,
                    what,
                }
                .to_string(),
            );
            lost = true;
        }
    })
    .await;
    if lost {
        status_line("  reconnected");
    }
    out
}

/// Starts `kind` on the deployed backend with `input`, named `run_id` (checked where it
/// entered, or made valid: `run::ids`), then watches it (unless `--detach`). Exit
/// status: 0 when the run succeeded, 1 otherwise.
pub async fn start_and_watch(
    sdk: &SdkConfig,
    remote: &RemoteArgs,
    kind: Kind,
    run_id: &RunId,
    input: &Value,
    json: bool,
) -> Result<ExitCode, CliError> {
    let arn = resolve_state_machine(
        sdk,
        kind,
        remote.state_machine_arn.as_deref(),
        &remote.backend_stack,
    )
    .await?;
    let client = Sfn::for_arn(sdk, &arn);
    let text = input.to_string();
    let started = retrying("StartExecution", || client.start(&arn, run_id, &text)).await?;
    let started_note = RunsNote::Started {
        kind: kind.into(),
        run: run_id,
        reattached: started.reattached,
        execution_arn: &started.execution_arn,
    };
    eprintln!("{started_note}");
    if remote.detach {
        eprintln!("{}", RunsNote::WatchWith { run: run_id });
        crate::out::println(&flatten_str(&started.execution_arn));
        return Ok(ExitCode::SUCCESS);
    }
    let opts = WatchOpts {
        poll: Duration::from_millis(remote.poll_ms),
        json,
    };
    watch(sdk, &client, &started.execution_arn, &opts).await
}

/// How a watch prints and polls.
#[derive(Debug, Clone)]
pub struct WatchOpts {
    pub poll: Duration,
    /// The final report as JSON on stdout.
    pub json: bool,
}

fn target_of(input: &Value) -> Option<String> {
    input
        .get("stack")
        .or_else(|| input.get("pattern"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// An execution's input as JSON (`null` when it has none or it does not parse).
pub fn input_of(x: &Execution) -> Value {
    x.input
        .as_deref()
        .and_then(|i| serde_json::from_str(i).ok())
        .unwrap_or(Value::Null)
}

/// What the views read of an execution (its kind and target come from its input).
pub fn execution_row(x: &Execution) -> ExecutionRow {
    let input = input_of(x);
    ExecutionRow {
        name: x.name.clone(),
        arn: x.arn.clone(),
        kind: Kind::of_input(&input).map(Into::into),
        status: x.status.clone(),
        start_ms: x.start_ms,
        stop_ms: x.stop_ms,
        target: target_of(&input),
        error: x.error.clone(),
        cause: x.cause.clone(),
    }
}

/// The target (stack or pattern) named by an execution's input.
pub fn target_of_execution(x: &Execution) -> Option<String> {
    target_of(&input_of(x))
}

/// The cleanup workflow's state whose output is the summary (statemachines/cleanup.asl.json).
pub const SUMMARY_STATE: &str = "Summary";

/// The run id of an execution: its name, the ARN's last field (what the destroy
/// workflow takes as `$$.Execution.Name`).
pub fn run_id_of(execution_arn: &str) -> Option<String> {
    let name = execution_arn.rsplit(':').next()?;
    (execution_arn.starts_with("arn:") && !name.is_empty()).then(|| name.to_string())
}

/// The exit status of a finished run: 0 when it succeeded (a cleanup: and no destroy
/// failed), 1 otherwise.
pub fn exit_code_of(x: &Execution) -> u8 {
    if x.status != "SUCCEEDED" {
        return 1;
    }
    let failed = x
        .output
        .as_deref()
        .and_then(|o| serde_json::from_str::<Value>(o).ok())
        .and_then(|o| o.get("failedCount").and_then(Value::as_u64))
        .unwrap_or(0);
    u8::from(failed > 0)
}

/// Watches an execution until it ends, then prints its report (destroy) or summary
/// (cleanup); returns the exit status of the run.
pub async fn watch(
    sdk: &SdkConfig,
    client: &Sfn,
    execution_arn: &str,
    opts: &WatchOpts,
) -> Result<ExitCode, CliError> {
    let first = retrying("DescribeExecution", || client.describe(execution_arn)).await?;
    let input: Value = first
        .input
        .as_deref()
        .and_then(|i| serde_json::from_str(i).ok())
        .unwrap_or(Value::Null);
    let kind = Kind::of_input(&input);
    eprintln!(
        "{}",
        view::runs::status_line(&first.name, first.status.as_str())
    );
    let name = first.name.clone();
    // The destroy runs a cleanup starts, found in its history as it goes.
    let children = RunIds::default();
    let summary: Mutex<Option<String>> = Mutex::new(None);
    let follow = follow_execution(client, execution_arn, first, opts.poll, &children, &summary);
    let wopts = WatchOptions {
        poll: opts.poll,
        ..WatchOptions::for_stderr(opts.json)
    };
    let x = match (kind, RunPlace::of_input(&input)) {
        (Some(Kind::Destroy), Some(place)) => {
            // The same bars and settled lines as a local run (crate::run::watch).
            let store = run_store(sdk, &place).await;
            let folder = &crate::run::run_folder(&name, &input);
            let watched = watch_progress(&store, &place.prefix, folder, follow, &wopts).await;
            let x = watched.output?;
            if opts.json {
                if let Some(r) = &watched.report {
                    crate::out::println(&serde_json::to_string_pretty(r).unwrap_or_default());
                }
            }
            x
        }
        (Some(Kind::Cleanup), place) => {
            // A bar per stack and a line per settled resource of every destroy run the
            // cleanup started; its own summary at the end.
            let (x, store) = match place {
                Some(place) => {
                    let store = run_store(sdk, &place).await;
                    let x = show_progress(&store, &place.prefix, &children, follow, &wopts).await?;
                    (x, Some(store))
                }
                None => (follow.await?, None),
            };
            // A cleanup in which a destroy failed ends in CleanupIncomplete with no
            // output: its Summary state's output is what the user reads.
            let seen = summary.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let out = x
                .output
                .clone()
                .or_else(|| seen.filter(|_| x.error.as_deref() == Some("CleanupIncomplete")));
            if let Some(out) = out
                .as_deref()
                .and_then(|o| serde_json::from_str::<Value>(o).ok())
            {
                // The lists are in the run folder (docs/runs.md, "A cleanup's lists").
                let out = match &store {
                    Some(store) => crate::run::cleanup_with_lists(store, &name, &out).await,
                    None => out,
                };
                if opts.json {
                    crate::out::println(&serde_json::to_string_pretty(&out).unwrap_or_default());
                } else {
                    crate::out::print(&view::cleanup::render_cleanup(&out));
                }
            }
            x
        }
        (Some(Kind::Export), Some(place)) => {
            // A migrating run's report, else the plan the run wrote (its summary, or
            // the JSON itself with --json).
            let store = run_store(sdk, &place).await;
            let approval = Kind::requires_approval(&input);
            let folder = &crate::run::run_folder(&name, &input);
            let x = crate::run::follow::follow_steps(&store, folder, approval, follow).await?;
            if crate::run::artifacts::print_execution_report(&store, &name, folder, opts.json)
                .await?
                .is_none()
            {
                crate::run::artifacts::print_plan(&store, folder, opts.json, true).await?;
            }
            x
        }
        _ => follow.await?,
    };
    let last = view::runs::final_line(&execution_row(&x));
    if exit_code_of(&x) == 0 {
        eprintln!("{last}");
    } else {
        eprintln!("{}", view::error_line(&last));
    }
    if x.status == "ABORTED" {
        eprintln!("{}", view::runs::aborted_warning(&input, &x.name));
    }
    Ok(ExitCode::from(exit_code_of(&x)))
}

/// Polls the execution until it ends, printing its status changes and the steps that
/// failed (from the history, each event once) and adding to `children` the run id of
/// every execution it starts; returns its final description.
async fn follow_execution(
    client: &Sfn,
    execution_arn: &str,
    first: Execution,
    poll: Duration,
    children: &RunIds,
    summary: &Mutex<Option<String>>,
) -> Result<Execution, CliError> {
    let mut execution_arn = execution_arn.to_string();
    let execution_arn = &mut execution_arn;
    let mut x = first;
    let mut last_status = x.status.clone();
    let mut last_event = 0i64;
    let mut last_state: Option<String> = None;
    loop {
        let events = retrying("GetExecutionHistory", || {
            client.history(execution_arn, last_event)
        })
        .await?;
        for e in &events {
            last_event = last_event.max(e.id);
            let step = view::runs::StepEvent {
                kind: &e.kind,
                error: e.error.as_deref(),
                cause: e.cause.as_deref(),
            };
            if let Some(line) = view::runs::failed_step_line(&step, last_state.as_deref()) {
                status_line(&line);
            }
            if e.kind.ends_with("StateEntered") {
                last_state = e.state.clone();
            }
            if let Some(child) = e.child_execution.as_deref().and_then(run_id_of) {
                children.add(&child);
            }
            if e.kind == "PassStateExited" && e.state.as_deref() == Some(SUMMARY_STATE) {
                *summary.lock().unwrap_or_else(|p| p.into_inner()) = e.output.clone();
            }
        }
        if x.status != last_status {
            if !x.is_finished() {
                status_line(&view::runs::status_line(&x.name, x.status.as_str()));
            }
            last_status = x.status.clone();
        }
        if x.is_finished() {
            // A run that continued in a new execution is followed there.
            let Some(next) = continuation_arn(&x) else {
                return Ok(x);
            };
            status_line(&RunsNote::ContinuesIn { execution: &next.1 }.to_string());
            *execution_arn = next.0;
            last_event = 0;
            last_state = None;
        } else {
            tokio::time::sleep(poll).await;
        }
        x = retrying("DescribeExecution", || client.describe(execution_arn)).await?;
    }
}

/// The execution (ARN, name) a finished execution handed its run over to: one that
/// succeeded with `continuedAs` in its output (docs/runs.md, "Continuing in a new
/// execution"), in the same state machine.
pub fn continuation_arn(x: &Execution) -> Option<(String, String)> {
    if x.status != "SUCCEEDED" {
        return None;
    }
    let out: Value = serde_json::from_str(x.output.as_deref()?).ok()?;
    let next = cdkd_core::continuation::continued_as(&out)?.to_string();
    let (head, _) = x.arn.rsplit_once(':')?;
    Some((format!("{head}:{next}"), next))
}

/// The latest execution of the run `x` belongs to: `x`, or the one it continued in, and
/// so on.
pub async fn latest_execution(client: &Sfn, x: Execution) -> Result<Execution, CliError> {
    let mut x = x;
    while let Some((arn, _)) = continuation_arn(&x) {
        x = retrying("DescribeExecution", || client.describe(&arn)).await?;
    }
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_state_machine_error_names_every_source_tried() {
        let m = no_state_machine(
            Kind::Cleanup,
            NoMachineWhy::Error("the backend stack 'cdkd-flow' does not exist".into()),
        )
        .to_string();
        assert!(m.contains("--state-machine-arn"), "{m}");
        assert!(m.contains("CDKD_FLOW_CLEANUP_STATE_MACHINE_ARN"), "{m}");
        assert!(
            m.contains("the backend stack 'cdkd-flow' does not exist"),
            "{m}"
        );
    }

    #[test]
    fn kind_of_a_run_comes_from_its_input() {
        assert_eq!(
            Kind::of_input(&serde_json::json!({"stack": "a", "stateBucket": "b"})),
            Some(Kind::Destroy)
        );
        assert_eq!(
            Kind::of_input(&serde_json::json!({"pattern": "p-*", "stateBucket": "b"})),
            Some(Kind::Cleanup)
        );
        assert_eq!(
            Kind::of_input(&serde_json::json!({"stack": "a", "templates": {}, "stateBucket": "b"})),
            Some(Kind::Export)
        );
        assert_eq!(
            Kind::of_input(&serde_json::json!({"stack": "a", "stateBucket": "b",
                "continuation": {"kind": "export", "run": {}, "carry": {}}})),
            Some(Kind::Export)
        );
        assert_eq!(
            Kind::of_input(&serde_json::json!({"stack": "a", "stateBucket": "b",
                "continuation": {"kind": "destroy", "run": {}, "locks": []}})),
            Some(Kind::Destroy)
        );
        assert_eq!(Kind::of_input(&serde_json::json!({})), None);
    }

    fn exec(status: &str, output: Option<&str>) -> Execution {
        Execution {
            arn: "arn".into(),
            state_machine_arn: "sm".into(),
            name: "destroy-a-1".into(),
            status: status.into(),
            start_ms: 0,
            stop_ms: None,
            input: Some(r#"{"stack":"a\u001b[31m"}"#.into()),
            output: output.map(str::to_string),
            error: None,
            cause: None,
        }
    }

    #[test]
    fn watch_exit_status_is_0_only_for_succeeded() {
        assert_eq!(exit_code_of(&exec("SUCCEEDED", None)), 0);
        for s in ["FAILED", "ABORTED", "TIMED_OUT"] {
            assert_eq!(exit_code_of(&exec(s, None)), 1, "{s}");
        }
    }

    #[test]
    fn watch_exit_status_of_a_cleanup_with_a_failed_destroy_is_1() {
        assert_eq!(
            exit_code_of(&exec("SUCCEEDED", Some(r#"{"failedCount":1}"#))),
            1
        );
        assert_eq!(
            exit_code_of(&exec("SUCCEEDED", Some(r#"{"failedCount":0}"#))),
            0
        );
    }

    #[test]
    fn run_id_of_a_started_execution_is_its_name() {
        assert_eq!(
            run_id_of("arn:aws:states:us-east-1:1:execution:cdkd-flow-destroy:9f1c-22").as_deref(),
            Some("9f1c-22")
        );
        assert_eq!(run_id_of("arn:aws:states:us-east-1:1:execution:M:"), None);
        assert_eq!(run_id_of("no-arn"), None);
    }
}
