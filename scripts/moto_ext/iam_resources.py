"""What a request asks IAM to authorize: its action, the resource ARN(s) and the request's
condition keys, as AWS's Service Authorization Reference defines the resource type of
each action, for `iam_enforce`.

`checks(response, service, operation, moto_resource)` answers a list of `Check`s, every
one of which must be allowed: usually one (the action on its resource), one per
resource when a request names several (`events:PutEvents` on each entry's bus,
`ssm:GetParameters` on each name, `dynamodb:BatchWriteItem` on each table), and an
`iam:PassRole` check when the request passes a role to the service (CloudFormation's
RoleARN, a Lambda function's Role, a state machine's roleArn, an EventBridge target's
RoleArn), with `iam:PassedToService` set. An action this module does not know keeps
moto's resource (`*`, or what the response class's `_determine_resource` found): right
for the actions AWS authorizes on `*`, and never wider than AWS for the others. The
per-service tables are here (CloudFormation, SNS, EventBridge), in `iam_resources_apps`
(SSM, Step Functions, Lambda) and in `iam_resources_more` (IAM, STS, SQS, DynamoDB,
CloudWatch Logs, EC2)."""
import json
from dataclasses import dataclass, field
from typing import Any, Callable

from moto.utilities.utils import get_partition

# The IAM service prefix of a SigV4 signing name, where they differ.
SERVICE_PREFIX = {"monitoring": "cloudwatch", "email": "ses"}
# The IAM action of an API operation, where the names differ.
ACTION_NAMES = {("lambda", "Invoke"): "InvokeFunction", ("lambda", "InvokeWithResponseStream"): "InvokeFunction"}


@dataclass
class Check:
    action: str
    resource: str
    context: dict[str, list[str]] = field(default_factory=dict)


class Req:
    """The request as the resolvers see it."""

    def __init__(self, response: Any, prefix: str, operation: str, action: str, region: str) -> None:
        self.response, self.prefix, self.op, self.action = response, prefix, operation, action
        self.region = region
        self.account = response.current_account
        self.partition = get_partition(region)

    def param(self, name: str, default: Any = None) -> Any:
        try:
            value = self.response._get_param(name)
        except Exception:  # noqa: BLE001 - a parameter the protocol parser cannot give
            return default
        return default if value is None else value

    def body(self) -> dict[str, Any]:
        """The JSON body (REST-JSON services), {} when there is none."""
        try:
            parsed = json.loads(self.response.body or "{}")
        except (TypeError, ValueError):
            return {}
        return parsed if isinstance(parsed, dict) else {}

    def arn(self, service: str, rest: str, region: str | None = None, account: str | None = None) -> str:
        region = self.region if region is None else region
        return f"arn:{self.partition}:{service}:{region}:{self.account if account is None else account}:{rest}"

    def check(self, resource: str, context: dict[str, list[str]] | None = None) -> Check:
        return Check(self.action, resource, context or {})


Resolver = Callable[[Req], "list[Check] | None"]
RESOLVERS: dict[str, Resolver] = {}


def resolver(prefix: str) -> Callable[[Resolver], Resolver]:
    def register(fn: Resolver) -> Resolver:
        RESOLVERS[prefix] = fn
        return fn
    return register


def pass_role(req: Req, role_arn: str, service: str, associated: str | None = None) -> Check:
    """The iam:PassRole a request implies when it hands a role to `service`."""
    context = {"iam:passedtoservice": [service]}
    if associated:
        context["iam:associatedresourcearn"] = [associated]
    return Check("iam:PassRole", role_arn, context)


def request_tags(tags: Any) -> dict[str, list[str]]:
    """aws:RequestTag/<key> and aws:TagKeys from a request's tags ([{Key, Value}] or a map)."""
    pairs: list[tuple[str, str]] = []
    if isinstance(tags, dict):
        pairs = [(str(k), str(v)) for k, v in tags.items()]
    elif isinstance(tags, list):
        pairs = [(str(t.get("Key", t.get("key"))), str(t.get("Value", t.get("value", ""))))
                 for t in tags if isinstance(t, dict) and ("Key" in t or "key" in t)]
    if not pairs:
        return {}
    context = {f"aws:requesttag/{k.lower()}": [v] for k, v in pairs}
    context["aws:tagkeys"] = [k for k, _ in pairs]
    return context


def resource_tags(tags: Any) -> dict[str, list[str]]:
    """aws:ResourceTag/<key> from a resource's tags (a map, or [{Key, Value}])."""
    if isinstance(tags, list):
        tags = {t.get("Key"): t.get("Value") for t in tags if isinstance(t, dict)}
    if not isinstance(tags, dict):
        return {}
    out = {}
    for key, value in tags.items():
        if isinstance(value, dict):  # moto's IAM keeps {key: {"Key": k, "Value": v}}
            value = value.get("Value")
        out[f"aws:resourcetag/{str(key).lower()}"] = [str(value)]
    return out


