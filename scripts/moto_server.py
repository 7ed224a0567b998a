"""Serve moto single-threaded on 127.0.0.1, so S3 conditional writes are atomic.

The stock `moto_server` handles requests on parallel threads and lets two
`If-None-Match: *` writers both win now and then; S3 never does. Usage:
    python scripts/moto_server.py PORT
"""
import os
import sys


def main() -> None:
    port = int(sys.argv[1])
    os.environ["MOTO_PORT"] = str(port)
    from werkzeug.serving import run_simple
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        create_backend_app,
    )

    app = DomainDispatcherApplication(create_backend_app)
    run_simple("127.0.0.1", port, app, threaded=False, use_reloader=False)


if __name__ == "__main__":
    main()
