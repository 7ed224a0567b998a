"""The resource ARNs of SSM Parameter Store, Step Functions and Lambda actions, for
`iam_resources` (see there)."""
from urllib.parse import unquote

from .iam_resources import Check, Req, pass_role, request_tags, resolver

# ---- SSM Parameter Store -----------------------------------------------------------

_SSM_ONE = {"GetParameter", "PutParameter", "DeleteParameter", "GetParameterHistory",
            "LabelParameterVersion", "UnlabelParameterVersion"}


def _parameter_arn(req: Req, name: str) -> str:
    if name.startswith("arn:"):
        head, _, rest = name.partition(":parameter/")
        return f"{head}:parameter/{rest.split(':')[0]}" if rest else name
    name = name.split(":")[0]  # without a version or label selector (`name:3`)
    return req.arn("ssm", "parameter/" + name.lstrip("/"))


@resolver("ssm")
def _ssm(req: Req) -> list[Check] | None:
    if req.op in _SSM_ONE and req.param("Name"):
        context = request_tags(req.param("Tags")) if req.op == "PutParameter" else {}
        return [req.check(_parameter_arn(req, str(req.param("Name"))), context)]
    if req.op in ("GetParameters", "DeleteParameters") and req.param("Names"):
        return [req.check(_parameter_arn(req, str(n))) for n in req.param("Names")]
    if req.op == "GetParametersByPath" and req.param("Path"):
        return [req.check(req.arn("ssm", "parameter/" + str(req.param("Path")).strip("/")))]
    if req.op in ("AddTagsToResource", "RemoveTagsFromResource", "ListTagsForResource") \
            and req.param("ResourceType") == "Parameter" and req.param("ResourceId"):
        return [req.check(_parameter_arn(req, str(req.param("ResourceId"))))]
    return None  # DescribeParameters...: `*`


# ---- Step Functions ----------------------------------------------------------------

_STATES_MACHINE = {"StartExecution", "StartSyncExecution", "DescribeStateMachine", "UpdateStateMachine",
                   "DeleteStateMachine", "ListExecutions", "PublishStateMachineVersion",
                   "ListStateMachineVersions", "ListStateMachineAliases"}
_STATES_EXECUTION = {"DescribeExecution", "StopExecution", "GetExecutionHistory",
                     "DescribeStateMachineForExecution", "RedriveExecution"}
_STATES_ACTIVITY = {"DeleteActivity", "DescribeActivity", "GetActivityTask"}


@resolver("states")
def _states(req: Req) -> list[Check] | None:
    if req.op == "CreateStateMachine" and req.param("name"):
        machine = req.arn("states", f"stateMachine:{req.param('name')}")
        extra = [pass_role(req, str(req.param("roleArn")), "states.amazonaws.com", machine)] \
            if req.param("roleArn") else []
        return [req.check(machine, request_tags(req.param("tags"))), *extra]
    if req.op in _STATES_MACHINE and req.param("stateMachineArn"):
        machine = str(req.param("stateMachineArn"))
        extra = [pass_role(req, str(req.param("roleArn")), "states.amazonaws.com", machine)] \
            if req.op == "UpdateStateMachine" and req.param("roleArn") else []
        return [req.check(machine), *extra]
    if req.op in _STATES_EXECUTION and req.param("executionArn"):
        return [req.check(str(req.param("executionArn")))]
    if req.op == "CreateActivity" and req.param("name"):
        return [req.check(req.arn("states", f"activity:{req.param('name')}"), request_tags(req.param("tags")))]
    if req.op in _STATES_ACTIVITY and req.param("activityArn"):
        return [req.check(str(req.param("activityArn")))]
    if req.op in ("TagResource", "UntagResource", "ListTagsForResource") and req.param("resourceArn"):
        return [req.check(str(req.param("resourceArn")))]
    return None  # SendTaskSuccess / SendTaskFailure / SendTaskHeartbeat, List*: `*`


# ---- Lambda ------------------------------------------------------------------------

_LAMBDA_FUNCTION = {
    "Invoke", "InvokeAsync", "InvokeWithResponseStream", "GetFunction", "GetFunctionConfiguration",
    "DeleteFunction", "UpdateFunctionCode", "UpdateFunctionConfiguration", "GetPolicy",
    "AddPermission", "RemovePermission", "ListVersionsByFunction", "PublishVersion", "CreateAlias",
    "GetAlias", "DeleteAlias", "UpdateAlias", "ListAliases", "PutFunctionConcurrency",
    "GetFunctionConcurrency", "DeleteFunctionConcurrency", "GetFunctionUrlConfig",
    "CreateFunctionUrlConfig", "DeleteFunctionUrlConfig", "UpdateFunctionUrlConfig",
    "GetFunctionEventInvokeConfig", "PutFunctionEventInvokeConfig", "DeleteFunctionEventInvokeConfig",
    "UpdateFunctionEventInvokeConfig", "ListFunctionEventInvokeConfigs", "GetFunctionRecursionConfig",
    "PutFunctionRecursionConfig", "GetFunctionCodeSigningConfig", "PutFunctionCodeSigningConfig",
    "DeleteFunctionCodeSigningConfig", "GetRuntimeManagementConfig", "PutRuntimeManagementConfig",
}


def function_arn(req: Req, name: str, qualifier: str | None = None) -> str:
    """A function's ARN from a FunctionName (name, `name:qualifier`, partial or full
    ARN) and a Qualifier: the qualified ARN when a version or alias is named."""
    name = unquote(name)
    if name.startswith("arn:"):
        arn = name
    elif ":function:" in name:  # 123456789012:function:name
        arn = f"arn:{req.partition}:lambda:{req.region}:{name}"
    else:
        arn = req.arn("lambda", f"function:{name}")
    if qualifier and arn.count(":") == 6:
        arn += f":{qualifier}"
    return arn


@resolver("lambda")
def _lambda(req: Req) -> list[Check] | None:
    uri = getattr(req.response, "uri_match", None) or {}
    query = getattr(req.response, "querystring", {}) or {}
    qualifier = query.get("Qualifier", [None])[0] if isinstance(query.get("Qualifier"), list) else None
    if req.op == "CreateFunction":
        body = req.body()
        if not body.get("FunctionName"):
            return None
        function = function_arn(req, str(body["FunctionName"]))
        extra = [pass_role(req, str(body["Role"]), "lambda.amazonaws.com", function)] if body.get("Role") else []
        return [req.check(function, request_tags(body.get("Tags"))), *extra]
    if req.op in _LAMBDA_FUNCTION and uri.get("FunctionName"):
        function = function_arn(req, str(uri["FunctionName"]), qualifier)
        extra = []
        if req.op == "UpdateFunctionConfiguration" and req.body().get("Role"):
            extra.append(pass_role(req, str(req.body()["Role"]), "lambda.amazonaws.com", function))
        return [req.check(function), *extra]
    if req.op in ("GetLayerVersion", "DeleteLayerVersion") and uri.get("LayerName"):
        layer = unquote(str(uri["LayerName"]))
        layer = layer if layer.startswith("arn:") else req.arn("lambda", f"layer:{layer}")
        return [req.check(f"{layer}:{uri.get('VersionNumber', '*')}")]
    if req.op in ("ListTags", "TagResource", "UntagResource") and uri.get("Resource"):
        return [req.check(unquote(str(uri["Resource"])))]
    return None  # ListFunctions, ListLayers, event source mappings...: `*`
