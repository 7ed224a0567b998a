//! The readers of `state refresh-observed` (docs/repairs.md, "Per resource") on real emulator
//! resources: one test per SDK reader, each reading back what the test set, in
//! CloudFormation's property names; a resource that does not exist reads as gone.
//!
//! Run: `scripts/with-emulator.sh cargo test --workspace --test e2e -- --test-threads=1 refresh_reader`.

use cdkd_core::repair::refresh::ReadResult;
use cdkd_deleters::clients::{aws_sdk_ec2, aws_sdk_eventbridge, readers_from_config};
use cdkd_deleters::read::registry::request;
use cdkd_deleters::Readers;
use cdkd_tests::deleters::{cfg, unique, HOME};
use cdkd_tests::fixtures;
use serde_json::{json, Value};

const TRUST: &str = fixtures::LAMBDA_TRUST;
const POLICY: &str = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]}"#;

async fn readers() -> Readers {
    readers_from_config(&cfg(HOME).await)
}

/// Reads `entry` as the only resource of a record (besides `siblings`).
async fn read_in(entry: Value, siblings: Value) -> ReadResult {
    let mut resources = siblings.as_object().cloned().unwrap_or_default();
    resources.insert("R".into(), entry.clone());
    let record = json!({ "resources": resources });
    let req = request(record.as_object().unwrap(), "R", &entry);
    readers().await.read(&req).await
}

async fn read(resource_type: &str, physical_id: &str) -> ReadResult {
    read_in(
        json!({"resourceType": resource_type, "physicalId": physical_id, "properties": {}}),
        json!({}),
    )
    .await
}

fn reading(r: ReadResult) -> Value {
    match r {
        ReadResult::Read(v) => v,
        other => panic!("expected a reading, got {other:?}"),
    }
}

