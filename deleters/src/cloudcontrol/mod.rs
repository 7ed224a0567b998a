//! The Cloud Control deleter (docs/destroy.md, "Cloud Control"): `DeleteResource` with a deterministic
//! ClientToken, then `GetResourceRequestStatus` polls across wave invocations from the
//! persisted RequestToken.
//!
//! Contract with the caller: `start` with the same `attempt` after a crash reuses the
//! same ClientToken, so Cloud Control answers with the request already running instead
//! of starting a second one. A throttled or 5xx status poll is retried in place (the
//! answer is `InFlight` with the same token). An error from `poll` ends the request; if
//! it is retryable, start again with `attempt + 1` (a fresh ClientToken).

pub mod identifier;
pub mod read;

use async_trait::async_trait;
use aws_sdk_cloudcontrol::types::{HandlerErrorCode, OperationStatus, ProgressEvent};

use cdkd_aws::sdk_error::{classify_code, ErrorClass};
use cdkd_core::run::HandlePhase;

use crate::error::{aws_error_info, DeleteError, DeleteErrorKind};
use crate::guard;
use crate::progress::{backoff_ms, now_ms, DeleteProgress, Handle};
use crate::request::DeleteRequest;
use crate::steps::{At, Steps};
use crate::Deleter;
pub use identifier::{cloud_control_target, poll_cap_ms, protection_off_patch, CcTarget};

/// First status poll delay, growth ×1.5, cap (docs/destroy.md, "Cloud Control").
const POLL_FIRST_MS: u64 = 1000;
const POLL_CAP_MS: u64 = 10_000;

/// Why Cloud Control cannot honour `DeletionPolicy: Snapshot` (docs/destroy.md, "Cloud Control").
pub const NO_SNAPSHOT_PARAMETER: &str =
    "Cloud Control's DeleteResource has no snapshot parameter and cdkd-flow has no SDK deleter for this type that takes one";

pub struct CloudControlDeleter {
    cc: aws_sdk_cloudcontrol::Client,
}

/// The ClientToken of one delete attempt (core's derivation: run id, stack, logical id,
/// attempt), so a resumed attempt of the same run reuses it and a new attempt does not.
pub fn client_token(req: &DeleteRequest) -> String {
    cdkd_core::destroy::model::client_token(
        &req.run.run_id,
        &req.run.stack,
        &req.logical_id,
        req.attempt,
    )
}

fn mentions_not_found(message: &str) -> bool {
    message.contains("does not exist")
        || message.contains("not found")
        || message.contains("NotFound")
}

impl CloudControlDeleter {
    pub fn new(cc: aws_sdk_cloudcontrol::Client) -> Self {
        CloudControlDeleter { cc }
    }

    fn region(&self) -> Option<&str> {
        self.cc.config().region().map(|r| r.as_ref())
    }

    fn in_flight(
        req: &DeleteRequest,
        request_token: &str,
        client_token: &str,
        started_ms: u64,
        polls: u32,
        retry_after_ms: Option<u64>,
    ) -> Result<DeleteProgress, DeleteError> {
        let now = now_ms();
        let cap = poll_cap_ms(&req.resource_type);
        if now.saturating_sub(started_ms) > cap {
            return Err(DeleteError::new(
                req,
                DeleteErrorKind::Timeout,
                format!(
                    "Cloud Control delete (request {request_token}) still in progress after {} min",
                    cap / 60_000
                ),
            ));
        }
        // The start's own answer is followed by an immediate poll; after the k-th poll
        // answers IN_PROGRESS the wait is 1 s ×1.5^(k-1), capped at 10 s.
        let wait = match polls {
            0 => 0,
            k => backoff_ms(k - 1, POLL_FIRST_MS, POLL_CAP_MS),
        };
        let next = now.saturating_add(wait);
        Ok(DeleteProgress::InFlight {
            handle: Handle::CloudControl {
                request_token: Some(request_token.to_owned()),
                client_token: client_token.to_owned(),
                started_ms,
                polls,
            },
            expected_done_ms: next.max(retry_after_ms.unwrap_or(0)),
        })
    }

