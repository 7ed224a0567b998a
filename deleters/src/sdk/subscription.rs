//! `AWS::SNS::Subscription`: Unsubscribe by subscription ARN. A subscription still
//! pending confirmation has no ARN and nothing to remove (docs/destroy.md, "SDK deleters").

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::DeleteProgress;
use crate::request::DeleteRequest;
use crate::{Deleter, SdkDeleter};

pub struct SubscriptionDeleter {
    sns: aws_sdk_sns::Client,
}

impl SubscriptionDeleter {
    pub fn new(sns: aws_sdk_sns::Client) -> Self {
        SubscriptionDeleter { sns }
    }
}

impl SdkDeleter for SubscriptionDeleter {
    const TYPES: &'static [&'static str] = &["AWS::SNS::Subscription"];
}

#[async_trait]
impl Deleter for SubscriptionDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let arn = req.physical_id.as_str();
        if arn.eq_ignore_ascii_case("pending confirmation")
            || arn.eq_ignore_ascii_case("PendingConfirmation")
        {
            return Ok(DeleteProgress::Done);
        }
        let region = self.sns.config().region().map(|r| r.as_ref());
        // Unsubscribe succeeds for an unknown subscription: check first.
        if let Err(e) = self
            .sns
            .get_subscription_attributes()
            .subscription_arn(arn)
            .send()
            .await
        {
            let info = aws_error_info(&e);
            if info.code_is(&["NotFound", "NotFoundException"]) {
                let is_id = region.is_some_and(|r| guard::arn_in(arn, "sns", r));
                return guard::not_found(
                    req,
                    region,
                    is_id,
                    &format!("SNS says subscription {arn} does not exist"),
                );
            }
            if !info.message.contains("PendingConfirmation") {
                return Err(DeleteError::from_aws(
                    req,
                    "GetSubscriptionAttributes",
                    &info,
                ));
            }
            return Ok(DeleteProgress::Done);
        }
        match self.sns.unsubscribe().subscription_arn(arn).send().await {
            Ok(_) => Ok(DeleteProgress::Done),
            Err(e) => {
                let info = aws_error_info(&e);
                if info.message.contains("PendingConfirmation") {
                    return Ok(DeleteProgress::Done);
                }
                Err(DeleteError::from_aws(req, "Unsubscribe", &info))
            }
        }
    }
}
