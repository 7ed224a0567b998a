"""Corrections to the pinned moto's CloudFormation that imported resources rely on,
each toward AWS's documented behaviour:

- a TemplateURL on the emulator's address (`http://127.0.0.1:PORT/bucket/key`) is read
  from moto's S3 backend (moto took `127` for the bucket);
- a stack's physical id (Ref, ListStackResources) is its stack id, not its name;
- a resource type moto does not model (AWS::CDK::Metadata) is left out of
  DescribeStackResources and ListStackResources (moto listed an empty row);
- an update does not touch a resource whose definition changed only in DeletionPolicy,
  UpdateReplacePolicy or Metadata (moto replaced it, with a new generated name);
- an update of a resource whose template has no name property keeps the resource's
  name instead of generating one, and a type moto cannot update stays as it is
  (moto dropped it from the stack); one updated in place keeps its import wrapper;
- a resource removed from the template, or left by DeleteStack, with DeletionPolicy
  Retain is left alone;
- a tag-only UpdateStack that re-sends the same parameters is an update (moto answered
  "No updates are to be performed.")."""
from typing import Any

from moto.cloudformation import models, parsing, responses
from moto.cloudformation.models import Stack
from moto.cloudformation.parsing import ResourceMap

from . import cfn_lookup, cfn_templates

RETAINED = ("Retain", "RetainExceptOnCreate")
# The attribute holding the current name of a resource, for types whose name property
# moto generates when the template has none.
_NAME_ATTRIBUTES = ("name", "function_name")

_originals: dict[str, Any] = {}


def _stack_physical_id(self: Stack) -> str:
    return self.stack_id


def _stack_resources(self: Stack) -> list[Any]:
    return [r for r in self.resource_map.values() if r is not None]


def _build_resource_diff(self: ResourceMap, other_template: dict[str, Any], parameters: Any = None) -> dict[str, Any]:
    diff = _originals["build_resource_diff"](self, other_template, parameters)
    old, new = self._resource_json_map, other_template["Resources"]
    changed_parameters = [
        p for p in (parameters or {}) if self.input_parameters.get(p) != parameters[p]
    ]

    def only_attributes(name: str) -> bool:
        if name not in old or any(
            p in parsing.get_references_from_template(new[name]) for p in changed_parameters
        ):
            return False
        return cfn_templates.resource_definition(old[name], True) == cfn_templates.resource_definition(new[name], True)

    diff["Modify"] = [name for name in diff["Modify"] if not only_attributes(name)]
    return diff


def _current_name(resource: Any) -> str | None:
    for attribute in _NAME_ATTRIBUTES:
        value = getattr(resource, attribute, None)
        if isinstance(value, str) and value:
            return value
    return None


def _parse_and_update_resource(
    logical_id: str, resource_json: dict[str, Any], resources_map: ResourceMap,
    account_id: str, region_name: str,
) -> Any:
    original = resources_map._parsed_resources.get(logical_id)
    name_property = parsing.resource_name_property_from_type(resource_json.get("Type", ""))
    properties = resource_json.get("Properties") or {}
    name = _current_name(original)
    if name_property and name and name_property not in properties:
        resource_json = dict(resource_json, Properties=dict(properties, **{name_property: name}))
    updated = _originals["parse_and_update_resource"](
        logical_id, resource_json, resources_map, account_id, region_name
    )
    if updated is None or updated is cfn_lookup.unwrapped(original):
        return original  # kept as it was, or updated in place: keep its wrapper
    return updated


def _delete_resource(self: ResourceMap, parsed_resource: Any, resource_json: dict[str, Any]) -> None:
    if isinstance(resource_json, dict) and resource_json.get("DeletionPolicy") in RETAINED:
        return
    _originals["_delete_resource"](self, parsed_resource, resource_json)


def _validate_different_update(self: Any, incoming_params: Any, stack_body: str, old_stack: Stack) -> None:
    tags = {t["Key"]: t["Value"] for t in self._get_param("Tags", []) if "Key" in t}
    if tags and tags != (old_stack.tags or {}):
        return
    _originals["_validate_different_update"](self, incoming_params, stack_body, old_stack)


def install() -> None:
    """Applies the corrections once."""
    if _originals:
        return
    _originals["build_resource_diff"] = ResourceMap.build_resource_diff
    _originals["parse_and_update_resource"] = parsing.parse_and_update_resource
    _originals["_delete_resource"] = ResourceMap._delete_resource
    _originals["_validate_different_update"] = responses.CloudFormationResponse._validate_different_update
    responses.get_stack_from_s3_url = cfn_templates.read_template_url
    models.get_stack_from_s3_url = cfn_templates.read_template_url
    Stack.physical_resource_id = property(_stack_physical_id)  # type: ignore[assignment]
    Stack.stack_resources = property(_stack_resources)  # type: ignore[assignment]
    ResourceMap.build_resource_diff = _build_resource_diff  # type: ignore[method-assign]
    parsing.parse_and_update_resource = _parse_and_update_resource
    ResourceMap._delete_resource = _delete_resource  # type: ignore[method-assign]
    responses.CloudFormationResponse._validate_different_update = _validate_different_update  # type: ignore[method-assign]