#[tokio::test]
async fn refresh_reader_s3_bucket_reads_name_versioning_and_tags() {
    let s3 = cdkd_tests::s3().await;
    let bucket = cdkd_tests::fresh_bucket(&s3).await;
    cdkd_tests::enable_versioning(&s3, &bucket).await;
    let tag = aws_sdk_s3::types::Tag::builder()
        .key("team")
        .value("core")
        .build()
        .unwrap();
    s3.put_bucket_tagging()
        .bucket(&bucket)
        .tagging(
            aws_sdk_s3::types::Tagging::builder()
                .tag_set(tag)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let v = reading(read("AWS::S3::Bucket", &bucket).await);
    assert_eq!(v["BucketName"], json!(bucket));
    // The emulator answers GetBucketVersioning as S3 does (scripts/moto_ext/s3_fixes.py).
    assert_eq!(v["VersioningConfiguration"], json!({"Status": "Enabled"}));
    assert_eq!(v["Tags"], json!([{"Key": "team", "Value": "core"}]));
}

#[tokio::test]
async fn refresh_reader_sqs_queue_reads_attributes_as_numbers_and_tags() {
    use aws_sdk_sqs::types::QueueAttributeName as A;
    let sqs = aws_sdk_sqs::Client::new(&cfg(HOME).await);
    let name = unique("rq");
    let url = sqs
        .create_queue()
        .queue_name(&name)
        .attributes(A::VisibilityTimeout, "45")
        .tags("env", "dev")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let v = reading(read("AWS::SQS::Queue", &url).await);
    assert_eq!(v["QueueName"], json!(name));
    assert_eq!(v["VisibilityTimeout"], json!(45));
    assert_eq!(v["Tags"], json!([{"Key": "env", "Value": "dev"}]));
}

#[tokio::test]
async fn refresh_reader_sns_topic_reads_name_display_name_and_tags() {
    let sns = aws_sdk_sns::Client::new(&cfg(HOME).await);
    let name = unique("rt");
    let arn = sns
        .create_topic()
        .name(&name)
        .attributes("DisplayName", "Alerts")
        .tags(
            aws_sdk_sns::types::Tag::builder()
                .key("env")
                .value("dev")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    let v = reading(read("AWS::SNS::Topic", &arn).await);
    assert_eq!(v["TopicName"], json!(name));
    assert_eq!(v["DisplayName"], json!("Alerts"));
    assert_eq!(v["Tags"], json!([{"Key": "env", "Value": "dev"}]));
}

#[tokio::test]
async fn refresh_reader_ssm_parameter_reads_value_type_tags_and_never_a_secure_value() {
    use aws_sdk_ssm::types::{ParameterType, Tag};
    let ssm = aws_sdk_ssm::Client::new(&cfg(HOME).await);
    let name = format!("/cdkd-flow/{}", unique("rp"));
    ssm.put_parameter()
        .name(&name)
        .value("v1")
        .r#type(ParameterType::String)
        .description("config")
        .tags(Tag::builder().key("env").value("dev").build().unwrap())
        .send()
        .await
        .unwrap();
    let v = reading(read("AWS::SSM::Parameter", &name).await);
    assert_eq!(v["Name"], json!(name));
    assert_eq!(v["Type"], json!("String"));
    assert_eq!(v["Value"], json!("v1"));
    assert_eq!(v["Description"], json!("config"));
    assert_eq!(v["Tags"], json!({"env": "dev"}));

    let secure = format!("/cdkd-flow/{}", unique("rps"));
    ssm.put_parameter()
        .name(&secure)
        .value("hunter2")
        .r#type(ParameterType::SecureString)
        .send()
        .await
        .unwrap();
    let v = reading(read("AWS::SSM::Parameter", &secure).await);
    assert_eq!(v["Type"], json!("SecureString"));
    assert!(v.get("Value").is_none(), "{v}");
    assert!(!v.to_string().contains("hunter2"), "{v}");
}

#[tokio::test]
async fn refresh_reader_iam_role_reads_trust_managed_and_inline_policies_but_not_siblings() {
    let iam = aws_sdk_iam::Client::new(&cfg(HOME).await);
    let role = unique("rr");
    iam.create_role()
        .role_name(&role)
        .assume_role_policy_document(TRUST)
        .description("app role")
        .send()
        .await
        .unwrap();
    let managed = iam
        .create_policy()
        .policy_name(unique("rmp"))
        .policy_document(POLICY)
        .send()
        .await
        .unwrap()
        .policy
        .unwrap()
        .arn
        .unwrap();
    iam.attach_role_policy()
        .role_name(&role)
        .policy_arn(&managed)
        .send()
        .await
        .unwrap();
    for p in ["own", "sibling"] {
        iam.put_role_policy()
            .role_name(&role)
            .policy_name(p)
            .policy_document(POLICY)
            .send()
            .await
            .unwrap();
    }
    let sibling = json!({"P": {"resourceType": "AWS::IAM::Policy", "physicalId": "sibling",
        "properties": {"PolicyName": "sibling", "Roles": [role]}}});
    let v = reading(
        read_in(
            json!({"resourceType": "AWS::IAM::Role", "physicalId": role, "properties": {}}),
            sibling,
        )
        .await,
    );
    assert_eq!(v["RoleName"], json!(role));
    assert_eq!(v["Description"], json!("app role"));
    assert_eq!(
        v["AssumeRolePolicyDocument"],
        serde_json::from_str::<Value>(TRUST).unwrap()
    );
    assert_eq!(v["ManagedPolicyArns"], json!([managed]));
    assert_eq!(
        v["Policies"],
        json!([{"PolicyName": "own", "PolicyDocument": serde_json::from_str::<Value>(POLICY).unwrap()}])
    );
}

#[tokio::test]
async fn refresh_reader_iam_inline_policy_reads_document_and_the_roles_that_have_it() {
    let iam = aws_sdk_iam::Client::new(&cfg(HOME).await);
    let role = unique("rir");
    iam.create_role()
        .role_name(&role)
        .assume_role_policy_document(TRUST)
        .send()
        .await
        .unwrap();
    let name = unique("rip");
    iam.put_role_policy()
        .role_name(&role)
        .policy_name(&name)
        .policy_document(POLICY)
        .send()
        .await
        .unwrap();
    let v = reading(
        read_in(
            json!({"resourceType": "AWS::IAM::Policy", "physicalId": name,
                   "properties": {"PolicyName": name, "Roles": [role, "no-such-role"]}}),
            json!({}),
        )
        .await,
    );
    assert_eq!(v["PolicyName"], json!(name));
    assert_eq!(
        v["PolicyDocument"],
        serde_json::from_str::<Value>(POLICY).unwrap()
    );
    assert_eq!(v["Roles"], json!([role]));
}

#[tokio::test]
async fn refresh_reader_iam_managed_policy_reads_document_and_attachments() {
    let iam = aws_sdk_iam::Client::new(&cfg(HOME).await);
    let role = unique("rmr");
    iam.create_role()
        .role_name(&role)
        .assume_role_policy_document(TRUST)
        .send()
        .await
        .unwrap();
    let name = unique("rmp");
    let arn = iam
        .create_policy()
        .policy_name(&name)
        .policy_document(POLICY)
        .send()
        .await
        .unwrap()
        .policy
        .unwrap()
        .arn
        .unwrap();
    iam.attach_role_policy()
        .role_name(&role)
        .policy_arn(&arn)
        .send()
        .await
        .unwrap();
    let v = reading(read("AWS::IAM::ManagedPolicy", &arn).await);
    assert_eq!(v["ManagedPolicyName"], json!(name));
    assert_eq!(
        v["PolicyDocument"],
        serde_json::from_str::<Value>(POLICY).unwrap()
    );
    assert_eq!(v["Roles"], json!([role]));
}

#[tokio::test]
async fn refresh_reader_dynamodb_table_reads_keys_billing_and_tags() {
    let ddb = aws_sdk_dynamodb::Client::new(&cfg(HOME).await);
    let name = unique("rtab");
    fixtures::pk_table(&ddb, &name, false).await;
    let arn = ddb
        .describe_table()
        .table_name(&name)
        .send()
        .await
        .unwrap()
        .table
        .unwrap()
        .table_arn
        .unwrap();
    ddb.tag_resource()
        .resource_arn(arn)
        .tags(
            aws_sdk_dynamodb::types::Tag::builder()
                .key("env")
                .value("dev")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let v = reading(read("AWS::DynamoDB::Table", &name).await);
    assert_eq!(v["TableName"], json!(name));
    assert_eq!(
        v["KeySchema"],
        json!([{"AttributeName": "pk", "KeyType": "HASH"}])
    );
    assert_eq!(
        v["AttributeDefinitions"],
        json!([{"AttributeName": "pk", "AttributeType": "S"}])
    );
    assert_eq!(v["BillingMode"], json!("PAY_PER_REQUEST"));
    assert_eq!(v["Tags"], json!([{"Key": "env", "Value": "dev"}]));
}

#[tokio::test]
async fn refresh_reader_lambda_function_reads_configuration_and_environment() {
    use aws_sdk_lambda::types::{Environment, Runtime};
    let c = cfg(HOME).await;
    let name = unique("rfn");
    fixtures::stub_function(&c, &name, Runtime::Nodejs20x, None).await;
    let lambda = aws_sdk_lambda::Client::new(&c);
    lambda
        .update_function_configuration()
        .function_name(&name)
        .timeout(30)
        .environment(
            Environment::builder()
                .variables("DB_PASSWORD", "hunter2")
                .build(),
        )
        .send()
        .await
        .unwrap();
    let v = reading(read("AWS::Lambda::Function", &name).await);
    assert_eq!(v["FunctionName"], json!(name));
    assert_eq!(v["Runtime"], json!("nodejs20.x"));
    assert_eq!(v["Handler"], json!("index.handler"));
    assert_eq!(v["Timeout"], json!(30));
    // The reader returns what AWS echoes; redaction against the record hides it.
    assert_eq!(
        v["Environment"],
        json!({"Variables": {"DB_PASSWORD": "hunter2"}})
    );
}

#[tokio::test]
async fn refresh_reader_log_group_reads_retention_and_tags() {
    let logs = aws_sdk_cloudwatchlogs::Client::new(&cfg(HOME).await);
    let name = format!("/cdkd-flow/{}", unique("rlg"));
    logs.create_log_group()
        .log_group_name(&name)
        .tags("env", "dev")
        .send()
        .await
        .unwrap();
    logs.put_retention_policy()
        .log_group_name(&name)
        .retention_in_days(7)
        .send()
        .await
        .unwrap();
    let v = reading(read("AWS::Logs::LogGroup", &name).await);
    assert_eq!(v["LogGroupName"], json!(name));
    assert_eq!(v["RetentionInDays"], json!(7));
    assert_eq!(v["Tags"], json!([{"Key": "env", "Value": "dev"}]));
}

#[tokio::test]
async fn refresh_reader_kms_key_reads_description_policy_rotation_and_tags() {
    let kms = aws_sdk_kms::Client::new(&cfg(HOME).await);
    let key = kms
        .create_key()
        .description("app key")
        .tags(
            aws_sdk_kms::types::Tag::builder()
                .tag_key("env")
                .tag_value("dev")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap()
        .key_metadata
        .unwrap()
        .key_id;
    kms.enable_key_rotation().key_id(&key).send().await.unwrap();
    let v = reading(read("AWS::KMS::Key", &key).await);
    assert_eq!(v["Description"], json!("app key"));
    assert_eq!(v["Enabled"], json!(true));
    assert_eq!(v["EnableKeyRotation"], json!(true));
    assert!(v["KeyPolicy"].is_object(), "{v}");
    assert_eq!(v["Tags"], json!([{"Key": "env", "Value": "dev"}]));
    // A key pending deletion reads as gone.
    kms.schedule_key_deletion()
        .key_id(&key)
        .pending_window_in_days(7)
        .send()
        .await
        .unwrap();
    assert_eq!(read("AWS::KMS::Key", &key).await, ReadResult::Gone);
}

#[tokio::test]
async fn refresh_reader_security_group_reads_rules_one_source_each_and_tags() {
    use aws_sdk_ec2::types::{IpPermission, IpRange, Tag};
    let ec2 = aws_sdk_ec2::Client::new(&cfg(HOME).await);
    let vpc = ec2
        .create_vpc()
        .cidr_block("10.30.0.0/16")
        .send()
        .await
        .unwrap()
        .vpc
        .unwrap()
        .vpc_id
        .unwrap();
    let name = unique("rsg");
    let group = ec2
        .create_security_group()
        .group_name(&name)
        .description("web")
        .vpc_id(&vpc)
        .send()
        .await
        .unwrap()
        .group_id
        .unwrap();
    ec2.authorize_security_group_ingress()
        .group_id(&group)
        .ip_permissions(
            IpPermission::builder()
                .ip_protocol("tcp")
                .from_port(443)
                .to_port(443)
                .ip_ranges(IpRange::builder().cidr_ip("10.0.0.0/8").build())
                .ip_ranges(IpRange::builder().cidr_ip("192.168.0.0/16").build())
                .build(),
        )
        .send()
        .await
        .unwrap();
    ec2.create_tags()
        .resources(&group)
        .tags(Tag::builder().key("env").value("dev").build())
        .send()
        .await
        .unwrap();
    let v = reading(read("AWS::EC2::SecurityGroup", &group).await);
    assert_eq!(v["GroupName"], json!(name));
    assert_eq!(v["GroupDescription"], json!("web"));
    assert_eq!(v["VpcId"], json!(vpc));
    let ingress = v["SecurityGroupIngress"].as_array().unwrap();
    assert_eq!(ingress.len(), 2, "{v}");
    assert!(ingress.contains(
        &json!({"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443, "CidrIp": "10.0.0.0/8"})
    ));
    assert_eq!(v["Tags"], json!([{"Key": "env", "Value": "dev"}]));
}

#[tokio::test]
async fn refresh_reader_events_rule_reads_pattern_state_and_targets() {
    use aws_sdk_eventbridge::types::Target;
    let ev = aws_sdk_eventbridge::Client::new(&cfg(HOME).await);
    let name = unique("rrule");
    let arn = ev
        .put_rule()
        .name(&name)
        .event_pattern(r#"{"source":["cdkd.test"]}"#)
        .send()
        .await
        .unwrap()
        .rule_arn
        .unwrap();
    ev.put_targets()
        .rule(&name)
        .targets(
            Target::builder()
                .id("t1")
                .arn(format!("arn:aws:sqs:{HOME}:123456789012:q"))
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let v = reading(read("AWS::Events::Rule", &arn).await);
    assert_eq!(v["Name"], json!(name));
    assert_eq!(v["EventPattern"], json!({"source": ["cdkd.test"]}));
    assert_eq!(v["State"], json!("ENABLED"));
    assert_eq!(
        v["Targets"],
        json!([{"Id": "t1", "Arn": format!("arn:aws:sqs:{HOME}:123456789012:q")}])
    );
}

#[tokio::test]
async fn refresh_reader_rule_6_2_resources_that_do_not_exist_read_as_gone() {
    let missing = [
        ("AWS::S3::Bucket", unique("nobucket")),
        (
            "AWS::SQS::Queue",
            format!("http://127.0.0.1/123456789012/{}", unique("noq")),
        ),
        (
            "AWS::SNS::Topic",
            format!("arn:aws:sns:{HOME}:123456789012:{}", unique("not")),
        ),
        ("AWS::SSM::Parameter", format!("/{}", unique("nop"))),
        ("AWS::IAM::Role", unique("norole")),
        ("AWS::DynamoDB::Table", unique("notab")),
        ("AWS::Lambda::Function", unique("nofn")),
        ("AWS::Logs::LogGroup", format!("/{}", unique("nolg"))),
        (
            "AWS::Events::Rule",
            format!("arn:aws:events:{HOME}:123456789012:rule/{}", unique("nor")),
        ),
        (
            "AWS::EC2::SecurityGroup",
            "sg-0123456789abcdef0".to_string(),
        ),
    ];
    for (t, id) in missing {
        assert_eq!(read(t, &id).await, ReadResult::Gone, "{t} {id}");
    }
}
