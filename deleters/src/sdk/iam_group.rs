//! `AWS::IAM::Group`: remove every member, detach managed and delete inline policies,
//! then delete the group (spec §3.3).

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::{DeleteProgress, Handle};
use crate::request::DeleteRequest;
use crate::sdk::iam_role::is_iam_name;
use crate::sdk::ignore_no_such_entity;
use crate::Deleter;

pub struct IamGroupDeleter {
    iam: aws_sdk_iam::Client,
}

impl IamGroupDeleter {
    pub fn new(iam: aws_sdk_iam::Client) -> Self {
        IamGroupDeleter { iam }
    }
}

#[async_trait]
impl Deleter for IamGroupDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let group = req.physical_id.as_str();
        let iam = &self.iam;
        let mut pages = iam.get_group().group_name(group).into_paginator().send();
        let mut members = Vec::new();
        while let Some(page) = pages.next().await {
            match page {
                Ok(p) => members.extend(p.users().iter().map(|u| u.user_name().to_owned())),
                Err(e) => {
                    let info = aws_error_info(&e);
                    if info.code_is(&["NoSuchEntity"]) {
                        return guard::not_found(
                            req,
                            iam.config().region().map(|r| r.as_ref()),
                            is_iam_name(group),
                            &format!("IAM says group {group} does not exist"),
                        );
                    }
                    return Err(DeleteError::from_aws(req, "GetGroup", &info));
                }
            }
        }
        for user in &members {
            let out = iam
                .remove_user_from_group()
                .group_name(group)
                .user_name(user)
                .send()
                .await;
            ignore_no_such_entity(req, &format!("RemoveUserFromGroup {user}"), out)?;
        }

        let attached = iam
            .list_attached_group_policies()
            .group_name(group)
            .into_paginator()
            .items()
            .send()
            .try_collect()
            .await
            .map_err(|e| {
                DeleteError::from_aws(req, "ListAttachedGroupPolicies", &aws_error_info(&e))
            })?;
        for p in attached {
            let Some(arn) = p.policy_arn() else { continue };
            let out = iam
                .detach_group_policy()
                .group_name(group)
                .policy_arn(arn)
                .send()
                .await;
            ignore_no_such_entity(req, &format!("DetachGroupPolicy {arn}"), out)?;
        }

        let inline = iam
            .list_group_policies()
            .group_name(group)
            .into_paginator()
            .items()
            .send()
            .try_collect()
            .await
            .map_err(|e| DeleteError::from_aws(req, "ListGroupPolicies", &aws_error_info(&e)))?;
        for name in inline {
            let out = iam
                .delete_group_policy()
                .group_name(group)
                .policy_name(&name)
                .send()
                .await;
            ignore_no_such_entity(req, &format!("DeleteGroupPolicy {name}"), out)?;
        }

        match iam.delete_group().group_name(group).send().await {
            Ok(_) => Ok(DeleteProgress::Done),
            Err(e) if aws_error_info(&e).code_is(&["NoSuchEntity"]) => Ok(DeleteProgress::Done),
            Err(e) => {
                let mut info = aws_error_info(&e);
                info.retryable |= info.code_is(&["DeleteConflict"]);
                Err(DeleteError::from_aws(req, "DeleteGroup", &info))
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
