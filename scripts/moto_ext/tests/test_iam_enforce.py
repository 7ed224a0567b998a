"""IAM enforcement as AWS evaluates it (`iam_enforce`): with moto's enforcement on, an
assumed role's requests are allowed or refused by its inline and attached policies on
the resource ARNs AWS authorizes (a stack, a topic, an event bus, a parameter, a bucket
with its `s3:prefix`, a state machine, a function), an `iam:PassRole` with
`iam:PassedToService` for a CloudFormation RoleARN, and refusals name the action and
resource as AWS does. Everything is set up with enforcement off; each test turns it on
and tearDown turns it off again (`inf`, moto's default), so other tests are unaffected.
The condition operators and the InvokeFunction resource match are also tested directly."""
import json
import time
import unittest
import urllib.error
import urllib.request
from typing import Any

import boto3
from botocore.exceptions import ClientError

from .. import iam_conditions, iam_policy
from ..iam_resources import Req
from ..iam_resources_apps import function_arn
from .support import ACCOUNT, REGION, client, endpoint, uniq

OTHER_ACCOUNT = "210987654321"


def set_auth(count: str) -> None:
    """POST /moto-api/reset-auth: `0` enforces IAM from the next request, `inf` never."""
    request = urllib.request.Request(endpoint().rstrip("/") + "/moto-api/reset-auth", data=count.encode(),
                                     method="POST", headers={"Content-Type": "text/plain"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        answer.read()


def keyed(service: str, key_id: str, secret: str, token: str | None) -> Any:
    return boto3.client(service, endpoint_url=endpoint(), region_name=REGION, aws_access_key_id=key_id,
                        aws_secret_access_key=secret, aws_session_token=token)


def doc(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def allow(action: Any, resource: Any, condition: dict[str, Any] | None = None) -> dict[str, Any]:
    statement = {"Effect": "Allow", "Action": action, "Resource": resource}
    if condition:
        statement["Condition"] = condition
    return statement


class IamEnforcement(unittest.TestCase):
    admin_key: tuple[str, str, None]
    role_key: tuple[str, str, str]

    def admin(self, service: str) -> Any:
        """A client of the administrator, for the tests' own calls while enforcement is on."""
        return keyed(service, *self.admin_key)

    def role(self, service: str) -> Any:
        """A client with the assumed role's credentials."""
        return keyed(service, *self.role_key)

    @classmethod
    def setUpClass(cls) -> None:
        set_auth("inf")
        cls.n = uniq("iam")
        iam, sts = client("iam"), client("sts")
        admin = uniq("admin")
        iam.create_user(UserName=admin)
        iam.put_user_policy(UserName=admin, PolicyName="all", PolicyDocument=doc(allow("*", "*")))
        key = iam.create_access_key(UserName=admin)["AccessKey"]
        cls.admin_key = (key["AccessKeyId"], key["SecretAccessKey"], None)

        trust = doc({"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"},
                     "Action": "sts:AssumeRole"})
        service_trust = doc({"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"},
                             "Action": "sts:AssumeRole"})
        role_name = uniq("step")
        cls.cfn_role = iam.create_role(RoleName=uniq("cfn-exec"), AssumeRolePolicyDocument=trust)["Role"]["Arn"]
        cls.lambda_role = iam.create_role(RoleName=uniq("fn-exec"), AssumeRolePolicyDocument=service_trust)["Role"]["Arn"]

        sns = client("sns")
        cls.topic = sns.create_topic(Name=uniq("notify"))["TopicArn"]
        cls.other_topic = sns.create_topic(Name=uniq("other"))["TopicArn"]
        ssm = client("ssm")
        cls.app_param, cls.other_param = f"/{cls.n}/app/x", f"/{cls.n}-other"
        for name in (cls.app_param, cls.other_param, f"/{cls.n}/app/secret"):
            ssm.put_parameter(Name=name, Value="v", Type="String")
        cls.bucket = uniq("state")
        client("s3").create_bucket(Bucket=cls.bucket)
        cfn = client("cloudformation")
        body = json.dumps({"Resources": {"T": {"Type": "AWS::SNS::Topic"}}})
        cls.stack = uniq("app")
        cls.stack_id = cfn.create_stack(StackName=cls.stack, TemplateBody=body,
                                        Tags=[{"Key": "team", "Value": "blue"}])["StackId"]
        cls.red_stack = uniq("red")
        cfn.create_stack(StackName=cls.red_stack, TemplateBody=body, Tags=[{"Key": "team", "Value": "red"}])
        cls.template = body
        sfn = client("stepfunctions")
        definition = json.dumps({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}})
        cls.machine = sfn.create_state_machine(name=uniq("destroy"), definition=definition,
                                               roleArn=cls.lambda_role)["stateMachineArn"]
        cls.other_machine = sfn.create_state_machine(name=uniq("other"), definition=definition,
                                                     roleArn=cls.lambda_role)["stateMachineArn"]
        cls.function, cls.other_function = uniq("fn"), uniq("fn-other")
        from .support import Resources
        for name in (cls.function, cls.other_function):
            Resources().function(name)
        cls.bus = uniq("bus")
        client("events").create_event_bus(Name=cls.bus)

        inline = doc(
            allow(["cloudformation:DescribeStacks", "cloudformation:CreateChangeSet",
                   "cloudformation:DescribeChangeSet"], f"arn:aws:cloudformation:*:{ACCOUNT}:stack/*"),
            allow("cloudformation:DescribeStackEvents", f"arn:aws:cloudformation:*:{ACCOUNT}:stack/*",
                  {"StringEquals": {"aws:ResourceTag/team": "blue"}}),
            allow("iam:PassRole", cls.cfn_role,
                  {"StringEquals": {"iam:PassedToService": "cloudformation.amazonaws.com"}}),
            allow("iam:PassRole", cls.lambda_role, {"StringEquals": {"iam:PassedToService": "lambda.amazonaws.com"}}),
            allow("sns:Publish", cls.topic),
            allow("events:PutEvents", f"arn:aws:events:{REGION}:{ACCOUNT}:event-bus/default"),
            allow("s3:ListBucket", f"arn:aws:s3:::{cls.bucket}",
                  {"StringLike": {"s3:prefix": ["cdkd/*", "cdkd/"]}}),
            allow("states:StartExecution", cls.machine),
            allow(["lambda:GetFunction", "lambda:InvokeFunction"],
                  f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{cls.function}*"),
            {"Effect": "Deny", "Action": "ssm:GetParameter",
             "Resource": f"arn:aws:ssm:*:{ACCOUNT}:parameter/{cls.n}/app/secret"},
        )
        iam.create_role(RoleName=role_name, AssumeRolePolicyDocument=trust)
        iam.put_role_policy(RoleName=role_name, PolicyName="steps", PolicyDocument=inline)
        managed = iam.create_policy(PolicyName=uniq("read-params"), PolicyDocument=doc(
            allow("ssm:GetParameter", f"arn:aws:ssm:*:{ACCOUNT}:parameter/{cls.n}/app/*")))["Policy"]["Arn"]
        iam.attach_role_policy(RoleName=role_name, PolicyArn=managed)
        cls.session = f"arn:aws:sts::{ACCOUNT}:assumed-role/{role_name}/run-1"
        # Roles the step role may assume: one whose trust policy names the role itself
        # (no identity-based permission needed within the account), one that trusts the
        # whole account (an identity-based sts:AssumeRole needed, which the role lacks).
        named = doc({"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:role/{role_name}"},
                     "Action": "sts:AssumeRole"})
        cls.trusting_role = iam.create_role(RoleName=uniq("named"), AssumeRolePolicyDocument=named)["Role"]["Arn"]
        cls.account_role = iam.create_role(RoleName=uniq("acct"), AssumeRolePolicyDocument=trust)["Role"]["Arn"]
        creds = sts.assume_role(RoleArn=f"arn:aws:iam::{ACCOUNT}:role/{role_name}",
                                RoleSessionName="run-1")["Credentials"]
        cls.role_key = (creds["AccessKeyId"], creds["SecretAccessKey"], creds["SessionToken"])

    def setUp(self) -> None:
        set_auth("0")

    def tearDown(self) -> None:
        set_auth("inf")

    def refused(self, call: Any, code: str = "AccessDenied") -> str:
        with self.assertRaises(ClientError) as caught:
            call()
        error = caught.exception.response["Error"]
        self.assertEqual(error["Code"], code, error)
        return str(error["Message"])

    # ---- resource ARNs --------------------------------------------------------------

    def test_describe_stacks_on_stack_arns_of_the_account(self) -> None:
        cfn = self.role("cloudformation")
        self.assertEqual(cfn.describe_stacks(StackName=self.stack)["Stacks"][0]["StackId"], self.stack_id)
        self.assertEqual(len(cfn.describe_stacks(StackName=self.stack_id)["Stacks"]), 1)
        other = f"arn:aws:cloudformation:{REGION}:{OTHER_ACCOUNT}:stack/app/0a1b2c3d"
        message = self.refused(lambda: cfn.describe_stacks(StackName=other))
        self.assertEqual(message, (
            f"User: {self.session} is not authorized to perform: cloudformation:DescribeStacks on resource: "
            f"{other} because no identity-based policy allows the cloudformation:DescribeStacks action"))
        # No StackName: the resource is `*`, which stack/* does not cover.
        message = self.refused(lambda: cfn.describe_stacks())
        self.assertIn("cloudformation:DescribeStacks because no identity-based policy", message)
        # A stack that does not exist: allowed on stack/<name>/*, then CloudFormation's error.
        self.assertEqual(self.refused(lambda: cfn.describe_stacks(StackName=uniq("gone")), "ValidationError")[:5],
                         "Stack")

    def test_stack_resource_tags(self) -> None:
        cfn = self.role("cloudformation")
        cfn.describe_stack_events(StackName=self.stack)
        message = self.refused(lambda: cfn.describe_stack_events(StackName=self.red_stack))
        self.assertIn("cloudformation:DescribeStackEvents on resource: arn:aws:cloudformation:", message)

    def test_publish_to_the_one_topic(self) -> None:
        sns = self.role("sns")
        self.assertIn("MessageId", sns.publish(TopicArn=self.topic, Message="m"))
        message = self.refused(lambda: sns.publish(TopicArn=self.other_topic, Message="m"), "AuthorizationError")
        self.assertEqual(message, (
            f"User: {self.session} is not authorized to perform: SNS:Publish on resource: {self.other_topic} "
            "because no identity-based policy allows the SNS:Publish action"))

    def test_put_events_on_the_default_bus(self) -> None:
        events = self.role("events")
        entry = {"Source": "cdkd-flow", "DetailType": "run", "Detail": "{}"}
        self.assertEqual(events.put_events(Entries=[entry])["FailedEntryCount"], 0)
        message = self.refused(lambda: events.put_events(Entries=[dict(entry, EventBusName=self.bus)]),
                               "AccessDeniedException")
        self.assertIn(f"events:PutEvents on resource: arn:aws:events:{REGION}:{ACCOUNT}:event-bus/{self.bus}",
                      message)

    def test_parameters_under_a_path_from_a_managed_policy(self) -> None:
        ssm = self.role("ssm")
        self.assertEqual(ssm.get_parameter(Name=self.app_param)["Parameter"]["Value"], "v")
        message = self.refused(lambda: ssm.get_parameter(Name=self.other_param), "AccessDeniedException")
        self.assertIn(f"ssm:GetParameter on resource: arn:aws:ssm:{REGION}:{ACCOUNT}:parameter/{self.n}-other",
                      message)
        # The inline Deny wins over the managed policy's Allow.
        message = self.refused(lambda: ssm.get_parameter(Name=f"/{self.n}/app/secret"), "AccessDeniedException")
        self.assertIn("with an explicit deny in an identity-based policy", message)

    def test_list_bucket_with_an_s3_prefix_condition(self) -> None:
        s3 = self.role("s3")
        s3.list_objects_v2(Bucket=self.bucket, Prefix="cdkd/")
        s3.list_objects_v2(Bucket=self.bucket, Prefix="cdkd/_runs/")
        message = self.refused(lambda: s3.list_objects_v2(Bucket=self.bucket, Prefix="other/"))
        self.assertEqual(message, (
            f'User: {self.session} is not authorized to perform: s3:ListBucket on resource: '
            f'"arn:aws:s3:::{self.bucket}" because no identity-based policy allows the s3:ListBucket action'))
        self.refused(lambda: s3.list_objects_v2(Bucket=self.bucket))  # no prefix: the key is missing

    def test_change_set_role_needs_pass_role_to_cloudformation(self) -> None:
        cfn = self.role("cloudformation")
        created = cfn.create_change_set(StackName=uniq("cs"), ChangeSetName="c1", ChangeSetType="CREATE",
                                        TemplateBody=self.template, RoleARN=self.cfn_role)
        self.assertIn("changeSet/c1/", created["Id"])
        cfn.describe_change_set(ChangeSetName=created["Id"])
        # PassRole on this role only with iam:PassedToService lambda.amazonaws.com.
        message = self.refused(lambda: cfn.create_change_set(
            StackName=uniq("cs"), ChangeSetName="c1", ChangeSetType="CREATE", TemplateBody=self.template,
            RoleARN=self.lambda_role))
        self.assertEqual(message, (
            f"User: {self.session} is not authorized to perform: iam:PassRole on resource: {self.lambda_role} "
            "because no identity-based policy allows the iam:PassRole action"))
        # Without a RoleARN nothing is passed.
        cfn.create_change_set(StackName=uniq("cs"), ChangeSetName="c1", ChangeSetType="CREATE",
                              TemplateBody=self.template)

    def test_start_execution_of_one_state_machine(self) -> None:
        sfn = self.role("stepfunctions")
        self.assertIn("executionArn", sfn.start_execution(stateMachineArn=self.machine))
        message = self.refused(lambda: sfn.start_execution(stateMachineArn=self.other_machine),
                               "AccessDeniedException")
        self.assertIn(f"states:StartExecution on resource: {self.other_machine}", message)

    def test_function_arn_scoped_lambda_calls(self) -> None:
        lam = self.role("lambda")
        lam.get_function(FunctionName=self.function)
        message = self.refused(lambda: lam.get_function(FunctionName=self.other_function), "AccessDeniedException")
        self.assertIn(f"lambda:GetFunction on resource: arn:aws:lambda:{REGION}:{ACCOUNT}:function:"
                      f"{self.other_function}", message)
        # Invoke is lambda:InvokeFunction, refused before the function is looked up or run;
        # a qualifier makes the resource the qualified ARN.
        message = self.refused(lambda: lam.invoke(FunctionName=self.other_function, Qualifier="live"),
                               "AccessDeniedException")
        self.assertIn(f"lambda:InvokeFunction on resource: arn:aws:lambda:{REGION}:{ACCOUNT}:function:"
                      f"{self.other_function}:live because", message)

    def test_assume_role_by_trust_policy(self) -> None:
        sts = self.role("sts")
        sts.assume_role(RoleArn=self.trusting_role, RoleSessionName="chained")
        message = self.refused(lambda: sts.assume_role(RoleArn=self.account_role, RoleSessionName="chained"))
        self.assertIn(f"sts:AssumeRole on resource: {self.account_role}", message)

    def test_caller_identity_is_always_allowed(self) -> None:
        self.assertEqual(self.role("sts").get_caller_identity()["Arn"], self.session)
        # The administrator's own calls pass too (the tests' setup clients).
        self.admin("ssm").get_parameter(Name=self.other_param)

    def test_unsigned_request_is_refused_403(self) -> None:
        def status(path: str, data: bytes | None = None, headers: dict[str, str] | None = None,
                   method: str | None = None) -> tuple[int, str]:
            request = urllib.request.Request(endpoint().rstrip("/") + path, data=data, headers=headers or {},
                                             method=method)
            try:
                with urllib.request.urlopen(request, timeout=10) as answer:
                    return answer.status, answer.read().decode()
            except urllib.error.HTTPError as e:
                return e.code, e.read().decode()

        code, body = status(f"/{uniq('unsigned')}/key")  # S3: an anonymous caller
        self.assertEqual(code, 403, body)
        self.assertIn("AccessDenied", body)
        # A request with no signature names no service: moto's one endpoint gives it to S3
        # (an X-Amz-Target or a form body alike), so this is the case every client meets.
        code, body = status("/", b"{}", {"Content-Type": "application/x-amz-json-1.0",
                                         "X-Amz-Target": "AWSStepFunctions.ListStateMachines"})
        self.assertEqual(code, 403, body)
        # A custom resource's ResponseURL (in AWS a presigned S3 URL, authorized by its own
        # signature) is answered without one: moto's cfnresponse endpoint stands for it.
        answer = json.dumps({"Status": "SUCCESS", "StackId": "x", "RequestId": "r", "LogicalResourceId": "T",
                             "PhysicalResourceId": "p"}).encode()
        code, body = status(f"/cloudformation_{REGION}/cfnresponse?stack={uniq('no-such-stack')}", answer,
                            {"Content-Type": ""}, "PUT")
        self.assertNotEqual(code, 403, body)


