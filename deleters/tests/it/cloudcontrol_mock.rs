//! The Cloud Control deleter against aws-smithy-mocks (the emulator does not serve Cloud
//! Control): start, poll success, poll failure, throttling, NotFound under the region
//! guard, the poll cap, and resuming from a persisted token.

use std::sync::{Arc, Mutex};

use aws_sdk_cloudcontrol::operation::delete_resource::{DeleteResourceError, DeleteResourceOutput};
use aws_sdk_cloudcontrol::operation::get_resource_request_status::GetResourceRequestStatusOutput;
use aws_sdk_cloudcontrol::types::error::ResourceNotFoundException;
use aws_sdk_cloudcontrol::types::{HandlerErrorCode, OperationStatus, ProgressEvent};
use aws_sdk_cloudcontrol::Client;
use aws_smithy_mocks::{mock, mock_client, Rule, RuleMode};
use aws_smithy_types::error::ErrorMetadata;
use aws_smithy_types::retry::RetryConfig;
use cdkd_deleters::cloudcontrol::{client_token, CloudControlDeleter};
use cdkd_deleters::progress::now_ms;
use cdkd_deleters::{DeleteErrorKind, DeleteProgress, DeleteRequest, Deleter, Handle, RunContext};
use serde_json::{json, Value};

fn req(resource_type: &str, physical_id: &str, provisioned_by: &str) -> DeleteRequest {
    DeleteRequest {
        logical_id: "Group".into(),
        resource_type: resource_type.into(),
        physical_id: physical_id.into(),
        properties: json!({}),
        attributes: Value::Null,
        provisioned_by: Some(provisioned_by.into()),
        region: "us-east-1".into(),
        attempt: 0,
        run: RunContext {
            run_id: "run-1".into(),
            stack: "Stack".into(),
            state_bucket: "bucket".into(),
            state_prefix: "cdkd".into(),
        },
        options: Default::default(),
    }
}

fn dg() -> DeleteRequest {
    req("AWS::CodeDeploy::DeploymentGroup", "app|group", "cc-api")
}

fn client(region: &str, rules: &[&Rule]) -> Client {
    let region = region.to_owned();
    mock_client!(
        aws_sdk_cloudcontrol,
        RuleMode::Sequential,
        rules,
        move |c| c
            .region(aws_sdk_cloudcontrol::config::Region::new(region.clone()))
            .retry_config(RetryConfig::disabled())
    )
}

fn event(token: &str, status: OperationStatus) -> ProgressEvent {
    ProgressEvent::builder()
        .request_token(token)
        .operation_status(status)
        .build()
}

fn failed_event(token: &str, code: HandlerErrorCode, message: &str) -> ProgressEvent {
    ProgressEvent::builder()
        .request_token(token)
        .operation_status(OperationStatus::Failed)
        .error_code(code)
        .status_message(message)
        .build()
}

fn status_rule(ev: ProgressEvent) -> Rule {
    mock!(Client::get_resource_request_status).then_output(move || {
        GetResourceRequestStatusOutput::builder()
            .progress_event(ev.clone())
            .build()
    })
}

fn handle(token: &str, started_ms: u64, polls: u32) -> Handle {
    Handle::CloudControl {
        request_token: Some(token.into()),
        client_token: "ct".into(),
        started_ms,
        polls,
    }
}

#[tokio::test]
async fn cloud_control_start_uses_the_recorded_id_and_a_deterministic_client_token_and_returns_the_request_token(
) {
    let r = dg();
    let expected_token = client_token(&r);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let rule = mock!(Client::delete_resource)
        .match_requests(move |i| {
            seen2.lock().unwrap().push((
                i.type_name().unwrap_or_default().to_owned(),
                i.identifier().unwrap_or_default().to_owned(),
                i.client_token().unwrap_or_default().to_owned(),
            ));
            true
        })
        .then_output(|| {
            DeleteResourceOutput::builder()
                .progress_event(event("rt-1", OperationStatus::InProgress))
                .build()
        });
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    let before = now_ms();
    let out = d.start(&r).await.unwrap();
    let DeleteProgress::InFlight {
        handle,
        expected_done_ms,
    } = out
    else {
        panic!("expected InFlight, got {out:?}");
    };
    let Handle::CloudControl {
        request_token,
        client_token: ct,
        polls,
        ..
    } = handle
    else {
        panic!("wrong handle {handle:?}");
    };
    assert_eq!(request_token.as_deref(), Some("rt-1"));
    assert_eq!(ct, expected_token);
    assert_eq!(polls, 0);
    assert!(
        expected_done_ms >= before && expected_done_ms <= now_ms(),
        "the first status poll is immediate"
    );
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        &[(
            "AWS::CodeDeploy::DeploymentGroup".to_owned(),
            "app|group".to_owned(),
            expected_token
        )]
    );
}

