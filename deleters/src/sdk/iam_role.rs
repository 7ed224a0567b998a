//! `AWS::IAM::Role`: detach every attached managed policy, delete every inline policy,
//! remove the role from every instance profile, then delete the role (docs/destroy.md, "SDK deleters"). This
//! also covers policies attached outside the stack.

use async_trait::async_trait;

use crate::error::DeleteError;
use crate::progress::DeleteProgress;
use crate::read::props::{policy_document, tag_list, Props};
use crate::read::{found, ReadError, ReadRequest, Reader, SdkReader};
use crate::request::DeleteRequest;
use crate::sdk::iam_common::{
    all_items, deleted, existing, failed, not_found, remove_role_from_instance_profile, sent,
    OnConflict, Principal,
};
use crate::{Deleter, SdkDeleter};
use serde_json::Value;

pub struct IamRoleDeleter {
    iam: aws_sdk_iam::Client,
}

impl IamRoleDeleter {
    pub fn new(iam: aws_sdk_iam::Client) -> Self {
        IamRoleDeleter { iam }
    }
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

// ---------------------------------------------------------------------------------
// Reader (docs/repairs.md, "Per resource"): GetRole, the attached managed policies and the inline
// policies, leaving out those a sibling `AWS::IAM::Policy` of the record owns.

impl SdkReader for IamRoleDeleter {
    const READS: &'static [&'static str] = &["AWS::IAM::Role"];
    const ATTRIBUTES: &'static [(&'static str, &'static str)] =
        &[("AWS::IAM::Role", "Arn"), ("AWS::IAM::Role", "RoleId")];
}

fn read_failed(action: &'static str) -> impl Fn(crate::error::AwsErrorInfo) -> ReadError {
    move |info| ReadError::aws(action, &info)
}

impl IamRoleDeleter {
    /// GetRole of `name`; `None` when the role is gone.
    async fn get_role(&self, name: &str) -> Result<Option<aws_sdk_iam::types::Role>, ReadError> {
        let sent = self.iam.get_role().role_name(name).send().await;
        Ok(found("GetRole", &["NoSuchEntity"], sent)?.and_then(|o| o.role))
    }
}

#[async_trait]
impl Reader for IamRoleDeleter {
    async fn read(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let name = req.physical_id.as_str();
        let iam = &self.iam;
        let Some(role) = self.get_role(name).await? else {
            return Ok(None);
        };
        let role = &role;
        let mut p = Props::new();
        p.set("RoleName", role.role_name());
        p.set("Path", role.path());
        p.opt(
            "AssumeRolePolicyDocument",
            role.assume_role_policy_document().map(policy_document),
        );
        p.opt("Description", role.description().filter(|d| !d.is_empty()));
        p.opt("MaxSessionDuration", role.max_session_duration());
        p.opt(
            "PermissionsBoundary",
            role.permissions_boundary()
                .and_then(|b| b.permissions_boundary_arn()),
        );
        let managed = all_items!(iam.list_attached_role_policies().role_name(name))
            .map_err(read_failed("ListAttachedRolePolicies"))?;
        p.list(
            "ManagedPolicyArns",
            managed
                .iter()
                .filter_map(|m| m.policy_arn().map(str::to_owned))
                .collect(),
        );
        let inline: Vec<String> = all_items!(iam.list_role_policies().role_name(name))
            .map_err(read_failed("ListRolePolicies"))?;
        let mut policies = Vec::new();
        for policy in inline.iter().filter(|n| !req.owned_elsewhere.contains(n)) {
            let doc = sent!(iam.get_role_policy().role_name(name).policy_name(policy))
                .map_err(read_failed("GetRolePolicy"))?;
            policies.push(serde_json::json!({
                "PolicyName": policy,
                "PolicyDocument": policy_document(doc.policy_document()),
            }));
        }
        p.nonempty("Policies", Value::Array(policies));
        p.nonempty(
            "Tags",
            tag_list(role.tags().iter().map(|t| (t.key(), t.value()))),
        );
        Ok(Some(p.build()))
    }

    /// GetRole: Arn, RoleId.
    async fn attributes(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let Some(role) = self.get_role(&req.physical_id).await? else {
            return Ok(None);
        };
        let mut p = Props::new();
        p.set("Arn", role.arn());
        p.set("RoleId", role.role_id());
        Ok(Some(p.build()))
    }
}
