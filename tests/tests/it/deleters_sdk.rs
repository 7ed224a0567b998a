//! SDK deleters against the local emulator (moto): for every deleter the resource is
//! really gone after the delete, a second delete is `AlreadyGone`, and a client in
//! another region than the record's cannot confirm a deletion (region guard). Plus the
//! S3 non-empty refusal, the IAM clean-up steps, and the OracleStack fixture record
//! deleted end to end through the registry.
//!
//! Run: `scripts/with-emulator.sh cargo test -p cdkd-tests --test deleters_sdk`.

use cdkd_deleters::clients::{registry_from_config, s3_client};
use cdkd_deleters::{DeleteErrorKind, DeleteProgress, DeleteRequest, RunContext};
use serde_json::{json, Value};

use cdkd_tests::deleters::{cfg, delete, registry, req, unique, HOME, OTHER};

/// The three rules every SDK deleter obeys: gone after delete, AlreadyGone on the second
/// delete, and "cannot confirm deletion" from a client in another region.
async fn assert_delete_rules(r: &DeleteRequest) {
    let home = registry(HOME).await;
    let first = delete(&home, r).await;
    assert_eq!(
        first,
        Ok(DeleteProgress::Done),
        "first delete of {}",
        r.physical_id
    );
    let again = delete(&home, r).await;
    assert_eq!(
        again,
        Ok(DeleteProgress::AlreadyGone),
        "second delete of {}",
        r.physical_id
    );
    let other = registry(OTHER).await;
    let guarded = delete(&other, r).await.unwrap_err();
    assert_eq!(
        guarded.kind,
        DeleteErrorKind::CannotConfirmDeletion,
        "{guarded}"
    );
    assert!(
        guarded.to_string().contains("cannot confirm deletion"),
        "{guarded}"
    );
    assert!(guarded.to_string().contains(&r.physical_id), "{guarded}");
}

// ---------------------------------------------------------------- S3 bucket

#[tokio::test]
async fn s3_bucket_delete_gone_then_already_gone_and_region_guarded() {
    let c = cfg(HOME).await;
    let s3 = s3_client(&c);
    let bucket = unique("del-bucket");
    s3.create_bucket().bucket(&bucket).send().await.unwrap();
    let r = req("AWS::S3::Bucket", &bucket, json!({}));
    assert_delete_rules(&r).await;
    assert!(
        s3.head_bucket().bucket(&bucket).send().await.is_err(),
        "bucket still exists"
    );
}

#[tokio::test]
async fn s3_bucket_not_empty_is_refused_naming_the_bucket_and_no_object_is_deleted() {
    let c = cfg(HOME).await;
    let s3 = s3_client(&c);
    let bucket = unique("del-full");
    s3.create_bucket().bucket(&bucket).send().await.unwrap();
    s3.put_object()
        .bucket(&bucket)
        .key("keep.txt")
        .body(b"data".to_vec().into())
        .send()
        .await
        .unwrap();
    let r = req("AWS::S3::Bucket", &bucket, json!({}));
    let err = delete(&registry(HOME).await, &r).await.unwrap_err();
    assert_eq!(err.kind, DeleteErrorKind::NotEmpty);
    assert!(!err.retryable);
    assert!(
        err.to_string()
            .contains(&format!("bucket {bucket} is not empty")),
        "{err}"
    );
    s3.head_object()
        .bucket(&bucket)
        .key("keep.txt")
        .send()
        .await
        .expect("the object was deleted");
    s3.head_bucket()
        .bucket(&bucket)
        .send()
        .await
        .expect("the bucket was deleted");
}

// ---------------------------------------------------------------- SQS queue

#[tokio::test]
async fn sqs_queue_delete_by_url_gone_then_already_gone_and_region_guarded() {
    let sqs = aws_sdk_sqs::Client::new(&cfg(HOME).await);
    let name = unique("del-queue");
    let url = sqs
        .create_queue()
        .queue_name(&name)
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let r = req("AWS::SQS::Queue", &url, json!({}));
    assert_delete_rules(&r).await;
    assert!(
        sqs.get_queue_url().queue_name(&name).send().await.is_err(),
        "queue still exists"
    );
}

