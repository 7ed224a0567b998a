//! The custom-resource deleter (docs/destroy.md, "Custom resources") with aws-smithy-mocks for Lambda, SNS and the
//! state bucket: the Delete request, the response awaited at the presigned key, the
//! outcomes, the deadline, and resuming from a persisted handle.

use std::sync::{Arc, Mutex};

use aws_sdk_lambda::operation::get_function::{GetFunctionError, GetFunctionOutput};
use aws_sdk_lambda::operation::invoke::InvokeOutput;
use aws_sdk_s3::operation::delete_object::DeleteObjectOutput;
use aws_sdk_s3::operation::get_object::{GetObjectError, GetObjectOutput};
use aws_sdk_s3::operation::put_object::PutObjectOutput;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_sns::operation::publish::PublishOutput;
use aws_smithy_mocks::{mock, mock_client, Rule, RuleMode};
use aws_smithy_types::error::ErrorMetadata;
use aws_smithy_types::retry::RetryConfig;
use cdkd_deleters::custom::CustomResourceDeleter;
use cdkd_deleters::progress::now_ms;
use cdkd_deleters::{DeleteErrorKind, DeleteProgress, DeleteRequest, Deleter, Handle, RunContext};
use serde_json::{json, Value};

const FN_ARN: &str = "arn:aws:lambda:us-east-1:111122223333:function:handler";

fn req(properties: Value) -> DeleteRequest {
    DeleteRequest {
        logical_id: "MyCr".into(),
        resource_type: "Custom::Thing".into(),
        physical_id: "phys-1".into(),
        properties,
        attributes: Value::Null,
        provisioned_by: None,
        region: "us-east-1".into(),
        attempt: 0,
        run: RunContext {
            run_id: "run-1".into(),
            stack: "Stack".into(),
            state_bucket: "state-bucket".into(),
            state_prefix: "cdkd".into(),
        },
        options: Default::default(),
    }
}

fn lambda(rules: &[&Rule]) -> aws_sdk_lambda::Client {
    mock_client!(aws_sdk_lambda, RuleMode::MatchAny, rules, |c| c
        .retry_config(RetryConfig::disabled()))
}

fn sns(rules: &[&Rule]) -> aws_sdk_sns::Client {
    mock_client!(aws_sdk_sns, RuleMode::MatchAny, rules, |c| c
        .retry_config(RetryConfig::disabled()))
}

fn s3(rules: &[&Rule]) -> aws_sdk_s3::Client {
    mock_client!(aws_sdk_s3, RuleMode::MatchAny, rules, |c| c
        .retry_config(RetryConfig::disabled()))
}

fn put_rule() -> Rule {
    mock!(aws_sdk_s3::Client::put_object)
        .sequence()
        .output(|| PutObjectOutput::builder().build())
        .repeatedly()
        .build()
}

fn function_exists() -> Rule {
    mock!(aws_sdk_lambda::Client::get_function).then_output(|| GetFunctionOutput::builder().build())
}

fn function_missing() -> Rule {
    mock!(aws_sdk_lambda::Client::get_function).then_error(|| {
        GetFunctionError::ResourceNotFoundException(
            aws_sdk_lambda::types::error::ResourceNotFoundException::builder()
                .message("Function not found")
                .meta(
                    ErrorMetadata::builder()
                        .code("ResourceNotFoundException")
                        .build(),
                )
                .build(),
        )
    })
}

/// An invoke rule that records every payload it receives.
fn invoke_rule(payloads: Arc<Mutex<Vec<(String, Value)>>>) -> Rule {
    mock!(aws_sdk_lambda::Client::invoke)
        .match_requests(move |i| {
            let payload = i
                .payload()
                .map(|b| serde_json::from_slice(b.as_ref()).unwrap())
                .unwrap_or(Value::Null);
            let kind = i
                .invocation_type()
                .map(|t| t.as_str().to_owned())
                .unwrap_or_default();
            payloads.lock().unwrap().push((kind, payload));
            true
        })
        .sequence()
        .output(|| InvokeOutput::builder().status_code(202).build())
        .repeatedly()
        .build()
}

fn get_rule(body: &'static str) -> Rule {
    mock!(aws_sdk_s3::Client::get_object).then_output(move || {
        GetObjectOutput::builder()
            .body(ByteStream::from_static(body.as_bytes()))
            .build()
    })
}

