//! Telling people (docs/notifications.md): the step that wrote what makes a message true
//! (`approval.json`, `report.json`, a cleanup's summary) sends it, once per run and kind,
//! through `cdkd_aws::notify`. Nothing here can fail a step: a message that cannot be
//! sent is a warning in the log (the CLI's stderr for a local run).

use cdkd_aws::notify::Notifier;
use cdkd_aws::StateStore;
use cdkd_core::notify::{notice_key, Notice};
use cdkd_core::run::RunId;
use cdkd_core::text::flatten_str;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::deps::Deps;
use crate::error::StepError;

/// Sends `notice` through `notify` (the run's configured targets; `None`: nothing is
/// sent) when this kind has not been sent for the run yet. The marker `notified-<kind>.json` is created (only if
/// absent) before the message goes: a step retried after sending finds it and sends
/// nothing (at most once; docs/notifications.md, "Once per run and kind: at most once"). A marker that cannot be written
/// does not hold the message back.
pub async fn tell(notify: Option<&Notifier>, store: &StateStore, notice: &Notice) {
    let Some(notifier) = notify else {
        return;
    };
    let key = notice_key(&store.prefix, &notice.run_id, notice.kind);
    let body = serde_json::to_vec_pretty(notice).unwrap_or_default();
    match store.put_raw_if_absent(&key, body).await {
        Ok(true) => {}
        Ok(false) => {
            tracing::info!(
                run = %flatten_str(&notice.run_id),
                kind = notice.kind.as_str(),
                "message already sent for this run; not sent again"
            );
            return;
        }
        Err(e) => tracing::warn!(
            "notification marker s3://{}/{key} not written ({e}); sending the message anyway",
            store.bucket
        ),
    }
    for line in notifier.publish(notice).await {
        tracing::warn!("run {}: {line}", flatten_str(&notice.run_id));
    }
}

/// `cleanup-notify`'s input: the cleanup's summary and where its run folder is.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CleanupNotifyInput {
    /// The execution's name.
    pub run_id: RunId,
    /// The execution's input (its `stateBucket` and `statePrefix` say where the run
    /// folder is).
    pub input: RunFolder,
    /// The `Summary`, `DryRunSummary` or `Failed` state's output: counts, no lists.
    pub summary: Value,
}

/// The part of a cleanup's input that names the state bucket and prefix.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunFolder {
    pub state_bucket: String,
    #[serde(default = "crate::deps::default_prefix")]
    pub state_prefix: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CleanupNotifyOutput {
    /// Whether notifications are configured (the message itself may still have failed:
    /// see the log).
    pub configured: bool,
}

/// `cleanup-notify`: the cleanup's digest (`statemachines/cleanup.asl.json`, after its
/// summary). Never fails on the message; the definition ignores what it returns.
pub async fn cleanup_notify(
    input: CleanupNotifyInput,
    deps: &Deps,
) -> Result<CleanupNotifyOutput, StepError> {
    if input.run_id.is_empty() {
        return Err(StepError::bad_input("cleanup-notify needs the run id"));
    }
    let store = deps
        .store(&input.input.state_bucket, &input.input.state_prefix)
        .await;
    // The summary carries counts; the lists are in the run folder (docs/runs.md, "A
    // cleanup's lists"). Unreadable, the digest says what the summary says.
    let summary = match crate::cleanup::with_lists(&store, &input.run_id, &input.summary).await {
        Ok(full) => full,
        Err(e) => {
            tracing::warn!(
                "run {}: the cleanup's lists are not readable ({}); the digest has its counts only",
                flatten_str(&input.run_id),
                flatten_str(&e.message)
            );
            input.summary.clone()
        }
    };
    let notice = cdkd_core::view::notify::cleanup_finished(&input.run_id, &summary);
    tell(deps.notify.as_ref(), &store, &notice).await;
    Ok(CleanupNotifyOutput {
        configured: deps.notify.is_some(),
    })
}