#[tokio::test]
async fn sqs_queue_not_found_for_a_physical_id_that_is_not_a_url_cannot_confirm_deletion() {
    let r = req("AWS::SQS::Queue", &unique("not-a-url"), json!({}));
    let err = delete(&registry(HOME).await, &r).await.unwrap_err();
    assert_eq!(err.kind, DeleteErrorKind::CannotConfirmDeletion, "{err}");
}

// ---------------------------------------------------------------- SNS topic

#[tokio::test]
async fn sns_topic_delete_by_arn_gone_then_already_gone_and_region_guarded() {
    let sns = aws_sdk_sns::Client::new(&cfg(HOME).await);
    let arn = sns
        .create_topic()
        .name(unique("del-topic"))
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    let r = req("AWS::SNS::Topic", &arn, json!({}));
    assert_delete_rules(&r).await;
    let err = sns.get_topic_attributes().topic_arn(&arn).send().await;
    assert!(err.is_err(), "topic still exists");
}

// ---------------------------------------------------------------- IAM role

use cdkd_tests::fixtures::{empty_zip, LAMBDA_TRUST as TRUST};
const POLICY: &str = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]}"#;

#[tokio::test]
async fn iam_role_delete_detaches_managed_deletes_inline_leaves_instance_profiles_then_deletes() {
    let iam = aws_sdk_iam::Client::new(&cfg(HOME).await);
    let role = unique("del-role");
    iam.create_role()
        .role_name(&role)
        .assume_role_policy_document(TRUST)
        .send()
        .await
        .unwrap();
    let managed = iam
        .create_policy()
        .policy_name(unique("del-mp"))
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
    iam.put_role_policy()
        .role_name(&role)
        .policy_name("inline")
        .policy_document(POLICY)
        .send()
        .await
        .unwrap();
    let profile = unique("del-ip");
    iam.create_instance_profile()
        .instance_profile_name(&profile)
        .send()
        .await
        .unwrap();
    iam.add_role_to_instance_profile()
        .instance_profile_name(&profile)
        .role_name(&role)
        .send()
        .await
        .unwrap();

    let r = req("AWS::IAM::Role", &role, json!({}));
    assert_delete_rules(&r).await;

    let e = iam.get_role().role_name(&role).send().await.unwrap_err();
    assert_eq!(
        aws_sdk_iam::error::ProvideErrorMetadata::code(&e),
        Some("NoSuchEntity")
    );
    let ip = iam
        .get_instance_profile()
        .instance_profile_name(&profile)
        .send()
        .await
        .unwrap();
    assert!(
        ip.instance_profile.unwrap().roles.is_empty(),
        "role still in the instance profile"
    );
    let attached = iam
        .list_entities_for_policy()
        .policy_arn(&managed)
        .send()
        .await
        .unwrap();
    assert!(
        attached.policy_roles().is_empty(),
        "managed policy still attached"
    );
}

// ---------------------------------------------------------------- IAM inline policy

#[tokio::test]
async fn iam_inline_policy_is_deleted_from_every_role_user_and_group_it_records() {
    let iam = aws_sdk_iam::Client::new(&cfg(HOME).await);
    let role = unique("pol-role");
    let user = unique("pol-user");
    let group = unique("pol-group");
    let name = unique("InlinePolicy");
    iam.create_role()
        .role_name(&role)
        .assume_role_policy_document(TRUST)
        .send()
        .await
        .unwrap();
    iam.create_user().user_name(&user).send().await.unwrap();
    iam.create_group().group_name(&group).send().await.unwrap();
    iam.put_role_policy()
        .role_name(&role)
        .policy_name(&name)
        .policy_document(POLICY)
        .send()
        .await
        .unwrap();
    iam.put_user_policy()
        .user_name(&user)
        .policy_name(&name)
        .policy_document(POLICY)
        .send()
        .await
        .unwrap();
    iam.put_group_policy()
        .group_name(&group)
        .policy_name(&name)
        .policy_document(POLICY)
        .send()
        .await
        .unwrap();

    let r = req(
        "AWS::IAM::Policy",
        &name,
        json!({"PolicyName": name, "PolicyDocument": {}, "Roles": [role], "Users": [user], "Groups": [group]}),
    );
    assert_delete_rules(&r).await;

    assert!(iam
        .list_role_policies()
        .role_name(&role)
        .send()
        .await
        .unwrap()
        .policy_names
        .is_empty());
    assert!(iam
        .list_user_policies()
        .user_name(&user)
        .send()
        .await
        .unwrap()
        .policy_names
        .is_empty());
    assert!(iam
        .list_group_policies()
        .group_name(&group)
        .send()
        .await
        .unwrap()
        .policy_names
        .is_empty());
    // The principals themselves are untouched.
    iam.get_role().role_name(&role).send().await.unwrap();
}