RUN_TAGGED = {"StringLike": {"aws:ResourceTag/cdkd-flow:run": "?*", "aws:ResourceTag/cdkd-flow:record": "?*"}}
RUN_TAGGING = {"StringLike": {"aws:RequestTag/cdkd-flow:run": "?*", "aws:RequestTag/cdkd-flow:record": "?*"}}


class RunTagConditions(unittest.TestCase):
    """The run tags of an export's destination stacks as IAM sees them (infra/template.yaml
    conditions the writes on them): a stack a change set creates carries the change set's
    tags from the start (REVIEW_IN_PROGRESS), so `aws:ResourceTag/<key>` of ExecuteChangeSet,
    DeleteChangeSet, CreateChangeSet, UpdateStack and DeleteStack is the stack's tag, and
    `aws:RequestTag/<key>` of CreateChangeSet and UpdateStack the request's; a stack without
    the tags is refused, a request dropping them too."""

    @classmethod
    def setUpClass(cls) -> None:
        set_auth("inf")
        iam = client("iam")
        trust = doc({"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"},
                     "Action": "sts:AssumeRole"})
        stacks = f"arn:aws:cloudformation:*:{ACCOUNT}:stack/*"
        role = uniq("run-tags")
        iam.create_role(RoleName=role, AssumeRolePolicyDocument=trust)
        iam.put_role_policy(RoleName=role, PolicyName="p", PolicyDocument=doc(
            allow(["cloudformation:DescribeStacks", "cloudformation:DescribeChangeSet"], stacks),
            allow("cloudformation:CreateChangeSet", stacks, RUN_TAGGING),
            allow(["cloudformation:ExecuteChangeSet", "cloudformation:DeleteChangeSet",
                   "cloudformation:DeleteStack"], stacks, RUN_TAGGED),
            allow("cloudformation:UpdateStack", stacks, {"StringLike": {**RUN_TAGGED["StringLike"],
                                                                        **RUN_TAGGING["StringLike"]}}),
        ))
        creds = client("sts").assume_role(RoleArn=f"arn:aws:iam::{ACCOUNT}:role/{role}",
                                          RoleSessionName="step")["Credentials"]
        cls.key = (creds["AccessKeyId"], creds["SecretAccessKey"], creds["SessionToken"])
        cls.body = json.dumps({"Resources": {"T": {"Type": "AWS::SNS::Topic"}}})
        cls.run_tags = [{"Key": "cdkd-flow:record", "Value": "App"}, {"Key": "cdkd-flow:run", "Value": "r1"}]
        # A stack nobody's run created, made by the administrator.
        cls.foreign = uniq("foreign")
        client("cloudformation").create_stack(StackName=cls.foreign, TemplateBody=cls.body,
                                              Tags=[{"Key": "team", "Value": "blue"}])

    def setUp(self) -> None:
        set_auth("0")

    def tearDown(self) -> None:
        set_auth("inf")

    def refused(self, call: Any) -> str:
        with self.assertRaises(ClientError) as caught:
            call()
        error = caught.exception.response["Error"]
        self.assertEqual(error["Code"], "AccessDenied", error)
        return str(error["Message"])

    def test_a_stack_the_run_created_may_be_changed_and_deleted(self) -> None:
        cfn = keyed("cloudformation", *self.key)
        name = uniq("dest")
        created = cfn.create_change_set(StackName=name, ChangeSetName="c1", ChangeSetType="CREATE",
                                        TemplateBody=self.body, Tags=self.run_tags)
        [stack] = cfn.describe_stacks(StackName=name)["Stacks"]
        self.assertEqual(stack["StackStatus"], "REVIEW_IN_PROGRESS")
        cfn.execute_change_set(ChangeSetName=created["Id"])
        cfn.update_stack(StackName=name, UsePreviousTemplate=True,
                         Tags=self.run_tags + [{"Key": "flip", "Value": "r1"}])
        # Dropping the run tags is refused: the request no longer carries them.
        message = self.refused(lambda: cfn.update_stack(StackName=name, UsePreviousTemplate=True,
                                                        Tags=[{"Key": "flip", "Value": "r1"}]))
        self.assertIn(f"cloudformation:UpdateStack on resource: {stack['StackId']}", message)
        second = cfn.create_change_set(StackName=name, ChangeSetName="c2", ChangeSetType="UPDATE",
                                       UsePreviousTemplate=True, Tags=self.run_tags)
        cfn.delete_change_set(ChangeSetName=second["Id"])
        cfn.delete_stack(StackName=name)

    def test_a_stack_without_the_run_tags_is_refused(self) -> None:
        cfn = keyed("cloudformation", *self.key)
        [stack] = cfn.describe_stacks(StackName=self.foreign)["Stacks"]
        message = self.refused(lambda: cfn.delete_stack(StackName=self.foreign))
        self.assertIn(f"cloudformation:DeleteStack on resource: {stack['StackId']} because no "
                      "identity-based policy allows the cloudformation:DeleteStack action", message)
        self.refused(lambda: cfn.update_stack(StackName=self.foreign, UsePreviousTemplate=True,
                                              Tags=self.run_tags))
        # A change set may carry the run tags to it, but not be executed or deleted: the
        # stack does not carry them until the change set ran.
        created = cfn.create_change_set(StackName=self.foreign, ChangeSetName="c1", ChangeSetType="UPDATE",
                                        UsePreviousTemplate=True, Tags=self.run_tags)
        message = self.refused(lambda: cfn.execute_change_set(ChangeSetName=created["Id"]))
        self.assertIn("cloudformation:ExecuteChangeSet on resource:", message)
        self.refused(lambda: cfn.delete_change_set(ChangeSetName=created["Id"]))
        # A change set without the run tags is refused.
        self.refused(lambda: cfn.create_change_set(StackName=uniq("dest"), ChangeSetName="c1",
                                                   ChangeSetType="CREATE", TemplateBody=self.body))
        self.assertEqual(cfn.describe_stacks(StackName=self.foreign)["Stacks"][0]["StackStatus"], "CREATE_COMPLETE")


