//! `AWS::SSM::Parameter`: the physical id is the parameter name.

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::DeleteProgress;
use crate::request::DeleteRequest;
use crate::{Deleter, SdkDeleter};

pub struct SsmParameterDeleter {
    ssm: aws_sdk_ssm::Client,
}

impl SsmParameterDeleter {
    pub fn new(ssm: aws_sdk_ssm::Client) -> Self {
        SsmParameterDeleter { ssm }
    }
}

impl SdkDeleter for SsmParameterDeleter {
    const TYPES: &'static [&'static str] = &["AWS::SSM::Parameter"];
}

#[async_trait]
impl Deleter for SsmParameterDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let name = req.physical_id.as_str();
        match self.ssm.delete_parameter().name(name).send().await {
            Ok(_) => Ok(DeleteProgress::Done),
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["ParameterNotFound"]) {
                    return guard::not_found(
                        req,
                        self.ssm.config().region().map(|r| r.as_ref()),
                        !name.is_empty() && !name.starts_with("arn:"),
                        &format!("SSM says parameter {name} does not exist"),
                    );
                }
                Err(DeleteError::from_aws(req, "DeleteParameter", &info))
            }
        }
    }
}
