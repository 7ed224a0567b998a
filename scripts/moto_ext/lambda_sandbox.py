"""One execution environment of a Lambda function: a process of the function's binary and
the Lambda Runtime API it talks to (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html),
served on 127.0.0.1 on a port of its own (`AWS_LAMBDA_RUNTIME_API`).

The Runtime API, version 2018-06-01, as AWS documents it:

- `GET /2018-06-01/runtime/invocation/next` blocks until there is an event, then answers
  it with `Lambda-Runtime-Aws-Request-Id`, `Lambda-Runtime-Deadline-Ms` (Unix ms),
  `Lambda-Runtime-Invoked-Function-Arn` and `Lambda-Runtime-Trace-Id`. The first call
  ends the init phase.
- `POST /2018-06-01/runtime/invocation/<id>/response` (202): the result. Over 6 MB
  (6,291,556 bytes) it is refused with 413 and the invocation fails with
  `Function.ResponseSizeTooLarge`.
- `POST /2018-06-01/runtime/invocation/<id>/error` (202): a function error, body
  `{"errorType", "errorMessage", "stackTrace"?}`, the type also in the header
  `Lambda-Runtime-Function-Error-Type`.
- `POST /2018-06-01/runtime/init/error` (202): the runtime could not initialise.
- An unknown request id is `400 {"errorType": "InvalidRequestID"}`.

An error body is answered to the caller as the runtime posted it when it is a JSON object
with `errorType`; otherwise the emulator builds `{"errorType", "errorMessage"}` from the
header (`Runtime.Unknown` without one) and the text, so that Step Functions always finds
an `errorType` to name the error by.

The process fails the invocation as Lambda reports it (lambda-runtime-environment.html,
"Failures during the invoke phase"): exiting or killed mid-invocation is
`Runtime.ExitError`, "RequestId: <id> Error: Runtime exited with error: exit status N"
(or "signal: killed"); over the function's timeout the process is killed and the
invocation is `Sandbox.Timedout`, "RequestId: <id> Error: Task timed out after N.NN
seconds". In both cases the environment is dropped, and the next invocation starts a new
one. The binary that cannot be started is `Runtime.InvalidEntrypoint`."""
import json
import os
import re
import select
import signal
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

PREFIX = "/2018-06-01/runtime"
MAX_RESPONSE = 6_291_556
_RESULT = re.compile(PREFIX + r"/invocation/([^/]+)/(response|error)")


@dataclass
class Outcome:
    """How an invocation ended: `error_type` None is a success; `body` is the payload."""

    error_type: str | None
    body: bytes


@dataclass
class Invocation:
    request_id: str
    payload: bytes
    function_arn: str
    timeout: float  # the configured timeout, seconds (what the error message names)
    deadline: float  # time.monotonic() when it times out
    kill_after: float | None = None  # the test facility: kill this long after delivery
    delivered: float | None = None
    killed: bool = False  # killed by the test facility
    outcome: Outcome | None = None
    trace_id: str = field(
        default_factory=lambda: "Root=1-%08x-%s;Parent=%s;Sampled=0"
        % (int(time.time()), uuid.uuid4().hex[:24], uuid.uuid4().hex[:16])
    )


def error_outcome(error_type: str, message: str) -> Outcome:
    return Outcome(error_type, json.dumps({"errorType": error_type, "errorMessage": message}).encode())


def posted_error(body: bytes, header: str | None) -> Outcome:
    """A function or init error as the runtime posted it (see the module docstring)."""
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("errorType"), str) and doc["errorType"]:
        return Outcome(doc["errorType"], body)
    message = doc.get("errorMessage") if isinstance(doc, dict) else body.decode("utf-8", "replace")
    return error_outcome(header or "Runtime.Unknown", str(message or ""))


def exit_status(returncode: int) -> str:
    """The process's end as Go's os/exec (Lambda's runtime manager) words it."""
    if returncode < 0:
        try:
            name = signal.strsignal(-returncode) or str(-returncode)
        except ValueError:
            name = str(-returncode)
        return f"signal: {name.lower()}"
    return f"exit status {returncode}"


