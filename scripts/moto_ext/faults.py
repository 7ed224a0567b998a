"""Fault injection: a test facility of the project's emulator, not AWS behaviour.

A test makes the emulator refuse chosen requests, to exercise the product's handling of
a failure the emulator would otherwise never produce (S3 refusing one DeleteObject, say).
Faults are registered, listed and cleared with unsigned HTTP requests to a reserved
path, `/_cdkd_emulator/faults`, which no AWS API uses (a path-style S3 request starts
with a bucket name, and a bucket name cannot start with `_`):

- `POST /_cdkd_emulator/faults` with a JSON object registers a fault and answers 201
  with it (its `id` included); a malformed one answers 400 `{"error": ...}` and nothing
  is registered. Fields: `path` (required, a Python regular expression searched for in
  the request's decoded path, `/<bucket>/<key>` for a path-style S3 request: anchor it
  with `^...$` to match one object exactly); `method` (an HTTP method, any when absent);
  `query` (a regular expression searched for in the raw query string, any when absent);
  `status` (400-599, default 500); `code` and `message` (the error's, default
  `InternalError` and a sentence saying the emulator injected it); `times` (how many
  requests it refuses before it is gone; until cleared when absent).
- `GET /_cdkd_emulator/faults` answers 200 `{"faults": [...]}`: every fault still
  registered, with `remaining` (null: until cleared) and `hits` (requests refused so far).
- `DELETE /_cdkd_emulator/faults` clears every fault (200 `{"cleared": n}`);
  `DELETE /_cdkd_emulator/faults/<id>` removes one (200, or 404 when there is none).

A request matching a fault (the first registered that matches) is answered with the
fault's status and S3's XML error body (`<Error><Code/><Message/><Resource/><RequestId/>
</Error>`, `Resource` being the request's path), its body read and discarded; it never
reaches moto, so nothing changes. Other requests go on to the other extensions and moto
untouched. The error body is S3's shape: faults are meant for S3 requests (an SDK of a
JSON or query-protocol service may not parse it, but still sees the status)."""
import json
import re
import threading
import uuid
from http import HTTPStatus
from typing import Any, Callable, Iterable
from xml.sax.saxutils import escape

CONTROL = "/_cdkd_emulator/faults"

_FIELDS = {"method", "path", "query", "status", "code", "message", "times"}
_METHOD = re.compile(r"^[A-Za-z]+$")
_CODE = re.compile(r"^[A-Za-z0-9.]+$")

StartResponse = Callable[..., Any]


class Fault:
    """One registered fault."""

    def __init__(self, spec: Any) -> None:
        """Validates a registration's JSON object; ValueError says what is wrong."""
        if not isinstance(spec, dict):
            raise ValueError("a fault is a JSON object")
        unknown = sorted(set(spec) - _FIELDS)
        if unknown:
            raise ValueError(f"unknown field(s) {unknown}; a fault has {sorted(_FIELDS)}")
        method = spec.get("method")
        if method is not None and not (isinstance(method, str) and _METHOD.match(method)):
            raise ValueError("method must be an HTTP method such as DELETE")
        self.method: str | None = method.upper() if method is not None else None
        self.path_source = spec.get("path")
        if not isinstance(self.path_source, str) or not self.path_source:
            raise ValueError("path (a regular expression matched against the request path) is required")
        self.path = _compile("path", self.path_source)
        self.query_source = spec.get("query")
        if self.query_source is not None and not isinstance(self.query_source, str):
            raise ValueError("query must be a regular expression")
        self.query = _compile("query", self.query_source) if self.query_source is not None else None
        status = spec.get("status", 500)
        if isinstance(status, bool) or not isinstance(status, int) or not 400 <= status <= 599:
            raise ValueError("status must be an integer from 400 to 599")
        self.status: int = status
        code = spec.get("code", "InternalError")
        if not isinstance(code, str) or not _CODE.match(code):
            raise ValueError("code must be an error code such as AccessDenied")
        self.code: str = code
        message = spec.get("message", f"{code}: a fault injected by the emulator")
        if not isinstance(message, str):
            raise ValueError("message must be a string")
        self.message: str = message
        times = spec.get("times")
        if times is not None and (isinstance(times, bool) or not isinstance(times, int) or times < 1):
            raise ValueError("times must be a positive integer (absent: until cleared)")
        self.remaining: int | None = times
        self.hits = 0
        self.id = uuid.uuid4().hex

    def matches(self, method: str, path: str, query: str) -> bool:
        if self.method is not None and self.method != method.upper():
            return False
        if not self.path.search(path):
            return False
        return self.query is None or bool(self.query.search(query))

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "method": self.method,
            "path": self.path_source,
            "query": self.query_source,
            "status": self.status,
            "code": self.code,
            "message": self.message,
            "remaining": self.remaining,
            "hits": self.hits,
        }


