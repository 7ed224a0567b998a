//! `AWS::Lambda::Function`: the physical id is the function name (an ARN also works).
//!
//! A function whose record has a `VpcConfig` with subnets or security groups is deleted
//! as docs/destroy.md, "SDK deleters" says: empty its `VpcConfig`, wait for that update, delete it, then sweep
//! the network interfaces Lambda made for it (`AWS Lambda VPC ENI-<name>…`, deleted once
//! `available`). Every wait is a return with `InFlight` (the handle keeps the deadline,
//! 30 min from the first call), and each poll works out where it is from what AWS says,
//! so a resumed delete picks up where it stopped. Running out of time while interfaces
//! linger is only a warning: the function itself is deleted, the row is done.

use async_trait::async_trait;
use aws_sdk_lambda::types::{LastUpdateStatus, VpcConfig};

use super::eni::{self, SweepError};
use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::{now_ms, DeleteProgress, Handle};
use crate::read::props::{tag_list, Props};
use crate::read::{found, ReadError, ReadRequest, Reader, SdkReader};
use crate::request::DeleteRequest;
use crate::{Deleter, SdkCapabilities, SdkDeleter};
use serde_json::{json, Value};

/// How long the VPC clean-up (update wait + interface sweep) may take in all.
pub const VPC_CLEANUP_BUDGET_MS: u64 = 30 * 60 * 1000;

/// Poll interval while the `VpcConfig` update runs.
const UPDATE_POLL_MS: u64 = 2_000;
/// Retry interval of the interface sweep (cdkd's: every 15 s).
const SWEEP_POLL_MS: u64 = 15_000;

pub struct LambdaFunctionDeleter {
    lambda: aws_sdk_lambda::Client,
    ec2: aws_sdk_ec2::Client,
}

impl LambdaFunctionDeleter {
    pub fn new(lambda: aws_sdk_lambda::Client, ec2: aws_sdk_ec2::Client) -> Self {
        LambdaFunctionDeleter { lambda, ec2 }
    }

    fn region(&self) -> Option<&str> {
        self.lambda.config().region().map(|r| r.as_ref())
    }

    fn not_found(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let name = req.physical_id.as_str();
        let region = self.region();
        guard::not_found(
            req,
            region,
            is_function_id(name, region),
            &format!("Lambda says function {name} does not exist"),
        )
    }

