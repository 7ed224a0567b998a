//! Custom resources (`Custom::*`, `AWS::CloudFormation::CustomResource`, docs/destroy.md, "Custom resources"): a
//! Delete request is sent to the ServiceToken (Lambda `Invoke` with `InvocationType =
//! Event`, or SNS `Publish`), and the handler's answer is awaited at a presigned S3 PUT
//! URL under the run prefix: `<prefix>/_runs/<run-id>/cr/<logical-id>.json` in the state
//! bucket. The handle records the request id, the response key and a deadline, so a later
//! wave invocation polls the same key instead of invoking again.

use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_s3::presigning::PresigningConfig;
use aws_smithy_types::Blob;
use cdkd_core::destroy::custom_resource::{
    delete_request, is_sns_token, read_response, request_id, response_key, stack_id,
    DeleteRequestInput, Response, LAMBDA_DEADLINE_MS, POLL_CAP_MS, POLL_FIRST_MS,
    RESPONSE_URL_EXPIRY_SECS, SNS_DEADLINE_MS,
};
use rand::Rng;
use serde_json::{Map, Value};

use crate::error::{aws_error_info, DeleteError, DeleteErrorKind};
use crate::guard;
use crate::progress::{backoff_ms, now_ms, DeleteProgress, Handle};
use crate::request::DeleteRequest;
use crate::Deleter;

/// A fresh request id (docs/destroy.md, "The Delete request"), new for each attempt.
fn new_request_id() -> String {
    request_id(now_ms(), rand::thread_rng().gen())
}

/// The Delete request sent to the handler: the record's fields, the run's response URL
/// and a stack id in the token's partition and account.
fn delete_request_body(
    req: &DeleteRequest,
    properties: &Map<String, Value>,
    token: &str,
    request_id: &str,
    response_url: &str,
) -> Value {
    let partition = guard::arn_partition(token)
        .filter(|p| !p.is_empty())
        .unwrap_or("aws");
    let account = guard::arn_account(token).filter(|a| !a.is_empty());
    let stack = stack_id(partition, &req.region, account, &req.logical_id);
    delete_request(DeleteRequestInput {
        logical_id: &req.logical_id,
        resource_type: &req.resource_type,
        physical_id: &req.physical_id,
        properties,
        request_id,
        response_url,
        stack_id: &stack,
    })
}

pub struct CustomResourceDeleter {
    lambda: aws_sdk_lambda::Client,
    sns: aws_sdk_sns::Client,
    /// A client for the state bucket's own region (it signs the response URL).
    state_s3: aws_sdk_s3::Client,
    lambda_deadline_ms: u64,
    sns_deadline_ms: u64,
}

impl CustomResourceDeleter {
    pub fn new(
        lambda: aws_sdk_lambda::Client,
        sns: aws_sdk_sns::Client,
        state_s3: aws_sdk_s3::Client,
    ) -> Self {
        CustomResourceDeleter {
            lambda,
            sns,
            state_s3,
            lambda_deadline_ms: LAMBDA_DEADLINE_MS,
            sns_deadline_ms: SNS_DEADLINE_MS,
        }
    }

    /// Overrides the answer deadlines (tests, per-type overrides).
    pub fn with_deadlines(mut self, lambda_ms: u64, sns_ms: u64) -> Self {
        self.lambda_deadline_ms = lambda_ms;
        self.sns_deadline_ms = sns_ms;
        self
    }

    fn lambda_for(&self, token: &str) -> aws_sdk_lambda::Client {
        match guard::arn_region(token).filter(|r| !r.is_empty()) {
            Some(r) if self.lambda.config().region().map(|x| x.as_ref()) != Some(r) => {
                aws_sdk_lambda::Client::from_conf(
                    self.lambda
                        .config()
                        .to_builder()
                        .region(aws_sdk_lambda::config::Region::new(r.to_owned()))
                        .build(),
                )
            }
            _ => self.lambda.clone(),
        }
    }

