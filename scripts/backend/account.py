"""What exists in the account before and after the deploy, as an operator would have it:
the state bucket, the customer managed policies the template's policy-ARN parameters
name (infra/policies/*.json, the documented examples), the administrator who runs the
CLI, and the emulator switched to AWS's behaviour for the run (IAM enforced, the Step
Functions interpreter on)."""
import json
import urllib.request
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

# Template parameter -> (the example policy under infra/policies/, its name in IAM).
POLICY_PARAMETERS = {
    "DeletePolicyArn": ("delete.json", "cdkd-flow-delete"),
    "ExportPolicyArn": ("export.json", "cdkd-flow-export"),
}
ADMIN_USER = "cdkd-flow-admin"
ADMIN_POLICY = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}


def ensure_bucket(s3: Any, bucket: str, region: str) -> None:
    """The bucket, created when missing (us-east-1 takes no location constraint)."""
    try:
        s3.head_bucket(Bucket=bucket)
        return
    except ClientError as e:
        if e.response.get("Error", {}).get("Code") not in ("404", "NoSuchBucket", "NotFound"):
            raise
    if region == "us-east-1":
        s3.create_bucket(Bucket=bucket)
    else:
        s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": region})


def ensure_policy(iam: Any, name: str, document: str, account: str) -> str:
    """The customer managed policy `name` holding `document`: created, or given the
    document as its new default version when it exists with another one. Its ARN."""
    arn = f"arn:aws:iam::{account}:policy/{name}"
    try:
        policy = iam.get_policy(PolicyArn=arn)["Policy"]
    except ClientError as e:
        if e.response.get("Error", {}).get("Code") != "NoSuchEntity":
            raise
        return iam.create_policy(PolicyName=name, PolicyDocument=document,
                                 Description=f"cdkd-flow example policy ({name})")["Policy"]["Arn"]
    current = iam.get_policy_version(PolicyArn=arn, VersionId=policy["DefaultVersionId"])["PolicyVersion"]["Document"]
    if isinstance(current, str):
        current = json.loads(current)
    if current != json.loads(document):
        versions = iam.list_policy_versions(PolicyArn=arn)["Versions"]
        for old in [v for v in versions if not v["IsDefaultVersion"]][: max(0, len(versions) - 4)]:
            iam.delete_policy_version(PolicyArn=arn, VersionId=old["VersionId"])
        iam.create_policy_version(PolicyArn=arn, PolicyDocument=document, SetAsDefault=True)
    return arn


def operator_policies(iam: Any, policies_dir: Path, account: str) -> dict[str, str]:
    """Template parameter -> ARN of the example policy an operator would attach."""
    out = {}
    for parameter, (file_name, policy_name) in POLICY_PARAMETERS.items():
        document = (policies_dir / file_name).read_text(encoding="utf-8")
        out[parameter] = ensure_policy(iam, policy_name, json.dumps(json.loads(document)), account)
    return out


def admin_key(iam: Any, user: str = ADMIN_USER) -> tuple[str, str]:
    """An IAM user allowed everything (inline `*` on `*`, what AdministratorAccess
    grants) and a new access key of it: (key id, secret)."""
    try:
        iam.create_user(UserName=user)
    except ClientError as e:
        if e.response.get("Error", {}).get("Code") != "EntityAlreadyExists":
            raise
    iam.put_user_policy(UserName=user, PolicyName="AdministratorAccess", PolicyDocument=json.dumps(ADMIN_POLICY))
    key = iam.create_access_key(UserName=user)["AccessKey"]
    return key["AccessKeyId"], key["SecretAccessKey"]


def _post(endpoint: str, path: str, body: bytes, content_type: str) -> bytes:
    """A POST to moto's own API. The type is never form-encoded (urllib's default): the
    server would read a form and find no body."""
    request = urllib.request.Request(f"{endpoint.rstrip('/')}{path}", data=body, method="POST",
                                     headers={"Content-Type": content_type})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.read()


def reset_auth(endpoint: str, count: str) -> str:
    """moto's IAM enforcement, emulator-wide: `count` requests more go unchecked (`0`:
    every later request is checked against its caller's policies; `inf`: none is). The
    previous setting, to restore it."""
    answer = json.loads(_post(endpoint, "/moto-api/reset-auth", count.encode(), "text/plain"))
    return str(answer.get("PREVIOUS_INITIAL_NO_AUTH_ACTION_COUNT", "inf"))


def enforce_iam(endpoint: str) -> str:
    """IAM enforced from the next request on; the previous setting."""
    return reset_auth(endpoint, "0")


def step_functions_interpreter(endpoint: str, on: bool = True) -> bool:
    """moto's Step Functions interpreter (executions run their definitions) on or off;
    whether it was on before."""
    with urllib.request.urlopen(f"{endpoint.rstrip('/')}/moto-api/config", timeout=10) as answer:
        before = bool(json.loads(answer.read()).get("stepfunctions", {}).get("execute_state_machine"))
    body = json.dumps({"stepfunctions": {"execute_state_machine": on}}).encode()
    _post(endpoint, "/moto-api/config", body, "application/json")
    return before
