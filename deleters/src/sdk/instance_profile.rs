//! `AWS::IAM::InstanceProfile`: remove each role, then delete the profile (docs/destroy.md, "SDK deleters").

use async_trait::async_trait;

use crate::error::DeleteError;
use crate::progress::DeleteProgress;
use crate::request::DeleteRequest;
use crate::sdk::iam_common::{
    deleted, existing, not_found, remove_role_from_instance_profile, sent, OnConflict,
};
use crate::{Deleter, SdkDeleter};

pub struct InstanceProfileDeleter {
    iam: aws_sdk_iam::Client,
}

impl InstanceProfileDeleter {
    pub fn new(iam: aws_sdk_iam::Client) -> Self {
        InstanceProfileDeleter { iam }
    }
}

impl SdkDeleter for InstanceProfileDeleter {
    const TYPES: &'static [&'static str] = &["AWS::IAM::InstanceProfile"];
}

#[async_trait]
impl Deleter for InstanceProfileDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let name = req.physical_id.as_str();
        let iam = &self.iam;
        let found = sent!(iam.get_instance_profile().instance_profile_name(name));
        let Some(found) = existing(req, "GetInstanceProfile", found)? else {
            return not_found(req, iam, "instance profile", name);
        };
        for role in found.instance_profile.iter().flat_map(|p| p.roles()) {
            let role = role.role_name();
            remove_role_from_instance_profile(req, iam, name, role, role).await?;
        }
        let out = sent!(iam.delete_instance_profile().instance_profile_name(name));
        deleted(req, "DeleteInstanceProfile", OnConflict::AsClassified, out)
    }
}
