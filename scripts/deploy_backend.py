#!/usr/bin/env python3
"""Deploys the project's backend into the local emulator FROM infra/template.yaml, the way
`sam package` + `sam deploy --config-file infra/samconfig.toml` deploy it to AWS
(docs/emulator.md, "The deployed backend"):

1. the state bucket (created when missing) and the customer managed policies the
   template's `DeletePolicyArn` / `ExportPolicyArn` name, from the example documents in
   infra/policies/ (infra/README.md);
2. package (`backend.package`): every local `CodeUri` / `DefinitionUri` uploaded to the
   artifacts bucket, the template pointed at the uploads;
3. the SAM transform (`backend.translate`, aws-sam-translator), as CloudFormation runs it;
4. moto's Step Functions interpreter switched on (it keeps state machines of its own, so
   it must be on when CloudFormation creates them), then CreateStack of the translated
   template (by TemplateURL, as `sam deploy` passes a packaged template) with
   samconfig.toml's stack name, capabilities and parameter overrides plus the parameters
   above; DescribeStacks until CREATE_COMPLETE, or an error with the stack events'
   reasons (`backend.stack`).

With `--env-file`, it then makes the emulator a user's account of the deployed backend:
an IAM user `cdkd-flow-admin` (`*` on `*`) and its access key, then IAM enforcement on;
the file gets the shell assignments of the environment a
user's command runs in (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, CDKD_FLOW_STATE_BUCKET,
CDKD_FLOW_BACKEND_STACK). scripts/with-emulator.sh --backend runs it so.

One line goes to stderr: the deploy time and the stack's outputs.

Usage: deploy_backend.py [--stack NAME] [--state-bucket BUCKET] [--env-file PATH]
Needs AWS_ENDPOINT_URL on 127.0.0.1 (the emulator) and IAM enforcement off.
"""
import time

STARTED = time.monotonic()  # before the imports below: the deploy time counts them

import argparse  # noqa: E402
import os  # noqa: E402
import shlex  # noqa: E402
import sys  # noqa: E402
import tomllib  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402
from urllib.parse import urlparse  # noqa: E402

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from backend import account, package, stack, translate  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = REPO / "infra" / "template.yaml"
SAMCONFIG = REPO / "infra" / "samconfig.toml"
POLICIES = REPO / "infra" / "policies"
ACCOUNT = "123456789012"  # moto's default account, the one with-emulator.sh's keys are of
DEFAULT_STATE_BUCKET = f"cdkd-state-{ACCOUNT}"


@dataclass
class Deployed:
    stack: str
    state_bucket: str
    outputs: dict[str, str]
    seconds: float
    parameters: dict[str, str] = field(default_factory=dict)


def endpoint() -> str:
    """The emulator's URL; refuses anything but a local address (never a real AWS)."""
    url = os.environ.get("AWS_ENDPOINT_URL", "")
    if urlparse(url).hostname not in ("127.0.0.1", "localhost"):
        raise SystemExit("deploy_backend: AWS_ENDPOINT_URL must name the local emulator (127.0.0.1)")
    return url


def client(service: str, region: str) -> Any:
    """A client of the emulator with the environment's credentials (with-emulator.sh's
    dummy ones while IAM is not enforced). No retries: a request the emulator fails is
    not sent again (a retried CreateStack would only say that the stack exists)."""
    return boto3.client(
        service, endpoint_url=endpoint(), region_name=region,
        config=Config(retries={"total_max_attempts": 1}),
    )


def samconfig(path: Path = SAMCONFIG) -> dict[str, Any]:
    """`sam deploy`'s settings from samconfig.toml's default environment: stack name,
    capabilities, artifacts prefix and parameter overrides."""
    with path.open("rb") as f:
        config = tomllib.load(f)
    default = config.get("default", {})
    merged: dict[str, Any] = {}
    for section in ("global", "deploy"):
        merged.update(default.get(section, {}).get("parameters", {}))
    overrides: dict[str, str] = {}
    for item in shlex.split(merged.get("parameter_overrides", "")):
        key, _, value = item.partition("=")
        overrides[key] = value
    capabilities = merged.get("capabilities", "CAPABILITY_IAM")
    return {
        "stack_name": merged.get("stack_name", "cdkd-flow"),
        "capabilities": capabilities.split() if isinstance(capabilities, str) else list(capabilities),
        "s3_prefix": merged.get("s3_prefix", "cdkd-flow"),
        "parameter_overrides": overrides,
    }


