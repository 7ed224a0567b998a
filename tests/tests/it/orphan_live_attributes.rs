//! The live attribute reads of `state orphan --resource` (docs/repairs.md, "Live attribute reads") on real
//! emulator resources: one test per SDK reader that declares attributes, each comparing
//! the live answer with what the emulator said when the resource was made; a resource
//! that does not exist answers a failure naming it, its type and the cause; a
//! SecureString's value is never read.
//!
//! Run: `scripts/with-emulator.sh cargo test --workspace --test e2e -- --test-threads=1 live_attributes`.

use std::collections::BTreeMap;

use cdkd_core::repair::rewrite::{live_reads_needed, LiveAttr};
use cdkd_deleters::clients::{aws_sdk_ec2, aws_sdk_eventbridge, readers_from_config};
use cdkd_deleters::read::registry::READ_CONCURRENCY;
use cdkd_tests::deleters::{cfg, unique, HOME};
use cdkd_tests::fixtures;
use serde_json::{json, Map, Value};

const ACCOUNT: &str = "123456789012";

/// The live answers for `attrs` of `R` (`resource_type`, `physical_id`), removed from a
/// record whose `K` refers to each of them through Fn::GetAtt. Keyed by attribute.
async fn live(
    resource_type: &str,
    physical_id: &str,
    attrs: &[&str],
) -> BTreeMap<String, LiveAttr> {
    let props: Map<String, Value> = attrs
        .iter()
        .map(|a| (a.replace('.', "_"), json!({"Fn::GetAtt": ["R", a]})))
        .collect();
    let record = json!({"resources": {
        "R": {"resourceType": resource_type, "physicalId": physical_id, "properties": {},
              "attributes": {}},
        "K": {"resourceType": "AWS::Lambda::Function", "physicalId": "k", "properties": props}
    }});
    let record = record.as_object().unwrap();
    let pairs = live_reads_needed(record, &["R".to_string()]);
    readers_from_config(&cfg(HOME).await)
        .read_live_attributes(record, &pairs, READ_CONCURRENCY)
        .await
        .into_iter()
        .map(|((_, attr), answer)| (attr, answer))
        .collect()
}

fn value(v: impl Into<Value>) -> LiveAttr {
    LiveAttr::Value(v.into())
}

#[tokio::test]
async fn live_attributes_s3_bucket_arn_and_domain_names_from_its_region() {
    let s3 = cdkd_tests::s3().await;
    let bucket = cdkd_tests::fresh_bucket(&s3).await;
    let got = live(
        "AWS::S3::Bucket",
        &bucket,
        &[
            "Arn",
            "DomainName",
            "RegionalDomainName",
            "DualStackDomainName",
            "WebsiteURL",
        ],
    )
    .await;
    assert_eq!(got["Arn"], value(format!("arn:aws:s3:::{bucket}")));
    assert_eq!(
        got["DomainName"],
        value(format!("{bucket}.s3.amazonaws.com"))
    );
    assert_eq!(
        got["RegionalDomainName"],
        value(format!("{bucket}.s3.{HOME}.amazonaws.com"))
    );
    assert_eq!(
        got["DualStackDomainName"],
        value(format!("{bucket}.s3.dualstack.{HOME}.amazonaws.com"))
    );
    assert_eq!(
        got["WebsiteURL"],
        value(format!("http://{bucket}.s3-website-{HOME}.amazonaws.com"))
    );
}

#[tokio::test]
async fn live_attributes_sqs_queue_arn_name_and_url() {
    use aws_sdk_sqs::types::QueueAttributeName as A;
    let sqs = aws_sdk_sqs::Client::new(&cfg(HOME).await);
    let name = unique("lq");
    let url = sqs
        .create_queue()
        .queue_name(&name)
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let arn = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(A::QueueArn)
        .send()
        .await
        .unwrap()
        .attributes
        .unwrap()[&A::QueueArn]
        .clone();
    let got = live("AWS::SQS::Queue", &url, &["Arn", "QueueName", "QueueUrl"]).await;
    assert_eq!(got["Arn"], value(arn));
    assert_eq!(got["QueueName"], value(name));
    assert_eq!(got["QueueUrl"], value(url));
}