fn no_such_key() -> Rule {
    mock!(aws_sdk_s3::Client::get_object).then_error(|| {
        GetObjectError::NoSuchKey(
            aws_sdk_s3::types::error::NoSuchKey::builder()
                .meta(ErrorMetadata::builder().code("NoSuchKey").build())
                .build(),
        )
    })
}

fn delete_object_rule() -> Rule {
    mock!(aws_sdk_s3::Client::delete_object)
        .sequence()
        .output(|| DeleteObjectOutput::builder().build())
        .repeatedly()
        .build()
}

fn handle(request_id: &str, deadline_ms: u64) -> Handle {
    Handle::CustomResource {
        request_id: request_id.into(),
        response_key: "cdkd/_runs/run-1/cr/MyCr.json".into(),
        deadline_ms,
        polls: 0,
    }
}

#[tokio::test]
async fn custom_resource_delete_request_is_sent_as_an_event_invoke_with_the_cloudformation_fields()
{
    let payloads = Arc::new(Mutex::new(Vec::new()));
    let (exists, invoke, put) = (function_exists(), invoke_rule(payloads.clone()), put_rule());
    let d = CustomResourceDeleter::new(lambda(&[&exists, &invoke]), sns(&[]), s3(&[&put]));
    let r = req(
        json!({"ServiceToken": FN_ARN, "Enabled": true, "N": 3, "Nested": {"X": false}, "List": [1, true]}),
    );
    let out = d.start(&r).await.unwrap();

    let DeleteProgress::InFlight {
        handle:
            Handle::CustomResource {
                request_id,
                response_key,
                deadline_ms,
                polls,
            },
        ..
    } = out
    else {
        panic!("expected a custom-resource handle, got {out:?}");
    };
    assert_eq!(response_key, "cdkd/_runs/run-1/cr/MyCr.json");
    assert_eq!(polls, 0);
    assert!(
        deadline_ms >= now_ms() + 59 * 60_000,
        "Lambda handlers get 60 min"
    );
    assert_eq!(put.num_calls(), 2, "placeholder write + presigning");

    let p = payloads.lock().unwrap();
    assert_eq!(p.len(), 1);
    let (kind, body) = &p[0];
    assert_eq!(kind, "Event");
    assert_eq!(body["RequestType"], "Delete");
    assert_eq!(body["RequestId"], request_id.as_str());
    assert!(request_id.starts_with("cdkd-"));
    assert_eq!(body["ResourceType"], "Custom::Thing");
    assert_eq!(body["LogicalResourceId"], "MyCr");
    assert_eq!(body["PhysicalResourceId"], "phys-1");
    assert_eq!(
        body["StackId"],
        "arn:aws:cloudformation:us-east-1:111122223333:stack/cdkd-MyCr/cdkd"
    );
    assert_eq!(
        body["ResourceProperties"],
        json!({"ServiceToken": FN_ARN, "Enabled": "true", "N": "3", "Nested": {"X": "false"}, "List": [1, true]})
    );
    assert!(body.get("OldResourceProperties").is_none());
    let url = body["ResponseURL"].as_str().unwrap();
    assert!(
        url.contains("state-bucket") && url.contains("cdkd/_runs/run-1/cr/MyCr.json"),
        "{url}"
    );
    assert!(
        url.contains("X-Amz-Signature="),
        "not a presigned URL: {url}"
    );
    assert!(url.contains("X-Amz-Expires=7200"), "{url}");
}

#[tokio::test]
async fn custom_resource_sns_service_token_publishes_the_request_with_a_30_s_deadline() {
    let messages = Arc::new(Mutex::new(Vec::new()));
    let m2 = messages.clone();
    let publish = mock!(aws_sdk_sns::Client::publish)
        .match_requests(move |i| {
            m2.lock().unwrap().push((
                i.topic_arn().unwrap_or_default().to_owned(),
                i.message().unwrap_or_default().to_owned(),
            ));
            true
        })
        .then_output(|| PublishOutput::builder().message_id("m").build());
    let put = put_rule();
    let d = CustomResourceDeleter::new(lambda(&[]), sns(&[&publish]), s3(&[&put]));
    let topic = "arn:aws:sns:us-east-1:111122223333:cr-topic";
    let out = d.start(&req(json!({"ServiceToken": topic}))).await.unwrap();
    let DeleteProgress::InFlight {
        handle: Handle::CustomResource { deadline_ms, .. },
        ..
    } = out
    else {
        panic!("expected InFlight, got {out:?}");
    };
    assert!(deadline_ms <= now_ms() + 30_000);
    let m = messages.lock().unwrap();
    assert_eq!(m.len(), 1);
    assert_eq!(m[0].0, topic);
    let body: Value = serde_json::from_str(&m[0].1).unwrap();
    assert_eq!(body["RequestType"], "Delete");
}