def _compile(field: str, source: str) -> re.Pattern[str]:
    try:
        return re.compile(source)
    except re.error as e:
        raise ValueError(f"{field} is not a regular expression: {e}") from e


class Faults:
    """The registered faults, in registration order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []

    def add(self, spec: Any) -> Fault:
        fault = Fault(spec)
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear(self) -> int:
        with self._lock:
            n = len(self._faults)
            self._faults.clear()
        return n

    def remove(self, fault_id: str) -> bool:
        with self._lock:
            before = len(self._faults)
            self._faults = [f for f in self._faults if f.id != fault_id]
            return len(self._faults) != before

    def listing(self) -> list[dict[str, Any]]:
        with self._lock:
            return [f.describe() for f in self._faults]

    def take(self, method: str, path: str, query: str) -> Fault | None:
        """The first fault matching the request, counted down (and dropped when spent)."""
        with self._lock:
            for fault in self._faults:
                if fault.matches(method, path, query):
                    fault.hits += 1
                    if fault.remaining is not None:
                        fault.remaining -= 1
                        if fault.remaining == 0:
                            self._faults.remove(fault)
                    return fault
        return None


def request_path(environ: dict[str, Any]) -> str:
    """The request's decoded path (WSGI carries it as latin-1 of the raw bytes)."""
    raw = environ.get("PATH_INFO") or "/"
    try:
        return raw.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return raw


def intercept(
    faults: Faults, environ: dict[str, Any], start_response: StartResponse
) -> Iterable[bytes] | None:
    """The answer to a control request or to a request a fault refuses; None for every
    other request (which must go on unchanged)."""
    path = request_path(environ)
    method = (environ.get("REQUEST_METHOD") or "GET").upper()
    if path == CONTROL or path.startswith(CONTROL + "/"):
        return _control(faults, environ, start_response, method, path[len(CONTROL):])
    fault = faults.take(method, path, environ.get("QUERY_STRING") or "")
    if fault is None:
        return None
    _drain(environ)
    request_id = uuid.uuid4().hex[:16].upper()
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{escape(fault.code)}</Code><Message>{escape(fault.message)}</Message>"
        f"<Resource>{escape(path)}</Resource><RequestId>{request_id}</RequestId></Error>"
    ).encode("utf-8")
    if method == "HEAD":
        body = b""
    start_response(
        _status_line(fault.status),
        [
            ("Content-Type", "application/xml"),
            ("Content-Length", str(len(body))),
            ("x-amz-request-id", request_id),
        ],
    )
    return [body]


def _control(
    faults: Faults, environ: dict[str, Any], start_response: StartResponse, method: str, rest: str
) -> Iterable[bytes]:
    rest = rest.strip("/")
    if rest:
        if method != "DELETE":
            return _json(start_response, 405, {"error": f"{method} {CONTROL}/<id>: only DELETE"})
        if faults.remove(rest):
            return _json(start_response, 200, {"removed": rest})
        return _json(start_response, 404, {"error": f"no fault {rest}"})
    if method == "GET":
        return _json(start_response, 200, {"faults": faults.listing()})
    if method == "DELETE":
        return _json(start_response, 200, {"cleared": faults.clear()})
    if method == "POST":
        try:
            spec = json.loads(_drain(environ).decode("utf-8") or "null")
            fault = faults.add(spec)
        except (ValueError, UnicodeDecodeError) as e:
            return _json(start_response, 400, {"error": str(e)})
        return _json(start_response, 201, fault.describe())
    return _json(start_response, 405, {"error": f"{method} {CONTROL}: use GET, POST or DELETE"})


def _drain(environ: dict[str, Any]) -> bytes:
    """Reads the request's body (so the client can finish sending it)."""
    stream = environ.get("wsgi.input")
    if stream is None:
        return b""
    if environ.get("wsgi.input_terminated"):
        return stream.read()
    try:
        length = int(environ.get("CONTENT_LENGTH") or "0")
    except ValueError:
        return b""
    return stream.read(length) if length > 0 else b""


def _status_line(status: int) -> str:
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"{status} Error"


def _json(start_response: StartResponse, status: int, value: Any) -> Iterable[bytes]:
    data = json.dumps(value).encode("utf-8")
    start_response(
        _status_line(status),
        [("Content-Type", "application/json"), ("Content-Length", str(len(data)))],
    )
    return [data]
