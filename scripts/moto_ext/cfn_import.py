"""CloudFormation resource import (IMPORT change sets) on the pinned moto, installed
by patching moto's CloudFormation response and backend classes at start-up.

- `CreateChangeSet` with `ChangeSetType=IMPORT` is handled here (`cfn_rules`,
  `cfn_execute`); every other type goes to moto. The template limits are checked in
  front of either (`cfn_limits`, installed last).
- `ExecuteChangeSet` refuses a change set that is not AVAILABLE, runs an IMPORT change
  set itself, and rebuilds the stack's Outputs after any other (moto never did).
- `GetTemplate` with `ChangeSetName` answers that change set's template; Describe-,
  Delete- and ExecuteChangeSet find a change set by name within the named stack
  (`ChangeSetNotFound` otherwise); `ListChangeSets` lists only the named stack's change
  sets (moto listed every stack's).
The corrections moto needs for imported resources to behave as a stack's own are in
`cfn_fixes`."""
from typing import Any

from moto.cloudformation import responses
from moto.cloudformation.exceptions import CloudFormationError, ValidationError
from moto.cloudformation.models import ChangeSet, CloudFormationBackend
from moto.core.responses import ActionResult, EmptyResult

from . import cfn_execute, cfn_fixes, cfn_limits, cfn_outputs, cfn_templates

_originals: dict[str, Any] = {}


class InvalidChangeSetStatus(CloudFormationError):
    code = "InvalidChangeSetStatus"


class ChangeSetNotFound(CloudFormationError):
    code = "ChangeSetNotFound"

    def __init__(self, name: str) -> None:
        super().__init__(f"ChangeSet [{name}] does not exist")


# moto finds an error's service model from the module the exception class is defined in.
InvalidChangeSetStatus.__module__ = ChangeSetNotFound.__module__ = "moto.cloudformation.exceptions"


def find_change_set(backend: Any, name_or_id: str, stack_name: str | None) -> ChangeSet:
    """A change set by id, or by name within the named stack (moto took the last one of
    that name in any stack); ChangeSetNotFound otherwise."""
    if name_or_id in backend.change_sets:
        return backend.change_sets[name_or_id]
    named = [
        cs for cs in backend.change_sets.values()
        if cs.change_set_name == name_or_id
        and (not stack_name or stack_name in (cs.stack_name, cs.stack_id))
    ]
    live = [cs for cs in named if cs.stack_id in backend.stacks]
    if not named:
        raise ChangeSetNotFound(name_or_id)
    return (live or named)[-1]


def describe_change_set(self: Any) -> ActionResult:
    """DescribeChangeSet, within the named stack."""
    return ActionResult(find_change_set(
        self.cloudformation_backend, self._get_param("ChangeSetName"), self._get_param("StackName")
    ))


def delete_change_set(self: Any) -> EmptyResult:
    """DeleteChangeSet, within the named stack."""
    backend = self.cloudformation_backend
    change_set = find_change_set(backend, self._get_param("ChangeSetName"), self._get_param("StackName"))
    del backend.change_sets[change_set.change_set_id]
    return EmptyResult()


def list_change_sets(self: Any) -> ActionResult:
    """ListChangeSets: the change sets of the named stack only (by name: the live stack;
    by id: that stack, deleted or not); a stack that does not exist is a ValidationError."""
    backend = self.cloudformation_backend
    name_or_id = self._get_param("StackName")
    stack = cfn_execute.find_stack(backend, name_or_id) or backend.deleted_stacks.get(name_or_id)
    if stack is None:
        raise ValidationError(name_or_id)
    return ActionResult({"Summaries": [
        cs for cs in backend.change_sets.values() if cs.stack_id == stack.stack_id
    ]})


def _template_text(response: Any, stack_name: str) -> str:
    body, url = response._get_param("TemplateBody"), response._get_param("TemplateURL")
    if body and url:
        raise ValidationError(message="Specify either TemplateBody or TemplateURL, not both.")
    if url:
        return cfn_templates.read_template_url(url, response.current_account, response.partition)
    if body:
        return body
    if response._get_bool_param("UsePreviousTemplate", False):
        stack = cfn_execute.find_stack(response.cloudformation_backend, stack_name)
        if stack is not None and isinstance(stack.template, str) and stack.template:
            return stack.template
    raise ValidationError(message="Either Template URL or Template Body must be specified.")


