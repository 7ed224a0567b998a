"""Nesting an existing stack in an existing parent through an IMPORT change set whose
AWS::CloudFormation::Stack row names the child by StackId (docs/export.md §10.6)."""
import json
import unittest
from typing import Any

from .support import STACK_TYPE, ImportCase, entry, resource, template, uniq

QUEUE, TOPIC = "AWS::SQS::Queue", "AWS::SNS::Topic"
FLIP_TAG = "cdkd:nested-export-flip"
CAPABILITIES = ["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"]


class Adoption(ImportCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.bucket = cls.made.bucket(uniq("state"))

    def leaf(self, flip: bool = True) -> tuple[str, str]:
        """A stack that imported one queue (phase 1A), flipped to UPDATE_COMPLETE:
        (name, stack id)."""
        name, queue = uniq("child"), uniq("q")
        stack_id = self.import_stack(name, template({"Queue": resource(QUEUE, {"QueueName": queue})}),
                                     [entry("Queue", QUEUE, QueueUrl=self.made.queue(queue))])["StackId"]
        if flip:
            self.flip(name)
        return name, stack_id

    def flip(self, name: str) -> None:
        self.cfn.update_stack(StackName=name, UsePreviousTemplate=True, Capabilities=CAPABILITIES,
                              Tags=[{"Key": FLIP_TAG, "Value": uniq("2020-01-01T00:00:00Z")}])
        self.assertEqual(self.wait(name)["StackStatus"], "UPDATE_COMPLETE")

    def root(self) -> tuple[str, dict[str, Any]]:
        """A parent that imported one topic: (name, its resource rows)."""
        name, topic = uniq("root"), uniq("t")
        rows = {"Topic": resource(TOPIC, {"TopicName": topic}, "Delete")}
        self.import_stack(name, template(rows), [entry("Topic", TOPIC, TopicArn=self.made.topic(topic))])
        return name, rows

    def row(self, child: str, tags: list[dict[str, str]] | None = None, body: Any = None) -> dict[str, Any]:
        """The parent's row for `child` (phase 1B): Retain, the child's processed
        template uploaded to the emulator's S3, the child's tags forwarded."""
        if body is None:
            body = self.cfn.get_template(StackName=child, TemplateStage="Processed")["TemplateBody"]
        key = f"cdkd-migrate-tmp/{uniq('nested')}.json"
        self.made.s3.put_object(Bucket=self.bucket, Key=key,
                                Body=(body if isinstance(body, str) else json.dumps(body)).encode())
        if tags is None:
            tags = [t for t in self.stack(child).get("Tags", []) if not t["Key"].startswith("aws:")]
        properties: dict[str, Any] = {"TemplateURL": f"{self.cfn.meta.endpoint_url}/{self.bucket}/{key}"}
        if tags:
            properties["Tags"] = tags
        return {"Type": STACK_TYPE, "DeletionPolicy": "Retain", "Properties": properties}

    def adopt(self, parent: str, rows: dict[str, Any], child_id: str, row: dict[str, Any],
              name: str = "adopt") -> None:
        self.create_import(parent, template(dict(rows, Child=row)),
                           [entry("Child", STACK_TYPE, StackId=child_id)], name)

    def test_rule_adoption_nests_a_flipped_child(self) -> None:
        child, child_id = self.leaf()
        parent, rows = self.root()
        self.adopt(parent, rows, child_id, self.row(child))
        self.assertEqual(self.change_set(parent, "adopt")["Status"], "CREATE_COMPLETE")
        final = self.execute(parent, "adopt")
        self.assertEqual(final["StackStatus"], "IMPORT_COMPLETE")
        self.assertEqual(self.resources(parent)["Child"], (STACK_TYPE, child_id))
        nested = self.stack(child)
        self.assertEqual(nested.get("ParentId"), final["StackId"])
        self.assertEqual(nested.get("RootId"), final["StackId"])
        self.assertIn(("Child", "IMPORT_COMPLETE"), self.events(parent))

    def test_rule_adoption_refuses_a_child_in_import_complete(self) -> None:
        child, child_id = self.leaf(flip=False)
        parent, rows = self.root()
        self.adopt(parent, rows, child_id, self.row(child))
        self.assert_failed(parent, "Child", STACK_TYPE, child_id, "IMPORT_COMPLETE", name="adopt")

    def test_rule_adoption_refuses_a_child_whose_tags_differ(self) -> None:
        child, child_id = self.leaf()
        parent, rows = self.root()
        self.adopt(parent, rows, child_id, self.row(child, tags=[{"Key": FLIP_TAG, "Value": "other"}]))
        self.assert_failed(parent, "Child", child_id, "Tags", name="adopt")

    def test_rule_adoption_refuses_a_child_with_nested_stacks_of_its_own(self) -> None:
        grandchild, grandchild_id = self.leaf()
        middle, middle_id = self.leaf()
        middle_rows = self.cfn.get_template(StackName=middle)["TemplateBody"]["Resources"]
        self.adopt(middle, middle_rows, grandchild_id, self.row(grandchild))
        self.assertEqual(self.execute(middle, "adopt")["StackStatus"], "IMPORT_COMPLETE")
        self.flip(middle)
        parent, rows = self.root()
        self.adopt(parent, rows, middle_id, self.row(middle))
        self.assert_failed(parent, "Child", middle_id, "nested stacks of its own", name="adopt")

    def test_rule_adoption_refuses_a_template_that_is_not_the_childs(self) -> None:
        child, child_id = self.leaf()
        parent, rows = self.root()
        other = template({"Other": resource(QUEUE, {"QueueName": "other"})})
        self.adopt(parent, rows, child_id, self.row(child, body=other))
        self.assert_failed(parent, "Child", "does not match", name="adopt")

    def test_rule_adoption_refuses_a_child_already_nested_elsewhere(self) -> None:
        child, child_id = self.leaf()
        first, first_rows = self.root()
        self.adopt(first, first_rows, child_id, self.row(child))
        self.execute(first, "adopt")
        second, second_rows = self.root()
        self.adopt(second, second_rows, child_id, self.row(child))
        self.assert_failed(second, "Child", child_id, name="adopt")

    def test_rule_include_nested_stacks_is_refused_for_an_adoption(self) -> None:
        child, child_id = self.leaf()
        parent, rows = self.root()
        self.assert_validation_error(
            lambda: self.create_import(parent, template(dict(rows, Child=self.row(child))),
                                       [entry("Child", STACK_TYPE, StackId=child_id)], "adopt",
                                       IncludeNestedStacks=True),
            "IncludeNestedStacks")


if __name__ == "__main__":
    unittest.main()
