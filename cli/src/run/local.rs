//! Local runs (`export --local`, `destroy --local`) as runs (docs/cli.md, `runs
//! --local`): a local run writes `run.json` when it starts (kind, stack, the command
//! line, host and pid) and records its end there; every end that can be written leaves
//! `report.json` (a refusal before the lock, a failure no abort step reported, Ctrl-C).
//! `runs list | show | watch --local` read them back through `super::listing`.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use cdkd_aws::StateStore;
use cdkd_core::export::report::interrupted;
use cdkd_core::run::{Outcome as RunOutcome, RunId, RunKind};
use cdkd_core::runs::{run_file_key, LocalRun};
use cdkd_core::runs_refusal::{RunEndRefusal, RunsRefusal};
use cdkd_core::text::flatten_str;
use cdkd_core::view::notify::export_ended;
use cdkd_core::view::runs::phase_text;
use cdkd_engine::{Engine, Outcome, StateMachine};
use cdkd_functions::destroy::finish::notice_of;
use cdkd_functions::runs::{progress_key, report_key};
use serde_json::Value;

use super::listing::{phase_of, report_outcome};
use crate::error::CliError;

/// What a local run is, for its `run.json`.
#[derive(Debug, Clone)]
pub struct LocalStart {
    pub kind: RunKind,
    pub stack: String,
    pub stack_region: Option<String>,
    pub plan_only: bool,
}

impl LocalStart {
    /// From a run's input (`stack`, `stackRegion`, `dryRun`).
    pub fn of_input(kind: RunKind, input: &Value) -> LocalStart {
        let text = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_string);
        LocalStart {
            kind,
            stack: text("stack").unwrap_or_default(),
            stack_region: text("stackRegion"),
            plan_only: input.get("dryRun").and_then(Value::as_bool) == Some(true),
        }
    }
}

/// The `run.json` of a run this process starts now: its command line (without the
/// program name), this host and this process.
pub fn this_process_run(run_id: &str, start: &LocalStart, now_ms: i64) -> LocalRun {
    LocalRun {
        run_id: run_id.into(),
        kind: start.kind.clone(),
        stack: start.stack.clone(),
        stack_region: start.stack_region.clone(),
        plan_only: start.plan_only,
        // Parameter values may be secrets: run.json, the reports and the messages
        // carry their keys only.
        args: cdkd_core::runs::masked_args(&std::env::args().skip(1).collect::<Vec<_>>()),
        host: crate::host::host_name(),
        pid: std::process::id(),
        started_ms: now_ms,
        ended_ms: None,
        outcome: None,
    }
}

/// Writes a run's `run.json`.
pub async fn write_local_run(store: &StateStore, run: &LocalRun) -> Result<(), CliError> {
    let key = run_file_key(&store.prefix, &run.run_id);
    let body = serde_json::to_vec_pretty(run).map_err(|e| CliError::Usage(e.to_string()))?;
    store.put_raw(&key, body).await?;
    Ok(())
}

/// Writes the end a plan run left to its caller (`LocalOptions::defer_end`), when its
/// run does not follow.
pub async fn record_deferred_end(store: &StateStore, cell: &std::sync::Mutex<Option<LocalRun>>) {
    let meta = cell.lock().ok().and_then(|mut c| c.take());
    if let Some(mut meta) = meta {
        record_end(store, &mut meta, RunOutcome::Succeeded).await;
    }
}

/// Writes a run's `run.json` only if its folder has none (`If-None-Match`): `false`
/// when one is there, left as it was.
async fn create_local_run(store: &StateStore, run: &LocalRun) -> Result<bool, CliError> {
    let key = run_file_key(&store.prefix, &run.run_id);
    let body = serde_json::to_vec_pretty(run).map_err(|e| CliError::Usage(e.to_string()))?;
    Ok(store.put_raw_if_absent(&key, body).await?)
}

/// Records the end of a run in its `run.json` (a warning when it cannot be written: the
/// report, when there is one, still says how it ended).
async fn record_end(store: &StateStore, run: &mut LocalRun, outcome: RunOutcome) {
    run.ended_ms = Some(cdkd_aws::store::now_ms());
    run.outcome = Some(outcome);
    if let Err(e) = write_local_run(store, run).await {
        tracing::warn!("the end of run {} was not recorded: {e}", run.run_id);
    }
}

// ---------------------------------------------------------------------------------
// Ctrl-C

