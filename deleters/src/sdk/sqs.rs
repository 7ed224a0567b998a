//! `AWS::SQS::Queue`: the physical id is the queue URL; DeleteQueue by URL. Read back with
//! GetQueueAttributes and ListQueueTags; its attributes (Arn, QueueName, QueueUrl) with
//! GetQueueAttributes (QueueArn).

use async_trait::async_trait;
use serde_json::Value;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::DeleteProgress;
use crate::read::props::{bool_text, json_text, number_text, tag_list, Props};
use crate::read::{answered, found, ReadError, ReadRequest, Reader, SdkReader};
use crate::request::DeleteRequest;
use crate::{Deleter, SdkDeleter};

pub struct SqsQueueDeleter {
    sqs: aws_sdk_sqs::Client,
}

impl SqsQueueDeleter {
    pub fn new(sqs: aws_sdk_sqs::Client) -> Self {
        SqsQueueDeleter { sqs }
    }
}

/// Error codes SQS uses for a queue that does not exist (JSON and query protocols).
const QUEUE_MISSING: &[&str] = &[
    "QueueDoesNotExist",
    "AWS.SimpleQueueService.NonExistentQueue",
];

/// Only a URL is a queue identifier for DeleteQueue.
pub fn is_queue_url(id: &str) -> bool {
    (id.starts_with("https://") || id.starts_with("http://"))
        && id.rsplit('/').next().is_some_and(|n| !n.is_empty())
}

impl SdkDeleter for SqsQueueDeleter {
    const TYPES: &'static [&'static str] = &["AWS::SQS::Queue"];
}

#[async_trait]
impl Deleter for SqsQueueDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let url = req.physical_id.as_str();
        match self.sqs.delete_queue().queue_url(url).send().await {
            Ok(_) => Ok(DeleteProgress::Done),
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(QUEUE_MISSING) {
                    return guard::not_found(
                        req,
                        self.sqs.config().region().map(|r| r.as_ref()),
                        is_queue_url(url),
                        &format!("SQS says queue {url} does not exist"),
                    );
                }
                Err(DeleteError::from_aws(req, "DeleteQueue", &info))
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Reader (docs/repairs.md, "Per resource"): GetQueueAttributes (All) and ListQueueTags.

impl SdkReader for SqsQueueDeleter {
    const READS: &'static [&'static str] = &["AWS::SQS::Queue"];
    const ATTRIBUTES: &'static [(&'static str, &'static str)] = &[
        ("AWS::SQS::Queue", "Arn"),
        ("AWS::SQS::Queue", "QueueName"),
        ("AWS::SQS::Queue", "QueueUrl"),
    ];
}

impl SqsQueueDeleter {
    /// GetQueueAttributes of `url` (`which`); `None` when the queue is gone.
    async fn queue_attributes(
        &self,
        url: &str,
        which: aws_sdk_sqs::types::QueueAttributeName,
    ) -> Result<
        Option<std::collections::HashMap<aws_sdk_sqs::types::QueueAttributeName, String>>,
        ReadError,
    > {
        let sent = self
            .sqs
            .get_queue_attributes()
            .queue_url(url)
            .attribute_names(which)
            .send()
            .await;
        Ok(found("GetQueueAttributes", QUEUE_MISSING, sent)?
            .map(|out| out.attributes().cloned().unwrap_or_default()))
    }
}

#[async_trait]
impl Reader for SqsQueueDeleter {
    async fn read(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        use aws_sdk_sqs::types::QueueAttributeName as A;
        let url = req.physical_id.as_str();
        let Some(attrs) = self.queue_attributes(url, A::All).await? else {
            return Ok(None);
        };
        let get = |n: A| attrs.get(&n).map(String::as_str);
        let mut p = Props::new();
        p.opt("QueueName", url.rsplit('/').next());
        for (k, n) in [
            ("DelaySeconds", A::DelaySeconds),
            ("MaximumMessageSize", A::MaximumMessageSize),
            ("MessageRetentionPeriod", A::MessageRetentionPeriod),
            (
                "ReceiveMessageWaitTimeSeconds",
                A::ReceiveMessageWaitTimeSeconds,
            ),
            ("VisibilityTimeout", A::VisibilityTimeout),
            (
                "KmsDataKeyReusePeriodSeconds",
                A::KmsDataKeyReusePeriodSeconds,
            ),
        ] {
            p.opt(k, get(n).map(number_text));
        }
        for (k, n) in [
            ("FifoQueue", A::FifoQueue),
            ("ContentBasedDeduplication", A::ContentBasedDeduplication),
            ("SqsManagedSseEnabled", A::SqsManagedSseEnabled),
        ] {
            p.opt(k, get(n).map(bool_text));
        }
        for (k, n) in [
            ("KmsMasterKeyId", A::KmsMasterKeyId),
            ("DeduplicationScope", A::DeduplicationScope),
            ("FifoThroughputLimit", A::FifoThroughputLimit),
        ] {
            p.opt(k, get(n));
        }
        p.opt("RedrivePolicy", get(A::RedrivePolicy).map(json_text));
        p.opt(
            "RedriveAllowPolicy",
            get(A::RedriveAllowPolicy).map(json_text),
        );
        let tags = answered(
            "ListQueueTags",
            self.sqs.list_queue_tags().queue_url(url).send().await,
        )?;
        p.nonempty("Tags", tag_list(tags.tags().cloned().unwrap_or_default()));
        Ok(Some(p.build()))
    }

    async fn attributes(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        use aws_sdk_sqs::types::QueueAttributeName as A;
        let url = req.physical_id.as_str();
        let Some(attrs) = self.queue_attributes(url, A::QueueArn).await? else {
            return Ok(None);
        };
        let mut p = Props::new();
        p.opt("Arn", attrs.get(&A::QueueArn).map(String::as_str));
        p.opt("QueueName", url.rsplit('/').next());
        p.set("QueueUrl", url);
        Ok(Some(p.build()))
    }
}
