"""IMPORT change sets on moto's CloudFormation backend: creating one (after the
template checks of `cfn_rules`), and executing it.

Creation finds every resource to import in moto's backends (`cfn_lookup`); one that does
not exist, already belongs to a stack, or is a child stack that cannot be nested
(`cfn_adoption`) makes the change set FAILED with a reason naming it. A new stack waits
in REVIEW_IN_PROGRESS. Execution checks again, then either makes the resources the
stack's own (IMPORT_IN_PROGRESS -> IMPORT_COMPLETE, per-resource events) or rolls back
(IMPORT_ROLLBACK_IN_PROGRESS -> IMPORT_ROLLBACK_COMPLETE, the stack unchanged)."""
import json
from typing import Any

from moto.cloudformation.exceptions import (
    AlreadyExistsException,
    CloudFormationError,
    ValidationError,
)
from moto.cloudformation.models import ChangeSet, Change, Event, Stack
from moto.cloudformation.parsing import ResourceMap
from moto.cloudformation.utils import (
    generate_changeset_id,
    generate_stack_id,
    validate_create_change_set,
)

from . import cfn_adoption, cfn_lookup, cfn_outputs, cfn_rules, cfn_templates

IMPORTABLE_STACK_STATES = (
    "CREATE_COMPLETE", "UPDATE_COMPLETE", "UPDATE_ROLLBACK_COMPLETE",
    "IMPORT_COMPLETE", "IMPORT_ROLLBACK_COMPLETE",
)


def find_stack(backend: Any, name_or_id: str) -> Stack | None:
    """The live stack with that name or id, or None."""
    for stack in backend.stacks.values():
        if name_or_id in (stack.name, stack.stack_id) and stack.status != "DELETE_COMPLETE":
            return stack
    return None


