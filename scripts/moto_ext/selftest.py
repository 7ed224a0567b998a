"""The emulator's start-up check: the pinned moto and cfn-lint are the ones installed,
cfn-lint's registry schemas are present, DescribeType answers for a known type and
refuses an unknown one, through the same middleware that serves requests, one
resource IMPORT runs through the patched moto (`cfn_selftest`), and AWS's limits hold
(`limits_selftest`: CloudFormation's template limits, S3's answer to a request signed
for another region, Step Functions' payload quota)."""
import json
import os
import re
import xml.etree.ElementTree as ET
from importlib import metadata
from typing import Any

REQUIREMENTS = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    "requirements-dev.txt",
)
# The distributions the extensions are written against, as requirements-dev.txt names them.
PINNED = ("moto", "cfn-lint")
KNOWN_TYPE, KNOWN_IDENTIFIER = "AWS::S3::Bucket", ["/properties/BucketName"]


class SelfTestError(Exception):
    pass


def pins(path: str | None = None) -> dict[str, str]:
    """Distribution name -> pinned version, from `name[extras]==version` lines."""
    found: dict[str, str] = {}
    with open(path or REQUIREMENTS, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\s*([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*==\s*([^\s#;]+)", line)
            if m:
                found[m.group(1).lower()] = m.group(3)
    return found


def check_versions() -> None:
    try:
        pinned = pins()
    except OSError as e:
        raise SelfTestError(f"cannot read the pins in {REQUIREMENTS}: {e}") from e
    for name in PINNED:
        want = pinned.get(name)
        if want is None:
            raise SelfTestError(f"{REQUIREMENTS} pins no version of {name}")
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            raise SelfTestError(f"{name} is not installed (pinned: {want}); run `make setup`")
        if have != want:
            raise SelfTestError(
                f"{name} {have} is installed but {REQUIREMENTS} pins {want}; the emulator's "
                "extensions are written against the pinned version: run `make setup`"
            )


def _request(app: Any, body: str) -> tuple[str, bytes]:
    from werkzeug.test import EnvironBuilder

    from .wsgi import call

    environ = EnvironBuilder(
        method="POST",
        path="/",
        data=body,
        content_type="application/x-www-form-urlencoded",
        headers={
            "Authorization": "AWS4-HMAC-SHA256 Credential=self-test/20200101/us-east-1/"
            "cloudformation/aws4_request, SignedHeaders=host, Signature=0",
        },
    ).get_environ()
    status, _, data = call(app, environ)
    return status, data


def check_registry() -> None:
    from . import Extensions, registry

    def unreachable(environ: Any, start_response: Any) -> Any:
        raise SelfTestError("DescribeType was passed on to moto instead of being served")

    try:
        types = registry.Registry()
        types.providers("us-east-1")
    except (ImportError, OSError, ValueError) as e:
        raise SelfTestError(f"cfn-lint's registry schemas are missing or unreadable: {e}") from e
    app = Extensions(unreachable, types)
    ns = {"c": registry.NAMESPACE}
    status, data = _request(
        app, f"Action=DescribeType&Version=2010-05-15&Type=RESOURCE&TypeName={KNOWN_TYPE}"
    )
    if not status.startswith("200"):
        raise SelfTestError(f"DescribeType {KNOWN_TYPE} answered {status}: {data[:300]!r}")
    result = ET.fromstring(data).find("c:DescribeTypeResult", ns)
    schema = result.findtext("c:Schema", None, ns) if result is not None else None
    provisioning = result.findtext("c:ProvisioningType", None, ns) if result is not None else None
    try:
        identifier = json.loads(schema or "").get("primaryIdentifier")
    except ValueError:
        identifier = None
    if identifier != KNOWN_IDENTIFIER or provisioning != "FULLY_MUTABLE":
        raise SelfTestError(
            f"DescribeType {KNOWN_TYPE} answered primaryIdentifier {identifier!r} and "
            f"ProvisioningType {provisioning!r}; expected {KNOWN_IDENTIFIER!r}, FULLY_MUTABLE"
        )
    status, data = _request(
        app, "Action=DescribeType&Version=2010-05-15&Type=RESOURCE&TypeName=Cdkd::No::Such"
    )
    if not status.startswith("404") or b"TypeNotFoundException" not in data:
        raise SelfTestError(f"DescribeType of an unknown type answered {status}: {data[:300]!r}")


def check_import() -> None:
    from .cfn_selftest import check_import as run

    run(SelfTestError)


def check_limits() -> None:
    from .limits_selftest import check_limits as run

    run(SelfTestError)


def check_dispatch() -> None:
    """The listing of moto's backend modules, made once, is the directory's."""
    import moto.backends

    from . import dispatch

    dispatch.install()
    listed, on_disk = list(moto.backends.list_of_moto_modules()), dispatch.original_listing()
    if listed != on_disk or "s3" not in listed:
        raise SelfTestError(f"moto's backend modules listed once {listed[:5]}... differ from the directory's {on_disk[:5]}...")


def self_test() -> None:
    """Raises SelfTestError naming what is wrong."""
    check_versions()
    check_dispatch()
    check_registry()
    check_import()
    check_limits()
