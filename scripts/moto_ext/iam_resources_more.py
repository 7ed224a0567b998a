"""The resource ARNs of IAM, STS, SQS, DynamoDB, CloudWatch Logs and EC2 actions, for
`iam_resources` (see there)."""
from typing import Any
from urllib.parse import urlparse

from .iam_resources import Check, Req, pass_role, request_tags, resolver

# ---- IAM (global: no region in its ARNs) -------------------------------------------

_IAM_ROLE = {
    "GetRole", "DeleteRole", "CreateRole", "UpdateRole", "UpdateRoleDescription", "UpdateAssumeRolePolicy",
    "ListRolePolicies", "GetRolePolicy", "PutRolePolicy", "DeleteRolePolicy", "AttachRolePolicy",
    "DetachRolePolicy", "ListAttachedRolePolicies", "ListInstanceProfilesForRole", "TagRole", "UntagRole",
    "ListRoleTags", "PutRolePermissionsBoundary", "DeleteRolePermissionsBoundary",
    "DeleteServiceLinkedRole",
}
_IAM_USER = {
    "GetUser", "DeleteUser", "CreateUser", "UpdateUser", "ListUserPolicies", "GetUserPolicy",
    "PutUserPolicy", "DeleteUserPolicy", "AttachUserPolicy", "DetachUserPolicy",
    "ListAttachedUserPolicies", "ListGroupsForUser", "ListAccessKeys", "CreateAccessKey",
    "DeleteAccessKey", "UpdateAccessKey", "GetLoginProfile", "CreateLoginProfile", "UpdateLoginProfile",
    "DeleteLoginProfile", "PutUserPermissionsBoundary", "DeleteUserPermissionsBoundary", "TagUser",
    "UntagUser", "ListUserTags", "ListMFADevices", "DeactivateMFADevice", "ListSigningCertificates",
    "DeleteSigningCertificate", "ListSSHPublicKeys", "DeleteSSHPublicKey",
    "ListServiceSpecificCredentials", "DeleteServiceSpecificCredential",
}
# where UserName is optional: the caller's own user
_IAM_USER_SELF = {"GetUser", "ListAccessKeys", "CreateAccessKey", "DeleteAccessKey", "UpdateAccessKey",
                  "ListSigningCertificates", "DeleteSigningCertificate", "ListMFADevices"}
_IAM_GROUP = {"GetGroup", "DeleteGroup", "CreateGroup", "UpdateGroup", "ListGroupPolicies",
              "GetGroupPolicy", "PutGroupPolicy", "DeleteGroupPolicy", "AttachGroupPolicy",
              "DetachGroupPolicy", "ListAttachedGroupPolicies", "AddUserToGroup", "RemoveUserFromGroup"}
_IAM_POLICY = {"GetPolicy", "DeletePolicy", "CreatePolicyVersion", "DeletePolicyVersion",
               "GetPolicyVersion", "ListPolicyVersions", "SetDefaultPolicyVersion",
               "ListEntitiesForPolicy", "TagPolicy", "UntagPolicy", "ListPolicyTags"}
_IAM_PROFILE = {"GetInstanceProfile", "DeleteInstanceProfile", "CreateInstanceProfile",
                "AddRoleToInstanceProfile", "RemoveRoleFromInstanceProfile", "TagInstanceProfile",
                "UntagInstanceProfile", "ListInstanceProfileTags"}


def _iam_backend(req: Req) -> Any:
    from moto.iam.models import iam_backends
    return iam_backends[req.account][req.partition]


def _iam_arn(req: Req, kind: str, name: str, lookup: str | None) -> str:
    """arn:aws:iam::<account>:<kind><path><name>, the path of the existing entity (or
    the request's Path for a new one)."""
    path = req.param("Path") or "/"
    if lookup:
        try:
            path = getattr(getattr(_iam_backend(req), lookup)(name), "path", path) or path
        except Exception:  # noqa: BLE001 - not there (yet): the request's path
            pass
    return f"arn:{req.partition}:iam::{req.account}:{kind}{path}{name}"


