"""A stack's Outputs and exports after a change set runs (moto only builds them when a
stack is created or updated directly), and the stored template.

The Outputs are resolved by moto's own OutputMap against the stack's ResourceMap, so
Ref, Fn::GetAtt, Fn::Sub, Fn::Join, Fn::ImportValue and parameters work as they do for
moto's CreateStack."""
from typing import Any

from moto.cloudformation.exceptions import ValidationError
from moto.cloudformation.models import Stack

from . import cfn_templates


def stored_template(stack: Stack) -> dict[str, Any]:
    """The stack's template as last executed, parsed from its stored text (moto adds
    Properties to the dicts it parses, so `template_dict` is not what was sent); `{}`
    for a stack no change set has run on."""
    if not isinstance(stack.template, str) or not stack.template:
        return {}
    try:
        return cfn_templates.parse(stack.template)
    except ValidationError:
        return {}


def stored_outputs(stack: Stack) -> dict[str, Any]:
    return cfn_templates.outputs_of(stored_template(stack))


def refresh(backend: Any, stack: Stack) -> None:
    """Re-reads the stack's stored template and rebuilds its Outputs, Description and
    exports."""
    if isinstance(stack.template, str) and stack.template:
        stack._parse_template()
    stack.description = stack.template_dict.get("Description") if stack.template_dict else None
    stack.output_map = stack._create_output_map()
    for name, export in list(backend.exports.items()):
        if export.exporting_stack_id == stack.stack_id:
            del backend.exports[name]
    for export in stack.exports:
        backend.exports[export.name] = export


def evaluate(stack: Stack) -> None:
    """Resolves every Output now (moto resolves them lazily, when DescribeStacks reads
    them): an Output CloudFormation cannot resolve (a missing export, an unknown
    attribute) fails the update that set it, as on AWS, instead of every later read."""
    _ = stack.outputs


def roll_back_update(backend: Any, stack: Stack, previous_template: Any, reason: str) -> None:
    """The update's Outputs failed: back to the previous template's Outputs,
    UPDATE_ROLLBACK_COMPLETE with the reason. Resources the update changed are not
    reverted (docs/emulator.md)."""
    summary = f"Outputs could not be resolved: {reason}"
    stack.template = previous_template
    try:
        refresh(backend, stack)
        evaluate(stack)
    except Exception:  # noqa: BLE001 - the previous Outputs fail too: keep none
        stack.output_map = stack._create_output_map()
        stack.output_map._output_json_map = {}
    stack._add_stack_event("UPDATE_ROLLBACK_IN_PROGRESS", resource_status_reason=summary)
    stack._add_stack_event("UPDATE_ROLLBACK_COMPLETE")
    stack.status = "UPDATE_ROLLBACK_COMPLETE"
    stack.status_reason = summary  # type: ignore[attr-defined]