#[tokio::test]
async fn iam_inline_policy_legacy_name_colon_role_physical_id_deletes_from_that_role() {
    let iam = aws_sdk_iam::Client::new(&cfg(HOME).await);
    let role = unique("legacy-role");
    let name = unique("LegacyPolicy");
    iam.create_role()
        .role_name(&role)
        .assume_role_policy_document(TRUST)
        .send()
        .await
        .unwrap();
    iam.put_role_policy()
        .role_name(&role)
        .policy_name(&name)
        .policy_document(POLICY)
        .send()
        .await
        .unwrap();
    let r = req("AWS::IAM::Policy", &format!("{name}:{role}"), json!({}));
    assert_eq!(
        delete(&registry(HOME).await, &r).await,
        Ok(DeleteProgress::Done)
    );
    assert!(iam
        .list_role_policies()
        .role_name(&role)
        .send()
        .await
        .unwrap()
        .policy_names
        .is_empty());
}

#[tokio::test]
async fn iam_inline_policy_without_principals_is_skipped_and_nothing_is_called() {
    let r = req(
        "AWS::IAM::Policy",
        "SomePolicy",
        json!({"PolicyName": "SomePolicy"}),
    );
    let err = delete(&registry(HOME).await, &r).await.unwrap_err();
    assert_eq!(err.kind, DeleteErrorKind::Skipped, "{err}");
}

// ---------------------------------------------------------------- IAM managed policy

#[tokio::test]
async fn iam_managed_policy_delete_removes_versions_and_attachments_then_the_policy() {
    let iam = aws_sdk_iam::Client::new(&cfg(HOME).await);
    let arn = iam
        .create_policy()
        .policy_name(unique("del-managed"))
        .policy_document(POLICY)
        .send()
        .await
        .unwrap()
        .policy
        .unwrap()
        .arn
        .unwrap();
    iam.create_policy_version()
        .policy_arn(&arn)
        .policy_document(POLICY)
        .set_as_default(true)
        .send()
        .await
        .unwrap();
    let role = unique("mp-role");
    let user = unique("mp-user");
    let group = unique("mp-group");
    iam.create_role()
        .role_name(&role)
        .assume_role_policy_document(TRUST)
        .send()
        .await
        .unwrap();
    iam.create_user().user_name(&user).send().await.unwrap();
    iam.create_group().group_name(&group).send().await.unwrap();
    iam.attach_role_policy()
        .role_name(&role)
        .policy_arn(&arn)
        .send()
        .await
        .unwrap();
    iam.attach_user_policy()
        .user_name(&user)
        .policy_arn(&arn)
        .send()
        .await
        .unwrap();
    iam.attach_group_policy()
        .group_name(&group)
        .policy_arn(&arn)
        .send()
        .await
        .unwrap();

    let r = req("AWS::IAM::ManagedPolicy", &arn, json!({}));
    assert_delete_rules(&r).await;

    assert!(
        iam.get_policy().policy_arn(&arn).send().await.is_err(),
        "policy still exists"
    );
    assert!(iam
        .list_attached_role_policies()
        .role_name(&role)
        .send()
        .await
        .unwrap()
        .attached_policies()
        .is_empty());
    assert!(iam
        .list_attached_user_policies()
        .user_name(&user)
        .send()
        .await
        .unwrap()
        .attached_policies()
        .is_empty());
    assert!(iam
        .list_attached_group_policies()
        .group_name(&group)
        .send()
        .await
        .unwrap()
        .attached_policies()
        .is_empty());
}

// ---------------------------------------------------------------- SSM parameter