def checks(response: Any, service: str, region: str, operation: str, moto_resource: str) -> list[Check]:
    """The checks of one request (module docstring)."""
    from . import iam_resources_apps, iam_resources_more  # noqa: F401 - register the other services

    prefix = SERVICE_PREFIX.get(service, service)
    action = f"{prefix}:{ACTION_NAMES.get((prefix, operation), operation)}"
    req = Req(response, prefix, operation, action, region)
    found = RESOLVERS[prefix](req) if prefix in RESOLVERS else None
    return found if found is not None else [Check(action, moto_resource)]


# ---- CloudFormation ----------------------------------------------------------------

_CFN_STACK = {
    "CancelUpdateStack", "ContinueUpdateRollback", "CreateChangeSet", "CreateStack",
    "DeleteChangeSet", "DeleteStack", "DescribeChangeSet", "DescribeChangeSetHooks",
    "DescribeStackEvents", "DescribeStackResource", "DescribeStackResourceDrifts",
    "DetectStackDrift", "DetectStackResourceDrift", "ExecuteChangeSet", "GetStackPolicy",
    "GetTemplate", "ListChangeSets", "ListStackResources", "RecordHandlerProgress",
    "RollbackStack", "SetStackPolicy", "SignalResource", "UpdateStack",
    "UpdateTerminationProtection",
    # the resource is optional: `*` when the request names no stack
    "DescribeStacks", "DescribeStackResources", "GetTemplateSummary",
}
# the actions with the cloudformation:ChangeSetName condition key (GetTemplate takes a
# change set too, without the key)
_CFN_CHANGE_SET = {"CreateChangeSet", "DescribeChangeSet", "DescribeChangeSetHooks", "DeleteChangeSet",
                   "ExecuteChangeSet"}
_CFN_ROLE = {"CreateChangeSet", "CreateStack", "UpdateStack", "DeleteStack", "ContinueUpdateRollback",
             "RollbackStack"}
_CFN_TAGGED = {"CreateChangeSet", "CreateStack", "UpdateStack"}


def _cfn_backend(req: Req) -> Any:
    from moto.cloudformation.models import cloudformation_backends
    return cloudformation_backends[req.account][req.region]


@resolver("cloudformation")
def _cloudformation(req: Req) -> list[Check] | None:
    if req.op not in _CFN_STACK:
        return None
    backend = _cfn_backend(req)
    context: dict[str, list[str]] = {}
    stack_ref = req.param("StackName")
    if (req.op in _CFN_CHANGE_SET or req.op == "GetTemplate") and req.param("ChangeSetName"):
        change_set = str(req.param("ChangeSetName"))
        if change_set.startswith("arn:"):  # arn:...:changeSet/<name>/<id>: the stack is its own
            found = backend.change_sets.get(change_set)
            stack_ref = stack_ref or (found.stack_id if found is not None else None)
            change_set = change_set.split(":", 5)[5].split("/")[1] if change_set.count("/") >= 2 else change_set
        if req.op in _CFN_CHANGE_SET:
            context["cloudformation:changesetname"] = [change_set]
    if not stack_ref:
        return [req.check("*", context)] if req.op in ("DescribeStacks", "DescribeStackResources",
                                                       "GetTemplateSummary") else None
    stack_arn, stack = _cfn_stack(req, backend, str(stack_ref))
    if stack is not None:
        context.update(resource_tags(stack.tags))
    extra: list[Check] = []
    if req.op in _CFN_TAGGED:
        context.update(request_tags(req.param("Tags")))
        if req.param("TemplateURL"):
            context["cloudformation:templateurl"] = [str(req.param("TemplateURL"))]
        if req.param("StackPolicyURL"):
            context["cloudformation:stackpolicyurl"] = [str(req.param("StackPolicyURL"))]
        if req.param("ResourceTypes"):
            context["cloudformation:resourcetypes"] = [str(t) for t in req.param("ResourceTypes")]
        imports = req.param("ResourcesToImport") or []
        if imports:
            context["cloudformation:importresourcetypes"] = [
                str(r.get("ResourceType")) for r in imports if isinstance(r, dict)
            ]
    if req.op in _CFN_ROLE and req.param("RoleARN"):
        role = str(req.param("RoleARN"))
        context["cloudformation:rolearn"] = [role]
        extra.append(pass_role(req, role, "cloudformation.amazonaws.com", stack_arn))
    return [req.check(stack_arn, context), *extra]


