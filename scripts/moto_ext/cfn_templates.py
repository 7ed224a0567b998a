"""Templates as CloudFormation receives them: a `TemplateBody` (JSON or YAML) or a
`TemplateURL` naming an object in the emulator's S3, read from moto's S3 backend, never
over the network (their size limits: `cfn_limits`).

`read_template_url` also replaces moto's own `get_stack_from_s3_url`, which takes the
bucket of `http://127.0.0.1:PORT/bucket/key` to be `127`."""
import copy
import json
from typing import Any
from urllib.parse import unquote, urlparse

import yaml
from moto.cloudformation.exceptions import ValidationError
from moto.cloudformation.utils import yaml_tag_constructor

from . import cfn_limits

_LOCAL_HOSTS = ("127.0.0.1", "localhost")
# Template-level attributes of a resource that never change the resource itself.
RESOURCE_ATTRIBUTES = ("DeletionPolicy", "UpdateReplacePolicy", "Metadata")


def parse(text: str) -> dict[str, Any]:
    """The template as a dict (YAML short-form intrinsics become their long form);
    ValidationError when it is neither JSON nor YAML, or not a mapping."""
    yaml.add_multi_constructor("", yaml_tag_constructor)
    try:
        parsed = yaml.load(text, Loader=yaml.Loader)
    except yaml.YAMLError:
        try:
            parsed = json.loads(text)
        except ValueError as e:
            raise ValidationError(message=f"Template format error: {e}") from e
    if not isinstance(parsed, dict):
        raise ValidationError(message="Template format error: JSON not well-formed.")
    if not isinstance(parsed.get("Resources"), dict) or not parsed["Resources"]:
        raise ValidationError(
            message="Template format error: At least one Resources member must be defined."
        )
    for logical_id, resource in parsed["Resources"].items():
        if not isinstance(resource, dict) or not isinstance(resource.get("Type"), str):
            raise ValidationError(
                message=f"Template format error: [/Resources/{logical_id}] Every Resources "
                "object must contain a Type member."
            )
    return parsed


def _bucket_and_key(url: str) -> tuple[str, str] | None:
    """(bucket, key) of an S3 object URL: path style on the emulator's address or on an
    S3 endpoint, or virtual-hosted style; None for anything else."""
    parts = urlparse(url)
    host = (parts.hostname or "").lower()
    path = unquote(parts.path).lstrip("/")
    if parts.scheme not in ("http", "https") or not host:
        return None
    if host in _LOCAL_HOSTS or (host.startswith("s3") and host.endswith(".amazonaws.com")):
        bucket, _, key = path.partition("/")
    elif ".s3." in host or ".s3-" in host:
        bucket, key = host.split(".s3", 1)[0], path
    else:
        return None
    return (bucket, key) if bucket and key else None


def read_template_url(url: str, account_id: str, partition: str) -> str:
    """The text of the template object `url` names, from moto's S3 backend."""
    from moto.s3.models import s3_backends

    located = _bucket_and_key(url)
    if located is None:
        raise ValidationError(message="TemplateURL must be a supported URL.")
    bucket, key = located
    try:
        obj = s3_backends[account_id][partition].get_object(bucket, key)
    except Exception as e:  # noqa: BLE001 - moto raises several S3 errors here
        raise ValidationError(message=f"S3 error: Unable to get object {key} from {bucket}: {e}")
    if obj is None or not hasattr(obj, "value"):
        raise ValidationError(message=f"S3 error: The specified key does not exist: {bucket}/{key}")
    data = obj.value
    cfn_limits.check_url_object(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValidationError(message=f"Template format error: {e}") from e


def resource_definition(resource: Any, strip_attributes: bool = False) -> Any:
    """A resource's definition for comparisons: a missing Properties is `{}` (moto adds
    one to the templates it parses); optionally without DeletionPolicy,
    UpdateReplacePolicy and Metadata."""
    if not isinstance(resource, dict):
        return resource
    out = copy.deepcopy(resource)
    if out.get("Properties") is None:
        out["Properties"] = {}
    if strip_attributes:
        for key in RESOURCE_ATTRIBUTES:
            out.pop(key, None)
    return out


def outputs_of(template: dict[str, Any] | None) -> dict[str, Any]:
    """A template's Outputs; none at all is `{}`."""
    outputs = (template or {}).get("Outputs")
    return outputs if isinstance(outputs, dict) else {}


def cfn_tags(value: Any) -> dict[str, str] | None:
    """`[{Key, Value}]` as a dict; None when the value is not such a list."""
    if value is None:
        return {}
    if not isinstance(value, list):
        return None
    tags: dict[str, str] = {}
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("Key"), str):
            return None
        tags[item["Key"]] = str(item.get("Value", ""))
    return tags