#[tokio::test]
async fn ssm_parameter_delete_gone_then_already_gone_and_region_guarded() {
    let ssm = aws_sdk_ssm::Client::new(&cfg(HOME).await);
    let name = format!("/{}/param", unique("del"));
    ssm.put_parameter()
        .name(&name)
        .value("v")
        .r#type(aws_sdk_ssm::types::ParameterType::String)
        .send()
        .await
        .unwrap();
    let r = req(
        "AWS::SSM::Parameter",
        &name,
        json!({"Name": name, "Type": "String", "Value": "v"}),
    );
    assert_delete_rules(&r).await;
    assert!(
        ssm.get_parameter().name(&name).send().await.is_err(),
        "parameter still exists"
    );
}

// ---------------------------------------------------------------- DynamoDB table

#[tokio::test]
async fn dynamodb_table_delete_polls_until_gone_then_already_gone_and_region_guarded() {
    let ddb = aws_sdk_dynamodb::Client::new(&cfg(HOME).await);
    let name = unique("del-table");
    cdkd_tests::fixtures::pk_table(&ddb, &name, false).await;
    let r = req("AWS::DynamoDB::Table", &name, json!({}));
    assert_delete_rules(&r).await;
    assert!(
        ddb.describe_table().table_name(&name).send().await.is_err(),
        "table still exists"
    );
}

// ---------------------------------------------------------------- Lambda function

#[tokio::test]
async fn lambda_function_delete_gone_then_already_gone_and_region_guarded() {
    let c = cfg(HOME).await;
    let lambda = aws_sdk_lambda::Client::new(&c);
    let name = unique("del-fn");
    cdkd_tests::fixtures::stub_function(&c, &name, aws_sdk_lambda::types::Runtime::Python312, None)
        .await;
    let r = req("AWS::Lambda::Function", &name, json!({}));
    assert_delete_rules(&r).await;
    assert!(
        lambda
            .get_function()
            .function_name(&name)
            .send()
            .await
            .is_err(),
        "function still exists"
    );
}

// ---------------------------------------------------------------- CloudWatch log group

#[tokio::test]
async fn log_group_delete_gone_then_already_gone_and_region_guarded() {
    let logs = aws_sdk_cloudwatchlogs::Client::new(&cfg(HOME).await);
    let name = format!("/cdkd-flow/{}", unique("del-logs"));
    logs.create_log_group()
        .log_group_name(&name)
        .send()
        .await
        .unwrap();
    let r = req("AWS::Logs::LogGroup", &name, json!({}));
    assert_delete_rules(&r).await;
    let left = logs
        .describe_log_groups()
        .log_group_name_prefix(&name)
        .send()
        .await
        .unwrap();
    assert!(left.log_groups().is_empty(), "log group still exists");
}

// ---------------------------------------------------------------- KMS key

#[tokio::test]
async fn kms_key_delete_schedules_deletion_and_pending_deletion_counts_as_done() {
    let kms = aws_sdk_kms::Client::new(&cfg(HOME).await);
    let key = kms
        .create_key()
        .send()
        .await
        .unwrap()
        .key_metadata
        .unwrap()
        .key_id;
    let home = registry(HOME).await;
    let r = req("AWS::KMS::Key", &key, json!({}));
    assert_eq!(delete(&home, &r).await, Ok(DeleteProgress::Done));
    let meta = kms
        .describe_key()
        .key_id(&key)
        .send()
        .await
        .unwrap()
        .key_metadata
        .unwrap();
    assert_eq!(
        meta.key_state().map(|s| s.as_str()),
        Some("PendingDeletion")
    );
    assert!(meta.deletion_date().is_some());
    // Pending deletion already: nothing more to do.
    assert_eq!(delete(&home, &r).await, Ok(DeleteProgress::AlreadyGone));
}

#[tokio::test]
async fn kms_key_not_found_is_already_gone_at_home_and_cannot_confirm_deletion_elsewhere() {
    let missing = uuid::Uuid::new_v4().to_string();
    let r = req("AWS::KMS::Key", &missing, json!({}));
    assert_eq!(
        delete(&registry(HOME).await, &r).await,
        Ok(DeleteProgress::AlreadyGone)
    );
    let err = delete(&registry(OTHER).await, &r).await.unwrap_err();
    assert_eq!(err.kind, DeleteErrorKind::CannotConfirmDeletion, "{err}");
}

