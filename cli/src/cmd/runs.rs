//! `cdkd-flow runs list | show | watch | stop`: the runs of the deployed destroy and
//! cleanup state machines. A `<run>` is an execution name (the run id, e.g.
//! `destroy-MyApp-20261129T152232`) or a full execution ARN.

use std::process::ExitCode;
use std::time::Duration;

use cdkd_aws::config::load_sdk_config;
use cdkd_aws::s3err::Failure;
use cdkd_aws::sfn::{self, Execution, ExecutionSummary, Sfn, SfnError};
use cdkd_aws::SdkConfig;
use cdkd_core::text::flatten_str;
use cdkd_functions::runs;
use clap::Subcommand;
use serde_json::{json, Value};

use crate::error::CliError;
use crate::global::GlobalOpts;
use crate::remote::{self, Kind, RunPlace, WatchOpts, DEFAULT_BACKEND_STACK};

const STOP_HELP: &str = "\
Stops a run. By default the stop is graceful (destroy runs only): the run is asked to stop \
through its progress.json; it starts no new deletes, waits for the deletes in flight, \
keeps what is left in state, releases the stack's lock and writes its report. With --now \
the execution is stopped at once (StopExecution): nothing more runs, so the stack's lock \
stays held until it expires (30 minutes after its last renewal) or is removed with \
cdkd-flow force-unlock, and no report is written.";

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// List the latest runs of the deployed destroy and cleanup state machines.
    List(ListArgs),
    /// Show a run: its status, and its report when it has one.
    Show(ShowArgs),
    /// Follow a run until it ends; exit 0 when it succeeded, 1 otherwise.
    Watch(WatchArgs),
    /// Stop a run (gracefully by default; --now stops the execution at once).
    #[command(long_about = STOP_HELP)]
    Stop(StopArgs),
}

/// Where the deployed state machines are.
#[derive(Debug, Clone, clap::Args)]
pub struct Machines {
    /// The destroy state machine (default: env CDKD_FLOW_DESTROY_STATE_MACHINE_ARN, else
    /// the backend stack's output).
    #[arg(long, value_name = "ARN")]
    pub destroy_state_machine_arn: Option<String>,
    /// The cleanup state machine (default: env CDKD_FLOW_CLEANUP_STATE_MACHINE_ARN, else
    /// the backend stack's output).
    #[arg(long, value_name = "ARN")]
    pub cleanup_state_machine_arn: Option<String>,
    /// The CloudFormation stack of the deployed backend.
    #[arg(long, value_name = "STACK", default_value = DEFAULT_BACKEND_STACK)]
    pub backend_stack: String,
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
            Err(CliError::Usage(format!(
                "'{}' is not an execution ARN (arn:aws:states:REGION:ACCOUNT:execution:MACHINE:NAME)",
                flatten_str(s)
            )))
        }
    } else {
        remote::check_execution_name(s)?;
        Ok(RunRef::Name(s.to_string()))
    }
}

/// The SDK configuration alone (runs need no state bucket of their own: a run's input
/// names its bucket).
async fn sdk(g: &GlobalOpts) -> SdkConfig {
    let env_region = std::env::var("AWS_REGION").ok().filter(|v| !v.is_empty());
    let region = g
        .region
        .as_deref()
        .filter(|r| !r.is_empty())
        .or(env_region.as_deref())
        .map(str::to_lowercase);
    let profile = g.profile.clone().filter(|p| !p.is_empty());
    load_sdk_config(profile.as_deref(), region.as_deref()).await
}