def _cfn_stack(req: Req, backend: Any, name_or_id: str) -> tuple[str, Any]:
    """A stack's ARN (its StackId) and the stack; `stack/<name>/*` for a name no live
    stack has (a stack about to be created, or gone)."""
    if name_or_id.startswith("arn:"):
        return name_or_id, backend.stacks.get(name_or_id) or backend.deleted_stacks.get(name_or_id)
    for stack in backend.stacks.values():
        if stack.name == name_or_id and stack.status != "DELETE_COMPLETE":
            return stack.stack_id, stack
    return req.arn("cloudformation", f"stack/{name_or_id}/*"), None


# ---- SNS ---------------------------------------------------------------------------

_SNS_TOPIC = {"Publish", "PublishBatch", "DeleteTopic", "GetTopicAttributes", "SetTopicAttributes",
              "Subscribe", "ListSubscriptionsByTopic", "ConfirmSubscription", "AddPermission",
              "RemovePermission", "GetDataProtectionPolicy", "PutDataProtectionPolicy"}


@resolver("sns")
def _sns(req: Req) -> list[Check] | None:
    if req.op == "CreateTopic" and req.param("Name"):
        return [req.check(req.arn("sns", str(req.param("Name"))), request_tags(req.param("Tags")))]
    if req.op in ("TagResource", "UntagResource", "ListTagsForResource") and req.param("ResourceArn"):
        context = request_tags(req.param("Tags")) if req.op == "TagResource" else {}
        return [req.check(str(req.param("ResourceArn")), context)]
    if req.op in _SNS_TOPIC:
        topic = req.param("TopicArn") or (req.param("TargetArn") if req.op == "Publish" else None)
        if topic:
            context = {}
            if req.op == "Subscribe":
                context = {"sns:protocol": [str(req.param("Protocol", ""))],
                           "sns:endpoint": [str(req.param("Endpoint", ""))]}
            return [req.check(str(topic), context)]
    return None  # Unsubscribe, Get/SetSubscriptionAttributes, ListTopics...: moto's `*`


# ---- EventBridge -------------------------------------------------------------------

_EVENTS_RULE = {"PutRule", "DeleteRule", "DescribeRule", "EnableRule", "DisableRule", "PutTargets",
                "RemoveTargets", "ListTargetsByRule"}
_EVENTS_BUS = {"CreateEventBus", "DeleteEventBus", "DescribeEventBus", "UpdateEventBus"}


def _bus_name(bus: Any) -> str:
    bus = str(bus or "default")
    return bus.split("event-bus/", 1)[1] if bus.startswith("arn:") and "event-bus/" in bus else bus


def _bus_arn(req: Req, bus: Any) -> str:
    return str(bus) if str(bus or "").startswith("arn:") else req.arn("events", f"event-bus/{_bus_name(bus)}")


@resolver("events")
def _events(req: Req) -> list[Check] | None:
    if req.op == "PutEvents":
        out: dict[tuple[str, str, str], Check] = {}
        for entry in req.param("Entries") or []:
            if not isinstance(entry, dict):
                continue
            bus = _bus_arn(req, entry.get("EventBusName"))
            source, detail_type = str(entry.get("Source", "")), str(entry.get("DetailType", ""))
            out.setdefault((bus, source, detail_type), req.check(bus, {
                "events:source": [source], "events:detail-type": [detail_type]}))
        return list(out.values()) or None
    if req.op in _EVENTS_RULE:
        name = req.param("Rule") if req.op in ("PutTargets", "RemoveTargets", "ListTargetsByRule") else req.param("Name")
        if not name:
            return None
        bus = _bus_name(req.param("EventBusName"))
        rule = req.arn("events", f"rule/{name}" if bus == "default" else f"rule/{bus}/{name}")
        context = request_tags(req.param("Tags")) if req.op == "PutRule" else {}
        extra = [pass_role(req, str(t["RoleArn"]), "events.amazonaws.com", rule)
                 for t in (req.param("Targets") or []) if isinstance(t, dict) and t.get("RoleArn")] \
            if req.op == "PutTargets" else []
        if req.op == "PutRule" and req.param("RoleArn"):
            extra.append(pass_role(req, str(req.param("RoleArn")), "events.amazonaws.com", rule))
        return [req.check(rule, context), *extra]
    if req.op in _EVENTS_BUS:
        return [req.check(_bus_arn(req, req.param("Name")), request_tags(req.param("Tags")))]
    if req.op in ("TagResource", "UntagResource", "ListTagsForResource") and req.param("ResourceARN"):
        return [req.check(str(req.param("ResourceARN")))]
    return None  # ListRules, ListEventBuses...: `*`
