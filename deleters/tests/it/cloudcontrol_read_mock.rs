//! The Cloud Control reader of refresh-observed against aws-smithy-mocks (the emulator
//! does not serve Cloud Control): GetResource's properties are the reading; NotFound is
//! a resource gone; a type Cloud Control cannot read is unsupported; any other failure
//! is a failed read; the identifier is derived as for a delete, and a record it cannot
//! be derived for is never read by guess (docs/repairs.md, "Per resource").

use std::sync::Arc;

use aws_sdk_cloudcontrol::operation::get_resource::{GetResourceError, GetResourceOutput};
use aws_sdk_cloudcontrol::types::error::{
    ResourceNotFoundException, ThrottlingException, UnsupportedActionException,
};
use aws_sdk_cloudcontrol::types::ResourceDescription;
use aws_sdk_cloudcontrol::Client;
use aws_smithy_mocks::{mock, mock_client, Rule, RuleMode};
use aws_smithy_types::error::ErrorMetadata;
use aws_smithy_types::retry::RetryConfig;
use cdkd_core::repair::refresh::ReadResult;
use cdkd_deleters::cloudcontrol::read::CloudControlReader;
use cdkd_deleters::read::registry::request;
use cdkd_deleters::Readers;
use serde_json::{json, Value};

fn client(rules: &[&Rule]) -> Client {
    mock_client!(aws_sdk_cloudcontrol, RuleMode::Sequential, rules, |c| c
        .region(aws_sdk_cloudcontrol::config::Region::new("us-east-1"))
        .retry_config(RetryConfig::disabled()))
}

fn readers(rules: &[&Rule]) -> Readers {
    Readers::empty().with_cloud_control(Arc::new(CloudControlReader::new(client(rules))))
}

fn entry(resource_type: &str, physical_id: &str, properties: Value) -> Value {
    json!({"resourceType": resource_type, "physicalId": physical_id, "properties": properties})
}

async fn read(r: &Readers, e: Value) -> ReadResult {
    let record = json!({"resources": {"R": e.clone()}});
    let req = request(record.as_object().unwrap(), "R", &e);
    r.read(&req).await
}

fn answering(type_name: &'static str, identifier: &'static str, properties: &'static str) -> Rule {
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
                        .properties(properties)
                        .build(),
                )
                .build()
        })
}

fn meta(code: &str) -> ErrorMetadata {
    ErrorMetadata::builder().code(code).message("m").build()
}

#[tokio::test]
async fn cc_read_rule_6_2_get_resource_properties_are_the_reading() {
    let rule = answering(
        "AWS::ECS::Cluster",
        "app-cluster",
        r#"{"ClusterName":"app-cluster","Tags":[{"Key":"a","Value":"b"}]}"#,
    );
    let r = readers(&[&rule]);
    let got = read(&r, entry("AWS::ECS::Cluster", "app-cluster", json!({}))).await;
    assert_eq!(
        got,
        ReadResult::Read(
            json!({"ClusterName": "app-cluster", "Tags": [{"Key": "a", "Value": "b"}]})
        )
    );
    assert_eq!(rule.num_calls(), 1);
}

#[tokio::test]
async fn cc_read_rule_6_2_identifier_is_derived_as_for_a_delete() {
    // An API Gateway resource is addressed as <RestApiId>|<ResourceId>.
    let rule = answering(
        "AWS::ApiGateway::Resource",
        "api1|res1",
        r#"{"RestApiId":"api1","PathPart":"items"}"#,
    );
    let r = readers(&[&rule]);
    let got = read(
        &r,
        entry(
            "AWS::ApiGateway::Resource",
            "res1",
            json!({"RestApiId": "api1"}),
        ),
    )
    .await;
    assert_eq!(
        got,
        ReadResult::Read(json!({"RestApiId": "api1", "PathPart": "items"}))
    );
}