def _parameters(response: Any, stack_name: str) -> dict[str, str]:
    stack = cfn_execute.find_stack(response.cloudformation_backend, stack_name)
    previous = dict(stack.parameters or {}) if stack is not None else {}
    values: dict[str, str] = {}
    for item in response._get_param("Parameters", []):
        key = item.get("ParameterKey")
        if item.get("UsePreviousValue") and key in previous:
            values[key] = previous[key]
        elif key is not None:
            values[key] = item.get("ParameterValue", "")
    return values


def create_change_set(self: Any) -> ActionResult:
    """CreateChangeSet: IMPORT here, any other type in moto (the template limits are
    checked in front of it, `cfn_limits`)."""
    if self._get_param("ChangeSetType", "CREATE") != "IMPORT":
        return _originals["create_change_set"](self)
    if self._get_bool_param("IncludeNestedStacks", False):
        raise ValidationError(
            message="IncludeNestedStacks is not supported for a change set of type IMPORT."
        )
    stack_name = self._get_param("StackName")
    if not stack_name:
        raise ValidationError(message="StackName is required.")
    options = {
        "description": self._get_param("Description"),
        "notification_arns": self._get_param("NotificationARNs", []),
        "tags": {t["Key"]: t["Value"] for t in self._get_param("Tags", []) if "Key" in t},
        "role_arn": self._get_param("RoleARN"),
    }
    change_set_id, stack_id = cfn_execute.create_import_change_set(
        self.cloudformation_backend,
        stack_name,
        self._get_param("ChangeSetName"),
        _template_text(self, stack_name),
        _parameters(self, stack_name),
        self._get_param("ResourcesToImport", []),
        options,
    )
    return ActionResult({"Id": change_set_id, "StackId": stack_id})


def execute_change_set(self: CloudFormationBackend, change_set_name: str, stack_name: str | None = None) -> None:
    """ExecuteChangeSet: only an AVAILABLE change set; Outputs rebuilt afterwards."""
    change_set = find_change_set(self, change_set_name, stack_name)
    if change_set.stack_id not in self.stacks:
        raise ValidationError(change_set.stack_id)
    if change_set.status != "CREATE_COMPLETE" or change_set.execution_status != "AVAILABLE":
        raise InvalidChangeSetStatus(
            f"ChangeSet [{change_set.change_set_id}] cannot be executed in its current status "
            f"of [{change_set.status}]"
        )
    if change_set.change_set_type == "IMPORT":
        cfn_execute.execute_import(self, change_set)
        return
    stack = self.stacks[change_set.stack_id]
    before = (stack.template, stack.status)
    _originals["execute_change_set"](self, change_set.change_set_id, stack_name)
    stack = self.stacks[change_set.stack_id]
    try:
        cfn_outputs.refresh(self, stack)
        cfn_outputs.evaluate(stack)
    except Exception as e:  # noqa: BLE001 - any Output AWS cannot resolve fails the update
        cfn_outputs.roll_back_update(self, stack, before[0], str(e))
    stack.change_set_id = change_set.change_set_id  # type: ignore[attr-defined]


def get_template(self: Any) -> ActionResult:
    """GetTemplate: with ChangeSetName, that change set's template."""
    change_set_name = self._get_param("ChangeSetName")
    if not change_set_name:
        return _originals["get_template"](self)
    change_set = find_change_set(self.cloudformation_backend, change_set_name, self._get_param("StackName"))
    return ActionResult({"TemplateBody": change_set.template, "StagesAvailable": ["Original", "Processed"]})


def install() -> None:
    """Installs import support and moto's corrections once (before serving)."""
    cfn_fixes.install()
    if _originals:
        return
    response_class = responses.CloudFormationResponse
    _originals["create_change_set"] = response_class.create_change_set
    _originals["get_template"] = response_class.get_template
    response_class.describe_change_set = describe_change_set  # type: ignore[method-assign]
    response_class.delete_change_set = delete_change_set  # type: ignore[method-assign]
    response_class.list_change_sets = list_change_sets  # type: ignore[method-assign]
    _originals["execute_change_set"] = CloudFormationBackend.execute_change_set
    response_class.create_change_set = create_change_set  # type: ignore[method-assign]
    response_class.get_template = get_template  # type: ignore[method-assign]
    CloudFormationBackend.execute_change_set = execute_change_set  # type: ignore[method-assign]
    cfn_limits.install()
