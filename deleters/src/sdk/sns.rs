//! `AWS::SNS::Topic`: the physical id is the topic ARN. DeleteTopic succeeds for a topic
//! that does not exist, so existence is checked first with GetTopicAttributes.

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::DeleteProgress;
use crate::read::props::{bool_text, tag_list, Props};
use crate::read::{answered, found, ReadError, ReadRequest, Reader, SdkReader};
use crate::request::DeleteRequest;
use crate::{Deleter, SdkDeleter};
use serde_json::Value;

pub struct SnsTopicDeleter {
    sns: aws_sdk_sns::Client,
}

impl SnsTopicDeleter {
    pub fn new(sns: aws_sdk_sns::Client) -> Self {
        SnsTopicDeleter { sns }
    }
}

impl SdkDeleter for SnsTopicDeleter {
    const TYPES: &'static [&'static str] = &["AWS::SNS::Topic"];
}

#[async_trait]
impl Deleter for SnsTopicDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let arn = req.physical_id.as_str();
        let region = self.sns.config().region().map(|r| r.as_ref());
        if let Err(e) = self.sns.get_topic_attributes().topic_arn(arn).send().await {
            let info = aws_error_info(&e);
            if info.code_is(&["NotFound", "NotFoundException"]) {
                let is_id = region.is_some_and(|r| guard::arn_in(arn, "sns", r));
                return guard::not_found(
                    req,
                    region,
                    is_id,
                    &format!("SNS says topic {arn} does not exist"),
                );
            }
            return Err(DeleteError::from_aws(req, "GetTopicAttributes", &info));
        }
        match self.sns.delete_topic().topic_arn(arn).send().await {
            Ok(_) => Ok(DeleteProgress::Done),
            Err(e) => Err(DeleteError::from_aws(
                req,
                "DeleteTopic",
                &aws_error_info(&e),
            )),
        }
    }
}

// ---------------------------------------------------------------------------------
// Reader (docs/repairs.md, "Per resource"): GetTopicAttributes and ListTagsForResource.

impl SnsTopicDeleter {
    /// GetTopicAttributes of `arn`; `None` when the topic is gone.
    async fn topic_attributes(
        &self,
        arn: &str,
    ) -> Result<Option<std::collections::HashMap<String, String>>, ReadError> {
        let sent = self.sns.get_topic_attributes().topic_arn(arn).send().await;
        Ok(found(
            "GetTopicAttributes",
            &["NotFound", "NotFoundException"],
            sent,
        )?
        .map(|out| out.attributes().cloned().unwrap_or_default()))
    }
}

impl SdkReader for SnsTopicDeleter {
    const READS: &'static [&'static str] = &["AWS::SNS::Topic"];
    const ATTRIBUTES: &'static [(&'static str, &'static str)] = &[
        ("AWS::SNS::Topic", "TopicArn"),
        ("AWS::SNS::Topic", "TopicName"),
    ];
}

#[async_trait]
impl Reader for SnsTopicDeleter {
    async fn read(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let arn = req.physical_id.as_str();
        let Some(attrs) = self.topic_attributes(arn).await? else {
            return Ok(None);
        };
        let get = |k: &str| attrs.get(k).map(String::as_str);
        let mut p = Props::new();
        p.opt("TopicName", arn.rsplit(':').next());
        p.opt("DisplayName", get("DisplayName").filter(|s| !s.is_empty()));
        p.opt("KmsMasterKeyId", get("KmsMasterKeyId"));
        p.opt("FifoTopic", get("FifoTopic").map(bool_text));
        p.opt(
            "ContentBasedDeduplication",
            get("ContentBasedDeduplication").map(bool_text),
        );
        p.opt("SignatureVersion", get("SignatureVersion"));
        p.opt("TracingConfig", get("TracingConfig"));
        let tags = answered(
            "ListTagsForResource",
            self.sns
                .list_tags_for_resource()
                .resource_arn(arn)
                .send()
                .await,
        )?;
        p.nonempty(
            "Tags",
            tag_list(tags.tags().iter().map(|t| (t.key(), t.value()))),
        );
        Ok(Some(p.build()))
    }

    /// GetTopicAttributes: TopicArn (as SNS answers it), TopicName (its last part).
    async fn attributes(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let arn = req.physical_id.as_str();
        let Some(attrs) = self.topic_attributes(arn).await? else {
            return Ok(None);
        };
        let arn = attrs.get("TopicArn").map_or(arn, String::as_str);
        let mut p = Props::new();
        p.set("TopicArn", arn);
        p.opt("TopicName", arn.rsplit(':').next());
        Ok(Some(p.build()))
    }
}
