//! `AWS::EC2::Instance`: the physical id is the instance id (`i-…`).
//!
//! docs/destroy.md, "Cloud Control" (`removeProtection`) and "SDK deleters": with `removeProtection` every attempt first
//! sets `DisableApiTermination=false` (ModifyInstanceAttribute), then calls
//! TerminateInstances. When TerminateInstances refuses because API termination
//! protection is on (it came back: the protection race), the flag's attempt is repeated
//! after 3 s × attempt, at most [`PROTECTION_ATTEMPTS`] attempts in all; the attempts so
//! far live in a [`Handle::Steps`] in phase `unprotect` (its `polls`), so the
//! count holds across wave calls. Without the flag a protected instance fails with a
//! message naming it, its logical id and `--remove-protection`; nothing is terminated.
//!
//! After TerminateInstances the delete is in flight ([`Handle::AwaitGone`], deadline
//! [`INSTANCE_TERMINATE_BUDGET_MS`] after the terminate): each poll describes the
//! instance until it is `terminated` (or no longer listed) → `Done`. Past the deadline
//! the row fails naming the instance and its last state, never read as gone.
//!
//! `InvalidInstanceID.NotFound`, or an instance already `terminated` before this delete,
//! counts as gone only under the region guard and only for an `i-` id.

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::{backoff_ms, now_ms, DeleteProgress, Handle};
use crate::request::DeleteRequest;
use crate::steps::{await_gone, resume_gone, At, Steps};
use crate::{Deleter, SdkCapabilities, SdkDeleter};
use cdkd_core::run::HandlePhase;

use super::eni::{deadline_ms, next_poll_ms};

/// How long a terminated instance may take to reach `terminated`.
pub const INSTANCE_TERMINATE_BUDGET_MS: u64 = 5 * 60 * 1000;

/// TerminateInstances attempts (each preceded by turning protection off) before the
/// protection race is given up.
pub const PROTECTION_ATTEMPTS: u32 = 5;

/// The wait before the next attempt after a refusal: this × the attempts so far.
pub const PROTECTION_RETRY_STEP_MS: u64 = 3_000;

/// The step of a protected instance whose TerminateInstances was refused while the run
/// removes protection: `polls` counts the refused attempts.
const UNPROTECT: Steps = Steps {
    phase: HandlePhase::Unprotect,
    budget_ms: INSTANCE_TERMINATE_BUDGET_MS,
};

/// First describe delay while waiting for `terminated` (×1.5 per poll, capped).
const WAIT_FIRST_MS: u64 = 2_000;
const WAIT_CAP_MS: u64 = 15_000;

/// EC2 error codes that say the instance does not exist.
const NOT_FOUND_CODES: &[&str] = &["InvalidInstanceID.NotFound"];

pub struct Ec2InstanceDeleter {
    ec2: aws_sdk_ec2::Client,
}