class Sandbox:
    """A running process of the function's binary and its Runtime API server. One
    invocation at a time (`run`); `stop` kills the process and closes the server."""

    def __init__(self, binary: str, env: dict[str, str], cwd: str, log: Callable[[bytes], None]) -> None:
        self.cond = threading.Condition()
        self.out_lock = threading.Lock()
        self.pending: Invocation | None = None  # handed out by the next /next
        self.current: Invocation | None = None  # handed out, no result yet
        self.init_error: Outcome | None = None
        self.returncode: int | None = None
        self.ready = False  # the runtime asked for its first event
        self.stopping = False
        self.invocations = 0
        self.started = time.time()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _RuntimeApi)
        self.server.daemon_threads = True
        self.server.sandbox = self  # type: ignore[attr-defined]
        self.address = "127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, name=f"runtime-api {self.address}",
                         daemon=True).start()
        env = dict(env, AWS_LAMBDA_RUNTIME_API=self.address)
        try:
            self.proc = subprocess.Popen(
                [binary], env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, bufsize=0,
                stderr=subprocess.STDOUT, start_new_session=True,
            )
        except OSError:
            self.server.shutdown()
            self.server.server_close()
            raise
        self.pid = self.proc.pid
        self.drain = threading.Thread(target=self._drain, args=(log,), name=f"lambda-output {self.pid}",
                                      daemon=True)
        self.drain.start()
        threading.Thread(target=self._watch, name=f"lambda-process {self.pid}", daemon=True).start()

    @property
    def state(self) -> str:
        with self.cond:
            if self.returncode is not None or self.stopping:
                return "stopped"
            if self.pending is not None or self.current is not None:
                return "busy"
            return "idle" if self.ready else "init"

    def alive(self) -> bool:
        return self.state != "stopped"

    def _drain(self, log: Callable[[bytes], None]) -> None:
        """The process's output, line by line, into `log`. Read in raw chunks (not through
        a buffered reader) so that `settle` can tell from the pipe alone whether all that
        was written has been logged: the drain waits for the pipe to be readable without
        the lock, then reads and logs under it, so no chunk is ever out of the pipe and not
        yet logged while `settle` looks (a read outside the lock let `END` pass a line the
        handler wrote before its result, on a loaded machine)."""
        assert self.proc.stdout is not None
        fd, rest = self.proc.stdout.fileno(), b""
        while True:
            try:
                select.select([fd], [], [])
            except (OSError, ValueError):
                pass  # closed: the read below ends the drain
            with self.out_lock:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                *lines, rest = (rest + chunk).split(b"\n")
                for line in lines:
                    log(line + b"\n")
        if rest:
            log(rest)
        self.proc.stdout.close()

    def settle(self, timeout: float = 0.5) -> None:
        """Waits (a little) until what the process wrote so far has been logged: as in
        Lambda, the output a handler writes before its result comes before `END`."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.out_lock:  # held by the drain while it logs a chunk
                try:
                    readable, _, _ = select.select([self.proc.stdout.fileno()], [], [], 0)
                except (OSError, ValueError):
                    return  # closed: the drain has finished
                if not readable:
                    return
            time.sleep(0.005)

    def _watch(self) -> None:
        code = self.proc.wait()
        with self.cond:
            self.returncode = code
            self.cond.notify_all()

    def kill(self) -> None:
        """SIGKILL to the process and whatever it started (its own process group)."""
        if self.proc.returncode is not None:
            return  # reaped: its pid may be another process's by now
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
        self.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.drain.join(timeout=2)  # its last words reach the log
        threading.Thread(target=self._close_server, daemon=True).start()  # takes up to 0.5 s

    def _close_server(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def run(self, inv: Invocation) -> Outcome:
        """Hands the event to the runtime and waits for its end (see the module docstring).
        The caller stops the sandbox unless the outcome left it usable (`reusable`)."""
        with self.cond:
            self.invocations += 1
            self.pending = inv
            self.cond.notify_all()
            while inv.outcome is None:
                now = time.monotonic()
                kill_at = None
                if inv.kill_after and inv.delivered is not None:  # 0: killed on delivery (_RuntimeApi)
                    kill_at = inv.delivered + inv.kill_after
                    if now >= kill_at and not inv.killed:
                        inv.killed = True
                        self.kill()
                if self.init_error is not None:
                    inv.outcome = self.init_error
                elif self.returncode is not None:
                    inv.outcome = error_outcome(
                        "Runtime.ExitError",
                        f"RequestId: {inv.request_id} Error: Runtime exited with error: "
                        + exit_status(self.returncode),
                    )
                elif now >= inv.deadline:
                    inv.outcome = error_outcome(
                        "Sandbox.Timedout",
                        f"RequestId: {inv.request_id} Error: Task timed out after "
                        f"{inv.timeout:.2f} seconds",
                    )
                else:
                    waits = [inv.deadline - now, 1.0]
                    if kill_at is not None and not inv.killed:
                        waits.append(kill_at - now)
                    self.cond.wait(max(0.0, min(waits)))
            if self.pending is inv:
                self.pending = None
            if self.current is inv:
                self.current = None
            return inv.outcome

    def reusable(self, outcome: Outcome) -> bool:
        """A success or a function error keeps the environment (the runtime asks for the
        next event); an init error, an exit or a timeout does not."""
        with self.cond:
            return self.returncode is None and self.init_error is None and outcome.error_type not in (
                "Sandbox.Timedout", "Runtime.ExitError",
            ) and not self.stopping

    # The Runtime API's side, on its handler threads.

    def next_event(self) -> Invocation | None:
        with self.cond:
            self.ready = True
            while self.pending is None and not self.stopping:
                self.cond.wait()
            if self.stopping:
                return None
            inv, self.pending = self.pending, None
            self.current = inv
            inv.delivered = time.monotonic()
            self.cond.notify_all()
            return inv

    def result(self, request_id: str, kind: str, body: bytes,
               error_header: str | None) -> tuple[int, dict[str, str]]:
        with self.cond:
            inv = self.current
            if inv is None or inv.request_id != request_id:
                return 400, {"errorType": "InvalidRequestID", "errorMessage": "Invalid request ID"}
            if inv.kill_after == 0:
                return 202, {"status": "OK"}  # being killed by the test facility: never counted
            if kind == "response" and len(body) > MAX_RESPONSE:
                inv.outcome = error_outcome(
                    "Function.ResponseSizeTooLarge",
                    f"Response payload size exceeded maximum allowed payload size ({MAX_RESPONSE} bytes).",
                )
                answer = (413, {"errorType": "RequestEntityTooLarge", "errorMessage": "Payload too large"})
            else:
                ok = kind == "response"
                inv.outcome = Outcome(None, body) if ok else posted_error(body, error_header)
                answer = (202, {"status": "OK"})
            self.current = None
            self.cond.notify_all()
            return answer

    def init_failed(self, body: bytes, error_header: str | None) -> None:
        with self.cond:
            if self.init_error is None:
                self.init_error = posted_error(body, error_header)
            self.cond.notify_all()


class _RuntimeApi(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Any

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass

    def _reply(self, code: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(code)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
        except OSError:
            pass  # the process is gone

    def _json(self, code: int, doc: dict[str, str]) -> None:
        self._reply(code, json.dumps(doc).encode())

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        sandbox: Sandbox = self.server.sandbox
        if self.path.split("?")[0] != PREFIX + "/invocation/next":
            return self._json(404, {"errorType": "NotFound", "errorMessage": self.path})
        inv = sandbox.next_event()
        if inv is None:
            return self._json(500, {"errorType": "Runtime.Stopping",
                                    "errorMessage": "the environment is stopping"})
        self._reply(200, inv.payload, {
            "Lambda-Runtime-Aws-Request-Id": inv.request_id,
            "Lambda-Runtime-Deadline-Ms": str(int((time.time() + inv.deadline - time.monotonic()) * 1000)),
            "Lambda-Runtime-Invoked-Function-Arn": inv.function_arn,
            "Lambda-Runtime-Trace-Id": inv.trace_id,
        })
        if inv.kill_after == 0:
            # The test facility: the process dies once it has the event, before it can answer.
            with sandbox.cond:
                inv.killed = True
            sandbox.kill()

    def do_POST(self) -> None:  # noqa: N802
        sandbox: Sandbox = self.server.sandbox
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        error_type = self.headers.get("Lambda-Runtime-Function-Error-Type")
        path = self.path.split("?")[0]
        if path == PREFIX + "/init/error":
            sandbox.init_failed(body, error_type)
            return self._json(202, {"status": "OK"})
        match = _RESULT.fullmatch(path)
        if match is None:
            return self._json(404, {"errorType": "NotFound", "errorMessage": self.path})
        status, doc = sandbox.result(match.group(1), match.group(2), body, error_type)
        self._json(status, doc)
