"""The start-up check of AWS's limits, through the middleware and moto's own WSGI app
in-process, in an account of its own that is wiped afterwards (the emulator starts
empty):

- CloudFormation (`cfn_limits`): ValidateTemplate refuses a TemplateBody of 51,201
  bytes and a template of 501 resources with AWS's messages;
- S3 (`s3_region`): a bucket made in eu-west-1 answers a HeadBucket signed for
  us-east-1 with 301 and `x-amz-bucket-region: eu-west-1`, one signed for eu-west-1 with
  200;
- Step Functions (`sfn_limits`): moto's interpreter measures payloads with the patched
  quota (262,144 bytes of compact UTF-8 JSON allowed, one more refused) and States.ALL
  is patched not to match States.DataLimitExceeded.

Anything else raises the error it is given, naming the step."""
import json
from typing import Any
from urllib.parse import urlencode

ACCOUNT = "000000000043"
BUCKET = "cdkd-self-test-limits-eu-west-1"


def _call(app: Any, method: str, path: str, region: str, service: str, body: str = "",
          content_type: str | None = None) -> tuple[str, dict[str, str], bytes]:
    from werkzeug.test import EnvironBuilder

    from .wsgi import call

    environ = EnvironBuilder(
        method=method, path=path, data=body, content_type=content_type,
        headers={
            "Authorization": f"AWS4-HMAC-SHA256 Credential=self-test/20200101/{region}/"
            f"{service}/aws4_request, SignedHeaders=host, Signature=0",
            "x-moto-account-id": ACCOUNT,
        },
    ).get_environ()
    status, headers, data = call(app, environ)
    return status, {k.lower(): v for k, v in headers}, data


def _validate(app: Any, template: str) -> tuple[str, bytes]:
    status, _, body = _call(app, "POST", "/", "us-east-1", "cloudformation",
                            urlencode({"Action": "ValidateTemplate", "Version": "2010-05-15",
                                       "TemplateBody": template}),
                            "application/x-www-form-urlencoded")
    return status, body


def _check_cloudformation(app: Any, fail: type[Exception]) -> None:
    from .cfn_limits import MAX_BODY_BYTES

    body = json.dumps({"Resources": {"T": {"Type": "AWS::SNS::Topic"}}, "Metadata": {"P": ""}})
    body = body.replace('"P": ""', '"P": "' + "x" * (MAX_BODY_BYTES + 1 - len(body)) + '"')
    status, answer = _validate(app, body)
    if not status.startswith("400") or b"Member must have length less than or equal to 51200" not in answer:
        raise fail(f"a TemplateBody of 51,201 bytes answered {status}: {answer[-300:]!r}")
    many = json.dumps({"Resources": {f"T{i}": {"Type": "AWS::SNS::Topic"} for i in range(501)}})
    status, answer = _validate(app, many)
    if not status.startswith("400") or b"Number of resources, 501, is greater than maximum allowed, 500" not in answer:
        raise fail(f"a template of 501 resources answered {status}: {answer[:300]!r}")


def _check_s3(app: Any, fail: type[Exception]) -> None:
    configuration = ('<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                     "<LocationConstraint>eu-west-1</LocationConstraint></CreateBucketConfiguration>")
    status, _, body = _call(app, "PUT", f"/{BUCKET}", "eu-west-1", "s3", configuration)
    if not status.startswith("200"):
        raise fail(f"CreateBucket in eu-west-1 answered {status}: {body[:300]!r}")
    status, headers, _ = _call(app, "HEAD", f"/{BUCKET}", "us-east-1", "s3")
    if not status.startswith("301") or headers.get("x-amz-bucket-region") != "eu-west-1":
        raise fail(f"HeadBucket of an eu-west-1 bucket signed for us-east-1 answered {status} {headers}")
    status, _, _ = _call(app, "HEAD", f"/{BUCKET}", "eu-west-1", "s3")
    if not status.startswith("200"):
        raise fail(f"HeadBucket of an eu-west-1 bucket signed for eu-west-1 answered {status}")


def _check_step_functions(fail: type[Exception]) -> None:
    from moto.stepfunctions.parser.asl.component.common.error_name.error_equals_decl import (
        ErrorEqualsDecl,
    )
    from moto.stepfunctions.parser.asl.component.state import state

    from . import sfn_limits

    def sized(n: int) -> dict[str, str]:
        return {"s": "é" * ((n - 8) // 2) + "x" * ((n - 8) % 2)}

    quota = state.is_within_size_quota
    if quota is not sfn_limits.is_within_size_quota or not quota(sized(262_144)) or quota(sized(262_145)):
        raise fail("moto's Step Functions interpreter does not measure payloads with sfn_limits' quota")
    if ErrorEqualsDecl._eval_body is not sfn_limits._error_equals:
        raise fail("moto's ErrorEquals is not sfn_limits' (States.ALL would catch States.DataLimitExceeded)")


def _wipe() -> None:
    from moto.core.base_backend import BackendDict

    for backends in list(BackendDict._instances):
        if ACCOUNT in backends:
            backends[ACCOUNT].reset()
            del backends[ACCOUNT]


def check_limits(fail: type[Exception]) -> None:
    """Checks the limits through the patched moto; raises `fail(reason)` when one breaks."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

    from . import Extensions

    try:
        app = Extensions(DomainDispatcherApplication(create_backend_app))
        _check_cloudformation(app, fail)
        _check_s3(app, fail)
        _check_step_functions(fail)
    except fail:
        raise
    except Exception as e:  # noqa: BLE001 - whatever broke is named in the failure
        raise fail(f"the limits check broke: {type(e).__name__}: {e}") from e
    finally:
        _wipe()
