//! `AWS::IAM::ManagedPolicy`: the physical id is the policy ARN. Detach it from every
//! role, user and group, delete every non-default version, then delete it (docs/destroy.md, "SDK deleters").

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::DeleteProgress;
use crate::read::props::{policy_document, Props};
use crate::read::{answered, found, ReadError, ReadRequest, Reader, SdkReader};
use crate::request::DeleteRequest;
use crate::{Deleter, SdkDeleter};
use serde_json::Value;

pub struct IamManagedPolicyDeleter {
    iam: aws_sdk_iam::Client,
}

impl IamManagedPolicyDeleter {
    pub fn new(iam: aws_sdk_iam::Client) -> Self {
        IamManagedPolicyDeleter { iam }
    }
}

/// `arn:<partition>:iam::<account>:policy/...`
pub fn is_policy_arn(id: &str) -> bool {
    guard::arn_service(id) == Some("iam")
        && id
            .splitn(6, ':')
            .nth(5)
            .is_some_and(|r| r.starts_with("policy/"))
}

fn ignore_missing<E>(
    req: &DeleteRequest,
    action: &str,
    r: Result<
        E,
        aws_smithy_runtime_api::client::result::SdkError<
            impl aws_smithy_types::error::metadata::ProvideErrorMetadata + std::error::Error + 'static,
            aws_smithy_runtime_api::client::orchestrator::HttpResponse,
        >,
    >,
) -> Result<(), DeleteError> {
    match r {
        Ok(_) => Ok(()),
        Err(e) => {
            let info = aws_error_info(&e);
            if info.code_is(&["NoSuchEntity"]) {
                Ok(())
            } else {
                Err(DeleteError::from_aws(req, action, &info))
            }
        }
    }
}

impl SdkDeleter for IamManagedPolicyDeleter {
    const TYPES: &'static [&'static str] = &["AWS::IAM::ManagedPolicy"];
}

#[async_trait]
impl Deleter for IamManagedPolicyDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let arn = req.physical_id.as_str();
        let iam = &self.iam;
        if let Err(e) = iam.get_policy().policy_arn(arn).send().await {
            let info = aws_error_info(&e);
            if info.code_is(&["NoSuchEntity"]) {
                return guard::not_found(
                    req,
                    iam.config().region().map(|r| r.as_ref()),
                    is_policy_arn(arn),
                    &format!("IAM says managed policy {arn} does not exist"),
                );
            }
            return Err(DeleteError::from_aws(req, "GetPolicy", &info));
        }

        let mut pages = iam
            .list_entities_for_policy()
            .policy_arn(arn)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| {
                DeleteError::from_aws(req, "ListEntitiesForPolicy", &aws_error_info(&e))
            })?;
            for r in page.policy_roles() {
                let Some(name) = r.role_name() else { continue };
                let out = iam
                    .detach_role_policy()
                    .role_name(name)
                    .policy_arn(arn)
                    .send()
                    .await;
                ignore_missing(req, &format!("DetachRolePolicy from role {name}"), out)?;
            }
            for u in page.policy_users() {
                let Some(name) = u.user_name() else { continue };
                let out = iam
                    .detach_user_policy()
                    .user_name(name)
                    .policy_arn(arn)
                    .send()
                    .await;
                ignore_missing(req, &format!("DetachUserPolicy from user {name}"), out)?;
            }
            for g in page.policy_groups() {
                let Some(name) = g.group_name() else { continue };
                let out = iam
                    .detach_group_policy()
                    .group_name(name)
                    .policy_arn(arn)
                    .send()
                    .await;
                ignore_missing(req, &format!("DetachGroupPolicy from group {name}"), out)?;
            }
        }

        let versions = iam
            .list_policy_versions()
            .policy_arn(arn)
            .into_paginator()
            .items()
            .send()
            .try_collect()
            .await
            .map_err(|e| DeleteError::from_aws(req, "ListPolicyVersions", &aws_error_info(&e)))?;
        for v in versions.iter().filter(|v| !v.is_default_version()) {
            let Some(id) = v.version_id() else { continue };
            let out = iam
                .delete_policy_version()
                .policy_arn(arn)
                .version_id(id)
                .send()
                .await;
            ignore_missing(req, &format!("DeletePolicyVersion {id}"), out)?;
        }

        match iam.delete_policy().policy_arn(arn).send().await {
            Ok(_) => Ok(DeleteProgress::Done),
            Err(e) if aws_error_info(&e).code_is(&["NoSuchEntity"]) => Ok(DeleteProgress::Done),
            Err(e) => {
                let mut info = aws_error_info(&e);
                info.retryable |= info.code_is(&["DeleteConflict"]);
                Err(DeleteError::from_aws(req, "DeletePolicy", &info))
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Reader (docs/repairs.md, "Per resource"): GetPolicy, the default version's document, and the
// roles, users and groups it is attached to.

impl SdkReader for IamManagedPolicyDeleter {
    const READS: &'static [&'static str] = &["AWS::IAM::ManagedPolicy"];
}

#[async_trait]
impl Reader for IamManagedPolicyDeleter {
    async fn read(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let arn = req.physical_id.as_str();
        let iam = &self.iam;
        let sent = iam.get_policy().policy_arn(arn).send().await;
        let Some(out) = found("GetPolicy", &["NoSuchEntity"], sent)? else {
            return Ok(None);
        };
        let Some(policy) = out.policy() else {
            return Ok(None);
        };
        let mut p = Props::new();
        p.opt("ManagedPolicyName", policy.policy_name());
        p.opt("Path", policy.path());
        p.opt(
            "Description",
            policy.description().filter(|d| !d.is_empty()),
        );
        if let Some(version) = policy.default_version_id() {
            let v = answered(
                "GetPolicyVersion",
                iam.get_policy_version()
                    .policy_arn(arn)
                    .version_id(version)
                    .send()
                    .await,
            )?;
            p.opt(
                "PolicyDocument",
                v.policy_version()
                    .and_then(|v| v.document())
                    .map(policy_document),
            );
        }
        let entities = answered(
            "ListEntitiesForPolicy",
            iam.list_entities_for_policy().policy_arn(arn).send().await,
        )?;
        p.list(
            "Roles",
            entities
                .policy_roles()
                .iter()
                .filter_map(|r| r.role_name().map(str::to_owned))
                .collect(),
        );
        p.list(
            "Users",
            entities
                .policy_users()
                .iter()
                .filter_map(|u| u.user_name().map(str::to_owned))
                .collect(),
        );
        p.list(
            "Groups",
            entities
                .policy_groups()
                .iter()
                .filter_map(|g| g.group_name().map(str::to_owned))
                .collect(),
        );
        Ok(Some(p.build()))
    }
}

#[cfg(test)]
mod tests {
    use super::is_policy_arn;

    #[test]
    fn managed_policy_identifier_is_a_policy_arn() {
        assert!(is_policy_arn("arn:aws:iam::123456789012:policy/p"));
        assert!(is_policy_arn("arn:aws:iam::123456789012:policy/path/p"));
        assert!(!is_policy_arn("p"));
        assert!(!is_policy_arn("arn:aws:iam::123456789012:role/p"));
    }
}