def _held(stack: Stack | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(resource definitions, Outputs) of the stack's current template; a stack still
    in review holds nothing."""
    if stack is None or stack.status == "REVIEW_IN_PROGRESS":
        return {}, {}
    return dict(stack.resource_map._resource_json_map), cfn_outputs.stored_outputs(stack)


def _describe(entry: dict[str, Any]) -> str:
    ident = ", ".join(f"{k}={v}" for k, v in sorted(entry["ResourceIdentifier"].items()))
    return f"{entry['LogicalResourceId']} ({entry['ResourceType']}) with identifier {{{ident}}}"


def resolve(
    backend: Any, stack: Stack | None, entries: list[dict[str, Any]], template: dict[str, Any],
    executing: bool = False,
) -> tuple[dict[str, Any], tuple[str, str] | None]:
    """The model of every entry, or the first failure as (logical id, reason). When
    `executing`, a child stack's template is not read again."""
    account, region = backend.account_id, backend.region_name
    found: dict[str, Any] = {}
    for entry in entries:
        logical_id, type_name = entry["LogicalResourceId"], entry["ResourceType"]
        if type_name not in cfn_lookup.SUPPORTED:
            return found, (logical_id, f"The emulator cannot import {type_name} resources ({logical_id}).")
        model = cfn_lookup.find(type_name, entry["ResourceIdentifier"], account, region)
        if model is None:
            return found, (logical_id, f"Resource {_describe(entry)} does not exist.")
        holder = cfn_lookup.owner(model, type_name, account, region)
        if holder is not None:
            return found, (
                logical_id,
                f"Resource {_describe(entry)} already belongs to stack {holder.stack_id}.",
            )
        if type_name == cfn_adoption.STACK_TYPE:
            row = template["Resources"][logical_id]
            why = cfn_adoption.refusal(stack, row, model, backend, account, region, not executing)
            if why:
                return found, (logical_id, f"Resource {_describe(entry)} cannot be nested: {why}.")
        found[logical_id] = model
    return found, None


def _import_changes(entries: list[dict[str, Any]], found: dict[str, Any]) -> list[Change]:
    changes = []
    for entry in entries:
        change = Change("Import", entry["LogicalResourceId"], entry["ResourceType"])
        model = found.get(entry["LogicalResourceId"])
        change.physical_resource_id = (  # type: ignore[attr-defined]
            cfn_lookup.physical_id(model) if model is not None
            else next(iter(entry["ResourceIdentifier"].values()))
        )
        change.resource_identifier = dict(entry["ResourceIdentifier"])  # type: ignore[attr-defined]
        changes.append(change)
    return changes


def _trial_load(backend: Any, name: str, template: dict[str, Any], parameters: dict[str, str]) -> None:
    """Parameters, conditions and Outputs of the template resolve (no resource is made)."""
    try:
        ResourceMap(
            "trial", name, parameters, {}, region_name=backend.region_name,
            account_id=backend.account_id, template=template,
            cross_stack_resources=backend.exports,
        ).load()
    except CloudFormationError:
        raise
    except Exception as e:  # noqa: BLE001 - moto's parser fails in many ways on bad templates
        raise ValidationError(message=f"Template error: {type(e).__name__}: {e}") from e


def create_import_change_set(
    backend: Any, stack_name: str, change_set_name: str, template_text: str,
    parameters: dict[str, str], entries: Any, options: dict[str, Any],
) -> tuple[str, str]:
    """Creates an IMPORT change set: (change set id, stack id). ValidationError for a
    request CloudFormation refuses outright."""
    validate_create_change_set(change_set_name)
    template = cfn_templates.parse(template_text)
    stack = find_stack(backend, stack_name)
    if stack is not None and stack.status not in IMPORTABLE_STACK_STATES + ("REVIEW_IN_PROGRESS",):
        raise ValidationError(
            message=f"Stack:{stack.stack_id} is in {stack.status} state and can not be updated."
        )
    if stack is not None and any(
        cs.stack_id == stack.stack_id and cs.change_set_name == change_set_name
        for cs in backend.change_sets.values()
    ):
        raise AlreadyExistsException(f"ChangeSet {change_set_name} already exists")
    held, held_outputs = _held(stack)
    checked = cfn_rules.check_import(entries, template, held, held_outputs, backend.region_name)
    if not parameters and stack is not None:
        parameters = dict(stack.parameters or {})
    _trial_load(backend, stack_name, template, parameters)
    if stack is None:
        stack = Stack(
            stack_id=generate_stack_id(stack_name, backend.region_name, backend.account_id),
            name=stack_name, template={}, parameters=parameters,
            account_id=backend.account_id, region_name=backend.region_name,
            notification_arns=options.get("notification_arns"), tags=options.get("tags"),
            role_arn=options.get("role_arn"),
        )
        backend.stacks[stack.stack_id] = stack
        stack.status = "REVIEW_IN_PROGRESS"
        stack._add_stack_event("REVIEW_IN_PROGRESS", resource_status_reason="User Initiated")
    change_set = ChangeSet(
        change_set_type="IMPORT",
        change_set_id=generate_changeset_id(change_set_name, backend.region_name, backend.account_id),
        change_set_name=change_set_name, stack=stack, template=template_text,
        parameters=parameters, description=options.get("description"),
        notification_arns=options.get("notification_arns"), tags=options.get("tags"),
        role_arn=options.get("role_arn"),
    )
    change_set.resources_to_import = checked  # type: ignore[attr-defined]
    parent = None if stack.status == "REVIEW_IN_PROGRESS" else stack
    found, failure = resolve(backend, parent, checked, template)
    change_set.changes = _import_changes(checked, found)
    if failure:
        change_set.status, change_set.execution_status = "FAILED", "UNAVAILABLE"
        change_set.status_reason = failure[1]
    else:
        change_set.status, change_set.execution_status = "CREATE_COMPLETE", "AVAILABLE"
    backend.change_sets[change_set.change_set_id] = change_set
    return change_set.change_set_id, stack.stack_id


def _event(stack: Stack, logical_id: str, physical_id: str, type_name: str, status: str,
           reason: str | None, properties: Any = None) -> None:
    event = Event(
        stack_id=stack.stack_id, stack_name=stack.name, logical_resource_id=logical_id,
        physical_resource_id=physical_id, resource_type=type_name, resource_status=status,
        resource_status_reason=reason,
        resource_properties=json.dumps(properties, default=str) if properties is not None else None,
    )
    event.sendToSns(stack.account_id, stack.region_name, stack.notification_arns)
    stack.events.append(event)


def _roll_back(stack: Stack, change_set: ChangeSet, entry: dict[str, Any], reason: str) -> None:
    _event(stack, entry["LogicalResourceId"], next(iter(entry["ResourceIdentifier"].values())),
           entry["ResourceType"], "IMPORT_FAILED", reason)
    summary = f"The following resource(s) failed to import: [{entry['LogicalResourceId']}]. "
    stack._add_stack_event("IMPORT_ROLLBACK_IN_PROGRESS", resource_status_reason=summary)
    stack._add_stack_event("IMPORT_ROLLBACK_COMPLETE")
    stack.status, stack.status_reason = "IMPORT_ROLLBACK_COMPLETE", summary  # type: ignore[attr-defined]
    change_set.execution_status = "EXECUTE_FAILED"


def _take_over(stack: Stack, change_set: ChangeSet, found: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    """The change set's template becomes the stack's, with its resources so far and
    the imported ones."""
    kept = {} if stack.status == "REVIEW_IN_PROGRESS" else {
        getattr(model, "logical_resource_id"): model
        for model in cfn_lookup.managed_resources(stack)
    }
    stack.template = change_set.template
    stack._parse_template()
    if change_set.parameters:
        stack.parameters = change_set.parameters
    if change_set.tags:
        stack.tags = dict(change_set.tags)
    stack.resource_map = stack._create_resource_map()
    stack.resource_map._parsed_resources.update(kept)
    for entry in entries:
        model = found[entry["LogicalResourceId"]]
        model.logical_resource_id = entry["LogicalResourceId"]
        model.cf_resource_type = entry["ResourceType"]
        stack.resource_map._parsed_resources[entry["LogicalResourceId"]] = model
        if entry["ResourceType"] == cfn_adoption.STACK_TYPE:
            cfn_adoption.adopt(stack, model)


def execute_import(backend: Any, change_set: ChangeSet) -> None:
    """Runs an IMPORT change set to IMPORT_COMPLETE, or rolls it back."""
    stack = backend.stacks[change_set.stack_id]
    entries = change_set.resources_to_import  # type: ignore[attr-defined]
    template = cfn_templates.parse(change_set.template)
    was_in_review = stack.status == "REVIEW_IN_PROGRESS"
    stack._add_stack_event("IMPORT_IN_PROGRESS", resource_status_reason="User Initiated")
    found, failure = resolve(backend, None if was_in_review else stack, entries, template, True)
    by_id = {e["LogicalResourceId"]: e for e in entries}
    for entry in entries:
        if failure and entry["LogicalResourceId"] == failure[0]:
            break
        _event(stack, entry["LogicalResourceId"], cfn_lookup.physical_id(found[entry["LogicalResourceId"]]),
               entry["ResourceType"], "IMPORT_IN_PROGRESS", "Resource import started.",
               template["Resources"][entry["LogicalResourceId"]].get("Properties"))
    if failure:
        _roll_back(stack, change_set, by_id[failure[0]], failure[1])
        return
    _take_over(stack, change_set, found, entries)
    for entry in entries:
        model = found[entry["LogicalResourceId"]]
        _event(stack, entry["LogicalResourceId"], cfn_lookup.physical_id(model),
               entry["ResourceType"], "IMPORT_COMPLETE", "Resource import completed.")
    cfn_outputs.refresh(backend, stack)
    stack._add_stack_event("IMPORT_COMPLETE")
    stack.status, stack.status_reason = "IMPORT_COMPLETE", None  # type: ignore[attr-defined]
    stack.change_set_id = change_set.change_set_id  # type: ignore[attr-defined]
    change_set.execution_status = "EXECUTE_COMPLETE"
