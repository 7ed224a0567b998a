"""Lambda functions of a custom runtime (`provided*`) run for real, as Lambda runs them
(https://docs.aws.amazon.com/lambda/latest/dg/runtimes-custom.html), in place of moto's
Docker-only (or echoing) Lambda.

- The binary is the emulator's env `CDKD_FLOW_STEP_BIN` (the project's one `cdkd-step`;
  its `_HANDLER` names the step), run in place of the zip's `bootstrap`. Unset or
  missing, an Invoke of such a function answers 500 `ServiceException` naming the
  variable. Functions of other runtimes keep moto's behaviour.
- Its environment is the one Lambda gives a custom runtime
  (https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime):
  the function's `Environment.Variables`, then `_HANDLER`, `AWS_LAMBDA_RUNTIME_API`,
  `AWS_LAMBDA_FUNCTION_NAME` / `_VERSION` / `_MEMORY_SIZE`, `AWS_LAMBDA_LOG_GROUP_NAME` /
  `_LOG_STREAM_NAME`, `AWS_LAMBDA_INITIALIZATION_TYPE`, `AWS_EXECUTION_ENV`,
  `AWS_REGION`, `AWS_DEFAULT_REGION`, `LAMBDA_TASK_ROOT` (the zip, unpacked; also the
  working directory), `LANG`, `TZ=:UTC`, and the execution role's credentials
  (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`) from AssumeRole in
  moto's STS backend, session name the function's name. Since this is an emulator, also
  `AWS_ENDPOINT_URL` (the emulator) and `AWS_EC2_METADATA_DISABLED=true`. Of the
  emulator's own environment only `PATH` and `HOME` pass.
- Warm environments: a process serves one invocation at a time and is kept for the next
  one; overlapping invocations start more (a pool per function version). A changed
  function (code or configuration) gets new processes. An environment that failed (init
  error, exit, timeout) is dropped (lambda_sandbox.py has the error names).
- Timeout: the function's `Timeout` from the start of the invocation (a cold start's
  init included), times env `CDKD_EMULATOR_LAMBDA_TIMEOUT_SCALE` (default 1); the error
  message names the configured timeout.
- `Event` invocations answer 202 at once and run on a thread of their own (AWS's
  retries of a failed asynchronous invocation are not modelled); `DryRun` answers 204.
- Output: each process's stdout and stderr, with Lambda's `START` / `END` / `REPORT`
  lines, go to `<dir>/lambda-<port>/<function>.log` (dir: env `CDKD_EMULATOR_LOG_DIR`,
  else the repository's `.emulator/`) and to the function's log group in moto's
  CloudWatch Logs (`/aws/lambda/<function>`), one stream per process.

Threads: moto's state is read under `serial.LOCK` (reentrant); the wait for the process
is made with the lock released, so the process can call back into the emulator."""
import atexit
import json
import os
import threading
import time
import uuid
from typing import Any

from .lambda_env import Spec, credentials, environment, log_dir, task_root
from .lambda_sandbox import Invocation, Outcome, Sandbox, error_outcome
from .serial import LOCK

BIN_ENV = "CDKD_FLOW_STEP_BIN"
SCALE_ENV = "CDKD_EMULATOR_LAMBDA_TIMEOUT_SCALE"
INVOCATION_TYPES = ("RequestResponse", "Event", "DryRun")
_KEPT_RECORDS = 10_000

Response = tuple[int, dict[str, str], bytes]


def custom_runtime(fn: Any) -> bool:
    """Whether the emulator runs the function itself (a zip of a `provided*` runtime)."""
    return str(fn.run_time or "").startswith("provided") and (fn.package_type or "Zip") == "Zip"


class _Instance:
    """A sandbox of one function, its log stream and output not yet sent to CloudWatch."""

    def __init__(self, spec: Spec, code: bytes) -> None:
        self.spec = spec
        self.stream = time.strftime("%Y/%m/%d/", time.gmtime()) + f"[{spec.version}]{uuid.uuid4().hex}"
        self.stream_made = False
        self.lines: list[tuple[int, str]] = []
        self.lines_lock = threading.Lock()
        self.log_path = log_dir() / f"{spec.name}.log"
        env = environment(spec, self.stream, task_root(spec, code), credentials(spec))
        self.sandbox = Sandbox(os.environ[BIN_ENV], env, env["LAMBDA_TASK_ROOT"], self.output)

    def output(self, line: bytes) -> None:
        text = line.decode("utf-8", "replace").rstrip("\n")
        with self.lines_lock:
            self.lines.append((int(time.time() * 1000), text))
            with self.log_path.open("a", encoding="utf-8") as f:
                f.write(text + "\n")

    def flush_logs(self) -> None:
        """What the process wrote so far, into moto's CloudWatch Logs (never fails the
        invocation)."""
        with self.lines_lock:
            lines, self.lines = self.lines, []
        if not lines or _closing.is_set():
            return
        try:
            from moto.logs.models import logs_backends

            with LOCK:
                logs = logs_backends[self.spec.account][self.spec.region]
                logs.ensure_log_group(self.spec.log_group)
                if not self.stream_made:
                    logs.create_log_stream(self.spec.log_group, self.stream)
                    self.stream_made = True
                logs.put_log_events(self.spec.log_group, self.stream,
                                    [{"timestamp": ms, "message": text} for ms, text in lines])
        except Exception:  # noqa: BLE001 - logs are a convenience, not the invocation
            pass


