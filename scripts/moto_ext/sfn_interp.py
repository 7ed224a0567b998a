"""moto's own Step Functions interpreter (`moto/stepfunctions/parser/`, ported from
LocalStack; on while moto's config `stepfunctions.execute_state_machine` is true, set by
`POST /moto-api/config`) running the project's definitions as AWS Step Functions does.
`install()` patches moto's classes when the middleware is built:

- `sfn_sync`: the optimized `states:startExecution` integration, `.sync` and `.sync:2`
  (parameters and results through the API shapes, the child awaited, a failed child a
  `States.TaskFailed`, a stopped parent stopping its child).
- `sfn_auth`: the interpreter's requests signed with the state machine's execution role.
- `sfn_status`: StopExecution immediate, a final status final, DescribeExecution's output
  JSON; `sfn_events`: the "Step Functions Execution Status Change" events put on the
  default EventBridge bus; `sfn_eventbridge`: rules delivering to Lambda targets (and the
  whole event to the others).
- `sfn_time`: a time scale for `Wait` and Retry back-off (a test facility).
- `sfn_limits`: the 256 KiB payload quota measured as AWS measures it, and
  `States.DataLimitExceeded` not caught by `States.ALL`; `sfn_history`: the 25,000-event
  history limit (lowered by `CDKD_FLOW_HISTORY_LIMIT` or the config's `history_limit`).
- here, smaller corrections:
  - StartExecution without `name` names the execution with a UUID, as AWS does ("If you
    don't provide a name for the execution, Step Functions automatically generates a
    universally unique identifier (UUID) as the execution name",
    https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html);
    moto's interpreter named it "None", so a second unnamed execution (a Map's second
    child) was ExecutionAlreadyExists. A given name is checked as moto's plain backend
    checks it.
  - A JSONPath with a filter (`$.results[?(@.status == 'FAILED')]`) that matches nothing
    is `[]`: "Paths follow JsonPath syntax"
    (https://docs.aws.amazon.com/step-functions/latest/dg/amazon-states-language-paths.html,
    linking Jayway JsonPath), where a filter makes a path indefinite and "indefinite
    paths always return a list" (https://github.com/json-path/JsonPath, "What is
    Returned When?"), empty when nothing matches.
    moto gave `[]` for `[*]` and slices only and raised for a filter (cleanup.asl.json's
    Collect state, when no destroy failed or none succeeded).
  - SendTaskFailure keeps its `cause` (moto's response passed only `error`), so a
    `.waitForTaskToken` task fails with the error and cause sent, as documented
    (https://docs.aws.amazon.com/step-functions/latest/apireference/API_SendTaskFailure.html).
  - `GET /moto-api/config` also answers the `stepfunctions` section (so a test can
    restore what it found).
"""
from typing import Any

from . import sfn_auth, sfn_eventbridge, sfn_history, sfn_limits, sfn_status, sfn_sync, sfn_time
from .sfn_time import set_time_scale, time_scale

__all__ = ["install", "interpreter_on", "set_time_scale", "time_scale"]

_originals: dict[str, Any] = {}


def interpreter_on() -> bool:
    from moto.core.config import default_user_config

    return bool((default_user_config.get("stepfunctions") or {}).get("execute_state_machine", False))  # type: ignore[union-attr]


def _start_execution(self: Any, state_machine_arn: str, name: Any = None, execution_input: Any = None,
                     trace_header: Any = None) -> Any:
    import uuid

    if name:
        self._validate_name(name)
    else:
        name = str(uuid.uuid4())
    return _originals["start_execution"](self, state_machine_arn, name, execution_input, trace_header)


def _indefinite_path(path: str) -> bool:
    return "[?(" in path or _originals["contains_slice_or_wildcard_array"](path)


def _send_task_failure_response(self: Any) -> Any:
    from moto.core.responses import EmptyResult

    if not interpreter_on():
        return _originals["send_task_failure_response"](self)
    self.stepfunction_backend.send_task_failure(
        self._get_param("taskToken"), error=self._get_param("error"), cause=self._get_param("cause")
    )
    return EmptyResult()


def _get_config(self: Any) -> dict[str, Any]:
    from moto.core.config import default_user_config

    config = _originals["get_config"](self)
    config["stepfunctions"] = default_user_config.get("stepfunctions", {})
    return config


def install() -> None:
    """Applies every patch once."""
    if _originals:
        return
    from moto.moto_api._internal.models import MotoAPIBackend
    from moto.stepfunctions.parser.asl.utils import json_path
    from moto.stepfunctions.parser.models import StepFunctionsParserBackend
    from moto.stepfunctions.responses import StepFunctionResponse

    _originals["start_execution"] = StepFunctionsParserBackend.start_execution
    _originals["contains_slice_or_wildcard_array"] = json_path._contains_slice_or_wildcard_array
    _originals["send_task_failure_response"] = StepFunctionResponse.send_task_failure
    _originals["get_config"] = MotoAPIBackend.get_config
    StepFunctionsParserBackend.start_execution = _start_execution  # type: ignore[method-assign]
    json_path._contains_slice_or_wildcard_array = _indefinite_path
    StepFunctionResponse.send_task_failure = _send_task_failure_response  # type: ignore[method-assign]
    MotoAPIBackend.get_config = _get_config  # type: ignore[method-assign]

    sfn_time.install()
    sfn_limits.install()
    sfn_history.install()
    sfn_auth.install()
    sfn_sync.install()
    sfn_status.install()
    sfn_eventbridge.install()
