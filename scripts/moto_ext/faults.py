"""Fault injection: a test facility of the project's emulator, not AWS behaviour.

A test makes the emulator refuse chosen requests, to exercise the product's handling of
a failure the emulator would otherwise never produce (S3 refusing one DeleteObject, say,
or CloudFormation refusing one CreateChangeSet). Faults are registered, listed and
cleared with unsigned HTTP requests to a reserved path, `/_cdkd_emulator/faults`, which
no AWS API uses (a path-style S3 request starts with a bucket name, and a bucket name
cannot start with `_`):

- `POST /_cdkd_emulator/faults` with a JSON object registers a fault and answers 201
  with it (its `id` included); a malformed one answers 400 `{"error": ...}` and nothing
  is registered. Fields: `path` (a Python regular expression searched for in the
  request's decoded path, `/<bucket>/<key>` for a path-style S3 request: anchor it with
  `^...$` to match one object exactly; required unless `action` or `params` is given,
  any path when absent); `method` (an HTTP method, any when absent); `query` (a regular
  expression searched for in the raw query string, any when absent); `action` (the
  `Action` parameter of a query-protocol request, CloudFormation's `CreateChangeSet`
  say, matched exactly); `params` (an object of query-protocol parameter names, as the
  form spells them, `ChangeSetType` or `Tags.member.1.Key`, to regular expressions
  searched for in their values: every one must be present and match); `status`
  (400-599, default 500); `code` and `message` (the error's, default `InternalError`
  and a sentence saying the emulator injected it); `times` (how many requests it
  refuses before it is gone; until cleared when absent).
- `GET /_cdkd_emulator/faults` answers 200 `{"faults": [...]}`: every fault still
  registered, with `remaining` (null: until cleared) and `hits` (requests refused so far).
- `DELETE /_cdkd_emulator/faults` clears every fault (200 `{"cleared": n}`);
  `DELETE /_cdkd_emulator/faults/<id>` removes one (200, or 404 when there is none).

A request matching a fault (the first registered that matches) is answered with the
fault's status and never reaches moto, so nothing changes. Other requests go on to the
other extensions and moto untouched: the form body read to match `action` or `params`
is put back (`wsgi.read_form`), and a form is read only while a fault needs one.

- A fault without `action` and `params` (an S3 fault) answers S3's XML error body
  (`<Error><Code/><Message/><Resource/><RequestId/></Error>`, `Resource` being the
  request's path), the request's body read and discarded.
- A fault with `action` or `params` matches only a query-protocol request (a form with
  an `Action`: the query string of a GET, or an `application/x-www-form-urlencoded`
  body of known length) and answers the query protocol's XML error, which the SDKs
  parse for its code and message:
  `<ErrorResponse xmlns="http://<service>.amazonaws.com/doc/<Version>/"><Error>
  <Type>Sender</Type><Code/><Message/></Error><RequestId/></ErrorResponse>` (`Receiver`
  for a 5xx status; the service from the request's SigV4 credential scope,
  CloudFormation's namespace when it has none), or EC2's own shape for EC2
  (`<Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/></Response>`)."""
import json
import re
import threading
import uuid
from http import HTTPStatus
from typing import Any, Callable, Iterable
from xml.sax.saxutils import escape

from . import wsgi

CONTROL = "/_cdkd_emulator/faults"

_FIELDS = {"method", "path", "query", "action", "params", "status", "code", "message", "times"}
_METHOD = re.compile(r"^[A-Za-z]+$")
_CODE = re.compile(r"^[A-Za-z0-9.]+$")
_ACTION = re.compile(r"^[A-Za-z0-9]+$")
_PARAM = re.compile(r"^[A-Za-z0-9._-]+$")
# The query protocol's error namespace when the request names no service or version.
_DEFAULT_NAMESPACE = "http://cloudformation.amazonaws.com/doc/2010-05-15/"
_VERSION = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SERVICE = re.compile(r"^[a-z0-9-]+$")

