"""The optimized Step Functions integration (`arn:aws:states:::states:startExecution`,
`.sync`, `.sync:2`) in moto's interpreter, as AWS documents it in "Start a new AWS Step
Functions state machine from a running execution"
(https://docs.aws.amazon.com/step-functions/latest/dg/connect-stepfunctions.html):

- Parameters are the StartExecution request's (`StateMachineArn`, `Input`, `Name`) and the
  result the response's, in the integration's casing (`ExecutionArn`, `StartDate`).
  moto's `StateTaskService._normalise_parameters`/`_normalise_response` are `pass` (the
  LocalStack original maps the keys through the botocore shapes), so `StateMachineArn`
  never reached boto3 (`stateMachineArn`) and `ExecutionArn` was not found in the answer.
  Here both map through the botocore operation's input and output shapes; timestamps
  become epoch milliseconds (JSON has no date type).
- `.sync` waits for the child execution and returns its DescribeExecution in that casing
  (`Output` a JSON string); `.sync:2` the same with `Input` and `Output` parsed as JSON.
  A child that ends FAILED, TIMED_OUT or ABORTED fails the task with `States.TaskFailed`
  and the DescribeExecution as the cause (moto's resolver, kept). moto polled
  DescribeExecution over HTTP every 0.5 s (AWS itself learns of the child's end from
  EventBridge); here the child's status is watched in-process and DescribeExecution is
  asked (signed as the state machine's role, see sfn_auth) when it ended, or every
  POLL_SECONDS, so the role still needs states:DescribeExecution.
- When the parent stops running (StopExecution, a timeout, a failed Map branch) while the
  child runs, the child is stopped (StopExecution signed as the role): the role policy
  AWS documents for `.sync` grants `states:StopExecution` on the child's executions for
  this (https://docs.aws.amazon.com/step-functions/latest/dg/stepfunctions-iam.html).
- A refused StartExecution is the task error `StepFunctions.<code>` (moto made
  `StepFunctions.AccessDeniedExceptionException` out of `AccessDeniedException`)."""
import datetime
import logging
import threading
import time
from typing import Any, Callable

LOG = logging.getLogger(__name__)

# While the child runs in this emulator its status is watched in-process; DescribeExecution
# is asked when it ends, and at most this often before (a child not found in-process is
# asked for every 0.5 s, as moto did).
POLL_SECONDS = 60.0
_STEP = 0.05

_lock = threading.Lock()
_operations: dict[tuple[str, str], Any] = {}
_originals: dict[str, Any] = {}


def operation_model(service: str, action: str) -> Any:
    """botocore's operation model of `action` (snake_case) of `service` (boto3 name)."""
    with _lock:
        found = _operations.get((service, action))
        if found is None:
            import botocore.session
            from botocore import xform_name

            model = botocore.session.get_session().get_service_model(service)
            name = next(op for op in model.operation_names if xform_name(op) == action)
            found = _operations[(service, action)] = model.operation_model(name)
        return found


