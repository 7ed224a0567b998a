"""What happens to a stack after an import: later change sets, UpdateStack, GetTemplate,
Outputs and DeleteStack treat the imported resources as the stack's own."""
import copy
import unittest

from .support import ImportCase, entry, resource, template, uniq

QUEUE, TOPIC, PARAMETER = "AWS::SQS::Queue", "AWS::SNS::Topic", "AWS::SSM::Parameter"


class AfterImport(ImportCase):
    def imported(self, deletion_policy: str = "Delete", parameters: dict | None = None) -> tuple[str, dict, dict]:
        """A stack holding an imported queue, SSM parameter and bucket (phase 1 of an
        export): (stack, resource rows, names)."""
        stack = uniq("s")
        names = {"Queue": uniq("q"), "Param": uniq("/p"), "Bucket": uniq("b")}
        rows = {
            "Queue": resource(QUEUE, {"QueueName": names["Queue"]}, deletion_policy),
            "Param": resource(PARAMETER, {"Name": names["Param"], "Type": "String", "Value": "v1"}, deletion_policy),
            "Bucket": resource("AWS::S3::Bucket", {"BucketName": names["Bucket"]}, deletion_policy),
        }
        names["QueueUrl"] = self.made.queue(names["Queue"])
        entries = [
            entry("Queue", QUEUE, QueueUrl=names["QueueUrl"]),
            entry("Param", PARAMETER, Name=self.made.parameter(names["Param"])),
            entry("Bucket", "AWS::S3::Bucket", BucketName=self.made.bucket(names["Bucket"])),
        ]
        extra = {}
        if parameters:
            extra["Parameters"] = [{"ParameterKey": k, "ParameterValue": v} for k, v in parameters.items()]
        declared = {k: {"Type": "String"} for k in (parameters or {})}
        self.import_stack(stack, template(rows, parameters=declared), entries, **extra)
        return stack, rows, names

    def phase_two(self, rows: dict) -> dict:
        """The full template: no injected DeletionPolicy, one resource more."""
        full = copy.deepcopy(rows)
        for row in full.values():
            row.pop("DeletionPolicy", None)
        full["Topic"] = resource(TOPIC, {"TopicName": uniq("t")}, None)
        return full

    def test_rule_update_change_set_after_import_does_not_recreate_imported_resources(self) -> None:
        stack, rows, names = self.imported()
        before = self.resources(stack)
        queues = len(self.made.sqs.list_queues(QueueNamePrefix=names["Queue"])["QueueUrls"])
        self.cfn.create_change_set(StackName=stack, ChangeSetName="phase2", ChangeSetType="UPDATE",
                                   TemplateBody=template(self.phase_two(rows)))
        described = self.change_set(stack, "phase2")
        self.assertEqual(described["Status"], "CREATE_COMPLETE")
        actions = {(c["ResourceChange"]["Action"], c["ResourceChange"]["LogicalResourceId"])
                   for c in described["Changes"]}
        self.assertEqual(actions, {("Add", "Topic")})
        self.assertEqual(self.execute(stack, "phase2")["StackStatus"], "UPDATE_COMPLETE")
        after = self.resources(stack)
        self.assertEqual({k: after[k] for k in before}, before)
        self.assertIn("Topic", after)
        self.assertEqual(len(self.made.sqs.list_queues(QueueNamePrefix=names["Queue"])["QueueUrls"]), queues)
        parameter = self.made.ssm.get_parameter(Name=names["Param"])["Parameter"]
        self.assertEqual((parameter["Value"], parameter["Version"]), ("v1", 1))

    def test_rule_outputs_are_rebuilt_after_an_update_change_set(self) -> None:
        stack, rows, names = self.imported(parameters={"Env": "dev"})
        outputs = {
            "Env": {"Value": {"Ref": "Env"}, "Description": "a parameter"},
            "QueueUrl": {"Value": {"Ref": "Queue"}},
            "QueueArn": {"Value": {"Fn::GetAtt": ["Queue", "Arn"]}, "Export": {"Name": f"{stack}-arn"}},
            "Joined": {"Value": {"Fn::Join": ["/", [{"Ref": "Bucket"}, {"Ref": "Param"}]]}},
            "Subbed": {"Value": {"Fn::Sub": "${AWS::StackName}:${Bucket}"}},
        }
        self.assertNotIn("Outputs", self.stack(stack))
        self.cfn.create_change_set(
            StackName=stack, ChangeSetName="phase2", ChangeSetType="UPDATE",
            TemplateBody=template(self.phase_two(rows), outputs, {"Env": {"Type": "String"}}),
            Parameters=[{"ParameterKey": "Env", "ParameterValue": "dev"}])
        self.execute(stack, "phase2")
        got = {o["OutputKey"]: o["OutputValue"] for o in self.stack(stack)["Outputs"]}
        self.assertEqual(got, {
            "Env": "dev",
            "QueueUrl": names["QueueUrl"],
            "QueueArn": f"arn:aws:sqs:us-east-1:123456789012:{names['Queue']}",
            "Joined": f"{names['Bucket']}/{names['Param']}",
            "Subbed": f"{stack}:{names['Bucket']}",
        })
        exports = {e["Name"]: e["Value"] for e in self.cfn.list_exports()["Exports"]}
        self.assertEqual(exports[f"{stack}-arn"], got["QueueArn"])

    def test_rule_an_update_whose_outputs_cannot_be_resolved_rolls_back(self) -> None:
        stack, rows, _ = self.imported()
        outputs = {"Bad": {"Value": {"Fn::ImportValue": uniq("no-such-export")}}}
        self.cfn.create_change_set(
            StackName=stack, ChangeSetName="phase2", ChangeSetType="UPDATE",
            TemplateBody=template(self.phase_two(rows), outputs))
        self.execute(stack, "phase2")
        described = self.stack(stack)
        self.assertEqual(described["StackStatus"], "UPDATE_ROLLBACK_COMPLETE")
        self.assertIn("No export named", described.get("StackStatusReason", ""))
        self.assertNotIn("Outputs", described)
        events = self.cfn.describe_stack_events(StackName=stack)["StackEvents"]
        self.assertEqual(events[0]["ResourceStatus"], "UPDATE_ROLLBACK_COMPLETE")

    def test_rule_an_update_change_set_reads_a_template_url_from_the_emulators_s3(self) -> None:
        stack, rows, _ = self.imported()
        bucket, full = uniq("templates"), self.phase_two(rows)
        self.made.bucket(bucket)
        self.made.s3.put_object(Bucket=bucket, Key="phase2.json", Body=template(full).encode())
        self.cfn.create_change_set(StackName=stack, ChangeSetName="phase2", ChangeSetType="UPDATE",
                                   TemplateURL=f"{self.cfn.meta.endpoint_url}/{bucket}/phase2.json")
        self.assertEqual(self.execute(stack, "phase2")["StackStatus"], "UPDATE_COMPLETE")
        self.assertEqual(set(self.resources(stack)), set(full))

    def test_rule_tag_only_update_stack_moves_import_complete_to_update_complete(self) -> None:
        stack, _, _ = self.imported(parameters={"Env": "dev"})
        before = self.resources(stack)
        self.cfn.update_stack(StackName=stack, UsePreviousTemplate=True,
                              Parameters=[{"ParameterKey": "Env", "ParameterValue": "dev"}],
                              Tags=[{"Key": "cdkd:nested-export-flip", "Value": "2020-01-01T00:00:00Z-abcd1234"}],
                              Capabilities=["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"])
        final = self.wait(stack)
        self.assertEqual(final["StackStatus"], "UPDATE_COMPLETE")
        self.assertEqual({t["Key"]: t["Value"] for t in final["Tags"]},
                         {"cdkd:nested-export-flip": "2020-01-01T00:00:00Z-abcd1234"})
        self.assertEqual(self.resources(stack), before)

    def test_rule_get_template_returns_the_last_executed_template(self) -> None:
        stack, rows, _ = self.imported()
        for stage in ("Original", "Processed"):
            body = self.cfn.get_template(StackName=stack, TemplateStage=stage)["TemplateBody"]
            self.assertEqual(body["Resources"], rows, stage)
        full = self.phase_two(rows)
        self.cfn.create_change_set(StackName=stack, ChangeSetName="phase2", ChangeSetType="UPDATE",
                                   TemplateBody=template(full))
        pending = self.cfn.get_template(StackName=stack, ChangeSetName="phase2")["TemplateBody"]
        self.assertEqual(pending["Resources"], full)
        self.assertEqual(self.cfn.get_template(StackName=stack)["TemplateBody"]["Resources"], rows)
        self.execute(stack, "phase2")
        for stage in ("Original", "Processed"):
            body = self.cfn.get_template(StackName=stack, TemplateStage=stage)["TemplateBody"]
            self.assertEqual(body["Resources"], full, stage)

    def test_rule_a_flat_export_runs_phase_one_then_phase_two(self) -> None:
        """The client's flat flow (docs/export.md §10.2): IMPORT of the kept rows with
        DeletionPolicy Delete injected and no Outputs, then UPDATE with the full template
        (CDK metadata, Outputs, rows as synthesized)."""
        stack, tag = uniq("ExportRun"), uniq("e")
        url, arn = self.made.queue(f"{tag}-work"), self.made.topic(f"{tag}-alerts")
        param = self.made.parameter(f"/{tag}/queue-url", url)
        full = {
            "WorkQueue": {"Type": QUEUE, "Properties": {"QueueName": f"{tag}-work"}},
            "AlertsTopic": {"Type": TOPIC},
            "QueueUrlParam": {"Type": PARAMETER, "Properties": {"Name": param, "Type": "String",
                                                                "Value": {"Ref": "WorkQueue"}}},
            "CDKMetadata": {"Type": "AWS::CDK::Metadata", "Properties": {"Analytics": "v2:deflate64:x"}},
        }
        outputs = {"QueueUrl": {"Value": {"Ref": "WorkQueue"}}, "TopicArn": {"Value": {"Ref": "AlertsTopic"}}}
        phase_one = {k: dict(copy.deepcopy(v), DeletionPolicy="Delete") for k, v in full.items() if k != "CDKMetadata"}
        self.import_stack(stack, template(phase_one), [
            entry("WorkQueue", QUEUE, QueueUrl=url), entry("AlertsTopic", TOPIC, TopicArn=arn),
            entry("QueueUrlParam", PARAMETER, Name=param)])
        self.cfn.create_change_set(StackName=stack, ChangeSetName="cdkd-phase2-1", ChangeSetType="UPDATE",
                                   TemplateBody=template(full, outputs),
                                   Capabilities=["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"])
        self.assertEqual(self.execute(stack, "cdkd-phase2-1")["StackStatus"], "UPDATE_COMPLETE")
        described = self.cfn.describe_stack_resources(StackName=stack)["StackResources"]
        physical = {r.get("LogicalResourceId"): r.get("PhysicalResourceId") for r in described}
        self.assertEqual(physical, {"WorkQueue": url, "AlertsTopic": arn, "QueueUrlParam": param},
                         "moto does not model AWS::CDK::Metadata: no row for it, no empty row")
        got = {o["OutputKey"]: o["OutputValue"] for o in self.stack(stack)["Outputs"]}
        self.assertEqual(got, {"QueueUrl": url, "TopicArn": arn})
        self.assertEqual(self.made.ssm.get_parameter(Name=param)["Parameter"]["Version"], 1)

    def test_rule_delete_stack_leaves_retained_resources_alone(self) -> None:
        stack, kept, gone = uniq("s"), uniq("q"), uniq("q")
        rows = {"Kept": resource(QUEUE, {"QueueName": kept}, "Retain"),
                "Gone": resource(QUEUE, {"QueueName": gone}, "Delete")}
        self.import_stack(stack, template(rows), [entry("Kept", QUEUE, QueueUrl=self.made.queue(kept)),
                                                  entry("Gone", QUEUE, QueueUrl=self.made.queue(gone))])
        self.cfn.delete_stack(StackName=stack)
        self.assertEqual(len(self.made.sqs.list_queues(QueueNamePrefix=kept).get("QueueUrls", [])), 1)
        self.assertEqual(self.made.sqs.list_queues(QueueNamePrefix=gone).get("QueueUrls", []), [])
        again = uniq("s")
        self.import_stack(again, template({"Kept": rows["Kept"]}),
                          [entry("Kept", QUEUE, QueueUrl=self.made.sqs.get_queue_url(QueueName=kept)["QueueUrl"])])

    def test_rule_a_retained_resource_removed_by_an_update_is_left_alone(self) -> None:
        stack, rows, names = self.imported(deletion_policy="Retain")
        remaining = {k: v for k, v in rows.items() if k != "Queue"}
        self.cfn.create_change_set(StackName=stack, ChangeSetName="drop", ChangeSetType="UPDATE",
                                   TemplateBody=template(remaining))
        self.assertEqual(self.execute(stack, "drop")["StackStatus"], "UPDATE_COMPLETE")
        self.assertNotIn("Queue", self.resources(stack))
        self.assertEqual(len(self.made.sqs.list_queues(QueueNamePrefix=names["Queue"])["QueueUrls"]), 1)


if __name__ == "__main__":
    unittest.main()
