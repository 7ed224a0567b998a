"""Seed the local emulator with a realistic cdkd state bucket for `make demo`.

Creates the default state bucket of the emulator's account (cdkd-state-123456789012) and,
under the `cdkd/` prefix:
  - WebApp (us-east-1): a stack with real emulator resources (SNS topic, SQS queue,
    S3 bucket, SSM parameter, IAM role with an inline policy) and cdkd's dependency lists;
  - WebApp (eu-west-1): the same name in a second region;
  - Platform (us-east-1) with a nested child Platform~Network (us-east-1);
  - Legacy: a schema v1 record at the legacy key cdkd/Legacy/state.json;
  - Locked (us-east-1): a stack whose lock.json is held by a cdkd process on a laptop;
  - ExportNested (us-east-1) and its two nested levels: the records of the export
    fixture whose cloud assembly is cli/tests/fixtures/export/nested.out.
Everything goes to AWS_ENDPOINT_URL (the emulator on 127.0.0.1).
"""
import json
import os
import pathlib
import time

import boto3

ENDPOINT = os.environ["AWS_ENDPOINT_URL"]
assert ENDPOINT.startswith("http://127.0.0.1:"), "the demo only talks to the local emulator"
REGION = "us-east-1"
NOW = int(time.time() * 1000)


def client(name, region=REGION):
    return boto3.client(name, region_name=region, endpoint_url=ENDPOINT)


def put(s3, bucket, key, body):
    s3.put_object(Bucket=bucket, Key=key, Body=json.dumps(body, indent=2).encode(),
                  ContentType="application/json")


def web_app_resources(prefix):
    """Create real resources in the emulator and return their cdkd records."""
    sns, sqs, s3, ssm, iam = (client(n) for n in ("sns", "sqs", "s3", "ssm", "iam"))
    topic = sns.create_topic(Name=f"{prefix}-Topic")["TopicArn"]
    queue = sqs.create_queue(QueueName=f"{prefix}-Queue")["QueueUrl"]
    bucket = f"{prefix.lower()}-assets"
    s3.create_bucket(Bucket=bucket)
    param = f"/{prefix}/endpoint"
    ssm.put_parameter(Name=param, Value="https://example.invalid", Type="String")
    role = f"{prefix}-HandlerRole"
    iam.create_role(RoleName=role, AssumeRolePolicyDocument=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"},
                       "Action": "sts:AssumeRole"}]}))
    policy_doc = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*"}]}
    iam.put_role_policy(RoleName=role, PolicyName="HandlerPolicy", PolicyDocument=json.dumps(policy_doc))
    return {
        "Topic": {"physicalId": topic, "resourceType": "AWS::SNS::Topic",
                  "properties": {"DisplayName": "orders"},
                  "attributes": {"TopicArn": topic}, "provisionedBy": "sdk"},
        "Queue": {"physicalId": queue, "resourceType": "AWS::SQS::Queue",
                  "properties": {"VisibilityTimeout": 30},
                  "attributes": {"QueueUrl": queue}, "provisionedBy": "sdk"},
        "Assets": {"physicalId": bucket, "resourceType": "AWS::S3::Bucket",
                   "properties": {}, "attributes": {"Arn": f"arn:aws:s3:::{bucket}"},
                   "deletionPolicy": "Delete", "provisionedBy": "sdk"},
        "Endpoint": {"physicalId": param, "resourceType": "AWS::SSM::Parameter",
                     "properties": {"Type": "String", "Value": "https://example.invalid"},
                     "provisionedBy": "sdk"},
        "HandlerRole": {"physicalId": role, "resourceType": "AWS::IAM::Role",
                        "properties": {}, "attributes": {"Arn": f"arn:aws:iam::123456789012:role/{role}"},
                        "provisionedBy": "sdk"},
        "HandlerPolicy": {"physicalId": "HandlerPolicy", "resourceType": "AWS::IAM::Policy",
                          "properties": {"PolicyName": "HandlerPolicy", "PolicyDocument": policy_doc,
                                         "Roles": [role]},
                          "dependencies": ["HandlerRole", "Queue"], "provisionedBy": "sdk"},
        "Subscription": {"physicalId": f"{topic}:sub", "resourceType": "AWS::CDK::Metadata",
                         "properties": {}, "dependencies": ["Topic"]},
    }


def orders_stack(prefix):
    """Real resources for the export: the record cdkd keeps of them, and the template
    the CDK app synthesizes for them (written beside the emulator's logs)."""
    sns, sqs, s3, ssm = (client(n) for n in ("sns", "sqs", "s3", "ssm"))
    topic = sns.create_topic(Name=f"{prefix}-Events")["TopicArn"]
    queue = sqs.create_queue(QueueName=f"{prefix}-Work")["QueueUrl"]
    bucket = f"{prefix.lower()}-archive"
    s3.create_bucket(Bucket=bucket)
    param = f"/{prefix}/queue-url"
    ssm.put_parameter(Name=param, Value=queue, Type="String")
    resources = {
        "EventsTopic": {"physicalId": topic, "resourceType": "AWS::SNS::Topic", "properties": {},
                        "attributes": {"TopicArn": topic}, "provisionedBy": "sdk"},
        "WorkQueue": {"physicalId": queue, "resourceType": "AWS::SQS::Queue", "properties": {},
                      "attributes": {"QueueUrl": queue}, "provisionedBy": "sdk"},
        "Archive": {"physicalId": bucket, "resourceType": "AWS::S3::Bucket", "properties": {},
                    "attributes": {"Arn": f"arn:aws:s3:::{bucket}"}, "provisionedBy": "sdk"},
        "QueueUrlParam": {"physicalId": param, "resourceType": "AWS::SSM::Parameter",
                          "properties": {"Name": param, "Type": "String", "Value": queue},
                          "dependencies": ["WorkQueue"], "provisionedBy": "sdk"},
    }
    template = {
        "Description": "Orders: the stack the demo exports into CloudFormation",
        "Resources": {
            "EventsTopic": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": f"{prefix}-Events"}},
            "WorkQueue": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"{prefix}-Work"}},
            "Archive": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": bucket}},
            "QueueUrlParam": {"Type": "AWS::SSM::Parameter",
                              "Properties": {"Name": param, "Type": "String", "Value": {"Ref": "WorkQueue"}}},
            "CDKMetadata": {"Type": "AWS::CDK::Metadata", "Properties": {"Analytics": "v2:deflate64:demo"}},
        },
        "Outputs": {
            "QueueUrl": {"Value": {"Ref": "WorkQueue"}},
            "TopicArn": {"Value": {"Ref": "EventsTopic"}, "Export": {"Name": f"{prefix}-TopicArn"}},
        },
    }
    return resources, template


