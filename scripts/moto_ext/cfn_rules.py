"""The template and request checks CloudFormation makes when an IMPORT change set is
created. Each broken rule is a `ValidationError` naming the resources concerned, and no
stack or change set is created.

- at most 200 resources, at least one; every entry names a resource of the template,
  of the same type, that the stack does not hold yet, once;
- the type supports import and the identifier's keys are the type's primaryIdentifier;
- every resource to import has a DeletionPolicy;
- nothing else is created, updated or deleted, and Outputs are not added or changed."""
from typing import Any

from moto.cloudformation.exceptions import ValidationError

from . import cfn_lookup, cfn_templates

MAX_RESOURCES = 200


def _names(ids: list[str]) -> str:
    return "[" + ", ".join(sorted(ids)) + "]"


def check_entries(entries: Any) -> list[dict[str, Any]]:
    """The entries' shape: a list of 1 to 200 {ResourceType, LogicalResourceId,
    ResourceIdentifier} with distinct logical ids."""
    if not isinstance(entries, list) or not entries:
        raise ValidationError(
            message="ResourcesToImport must name at least one resource for an IMPORT change set."
        )
    if len(entries) > MAX_RESOURCES:
        raise ValidationError(
            message=f"ResourcesToImport names {len(entries)} resources; an IMPORT change set "
            f"may import at most {MAX_RESOURCES}."
        )
    seen: set[str] = set()
    for entry in entries:
        logical_id = entry.get("LogicalResourceId") if isinstance(entry, dict) else None
        ident = entry.get("ResourceIdentifier") if isinstance(entry, dict) else None
        if not (isinstance(logical_id, str) and logical_id and entry.get("ResourceType")):
            raise ValidationError(
                message="Every ResourcesToImport entry needs a ResourceType and a LogicalResourceId."
            )
        if not isinstance(ident, dict) or not ident:
            raise ValidationError(
                message=f"Resource to import {logical_id} ({entry['ResourceType']}) has no "
                "ResourceIdentifier."
            )
        if logical_id in seen:
            raise ValidationError(
                message=f"Resource {logical_id} is named more than once in ResourcesToImport."
            )
        seen.add(logical_id)
    return entries


def check_against_template(
    entries: list[dict[str, Any]], template: dict[str, Any], held: dict[str, Any]
) -> None:
    """Every entry names a template resource of its type that the stack (whose current
    resources are `held`, logical id -> definition) does not hold yet."""
    resources = template["Resources"]
    missing = [e["LogicalResourceId"] for e in entries if e["LogicalResourceId"] not in resources]
    if missing:
        raise ValidationError(
            message=f"Resources {_names(missing)} in ResourcesToImport are not in the template."
        )
    for entry in entries:
        logical_id, type_name = entry["LogicalResourceId"], entry["ResourceType"]
        declared = resources[logical_id].get("Type")
        if declared != type_name:
            raise ValidationError(
                message=f"Resource {logical_id} is {declared} in the template but "
                f"{type_name} in ResourcesToImport."
            )
    already = [e["LogicalResourceId"] for e in entries if e["LogicalResourceId"] in held]
    if already:
        raise ValidationError(
            message=f"Resources {_names(already)} already exist in the stack and cannot be "
            "imported."
        )


def check_identifiers(entries: list[dict[str, Any]], region: str) -> None:
    """The type supports import, and the identifier's keys are its primaryIdentifier."""
    for entry in entries:
        logical_id, type_name = entry["LogicalResourceId"], entry["ResourceType"]
        keys = cfn_lookup.primary_identifier(type_name, region)
        if keys is None or not cfn_lookup.importable(type_name, region):
            raise ValidationError(
                message=f"Resource {logical_id}: resource type {type_name} does not support "
                "resource import."
            )
        given = sorted(entry["ResourceIdentifier"])
        if given != sorted(keys):
            raise ValidationError(
                message=f"Invalid ResourceIdentifier for resource {logical_id} of type "
                f"{type_name}: the keys must be the type's primaryIdentifier {_names(keys)}, "
                f"got {_names(given)}."
            )
        empty = [k for k, v in entry["ResourceIdentifier"].items() if not isinstance(v, str) or not v]
        if empty:
            raise ValidationError(
                message=f"ResourceIdentifier of resource {logical_id} ({type_name}) has no "
                f"value for {_names(empty)}."
            )


def check_deletion_policies(entries: list[dict[str, Any]], template: dict[str, Any]) -> None:
    """Every resource to import declares a DeletionPolicy."""
    resources = template["Resources"]
    lacking = [
        e["LogicalResourceId"]
        for e in entries
        if not resources[e["LogicalResourceId"]].get("DeletionPolicy")
    ]
    if lacking:
        raise ValidationError(
            message=f"Resources {_names(lacking)} to import must have a DeletionPolicy "
            "attribute specified in the template."
        )


def check_nothing_else_changes(
    entries: list[dict[str, Any]],
    template: dict[str, Any],
    held: dict[str, Any],
    held_outputs: dict[str, Any],
) -> None:
    """No resource other than the ones imported is added, changed or removed, and the
    Outputs stay as they are."""
    importing = {e["LogicalResourceId"] for e in entries}
    resources = template["Resources"]
    changed = [
        logical_id
        for logical_id in resources
        if logical_id not in importing
        and (
            logical_id not in held
            or cfn_templates.resource_definition(resources[logical_id])
            != cfn_templates.resource_definition(held[logical_id])
        )
    ]
    changed += [logical_id for logical_id in held if logical_id not in resources]
    if changed:
        raise ValidationError(
            message=f"You have modified resources {_names(changed)} in your template that are "
            "not being imported. Update, create or delete operations cannot be executed "
            "during import operations."
        )
    if cfn_templates.outputs_of(template) != held_outputs:
        raise ValidationError(
            message="As part of the import operation, you cannot modify or add [Outputs]"
        )


def check_import(
    entries: Any,
    template: dict[str, Any],
    held: dict[str, Any],
    held_outputs: dict[str, Any],
    region: str,
) -> list[dict[str, Any]]:
    """All the checks, in the order above; the entries when they pass."""
    checked = check_entries(entries)
    check_against_template(checked, template, held)
    check_identifiers(checked, region)
    check_deletion_policies(checked, template)
    check_nothing_else_changes(checked, template, held, held_outputs)
    return checked
