//! `AWS::SNS::TopicPolicy`: put every topic of the comma-joined physical id (and of
//! `properties.Topics`) back on SNS's default access policy. cdkd sets `Policy` to ""
//! instead (docs/destroy.md, "SDK deleters"); the default policy is what a topic without a TopicPolicy has,
//! and an empty string is not accepted everywhere (the emulator answers 500). A missing topic
//! is fine; all missing = gone.

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::DeleteProgress;
use crate::request::DeleteRequest;
use crate::{Deleter, SdkDeleter};

pub struct TopicPolicyDeleter {
    sns: aws_sdk_sns::Client,
}

impl TopicPolicyDeleter {
    pub fn new(sns: aws_sdk_sns::Client) -> Self {
        TopicPolicyDeleter { sns }
    }
}

/// The topic ARNs the policy is on.
pub fn policy_topics(req: &DeleteRequest) -> Vec<String> {
    let mut topics: Vec<String> = req
        .physical_id
        .split(',')
        .map(str::trim)
        .filter(|t| t.starts_with("arn:"))
        .map(str::to_owned)
        .collect();
    for t in req.prop_str_list("Topics") {
        if !topics.contains(&t) {
            topics.push(t);
        }
    }
    topics
}

/// The access policy SNS gives a new topic (owner account from the ARN).
pub fn default_topic_policy(topic_arn: &str) -> String {
    let account = guard::arn_account(topic_arn).unwrap_or_default();
    serde_json::json!({
        "Version": "2008-10-17",
        "Id": "__default_policy_ID",
        "Statement": [{
            "Sid": "__default_statement_ID",
            "Effect": "Allow",
            "Principal": {"AWS": "*"},
            "Action": [
                "SNS:GetTopicAttributes",
                "SNS:SetTopicAttributes",
                "SNS:AddPermission",
                "SNS:RemovePermission",
                "SNS:DeleteTopic",
                "SNS:Subscribe",
                "SNS:ListSubscriptionsByTopic",
                "SNS:Publish"
            ],
            "Resource": topic_arn,
            "Condition": {"StringEquals": {"AWS:SourceOwner": account}}
        }]
    })
    .to_string()
}

impl SdkDeleter for TopicPolicyDeleter {
    const TYPES: &'static [&'static str] = &["AWS::SNS::TopicPolicy"];
}

#[async_trait]
impl Deleter for TopicPolicyDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let topics = policy_topics(req);
        if topics.is_empty() {
            return Err(DeleteError::skipped(req, "the record names no topic ARN"));
        }
        let region = self.sns.config().region().map(|r| r.as_ref());
        let mut missing = 0;
        for arn in &topics {
            let sent = self
                .sns
                .set_topic_attributes()
                .topic_arn(arn)
                .attribute_name("Policy")
                .attribute_value(default_topic_policy(arn))
                .send()
                .await;
            if let Err(e) = sent {
                let info = aws_error_info(&e);
                if info.code_is(&["NotFound", "NotFoundException"]) {
                    missing += 1;
                    continue;
                }
                return Err(DeleteError::from_aws(
                    req,
                    &format!("SetTopicAttributes Policy=<default> on {arn}"),
                    &info,
                ));
            }
        }
        if missing == topics.len() {
            let ids = region.is_some_and(|r| topics.iter().all(|t| guard::arn_in(t, "sns", r)));
            return guard::not_found(
                req,
                region,
                ids,
                "SNS says none of the policy's topics exists",
            );
        }
        Ok(DeleteProgress::Done)
    }
}