class _Req(Req):
    def __init__(self) -> None:  # the parts function_arn reads, without a request
        self.region, self.account, self.partition = REGION, ACCOUNT, "aws"


class InvokeCheck(unittest.TestCase):
    """lambda:InvokeFunction on the function's ARN, as SAM's LambdaInvokePolicy grants it
    (`function:<name>*`), for names, partial and full ARNs and qualifiers."""

    def test_invoke_function_on_the_function_arn(self) -> None:
        granted = iam_policy.parse(doc(allow("lambda:InvokeFunction",
                                             f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:destroy-plan*")))
        req = _Req()
        for name, qualifier, outcome in [
            ("destroy-plan", None, iam_policy.ALLOW),
            (f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:destroy-plan", "live", iam_policy.ALLOW),
            (f"{ACCOUNT}:function:destroy-plan:3", None, iam_policy.ALLOW),
            ("destroy-wave", None, iam_policy.NONE),
        ]:
            arn = function_arn(req, name, qualifier)
            self.assertEqual(iam_policy.decide([granted], "lambda:InvokeFunction", arn, {}).outcome, outcome, arn)
        self.assertEqual(function_arn(req, "f", "live"), f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:f:live")


class Conditions(unittest.TestCase):
    """The condition operators, as the IAM User Guide documents them."""

    def holds(self, condition: dict[str, Any], context: dict[str, Any] | None = None) -> bool:
        ctx = {k.lower(): v if isinstance(v, list) else [v] for k, v in (context or {}).items()}
        return iam_conditions.conditions_hold(condition, ctx)

    def test_string_operators(self) -> None:
        like = {"StringLike": {"s3:prefix": ["cdkd/*", "run-??"]}}
        self.assertTrue(self.holds(like, {"s3:prefix": "cdkd/_runs/x"}))
        self.assertTrue(self.holds(like, {"s3:prefix": "run-42"}))
        self.assertFalse(self.holds(like, {"s3:prefix": "run-4"}))
        self.assertFalse(self.holds(like))  # a missing key: a positive operator is false
        self.assertTrue(self.holds({"StringNotLike": {"s3:prefix": "cdkd/*"}}))  # a negated one true
        self.assertFalse(self.holds({"StringNotEquals": {"aws:SourceAccount": ACCOUNT}},
                                    {"aws:SourceAccount": ACCOUNT}))
        self.assertTrue(self.holds({"StringEqualsIfExists": {"aws:SourceAccount": ACCOUNT}}))
        self.assertFalse(self.holds({"StringEqualsIfExists": {"aws:SourceAccount": ACCOUNT}},
                                    {"aws:SourceAccount": OTHER_ACCOUNT}))
        self.assertTrue(self.holds({"StringEqualsIgnoreCase": {"k": "ABC"}}, {"k": "abc"}))
        self.assertFalse(self.holds({"StringEquals": {"k": "ABC"}}, {"k": "abc"}))
        self.assertTrue(self.holds({"StringEquals": {"K": "${aws:username}"}}, {"k": "ann", "aws:username": "ann"}))

    def test_sets_null_and_other_types(self) -> None:
        self.assertTrue(self.holds({"ForAllValues:StringEquals": {"aws:TagKeys": ["a", "b"]}}, {"aws:TagKeys": ["a"]}))
        self.assertFalse(self.holds({"ForAllValues:StringEquals": {"aws:TagKeys": ["a"]}},
                                    {"aws:TagKeys": ["a", "c"]}))
        self.assertTrue(self.holds({"ForAllValues:StringEquals": {"aws:TagKeys": ["a"]}}))
        self.assertTrue(self.holds({"ForAnyValue:StringLike": {"aws:TagKeys": ["a*"]}}, {"aws:TagKeys": ["c", "ab"]}))
        self.assertFalse(self.holds({"ForAnyValue:StringEquals": {"aws:TagKeys": ["a"]}}))
        self.assertTrue(self.holds({"Null": {"aws:RequestTag/team": "true"}}))
        self.assertFalse(self.holds({"Null": {"aws:RequestTag/team": "true"}}, {"aws:RequestTag/team": "x"}))
        self.assertTrue(self.holds({"Bool": {"aws:SecureTransport": "false"}}, {"aws:SecureTransport": "false"}))
        self.assertTrue(self.holds({"NumericLessThanEquals": {"s3:max-keys": "10"}}, {"s3:max-keys": "7"}))
        self.assertFalse(self.holds({"NumericGreaterThan": {"s3:max-keys": "10"}}, {"s3:max-keys": "7"}))
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.assertTrue(self.holds({"DateLessThan": {"aws:CurrentTime": "2100-01-01T00:00:00Z"}},
                                   {"aws:CurrentTime": now}))
        self.assertTrue(self.holds({"ArnLike": {"aws:SourceArn": "arn:aws:states:*:*:stateMachine:destroy-*"}},
                                   {"aws:SourceArn": f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:destroy-1"}))
        self.assertFalse(self.holds({"ArnEquals": {"aws:SourceArn": "arn:aws:states:*:*:stateMachine:x"}},
                                    {"aws:SourceArn": "not-an-arn"}))
        self.assertTrue(self.holds({"IpAddress": {"aws:SourceIp": "127.0.0.0/8"}}, {"aws:SourceIp": "127.0.0.1"}))
        self.assertFalse(self.holds({"NoSuchOperator": {"k": "v"}}, {"k": "v"}))

    def test_a_failed_condition_of_an_allow_is_no_deny(self) -> None:
        # moto used to read it as an explicit deny, which overrode every other Allow.
        documents = [iam_policy.parse(doc(
            allow("iam:PassRole", "*", {"StringEquals": {"iam:PassedToService": "lambda.amazonaws.com"}}),
            allow("iam:PassRole", "*", {"StringEquals": {"iam:PassedToService": "cloudformation.amazonaws.com"}})))]
        decision = iam_policy.decide(documents, "iam:PassRole", "arn:aws:iam::1:role/r",
                                     {"iam:passedtoservice": ["cloudformation.amazonaws.com"]})
        self.assertEqual(decision.outcome, iam_policy.ALLOW)


if __name__ == "__main__":
    unittest.main()
