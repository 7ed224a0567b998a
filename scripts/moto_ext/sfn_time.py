"""A time scale for the Step Functions interpreter's own waits: the `Wait` state and the
back-off between Retry attempts. A test facility, not AWS behaviour: on AWS a `Wait` of
100 s lasts 100 s (https://docs.aws.amazon.com/step-functions/latest/dg/state-wait.html)
and a retrier waits `IntervalSeconds * BackoffRate^(attempt-1)`, capped by
`MaxDelaySeconds`, jittered with `JitterStrategy` FULL
(https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html).
Here every such wait lasts `seconds * time_scale()` real seconds; the default scale is 1
(real time). Task `TimeoutSeconds`/`HeartbeatSeconds` are not scaled: they bound real
work (a Lambda binary, a person answering an approval) that the scale does not speed up.

The scale, first match wins:
- moto's own config endpoint: `POST /moto-api/config` with
  `{"stepfunctions": {"execute_state_machine": true, "time_scale": 0.01}}` (moto replaces
  the whole `stepfunctions` section, so a later POST without `time_scale` drops it);
- `set_time_scale(x)` (a function the middleware may route; `None` restores the default);
- the environment variable `CDKD_EMULATOR_SFN_TIME_SCALE` read at start-up (a float).

Unlike moto's `time.sleep`, the retry back-off also ends at once when the execution is
stopped (StopExecution), as an aborted execution on AWS does not run its retries."""
import os
import time
from typing import Any

from moto.core.config import default_user_config

ENV_VAR = "CDKD_EMULATOR_SFN_TIME_SCALE"
# A scale change is noticed by a wait in progress within this many real seconds.
_SLICE = 0.5


def _from_env() -> float:
    raw = os.environ.get(ENV_VAR, "").strip()
    if not raw:
        return 1.0
    try:
        value = float(raw)
    except ValueError:
        return 1.0
    return value if value >= 0 else 1.0


_default = _from_env()
_override: float | None = None


def set_time_scale(scale: float | None) -> None:
    """Sets the scale (a non-negative float); `None` goes back to the environment's."""
    global _override
    if scale is not None and (not isinstance(scale, (int, float)) or scale < 0):
        raise ValueError(f"time scale must be a non-negative number, got {scale!r}")
    _override = None if scale is None else float(scale)


def time_scale() -> float:
    configured = (default_user_config.get("stepfunctions") or {}).get("time_scale")  # type: ignore[union-attr]
    if isinstance(configured, (int, float)) and not isinstance(configured, bool) and configured >= 0:
        return float(configured)
    if _override is not None:
        return _override
    return _default


def scaled_wait(env: Any, seconds: float) -> None:
    """Waits `seconds` of the execution's clock (scaled), or until the execution stops
    running (StopExecution, a timeout, a failed branch)."""
    if seconds <= 0:
        return
    start = time.monotonic()
    while env.is_running():
        remaining = start + seconds * time_scale() - time.monotonic()
        if remaining <= 0:
            return
        env.program_state_event.wait(min(remaining, _SLICE))


def _wait_interval(self: Any, env: Any, wait_seconds: int) -> None:
    scaled_wait(env, wait_seconds)


def _retrier_eval_body(self: Any, env: Any) -> None:
    # moto's RetrierDecl._eval_body, with its `time.sleep(interval)` replaced by a scaled
    # wait that a StopExecution interrupts.
    from moto.stepfunctions.parser.asl.component.common.retry.max_attempts_decl import MaxAttemptsOutcome
    from moto.stepfunctions.parser.asl.component.common.retry.retrier_outcome import RetrierOutcome

    self.error_equals.eval(env)
    if not env.stack.pop():
        env.stack.append(RetrierOutcome.Skipped)
        return
    self.max_attempts.eval(env=env)
    if env.stack.pop() == MaxAttemptsOutcome.EXHAUSTED:
        env.stack.append(RetrierOutcome.Failed)
        return
    self.interval_seconds.eval(env=env)
    self.backoff_rate.eval(env=env)
    self.max_delay_seconds.eval(env=env)
    self.jitter_strategy.eval(env=env)
    interval_seconds: float = env.stack.pop()
    scaled_wait(env, interval_seconds)
    env.stack.append(RetrierOutcome.Executed)


def _timestamp_wait_seconds(self: Any, env: Any) -> int:
    # moto compared the UTC timestamp with the local clock (datetime.now()); a Wait's
    # Timestamp is UTC (ISO-8601 with Z).
    import datetime

    from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import FailureEventException

    self.string.eval(env=env)
    timestamp_str: str = env.stack.pop()
    timestamp = self._from_timestamp_string(timestamp=timestamp_str)
    if timestamp is None:
        raise FailureEventException(self._create_failure_event(env, timestamp_str))
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    return int((timestamp - now).total_seconds())


def install() -> None:
    from moto.stepfunctions.parser.asl.component.common.retry.retrier_decl import RetrierDecl
    from moto.stepfunctions.parser.asl.component.state.wait.wait_function.timestamp import Timestamp
    from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import WaitFunction

    WaitFunction._wait_interval = _wait_interval  # type: ignore[method-assign]
    RetrierDecl._eval_body = _retrier_eval_body  # type: ignore[method-assign]
    Timestamp._get_wait_seconds = _timestamp_wait_seconds  # type: ignore[method-assign]
