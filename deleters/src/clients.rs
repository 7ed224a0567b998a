//! Builds the SDK clients and the full [`Registry`] (and the [`Readers`] of
//! refresh-observed) from one `SdkConfig` (the stack's region). S3 uses path-style addressing when an endpoint is set (the emulator).

use std::sync::Arc;

use aws_config::SdkConfig;

use crate::cloudcontrol::read::CloudControlReader;
use crate::cloudcontrol::CloudControlDeleter;
use crate::custom::CustomResourceDeleter;
use crate::read::Readers;
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
        .with_sdk(S3BucketDeleter::new(s3.clone()))
        .with_sdk(BucketPolicyDeleter::new(s3))
        .with_sdk(SqsQueueDeleter::new(sqs.clone()))
        .with_sdk(QueuePolicyDeleter::new(sqs))
        .with_sdk(SnsTopicDeleter::new(sns.clone()))
        .with_sdk(TopicPolicyDeleter::new(sns.clone()))
        .with_sdk(SubscriptionDeleter::new(sns.clone()))
        .with_sdk(IamRoleDeleter::new(iam.clone()))
        .with_sdk(IamUserDeleter::new(iam.clone()))
        .with_sdk(IamGroupDeleter::new(iam.clone()))
        .with_sdk(InstanceProfileDeleter::new(iam.clone()))
        .with_sdk(IamPolicyDeleter::new(iam.clone()))
        .with_sdk(IamManagedPolicyDeleter::new(iam))
        .with_sdk(SsmParameterDeleter::new(aws_sdk_ssm::Client::new(cfg)))
        .with_sdk(DynamoTableDeleter::new(aws_sdk_dynamodb::Client::new(cfg)))
        .with_sdk(LambdaFunctionDeleter::new(lambda.clone(), ec2.clone()))
        .with_sdk(crate::sdk::ec2_instance::Ec2InstanceDeleter::new(
            ec2.clone(),
        ))
        .with_sdk(SecurityGroupDeleter::new(ec2))
        .with_sdk(EventsRuleDeleter::new(events.clone()))
        .with_sdk(EventBusDeleter::new(events))
        .with_sdk(LayerVersionDeleter::new(lambda.clone()))
        .with_sdk(LogGroupDeleter::new(aws_sdk_cloudwatchlogs::Client::new(
            cfg,
        )))
        .with_sdk(KmsKeyDeleter::new(aws_sdk_kms::Client::new(cfg)))
        .with_custom_resources(Arc::new(CustomResourceDeleter::new(lambda, sns, state_s3)))
        .with_cloud_control(Arc::new(CloudControlDeleter::new(
            aws_sdk_cloudcontrol::Client::new(cfg),
        )))
}

/// [`readers_from_config`] for `region` (the stack's), whatever `cfg`'s own region is.
pub fn readers_in_region(cfg: &SdkConfig, region: &str) -> Readers {
    let cfg = cfg
        .to_builder()
        .region(aws_config::Region::new(region.to_owned()))
        .build();
    readers_from_config(&cfg)
}