    /// Reads one progress event.
    fn judge(
        &self,
        req: &DeleteRequest,
        ev: &ProgressEvent,
        client_token: &str,
        started_ms: u64,
        polls: u32,
    ) -> Result<DeleteProgress, DeleteError> {
        let token = ev.request_token().unwrap_or_default();
        let message = ev.status_message().unwrap_or_default();
        match ev.operation_status() {
            Some(OperationStatus::Success) => Ok(DeleteProgress::Done),
            Some(OperationStatus::Failed) => {
                let code = ev.error_code();
                if code == Some(&HandlerErrorCode::NotFound) {
                    let verified = cloud_control_target(req)
                        .map(|i| i.verified)
                        .unwrap_or(false);
                    return guard::not_found(
                        req,
                        self.region(),
                        verified,
                        &format!("Cloud Control says the resource was not found ({message})"),
                    );
                }
                let code_str = code.map(|c| c.as_str()).unwrap_or("(no error code)");
                let mut err = DeleteError::failed(
                    req,
                    format!("Cloud Control delete (request {token}) failed: {code_str}: {message}"),
                );
                // The handler's error code is classified like any AWS error code
                // (Throttling, InternalFailure, ServiceInternalError, NetworkFailure,
                // AccessDenied, and the transient wording of its message).
                let class = classify_code(code.map(|c| c.as_str()), None, message);
                err.throttling = class == ErrorClass::Throttling;
                err.retryable = class.is_retryable()
                    // Another operation on the resource, or a dependent not gone yet
                    // (a security group still used by an ENI): worth another attempt.
                    || matches!(
                        code,
                        Some(HandlerErrorCode::ResourceConflict | HandlerErrorCode::NotStabilized)
                    );
                if class == ErrorClass::AccessDenied {
                    err.message.push_str(
                        " (the resource type's handler was denied an action; check the permissions Cloud Control acts with, not only the caller's)",
                    );
                }
                Err(err)
            }
            Some(OperationStatus::CancelComplete) => Err(DeleteError::failed(
                req,
                format!("Cloud Control delete (request {token}) was cancelled: {message}"),
            )),
            // PENDING, IN_PROGRESS, CANCEL_IN_PROGRESS, unknown or absent: keep polling.
            _ => {
                let retry_after = ev
                    .retry_after()
                    .and_then(|t| t.to_millis().ok())
                    .and_then(|ms| u64::try_from(ms).ok());
                Self::in_flight(req, token, client_token, started_ms, polls, retry_after)
            }
        }
    }
}

impl CloudControlDeleter {
    /// Sends `DeleteResource` with `token` and reads the answer.
    async fn send_delete(
        &self,
        req: &DeleteRequest,
        ident: &CcTarget,
        token: &str,
        started: u64,
    ) -> Result<DeleteProgress, DeleteError> {
        let sent = self
            .cc
            .delete_resource()
            .type_name(&req.resource_type)
            .identifier(&ident.identifier)
            .client_token(token)
            .send()
            .await;
        match sent {
            Ok(out) => {
                let ev = out
                    .progress_event()
                    .filter(|ev| ev.request_token().is_some_and(|t| !t.is_empty()))
                    .ok_or_else(|| {
                        DeleteError::failed(
                            req,
                            "Cloud Control DeleteResource answered without a RequestToken",
                        )
                    })?;
                self.judge(req, ev, token, started, 0)
            }
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["UnsupportedActionException", "TypeNotFoundException"]) {
                    return Err(DeleteError::new(
                        req,
                        DeleteErrorKind::Unsupported,
                        format!("type not supported by Cloud Control: {}", info.message),
                    ));
                }
                if info.code_is(&["ResourceNotFoundException"])
                    || (!info.retryable && mentions_not_found(&info.message))
                {
                    return guard::not_found(
                        req,
                        self.region(),
                        ident.verified,
                        &format!(
                            "Cloud Control says {} {} was not found",
                            req.resource_type, ident.identifier
                        ),
                    );
                }
                let mut info = info;
                info.retryable |= info.code_is(&["ConcurrentOperationException"]);
                Err(DeleteError::from_aws(
                    req,
                    "Cloud Control DeleteResource",
                    &info,
                ))
            }
        }
    }
}

