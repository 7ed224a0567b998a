"""A state bucket encrypted with a customer KMS key, as IAM judges its objects
(`iam_enforce._kms_through_s3`): S3 uses the key on the caller's behalf, so reading an
object needs `kms:Decrypt` and writing one `kms:GenerateDataKey` on the key, through
`s3.<the bucket's region>.amazonaws.com` (infra/template.yaml's StateBucketKey
statement asks exactly that)."""
import unittest
from typing import Any

from botocore.exceptions import ClientError

from .support import ACCOUNT, REGION, client, uniq
from .test_iam_enforce import allow, doc, keyed, set_auth


class KmsThroughS3(unittest.TestCase):
    keys: dict[str, tuple[str, str, str]]

    @classmethod
    def setUpClass(cls) -> None:
        set_auth("inf")
        iam, sts = client("iam"), client("sts")
        cls.key = client("kms").create_key(Description="state bucket")["KeyMetadata"]["Arn"]
        cls.bucket = uniq("state-kms")
        s3 = client("s3")
        s3.create_bucket(Bucket=cls.bucket)
        s3.put_bucket_encryption(Bucket=cls.bucket, ServerSideEncryptionConfiguration={"Rules": [
            {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": cls.key}}]})
        s3.put_object(Bucket=cls.bucket, Key="cdkd/App/us-east-1/state.json", Body=b"{}")
        objects = allow(["s3:GetObject", "s3:PutObject"], f"arn:aws:s3:::{cls.bucket}/*")
        via = {"StringEquals": {"kms:ViaService": f"s3.{REGION}.amazonaws.com"}}
        elsewhere = {"StringEquals": {"kms:ViaService": "s3.eu-west-1.amazonaws.com"}}
        kms = ["kms:Decrypt", "kms:GenerateDataKey"]
        policies = {
            "no-kms": doc(objects),
            "kms": doc(objects, allow(kms, cls.key, via)),
            "other-region": doc(objects, allow(kms, cls.key, elsewhere)),
        }
        trust = doc({"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"},
                     "Action": "sts:AssumeRole"})
        cls.keys = {}
        for name, policy in policies.items():
            role = uniq(f"kms-{name}")
            iam.create_role(RoleName=role, AssumeRolePolicyDocument=trust)
            iam.put_role_policy(RoleName=role, PolicyName="state", PolicyDocument=policy)
            creds = sts.assume_role(RoleArn=f"arn:aws:iam::{ACCOUNT}:role/{role}", RoleSessionName="step")
            c = creds["Credentials"]
            cls.keys[name] = (c["AccessKeyId"], c["SecretAccessKey"], c["SessionToken"])

    def setUp(self) -> None:
        set_auth("0")

    def tearDown(self) -> None:
        set_auth("inf")

    def s3(self, role: str) -> Any:
        return keyed("s3", *self.keys[role])

    def refused(self, call: Any) -> str:
        with self.assertRaises(ClientError) as caught:
            call()
        error = caught.exception.response["Error"]
        self.assertEqual(error["Code"], "AccessDenied", error)
        return str(error.get("Message", ""))

    def read(self, role: str) -> Any:
        return lambda: self.s3(role).get_object(Bucket=self.bucket, Key="cdkd/App/us-east-1/state.json")

    def write(self, role: str) -> Any:
        return lambda: self.s3(role).put_object(Bucket=self.bucket, Key="cdkd/App/us-east-1/state.json",
                                                Body=b'{"version": 1}')

    def test_without_kms_rights_reading_and_writing_are_refused_naming_the_kms_action(self) -> None:
        self.assertIn("kms:Decrypt", self.refused(self.read("no-kms")))
        self.assertIn("kms:GenerateDataKey", self.refused(self.write("no-kms")))

    def test_kms_rights_through_the_buckets_region_read_and_write(self) -> None:
        self.write("kms")()
        self.assertEqual(self.read("kms")()["Body"].read(), b'{"version": 1}')

    def test_kms_rights_through_another_regions_s3_are_refused(self) -> None:
        self.assertIn("kms:Decrypt", self.refused(self.read("other-region")))

    def test_a_bucket_without_a_customer_key_needs_no_kms_right(self) -> None:
        plain = uniq("state-plain")
        set_auth("inf")
        client("s3").create_bucket(Bucket=plain)
        client("s3").put_object(Bucket=plain, Key="k", Body=b"x")
        iam = client("iam")
        role = uniq("plain")
        trust = doc({"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"},
                     "Action": "sts:AssumeRole"})
        iam.create_role(RoleName=role, AssumeRolePolicyDocument=trust)
        iam.put_role_policy(RoleName=role, PolicyName="s", PolicyDocument=doc(
            allow("s3:GetObject", f"arn:aws:s3:::{plain}/*")))
        c = client("sts").assume_role(RoleArn=f"arn:aws:iam::{ACCOUNT}:role/{role}",
                                      RoleSessionName="step")["Credentials"]
        set_auth("0")
        got = keyed("s3", c["AccessKeyId"], c["SecretAccessKey"], c["SessionToken"]).get_object(Bucket=plain, Key="k")
        self.assertEqual(got["Body"].read(), b"x")


if __name__ == "__main__":
    unittest.main()
