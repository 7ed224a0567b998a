//! Real emulator resources the tests create again and again: a Lambda function the
//! emulator stores but cannot run (optionally in a VPC), a DynamoDB table keyed by
//! `pk` (optionally deletion-protected), and an EC2 instance.

use aws_config::SdkConfig;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, KeySchemaElement, KeyType, ScalarAttributeType,
};
use aws_sdk_lambda::primitives::Blob;
use aws_sdk_lambda::types::{FunctionCode, Runtime, VpcConfig};

/// The trust policy of a Lambda execution role.
pub const LAMBDA_TRUST: &str = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}"#;

/// The smallest valid zip archive (an empty one).
pub fn empty_zip() -> Vec<u8> {
    let mut z = b"PK\x05\x06".to_vec();
    z.extend_from_slice(&[0u8; 18]);
    z
}

/// A new Lambda execution role named `name`; returns its ARN.
pub async fn lambda_role(c: &SdkConfig, name: &str) -> String {
    aws_sdk_iam::Client::new(c)
        .create_role()
        .role_name(name)
        .assume_role_policy_document(LAMBDA_TRUST)
        .send()
        .await
        .unwrap()
        .role
        .unwrap()
        .arn
}

/// A Lambda function named `name` (empty code, a role of its own named `name`-role),
/// in the subnet and security group of `vpc` when given; returns its ARN.
pub async fn stub_function(
    c: &SdkConfig,
    name: &str,
    runtime: Runtime,
    vpc: Option<(&str, &str)>,
) -> String {
    let role = lambda_role(c, &format!("{name}-role")).await;
    let handler = if runtime == Runtime::Providedal2023 {
        "bootstrap"
    } else {
        "index.handler"
    };
    aws_sdk_lambda::Client::new(c)
        .create_function()
        .function_name(name)
        .runtime(runtime)
        .handler(handler)
        .role(role)
        .code(
            FunctionCode::builder()
                .zip_file(Blob::new(empty_zip()))
                .build(),
        )
        .set_vpc_config(vpc.map(|(subnet, group)| {
            VpcConfig::builder()
                .subnet_ids(subnet)
                .security_group_ids(group)
                .build()
        }))
        .send()
        .await
        .unwrap()
        .function_arn
        .unwrap()
}

/// A pay-per-request DynamoDB table named `name` keyed by the string `pk`.
pub async fn pk_table(ddb: &aws_sdk_dynamodb::Client, name: &str, deletion_protection: bool) {
    ddb.create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("pk")
                .attribute_type(ScalarAttributeType::S)
                .build()
                .unwrap(),
        )
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("pk")
                .key_type(KeyType::Hash)
                .build()
                .unwrap(),
        )
        .deletion_protection_enabled(deletion_protection)
        .send()
        .await
        .unwrap();
}

/// An AMI the emulator lists (DescribeImages).
pub const EMULATOR_AMI: &str = "ami-12c6146b";

/// A running EC2 instance (in `subnet` when given); returns its id.
pub async fn run_instance(
    ec2: &cdkd_deleters::clients::aws_sdk_ec2::Client,
    subnet: Option<&str>,
) -> String {
    ec2.run_instances()
        .image_id(EMULATOR_AMI)
        .min_count(1)
        .max_count(1)
        .set_subnet_id(subnet.map(str::to_owned))
        .send()
        .await
        .unwrap()
        .instances()[0]
        .instance_id()
        .unwrap()
        .to_owned()
}

/// A real SQS queue named `name`; its URL.
pub async fn queue(c: &SdkConfig, name: &str) -> String {
    aws_sdk_sqs::Client::new(c)
        .create_queue()
        .queue_name(name)
        .send()
        .await
        .expect("create the queue")
        .queue_url()
        .expect("a queue URL")
        .to_string()
}

/// The ARN of the queue at `url` (what an SNS subscription or an EventBridge target
/// names).
pub async fn queue_arn(c: &SdkConfig, url: &str) -> String {
    use aws_sdk_sqs::types::QueueAttributeName;
    aws_sdk_sqs::Client::new(c)
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .expect("the queue's attributes")
        .attributes
        .and_then(|mut a| a.remove(&QueueAttributeName::QueueArn))
        .expect("a queue ARN")
}

/// A real SNS topic named `name`; its ARN.
pub async fn topic(c: &SdkConfig, name: &str) -> String {
    aws_sdk_sns::Client::new(c)
        .create_topic()
        .name(name)
        .send()
        .await
        .expect("create the topic")
        .topic_arn()
        .expect("a topic ARN")
        .to_string()
}

/// Whether the queue at `url` exists (`GetQueueAttributes` answers).
pub async fn queue_exists(c: &SdkConfig, url: &str) -> bool {
    aws_sdk_sqs::Client::new(c)
        .get_queue_attributes()
        .queue_url(url)
        .send()
        .await
        .is_ok()
}

/// Whether the topic `arn` exists (`GetTopicAttributes` answers).
pub async fn topic_exists(c: &SdkConfig, arn: &str) -> bool {
    aws_sdk_sns::Client::new(c)
        .get_topic_attributes()
        .topic_arn(arn)
        .send()
        .await
        .is_ok()
}

/// Whether the SSM parameter `name` exists (`GetParameter` answers).
pub async fn parameter_exists(c: &SdkConfig, name: &str) -> bool {
    aws_sdk_ssm::Client::new(c)
        .get_parameter()
        .name(name)
        .send()
        .await
        .is_ok()
}
