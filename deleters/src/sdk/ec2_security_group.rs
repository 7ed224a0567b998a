//! `AWS::EC2::SecurityGroup`: the physical id is the group id (`sg-…`).
//!
//! Each call first sweeps the Lambda network interfaces that still use the group
//! (`AWS Lambda VPC ENI…`, status `available` → `DeleteNetworkInterface`, docs/destroy.md, "SDK deleters").
//! While any interface uses the group, or `DeleteSecurityGroup` answers `DependencyViolation`,
//! the delete stays in flight and a later call tries again; the handle keeps the deadline
//! (30 min from the first call) across wave invocations. After it the row fails naming the
//! group and what still uses it. `InvalidGroup.NotFound` counts as gone only under the
//! region guard.

use async_trait::async_trait;

use super::eni::{self, EniSummary, SweepError};
use crate::error::{aws_error_info, AwsErrorInfo, DeleteError, DeleteErrorKind};
use crate::guard;
use crate::progress::{backoff_ms, now_ms, DeleteProgress, Handle};
use crate::read::props::{tag_list, Props};
use crate::read::{found, ReadError, ReadRequest, Reader, SdkReader};
use crate::request::DeleteRequest;
use crate::{Deleter, SdkCapabilities, SdkDeleter};
use serde_json::Value;

/// How long a group may stay in use before the delete gives up.
pub const SECURITY_GROUP_DELETE_BUDGET_MS: u64 = 30 * 60 * 1000;

/// First retry delay after the group was found in use (×1.5 per retry, capped).
const RETRY_FIRST_MS: u64 = 5_000;
const RETRY_CAP_MS: u64 = 30_000;

pub struct SecurityGroupDeleter {
    ec2: aws_sdk_ec2::Client,
}

