//! Orphan's live attribute reads (docs/repairs.md, "Live attribute reads") through `Readers`, with Cloud
//! Control against aws-smithy-mocks (the emulator does not serve Cloud Control) and a
//! stand-in SDK reader: GetResource's model answers read-only and nested attributes, one
//! call per resource; gone, unsupported and failed reads answer a failure naming the
//! resource, its type and the cause; an attribute the type's SDK reader does not declare
//! goes to Cloud Control, one it declares to the SDK reader; the reads run concurrently
//! under the bound they are given.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_cloudcontrol::operation::get_resource::{GetResourceError, GetResourceOutput};
use aws_sdk_cloudcontrol::types::error::{
    ResourceNotFoundException, ThrottlingException, UnsupportedActionException,
};
use aws_sdk_cloudcontrol::types::ResourceDescription;
use aws_sdk_cloudcontrol::Client;
use aws_smithy_mocks::{mock, mock_client, Rule, RuleMode};
use aws_smithy_types::error::ErrorMetadata;
use aws_smithy_types::retry::RetryConfig;
use cdkd_core::repair::rewrite::{live_reads_needed, LiveAttr, LiveReads};
use cdkd_deleters::cloudcontrol::read::CloudControlReader;
use cdkd_deleters::read::{ReadError, ReadRequest, Reader, SdkReader};
use cdkd_deleters::Readers;
use serde_json::{json, Map, Value};

fn client(rules: &[&Rule]) -> Client {
    mock_client!(aws_sdk_cloudcontrol, RuleMode::MatchAny, rules, |c| c
        .region(aws_sdk_cloudcontrol::config::Region::new("us-east-1"))
        .retry_config(RetryConfig::disabled()))
}

fn cloud_control(rules: &[&Rule]) -> Readers {
    Readers::empty().with_cloud_control(Arc::new(CloudControlReader::new(client(rules))))
}

fn answering(type_name: &'static str, identifier: &'static str, model: &'static str) -> Rule {
    mock!(Client::get_resource)
        .match_requests(move |i| {
            i.type_name() == Some(type_name) && i.identifier() == Some(identifier)
        })
        .then_output(move || {
            GetResourceOutput::builder()
                .type_name(type_name)
                .resource_description(
                    ResourceDescription::builder()
                        .identifier(identifier)
                        .properties(model)
                        .build(),
                )
                .build()
        })
}

fn meta(code: &str) -> ErrorMetadata {
    ErrorMetadata::builder()
        .code(code)
        .message("denied by the mock")
        .build()
}

/// A record where `K` refers to each `(removed id, attribute)` through Fn::GetAtt.
fn record(removed: Value, refs: &[(&str, &str)]) -> Map<String, Value> {
    let props: Map<String, Value> = refs
        .iter()
        .enumerate()
        .map(|(i, (o, a))| (format!("P{i}"), json!({"Fn::GetAtt": [o, a]})))
        .collect();
    let mut resources = removed.as_object().unwrap().clone();
    resources.insert(
        "K".into(),
        json!({"resourceType": "AWS::Lambda::Function", "physicalId": "k", "properties": props}),
    );
    json!({ "resources": resources })
        .as_object()
        .unwrap()
        .clone()
}

async fn answers(readers: &Readers, record: &Map<String, Value>, targets: &[&str]) -> LiveReads {
    let targets: Vec<String> = targets.iter().map(|t| t.to_string()).collect();
    let pairs = live_reads_needed(record, &targets);
    readers.read_live_attributes(record, &pairs, 16).await
}

fn key(o: &str, a: &str) -> (String, String) {
    (o.to_string(), a.to_string())
}