#[tokio::test]
async fn cloud_control_restart_after_a_crash_reuses_the_client_token_and_a_new_attempt_does_not() {
    let tokens = Arc::new(Mutex::new(Vec::new()));
    let t2 = tokens.clone();
    let rule = mock!(Client::delete_resource)
        .match_requests(move |i| {
            t2.lock()
                .unwrap()
                .push(i.client_token().unwrap_or_default().to_owned());
            true
        })
        .sequence()
        .output(|| {
            DeleteResourceOutput::builder()
                .progress_event(event("rt-1", OperationStatus::InProgress))
                .build()
        })
        .times(3)
        .build();
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    let r = dg();
    d.start(&r).await.unwrap();
    d.start(&r).await.unwrap();
    let mut next = r.clone();
    next.attempt = 1;
    d.start(&next).await.unwrap();
    let t = tokens.lock().unwrap();
    assert_eq!(t[0], t[1]);
    assert_ne!(t[1], t[2]);
}

#[tokio::test]
async fn cloud_control_start_without_request_token_is_an_error() {
    let rule = mock!(Client::delete_resource).then_output(|| {
        DeleteResourceOutput::builder()
            .progress_event(
                ProgressEvent::builder()
                    .operation_status(OperationStatus::InProgress)
                    .build(),
            )
            .build()
    });
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    let e = d.start(&dg()).await.unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::Failed);
    assert!(e.message.contains("RequestToken"), "{e}");
}

#[tokio::test]
async fn cloud_control_poll_success_is_done() {
    let rule = status_rule(event("rt-1", OperationStatus::Success));
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    assert_eq!(
        d.poll(&dg(), &handle("rt-1", now_ms(), 0)).await,
        Ok(DeleteProgress::Done)
    );
}

