"""Finding the resource a `ResourcesToImport` entry names in moto's backends, and the
stack that already manages it.

`find(...)` answers the backend's model object (None when the resource does not exist)
and `physical_id(...)` the physical id CloudFormation gives it (queue URL, topic ARN,
bucket name, parameter name, role name, table name, function name, log group name, sg-id,
sgr-id, stack id). Only the types in `SUPPORTED` can be looked up."""
import json
from typing import Any, Callable
from urllib.parse import urlparse

from moto.utilities.utils import get_partition

from . import registry

Finder = Callable[[str, str, dict[str, str]], Any]
_types: registry.Registry | None = None
_schemas: dict[tuple[str, str], dict[str, Any] | None] = {}


class ImportedQueue:
    """An SQS queue brought into a stack. Its physical id (ListStackResources, `Ref`) is
    the queue URL the import named, the one SQS answers on this endpoint, as on AWS;
    moto's own model would say `https://sqs.<region>.amazonaws.com/...`. Everything else
    is the queue's."""

    def __init__(self, queue: Any, url: str) -> None:
        self.wrapped = queue
        self.url = url

    def __getattr__(self, name: str) -> Any:
        if name == "wrapped":  # not set yet (copying, unpickling)
            raise AttributeError(name)
        return getattr(self.wrapped, name)

    @property
    def physical_resource_id(self) -> str:
        return self.url

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        if attribute_name == "QueueUrl":
            return self.url
        return self.wrapped.get_cfn_attribute(attribute_name)


class ImportedIngress:
    """An ingress rule brought into a stack: moto's own SecurityGroupIngress model has
    no rule id, so its physical id would be empty. (Neither wrapper is a
    CloudFormationModel: moto maps every subclass of that by type name.)"""

    def __init__(self, rule: Any, account_id: str, region_name: str) -> None:
        self.wrapped = rule
        self.account_id = account_id
        self.region_name = region_name

    def is_created(self) -> bool:
        return True

    @property
    def physical_resource_id(self) -> str:
        return self.wrapped.id

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        if attribute_name == "Id":
            return self.wrapped.id
        raise NotImplementedError(f"{attribute_name} of an imported ingress rule")

    def delete(self, account_id: str, region_name: str) -> None:
        """Removes the rule from its group (DeleteStack and removal from the template)."""
        from moto.ec2.models import ec2_backends

        group = ec2_backends[account_id][region_name].get_security_group_from_id(
            self.wrapped.group_id
        )
        if group is not None and self.wrapped in group.ingress_rules:
            group.ingress_rules.remove(self.wrapped)


def _schema(type_name: str, region: str) -> dict[str, Any] | None:
    """The type's provider schema from the registry, or None for an unknown type."""
    global _types
    if _types is None:
        _types = registry.Registry()
    key = (region, type_name)
    if key not in _schemas:
        text = _types.schema_text(region, type_name)
        try:
            _schemas[key] = json.loads(text) if text is not None else None
        except ValueError:
            _schemas[key] = None
    return _schemas[key]


def primary_identifier(type_name: str, region: str) -> list[str] | None:
    """The property names of the type's primaryIdentifier; None for a type the registry
    does not know."""
    schema = _schema(type_name, region)
    if schema is None:
        return None
    return [str(p).rsplit("/", 1)[-1] for p in schema.get("primaryIdentifier") or []]


def importable(type_name: str, region: str) -> bool:
    """Whether the registry has the type with create, read and delete handlers (a
    NON_PROVISIONABLE type, such as AWS::IAM::Policy, cannot be imported)."""
    schema = _schema(type_name, region)
    return schema is not None and registry.provisioning_type(schema) != "NON_PROVISIONABLE"


def _sqs(account: str, region: str, ident: dict[str, str]) -> Any:
    from moto.sqs.models import sqs_backends

    path = urlparse(ident["QueueUrl"]).path.strip("/").split("/")
    if len(path) < 2 or path[-2] != account:
        return None
    queue = sqs_backends[account][region].queues.get(path[-1])
    return ImportedQueue(queue, ident["QueueUrl"]) if queue is not None else None


def _sns(account: str, region: str, ident: dict[str, str]) -> Any:
    from moto.sns.models import sns_backends

    return sns_backends[account][region].topics.get(ident["TopicArn"])


def _s3(account: str, region: str, ident: dict[str, str]) -> Any:
    from moto.s3.models import s3_backends

    bucket = s3_backends[account][get_partition(region)].buckets.get(ident["BucketName"])
    return bucket if bucket is not None and bucket.region_name == region else None


