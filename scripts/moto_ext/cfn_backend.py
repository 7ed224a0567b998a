"""What the SAM-translated backend template (infra/template.yaml through aws-sam-translator,
scripts/deploy_backend.py) needs from CloudFormation and the pinned moto lacks, patched
into moto's CloudFormation models at start-up (`install()`), each toward AWS's documented
behaviour (the docstring of each patch says which):

- template functions: `AWS::NoValue` removes a list item too (`Fn::If` in a list);
- `AWS::StepFunctions::StateMachine`: `DefinitionS3Location` (read from moto's S3),
  `Definition` (an object), `DefinitionSubstitutions`, `LoggingConfiguration`,
  `TracingConfiguration`, `StateMachineType`; created in the Step Functions backend the
  API serves (moto's interpreter keeps state machines of its own); `Fn::GetAtt` `Arn`,
  `Name`, `StateMachineRevisionId`;
- `AWS::Lambda::Function`: `Architectures`, `LoggingConfig`, `Tags`, `EphemeralStorage`,
  `TracingConfig`, `Layers`, `KmsKeyArn`, `PackageType`, `ImageConfig` (moto passed on
  only Description, MemorySize, Timeout, Environment, VpcConfig, Publish and reserved
  concurrency); `LoggingConfig` also through the Lambda API (Create/UpdateFunction-
  Configuration, GetFunction[Configuration]), and the function's log group is its
  `LoggingConfig.LogGroup`;
- `AWS::IAM::Role`: `ManagedPolicyArns` attached (moto ignored them), an AWS managed
  policy among them taken from moto's bundled copy of AWS's managed policies; inline
  `Policies` stored as JSON (moto kept the object, and GetRolePolicy answered its repr);
  on delete its managed policies detached first (DeleteStack failed with DeleteConflict);
- `AWS::IAM::ManagedPolicy`: deleted with the stack, detached from everything first;
- `AWS::Lambda::Permission`: a statement id of its own (the physical id), the statement
  AWS writes (no `FunctionName` member), and removed on delete;
- `AWS::Scheduler::Schedule` and `AWS::SNS::Subscription`: created through moto's
  Scheduler and SNS backends (moto's CloudFormation had no such types);
- CreateStack: a resource that fails to create is a `CREATE_FAILED` event with its
  reason and the stack rolls back to `ROLLBACK_COMPLETE` (moto answered HTTP 500).

What moto already creates as AWS does for this template (checked, not patched):
`AWS::Logs::LogGroup` (LogGroupName, RetentionInDays), `AWS::IAM::ManagedPolicy` (Ref is
the ARN), `AWS::Events::Rule` (EventPattern, Lambda
Targets), `AWS::SNS::Topic`, Lambda `Code` from `S3Bucket`/`S3Key`, `Environment`,
`Timeout`, `MemorySize`, Conditions, and `Fn::If` / `AWS::NoValue` in an object."""
import json
from typing import Any

from moto.cloudformation import parsing
from moto.core.common_models import CloudFormationModel
from moto.utilities.utils import get_partition

_originals: dict[str, Any] = {}


# ---- template functions ----------------------------------------------------------------


def _clean_json(resource_json: Any, resources_map: Any) -> Any:
    """`AWS::NoValue`: "Removes the corresponding resource property when specified as a
    return value in the Fn::If intrinsic function" (AWS, Pseudo parameters reference); in
    a list, the item is removed (moto kept a `None` item: a `Policies` or
    `ManagedPolicyArns` list held a null)."""
    if isinstance(resource_json, list):
        out = []
        for item in resource_json:
            cleaned = _clean_json(item, resources_map)
            if cleaned is None and isinstance(item, dict) and _is_no_value(item, resources_map):
                continue
            out.append(cleaned)
        return out
    return _originals["clean_json"](resource_json, resources_map)


def _is_no_value(item: dict[str, Any], resources_map: Any) -> bool:
    """The item is `{"Ref": "AWS::NoValue"}`, or an `Fn::If` whose chosen branch is."""
    if item.get("Ref") == "AWS::NoValue":
        return True
    branches = item.get("Fn::If")
    if isinstance(branches, list) and len(branches) == 3:
        chosen = branches[1] if resources_map.lazy_condition_map[branches[0]] else branches[2]
        return isinstance(chosen, dict) and _is_no_value(chosen, resources_map)
    return False


