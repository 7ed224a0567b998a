"""Resource import (IMPORT change sets) on the emulator, one test per documented rule,
through boto3 against `scripts/with-emulator.sh`'s emulator."""
import json
import unittest

from botocore.exceptions import ClientError

from .support import ImportCase, entry, resource, template, uniq

QUEUE = "AWS::SQS::Queue"
TOPIC = "AWS::SNS::Topic"


class TemplateRules(ImportCase):
    """Template and request problems: ValidationError at CreateChangeSet, no stack."""

    def queue_entry(self, logical_id: str = "Queue") -> tuple[str, dict]:
        name = uniq("q")
        return name, entry(logical_id, QUEUE, QueueUrl=self.made.queue(name))

    def assert_no_stack(self, stack: str) -> None:
        with self.assertRaises(ClientError):
            self.stack(stack)

    def test_rule_every_imported_resource_needs_a_deletion_policy(self) -> None:
        stack, (name, row) = uniq("s"), self.queue_entry()
        body = template({"Queue": resource(QUEUE, {"QueueName": name}, deletion_policy=None)})
        self.assert_validation_error(lambda: self.create_import(stack, body, [row]), "Queue", "DeletionPolicy")
        self.assert_no_stack(stack)

    def test_rule_every_entry_names_a_template_resource(self) -> None:
        stack, (name, row) = uniq("s"), self.queue_entry("Elsewhere")
        body = template({"Queue": resource(QUEUE, {"QueueName": name})})
        self.assert_validation_error(lambda: self.create_import(stack, body, [row]), "Elsewhere", "not in the template")

    def test_rule_every_entry_has_the_type_of_its_template_resource(self) -> None:
        stack, (name, row) = uniq("s"), self.queue_entry()
        body = template({"Queue": resource(TOPIC, {"TopicName": name})})
        self.assert_validation_error(lambda: self.create_import(stack, body, [row]), "Queue", TOPIC, QUEUE)

    def test_rule_every_new_template_resource_must_be_imported(self) -> None:
        stack, (name, row) = uniq("s"), self.queue_entry()
        body = template({"Queue": resource(QUEUE, {"QueueName": name}),
                         "Extra": resource(TOPIC, {"TopicName": uniq("t")})})
        self.assert_validation_error(
            lambda: self.create_import(stack, body, [row]), "[Extra]", "not being imported")

    def test_rule_identifier_keys_are_the_types_primary_identifier(self) -> None:
        stack, name = uniq("s"), uniq("q")
        self.made.queue(name)
        body = template({"Queue": resource(QUEUE, {"QueueName": name})})
        self.assert_validation_error(
            lambda: self.create_import(stack, body, [entry("Queue", QUEUE, QueueName=name)]),
            "Queue", "[QueueUrl]", "[QueueName]")

    def test_rule_a_type_without_import_support_is_refused(self) -> None:
        stack = uniq("s")
        body = template({"Policy": resource("AWS::IAM::Policy", {"PolicyName": "p"})})
        self.assert_validation_error(
            lambda: self.create_import(stack, body, [entry("Policy", "AWS::IAM::Policy", Id="p")]),
            "AWS::IAM::Policy", "does not support resource import")

    def test_rule_include_nested_stacks_with_import_is_a_validation_error(self) -> None:
        stack, (name, row) = uniq("s"), self.queue_entry()
        body = template({"Queue": resource(QUEUE, {"QueueName": name})})
        self.assert_validation_error(
            lambda: self.create_import(stack, body, [row], IncludeNestedStacks=True), "IncludeNestedStacks")
        self.assert_no_stack(stack)

    def test_rule_at_most_200_resources_per_import(self) -> None:
        stack = uniq("s")
        rows = {f"Q{i}": resource(QUEUE, {"QueueName": f"q{i}"}) for i in range(201)}
        entries = [entry(f"Q{i}", QUEUE, QueueUrl=f"http://127.0.0.1/123456789012/q{i}") for i in range(201)]
        self.assert_validation_error(lambda: self.create_import(stack, template(rows), entries), "201", "200")

    def test_rule_template_body_is_at_most_51200_bytes(self) -> None:
        stack, (name, row) = uniq("s"), self.queue_entry()
        body = template({"Queue": resource(QUEUE, {"QueueName": name})}, parameters={
            "Padding": {"Type": "String", "Default": "x" * 51_200}})
        self.assert_validation_error(lambda: self.create_import(stack, body, [row]), "51200")

    def test_rule_import_may_not_add_outputs(self) -> None:
        stack, (name, row) = uniq("s"), self.queue_entry()
        body = template({"Queue": resource(QUEUE, {"QueueName": name})},
                        outputs={"Url": {"Value": {"Ref": "Queue"}}})
        self.assert_validation_error(lambda: self.create_import(stack, body, [row]), "Outputs")
        self.assert_no_stack(stack)

    def test_rule_import_may_not_update_or_delete_resources_the_stack_holds(self) -> None:
        stack, (first, row) = uniq("s"), self.queue_entry("First")
        held = {"First": resource(QUEUE, {"QueueName": first})}
        self.import_stack(stack, template(held), [row])
        second, row2 = self.queue_entry("Second")
        changed = {"First": resource(QUEUE, {"QueueName": first, "VisibilityTimeout": 60}),
                   "Second": resource(QUEUE, {"QueueName": second})}
        self.assert_validation_error(
            lambda: self.create_import(stack, template(changed), [row2], "import-2"), "[First]")
        removed = {"Second": resource(QUEUE, {"QueueName": second})}
        self.assert_validation_error(
            lambda: self.create_import(stack, template(removed), [row2], "import-3"), "[First]")