    /// DeleteFunction: `Ok(true)` deleted, `Ok(false)` not found.
    async fn delete_function(&self, req: &DeleteRequest) -> Result<bool, DeleteError> {
        match self
            .lambda
            .delete_function()
            .function_name(&req.physical_id)
            .send()
            .await
        {
            Ok(_) => Ok(true),
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["ResourceNotFoundException"]) {
                    Ok(false)
                } else {
                    Err(DeleteError::from_aws(req, "DeleteFunction", &info))
                }
            }
        }
    }

    async fn start_vpc(
        &self,
        req: &DeleteRequest,
        vpc: &RecordedVpc,
    ) -> Result<DeleteProgress, DeleteError> {
        let started = now_ms();
        let deadline = eni::deadline_ms(started, VPC_CLEANUP_BUDGET_MS);
        let update = self
            .lambda
            .update_function_configuration()
            .function_name(&req.physical_id)
            .vpc_config(
                VpcConfig::builder()
                    .set_subnet_ids(Some(Vec::new()))
                    .set_security_group_ids(Some(Vec::new()))
                    .build(),
            )
            .send()
            .await;
        match update {
            Ok(out) if out.last_update_status() == Some(&LastUpdateStatus::InProgress) => {
                Ok(in_flight(started, deadline, 0, UPDATE_POLL_MS))
            }
            Ok(_) => self.advance(req, vpc, started, deadline, 0).await,
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["ResourceNotFoundException"]) {
                    let gone = self.not_found(req)?;
                    // Already gone (an earlier attempt deleted it): one best-effort pass
                    // over the interfaces it may have left, without waiting for them.
                    self.sweep_once(req, vpc).await;
                    return Ok(gone);
                }
                if info.code_is(&["ResourceConflictException"]) {
                    // Another update is running: wait for it, then go on.
                    return Ok(in_flight(started, deadline, 0, UPDATE_POLL_MS));
                }
                Err(DeleteError::from_aws(
                    req,
                    "UpdateFunctionConfiguration (empty VpcConfig)",
                    &info,
                ))
            }
        }
    }

    /// One step of the VPC delete, decided from the function's current state.
    async fn advance(
        &self,
        req: &DeleteRequest,
        vpc: &RecordedVpc,
        started_ms: u64,
        deadline_ms: u64,
        polls: u32,
    ) -> Result<DeleteProgress, DeleteError> {
        let now = now_ms();
        let exists = match self
            .lambda
            .get_function_configuration()
            .function_name(&req.physical_id)
            .send()
            .await
        {
            Ok(cfg) => {
                let updating = cfg.last_update_status() == Some(&LastUpdateStatus::InProgress);
                if updating && !eni::past_deadline(now, deadline_ms) {
                    return Ok(in_flight(started_ms, deadline_ms, polls, UPDATE_POLL_MS));
                }
                true
            }
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["ResourceNotFoundException"]) {
                    false
                } else if info.retryable {
                    return Ok(in_flight(started_ms, deadline_ms, polls, UPDATE_POLL_MS));
                } else {
                    return Err(DeleteError::from_aws(
                        req,
                        "GetFunctionConfiguration",
                        &info,
                    ));
                }
            }
        };
        if exists {
            match self.delete_function(req).await {
                Ok(_) => {}
                Err(e) if e.retryable => {
                    return Ok(in_flight(started_ms, deadline_ms, polls, UPDATE_POLL_MS))
                }
                Err(e) => return Err(e),
            }
        }
        self.sweep_step(req, vpc, started_ms, deadline_ms, polls)
            .await
    }

    /// After the function is gone: delete its available interfaces; wait for the rest
    /// until the deadline, then give up with a warning the report shows (the row is
    /// done either way).
    async fn sweep_step(
        &self,
        req: &DeleteRequest,
        vpc: &RecordedVpc,
        started_ms: u64,
        deadline_ms: u64,
        polls: u32,
    ) -> Result<DeleteProgress, DeleteError> {
        let name = eni::function_name_of(&req.physical_id);
        let lingering = match self.sweep(vpc, name).await {
            Ok(sweep) if sweep.remaining.is_empty() => return Ok(DeleteProgress::Done),
            Ok(sweep) => {
                let ids: Vec<String> = sweep.remaining.iter().map(|e| e.describe()).collect();
                super::name_some(&ids)
            }
            Err(SweepError { action, info }) if info.retryable => {
                format!("{action} failed: {}", info.message)
            }
            Err(SweepError { action, info }) => {
                let warning = format!(
                    "function deleted, but its VPC network interfaces were not cleaned up: {action} failed: {}",
                    info.message
                );
                tracing::warn!(function = name, "{warning}");
                return Ok(DeleteProgress::DoneWithWarning { warning });
            }
        };
        if eni::past_deadline(now_ms(), deadline_ms) {
            let warning = format!(
                "function deleted, but after {} min its VPC network interfaces are still there (delete them once available): {lingering}",
                VPC_CLEANUP_BUDGET_MS / 60_000
            );
            tracing::warn!(function = name, "{warning}");
            return Ok(DeleteProgress::DoneWithWarning { warning });
        }
        Ok(in_flight(started_ms, deadline_ms, polls, SWEEP_POLL_MS))
    }

    async fn sweep(&self, vpc: &RecordedVpc, name: &str) -> Result<eni::Sweep, SweepError> {
        let (filter, values) = if vpc.security_groups.is_empty() {
            ("subnet-id", &vpc.subnets)
        } else {
            ("group-id", &vpc.security_groups)
        };
        eni::sweep(&self.ec2, filter, values, |d| eni::is_function_eni(d, name)).await
    }

    async fn sweep_once(&self, req: &DeleteRequest, vpc: &RecordedVpc) {
        let name = eni::function_name_of(&req.physical_id);
        match self.sweep(vpc, name).await {
            Ok(s) if s.remaining.is_empty() => {}
            Ok(s) => {
                let ids: Vec<String> = s.remaining.iter().map(|e| e.describe()).collect();
                tracing::warn!(
                    function = name,
                    "function already gone; its VPC network interfaces are still there: {}",
                    super::name_some(&ids)
                );
            }
            Err(SweepError { action, info }) => tracing::warn!(
                function = name,
                "function already gone; sweeping its VPC network interfaces failed: {action}: {}",
                info.message
            ),
        }
    }
}