#[tokio::test]
async fn cc_read_rule_6_2_no_identifier_is_unsupported_and_nothing_is_asked() {
    let rule = answering("AWS::ApiGateway::Resource", "x", "{}");
    let r = readers(&[&rule]);
    // Without RestApiId no identifier can be derived: no guess, no call.
    let got = read(&r, entry("AWS::ApiGateway::Resource", "res1", json!({}))).await;
    assert_eq!(got, ReadResult::NoReader);
    assert_eq!(rule.num_calls(), 0);
}

#[tokio::test]
async fn cc_read_rule_6_2_not_found_is_a_resource_gone() {
    let rule = mock!(Client::get_resource).then_error(|| {
        GetResourceError::ResourceNotFoundException(
            ResourceNotFoundException::builder()
                .meta(meta("ResourceNotFoundException"))
                .build(),
        )
    });
    let r = readers(&[&rule]);
    let got = read(&r, entry("AWS::ECS::Cluster", "gone", json!({}))).await;
    assert_eq!(got, ReadResult::Gone);
}

#[tokio::test]
async fn cc_read_rule_6_2_a_type_cloud_control_cannot_read_is_unsupported() {
    let rule = mock!(Client::get_resource).then_error(|| {
        GetResourceError::UnsupportedActionException(
            UnsupportedActionException::builder()
                .meta(meta("UnsupportedActionException"))
                .build(),
        )
    });
    let r = readers(&[&rule]);
    let got = read(&r, entry("AWS::Some::Thing", "t", json!({}))).await;
    assert_eq!(got, ReadResult::NoReader);
}

#[tokio::test]
async fn cc_read_rule_6_2_any_other_failure_is_a_failed_read_naming_the_call() {
    let rule = mock!(Client::get_resource).then_error(|| {
        GetResourceError::ThrottlingException(
            ThrottlingException::builder()
                .meta(meta("ThrottlingException"))
                .build(),
        )
    });
    let r = readers(&[&rule]);
    let ReadResult::Failed(msg) = read(&r, entry("AWS::ECS::Cluster", "c", json!({}))).await else {
        panic!("expected a failed read");
    };
    assert!(
        msg.starts_with("Cloud Control GetResource failed:"),
        "{msg}"
    );
    assert!(msg.contains("ThrottlingException"), "{msg}");
}

#[tokio::test]
async fn cc_read_rule_6_2_properties_that_are_not_an_object_fail_the_read() {
    let rule = answering("AWS::ECS::Cluster", "c", "[1]");
    let r = readers(&[&rule]);
    let got = read(&r, entry("AWS::ECS::Cluster", "c", json!({}))).await;
    assert!(matches!(got, ReadResult::Failed(_)), "{got:?}");
}

#[tokio::test]
async fn cc_read_rule_6_2_custom_resources_and_nested_stacks_never_reach_cloud_control() {
    let rule = answering("Custom::X", "x", "{}");
    let r = readers(&[&rule]);
    for t in [
        "Custom::X",
        "AWS::CloudFormation::Stack",
        "AWS::CDK::Metadata",
    ] {
        assert_eq!(
            read(&r, entry(t, "x", json!({}))).await,
            ReadResult::NoReader,
            "{t}"
        );
    }
    assert_eq!(rule.num_calls(), 0);
}

#[tokio::test]
async fn cc_read_rule_6_2_a_cc_api_record_of_an_sdk_type_is_read_through_cloud_control() {
    // `provisionedBy: cc-api`: its physical id is Cloud Control's identifier.
    let rule = answering(
        "AWS::Events::Rule",
        "arn:aws:events:us-east-1:1:rule/r",
        r#"{"Name":"r","State":"ENABLED"}"#,
    );
    let r = readers(&[&rule]);
    let mut e = entry(
        "AWS::Events::Rule",
        "arn:aws:events:us-east-1:1:rule/r",
        json!({}),
    );
    e["provisionedBy"] = json!("cc-api");
    assert_eq!(
        read(&r, e).await,
        ReadResult::Read(json!({"Name": "r", "State": "ENABLED"}))
    );
}