/// How long the protection update may take before the delete is tried anyway.
const UNPROTECT_BUDGET_MS: u64 = 15 * 60_000;
/// The step of a protected resource: its protection property being turned off
/// (`UpdateResource`), awaited before the delete; the handle's data holds the update's
/// request token.
const UNPROTECT: Steps = Steps {
    phase: HandlePhase::Unprotect,
    budget_ms: UNPROTECT_BUDGET_MS,
};

impl CloudControlDeleter {
    /// `removeProtection` for the types of docs/destroy.md, "Cloud Control": `UpdateResource` with a JSON patch
    /// turning the protection property off. `Some(request token)` while it runs; `None`
    /// when it finished at once or failed (a failure is only a warning: the delete then
    /// fails loudly if the protection is still on).
    async fn send_unprotect(&self, req: &DeleteRequest, ident: &CcTarget) -> Option<String> {
        let (path, value) = protection_off_patch(&req.resource_type)?;
        let patch = serde_json::json!([{"op": "add", "path": path, "value": value}]).to_string();
        match self
            .cc
            .update_resource()
            .type_name(&req.resource_type)
            .identifier(&ident.identifier)
            .patch_document(patch)
            .send()
            .await
        {
            Ok(out) => {
                let ev = out.progress_event()?;
                match ev.operation_status() {
                    Some(OperationStatus::Pending | OperationStatus::InProgress) => {
                        ev.request_token().map(str::to_owned)
                    }
                    Some(OperationStatus::Failed) => {
                        tracing::warn!(
                            "{} {}: turning deletion protection off failed: {}",
                            req.resource_type,
                            req.physical_id,
                            ev.status_message().unwrap_or_default()
                        );
                        None
                    }
                    _ => None,
                }
            }
            Err(e) => {
                tracing::warn!(
                    "{} {}: turning deletion protection off failed: {}",
                    req.resource_type,
                    req.physical_id,
                    aws_error_info(&e).message
                );
                None
            }
        }
    }

    fn unprotecting(token: &str, at: At) -> DeleteProgress {
        UNPROTECT.in_flight(
            serde_json::json!({"requestToken": token}),
            at,
            now_ms().saturating_add(backoff_ms(at.polls, POLL_FIRST_MS, POLL_CAP_MS)),
        )
    }

    /// Polls the protection update; once it ended (or its budget did), sends the delete.
    async fn poll_unprotect(
        &self,
        req: &DeleteRequest,
        token: &str,
        at: At,
    ) -> Result<DeleteProgress, DeleteError> {
        let status = self
            .cc
            .get_resource_request_status()
            .request_token(token)
            .send()
            .await;
        let running = match &status {
            Ok(out) => matches!(
                out.progress_event().and_then(|e| e.operation_status()),
                Some(OperationStatus::Pending | OperationStatus::InProgress)
            ),
            Err(e) => aws_error_info(e).retryable,
        };
        if running && !at.past_deadline(now_ms()) {
            return Ok(Self::unprotecting(token, at.next()));
        }
        if let Ok(out) = &status {
            if let Some(ev) = out
                .progress_event()
                .filter(|e| e.operation_status() == Some(&OperationStatus::Failed))
            {
                tracing::warn!(
                    "{} {}: turning deletion protection off failed: {}",
                    req.resource_type,
                    req.physical_id,
                    ev.status_message().unwrap_or_default()
                );
            }
        }
        let ident = cloud_control_target(req)?;
        self.send_delete(req, &ident, &client_token(req), now_ms())
            .await
    }
}

