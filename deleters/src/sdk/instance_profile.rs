//! `AWS::IAM::InstanceProfile`: remove each role, then delete the profile (spec §3.3).

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::{DeleteProgress, Handle};
use crate::request::DeleteRequest;
use crate::sdk::iam_role::is_iam_name;
use crate::Deleter;

pub struct InstanceProfileDeleter {
    iam: aws_sdk_iam::Client,
}

impl InstanceProfileDeleter {
    pub fn new(iam: aws_sdk_iam::Client) -> Self {
        InstanceProfileDeleter { iam }
    }
}

#[async_trait]
impl Deleter for InstanceProfileDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let name = req.physical_id.as_str();
        let iam = &self.iam;
        let profile = match iam
            .get_instance_profile()
            .instance_profile_name(name)
            .send()
            .await
        {
            Ok(out) => out.instance_profile,
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["NoSuchEntity"]) {
                    return guard::not_found(
                        req,
                        iam.config().region().map(|r| r.as_ref()),
                        is_iam_name(name),
                        &format!("IAM says instance profile {name} does not exist"),
                    );
                }
                return Err(DeleteError::from_aws(req, "GetInstanceProfile", &info));
            }
        };
        for role in profile.iter().flat_map(|p| p.roles()) {
            let role = role.role_name();
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
                        &format!("RemoveRoleFromInstanceProfile {role}"),
                        &info,
                    ));
                }
            }
        }
        match iam
            .delete_instance_profile()
            .instance_profile_name(name)
            .send()
            .await
        {
            Ok(_) => Ok(DeleteProgress::Done),
            Err(e) if aws_error_info(&e).code_is(&["NoSuchEntity"]) => Ok(DeleteProgress::Done),
            Err(e) => Err(DeleteError::from_aws(
                req,
                "DeleteInstanceProfile",
                &aws_error_info(&e),
            )),
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
