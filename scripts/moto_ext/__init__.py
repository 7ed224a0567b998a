"""Server-side extensions of the pinned moto, for what the project needs and moto lacks:
CloudFormation's `DescribeType` (served from cfn-lint's registry schemas, see
`registry`), pagination of EC2's `DescribeSecurityGroupRules` (see `sg_rules`),
CloudFormation resource import (IMPORT change sets, see `cfn_import`), which patches
moto's CloudFormation classes when the middleware is built, SNS-backed custom resources
(see `cfn_custom`) and S3's `GetBucketVersioning` root element (see `s3_fixes`), patched
at the same time, as is moto's per-request listing of its own package (see `dispatch`). Before any of them, a test facility that is not AWS behaviour: fault
injection (see `faults`), which makes the emulator refuse chosen requests as a test
registered them at `/_cdkd_emulator/faults`, and request counting (see `counter`), which
counts every signed request by service and action for the benchmarks.

`wrap(app)` puts a WSGI middleware in front of moto's app: it first answers the fault
registrations and the requests a registered fault refuses, then handles exactly
`DescribeType` and a paged `DescribeSecurityGroupRules` and hands every other request to
moto untouched (a form body it had to read to find the action is put back first).
`self_test()` checks, before the emulator serves, that it runs on the moto and cfn-lint
versions requirements-dev.txt pins and that the registry answers and that one IMPORT
runs through the patched code."""
from typing import Any, Iterable

from . import counter, faults, lambda_invoke, registry, serial, sg_rules, wsgi
from .selftest import self_test

__all__ = ["wrap", "self_test", "Extensions"]


class Extensions:
    """The middleware in front of moto's WSGI app."""

    def __init__(self, app: Any, types: registry.Registry | None = None) -> None:
        self.app = app
        self.types = types or registry.Registry()
        self.faults = faults.Faults()
        self.counts = counter.Counts()
        # Imported here: moto's CloudFormation parser imports most of moto.
        from . import (
            cfn_backend,
            cfn_custom,
            cfn_import,
            dispatch,
            iam_enforce,
            lambda_runtime,
            s3_fixes,
            s3_region,
            sfn_interp,
        )

        dispatch.install()
        cfn_import.install()
        cfn_custom.install()
        s3_fixes.install()
        s3_region.install()
        # The deployed backend (docs/emulator.md, "The deployed backend"): CloudFormation
        # resources the SAM-translated template needs, the real step binary run through
        # the Lambda Runtime API, moto's Step Functions interpreter as AWS runs it, and
        # IAM evaluated with real resource ARNs.
        cfn_backend.install()
        lambda_runtime.install()
        sfn_interp.install()
        iam_enforce.install()

    def __call__(self, environ: dict[str, Any], start_response: wsgi.StartResponse) -> Iterable[bytes]:
        # The Lambda test facility answers without the lock (it has its own). Every other
        # request is served whole while holding the emulator's one lock (`serial`): one
        # at a time. A Lambda Invoke gives the lock up while its process runs
        # (`lambda_runtime`), so the process can call back into the emulator.
        answered = lambda_invoke.control(environ, start_response)
        if answered is not None:
            return answered
        return serial.serve(self._serve, environ, start_response)

    def _serve(self, environ: dict[str, Any], start_response: wsgi.StartResponse) -> Iterable[bytes]:
        # First: every signed request is counted (the benchmark's request counts), then
        # a registered fault refuses the request before anything else sees it.
        answered = counter.intercept(self.counts, environ, start_response)
        if answered is not None:
            return answered
        refused = faults.intercept(self.faults, environ, start_response)
        if refused is not None:
            return refused
        service, region = wsgi.credential_scope(environ)
        if service in ("cloudformation", "ec2"):
            params = wsgi.read_form(environ)
            action = params.get("Action") if params is not None else None
            if service == "cloudformation" and action == "DescribeType":
                status, body = registry.describe_type(self.types, region, params)
                return wsgi.respond(start_response, status, body)
            if (
                service == "ec2"
                and action == "DescribeSecurityGroupRules"
                and ("MaxResults" in params or "NextToken" in params)
            ):
                return sg_rules.paginate(self.app, environ, params, start_response)
        return self.app(environ, start_response)


def wrap(app: Any) -> Extensions:
    return Extensions(app)
