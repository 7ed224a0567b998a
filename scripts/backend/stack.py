"""`sam deploy` on the emulator: the translated template uploaded beside the artifacts
and passed by URL (as `sam deploy` passes a packaged template), CreateStack with the
parameters and capabilities, then DescribeStacks until the stack leaves
CREATE_IN_PROGRESS; any other end is an error carrying the stack events' reasons."""
import json
import time
from typing import Any

TERMINAL_OK = "CREATE_COMPLETE"


class DeployError(RuntimeError):
    """The stack did not reach CREATE_COMPLETE; the message holds why."""


def upload_template(s3: Any, bucket: str, key: str, template: dict[str, Any], endpoint: str) -> str:
    """The translated template as an S3 object; its path-style URL on the emulator."""
    s3.put_object(Bucket=bucket, Key=key, Body=json.dumps(template, separators=(",", ":")).encode())
    return f"{endpoint.rstrip('/')}/{bucket}/{key}"


def failure_reasons(cfn: Any, stack: str) -> list[str]:
    """`<logical id> <status>: <reason>` of every failed event, oldest first."""
    try:
        events = cfn.describe_stack_events(StackName=stack)["StackEvents"]
    except Exception as e:  # noqa: BLE001 - the reasons are a courtesy; say why they are missing
        return [f"(no stack events: {e})"]
    rows = []
    for event in reversed(events):
        status = event.get("ResourceStatus", "")
        if "FAILED" in status or "ROLLBACK" in status:
            rows.append(f"{event.get('LogicalResourceId')} {status}: {event.get('ResourceStatusReason') or '-'}")
    return rows


def create_and_wait(cfn: Any, stack: str, template_url: str, parameters: dict[str, str],
                    capabilities: list[str], timeout: float = 120.0) -> dict[str, Any]:
    """CreateStack, then the described stack once CREATE_COMPLETE; DeployError otherwise."""
    try:
        cfn.create_stack(
            StackName=stack,
            TemplateURL=template_url,
            Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in parameters.items()],
            Capabilities=capabilities,
        )
    except Exception as e:
        reasons = failure_reasons(cfn, stack)
        raise DeployError(f"CreateStack {stack} failed: {e}" + "".join(f"\n  {r}" for r in reasons)) from e
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        described = cfn.describe_stacks(StackName=stack)["Stacks"][0]
        status = described["StackStatus"]
        if not status.endswith("_IN_PROGRESS"):
            break
        if time.monotonic() > deadline:
            raise DeployError(f"stack {stack} still {status} after {timeout:.0f} s")
        time.sleep(delay)
        delay = min(delay * 2, 1.0)
    if status != TERMINAL_OK:
        reasons = failure_reasons(cfn, stack) or [described.get("StackStatusReason") or "(no reason given)"]
        raise DeployError(f"stack {stack} is {status}, not {TERMINAL_OK}:" + "".join(f"\n  {r}" for r in reasons))
    return described


def outputs_of(described: dict[str, Any]) -> dict[str, str]:
    return {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs") or []}