// ---------------------------------------------------------------- no-op, routing

#[tokio::test]
async fn cdk_metadata_delete_is_a_no_op() {
    let r = req("AWS::CDK::Metadata", "whatever", json!({}));
    assert_eq!(
        delete(&registry(HOME).await, &r).await,
        Ok(DeleteProgress::Done)
    );
}

// ---------------------------------------------------------------- the fixture record

/// The cdkd record fixture (one copy, kept with cdkd-core's tests).
fn oracle_record() -> Value {
    serde_json::from_str(include_str!(
        "../../../core/tests/it/fixtures/OracleStack.state.json"
    ))
    .expect("fixture parses")
}

fn record_request(record: &Value, logical_id: &str, run_id: &str) -> DeleteRequest {
    let res = &record["resources"][logical_id];
    DeleteRequest {
        logical_id: logical_id.into(),
        resource_type: res["resourceType"].as_str().unwrap().into(),
        physical_id: res["physicalId"].as_str().unwrap().into(),
        properties: res.get("properties").cloned().unwrap_or(Value::Null),
        attributes: res.get("attributes").cloned().unwrap_or(Value::Null),
        provisioned_by: res["provisionedBy"].as_str().map(str::to_owned),
        region: record["region"].as_str().unwrap().into(),
        attempt: 0,
        run: RunContext {
            run_id: run_id.into(),
            stack: record["stackName"].as_str().unwrap().into(),
            state_bucket: "unused".into(),
            state_prefix: "cdkd".into(),
        },
        options: Default::default(),
    }
}

/// Creates, in the emulator, the resources the OracleStack record lists (same names),
/// then deletes them from the record alone, dependents first, and checks they are gone.
/// The record's queue URL names another emulator port: the deleter sends it verbatim.
#[tokio::test]
async fn oracle_stack_record_resources_are_deleted_end_to_end_from_the_record_alone() {
    let record = oracle_record();
    let c = cfg(HOME).await;
    let s3 = s3_client(&c);
    let sns = aws_sdk_sns::Client::new(&c);
    let sqs = aws_sdk_sqs::Client::new(&c);
    let iam = aws_sdk_iam::Client::new(&c);
    let ssm = aws_sdk_ssm::Client::new(&c);
    let r = &record["resources"];

    let bucket = r["Bucket83908E77"]["physicalId"].as_str().unwrap();
    let _ = s3.create_bucket().bucket(bucket).send().await;
    let topic_name = r["TopicBFC7AF6E"]["attributes"]["TopicName"]
        .as_str()
        .unwrap();
    let topic_arn = sns
        .create_topic()
        .name(topic_name)
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    assert_eq!(
        topic_arn,
        r["TopicBFC7AF6E"]["physicalId"].as_str().unwrap()
    );
    let role = r["Role1ABCC5F0"]["physicalId"].as_str().unwrap();
    let _ = iam
        .create_role()
        .role_name(role)
        .assume_role_policy_document(TRUST)
        .send()
        .await;
    let queue_name = r["Queue4A7E3555"]["attributes"]["QueueName"]
        .as_str()
        .unwrap();
    sqs.create_queue()
        .queue_name(queue_name)
        .send()
        .await
        .unwrap();
    let policy = r["RoleDefaultPolicy5FFB7DAB"]["physicalId"]
        .as_str()
        .unwrap();
    iam.put_role_policy()
        .role_name(role)
        .policy_name(policy)
        .policy_document(POLICY)
        .send()
        .await
        .unwrap();
    let param = r["Param165332EC"]["physicalId"].as_str().unwrap();
    ssm.put_parameter()
        .name(param)
        .value("x")
        .r#type(aws_sdk_ssm::types::ParameterType::String)
        .overwrite(true)
        .send()
        .await
        .unwrap();

    let reg = registry_from_config(&c, s3_client(&c));
    // Dependents first: the policy and the parameter, then what they depend on.
    let order = [
        "RoleDefaultPolicy5FFB7DAB",
        "Param165332EC",
        "Bucket83908E77",
        "Queue4A7E3555",
        "Role1ABCC5F0",
        "TopicBFC7AF6E",
    ];
    for logical_id in order {
        let rq = record_request(&record, logical_id, "run-oracle");
        assert!(
            matches!(
                reg.route_for(&rq.resource_type, rq.provisioned_by.as_deref()),
                cdkd_deleters::Route::Sdk
            ),
            "{logical_id} is not routed to its SDK deleter"
        );
        let out = delete(&reg, &rq).await;
        assert_eq!(out, Ok(DeleteProgress::Done), "{logical_id}");
    }

    assert!(
        s3.head_bucket().bucket(bucket).send().await.is_err(),
        "bucket left"
    );
    assert!(
        sns.get_topic_attributes()
            .topic_arn(&topic_arn)
            .send()
            .await
            .is_err(),
        "topic left"
    );
    assert!(
        iam.get_role().role_name(role).send().await.is_err(),
        "role left"
    );
    assert!(
        sqs.get_queue_url()
            .queue_name(queue_name)
            .send()
            .await
            .is_err(),
        "queue left"
    );
    assert!(
        ssm.get_parameter().name(param).send().await.is_err(),
        "parameter left"
    );

    // A re-run (crash after the deletes, before the state write) finds everything gone.
    for logical_id in order {
        let rq = record_request(&record, logical_id, "run-oracle-2");
        assert_eq!(
            delete(&reg, &rq).await,
            Ok(DeleteProgress::AlreadyGone),
            "{logical_id} on re-run"
        );
    }
}