#[tokio::test]
async fn live_attr_rule_7_4_cloud_control_model_answers_read_only_and_nested_attributes_in_one_call(
) {
    let rule = answering(
        "AWS::RDS::DBCluster",
        "db-1",
        r#"{"DBClusterIdentifier":"db-1","DBClusterArn":"arn:aws:rds:us-east-1:1:cluster:db-1","Endpoint":{"Address":"db-1.cluster.local","Port":"5432"}}"#,
    );
    let r = cloud_control(&[&rule]);
    let rec = record(
        // A record Cloud Control created: its physical id is the identifier.
        json!({"Db": {"resourceType": "AWS::RDS::DBCluster", "physicalId": "db-1", "provisionedBy": "cc-api"}}),
        &[
            ("Db", "DBClusterArn"),
            ("Db", "Endpoint.Address"),
            ("Db", "Endpoint.Port"),
            ("Db", "ReadEndpoint.Address"),
        ],
    );
    let got = answers(&r, &rec, &["Db"]).await;
    assert_eq!(
        got[&key("Db", "DBClusterArn")],
        LiveAttr::Value(json!("arn:aws:rds:us-east-1:1:cluster:db-1"))
    );
    assert_eq!(
        got[&key("Db", "Endpoint.Address")],
        LiveAttr::Value(json!("db-1.cluster.local"))
    );
    assert_eq!(
        got[&key("Db", "Endpoint.Port")],
        LiveAttr::Value(json!("5432"))
    );
    // The read worked and the model has no such attribute.
    assert_eq!(got[&key("Db", "ReadEndpoint.Address")], LiveAttr::Undefined);
    assert_eq!(rule.num_calls(), 1, "one GetResource per resource");
}

#[tokio::test]
async fn live_attr_rule_7_4_gone_unsupported_and_failed_reads_name_the_resource_type_and_cause() {
    let gone = mock!(Client::get_resource)
        .match_requests(|i| i.identifier() == Some("gone-cluster"))
        .then_error(|| {
            GetResourceError::ResourceNotFoundException(
                ResourceNotFoundException::builder()
                    .meta(meta("ResourceNotFoundException"))
                    .build(),
            )
        });
    let unsupported = mock!(Client::get_resource)
        .match_requests(|i| i.type_name() == Some("AWS::Some::Thing"))
        .then_error(|| {
            GetResourceError::UnsupportedActionException(
                UnsupportedActionException::builder()
                    .meta(meta("UnsupportedActionException"))
                    .build(),
            )
        });
    let throttled = mock!(Client::get_resource)
        .match_requests(|i| i.identifier() == Some("busy"))
        .then_error(|| {
            GetResourceError::ThrottlingException(
                ThrottlingException::builder()
                    .meta(meta("ThrottlingException"))
                    .build(),
            )
        });
    let r = cloud_control(&[&gone, &unsupported, &throttled]);
    let rec = record(
        json!({
            "Gone": {"resourceType": "AWS::ECS::Cluster", "physicalId": "gone-cluster"},
            "Odd": {"resourceType": "AWS::Some::Thing", "physicalId": "t-1"},
            "Busy": {"resourceType": "AWS::ECS::Cluster", "physicalId": "busy"},
            // No identifier can be derived without RestApiId: never read by guess.
            "Res": {"resourceType": "AWS::ApiGateway::Resource", "physicalId": "res1"}
        }),
        &[
            ("Gone", "Arn"),
            ("Odd", "Arn"),
            ("Busy", "Arn"),
            ("Res", "ResourceId"),
        ],
    );
    let got = answers(&r, &rec, &["Gone", "Odd", "Busy", "Res"]).await;
    assert_eq!(
        failed_words(&got[&key("Gone", "Arn")]).as_deref(),
        Some("Gone (AWS::ECS::Cluster): it no longer exists (gone-cluster was not found)")
    );
    assert_eq!(
        failed_words(&got[&key("Odd", "Arn")]).as_deref(),
        Some("Odd (AWS::Some::Thing): no live reader for AWS::Some::Thing")
    );
    assert_eq!(
        failed_words(&got[&key("Res", "ResourceId")]).as_deref(),
        Some("Res (AWS::ApiGateway::Resource): no live reader for AWS::ApiGateway::Resource")
    );
    let Some(busy) = failed_words(&got[&key("Busy", "Arn")]) else {
        panic!("expected a failure: {got:?}");
    };
    assert!(
        busy.starts_with("Busy (AWS::ECS::Cluster): Cloud Control GetResource failed:")
            && busy.contains("ThrottlingException")
            && !busy.contains('\n'),
        "{busy}"
    );
}

#[tokio::test]
async fn live_attr_rule_7_4_custom_resources_and_stacks_are_never_sent_to_cloud_control() {
    let rule = answering("AWS::CloudFormation::Stack", "arn:stack", "{}");
    let r = cloud_control(&[&rule]);
    let rec = record(
        json!({"Net": {"resourceType": "AWS::CloudFormation::Stack", "physicalId": "arn:stack"}}),
        &[("Net", "Outputs.VpcId")],
    );
    let got = answers(&r, &rec, &["Net"]).await;
    assert_eq!(
        failed_words(&got[&key("Net", "Outputs.VpcId")]).as_deref(),
        Some("Net (AWS::CloudFormation::Stack): no live reader for AWS::CloudFormation::Stack")
    );
    assert_eq!(rule.num_calls(), 0);
}

