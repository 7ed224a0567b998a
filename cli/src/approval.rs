//! The approval gate's I/O (docs/export.md, "Approval (export-approval)"): read a run's `approval.json`, write a
//! decision over the version read (If-Match, so of two people deciding at once one
//! wins and the other is told who decided), and, for a local run, answer the engine's
//! waiting task when the decision for its token appears. Every rule is
//! `cdkd_core::export::approval`'s.

use std::time::Duration;

use cdkd_aws::StateStore;
use cdkd_core::export::approval::{
    approval_key, decide, decision_for, task_answer, Answer, Approval, TaskAnswer,
};
use cdkd_core::run::RunId;
use cdkd_core::runs_refusal::{ApprovalRefusal, NoRequestWhy};
use cdkd_core::text::flatten_str;
use cdkd_engine::Engine;

use crate::error::CliError;

/// Who decides: `<user>@<host>` of this process (`cdkd_core::lock::user_at_host`).
pub fn decider() -> String {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let host = crate::host::host_name();
    flatten_str(&cdkd_core::lock::user_at_host(
        env("USER").or_else(|| env("USERNAME")).as_deref(),
        Some(&host),
    ))
}

/// The run's `approval.json` and the ETag it was read at; `None` when there is none.
pub async fn read(
    store: &StateStore,
    run_id: &RunId,
) -> Result<Option<(Approval, String)>, CliError> {
    let key = approval_key(&store.prefix, run_id);
    let Some((body, etag)) = store.get_raw(&key).await? else {
        return Ok(None);
    };
    let a = serde_json::from_slice(&body).map_err(|e| {
        CliError::refused(&ApprovalRefusal::NotARequest {
            run: run_id.clone(),
            bucket: store.bucket.clone(),
            key: key.clone(),
            error: e.to_string(),
        })
    })?;
    Ok(Some((a, etag)))
}

/// Writes the decision into the run's `approval.json` over the version read; refuses,
/// naming the run, when there is no request or it is decided already (naming who
/// decided). Returns the decided record.
pub async fn record_decision(
    store: &StateStore,
    run_id: &RunId,
    approved: bool,
    reason: Option<String>,
    no_request: NoRequestWhy,
) -> Result<Approval, CliError> {
    let key = approval_key(&store.prefix, run_id);
    for _ in 0..5 {
        let Some((request, etag)) = read(store, run_id).await? else {
            return Err(CliError::refused(&ApprovalRefusal::NoRequest {
                run: run_id.clone(),
                bucket: store.bucket.clone(),
                key,
                why: no_request,
            }));
        };
        let answer = Answer {
            approved,
            by: decider(),
            at_ms: cdkd_aws::store::now_ms(),
            reason: reason.clone(),
        };
        let decided = decide(&request, answer).map_err(|e| CliError::refused(&e))?;
        let body = serde_json::to_vec_pretty(&decided).map_err(|e| {
            CliError::refused(&ApprovalRefusal::Unserializable {
                key: key.clone(),
                error: e.to_string(),
            })
        })?;
        if store.put_raw_if_match(&key, body, &etag).await?.is_some() {
            return Ok(decided);
        }
        // Someone wrote in between (another decision, or a retried request): read again.
    }
    Err(CliError::refused(&ApprovalRefusal::KeptChanging {
        run: run_id.clone(),
        bucket: store.bucket.clone(),
        key,
    }))
}

/// How often a local run looks for a decision: every second with `--fast`, else every
/// 3 seconds.
pub fn local_poll(fast: bool) -> Duration {
    Duration::from_secs(if fast { 1 } else { 3 })
}

/// One look for a local run: when the engine waits on a token and `approval.json` holds
/// the decision for that token, answer the task (an approval with the decision as its
/// output, a rejection as the task's failure `Rejected`). Errors reading the file are
/// retried at the next look.
pub async fn answer_local(engine: &Engine, store: &StateStore, run_id: &RunId) {
    let waiting = engine.waiting_task_tokens();
    if waiting.is_empty() {
        return;
    }
    let record = match read(store, run_id).await {
        Ok(Some((a, _))) => a,
        Ok(None) => return,
        Err(e) => {
            tracing::debug!("reading the approval of run {run_id}: {e}");
            return;
        }
    };
    let Some(d) = waiting.iter().find_map(|t| decision_for(&record, t)) else {
        return;
    };
    let sent = match task_answer(&record, d) {
        TaskAnswer::Success(output) => engine.send_task_success(&record.token, output),
        TaskAnswer::Failure { error, cause } => {
            engine.send_task_failure(&record.token, &error, &cause.to_string())
        }
    };
    if let Err(e) = sent {
        tracing::debug!("answering the approval of run {run_id}: {e}");
    }
}
