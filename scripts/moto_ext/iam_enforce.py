"""IAM enforcement as AWS evaluates it, when moto's is on (env
INITIAL_NO_AUTH_ACTION_COUNT, or `POST /moto-api/reset-auth` with body `0`; body `inf`
turns it off again).

moto 5.2.5 checks the signature and the caller's policies of every request, but against
the resource `*` (S3 and a few others aside), evaluates only StringEquals conditions, and
treats an Allow whose condition fails as an explicit deny. `install()` replaces moto's
`ActionAuthenticatorMixin._authenticate_and_authorize_action`, through which both the
query/JSON services (`BaseResponse.call_action`) and S3 pass, keeping its switch (the
request count against INITIAL_NO_AUTH_ACTION_COUNT) and its signature check (the signed
payload being the body the client sent, see `_create_aws_request`), and then:

- works out what the request asks to be authorized (`iam_resources`): the IAM action
  (`lambda:InvokeFunction` for Invoke), its resource ARN(s) per the Service
  Authorization Reference, the request's condition keys, and the `iam:PassRole` a
  request passing a role to a service implies (CloudFormation's RoleARN...);
- evaluates each against the caller's policies (`iam_principal`, `iam_policy`,
  `iam_conditions`): an IAM user's inline, attached and group policies, or an assumed
  role's inline and attached policies; the role's permissions boundary and the session
  policy of AssumeRole, when there is one, must allow too; an explicit Deny anywhere wins.
  `sts:GetCallerIdentity` is always allowed. AssumeRole also needs the role's trust
  policy to name the caller (and, within the account, either the identity policy to
  allow it or the trust policy to name the caller's own ARN);
- refuses as the service would, the message naming the action and resource:
  `User: <caller ARN> is not authorized to perform: <action> on resource: <ARN> because
  no identity-based policy allows the <action> action` (`... with an explicit deny in an
  identity-based policy: <policy ARN>`; no "on resource" for `*`), with the service's
  error (`iam_refusal`): AccessDenied (query XML, 403), AuthorizationError (SNS), UnauthorizedOperation
  (EC2), AccessDeniedException (JSON protocols: 400, Lambda 403), S3's AccessDenied with
  the resource in quotes.

For the emulator's own extensions: `enforcing()`, `authorize(...)` (the decision for an
access key, without a signed request, e.g. for a Lambda Invoke served outside moto),
`trust_allows_service(...)` (whether a role's trust policy lets a service principal
assume it, e.g. EventBridge Scheduler with aws:SourceAccount), and SIGNED_BODY (where a
middleware that rewrites a request's body keeps the one the client signed).

Not modelled: resource-based policies (bucket, topic, queue, function policies; moto
does not either), SCPs, managed session policies (AssumeRole PolicyArns), a user's
permissions boundary (moto keeps none), presigned URLs."""
import re
import sys
import time
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlparse

from . import iam_refusal, iam_resources
from .iam_conditions import Context
from .iam_policy import ALLOW, DENY, NONE, Caller, Decision, decide, parse
from .iam_principal import Principal, principal_of

_installed = False
# The WSGI environ key under which a middleware that rewrites a request's body before moto
# sees it (sg_rules' paging) keeps the body the client signed, for the signature check.
SIGNED_BODY = "moto_ext.signed_body"


def install() -> None:
    global _installed
    if _installed:
        return
    from moto.core.authorization import ActionAuthenticatorMixin
    from moto.iam.access_control import IAMRequestBase

    ActionAuthenticatorMixin._authenticate_and_authorize_action = _authenticate_and_authorize_action  # type: ignore[method-assign]
    IAMRequestBase._create_aws_request = _create_aws_request  # type: ignore[method-assign]
    _installed = True


