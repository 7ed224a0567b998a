//! `export-approval`: the optional approval gate (docs/export.md, "Approval (export-approval)"). Invoked by the
//! `Approval` task (`lambda:invoke.waitForTaskToken`) of a run started with
//! `requireApproval`, after the plan and before the lock: writes
//! `<prefix>/_runs/<run-id>/approval.json` with the task token, the plan's key and
//! counts, and returns. The run then waits until `cdkd-flow runs approve|reject` answers
//! the token (Step Functions ignores what this step returns). Which request to write
//! over what is there is `cdkd_core::export::approval`'s.

use cdkd_core::export::approval::{
    approval_key, request_write, Approval, PlanSummary, RequestWrite,
};
use cdkd_core::export::plain::shown;
use cdkd_core::run::RunId;
use serde::{Deserialize, Serialize};

use super::plan::PlanOutput;
use super::ExportInput;
use crate::deps::Deps;
use crate::error::{names, StepError};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalInput {
    /// `$$.Task.Token` of this attempt.
    pub token: String,
    pub input: ExportInput,
    /// The execution's name: the run id.
    pub run_id: RunId,
    /// The execution's ARN (`$$.Execution.Id`): what a deployed run's message names.
    #[serde(default)]
    pub execution: String,
    pub plan: PlanOutput,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalOutput {
    pub approval_key: String,
    /// False when the file already held this token's request (the step ran twice for
    /// one attempt): it was left as it was.
    pub written: bool,
}

pub async fn run(input: ApprovalInput, deps: &Deps) -> Result<ApprovalOutput, StepError> {
    let ApprovalInput {
        token,
        input,
        run_id,
        execution,
        plan,
    } = input;
    if token.is_empty() {
        return Err(StepError::bad_input(
            "export-approval needs the task token ($$.Task.Token)",
        ));
    }
    if run_id.is_empty() {
        return Err(StepError::bad_input("export-approval needs the run id"));
    }
    let store = deps.store(&input.state_bucket, &input.state_prefix).await;
    let key = approval_key(&input.state_prefix, &run_id);
    let found = store.get_raw(&key).await?;
    let etag = found.as_ref().map(|(_, e)| e.clone());
    // A file that does not read as a request is replaced: nothing in it can approve.
    let existing: Option<Approval> = found
        .as_ref()
        .and_then(|(body, _)| serde_json::from_slice(body).ok());
    if request_write(existing.as_ref(), &token) == RequestWrite::Keep {
        return Ok(ApprovalOutput {
            approval_key: key,
            written: false,
        });
    }
    let request = Approval {
        stack: input.stack.clone(),
        run_id: run_id.clone(),
        token,
        requested_ms: deps.now(),
        plan_key: plan.plan_key.clone(),
        summary: PlanSummary {
            stacks: plan.stacks,
            import_rows: plan.import_rows,
            warnings: plan.warnings,
        },
        decision: None,
    };
    let body = serde_json::to_vec_pretty(&request)
        .map_err(|e| StepError::bad_input(format!("cannot serialize {key}: {e}")))?;
    match etag {
        // Over what was read only: a decision written in between is never lost
        // silently (the definition retries the Conflict, which reads again).
        Some(etag) => {
            if store.put_raw_if_match(&key, body, &etag).await?.is_none() {
                return Err(StepError::new(
                    names::CONFLICT,
                    format!("{key} changed while the approval request was written; will retry"),
                ));
            }
        }
        None => {
            store.put_raw(&key, body).await?;
        }
    }
    tracing::info!(
        stack = %shown(&input.stack),
        run = %run_id,
        key = %key,
        "export waits for approval"
    );
    // Told only by the invocation that wrote the request, once it can be answered.
    let (answer_as, extra) = match deps.local {
        Some(_) => (
            run_id.as_str(),
            cdkd_core::view::approval::local_extra(&input.state_bucket, &input.state_prefix),
        ),
        None => (
            cdkd_core::export::approval::answer_name(&run_id, &execution),
            String::new(),
        ),
    };
    let notice = cdkd_core::view::notify::approval_waiting(
        &request,
        input.stack_region.as_deref(),
        &key,
        answer_as,
        &extra,
    );
    crate::notify::tell(deps.notify.as_ref(), &store, &notice).await;
    Ok(ApprovalOutput {
        approval_key: key,
        written: true,
    })
}