#[tokio::test]
async fn cloud_control_in_progress_three_times_then_success_polls_four_times_with_sleeps_1_1_5_2_25_s(
) {
    let rule = mock!(Client::get_resource_request_status)
        .sequence()
        .output(|| {
            GetResourceRequestStatusOutput::builder()
                .progress_event(event("rt-1", OperationStatus::InProgress))
                .build()
        })
        .times(3)
        .output(|| {
            GetResourceRequestStatusOutput::builder()
                .progress_event(event("rt-1", OperationStatus::Success))
                .build()
        })
        .build();
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    let r = dg();
    // The start answered IN_PROGRESS (polls = 0); each poll counts one more.
    let mut h = handle("rt-1", now_ms(), 0);
    let mut delays = Vec::new();
    let mut polls = 0;
    loop {
        let before = now_ms();
        let out = d.poll(&r, &h).await.unwrap();
        polls += 1;
        match out {
            DeleteProgress::InFlight {
                handle,
                expected_done_ms,
            } => {
                delays.push(expected_done_ms - before);
                h = handle;
            }
            DeleteProgress::Done => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(polls, 4);
    assert_eq!(rule.num_calls(), 4);
    assert_eq!(delays.len(), 3);
    let expected = [1000u64, 1500, 2250];
    for (got, want) in delays.iter().zip(expected) {
        assert!((want..want + 200).contains(got), "delays {delays:?}");
    }
}

#[tokio::test]
async fn cloud_control_poll_failure_reports_the_handler_error_code_and_message() {
    let rule = status_rule(failed_event(
        "rt-1",
        HandlerErrorCode::GeneralServiceException,
        "boom happened",
    ));
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    let e = d
        .poll(&dg(), &handle("rt-1", now_ms(), 0))
        .await
        .unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::Failed);
    assert!(!e.retryable);
    let text = e.to_string();
    assert!(
        text.contains("AWS::CodeDeploy::DeploymentGroup app|group"),
        "{text}"
    );
    assert!(
        text.contains("GeneralServiceException") && text.contains("boom happened"),
        "{text}"
    );
}

#[tokio::test]
async fn cloud_control_cancel_complete_is_an_error() {
    let rule = status_rule(event("rt-1", OperationStatus::CancelComplete));
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    let e = d
        .poll(&dg(), &handle("rt-1", now_ms(), 0))
        .await
        .unwrap_err();
    assert!(e.message.contains("cancelled"), "{e}");
}

#[tokio::test]
async fn cloud_control_failed_with_not_found_error_code_is_already_gone() {
    let rule = status_rule(failed_event(
        "rt-1",
        HandlerErrorCode::NotFound,
        "No Deployment Group found for name",
    ));
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    assert_eq!(
        d.poll(&dg(), &handle("rt-1", now_ms(), 0)).await,
        Ok(DeleteProgress::AlreadyGone)
    );
}

fn not_found_rule() -> Rule {
    mock!(Client::delete_resource).then_error(|| {
        DeleteResourceError::ResourceNotFoundException(
            ResourceNotFoundException::builder()
                .message("Resource of type 'X' with identifier 'y' was not found.")
                .meta(
                    ErrorMetadata::builder()
                        .code("ResourceNotFoundException")
                        .message("Resource of type 'X' with identifier 'y' was not found.")
                        .build(),
                )
                .build(),
        )
    })
}

#[tokio::test]
async fn cloud_control_resource_not_found_in_the_record_region_is_already_gone() {
    let rule = not_found_rule();
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    assert_eq!(d.start(&dg()).await, Ok(DeleteProgress::AlreadyGone));
}

#[tokio::test]
async fn cloud_control_resource_not_found_from_another_region_cannot_confirm_deletion() {
    let rule = not_found_rule();
    let d = CloudControlDeleter::new(client("eu-west-1", &[&rule]));
    let e = d.start(&dg()).await.unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::CannotConfirmDeletion, "{e}");
    assert!(
        e.message.contains("eu-west-1") && e.message.contains("us-east-1"),
        "{e}"
    );
}

#[tokio::test]
async fn cloud_control_not_found_for_an_unverified_identifier_cannot_confirm_deletion() {
    let rule = not_found_rule();
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    // Written by an SDK provider; the identifier is joined in an order not read from
    // the type schema, so NotFound cannot be trusted.
    let mut r = req(
        "AWS::ECS::Service",
        "arn:aws:ecs:us-east-1:1:service/c/s",
        "sdk",
    );
    r.properties = json!({"Cluster": "c"});
    let e = d.start(&r).await.unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::CannotConfirmDeletion, "{e}");
    assert_eq!(rule.num_calls(), 1);
}

#[tokio::test]
async fn cloud_control_untranslatable_sdk_id_is_skipped_without_a_call_rule_3_2() {
    let rule = not_found_rule();
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    // Written by an SDK provider, type not on the "same value" list: no guess.
    let r = req("AWS::CodeDeploy::DeploymentGroup", "group", "sdk");
    let e = d.start(&r).await.unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::Skipped, "{e}");
    assert_eq!(rule.num_calls(), 0);
}

