"""A bucket answers only requests signed for its own region, as S3 does: a request whose
SigV4 credential scope (the Authorization header's, or a presigned URL's
`X-Amz-Credential`) names another region is answered `301 Moved Permanently` with the
`x-amz-bucket-region` header and S3's error body

    <Error><Code>PermanentRedirect</Code><Message>The bucket you are attempting to access
    must be addressed using the specified endpoint. Please send all future requests to
    this endpoint.</Message><Endpoint>BUCKET.s3.REGION.amazonaws.com</Endpoint>
    <Bucket>BUCKET</Bucket><RequestId>...</RequestId><HostId>...</HostId></Error>

(https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html, "301 Moved
Permanently: PermanentRedirect"); a HEAD (HeadBucket, HeadObject) gets the status and the
header with no body (https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadBucket.html,
`x-amz-bucket-region`). moto 5.2.5 served every bucket to every region.

Left alone: requests without a SigV4 scope (moto's `/moto-api/`, the emulator's
`/_cdkd_emulator/` control paths, anonymous requests), requests naming no bucket
(ListBuckets) or a bucket that does not exist (S3's own NoSuchBucket), CreateBucket (moto
checks its LocationConstraint against the request's region) and GetBucketLocation (how a
client learns the region)."""
import re
import uuid
from typing import Any
from urllib.parse import parse_qsl, urlparse

from moto.s3.responses import S3Response

MESSAGE = (
    "The bucket you are attempting to access must be addressed using the specified endpoint. "
    "Please send all future requests to this endpoint."
)

_originals: dict[str, Any] = {}


def signing_region(request: Any, full_url: str) -> str | None:
    """The region of an S3 request's SigV4 credential scope, or None (unsigned, SigV2)."""
    auth = request.headers.get("Authorization") or ""
    m = re.search(r"Credential=([^,\s]+)", auth)
    scope = m.group(1) if m else None
    if scope is None:
        for key, value in parse_qsl(urlparse(full_url).query):
            if key == "X-Amz-Credential":
                scope = value
    parts = (scope or "").split("/")
    if len(parts) != 5 or parts[3] != "s3":
        return None
    return parts[2] or None


def endpoint(bucket: str, region: str) -> str:
    return f"{bucket}.s3.amazonaws.com" if region == "us-east-1" else f"{bucket}.s3.{region}.amazonaws.com"


def redirect(self: S3Response, request: Any, full_url: str) -> Any:
    """S3's 301 when the request is signed for a region other than the bucket's; None
    when the request may go on."""
    region = signing_region(request, full_url)
    bucket_name = self.parse_bucket_name_from_url(request, full_url) if region else None
    if not bucket_name:
        return None
    try:
        bucket = self.backend.get_bucket(bucket_name)
    except Exception:  # noqa: BLE001 - no such bucket (or not ours): moto answers it
        return None
    if bucket.region_name == region:
        return None
    headers = {"x-amz-bucket-region": bucket.region_name, "content-type": "application/xml"}
    if request.method == "HEAD":
        return 301, headers, ""
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>PermanentRedirect</Code>'
        f"<Message>{MESSAGE}</Message><Endpoint>{endpoint(bucket_name, bucket.region_name)}</Endpoint>"
        f"<Bucket>{bucket_name}</Bucket><RequestId>{uuid.uuid4().hex[:16].upper()}</RequestId>"
        f"<HostId>{uuid.uuid4().hex}</HostId></Error>"
    )
    return 301, headers, body


def _exempt_bucket_request(request: Any, querystring: dict[str, Any]) -> bool:
    """CreateBucket (a PUT without a sub-resource) and GetBucketLocation."""
    keys = set(querystring) - {"x-id"}
    return (request.method == "PUT" and not keys) or (request.method == "GET" and "location" in keys)


def _bucket_response(self: S3Response, request: Any, full_url: str) -> Any:
    if not _exempt_bucket_request(request, self._get_querystring(request, full_url)):
        answer = redirect(self, request, full_url)
        if answer is not None:
            return answer
    return _originals["_bucket_response"](self, request, full_url)


def _key_response(self: S3Response, request: Any, full_url: str) -> Any:
    answer = redirect(self, request, full_url)
    if answer is not None:
        return answer
    return _originals["_key_response"](self, request, full_url)


def install() -> None:
    """Applies the check once."""
    if _originals:
        return
    _originals["_bucket_response"] = S3Response._bucket_response
    _originals["_key_response"] = S3Response._key_response
    S3Response._bucket_response = _bucket_response  # type: ignore[method-assign]
    S3Response._key_response = _key_response  # type: ignore[method-assign]