#[async_trait]
impl Deleter for CloudControlDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        // Never delete what must be snapshotted first: Cloud Control cannot.
        guard::refuse_final_snapshot(req, NO_SNAPSHOT_PARAMETER)?;
        let ident = cloud_control_target(req)?;
        let started = now_ms();
        if req.options.remove_protection {
            if let Some(token) = self.send_unprotect(req, &ident).await {
                return Ok(Self::unprotecting(&token, UNPROTECT.first(started)));
            }
        }
        let token = client_token(req);
        self.send_delete(req, &ident, &token, started).await
    }

    async fn poll(
        &self,
        req: &DeleteRequest,
        handle: &Handle,
    ) -> Result<DeleteProgress, DeleteError> {
        if let Some((at, data)) = UNPROTECT.resume(handle) {
            if let Some(token) = data.get("requestToken").and_then(serde_json::Value::as_str) {
                return self.poll_unprotect(req, token, at).await;
            }
        }
        let Handle::CloudControl {
            request_token,
            client_token,
            started_ms,
            polls,
        } = handle
        else {
            return Err(DeleteError::failed(
                req,
                format!("the Cloud Control deleter cannot resume {handle:?}"),
            ));
        };
        let Some(request_token) = request_token else {
            // A write-ahead intent: the request may not have been sent. Re-sending it
            // with the same ClientToken is idempotent.
            guard::refuse_final_snapshot(req, NO_SNAPSHOT_PARAMETER)?;
            let ident = cloud_control_target(req)?;
            return self
                .send_delete(req, &ident, client_token, *started_ms)
                .await;
        };
        let polls = polls.saturating_add(1);
        match self
            .cc
            .get_resource_request_status()
            .request_token(request_token)
            .send()
            .await
        {
            Ok(out) => {
                let ev = out.progress_event().ok_or_else(|| {
                    DeleteError::failed(
                        req,
                        "GetResourceRequestStatus answered without a progress event",
                    )
                })?;
                self.judge(req, ev, client_token, *started_ms, polls)
            }
            Err(e) => {
                let info = aws_error_info(&e);
                if info.retryable {
                    // Retry the status poll in place; never re-submit while the token lives.
                    return Self::in_flight(
                        req,
                        request_token,
                        client_token,
                        *started_ms,
                        polls,
                        None,
                    );
                }
                let mut err =
                    DeleteError::from_aws(req, "Cloud Control GetResourceRequestStatus", &info);
                if info.code_is(&["RequestTokenNotFoundException"]) {
                    err.retryable = true;
                }
                Err(err)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::RunContext;

    fn req(attempt: u32) -> DeleteRequest {
        DeleteRequest {
            logical_id: "Thing".into(),
            resource_type: "AWS::Foo::Bar".into(),
            physical_id: "x".into(),
            properties: serde_json::Value::Null,
            attributes: serde_json::Value::Null,
            provisioned_by: Some("cc-api".into()),
            region: "us-east-1".into(),
            attempt,
            run: RunContext {
                run_id: "run-1".into(),
                stack: "S".into(),
                state_bucket: "b".into(),
                state_prefix: "cdkd".into(),
            },
            options: Default::default(),
        }
    }

    #[test]
    fn client_token_is_deterministic_per_run_stack_logical_id_and_attempt() {
        assert_eq!(client_token(&req(0)), client_token(&req(0)));
        assert_ne!(client_token(&req(0)), client_token(&req(1)));
        let mut other = req(0);
        other.run.run_id = "run-2".into();
        assert_ne!(client_token(&req(0)), client_token(&other));
        let t = client_token(&req(0));
        assert_eq!(
            t,
            cdkd_core::destroy::model::client_token("run-1", "S", "Thing", 0)
        );
        assert!(t.len() <= 128);
        assert!(t.bytes().all(|b| b == b'-' || b.is_ascii_hexdigit()));
    }
}