#[tokio::test]
async fn cloud_control_refuses_a_final_snapshot_without_any_call_rule_2_8_3() {
    let del = mock!(Client::delete_resource).then_output(|| {
        DeleteResourceOutput::builder()
            .progress_event(event("rt-1", OperationStatus::Success))
            .build()
    });
    let d = CloudControlDeleter::new(client("us-east-1", &[&del]));
    let mut r = req("AWS::RDS::DBInstance", "db1", "cc-api");
    r.options.final_snapshot = Some(cdkd_deleters::request::FinalSnapshot::Identifier(
        "db1-final-20261129-123456".into(),
    ));
    let e = d.start(&r).await.unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::Unsupported, "{e}");
    assert!(!e.retryable);
    assert!(
        e.message
            .starts_with("FINAL_SNAPSHOT_UNSUPPORTED: AWS::RDS::DBInstance Group in stack Stack"),
        "{e}"
    );
    // Resuming an intent (no request token) is refused the same way.
    let intent = Handle::CloudControl {
        request_token: None,
        client_token: client_token(&r),
        started_ms: now_ms(),
        polls: 0,
    };
    assert!(d.poll(&r, &intent).await.is_err());
    assert_eq!(del.num_calls(), 0);
    // Without the snapshot (skipFinalSnapshot) the same record is deleted.
    r.options.final_snapshot = None;
    assert_eq!(d.start(&r).await, Ok(DeleteProgress::Done));
    assert_eq!(del.num_calls(), 1);
}

#[tokio::test]
async fn cloud_control_intent_without_request_token_is_resent_with_the_same_client_token() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let del = mock!(Client::delete_resource)
        .match_requests(move |i| {
            s.lock()
                .unwrap()
                .push(i.client_token().unwrap_or_default().to_owned());
            true
        })
        .then_output(|| {
            DeleteResourceOutput::builder()
                .progress_event(event("rt-5", OperationStatus::InProgress))
                .build()
        });
    let d = CloudControlDeleter::new(client("us-east-1", &[&del]));
    let r = dg();
    let intent = Handle::CloudControl {
        request_token: None,
        client_token: client_token(&r),
        started_ms: now_ms(),
        polls: 0,
    };
    let out = d.poll(&r, &intent).await.unwrap();
    let DeleteProgress::InFlight {
        handle: Handle::CloudControl { request_token, .. },
        ..
    } = out
    else {
        panic!("expected InFlight, got {out:?}");
    };
    assert_eq!(request_token.as_deref(), Some("rt-5"));
    assert_eq!(*seen.lock().unwrap(), vec![client_token(&r)]);
}

#[tokio::test]
async fn cloud_control_translation_lacking_an_input_skips_the_row_without_a_call() {
    let rule = not_found_rule();
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    let r = req("AWS::ApiGateway::Stage", "prod", "sdk"); // no RestApiId in properties
    let e = d.start(&r).await.unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::Skipped, "{e}");
    assert_eq!(rule.num_calls(), 0);
}

#[tokio::test]
async fn cloud_control_translated_identifier_is_sent() {
    let rule = mock!(Client::delete_resource)
        .match_requests(|i| i.identifier() == Some("api1|prod"))
        .then_output(|| {
            DeleteResourceOutput::builder()
                .progress_event(event("rt-9", OperationStatus::Success))
                .build()
        });
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    let mut r = req("AWS::ApiGateway::Stage", "prod", "sdk");
    r.properties = json!({"RestApiId": "api1"});
    assert_eq!(d.start(&r).await, Ok(DeleteProgress::Done));
}

fn throttled(body_type: &str) -> String {
    format!(r#"{{"__type":"{body_type}","Message":"Rate exceeded"}}"#)
}

#[tokio::test]
async fn cloud_control_throttled_delete_is_a_retryable_throttling_error() {
    let rule = mock!(Client::delete_resource)
        .sequence()
        .http_status(400, Some(throttled("ThrottlingException")))
        .build();
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    let e = d.start(&dg()).await.unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::Failed);
    assert!(e.retryable && e.throttling, "{e:?}");
    assert_eq!(e.error_name(), "Throttling");
}

#[tokio::test]
async fn cloud_control_throttled_status_poll_is_retried_in_place_with_the_same_request_token() {
    let rule = mock!(Client::get_resource_request_status)
        .sequence()
        .http_status(400, Some(throttled("ThrottlingException")))
        .build();
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    let out = d.poll(&dg(), &handle("rt-7", now_ms(), 2)).await.unwrap();
    let DeleteProgress::InFlight {
        handle:
            Handle::CloudControl {
                request_token,
                polls,
                ..
            },
        ..
    } = out
    else {
        panic!("expected InFlight, got {out:?}");
    };
    assert_eq!(request_token.as_deref(), Some("rt-7"));
    assert_eq!(polls, 3);
}

