"""SNS-backed custom resources (`cfn_custom`), as AWS documents them: the request is
published to the ServiceToken topic, the stack waits for the provider's answer at the
ResponseURL, SUCCESS completes it with the answered PhysicalResourceId, FAILED rolls the
update back with the provider's reason."""
import json
import time
import unittest
import urllib.request
from typing import Any

from .support import client, uniq


class SnsBackedCustomResource(unittest.TestCase):
    cfn: Any
    sns: Any
    sqs: Any

    @classmethod
    def setUpClass(cls) -> None:
        cls.cfn, cls.sns, cls.sqs = client("cloudformation"), client("sns"), client("sqs")

    def provider(self) -> tuple[str, str]:
        """A topic (the ServiceToken) and a queue subscribed to it (the provider's inbox)."""
        topic = self.sns.create_topic(Name=uniq("cr-provider"))["TopicArn"]
        queue = self.sqs.create_queue(QueueName=uniq("cr-requests"))["QueueUrl"]
        arn = self.sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        self.sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn)
        return topic, queue

    def update_with_custom_resource(self, topic: str) -> str:
        stack = uniq("cr")
        base = {"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}}
        self.cfn.create_stack(StackName=stack, TemplateBody=json.dumps(base))
        template = {"Resources": {"Q": {"Type": "AWS::SQS::Queue"},
                                  "Thing": {"Type": "Custom::Thing", "Properties": {"ServiceToken": topic, "Size": "3"}}}}
        cs = self.cfn.create_change_set(StackName=stack, ChangeSetName="u1", TemplateBody=json.dumps(template),
                                        ChangeSetType="UPDATE")["Id"]
        for _ in range(50):
            if self.cfn.describe_change_set(ChangeSetName=cs)["Status"] == "CREATE_COMPLETE":
                break
            time.sleep(0.1)
        self.cfn.execute_change_set(ChangeSetName=cs)
        return stack

    def request(self, queue: str) -> dict[str, Any]:
        message = self.sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=2)["Messages"][0]
        return json.loads(json.loads(message["Body"])["Message"])

    def answer(self, event: dict[str, Any], **fields: Any) -> None:
        body = {"StackId": event["StackId"], "RequestId": event["RequestId"],
                "LogicalResourceId": event["LogicalResourceId"], **fields}
        put = urllib.request.Request(event["ResponseURL"], data=json.dumps(body).encode(), method="PUT",
                                     headers={"Content-Type": ""})
        self.assertEqual(urllib.request.urlopen(put).status, 200)

    def status(self, stack: str) -> str:
        return self.cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"]

    def test_rule_the_request_is_published_and_the_update_waits_for_success(self) -> None:
        topic, queue = self.provider()
        stack = self.update_with_custom_resource(topic)
        self.assertEqual(self.status(stack), "UPDATE_IN_PROGRESS")
        event = self.request(queue)
        self.assertEqual((event["RequestType"], event["LogicalResourceId"], event["ResourceType"]),
                         ("Create", "Thing", "Custom::Thing"))
        self.assertEqual(event["ResourceProperties"]["Size"], "3")
        self.assertTrue(event["ResponseURL"].startswith("http://127.0.0.1:"), event["ResponseURL"])
        self.answer(event, Status="SUCCESS", PhysicalResourceId="thing-42", Data={"Answer": "42"})
        self.assertEqual(self.status(stack), "UPDATE_COMPLETE")
        resources = self.cfn.describe_stack_resources(StackName=stack)["StackResources"]
        self.assertIn(("Thing", "thing-42"), [(r["LogicalResourceId"], r["PhysicalResourceId"]) for r in resources])

    def test_rule_a_failed_answer_rolls_the_update_back_with_the_providers_reason(self) -> None:
        topic, queue = self.provider()
        stack = self.update_with_custom_resource(topic)
        self.answer(self.request(queue), Status="FAILED", Reason="out of widgets")
        self.assertEqual(self.status(stack), "UPDATE_ROLLBACK_COMPLETE")
        reasons = [e.get("ResourceStatusReason", "") for e in self.cfn.describe_stack_events(StackName=stack)["StackEvents"]]
        self.assertTrue(any("Message returned: out of widgets" in r for r in reasons), reasons)


if __name__ == "__main__":
    unittest.main()