fn in_flight(started_ms: u64, deadline_ms: u64, polls: u32, delay_ms: u64) -> DeleteProgress {
    DeleteProgress::InFlight {
        handle: Handle::AwaitGone {
            started_ms,
            deadline_ms,
            polls,
        },
        expected_done_ms: eni::next_poll_ms(now_ms(), delay_ms, deadline_ms),
    }
}

/// The subnets and security groups of the record's `VpcConfig`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedVpc {
    pub subnets: Vec<String>,
    pub security_groups: Vec<String>,
}

/// The record's `VpcConfig`, when it names any subnet or security group (string ids
/// only; anything else is left out).
pub fn recorded_vpc(req: &DeleteRequest) -> Option<RecordedVpc> {
    let cfg = req.properties.get("VpcConfig")?;
    let list = |key: &str| -> Vec<String> {
        cfg.get(key)
            .and_then(|v| v.as_array())
            .map(|items| {
                items
                    .iter()
                    .filter_map(|v| v.as_str())
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let vpc = RecordedVpc {
        subnets: list("SubnetIds"),
        security_groups: list("SecurityGroupIds"),
    };
    (!vpc.subnets.is_empty() || !vpc.security_groups.is_empty()).then_some(vpc)
}

/// A function name, or a function ARN in `region`.
fn is_function_id(id: &str, region: Option<&str>) -> bool {
    if id.starts_with("arn:") {
        return region.is_some_and(|r| guard::arn_in(id, "lambda", r));
    }
    !id.is_empty() && !id.contains(':')
}

impl SdkDeleter for LambdaFunctionDeleter {
    const TYPES: &'static [&'static str] = &["AWS::Lambda::Function"];
    /// Cloud Control deletes a VPC function without the network interfaces Lambda leaves
    /// behind; this deleter sweeps them. Cloud Control's identifier is the function name.
    const CAPABILITIES: SdkCapabilities = SdkCapabilities {
        final_snapshot: false,
        completes_cloud_control: true,
    };
}

#[async_trait]
impl Deleter for LambdaFunctionDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        if let Some(vpc) = recorded_vpc(req) {
            return self.start_vpc(req, &vpc).await;
        }
        match self.delete_function(req).await? {
            true => Ok(DeleteProgress::Done),
            false => self.not_found(req),
        }
    }

    async fn poll(
        &self,
        req: &DeleteRequest,
        handle: &Handle,
    ) -> Result<DeleteProgress, DeleteError> {
        let (
            Some(vpc),
            Handle::AwaitGone {
                started_ms,
                deadline_ms,
                polls,
            },
        ) = (recorded_vpc(req), handle)
        else {
            return super::no_poll(req, handle);
        };
        self.advance(
            req,
            &vpc,
            *started_ms,
            *deadline_ms,
            polls.saturating_add(1),
        )
        .await
    }
}

// ---------------------------------------------------------------------------------
// Reader (docs/repairs.md, "Per resource"): GetFunction (configuration and tags). Environment
// values come back decrypted; redaction by position against the record hides them.

impl SdkReader for LambdaFunctionDeleter {
    const READS: &'static [&'static str] = &["AWS::Lambda::Function"];
    const ATTRIBUTES: &'static [(&'static str, &'static str)] = &[("AWS::Lambda::Function", "Arn")];
}