// ---------------------------------------------------------------- policies, subscriptions, profiles

#[tokio::test]
async fn s3_bucket_policy_delete_removes_the_policy_and_a_missing_bucket_is_already_gone() {
    let c = cfg(HOME).await;
    let s3 = s3_client(&c);
    let bucket = unique("del-bp");
    s3.create_bucket().bucket(&bucket).send().await.unwrap();
    let policy = format!(
        r#"{{"Version":"2012-10-17","Statement":[{{"Effect":"Deny","Principal":"*","Action":"s3:DeleteObject","Resource":"arn:aws:s3:::{bucket}/*"}}]}}"#
    );
    s3.put_bucket_policy()
        .bucket(&bucket)
        .policy(policy)
        .send()
        .await
        .unwrap();
    let r = req("AWS::S3::BucketPolicy", &bucket, json!({"Bucket": bucket}));
    let home = registry(HOME).await;
    assert_eq!(delete(&home, &r).await, Ok(DeleteProgress::Done));
    assert!(
        s3.get_bucket_policy().bucket(&bucket).send().await.is_err(),
        "policy still there"
    );
    s3.head_bucket()
        .bucket(&bucket)
        .send()
        .await
        .expect("the bucket itself must stay");
    s3.delete_bucket().bucket(&bucket).send().await.unwrap();
    assert_eq!(delete(&home, &r).await, Ok(DeleteProgress::AlreadyGone));
    let e = delete(&registry(OTHER).await, &r).await.unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::CannotConfirmDeletion, "{e}");
}

#[tokio::test]
async fn sqs_queue_policy_with_two_queues_clears_the_policy_of_both() {
    let sqs = aws_sdk_sqs::Client::new(&cfg(HOME).await);
    let mut urls = Vec::new();
    for _ in 0..2 {
        let url = sqs
            .create_queue()
            .queue_name(unique("qp"))
            .send()
            .await
            .unwrap()
            .queue_url
            .unwrap();
        sqs.set_queue_attributes()
            .queue_url(&url)
            .attributes(aws_sdk_sqs::types::QueueAttributeName::Policy, POLICY)
            .send()
            .await
            .unwrap();
        urls.push(url);
    }
    let r = req(
        "AWS::SQS::QueuePolicy",
        &urls[0],
        json!({"Queues": urls, "PolicyDocument": {}}),
    );
    let home = registry(HOME).await;
    assert_eq!(delete(&home, &r).await, Ok(DeleteProgress::Done));
    for url in &urls {
        let attrs = sqs
            .get_queue_attributes()
            .queue_url(url)
            .attribute_names(aws_sdk_sqs::types::QueueAttributeName::Policy)
            .send()
            .await
            .unwrap();
        let policy = attrs
            .attributes()
            .and_then(|a| a.get(&aws_sdk_sqs::types::QueueAttributeName::Policy))
            .cloned()
            .unwrap_or_default();
        assert_eq!(policy, "", "policy left on {url}");
    }
    for url in &urls {
        sqs.delete_queue().queue_url(url).send().await.unwrap();
    }
    assert_eq!(delete(&home, &r).await, Ok(DeleteProgress::AlreadyGone));
    let e = delete(&registry(OTHER).await, &r).await.unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::CannotConfirmDeletion, "{e}");
}

