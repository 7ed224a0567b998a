"""The interpreter's own requests (a Task's lambda:InvokeFunction, states:StartExecution,
the .sync DescribeExecution/StopExecution, ...) are signed with the credentials of the
state machine's execution role, so that with IAM enforcement on they are allowed or
denied by that role's policies, as on AWS: "Step Functions assumes the IAM role you
specify for the state machine to call the services its states use"
(https://docs.aws.amazon.com/step-functions/latest/dg/procedure-create-iam-role.html,
https://docs.aws.amazon.com/step-functions/latest/dg/service-integration-iam-templates.html).

moto's `asl/utils/boto_client.boto_client_for(region, service, state_credentials)` signed
everything with the keys `ak`/`sk` (refused once enforcement is on). Its replacement
assumes the role named by `state_credentials.role_arn` (the execution's roleArn, or a
Task's `Credentials.RoleArn`) through moto's STS backend in-process, caches the
credentials per role (renewed when moto was reset or they near their expiry), and caches
one client per (service, region, key). Requests go to the emulator itself on 127.0.0.1,
with `cdkd-emulator/sfn-interpreter` in their User-Agent.
Without a role ARN, or when the role ARN cannot be assumed (not an IAM role ARN), the
request is signed with `ak`/`sk` as before."""
import datetime
import logging
import threading
from typing import Any

LOG = logging.getLogger(__name__)

SESSION_NAME = "cdkd-emulator-states"
# In the User-Agent of every request the interpreter sends (a request count may tell them
# from the clients' own).
USER_AGENT = "cdkd-emulator/sfn-interpreter"
DURATION = 3600

# A region of each partition: moto's STS backend picks the partition from a region.
_PARTITION_REGION = {"aws": "us-east-1", "aws-cn": "cn-north-1", "aws-us-gov": "us-gov-west-1"}

_lock = threading.Lock()
_roles: dict[str, Any] = {}  # role ARN -> moto AssumedRole
_clients: dict[tuple[str, str, str], Any] = {}


def _assume(role_arn: str) -> Any | None:
    """moto's AssumedRole for the role (cached), or None when it is not a role ARN."""
    from moto.core.utils import utcnow
    from moto.sts.models import sts_backends

    parts = role_arn.split(":") if isinstance(role_arn, str) else []
    if len(parts) < 6 or parts[2] != "iam" or not parts[4] or not parts[5].startswith("role/"):
        return None
    partition, account = parts[1], parts[4]
    backend = sts_backends[account][partition]
    now = utcnow()
    with _lock:
        cached = _roles.get(role_arn)
        if (
            cached is not None
            and any(r is cached for r in backend.assumed_roles)
            and cached.expiration - now > datetime.timedelta(seconds=300)
        ):
            return cached
        role = backend.assume_role(
            region_name=_PARTITION_REGION.get(partition, "us-east-1"),
            role_session_name=SESSION_NAME,
            role_arn=role_arn,
            policy=None,
            duration=DURATION,
            external_id=None,
        )
        _roles[role_arn] = role
        return role


def credentials_for(role_arn: str | None) -> tuple[str, str, str | None]:
    """(access key, secret key, session token) the interpreter signs with for the role."""
    if role_arn:
        try:
            role = _assume(role_arn)
        except Exception:  # a malformed ARN, an unknown partition: sign as before
            LOG.exception("could not assume %s for the Step Functions interpreter", role_arn)
            role = None
        if role is not None:
            return role.access_key_id, role.secret_access_key, role.session_token
    return "ak", "sk", None


def boto_client_for(region: str, service: str, state_credentials: Any = None) -> Any:
    import boto3
    from botocore.config import Config
    from moto.core.models import botocore_stubber
    from moto.settings import moto_server_port
    from moto.stepfunctions.parser.asl.component.common.timeouts.timeout import TimeoutSeconds

    role_arn = getattr(state_credentials, "role_arn", None)
    key, secret, token = credentials_for(role_arn)
    intercepting = botocore_stubber.enabled
    cache_key = (service, region, key if not intercepting else f"stub:{key}")
    with _lock:
        client = _clients.get(cache_key)
        if client is not None:
            return client
        kwargs: dict[str, Any] = {}
        if not intercepting:
            kwargs["endpoint_url"] = f"http://127.0.0.1:{moto_server_port()}"
        client = boto3.client(
            service_name=service,
            region_name=region,
            aws_access_key_id=key,
            aws_secret_access_key=secret,
            aws_session_token=token,
            config=Config(
                user_agent_extra=USER_AGENT,
                parameter_validation=False,
                retries={"max_attempts": 0, "total_max_attempts": 1},
                connect_timeout=TimeoutSeconds.DEFAULT_TIMEOUT_SECONDS,
                read_timeout=TimeoutSeconds.DEFAULT_TIMEOUT_SECONDS,
            ),
            **kwargs,
        )
        _clients[cache_key] = client
        return client


# Every module of moto's interpreter that imported `boto_client_for` by name.
_IMPORTERS = (
    "moto.stepfunctions.parser.asl.utils.boto_client",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.lambda_eval_utils",
    "moto.stepfunctions.parser.asl.component.state.exec.state_map.result_writer.resource_eval.resource_eval_s3",
    "moto.stepfunctions.parser.asl.component.state.exec.state_map.item_reader.eval.resource_eval_s3",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_unsupported",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_glue",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_events",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_ecs",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sqs",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sfn",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_dynamodb",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_batch",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sns",
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_aws_sdk",
)


def install() -> None:
    import importlib

    for name in _IMPORTERS:
        module = importlib.import_module(name)
        if not hasattr(module, "boto_client_for"):
            raise RuntimeError(f"{name} no longer imports boto_client_for: recheck sfn_auth")
        module.boto_client_for = boto_client_for  # type: ignore[attr-defined]
