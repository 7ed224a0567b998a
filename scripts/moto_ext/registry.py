"""CloudFormation's type registry (`DescribeType`) served from the provider schemas that
ship in the cfn-lint package: `cfnlint/data/schemas/providers/<region>.json` maps a type
name to a schema hash, `cfnlint/data/schemas/resources/<hash>.json` is the schema.

The answer follows the public registry: `ProvisioningType` is NON_PROVISIONABLE when the
schema lacks a create, read or delete handler, IMMUTABLE when it lacks an update handler,
else FULLY_MUTABLE; an unknown type is `TypeNotFoundException` (HTTP 404)."""
import importlib.util
import json
import os
import uuid
from typing import Any
from xml.sax.saxutils import escape

from moto.utilities.utils import get_partition

from .wsgi import DEFAULT_REGION, region_or_default

NAMESPACE = "http://cloudformation.amazonaws.com/doc/2010-05-15/"
# The one version every served type has.
VERSION_ID = "00000001"


def schemas_dir() -> str:
    """cfn-lint's schema directory, found without importing cfn-lint (which takes
    seconds); raises ImportError without cfn-lint."""
    spec = importlib.util.find_spec("cfnlint")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("cfn-lint is not installed")
    return os.path.join(list(spec.submodule_search_locations)[0], "data", "schemas")


class Registry:
    """The registry of one cfn-lint schema directory; region maps are read once."""

    def __init__(self, root: str | None = None) -> None:
        self.root = root or schemas_dir()
        self._providers: dict[str, dict[str, str]] = {}
        self._date: str | None = None

    def providers(self, region: str) -> dict[str, str]:
        """Type name -> schema hash for `region`; a region without its own file uses
        the default region's."""
        region = region_or_default(region)
        if not os.path.isfile(self._providers_path(region)):
            region = DEFAULT_REGION
        if region not in self._providers:
            with open(self._providers_path(region), encoding="utf-8") as f:
                self._providers[region] = json.load(f)
        return self._providers[region]

    def _providers_path(self, region: str) -> str:
        return os.path.join(self.root, "providers", f"{region}.json")

    def schema_text(self, region: str, type_name: str) -> str | None:
        """The schema of `type_name` in `region` as stored, or None for an unknown type."""
        digest = self.providers(region).get(type_name)
        if not isinstance(digest, str) or not digest.isalnum():
            return None
        path = os.path.join(self.root, "resources", f"{digest}.json")
        try:
            with open(path, encoding="utf-8") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def schema_date(self) -> str:
        """When cfn-lint's schemas were taken, as the types' registration time."""
        if self._date is None:
            date = "2020-01-01T00:00:00Z"
            try:
                with open(os.path.join(self.root, "version.json"), encoding="utf-8") as f:
                    date = str(json.load(f).get("schema_date") or date)
            except (OSError, ValueError, AttributeError):
                pass
            self._date = date
        return self._date


def provisioning_type(schema: dict[str, Any]) -> str:
    """NON_PROVISIONABLE without a create, read or delete handler; IMMUTABLE without an
    update handler; else FULLY_MUTABLE."""
    handlers = schema.get("handlers")
    handlers = handlers if isinstance(handlers, dict) else {}
    if not all(h in handlers for h in ("create", "read", "delete")):
        return "NON_PROVISIONABLE"
    if "update" not in handlers:
        return "IMMUTABLE"
    return "FULLY_MUTABLE"


def type_arn(region: str, type_name: str) -> str:
    """The ARN of a public AWS resource type in `region`."""
    return (
        f"arn:{get_partition(region)}:cloudformation:{region}::type/resource/"
        f"{type_name.replace('::', '-')}"
    )


def _type_name_from_arn(arn: str) -> str | None:
    """`AWS::S3::Bucket` from `arn:aws:cloudformation:REGION::type/resource/AWS-S3-Bucket`."""
    parts = arn.split(":", 5)
    if len(parts) != 6 or parts[2] != "cloudformation":
        return None
    resource = parts[5]
    prefix = "type/resource/"
    if not resource.startswith(prefix):
        return None
    name = resource[len(prefix):].split("/", 1)[0]
    return name.replace("-", "::") if name.count("-") == 2 else None


def _error(status: int, code: str, message: str) -> tuple[int, str]:
    return status, (
        f'<ErrorResponse xmlns="{NAMESPACE}"><Error><Type>Sender</Type>'
        f"<Code>{escape(code)}</Code><Message>{escape(message)}</Message></Error>"
        f"<RequestId>{uuid.uuid4()}</RequestId></ErrorResponse>"
    )


def describe_type(registry: Registry, region: str | None, params: dict[str, str]) -> tuple[int, str]:
    """Answers one DescribeType request: (HTTP status, XML body)."""
    region = region_or_default(region)
    arn, kind = params.get("Arn"), params.get("Type")
    type_name = params.get("TypeName")
    version = params.get("VersionId")
    if arn:
        type_name = _type_name_from_arn(arn)
        kind = "RESOURCE" if type_name else kind
    elif not (kind and type_name):
        return _error(400, "CFNRegistryException", "Specify either TypeName and Type, or Arn.")
    text = None
    if kind == "RESOURCE" and type_name and version in (None, VERSION_ID):
        text = registry.schema_text(region, type_name)
    if text is None:
        shown = arn or f"{kind}/{type_name}" + (f"/{version}" if version else "")
        return _error(404, "TypeNotFoundException", f"The type '{shown}' cannot be found.")
    try:
        schema = json.loads(text)
    except ValueError:
        return _error(400, "CFNRegistryException", f"The schema of {type_name} does not parse.")
    date = registry.schema_date()
    fields = [
        ("Arn", type_arn(region, type_name)),
        ("Type", "RESOURCE"),
        ("TypeName", type_name),
        ("DefaultVersionId", VERSION_ID),
        ("IsDefaultVersion", "true"),
        ("Description", schema.get("description")),
        ("Schema", text),
        ("ProvisioningType", provisioning_type(schema)),
        ("DeprecatedStatus", "LIVE"),
        ("Visibility", "PUBLIC"),
        ("SourceUrl", schema.get("sourceUrl")),
        ("DocumentationUrl", schema.get("documentationUrl")),
        ("TimeCreated", date),
        ("LastUpdated", date),
    ]
    body = "".join(
        f"<{k}>{escape(v)}</{k}>" for k, v in fields if isinstance(v, str)
    )
    return 200, (
        f'<DescribeTypeResponse xmlns="{NAMESPACE}"><DescribeTypeResult>{body}'
        f"</DescribeTypeResult><ResponseMetadata><RequestId>{uuid.uuid4()}</RequestId>"
        f"</ResponseMetadata></DescribeTypeResponse>"
    )