#[tokio::test]
async fn custom_resource_whose_service_token_function_no_longer_exists_is_already_gone_without_invoke(
) {
    let payloads = Arc::new(Mutex::new(Vec::new()));
    let (missing, invoke, put) = (
        function_missing(),
        invoke_rule(payloads.clone()),
        put_rule(),
    );
    let d = CustomResourceDeleter::new(lambda(&[&missing, &invoke]), sns(&[]), s3(&[&put]));
    let out = d.start(&req(json!({"ServiceToken": FN_ARN}))).await;
    assert_eq!(out, Ok(DeleteProgress::AlreadyGone));
    assert!(payloads.lock().unwrap().is_empty());
    assert_eq!(put.num_calls(), 0);
}

#[tokio::test]
async fn custom_resource_function_missing_seen_from_another_region_cannot_confirm_deletion() {
    let payloads = Arc::new(Mutex::new(Vec::new()));
    let (missing, invoke) = (function_missing(), invoke_rule(payloads));
    let d = CustomResourceDeleter::new(lambda(&[&missing, &invoke]), sns(&[]), s3(&[]));
    // A bare function name: its region is the record's (eu-west-1), the client's is us-east-1.
    let mut r = req(json!({"ServiceToken": "handler"}));
    r.region = "eu-west-1".into();
    let e = d.start(&r).await.unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::CannotConfirmDeletion, "{e}");
}

#[tokio::test]
async fn custom_resource_without_service_token_is_skipped_with_no_aws_call() {
    let (exists, put) = (function_exists(), put_rule());
    let d = CustomResourceDeleter::new(lambda(&[&exists]), sns(&[]), s3(&[&put]));
    let e = d.start(&req(json!({"Other": 1}))).await.unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::Skipped, "{e}");
    let e = d.start(&req(Value::Null)).await.unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::Skipped, "{e}");
    assert_eq!(exists.num_calls() + put.num_calls(), 0);
}

#[tokio::test]
async fn custom_resource_service_token_that_is_not_a_string_fails() {
    let d = CustomResourceDeleter::new(lambda(&[]), sns(&[]), s3(&[]));
    let e = d
        .start(&req(json!({"ServiceToken": 42})))
        .await
        .unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::Failed, "{e}");
}

