"""Step Functions' limit on an execution's history, in moto's interpreter, as AWS
documents it: "Maximum execution history size: 25,000 events. If the execution history
reaches this quota, the execution will fail"
(https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html), and "When an
execution reaches 24,999 events, it waits for the next event to happen. If the event
number 25,000 is ExecutionSucceeded, the execution finishes successfully. If the event
number 25,000 isn't ExecutionSucceeded, the ExecutionFailed event is logged and the
state machine execution fails because of reaching the history limit"
(https://docs.aws.amazon.com/step-functions/latest/dg/bp-history-limit.html). AWS names
the failure `States.Runtime`, cause `The execution reached the maximum number of history
events (25000).`; the event before it is the last the machine produced. moto had no
limit: a loop ran for ever.

Here the event that would be number `limit` without ending the execution is not
recorded: the execution's program fails with that error (its states stop as on
StopExecution) and its ExecutionFailed event takes that number. Events a state still
in progress produces after that are not recorded either.

The limit, first match wins (a test setting, so that a test reaches it quickly):
- moto's config endpoint: `POST /moto-api/config` with `{"stepfunctions":
  {"execute_state_machine": true, "history_limit": 60}}`;
- the environment variable `CDKD_FLOW_HISTORY_LIMIT` read at start-up (the one the
  project's engine and steps read);
- 25,000.
A value under 10 is ignored."""
import os
import threading
from typing import Any

from moto.core.config import default_user_config

ENV_VAR = "CDKD_FLOW_HISTORY_LIMIT"
MAX_HISTORY_EVENTS = 25_000
RUNTIME = "States.Runtime"
_ENDING = ("ExecutionSucceeded", "ExecutionFailed", "ExecutionAborted", "ExecutionTimedOut")

_originals: dict[str, Any] = {}


def _valid(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            return None
    if isinstance(value, int) and value >= 10:
        return value
    return None


_default = _valid(os.environ.get(ENV_VAR, "")) or MAX_HISTORY_EVENTS


def history_limit() -> int:
    configured = (default_user_config.get("stepfunctions") or {}).get("history_limit")  # type: ignore[union-attr]
    return _valid(configured) or _default


def cause(limit: int) -> str:
    return f"The execution reached the maximum number of history events ({limit})."


def _type_name(event_type: Any) -> str:
    return str(getattr(event_type, "value", event_type))


def _add_event(self: Any, context: Any, event_type: Any, event_details: Any = None,
               timestamp: Any = None, update_source_event_id: bool = True) -> int:
    from moto.stepfunctions.parser.api import ExecutionFailedEventDetails

    guard = self.__dict__.setdefault("_history_guard", threading.Lock())
    with guard:
        limit = self.__dict__.setdefault("_history_limit", history_limit())
        next_id = self._event_id_gen._next_id
        full = self.__dict__.get("_history_full")
        name = _type_name(event_type)
        if name in _ENDING:
            if full is not None:
                if name != "ExecutionFailed" or next_id > limit:
                    return next_id
                # The failure the limit caused, whatever a state raised after it.
                event_details = {"executionFailedEventDetails": full}
                env = self.__dict__.get("_history_env")
                if env is not None:
                    env.set_error(full)
            return _originals["add_event"](self, context, event_type, event_details,
                                           timestamp, update_source_event_id)
        if full is not None:
            return next_id
        if next_id < limit:
            return _originals["add_event"](self, context, event_type, event_details,
                                           timestamp, update_source_event_id)
        details = ExecutionFailedEventDetails(error=RUNTIME, cause=cause(limit))
        self.__dict__["_history_full"] = details
        env = self.__dict__.get("_history_env")
    if env is not None:
        env.set_error(details)
    return next_id


def _get_evaluation_environment(self: Any) -> Any:
    env = _originals["get_evaluation_environment"](self)
    # The limit is the one in force when the execution starts.
    env.event_manager.__dict__["_history_env"] = env
    env.event_manager.__dict__["_history_limit"] = history_limit()
    return env


def install() -> None:
    """Applies the patches once."""
    if _originals:
        return
    from moto.stepfunctions.parser.asl.eval.event.event_manager import EventManager
    from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker

    _originals["add_event"] = EventManager.add_event
    _originals["get_evaluation_environment"] = ExecutionWorker._get_evaluation_environment
    EventManager.add_event = _add_event  # type: ignore[method-assign]
    ExecutionWorker._get_evaluation_environment = _get_evaluation_environment  # type: ignore[method-assign]
