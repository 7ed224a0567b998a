"""One import of each resource type the export uses: the real resource is made with
boto3 first, then imported; the stack then lists it with the physical id AWS uses."""
import unittest
from typing import Any, Callable

from .support import ImportCase, Resources, entry, resource, template, uniq

# type -> (make the resource: (made, name) -> identifier value, identifier key,
#          template properties, expected physical id: (name, identifier value) -> str)
Case = tuple[Callable[[Resources, str], str], str, Callable[[str], dict[str, Any]], Callable[[str, str], str]]


def _same(_: str, ident: str) -> str:
    return ident


CASES: dict[str, Case] = {
    "AWS::SQS::Queue": (lambda m, n: m.queue(n), "QueueUrl", lambda n: {"QueueName": n}, _same),
    "AWS::SNS::Topic": (lambda m, n: m.topic(n), "TopicArn", lambda n: {"TopicName": n}, _same),
    "AWS::S3::Bucket": (lambda m, n: m.bucket(n), "BucketName", lambda n: {"BucketName": n}, _same),
    "AWS::SSM::Parameter": (lambda m, n: m.parameter(n), "Name",
                            lambda n: {"Name": n, "Type": "String", "Value": "v1"}, _same),
    "AWS::IAM::Role": (lambda m, n: (m.role(n), n)[1], "RoleName", lambda n: {"RoleName": n}, _same),
    "AWS::DynamoDB::Table": (lambda m, n: m.table(n), "TableName", lambda n: {"TableName": n}, _same),
    "AWS::Lambda::Function": (lambda m, n: m.function(n), "FunctionName", lambda n: {"FunctionName": n}, _same),
    "AWS::Logs::LogGroup": (lambda m, n: m.log_group(n), "LogGroupName", lambda n: {"LogGroupName": n}, _same),
    "AWS::EC2::SecurityGroup": (lambda m, n: m.security_group(n), "Id",
                                lambda n: {"GroupName": n, "GroupDescription": "import test"}, _same),
}


class EachType(ImportCase):
    def import_one(self, type_name: str) -> None:
        make, key, properties, expected = CASES[type_name]
        stack, name = uniq("s"), uniq("r")
        ident = make(self.made, name)
        self.import_stack(stack, template({"Res": resource(type_name, properties(name))}),
                          [entry("Res", type_name, **{key: ident})])
        self.assertEqual(self.resources(stack), {"Res": (type_name, expected(name, ident))})

    def test_rule_sqs_queue_imports(self) -> None:
        self.import_one("AWS::SQS::Queue")

    def test_rule_sns_topic_imports(self) -> None:
        self.import_one("AWS::SNS::Topic")

    def test_rule_s3_bucket_imports(self) -> None:
        self.import_one("AWS::S3::Bucket")

    def test_rule_ssm_parameter_imports(self) -> None:
        self.import_one("AWS::SSM::Parameter")

    def test_rule_iam_role_imports(self) -> None:
        self.import_one("AWS::IAM::Role")

    def test_rule_dynamodb_table_imports(self) -> None:
        self.import_one("AWS::DynamoDB::Table")

    def test_rule_lambda_function_imports(self) -> None:
        self.import_one("AWS::Lambda::Function")

    def test_rule_log_group_imports(self) -> None:
        self.import_one("AWS::Logs::LogGroup")

    def test_rule_security_group_imports(self) -> None:
        self.import_one("AWS::EC2::SecurityGroup")

    def test_rule_security_group_ingress_imports_with_its_rule_id(self) -> None:
        stack, group = uniq("s"), self.made.security_group(uniq("sg"))
        rule_id = self.made.ingress(group)
        self.assertTrue(rule_id.startswith("sgr-"))
        row = resource("AWS::EC2::SecurityGroupIngress", {
            "GroupId": group, "IpProtocol": "tcp", "FromPort": 443, "ToPort": 443, "CidrIp": "10.0.0.0/8"})
        self.import_stack(stack, template({"Ingress": row}),
                          [entry("Ingress", "AWS::EC2::SecurityGroupIngress", Id=rule_id)])
        self.assertEqual(self.resources(stack), {"Ingress": ("AWS::EC2::SecurityGroupIngress", rule_id)})

    def test_rule_delete_stack_removes_an_imported_ingress_rule_whose_policy_is_delete(self) -> None:
        stack, group = uniq("s"), self.made.security_group(uniq("sg"))
        rule_id = self.made.ingress(group, port=8443)
        row = resource("AWS::EC2::SecurityGroupIngress", {
            "GroupId": group, "IpProtocol": "tcp", "FromPort": 8443, "ToPort": 8443, "CidrIp": "10.0.0.0/8"},
            "Delete")
        self.import_stack(stack, template({"Ingress": row}),
                          [entry("Ingress", "AWS::EC2::SecurityGroupIngress", Id=rule_id)])
        self.cfn.delete_stack(StackName=stack)
        rules = self.made.ec2.describe_security_group_rules(
            Filters=[{"Name": "group-id", "Values": [group]}])["SecurityGroupRules"]
        self.assertNotIn(rule_id, [r["SecurityGroupRuleId"] for r in rules])

    def test_rule_a_rule_id_that_is_an_egress_rule_does_not_exist_as_ingress(self) -> None:
        stack, group = uniq("s"), self.made.security_group(uniq("sg"))
        rules = self.made.ec2.describe_security_group_rules(
            Filters=[{"Name": "group-id", "Values": [group]}])["SecurityGroupRules"]
        egress = next(r["SecurityGroupRuleId"] for r in rules if r["IsEgress"])
        row = resource("AWS::EC2::SecurityGroupIngress", {"GroupId": group, "IpProtocol": "-1"})
        self.create_import(stack, template({"Ingress": row}),
                           [entry("Ingress", "AWS::EC2::SecurityGroupIngress", Id=egress)])
        self.assert_failed(stack, "Ingress", egress, "does not exist")


if __name__ == "__main__":
    unittest.main()
