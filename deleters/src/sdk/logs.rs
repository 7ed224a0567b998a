//! `AWS::Logs::LogGroup`: the physical id is the log group name.

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::DeleteProgress;
use crate::request::DeleteRequest;
use crate::{Deleter, SdkDeleter};

pub struct LogGroupDeleter {
    logs: aws_sdk_cloudwatchlogs::Client,
}

impl LogGroupDeleter {
    pub fn new(logs: aws_sdk_cloudwatchlogs::Client) -> Self {
        LogGroupDeleter { logs }
    }
}

impl SdkDeleter for LogGroupDeleter {
    const TYPES: &'static [&'static str] = &["AWS::Logs::LogGroup"];
}

#[async_trait]
impl Deleter for LogGroupDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let name = req.physical_id.as_str();
        match self
            .logs
            .delete_log_group()
            .log_group_name(name)
            .send()
            .await
        {
            Ok(_) => Ok(DeleteProgress::Done),
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["ResourceNotFoundException"]) {
                    return guard::not_found(
                        req,
                        self.logs.config().region().map(|r| r.as_ref()),
                        !name.is_empty() && !name.starts_with("arn:"),
                        &format!("CloudWatch Logs says log group {name} does not exist"),
                    );
                }
                Err(DeleteError::from_aws(req, "DeleteLogGroup", &info))
            }
        }
    }
}
