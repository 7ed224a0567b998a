//! `AWS::IAM::User`: delete the login profile and access keys, detach managed and
//! delete inline policies, leave every group, drop the permissions boundary, then delete
//! the user (docs/destroy.md, "SDK deleters").

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::progress::DeleteProgress;
use crate::request::DeleteRequest;
use crate::sdk::iam_common::{
    all_items, deleted, existing, failed, not_found, remove_user_from_group, sent, OnConflict,
    Principal,
};
use crate::sdk::ignore_no_such_entity;
use crate::{Deleter, SdkDeleter};

pub struct IamUserDeleter {
    iam: aws_sdk_iam::Client,
}

impl IamUserDeleter {
    pub fn new(iam: aws_sdk_iam::Client) -> Self {
        IamUserDeleter { iam }
    }
}

impl SdkDeleter for IamUserDeleter {
    const TYPES: &'static [&'static str] = &["AWS::IAM::User"];
}

#[async_trait]
impl Deleter for IamUserDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let user = req.physical_id.as_str();
        let iam = &self.iam;
        let found = sent!(iam.get_user().user_name(user));
        let Some(found) = existing(req, "GetUser", found)? else {
            return not_found(req, iam, "user", user);
        };
        let has_boundary = found
            .user()
            .and_then(|u| u.permissions_boundary())
            .is_some();
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

        Principal::User(user).remove_policies(req, iam).await?;

        let groups = all_items!(iam.list_groups_for_user().user_name(user));
        for g in groups.map_err(failed(req, "ListGroupsForUser"))? {
            let group = g.group_name();
            remove_user_from_group(req, iam, group, user, group).await?;
        }

        if has_boundary {
            let out = iam
                .delete_user_permissions_boundary()
                .user_name(user)
                .send()
                .await;
            ignore_no_such_entity(req, "DeleteUserPermissionsBoundary", out)?;
        }

        let out = sent!(iam.delete_user().user_name(user));
        deleted(req, "DeleteUser", OnConflict::Retry, out)
    }
}