StartResponse = Callable[..., Any]
# The request's query-protocol parameters, read on first use (None: not a form).
FormReader = Callable[[], "dict[str, str] | None"]


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
        action = spec.get("action")
        if action is not None and not (isinstance(action, str) and _ACTION.match(action)):
            raise ValueError("action must be a query-protocol action such as CreateChangeSet")
        self.action: str | None = action
        self.path_source = spec.get("path")
        if self.path_source is None and action is None and spec.get("params") is None:
            raise ValueError(
                "path (a regular expression matched against the request path) is required "
                "unless action or params is given"
            )
        if self.path_source is not None and (not isinstance(self.path_source, str) or not self.path_source):
            raise ValueError("path must be a non-empty regular expression")
        self.path = _compile("path", self.path_source) if self.path_source is not None else None
        self.query_source = spec.get("query")
        if self.query_source is not None and not isinstance(self.query_source, str):
            raise ValueError("query must be a regular expression")
        self.query = _compile("query", self.query_source) if self.query_source is not None else None
        params = spec.get("params")
        if params is not None and not isinstance(params, dict):
            raise ValueError("params must be an object of parameter names to regular expressions")
        self.params_source: dict[str, str] | None = params
        self.params: list[tuple[str, re.Pattern[str]]] = []
        for name, source in (params or {}).items():
            if not _PARAM.match(name):
                raise ValueError(f"params: {name!r} is not a query-protocol parameter name")
            if not isinstance(source, str):
                raise ValueError(f"params.{name} must be a regular expression")
            self.params.append((name, _compile(f"params.{name}", source)))
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

    @property
    def query_protocol(self) -> bool:
        """Whether the fault matches query-protocol requests (and answers their error)."""
        return self.action is not None or self.params_source is not None

    def matches(self, method: str, path: str, query: str, form: FormReader) -> bool:
        if self.method is not None and self.method != method.upper():
            return False
        if self.path is not None and not self.path.search(path):
            return False
        if self.query is not None and not self.query.search(query):
            return False
        if not self.query_protocol:
            return True
        params = form()
        if params is None or "Action" not in params:
            return False  # not a query-protocol request (an S3 query string, a JSON body)
        if self.action is not None and params.get("Action") != self.action:
            return False
        return all(name in params and pattern.search(params[name]) for name, pattern in self.params)

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "method": self.method,
            "path": self.path_source,
            "query": self.query_source,
            "action": self.action,
            "params": self.params_source,
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

    def empty(self) -> bool:
        with self._lock:
            return not self._faults

    def take(self, method: str, path: str, query: str, form: FormReader | None = None) -> Fault | None:
        """The first fault matching the request, counted down (and dropped when spent).
        `form` gives the request's query-protocol parameters; it is called only when a
        fault needs them (a request without it is no form)."""
        with self._lock:
            for fault in self._faults:
                if fault.matches(method, path, query, form or (lambda: None)):
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


def _form_reader(environ: dict[str, Any]) -> FormReader:
    """Reads the request's form once, on first use; `wsgi.read_form` puts the body back
    so the request still reaches moto unchanged."""
    read: dict[str, dict[str, str] | None] = {}

    def form() -> dict[str, str] | None:
        if "params" not in read:
            read["params"] = wsgi.read_form(environ)
        return read["params"]

    return form


def intercept(
    faults: Faults, environ: dict[str, Any], start_response: StartResponse
) -> Iterable[bytes] | None:
    """The answer to a control request or to a request a fault refuses; None for every
    other request (which must go on unchanged)."""
    path = request_path(environ)
    method = (environ.get("REQUEST_METHOD") or "GET").upper()
    if path == CONTROL or path.startswith(CONTROL + "/"):
        return _control(faults, environ, start_response, method, path[len(CONTROL):])
    if faults.empty():
        return None
    form = _form_reader(environ)
    fault = faults.take(method, path, environ.get("QUERY_STRING") or "", form)
    if fault is None:
        return None
    request_id = uuid.uuid4().hex[:16].upper()
    if fault.query_protocol:
        return _query_error(fault, environ, start_response, form() or {}, request_id)
    _drain(environ)
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


def _query_error(
    fault: Fault,
    environ: dict[str, Any],
    start_response: StartResponse,
    params: dict[str, str],
    request_id: str,
) -> Iterable[bytes]:
    """The query protocol's error answer (EC2's own shape for EC2)."""
    _drain(environ)
    service, _ = wsgi.credential_scope(environ)
    code, message = escape(fault.code), escape(fault.message)
    if service == "ec2":
        text = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f"<Response><Errors><Error><Code>{code}</Code><Message>{message}</Message></Error>"
            f"</Errors><RequestID>{request_id}</RequestID></Response>"
        )
    else:
        version = params.get("Version") or ""
        if service and _SERVICE.match(service) and _VERSION.match(version):
            namespace = f"http://{service}.amazonaws.com/doc/{version}/"
        else:
            namespace = _DEFAULT_NAMESPACE
        kind = "Receiver" if fault.status >= 500 else "Sender"
        text = (
            f'<ErrorResponse xmlns="{namespace}"><Error><Type>{kind}</Type>'
            f"<Code>{code}</Code><Message>{message}</Message></Error>"
            f"<RequestId>{request_id}</RequestId></ErrorResponse>"
        )
    body = text.encode("utf-8")
    start_response(
        _status_line(fault.status),
        [
            ("Content-Type", "text/xml"),
            ("Content-Length", str(len(body))),
            ("x-amzn-RequestId", request_id),
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
