"""Serve moto on 127.0.0.1, one request at a time, so S3 conditional writes are atomic.

The stock `moto_server` handles requests on parallel threads and lets two
`If-None-Match: *` writers both win now and then; S3 never does. Here every connection
gets a thread of its own, but each request is handled inside moto while holding one
lock (`moto_ext/serial.py`), so requests take effect one at a time.

A thread per connection keeps what the earlier single-threaded loop guarded against:
HTTP clients keep connections they opened but did not need yet in their pools (hyper
does, racing a new connection against a pooled one), and one client's idle connection
must not stall every other client's request. An idle connection only occupies its own
thread; the request body is read before the lock is taken. A connection that starts a
request and stalls is dropped after REQUEST_TIMEOUT seconds. Every answer is
`Connection: close` (HTTP/1.0), as before: a connection carries one request.

One request does not hold the lock throughout: a Lambda Invoke of a custom-runtime
function (`moto_ext/lambda_runtime.py`) holds it while it reads moto's state and gives
it up while the function's process runs, because that process calls back into the
emulator. moto's Step Functions interpreter, which runs executions on threads of its own
and calls the emulator over HTTP, works the same way. The binary run for such a function
is env `CDKD_FLOW_STEP_BIN` (docs/emulator.md); the processes are stopped when the
emulator exits (SIGTERM, SIGINT).

The app is moto's behind the project's extensions (scripts/moto_ext: CloudFormation's
DescribeType from cfn-lint's registry schemas, paginated DescribeSecurityGroupRules...).
Before serving, a self-test checks the pinned versions and the registry; when it fails
the emulator exits with status 2 and says why.
Usage:
    python scripts/moto_server.py PORT
"""
import gc
import os
import signal
import sys

REQUEST_TIMEOUT = 30.0


def main() -> None:
    port = int(sys.argv[1])
    os.environ["MOTO_PORT"] = str(port)
    from werkzeug.serving import WSGIRequestHandler, make_server
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        create_backend_app,
    )

    from moto_ext import wrap
    from moto_ext.selftest import SelfTestError, self_test

    try:
        self_test()
    except SelfTestError as e:
        print(f"emulator self-test failed: {e}", file=sys.stderr, flush=True)
        sys.exit(2)

    class Handler(WSGIRequestHandler):
        # Applied to the connection by StreamRequestHandler.setup().
        timeout = REQUEST_TIMEOUT
        # One request per connection (werkzeug would answer keep-alive when threaded).
        protocol_version = "HTTP/1.0"

    app = wrap(DomainDispatcherApplication(create_backend_app))
    # What start-up loaded (moto, cfn-lint's registry schemas read by the self-test)
    # lives as long as the process: kept out of the cyclic collector, which otherwise
    # walks all of it on every full collection (docs/emulator.md, "Garbage collection").
    gc.freeze()
    server = make_server("127.0.0.1", port, app, threaded=True, request_handler=Handler)

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f" * moto on http://127.0.0.1:{port} (one request at a time)", flush=True)
    try:
        server.serve_forever()
    finally:
        from moto_ext import lambda_runtime

        lambda_runtime.shutdown()
        server.server_close()


if __name__ == "__main__":
    main()
