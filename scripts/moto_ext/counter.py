"""Request counting: a measuring facility of the project's emulator, not AWS behaviour.

Every signed request the emulator receives is counted by service (the SigV4 credential
scope's), action and, for an S3 object request, the kind of object it names, before
anything else sees it (a request a fault refuses counts too: it was sent). The
benchmark of `make bench-export` resets the counts, runs one export through the CLI and
reads them: what the user's run cost, whichever client or process sent it
(docs/emulator.md, "Request counts"). Unsigned requests (moto's own `/moto-api/`, the
fault and counter control paths) are not counted.

- `GET /_cdkd_emulator/requests` answers 200 `{"total": n, "requests": [{"service",
  "action", "object", "count"}...]}` (sorted);
- `DELETE /_cdkd_emulator/requests` resets the counts (200 `{"cleared": n}`).

The action is the query protocol's `Action` (CloudFormation, SNS, SQS, STS, EC2, IAM),
the JSON protocol's `X-Amz-Target` operation (SSM, Step Functions), and for S3 the REST
operation from the method, the path (path-style: `/<bucket>/<key>`) and the
sub-resource of the query string (`ListObjectsV2`, `GetObject`, `PutObject`...), with
`If-Match` / `If-None-Match` named for a conditional write or delete. `object` names an
S3 object by its role in cdkd's layout: the file name for `state.json`, `lock.json`,
`progress.json` and the other files of a run's folder, `templates/*` and
`changesets/*` for a run's uploads, `exports.json` for the exports index, else `-`."""
import json
import threading
from collections import Counter
from typing import Any, Iterable
from urllib.parse import parse_qsl, unquote

from . import wsgi

CONTROL = "/_cdkd_emulator/requests"

# Files of cdkd's layout named as themselves in the counts.
_KNOWN_FILES = {
    "state.json",
    "lock.json",
    "progress.json",
    "plan.json",
    "report.json",
    "run.json",
    "approval.json",
    "exports.json",
}
# S3 bucket sub-resources, as the query string names them, to their operation's noun.
_S3_SUBRESOURCES = {
    "versioning": "BucketVersioning",
    "location": "BucketLocation",
    "tagging": "Tagging",
    "policy": "BucketPolicy",
    "acl": "Acl",
    "lifecycle": "BucketLifecycleConfiguration",
    "encryption": "BucketEncryption",
    "notification": "BucketNotificationConfiguration",
    "versions": "ObjectVersions",
    "uploads": "MultipartUploads",
}


class Counts:
    """The counts so far (one lock: the emulator serves one request at a time, but the
    tests' in-process servers may not)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[tuple[str, str, str]] = Counter()

    def add(self, service: str, action: str, obj: str) -> None:
        with self._lock:
            self._counts[(service, action, obj)] += 1

    def clear(self) -> int:
        with self._lock:
            n = sum(self._counts.values())
            self._counts.clear()
            return n

    def listing(self) -> dict[str, Any]:
        with self._lock:
            rows = [
                {"service": s, "action": a, "object": o, "count": n}
                for (s, a, o), n in sorted(self._counts.items())
            ]
        return {"total": sum(r["count"] for r in rows), "requests": rows}


def object_kind(key: str) -> str:
    """An S3 key's role in cdkd's layout (see the module's doc)."""
    if not key:
        return "-"
    parts = key.split("/")
    name = parts[-1]
    if name in _KNOWN_FILES:
        return name
    if len(parts) >= 2 and parts[-2] in ("templates", "changesets"):
        return parts[-2] + "/*"
    return "-"


def s3_action(environ: dict[str, Any]) -> tuple[str, str]:
    """(operation, object kind) of a path-style S3 request."""
    method = (environ.get("REQUEST_METHOD") or "GET").upper()
    path = unquote(environ.get("PATH_INFO") or "/")
    bucket, _, key = path.lstrip("/").partition("/")
    query = dict(parse_qsl(environ.get("QUERY_STRING") or "", keep_blank_values=True))
    if not bucket:
        return ("ListBuckets" if method == "GET" else f"{method} /"), "-"
    if key:
        if "uploadId" in query or "uploads" in query:
            op = {"POST": "MultipartUpload", "PUT": "UploadPart"}.get(method, f"{method}Multipart")
        elif "tagging" in query:
            op = {"GET": "GetObjectTagging", "PUT": "PutObjectTagging"}.get(method, f"{method}ObjectTagging")
        else:
            op = {
                "GET": "GetObject",
                "HEAD": "HeadObject",
                "PUT": "CopyObject" if environ.get("HTTP_X_AMZ_COPY_SOURCE") else "PutObject",
                "DELETE": "DeleteObject",
                "POST": "PostObject",
            }.get(method, f"{method}Object")
            if method in ("PUT", "DELETE"):
                if environ.get("HTTP_IF_MATCH"):
                    op += " If-Match"
                elif environ.get("HTTP_IF_NONE_MATCH"):
                    op += " If-None-Match"
            elif method in ("GET", "HEAD") and environ.get("HTTP_IF_NONE_MATCH"):
                op += " If-None-Match"
        return op, object_kind(key)
    if method == "POST" and "delete" in query:
        return "DeleteObjects", "-"
    for sub, noun in _S3_SUBRESOURCES.items():
        if sub in query:
            verb = {"GET": "Get" if sub != "versions" else "List", "PUT": "Put", "DELETE": "Delete"}.get(method, method)
            if sub == "uploads":
                verb = "List"
            return verb + noun, "-"
    if method == "GET":
        return ("ListObjectsV2" if query.get("list-type") == "2" else "ListObjects"), "-"
    return {"PUT": "CreateBucket", "HEAD": "HeadBucket", "DELETE": "DeleteBucket"}.get(
        method, f"{method}Bucket"
    ), "-"


def classify(environ: dict[str, Any]) -> tuple[str, str, str] | None:
    """(service, action, object) of a signed request; None for an unsigned one."""
    service, _ = wsgi.credential_scope(environ)
    if not service:
        return None
    if service == "s3":
        action, obj = s3_action(environ)
        return service, action, obj
    target = environ.get("HTTP_X_AMZ_TARGET") or ""
    if target:
        return service, target.rsplit(".", 1)[-1], "-"
    params = wsgi.read_form(environ)
    action = (params or {}).get("Action")
    if action:
        return service, action, "-"
    method = (environ.get("REQUEST_METHOD") or "GET").upper()
    first = (environ.get("PATH_INFO") or "/").lstrip("/").split("/", 1)[0]
    return service, f"{method} /{first}", "-"


def intercept(counts: Counts, environ: dict[str, Any], start_response: wsgi.StartResponse) -> Iterable[bytes] | None:
    """Answers the control path; counts any other signed request and returns None (the
    request goes on, its body intact)."""
    path = environ.get("PATH_INFO") or ""
    if path == CONTROL:
        method = (environ.get("REQUEST_METHOD") or "GET").upper()
        if method == "GET":
            return wsgi.respond(start_response, 200, json.dumps(counts.listing()), "application/json")
        if method == "DELETE":
            return wsgi.respond(start_response, 200, json.dumps({"cleared": counts.clear()}), "application/json")
        return wsgi.respond(start_response, 400, json.dumps({"error": f"{method} {CONTROL}: use GET or DELETE"}), "application/json")
    seen = classify(environ)
    if seen is not None:
        counts.add(*seen)
    return None