static INTERRUPTS: AtomicUsize = AtomicUsize::new(0);
static CAUGHT: AtomicBool = AtomicBool::new(false);
/// Whether a local run is going: only then is Ctrl-C counted.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// While it lives, SIGINT (Ctrl-C) is counted instead of ending the process: the local
/// run reads the count and ends itself, leaving its report. Outside a local run (a
/// question on the terminal, planning) Ctrl-C ends the process as it always did.
struct Catching;

impl Catching {
    fn start() -> Catching {
        if !CAUGHT.swap(true, Ordering::SeqCst) {
            // SAFETY: the action touches atomics and calls _exit, both async-signal-safe.
            let r = unsafe {
                signal_hook_registry::register(libc::SIGINT, || {
                    if ACTIVE.load(Ordering::SeqCst) {
                        INTERRUPTS.fetch_add(1, Ordering::SeqCst);
                    } else {
                        libc::_exit(130);
                    }
                })
            };
            if let Err(e) = r {
                tracing::warn!(
                    "Ctrl-C cannot be caught ({e}): it will end the run without a report"
                );
            }
        }
        ACTIVE.store(true, Ordering::SeqCst);
        Catching
    }
}

impl Drop for Catching {
    fn drop(&mut self) {
        ACTIVE.store(false, Ordering::SeqCst);
    }
}

/// Resolves once more than `seen` Ctrl-C have been counted.
async fn interrupt_after(seen: usize) {
    while INTERRUPTS.load(Ordering::SeqCst) <= seen {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

// ---------------------------------------------------------------------------------
// Running

/// How a local run is driven besides its engine.
pub struct LocalOptions<'a> {
    /// The store of the run's artifacts.
    pub store: &'a StateStore,
    pub start: LocalStart,
    /// An export waiting for approval: how often `approval.json` is read.
    pub approval_poll: Option<Duration>,
    /// Where the run's messages go (docs/notifications.md): a report written here (an
    /// interruption, a failure no step reported) is told as a step's would be.
    pub notify: Option<&'a cdkd_aws::notify::Notifier>,
    /// The run goes on in the folder of an earlier attempt (a resume, which may follow
    /// a deployed run that wrote no `run.json`): the end that attempt left is looked for
    /// first. Otherwise `run.json` is created only if absent, and an earlier end is
    /// looked for only when it was there (a `--run-id` used before).
    pub resumes: bool,
    /// A plan run whose run may follow: when it succeeds its `run.json` is left without
    /// its end, and its record is put here for [`record_deferred_end`] (the run's own
    /// `run.json` says it ended when the run starts).
    pub defer_end: Option<&'a std::sync::Mutex<Option<LocalRun>>>,
}

/// Runs `sm` in this process as the local run `run_id`: writes its `run.json`, answers
/// its approval task when asked to, and ends on Ctrl-C (a destroy: the first asks it to
/// stop gracefully, as `runs stop` does; a second, or any for an export, stops it at
/// once). Every end leaves `report.json`: the one the run wrote, else one written here
/// (refused, failed before reporting, interrupted). An interruption is an error naming
/// the command that resumes the run, after its report is written.
pub async fn run_local(
    engine: Engine,
    sm: StateMachine,
    input: Value,
    run_id: &RunId,
    o: LocalOptions<'_>,
) -> Result<Outcome, CliError> {
    let store = o.store;
    let mut meta = this_process_run(run_id, &o.start, cdkd_aws::store::now_ms());
    let created = if o.resumes {
        Ok(false)
    } else {
        create_local_run(store, &meta).await
    };
    let written = match created {
        Ok(true) => Ok(()),
        Ok(false) => {
            forget_earlier_end(store, &meta).await;
            write_local_run(store, &meta).await
        }
        Err(e) => Err(e),
    };
    if let Err(e) = written {
        tracing::warn!(
            "run.json of run {run_id} not written ({e}): runs list --local will not show it"
        );
    }
    let _catching = Catching::start();
    let base = INTERRUPTS.load(Ordering::SeqCst);
    let mut seen = base;
    let task = {
        let engine = engine.clone();
        let run_id = run_id.to_string();
        // A run that continues in a new execution (docs/runs.md, "Continuing in a new
        // execution") starts it with `$$.StateMachine.Id`: this definition.
        engine.register(engine.state_machine_arn(sm.name()), sm.clone());
        tokio::spawn(async move {
            cdkd_functions::local::run_continued(&engine, &sm, input, &run_id)
                .await
                .0
        })
    };
    tokio::pin!(task);
    let poll = o.approval_poll.unwrap_or(Duration::from_secs(3600));
    let ended = loop {
        tokio::select! {
            r = &mut task => break r,
            _ = tokio::time::sleep(poll), if o.approval_poll.is_some() => {
                crate::approval::answer_local(&engine, store, run_id).await
            }
            _ = interrupt_after(seen) => {
                seen = INTERRUPTS.load(Ordering::SeqCst);
                let first = seen - base == 1;
                if o.start.kind == RunKind::Destroy && first && request_graceful_stop(store, run_id).await {
                    let note = cdkd_core::runs_note::RunsNote::CtrlCStop { run: run_id };
                    crate::run::watch::status_line(&note.to_string());
                    continue;
                }
                task.abort();
                let resume = meta.resume_command();
                let phase = phase_of(store, &meta).await;
                write_interrupted_report(store, &meta, &phase_text(&phase), resume.as_deref(), o.notify).await;
                record_end(store, &mut meta, RunOutcome::Interrupted).await;
                return Err(CliError::refused(&RunEndRefusal::Interrupted {
                    run: meta.run_id.clone(),
                    kind: meta.kind.clone(),
                    resume,
                }));
            }
        }
    };
    let outcome = ended.map_err(|e| {
        CliError::refused(&RunEndRefusal::Stopped {
            error: e.to_string(),
        })
    })?;
    let word = match &outcome {
        Outcome::Succeeded(_) if o.defer_end.is_some() => {
            if let Some(Ok(mut cell)) = o.defer_end.map(|c| c.lock()) {
                *cell = Some(meta);
            }
            return Ok(outcome);
        }
        Outcome::Succeeded(_) => RunOutcome::Succeeded,
        Outcome::Failed(f) => {
            ensure_report(store, &meta, &f.error, &f.cause, o.notify).await;
            RunOutcome::Failed
        }
    };
    record_end(store, &mut meta, word).await;
    Ok(outcome)
}

/// A run started again under its own id forgets the end an earlier attempt left, when
/// `cdkd_core::runs::forgets_earlier_end` says so.
async fn forget_earlier_end(store: &StateStore, meta: &LocalRun) {
    let Some(outcome) = report_outcome(store, meta).await.ok().flatten() else {
        return;
    };
    if !cdkd_core::runs::forgets_earlier_end(&meta.kind, &outcome) {
        return;
    }
    // Its message goes with it: a resume refused at its Resume step (or any new end of
    // the run) is told again (docs/notifications.md, "Once per run and kind: at most once").
    if let Err(e) = cdkd_functions::runs::forget_end(store, &meta.run_id).await {
        tracing::warn!(
            "the earlier report of run {} was not removed: {e}",
            flatten_str(&meta.run_id)
        );
    }
}

/// Sets `stopRequested` in a destroy run's `progress.json` (as `runs stop` does);
/// false when the run has none yet or the write keeps losing.
async fn request_graceful_stop(store: &StateStore, run_id: &str) -> bool {
    let key = progress_key(&store.prefix, run_id);
    matches!(request_stop(store, &key).await, Ok(Some(_)))
}

/// How a graceful stop request went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopRequest {
    /// Written now.
    Requested,
    /// It was already set.
    AlreadyRequested,
}