/// A security group id: `sg-` followed by hex digits.
pub fn is_group_id(id: &str) -> bool {
    id.strip_prefix("sg-")
        .is_some_and(|hex| !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Why the group cannot be deleted yet.
#[derive(Debug, Clone, PartialEq, Eq)]
enum InUse {
    /// Network interfaces still use it (Lambda's not yet available, or others').
    Interfaces {
        lambda: Vec<EniSummary>,
        others: Vec<EniSummary>,
        swept: usize,
    },
    /// `DeleteSecurityGroup` answered `DependencyViolation`.
    Dependency(String),
    /// A retryable failure of an AWS call (throttling, 5xx).
    Transient(String),
}

impl InUse {
    fn describe(&self) -> String {
        match self {
            InUse::Interfaces {
                lambda,
                others,
                swept,
            } => {
                let mut parts = Vec::new();
                if !lambda.is_empty() {
                    let names: Vec<String> = lambda.iter().map(EniSummary::describe).collect();
                    parts.push(format!(
                        "Lambda network interfaces not yet released: {}",
                        super::name_some(&names)
                    ));
                }
                if !others.is_empty() {
                    let names: Vec<String> = others.iter().map(EniSummary::describe).collect();
                    parts.push(format!(
                        "other network interfaces: {}",
                        super::name_some(&names)
                    ));
                }
                if parts.is_empty() {
                    format!("{swept} Lambda network interface(s) were just deleted")
                } else {
                    parts.join("; ")
                }
            }
            InUse::Dependency(msg) => format!("DeleteSecurityGroup says: {msg}"),
            InUse::Transient(msg) => format!("the last attempt failed: {msg}"),
        }
    }
}

/// What a failed `DeleteSecurityGroup` means.
#[derive(Debug, Clone, PartialEq, Eq)]
enum DeleteAnswer {
    NotFound,
    /// Something still uses the group (or a transient failure): try again later.
    InUse(InUse),
    Fail(AwsErrorInfo),
}

fn delete_answer(info: AwsErrorInfo) -> DeleteAnswer {
    if info.code_is(&["InvalidGroup.NotFound"]) {
        DeleteAnswer::NotFound
    } else if info.code_is(&["DependencyViolation"]) || info.message.contains("dependent object") {
        DeleteAnswer::InUse(InUse::Dependency(info.message))
    } else if info.retryable {
        DeleteAnswer::InUse(InUse::Transient(info.message))
    } else {
        DeleteAnswer::Fail(info)
    }
}

impl SecurityGroupDeleter {
    pub fn new(ec2: aws_sdk_ec2::Client) -> Self {
        SecurityGroupDeleter { ec2 }
    }

    fn region(&self) -> Option<&str> {
        self.ec2.config().region().map(|r| r.as_ref())
    }

    /// One attempt: sweep, then delete if nothing uses the group any more.
    async fn attempt(
        &self,
        req: &DeleteRequest,
        started_ms: u64,
        deadline_ms: u64,
        polls: u32,
    ) -> Result<DeleteProgress, DeleteError> {
        let group = req.physical_id.as_str();
        let in_use = match eni::sweep(
            &self.ec2,
            "group-id",
            std::slice::from_ref(&req.physical_id),
            eni::is_lambda_eni,
        )
        .await
        {
            Ok(sweep) => {
                if sweep.deleted.is_empty() && sweep.remaining.is_empty() && sweep.others.is_empty()
                {
                    None
                } else {
                    if !sweep.deleted.is_empty() {
                        tracing::info!(
                            group,
                            interfaces = ?sweep.deleted,
                            "deleted Lambda network interfaces that kept the security group in use"
                        );
                    }
                    Some(InUse::Interfaces {
                        lambda: sweep.remaining,
                        others: sweep.others,
                        swept: sweep.deleted.len(),
                    })
                }
            }
            Err(SweepError { info, .. }) if info.retryable => Some(InUse::Transient(info.message)),
            Err(SweepError { action, info }) => {
                return Err(DeleteError::from_aws(req, action, &info))
            }
        };
        let in_use = match in_use {
            Some(u) => u,
            None => match self
                .ec2
                .delete_security_group()
                .group_id(group)
                .send()
                .await
            {
                Ok(_) => return Ok(DeleteProgress::Done),
                Err(e) => match delete_answer(aws_error_info(&e)) {
                    DeleteAnswer::NotFound => {
                        return guard::not_found(
                            req,
                            self.region(),
                            is_group_id(group),
                            &format!("EC2 says security group {group} does not exist"),
                        )
                    }
                    DeleteAnswer::InUse(u) => u,
                    DeleteAnswer::Fail(info) => {
                        return Err(DeleteError::from_aws(req, "DeleteSecurityGroup", &info))
                    }
                },
            },
        };
        let now = now_ms();
        if eni::past_deadline(now, deadline_ms) {
            return Err(DeleteError::new(
                req,
                DeleteErrorKind::Timeout,
                format!(
                    "security group {group} is still in use after {} min: {}",
                    SECURITY_GROUP_DELETE_BUDGET_MS / 60_000,
                    in_use.describe()
                ),
            ));
        }
        tracing::debug!(group, reason = %in_use.describe(), "security group in use; retrying later");
        Ok(DeleteProgress::InFlight {
            handle: Handle::AwaitGone {
                started_ms,
                deadline_ms,
                polls,
            },
            expected_done_ms: eni::next_poll_ms(
                now,
                backoff_ms(polls, RETRY_FIRST_MS, RETRY_CAP_MS),
                deadline_ms,
            ),
        })
    }
}

impl SdkDeleter for SecurityGroupDeleter {
    const TYPES: &'static [&'static str] = &["AWS::EC2::SecurityGroup"];
    /// Cloud Control gives up on a group still held by Lambda's network interfaces; this
    /// deleter sweeps them and waits for the group (30 min). Cloud Control's identifier is
    /// the group id.
    const CAPABILITIES: SdkCapabilities = SdkCapabilities {
        final_snapshot: false,
        completes_cloud_control: true,
    };
}

#[async_trait]
impl Deleter for SecurityGroupDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let started = now_ms();
        self.attempt(
            req,
            started,
            eni::deadline_ms(started, SECURITY_GROUP_DELETE_BUDGET_MS),
            0,
        )
        .await
    }

    async fn poll(
        &self,
        req: &DeleteRequest,
        handle: &Handle,
    ) -> Result<DeleteProgress, DeleteError> {
        let Handle::AwaitGone {
            started_ms,
            deadline_ms,
            polls,
        } = handle
        else {
            return super::no_poll(req, handle);
        };
        self.attempt(req, *started_ms, *deadline_ms, polls.saturating_add(1))
            .await
    }
}

// ---------------------------------------------------------------------------------
// Reader (docs/repairs.md, "Per resource"): DescribeSecurityGroups; each permission's ranges are
// flattened into CloudFormation's one-source-per-rule shape.

impl SdkReader for SecurityGroupDeleter {
    const READS: &'static [&'static str] = &["AWS::EC2::SecurityGroup"];
    const ATTRIBUTES: &'static [(&'static str, &'static str)] = &[
        ("AWS::EC2::SecurityGroup", "GroupId"),
        ("AWS::EC2::SecurityGroup", "VpcId"),
    ];
}

impl SecurityGroupDeleter {
    /// DescribeSecurityGroups' answer for group `id`; `None` when it does not exist.
    async fn describe(
        &self,
        id: &str,
    ) -> Result<Option<aws_sdk_ec2::types::SecurityGroup>, ReadError> {
        let sent = self
            .ec2
            .describe_security_groups()
            .group_ids(id)
            .send()
            .await;
        let Some(out) = found("DescribeSecurityGroups", &["InvalidGroup.NotFound"], sent)? else {
            return Ok(None);
        };
        Ok(out
            .security_groups()
            .iter()
            .find(|g| g.group_id() == Some(id))
            .cloned())
    }
}

