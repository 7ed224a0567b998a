//! `AWS::SNS::Topic`: the physical id is the topic ARN. DeleteTopic succeeds for a topic
//! that does not exist, so existence is checked first with GetTopicAttributes.

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::DeleteProgress;
use crate::request::DeleteRequest;
use crate::{Deleter, SdkDeleter};

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