def record(stack, region, resources, **extra):
    body = {"version": 10, "stackName": stack, "region": region, "resources": resources,
            "outputs": extra.pop("outputs", {}), "lastModified": NOW - 3_600_000}
    body.update(extra)
    return body


def main():
    s3 = client("s3")
    bucket = os.environ.get("CDKD_FLOW_STATE_BUCKET") or "cdkd-state-123456789012"
    try:
        s3.create_bucket(Bucket=bucket)
    except s3.exceptions.BucketAlreadyOwnedByYou:
        pass  # the deployed backend's bucket (scripts/with-emulator.sh --backend)
    put(s3, bucket, "cdkd/WebApp/us-east-1/state.json",
        record("WebApp", REGION, web_app_resources("WebApp"),
               outputs={"TopicArn": "arn:aws:sns:us-east-1:123456789012:WebApp-Topic"}, exportNames=[]))
    put(s3, bucket, "cdkd/WebApp/eu-west-1/state.json",
        record("WebApp", "eu-west-1", {"Queue": {"physicalId": "https://sqs.eu-west-1.amazonaws.com/123456789012/q",
                                                 "resourceType": "AWS::SQS::Queue", "properties": {}}}))
    put(s3, bucket, "cdkd/Platform/us-east-1/state.json",
        record("Platform", REGION, {
            "Network": {"physicalId": "arn:aws:cloudformation:us-east-1:123456789012:stack/Platform-Network/1",
                        "resourceType": "AWS::CloudFormation::Stack", "properties": {}},
            "Alerts": {"physicalId": "arn:aws:sns:us-east-1:123456789012:Platform-Alerts",
                       "resourceType": "AWS::SNS::Topic", "properties": {}, "dependencies": ["Network"]}},
            outputs={"VpcId": "vpc-0abc", "NameServers": ["ns-1.example", "ns-2.example"]},
            skippedOutputs={"LateOutput": "3f2a9c1d7e5b4a6f8c0d"}))
    put(s3, bucket, "cdkd/Platform~Network/us-east-1/state.json",
        record("Platform~Network", REGION, {
            "Vpc": {"physicalId": "vpc-0abc", "resourceType": "AWS::EC2::VPC", "properties": {"CidrBlock": "10.0.0.0/16"}},
            "Subnet": {"physicalId": "subnet-0def", "resourceType": "AWS::EC2::Subnet",
                       "properties": {"CidrBlock": "10.0.1.0/24"}, "dependencies": ["Vpc"]}},
            parentStack="Platform", parentLogicalId="Network", parentRegion=REGION))
    put(s3, bucket, "cdkd/Legacy/state.json",
        {"version": 1, "stackName": "Legacy", "resources": {
            "Table": {"physicalId": "legacy-table", "resourceType": "AWS::DynamoDB::Table", "properties": {}}},
         "outputs": {}, "lastModified": NOW - 400 * 86_400_000})
    put(s3, bucket, "cdkd/Locked/us-east-1/state.json",
        record("Locked", REGION, {"Fn": {"physicalId": "locked-fn", "resourceType": "AWS::Lambda::Function",
                                          "properties": {}}}))
    put(s3, bucket, "cdkd/Locked/us-east-1/lock.json",
        {"owner": "alice@laptop:4242", "timestamp": NOW - 240_000, "expiresAt": NOW + 1_560_000,
         "operation": "deploy"})
    orders, orders_template = orders_stack("Orders")
    put(s3, bucket, "cdkd/Orders/us-east-1/state.json",
        record("Orders", REGION, orders, outputs={"QueueUrl": orders["WorkQueue"]["physicalId"]}))
    out_dir = pathlib.Path(__file__).resolve().parent.parent / ".emulator"
    out_dir.mkdir(exist_ok=True)
    (out_dir / "demo-orders.template.json").write_text(json.dumps(orders_template, indent=2))
    export_records = pathlib.Path(__file__).resolve().parent.parent / "cli/tests/fixtures/export/state"
    nested = sorted(export_records.glob("ExportNested*.state.json"))
    for path in nested:
        stack = path.name[: -len(".state.json")]
        put(s3, bucket, f"cdkd/{stack}/us-east-1/state.json", json.loads(path.read_text()))
    print(f"seeded s3://{bucket}/cdkd/ with {7 + len(nested)} records and 1 lock")


if __name__ == "__main__":
    main()
