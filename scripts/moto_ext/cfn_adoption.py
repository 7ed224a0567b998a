"""Nesting an existing stack in another one through an IMPORT change set whose
`AWS::CloudFormation::Stack` row names the child by `{"StackId": ...}`.

AWS's documented conditions: one level of nesting only (no import into a stack that is
itself nested, no child that has nested stacks of its own); the child is in a
*_COMPLETE status other than IMPORT_COMPLETE; the row's Tags match the child's tags and
the row's TemplateURL holds the child's template. A child that fails one makes the
change set (or the import, when checked again at execution) fail with the reason."""
from typing import Any

from moto.cloudformation.exceptions import ValidationError
from moto.utilities.utils import get_partition

from . import cfn_lookup, cfn_templates

STACK_TYPE = "AWS::CloudFormation::Stack"
ADOPTABLE = ("CREATE_COMPLETE", "UPDATE_COMPLETE", "UPDATE_ROLLBACK_COMPLETE", "IMPORT_ROLLBACK_COMPLETE")


def has_children(child: Any, backend: Any) -> bool:
    """Whether a stack has nested stacks now: a stack row among its resources, or a
    stack that names it as its parent."""
    if any(getattr(r, "cf_resource_type", None) == STACK_TYPE for r in cfn_lookup.managed_resources(child)):
        return True
    return any(
        getattr(s, "parent_id", None) == child.stack_id and s.status != "DELETE_COMPLETE"
        for s in list(backend.stacks.values())
    )


def _own_tags(stack: Any) -> dict[str, str]:
    return {k: v for k, v in (stack.tags or {}).items() if not k.startswith("aws:")}


def _template_reason(row: dict[str, Any], child: Any, account: str, region: str) -> str | None:
    url = row.get("TemplateURL")
    if not isinstance(url, str) or not url:
        return "the row's TemplateURL must be a literal URL of the nested stack's template"
    try:
        text = cfn_templates.read_template_url(url, account, get_partition(region))
        submitted = cfn_templates.parse(text)
    except ValidationError as e:
        return f"the row's TemplateURL cannot be read: {e.message}"
    try:
        # The stored text, not template_dict: moto adds Properties to what it parses.
        current = cfn_templates.parse(child.template) if isinstance(child.template, str) else {}
    except ValidationError:
        current = {}
    if submitted != current:
        return "the template at the row's TemplateURL does not match the nested stack's template"
    return None


def refusal(
    parent: Any, row: dict[str, Any], child: Any, backend: Any, account: str, region: str,
    check_template: bool = True,
) -> str | None:
    """Why `child` cannot be nested in `parent` (None for a new parent stack) through
    the template row `row`; None when it can. The row's template is read only when
    `check_template` (at CreateChangeSet, as CloudFormation does)."""
    if parent is not None and getattr(parent, "parent_id", None):
        return (
            f"stack {parent.name} is itself a nested stack; resource import supports one "
            "level of nesting only"
        )
    if parent is not None and child.stack_id == parent.stack_id:
        return "a stack cannot be nested in itself"
    if child.status not in ADOPTABLE:
        return (
            f"stack {child.name} is in {child.status} state; only a stack in a *_COMPLETE state "
            "other than IMPORT_COMPLETE can be nested"
        )
    if getattr(child, "parent_id", None):
        return f"stack {child.name} is already nested in stack {child.parent_id}"
    if has_children(child, backend):
        return (
            f"stack {child.name} has nested stacks of its own; resource import supports one "
            "level of nesting only"
        )
    properties = row.get("Properties") if isinstance(row.get("Properties"), dict) else {}
    row_tags = cfn_templates.cfn_tags(properties.get("Tags"))
    if row_tags != _own_tags(child):
        return (
            f"the Tags of the template row {_shown(row_tags)} do not match the tags of stack "
            f"{child.name} {_shown(_own_tags(child))}"
        )
    return _template_reason(properties, child, account, region) if check_template else None


def _shown(tags: dict[str, str] | None) -> str:
    if tags is None:
        return "(not a list of Key/Value pairs)"
    return "{" + ", ".join(f"{k}={v}" for k, v in sorted(tags.items())) + "}"


def adopt(parent: Any, child: Any) -> None:
    """Makes `child` a nested stack of `parent` (ParentId, RootId)."""
    child.parent_id = parent.stack_id
    child.root_id = getattr(parent, "root_id", None) or parent.stack_id