def _ssm(account: str, region: str, ident: dict[str, str]) -> Any:
    from moto.ssm.models import ssm_backends

    try:
        return ssm_backends[account][region].get_parameter(ident["Name"])
    except Exception:  # noqa: BLE001 - malformed names
        return None


def _iam_role(account: str, region: str, ident: dict[str, str]) -> Any:
    from moto.iam.models import iam_backends

    roles = iam_backends[account][get_partition(region)].roles.values()
    return next((r for r in roles if r.name == ident["RoleName"]), None)


def _dynamodb(account: str, region: str, ident: dict[str, str]) -> Any:
    from moto.dynamodb.models import dynamodb_backends

    return dynamodb_backends[account][region].tables.get(ident["TableName"])


def _lambda(account: str, region: str, ident: dict[str, str]) -> Any:
    from moto.awslambda.models import lambda_backends

    try:
        return lambda_backends[account][region].get_function(ident["FunctionName"])
    except Exception:  # noqa: BLE001 - UnknownFunctionException and malformed names
        return None


def _logs(account: str, region: str, ident: dict[str, str]) -> Any:
    from moto.logs.models import logs_backends

    return logs_backends[account][region].groups.get(ident["LogGroupName"])


def _security_group(account: str, region: str, ident: dict[str, str]) -> Any:
    from moto.ec2.models import ec2_backends

    return ec2_backends[account][region].get_security_group_from_id(ident["Id"])


def _ingress(account: str, region: str, ident: dict[str, str]) -> Any:
    from moto.ec2.models import ec2_backends

    for by_vpc in ec2_backends[account][region].groups.values():
        for group in by_vpc.values():
            for rule in group.ingress_rules:
                if rule.id == ident["Id"]:
                    return ImportedIngress(rule, account, region)
    return None


def _stack(account: str, region: str, ident: dict[str, str]) -> Any:
    from moto.cloudformation.models import cloudformation_backends

    stack = cloudformation_backends[account][region].stacks.get(ident["StackId"])
    return stack if stack is not None and stack.status != "DELETE_COMPLETE" else None


SUPPORTED: dict[str, Finder] = {
    "AWS::SQS::Queue": _sqs,
    "AWS::SNS::Topic": _sns,
    "AWS::S3::Bucket": _s3,
    "AWS::SSM::Parameter": _ssm,
    "AWS::IAM::Role": _iam_role,
    "AWS::DynamoDB::Table": _dynamodb,
    "AWS::Lambda::Function": _lambda,
    "AWS::Logs::LogGroup": _logs,
    "AWS::EC2::SecurityGroup": _security_group,
    "AWS::EC2::SecurityGroupIngress": _ingress,
    "AWS::CloudFormation::Stack": _stack,
}


def find(type_name: str, ident: dict[str, str], account: str, region: str) -> Any:
    """The model the identifier names, or None when it does not exist. KeyError for a
    type the emulator cannot look up."""
    return SUPPORTED[type_name](account, region, ident)


def physical_id(model: Any) -> str:
    """The physical id CloudFormation records; a stack's is its id, not its name."""
    if type(model).__name__ == "Stack" and hasattr(model, "stack_id"):
        return model.stack_id
    return str(getattr(model, "physical_resource_id", "") or "")


def unwrapped(model: Any) -> Any:
    """The backend's object behind a wrapper (queue, ingress rule), else the model."""
    return model.__dict__.get("wrapped", model) if hasattr(model, "__dict__") else model


def _same(a: Any, b: Any) -> bool:
    """Whether two models are the same resource."""
    return unwrapped(a) is unwrapped(b)


def owner(model: Any, type_name: str, account: str, region: str, skip: str | None = None) -> Any:
    """The stack (other than the one whose id is `skip`) whose resources include
    `model`: the same object in any region of the account, or the same type and
    physical id in `region`."""
    from moto.cloudformation.models import cloudformation_backends

    wanted = physical_id(model)
    for stack_region, backend in list(cloudformation_backends[account].items()):
        for stack in list(backend.stacks.values()):
            if stack.stack_id == skip or stack.status == "DELETE_COMPLETE":
                continue
            for held in managed_resources(stack):
                if _same(held, model) or (
                    stack_region == region
                    and getattr(held, "cf_resource_type", None) == type_name
                    and physical_id(held) == wanted
                ):
                    return stack
    return None


def managed_resources(stack: Any) -> list[Any]:
    """The resource models a stack holds now (not the parameters, mappings and pseudo
    parameters moto keeps beside them, nor resources removed from its template)."""
    resource_map = stack.resource_map
    in_template = resource_map._resource_json_map
    return [
        value
        for key, value in list(resource_map._parsed_resources.items())
        if key in in_template and hasattr(value, "cf_resource_type")
    ]