/// Sets `stopRequested: true` in a run's `progress.json` over the version read (up to
/// 5 tries when a step writes in between); `None` when there is no progress.json yet.
pub async fn request_stop(store: &StateStore, key: &str) -> Result<Option<StopRequest>, CliError> {
    for _ in 0..5 {
        let Some((body, etag)) = store.get_raw(key).await? else {
            return Ok(None);
        };
        let Some(next) = with_stop_requested(&body).map_err(|r| CliError::refused(&r))? else {
            return Ok(Some(StopRequest::AlreadyRequested));
        };
        if store.put_raw_if_match(key, next, &etag).await?.is_some() {
            return Ok(Some(StopRequest::Requested));
        }
    }
    Err(CliError::refused(&RunsRefusal::ProgressKeptChanging))
}

/// Sets `stopRequested: true` in a progress.json body, keeping every other field.
/// `None` when it is already set.
pub fn with_stop_requested(body: &[u8]) -> Result<Option<Vec<u8>>, RunsRefusal> {
    let mut v: Value = serde_json::from_slice(body).map_err(|e| RunsRefusal::ProgressNotJson {
        error: e.to_string(),
    })?;
    let Some(obj) = v.as_object_mut() else {
        return Err(RunsRefusal::ProgressNotObject);
    };
    if obj.get("stopRequested").and_then(Value::as_bool) == Some(true) {
        return Ok(None);
    }
    obj.insert("stopRequested".into(), Value::Bool(true));
    serde_json::to_vec_pretty(&v)
        .map(Some)
        .map_err(|e| RunsRefusal::ProgressUnwritable {
            error: e.to_string(),
        })
}

