"""Pagination of EC2 `DescribeSecurityGroupRules`, which moto answers in one page
whatever `MaxResults` says.

The request goes to moto without `MaxResults` and `NextToken`; the full answer is cut to
the page asked for, and `nextToken` is added while rules remain. `MaxResults` ranges from
5 to 1000 as on EC2; a token is the offset of the page's first rule, so pages are stable
as long as the rules do not change between calls."""
import base64
import binascii
import uuid
import xml.etree.ElementTree as ET
from typing import Any, Iterable
from urllib.parse import urlencode
from xml.sax.saxutils import escape

from . import wsgi

MIN_RESULTS, MAX_RESULTS = 5, 1000
_TOKEN_PREFIX = "sgr-page:"


def encode_token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"{_TOKEN_PREFIX}{offset}".encode()).decode()


def decode_token(token: str) -> int | None:
    try:
        text = base64.urlsafe_b64decode(token.encode()).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    if not text.startswith(_TOKEN_PREFIX):
        return None
    digits = text[len(_TOKEN_PREFIX):]
    return int(digits) if digits.isdigit() else None


def _error(start_response: wsgi.StartResponse, code: str, message: str) -> Iterable[bytes]:
    body = (
        f"<Response><Errors><Error><Code>{escape(code)}</Code><Message>{escape(message)}"
        f"</Message></Error></Errors><RequestID>{uuid.uuid4()}</RequestID></Response>"
    )
    return wsgi.respond(start_response, 400, body)


def paginate(
    app: Any, environ: dict[str, Any], params: dict[str, str], start_response: wsgi.StartResponse
) -> Iterable[bytes]:
    """Answers a DescribeSecurityGroupRules request that carries MaxResults or NextToken."""
    try:
        limit = int(params.get("MaxResults") or MAX_RESULTS)
    except ValueError:
        limit = -1
    if not MIN_RESULTS <= limit <= MAX_RESULTS:
        return _error(
            start_response,
            "InvalidParameterValue",
            f"Value ({params.get('MaxResults')}) for parameter maxResults is invalid. "
            f"Expecting a value between {MIN_RESULTS} and {MAX_RESULTS}.",
        )
    offset = 0
    if params.get("NextToken"):
        decoded = decode_token(params["NextToken"])
        if decoded is None:
            return _error(
                start_response, "InvalidPaginationToken", "The pagination token is not valid."
            )
        offset = decoded
    rest = {k: v for k, v in params.items() if k not in ("MaxResults", "NextToken")}
    # The request is signed over the body the client sent: IAM enforcement checks the
    # signature against it, not against the body rewritten below (iam_enforce).
    from .iam_enforce import SIGNED_BODY

    original = environ.get("wsgi.input")
    if hasattr(original, "getvalue"):
        environ.setdefault(SIGNED_BODY, original.getvalue())
    environ["QUERY_STRING"] = ""
    environ["REQUEST_METHOD"] = "POST"
    environ["CONTENT_TYPE"] = "application/x-www-form-urlencoded; charset=utf-8"
    wsgi.replace_body(environ, urlencode(rest).encode("utf-8"))
    status, headers, body = wsgi.call(app, environ)
    if status.startswith("200"):
        body = _page(body, offset, limit)
        headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
        headers.append(("Content-Length", str(len(body))))
    start_response(status, headers)
    return [body]


def _page(body: bytes, offset: int, limit: int) -> bytes:
    """The rules [offset, offset + limit) of moto's answer, with `nextToken` while more
    remain."""
    root = ET.fromstring(body)
    ns = root.tag[1:].split("}", 1)[0] if root.tag.startswith("{") else ""
    q = (lambda t: f"{{{ns}}}{t}") if ns else (lambda t: t)
    if ns:
        ET.register_namespace("", ns)
    rules = root.find(q("securityGroupRuleSet"))
    if rules is None:
        return body
    items = list(rules)
    for item in items:
        rules.remove(item)
    for item in items[offset:offset + limit]:
        rules.append(item)
    for old in root.findall(q("nextToken")):
        root.remove(old)
    if offset + limit < len(items):
        token = ET.SubElement(root, q("nextToken"))
        token.text = encode_token(offset + limit)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)