    fn sns_for(&self, token: &str) -> aws_sdk_sns::Client {
        match guard::arn_region(token).filter(|r| !r.is_empty()) {
            Some(r) if self.sns.config().region().map(|x| x.as_ref()) != Some(r) => {
                aws_sdk_sns::Client::from_conf(
                    self.sns
                        .config()
                        .to_builder()
                        .region(aws_sdk_sns::config::Region::new(r.to_owned()))
                        .build(),
                )
            }
            _ => self.sns.clone(),
        }
    }

    /// The handler's function no longer exists → the record can go (docs/destroy.md, "Before sending anything").
    async fn function_gone(
        &self,
        req: &DeleteRequest,
        lambda: &aws_sdk_lambda::Client,
        token: &str,
    ) -> Option<Result<DeleteProgress, DeleteError>> {
        match lambda.get_function().function_name(token).send().await {
            Ok(_) => None,
            Err(e) => {
                let info = aws_error_info(&e);
                if !info.code_is(&["ResourceNotFoundException"]) {
                    return None; // other errors fall through to the invoke
                }
                let client_region = lambda.config().region().map(|r| r.as_ref());
                // The function's own region: the ARN's, or the record's for a bare name.
                let expected = guard::arn_region(token)
                    .filter(|r| !r.is_empty())
                    .unwrap_or(&req.region);
                if client_region != Some(expected) {
                    return Some(Err(DeleteError::new(
                        req,
                        DeleteErrorKind::CannotConfirmDeletion,
                        format!(
                            "cannot confirm deletion: Lambda says the handler {token} does not exist, but the client's region is {} while the handler's region is {expected}; rerun with the correct region",
                            client_region.unwrap_or("(none)")
                        ),
                    )));
                }
                tracing::warn!(
                    logical_id = %req.logical_id,
                    "custom resource handler {token} no longer exists; dropping the record without a Delete request"
                );
                Some(Ok(DeleteProgress::AlreadyGone))
            }
        }
    }

    fn deliver_error(
        req: &DeleteRequest,
        action: &str,
        info: &crate::error::AwsErrorInfo,
    ) -> DeleteError {
        let mut e = DeleteError::from_aws(req, action, info);
        e.kind = DeleteErrorKind::Skipped;
        e
    }
}