#[tokio::test]
async fn live_attributes_sns_topic_arn_and_name() {
    let sns = aws_sdk_sns::Client::new(&cfg(HOME).await);
    let name = unique("lt");
    let arn = sns
        .create_topic()
        .name(&name)
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    let got = live("AWS::SNS::Topic", &arn, &["TopicArn", "TopicName"]).await;
    assert_eq!(got["TopicArn"], value(arn));
    assert_eq!(got["TopicName"], value(name));
}

#[tokio::test]
async fn live_attributes_iam_role_arn_and_role_id() {
    let iam = aws_sdk_iam::Client::new(&cfg(HOME).await);
    let name = unique("lr");
    let role = iam
        .create_role()
        .role_name(&name)
        .assume_role_policy_document(fixtures::LAMBDA_TRUST)
        .send()
        .await
        .unwrap()
        .role
        .unwrap();
    let got = live("AWS::IAM::Role", &name, &["Arn", "RoleId"]).await;
    assert_eq!(got["Arn"], value(role.arn()));
    assert_eq!(got["RoleId"], value(role.role_id()));
}

#[tokio::test]
async fn live_attributes_dynamodb_table_arn_and_stream_arn_only_with_a_stream() {
    use aws_sdk_dynamodb::types::{StreamSpecification, StreamViewType};
    let ddb = aws_sdk_dynamodb::Client::new(&cfg(HOME).await);
    let plain = unique("ltab");
    fixtures::pk_table(&ddb, &plain, false).await;
    let got = live("AWS::DynamoDB::Table", &plain, &["Arn", "StreamArn"]).await;
    assert_eq!(
        got["Arn"],
        value(format!("arn:aws:dynamodb:{HOME}:{ACCOUNT}:table/{plain}"))
    );
    // The read worked; a table without a stream has no StreamArn.
    assert_eq!(got["StreamArn"], LiveAttr::Undefined);
    let streamed = unique("lstab");
    fixtures::pk_table(&ddb, &streamed, false).await;
    ddb.update_table()
        .table_name(&streamed)
        .stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(StreamViewType::NewImage)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let stream = ddb
        .describe_table()
        .table_name(&streamed)
        .send()
        .await
        .unwrap()
        .table
        .unwrap()
        .latest_stream_arn
        .expect("the emulator reports the stream");
    let got = live("AWS::DynamoDB::Table", &streamed, &["StreamArn"]).await;
    assert_eq!(got["StreamArn"], value(stream));
}

#[tokio::test]
async fn live_attributes_lambda_function_arn() {
    use aws_sdk_lambda::types::Runtime;
    let c = cfg(HOME).await;
    let name = unique("lfn");
    fixtures::stub_function(&c, &name, Runtime::Nodejs20x, None).await;
    let arn = aws_sdk_lambda::Client::new(&c)
        .get_function()
        .function_name(&name)
        .send()
        .await
        .unwrap()
        .configuration
        .unwrap()
        .function_arn
        .unwrap();
    let got = live("AWS::Lambda::Function", &name, &["Arn"]).await;
    assert_eq!(got["Arn"], value(arn));
}

#[tokio::test]
async fn live_attributes_log_group_arn_in_cloudformation_form() {
    let logs = aws_sdk_cloudwatchlogs::Client::new(&cfg(HOME).await);
    let name = format!("/cdkd-flow/{}", unique("llg"));
    logs.create_log_group()
        .log_group_name(&name)
        .send()
        .await
        .unwrap();
    let got = live("AWS::Logs::LogGroup", &name, &["Arn"]).await;
    assert_eq!(
        got["Arn"],
        value(format!("arn:aws:logs:{HOME}:{ACCOUNT}:log-group:{name}:*"))
    );
}

#[tokio::test]
async fn live_attributes_kms_key_arn_and_key_id() {
    let kms = aws_sdk_kms::Client::new(&cfg(HOME).await);
    let key = kms.create_key().send().await.unwrap().key_metadata.unwrap();
    let got = live("AWS::KMS::Key", key.key_id(), &["Arn", "KeyId"]).await;
    assert_eq!(got["Arn"], value(key.arn().unwrap()));
    assert_eq!(got["KeyId"], value(key.key_id()));
}

