"""The Lambda Invoke API for custom-runtime functions (`lambda_runtime`), patched into
moto's Lambda responses, and the emulator's Lambda test facility.

Invoke (`POST /2015-03-31/functions/<name-or-arn>/invocations`,
https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html) goes through moto's own
request handling (`BaseResponse.call_action`), under the emulator's lock: signature,
account, region and IAM are checked as for every request before the function is looked
up; with IAM enforcement on, `iam_enforce` asks for `lambda:InvokeFunction` on the
function's ARN (qualified when the request names a qualifier). Then the function is
found (404 `ResourceNotFoundException`), and a `provided*` function runs in
`lambda_runtime` (200 with `X-Amz-Executed-Version`, and `X-Amz-Function-Error:
Unhandled` for a function error; 202 for `Event`; 204 for `DryRun`; an unknown
`X-Amz-Invocation-Type` is `InvalidParameterValueException`), which gives the lock up
while the process runs. The deprecated InvokeAsync runs it as an `Event` (202
`{"Status": 202}`). Functions of other runtimes keep moto's Invoke.

The test facility (not AWS behaviour), unsigned requests under `/_cdkd_emulator/lambda`,
served without taking the emulator's lock:

- `GET .../invocations` (`?function=<name>` to filter): 200 `{"invocations": [{"function",
  "functionArn", "requestId", "invocationType", "error" (null, or the errorType),
  "durationMs", "startedAt" (Unix s), "pid", "killed"}]}`, oldest first;
  `DELETE .../invocations` forgets them (`{"cleared": n}`).
- `GET .../processes`: `{"processes": [{"function", "functionArn", "pid", "state" (init,
  idle, busy), "runtimeApi", "invocations", "startedAt"}]}`; `DELETE .../processes`
  stops them all (`{"stopped": n}`).
- `POST .../kill` `{"function": "<name or ARN>", "afterMs": 0}`: the process of the
  function's next invocation is killed (SIGKILL) once it has received the event (after
  `afterMs` more, when given; if it answers first, it is not killed), so the invocation
  fails as Lambda reports a killed runtime (`Runtime.ExitError`, "signal: killed").
  201 `{"function", "afterMs"}`; `GET .../kill` lists `{"kills": [...]}`, `DELETE
  .../kill` clears them (`{"cleared": n}`)."""
import json
from typing import Any, Callable, Iterable
from urllib.parse import parse_qs, unquote

from . import lambda_runtime

CONTROL = "/_cdkd_emulator/lambda"
StartResponse = Callable[..., Any]


def install() -> None:
    from moto.awslambda.exceptions import InvalidParameterValueException
    from moto.awslambda.responses import LambdaResponse

    moto_invoke = LambdaResponse.invoke
    moto_invoke_async = LambdaResponse.invoke_async

    def invoke(self: Any) -> Any:
        name = unquote(self.path.rstrip("/").rsplit("/", 2)[-2])
        qualifier = self.querystring.get("Qualifier", [None])[0]
        fn = self.backend.get_function(name, qualifier)
        if not lambda_runtime.custom_runtime(fn):
            return moto_invoke(self)
        kind = self.headers.get("X-Amz-Invocation-Type") or "RequestResponse"
        if kind not in lambda_runtime.INVOCATION_TYPES:
            raise InvalidParameterValueException(
                f"1 validation error detected: Value '{kind}' at 'invocationType' failed to satisfy "
                "constraint: Member must satisfy enum value set: [Event, RequestResponse, DryRun]"
            )
        status, headers, body = lambda_runtime.invoke_function(fn, self.raw_body or b"", kind)
        headers = dict(headers, status=str(status))
        return status, headers, body

    def invoke_async(self: Any) -> Any:
        name = unquote(self.path.rstrip("/").rsplit("/", 2)[-2])
        fn = self.backend.get_function(name, None)
        if not lambda_runtime.custom_runtime(fn):
            return moto_invoke_async(self)
        status, headers, body = lambda_runtime.invoke_function(fn, self.raw_body or b"", "Event")
        if status != 202:
            return status, dict(headers, status=str(status)), body
        return 202, {"status": "202", "Content-Type": "application/json"}, b'{"Status": 202}'

    LambdaResponse.invoke = invoke
    LambdaResponse.invoke_async = invoke_async


def control(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes] | None:
    """The answer to a test-facility request; None for every other request."""
    path = environ.get("PATH_INFO") or "/"
    if not (path == CONTROL or path.startswith(CONTROL + "/")):
        return None
    method = (environ.get("REQUEST_METHOD") or "GET").upper()
    what = path[len(CONTROL):].strip("/")
    pool = lambda_runtime.POOL
    query = parse_qs(environ.get("QUERY_STRING") or "")
    if what == "invocations" and method == "GET":
        wanted = query.get("function", [None])[0]
        with pool.lock:
            rows = [r for r in pool.records if wanted in (None, r["function"], r["functionArn"])]
        return _answer(start_response, 200, {"invocations": rows})
    if what == "invocations" and method == "DELETE":
        with pool.lock:
            n = len(pool.records)
            pool.records.clear()
        return _answer(start_response, 200, {"cleared": n})
    if what == "processes" and method == "GET":
        return _answer(start_response, 200, {"processes": pool.processes()})
    if what == "processes" and method == "DELETE":
        return _answer(start_response, 200, {"stopped": pool.stop_all()})
    if what == "kill" and method == "POST":
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
            spec = json.loads(environ["wsgi.input"].read(length) if length > 0 else b"null")
            function = spec["function"]
            after = spec.get("afterMs", 0)
            if not isinstance(function, str) or not function:
                raise ValueError("function must name a function (name or ARN)")
            if isinstance(after, bool) or not isinstance(after, (int, float)) or after < 0:
                raise ValueError("afterMs must be a number of milliseconds, 0 or more")
        except (ValueError, TypeError, KeyError) as e:
            usage = 'a kill is {"function": "<name or ARN>", "afterMs": 0}'
            return _answer(start_response, 400, {"error": f"{usage}: {e}"})
        with pool.lock:
            pool.kills[function] = after / 1000.0
        return _answer(start_response, 201, {"function": function, "afterMs": after})
    if what == "kill" and method == "GET":
        with pool.lock:
            kills = [{"function": f, "afterMs": s * 1000} for f, s in pool.kills.items()]
        return _answer(start_response, 200, {"kills": kills})
    if what == "kill" and method == "DELETE":
        with pool.lock:
            n = len(pool.kills)
            pool.kills.clear()
        return _answer(start_response, 200, {"cleared": n})
    return _answer(start_response, 404, {"error": f"no {method} {path} (scripts/moto_ext/lambda_invoke.py)"})


def _answer(start_response: StartResponse, status: int, doc: Any) -> Iterable[bytes]:
    body = json.dumps(doc).encode()
    reasons = {200: "OK", 201: "Created", 400: "Bad Request", 404: "Not Found"}
    start_response(f"{status} {reasons.get(status, 'Status')}",
                   [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]
