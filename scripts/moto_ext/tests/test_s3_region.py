"""A bucket answers only requests signed for its region (`s3_region`), through the
emulator `scripts/with-emulator.sh` started: a request signed (SigV4 credential scope,
or a presigned URL's) for another region is a 301 PermanentRedirect with the bucket's
region in `x-amz-bucket-region`; HeadBucket a 301 with the header and no body. Requests
signed for the bucket's region, CreateBucket, ListBuckets, GetBucketLocation and the
unsigned control paths are unchanged. Raw requests are signed with botocore and sent
with http.client (boto3 itself follows the redirect)."""
import hashlib
import http.client
import json
import unittest
import xml.etree.ElementTree as ET
from typing import Any
from urllib.parse import urlparse

import boto3
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config

from .support import client, endpoint, uniq

HOME, WEST = "us-east-1", "eu-west-1"


def s3_in(region: str, **config: Any) -> Any:
    return boto3.client("s3", endpoint_url=endpoint(), region_name=region, config=Config(**config))


def send(method: str, path: str, region: str | None, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    """A path-style request signed for `region` (None: unsigned): status, headers, body."""
    url = endpoint().rstrip("/") + path
    headers: dict[str, str] = {}
    if region is not None:
        request = AWSRequest(method=method, url=url, data=body,
                             headers={"x-amz-content-sha256": hashlib.sha256(body).hexdigest()})
        S3SigV4Auth(boto3.Session().get_credentials(), "s3", region).add_auth(request)
        headers = dict(request.prepare().headers)
    return fetch(method, url, headers, body)


def fetch(method: str, url: str, headers: dict[str, str] | None = None, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    parts = urlparse(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        connection.request(method, target, body=body or None, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        connection.close()


class BucketRegion(unittest.TestCase):
    west_bucket: str
    home_bucket: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.west_bucket, cls.home_bucket = uniq("west"), uniq("home")
        s3_in(WEST).create_bucket(Bucket=cls.west_bucket,
                                  CreateBucketConfiguration={"LocationConstraint": WEST})
        s3_in(WEST).put_object(Bucket=cls.west_bucket, Key="k.txt", Body=b"west")
        client("s3").create_bucket(Bucket=cls.home_bucket)
        client("s3").put_object(Bucket=cls.home_bucket, Key="k.txt", Body=b"home")

    def assert_redirect(self, answer: tuple[int, dict[str, str], bytes], bucket: str, region: str) -> ET.Element:
        status, headers, body = answer
        self.assertEqual(status, 301, body[:300])
        self.assertEqual(headers.get("x-amz-bucket-region"), region)
        error = ET.fromstring(body)
        self.assertEqual(error.tag, "Error")
        self.assertEqual(error.findtext("Code"), "PermanentRedirect")
        self.assertEqual(error.findtext("Bucket"), bucket)
        self.assertIn("must be addressed using the specified endpoint", error.findtext("Message") or "")
        self.assertTrue((error.findtext("Endpoint") or "").startswith(f"{bucket}.s3."), body)
        return error

    def test_rule_object_request_signed_for_another_region_is_a_permanent_redirect(self) -> None:
        for region in (HOME, "us-west-2"):
            with self.subTest(region):
                error = self.assert_redirect(send("GET", f"/{self.west_bucket}/k.txt", region), self.west_bucket, WEST)
                self.assertEqual(error.findtext("Endpoint"), f"{self.west_bucket}.s3.{WEST}.amazonaws.com")
        self.assert_redirect(send("PUT", f"/{self.west_bucket}/new.txt", HOME, b"x"), self.west_bucket, WEST)
        self.assert_redirect(send("GET", f"/{self.home_bucket}/k.txt", WEST), self.home_bucket, HOME)
        # Nothing was written by the refused PUT.
        self.assertEqual(send("GET", f"/{self.west_bucket}/new.txt", WEST)[0], 404)

    def test_rule_bucket_request_signed_for_another_region_is_a_permanent_redirect(self) -> None:
        self.assert_redirect(send("GET", f"/{self.west_bucket}?list-type=2", HOME), self.west_bucket, WEST)
        self.assert_redirect(send("GET", f"/{self.west_bucket}?versioning", HOME), self.west_bucket, WEST)
        self.assert_redirect(send("DELETE", f"/{self.west_bucket}", HOME), self.west_bucket, WEST)
        self.assertEqual(send("HEAD", f"/{self.west_bucket}", WEST)[0], 200, "the refused DELETE deleted the bucket")

    def test_rule_head_bucket_for_another_region_is_301_with_the_region_header_and_no_body(self) -> None:
        for path in (f"/{self.west_bucket}", f"/{self.west_bucket}/k.txt"):
            with self.subTest(path):
                status, headers, body = send("HEAD", path, HOME)
                self.assertEqual((status, headers.get("x-amz-bucket-region"), body), (301, WEST, b""))

    def test_rule_requests_signed_for_the_bucket_region_work(self) -> None:
        self.assertEqual(send("GET", f"/{self.west_bucket}/k.txt", WEST)[2], b"west")
        self.assertEqual(send("GET", f"/{self.home_bucket}/k.txt", HOME)[2], b"home")
        status, headers, _ = send("HEAD", f"/{self.west_bucket}", WEST)
        self.assertEqual((status, headers.get("x-amz-bucket-region")), (200, WEST))
        self.assertEqual(s3_in(WEST).get_object(Bucket=self.west_bucket, Key="k.txt")["Body"].read(), b"west")
        self.assertEqual(client("s3").get_object(Bucket=self.home_bucket, Key="k.txt")["Body"].read(), b"home")

    def test_rule_create_bucket_list_buckets_and_get_bucket_location_work_from_any_region(self) -> None:
        # us-east-1 creates a bucket of any region; a region creates its own.
        from_home, from_west = uniq("made-home"), uniq("made-west")
        client("s3").create_bucket(Bucket=from_home, CreateBucketConfiguration={"LocationConstraint": WEST})
        s3_in(WEST).create_bucket(Bucket=from_west, CreateBucketConfiguration={"LocationConstraint": WEST})
        for region in (HOME, WEST, "ap-southeast-2"):
            with self.subTest(region):
                names = [b["Name"] for b in s3_in(region).list_buckets()["Buckets"]]
                self.assertTrue({from_home, from_west, self.west_bucket, self.home_bucket} <= set(names))
                status, _, body = send("GET", f"/{self.west_bucket}?location", region)
                self.assertEqual(status, 200, body)
                self.assertIn(WEST.encode(), body)

    def test_rule_presigned_url_works_for_its_region_only(self) -> None:
        params = {"Bucket": self.west_bucket, "Key": "k.txt"}
        good = s3_in(WEST, signature_version="s3v4").generate_presigned_url("get_object", Params=params)
        self.assertIn("X-Amz-Credential=", good)
        status, _, body = fetch("GET", good)
        self.assertEqual((status, body), (200, b"west"))
        wrong = s3_in(HOME, signature_version="s3v4").generate_presigned_url("get_object", Params=params)
        self.assert_redirect(fetch("GET", wrong), self.west_bucket, WEST)
        # A SigV2 presigned URL (boto3's default for presigning) names no region: served.
        legacy = s3_in(HOME).generate_presigned_url("get_object", Params=params)
        self.assertNotIn("X-Amz-Credential=", legacy)
        self.assertEqual(fetch("GET", legacy)[0], 200)

    def test_rule_unsigned_control_paths_and_missing_buckets_are_unchanged(self) -> None:
        self.assertEqual(fetch("GET", endpoint().rstrip("/") + "/moto-api/")[0], 200)
        status, _, body = fetch("GET", endpoint().rstrip("/") + "/_cdkd_emulator/faults")
        self.assertEqual(status, 200, body)
        self.assertIn("faults", json.loads(body))
        status, _, body = send("GET", f"/{uniq('missing')}/k.txt", WEST)
        self.assertEqual(status, 404, body)
        self.assertIn(b"NoSuchBucket", body)

    def test_boto3_follows_the_redirect_to_the_bucket_region(self) -> None:
        # botocore's S3 region redirector re-signs for the region the 301 names.
        self.assertEqual(client("s3").get_object(Bucket=self.west_bucket, Key="k.txt")["Body"].read(), b"west")
        self.assertEqual(client("s3").head_bucket(Bucket=self.west_bucket)["ResponseMetadata"]["HTTPHeaders"]
                         ["x-amz-bucket-region"], WEST)


if __name__ == "__main__":
    unittest.main()
