"""The refusal of a request IAM denies, as each service answers it, for `iam_enforce`:
AccessDenied in the query protocol's XML (403), AuthorizationError for SNS,
UnauthorizedOperation in EC2's XML, AccessDeniedException for the JSON protocols (400;
Lambda 403), and S3's own AccessDenied."""
import base64
import json
import uuid
from typing import Any
from xml.sax.saxutils import escape

def refuse(response: Any, iam_request: Any, service: str, message: str) -> None:
    from moto.iam.access_control import S3IAMRequest

    if isinstance(iam_request, S3IAMRequest):
        from moto.s3.exceptions import BucketAccessDeniedError, S3AccessDeniedError

        data = iam_request._data
        error = BucketAccessDeniedError(bucket=data["BucketName"]) if "BucketName" in data else S3AccessDeniedError()
        error.message = message
        error.args = (message,)
        raise error
    request_id = str(uuid.uuid4())
    if service == "ec2":
        token = base64.b64encode(json.dumps({"message": message}).encode()).decode()
        text = (f"You are not authorized to perform this operation. {message}. "
                f"Encoded authorization failure message: {token}")
        body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>UnauthorizedOperation'
                f"</Code><Message>{escape(text)}</Message></Error></Errors><RequestID>{request_id}</RequestID>"
                f"</Response>")
        raise Refused(403, "UnauthorizedOperation", body, "text/xml")
    if response.headers.get("X-Amz-Target") or service == "lambda":
        status = 403 if service == "lambda" else 400
        body = json.dumps({"__type": "AccessDeniedException", "Type": "User", "message": message, "Message": message})
        raise Refused(status, "AccessDeniedException", body, "application/json")
    code = "AuthorizationError" if service == "sns" else "AccessDenied"
    body = (f'<ErrorResponse xmlns="{_namespace(response, service)}"><Error><Type>Sender</Type><Code>{code}</Code>'
            f"<Message>{escape(message)}</Message></Error><RequestId>{request_id}</RequestId></ErrorResponse>")
    raise Refused(403, code, body, "text/xml")


def refuse_unsigned(response: Any, s3: bool) -> None:
    """A request without a signature (no `Authorization` header, no presigned query):
    S3 answers an anonymous caller `AccessDenied` (403); the other services
    `MissingAuthenticationToken` (403; the JSON protocols name it
    `MissingAuthenticationTokenException`)."""
    message = "Request is missing Authentication Token"
    if s3:
        from moto.s3.exceptions import S3AccessDeniedError

        raise S3AccessDeniedError()
    if response.headers.get("X-Amz-Target"):
        body = json.dumps({"__type": "MissingAuthenticationTokenException", "message": message})
        raise Refused(403, "MissingAuthenticationTokenException", body, "application/json")
    body = (f"<ErrorResponse><Error><Type>Sender</Type><Code>MissingAuthenticationToken</Code>"
            f"<Message>{message}</Message></Error><RequestId>{uuid.uuid4()}</RequestId></ErrorResponse>")
    raise Refused(403, "MissingAuthenticationToken", body, "text/xml")


def _namespace(response: Any, service: str) -> str:
    try:
        from moto.core.utils import get_service_model

        namespace = get_service_model(response.boto3_service_name).metadata.get("xmlNamespace")
        if namespace:
            return str(namespace)
    except Exception:  # noqa: BLE001
        pass
    version = (getattr(response, "querystring", {}) or {}).get("Version", [""])
    version = version[0] if isinstance(version, list) else version
    return f"http://{service}.amazonaws.com/doc/{version}/"


def _refused_class() -> type:
    from werkzeug.exceptions import HTTPException

    class _Refused(HTTPException):
        """A refusal moto's call_action answers with its body and status."""

        def __init__(self, status: int, code: str, body: str, content_type: str) -> None:
            super().__init__(description=body)
            self.code = status
            self.error_code = code
            self.content_type = content_type

        def get_body(self, *args: Any, **kwargs: Any) -> str:
            return str(self.description)

        def get_headers(self, *args: Any, **kwargs: Any) -> list[tuple[str, str]]:
            return [("Content-Type", self.content_type), ("X-Amzn-ErrorType", self.error_code)]

    return _Refused


Refused = _refused_class()
