//! `AWS::Lambda::Function`: the physical id is the function name (an ARN also works).

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::{DeleteProgress, Handle};
use crate::request::DeleteRequest;
use crate::Deleter;

pub struct LambdaFunctionDeleter {
    lambda: aws_sdk_lambda::Client,
}

impl LambdaFunctionDeleter {
    pub fn new(lambda: aws_sdk_lambda::Client) -> Self {
        LambdaFunctionDeleter { lambda }
    }
}

/// A function name, or a function ARN in `region`.
fn is_function_id(id: &str, region: Option<&str>) -> bool {
    if id.starts_with("arn:") {
        return region.is_some_and(|r| guard::arn_in(id, "lambda", r));
    }
    !id.is_empty() && !id.contains(':')
}

#[async_trait]
impl Deleter for LambdaFunctionDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let name = req.physical_id.as_str();
        match self
            .lambda
            .delete_function()
            .function_name(name)
            .send()
            .await
        {
            Ok(_) => Ok(DeleteProgress::Done),
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["ResourceNotFoundException"]) {
                    let region = self.lambda.config().region().map(|r| r.as_ref());
                    return guard::not_found(
                        req,
                        region,
                        is_function_id(name, region),
                        &format!("Lambda says function {name} does not exist"),
                    );
                }
                Err(DeleteError::from_aws(req, "DeleteFunction", &info))
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
