"""What the import tests share: boto3 clients on the emulator `scripts/with-emulator.sh`
started (AWS_ENDPOINT_URL, which must be on 127.0.0.1), unique names, templates, the
change-set calls a client makes (create, describe, execute, poll DescribeStacks), and
real resources made with boto3 to import."""
import io
import json
import os
import time
import unittest
import uuid
import zipfile
from typing import Any
from urllib.parse import urlparse

import boto3
from botocore.exceptions import ClientError

REGION = "us-east-1"
ACCOUNT = "123456789012"
STACK_TYPE = "AWS::CloudFormation::Stack"


def endpoint() -> str:
    """The emulator's URL; refuses anything but a local address."""
    url = os.environ.get("AWS_ENDPOINT_URL", "")
    if urlparse(url).hostname not in ("127.0.0.1", "localhost"):
        raise RuntimeError(
            "AWS_ENDPOINT_URL must name the local emulator: run the tests through "
            "scripts/with-emulator.sh"
        )
    return url


def client(service: str) -> Any:
    return boto3.client(service, endpoint_url=endpoint(), region_name=REGION)


def uniq(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def template(resources: dict[str, Any], outputs: dict[str, Any] | None = None,
             parameters: dict[str, Any] | None = None) -> str:
    body: dict[str, Any] = {"AWSTemplateFormatVersion": "2010-09-09", "Resources": resources}
    if parameters:
        body["Parameters"] = parameters
    if outputs:
        body["Outputs"] = outputs
    return json.dumps(body)


def resource(type_name: str, properties: dict[str, Any] | None = None,
             deletion_policy: str | None = "Retain") -> dict[str, Any]:
    row: dict[str, Any] = {"Type": type_name, "Properties": properties or {}}
    if deletion_policy:
        row["DeletionPolicy"] = deletion_policy
    return row


def entry(logical_id: str, type_name: str, **identifier: str) -> dict[str, Any]:
    return {"ResourceType": type_name, "LogicalResourceId": logical_id, "ResourceIdentifier": identifier}


class Resources:
    """Real resources in the emulator, made the way a deployment would."""

    def __init__(self) -> None:
        self.sqs, self.sns, self.s3 = client("sqs"), client("sns"), client("s3")
        self.ssm, self.iam, self.ddb = client("ssm"), client("iam"), client("dynamodb")
        self.lam, self.logs, self.ec2 = client("lambda"), client("logs"), client("ec2")

    def queue(self, name: str) -> str:
        return self.sqs.create_queue(QueueName=name)["QueueUrl"]

    def topic(self, name: str) -> str:
        return self.sns.create_topic(Name=name)["TopicArn"]

    def bucket(self, name: str) -> str:
        self.s3.create_bucket(Bucket=name)
        return name

    def parameter(self, name: str, value: str = "v1") -> str:
        self.ssm.put_parameter(Name=name, Value=value, Type="String")
        return name

    def role(self, name: str) -> str:
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                          "Principal": {"Service": "lambda.amazonaws.com"}}]}
        return self.iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(policy))["Role"]["Arn"]

    def table(self, name: str) -> str:
        self.ddb.create_table(
            TableName=name, BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        )
        return name

    def function(self, name: str) -> str:
        code = io.BytesIO()
        with zipfile.ZipFile(code, "w") as z:
            z.writestr("index.py", "def handler(event, context):\n    return event\n")
        self.lam.create_function(
            FunctionName=name, Runtime="python3.11", Handler="index.handler",
            Role=self.role(uniq("fn-role")), Code={"ZipFile": code.getvalue()},
        )
        return name

    def log_group(self, name: str) -> str:
        self.logs.create_log_group(logGroupName=name)
        return name

    def security_group(self, name: str) -> str:
        return self.ec2.create_security_group(GroupName=name, Description="import test")["GroupId"]

    def ingress(self, group_id: str, port: int = 443) -> str:
        self.ec2.authorize_security_group_ingress(
            GroupId=group_id,
            IpPermissions=[{"IpProtocol": "tcp", "FromPort": port, "ToPort": port,
                            "IpRanges": [{"CidrIp": "10.0.0.0/8"}]}],
        )
        rules = self.ec2.describe_security_group_rules(
            Filters=[{"Name": "group-id", "Values": [group_id]}]
        )["SecurityGroupRules"]
        return next(r["SecurityGroupRuleId"] for r in rules
                    if not r["IsEgress"] and r.get("FromPort") == port)


