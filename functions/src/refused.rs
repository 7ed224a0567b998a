//! A run that ended before any step wrote its report (docs/notifications.md, "What is published, and when"): an
//! export whose plan, lock or resume failed, whose approval was rejected or never
//! answered; a destroy whose plan failed. One home for what follows, whoever notices:
//! the `run-refused` step, which the definitions run between those states' `Catch` and
//! their `Fail` state (deployed and `--local`), and the CLI after a local run that ended
//! without a report. It writes the run's `report.json` when there is none (outcome
//! `refused`, or `rejected`; docs/export.md, "Failure (export-abort)", docs/destroy.md) and tells it as
//! `run-failed`, once (the `notified-run-failed.json` marker, docs/notifications.md, "Once per run and kind: at most once").
//! A plan-only run (a dry run, the CLI's plan run) gets its report but tells nothing.

use cdkd_aws::notify::Notifier;
use cdkd_aws::StateStore;
use cdkd_core::export::execute::ExportRun;
use cdkd_core::export::report::{ended_early, stopped_from_outside};
use cdkd_core::notify::Notice;
use cdkd_core::run::RunId;
use cdkd_core::text::flatten_str;
use cdkd_core::view::contention::{destroy_stopped_cause, refused_cause};
use cdkd_core::view::notify::export_ended;
use serde::{Deserialize, Serialize};

use crate::deps::Deps;
use crate::destroy::finish::{notice_of, report_of, RunReport};
use crate::destroy::{DestroyRun, RunRef};
use crate::error::StepError;
use crate::runs::{self, progress_key, report_key};

/// Which workflow the run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    Export,
    Destroy,
}

/// What is known of a run that ended early.
#[derive(Debug, Clone)]
pub struct EndedEarly<'a> {
    pub operation: Operation,
    pub run_id: &'a str,
    /// The stack the run was started on, and the region asked for.
    pub stack: &'a str,
    pub stack_region: Option<&'a str>,
    /// A dry run (or the CLI's plan run): its report is written, nothing is told.
    pub plan_only: bool,
    /// The run an export was to resume (`resume` in its input).
    pub resumed: Option<&'a str>,
    /// The execution's error and cause.
    pub error: &'a str,
    pub cause: &'a str,
    /// Stopped from outside (`runs stop --now`, its time limit: `run-ended`), not
    /// refused: a step still running then may yet act, so nothing says "nothing was
    /// locked", and a destroy's cause says its deletes and lock may outlive the stop.
    pub stopped: bool,
}

/// What [`ensure_report`] found or did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Ensured {
    /// A step had written the report: nothing was written or told here.
    Found,
    /// Written now, and told (unless plan-only or no target is configured).
    Written,
    /// Neither read nor written (a warning is logged).
    NotWritten,
}

/// Writes the report of a run that ended early when it has none, then tells it. Never
/// fails: what cannot be read or written is a warning in the log.
pub async fn ensure_report(
    store: &StateStore,
    notify: Option<&Notifier>,
    e: &EndedEarly<'_>,
) -> Ensured {
    let key = report_key(&store.prefix, e.run_id);
    match store.get_raw(&key).await {
        Ok(None) => {}
        Ok(Some(_)) => return Ensured::Found,
        Err(err) => {
            tracing::warn!("report of run {} not read: {err}", flatten_str(e.run_id));
            return Ensured::NotWritten;
        }
    }
    // The cause as every report says it: without a contention refusal's force-unlock
    // advice (docs/notifications.md, "What is published, and when").
    let why = refused_cause(e.error, e.cause);
    let written = match e.operation {
        Operation::Export => {
            // A resume's progress is the resumed run's.
            let of = e.resumed.unwrap_or(e.run_id);
            let progress: Option<ExportRun> = runs::read(store, &progress_key(&store.prefix, of))
                .await
                .ok()
                .flatten();
            let r = if e.stopped {
                stopped_from_outside(e.run_id, progress.as_ref(), e.error, e.cause)
            } else {
                ended_early(e.run_id, progress.as_ref(), e.error, &why, e.resumed)
            };
            let notice = export_ended(&r, e.stack, e.stack_region, &key);
            runs::write(store, &key, &r).await.map(|_| notice)
        }
        Operation::Destroy => {
            let mut r =
                destroy_report(store, e.run_id, e.stack, e.stack_region, &why, !e.stopped).await;
            if e.stopped {
                // Its deletes and locks outlive the stop; the unlock command names the
                // stacks its progress says it locked, each in its record's region.
                r.aborted = Some(destroy_stopped_cause(
                    &store.bucket,
                    &store.prefix,
                    e.run_id,
                    &locked_stacks(&r),
                    &why,
                    &format!(
                        "once {} minutes have passed since the stop (the longest a destroy-wave step runs)",
                        cdkd_core::contention::WAVE_TIMEOUT_S / 60
                    ),
                    None,
                ));
            }
            let notice = notice_of(&r, &key);
            runs::write(store, &key, &r).await.map(|_| notice)
        }
    };
    let ok = written.is_ok();
    tell_written(notify, store, e.run_id, e.plan_only, written).await;
    if ok {
        Ensured::Written
    } else {
        Ensured::NotWritten
    }
}

