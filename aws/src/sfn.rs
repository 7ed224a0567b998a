//! Step Functions: start a run (re-attaching to a running execution of the same name and
//! input), describe it, read its history and list a state machine's executions (both
//! paginated), stop it, answer a task token (SendTaskSuccess / SendTaskFailure); and
//! find the deployed state machines in the backend stack's outputs. Every answer is
//! copied into small owned types; every error is one line and says whether it is worth
//! retrying (a network drop, throttling, a 5xx).

use aws_config::SdkConfig;
use aws_sdk_sfn::types::HistoryEvent;
use aws_smithy_types::DateTime;
use cdkd_core::run::{ExecutionStatus, RunId};
use cdkd_core::text::flatten_str;

use crate::s3err::Failure;

/// Errors of the Step Functions adapter. Every message is one line.
#[derive(Debug, thiserror::Error)]
pub enum SfnError {
    /// An execution of that name exists with another input, or has already ended.
    #[error("an execution named '{name}' already exists ({arn}) with a different input; choose another --run-id")]
    NameTaken { name: String, arn: String },
    /// No execution with this ARN.
    #[error("no execution {arn}")]
    NoSuchExecution { arn: String },
    /// No state machine with this ARN.
    #[error("no state machine {arn}")]
    NoSuchStateMachine { arn: String },
    /// Step Functions could not be reached or asked us to slow down: try again.
    #[error("Step Functions did not answer {op}: {message}")]
    Transient { op: &'static str, message: String },
    /// Step Functions refused the call.
    #[error("Step Functions refused {op}: {message}")]
    Service { op: &'static str, message: String },
    /// The task token is not awaited (any more): unknown, already answered, or its task
    /// ended (`TaskDoesNotExist`, `TaskTimedOut`, `InvalidToken`).
    #[error("Step Functions no longer waits for this task ({op}): {message}")]
    NoSuchTask { op: &'static str, message: String },
    /// The backend stack or its output could not be read.
    #[error("{0}")]
    Backend(String),
}

impl SfnError {
    /// Worth retrying: the request may succeed later unchanged.
    pub fn is_transient(&self) -> bool {
        matches!(self, SfnError::Transient { .. })
    }
}

/// A network failure (no response), throttling, or a server error
/// ([`crate::sdk_error`]).
pub fn failure_is_transient(f: &Failure) -> bool {
    f.class.is_retryable()
}

fn classify(op: &'static str, f: Failure) -> SfnError {
    if failure_is_transient(&f) {
        SfnError::Transient {
            op,
            message: f.message,
        }
    } else {
        SfnError::Service {
            op,
            message: f.message,
        }
    }
}

fn ms(t: &DateTime) -> i64 {
    t.to_millis().unwrap_or(0)
}

/// The execution ARN of `name` under a state machine ARN
/// (`arn:aws:states:R:A:stateMachine:M` -> `arn:aws:states:R:A:execution:M:name`).
pub fn execution_arn(state_machine_arn: &str, name: &str) -> Option<String> {
    let (head, machine) = state_machine_arn.split_once(":stateMachine:")?;
    if machine.is_empty() || machine.contains(':') {
        return None;
    }
    Some(format!("{head}:execution:{machine}:{name}"))
}

/// The region field of an ARN (`arn:partition:service:REGION:...`), when not empty.
pub fn arn_region(arn: &str) -> Option<&str> {
    let mut parts = arn.split(':');
    if parts.next() != Some("arn") {
        return None;
    }
    parts.nth(2).filter(|r| !r.is_empty())
}

/// The state machine ARN of an execution ARN (the inverse of [`execution_arn`]).
pub fn state_machine_of(execution_arn: &str) -> Option<String> {
    let (head, rest) = execution_arn.split_once(":execution:")?;
    let (machine, _name) = rest.split_once(':')?;
    Some(format!("{head}:stateMachine:{machine}"))
}

/// A started (or re-attached) execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    pub execution_arn: String,
    pub start_ms: i64,
    /// An execution of that name and input was already there: this is it.
    pub reattached: bool,
}

/// What DescribeExecution says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Execution {
    pub arn: String,
    pub state_machine_arn: String,
    /// The execution's name: the run id (found as Step Functions holds it).
    pub name: RunId,
    /// RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED, PENDING_REDRIVE.
    pub status: ExecutionStatus,
    pub start_ms: i64,
    pub stop_ms: Option<i64>,
    pub input: Option<String>,
    pub output: Option<String>,
    pub error: Option<String>,
    pub cause: Option<String>,
}

impl Execution {
    /// The run has ended (every status but RUNNING and PENDING_REDRIVE).
    pub fn is_finished(&self) -> bool {
        self.status.is_final()
    }
}

/// Every status but RUNNING and PENDING_REDRIVE is final.
pub fn status_is_final(status: &str) -> bool {
    ExecutionStatus::from(status).is_final()
}

/// A row of ListExecutions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutionSummary {
    pub arn: String,
    pub state_machine_arn: String,
    /// The execution's name: the run id.
    pub name: RunId,
    pub status: ExecutionStatus,
    pub start_ms: i64,
    pub stop_ms: Option<i64>,
}