#[tokio::test]
async fn cloud_control_async_throttling_failure_is_retryable_so_a_new_attempt_resubmits() {
    let rule = status_rule(failed_event(
        "rt-1",
        HandlerErrorCode::Throttling,
        "Rate exceeded",
    ));
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    let e = d
        .poll(&dg(), &handle("rt-1", now_ms(), 0))
        .await
        .unwrap_err();
    assert!(e.retryable && e.throttling, "{e:?}");
    for code in [
        HandlerErrorCode::ServiceInternalError,
        HandlerErrorCode::NetworkFailure,
        HandlerErrorCode::InternalFailure,
    ] {
        let rule = status_rule(failed_event("rt-1", code.clone(), "x"));
        let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
        let e = d
            .poll(&dg(), &handle("rt-1", now_ms(), 0))
            .await
            .unwrap_err();
        assert!(e.retryable && !e.throttling, "{code:?}: {e:?}");
    }
}

#[tokio::test]
async fn cloud_control_unsupported_type_is_reported_as_unsupported() {
    let rule = mock!(Client::delete_resource)
        .sequence()
        .http_status(
            400,
            Some(r#"{"__type":"UnsupportedActionException","Message":"no delete"}"#.to_owned()),
        )
        .build();
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    let e = d.start(&dg()).await.unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::Unsupported, "{e}");
}

#[tokio::test]
async fn cloud_control_in_progress_past_15_min_times_out_but_rds_cluster_has_60() {
    let started = now_ms() - 16 * 60_000;
    let rule = status_rule(event("rt-1", OperationStatus::InProgress));
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    let e = d
        .poll(&dg(), &handle("rt-1", started, 5))
        .await
        .unwrap_err();
    assert_eq!(e.kind, DeleteErrorKind::Timeout, "{e}");

    let rule = status_rule(event("rt-1", OperationStatus::InProgress));
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    let rds = req("AWS::RDS::DBCluster", "db", "cc-api");
    assert!(matches!(
        d.poll(&rds, &handle("rt-1", started, 5)).await,
        Ok(DeleteProgress::InFlight { .. })
    ));
}

#[tokio::test]
async fn cloud_control_resume_from_a_persisted_token_polls_without_a_second_delete() {
    // First invocation: start, persist the handle as JSON.
    let start_rule = mock!(Client::delete_resource).then_output(|| {
        DeleteResourceOutput::builder()
            .progress_event(event("rt-persist", OperationStatus::Pending))
            .build()
    });
    let first = CloudControlDeleter::new(client("us-east-1", &[&start_rule]));
    let r = dg();
    let DeleteProgress::InFlight { handle, .. } = first.start(&r).await.unwrap() else {
        panic!("expected InFlight");
    };
    let persisted = serde_json::to_string(&handle).unwrap();
    drop(first);

    // Next invocation: a fresh client and deleter resume from the stored handle.
    let seen = Arc::new(Mutex::new(None));
    let seen2 = seen.clone();
    let poll_rule = mock!(Client::get_resource_request_status)
        .match_requests(move |i| {
            *seen2.lock().unwrap() = i.request_token().map(str::to_owned);
            true
        })
        .then_output(|| {
            GetResourceRequestStatusOutput::builder()
                .progress_event(event("rt-persist", OperationStatus::Success))
                .build()
        });
    let no_delete = mock!(Client::delete_resource).then_output(|| {
        DeleteResourceOutput::builder()
            .progress_event(event("other", OperationStatus::Success))
            .build()
    });
    let second = CloudControlDeleter::new(client_any("us-east-1", &[&poll_rule, &no_delete]));
    let restored: Handle = serde_json::from_str(&persisted).unwrap();
    assert_eq!(second.poll(&r, &restored).await, Ok(DeleteProgress::Done));
    assert_eq!(seen.lock().unwrap().as_deref(), Some("rt-persist"));
    assert_eq!(
        no_delete.num_calls(),
        0,
        "a resumed delete must not call DeleteResource again"
    );
}