#[tokio::test]
async fn sns_topic_policy_resets_every_topic_of_the_comma_joined_id_to_the_default_policy() {
    let sns = aws_sdk_sns::Client::new(&cfg(HOME).await);
    let mut arns = Vec::new();
    for _ in 0..2 {
        let arn = sns
            .create_topic()
            .name(unique("tp"))
            .send()
            .await
            .unwrap()
            .topic_arn
            .unwrap();
        let policy = format!(
            r#"{{"Version":"2012-10-17","Statement":[{{"Sid":"cdkdtest","Effect":"Allow","Principal":{{"AWS":"*"}},"Action":"sns:Publish","Resource":"{arn}"}}]}}"#
        );
        sns.set_topic_attributes()
            .topic_arn(&arn)
            .attribute_name("Policy")
            .attribute_value(policy)
            .send()
            .await
            .unwrap();
        arns.push(arn);
    }
    let r = req(
        "AWS::SNS::TopicPolicy",
        &arns.join(","),
        json!({"Topics": arns}),
    );
    let home = registry(HOME).await;
    assert_eq!(delete(&home, &r).await, Ok(DeleteProgress::Done));
    for arn in &arns {
        let attrs = sns
            .get_topic_attributes()
            .topic_arn(arn)
            .send()
            .await
            .unwrap();
        let policy = attrs
            .attributes()
            .and_then(|a| a.get("Policy"))
            .cloned()
            .unwrap_or_default();
        assert!(
            !policy.contains("cdkdtest"),
            "policy left on {arn}: {policy}"
        );
    }
    for arn in &arns {
        sns.delete_topic().topic_arn(arn).send().await.unwrap();
    }
    assert_eq!(delete(&home, &r).await, Ok(DeleteProgress::AlreadyGone));
}

#[tokio::test]
async fn sns_subscription_unsubscribe_gone_then_already_gone_and_region_guarded() {
    let c = cfg(HOME).await;
    let sns = aws_sdk_sns::Client::new(&c);
    let sqs = aws_sdk_sqs::Client::new(&c);
    let topic = sns
        .create_topic()
        .name(unique("sub-topic"))
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    let queue = sqs
        .create_queue()
        .queue_name(unique("sub-queue"))
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let queue_arn = format!(
        "arn:aws:sqs:{HOME}:123456789012:{}",
        queue.rsplit('/').next().unwrap()
    );
    let sub = sns
        .subscribe()
        .topic_arn(&topic)
        .protocol("sqs")
        .endpoint(queue_arn)
        .send()
        .await
        .unwrap()
        .subscription_arn
        .unwrap();
    let r = req(
        "AWS::SNS::Subscription",
        &sub,
        json!({"TopicArn": topic, "Protocol": "sqs"}),
    );
    assert_delete_rules(&r).await;
    let left = sns
        .list_subscriptions_by_topic()
        .topic_arn(&topic)
        .send()
        .await
        .unwrap();
    assert!(left.subscriptions().is_empty(), "subscription still there");
}