/// The region a run asked for, else its record's when it has one region only (as the
/// plan would have chosen): for the report of a run that ended before its plan.
async fn asked_or_record_region(
    store: &StateStore,
    stack: &str,
    asked: Option<&str>,
) -> Option<String> {
    if let Some(r) = asked.filter(|r| !r.is_empty()) {
        return Some(r.to_string());
    }
    match store.list_refs().await {
        Ok(refs) => cdkd_core::destroy::tree::record_region(stack, None, &refs).ok(),
        Err(e) => {
            tracing::warn!("the records of {} not listed: {e}", flatten_str(stack));
            None
        }
    }
}

/// Tells a report written by whoever noticed the run's end (`written`: its notice, or
/// why it was not written), as the step that would have written it does; a plan-only
/// run tells nothing.
pub async fn tell_written(
    notify: Option<&Notifier>,
    store: &StateStore,
    run_id: &str,
    plan_only: bool,
    written: Result<Notice, StepError>,
) {
    match written {
        Ok(notice) if !plan_only => crate::notify::tell(notify, store, &notice).await,
        Ok(_) => {}
        Err(e) => tracing::warn!("report of run {} not written: {e}", flatten_str(run_id)),
    }
}

/// A destroy report for a run that ended early: its rows as far as `progress.json`
/// says, or none when it ended before planning (then `refused` when
/// `refused_if_unplanned`: a refusal, not an interruption).
/// The stacks a destroy run's report says it planned (and so locked), each with its
/// record's region: what its stop's unlock command names.
pub fn locked_stacks(r: &RunReport) -> Vec<(&str, Option<&str>)> {
    r.stacks
        .iter()
        .map(|s| {
            (
                s.stack.as_str(),
                (!s.region.is_empty()).then_some(s.region.as_str()),
            )
        })
        .collect()
}

pub async fn destroy_report(
    store: &StateStore,
    run_id: &str,
    stack: &str,
    stack_region: Option<&str>,
    aborted: &str,
    refused_if_unplanned: bool,
) -> RunReport {
    let rec: Option<DestroyRun> = runs::read(store, &progress_key(&store.prefix, run_id))
        .await
        .ok()
        .flatten();
    let region = match rec.as_ref().and_then(|r| r.stacks.last()) {
        Some(s) => s.region.clone(),
        None => asked_or_record_region(store, stack, stack_region)
            .await
            .unwrap_or_default(),
    };
    let run = RunRef {
        run_id: run_id.into(),
        bucket: store.bucket.clone(),
        prefix: store.prefix.clone(),
        stack: stack.to_string(),
        region: region.clone(),
    };
    match rec {
        Some(rec) => report_of(&run, &rec, Some(aborted.to_string())),
        None => RunReport {
            run_id: run_id.into(),
            stack: stack.to_string(),
            region,
            complete: false,
            aborted: Some(aborted.to_string()),
            stacks: Vec::new(),
            orphans: Vec::new(),
            refused: refused_if_unplanned,
        },
    }
}

// ---------------------------------------------------------------------------------
// The step

/// `run-refused`'s input: what the definition has at its `*Failed` state.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefusedInput {
    pub operation: Operation,
    /// The execution's name.
    pub run_id: RunId,
    /// The execution's input (its stack, bucket and prefix; `dryRun`, `resume`).
    pub input: RunInput,
    /// The caught error (`$.error`): `Error` and `Cause`.
    pub error: CaughtError,
}

/// The fields of an export's or a destroy's input this step reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunInput {
    #[serde(default)]
    pub stack: String,
    #[serde(default)]
    pub stack_region: Option<String>,
    pub state_bucket: String,
    #[serde(default = "crate::deps::default_prefix", alias = "prefix")]
    pub state_prefix: String,
    #[serde(default)]
    pub dry_run: bool,
    #[serde(default)]
    pub resume: Option<String>,
}

/// A caught error as Step Functions passes it (`Cause` may be absent).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CaughtError {
    #[serde(rename = "Error", default)]
    pub error: String,
    #[serde(rename = "Cause", default)]
    pub cause: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefusedOutput {
    pub report: Ensured,
}

/// `run-refused`: the run's report when no step wrote one, and its message. The
/// definitions ignore what it returns and catch its errors into the same `Fail` state,
/// so the execution ends with the error it caught either way.
pub async fn run(input: RefusedInput, deps: &Deps) -> Result<RefusedOutput, StepError> {
    if input.run_id.is_empty() {
        return Err(StepError::bad_input("run-refused needs the run id"));
    }
    let i = &input.input;
    let store = deps.store(&i.state_bucket, &i.state_prefix).await;
    let e = EndedEarly {
        operation: input.operation,
        run_id: &input.run_id,
        stack: &i.stack,
        stack_region: i.stack_region.as_deref(),
        plan_only: i.dry_run,
        resumed: i.resume.as_deref(),
        error: &input.error.error,
        cause: &input.error.cause,
        stopped: false,
    };
    let report = ensure_report(&store, deps.notify.as_ref(), &e).await;
    Ok(RefusedOutput { report })
}