#[tokio::test]
async fn live_attributes_ssm_parameter_type_and_value_never_a_secure_value() {
    use aws_sdk_ssm::types::ParameterType;
    let ssm = aws_sdk_ssm::Client::new(&cfg(HOME).await);
    let plain = format!("/cdkd-flow/{}", unique("lp"));
    let secure = format!("/cdkd-flow/{}", unique("lsp"));
    for (name, ty, v) in [
        (&plain, ParameterType::String, "v-live"),
        (&secure, ParameterType::SecureString, "s3cr3t-live"),
    ] {
        ssm.put_parameter()
            .name(name)
            .value(v)
            .r#type(ty)
            .send()
            .await
            .unwrap();
    }
    let got = live("AWS::SSM::Parameter", &plain, &["Type", "Value"]).await;
    assert_eq!(got["Type"], value("String"));
    assert_eq!(got["Value"], value("v-live"));
    let got = live("AWS::SSM::Parameter", &secure, &["Type", "Value"]).await;
    assert_eq!(got["Type"], value("SecureString"));
    assert_eq!(got["Value"], LiveAttr::Undefined);
}

#[tokio::test]
async fn live_attributes_security_group_id_and_vpc() {
    let ec2 = aws_sdk_ec2::Client::new(&cfg(HOME).await);
    let vpc = ec2
        .create_vpc()
        .cidr_block("10.31.0.0/16")
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap()
        .vpc_id
        .unwrap();
    let group = ec2
        .create_security_group()
        .group_name(unique("lsg"))
        .description("live")
        .vpc_id(&vpc)
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    let got = live("AWS::EC2::SecurityGroup", &group, &["GroupId", "VpcId"]).await;
    assert_eq!(got["GroupId"], value(group));
    assert_eq!(got["VpcId"], value(vpc));
}

#[tokio::test]
async fn live_attributes_events_rule_arn() {
    let ev = aws_sdk_eventbridge::Client::new(&cfg(HOME).await);
    let name = unique("lrule");
    let arn = ev
        .put_rule()
        .name(&name)
        .schedule_expression("rate(1 day)")
        .send()
        .await
        .unwrap()
        .rule_arn
        .unwrap();
    // Recorded by name (cdkd's SDK provider) or by ARN: the same rule.
    for id in [&name, &arn] {
        let got = live("AWS::Events::Rule", id, &["Arn"]).await;
        assert_eq!(got["Arn"], value(arn.clone()), "{id}");
    }
}

#[tokio::test]
async fn live_attributes_rule_7_4_a_resource_that_does_not_exist_fails_naming_it_and_its_type() {
    let missing = [
        ("AWS::S3::Bucket", unique("nobucket"), "Arn"),
        (
            "AWS::SQS::Queue",
            format!("http://127.0.0.1/{ACCOUNT}/{}", unique("noq")),
            "Arn",
        ),
        (
            "AWS::SNS::Topic",
            format!("arn:aws:sns:{HOME}:{ACCOUNT}:{}", unique("not")),
            "TopicName",
        ),
        ("AWS::IAM::Role", unique("norole"), "Arn"),
        ("AWS::DynamoDB::Table", unique("notab"), "Arn"),
        ("AWS::Lambda::Function", unique("nofn"), "Arn"),
        ("AWS::Logs::LogGroup", format!("/{}", unique("nolg")), "Arn"),
        (
            "AWS::SSM::Parameter",
            format!("/{}", unique("nop")),
            "Value",
        ),
        (
            "AWS::EC2::SecurityGroup",
            "sg-0123456789abcdef0".to_string(),
            "GroupId",
        ),
        (
            "AWS::Events::Rule",
            format!("arn:aws:events:{HOME}:{ACCOUNT}:rule/{}", unique("nor")),
            "Arn",
        ),
    ];
    for (t, id, attr) in missing {
        let got = live(t, &id, &[attr]).await;
        let LiveAttr::Failed(failure) = &got[attr] else {
            panic!("{t}: expected a failure: {got:?}");
        };
        assert_eq!(
            failure.to_string(),
            format!("R ({t}): it no longer exists ({id} was not found)"),
            "{t}"
        );
    }
}
