"""The start-up check of resource import: one IMPORT change set through the patched
moto, in-process, with the middleware and moto's own WSGI app, in an account of its own
that is wiped afterwards (the emulator starts empty).

It creates a queue, refuses an import without DeletionPolicy, creates the IMPORT change
set (a new stack in REVIEW_IN_PROGRESS, one `Import` row) and a change set of another
stack, checks that `ListChangeSets` lists each stack's own change set only, executes the
import, and checks that the stack is IMPORT_COMPLETE and holds the queue. Anything else raises the error it is
given, naming the step."""
import re
import xml.etree.ElementTree as ET
from typing import Any
from urllib.parse import urlencode

ACCOUNT = "000000000042"
REGION = "us-east-1"
STACK, CHANGE_SET, QUEUE = "cdkd-self-test", "cdkd-self-test-import", "cdkd-self-test-queue"
OTHER_STACK, OTHER_CHANGE_SET = "cdkd-self-test-other", "cdkd-self-test-other-create"
TEMPLATE = (
    '{"Resources": {"Queue": {"Type": "AWS::SQS::Queue", "DeletionPolicy": "%s", '
    '"Properties": {"QueueName": "' + QUEUE + '"}}}}'
)


def _call(app: Any, params: dict[str, str]) -> tuple[str, bytes]:
    from werkzeug.test import EnvironBuilder

    from .wsgi import call

    environ = EnvironBuilder(
        method="POST", path="/", data=urlencode(params),
        content_type="application/x-www-form-urlencoded",
        headers={
            "Authorization": f"AWS4-HMAC-SHA256 Credential=self-test/20200101/{REGION}/"
            "cloudformation/aws4_request, SignedHeaders=host, Signature=0",
            "x-moto-account-id": ACCOUNT,
        },
    ).get_environ()
    status, _, body = call(app, environ)
    return status, body


def _texts(body: bytes, tag: str) -> list[str | None]:
    """The text of every element named `tag`, whatever its namespace."""
    return [e.text for e in ET.fromstring(body).iter() if re.sub(r"^\{[^}]*\}", "", e.tag) == tag]


def _text(body: bytes, tag: str) -> str | None:
    """The text of the first element named `tag`."""
    return next(iter(_texts(body, tag)), None)


def _check_list_change_sets(app: Any, fail: type[Exception]) -> None:
    """Another stack's change set beside the import's: each stack lists its own only."""
    status, body = _call(app, {
        "Action": "CreateChangeSet", "Version": "2010-05-15", "StackName": OTHER_STACK,
        "ChangeSetName": OTHER_CHANGE_SET, "ChangeSetType": "CREATE",
        "TemplateBody": '{"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}}}',
    })
    if not status.startswith("200"):
        raise fail(f"CreateChangeSet CREATE answered {status}: {body[:300]!r}")
    for stack, own in ((STACK, CHANGE_SET), (OTHER_STACK, OTHER_CHANGE_SET)):
        status, body = _call(app, {"Action": "ListChangeSets", "Version": "2010-05-15",
                                   "StackName": stack})
        if not status.startswith("200") or _texts(body, "ChangeSetName") != [own]:
            raise fail(f"ListChangeSets of {stack} answered {status}: {body[:400]!r}")


def _import_request(deletion_policy: str, queue_url: str) -> dict[str, str]:
    entry = "ResourcesToImport.member.1."
    return {
        "Action": "CreateChangeSet", "Version": "2010-05-15", "StackName": STACK,
        "ChangeSetName": CHANGE_SET, "ChangeSetType": "IMPORT",
        "TemplateBody": TEMPLATE % deletion_policy,
        entry + "ResourceType": "AWS::SQS::Queue", entry + "LogicalResourceId": "Queue",
        entry + "ResourceIdentifier.entry.1.key": "QueueUrl",
        entry + "ResourceIdentifier.entry.1.value": queue_url,
    }


def _run(app: Any, fail: type[Exception]) -> None:
    from moto.cloudformation.models import cloudformation_backends
    from moto.sqs.models import sqs_backends

    queue = sqs_backends[ACCOUNT][REGION].create_queue(QUEUE)
    url = f"http://127.0.0.1/{ACCOUNT}/{QUEUE}"
    status, body = _call(app, _import_request("", url))
    if not status.startswith("400") or b"DeletionPolicy" not in body:
        raise fail(f"an IMPORT without DeletionPolicy answered {status}: {body[:300]!r}")
    status, body = _call(app, _import_request("Retain", url))
    if not status.startswith("200"):
        raise fail(f"CreateChangeSet IMPORT answered {status}: {body[:300]!r}")
    described = {"Action": "DescribeChangeSet", "Version": "2010-05-15", "StackName": STACK,
                 "ChangeSetName": CHANGE_SET}
    status, body = _call(app, described)
    if _text(body, "Status") != "CREATE_COMPLETE" or _text(body, "Action") != "Import":
        raise fail(f"DescribeChangeSet of the IMPORT change set answered {status}: {body[:400]!r}")
    _check_list_change_sets(app, fail)
    backend = cloudformation_backends[ACCOUNT][REGION]
    stack = next(s for s in backend.stacks.values() if s.name == STACK)
    if stack.status != "REVIEW_IN_PROGRESS":
        raise fail(f"the new stack is {stack.status}, not REVIEW_IN_PROGRESS")
    status, body = _call(app, dict(described, Action="ExecuteChangeSet"))
    if not status.startswith("200"):
        raise fail(f"ExecuteChangeSet answered {status}: {body[:300]!r}")
    held = stack.resource_map._parsed_resources.get("Queue")
    if stack.status != "IMPORT_COMPLETE" or getattr(held, "wrapped", None) is not queue:
        raise fail(f"after ExecuteChangeSet the stack is {stack.status} holding {held!r}")


def _wipe() -> None:
    """Forgets everything the check made, in every service."""
    from moto.core.base_backend import BackendDict

    for backends in list(BackendDict._instances):
        if ACCOUNT in backends:
            backends[ACCOUNT].reset()
            del backends[ACCOUNT]


def check_import(fail: type[Exception]) -> None:
    """Drives one IMPORT through the patched moto; raises `fail(reason)` when it breaks."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

    from . import Extensions

    try:
        _run(Extensions(DomainDispatcherApplication(create_backend_app)), fail)
    except fail:
        raise
    except Exception as e:  # noqa: BLE001 - whatever broke is named in the failure
        raise fail(f"resource import broke: {type(e).__name__}: {e}") from e
    finally:
        _wipe()
