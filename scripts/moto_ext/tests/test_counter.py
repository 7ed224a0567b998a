"""Request counting (`counter`), a measuring facility of the emulator: after a reset,
every signed request is counted once by service, action and S3 object kind (a
conditional write named as such), control and unsigned requests are not, and the
counted requests still reach moto with their bodies intact."""
import json
import unittest
import urllib.request
from typing import Any

from .support import client, endpoint, uniq

CONTROL = "/_cdkd_emulator/requests"


def control(method: str) -> Any:
    request = urllib.request.Request(endpoint().rstrip("/") + CONTROL, method=method)
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def counts() -> dict[tuple[str, str, str], int]:
    return {(r["service"], r["action"], r["object"]): r["count"] for r in control("GET")["requests"]}


class RequestCounts(unittest.TestCase):
    def test_counter_counts_each_signed_request_by_service_action_and_object(self) -> None:
        s3 = client("s3")
        cfn = client("cloudformation")
        ssm = client("ssm")
        bucket = uniq("count")
        s3.create_bucket(Bucket=bucket)
        control("DELETE")
        key = "cdkd/Stack/us-east-1/lock.json"
        put = s3.put_object(Bucket=bucket, Key=key, Body=b"{}", IfNoneMatch="*")
        s3.put_object(Bucket=bucket, Key=key, Body=b"{\"a\": 1}", IfMatch=put["ETag"])
        self.assertEqual(s3.get_object(Bucket=bucket, Key=key)["Body"].read(), b"{\"a\": 1}")
        s3.put_object(Bucket=bucket, Key="cdkd/_runs/r1/templates/Stack.json", Body=b"{}")
        s3.list_objects_v2(Bucket=bucket, Prefix="cdkd/")
        cfn.describe_stacks()
        ssm.put_parameter(Name=f"/{bucket}/p", Value="v", Type="String")
        urllib.request.urlopen(endpoint().rstrip("/") + "/moto-api/", timeout=10).read()
        got = counts()
        self.assertEqual(got, {
            ("s3", "PutObject If-None-Match", "lock.json"): 1,
            ("s3", "PutObject If-Match", "lock.json"): 1,
            ("s3", "GetObject", "lock.json"): 1,
            ("s3", "PutObject", "templates/*"): 1,
            ("s3", "ListObjectsV2", "-"): 1,
            ("cloudformation", "DescribeStacks", "-"): 1,
            ("ssm", "PutParameter", "-"): 1,
        })
        self.assertEqual(control("GET")["total"], 7)
        self.assertEqual(control("DELETE"), {"cleared": 7})
        self.assertEqual(control("GET"), {"total": 0, "requests": []})


if __name__ == "__main__":
    unittest.main()