#[async_trait]
impl Deleter for CustomResourceDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let Some(properties) = req.properties.as_object() else {
            return Err(DeleteError::skipped(
                req,
                "the record has no properties; the custom resource handler was not called",
            ));
        };
        let token = match req.properties.get("ServiceToken") {
            None | Some(Value::Null) => {
                return Err(DeleteError::skipped(
                    req,
                    "the record has no ServiceToken; the custom resource handler was not called",
                ))
            }
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(_) => {
                return Err(DeleteError::failed(
                    req,
                    "the record's ServiceToken is not a string; the custom resource handler was not called",
                ))
            }
        };
        let sns = is_sns_token(&token);
        let lambda = self.lambda_for(&token);
        if !sns {
            if let Some(outcome) = self.function_gone(req, &lambda, &token).await {
                return outcome;
            }
        }

        let request_id = new_request_id();
        let key = response_key(&req.run.state_prefix, &req.run.run_id, &req.logical_id);
        let bucket = req.run.state_bucket.as_str();
        // Placeholder: clears any answer an earlier attempt left at this key.
        self.state_s3
            .put_object()
            .bucket(bucket)
            .key(&key)
            .body(Vec::new().into())
            .send()
            .await
            .map_err(|e| {
                Self::deliver_error(
                    req,
                    "PutObject of the response placeholder",
                    &aws_error_info(&e),
                )
            })?;
        let presign = PresigningConfig::expires_in(Duration::from_secs(RESPONSE_URL_EXPIRY_SECS))
            .map_err(|e| DeleteError::failed(req, format!("presigning config: {e}")))?;
        let url = self
            .state_s3
            .put_object()
            .bucket(bucket)
            .key(&key)
            .presigned(presign)
            .await
            .map_err(|e| {
                DeleteError::failed(
                    req,
                    format!(
                        "presigning the response URL failed: {}",
                        aws_smithy_types::error::display::DisplayErrorContext(&e)
                    ),
                )
            })?;
        let body = delete_request_body(req, properties, &token, &request_id, url.uri());
        let payload = serde_json::to_vec(&body).map_err(|e| {
            DeleteError::failed(req, format!("serializing the Delete request: {e}"))
        })?;

        let deadline_ms;
        if sns {
            let message = String::from_utf8_lossy(&payload).into_owned();
            self.sns_for(&token)
                .publish()
                .topic_arn(&token)
                .message(message)
                .send()
                .await
                .map_err(|e| {
                    Self::deliver_error(
                        req,
                        "SNS Publish of the Delete request",
                        &aws_error_info(&e),
                    )
                })?;
            deadline_ms = now_ms().saturating_add(self.sns_deadline_ms);
        } else {
            lambda
                .invoke()
                .function_name(&token)
                .invocation_type(aws_sdk_lambda::types::InvocationType::Event)
                .payload(Blob::new(payload))
                .send()
                .await
                .map_err(|e| {
                    Self::deliver_error(
                        req,
                        "Lambda Invoke of the Delete request",
                        &aws_error_info(&e),
                    )
                })?;
            deadline_ms = now_ms().saturating_add(self.lambda_deadline_ms);
        }
        Ok(DeleteProgress::InFlight {
            handle: Handle::CustomResource {
                request_id,
                response_key: key,
                deadline_ms,
                polls: 0,
            },
            expected_done_ms: now_ms().saturating_add(POLL_FIRST_MS),
        })
    }

    async fn poll(
        &self,
        req: &DeleteRequest,
        handle: &Handle,
    ) -> Result<DeleteProgress, DeleteError> {
        let Handle::CustomResource {
            request_id,
            response_key,
            deadline_ms,
            polls,
        } = handle
        else {
            return Err(DeleteError::failed(
                req,
                format!("the custom resource deleter cannot resume {handle:?}"),
            ));
        };
        let bucket = req.run.state_bucket.as_str();
        let not_yet = |polls: u32| {
            Ok(DeleteProgress::InFlight {
                handle: Handle::CustomResource {
                    request_id: request_id.clone(),
                    response_key: response_key.clone(),
                    deadline_ms: *deadline_ms,
                    polls,
                },
                expected_done_ms: now_ms().saturating_add(backoff_ms(
                    polls,
                    POLL_FIRST_MS,
                    POLL_CAP_MS,
                )),
            })
        };
        let polls = polls.saturating_add(1);
        let answer = match self
            .state_s3
            .get_object()
            .bucket(bucket)
            .key(response_key)
            .send()
            .await
        {
            Ok(out) => match out.body.collect().await {
                Ok(bytes) => read_response(&bytes.into_bytes(), request_id),
                Err(_) => Response::NotYet,
            },
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["NoSuchKey"]) || info.retryable {
                    Response::NotYet
                } else {
                    return Err(DeleteError::from_aws(
                        req,
                        "GetObject of the custom resource response",
                        &info,
                    ));
                }
            }
        };
        let delete_response = || async {
            if let Err(e) = self
                .state_s3
                .delete_object()
                .bucket(bucket)
                .key(response_key)
                .send()
                .await
            {
                tracing::warn!(
                    "could not delete the custom resource response {response_key}: {}",
                    aws_error_info(&e).message
                );
            }
        };
        match answer {
            Response::Success => {
                delete_response().await;
                Ok(DeleteProgress::Done)
            }
            Response::Failed { reason } => {
                delete_response().await;
                Err(DeleteError::skipped(
                    req,
                    format!("the custom resource handler answered FAILED: {reason}"),
                ))
            }
            Response::Unreadable(why) => {
                delete_response().await;
                Err(DeleteError::failed(
                    req,
                    format!("unreadable custom resource response at {response_key}: {why}"),
                ))
            }
            Response::NotYet if now_ms() > *deadline_ms => {
                delete_response().await;
                Err(DeleteError::new(
                    req,
                    DeleteErrorKind::Timeout,
                    format!("the custom resource handler did not answer request {request_id} before its deadline"),
                ))
            }
            Response::NotYet => not_yet(polls),
        }
    }
}
