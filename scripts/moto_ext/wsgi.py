"""Request plumbing shared by the emulator's extensions: which service and region a
request is signed for, its query parameters, and re-supplying a body that was read."""
import io
import re
from typing import Any, Callable, Iterable
from urllib.parse import parse_qsl

# A region name as the providers' files are named (`us-east-1`, `eusc-de-east-1`):
# anything else, such as a path, is never used to open a file.
_REGION = re.compile(r"^[a-z]{2,5}(-[a-z]+)+-\d+$")
DEFAULT_REGION = "us-east-1"

StartResponse = Callable[..., Any]


def credential_scope(environ: dict[str, Any]) -> tuple[str | None, str | None]:
    """(service, region) of a SigV4 request, from the Authorization header's credential
    scope (`Credential=KEY/DATE/REGION/SERVICE/aws4_request`), or from a presigned
    request's `X-Amz-Credential`; (None, None) when the request carries neither."""
    auth = environ.get("HTTP_AUTHORIZATION") or ""
    scope = None
    m = re.search(r"Credential=([^,\s]+)", auth)
    if m:
        scope = m.group(1)
    else:
        for key, value in parse_qsl(environ.get("QUERY_STRING") or ""):
            if key == "X-Amz-Credential":
                scope = value
    if not scope:
        return None, None
    parts = scope.split("/")
    if len(parts) != 5:
        return None, None
    return parts[3].lower(), parts[2]


def region_or_default(region: str | None) -> str:
    """The request's region when it is a region name, else the default region."""
    return region if region and _REGION.match(region) else DEFAULT_REGION


def read_form(environ: dict[str, Any]) -> dict[str, str] | None:
    """The parameters of a query-protocol request (query string and form body), or None
    when the body is not a form with a known length. The body read is put back as
    `wsgi.input`, so the request can still go to moto unchanged."""
    params = dict(parse_qsl(environ.get("QUERY_STRING") or "", keep_blank_values=True))
    if environ.get("REQUEST_METHOD") != "POST":
        return params
    if not (environ.get("CONTENT_TYPE") or "").startswith("application/x-www-form-urlencoded"):
        return None
    try:
        length = int(environ.get("CONTENT_LENGTH") or "")
    except ValueError:
        return None
    body = environ["wsgi.input"].read(length) if length > 0 else b""
    replace_body(environ, body)
    try:
        params.update(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
    except UnicodeDecodeError:
        return None
    return params


def replace_body(environ: dict[str, Any], body: bytes) -> None:
    """Makes `body` the request's body, with its length."""
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))


def respond(
    start_response: StartResponse, status: int, body: str, content_type: str = "text/xml"
) -> Iterable[bytes]:
    """A complete response with a body."""
    data = body.encode("utf-8")
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 500: "Internal Server Error"}
    start_response(
        f"{status} {reason.get(status, 'Status')}",
        [("Content-Type", content_type), ("Content-Length", str(len(data)))],
    )
    return [data]


def call(app: Any, environ: dict[str, Any]) -> tuple[str, list[tuple[str, str]], bytes]:
    """Runs a WSGI app to completion: (status line, headers, body)."""
    captured: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        captured["status"], captured["headers"] = status, headers
        return lambda _data: None

    chunks = app(environ, start_response)
    try:
        body = b"".join(chunks)
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    return captured["status"], captured["headers"], body
