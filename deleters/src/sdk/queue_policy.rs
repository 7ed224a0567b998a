//! `AWS::SQS::QueuePolicy`: set the `Policy` attribute to "" on **every** queue in
//! `properties.Queues` (docs/destroy.md, "SDK deleters"; cdkd clears only the first), falling back to the
//! physical id (the first queue URL). A missing queue is fine; all missing = gone.

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::DeleteProgress;
use crate::request::DeleteRequest;
use crate::sdk::sqs::is_queue_url;
use crate::{Deleter, SdkDeleter};

pub struct QueuePolicyDeleter {
    sqs: aws_sdk_sqs::Client,
}

impl QueuePolicyDeleter {
    pub fn new(sqs: aws_sdk_sqs::Client) -> Self {
        QueuePolicyDeleter { sqs }
    }
}

/// The queue URLs the policy is on.
pub fn policy_queues(req: &DeleteRequest) -> Vec<String> {
    let mut queues = req.prop_str_list("Queues");
    if queues.is_empty() && !req.physical_id.is_empty() {
        queues.push(req.physical_id.clone());
    }
    queues
}

impl SdkDeleter for QueuePolicyDeleter {
    const TYPES: &'static [&'static str] = &["AWS::SQS::QueuePolicy"];
}

#[async_trait]
impl Deleter for QueuePolicyDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let queues = policy_queues(req);
        if queues.is_empty() {
            return Err(DeleteError::skipped(req, "the record names no queue"));
        }
        let mut missing = 0;
        for url in &queues {
            let sent = self
                .sqs
                .set_queue_attributes()
                .queue_url(url)
                .attributes(aws_sdk_sqs::types::QueueAttributeName::Policy, "")
                .send()
                .await;
            if let Err(e) = sent {
                let info = aws_error_info(&e);
                if info.code_is(&[
                    "QueueDoesNotExist",
                    "AWS.SimpleQueueService.NonExistentQueue",
                ]) {
                    missing += 1;
                    continue;
                }
                return Err(DeleteError::from_aws(
                    req,
                    &format!("SetQueueAttributes Policy=\"\" on {url}"),
                    &info,
                ));
            }
        }
        if missing == queues.len() {
            return guard::not_found(
                req,
                self.sqs.config().region().map(|r| r.as_ref()),
                queues.iter().all(|q| is_queue_url(q)),
                "SQS says none of the policy's queues exists",
            );
        }
        Ok(DeleteProgress::Done)
    }
}
