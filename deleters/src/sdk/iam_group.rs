//! `AWS::IAM::Group`: remove every member, detach managed and delete inline policies,
//! then delete the group (docs/destroy.md, "SDK deleters").

use async_trait::async_trait;

use crate::error::DeleteError;
use crate::progress::DeleteProgress;
use crate::request::DeleteRequest;
use crate::sdk::iam_common::{
    all_items, deleted, existing, not_found, remove_user_from_group, sent, OnConflict, Principal,
};
use crate::{Deleter, SdkDeleter};

pub struct IamGroupDeleter {
    iam: aws_sdk_iam::Client,
}

impl IamGroupDeleter {
    pub fn new(iam: aws_sdk_iam::Client) -> Self {
        IamGroupDeleter { iam }
    }
}

impl SdkDeleter for IamGroupDeleter {
    const TYPES: &'static [&'static str] = &["AWS::IAM::Group"];
}

#[async_trait]
impl Deleter for IamGroupDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let group = req.physical_id.as_str();
        let iam = &self.iam;
        let found = all_items!(iam.get_group().group_name(group));
        let Some(members) = existing(req, "GetGroup", found)? else {
            return not_found(req, iam, "group", group);
        };
        for member in &members {
            let user = member.user_name();
            remove_user_from_group(req, iam, group, user, user).await?;
        }

        Principal::Group(group).remove_policies(req, iam).await?;

        let out = sent!(iam.delete_group().group_name(group));
        deleted(req, "DeleteGroup", OnConflict::Retry, out)
    }
}