/// The report of a run this process stopped on Ctrl-C.
async fn write_interrupted_report(
    store: &StateStore,
    meta: &LocalRun,
    phase: &str,
    resume: Option<&str>,
    notify: Option<&cdkd_aws::notify::Notifier>,
) {
    let cause = format!("interrupted (Ctrl-C) while {phase}");
    let key = report_key(&store.prefix, &meta.run_id);
    let written = if meta.kind == RunKind::Export {
        let progress = crate::run::artifacts::read_export_progress(store, &meta.run_id).await;
        // The plan names the types of what a phase 2 pre-deleted (absent until the resume).
        let pre_deleted = progress
            .as_ref()
            .is_some_and(|p| p.stacks.iter().any(|s| !s.pre_deleted.is_empty()));
        let plan = if pre_deleted {
            crate::run::artifacts::read_plan(store, &meta.run_id)
                .await
                .ok()
                .flatten()
        } else {
            None
        };
        let r = interrupted(
            &meta.run_id,
            progress.as_ref(),
            plan.as_ref(),
            &cause,
            resume,
        );
        let notice = export_ended(&r, &meta.stack, meta.stack_region.as_deref(), &key);
        cdkd_functions::runs::write(store, &key, &r)
            .await
            .map(|_| notice)
    } else {
        let mut r = cdkd_functions::refused::destroy_report(
            store,
            &meta.run_id,
            &meta.stack,
            meta.stack_region.as_deref(),
            &cause,
            false,
        )
        .await;
        r.aborted = Some(cdkd_core::view::contention::destroy_stopped_cause(
            &store.bucket,
            &store.prefix,
            &meta.run_id,
            &cdkd_functions::refused::locked_stacks(&r),
            &cause,
            "once this process has ended",
            resume,
        ));
        let notice = notice_of(&r, &key);
        cdkd_functions::runs::write(store, &key, &r)
            .await
            .map(|_| notice)
    };
    cdkd_functions::refused::tell_written(notify, store, &meta.run_id, meta.plan_only, written)
        .await;
}

/// After a run that failed: its report, written when no step wrote one (a refusal
/// before the lock, a plan that refused, a rejected approval), and told
/// (`cdkd_functions::refused`, what the definitions' `run-refused` step does; when that
/// step ran, the report is found and nothing is told twice).
async fn ensure_report(
    store: &StateStore,
    meta: &LocalRun,
    error: &str,
    cause: &str,
    notify: Option<&cdkd_aws::notify::Notifier>,
) {
    use cdkd_functions::refused::{ensure_report, EndedEarly, Operation};
    let operation = if meta.kind == RunKind::Export {
        Operation::Export
    } else {
        Operation::Destroy
    };
    let e = EndedEarly {
        operation,
        run_id: &meta.run_id,
        stack: &meta.stack,
        stack_region: meta.stack_region.as_deref(),
        plan_only: meta.plan_only,
        // A local resume runs under the run's own id.
        resumed: None,
        error,
        cause,
        stopped: false,
    };
    ensure_report(store, notify, &e).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    fn an_interrupted_local_destroy_names_the_unlock_of_its_own_stack_once_it_has_ended() {
        let c = cdkd_core::view::contention::destroy_stopped_cause(
            "b",
            "cdkd",
            "destroy-App-1",
            &[("App", Some("us-east-1"))],
            "interrupted (Ctrl-C)",
            "once this process has ended",
            Some("cdkd-flow destroy App --local"),
        );
        assert!(c.contains("once this process has ended cdkd-flow force-unlock App --stack-region us-east-1 --state-bucket b --run destroy-App-1 releases it"), "{c}");
        assert!(
            c.ends_with("; then run it again with cdkd-flow destroy App --local"),
            "{c}"
        );
    }

    #[test]
    fn a_local_start_reads_its_input() {
        let s = LocalStart::of_input(
            RunKind::Export,
            &json!({"stack": "App", "stackRegion": "eu-west-1", "dryRun": true}),
        );
        assert_eq!(s.stack, "App");
        assert_eq!(s.stack_region.as_deref(), Some("eu-west-1"));
        assert!(s.plan_only);
        let run = this_process_run("export-App-1", &s, 5);
        assert_eq!(run.kind, "export");
        assert_eq!(run.pid, std::process::id());
        assert_eq!(run.started_ms, 5);
    }
}