#[tokio::test]
async fn iam_instance_profile_delete_removes_roles_then_the_profile() {
    let iam = aws_sdk_iam::Client::new(&cfg(HOME).await);
    let role = unique("ip-role");
    let profile = unique("del-profile");
    iam.create_role()
        .role_name(&role)
        .assume_role_policy_document(TRUST)
        .send()
        .await
        .unwrap();
    iam.create_instance_profile()
        .instance_profile_name(&profile)
        .send()
        .await
        .unwrap();
    iam.add_role_to_instance_profile()
        .instance_profile_name(&profile)
        .role_name(&role)
        .send()
        .await
        .unwrap();
    let r = req(
        "AWS::IAM::InstanceProfile",
        &profile,
        json!({"Roles": [role]}),
    );
    assert_delete_rules(&r).await;
    assert!(iam
        .get_instance_profile()
        .instance_profile_name(&profile)
        .send()
        .await
        .is_err());
    iam.get_role()
        .role_name(&role)
        .send()
        .await
        .expect("the role itself must stay");
}

#[tokio::test]
async fn iam_user_delete_removes_keys_login_policies_and_groups_then_the_user() {
    let iam = aws_sdk_iam::Client::new(&cfg(HOME).await);
    let user = unique("del-user");
    let group = unique("user-group");
    iam.create_user().user_name(&user).send().await.unwrap();
    iam.create_group().group_name(&group).send().await.unwrap();
    iam.add_user_to_group()
        .group_name(&group)
        .user_name(&user)
        .send()
        .await
        .unwrap();
    iam.create_access_key()
        .user_name(&user)
        .send()
        .await
        .unwrap();
    iam.create_login_profile()
        .user_name(&user)
        .password("Secret-Passw0rd!")
        .send()
        .await
        .unwrap();
    iam.put_user_policy()
        .user_name(&user)
        .policy_name("inline")
        .policy_document(POLICY)
        .send()
        .await
        .unwrap();
    let managed = iam
        .create_policy()
        .policy_name(unique("user-mp"))
        .policy_document(POLICY)
        .send()
        .await
        .unwrap()
        .policy
        .unwrap()
        .arn
        .unwrap();
    iam.attach_user_policy()
        .user_name(&user)
        .policy_arn(&managed)
        .send()
        .await
        .unwrap();

    let r = req("AWS::IAM::User", &user, json!({}));
    assert_delete_rules(&r).await;
    assert!(
        iam.get_user().user_name(&user).send().await.is_err(),
        "user still exists"
    );
    let g = iam.get_group().group_name(&group).send().await.unwrap();
    assert!(g.users().is_empty(), "user still in the group");
}

#[tokio::test]
async fn iam_group_delete_removes_members_and_policies_then_the_group() {
    let iam = aws_sdk_iam::Client::new(&cfg(HOME).await);
    let user = unique("grp-user");
    let group = unique("del-group");
    iam.create_user().user_name(&user).send().await.unwrap();
    iam.create_group().group_name(&group).send().await.unwrap();
    iam.add_user_to_group()
        .group_name(&group)
        .user_name(&user)
        .send()
        .await
        .unwrap();
    iam.put_group_policy()
        .group_name(&group)
        .policy_name("inline")
        .policy_document(POLICY)
        .send()
        .await
        .unwrap();
    let managed = iam
        .create_policy()
        .policy_name(unique("grp-mp"))
        .policy_document(POLICY)
        .send()
        .await
        .unwrap()
        .policy
        .unwrap()
        .arn
        .unwrap();
    iam.attach_group_policy()
        .group_name(&group)
        .policy_arn(&managed)
        .send()
        .await
        .unwrap();

    let r = req("AWS::IAM::Group", &group, json!({}));
    assert_delete_rules(&r).await;
    assert!(
        iam.get_group().group_name(&group).send().await.is_err(),
        "group still exists"
    );
    iam.get_user()
        .user_name(&user)
        .send()
        .await
        .expect("the member itself must stay");
}

#[tokio::test]
async fn lambda_layer_version_delete_gone_then_already_gone_and_region_guarded() {
    let lambda = aws_sdk_lambda::Client::new(&cfg(HOME).await);
    let out = lambda
        .publish_layer_version()
        .layer_name(unique("del-layer"))
        .content(
            aws_sdk_lambda::types::LayerVersionContentInput::builder()
                .zip_file(aws_sdk_lambda::primitives::Blob::new(empty_zip()))
                .build(),
        )
        .send()
        .await
        .unwrap();
    let arn = out.layer_version_arn.unwrap();
    let r = req("AWS::Lambda::LayerVersion", &arn, json!({}));
    assert_delete_rules(&r).await;
}
