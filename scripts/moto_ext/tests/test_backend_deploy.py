"""The deployed backend (docs/emulator.md, "The deployed backend"): infra/template.yaml
deployed into the emulator by scripts/deploy_backend.py (package, SAM transform,
CreateStack) as AWS would run it, checked against the template itself, never against a
second list of its resources; and the CloudFormation behaviour `cfn_backend` adds to moto.

The test deploys a stack and a state bucket of its own in setUpClass (through the deploy
module, as `scripts/with-emulator.sh --backend` does), so it runs on the plain emulator
(`make test-emulator-py`) and under `--backend` alike. The emulator-wide switches it
touches (IAM enforcement, the Step Functions interpreter) are set back as they were."""
import json
import re
import unittest
import urllib.error
import urllib.request
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

import deploy_backend
from backend import account, package

from .support import ACCOUNT, REGION, client, endpoint, uniq

TEMPLATE = package.load_template(deploy_backend.TEMPLATE)
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]
GLOBAL_FUNCTION = TEMPLATE.get("Globals", {}).get("Function", {})


def of_type(type_name: str) -> dict[str, Any]:
    return {k: v for k, v in RESOURCES.items() if v["Type"] == type_name}


def ref_target(value: Any) -> str | None:
    """The logical id a `{"Ref": X}` or `{"Fn::GetAtt": [X, ...]}` names."""
    if isinstance(value, dict) and "Ref" in value:
        return value["Ref"]
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        target = value["Fn::GetAtt"]
        return target[0] if isinstance(target, list) else target.split(".")[0]
    return None


