"""CloudFormation's template limits, checked in one place for every action that takes a
template (CreateStack, UpdateStack, CreateChangeSet of any type, IMPORT included,
ValidateTemplate, GetTemplateSummary), before moto or the import code sees the request.
Each broken limit is a `ValidationError`, with AWS's wording:

- a `TemplateBody` over 51,200 bytes (UTF-8, not characters): "1 validation error
  detected: Value '<body>' at 'templateBody' failed to satisfy constraint: Member must
  have length less than or equal to 51200" (the quotas page, "Template body size in a
  request": 51,200 bytes; the message as CloudFormation answers it);
- a `TemplateURL` object over 1,000,000 bytes: "Template may not exceed 1000000 bytes
  in size." (the quotas page says "1 MB"; CloudFormation's answer, and cfn-lint's
  LIMITS, count 1,000,000 bytes); checked where the object is read
  (`cfn_templates.read_template_url`), so also for a nested stack's template;
- more than 500 resources: "Template format error: Number of resources, N, is greater
  than maximum allowed, 500" (the quotas page, "Resources": 500).

https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html"""
import functools
import json
from typing import Any, Callable

import yaml
from moto.cloudformation.exceptions import ValidationError

MAX_BODY_BYTES = 51_200
MAX_URL_BYTES = 1_000_000
MAX_RESOURCES = 500
# The response methods of moto's CloudFormationResponse that take a template.
ACTIONS = ("create_stack", "update_stack", "create_change_set", "validate_template", "get_template_summary")

_installed: list[bool] = []


def check_body(body: str | None) -> None:
    """A TemplateBody longer than CloudFormation accepts is a ValidationError."""
    if body is not None and len(body.encode("utf-8")) > MAX_BODY_BYTES:
        raise ValidationError(
            message=f"1 validation error detected: Value '{body}' at 'templateBody' failed to "
            f"satisfy constraint: Member must have length less than or equal to {MAX_BODY_BYTES}"
        )


def check_url_object(data: bytes) -> None:
    """A template object behind a TemplateURL larger than CloudFormation reads."""
    if len(data) > MAX_URL_BYTES:
        raise ValidationError(message=f"Template may not exceed {MAX_URL_BYTES} bytes in size.")


def resource_count(text: str) -> int | None:
    """How many resources the template declares; None when it cannot be read (moto or
    the import code then answers the template's own error)."""
    try:
        parsed = json.loads(text)
    except ValueError:
        from moto.cloudformation.utils import yaml_tag_constructor

        yaml.add_multi_constructor("", yaml_tag_constructor)
        try:
            parsed = yaml.load(text, Loader=yaml.Loader)
        except yaml.YAMLError:
            return None
    resources = parsed.get("Resources") if isinstance(parsed, dict) else None
    return len(resources) if isinstance(resources, dict) else None


def check_resources(text: str) -> None:
    count = resource_count(text)
    if count is not None and count > MAX_RESOURCES:
        raise ValidationError(
            message=f"Template format error: Number of resources, {count}, is greater than "
            f"maximum allowed, {MAX_RESOURCES}"
        )


def check_request(response: Any) -> None:
    """Every limit, for the template a request carries (TemplateBody, else the object
    its TemplateURL names; UsePreviousTemplate: the stack's, already accepted)."""
    from . import cfn_templates

    body, url = response._get_param("TemplateBody"), response._get_param("TemplateURL")
    check_body(body)
    if body:
        text = body
    elif url:
        text = cfn_templates.read_template_url(url, response.current_account, response.partition)
    else:
        return
    check_resources(text)


def _checked(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def action(self: Any) -> Any:
        check_request(self)
        return method(self)

    return action


def install() -> None:
    """Puts the checks in front of every action that takes a template, once (after
    `cfn_import` replaced CreateChangeSet)."""
    if _installed:
        return
    from moto.cloudformation.responses import CloudFormationResponse

    for name in ACTIONS:
        setattr(CloudFormationResponse, name, _checked(getattr(CloudFormationResponse, name)))
    _installed.append(True)