class Pool:
    """The live environments, the test facility's kill requests and the invocations so far."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.free: dict[str, list[_Instance]] = {}
        self.live: list[_Instance] = []
        self.kills: dict[str, float] = {}  # function name or ARN -> seconds after delivery
        self.records: list[dict[str, Any]] = []

    def acquire(self, spec: Spec, code: bytes) -> _Instance:
        """An idle environment of this function version as it is now, or a new one (call
        under `LOCK`: a new one assumes the execution role)."""
        stale: list[_Instance] = []
        with self.lock:
            free = self.free.setdefault(spec.arn, [])
            found = None
            while free:
                inst = free.pop()
                if inst.spec == spec and inst.sandbox.alive():
                    found = inst
                    break
                stale.append(inst)
        for inst in stale:
            self.drop(inst)
        if found is not None:
            return found
        inst = _Instance(spec, code)
        with self.lock:
            self.live.append(inst)
        return inst

    def release(self, inst: _Instance, outcome: Outcome) -> None:
        if inst.sandbox.reusable(outcome):
            with self.lock:
                self.free.setdefault(inst.spec.arn, []).append(inst)
        else:
            self.drop(inst)

    def drop(self, inst: _Instance) -> None:
        with self.lock:
            if inst in self.live:
                self.live.remove(inst)
            free = self.free.get(inst.spec.arn, [])
            if inst in free:
                free.remove(inst)
        inst.sandbox.stop()
        inst.flush_logs()

    def stop_all(self) -> int:
        with self.lock:
            live = list(self.live)
        for inst in live:
            self.drop(inst)
        return len(live)

    def take_kill(self, spec: Spec) -> float | None:
        with self.lock:
            for key in (spec.name, spec.arn, spec.arn.rsplit(":", 1)[0]):
                if key in self.kills:
                    return self.kills.pop(key)
        return None

    def record(self, row: dict[str, Any]) -> None:
        with self.lock:
            self.records.append(row)
            del self.records[:-_KEPT_RECORDS]

    def processes(self) -> list[dict[str, Any]]:
        with self.lock:
            live = list(self.live)
        return [{
            "function": i.spec.name, "functionArn": i.spec.arn, "pid": i.sandbox.pid,
            "state": i.sandbox.state, "runtimeApi": i.sandbox.address,
            "invocations": i.sandbox.invocations, "startedAt": i.sandbox.started,
        } for i in live]


POOL = Pool()
_closing = threading.Event()  # the emulator exits: no more waiting for the lock


def _scale() -> float:
    try:
        return max(0.001, float(os.environ.get(SCALE_ENV) or 1))
    except ValueError:
        return 1.0


def _service_error(message: str) -> Response:
    body = json.dumps({"Type": "Service", "message": message}).encode()
    return 500, {"Content-Type": "application/json", "x-amzn-ErrorType": "ServiceException"}, body


def invoke_function(fn: Any, payload: bytes, invocation_type: str = "RequestResponse") -> Response:
    """Invokes moto's function object `fn` (found by the caller) as Lambda does: (status,
    headers, body). Call with or without `LOCK` held, from any thread."""
    with LOCK:
        spec = Spec.of(fn)
        code = bytes(getattr(fn, "code_bytes", b"") or b"")
    if invocation_type == "DryRun":
        return 204, {"Content-Type": "application/json"}, b""
    binary = os.environ.get(BIN_ENV)
    if not binary or not os.path.isfile(binary):
        return _service_error(
            f"the emulator runs a {spec.runtime} function with the binary named by env {BIN_ENV} "
            f"of the emulator, which is {'unset' if not binary else 'not a file: ' + binary}"
        )
    if invocation_type == "Event":
        threading.Thread(target=_run, args=(spec, code, payload, "Event"), daemon=True,
                         name=f"lambda-event {spec.name}").start()
        return 202, {"Content-Type": "application/json"}, b""
    _, outcome = _run(spec, code, payload, "RequestResponse")
    # (moto sets the response's x-amzn-RequestId itself; the invocation's request id is in
    # the function's log and the test facility's list.)
    headers = {"Content-Type": "application/json", "X-Amz-Executed-Version": spec.version}
    if outcome.error_type is not None:
        headers["X-Amz-Function-Error"] = "Unhandled"
    return 200, headers, outcome.body


def _run(spec: Spec, code: bytes, payload: bytes, kind: str) -> tuple[str, Outcome]:
    """One invocation in an environment of the pool: (request id, outcome)."""
    request_id = str(uuid.uuid4())
    started, wall = time.monotonic(), time.time()
    inst: _Instance | None = None
    killed = False
    try:
        with LOCK:
            inst = POOL.acquire(spec, code)
    except OSError as e:  # the binary cannot be run
        outcome = error_outcome(
            "Runtime.InvalidEntrypoint",
            f"RequestId: {request_id} Error: fork/exec {os.environ.get(BIN_ENV)}: {e.strerror}",
        )
    ms = (time.monotonic() - started) * 1000
    if inst is not None:
        inst.output(f"START RequestId: {request_id} Version: {spec.version}".encode())
        inv = Invocation(request_id, payload or b"{}", spec.arn, spec.timeout,
                         started + spec.timeout * _scale(), POOL.take_kill(spec))
        with LOCK.released():
            outcome = inst.sandbox.run(inv)
            ms, killed = (time.monotonic() - started) * 1000, inv.killed
            POOL.release(inst, outcome)
        _report(inst, request_id, ms, outcome)
    POOL.record({
        "function": spec.name, "functionArn": spec.arn, "requestId": request_id, "invocationType": kind,
        "error": outcome.error_type, "durationMs": round(ms, 3), "startedAt": wall,
        "pid": inst.sandbox.pid if inst is not None else None, "killed": killed,
    })
    return request_id, outcome


def _report(inst: _Instance, request_id: str, ms: float, outcome: Outcome) -> None:
    """Lambda's END and REPORT lines (with the new-style Status of a failed invocation)."""
    status = ""
    if outcome.error_type == "Sandbox.Timedout":
        status = "\tStatus: timeout"
    elif outcome.error_type is not None:
        status = f"\tStatus: error\tError Type: {outcome.error_type}"
    inst.sandbox.settle()
    inst.output(f"END RequestId: {request_id}".encode())
    inst.output((f"REPORT RequestId: {request_id}\tDuration: {ms:.2f} ms\tBilled Duration: {int(ms) + 1} ms"
                 f"\tMemory Size: {inst.spec.memory} MB{status}").encode())
    inst.flush_logs()