/// A stand-in SDK reader of `AWS::S3::Bucket` that declares only `Arn`, counts its
/// calls and the most reads in flight at once.
#[derive(Clone, Default)]
struct Counting {
    calls: Arc<AtomicUsize>,
    in_flight: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
}

#[async_trait]
impl Reader for Counting {
    async fn read(&self, _req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        Ok(Some(json!({})))
    }

    async fn attributes(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(30)).await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        Ok(Some(
            json!({"Arn": format!("arn:aws:s3:::{}", req.physical_id)}),
        ))
    }
}

impl SdkReader for Counting {
    const READS: &'static [&'static str] = &["AWS::S3::Bucket"];
    const ATTRIBUTES: &'static [(&'static str, &'static str)] = &[("AWS::S3::Bucket", "Arn")];
}

#[tokio::test]
async fn live_attr_rule_7_4_declared_attribute_goes_to_the_sdk_reader_the_rest_to_cloud_control() {
    let cc = answering(
        "AWS::S3::Bucket",
        "b1",
        r#"{"BucketName":"b1","MetadataTableConfiguration":{"S3TablesDestination":{"TableArn":"arn:table"}}}"#,
    );
    let sdk = Counting::default();
    let r = cloud_control(&[&cc]).with_sdk(sdk.clone());
    let rec = record(
        json!({
            "B": {"resourceType": "AWS::S3::Bucket", "physicalId": "b1"},
            // A record Cloud Control created goes back to Cloud Control, declared or not.
            "C": {"resourceType": "AWS::S3::Bucket", "physicalId": "b1", "provisionedBy": "cc-api"}
        }),
        &[
            ("B", "Arn"),
            (
                "B",
                "MetadataTableConfiguration.S3TablesDestination.TableArn",
            ),
            ("C", "Arn"),
        ],
    );
    let got = answers(&r, &rec, &["B", "C"]).await;
    assert_eq!(
        got[&key("B", "Arn")],
        LiveAttr::Value(json!("arn:aws:s3:::b1"))
    );
    assert_eq!(
        got[&key(
            "B",
            "MetadataTableConfiguration.S3TablesDestination.TableArn"
        )],
        LiveAttr::Value(json!("arn:table"))
    );
    // Cloud Control's model of the bucket has no Arn: undefined, not the SDK's answer.
    assert_eq!(got[&key("C", "Arn")], LiveAttr::Undefined);
    assert_eq!(sdk.calls.load(Ordering::SeqCst), 1);
    assert_eq!(cc.num_calls(), 2, "B's undeclared attribute and C");
}

#[tokio::test]
async fn live_attr_rule_7_4_reads_run_concurrently_within_the_bound() {
    let sdk = Counting::default();
    let r = Readers::empty().with_sdk(sdk.clone());
    let ids: Vec<String> = (0..8).map(|i| format!("B{i}")).collect();
    let removed: Map<String, Value> = ids
        .iter()
        .map(|id| {
            (
                id.clone(),
                json!({"resourceType": "AWS::S3::Bucket", "physicalId": id.to_lowercase()}),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = ids.iter().map(|id| (id.as_str(), "Arn")).collect();
    let rec = record(Value::Object(removed), &refs);
    let pairs = live_reads_needed(&rec, &ids);
    let got = r.read_live_attributes(&rec, &pairs, 3).await;
    assert_eq!(got.len(), 8);
    assert_eq!(
        got[&key("B5", "Arn")],
        LiveAttr::Value(json!("arn:aws:s3:::b5"))
    );
    assert_eq!(sdk.calls.load(Ordering::SeqCst), 8);
    assert_eq!(
        sdk.most.load(Ordering::SeqCst),
        3,
        "at most the bound, and more than one at once"
    );
}

/// The words of a failed live answer; `None` for any other answer.
fn failed_words(a: &LiveAttr) -> Option<String> {
    match a {
        LiveAttr::Failed(f) => Some(f.to_string()),
        _ => None,
    }
}