class ResourceRules(ImportCase):
    """Resources that cannot be imported: the change set is FAILED with the reason."""

    def test_rule_a_resource_that_does_not_exist_fails_the_change_set(self) -> None:
        stack, name = uniq("s"), uniq("q")
        url = f"http://127.0.0.1/123456789012/{name}"
        self.create_import(stack, template({"Ghost": resource(QUEUE, {"QueueName": name})}),
                           [entry("Ghost", QUEUE, QueueUrl=url)])
        self.assert_failed(stack, "Ghost", QUEUE, url, "does not exist")
        self.assertEqual(self.stack(stack)["StackStatus"], "REVIEW_IN_PROGRESS")

    def test_rule_a_resource_owned_by_another_stack_fails_the_change_set(self) -> None:
        owner, name = uniq("owner"), uniq("q")
        row = entry("Queue", QUEUE, QueueUrl=self.made.queue(name))
        body = template({"Queue": resource(QUEUE, {"QueueName": name})})
        owner_id = self.import_stack(owner, body, [row])["StackId"]
        other = uniq("other")
        self.create_import(other, body, [row])
        self.assert_failed(other, "Queue", QUEUE, name, "already belongs", owner_id)

    def test_rule_a_failed_change_set_cannot_be_executed(self) -> None:
        stack = uniq("s")
        self.create_import(stack, template({"Ghost": resource(QUEUE, {"QueueName": "ghost"})}),
                           [entry("Ghost", QUEUE, QueueUrl="http://127.0.0.1/123456789012/ghost-none")])
        with self.assertRaises(ClientError) as caught:
            self.cfn.execute_change_set(StackName=stack, ChangeSetName="import-1")
        self.assertEqual(caught.exception.response["Error"]["Code"], "InvalidChangeSetStatus")

    def test_rule_a_resource_gone_before_execution_rolls_the_import_back(self) -> None:
        stack, name = uniq("s"), uniq("q")
        url = self.made.queue(name)
        self.create_import(stack, template({"Queue": resource(QUEUE, {"QueueName": name})}),
                           [entry("Queue", QUEUE, QueueUrl=url)])
        self.made.sqs.delete_queue(QueueUrl=url)
        final = self.execute(stack)
        self.assertEqual(final["StackStatus"], "IMPORT_ROLLBACK_COMPLETE")
        events = self.events(stack)
        self.assertIn(("Queue", "IMPORT_FAILED"), events)
        self.assertEqual([s for _, s in events if s.startswith("IMPORT_ROLLBACK")],
                         ["IMPORT_ROLLBACK_IN_PROGRESS", "IMPORT_ROLLBACK_COMPLETE"])
        failed = [e for e in self.cfn.describe_stack_events(StackName=stack)["StackEvents"]
                  if e["ResourceStatus"] == "IMPORT_FAILED"]
        self.assertIn("does not exist", failed[0]["ResourceStatusReason"])
        self.assertEqual(self.resources(stack), {})


