"""Execution status in moto's Step Functions interpreter, as AWS documents it
(https://docs.aws.amazon.com/step-functions/latest/apireference/API_StopExecution.html,
https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html):

- StopExecution makes the execution ABORTED at once: its `stopDate` is in the answer and
  DescribeExecution says ABORTED (with the request's `error`/`cause`), and no state runs
  after it. moto only flagged the interpreter thread, which noticed it at the next state
  boundary (a running Lambda call, a `.waitForTaskToken`, a child `.sync` kept it RUNNING,
  StopExecution answered no `stopDate`, and `error`/`cause` were dropped). A status, once
  final, never changes again: the interpreter thread's own ending does not overwrite it.
  The history ends with ExecutionAborted at once; nothing the stopped thread still does
  (a Lambda call returning) is added after it. An execution stopped before its thread
  started never runs a state.
- DescribeExecution's `output` is the JSON text of the result (moto passed a string
  result through unquoted), and `stopDate` is given for TIMED_OUT too (moto: SUCCEEDED,
  FAILED, ABORTED only).
- Every status change (RUNNING at start, then the final one) is handed to `sfn_events`
  after the status is set."""
import datetime
import threading
from typing import Any

from .sfn_events import emit, status_of

_lock = threading.RLock()
_originals: dict[str, Any] = {}


def _start(self: Any) -> None:
    """moto's Execution.start, with the RUNNING event queued before the thread runs."""
    from moto.stepfunctions.parser.api import ExecutionStatus, InvalidName

    if self.exec_worker:
        raise InvalidName()
    self.exec_worker = self._get_start_execution_worker()
    self.exec_status = ExecutionStatus.RUNNING
    emit(self)
    self.exec_worker.start()


def _terminated(self: Any) -> None:
    """The interpreter thread ended: its status, unless StopExecution already set one."""
    execution = self.execution
    with _lock:
        if status_of(execution) != "RUNNING":
            return
        self._reflect_execution_status()
    emit(execution)


def _stop(self: Any, stop_date: Any, error: str | None, cause: str | None) -> None:
    """StopExecution: ABORTED now, then the interpreter is told to stop."""
    from moto.stepfunctions.parser.api import ExecutionStatus

    with _lock:
        if status_of(self) != "RUNNING":
            return
        self.exec_status = ExecutionStatus.ABORTED
        self.stop_date = datetime.datetime.now(tz=datetime.timezone.utc)
        if error:
            self.error = error
        if cause:
            self.cause = cause
        worker = self.exec_worker
        env = worker.env if worker is not None else None
    if env is not None and env.is_running():
        env.set_stop(stop_date=self.stop_date, cause=cause, error=error)
        _record_aborted(env, error, cause)
    emit(self)


def _record_aborted(env: Any, error: str | None, cause: str | None) -> None:
    """The history's last event, now (the interpreter thread may be blocked in a Lambda
    call or a `.waitForTaskToken` wait and add it much later, or never)."""
    from moto.stepfunctions.parser.api import ExecutionAbortedEventDetails, HistoryEventType
    from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails

    env.event_history_context.source_event_id = 0
    env.event_manager.add_event(
        context=env.event_history_context,
        event_type=HistoryEventType.ExecutionAborted,
        event_details=EventDetails(executionAbortedEventDetails=ExecutionAbortedEventDetails(error=error, cause=cause)),
    )


def _add_event(self: Any, context: Any, event_type: Any, *args: Any, **kwargs: Any) -> int:
    """EventManager.add_event: nothing follows ExecutionAborted in an execution's history."""
    with _lock:
        if getattr(self, "_cdkd_aborted", False):
            return int(getattr(context, "last_published_event_id", 0) or 0)
        if getattr(event_type, "value", event_type) == "ExecutionAborted":
            self._cdkd_aborted = True
    return _originals["add_event"](self, context, event_type, *args, **kwargs)


def _execution_logic(self: Any) -> None:
    """moto's ExecutionWorker._execution_logic: the program does not start when the
    execution was stopped before its thread got going."""
    from moto.stepfunctions.parser.api import (
        ExecutionStartedEventDetails,
        HistoryEventExecutionDataDetails,
        HistoryEventType,
    )
    from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails
    from moto.stepfunctions.parser.asl.utils.encoding import to_json_str

    program = self._get_evaluation_entrypoint()
    self.env = self._get_evaluation_environment()
    self.env.event_manager.add_event(
        context=self.env.event_history_context,
        event_type=HistoryEventType.ExecutionStarted,
        event_details=EventDetails(
            executionStartedEventDetails=ExecutionStartedEventDetails(
                input=to_json_str(self._evaluation_details.execution_details.inpt),
                inputDetails=HistoryEventExecutionDataDetails(truncated=False),
                roleArn=self._evaluation_details.aws_execution_details.role_arn,
            )
        ),
        update_source_event_id=False,
    )
    execution = getattr(self._execution_communication, "execution", None)
    with _lock:
        if execution is not None and status_of(execution) != "RUNNING":
            _record_aborted(self.env, execution.error, execution.cause)
            return
        # From here on the program is running: a StopExecution reaches it through env.
        self.env.next_state_name = program.start_at.start_at_name
    program.eval(self.env)
    self._execution_communication.terminated()


def _stop_execution_response(self: Any) -> Any:
    from moto.core.responses import ActionResult

    from .sfn_interp import interpreter_on

    if not interpreter_on():
        return _originals["stop_execution_response"](self)
    arn = self._get_param("executionArn")
    execution = self.stepfunction_backend.describe_execution(arn)
    execution.stop(stop_date=None, error=self._get_param("error"), cause=self._get_param("cause"))
    return ActionResult({"stopDate": execution.stop_date})


def _describe_execution_response(self: Any) -> Any:
    from moto.stepfunctions.parser.asl.utils.encoding import to_json_str

    from .sfn_interp import interpreter_on

    answer = _originals["describe_execution_response"](self)
    result = getattr(answer, "result", None)
    if not interpreter_on() or not isinstance(result, dict):
        return answer
    execution = self.stepfunction_backend.describe_execution(self._get_param("executionArn"))
    if result.get("status") == "TIMED_OUT" and "stopDate" not in result:
        result["stopDate"] = execution.stop_date
    if result.get("status") == "SUCCEEDED":
        # The output is JSON text: moto passed a string result through as it was.
        result["output"] = to_json_str(execution.output, separators=(",", ":"))
    return answer


def install() -> None:
    from moto.stepfunctions.parser.asl.eval.event.event_manager import EventManager
    from moto.stepfunctions.parser.backend.execution import BaseExecutionWorkerCommunication, Execution
    from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker
    from moto.stepfunctions.responses import StepFunctionResponse

    if _originals:
        return
    _originals["add_event"] = EventManager.add_event
    _originals["stop_execution_response"] = StepFunctionResponse.stop_execution
    _originals["describe_execution_response"] = StepFunctionResponse.describe_execution
    EventManager.add_event = _add_event  # type: ignore[method-assign]
    Execution.start = _start  # type: ignore[method-assign]
    Execution.stop = _stop  # type: ignore[method-assign]
    BaseExecutionWorkerCommunication.terminated = _terminated  # type: ignore[method-assign]
    ExecutionWorker._execution_logic = _execution_logic  # type: ignore[method-assign]
    StepFunctionResponse.stop_execution = _stop_execution_response  # type: ignore[method-assign]
    StepFunctionResponse.describe_execution = _describe_execution_response  # type: ignore[method-assign]