#[tokio::test]
async fn custom_resource_success_response_is_done_and_the_response_object_is_deleted() {
    let (get, del) = (
        get_rule(r#"{"Status":"SUCCESS","RequestId":"cdkd-1-abc"}"#),
        delete_object_rule(),
    );
    let d = CustomResourceDeleter::new(lambda(&[]), sns(&[]), s3(&[&get, &del]));
    let out = d
        .poll(
            &req(json!({"ServiceToken": FN_ARN})),
            &handle("cdkd-1-abc", now_ms() + 60_000),
        )
        .await;
    assert_eq!(out, Ok(DeleteProgress::Done));
    assert_eq!(del.num_calls(), 1);
}

#[tokio::test]
async fn custom_resource_handler_failed_response_is_skipped_and_the_record_kept() {
    let (get, del) = (
        get_rule(r#"{"Status":"FAILED","Reason":"could not clean up","RequestId":"cdkd-1-abc"}"#),
        delete_object_rule(),
    );
    let d = CustomResourceDeleter::new(lambda(&[]), sns(&[]), s3(&[&get, &del]));
    let e = d
        .poll(
            &req(json!({"ServiceToken": FN_ARN})),
            &handle("cdkd-1-abc", now_ms() + 60_000),
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::Skipped);
    assert!(
        e.message.contains("FAILED") && e.message.contains("could not clean up"),
        "{e}"
    );
}

#[tokio::test]
async fn custom_resource_response_for_another_request_id_is_not_yet_an_answer() {
    let get = get_rule(r#"{"Status":"SUCCESS","RequestId":"cdkd-0-old"}"#);
    let d = CustomResourceDeleter::new(lambda(&[]), sns(&[]), s3(&[&get]));
    let out = d
        .poll(
            &req(json!({"ServiceToken": FN_ARN})),
            &handle("cdkd-1-abc", now_ms() + 60_000),
        )
        .await
        .unwrap();
    assert!(matches!(out, DeleteProgress::InFlight { .. }), "{out:?}");
}

#[tokio::test]
async fn custom_resource_without_answer_stays_in_flight_backing_off_from_2_s() {
    let get = no_such_key();
    let d = CustomResourceDeleter::new(lambda(&[]), sns(&[]), s3(&[&get]));
    let before = now_ms();
    let out = d
        .poll(
            &req(json!({"ServiceToken": FN_ARN})),
            &handle("cdkd-1-abc", now_ms() + 60_000),
        )
        .await
        .unwrap();
    let DeleteProgress::InFlight {
        handle: Handle::CustomResource {
            polls, request_id, ..
        },
        expected_done_ms,
    } = out
    else {
        panic!("expected InFlight, got {out:?}");
    };
    assert_eq!(polls, 1);
    assert_eq!(request_id, "cdkd-1-abc");
    assert!(expected_done_ms >= before + 3000, "second wait is 3 s");
}

#[tokio::test]
async fn custom_resource_without_answer_past_its_deadline_fails_with_a_timeout() {
    let (get, del) = (no_such_key(), delete_object_rule());
    let d = CustomResourceDeleter::new(lambda(&[]), sns(&[]), s3(&[&get, &del]));
    let e = d
        .poll(
            &req(json!({"ServiceToken": FN_ARN})),
            &handle("cdkd-1-abc", now_ms() - 1),
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::Timeout, "{e}");
    assert_eq!(del.num_calls(), 1, "the placeholder is removed");
}

#[tokio::test]
async fn custom_resource_resume_from_a_persisted_handle_polls_the_old_key_without_invoking_again() {
    let payloads = Arc::new(Mutex::new(Vec::new()));
    let (exists, invoke, put) = (function_exists(), invoke_rule(payloads.clone()), put_rule());
    let first = CustomResourceDeleter::new(lambda(&[&exists, &invoke]), sns(&[]), s3(&[&put]));
    let r = req(json!({"ServiceToken": FN_ARN}));
    let DeleteProgress::InFlight { handle, .. } = first.start(&r).await.unwrap() else {
        panic!("expected InFlight");
    };
    let persisted = serde_json::to_string(&handle).unwrap();
    let Handle::CustomResource { request_id, .. } = &handle else {
        panic!()
    };
    let answer: &'static str =
        Box::leak(format!(r#"{{"Status":"SUCCESS","RequestId":"{request_id}"}}"#).into_boxed_str());

    let keys = Arc::new(Mutex::new(Vec::new()));
    let k2 = keys.clone();
    let get = mock!(aws_sdk_s3::Client::get_object)
        .match_requests(move |i| {
            k2.lock()
                .unwrap()
                .push(i.key().unwrap_or_default().to_owned());
            true
        })
        .then_output(move || {
            GetObjectOutput::builder()
                .body(ByteStream::from_static(answer.as_bytes()))
                .build()
        });
    let del = delete_object_rule();
    let invoke_again = invoke_rule(payloads.clone());
    let second = CustomResourceDeleter::new(lambda(&[&invoke_again]), sns(&[]), s3(&[&get, &del]));
    let restored: Handle = serde_json::from_str(&persisted).unwrap();
    assert_eq!(second.poll(&r, &restored).await, Ok(DeleteProgress::Done));
    assert_eq!(
        keys.lock().unwrap().as_slice(),
        &["cdkd/_runs/run-1/cr/MyCr.json".to_owned()]
    );
    assert_eq!(invoke_again.num_calls(), 0);
    assert_eq!(
        payloads.lock().unwrap().len(),
        1,
        "only the first invocation invoked"
    );
}

#[tokio::test]
async fn custom_resource_throttled_invoke_is_a_retryable_error_and_the_row_is_skipped_otherwise() {
    let exists = function_exists();
    let invoke = mock!(aws_sdk_lambda::Client::invoke)
        .sequence()
        .http_status(
            429,
            Some(r#"{"Type":"User","message":"Rate exceeded"}"#.to_owned()),
        )
        .build();
    let put = put_rule();
    let d = CustomResourceDeleter::new(lambda(&[&exists, &invoke]), sns(&[]), s3(&[&put]));
    let e = d
        .start(&req(json!({"ServiceToken": FN_ARN})))
        .await
        .unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::Skipped);
    assert!(e.retryable && e.throttling, "{e:?}");
}
