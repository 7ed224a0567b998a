"""CloudFormation custom resources backed by an SNS topic, as AWS documents them
("Amazon SNS-backed custom resources"): moto 5.2.5 only knows a Lambda ServiceToken (and
its Lambda cannot run code here), so an SNS token failed the request and left the stack
in progress for ever.

- Creating a custom resource whose `ServiceToken` is an SNS topic ARN publishes the
  request (`RequestType: Create`, `ResponseURL`, `StackId`, `RequestId`,
  `LogicalResourceId`, `ResourceType`, `ResourceProperties`) to the topic; the
  `ResponseURL` is this emulator's `cfnresponse` endpoint on 127.0.0.1.
- The stack stays `CREATE_IN_PROGRESS` / `UPDATE_IN_PROGRESS` until every such resource
  has an answer. `SUCCESS` records its `PhysicalResourceId` and `Data`; when every answer
  is in, the stack is `*_COMPLETE`. `FAILED` ends the operation in `ROLLBACK_COMPLETE`
  (a create) or `UPDATE_ROLLBACK_COMPLETE` with a `*_FAILED` event carrying the
  provider's `Reason`, as CloudFormation reports it. The rollback itself (undoing the
  update) is not modelled.

A Lambda ServiceToken keeps moto's own behaviour."""
import json
from typing import Any

from moto import settings
from moto.cloudformation import custom_model
from moto.cloudformation.models import CloudFormationBackend, Stack
from moto.cloudformation.responses import CloudFormationResponse
from moto.moto_api._internal import mock_random

from .cfn_import import find_change_set

_originals: dict[str, Any] = {}


def _is_sns(token: Any) -> bool:
    return isinstance(token, str) and token.startswith("arn:aws:sns:")


def _create(cls: Any, resource_name: str, cloudformation_json: dict[str, Any], account_id: str,
            region_name: str, **kwargs: Any) -> Any:
    properties = cloudformation_json.get("Properties", {})
    token = properties.get("ServiceToken")
    if not _is_sns(token):
        return _originals["create"](resource_name, cloudformation_json, account_id, region_name, **kwargs)
    from moto.cloudformation import cloudformation_backends
    from moto.sns.models import sns_backends

    stack_id = kwargs["StackId"]
    logical_id = kwargs["LogicalId"]
    request_id = str(mock_random.uuid4())
    resource = custom_model.CustomModel(region_name, request_id, logical_id, resource_name)
    resource.sns_backed = True  # type: ignore[attr-defined]
    stack = cloudformation_backends[account_id][region_name].get_stack(stack_id)
    stack.add_custom_resource(resource)
    port = settings.moto_server_port()
    event = {
        "RequestType": "Create",
        "ServiceToken": token,
        "ResponseURL": f"http://127.0.0.1:{port}/cloudformation_{region_name}/cfnresponse?stack={stack_id}",
        "StackId": stack_id,
        "RequestId": request_id,
        "LogicalResourceId": logical_id,
        "ResourceType": kwargs["ResourceType"],
        "ResourceProperties": properties,
    }
    _, _, _, topic_region, topic_account, _ = token.split(":", 5)
    sns_backends[topic_account][topic_region].publish(json.dumps(event), arn=token)
    return resource


def waiting(stack: Any) -> list[Any]:
    """The SNS-backed custom resources of `stack` still without an answer."""
    return [
        r for r in stack.custom_resources.values()
        if getattr(r, "sns_backed", False) and not r.is_created() and not getattr(r, "failed", False)
    ]


def _execute_change_set(self: CloudFormationBackend, change_set_name: str, stack_name: str | None = None) -> None:
    stack_id = find_change_set(self, change_set_name, stack_name).stack_id
    _originals["execute"](self, change_set_name, stack_name)
    stack = self.stacks.get(stack_id)
    if stack is not None and stack.status in ("CREATE_COMPLETE", "UPDATE_COMPLETE") and waiting(stack):
        operation = stack.status.split("_")[0]
        if stack.events and stack.events[-1].resource_status == stack.status:
            stack.events.pop()
        stack.status = f"{operation}_IN_PROGRESS"


def _verify_readiness(self: Stack) -> None:
    if self.status == "UPDATE_IN_PROGRESS":
        if not waiting(self):
            self.status = "UPDATE_COMPLETE"
            self._add_stack_event("UPDATE_COMPLETE")
        return
    if self.status == "CREATE_IN_PROGRESS" and waiting(self):
        return
    _originals["verify"](self)


def _process_cfn_response(self: CloudFormationResponse) -> Any:
    stack_id = self._get_param("StackId")
    logical_id = self._get_param("LogicalResourceId")
    status = self._get_param("Status")
    stack = self.cloudformation_backend.get_stack(stack_id)
    resource = stack.custom_resources.get(logical_id) if stack is not None else None
    if resource is not None and getattr(resource, "sns_backed", False):
        physical_id = self._get_param("PhysicalResourceId")
        if physical_id:
            resource.resource_name = physical_id
        if status == "FAILED":
            resource.failed = True
            reason = self._get_param("Reason") or "no reason given"
            operation = "UPDATE" if stack.status.startswith("UPDATE") else "CREATE"
            stack._add_stack_event(
                f"{operation}_FAILED",
                resource_status_reason=f"Received response status [FAILED] from custom resource. Message returned: {reason}",
            )
            stack.status = "UPDATE_ROLLBACK_COMPLETE" if operation == "UPDATE" else "ROLLBACK_COMPLETE"
            stack._add_stack_event(stack.status)
            return 200, {"status": 200}, json.dumps("{}")
    return _originals["respond"](self)


def install() -> None:
    """Applies the extension once."""
    if _originals:
        return
    _originals["create"] = custom_model.CustomModel.create_from_cloudformation_json
    custom_model.CustomModel.create_from_cloudformation_json = classmethod(_create)  # type: ignore[method-assign,assignment]
    _originals["execute"] = CloudFormationBackend.execute_change_set
    CloudFormationBackend.execute_change_set = _execute_change_set  # type: ignore[method-assign]
    _originals["verify"] = Stack.verify_readiness
    Stack.verify_readiness = _verify_readiness  # type: ignore[method-assign]
    _originals["respond"] = CloudFormationResponse.process_cfn_response
    CloudFormationResponse.process_cfn_response = _process_cfn_response  # type: ignore[method-assign]
