"""CloudFormation's template limits (`cfn_limits`), through boto3 against the emulator
`scripts/with-emulator.sh` started: a TemplateBody of at most 51,200 bytes (UTF-8), a
TemplateURL object of at most 1,000,000 bytes, at most 500 resources, refused with
AWS's ValidationError by every action that takes a template."""
import json
import unittest
from typing import Any, Callable

from botocore.exceptions import ClientError

from .support import client, uniq

BODY_LIMIT, URL_LIMIT, RESOURCE_LIMIT = 51_200, 1_000_000, 500
TOPIC = {"Type": "AWS::SNS::Topic"}


def template(resources: int = 1, pad: int = 0, pad_char: str = "x") -> str:
    """A compact JSON template of `resources` topics, padded with template Metadata so
    that its UTF-8 text is `pad` bytes long (when `pad` is given)."""
    body: dict[str, Any] = {"Resources": {f"Topic{i}": TOPIC for i in range(resources)}}
    text = json.dumps(body, separators=(",", ":"))
    if not pad:
        return text
    body["Metadata"] = {"Pad": ""}
    room = pad - len(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    width = len(pad_char.encode("utf-8"))
    body["Metadata"]["Pad"] = pad_char * (room // width) + "x" * (room % width)
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    assert len(text.encode("utf-8")) == pad, len(text.encode("utf-8"))
    return text


class TemplateLimits(unittest.TestCase):
    cfn: Any
    s3: Any
    bucket: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.cfn, cls.s3 = client("cloudformation"), client("s3")
        cls.bucket = uniq("cfn-limits")
        cls.s3.create_bucket(Bucket=cls.bucket)

    def stack(self, body: str | None = None) -> str:
        name = uniq("limits")
        self.cfn.create_stack(StackName=name, TemplateBody=body or template())
        self.addCleanup(self.cfn.delete_stack, StackName=name)
        return name

    def url(self, text: str) -> str:
        key = uniq("template") + ".json"
        self.s3.put_object(Bucket=self.bucket, Key=key, Body=text.encode("utf-8"))
        return f"{self.cfn.meta.endpoint_url}/{self.bucket}/{key}"

    def refused(self, call: Callable[[], Any], *fragments: str) -> str:
        with self.assertRaises(ClientError) as caught:
            call()
        error = caught.exception.response["Error"]
        self.assertEqual(error["Code"], "ValidationError", error)
        for fragment in fragments:
            self.assertIn(fragment, error["Message"])
        return str(error["Message"])

    def every_entry_point(self, template_arg: dict[str, str]) -> dict[str, Callable[[], Any]]:
        """The calls of every action that takes a template, each with `template_arg`."""
        existing = self.stack()
        return {
            "CreateStack": lambda: self.cfn.create_stack(StackName=uniq("limits"), **template_arg),
            "UpdateStack": lambda: self.cfn.update_stack(StackName=existing, **template_arg),
            "CreateChangeSet CREATE": lambda: self.cfn.create_change_set(
                StackName=uniq("limits"), ChangeSetName="create", ChangeSetType="CREATE", **template_arg),
            "CreateChangeSet UPDATE": lambda: self.cfn.create_change_set(
                StackName=existing, ChangeSetName="update", ChangeSetType="UPDATE", **template_arg),
            "CreateChangeSet IMPORT": lambda: self.cfn.create_change_set(
                StackName=uniq("limits"), ChangeSetName="import", ChangeSetType="IMPORT",
                ResourcesToImport=[{"ResourceType": "AWS::SNS::Topic", "LogicalResourceId": "Topic0",
                                    "ResourceIdentifier": {"TopicArn": "arn:aws:sns:us-east-1:123456789012:t"}}],
                **template_arg),
            "ValidateTemplate": lambda: self.cfn.validate_template(**template_arg),
            "GetTemplateSummary": lambda: self.cfn.get_template_summary(**template_arg),
        }

    # ---- TemplateBody: 51,200 bytes ----

    def test_rule_template_body_over_51200_bytes_is_refused_by_every_action(self) -> None:
        body = template(pad=BODY_LIMIT + 1)
        for action, call in self.every_entry_point({"TemplateBody": body}).items():
            with self.subTest(action):
                message = self.refused(call, "1 validation error detected: Value '",
                                       "' at 'templateBody' failed to satisfy constraint: Member "
                                       "must have length less than or equal to 51200")
                self.assertIn(body, message)

    def test_rule_template_body_limit_counts_utf8_bytes_not_characters(self) -> None:
        body = template(pad=BODY_LIMIT + 1, pad_char="é")
        self.assertLess(len(body), BODY_LIMIT)
        self.refused(lambda: self.cfn.validate_template(TemplateBody=body), "51200")
        self.refused(lambda: self.cfn.create_stack(StackName=uniq("limits"), TemplateBody=body), "51200")

    def test_rule_template_body_of_exactly_51200_bytes_is_accepted(self) -> None:
        body = template(pad=BODY_LIMIT, pad_char="é")
        self.cfn.validate_template(TemplateBody=body)
        name = self.stack(body)
        self.assertEqual(self.cfn.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"], "CREATE_COMPLETE")

    # ---- TemplateURL: 1,000,000 bytes ----

    def test_rule_template_url_object_over_1000000_bytes_is_refused_by_every_action(self) -> None:
        url = self.url(template(pad=URL_LIMIT + 1))
        for action, call in self.every_entry_point({"TemplateURL": url}).items():
            with self.subTest(action):
                self.refused(call, "Template may not exceed 1000000 bytes in size.")

    def test_rule_template_url_object_of_exactly_1000000_bytes_is_accepted(self) -> None:
        url = self.url(template(pad=URL_LIMIT, pad_char="é"))
        name = uniq("limits")
        self.cfn.create_stack(StackName=name, TemplateURL=url)
        self.addCleanup(self.cfn.delete_stack, StackName=name)
        self.assertEqual(self.cfn.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"], "CREATE_COMPLETE")

    # ---- Resources: 500 ----

    def test_rule_more_than_500_resources_is_refused_by_every_action(self) -> None:
        body = template(resources=RESOURCE_LIMIT + 1)
        for arg in ({"TemplateBody": body}, {"TemplateURL": self.url(body)}):
            for action, call in self.every_entry_point(arg).items():
                with self.subTest(action, by=next(iter(arg))):
                    message = self.refused(call)
                    self.assertEqual(message, "Template format error: Number of resources, 501, "
                                              "is greater than maximum allowed, 500")

    def test_rule_more_than_500_resources_in_yaml_is_refused(self) -> None:
        body = "Resources:\n" + "".join(f"  Topic{i}:\n    Type: AWS::SNS::Topic\n" for i in range(600))
        self.refused(lambda: self.cfn.validate_template(TemplateBody=body), "Number of resources, 600,")

    def test_rule_a_refused_template_creates_and_changes_nothing(self) -> None:
        name = uniq("limits")
        self.refused(lambda: self.cfn.create_stack(StackName=name, TemplateBody=template(RESOURCE_LIMIT + 1)))
        with self.assertRaises(ClientError):
            self.cfn.describe_stacks(StackName=name)
        existing = self.stack()
        self.refused(lambda: self.cfn.update_stack(StackName=existing, TemplateBody=template(RESOURCE_LIMIT + 1)))
        kept = self.cfn.get_template(StackName=existing)["TemplateBody"]
        self.assertEqual(kept if isinstance(kept, dict) else json.loads(kept), json.loads(template()))

    def test_rule_500_resources_are_accepted(self) -> None:
        self.cfn.validate_template(TemplateBody=template(resources=RESOURCE_LIMIT))


if __name__ == "__main__":
    unittest.main()