def epoch_millis(value: Any) -> Any:
    """Timestamps (boto3's datetimes) as epoch milliseconds, in place through dicts/lists."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return int(value.timestamp() * 1000)
    if isinstance(value, dict):
        for k, v in list(value.items()):
            value[k] = epoch_millis(v)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            value[i] = epoch_millis(v)
    return value


def _normalise_parameters(self: Any, parameters: dict, boto_service_name: str | None = None,
                          service_action_name: str | None = None) -> None:
    _originals["normalise_parameters"](self, parameters, boto_service_name, service_action_name)
    op = operation_model(self._get_boto_service_name(boto_service_name),
                         self._get_boto_service_action(service_action_name))
    if op.input_shape is not None and isinstance(parameters, dict):
        self._to_boto_request(parameters, op.input_shape)


def _normalise_response(self: Any, response: Any, boto_service_name: str | None = None,
                        service_action_name: str | None = None) -> None:
    if not isinstance(response, dict):
        return
    response.pop("ResponseMetadata", None)
    op = operation_model(self._get_boto_service_name(boto_service_name),
                         self._get_boto_service_action(service_action_name))
    if op.output_shape is not None:
        self._from_boto_response(response, op.output_shape)
    epoch_millis(response)


def _child_execution(execution_arn: str) -> Any | None:
    """The child execution's object in moto's interpreter backend (None if not found)."""
    from moto.stepfunctions.parser.models import stepfunctions_parser_backends

    parts = execution_arn.split(":")
    if len(parts) < 8:
        return None
    try:
        return stepfunctions_parser_backends[parts[4]][parts[3]].describe_execution(execution_arn)
    except Exception:
        return None


def _watching(build: Callable[..., Any]) -> Callable[..., Any]:
    from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import FailureEventException

    def build_resolver(self: Any, env: Any, resource_runtime_part: Any, normalised_parameters: dict,
                       state_credentials: Any) -> Callable[[], Any]:
        execution_arn = env.stack[-1]["ExecutionArn"]
        region = resource_runtime_part.region
        resolver = build(self, env, resource_runtime_part, normalised_parameters, state_credentials)

        def resolve() -> Any:
            child = _child_execution(execution_arn)
            deadline = time.monotonic() + (POLL_SECONDS if child is not None else 0.0)
            while (
                env.is_running()
                and child is not None
                and child.status == "RUNNING"
                and time.monotonic() < deadline
            ):
                time.sleep(_STEP)
            if not env.is_running():
                return None
            try:
                return resolver()
            except FailureEventException as failed:
                _compact_cause(failed)
                raise

        resolve.stop_child = lambda: _stop_child(  # type: ignore[attr-defined]
            execution_arn, region, state_credentials, _child_execution(execution_arn))
        return resolve

    return build_resolver


def _compact_cause(failed: Any) -> None:
    """The failed child's DescribeExecution, as the cause, in compact JSON."""
    import json

    for details in (failed.failure_event.event_details or {}).values():
        cause = details.get("cause") if isinstance(details, dict) else None
        if isinstance(cause, str):
            try:
                details["cause"] = json.dumps(json.loads(cause), separators=(",", ":"))
            except ValueError:
                pass


def _stop_child(execution_arn: str, region: str, state_credentials: Any, child: Any) -> None:
    if child is not None and child.status != "RUNNING":
        return
    from .sfn_auth import boto_client_for

    try:
        boto_client_for(region, "stepfunctions", state_credentials).stop_execution(executionArn=execution_arn)
    except Exception as e:  # best effort, as on AWS
        LOG.warning("could not stop the child execution %s: %s", execution_arn, e)


def _eval_sync(self: Any, env: Any, sync_resolver: Any, *args: Any, **kwargs: Any) -> Any:
    """moto's wait for the child; when the task stopped running without an outcome (the
    parent stopped, timed out, or its Map failed), the child is stopped."""
    outcome = _originals["eval_sync"](self, env, sync_resolver, *args, **kwargs)
    if outcome is None and not env.is_running():
        stop_child = getattr(sync_resolver, "stop_child", None)
        if stop_child is not None:
            stop_child()
    return outcome


def _from_error(self: Any, env: Any, ex: Exception) -> Any:
    from botocore.exceptions import ClientError

    failure = _originals["from_error"](self, env, ex)
    if isinstance(ex, ClientError):
        code = ex.response["Error"]["Code"]
        if code.endswith("Exception"):
            name = f"StepFunctions.{code}"
            from moto.stepfunctions.parser.asl.component.common.error_name.custom_error_name import CustomErrorName

            failure.error_name = CustomErrorName(name)
            for details in failure.event_details.values():
                if isinstance(details, dict) and "error" in details:
                    details["error"] = name
    return failure


def install() -> None:
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sfn import (
        StateTaskServiceSfn,
    )

    if _originals:
        return
    _originals["normalise_parameters"] = StateTaskServiceSfn._normalise_parameters
    _originals["from_error"] = StateTaskServiceSfn._from_error
    _originals["eval_sync"] = StateTaskServiceSfn._eval_sync
    StateTaskServiceSfn._eval_sync = _eval_sync  # type: ignore[method-assign]
    StateTaskServiceSfn._normalise_parameters = _normalise_parameters  # type: ignore[method-assign]
    StateTaskServiceSfn._normalise_response = _normalise_response  # type: ignore[method-assign]
    StateTaskServiceSfn._from_error = _from_error  # type: ignore[method-assign]
    StateTaskServiceSfn._build_sync_resolver = _watching(StateTaskServiceSfn._build_sync_resolver)  # type: ignore[method-assign]
    StateTaskServiceSfn._build_sync2_resolver = _watching(StateTaskServiceSfn._build_sync2_resolver)  # type: ignore[method-assign]
