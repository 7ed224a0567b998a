//! `AWS::SQS::Queue`: the physical id is the queue URL; DeleteQueue by URL.

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::DeleteProgress;
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
