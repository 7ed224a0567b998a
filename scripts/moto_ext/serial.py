"""The one lock that serialises the emulator's requests (`scripts/moto_server.py`).

moto's backends are not transactional: two S3 `If-None-Match: *` writers served at the
same time may both win, which S3 never allows. The emulator serves every connection on a
thread of its own (an idle pooled connection cannot stall the others) and handles each
request's work inside moto while holding `LOCK`, so requests still take effect one at a
time, in the order they get the lock.

A Lambda Invoke is the exception (`lambda_runtime`): it holds the lock only while it reads
moto's state (the function, its configuration, the execution role's credentials) and
releases it (`LOCK.released()`) while the function's process runs, because that process
calls back into the emulator (S3, CloudFormation...) and would otherwise wait forever.

The lock is reentrant for its owner thread (an extension that takes it inside a request
does not deadlock), and `released()` gives it up entirely for a while and takes it back,
as `threading.Condition.wait` does."""
import contextlib
import io
import threading
from typing import Any, Callable, Iterable, Iterator


class Serial:
    """A reentrant lock that its owner can give up for a while (`released`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owner: int | None = None
        self._depth = 0

    def acquire(self) -> None:
        me = threading.get_ident()
        if self._owner == me:
            self._depth += 1
            return
        self._lock.acquire()
        self._owner, self._depth = me, 1

    def release(self) -> None:
        if self._owner != threading.get_ident():
            raise RuntimeError("the emulator's lock is released by a thread that does not hold it")
        self._depth -= 1
        if self._depth == 0:
            self._owner = None
            self._lock.release()

    def held(self) -> bool:
        """Whether the calling thread holds the lock."""
        return self._owner == threading.get_ident()

    def __enter__(self) -> "Serial":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    @contextlib.contextmanager
    def released(self) -> Iterator[None]:
        """Gives the lock up entirely while the block runs (nothing to do when the calling
        thread does not hold it), then takes it back at the same depth."""
        if not self.held():
            yield
            return
        depth = self._depth
        self._owner, self._depth = None, 0
        self._lock.release()
        try:
            yield
        finally:
            self._lock.acquire()
            self._owner, self._depth = threading.get_ident(), depth


LOCK = Serial()


def read_body(environ: dict[str, Any]) -> None:
    """Reads the request's whole body before the lock is taken (a client that stalls
    mid-body holds up only its own thread, until the server's socket timeout), and puts
    it back as `wsgi.input`, with its length."""
    stream = environ.get("wsgi.input")
    if stream is None:
        return
    try:
        length = int(environ.get("CONTENT_LENGTH") or "")
    except ValueError:
        length = -1
    if length >= 0:
        chunks, left = [], length
        while left > 0:
            chunk = stream.read(min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        body = b"".join(chunks)
    elif environ.get("wsgi.input_terminated"):  # chunked: werkzeug ends the stream
        body = stream.read()
    else:
        return
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))
    # moto rebuilds a form body from the parameters it parsed, in Python's encoding; a
    # client that encodes otherwise (the Rust SDK writes a space as %20) signed other
    # bytes. IAM enforcement checks the signature over the bytes that came (iam_enforce).
    if (environ.get("CONTENT_TYPE") or "").startswith("application/x-www-form-urlencoded"):
        environ.setdefault("moto_ext.signed_body", body)


def serve(app: Callable[..., Iterable[bytes]], environ: dict[str, Any],
          start_response: Callable[..., Any]) -> list[bytes]:
    """Runs a WSGI app to its last byte while holding `LOCK` (its body is read first)."""
    read_body(environ)
    with LOCK:
        chunks = app(environ, start_response)
        try:
            return [b"".join(chunks)]
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
