//! `AWS::IAM::Role`: detach every attached managed policy, delete every inline policy,
//! remove the role from every instance profile, then delete the role (spec §3.3). This
//! also covers policies attached outside the stack.

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::{DeleteProgress, Handle};
use crate::request::DeleteRequest;
use crate::Deleter;

pub struct IamRoleDeleter {
    iam: aws_sdk_iam::Client,
}

impl IamRoleDeleter {
    pub fn new(iam: aws_sdk_iam::Client) -> Self {
        IamRoleDeleter { iam }
    }
}

/// A role name (not an ARN or a path).
pub fn is_iam_name(id: &str) -> bool {
    !id.is_empty() && id.len() <= 128 && !id.contains(':') && !id.contains('/')
}

#[async_trait]
impl Deleter for IamRoleDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let role = req.physical_id.as_str();
        let iam = &self.iam;
        if let Err(e) = iam.get_role().role_name(role).send().await {
            let info = aws_error_info(&e);
            if info.code_is(&["NoSuchEntity"]) {
                return guard::not_found(
                    req,
                    iam.config().region().map(|r| r.as_ref()),
                    is_iam_name(role),
                    &format!("IAM says role {role} does not exist"),
                );
            }
            return Err(DeleteError::from_aws(req, "GetRole", &info));
        }

        let attached = iam
            .list_attached_role_policies()
            .role_name(role)
            .into_paginator()
            .items()
            .send()
            .try_collect()
            .await
            .map_err(|e| {
                DeleteError::from_aws(req, "ListAttachedRolePolicies", &aws_error_info(&e))
            })?;
        for policy in attached {
            let Some(arn) = policy.policy_arn() else {
                continue;
            };
            if let Err(e) = iam
                .detach_role_policy()
                .role_name(role)
                .policy_arn(arn)
                .send()
                .await
            {
                let info = aws_error_info(&e);
                if !info.code_is(&["NoSuchEntity"]) {
                    return Err(DeleteError::from_aws(
                        req,
                        &format!("DetachRolePolicy {arn}"),
                        &info,
                    ));
                }
            }
        }

        let inline = iam
            .list_role_policies()
            .role_name(role)
            .into_paginator()
            .items()
            .send()
            .try_collect()
            .await
            .map_err(|e| DeleteError::from_aws(req, "ListRolePolicies", &aws_error_info(&e)))?;
        for name in inline {
            if let Err(e) = iam
                .delete_role_policy()
                .role_name(role)
                .policy_name(&name)
                .send()
                .await
            {
                let info = aws_error_info(&e);
                if !info.code_is(&["NoSuchEntity"]) {
                    return Err(DeleteError::from_aws(
                        req,
                        &format!("DeleteRolePolicy {name}"),
                        &info,
                    ));
                }
            }
        }

        let profiles = iam
            .list_instance_profiles_for_role()
            .role_name(role)
            .into_paginator()
            .items()
            .send()
            .try_collect()
            .await
            .map_err(|e| {
                DeleteError::from_aws(req, "ListInstanceProfilesForRole", &aws_error_info(&e))
            })?;
        for profile in profiles {
            let name = profile.instance_profile_name();
            if let Err(e) = iam
                .remove_role_from_instance_profile()
                .instance_profile_name(name)
                .role_name(role)
                .send()
                .await
            {
                let info = aws_error_info(&e);
                if !info.code_is(&["NoSuchEntity"]) {
                    return Err(DeleteError::from_aws(
                        req,
                        &format!("RemoveRoleFromInstanceProfile {name}"),
                        &info,
                    ));
                }
            }
        }

        match iam.delete_role().role_name(role).send().await {
            Ok(_) => Ok(DeleteProgress::Done),
            // It existed a moment ago (GetRole above): someone else finished the job.
            Err(e) if aws_error_info(&e).code_is(&["NoSuchEntity"]) => Ok(DeleteProgress::Done),
            Err(e) => {
                let mut info = aws_error_info(&e);
                // A policy or profile attached between our listing and the delete.
                info.retryable |= info.code_is(&["DeleteConflict"]);
                Err(DeleteError::from_aws(req, "DeleteRole", &info))
            }
        }
    }

    async fn poll(
        &self,
        req: &DeleteRequest,
        handle: &Handle,
    ) -> Result<DeleteProgress, DeleteError> {
        super::no_poll(req, handle)
    }
}