@resolver("iam")
def _iam(req: Req) -> list[Check] | None:
    context: dict[str, list[str]] = {}
    if req.param("PolicyArn") and req.op.startswith(("Attach", "Detach")):
        context["iam:policyarn"] = [str(req.param("PolicyArn"))]
    if req.param("PermissionsBoundary"):
        context["iam:permissionsboundary"] = [str(req.param("PermissionsBoundary"))]
    if req.op in ("CreateRole", "CreateUser", "CreatePolicy", "TagRole", "TagUser", "TagPolicy"):
        context.update(request_tags(req.param("Tags")))
    if req.op in _IAM_ROLE and req.param("RoleName"):
        return [req.check(_iam_arn(req, "role", str(req.param("RoleName")), "get_role"), context)]
    if req.op in _IAM_USER and (req.param("UserName") or req.op in _IAM_USER_SELF):
        name = req.param("UserName")
        if not name:  # the caller's own user; moto's `*` for a role's session
            return None
        return [req.check(_iam_arn(req, "user", str(name), "get_user"), context)]
    if req.op in _IAM_GROUP and req.param("GroupName"):
        return [req.check(_iam_arn(req, "group", str(req.param("GroupName")), "get_group"), context)]
    if req.op in _IAM_POLICY and req.param("PolicyArn"):
        return [req.check(str(req.param("PolicyArn")), context)]
    if req.op == "CreatePolicy" and req.param("PolicyName"):
        return [req.check(_iam_arn(req, "policy", str(req.param("PolicyName")), None), context)]
    if req.op in _IAM_PROFILE and req.param("InstanceProfileName"):
        profile = _iam_arn(req, "instance-profile", str(req.param("InstanceProfileName")), "get_instance_profile")
        extra = []
        if req.op == "AddRoleToInstanceProfile" and req.param("RoleName"):
            role = _iam_arn(req, "role", str(req.param("RoleName")), "get_role")
            extra.append(pass_role(req, role, "ec2.amazonaws.com", profile))
        return [req.check(profile, context), *extra]
    return None  # List* of the account, GetAccountSummary...: `*` (or moto's role ARN)


# ---- STS -----------------------------------------------------------------------------


@resolver("sts")
def _sts(req: Req) -> list[Check] | None:
    if req.op == "AssumeRole" and req.param("RoleArn"):
        context = request_tags(req.param("Tags"))
        if req.param("ExternalId") is not None:
            context["sts:externalid"] = [str(req.param("ExternalId"))]
        if req.param("RoleSessionName"):
            context["sts:rolesessionname"] = [str(req.param("RoleSessionName"))]
        return [req.check(str(req.param("RoleArn")), context)]
    return None  # GetCallerIdentity, GetSessionToken: `*`


# ---- SQS -----------------------------------------------------------------------------


@resolver("sqs")
def _sqs(req: Req) -> list[Check] | None:
    url = req.param("QueueUrl")
    if url:
        parsed = urlparse(str(url))
        parts = [p for p in parsed.path.split("/") if p]
        if len(parts) >= 2:
            host = parsed.hostname or ""
            region = host.split(".")[1] if host.startswith("sqs.") and host.count(".") >= 3 else req.region
            return [req.check(req.arn("sqs", parts[-1], region=region, account=parts[-2]))]
        return [req.check(req.arn("sqs", str(url)))]  # a queue name, which SQS also takes
    if req.op in ("CreateQueue", "GetQueueUrl") and req.param("QueueName"):
        owner = req.param("QueueOwnerAWSAccountId") or req.account
        context = request_tags(req.param("tags")) if req.op == "CreateQueue" else {}
        return [req.check(req.arn("sqs", str(req.param("QueueName")), account=str(owner)), context)]
    return None  # ListQueues: `*`


# ---- DynamoDB ------------------------------------------------------------------------


def _table_arn(req: Req, name: str, index: str | None = None) -> str:
    arn = name if name.startswith("arn:") else req.arn("dynamodb", f"table/{name}")
    return f"{arn}/index/{index}" if index else arn


@resolver("dynamodb")
def _dynamodb(req: Req) -> list[Check] | None:
    if req.op in ("BatchGetItem", "BatchWriteItem") and isinstance(req.param("RequestItems"), dict):
        return [req.check(_table_arn(req, str(t))) for t in req.param("RequestItems")]
    if req.op in ("TransactGetItems", "TransactWriteItems") and req.param("TransactItems"):
        action = {"TransactGetItems": {"Get": "GetItem"},
                  "TransactWriteItems": {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
                                         "ConditionCheck": "ConditionCheckItem"}}[req.op]
        out = []
        for item in req.param("TransactItems"):
            for kind, body in (item or {}).items():
                if kind in action and isinstance(body, dict) and body.get("TableName"):
                    out.append(Check(f"dynamodb:{action[kind]}", _table_arn(req, str(body["TableName"]))))
        return out or None
    if req.param("TableName"):
        index = req.param("IndexName") if req.op in ("Query", "Scan") else None
        return [req.check(_table_arn(req, str(req.param("TableName")), index))]
    if req.param("ResourceArn"):
        return [req.check(str(req.param("ResourceArn")))]
    return None  # ListTables, DescribeLimits...: `*`