/// An instance id: `i-` followed by hex digits.
pub fn is_instance_id(id: &str) -> bool {
    id.strip_prefix("i-")
        .is_some_and(|hex| !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// TerminateInstances' refusal of an instance with API termination protection on
/// (AWS and the emulator: `OperationNotPermitted`, "The instance 'i-…' may not be
/// terminated. Modify its 'disableApiTermination' instance attribute and try again.").
/// A refusal that names `disableApiStop` is a different attribute and is not this one.
pub fn is_termination_protection_refusal(code: Option<&str>, message: &str) -> bool {
    code == Some("OperationNotPermitted")
        && (message.contains("disableApiTermination")
            || (message.contains("may not be terminated") && !message.contains("disableApiStop")))
}

/// What to do after TerminateInstances refused because of protection, `refused` being
/// the refused attempts so far (this one included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterRefusal {
    /// The run did not ask to remove protection: fail naming the flag.
    NeedsFlag,
    /// Try again (protection off, terminate) in `delay_ms`.
    RetryIn { delay_ms: u64 },
    /// [`PROTECTION_ATTEMPTS`] attempts were refused: fail.
    GiveUp,
}

pub fn after_refusal(remove_protection: bool, refused: u32) -> AfterRefusal {
    if !remove_protection {
        AfterRefusal::NeedsFlag
    } else if refused >= PROTECTION_ATTEMPTS {
        AfterRefusal::GiveUp
    } else {
        AfterRefusal::RetryIn {
            delay_ms: PROTECTION_RETRY_STEP_MS.saturating_mul(u64::from(refused.max(1))),
        }
    }
}

/// Whether a described state means the instance is gone (`None`: no longer listed).
pub fn is_terminated(state: Option<&str>) -> bool {
    state.is_none_or(|s| s == "terminated")
}

/// `EC2 instance i-… (logical id X in stack S)`.
fn who(req: &DeleteRequest) -> String {
    format!(
        "EC2 instance {} (logical id {} in stack {})",
        req.physical_id, req.logical_id, req.run.stack
    )
}

/// The failure of a protected instance when the run did not ask to remove protection.
fn protected_error(req: &DeleteRequest) -> DeleteError {
    DeleteError::failed(
        req,
        format!(
            "{} has API termination protection (disableApiTermination) enabled; nothing was terminated. Re-run the destroy with --remove-protection to turn it off and terminate the instance",
            who(req)
        ),
    )
}

/// The failure after every attempt of the protection race was refused.
fn gave_up_error(req: &DeleteRequest) -> DeleteError {
    DeleteError::failed(
        req,
        format!(
            "{} still refused termination (disableApiTermination) after {PROTECTION_ATTEMPTS} attempts to turn API termination protection off and terminate it; something keeps turning the protection back on",
            who(req)
        ),
    )
}

impl Ec2InstanceDeleter {
    pub fn new(ec2: aws_sdk_ec2::Client) -> Self {
        Ec2InstanceDeleter { ec2 }
    }

    fn region(&self) -> Option<&str> {
        self.ec2.config().region().map(|r| r.as_ref())
    }

    /// The region guard's answer for "EC2 says …" (`api_answer`).
    fn gone(&self, req: &DeleteRequest, api_answer: &str) -> Result<DeleteProgress, DeleteError> {
        guard::not_found(
            req,
            self.region(),
            is_instance_id(&req.physical_id),
            api_answer,
        )
    }

    /// `Ok(Some(state))` while DescribeInstances lists the instance, `Ok(None)` when it
    /// answers NotFound or lists nothing.
    async fn describe(&self, req: &DeleteRequest) -> Result<Option<String>, DeleteError> {
        match self
            .ec2
            .describe_instances()
            .instance_ids(&req.physical_id)
            .send()
            .await
        {
            Ok(out) => Ok(out
                .reservations()
                .iter()
                .flat_map(|r| r.instances())
                .find(|i| i.instance_id() == Some(req.physical_id.as_str()))
                .map(|i| {
                    i.state()
                        .and_then(|s| s.name())
                        .map(|n| n.as_str().to_owned())
                        .unwrap_or_else(|| "unknown".to_owned())
                })),
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(NOT_FOUND_CODES) {
                    Ok(None)
                } else {
                    Err(DeleteError::from_aws(req, "DescribeInstances", &info))
                }
            }
        }
    }

    fn awaiting(at: At) -> DeleteProgress {
        let wait = backoff_ms(at.polls, WAIT_FIRST_MS, WAIT_CAP_MS);
        await_gone(at, next_poll_ms(now_ms(), wait, at.deadline_ms))
    }

    /// One attempt: (with the flag) protection off, then TerminateInstances. `at.polls`
    /// is the attempts refused so far.
    async fn attempt(&self, req: &DeleteRequest, at: At) -> Result<DeleteProgress, DeleteError> {
        let id = req.physical_id.as_str();
        if req.options.remove_protection {
            if let Err(e) = self
                .ec2
                .modify_instance_attribute()
                .instance_id(id)
                .disable_api_termination(
                    aws_sdk_ec2::types::AttributeBooleanValue::builder()
                        .value(false)
                        .build(),
                )
                .send()
                .await
            {
                let info = aws_error_info(&e);
                if info.code_is(NOT_FOUND_CODES) {
                    return self.gone(req, &format!("EC2 says instance {id} does not exist"));
                }
                return Err(DeleteError::from_aws(
                    req,
                    "ModifyInstanceAttribute (DisableApiTermination=false)",
                    &info,
                ));
            }
        }
        match self.ec2.terminate_instances().instance_ids(id).send().await {
            // The wait's deadline counts from the terminate.
            Ok(_) => Ok(Self::awaiting(At {
                deadline_ms: deadline_ms(now_ms(), INSTANCE_TERMINATE_BUDGET_MS),
                polls: 0,
                ..at
            })),
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(NOT_FOUND_CODES) {
                    return self.gone(req, &format!("EC2 says instance {id} does not exist"));
                }
                if !is_termination_protection_refusal(info.code.as_deref(), &info.message) {
                    return Err(DeleteError::from_aws(req, "TerminateInstances", &info));
                }
                let at = at.next();
                let refused = at.polls;
                match after_refusal(req.options.remove_protection, refused) {
                    AfterRefusal::NeedsFlag => Err(protected_error(req)),
                    AfterRefusal::GiveUp => Err(gave_up_error(req)),
                    AfterRefusal::RetryIn { delay_ms } => {
                        tracing::info!(
                            instance = id,
                            refused,
                            "termination refused by API termination protection; retrying"
                        );
                        Ok(UNPROTECT.in_flight(
                            serde_json::Value::Null,
                            at,
                            now_ms().saturating_add(delay_ms),
                        ))
                    }
                }
            }
        }
    }
}

