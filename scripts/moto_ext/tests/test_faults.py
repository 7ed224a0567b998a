"""Fault injection (`faults`), a test facility of the emulator, not AWS behaviour: a
fault registered at `/_cdkd_emulator/faults` refuses exactly the requests it matches,
with S3's XML error and the status asked for, before moto sees them (nothing changes);
`times` counts down, clearing works, every other request passes."""
import json
import unittest
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from typing import Any

from botocore.exceptions import ClientError

from .support import client, endpoint, uniq

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
                    {"path": "x", "code": "<Bad>"}, ["not", "an", "object"]):
            status, answer = control("POST", body=bad)
            self.assertEqual(status, 400, (bad, answer))
            self.assertIn("error", answer)
        self.assertEqual(control("GET"), (200, {"faults": []}))
        self.assertEqual(control("PUT")[0], 405)


if __name__ == "__main__":
    unittest.main()