/// One history event, with what a watcher prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub id: i64,
    /// The event type (`TaskFailed`, `ExecutionAborted`...).
    pub kind: String,
    pub timestamp_ms: i64,
    /// The state entered or exited, for state events.
    pub state: Option<String>,
    pub error: Option<String>,
    pub cause: Option<String>,
    /// For a `TaskSubmitted` of a `states:startExecution` task: the execution it
    /// started (what a cleanup's Map runs per stack).
    pub child_execution: Option<String>,
    /// For a `...StateExited` event: the state's output.
    pub output: Option<String>,
}

/// The execution a `states:startExecution[.sync[:2]]` task started, from the output
/// of its `TaskSubmitted` event (`{"ExecutionArn": ..., "StartDate": ...}`).
pub fn started_execution(
    resource_type: &str,
    resource: &str,
    output: Option<&str>,
) -> Option<String> {
    if resource_type != "states" || !resource.starts_with("startExecution") {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(output?).ok()?;
    let arn = v.get("ExecutionArn")?.as_str()?;
    (!arn.is_empty()).then(|| arn.to_string())
}

fn event_of(e: &HistoryEvent) -> Event {
    let state = e
        .state_entered_event_details()
        .map(|d| d.name().to_string())
        .or_else(|| e.state_exited_event_details().map(|d| d.name().to_string()));
    let (error, cause) = if let Some(d) = e.task_failed_event_details() {
        (d.error(), d.cause())
    } else if let Some(d) = e.task_timed_out_event_details() {
        (d.error(), d.cause())
    } else if let Some(d) = e.task_start_failed_event_details() {
        (d.error(), d.cause())
    } else if let Some(d) = e.task_submit_failed_event_details() {
        (d.error(), d.cause())
    } else if let Some(d) = e.lambda_function_failed_event_details() {
        (d.error(), d.cause())
    } else if let Some(d) = e.lambda_function_timed_out_event_details() {
        (d.error(), d.cause())
    } else if let Some(d) = e.lambda_function_start_failed_event_details() {
        (d.error(), d.cause())
    } else if let Some(d) = e.lambda_function_schedule_failed_event_details() {
        (d.error(), d.cause())
    } else if let Some(d) = e.execution_failed_event_details() {
        (d.error(), d.cause())
    } else if let Some(d) = e.execution_aborted_event_details() {
        (d.error(), d.cause())
    } else if let Some(d) = e.execution_timed_out_event_details() {
        (d.error(), d.cause())
    } else if let Some(d) = e.evaluation_failed_event_details() {
        (d.error(), d.cause())
    } else {
        (None, None)
    };
    Event {
        id: e.id(),
        kind: e.r#type().as_str().to_string(),
        timestamp_ms: ms(e.timestamp()),
        state,
        error: error.map(str::to_string),
        cause: cause.map(str::to_string),
        child_execution: e
            .task_submitted_event_details()
            .and_then(|d| started_execution(d.resource_type(), d.resource(), d.output())),
        output: e
            .state_exited_event_details()
            .and_then(|d| d.output())
            .map(str::to_string),
    }
}

/// The Step Functions client of this configuration.
#[derive(Debug, Clone)]
pub struct Sfn {
    pub client: aws_sdk_sfn::Client,
}

impl Sfn {
    pub fn new(cfg: &SdkConfig) -> Self {
        Sfn {
            client: aws_sdk_sfn::Client::new(cfg),
        }
    }

    /// The client for the region an ARN names (a state machine or an execution is
    /// only found in its own region); the configuration's region when it names none.
    pub fn for_arn(cfg: &SdkConfig, arn: &str) -> Self {
        match arn_region(arn) {
            Some(r) => {
                let conf = aws_sdk_sfn::config::Builder::from(cfg)
                    .region(aws_config::Region::new(r.to_string()))
                    .build();
                Sfn {
                    client: aws_sdk_sfn::Client::from_conf(conf),
                }
            }
            None => Sfn::new(cfg),
        }
    }

    /// Starts `name` with `input` (JSON text). When an execution of that name exists
    /// with the same input it is re-attached (`reattached: true`, finished or not);
    /// with another input it is [`SfnError::NameTaken`].
    pub async fn start(
        &self,
        state_machine_arn: &str,
        name: &str,
        input: &str,
    ) -> Result<Started, SfnError> {
        // StartExecution answers a running execution of the same name and input as if it
        // started it: look first, so a re-attach is known as one.
        if let Some(arn) = execution_arn(state_machine_arn, name) {
            match self.describe(&arn).await {
                Ok(existing) => return reattach(existing, name, input),
                Err(SfnError::NoSuchExecution { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        let res = self
            .client
            .start_execution()
            .state_machine_arn(state_machine_arn)
            .name(name)
            .input(input)
            .send()
            .await;
        let f = match res {
            Ok(out) => {
                return Ok(Started {
                    execution_arn: out.execution_arn().to_string(),
                    start_ms: ms(out.start_date()),
                    reattached: false,
                })
            }
            Err(e) => Failure::from_sdk(&e),
        };
        match f.code.as_deref() {
            Some("ExecutionAlreadyExists") => {
                let arn =
                    execution_arn(state_machine_arn, name).ok_or_else(|| SfnError::Service {
                        op: "StartExecution",
                        message: f.message.clone(),
                    })?;
                reattach(self.describe(&arn).await?, name, input)
            }
            Some("StateMachineDoesNotExist") => Err(SfnError::NoSuchStateMachine {
                arn: flatten_str(state_machine_arn),
            }),
            _ => Err(classify("StartExecution", f)),
        }
    }

    /// DescribeExecution.
    pub async fn describe(&self, arn: &str) -> Result<Execution, SfnError> {
        let out = self
            .client
            .describe_execution()
            .execution_arn(arn)
            .send()
            .await
            .map_err(|e| not_found_or(&Failure::from_sdk(&e), arn, "DescribeExecution"))?;
        Ok(Execution {
            arn: out.execution_arn().to_string(),
            state_machine_arn: out.state_machine_arn().to_string(),
            name: RunId::from(out.name().unwrap_or_default()),
            status: out.status().as_str().into(),
            start_ms: ms(out.start_date()),
            stop_ms: out.stop_date().map(ms),
            input: out.input().map(str::to_string),
            output: out.output().map(str::to_string),
            error: out.error().map(str::to_string),
            cause: out.cause().map(str::to_string),
        })
    }

    /// The execution's events with an id greater than `after_id`, oldest first (every
    /// page of GetExecutionHistory).
    pub async fn history(&self, arn: &str, after_id: i64) -> Result<Vec<Event>, SfnError> {
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let page = self
                .client
                .get_execution_history()
                .execution_arn(arn)
                .max_results(1000)
                .set_next_token(token.take())
                .send()
                .await
                .map_err(|e| not_found_or(&Failure::from_sdk(&e), arn, "GetExecutionHistory"))?;
            out.extend(
                page.events()
                    .iter()
                    .filter(|e| e.id() > after_id)
                    .map(event_of),
            );
            match page.next_token() {
                Some(t) if !t.is_empty() => token = Some(t.to_string()),
                _ => break,
            }
        }
        Ok(out)
    }

    /// The state machine's executions, newest first, at most `limit` (every page until
    /// then).
    pub async fn list(
        &self,
        state_machine_arn: &str,
        limit: usize,
    ) -> Result<Vec<ExecutionSummary>, SfnError> {
        let mut out: Vec<ExecutionSummary> = Vec::new();
        let mut token: Option<String> = None;
        while out.len() < limit {
            let page = self
                .client
                .list_executions()
                .state_machine_arn(state_machine_arn)
                .max_results((limit - out.len()).clamp(1, 1000) as i32)
                .set_next_token(token.take())
                .send()
                .await
                .map_err(|e| {
                    let f = Failure::from_sdk(&e);
                    match f.code.as_deref() {
                        Some("StateMachineDoesNotExist") => SfnError::NoSuchStateMachine {
                            arn: flatten_str(state_machine_arn),
                        },
                        _ => classify("ListExecutions", f),
                    }
                })?;
            out.extend(page.executions().iter().map(|x| ExecutionSummary {
                arn: x.execution_arn().to_string(),
                state_machine_arn: x.state_machine_arn().to_string(),
                name: RunId::from(x.name()),
                status: x.status().as_str().into(),
                start_ms: ms(x.start_date()),
                stop_ms: x.stop_date().map(ms),
            }));
            match page.next_token() {
                Some(t) if !t.is_empty() => token = Some(t.to_string()),
                _ => break,
            }
        }
        out.sort_by_key(|x| std::cmp::Reverse(x.start_ms));
        out.truncate(limit);
        Ok(out)
    }

    /// StopExecution (the execution ends ABORTED at once; no step of it runs again).
    pub async fn stop(&self, arn: &str, error: &str, cause: &str) -> Result<(), SfnError> {
        self.client
            .stop_execution()
            .execution_arn(arn)
            .error(error)
            .cause(cause)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| not_found_or(&Failure::from_sdk(&e), arn, "StopExecution"))
    }
}

impl Sfn {
    /// SendTaskSuccess: the `.waitForTaskToken` task waiting for `token` ends with
    /// `output` (JSON text) as its result.
    pub async fn send_task_success(&self, token: &str, output: &str) -> Result<(), SfnError> {
        self.client
            .send_task_success()
            .task_token(token)
            .output(output)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| task_error(Failure::from_sdk(&e), "SendTaskSuccess"))
    }

    /// SendTaskFailure: the task waiting for `token` fails with `error` and `cause`
    /// (what its Retry and Catch match).
    pub async fn send_task_failure(
        &self,
        token: &str,
        error: &str,
        cause: &str,
    ) -> Result<(), SfnError> {
        self.client
            .send_task_failure()
            .task_token(token)
            .error(error)
            .cause(cause)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| task_error(Failure::from_sdk(&e), "SendTaskFailure"))
    }
}

/// The codes of a token nobody waits for; anything else as [`classify`] says.
fn task_error(f: Failure, op: &'static str) -> SfnError {
    match f.code.as_deref() {
        Some("TaskDoesNotExist" | "TaskTimedOut" | "InvalidToken") => SfnError::NoSuchTask {
            op,
            message: f.message,
        },
        _ => classify(op, f),
    }
}

/// An execution of the name we start: ours when its input is the same.
fn reattach(existing: Execution, name: &str, input: &str) -> Result<Started, SfnError> {
    if same_json(existing.input.as_deref(), input) {
        Ok(Started {
            execution_arn: existing.arn,
            start_ms: existing.start_ms,
            reattached: true,
        })
    } else {
        Err(SfnError::NameTaken {
            name: flatten_str(name),
            arn: flatten_str(&existing.arn),
        })
    }
}

fn not_found_or(f: &Failure, arn: &str, op: &'static str) -> SfnError {
    match f.code.as_deref() {
        Some("ExecutionDoesNotExist") => SfnError::NoSuchExecution {
            arn: flatten_str(arn),
        },
        _ => classify(op, f.clone()),
    }
}

/// Two JSON texts hold the same value (falls back to comparing the text).
fn same_json(a: Option<&str>, b: &str) -> bool {
    let Some(a) = a else { return false };
    match (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// The value of output `key` of the CloudFormation stack `stack` (the deployed
/// backend, `make deploy`). `Ok(None)` when the stack has no such output.
pub async fn stack_output(
    cfg: &SdkConfig,
    stack: &str,
    key: &str,
) -> Result<Option<String>, SfnError> {
    let cfn = aws_sdk_cloudformation::Client::new(cfg);
    let out = cfn
        .describe_stacks()
        .stack_name(stack)
        .send()
        .await
        .map_err(|e| {
            let f = Failure::from_sdk(&e);
            SfnError::Backend(format!(
                "the backend stack '{}' could not be read: {}",
                flatten_str(stack),
                f.message
            ))
        })?;
    let Some(s) = out.stacks().first() else {
        return Err(SfnError::Backend(format!(
            "the backend stack '{}' does not exist",
            flatten_str(stack)
        )));
    };
    Ok(s.outputs()
        .iter()
        .find(|o| o.output_key() == Some(key))
        .and_then(|o| o.output_value())
        .filter(|v| !v.is_empty())
        .map(str::to_string))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn started_execution_comes_from_a_start_execution_task_submitted_output() {
        let out =
            r#"{"ExecutionArn":"arn:aws:states:us-east-1:1:execution:D:abc","StartDate":1.7E9}"#;
        assert_eq!(
            started_execution("states", "startExecution.sync:2", Some(out)).as_deref(),
            Some("arn:aws:states:us-east-1:1:execution:D:abc")
        );
        assert_eq!(
            started_execution("states", "startExecution", Some(out)).as_deref(),
            Some("arn:aws:states:us-east-1:1:execution:D:abc")
        );
        // Another service's task, a missing or unreadable output: nothing.
        assert_eq!(started_execution("lambda", "invoke", Some(out)), None);
        assert_eq!(
            started_execution("states", "startExecution.sync:2", None),
            None
        );
        assert_eq!(
            started_execution("states", "startExecution.sync:2", Some("not json")),
            None
        );
        assert_eq!(
            started_execution(
                "states",
                "startExecution.sync:2",
                Some(r#"{"ExecutionArn":""}"#)
            ),
            None
        );
    }

    #[test]
    fn execution_arn_is_built_from_the_state_machine_arn_and_the_name() {
        assert_eq!(
            execution_arn(
                "arn:aws:states:us-east-1:123456789012:stateMachine:cdkd-flow-destroy",
                "destroy-app-20261129T152232"
            )
            .as_deref(),
            Some("arn:aws:states:us-east-1:123456789012:execution:cdkd-flow-destroy:destroy-app-20261129T152232")
        );
        assert_eq!(execution_arn("not-an-arn", "x"), None);
    }

    #[test]
    fn state_machine_of_inverts_execution_arn() {
        let sm = "arn:aws:states:eu-west-1:1:stateMachine:M";
        let ex = execution_arn(sm, "run-1").unwrap();
        assert_eq!(state_machine_of(&ex).as_deref(), Some(sm));
        assert_eq!(state_machine_of(sm), None);
    }

    #[test]
    fn arn_region_is_the_fourth_field() {
        assert_eq!(
            arn_region("arn:aws:states:eu-west-1:1:execution:M:n"),
            Some("eu-west-1")
        );
        assert_eq!(arn_region("arn:aws:s3:::bucket"), None);
        assert_eq!(arn_region("destroy-x"), None);
    }

    #[test]
    fn transient_failures_are_network_throttling_and_5xx_only() {
        let f = |status: Option<u16>, code: Option<&str>| Failure::from_parts(status, code, "");
        assert!(failure_is_transient(&f(None, None)));
        assert!(failure_is_transient(&f(Some(503), None)));
        assert!(failure_is_transient(&f(
            Some(400),
            Some("ThrottlingException")
        )));
        assert!(failure_is_transient(&f(Some(429), None)));
        assert!(!failure_is_transient(&f(
            Some(400),
            Some("ExecutionDoesNotExist")
        )));
        assert!(!failure_is_transient(&f(
            Some(403),
            Some("AccessDeniedException")
        )));
    }

    #[test]
    fn a_token_nobody_waits_for_is_no_such_task_and_throttling_stays_transient() {
        let f = |status: Option<u16>, code: Option<&str>| Failure::from_parts(status, code, "m");
        for code in ["TaskDoesNotExist", "TaskTimedOut", "InvalidToken"] {
            assert!(
                matches!(
                    task_error(f(Some(400), Some(code)), "SendTaskSuccess"),
                    SfnError::NoSuchTask { .. }
                ),
                "{code}"
            );
        }
        assert!(
            task_error(f(Some(400), Some("ThrottlingException")), "SendTaskFailure").is_transient()
        );
        assert!(task_error(f(None, None), "SendTaskFailure").is_transient());
        assert!(matches!(
            task_error(
                f(Some(400), Some("AccessDeniedException")),
                "SendTaskSuccess"
            ),
            SfnError::Service { .. }
        ));
    }

    #[test]
    fn reattach_compares_inputs_as_json_values() {
        assert!(same_json(Some(r#"{"a":1,"b":2}"#), r#"{ "a": 1, "b": 2 }"#));
        assert!(!same_json(Some(r#"{"a":1}"#), r#"{"a":2}"#));
        assert!(!same_json(None, "{}"));
    }

    #[test]
    fn only_running_and_pending_redrive_are_not_final() {
        for s in ["SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"] {
            assert!(status_is_final(s), "{s}");
        }
        assert!(!status_is_final("RUNNING"));
        assert!(!status_is_final("PENDING_REDRIVE"));
    }
}