/// The CloudFormation rules of one permission: one per CIDR, IPv6 CIDR, group or prefix
/// list. `peer` names the group key (`SourceSecurityGroupId` / `DestinationSecurityGroupId`).
fn rules(perm: &aws_sdk_ec2::types::IpPermission, ingress: bool) -> Vec<Value> {
    let base = |p: &mut Props| {
        p.opt("IpProtocol", perm.ip_protocol());
        p.opt("FromPort", perm.from_port());
        p.opt("ToPort", perm.to_port());
    };
    let mut out = Vec::new();
    for r in perm.ip_ranges() {
        let mut p = Props::new();
        base(&mut p);
        p.opt("CidrIp", r.cidr_ip());
        p.opt("Description", r.description());
        out.push(p.build());
    }
    for r in perm.ipv6_ranges() {
        let mut p = Props::new();
        base(&mut p);
        p.opt("CidrIpv6", r.cidr_ipv6());
        p.opt("Description", r.description());
        out.push(p.build());
    }
    let (group_key, prefix_key) = if ingress {
        ("SourceSecurityGroupId", "SourcePrefixListId")
    } else {
        ("DestinationSecurityGroupId", "DestinationPrefixListId")
    };
    for g in perm.user_id_group_pairs() {
        let mut p = Props::new();
        base(&mut p);
        p.opt(group_key, g.group_id());
        p.opt("Description", g.description());
        out.push(p.build());
    }
    for l in perm.prefix_list_ids() {
        let mut p = Props::new();
        base(&mut p);
        p.opt(prefix_key, l.prefix_list_id());
        p.opt("Description", l.description());
        out.push(p.build());
    }
    out
}

#[async_trait]
impl Reader for SecurityGroupDeleter {
    async fn read(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let Some(g) = self.describe(&req.physical_id).await? else {
            return Ok(None);
        };
        let mut p = Props::new();
        p.opt("GroupDescription", g.description());
        p.opt("GroupName", g.group_name());
        p.opt("VpcId", g.vpc_id());
        let ingress: Vec<Value> = g
            .ip_permissions()
            .iter()
            .flat_map(|x| rules(x, true))
            .collect();
        p.nonempty("SecurityGroupIngress", Value::Array(ingress));
        let egress: Vec<Value> = g
            .ip_permissions_egress()
            .iter()
            .flat_map(|x| rules(x, false))
            .collect();
        p.nonempty("SecurityGroupEgress", Value::Array(egress));
        p.nonempty(
            "Tags",
            tag_list(g.tags().iter().filter_map(|t| Some((t.key()?, t.value()?)))),
        );
        Ok(Some(p.build()))
    }

    /// DescribeSecurityGroups: GroupId, VpcId.
    async fn attributes(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let Some(g) = self.describe(&req.physical_id).await? else {
            return Ok(None);
        };
        let mut p = Props::new();
        p.opt("GroupId", g.group_id());
        p.opt("VpcId", g.vpc_id());
        Ok(Some(p.build()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_id_is_sg_dash_hex_only() {
        assert!(is_group_id("sg-0123abcdef"));
        assert!(!is_group_id("sg-"));
        assert!(!is_group_id("my-group"));
        assert!(!is_group_id("sg-xyz"));
    }

    fn info(code: &str, message: &str, retryable: bool) -> AwsErrorInfo {
        AwsErrorInfo {
            code: Some(code.into()),
            status: Some(400),
            message: message.into(),
            throttling: false,
            retryable,
        }
    }

    #[test]
    fn security_group_dependency_violation_is_retried_later_not_failed() {
        let msg = "DependencyViolation: resource sg-1 has a dependent object";
        assert_eq!(
            delete_answer(info("DependencyViolation", msg, true)),
            DeleteAnswer::InUse(InUse::Dependency(msg.into()))
        );
        assert_eq!(
            delete_answer(info(
                "InvalidGroup.InUse",
                "sg-1 has a dependent object",
                false
            )),
            DeleteAnswer::InUse(InUse::Dependency("sg-1 has a dependent object".into()))
        );
    }

    #[test]
    fn security_group_not_found_goes_to_the_region_guard_and_other_errors_fail() {
        assert_eq!(
            delete_answer(info("InvalidGroup.NotFound", "no such group", false)),
            DeleteAnswer::NotFound
        );
        assert_eq!(
            delete_answer(info("RequestLimitExceeded", "slow down", true)),
            DeleteAnswer::InUse(InUse::Transient("slow down".into()))
        );
        let denied = info("UnauthorizedOperation", "not allowed", false);
        assert_eq!(delete_answer(denied.clone()), DeleteAnswer::Fail(denied));
        let malformed = info("InvalidGroupId.Malformed", "bad id", false);
        assert_eq!(
            delete_answer(malformed.clone()),
            DeleteAnswer::Fail(malformed)
        );
    }

    #[test]
    fn in_use_message_names_the_interfaces_that_still_use_the_group() {
        let u = InUse::Interfaces {
            lambda: vec![EniSummary {
                id: "eni-1".into(),
                status: "in-use".into(),
                description: "AWS Lambda VPC ENI-fn-1".into(),
            }],
            others: vec![EniSummary {
                id: "eni-2".into(),
                status: "in-use".into(),
                description: "web server".into(),
            }],
            swept: 0,
        };
        assert_eq!(
            u.describe(),
            "Lambda network interfaces not yet released: eni-1 (in-use, \"AWS Lambda VPC ENI-fn-1\"); other network interfaces: eni-2 (in-use, \"web server\")"
        );
    }
}
