"""Serve moto single-threaded on 127.0.0.1, so S3 conditional writes are atomic.

The stock `moto_server` handles requests on parallel threads and lets two
`If-None-Match: *` writers both win now and then; S3 never does. Here one request is
handled at a time.

A plain single-threaded server (werkzeug's `run_simple(threaded=False)`) handles the
connections in the order it accepts them and blocks reading the first one until its
request arrives. HTTP clients keep connections they opened but did not need yet in
their pools (hyper does, racing a new connection against a pooled one), so one client's
idle connection could stall every other client's request: the emulator hung "in the
middle of a request". This loop accepts every connection at once and handles a request
only on a connection that has data to read (werkzeug answers `Connection: close`, so a
connection carries one request). A connection that starts a request and stalls is
dropped after REQUEST_TIMEOUT seconds.

The app is moto's behind the project's extensions (scripts/moto_ext: CloudFormation's
DescribeType from cfn-lint's registry schemas, paginated DescribeSecurityGroupRules).
Before serving, a self-test checks the pinned versions and the registry; when it fails
the emulator exits with status 2 and says why.
Usage:
    python scripts/moto_server.py PORT
"""
import gc
import os
import selectors
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

    app = wrap(DomainDispatcherApplication(create_backend_app))
    # What start-up loaded (moto, cfn-lint's registry schemas read by the self-test)
    # lives as long as the process: kept out of the cyclic collector, which otherwise
    # walks all of it on every full collection (docs/emulator.md, "Garbage collection").
    gc.freeze()
    server = make_server("127.0.0.1", port, app, threaded=False, request_handler=Handler)
    listener = server.socket
    listener.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, None)
    print(f" * moto on http://127.0.0.1:{port} (one request at a time)", flush=True)
    while True:
        for key, _ in sel.select():
            if key.data is None:
                try:
                    conn, addr = listener.accept()
                except OSError:  # nothing to accept after all, or a client gone before accept
                    continue
                conn.setblocking(True)
                sel.register(conn, selectors.EVENT_READ, addr)
                continue
            conn, addr = key.fileobj, key.data
            sel.unregister(conn)
            try:
                # Reads the request (or the EOF of a connection closed unused),
                # answers it, and closes.
                server.finish_request(conn, addr)
            except Exception:  # noqa: BLE001 - one bad connection must not stop the emulator
                server.handle_error(conn, addr)
            finally:
                server.shutdown_request(conn)


if __name__ == "__main__":
    main()