class Execution(ImportCase):
    """Change set rows, statuses, events and the stack's resources after an import."""

    def test_rule_a_new_stack_starts_in_review_in_progress(self) -> None:
        stack, name = uniq("s"), uniq("q")
        row = entry("Queue", QUEUE, QueueUrl=self.made.queue(name))
        created = self.create_import(stack, template({"Queue": resource(QUEUE, {"QueueName": name})}), [row])
        described = self.stack(stack)
        self.assertEqual(described["StackStatus"], "REVIEW_IN_PROGRESS")
        self.assertEqual(described["StackId"], created["StackId"])

    def test_rule_change_set_rows_have_action_import(self) -> None:
        stack, queue, topic = uniq("s"), uniq("q"), uniq("t")
        url, arn = self.made.queue(queue), self.made.topic(topic)
        body = template({"Queue": resource(QUEUE, {"QueueName": queue}),
                         "Topic": resource(TOPIC, {"TopicName": topic})})
        self.create_import(stack, body, [entry("Queue", QUEUE, QueueUrl=url), entry("Topic", TOPIC, TopicArn=arn)])
        described = self.change_set(stack)
        self.assertEqual(described["Status"], "CREATE_COMPLETE")
        self.assertEqual(described["ExecutionStatus"], "AVAILABLE")
        rows = {c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"] for c in described["Changes"]}
        self.assertEqual(set(rows), {"Queue", "Topic"})
        self.assertTrue(all(r["Action"] == "Import" for r in rows.values()))
        self.assertEqual(rows["Topic"]["PhysicalResourceId"], arn)
        self.assertEqual(rows["Queue"]["ResourceType"], QUEUE)

    def test_rule_execute_reaches_import_complete_with_resources_and_events(self) -> None:
        stack, queue, topic = uniq("s"), uniq("q"), uniq("t")
        url, arn = self.made.queue(queue), self.made.topic(topic)
        body = template({"Queue": resource(QUEUE, {"QueueName": queue}),
                         "Topic": resource(TOPIC, {"TopicName": topic}, "Delete")})
        final = self.import_stack(stack, body, [entry("Queue", QUEUE, QueueUrl=url),
                                                entry("Topic", TOPIC, TopicArn=arn)])
        self.assertEqual(final["ChangeSetId"], self.change_set(stack)["ChangeSetId"])
        self.assertEqual(self.change_set(stack)["ExecutionStatus"], "EXECUTE_COMPLETE")
        self.assertEqual(self.resources(stack), {
            "Queue": (QUEUE, url),
            "Topic": (TOPIC, arn),
        })
        described = self.cfn.describe_stack_resources(StackName=stack)["StackResources"]
        self.assertEqual({r["LogicalResourceId"] for r in described}, {"Queue", "Topic"})
        events = self.events(stack)
        for logical_id in ("Queue", "Topic"):
            mine = [s for lid, s in events if lid == logical_id]
            self.assertEqual(mine, ["IMPORT_IN_PROGRESS", "IMPORT_COMPLETE"])
        own = [s for lid, s in events if lid == stack]
        self.assertEqual(own, ["REVIEW_IN_PROGRESS", "IMPORT_IN_PROGRESS", "IMPORT_COMPLETE"])

    def test_rule_import_into_an_existing_stack_keeps_what_it_holds(self) -> None:
        stack, first, second = uniq("s"), uniq("q"), uniq("q")
        rows = {"First": resource(QUEUE, {"QueueName": first})}
        self.import_stack(stack, template(rows), [entry("First", QUEUE, QueueUrl=self.made.queue(first))])
        rows["Second"] = resource(QUEUE, {"QueueName": second})
        self.import_stack(stack, template(rows), [entry("Second", QUEUE, QueueUrl=self.made.queue(second))],
                          "import-2")
        self.assertEqual(set(self.resources(stack)), {"First", "Second"})

    def two_stacks_with_import_1(self) -> dict[str, str]:
        """Two new stacks, each with an IMPORT change set named `import-1`: name -> stack id."""
        ids = {}
        for stack in (uniq("s"), uniq("s")):
            name = uniq("q")
            ids[stack] = self.create_import(stack, template({"Queue": resource(QUEUE, {"QueueName": name})}),
                                            [entry("Queue", QUEUE, QueueUrl=self.made.queue(name))])["StackId"]
        return ids

    def test_rule_a_change_set_name_is_found_within_its_stack(self) -> None:
        ids = self.two_stacks_with_import_1()
        first, second = ids
        self.assertEqual(self.change_set(first)["StackId"], ids[first])
        self.cfn.delete_change_set(StackName=second, ChangeSetName="import-1")
        self.assertEqual(self.change_set(first)["StackId"], ids[first])
        with self.assertRaises(ClientError) as caught:
            self.change_set(second)
        self.assertEqual(caught.exception.response["Error"]["Code"], "ChangeSetNotFound")
        self.assertIn("does not exist", caught.exception.response["Error"]["Message"])

    def test_rule_list_change_sets_lists_only_the_named_stacks_change_sets(self) -> None:
        ids = self.two_stacks_with_import_1()
        for stack in ids:
            for name_or_id in (stack, ids[stack]):
                summaries = self.cfn.list_change_sets(StackName=name_or_id)["Summaries"]
                self.assertEqual([(s["StackId"], s["ChangeSetName"]) for s in summaries],
                                 [(ids[stack], "import-1")])
        with self.assertRaises(ClientError) as caught:
            self.cfn.list_change_sets(StackName=uniq("missing"))
        self.assertEqual(caught.exception.response["Error"]["Code"], "ValidationError")
        self.assertIn("does not exist", caught.exception.response["Error"]["Message"])

    def test_rule_a_change_set_name_is_unique_within_its_stack(self) -> None:
        stack, name = uniq("s"), uniq("q")
        body = template({"Queue": resource(QUEUE, {"QueueName": name})})
        row = entry("Queue", QUEUE, QueueUrl=self.made.queue(name))
        self.create_import(stack, body, [row])
        with self.assertRaises(ClientError) as caught:
            self.create_import(stack, body, [row])
        self.assertEqual(caught.exception.response["Error"]["Code"], "AlreadyExistsException")

    def test_rule_a_yaml_template_body_is_accepted(self) -> None:
        stack, name = uniq("s"), uniq("q")
        body = (f"Resources:\n  Queue:\n    Type: {QUEUE}\n    DeletionPolicy: Retain\n"
                f"    Properties:\n      QueueName: !Sub '{name}'\n")
        self.import_stack(stack, body, [entry("Queue", QUEUE, QueueUrl=self.made.queue(name))])
        self.assertEqual(set(self.resources(stack)), {"Queue"})

    def test_rule_a_template_url_is_read_from_the_emulators_s3(self) -> None:
        stack, name, bucket = uniq("s"), uniq("q"), uniq("templates")
        body = template({"Queue": resource(QUEUE, {"QueueName": name})})
        self.made.bucket(bucket)
        self.made.s3.put_object(Bucket=bucket, Key="cdkd-migrate-tmp/x/1.json", Body=body.encode())
        url = f"{self.cfn.meta.endpoint_url}/{bucket}/cdkd-migrate-tmp/x/1.json"
        self.import_stack(stack, None, [entry("Queue", QUEUE, QueueUrl=self.made.queue(name))], TemplateURL=url)
        self.assertEqual(self.cfn.get_template(StackName=stack)["TemplateBody"], json.loads(body))


if __name__ == "__main__":
    unittest.main()