def invoke(account: str, region: str, function: str, payload: bytes,
           invocation_type: str = "RequestResponse") -> Response:
    """Invokes a function by name or ARN (a qualifier is ignored: `$LATEST`) from any
    thread, e.g. for another extension's EventBridge target: (status, headers, body), as
    the Invoke API answers it (404 `ResourceNotFoundException` for an unknown function).
    A function of another runtime goes to moto's own Lambda (`LambdaFunction.invoke`)."""
    from moto.awslambda.exceptions import UnknownFunctionException
    from moto.awslambda.utils import get_backend

    parts = function.split(":")
    name = parts[6] if function.startswith("arn:") and len(parts) > 6 else parts[0]
    with LOCK:
        try:
            fn = get_backend(account, region).get_function(name, None)
        except UnknownFunctionException as e:
            headers = {"Content-Type": "application/json", "x-amzn-ErrorType": e.error_type}
            return e.code, headers, e.get_body().encode()
        if not custom_runtime(fn):
            out: dict[str, str] = {}
            body = fn.invoke(payload.decode("utf-8") if payload else "",
                             {"x-amz-invocation-type": invocation_type}, out)
            body = body if isinstance(body, bytes) else str(body).encode()
            return (202 if invocation_type == "Event" else 200), out, body
    return invoke_function(fn, payload, invocation_type)


def shutdown() -> None:
    """Stops every process (the emulator exits; their output stays in the log files)."""
    _closing.set()
    POOL.stop_all()


_installed = False


def install() -> None:
    """Routes moto's Lambda Invoke of a custom-runtime function here (lambda_invoke)."""
    global _installed
    if _installed:
        return
    _installed = True
    from . import lambda_invoke

    lambda_invoke.install()
    atexit.register(shutdown)
