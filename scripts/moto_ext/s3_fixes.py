"""Corrections to the pinned moto's S3 answers, toward S3's documented wire format:

- `GetBucketVersioning` answers with the root element `VersioningConfiguration`, as S3
  does. moto 5.2.5 serialises this output without a result wrapper (its
  `service-2.moto-extras.json` lists one for GetBucketTagging, GetBucketAcl and others,
  not for this operation), so the root was `GetBucketVersioningResponse`. boto3 ignores
  the root element, but the AWS SDK for Rust checks it ("encountered invalid XML root:
  expected VersioningConfiguration") and could not read a bucket's versioning at all."""
from typing import Any

from moto.s3.responses import S3Response

WRONG_ROOT, ROOT = "GetBucketVersioningResponse", "VersioningConfiguration"

_originals: dict[str, Any] = {}


def versioning_root(body: Any) -> Any:
    """`body` (str or bytes) with the root element renamed to `VersioningConfiguration`."""
    pairs = ((f"<{WRONG_ROOT}", f"<{ROOT}"), (f"</{WRONG_ROOT}>", f"</{ROOT}>"))
    for wrong, right in pairs:
        if isinstance(body, bytes):
            body = body.replace(wrong.encode(), right.encode())
        elif isinstance(body, str):
            body = body.replace(wrong, right)
    return body


def _get_bucket_versioning(self: S3Response) -> Any:
    answer = _originals["get_bucket_versioning"](self)
    if isinstance(answer, tuple) and len(answer) == 3:
        status, headers, body = answer
        return status, headers, versioning_root(body)
    return versioning_root(answer)


def install() -> None:
    """Applies the corrections once."""
    if _originals:
        return
    _originals["get_bucket_versioning"] = S3Response.get_bucket_versioning
    S3Response.get_bucket_versioning = _get_bucket_versioning  # type: ignore[method-assign]
