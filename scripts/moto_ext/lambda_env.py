"""What a Lambda function's process is given (lambda_runtime.py): its environment, as Lambda
gives it to a custom runtime
(https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime),
the execution role's credentials, the function's code unpacked (`LAMBDA_TASK_ROOT`), and
the directory of its log."""
import io
import os
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOG_DIR_ENV = "CDKD_EMULATOR_LOG_DIR"
_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Spec:
    """What an invocation needs of the function, read from moto under the lock."""

    account: str
    region: str
    name: str
    arn: str  # moto's function_arn: unqualified for $LATEST, else the version's
    version: str
    handler: str
    runtime: str
    memory: int
    timeout: float
    role: str
    env: tuple[tuple[str, str], ...]
    log_group: str
    code_sha: str
    last_modified: str

    @classmethod
    def of(cls, fn: Any) -> "Spec":
        return cls(
            account=fn.account_id, region=fn.region, name=fn.function_name, arn=fn.function_arn,
            version=str(fn.version), handler=str(fn.handler or ""), runtime=str(fn.run_time),
            memory=int(fn.memory_size or 128), timeout=float(fn.timeout or 3), role=str(fn.role),
            env=tuple(sorted((str(k), str(v)) for k, v in (fn.environment_vars or {}).items())),
            log_group=fn.logs_group_name, code_sha=str(getattr(fn, "code_sha_256", "")),
            last_modified=str(fn.last_modified),
        )


def log_dir() -> Path:
    base = Path(os.environ.get(LOG_DIR_ENV) or _ROOT / ".emulator")
    path = base / f"lambda-{os.environ.get('MOTO_PORT', 'inprocess')}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def task_root(spec: Spec, code: bytes) -> str:
    """The function's zip unpacked once per code version (`LAMBDA_TASK_ROOT`)."""
    root = log_dir() / "task" / f"{spec.account}-{spec.name}-{spec.code_sha[:16] or 'nocode'}"
    if not root.is_dir():
        staging = root.with_name(root.name + f".{uuid.uuid4().hex[:8]}")
        staging.mkdir(parents=True)
        try:
            with zipfile.ZipFile(io.BytesIO(code)) as z:
                z.extractall(staging)
        except (zipfile.BadZipFile, OSError, ValueError):
            pass
        try:
            staging.rename(root)
        except OSError:  # another invocation unpacked it first
            pass
    return str(root)


def credentials(spec: Spec) -> tuple[str, str, str]:
    """The execution role's temporary credentials, from moto's STS (call under LOCK)."""
    from moto.sts.models import sts_backends
    from moto.utilities.utils import get_partition

    role = sts_backends[spec.account][get_partition(spec.region)].assume_role(
        region_name=spec.region, role_session_name=spec.name[:64], role_arn=spec.role,
        policy=None, duration=43200, external_id=None,
    )
    return role.access_key_id, role.secret_access_key, role.session_token


def environment(spec: Spec, stream: str, root: str, creds: tuple[str, str, str]) -> dict[str, str]:
    env = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ}
    env.update(dict(spec.env))
    env.update({
        "_HANDLER": spec.handler,
        "AWS_EXECUTION_ENV": f"AWS_Lambda_{spec.runtime}",
        "AWS_LAMBDA_FUNCTION_NAME": spec.name,
        "AWS_LAMBDA_FUNCTION_VERSION": spec.version,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory),
        "AWS_LAMBDA_LOG_GROUP_NAME": spec.log_group,
        "AWS_LAMBDA_LOG_STREAM_NAME": stream,
        "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
        "AWS_REGION": spec.region,
        "AWS_DEFAULT_REGION": spec.region,
        "LAMBDA_TASK_ROOT": root,
        "LANG": "en_US.UTF-8",
        "TZ": ":UTC",
        "AWS_ACCESS_KEY_ID": creds[0],
        "AWS_SECRET_ACCESS_KEY": creds[1],
        "AWS_SESSION_TOKEN": creds[2],
        "AWS_ENDPOINT_URL": "http://127.0.0.1:%s" % os.environ.get("MOTO_PORT", "5000"),
        "AWS_EC2_METADATA_DISABLED": "true",
    })
    return env
