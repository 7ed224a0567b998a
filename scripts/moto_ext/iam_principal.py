"""The caller of a signed request as IAM sees it, for `iam_enforce`: its ARN, the
policies that apply (an IAM user's inline, attached and group policies; an assumed
role's inline and attached policies, moto's `collect_policies`), the role's permissions
boundary and the AssumeRole session policy, and the global condition keys that describe
it (aws:PrincipalArn, aws:PrincipalAccount, aws:PrincipalType, aws:userid, aws:username,
aws:PrincipalTag/<key>, aws:RequestedRegion)."""
from dataclasses import dataclass
from typing import Any

from .iam_conditions import Context
from .iam_policy import Document, parse


@dataclass
class Principal:
    arn: str  # the caller: a user, or an assumed-role session
    identity_arn: str  # aws:PrincipalArn: the user, or the role behind the session
    account: str
    documents: list[Document]
    boundary: Document | None
    session: Document | None
    context: Context


def _policy_document(policy: Any) -> Document:
    if hasattr(policy, "versions"):  # a managed policy
        version = next(v for v in policy.versions if v.is_default)
        return parse(version.document, policy.arn)
    if isinstance(policy, dict):
        return parse(policy["policy_document"])
    return parse(policy)


def _tags(tags: Any) -> dict[str, str]:
    if isinstance(tags, list):
        return {str(t.get("Key")): str(t.get("Value")) for t in tags if isinstance(t, dict)}
    if isinstance(tags, dict):
        return {str(k): str(v.get("Value") if isinstance(v, dict) else v) for k, v in tags.items()}
    return {}


def _boundary(backend: Any, arn: str | None) -> Document | None:
    if not arn:
        return None
    try:
        return _policy_document(backend.get_policy(arn))
    except Exception:  # noqa: BLE001 - a boundary that does not exist allows nothing
        return Document([], arn)


def principal_of(access_key: Any, region: str) -> Principal:
    """The caller behind moto's access key object (IAMUserAccessKey or AssumedRoleAccessKey)."""
    from moto.iam.access_control import AssumedRoleAccessKey
    from moto.sts.models import sts_backends

    backend = access_key.backend
    try:
        documents = [_policy_document(p) for p in access_key.collect_policies()]
    except Exception:  # noqa: BLE001 - a session of a role deleted since: no policies
        documents = []
    account, partition = access_key.account_id, access_key.partition
    context: Context = {"aws:principalaccount": [account], "aws:requestedregion": [region]}
    boundary = session = None
    if isinstance(access_key, AssumedRoleAccessKey):
        assumed = next(r for r in sts_backends[account][partition].assumed_roles
                       if r.access_key_id == access_key._access_key_id)
        identity_arn = assumed.role_arn
        context.update({"aws:principaltype": ["AssumedRole"], "aws:userid": [assumed.user_id]})
        if assumed.policy:
            session = parse(assumed.policy, "session policy")
        try:
            role = backend.get_role_by_arn(assumed.role_arn)
        except Exception:  # noqa: BLE001
            role = None
        if role is not None:
            boundary = _boundary(backend, getattr(role, "permissions_boundary_arn", None))
            tags = _tags(role.tags)
        else:
            tags = {}
    else:
        user = backend.get_user(access_key._owner_user_name)
        identity_arn = user.arn
        context.update({"aws:principaltype": ["User"], "aws:username": [user.name], "aws:userid": [user.id]})
        # (moto keeps no permissions boundary for users)
        try:
            tags = _tags(backend.tagger.list_tags_for_resource(user.arn)["Tags"])
        except Exception:  # noqa: BLE001
            tags = {}
    context["aws:principalarn"] = [identity_arn]
    for key, value in tags.items():
        context[f"aws:principaltag/{key.lower()}"] = [value]
    return Principal(access_key.arn, identity_arn, account, documents, boundary, session, context)