def _create_aws_request(self: Any) -> Any:
    """moto's IAMRequestBase._create_aws_request, the signed payload being the request's
    body: moto signed its parsed parameters instead whenever the body was empty, which
    for a GET without a body (Lambda's GetFunction, an Invoke with a Qualifier) are the
    query string or even the headers, so the signature never matched. A form body
    werkzeug consumed is still rebuilt from the parameters, as moto did."""
    from botocore.awsrequest import AWSRequest

    signed = self._get_string_between("SignedHeaders=", ",", self._headers["Authorization"]).split(";")
    headers = self._create_headers_for_aws_request(signed, self._headers)
    form = "x-www-form-urlencoded" in str(self._headers.get("Content-Type") or "")
    data = self._body if self._body or not form else self._data
    request = AWSRequest(method=self._method, url=self._path, data=data or b"", headers=headers)
    request.context["timestamp"] = headers["X-Amz-Date"]
    return request


def enforcing() -> bool:
    """Whether moto enforces IAM now (without counting a request)."""
    from moto import settings
    from moto.core.authorization import ActionAuthenticatorMixin

    return ActionAuthenticatorMixin.request_count >= settings.INITIAL_NO_AUTH_ACTION_COUNT


# ---- the decision ----------------------------------------------------------------------


def _request_context(principal: Principal, check: iam_resources.Check, extra: Context) -> Context:
    now = time.time()
    context: Context = {
        "aws:currenttime": [datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")],
        "aws:epochtime": [str(int(now))],
        "aws:securetransport": ["false"],
        "aws:viaawsservice": ["false"],
        "aws:principalisawsservice": ["false"],
    }
    context.update(principal.context)
    context.update(extra)
    parts = check.resource.split(":", 5)
    if len(parts) == 6 and parts[0] == "arn" and parts[4]:
        context["aws:resourceaccount"] = [parts[4]]
    context.update({k.lower(): v for k, v in check.context.items()})
    return context


def _display(action: str) -> str:
    service, _, name = action.partition(":")
    return f"SNS:{name}" if service == "sns" else action


def _denial(principal: Principal, check: iam_resources.Check, reason: str | None, quote: bool = False) -> str:
    action = _display(check.action)
    resource = f'"{check.resource}"' if quote else check.resource
    on = "" if check.resource == "*" else f" on resource: {resource}"
    return f"User: {principal.arn} is not authorized to perform: {action}{on}" + (f" {reason}" if reason else "")


def _reason(kind: str, decision: Any, action: str) -> str:
    if decision.outcome == DENY:
        label = decision.denied_by.label if decision.denied_by is not None else None
        return f"with an explicit deny in {kind}" + (f": {label}" if label and label.startswith("arn:") else "")
    return f"because no {kind.split(' ', 1)[1]} allows the {_display(action)} action"


def evaluate(principal: Principal, check: iam_resources.Check, extra: Context | None = None,
             quote: bool = False) -> str | None:
    """None when the check is allowed, else the AccessDenied message."""
    if check.action.lower() == "sts:getcalleridentity":
        return None
    context = _request_context(principal, check, extra or {})
    identity = decide(principal.documents, check.action, check.resource, context)
    if identity.outcome == DENY:
        return _denial(principal, check, _reason("an identity-based policy", identity, check.action), quote)
    for kind, document in (("a permissions boundary", principal.boundary), ("a session policy", principal.session)):
        if document is not None:
            limit = decide([document], check.action, check.resource, context)
            if limit.outcome != ALLOW:
                return _denial(principal, check, _reason(kind, limit, check.action), quote)
    if check.action.lower() == "sts:assumerole":
        return _assume_role(principal, check, context, identity.outcome == ALLOW)
    if identity.outcome != ALLOW:
        return _denial(principal, check, _reason("an identity-based policy", identity, check.action), quote)
    return None


def _role(role_arn: str, partition: str) -> Any:
    from moto.iam.models import iam_backends

    parts = role_arn.split(":", 5)
    if len(parts) != 6:
        return None
    try:
        return iam_backends[parts[4]][partition].get_role_by_arn(role_arn)
    except Exception:  # noqa: BLE001
        return None


def _assume_role(principal: Principal, check: iam_resources.Check, context: Context, identity_allows: bool) -> str | None:
    role = _role(check.resource, principal.arn.split(":")[1])
    if role is None:
        return _denial(principal, check, None)
    caller = Caller(arn=principal.arn, account=principal.account,
                    role_arn=principal.identity_arn if principal.identity_arn != principal.arn else None)
    trust = decide([parse(role.assume_role_policy_document)], check.action, check.resource, context, caller)
    same_account = check.resource.split(":")[4] == principal.account
    if trust.outcome != ALLOW:
        return _denial(principal, check, None)
    if identity_allows or (same_account and trust.explicit_principal):
        return None
    return _denial(principal, check, _reason("an identity-based policy", Decision(NONE), check.action))


def trust_allows_service(role_arn: str, service: str, source_account: str | None = None,
                         source_arn: str | None = None) -> bool:
    """Whether the role's trust policy lets `service` (e.g. scheduler.amazonaws.com)
    assume it, aws:SourceAccount / aws:SourceArn being those of the resource it acts for."""
    role = _role(role_arn, role_arn.split(":")[1] if role_arn.count(":") >= 5 else "aws")
    if role is None:
        return False
    context: Context = {"aws:principalservicename": [service], "aws:principalisawsservice": ["true"]}
    if source_account:
        context["aws:sourceaccount"] = [source_account]
    if source_arn:
        context["aws:sourcearn"] = [source_arn]
    trust = decide([parse(role.assume_role_policy_document)], "sts:AssumeRole", role_arn, context,
                   Caller(service=service))
    return trust.outcome == ALLOW


def authorize(account_id: str, region: str, access_key_id: str, session_token: str | None, action: str,
              resource: str, context: Context | None = None) -> str | None:
    """The decision for a caller known by its access key (no signature checked): None when
    allowed or when moto does not enforce IAM, else the AccessDenied message."""
    if not enforcing():
        return None
    from moto.iam.access_control import CreateAccessKeyFailure, create_access_key
    from moto.utilities.utils import get_partition

    headers = {"X-Amz-Security-Token": session_token} if session_token else {}
    try:
        key = create_access_key(account_id, get_partition(region), access_key_id, headers)
    except CreateAccessKeyFailure:
        return "The security token included in the request is invalid."
    principal = principal_of(key, region)
    return evaluate(principal, iam_resources.Check(action, resource, {k.lower(): v for k, v in (context or {}).items()}))


# ---- moto's hook -----------------------------------------------------------------------


CFN_RESPONSE = re.compile(r"^/cloudformation_[a-z0-9-]+/cfnresponse$")


def _presigned(query: str) -> bool:
    """A presigned URL carries its signature in the query string (SigV4 or SigV2)."""
    keys = {part.split("=", 1)[0] for part in query.split("&") if part}
    return bool(keys & {"X-Amz-Signature", "Signature"})


def _authenticate_and_authorize_action(self: Any, iam_request_cls: type, resource: str = "*") -> None:
    """moto's ActionAuthenticatorMixin method, with AWS's evaluation (module docstring)."""
    from moto import settings
    from moto.core.authorization import ActionAuthenticatorMixin
    from moto.iam.access_control import S3IAMRequest

    if ActionAuthenticatorMixin.request_count < settings.INITIAL_NO_AUTH_ACTION_COUNT:
        ActionAuthenticatorMixin.request_count += 1
        return
    if self.headers.get("X-Amz-Target") in ActionAuthenticatorMixin.PUBLIC_OPERATIONS:
        return
    parsed_url = urlparse(self.uri)
    if CFN_RESPONSE.search(parsed_url.path):
        # A custom resource's ResponseURL: in AWS a presigned S3 URL, authorized by its
        # own signature whoever sends it (docs/emulator.md, "IAM"); here moto's
        # cfnresponse endpoint stands for it, so it is let through as AWS lets it.
        return
    path = self.raw_path + ("?" + parsed_url.query if parsed_url.query else "")
    operation = self._get_action()
    operation = operation[0] if isinstance(operation, list) else operation
    # The body the client signed: an extension that rewrote the request before moto saw
    # it leaves the original under SIGNED_BODY in the WSGI environ.
    environ = getattr(getattr(self, "normalized_request", None), "environ", None) or {}
    body = environ.get(SIGNED_BODY, self.raw_body)
    if "Authorization" not in self.headers and not _presigned(parsed_url.query):
        iam_refusal.refuse_unsigned(self, iam_request_cls is S3IAMRequest)
    iam_request = iam_request_cls(account_id=self.current_account, method=self.method, path=path,
                                  data=self.data, body=body, headers=self.headers, action=operation)
    iam_request.check_signature()
    region, service = iam_request._region, iam_request._service
    s3 = isinstance(iam_request, S3IAMRequest)
    if s3:
        checks = [iam_resources.Check(iam_request._action, resource, _s3_context(self, iam_request._action))]
        checks += _kms_through_s3(self, iam_request._action, path)
    else:
        try:
            checks = iam_resources.checks(self, service, region, str(operation), resource)
        except Exception as e:  # noqa: BLE001 - a resolver's bug: moto's resource, never wider
            print(f"iam_enforce: no resource for {service}:{operation}: {e!r}", file=sys.stderr, flush=True)
            checks = [iam_resources.Check(iam_request._action, resource)]
    principal = principal_of(iam_request._access_key, region)
    extra: Context = {}
    remote = getattr(getattr(self, "normalized_request", None), "remote_addr", None)
    if remote:
        extra["aws:sourceip"] = [remote]
    for check in checks:
        message = evaluate(principal, check, extra, quote=s3)
        if message is not None:
            iam_refusal.refuse(self, iam_request, service, message)


KMS_FOR = {"s3:GetObject": "kms:Decrypt", "s3:GetObjectVersion": "kms:Decrypt", "s3:PutObject": "kms:GenerateDataKey"}


def _kms_through_s3(response: Any, action: str, path: str) -> list[iam_resources.Check]:
    """What S3 asks KMS on the caller's behalf for an object under a customer key (SSE-KMS):
    reading it needs `kms:Decrypt`, writing it `kms:GenerateDataKey`, on the key's ARN,
    with `kms:ViaService` = `s3.<the bucket's region>.amazonaws.com` and
    `kms:CallerAccount` (AWS, "Using server-side encryption with AWS KMS keys": "the
    requester must have permission to use the KMS key"). The key is the object's own when
    it was written with one, else the bucket's default; S3's own key (`aws/s3`, no key id)
    needs no permission of the caller. Key policies are not modelled (docs/emulator.md)."""
    kms_action = KMS_FOR.get(action)
    if kms_action is None:
        return []
    bucket_name, _, key_name = path.split("?", 1)[0].lstrip("/").partition("/")
    try:
        bucket = response.backend.get_bucket(bucket_name)
    except Exception:  # noqa: BLE001 - no such bucket: S3 answers that itself
        return []
    key_id = None
    if kms_action == "kms:GenerateDataKey":
        if response.headers.get("x-amz-server-side-encryption") == "aws:kms":
            key_id = response.headers.get("x-amz-server-side-encryption-aws-kms-key-id")
    else:
        from urllib.parse import unquote

        stored = bucket.keys.get(unquote(key_name)) if key_name else None
        if stored is not None and getattr(stored, "encryption", None) == "aws:kms":
            key_id = getattr(stored, "kms_key_id", None)
    if key_id is None:
        default = ((bucket.encryption or {}).get("Rule") or {}).get("ApplyServerSideEncryptionByDefault") or {}
        if default.get("SSEAlgorithm") == "aws:kms":
            key_id = default.get("KMSMasterKeyID")
    if not key_id:
        return []
    region, account = bucket.region_name, bucket.account_id
    key_arn = key_id if key_id.startswith("arn:") else f"arn:aws:kms:{region}:{account}:key/{key_id}"
    context = {"kms:viaservice": [f"s3.{region}.amazonaws.com"], "kms:calleraccount": [account]}
    return [iam_resources.Check(kms_action, key_arn, context)]


def _s3_context(response: Any, action: str) -> Context:
    query = getattr(response, "querystring", {}) or {}
    context: Context = {}
    if action in ("s3:ListBucket", "s3:ListBucketVersions"):
        for name in ("prefix", "delimiter", "max-keys"):
            if name in query:
                value = query[name]
                context[f"s3:{name}"] = [str(value[0] if isinstance(value, list) else value)]
    return context