impl SdkDeleter for Ec2InstanceDeleter {
    const TYPES: &'static [&'static str] = &["AWS::EC2::Instance"];
    /// Turns API-termination protection off through EC2 (docs/destroy.md, "Cloud Control"
    /// removeProtection), which Cloud Control does not. Cloud Control's identifier is the
    /// instance id.
    const CAPABILITIES: SdkCapabilities = SdkCapabilities {
        final_snapshot: false,
        completes_cloud_control: true,
    };
}

#[async_trait]
impl Deleter for Ec2InstanceDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        guard::refuse_final_snapshot(req, "EC2's TerminateInstances takes no final snapshot")?;
        let started = now_ms();
        let id = req.physical_id.as_str();
        match self.describe(req).await? {
            None => self.gone(req, &format!("EC2 says instance {id} does not exist")),
            Some(s) if s == "terminated" => self.gone(
                req,
                &format!("EC2 says instance {id} is already terminated"),
            ),
            // Already terminating (a run resumed after a lost answer): just wait; a
            // protection change on it could be refused and fail the row for nothing.
            Some(s) if s == "shutting-down" => Ok(Self::awaiting(At::start(
                started,
                INSTANCE_TERMINATE_BUDGET_MS,
            ))),
            Some(_) => self.attempt(req, UNPROTECT.first(started)).await,
        }
    }

    async fn poll(
        &self,
        req: &DeleteRequest,
        handle: &Handle,
    ) -> Result<DeleteProgress, DeleteError> {
        if let Some((at, _)) = UNPROTECT.resume(handle) {
            return self.attempt(req, at).await;
        }
        let Some(at) = resume_gone(handle) else {
            return super::no_poll(req, handle);
        };
        let now = now_ms();
        let last = match self.describe(req).await {
            Ok(state) if is_terminated(state.as_deref()) => return Ok(DeleteProgress::Done),
            Ok(state) => format!("state {}", state.unwrap_or_default()),
            Err(e) if e.retryable => format!("unknown: the last describe failed: {}", e.message),
            Err(e) => return Err(e),
        };
        at.within_deadline(req, now, || {
            format!(
                "{} is not terminated {} min after TerminateInstances (last {last}); it may still be running",
                who(req),
                INSTANCE_TERMINATE_BUDGET_MS / 60_000
            )
        })?;
        Ok(Self::awaiting(at.next()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::DeleteErrorKind;

    #[test]
    fn instance_id_is_i_dash_hex_only() {
        assert!(is_instance_id("i-0123456789abcdef0"));
        assert!(is_instance_id("i-c9308f4e"));
        assert!(!is_instance_id("i-"));
        assert!(!is_instance_id("i-xyz"));
        assert!(!is_instance_id("my-instance"));
        assert!(!is_instance_id("sg-0123"));
    }

    #[test]
    fn ec2_protection_refusal_is_recognised_only_for_disable_api_termination() {
        let aws = "The instance 'i-0123' may not be terminated. Modify its 'disableApiTermination' instance attribute and try again.";
        assert!(is_termination_protection_refusal(
            Some("OperationNotPermitted"),
            aws
        ));
        assert!(is_termination_protection_refusal(
            Some("OperationNotPermitted"),
            "The instance 'i-0123' may not be terminated."
        ));
        assert!(!is_termination_protection_refusal(
            Some("OperationNotPermitted"),
            "The instance 'i-0123' may not be terminated. Modify its 'disableApiStop' instance attribute and try again."
        ));
        assert!(!is_termination_protection_refusal(
            Some("UnauthorizedOperation"),
            aws
        ));
        assert!(!is_termination_protection_refusal(
            Some("OperationNotPermitted"),
            "User (123) cannot accept peering pcx-1"
        ));
        assert!(!is_termination_protection_refusal(None, aws));
    }

    #[test]
    fn ec2_protection_race_retries_after_3s_times_attempt_at_most_5_attempts_with_the_flag() {
        let delays: Vec<AfterRefusal> = (1..=5).map(|n| after_refusal(true, n)).collect();
        assert_eq!(
            delays,
            vec![
                AfterRefusal::RetryIn { delay_ms: 3_000 },
                AfterRefusal::RetryIn { delay_ms: 6_000 },
                AfterRefusal::RetryIn { delay_ms: 9_000 },
                AfterRefusal::RetryIn { delay_ms: 12_000 },
                AfterRefusal::GiveUp,
            ]
        );
        assert_eq!(after_refusal(true, 9), AfterRefusal::GiveUp);
    }

    #[test]
    fn ec2_protection_refusal_without_the_flag_fails_at_once() {
        assert_eq!(after_refusal(false, 1), AfterRefusal::NeedsFlag);
    }

    #[test]
    fn instance_wait_is_done_only_when_terminated_or_no_longer_listed() {
        assert!(is_terminated(None));
        assert!(is_terminated(Some("terminated")));
        for s in ["pending", "running", "shutting-down", "stopping", "stopped"] {
            assert!(!is_terminated(Some(s)), "{s}");
        }
    }

    #[test]
    fn protected_instance_message_names_instance_logical_id_stack_and_flag() {
        let r: DeleteRequest = serde_json::from_value(serde_json::json!({
            "logicalId": "Web", "resourceType": "AWS::EC2::Instance", "physicalId": "i-0abc",
            "region": "us-east-1",
            "run": {"runId": "r", "stack": "Shop", "stateBucket": "b", "statePrefix": "cdkd"}
        }))
        .unwrap();
        let e = protected_error(&r);
        assert_eq!(e.kind, DeleteErrorKind::Failed);
        assert!(!e.retryable);
        let msg = e.to_string();
        assert!(
            msg.starts_with(
                "AWS::EC2::Instance i-0abc: EC2 instance i-0abc (logical id Web in stack Shop)"
            ),
            "{msg}"
        );
        assert!(msg.contains("--remove-protection"), "{msg}");
        let g = gave_up_error(&r).to_string();
        assert!(
            g.contains("after 5 attempts") && g.contains("logical id Web"),
            "{g}"
        );
    }
}
