//! Builds the SDK clients and the full [`Registry`] from one `SdkConfig` (the stack's
//! region). S3 uses path-style addressing when an endpoint is set (the emulator).

use std::sync::Arc;

use aws_config::SdkConfig;

use crate::cloudcontrol::CloudControlDeleter;
use crate::custom::CustomResourceDeleter;
use crate::registry::Registry;
use crate::sdk::{
    bucket_policy::BucketPolicyDeleter, dynamodb::DynamoTableDeleter,
    ec2_security_group::SecurityGroupDeleter, eventbus::EventBusDeleter,
    events_rule::EventsRuleDeleter, iam_group::IamGroupDeleter,
    iam_managed_policy::IamManagedPolicyDeleter, iam_policy::IamPolicyDeleter,
    iam_role::IamRoleDeleter, iam_user::IamUserDeleter, instance_profile::InstanceProfileDeleter,
    kms::KmsKeyDeleter, lambda::LambdaFunctionDeleter, layer_version::LayerVersionDeleter,
    logs::LogGroupDeleter, queue_policy::QueuePolicyDeleter, s3_bucket::S3BucketDeleter,
    sns::SnsTopicDeleter, sqs::SqsQueueDeleter, ssm::SsmParameterDeleter,
    subscription::SubscriptionDeleter, topic_policy::TopicPolicyDeleter,
};

/// The SDK crates of the EC2 and EventBridge deleters, for callers (and tests) that build
/// matching clients.
pub use aws_sdk_ec2;
pub use aws_sdk_eventbridge;

/// An S3 client for `cfg`, path-style when an endpoint is configured.
pub fn s3_client(cfg: &SdkConfig) -> aws_sdk_s3::Client {
    let conf = aws_sdk_s3::config::Builder::from(cfg)
        .force_path_style(cfg.endpoint_url().is_some())
        .build();
    aws_sdk_s3::Client::from_conf(conf)
}

/// Every deleter, with clients for `cfg`'s region. `state_s3` is a client for the state
/// bucket's region (it signs custom-resource response URLs).
pub fn registry_from_config(cfg: &SdkConfig, state_s3: aws_sdk_s3::Client) -> Registry {
    let s3 = s3_client(cfg);
    let iam = aws_sdk_iam::Client::new(cfg);
    let lambda = aws_sdk_lambda::Client::new(cfg);
    let sns = aws_sdk_sns::Client::new(cfg);
    let sqs = aws_sdk_sqs::Client::new(cfg);
    let ec2 = aws_sdk_ec2::Client::new(cfg);
    let events = aws_sdk_eventbridge::Client::new(cfg);
    Registry::empty()
        .with_sdk(
            "AWS::S3::Bucket",
            Arc::new(S3BucketDeleter::new(s3.clone())),
        )
        .with_sdk(
            "AWS::S3::BucketPolicy",
            Arc::new(BucketPolicyDeleter::new(s3)),
        )
        .with_sdk(
            "AWS::SQS::Queue",
            Arc::new(SqsQueueDeleter::new(sqs.clone())),
        )
        .with_sdk(
            "AWS::SQS::QueuePolicy",
            Arc::new(QueuePolicyDeleter::new(sqs)),
        )
        .with_sdk(
            "AWS::SNS::Topic",
            Arc::new(SnsTopicDeleter::new(sns.clone())),
        )
        .with_sdk(
            "AWS::SNS::TopicPolicy",
            Arc::new(TopicPolicyDeleter::new(sns.clone())),
        )
        .with_sdk(
            "AWS::SNS::Subscription",
            Arc::new(SubscriptionDeleter::new(sns.clone())),
        )
        .with_sdk("AWS::IAM::Role", Arc::new(IamRoleDeleter::new(iam.clone())))
        .with_sdk("AWS::IAM::User", Arc::new(IamUserDeleter::new(iam.clone())))
        .with_sdk(
            "AWS::IAM::Group",
            Arc::new(IamGroupDeleter::new(iam.clone())),
        )
        .with_sdk(
            "AWS::IAM::InstanceProfile",
            Arc::new(InstanceProfileDeleter::new(iam.clone())),
        )
        .with_sdk(
            "AWS::IAM::Policy",
            Arc::new(IamPolicyDeleter::new(iam.clone())),
        )
        .with_sdk(
            "AWS::IAM::ManagedPolicy",
            Arc::new(IamManagedPolicyDeleter::new(iam)),
        )
        .with_sdk(
            "AWS::SSM::Parameter",
            Arc::new(SsmParameterDeleter::new(aws_sdk_ssm::Client::new(cfg))),
        )
        .with_sdk(
            "AWS::DynamoDB::Table",
            Arc::new(DynamoTableDeleter::new(aws_sdk_dynamodb::Client::new(cfg))),
        )
        .with_sdk(
            "AWS::Lambda::Function",
            Arc::new(LambdaFunctionDeleter::new(lambda.clone(), ec2.clone())),
        )
        .with_sdk(
            "AWS::EC2::Instance",
            Arc::new(crate::sdk::ec2_instance::Ec2InstanceDeleter::new(
                ec2.clone(),
            )),
        )
        .with_sdk(
            "AWS::EC2::SecurityGroup",
            Arc::new(SecurityGroupDeleter::new(ec2)),
        )
        .with_sdk(
            "AWS::Events::Rule",
            Arc::new(EventsRuleDeleter::new(events.clone())),
        )
        .with_sdk(
            "AWS::Events::EventBus",
            Arc::new(EventBusDeleter::new(events)),
        )
        .with_sdk(
            "AWS::Lambda::LayerVersion",
            Arc::new(LayerVersionDeleter::new(lambda.clone())),
        )
        .with_sdk(
            "AWS::Logs::LogGroup",
            Arc::new(LogGroupDeleter::new(aws_sdk_cloudwatchlogs::Client::new(
                cfg,
            ))),
        )
        .with_sdk(
            "AWS::KMS::Key",
            Arc::new(KmsKeyDeleter::new(aws_sdk_kms::Client::new(cfg))),
        )
        .with_custom_resources(Arc::new(CustomResourceDeleter::new(lambda, sns, state_s3)))
        .with_cloud_control(Arc::new(CloudControlDeleter::new(
            aws_sdk_cloudcontrol::Client::new(cfg),
        )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Route;

    #[test]
    fn registry_routes_security_groups_event_buses_and_rules_to_their_sdk_deleters() {
        let cfg = SdkConfig::builder()
            .region(aws_config::Region::new("us-east-1"))
            .behavior_version(aws_config::BehaviorVersion::latest())
            .build();
        let reg = registry_from_config(&cfg, s3_client(&cfg));
        for t in [
            "AWS::EC2::Instance",
            "AWS::EC2::SecurityGroup",
            "AWS::Events::EventBus",
            "AWS::Events::Rule",
            "AWS::Lambda::Function",
        ] {
            assert_eq!(reg.route_for(t, Some("sdk")), Route::Sdk, "{t}");
            assert_eq!(reg.route_for(t, None), Route::Sdk, "{t}");
        }
        // Created through Cloud Control, still deleted by the SDK deleter that sweeps
        // Lambda's interfaces, waits for the group, or turns instance protection off.
        for t in cdkd_core::destroy::decide::SDK_EVEN_WHEN_CC_API {
            assert_eq!(reg.route_for(t, Some("cc-api")), Route::Sdk, "{t}");
        }
        assert_eq!(
            reg.route_for("AWS::Events::Rule", Some("cc-api")),
            Route::CloudControl
        );
    }
}