fn flag(m: &Machines, kind: Kind) -> Option<&str> {
    match kind {
        Kind::Destroy => m.destroy_state_machine_arn.as_deref(),
        Kind::Cleanup => m.cleanup_state_machine_arn.as_deref(),
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

fn sfn_err(e: SfnError) -> CliError {
    CliError::Aws(e.to_string())
}

/// The kinds to look a named run up under, the likely one first.
fn kinds_for_name(name: &str) -> [Kind; 2] {
    if name.starts_with("cleanup-") {
        [Kind::Cleanup, Kind::Destroy]
    } else {
        [Kind::Destroy, Kind::Cleanup]
    }
}

/// Finds a run: describes an ARN directly, or looks a name up under each state machine.
async fn find_run(sdk: &SdkConfig, m: &Machines, run: &str) -> Result<(Sfn, Execution), CliError> {
    match parse_run_ref(run)? {
        RunRef::Arn(arn) => {
            let client = Sfn::for_arn(sdk, &arn);
            let x = remote::retrying("DescribeExecution", || client.describe(&arn))
                .await
                .map_err(sfn_err)?;
            Ok((client, x))
        }
        RunRef::Name(name) => {
            let (found, mut errors) = machines(sdk, m, &kinds_for_name(&name)).await;
            if found.is_empty() {
                return Err(errors.remove(0));
            }
            for (_, sm) in &found {
                let Some(arn) = sfn::execution_arn(sm, &name) else {
                    continue;
                };
                let client = Sfn::for_arn(sdk, &arn);
                match remote::retrying("DescribeExecution", || client.describe(&arn)).await {
                    Ok(x) => return Ok((client, x)),
                    Err(SfnError::NoSuchExecution { .. }) => continue,
                    Err(e) => return Err(sfn_err(e)),
                }
            }
            let under: Vec<String> = found.iter().map(|(_, a)| flatten_str(a)).collect();
            Err(CliError::Refused(format!(
                "no run named '{}' under {}",
                flatten_str(&name),
                under.join(" or ")
            )))
        }
    }
}

pub async fn run(g: &GlobalOpts, c: RunsCommand) -> Result<ExitCode, CliError> {
    let sdk = sdk(g).await;
    match c {
        RunsCommand::List(a) => list(&sdk, a).await,
        RunsCommand::Show(a) => show(&sdk, a).await,
        RunsCommand::Watch(a) => {
            let (client, x) = find_run(&sdk, &a.machines, &a.run).await?;
            let opts = WatchOpts {
                poll: Duration::from_millis(a.poll_ms),
                json: a.json,
            };
            remote::watch(&sdk, &client, &x.arn, &opts).await
        }
        RunsCommand::Stop(a) => stop(&sdk, a).await,
    }
}

/// A row of `runs list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRow {
    pub name: String,
    pub arn: String,
    pub kind: Kind,
    pub status: String,
    pub start_ms: i64,
    pub stop_ms: Option<i64>,
    /// The destroyed stack, or the cleanup's pattern.
    pub target: Option<String>,
}

fn target_of(input: &Value) -> Option<String> {
    input
        .get("stack")
        .or_else(|| input.get("pattern"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn input_of(x: &Execution) -> Value {
    x.input
        .as_deref()
        .and_then(|i| serde_json::from_str(i).ok())
        .unwrap_or(Value::Null)
}

/// `2026-11-29T15:22:32Z`.
pub fn time_text(ms: i64) -> String {
    let iso = cdkd_core::render::date::iso_from_ms(ms);
    format!("{}Z", iso.get(..19).unwrap_or(&iso))
}

/// The `runs list` table.
pub fn render_list(rows: &[RunRow]) -> String {
    if rows.is_empty() {
        return "no runs\n".into();
    }
    let head = ["RUN", "KIND", "STATUS", "STARTED", "STOPPED", "STACK"];
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            [
                flatten_str(&r.name),
                r.kind.name().to_string(),
                flatten_str(&r.status),
                time_text(r.start_ms),
                r.stop_ms.map(time_text).unwrap_or_else(|| "-".into()),
                match (r.kind, r.target.as_deref()) {
                    (_, None) => "-".into(),
                    (Kind::Destroy, Some(t)) => flatten_str(t),
                    (Kind::Cleanup, Some(t)) => format!("pattern {}", flatten_str(t)),
                },
            ]
        })
        .collect();
    let mut w = head.map(str::len);
    for c in &cells {
        for (i, v) in c.iter().enumerate() {
            w[i] = w[i].max(v.chars().count());
        }
    }
    let line = |c: &[String]| {
        let mut s = String::new();
        for (i, v) in c.iter().enumerate() {
            if i + 1 == c.len() {
                s.push_str(v);
            } else {
                s.push_str(v);
                s.push_str(&" ".repeat(w[i] - v.chars().count() + 2));
            }
        }
        s.trim_end().to_string()
    };
    let mut out = vec![line(&head.map(String::from))];
    out.extend(cells.iter().map(|c| line(c)));
    out.join("\n") + "\n"
}

/// The `runs list --json` array.
pub fn list_json(rows: &[RunRow]) -> Value {
    Value::Array(
        rows.iter()
            .map(|r| {
                json!({
                    "name": r.name,
                    "executionArn": r.arn,
                    "kind": r.kind.name(),
                    "status": r.status,
                    "startDate": time_text(r.start_ms),
                    "stopDate": r.stop_ms.map(time_text),
                    "stack": if r.kind == Kind::Destroy { r.target.clone() } else { None },
                    "pattern": if r.kind == Kind::Cleanup { r.target.clone() } else { None },
                })
            })
            .collect(),
    )
}

async fn list(sdk: &SdkConfig, a: ListArgs) -> Result<ExitCode, CliError> {
    let (found, mut errors) = machines(sdk, &a.machines, &[Kind::Destroy, Kind::Cleanup]).await;
    if found.is_empty() {
        return Err(errors.remove(0));
    }
    for e in &errors {
        eprintln!("warning: {e}");
    }
    let mut all: Vec<(Kind, ExecutionSummary)> = Vec::new();
    for (kind, sm) in &found {
        let client = Sfn::for_arn(sdk, sm);
        let xs = remote::retrying("ListExecutions", || client.list(sm, a.limit))
            .await
            .map_err(sfn_err)?;
        all.extend(xs.into_iter().map(|x| (*kind, x)));
    }
    all.sort_by_key(|x| std::cmp::Reverse(x.1.start_ms));
    all.truncate(a.limit);
    // ListExecutions carries no input: describe each row for its stack.
    let rows: Vec<RunRow> =
        futures::future::join_all(all.into_iter().map(|(kind, x)| async move {
            let client = Sfn::for_arn(sdk, &x.arn);
            let target = client
                .describe(&x.arn)
                .await
                .ok()
                .and_then(|d| target_of(&input_of(&d)));
            RunRow {
                name: x.name,
                arn: x.arn,
                kind,
                status: x.status,
                start_ms: x.start_ms,
                stop_ms: x.stop_ms,
                target,
            }
        }))
        .await;
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&list_json(&rows)).unwrap_or_default()
        );
    } else {
        print!("{}", render_list(&rows));
    }
    Ok(ExitCode::SUCCESS)
}

