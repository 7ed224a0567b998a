//! `AWS::IAM::Role`: detach every attached managed policy, delete every inline policy,
//! remove the role from every instance profile, then delete the role (docs/destroy.md §3.3). This
//! also covers policies attached outside the stack.

use async_trait::async_trait;

use crate::error::DeleteError;
use crate::progress::DeleteProgress;
use crate::request::DeleteRequest;
use crate::sdk::iam_common::{
    all_items, deleted, existing, failed, not_found, remove_role_from_instance_profile, sent,
    OnConflict, Principal,
};
use crate::{Deleter, SdkDeleter};

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

impl SdkDeleter for IamRoleDeleter {
    const TYPES: &'static [&'static str] = &["AWS::IAM::Role"];
}

#[async_trait]
impl Deleter for IamRoleDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let role = req.physical_id.as_str();
        let iam = &self.iam;
        let found = sent!(iam.get_role().role_name(role));
        if existing(req, "GetRole", found)?.is_none() {
            return not_found(req, iam, "role", role);
        }

        Principal::Role(role).remove_policies(req, iam).await?;

        let profiles = all_items!(iam.list_instance_profiles_for_role().role_name(role));
        for profile in profiles.map_err(failed(req, "ListInstanceProfilesForRole"))? {
            let name = profile.instance_profile_name();
            remove_role_from_instance_profile(req, iam, name, role, name).await?;
        }

        // A policy or profile attached between our listing and the delete is retried.
        let out = sent!(iam.delete_role().role_name(role));
        deleted(req, "DeleteRole", OnConflict::Retry, out)
    }
}