#[async_trait]
impl Reader for LambdaFunctionDeleter {
    async fn read(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let name = req.physical_id.as_str();
        let sent = self.lambda.get_function().function_name(name).send().await;
        let Some(out) = found("GetFunction", &["ResourceNotFoundException"], sent)? else {
            return Ok(None);
        };
        let Some(c) = out.configuration() else {
            return Ok(None);
        };
        let mut p = Props::new();
        p.opt("FunctionName", c.function_name());
        p.opt("Description", c.description().filter(|d| !d.is_empty()));
        p.opt("Runtime", c.runtime().map(|r| r.as_str()));
        p.opt("Handler", c.handler());
        p.opt("Role", c.role());
        p.opt("MemorySize", c.memory_size());
        p.opt("Timeout", c.timeout());
        p.opt("PackageType", c.package_type().map(|t| t.as_str()));
        p.list(
            "Architectures",
            c.architectures()
                .iter()
                .map(|a| a.as_str().to_owned())
                .collect(),
        );
        if let Some(vars) = c.environment().and_then(|e| e.variables()) {
            let vars: serde_json::Map<String, Value> = vars
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            p.set("Environment", json!({ "Variables": vars }));
        }
        p.list(
            "Layers",
            c.layers()
                .iter()
                .filter_map(|l| l.arn().map(str::to_owned))
                .collect(),
        );
        p.opt(
            "TracingConfig",
            c.tracing_config()
                .and_then(|t| t.mode())
                .map(|m| json!({"Mode": m.as_str()})),
        );
        if let Some(v) = c.vpc_config() {
            if !v.subnet_ids().is_empty() || !v.security_group_ids().is_empty() {
                p.set(
                    "VpcConfig",
                    json!({"SubnetIds": v.subnet_ids(), "SecurityGroupIds": v.security_group_ids()}),
                );
            }
        }
        p.opt("KmsKeyArn", c.kms_key_arn());
        p.opt(
            "EphemeralStorage",
            c.ephemeral_storage().map(|e| json!({"Size": e.size()})),
        );
        if let Some(tags) = out.tags() {
            p.nonempty("Tags", tag_list(tags.clone()));
        }
        Ok(Some(p.build()))
    }

    /// GetFunctionConfiguration: Arn (the unqualified function ARN).
    async fn attributes(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let sent = self
            .lambda
            .get_function_configuration()
            .function_name(&req.physical_id)
            .send()
            .await;
        let Some(c) = found(
            "GetFunctionConfiguration",
            &["ResourceNotFoundException"],
            sent,
        )?
        else {
            return Ok(None);
        };
        let mut p = Props::new();
        p.opt("Arn", c.function_arn());
        Ok(Some(p.build()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn req(properties: Value) -> DeleteRequest {
        serde_json::from_value(json!({
            "logicalId": "Fn",
            "resourceType": "AWS::Lambda::Function",
            "physicalId": "fn",
            "properties": properties,
            "region": "us-east-1",
            "run": {"runId": "r", "stack": "S", "stateBucket": "b", "statePrefix": "cdkd"}
        }))
        .unwrap()
    }

    #[test]
    fn vpc_cleanup_applies_only_when_the_record_names_subnets_or_security_groups() {
        assert_eq!(recorded_vpc(&req(json!({}))), None);
        assert_eq!(
            recorded_vpc(&req(
                json!({"VpcConfig": {"SubnetIds": [], "SecurityGroupIds": []}})
            )),
            None
        );
        assert_eq!(
            recorded_vpc(&req(
                json!({"VpcConfig": {"SubnetIds": ["subnet-1", {"Ref": "X"}], "SecurityGroupIds": ["sg-1"]}})
            )),
            Some(RecordedVpc {
                subnets: vec!["subnet-1".into()],
                security_groups: vec!["sg-1".into()],
            })
        );
    }
}
