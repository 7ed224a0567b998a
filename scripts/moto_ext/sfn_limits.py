"""Step Functions' payload quota in moto's interpreter, as AWS documents it:

- "Maximum input or output size for a task, state, or execution: 256 KiB of data as a
  UTF-8 encoded string" (https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html;
  the API's `input`/`output` members: "Length Constraints: Maximum length of 262144 ...
  expressed as bytes in UTF-8 encoding"). A payload of exactly 262,144 bytes is allowed.
  moto already fails a state whose output, or a task whose result, is over its quota
  with `States.DataLimitExceeded`, but measured the JSON with spaces after `,` and `:`
  and non-ASCII characters escaped as `\\uXXXX` (six bytes for one), and refused exactly
  262,144 bytes. Here a value is measured as the compact JSON text, in UTF-8 (a string
  result as it is).
- `States.ALL` does not catch `States.DataLimitExceeded`: "The States.ALL error type ...
  can't catch the States.DataLimitExceeded terminal error" and "States.DataLimitExceeded:
  A terminal error that can't be caught by the States.ALL error type"
  (https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html).
  moto's wildcard matched it, in Retry and Catch. A retrier or catcher that names
  `States.DataLimitExceeded` still matches it (the docs exclude only the wildcard).
  A state's own output over the quota fails the execution whatever the state's Catch
  (moto checks it after Retry and Catch, as the engine does); a task's result over the
  quota is the task's error, which such a named catcher can catch.
- That error keeps its name in every task type: the `_from_error` of moto's DynamoDB,
  SQS, SNS, Glue... integrations turned any exception that was not the service's own
  (the interpreter's FailureEventException too) into the service's generic error
  (`DynamoDB.AmazonDynamoDBException`, empty cause)."""
import json
from typing import Any

MAX_PAYLOAD_BYTES = 262_144
DATA_LIMIT_EXCEEDED = "States.DataLimitExceeded"

_originals: dict[str, Any] = {}


def payload_size(value: Any) -> int:
    """The size Step Functions counts: the UTF-8 bytes of the compact JSON text (of a
    string result: the string)."""
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    from moto.stepfunctions.parser.asl.utils.encoding import _DateTimeEncoder

    text = json.dumps(value, cls=_DateTimeEncoder, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode("utf-8"))


def is_within_size_quota(value: Any) -> bool:
    return payload_size(value) <= MAX_PAYLOAD_BYTES


def _error_equals(self: Any, env: Any) -> None:
    """ErrorEquals: States.ALL matches every error but States.DataLimitExceeded."""
    error_name = env.stack[-1] if env.stack else None
    if getattr(error_name, "error_name", None) == DATA_LIMIT_EXCEEDED:
        named = [getattr(n, "error_name", None) for n in self.error_names]
        if DATA_LIMIT_EXCEEDED not in named:
            env.stack.pop()
            env.stack.append(False)
            return
    _originals["error_equals"](self, env)


def _keeping_failures(from_error: Any) -> Any:
    """A task type's `_from_error` that passes the interpreter's own failures through."""

    def wrapped(self: Any, env: Any, ex: Exception) -> Any:
        from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
            FailureEventException,
        )

        if isinstance(ex, FailureEventException):
            return ex.failure_event
        return from_error(self, env, ex)

    return wrapped


def _subclasses(cls: type) -> list[type]:
    out: list[type] = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def install() -> None:
    """Applies the patches once."""
    if _originals:
        return
    from moto.stepfunctions.parser import quotas
    from moto.stepfunctions.parser.asl.component.common.error_name.error_equals_decl import (
        ErrorEqualsDecl,
    )
    from moto.stepfunctions.parser.asl.component.state import state
    from moto.stepfunctions.parser.asl.component.state.exec.state_task import state_task_lambda
    from moto.stepfunctions.parser.asl.component.state.exec.execute_state import ExecutionState
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import (
        state_task_service,
        state_task_service_factory,  # noqa: F401 - imports every task type
    )

    _originals["error_equals"] = ErrorEqualsDecl._eval_body
    ErrorEqualsDecl._eval_body = _error_equals  # type: ignore[method-assign]
    # Each module imported the function by name: its own binding is replaced.
    for module in (quotas, state, state_task_lambda, state_task_service):
        module.is_within_size_quota = is_within_size_quota  # type: ignore[attr-defined]
    for cls in _subclasses(ExecutionState):
        if "_from_error" in vars(cls):
            cls._from_error = _keeping_failures(vars(cls)["_from_error"])  # type: ignore[attr-defined]