/// Every reader, with clients for `cfg`'s region (the stack's): the SDK readers declared
/// beside their deleters, and Cloud Control for every other type it reads.
pub fn readers_from_config(cfg: &SdkConfig) -> Readers {
    let iam = aws_sdk_iam::Client::new(cfg);
    let ec2 = aws_sdk_ec2::Client::new(cfg);
    Readers::empty()
        .with_sdk(S3BucketDeleter::new(s3_client(cfg)))
        .with_sdk(SqsQueueDeleter::new(aws_sdk_sqs::Client::new(cfg)))
        .with_sdk(SnsTopicDeleter::new(aws_sdk_sns::Client::new(cfg)))
        .with_sdk(SsmParameterDeleter::new(aws_sdk_ssm::Client::new(cfg)))
        .with_sdk(IamRoleDeleter::new(iam.clone()))
        .with_sdk(IamPolicyDeleter::new(iam.clone()))
        .with_sdk(IamManagedPolicyDeleter::new(iam))
        .with_sdk(DynamoTableDeleter::new(aws_sdk_dynamodb::Client::new(cfg)))
        .with_sdk(LambdaFunctionDeleter::new(
            aws_sdk_lambda::Client::new(cfg),
            ec2.clone(),
        ))
        .with_sdk(LogGroupDeleter::new(aws_sdk_cloudwatchlogs::Client::new(
            cfg,
        )))
        .with_sdk(KmsKeyDeleter::new(aws_sdk_kms::Client::new(cfg)))
        .with_sdk(SecurityGroupDeleter::new(ec2))
        .with_sdk(EventsRuleDeleter::new(aws_sdk_eventbridge::Client::new(
            cfg,
        )))
        .with_cloud_control(Arc::new(CloudControlReader::new(
            aws_sdk_cloudcontrol::Client::new(cfg),
        )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Route;
    use cdkd_core::destroy::decide::DeleterCatalog;

    fn registry() -> Registry {
        let cfg = SdkConfig::builder()
            .region(aws_config::Region::new("us-east-1"))
            .behavior_version(aws_config::BehaviorVersion::latest())
            .build();
        registry_from_config(&cfg, s3_client(&cfg))
    }

    #[test]
    fn registry_routes_security_groups_event_buses_and_rules_to_their_sdk_deleters() {
        let reg = registry();
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
        assert_eq!(
            reg.route_for("AWS::Events::Rule", Some("cc-api")),
            Route::CloudControl
        );
    }

    #[test]
    fn cc_api_records_of_deleters_that_complete_cloud_control_go_to_the_sdk_deleter() {
        let reg = registry();
        // Created through Cloud Control, still deleted by the SDK deleter that sweeps
        // Lambda's interfaces, waits for the group, or turns instance protection off.
        let completes: Vec<&str> = reg
            .sdk_types()
            .filter(|t| {
                reg.sdk_deleter(t)
                    .is_some_and(|c| c.completes_cloud_control)
            })
            .collect();
        assert_eq!(
            completes,
            [
                "AWS::EC2::Instance",
                "AWS::EC2::SecurityGroup",
                "AWS::Lambda::Function"
            ]
        );
        for t in completes {
            assert_eq!(reg.route_for(t, Some("cc-api")), Route::Sdk, "{t}");
        }
    }

    #[test]
    fn no_sdk_deleter_takes_a_final_snapshot_yet() {
        let reg = registry();
        assert!(reg.sdk_types().count() > 20);
        assert!(reg
            .sdk_types()
            .all(|t| reg.sdk_deleter(t).is_some_and(|c| !c.final_snapshot)));
    }

    #[test]
    fn readers_declare_the_sdk_types_and_leave_the_rest_to_cloud_control() {
        use cdkd_core::repair::reading::ReadRoute;
        let cfg = SdkConfig::builder()
            .region(aws_config::Region::new("us-east-1"))
            .behavior_version(aws_config::BehaviorVersion::latest())
            .build();
        let r = readers_from_config(&cfg);
        assert_eq!(
            r.sdk_types().collect::<Vec<_>>(),
            [
                "AWS::DynamoDB::Table",
                "AWS::EC2::SecurityGroup",
                "AWS::Events::Rule",
                "AWS::IAM::ManagedPolicy",
                "AWS::IAM::Policy",
                "AWS::IAM::Role",
                "AWS::KMS::Key",
                "AWS::Lambda::Function",
                "AWS::Logs::LogGroup",
                "AWS::S3::Bucket",
                "AWS::SNS::Topic",
                "AWS::SQS::Queue",
                "AWS::SSM::Parameter",
            ]
        );
        assert_eq!(r.route("AWS::SQS::Queue", None), ReadRoute::Sdk);
        assert_eq!(
            r.route("AWS::SQS::Queue", Some("cc-api")),
            ReadRoute::CloudControl
        );
        assert_eq!(r.route("AWS::ECS::Cluster", None), ReadRoute::CloudControl);
        assert_eq!(r.route("AWS::IAM::User", None), ReadRoute::CloudControl);
        for t in [
            "AWS::CDK::Metadata",
            "Custom::Thing",
            "AWS::CloudFormation::CustomResource",
            "AWS::CloudFormation::Stack",
            "AWS::CloudFormation::WaitConditionHandle",
        ] {
            assert_eq!(r.route(t, None), ReadRoute::Unsupported, "{t}");
        }
        let no_cc = Readers::empty();
        assert!(!no_cc.has_reader("AWS::ECS::Cluster"));
    }
}