fn client_any(region: &str, rules: &[&Rule]) -> Client {
    let region = region.to_owned();
    mock_client!(aws_sdk_cloudcontrol, RuleMode::MatchAny, rules, move |c| c
        .region(aws_sdk_cloudcontrol::config::Region::new(region.clone()))
        .retry_config(RetryConfig::disabled()))
}

#[tokio::test]
async fn cloud_control_failure_from_a_dependency_still_in_use_is_retryable() {
    let rule = status_rule(failed_event(
        "rt-1",
        HandlerErrorCode::GeneralServiceException,
        "resource sg-123 has a dependent object (Service: Ec2, Status Code: 400, Error Code: DependencyViolation)",
    ));
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    let e = d
        .poll(&dg(), &handle("rt-1", now_ms(), 0))
        .await
        .unwrap_err();
    assert!(e.retryable && !e.throttling, "{e:?}");
    let rule = status_rule(failed_event(
        "rt-1",
        HandlerErrorCode::ResourceConflict,
        "busy",
    ));
    let d = CloudControlDeleter::new(client("us-east-1", &[&rule]));
    let e = d
        .poll(&dg(), &handle("rt-1", now_ms(), 0))
        .await
        .unwrap_err();
    assert!(e.retryable, "{e:?}");
}

#[tokio::test]
async fn cloud_control_remove_protection_patches_the_property_off_then_deletes_rule_3_1() {
    use aws_sdk_cloudcontrol::operation::update_resource::UpdateResourceOutput;
    let patches = Arc::new(Mutex::new(Vec::new()));
    let p = patches.clone();
    let update = mock!(Client::update_resource)
        .match_requests(move |i| {
            p.lock()
                .unwrap()
                .push(i.patch_document().unwrap_or_default().to_owned());
            i.identifier() == Some("prod-cluster")
        })
        .then_output(|| {
            UpdateResourceOutput::builder()
                .progress_event(event("up-1", OperationStatus::InProgress))
                .build()
        });
    let status = mock!(Client::get_resource_request_status)
        .match_requests(|i| i.request_token() == Some("up-1"))
        .then_output(|| {
            GetResourceRequestStatusOutput::builder()
                .progress_event(event("up-1", OperationStatus::Success))
                .build()
        });
    let delete = mock!(Client::delete_resource).then_output(|| {
        DeleteResourceOutput::builder()
            .progress_event(event("rt-2", OperationStatus::Success))
            .build()
    });
    let d = CloudControlDeleter::new(client("us-east-1", &[&update, &status, &delete]));
    let mut r = req("AWS::EKS::Cluster", "prod-cluster", "cc-api");
    r.options.remove_protection = true;
    let out = d.start(&r).await.unwrap();
    let DeleteProgress::InFlight { handle, .. } = out else {
        panic!("expected the unprotect step, got {out:?}");
    };
    assert!(
        matches!(&handle, Handle::Steps { phase, .. } if phase == "unprotect"),
        "{handle:?}"
    );
    assert_eq!(
        delete.num_calls(),
        0,
        "no delete before the protection is off"
    );
    // Resumed from the persisted handle (next invocation).
    let handle: Handle = serde_json::from_value(serde_json::to_value(&handle).unwrap()).unwrap();
    assert_eq!(d.poll(&r, &handle).await, Ok(DeleteProgress::Done));
    assert_eq!(delete.num_calls(), 1);
    let patch: Value = serde_json::from_str(&patches.lock().unwrap()[0]).unwrap();
    assert_eq!(
        patch,
        json!([{"op": "add", "path": "/DeletionProtection", "value": false}])
    );
}

#[tokio::test]
async fn cloud_control_without_remove_protection_sends_no_update_rule_3_1() {
    let delete = mock!(Client::delete_resource).then_output(|| {
        DeleteResourceOutput::builder()
            .progress_event(event("rt-3", OperationStatus::Success))
            .build()
    });
    // Sequential mode: an UpdateResource call would not match the only rule and fail.
    let d = CloudControlDeleter::new(client("us-east-1", &[&delete]));
    let r = req("AWS::EKS::Cluster", "prod-cluster", "cc-api");
    assert_eq!(d.start(&r).await, Ok(DeleteProgress::Done));
    assert_eq!(delete.num_calls(), 1);
}
