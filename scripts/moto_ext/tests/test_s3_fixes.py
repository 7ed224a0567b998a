"""S3 answers the AWS SDK for Rust can parse (`s3_fixes`): GetBucketVersioning's root
element is `VersioningConfiguration`, as on S3, whatever the bucket's versioning."""
import unittest
import xml.etree.ElementTree as ET
from typing import Any

from .support import client, uniq

NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"


class BucketVersioning(unittest.TestCase):
    s3: Any

    @classmethod
    def setUpClass(cls) -> None:
        cls.s3 = client("s3")

    def raw_versioning(self, bucket: str) -> tuple[ET.Element, dict[str, Any]]:
        """GetBucketVersioning's XML as sent, and what boto3 parsed from it."""
        seen: list[bytes] = []

        def keep(http_response: Any, **_: Any) -> None:
            seen.append(http_response.content)

        self.s3.meta.events.register("after-call.s3.GetBucketVersioning", keep)
        try:
            parsed = self.s3.get_bucket_versioning(Bucket=bucket)
        finally:
            self.s3.meta.events.unregister("after-call.s3.GetBucketVersioning", keep)
        return ET.fromstring(seen[-1]), parsed

    def test_rule_versioning_root_element_is_versioning_configuration_never_configured(self) -> None:
        bucket = uniq("vers")
        self.s3.create_bucket(Bucket=bucket)
        root, parsed = self.raw_versioning(bucket)
        self.assertEqual(root.tag, f"{NS}VersioningConfiguration")
        self.assertEqual(list(root), [])
        self.assertNotIn("Status", parsed)

    def test_rule_versioning_root_element_is_versioning_configuration_enabled_and_suspended(self) -> None:
        bucket = uniq("vers")
        self.s3.create_bucket(Bucket=bucket)
        for status in ("Enabled", "Suspended"):
            self.s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": status})
            root, parsed = self.raw_versioning(bucket)
            self.assertEqual(root.tag, f"{NS}VersioningConfiguration")
            self.assertEqual(root.findtext(f"{NS}Status"), status)
            self.assertEqual(parsed["Status"], status)


if __name__ == "__main__":
    unittest.main()