# ---- CloudWatch Logs -----------------------------------------------------------------

# Actions on a log group, which AWS authorizes on `log-group:<name>:log-stream:` (hence
# the `log-group:<name>:*` its documentation asks a policy for).
_LOGS_GROUP = {
    "CreateLogGroup", "DeleteLogGroup", "PutRetentionPolicy", "DeleteRetentionPolicy", "DescribeLogStreams",
    "FilterLogEvents", "TagLogGroup", "UntagLogGroup", "ListTagsLogGroup", "PutSubscriptionFilter",
    "DeleteSubscriptionFilter", "DescribeSubscriptionFilters", "PutMetricFilter", "DeleteMetricFilter",
    "AssociateKmsKey", "DisassociateKmsKey", "StartQuery",
}
_LOGS_STREAM = {"CreateLogStream", "DeleteLogStream", "PutLogEvents", "GetLogEvents"}


def _group_name(req: Req) -> str | None:
    identifier = req.param("logGroupName") or req.param("logGroupIdentifier")
    if identifier and str(identifier).startswith("arn:"):
        return str(identifier).split(":log-group:", 1)[-1].split(":")[0]
    return str(identifier) if identifier else None


@resolver("logs")
def _logs(req: Req) -> list[Check] | None:
    group = _group_name(req)
    if req.op in _LOGS_STREAM and group and req.param("logStreamName"):
        return [req.check(req.arn("logs", f"log-group:{group}:log-stream:{req.param('logStreamName')}"))]
    if req.op in _LOGS_GROUP and group:
        context = request_tags(req.param("tags")) if req.op == "CreateLogGroup" else {}
        return [req.check(req.arn("logs", f"log-group:{group}:log-stream:"), context)]
    if req.op == "DescribeLogGroups":
        return [req.check(req.arn("logs", "log-group::log-stream:"))]
    if req.op in ("TagResource", "UntagResource", "ListTagsForResource") and req.param("resourceArn"):
        return [req.check(str(req.param("resourceArn")))]
    return None  # log deliveries, resource policies, Describe*: `*`


# ---- EC2 -----------------------------------------------------------------------------

_EC2_ONE = {
    "DeleteSecurityGroup": ("GroupId", "security-group"),
    "AuthorizeSecurityGroupIngress": ("GroupId", "security-group"),
    "AuthorizeSecurityGroupEgress": ("GroupId", "security-group"),
    "RevokeSecurityGroupIngress": ("GroupId", "security-group"),
    "RevokeSecurityGroupEgress": ("GroupId", "security-group"),
    "ModifySecurityGroupRules": ("GroupId", "security-group"),
    "DeleteNetworkInterface": ("NetworkInterfaceId", "network-interface"),
    "DeleteVpc": ("VpcId", "vpc"),
    "DeleteSubnet": ("SubnetId", "subnet"),
    "DeleteInternetGateway": ("InternetGatewayId", "internet-gateway"),
    "DeleteRouteTable": ("RouteTableId", "route-table"),
}
_EC2_INSTANCES = {"TerminateInstances", "StopInstances", "StartInstances", "RebootInstances"}


@resolver("ec2")
def _ec2(req: Req) -> list[Check] | None:
    if req.op in _EC2_ONE:
        param, kind = _EC2_ONE[req.op]
        value = req.param(param)
        return [req.check(req.arn("ec2", f"{kind}/{value}"))] if value else None
    if req.op in _EC2_INSTANCES:
        try:
            ids = req.response._get_multi_param("InstanceId")
        except Exception:  # noqa: BLE001
            ids = []
        return [req.check(req.arn("ec2", f"instance/{i}")) for i in ids] or None
    if req.op == "CreateVpc":
        return [req.check(req.arn("ec2", "vpc/*"))]
    if req.op == "CreateSecurityGroup":
        out = [req.check(req.arn("ec2", "security-group/*"))]
        if req.param("VpcId"):
            out.append(req.check(req.arn("ec2", f"vpc/{req.param('VpcId')}")))
        return out
    return None  # Describe*: `*`