/// The head of `runs show`.
pub fn render_show_head(x: &Execution, kind: Option<Kind>) -> String {
    let input = input_of(x);
    let mut lines = vec![format!(
        "run {} ({})",
        flatten_str(&x.name),
        kind.map(Kind::name).unwrap_or("unknown kind")
    )];
    let mut status = flatten_str(&x.status);
    if let Some(e) = x.error.as_deref().filter(|s| !s.is_empty()) {
        status.push_str(&format!(" ({}", flatten_str(e)));
        if let Some(c) = x.cause.as_deref().filter(|s| !s.is_empty()) {
            status.push_str(&format!(": {}", flatten_str(c)));
        }
        status.push(')');
    }
    lines.push(format!("  status:  {status}"));
    lines.push(format!("  started: {}", time_text(x.start_ms)));
    if let Some(t) = x.stop_ms {
        lines.push(format!("  stopped: {}", time_text(t)));
    }
    match (kind, target_of(&input)) {
        (Some(Kind::Cleanup), Some(p)) => lines.push(format!("  pattern: {}", flatten_str(&p))),
        (_, Some(s)) => lines.push(format!("  stack:   {}", flatten_str(&s))),
        _ => {}
    }
    lines.join("\n") + "\n"
}

async fn show(sdk: &SdkConfig, a: ShowArgs) -> Result<ExitCode, CliError> {
    let (_, x) = find_run(sdk, &a.machines, &a.run).await?;
    let input = input_of(&x);
    let kind = Kind::of_input(&input);
    let report = match (kind, RunPlace::of_input(&input)) {
        (Some(Kind::Destroy), Some(p)) => {
            let store = remote::run_store(sdk, &p).await;
            crate::watch::read_report(&store, &store.prefix, &x.name).await
        }
        _ => None,
    };
    let output: Option<Value> = x
        .output
        .as_deref()
        .and_then(|o| serde_json::from_str(o).ok());
    if a.json {
        let v = json!({
            "name": x.name,
            "executionArn": x.arn,
            "kind": kind.map(Kind::name),
            "status": x.status,
            "startDate": time_text(x.start_ms),
            "stopDate": x.stop_ms.map(time_text),
            "error": x.error,
            "cause": x.cause,
            "input": input,
            "output": output,
            "report": report,
        });
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", render_show_head(&x, kind));
    match (kind, report, output) {
        (Some(Kind::Destroy), Some(r), _) => print!(
            "{}",
            cdkd_core::runview::render_destroy_report(&r.stacks, r.complete, r.aborted.as_deref())
        ),
        (Some(Kind::Destroy), None, _) => println!("  no report yet"),
        (Some(Kind::Cleanup), _, Some(out)) => {
            print!("{}", cdkd_core::cleanup_view::render_cleanup(&out))
        }
        _ => {}
    }
    Ok(ExitCode::SUCCESS)
}

/// Sets `stopRequested: true` in a progress.json body, keeping every other field.
/// `None` when it is already set.
pub fn with_stop_requested(body: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let mut v: Value =
        serde_json::from_slice(body).map_err(|e| format!("progress.json is not JSON: {e}"))?;
    let Some(obj) = v.as_object_mut() else {
        return Err("progress.json is not a JSON object".into());
    };
    if obj.get("stopRequested").and_then(Value::as_bool) == Some(true) {
        return Ok(None);
    }
    obj.insert("stopRequested".into(), Value::Bool(true));
    serde_json::to_vec_pretty(&v)
        .map(Some)
        .map_err(|e| e.to_string())
}

async fn stop(sdk: &SdkConfig, a: StopArgs) -> Result<ExitCode, CliError> {
    let (client, x) = find_run(sdk, &a.machines, &a.run).await?;
    let name = flatten_str(&x.name);
    if x.is_finished() {
        eprintln!("run {name} has already ended: {}", flatten_str(&x.status));
        return Ok(ExitCode::SUCCESS);
    }
    let input = input_of(&x);
    let kind = Kind::of_input(&input);
    if a.now {
        remote::retrying("StopExecution", || {
            client.stop(&x.arn, "StoppedByUser", "cdkd-flow runs stop --now")
        })
        .await
        .map_err(sfn_err)?;
        eprintln!("run {name}: stopped (ABORTED)");
        eprintln!("{}", remote::aborted_warning(&x));
        return Ok(ExitCode::SUCCESS);
    }
    if kind != Some(Kind::Destroy) {
        return Err(CliError::Usage(format!(
            "run {name} is not a destroy run: it has no graceful stop; stop it at once with cdkd-flow runs stop --now {name} (the destroy runs it started carry on: stop each of them)"
        )));
    }
    let place = RunPlace::of_input(&input)
        .ok_or_else(|| CliError::Refused(format!("run {name}: its input names no stateBucket")))?;
    let store = remote::run_store(sdk, &place).await;
    let key = runs::progress_key(&place.prefix, &x.name);
    for _ in 0..5 {
        let Some((body, etag)) = store
            .get_raw(&key)
            .await
            .map_err(|e| CliError::Aws(e.to_string()))?
        else {
            return Err(CliError::Refused(format!(
                "run {name} has no progress.json yet (it is still planning): try again in a moment, or stop it at once with --now"
            )));
        };
        let next = with_stop_requested(&body)
            .map_err(|e| CliError::Refused(format!("run {name}: {e}")))?;
        let Some(next) = next else {
            eprintln!("run {name}: a stop was already requested");
            return Ok(ExitCode::SUCCESS);
        };
        let put = store
            .client
            .put_object()
            .bucket(&store.bucket)
            .key(&key)
            .content_type("application/json")
            .if_match(&etag)
            .body(next.into())
            .send()
            .await;
        match put {
            Ok(_) => {
                eprintln!(
                    "run {name}: stop requested; it starts no new deletes, waits for those in flight, releases the lock and writes its report (follow it with cdkd-flow runs watch {name})"
                );
                return Ok(ExitCode::SUCCESS);
            }
            Err(e) => {
                let f = Failure::from_sdk(&e);
                if f.is_precondition_failed() {
                    continue; // a wave wrote it meanwhile: read again
                }
                return Err(CliError::Aws(format!(
                    "could not write s3://{}/{}: {}",
                    flatten_str(&store.bucket),
                    flatten_str(&key),
                    f.message
                )));
            }
        }
    }
    Err(CliError::Refused(format!(
        "run {name}: progress.json kept changing (5 conditional writes lost); try again"
    )))
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
    }

    fn row(name: &str, kind: Kind, status: &str, target: Option<&str>) -> RunRow {
        RunRow {
            name: name.into(),
            arn: format!("arn:aws:states:us-east-1:1:execution:M:{name}"),
            kind,
            status: status.into(),
            start_ms: 1_795_965_752_123,
            stop_ms: (status != "RUNNING").then_some(1_795_965_812_000),
            target: target.map(str::to_string),
        }
    }

    #[test]
    fn list_table_aligns_columns_and_sanitizes_names() {
        let rows = vec![
            row(
                "destroy-app-20261129T152232",
                Kind::Destroy,
                "RUNNING",
                Some("app\u{1b}[2J"),
            ),
            row(
                "cleanup-preview-_-20261129T152232",
                Kind::Cleanup,
                "SUCCEEDED",
                Some("preview-*"),
            ),
        ];
        assert_eq!(
            render_list(&rows),
            "RUN                                KIND     STATUS     STARTED               STOPPED               STACK\n\
             destroy-app-20261129T152232        destroy  RUNNING    2026-11-29T15:22:32Z  -                     app [2J\n\
             cleanup-preview-_-20261129T152232  cleanup  SUCCEEDED  2026-11-29T15:22:32Z  2026-11-29T15:23:32Z  pattern preview-*\n"
        );
        assert_eq!(render_list(&[]), "no runs\n");
    }

    #[test]
    fn list_json_has_name_kind_status_times_and_stack() {
        let v = list_json(&[row("destroy-a-1", Kind::Destroy, "ABORTED", Some("a\"b"))]);
        assert_eq!(
            v,
            json!([{
                "name": "destroy-a-1",
                "executionArn": "arn:aws:states:us-east-1:1:execution:M:destroy-a-1",
                "kind": "destroy",
                "status": "ABORTED",
                "startDate": "2026-11-29T15:22:32Z",
                "stopDate": "2026-11-29T15:23:32Z",
                "stack": "a\"b",
                "pattern": null
            }])
        );
    }

    #[test]
    fn graceful_stop_sets_stop_requested_and_keeps_every_other_field() {
        let body = br#"{"runId":"r","waves":2,"stacks":[],"future":{"x":1},"stopRequested":false}"#;
        let out = with_stop_requested(body).unwrap().unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["stopRequested"], json!(true));
        assert_eq!(v["future"], json!({"x": 1}));
        assert_eq!(v["waves"], json!(2));
        let again = with_stop_requested(&out).unwrap();
        assert_eq!(again, None);
        assert!(with_stop_requested(b"[1]").is_err());
    }

    #[test]
    fn show_head_names_status_error_times_and_stack() {
        let x = Execution {
            arn: "arn".into(),
            state_machine_arn: "sm".into(),
            name: "destroy-a-1".into(),
            status: "FAILED".into(),
            start_ms: 1_795_965_752_123,
            stop_ms: Some(1_795_965_812_000),
            input: Some(r#"{"stack":"a","stateBucket":"b"}"#.into()),
            output: None,
            error: Some("LockHeld".into()),
            cause: Some("held by cdkd".into()),
        };
        assert_eq!(
            render_show_head(&x, Some(Kind::Destroy)),
            "run destroy-a-1 (destroy)\n  status:  FAILED (LockHeld: held by cdkd)\n  started: 2026-11-29T15:22:32Z\n  stopped: 2026-11-29T15:23:32Z\n  stack:   a\n"
        );
    }
}
