//! `AWS::Logs::LogGroup`: the physical id is the log group name.

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::DeleteProgress;
use crate::read::props::{tag_list, Props};
use crate::read::{answered, ReadError, ReadRequest, Reader, SdkReader};
use crate::request::DeleteRequest;
use crate::{Deleter, SdkDeleter};
use serde_json::Value;

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

// ---------------------------------------------------------------------------------
// Reader (docs/repairs.md, "Per resource"): DescribeLogGroups by prefix (the exact name wins) and
// ListTagsForResource on the group's ARN.

impl SdkReader for LogGroupDeleter {
    const READS: &'static [&'static str] = &["AWS::Logs::LogGroup"];
    const ATTRIBUTES: &'static [(&'static str, &'static str)] = &[("AWS::Logs::LogGroup", "Arn")];
}

impl LogGroupDeleter {
    /// The group named exactly `name` (DescribeLogGroups by prefix, every page); `None`
    /// when there is none.
    async fn find_group(
        &self,
        name: &str,
    ) -> Result<Option<aws_sdk_cloudwatchlogs::types::LogGroup>, ReadError> {
        let mut token: Option<String> = None;
        loop {
            let out = answered(
                "DescribeLogGroups",
                self.logs
                    .describe_log_groups()
                    .log_group_name_prefix(name)
                    .set_next_token(token.clone())
                    .send()
                    .await,
            )?;
            if let Some(g) = out
                .log_groups()
                .iter()
                .find(|g| g.log_group_name() == Some(name))
            {
                return Ok(Some(g.clone()));
            }
            match out.next_token() {
                Some(t) if !t.is_empty() => token = Some(t.to_owned()),
                _ => return Ok(None),
            }
        }
    }
}

#[async_trait]
impl Reader for LogGroupDeleter {
    async fn read(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let name = req.physical_id.as_str();
        let Some(group) = self.find_group(name).await? else {
            return Ok(None);
        };
        let mut p = Props::new();
        p.set("LogGroupName", name);
        p.opt("RetentionInDays", group.retention_in_days());
        p.opt("KmsKeyId", group.kms_key_id());
        p.opt("LogGroupClass", group.log_group_class().map(|c| c.as_str()));
        if let Some(arn) = group.arn() {
            let arn = arn.strip_suffix(":*").unwrap_or(arn);
            let tags = answered(
                "ListTagsForResource",
                self.logs
                    .list_tags_for_resource()
                    .resource_arn(arn)
                    .send()
                    .await,
            )?;
            p.nonempty("Tags", tag_list(tags.tags().cloned().unwrap_or_default()));
        }
        Ok(Some(p.build()))
    }

    /// DescribeLogGroups: Arn, in CloudFormation's form (ending `:*`).
    async fn attributes(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let Some(group) = self.find_group(&req.physical_id).await? else {
            return Ok(None);
        };
        let mut p = Props::new();
        p.opt(
            "Arn",
            group
                .arn()
                .map(|a| format!("{}:*", a.strip_suffix(":*").unwrap_or(a))),
        );
        Ok(Some(p.build()))
    }
}