def _tags_dict(tags: Any) -> dict[str, str]:
    """CloudFormation's `[{Key, Value}]` tags as the `{key: value}` the APIs take."""
    if isinstance(tags, dict):
        return {str(k): str(v) for k, v in tags.items()}
    return {t["Key"]: str(t.get("Value", "")) for t in tags or [] if isinstance(t, dict) and "Key" in t}


# ---- AWS::StepFunctions::StateMachine ----------------------------------------------------


def _sfn_backend(account_id: str, region_name: str) -> Any:
    """The Step Functions backend the API serves now (moto's interpreter, when it is on,
    has a backend of its own): a state machine CloudFormation creates is the one
    DescribeStateMachine and StartExecution find."""
    from moto.stepfunctions import responses

    return responses.get_backend(account_id, region_name)


def _s3_text(bucket: str, key: str, version: str | None, account_id: str, region_name: str) -> str:
    from moto.s3.models import s3_backends

    from moto.cloudformation.exceptions import ValidationError

    backend = s3_backends[account_id][get_partition(region_name)]
    try:
        obj = backend.get_object(bucket, key, version_id=version)
    except Exception as e:  # noqa: BLE001 - moto raises several S3 errors
        raise ValidationError(message=f"DefinitionS3Location s3://{bucket}/{key}: {e}") from e
    if obj is None:
        raise ValidationError(message=f"DefinitionS3Location s3://{bucket}/{key} does not exist")
    return obj.value.decode("utf-8")


def substitute(definition: str, substitutions: dict[str, Any] | None) -> str:
    """`DefinitionSubstitutions`: "A map (string to string) that specifies the mappings for
    placeholder variables in the state machine definition. This enables the customer to
    inject values obtained at runtime, for example from intrinsic functions, in the state
    machine definition. Variables can be template parameter names, resource logical IDs,
    resource attributes, or a variable in a key-value map." Each `${Name}` whose Name is a
    key is replaced by its value (integers and booleans as their JSON text); a placeholder
    without a key is left as written."""
    for name, value in (substitutions or {}).items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        else:
            text = str(value)
        definition = definition.replace("${" + str(name) + "}", text)
    return definition


def state_machine_definition(properties: dict[str, Any], account_id: str, region_name: str) -> str:
    """The definition CloudFormation hands Step Functions: `DefinitionString`, or
    `Definition` (a JSON object, "the Amazon States Language definition of the state
    machine ... in JSON or YAML"), or the object `DefinitionS3Location` names ("The name
    of the S3 bucket where the state machine definition is stored. The definition must be
    a JSON or YAML file."; Bucket, Key, optional Version); then `DefinitionSubstitutions`,
    which apply to every one of the three."""
    if "DefinitionString" in properties:
        text = properties["DefinitionString"]
    elif "Definition" in properties:
        text = json.dumps(properties["Definition"])
    elif "DefinitionS3Location" in properties:
        location = properties["DefinitionS3Location"]
        text = _s3_text(location["Bucket"], location["Key"], location.get("Version"), account_id, region_name)
        if not text.lstrip().startswith("{"):
            import yaml

            text = json.dumps(yaml.safe_load(text))
    else:
        text = ""
    return substitute(text, properties.get("DefinitionSubstitutions"))