class DeployedBackend(unittest.TestCase):
    stack: str
    bucket: str
    deployed: deploy_backend.Deployed
    physical: dict[str, str]
    types: dict[str, str]
    interpreter_was_on: bool

    @classmethod
    def setUpClass(cls) -> None:
        cls.stack, cls.bucket = uniq("cdkd-flow-test"), uniq("cdkd-state-test")
        cls.interpreter_was_on = account.step_functions_interpreter(endpoint(), True)
        cls.deployed = deploy_backend.deploy(cls.stack, cls.bucket, REGION)
        rows = client("cloudformation").list_stack_resources(StackName=cls.stack)["StackResourceSummaries"]
        cls.physical = {r["LogicalResourceId"]: r.get("PhysicalResourceId", "") for r in rows}
        cls.types = {r["LogicalResourceId"]: r["ResourceType"] for r in rows}

    @classmethod
    def tearDownClass(cls) -> None:
        account.step_functions_interpreter(endpoint(), cls.interpreter_was_on)

    # ---- the stack ----

    def test_the_stack_is_create_complete_within_seconds(self) -> None:
        described = client("cloudformation").describe_stacks(StackName=self.stack)["Stacks"][0]
        self.assertEqual(described["StackStatus"], "CREATE_COMPLETE")
        self.assertLess(self.deployed.seconds, 30.0)

    def test_the_parameters_name_the_bucket_and_the_documented_policies(self) -> None:
        described = client("cloudformation").describe_stacks(StackName=self.stack)["Stacks"][0]
        params = {p["ParameterKey"]: p["ParameterValue"] for p in described["Parameters"]}
        self.assertEqual(params["StateBucket"], self.bucket)
        iam = client("iam")
        for parameter, (file_name, name) in account.POLICY_PARAMETERS.items():
            self.assertEqual(params[parameter], f"arn:aws:iam::{ACCOUNT}:policy/{name}")
            policy = iam.get_policy(PolicyArn=params[parameter])["Policy"]
            document = iam.get_policy_version(PolicyArn=policy["Arn"], VersionId=policy["DefaultVersionId"])
            expected = json.loads((deploy_backend.POLICIES / file_name).read_text())
            got = document["PolicyVersion"]["Document"]
            self.assertEqual(json.loads(got) if isinstance(got, str) else got, expected)
        client("s3").head_bucket(Bucket=self.bucket)

    def test_every_resource_of_the_translated_template_exists(self) -> None:
        functions = of_type("AWS::Serverless::Function")
        machines = of_type("AWS::Serverless::StateMachine")
        for logical_id, resource in RESOURCES.items():
            if resource["Type"].startswith("AWS::Serverless::") or "Condition" in resource:
                continue
            self.assertIn(logical_id, self.physical, f"{logical_id} ({resource['Type']}) was not created")
            self.assertTrue(self.physical[logical_id], f"{logical_id} has no physical id")
        for logical_id in list(functions) + list(machines):
            self.assertIn(logical_id, self.physical)
            self.assertIn(f"{logical_id}Role", self.physical, "SAM's role of " + logical_id)

    def test_the_outputs_resolve(self) -> None:
        outputs = self.deployed.outputs
        self.assertEqual(set(outputs), set(TEMPLATE["Outputs"]))
        for key, output in TEMPLATE["Outputs"].items():
            target = ref_target(output["Value"])
            if target is not None:
                self.assertEqual(outputs[key], self.physical[target], key)
        self.assertEqual(outputs["NotifyTopicArn"], self.physical["NotifyTopic"])
        for key in ("DestroyStateMachineArn", "CleanupStateMachineArn", "ExportStateMachineArn"):
            self.assertTrue(outputs[key].startswith(f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:"), outputs[key])

    # ---- functions ----

    def test_each_function_has_the_templates_handler_settings_and_log_group(self) -> None:
        lam = client("lambda")
        for logical_id, resource in of_type("AWS::Serverless::Function").items():
            props = dict(GLOBAL_FUNCTION, **resource["Properties"])
            config = lam.get_function_configuration(FunctionName=self.physical[logical_id])
            self.assertEqual(config["Handler"], props["Handler"], logical_id)
            self.assertEqual(config["Runtime"], props["Runtime"], logical_id)
            self.assertEqual(config["Timeout"], props["Timeout"], logical_id)
            self.assertEqual(config["MemorySize"], props["MemorySize"], logical_id)
            self.assertEqual(config["Architectures"], props["Architectures"], logical_id)
            self.assertTrue(config["Role"].endswith(f"/{self.physical[logical_id + 'Role']}"), logical_id)
            logging_config = props["LoggingConfig"]
            self.assertEqual(config["LoggingConfig"]["LogFormat"], logging_config["LogFormat"], logical_id)
            self.assertEqual(config["LoggingConfig"]["LogGroup"], self.physical[ref_target(logging_config["LogGroup"])])
            variables = config["Environment"]["Variables"]
            own = resource["Properties"].get("Environment", {}).get("Variables", {})
            for name in set(GLOBAL_FUNCTION["Environment"]["Variables"]) | set(own):
                self.assertIn(name, variables, f"{logical_id}: {name}")
            self.assertEqual(variables["CDKD_FLOW_NOTIFY_TOPIC"], self.physical["NotifyTopic"])

    def test_the_function_code_is_the_uploaded_zip(self) -> None:
        lam = client("lambda")
        some = next(iter(of_type("AWS::Serverless::Function")))
        config = lam.get_function_configuration(FunctionName=self.physical[some])
        self.assertEqual(config["CodeSize"], len(package.stand_in_zip()))

    # ---- roles ----

    def role_statements(self, role: str) -> list[dict[str, Any]]:
        iam = client("iam")
        out = []
        for name in iam.list_role_policies(RoleName=role)["PolicyNames"]:
            doc = iam.get_role_policy(RoleName=role, PolicyName=name)["PolicyDocument"]
            doc = json.loads(doc) if isinstance(doc, str) else doc
            statements = doc["Statement"]
            out.extend(statements if isinstance(statements, list) else [statements])
        return out

    def attached(self, role: str) -> list[str]:
        return [p["PolicyArn"] for p in client("iam").list_attached_role_policies(RoleName=role)["AttachedPolicies"]]

    def test_the_export_plan_role_has_its_inline_statements_and_managed_policies(self) -> None:
        role = self.physical["ExportPlanFunctionRole"]
        statements = {s.get("Sid"): s for s in self.role_statements(role)}
        inline = [p for p in RESOURCES["ExportPlanFunction"]["Properties"]["Policies"] if isinstance(p, dict) and "Statement" in p]
        for declared in (s for doc in inline for s in doc["Statement"]):
            got = statements[declared["Sid"]]
            self.assertEqual(got["Action"], declared["Action"])
            self.assertNotIn("${", json.dumps(got))
        self.assertEqual(statements["ReadSsmParameters"]["Resource"], f"arn:aws:ssm:*:{ACCOUNT}:parameter/*")
        self.assertEqual(statements["WriteRunArtifacts"]["Resource"], f"arn:aws:s3:::{self.bucket}/cdkd/_runs/*")
        attached = self.attached(role)
        self.assertIn("arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole", attached)
        self.assertIn(self.physical["StateReadPolicy"], attached)

    def test_each_function_role_holds_the_managed_policies_the_template_names(self) -> None:
        params = self.deployed.parameters
        for logical_id, resource in of_type("AWS::Serverless::Function").items():
            attached = self.attached(self.physical[logical_id + "Role"])
            for policy in resource["Properties"].get("Policies", []):
                target = ref_target(policy)
                if target in self.physical:
                    self.assertIn(self.physical[target], attached, f"{logical_id}: {target}")
                elif target in params:
                    self.assertIn(params[target], attached, f"{logical_id}: {target}")
        self.assertIn(params["DeletePolicyArn"], self.attached(self.physical["DestroyWaveFunctionRole"]))

    def test_without_a_state_bucket_key_no_role_gets_kms_rights(self) -> None:
        self.assertNotIn("StateKeyPolicy", self.physical)

    def test_a_false_condition_leaves_no_null_in_a_policy_list(self) -> None:
        """`!If [HasExportPolicy, !Ref ExportPolicyArn, !Ref AWS::NoValue]` among
        `Policies`: the export policy is attached (true here); the translated template
        lists it in ManagedPolicyArns, where a false condition removes the item."""
        for logical_id in ("ExportImportFunction", "ExportExecuteFunction"):
            attached = self.attached(self.physical[logical_id + "Role"])
            self.assertIn(self.deployed.parameters["ExportPolicyArn"], attached)
            self.assertNotIn(None, attached)

    def test_each_state_machine_role_may_invoke_exactly_its_functions(self) -> None:
        for logical_id, resource in of_type("AWS::Serverless::StateMachine").items():
            statements = self.role_statements(self.physical[logical_id + "Role"])
            invokable = set()
            for s in statements:
                actions = s["Action"] if isinstance(s["Action"], list) else [s["Action"]]
                if "lambda:InvokeFunction" in actions:
                    resources = s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]]
                    invokable.update(resources)
            named = {
                ref_target(p["LambdaInvokePolicy"]["FunctionName"])
                for p in resource["Properties"]["Policies"] if isinstance(p, dict) and "LambdaInvokePolicy" in p
            }
            # SAM's LambdaInvokePolicy: `function:${functionName}*` (its versions and aliases too).
            expected = {f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{self.physical[fn]}*" for fn in named}
            self.assertEqual(invokable, expected, logical_id)
            self.assertIn(self.physical["StateMachineLoggingPolicy"], self.attached(self.physical[logical_id + "Role"]))

    def test_the_cleanup_role_watches_the_destroy_state_machine_by_its_name(self) -> None:
        statements = {s.get("Sid"): s for s in self.role_statements(self.physical["CleanupStateMachineRole"])}
        destroy_name = self.physical["DestroyStateMachine"].rsplit(":", 1)[-1]
        self.assertEqual(statements["WatchDestroy"]["Resource"],
                         f"arn:aws:states:{REGION}:{ACCOUNT}:execution:{destroy_name}:*")
        self.assertEqual(statements["StartDestroy"]["Resource"], self.physical["DestroyStateMachine"])

    # ---- state machines ----

    def test_the_definitions_are_the_files_with_every_substitution_applied(self) -> None:
        sfn, lam = client("stepfunctions"), client("lambda")
        for logical_id, resource in of_type("AWS::Serverless::StateMachine").items():
            described = sfn.describe_state_machine(stateMachineArn=self.physical[logical_id])
            definition = described["definition"]
            self.assertNotIn("${", definition, logical_id)
            source = (deploy_backend.TEMPLATE.parent / resource["Properties"]["DefinitionUri"]).read_text()
            self.assertEqual(set(re.findall(r"\$\{(\w+)\}", source)), set(resource["Properties"]["DefinitionSubstitutions"]))
            for name, value in resource["Properties"]["DefinitionSubstitutions"].items():
                target = ref_target(value)
                arn = (f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{self.physical[target]}"
                       if self.types[target] == "AWS::Lambda::Function" else self.physical[target])
                self.assertIn(json.dumps(arn), definition, f"{logical_id}: {name}")
            for arn in set(re.findall(r"arn:aws:lambda:[^\"]+", definition)):
                lam.get_function(FunctionName=arn)
            self.assertEqual(described["roleArn"].rsplit("/", 1)[-1], self.physical[logical_id + "Role"])
            self.assertEqual(described["type"], resource["Properties"]["Type"])
            logging_config = described["loggingConfiguration"]
            self.assertEqual(logging_config["level"], resource["Properties"]["Logging"]["Level"])
            group = logging_config["destinations"][0]["cloudWatchLogsLogGroup"]["logGroupArn"]
            declared = ref_target(resource["Properties"]["Logging"]["Destinations"][0]["CloudWatchLogsLogGroup"]["LogGroupArn"])
            self.assertTrue(group.endswith(f":log-group:{self.physical[declared]}"), group)

    # ---- events and schedule ----

    def test_the_stopped_from_outside_rule_targets_run_ended_for_export_and_destroy(self) -> None:
        events, lam = client("events"), client("lambda")
        rules = [k for k, t in self.types.items() if t == "AWS::Events::Rule"]
        self.assertEqual(rules, ["RunEndedFunctionStoppedFromOutside"])
        rule = events.describe_rule(Name=self.physical[rules[0]])
        pattern = json.loads(rule["EventPattern"])
        self.assertEqual(set(pattern["detail"]["stateMachineArn"]),
                         {self.physical["ExportStateMachine"], self.physical["DestroyStateMachine"]})
        self.assertEqual(pattern["detail"]["status"], ["ABORTED", "TIMED_OUT"])
        targets = events.list_targets_by_rule(Rule=rule["Name"])["Targets"]
        run_ended = lam.get_function(FunctionName=self.physical["RunEndedFunction"])["Configuration"]["FunctionArn"]
        self.assertEqual([t["Arn"] for t in targets], [run_ended])
        policy = json.loads(lam.get_policy(FunctionName=self.physical["RunEndedFunction"])["Policy"])
        statement = next(s for s in policy["Statement"] if s["Sid"] == self.physical["RunEndedFunctionStoppedFromOutsidePermission"])
        self.assertEqual(statement["Principal"], {"Service": "events.amazonaws.com"})
        self.assertEqual(statement["Condition"]["ArnLike"]["AWS:SourceArn"], rule["Arn"])

    def test_the_schedule_starts_the_cleanup_with_its_role(self) -> None:
        schedule = client("scheduler").get_schedule(Name=self.physical["CleanupSchedule"])
        self.assertEqual(schedule["ScheduleExpression"], "rate(1 day)")
        self.assertEqual(schedule["Target"]["Arn"], self.physical["CleanupStateMachine"])
        self.assertTrue(schedule["Target"]["RoleArn"].endswith("/" + self.physical["CleanupScheduleRole"]))
        self.assertEqual(json.loads(schedule["Target"]["Input"])["stateBucket"], self.bucket)

    # ---- IAM enforcement (last: it is emulator-wide, and set back) ----

    def test_with_iam_enforced_only_a_known_key_is_let_in(self) -> None:
        key_id, secret = account.admin_key(client("iam"), uniq("cdkd-flow-admin-test"))
        previous = account.enforce_iam(endpoint())
        try:
            def cfn(**kw: Any) -> Any:
                return client_with(**kw).describe_stacks(StackName=self.stack)

            self.assertEqual(cfn(aws_access_key_id=key_id, aws_secret_access_key=secret)["Stacks"][0]["StackName"], self.stack)
            with self.assertRaises(ClientError) as caught:
                cfn(aws_access_key_id="AKIAIOSFODNN7EXAMPLE", aws_secret_access_key="x" * 40)
            self.assertEqual(caught.exception.response["Error"]["Code"], "InvalidClientTokenId")
            with self.assertRaises(ClientError) as caught:
                cfn(aws_access_key_id=key_id, aws_secret_access_key=secret, aws_session_token="testing")
            self.assertEqual(caught.exception.response["Error"]["Code"], "InvalidClientTokenId")
            # Unsigned: AWS answers 403 MissingAuthenticationToken; the pinned moto fails
            # the request (500, it looks for the Authorization header). Either way: refused.
            unsigned = urllib.request.Request(
                endpoint(), method="POST", data=f"Action=DescribeStacks&StackName={self.stack}".encode(),
                headers={"Content-Type": "application/x-www-form-urlencoded"})
            with self.assertRaises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(unsigned, timeout=10)
            self.assertGreaterEqual(refused.exception.code, 400)
        finally:
            account.reset_auth(endpoint(), previous)


class DeletedBackend(unittest.TestCase):
    def test_delete_stack_removes_everything_the_deploy_created(self) -> None:
        """DeleteStack of the backend (with the email subscription its condition adds):
        every resource goes, roles and managed policies included (detached first)."""
        stack = uniq("cdkd-flow-del")
        interpreter_was_on = account.step_functions_interpreter(endpoint(), True)
        try:
            deployed = deploy_backend.deploy(stack, uniq("cdkd-state-del"), REGION, {"NotifyEmail": "ops@example.com"})
            cfn = client("cloudformation")
            rows = {r["LogicalResourceId"]: r["PhysicalResourceId"]
                    for r in cfn.list_stack_resources(StackName=stack)["StackResourceSummaries"]}
            topic = deployed.outputs["NotifyTopicArn"]
            subscriptions = client("sns").list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
            self.assertEqual([(x["Protocol"], x["Endpoint"]) for x in subscriptions], [("email", "ops@example.com")])
            self.assertEqual(rows["NotifyEmailSubscription"], subscriptions[0]["SubscriptionArn"])
            cfn.delete_stack(StackName=stack)
            self.assertEqual(cfn.describe_stacks(StackName=deployed_id(cfn, stack))["Stacks"][0]["StackStatus"],
                             "DELETE_COMPLETE")
            iam = client("iam")
            self.assertFalse([r for r in iam.list_roles()["Roles"] if r["RoleName"].startswith(stack)])
            self.assertFalse([p for p in iam.list_policies(Scope="Local")["Policies"] if p["PolicyName"].startswith(stack)])
            self.assertFalse([f for f in client("lambda").list_functions()["Functions"] if f["FunctionName"].startswith(stack)])
            self.assertFalse([m for m in client("stepfunctions").list_state_machines()["stateMachines"] if m["name"].startswith(stack)])
            self.assertFalse(client("logs").describe_log_groups(logGroupNamePrefix=f"/cdkd-flow/{stack}/")["logGroups"])
            self.assertFalse([x for x in client("scheduler").list_schedules()["Schedules"] if x["Name"].startswith(stack)])
            self.assertFalse(client("events").list_rules(NamePrefix=stack)["Rules"])
            self.assertNotIn(topic, [t["TopicArn"] for t in client("sns").list_topics()["Topics"]])
        finally:
            account.step_functions_interpreter(endpoint(), interpreter_was_on)


def deployed_id(cfn: Any, name: str) -> str:
    return next(s["StackId"] for s in cfn.list_stacks()["StackSummaries"] if s["StackName"] == name)


def client_with(**kw: Any) -> Any:
    import boto3

    config = kw.pop("config", Config(retries={"total_max_attempts": 1}))
    return boto3.client("cloudformation", endpoint_url=endpoint(), region_name=REGION, config=config, **kw)


class CloudFormationAdditions(unittest.TestCase):
    """`cfn_backend`'s behaviour on small templates of its own."""

    def test_substitutions_apply_to_an_inline_definition_and_leave_unknown_placeholders(self) -> None:
        cfn, sfn = client("cloudformation"), client("stepfunctions")
        stack = uniq("sm-subst")
        definition = {"StartAt": "A", "States": {"A": {"Type": "Pass", "Result": {"n": "${Count}", "on": "${On}",
                                                                                   "keep": "${Unknown}", "who": "${Who}"}, "End": True}}}
        role = {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": {"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Principal": {"Service": "states.amazonaws.com"}, "Action": "sts:AssumeRole"}]}}}
        template = {"Resources": {"Role": role, "M": {"Type": "AWS::StepFunctions::StateMachine", "Properties": {
            "RoleArn": {"Fn::GetAtt": ["Role", "Arn"]}, "Definition": definition,
            "DefinitionSubstitutions": {"Count": 3, "On": True, "Who": {"Ref": "AWS::StackName"}}}}},
            "Outputs": {"Arn": {"Value": {"Fn::GetAtt": ["M", "Arn"]}}, "Name": {"Value": {"Fn::GetAtt": ["M", "Name"]}}}}
        cfn.create_stack(StackName=stack, TemplateBody=json.dumps(template))
        described = cfn.describe_stacks(StackName=stack)["Stacks"][0]
        self.assertEqual(described["StackStatus"], "CREATE_COMPLETE")
        outputs = {o["OutputKey"]: o["OutputValue"] for o in described["Outputs"]}
        self.assertEqual(outputs["Arn"].rsplit(":", 1)[-1], outputs["Name"])
        got = json.loads(sfn.describe_state_machine(stateMachineArn=outputs["Arn"])["definition"])
        self.assertEqual(got["States"]["A"]["Result"], {"n": "3", "on": "true", "keep": "${Unknown}", "who": stack})

    def test_a_resource_that_fails_rolls_the_stack_back_with_its_reason(self) -> None:
        cfn, sqs = client("cloudformation"), client("sqs")
        stack, queue = uniq("failing"), uniq("rolled-back")
        missing = f"arn:aws:iam::{ACCOUNT}:policy/{uniq('missing')}"
        template = {"Resources": {
            "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": queue}},
            "R": {"Type": "AWS::IAM::Role", "DependsOn": "Q", "Properties": {
                "AssumeRolePolicyDocument": {"Version": "2012-10-17", "Statement": []},
                "ManagedPolicyArns": [missing]}}}}
        cfn.create_stack(StackName=stack, TemplateBody=json.dumps(template))
        self.assertEqual(cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"], "ROLLBACK_COMPLETE")
        events = cfn.describe_stack_events(StackName=stack)["StackEvents"]
        failed = [e for e in events if e["ResourceStatus"] == "CREATE_FAILED"]
        self.assertEqual([e["LogicalResourceId"] for e in failed], ["R"])
        self.assertIn(missing, failed[0]["ResourceStatusReason"])
        self.assertIn("The following resource(s) failed to create: [R].",
                      next(e["ResourceStatusReason"] for e in events if e["ResourceStatus"] == "ROLLBACK_IN_PROGRESS"))
        self.assertNotIn(queue, " ".join(sqs.list_queues(QueueNamePrefix=queue).get("QueueUrls", [])))

    def test_no_value_removes_a_list_item(self) -> None:
        cfn, iam = client("cloudformation"), client("iam")
        stack = uniq("novalue")
        template = {"Conditions": {"No": {"Fn::Equals": ["a", "b"]}}, "Resources": {
            "P": {"Type": "AWS::IAM::ManagedPolicy", "Properties": {"PolicyDocument": {"Version": "2012-10-17", "Statement": [
                {"Effect": "Allow", "Action": "sqs:GetQueueUrl", "Resource": "*"},
                {"Fn::If": ["No", {"Effect": "Allow", "Action": "sqs:DeleteQueue", "Resource": "*"}, {"Ref": "AWS::NoValue"}]}]}}},
            "R": {"Type": "AWS::IAM::Role", "Properties": {
                "AssumeRolePolicyDocument": {"Version": "2012-10-17", "Statement": []},
                "ManagedPolicyArns": [{"Ref": "P"}, {"Fn::If": ["No", "arn:aws:iam::aws:policy/ReadOnlyAccess", {"Ref": "AWS::NoValue"}]}]}}}}
        cfn.create_stack(StackName=stack, TemplateBody=json.dumps(template))
        self.assertEqual(cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"], "CREATE_COMPLETE")
        rows = {r["LogicalResourceId"]: r["PhysicalResourceId"]
                for r in cfn.list_stack_resources(StackName=stack)["StackResourceSummaries"]}
        attached = iam.list_attached_role_policies(RoleName=rows["R"])["AttachedPolicies"]
        self.assertEqual([p["PolicyArn"] for p in attached], [rows["P"]])
        policy = iam.get_policy(PolicyArn=rows["P"])["Policy"]
        doc = iam.get_policy_version(PolicyArn=rows["P"], VersionId=policy["DefaultVersionId"])["PolicyVersion"]["Document"]
        doc = json.loads(doc) if isinstance(doc, str) else doc
        self.assertEqual(len(doc["Statement"]), 1)


class DeployedWithStateBucketKey(unittest.TestCase):
    """A state bucket encrypted with a customer KMS key (parameter StateBucketKmsKeyArn):
    every function role may decrypt and make data keys with that key, through S3 only."""

    def test_every_function_role_may_use_the_state_bucket_key_through_s3(self) -> None:
        self.deployed_with_key(REGION)

    def test_a_key_of_another_region_is_used_through_s3_of_that_region(self) -> None:
        # A state bucket in eu-west-1 of a backend in us-east-1: S3 uses a key of the
        # bucket's region, and asks KMS through s3.eu-west-1.amazonaws.com.
        self.assertNotEqual(REGION, "eu-west-1")
        self.deployed_with_key("eu-west-1")

    def deployed_with_key(self, key_region: str) -> None:
        kms = boto3.client("kms", endpoint_url=endpoint(), region_name=key_region)
        key = kms.create_key(Description="state bucket")["KeyMetadata"]["Arn"]
        self.assertEqual(key.split(":")[3], key_region)
        stack, bucket = uniq("cdkd-flow-kms"), uniq("cdkd-state-kms")
        was_on = account.step_functions_interpreter(endpoint(), True)
        try:
            deploy_backend.deploy(stack, bucket, REGION, {"StateBucketKmsKeyArn": key})
        finally:
            account.step_functions_interpreter(endpoint(), was_on)
        rows = client("cloudformation").list_stack_resources(StackName=stack)["StackResourceSummaries"]
        physical = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in rows}
        policy_arn = physical["StateKeyPolicy"]
        iam = client("iam")
        version = iam.get_policy(PolicyArn=policy_arn)["Policy"]["DefaultVersionId"]
        doc = iam.get_policy_version(PolicyArn=policy_arn, VersionId=version)["PolicyVersion"]["Document"]
        doc = json.loads(doc) if isinstance(doc, str) else doc
        [statement] = doc["Statement"]
        self.assertEqual(sorted(statement["Action"]), ["kms:Decrypt", "kms:GenerateDataKey"])
        self.assertEqual(statement["Resource"], key)
        self.assertEqual(statement["Condition"],
                         {"StringEquals": {"kms:ViaService": f"s3.{key_region}.amazonaws.com"}})
        functions = of_type("AWS::Serverless::Function")
        self.assertGreater(len(functions), 10)
        for logical_id in functions:
            attached = [p["PolicyArn"] for p in
                        iam.list_attached_role_policies(RoleName=physical[logical_id + "Role"])["AttachedPolicies"]]
            self.assertIn(policy_arn, attached, logical_id)


if __name__ == "__main__":
    unittest.main()