class ImportCase(unittest.TestCase):
    """A test case with the CloudFormation calls an import client makes."""

    cfn: Any
    made: Resources

    @classmethod
    def setUpClass(cls) -> None:
        cls.cfn = client("cloudformation")
        cls.made = Resources()

    def create_import(self, stack: str, body: str | None, entries: list[dict[str, Any]],
                      name: str = "import-1", **extra: Any) -> dict[str, Any]:
        args: dict[str, Any] = dict(StackName=stack, ChangeSetName=name, ChangeSetType="IMPORT",
                                    ResourcesToImport=entries, **extra)
        if body is not None:
            args["TemplateBody"] = body
        return self.cfn.create_change_set(**args)

    def change_set(self, stack: str, name: str = "import-1") -> dict[str, Any]:
        return self.cfn.describe_change_set(StackName=stack, ChangeSetName=name)

    def stack(self, stack: str) -> dict[str, Any]:
        return self.cfn.describe_stacks(StackName=stack)["Stacks"][0]

    def wait(self, stack: str, timeout: float = 10.0) -> dict[str, Any]:
        """Polls DescribeStacks until the stack leaves every *_IN_PROGRESS status."""
        deadline = time.monotonic() + timeout
        while True:
            described = self.stack(stack)
            if not described["StackStatus"].endswith("_IN_PROGRESS") or time.monotonic() > deadline:
                return described
            time.sleep(0.2)

    def execute(self, stack: str, name: str = "import-1") -> dict[str, Any]:
        self.cfn.execute_change_set(StackName=stack, ChangeSetName=name)
        return self.wait(stack)

    def import_stack(self, stack: str, body: str, entries: list[dict[str, Any]],
                     name: str = "import-1", **extra: Any) -> dict[str, Any]:
        """An IMPORT change set created, checked AVAILABLE, executed to IMPORT_COMPLETE."""
        self.create_import(stack, body, entries, name, **extra)
        described = self.change_set(stack, name)
        self.assertEqual(described["Status"], "CREATE_COMPLETE", described.get("StatusReason"))
        final = self.execute(stack, name)
        self.assertEqual(final["StackStatus"], "IMPORT_COMPLETE")
        return final

    def resources(self, stack: str) -> dict[str, tuple[str, str]]:
        """Logical id -> (type, physical id), from ListStackResources."""
        rows = self.cfn.list_stack_resources(StackName=stack)["StackResourceSummaries"]
        return {r["LogicalResourceId"]: (r["ResourceType"], r.get("PhysicalResourceId")) for r in rows}

    def events(self, stack: str) -> list[tuple[str, str]]:
        """(logical id, status) of the stack's events, oldest first."""
        rows = self.cfn.describe_stack_events(StackName=stack)["StackEvents"]
        return [(e["LogicalResourceId"], e["ResourceStatus"]) for e in reversed(rows)]

    def assert_validation_error(self, call: Any, *needles: str) -> str:
        """The call fails with ValidationError whose message contains every needle."""
        with self.assertRaises(ClientError) as caught:
            call()
        error = caught.exception.response["Error"]
        self.assertEqual(error["Code"], "ValidationError", error)
        for needle in needles:
            self.assertIn(needle, error["Message"])
        return error["Message"]

    def assert_failed(self, stack: str, *needles: str, name: str = "import-1") -> str:
        """The change set is FAILED with a reason containing every needle."""
        described = self.change_set(stack, name)
        self.assertEqual(described["Status"], "FAILED")
        self.assertEqual(described["ExecutionStatus"], "UNAVAILABLE")
        for needle in needles:
            self.assertIn(needle, described["StatusReason"])
        return described["StatusReason"]
