//! `AWS::IAM::User`: delete the login profile and access keys, detach managed and
//! delete inline policies, leave every group, drop the permissions boundary, then delete
//! the user (spec §3.3).

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::{DeleteProgress, Handle};
use crate::request::DeleteRequest;
use crate::sdk::iam_role::is_iam_name;
use crate::sdk::ignore_no_such_entity;
use crate::Deleter;

pub struct IamUserDeleter {
    iam: aws_sdk_iam::Client,
}

impl IamUserDeleter {
    pub fn new(iam: aws_sdk_iam::Client) -> Self {
        IamUserDeleter { iam }
    }
}

#[async_trait]
impl Deleter for IamUserDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let user = req.physical_id.as_str();
        let iam = &self.iam;
        let has_boundary = match iam.get_user().user_name(user).send().await {
            Ok(out) => out.user().and_then(|u| u.permissions_boundary()).is_some(),
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["NoSuchEntity"]) {
                    return guard::not_found(
                        req,
                        iam.config().region().map(|r| r.as_ref()),
                        is_iam_name(user),
                        &format!("IAM says user {user} does not exist"),
                    );
                }
                return Err(DeleteError::from_aws(req, "GetUser", &info));
            }
        };
        let out = iam.delete_login_profile().user_name(user).send().await;
        ignore_no_such_entity(req, "DeleteLoginProfile", out)?;

        let keys = iam
            .list_access_keys()
            .user_name(user)
            .into_paginator()
            .items()
            .send()
            .try_collect()
            .await
            .map_err(|e| DeleteError::from_aws(req, "ListAccessKeys", &aws_error_info(&e)))?;
        for key in keys {
            let Some(id) = key.access_key_id() else {
                continue;
            };
            let out = iam
                .delete_access_key()
                .user_name(user)
                .access_key_id(id)
                .send()
                .await;
            ignore_no_such_entity(req, &format!("DeleteAccessKey {id}"), out)?;
        }

        let attached = iam
            .list_attached_user_policies()
            .user_name(user)
            .into_paginator()
            .items()
            .send()
            .try_collect()
            .await
            .map_err(|e| {
                DeleteError::from_aws(req, "ListAttachedUserPolicies", &aws_error_info(&e))
            })?;
        for p in attached {
            let Some(arn) = p.policy_arn() else { continue };
            let out = iam
                .detach_user_policy()
                .user_name(user)
                .policy_arn(arn)
                .send()
                .await;
            ignore_no_such_entity(req, &format!("DetachUserPolicy {arn}"), out)?;
        }

        let inline = iam
            .list_user_policies()
            .user_name(user)
            .into_paginator()
            .items()
            .send()
            .try_collect()
            .await
            .map_err(|e| DeleteError::from_aws(req, "ListUserPolicies", &aws_error_info(&e)))?;
        for name in inline {
            let out = iam
                .delete_user_policy()
                .user_name(user)
                .policy_name(&name)
                .send()
                .await;
            ignore_no_such_entity(req, &format!("DeleteUserPolicy {name}"), out)?;
        }

        let groups = iam
            .list_groups_for_user()
            .user_name(user)
            .into_paginator()
            .items()
            .send()
            .try_collect()
            .await
            .map_err(|e| DeleteError::from_aws(req, "ListGroupsForUser", &aws_error_info(&e)))?;
        for g in groups {
            let name = g.group_name();
            let out = iam
                .remove_user_from_group()
                .group_name(name)
                .user_name(user)
                .send()
                .await;
            ignore_no_such_entity(req, &format!("RemoveUserFromGroup {name}"), out)?;
        }

        if has_boundary {
            let out = iam
                .delete_user_permissions_boundary()
                .user_name(user)
                .send()
                .await;
            ignore_no_such_entity(req, "DeleteUserPermissionsBoundary", out)?;
        }

        match iam.delete_user().user_name(user).send().await {
            Ok(_) => Ok(DeleteProgress::Done),
            Err(e) if aws_error_info(&e).code_is(&["NoSuchEntity"]) => Ok(DeleteProgress::Done),
            Err(e) => {
                let mut info = aws_error_info(&e);
                info.retryable |= info.code_is(&["DeleteConflict"]);
                Err(DeleteError::from_aws(req, "DeleteUser", &info))
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