def deploy(stack_name: str | None = None, state_bucket: str | None = None,
           region: str = "us-east-1", extra_parameters: dict[str, str] | None = None) -> Deployed:
    """Deploys infra/template.yaml as stack `stack_name` (samconfig.toml's by default)."""
    started = time.monotonic()
    config = samconfig()
    stack_name = stack_name or config["stack_name"]
    state_bucket = state_bucket or DEFAULT_STATE_BUCKET
    s3, iam = client("s3", region), client("iam", region)
    cfn = client("cloudformation", region)

    account.ensure_bucket(s3, state_bucket, region)
    parameters = dict(config["parameter_overrides"])
    parameters["StateBucket"] = state_bucket
    parameters.update(account.operator_policies(iam, POLICIES, ACCOUNT))
    parameters.update(extra_parameters or {})

    # sam deploy's resolve_s3: a bucket of the account for the artifacts.
    artifacts = f"cdkd-flow-artifacts-{ACCOUNT}-{region}"
    account.ensure_bucket(s3, artifacts, region)
    uploader = package.Uploader(s3, artifacts, config["s3_prefix"])
    packaged = package.package(package.load_template(TEMPLATE), TEMPLATE.parent, uploader)
    translated = translate.translate(packaged, parameters, region)
    template_url = stack.upload_template(
        s3, artifacts, f"{config['s3_prefix']}/{stack_name}.template.json", translated, endpoint()
    )
    declared = translated.get("Parameters", {})
    # moto's Step Functions interpreter keeps state machines of its own: it is switched
    # on first, so that the stack's state machines are the ones executions run.
    account.step_functions_interpreter(endpoint(), True)
    described = stack.create_and_wait(
        cfn, stack_name, template_url,
        {k: v for k, v in parameters.items() if k in declared},
        config["capabilities"],
    )
    return Deployed(stack_name, state_bucket, stack.outputs_of(described),
                    time.monotonic() - started, parameters)


def open_for_users(region: str = "us-east-1") -> tuple[str, str]:
    """The administrator's access key; then IAM enforced."""
    key_id, secret = account.admin_key(client("iam", region))
    account.enforce_iam(endpoint())
    return key_id, secret


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stack", default=None, help="stack name (default: samconfig.toml's stack_name)")
    parser.add_argument("--state-bucket", default=os.environ.get("CDKD_FLOW_STATE_BUCKET") or DEFAULT_STATE_BUCKET)
    parser.add_argument("--env-file", type=Path, default=None,
                        help="then create the admin user, enforce IAM, and write the user's environment here")
    args = parser.parse_args()
    region = os.environ.get("AWS_REGION") or "us-east-1"
    try:
        deployed = deploy(args.stack, args.state_bucket, region)
    except (stack.DeployError, FileNotFoundError, ValueError) as e:
        print(f"backend: deploy failed: {e}", file=sys.stderr)
        sys.exit(1)
    outputs = " ".join(f"{k}={v}" for k, v in sorted(deployed.outputs.items()))
    print(f"backend: stack {deployed.stack} CREATE_COMPLETE, deployed in {time.monotonic() - STARTED:.1f} s "
          f"(package, transform and CreateStack {deployed.seconds:.1f} s); outputs: {outputs}",
          file=sys.stderr, flush=True)
    if args.env_file is not None:
        key_id, secret = open_for_users(region)
        env = {
            "AWS_ACCESS_KEY_ID": key_id,
            "AWS_SECRET_ACCESS_KEY": secret,
            "CDKD_FLOW_STATE_BUCKET": deployed.state_bucket,
            "CDKD_FLOW_BACKEND_STACK": deployed.stack,
        }
        args.env_file.write_text("".join(f"{k}={shlex.quote(v)}\n" for k, v in env.items()))


if __name__ == "__main__":
    main()