def _camel(value: Any) -> Any:
    """CloudFormation's PascalCase members as the API's camelCase ones (Step Functions'
    LoggingConfiguration / TracingConfiguration)."""
    if isinstance(value, dict):
        return {k[:1].lower() + k[1:]: _camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def _sm_create(cls: Any, resource_name: str, cloudformation_json: Any, account_id: str,
               region_name: str, **kwargs: Any) -> Any:
    """AWS::StepFunctions::StateMachine as AWS creates it: name (`StateMachineName`, else
    the generated one), the definition (see `state_machine_definition`), `RoleArn`,
    `StateMachineType` (STANDARD by default), `LoggingConfiguration` (Level,
    IncludeExecutionData, Destinations[].CloudWatchLogsLogGroup.LogGroupArn),
    `TracingConfiguration` and `Tags`."""
    properties = cloudformation_json["Properties"]
    logging_config = properties.get("LoggingConfiguration")
    tracing = properties.get("TracingConfiguration")
    return _sfn_backend(account_id, region_name).create_state_machine(
        properties.get("StateMachineName", resource_name),
        state_machine_definition(properties, account_id, region_name),
        properties.get("RoleArn", ""),
        tags=_cfn_to_api_tags(properties.get("Tags", [])),
        loggingConfiguration=_camel(logging_config) if logging_config else None,
        tracingConfiguration=_camel(tracing) if tracing else None,
        sm_type=properties.get("StateMachineType", "STANDARD"),
    )


def _cfn_to_api_tags(tags: Any) -> list[dict[str, str]]:
    return [{"key": k, "value": v} for k, v in _tags_dict(tags).items()]


def _sm_update(cls: Any, original_resource: Any, new_resource_name: str, cloudformation_json: Any,
               account_id: str, region_name: str) -> Any:
    """An update: a new `StateMachineName` replaces the state machine; otherwise the
    definition (with its substitutions), role, logging and tracing are updated in place."""
    properties = cloudformation_json.get("Properties", {})
    name = properties.get("StateMachineName", original_resource.name)
    backend = _sfn_backend(account_id, region_name)
    if name != original_resource.name:
        new = _sm_create(cls, name, cloudformation_json, account_id, region_name)
        backend.delete_state_machine(original_resource.arn)
        return new
    logging_config = properties.get("LoggingConfiguration")
    tracing = properties.get("TracingConfiguration")
    updated = backend.update_state_machine(
        original_resource.arn,
        definition=state_machine_definition(properties, account_id, region_name),
        role_arn=properties.get("RoleArn"),
        logging_configuration=_camel(logging_config) if logging_config else None,
        tracing_configuration=_camel(tracing) if tracing else None,
    )
    tags = _cfn_to_api_tags(properties.get("Tags", []))
    if tags:
        backend.tagger.tag_resource(updated.arn, tags)
    return updated


def _sm_delete(cls: Any, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str) -> None:
    _sfn_backend(account_id, region_name).delete_state_machine(resource_name)


def _sm_has_cfn_attr(cls: Any, attr: str) -> bool:
    """AWS::StepFunctions::StateMachine's return values: Arn, Name,
    StateMachineRevisionId (and moto's own DefinitionString, RoleArn, StateMachineName, Tags)."""
    return attr in ("Arn", "Name", "StateMachineRevisionId") or _originals["sm_has_cfn_attr"].__func__(cls, attr)


def _sm_get_cfn_attribute(self: Any, attribute_name: str) -> Any:
    if attribute_name == "Arn":
        return self.arn
    if attribute_name == "StateMachineRevisionId":
        return getattr(self, "revision_id", None) or self.arn
    return _originals["sm_get_cfn_attribute"](self, attribute_name)


# ---- AWS::Lambda::Function ---------------------------------------------------------------

# CloudFormation property -> the CreateFunction member moto's LambdaFunction reads.
_LAMBDA_EXTRA = {
    "Architectures": "Architectures",
    "LoggingConfig": "LoggingConfig",
    "EphemeralStorage": "EphemeralStorage",
    "TracingConfig": "TracingConfig",
    "Layers": "Layers",
    "KmsKeyArn": "KMSKeyArn",
    "PackageType": "PackageType",
    "ImageConfig": "ImageConfig",
}


def _lambda_create(cls: Any, resource_name: str, cloudformation_json: dict[str, Any], account_id: str,
                   region_name: str, **kwargs: Any) -> Any:
    """AWS::Lambda::Function with every property CloudFormation passes to CreateFunction
    (moto's model dropped Architectures, LoggingConfig, Tags, EphemeralStorage,
    TracingConfig, Layers, KmsKeyArn, PackageType, ImageConfig): moto creates the function,
    then the rest is set as CreateFunction would have set it."""
    properties = cloudformation_json["Properties"]
    fn = _originals["lambda_create"].__func__(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs)
    spec = {member: properties[prop] for prop, member in _LAMBDA_EXTRA.items() if prop in properties}
    if "Architectures" in spec:
        fn.architectures = list(spec["Architectures"])
    if "EphemeralStorage" in spec:
        fn.ephemeral_storage = spec["EphemeralStorage"].get("Size", 512)
    if "TracingConfig" in spec:
        fn.tracing_config = spec["TracingConfig"]
    if "KMSKeyArn" in spec:
        fn.kms_key_arn = spec["KMSKeyArn"]
    if "PackageType" in spec:
        fn.package_type = spec["PackageType"]
    if "Layers" in spec:
        fn.layers = fn._get_layers_data(spec["Layers"])
    if "LoggingConfig" in spec:
        _set_logging_config(fn, spec["LoggingConfig"])
    if "Tags" in properties:
        tags = _tags_dict(properties["Tags"])
        fn.tags = dict(fn.tags or {}, **tags)
        try:
            from moto.awslambda.models import lambda_backends

            lambda_backends[account_id][region_name].tag_resource(fn.function_arn, tags)
        except Exception:  # noqa: BLE001 - tags kept on the function itself at least
            pass
    return fn


def _set_logging_config(fn: Any, config: dict[str, Any] | None) -> None:
    """`LoggingConfig` as Lambda keeps it: "LogFormat" Text by default; "LogGroup" the
    function's own `/aws/lambda/<name>` by default, and where its logs go; with JSON,
    "ApplicationLogLevel" and "SystemLogLevel" INFO by default (Lambda developer guide,
    "Configuring advanced logging controls")."""
    config = dict(config or {})
    current = getattr(fn, "logging_config", None) or {}
    merged = dict(current, **config)
    merged.setdefault("LogFormat", "Text")
    merged.setdefault("LogGroup", f"/aws/lambda/{fn.function_name}")
    if merged["LogFormat"] == "JSON":
        merged.setdefault("ApplicationLogLevel", "INFO")
        merged.setdefault("SystemLogLevel", "INFO")
    else:
        merged.pop("ApplicationLogLevel", None)
        merged.pop("SystemLogLevel", None)
    fn.logging_config = merged
    fn.logs_group_name = merged["LogGroup"]


def _lambda_init(self: Any, account_id: str, spec: dict[str, Any], *args: Any, **kwargs: Any) -> None:
    """CreateFunction's `LoggingConfig` kept (moto dropped it)."""
    _originals["lambda_init"](self, account_id, spec, *args, **kwargs)
    _set_logging_config(self, spec.get("LoggingConfig"))


def _lambda_get_configuration(self: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """GetFunction / GetFunctionConfiguration answer the function's `LoggingConfig`, as
    Lambda does for every function."""
    config = _originals["lambda_get_configuration"](self, *args, **kwargs)
    if getattr(self, "logging_config", None):
        config["LoggingConfig"] = dict(self.logging_config)
    return config


def _lambda_update_configuration(self: Any, config_updates: dict[str, Any]) -> dict[str, Any]:
    """UpdateFunctionConfiguration (and an update by CloudFormation) takes `LoggingConfig`."""
    answer = _originals["lambda_update_configuration"](self, config_updates)
    if "LoggingConfig" in config_updates:
        _set_logging_config(self, config_updates["LoggingConfig"])
        if isinstance(answer, dict):
            answer["LoggingConfig"] = dict(self.logging_config)
    return answer


# ---- AWS::IAM::Role ----------------------------------------------------------------------


def _managed_policy(backend: Any, arn: str) -> None:
    """An AWS managed policy (`arn:aws:iam::aws:policy/...`) exists in every account:
    when moto did not load AWS's managed policies (MOTO_IAM_LOAD_MANAGED_POLICIES is off),
    the one named is taken from moto's bundled copy of them."""
    if arn in backend.managed_policies or ":iam::aws:policy/" not in arn:
        return
    from moto.iam.aws_managed_policies import aws_managed_policies_data
    from moto.iam.models import AWSManagedPolicy

    name = arn.rsplit("/", 1)[-1]
    data = json.loads(aws_managed_policies_data).get(name)
    if data is None:
        return
    policy = AWSManagedPolicy.from_data(name, backend.account_id, backend.region_name, data)
    if policy.arn == arn:
        backend.managed_policies[policy.arn] = policy


def _role_create(cls: Any, resource_name: str, cloudformation_json: dict[str, Any], account_id: str,
                 region_name: str, **kwargs: Any) -> Any:
    """AWS::IAM::Role: "ManagedPolicyArns: A list of Amazon Resource Names (ARNs) of the
    IAM managed policies that you want to attach to the role." Each is attached after
    the role and its inline `Policies` are created (moto ignored the list); a policy
    that does not exist fails the resource, as IAM's AttachRolePolicy does, and the role
    is removed again. Each inline policy document is stored as the JSON PutRolePolicy
    takes (moto stored the template's object, so GetRolePolicy answered its Python repr
    and IAM enforcement could not read it)."""
    from moto.iam.models import iam_backends

    properties = cloudformation_json["Properties"]
    policies = []
    for policy in properties.get("Policies") or []:
        document = policy.get("PolicyDocument")
        if not isinstance(document, str):
            policy = dict(policy, PolicyDocument=json.dumps(document))
        policies.append(policy)
    if policies:
        cloudformation_json = dict(cloudformation_json, Properties=dict(properties, Policies=policies))
    role = _originals["role_create"].__func__(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs)
    backend = iam_backends[account_id][get_partition(region_name)]
    try:
        for arn in cloudformation_json["Properties"].get("ManagedPolicyArns") or []:
            _managed_policy(backend, arn)
            backend.attach_role_policy(arn, role.name)
    except Exception:
        # The resource failed: nothing of it is left (CloudFormation's handler cleans up).
        for arn in list(role.managed_policies):
            backend.detach_role_policy(arn, role.name)
        for name in list(role.policies):
            role.delete_policy(name)
        backend.delete_role(role.name)
        raise
    return role


def _role_delete(cls: Any, resource_name: str, cloudformation_json: dict[str, Any], account_id: str,
                 region_name: str) -> None:
    """Deleting an AWS::IAM::Role: CloudFormation's handler detaches the role's managed
    policies (and deletes its inline ones) before DeleteRole, which refuses a role with
    policies attached (moto never detached them: DeleteStack of the stack failed with
    DeleteConflict)."""
    from moto.iam.models import iam_backends

    backend = iam_backends[account_id][get_partition(region_name)]
    for role in list(backend.roles.values()):
        if role.name == resource_name:
            for arn in list(role.managed_policies):
                backend.detach_role_policy(arn, role.name)
    _originals["role_delete"].__func__(cls, resource_name, cloudformation_json, account_id, region_name)


def _managed_policy_delete(cls: Any, resource_name: str, cloudformation_json: dict[str, Any], account_id: str,
                           region_name: str) -> None:
    """Deleting an AWS::IAM::ManagedPolicy (physical id: its ARN): CloudFormation's
    handler detaches it from every role, user and group, then deletes it (moto had no
    delete: DeleteStack left the policy behind)."""
    from moto.iam.models import iam_backends

    backend = iam_backends[account_id][get_partition(region_name)]
    if resource_name not in backend.managed_policies:
        return
    for role in list(backend.roles.values()):
        if resource_name in role.managed_policies:
            backend.detach_role_policy(resource_name, role.name)
    for user in list(backend.users.values()):
        if resource_name in user.managed_policies:
            backend.detach_user_policy(resource_name, user.name)
    for group in list(backend.groups.values()):
        if resource_name in group.managed_policies:
            backend.detach_group_policy(resource_name, group.name)
    backend.delete_policy(resource_name)


# ---- AWS::Lambda::Permission -------------------------------------------------------------


class _Permission:
    """The permission CloudFormation added: Ref is its statement id."""

    def __init__(self, function_name: str, statement_id: str, account_id: str, region_name: str) -> None:
        self.function_name, self.statement_id = function_name, statement_id
        self.account_id, self.region = account_id, region_name

    @property
    def physical_resource_id(self) -> str:
        return self.statement_id

    def delete(self, account_id: str, region_name: str) -> None:
        from moto.awslambda.models import lambda_backends

        try:
            fn = lambda_backends[account_id][region_name].get_function(self.function_name)
            fn.policy.del_statement(self.statement_id)
        except Exception:  # noqa: BLE001 - a function or statement already gone is deleted
            pass

    def is_created(self) -> bool:
        return True


def _permission_create(cls: Any, resource_name: str, cloudformation_json: dict[str, Any], account_id: str,
                       region_name: str, **kwargs: Any) -> Any:
    """AWS::Lambda::Permission, as AddPermission: a statement whose id is generated from
    the stack and logical id (the resource's physical id), Action, Principal, and
    SourceArn / SourceAccount as conditions, on the function `FunctionName` names (a name
    or an ARN); no `FunctionName` member in the statement."""
    from moto.awslambda.models import lambda_backends

    properties = dict(cloudformation_json["Properties"])
    function_name = properties.pop("FunctionName")
    fn = lambda_backends[account_id][region_name].get_function(function_name)
    properties["StatementId"] = resource_name
    fn.policy.add_statement(raw=json.dumps(properties))
    return _Permission(fn.function_name, resource_name, account_id, region_name)


# ---- AWS::Scheduler::Schedule ------------------------------------------------------------


class SchedulerSchedule(CloudFormationModel):
    """AWS::Scheduler::Schedule through moto's Scheduler backend (CreateSchedule): Name
    (generated when absent), GroupName (default), Description, ScheduleExpression,
    ScheduleExpressionTimezone, StartDate, EndDate, State, FlexibleTimeWindow, Target,
    KmsKeyArn. Ref is the name; Fn::GetAtt Arn the schedule's ARN."""

    def __init__(self, schedule: Any) -> None:
        self.schedule = schedule

    @staticmethod
    def cloudformation_name_type() -> str:
        return "Name"

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::Scheduler::Schedule"

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr == "Arn"

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        from moto.cloudformation.exceptions import UnformattedGetAttTemplateException

        if attribute_name == "Arn":
            return self.schedule.arn
        raise UnformattedGetAttTemplateException()

    @property
    def physical_resource_id(self) -> str:
        return self.schedule.name

    @staticmethod
    def _backend(account_id: str, region_name: str) -> Any:
        from moto.scheduler.models import scheduler_backends

        return scheduler_backends[account_id][region_name]

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[misc]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str,
        region_name: str, **kwargs: Any,
    ) -> "SchedulerSchedule":
        p = cloudformation_json.get("Properties", {})
        schedule = cls._backend(account_id, region_name).create_schedule(
            description=p.get("Description"),
            end_date=p.get("EndDate"),
            flexible_time_window=p.get("FlexibleTimeWindow"),
            group_name=p.get("GroupName"),
            kms_key_arn=p.get("KmsKeyArn"),
            name=p.get("Name", resource_name)[:64],
            schedule_expression=p.get("ScheduleExpression"),
            schedule_expression_timezone=p.get("ScheduleExpressionTimezone"),
            start_date=p.get("StartDate"),
            state=p.get("State", "ENABLED"),
            target=p.get("Target"),
            action_after_completion=None,
        )
        return cls(schedule)

    @classmethod
    def update_from_cloudformation_json(  # type: ignore[misc]
        cls, original_resource: "SchedulerSchedule", new_resource_name: str,
        cloudformation_json: dict[str, Any], account_id: str, region_name: str,
    ) -> "SchedulerSchedule":
        original_resource.delete(account_id, region_name)
        properties = cloudformation_json.get("Properties", {})
        name = properties.get("Name", original_resource.schedule.name)
        return cls.create_from_cloudformation_json(
            name, {"Properties": dict(properties, Name=name)}, account_id, region_name
        )

    @classmethod
    def delete_from_cloudformation_json(  # type: ignore[misc]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str,
    ) -> None:
        group = (cloudformation_json.get("Properties") or {}).get("GroupName")
        cls._backend(account_id, region_name).delete_schedule(group, resource_name)

    def delete(self, account_id: str, region_name: str) -> None:
        try:
            self._backend(account_id, region_name).delete_schedule(self.schedule.group_name, self.schedule.name)
        except Exception:  # noqa: BLE001 - a schedule already gone is deleted
            pass


# ---- AWS::SNS::Subscription --------------------------------------------------------------


class SnsSubscription(CloudFormationModel):
    """AWS::SNS::Subscription through moto's SNS backend (Subscribe): TopicArn, Protocol,
    Endpoint, and the subscription attributes CloudFormation sets (FilterPolicy,
    FilterPolicyScope, RawMessageDelivery, RedrivePolicy, DeliveryPolicy). Ref is the
    subscription ARN."""

    def __init__(self, subscription: Any) -> None:
        self.subscription = subscription

    @staticmethod
    def cloudformation_name_type() -> str:
        return ""

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::SNS::Subscription"

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr == "Arn"

    def get_cfn_attribute(self, attribute_name: str) -> Any:
        from moto.cloudformation.exceptions import UnformattedGetAttTemplateException

        if attribute_name == "Arn":
            return self.subscription.arn
        raise UnformattedGetAttTemplateException()

    @property
    def physical_resource_id(self) -> str:
        return self.subscription.arn

    @classmethod
    def create_from_cloudformation_json(  # type: ignore[misc]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str,
        region_name: str, **kwargs: Any,
    ) -> "SnsSubscription":
        from moto.sns.models import sns_backends

        p = cloudformation_json.get("Properties", {})
        backend = sns_backends[account_id][region_name]
        subscription = backend.subscribe(p["TopicArn"], p["Endpoint"], p["Protocol"])
        for attribute in ("FilterPolicy", "FilterPolicyScope", "RawMessageDelivery", "RedrivePolicy", "DeliveryPolicy"):
            if attribute in p:
                value = p[attribute]
                if isinstance(value, (dict, list)):
                    value = json.dumps(value)
                elif isinstance(value, bool):
                    value = "true" if value else "false"
                backend.set_subscription_attributes(subscription.arn, attribute, str(value))
        return cls(subscription)

    @classmethod
    def update_from_cloudformation_json(  # type: ignore[misc]
        cls, original_resource: "SnsSubscription", new_resource_name: str,
        cloudformation_json: dict[str, Any], account_id: str, region_name: str,
    ) -> "SnsSubscription":
        original_resource.delete(account_id, region_name)
        return cls.create_from_cloudformation_json(new_resource_name, cloudformation_json, account_id, region_name)

    @classmethod
    def delete_from_cloudformation_json(  # type: ignore[misc]
        cls, resource_name: str, cloudformation_json: dict[str, Any], account_id: str, region_name: str,
    ) -> None:
        from moto.sns.models import sns_backends

        sns_backends[account_id][region_name].unsubscribe(resource_name)

    def delete(self, account_id: str, region_name: str) -> None:
        from moto.sns.models import sns_backends

        try:
            sns_backends[account_id][region_name].unsubscribe(self.subscription.arn)
        except Exception:  # noqa: BLE001 - already gone
            pass


# ---- a resource that fails to create -----------------------------------------------------


def _parse_and_create_resource(logical_id: str, resource_json: dict[str, Any], resources_map: Any,
                               account_id: str, region_name: str) -> Any:
    """moto's resource creation; an error is marked with the logical id and type of the
    resource it came from (the innermost one: a resource is created when another first
    refers to it)."""
    try:
        return _originals["parse_and_create_resource"](logical_id, resource_json, resources_map, account_id, region_name)
    except Exception as e:
        if not hasattr(e, "cdkd_logical_id"):
            e.cdkd_logical_id = logical_id  # type: ignore[attr-defined]
            e.cdkd_resource_type = resource_json.get("Type", "")  # type: ignore[attr-defined]
        raise


def _reason(error: Exception) -> str:
    message = getattr(error, "message", None) or str(error) or type(error).__name__
    code = getattr(error, "code", None) or getattr(error, "error_type", None)
    return f"{message} (Service: moto, Error Code: {code})" if isinstance(code, str) else message


def _create_resources(self: Any) -> None:
    """CreateStack's resources. A resource that fails to create is, as in CloudFormation,
    an event `CREATE_FAILED` of that resource with the service's error as its reason;
    the stack then rolls back ("The following resource(s) failed to create: [X].
    Rollback requested by user."): the resources created so far are deleted and the stack
    ends `ROLLBACK_COMPLETE`, where DescribeStacks and DescribeStackEvents show it (moto
    answered the CreateStack request with an internal error and left the stack
    CREATE_IN_PROGRESS)."""
    from moto.cloudformation.models import Event

    try:
        _originals["create_resources"](self)
    except Exception as e:  # noqa: BLE001 - every failure of a resource is the stack's failure
        logical_id = getattr(e, "cdkd_logical_id", None)
        if logical_id is None:
            raise
        event = Event(
            stack_id=self.stack_id, stack_name=self.name, logical_resource_id=logical_id,
            physical_resource_id="", resource_type=getattr(e, "cdkd_resource_type", ""),
            resource_status="CREATE_FAILED", resource_status_reason=_reason(e),
            resource_properties=None,
        )
        event.sendToSns(self.account_id, self.region_name, self.notification_arns)
        self.events.append(event)
        summary = f"The following resource(s) failed to create: [{logical_id}]. Rollback requested by user."
        self.status = "ROLLBACK_IN_PROGRESS"
        self._add_stack_event("ROLLBACK_IN_PROGRESS", resource_status_reason=summary)
        try:
            self.resource_map.delete()
        except Exception:  # noqa: BLE001 - what cannot be deleted stays, as DELETE_FAILED would
            pass
        self.status = "ROLLBACK_COMPLETE"
        self.status_reason = summary
        self._add_stack_event("ROLLBACK_COMPLETE")


# ---- install -----------------------------------------------------------------------------


def install() -> None:
    """Applies the patches once (called when the middleware is built)."""
    if _originals:
        return
    from moto.awslambda.models import LambdaFunction, Permission
    from moto.iam.models import ManagedPolicy, Role
    from moto.stepfunctions.models import StateMachine

    from moto.cloudformation.models import Stack

    _originals["clean_json"] = parsing.clean_json
    parsing.clean_json = _clean_json
    _originals["parse_and_create_resource"] = parsing.parse_and_create_resource
    parsing.parse_and_create_resource = _parse_and_create_resource
    _originals["create_resources"] = Stack.create_resources
    Stack.create_resources = _create_resources  # type: ignore[method-assign]

    _originals["sm_has_cfn_attr"] = StateMachine.__dict__["has_cfn_attr"]
    _originals["sm_get_cfn_attribute"] = StateMachine.get_cfn_attribute
    StateMachine.create_from_cloudformation_json = classmethod(_sm_create)  # type: ignore[assignment]
    StateMachine.update_from_cloudformation_json = classmethod(_sm_update)  # type: ignore[assignment]
    StateMachine.delete_from_cloudformation_json = classmethod(_sm_delete)  # type: ignore[assignment]
    StateMachine.has_cfn_attr = classmethod(_sm_has_cfn_attr)  # type: ignore[assignment]
    StateMachine.get_cfn_attribute = _sm_get_cfn_attribute  # type: ignore[method-assign]

    _originals["lambda_create"] = LambdaFunction.__dict__["create_from_cloudformation_json"]
    _originals["lambda_init"] = LambdaFunction.__init__
    _originals["lambda_get_configuration"] = LambdaFunction.get_configuration
    _originals["lambda_update_configuration"] = LambdaFunction.update_configuration
    LambdaFunction.create_from_cloudformation_json = classmethod(_lambda_create)  # type: ignore[assignment]
    LambdaFunction.__init__ = _lambda_init  # type: ignore[method-assign]
    LambdaFunction.get_configuration = _lambda_get_configuration  # type: ignore[method-assign]
    LambdaFunction.update_configuration = _lambda_update_configuration  # type: ignore[method-assign]

    _originals["role_create"] = Role.__dict__["create_from_cloudformation_json"]
    Role.create_from_cloudformation_json = classmethod(_role_create)  # type: ignore[assignment]
    _originals["role_delete"] = Role.__dict__["delete_from_cloudformation_json"]
    Role.delete_from_cloudformation_json = classmethod(_role_delete)  # type: ignore[assignment]
    ManagedPolicy.delete_from_cloudformation_json = classmethod(_managed_policy_delete)  # type: ignore[assignment]

    Permission.create_from_cloudformation_json = classmethod(_permission_create)  # type: ignore[assignment]

    # The two new types join moto's list of CloudFormation models (a cached scan of
    # CloudFormationModel's subclasses).
    assert SchedulerSchedule and SnsSubscription
    for cached in (parsing.get_model_list, parsing.get_model_map, parsing.get_name_type_map):
        cached.cache_clear()
