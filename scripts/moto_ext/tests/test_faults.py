"""Fault injection (`faults`), a test facility of the emulator, not AWS behaviour: a
fault registered at `/_cdkd_emulator/faults` refuses exactly the requests it matches,
with S3's XML error (or, for a fault on a query-protocol `action` / `params`, the query
protocol's) and the status asked for, before moto sees them (nothing changes); `times`
counts down, clearing works, every other request passes, its body intact."""
import json
import unittest
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from typing import Any

from botocore.exceptions import ClientError

from .support import ImportCase, client, endpoint, entry, resource, template, uniq

CONTROL = "/_cdkd_emulator/faults"


def control(method: str, path: str = CONTROL, body: Any = None) -> tuple[int, Any]:
    """An unsigned request to the fault registry: (status, JSON answer)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(endpoint().rstrip("/") + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def inject(**fault: Any) -> dict[str, Any]:
    status, registered = control("POST", body=fault)
    assert status == 201, (status, registered)
    return registered


def denied_delete(bucket: str, key: str, **extra: Any) -> dict[str, Any]:
    return inject(method="DELETE", path=f"^/{bucket}/{key}$", status=403, code="AccessDenied",
                  message="Access Denied", **extra)


class Faults(unittest.TestCase):
    s3: Any

    @classmethod
    def setUpClass(cls) -> None:
        cls.s3 = client("s3")

    def setUp(self) -> None:
        control("DELETE")
        self.bucket = uniq("faults")
        self.s3.create_bucket(Bucket=self.bucket)

    def tearDown(self) -> None:
        control("DELETE")

    def put(self, key: str, body: bytes = b"kept") -> None:
        self.s3.put_object(Bucket=self.bucket, Key=key, Body=body)

    def exists(self, key: str) -> bool:
        try:
            self.s3.head_object(Bucket=self.bucket, Key=key)
            return True
        except ClientError as e:
            self.assertEqual(e.response["ResponseMetadata"]["HTTPStatusCode"], 404, e.response)
            return False

    def assert_denied(self, call: Any) -> dict[str, Any]:
        with self.assertRaises(ClientError) as caught:
            call()
        response = caught.exception.response
        self.assertEqual(response["ResponseMetadata"]["HTTPStatusCode"], 403, response)
        self.assertEqual(response["Error"]["Code"], "AccessDenied", response)
        return response

    def test_rule_a_registered_fault_refuses_exactly_the_matching_delete_and_the_object_stays(self) -> None:
        self.put("cdkd/Root~Child/us-east-1/state.json")
        self.put("cdkd/Root/us-east-1/state.json")
        denied_delete(self.bucket, "cdkd/Root~Child/us-east-1/state\\.json")
        self.assert_denied(lambda: self.s3.delete_object(
            Bucket=self.bucket, Key="cdkd/Root~Child/us-east-1/state.json"))
        self.assertTrue(self.exists("cdkd/Root~Child/us-east-1/state.json"), "nothing reached moto")
        self.s3.delete_object(Bucket=self.bucket, Key="cdkd/Root/us-east-1/state.json")
        self.assertFalse(self.exists("cdkd/Root/us-east-1/state.json"), "another key's delete passes")
        body = self.s3.get_object(Bucket=self.bucket, Key="cdkd/Root~Child/us-east-1/state.json")["Body"].read()
        self.assertEqual(body, b"kept", "another method on the same key passes")

    def test_rule_the_error_has_s3s_xml_shape_and_the_status_asked_for(self) -> None:
        key = "data/one.json"
        self.put(key)
        inject(method="GET", path=f"^/{self.bucket}/{key}$", status=503, code="SlowDown",
               message="Please reduce your request rate.")
        raw = urllib.request.Request(f"{endpoint().rstrip('/')}/{self.bucket}/{key}", method="GET")
        with self.assertRaises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(raw, timeout=10)
        self.assertEqual(caught.exception.code, 503)
        self.assertEqual(caught.exception.headers["Content-Type"], "application/xml")
        root = ET.fromstring(caught.exception.read())
        self.assertEqual(root.tag, "Error")
        self.assertEqual(root.findtext("Code"), "SlowDown")
        self.assertEqual(root.findtext("Message"), "Please reduce your request rate.")
        self.assertEqual(root.findtext("Resource"), f"/{self.bucket}/{key}")
        self.assertTrue(root.findtext("RequestId"))
        self.assertEqual(caught.exception.headers["x-amz-request-id"], root.findtext("RequestId"))

    def test_rule_times_counts_down_and_the_spent_fault_is_gone(self) -> None:
        key = "counted.json"
        self.put(key)
        registered = denied_delete(self.bucket, key, times=2)
        self.assertEqual(registered["remaining"], 2)
        for left in (1, 0):
            self.assert_denied(lambda: self.s3.delete_object(Bucket=self.bucket, Key=key))
            self.assertTrue(self.exists(key))
            _, listed = control("GET")
            remaining = [f["remaining"] for f in listed["faults"] if f["id"] == registered["id"]]
            self.assertEqual(remaining, [left] if left else [], listed)
        self.s3.delete_object(Bucket=self.bucket, Key=key)
        self.assertFalse(self.exists(key), "the third delete passes")

    def test_rule_a_fault_without_times_refuses_until_cleared_and_counts_its_hits(self) -> None:
        key = "forever.json"
        self.put(key)
        registered = denied_delete(self.bucket, key)
        self.assertIsNone(registered["remaining"])
        for _ in range(3):
            self.assert_denied(lambda: self.s3.delete_object(Bucket=self.bucket, Key=key))
        _, listed = control("GET")
        self.assertEqual([(f["id"], f["hits"], f["remaining"]) for f in listed["faults"]],
                         [(registered["id"], 3, None)])
        self.assertEqual(control("DELETE"), (200, {"cleared": 1}))
        self.assertEqual(control("GET"), (200, {"faults": []}))
        self.s3.delete_object(Bucket=self.bucket, Key=key)
        self.assertFalse(self.exists(key))

    def test_rule_one_fault_is_removed_by_its_id_and_the_others_stay(self) -> None:
        first = denied_delete(self.bucket, "a")
        second = denied_delete(self.bucket, "b")
        self.assertEqual(control("DELETE", f"{CONTROL}/{first['id']}"), (200, {"removed": first["id"]}))
        status, _ = control("DELETE", f"{CONTROL}/{first['id']}")
        self.assertEqual(status, 404)
        _, listed = control("GET")
        self.assertEqual([f["id"] for f in listed["faults"]], [second["id"]])

    def test_rule_non_matching_requests_pass(self) -> None:
        key = "cdkd/App/us-east-1/state.json"
        denied_delete(self.bucket, "cdkd/App/us-east-1/lock\\.json")
        inject(method="PUT", path=f"^/{uniq('other-bucket')}/", status=500)
        self.put(key)
        self.assertEqual(self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read(), b"kept")
        self.s3.delete_object(Bucket=self.bucket, Key=key)
        self.assertFalse(self.exists(key))
        sqs = client("sqs")
        self.assertIn("QueueUrl", sqs.create_queue(QueueName=uniq("faults-pass")))
        _, listed = control("GET")
        self.assertEqual([f["hits"] for f in listed["faults"]], [0, 0])

    def test_rule_a_query_pattern_narrows_the_fault_to_delete_objects(self) -> None:
        self.put("k1")
        inject(method="POST", path=f"^/{self.bucket}/?$", query="(^|&)delete(=|&|$)", status=403,
               code="AccessDenied")
        self.assert_denied(lambda: self.s3.delete_objects(
            Bucket=self.bucket, Delete={"Objects": [{"Key": "k1"}]}))
        self.assertTrue(self.exists("k1"))
        self.s3.delete_object(Bucket=self.bucket, Key="k1")
        self.assertFalse(self.exists("k1"), "DeleteObject is not DeleteObjects")

    def test_rule_a_malformed_fault_is_refused_and_nothing_is_registered(self) -> None:
        for bad in ({"method": "DELETE"}, {"path": "("}, {"path": "x", "status": 200},
                    {"path": "x", "status": True}, {"path": "x", "times": 0}, {"path": "x", "statuz": 500},
                    {"path": "x", "code": "<Bad>"}, ["not", "an", "object"], {"path": ""},
                    {"action": "Create ChangeSet"}, {"action": 5}, {"action": "UpdateStack", "params": []},
                    {"action": "UpdateStack", "params": {"StackName": 5}},
                    {"action": "UpdateStack", "params": {"StackName": "("}},
                    {"action": "UpdateStack", "params": {"Stack Name": "x"}}):
            status, answer = control("POST", body=bad)
            self.assertEqual(status, 400, (bad, answer))
            self.assertIn("error", answer)
        self.assertEqual(control("GET"), (200, {"faults": []}))
        self.assertEqual(control("PUT")[0], 405)


def query_post(form: dict[str, str], headers: dict[str, str] | None = None) -> urllib.error.HTTPError:
    """A query-protocol POST (a form body) that a fault refuses: the raw answer."""
    data = urllib.parse.urlencode(form).encode()
    request = urllib.request.Request(
        endpoint().rstrip("/") + "/", data=data, method="POST",
        headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8", **(headers or {})})
    try:
        urllib.request.urlopen(request, timeout=10)
    except urllib.error.HTTPError as e:
        return e
    raise AssertionError(f"{form} was not refused")


def signed_for(service: str) -> dict[str, str]:
    """An Authorization header naming `service` in its credential scope (a fault answers
    before any signature is checked)."""
    return {"Authorization": "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/"
            f"{service}/aws4_request, SignedHeaders=host, Signature=00"}


class QueryFaults(ImportCase):
    """Faults on query-protocol requests (CloudFormation through boto3): `action` and
    `params` select the request, the answer is the query protocol's XML error."""

    def setUp(self) -> None:
        control("DELETE")

    def tearDown(self) -> None:
        control("DELETE")

    def refused(self, call: Any, status: int, code: str, message: str) -> dict[str, Any]:
        with self.assertRaises(ClientError) as caught:
            call()
        response = caught.exception.response
        self.assertEqual(response["ResponseMetadata"]["HTTPStatusCode"], status, response)
        self.assertEqual(response["Error"]["Code"], code, response)
        self.assertEqual(response["Error"]["Message"], message, response)
        return response

    def absent(self, stack: str) -> None:
        self.assert_validation_error(lambda: self.stack(stack), "does not exist")

    def hits(self, fault: dict[str, Any]) -> list[tuple[int, Any]]:
        _, listed = control("GET")
        return [(f["hits"], f["remaining"]) for f in listed["faults"] if f["id"] == fault["id"]]

    def imported_queue(self, stack: str) -> str:
        url = self.made.queue(uniq("faults-q"))
        self.import_stack(stack, template({"Queue": resource("AWS::SQS::Queue")}),
                          [entry("Queue", "AWS::SQS::Queue", QueueUrl=url)])
        return url

    def test_rule_a_create_change_set_matching_action_and_every_param_is_refused_with_the_code_and_message(self) -> None:
        stack, other = uniq("FaultRoot"), uniq("FaultOther")
        fault = inject(action="CreateChangeSet",
                       params={"StackName": f"^{stack}$", "ChangeSetType": "^IMPORT$"},
                       status=400, code="ValidationError", message="injected: no import today")
        self.assertEqual((fault["action"], fault["params"], fault["path"]),
                         ("CreateChangeSet", {"StackName": f"^{stack}$", "ChangeSetType": "^IMPORT$"}, None))
        url = self.made.queue(uniq("faults-q"))
        body = template({"Queue": resource("AWS::SQS::Queue")})
        self.refused(lambda: self.create_import(stack, body, [entry("Queue", "AWS::SQS::Queue", QueueUrl=url)]),
                     400, "ValidationError", "injected: no import today")
        self.absent(stack)
        self.assertEqual(self.hits(fault), [(1, None)])
        # Another stack's import passes, its form body (the template) intact.
        self.import_stack(other, body, [entry("Queue", "AWS::SQS::Queue", QueueUrl=url)])
        got = self.cfn.get_template(StackName=other)["TemplateBody"]
        self.assertEqual(got if isinstance(got, dict) else json.loads(got), json.loads(body))
        # The same stack with another change set type passes: every param must match.
        self.cfn.create_change_set(StackName=stack, ChangeSetName="create-1", ChangeSetType="CREATE",
                                   TemplateBody=template({"Topic": resource("AWS::SNS::Topic")}))
        self.assertEqual(self.stack(stack)["StackStatus"], "REVIEW_IN_PROGRESS")
        self.assertEqual(self.hits(fault), [(1, None)], "the passing requests are not counted")

    def test_rule_an_update_stack_is_refused_until_the_fault_is_removed(self) -> None:
        stack, other = uniq("FaultChild"), uniq("FaultSibling")
        self.imported_queue(stack)
        self.imported_queue(other)
        fault = inject(action="UpdateStack", params={"StackName": f"^{stack}$"}, status=400,
                       code="ValidationError", message="injected: the flip is refused")
        tags = [{"Key": "cdkd:nested-export-flip", "Value": "run-1"}]
        for _ in range(2):
            self.refused(lambda: self.cfn.update_stack(StackName=stack, UsePreviousTemplate=True, Tags=tags),
                         400, "ValidationError", "injected: the flip is refused")
        self.assertEqual(self.stack(stack)["StackStatus"], "IMPORT_COMPLETE", "nothing reached moto")
        self.assertEqual(self.stack(stack).get("Tags", []), [])
        self.assertEqual(self.hits(fault), [(2, None)])
        self.cfn.update_stack(StackName=other, UsePreviousTemplate=True, Tags=tags)
        self.assertEqual(self.wait(other)["StackStatus"], "UPDATE_COMPLETE", "another stack's update passes")
        self.assertEqual(control("DELETE", f"{CONTROL}/{fault['id']}"), (200, {"removed": fault["id"]}))
        self.cfn.update_stack(StackName=stack, UsePreviousTemplate=True, Tags=tags)
        self.assertEqual(self.wait(stack)["StackStatus"], "UPDATE_COMPLETE")

    def test_rule_times_counts_down_a_query_fault(self) -> None:
        stack = uniq("FaultOnce")
        fault = inject(action="CreateChangeSet", params={"StackName": f"^{stack}$"}, status=400,
                       code="ValidationError", message="once", times=1)
        body = template({"Topic": resource("AWS::SNS::Topic")})
        create = lambda: self.cfn.create_change_set(StackName=stack, ChangeSetName="c-1",  # noqa: E731
                                                    ChangeSetType="CREATE", TemplateBody=body)
        self.refused(create, 400, "ValidationError", "once")
        self.assertEqual(self.hits(fault), [], "spent")
        create()
        self.assertEqual(self.change_set(stack, "c-1")["ChangeSetName"], "c-1")

    def test_rule_a_missing_param_or_another_action_never_matches(self) -> None:
        stack = uniq("FaultNoRole")
        fault = inject(action="CreateChangeSet", params={"StackName": f"^{stack}$", "RoleARN": "."},
                       status=400, code="ValidationError")
        params_only = inject(params={"StackName": f"^{stack}$", "ChangeSetName": "^nope$"},
                             status=400, code="ValidationError")
        self.cfn.create_change_set(StackName=stack, ChangeSetName="c-1", ChangeSetType="CREATE",
                                   TemplateBody=template({"Topic": resource("AWS::SNS::Topic")}))
        self.assertEqual(self.stack(stack)["StackStatus"], "REVIEW_IN_PROGRESS")
        self.assertEqual(self.hits(fault) + self.hits(params_only), [(0, None), (0, None)])
        # A fault on params alone matches any action carrying them.
        self.refused(lambda: self.cfn.describe_change_set(StackName=stack, ChangeSetName="nope"),
                     400, "ValidationError", "ValidationError: a fault injected by the emulator")
        self.assertEqual(self.hits(params_only), [(1, None)])

    def test_rule_a_query_fault_never_matches_an_s3_request(self) -> None:
        s3 = client("s3")
        bucket = uniq("faults-q")
        s3.create_bucket(Bucket=bucket)
        fault = inject(params={"list-type": "."}, status=500)
        inject(action="PutObject", status=500)
        s3.put_object(Bucket=bucket, Key="k", Body=b"v")
        self.assertEqual([o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]], ["k"])
        self.assertEqual(self.hits(fault), [(0, None)])

    def test_rule_the_query_error_is_an_error_response_with_type_code_message_and_request_id(self) -> None:
        inject(action="CreateStack", params={"StackName": "^RawFault$"}, status=400,
               code="ValidationError", message="a <raw> & refused")
        caught = query_post({"Action": "CreateStack", "Version": "2010-05-15", "StackName": "RawFault"},
                            signed_for("cloudformation"))
        self.assertEqual(caught.code, 400)
        self.assertEqual(caught.headers["Content-Type"], "text/xml")
        ns = "{http://cloudformation.amazonaws.com/doc/2010-05-15/}"
        root = ET.fromstring(caught.read())
        self.assertEqual(root.tag, f"{ns}ErrorResponse")
        self.assertEqual(root.findtext(f"{ns}Error/{ns}Type"), "Sender")
        self.assertEqual(root.findtext(f"{ns}Error/{ns}Code"), "ValidationError")
        self.assertEqual(root.findtext(f"{ns}Error/{ns}Message"), "a <raw> & refused")
        self.assertTrue(root.findtext(f"{ns}RequestId"))
        # A 5xx is the receiver's fault; without a credential scope, CloudFormation's namespace.
        inject(action="DescribeStacks", status=503, code="Throttling", message="slow down")
        caught = query_post({"Action": "DescribeStacks"})
        self.assertEqual(caught.code, 503)
        root = ET.fromstring(caught.read())
        self.assertEqual(root.findtext(f"{ns}Error/{ns}Type"), "Receiver")
        self.assertEqual(root.findtext(f"{ns}Error/{ns}Code"), "Throttling")

    def test_rule_an_ec2_query_fault_answers_ec2s_error_shape(self) -> None:
        ec2 = client("ec2")
        name = uniq("faults-sg")
        ec2.create_security_group(GroupName=name, Description="faults")
        inject(action="DescribeSecurityGroups", params={"GroupName.1": f"^{name}$"}, status=400,
               code="InvalidGroup.NotFound", message="injected")
        self.refused(lambda: ec2.describe_security_groups(GroupNames=[name]), 400,
                     "InvalidGroup.NotFound", "injected")
        self.assertTrue(ec2.describe_security_groups(Filters=[{"Name": "group-name", "Values": [name]}])
                        ["SecurityGroups"], "another form passes")


if __name__ == "__main__":
    unittest.main()
