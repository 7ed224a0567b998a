#!/usr/bin/env python3
"""Cold-start init time of every step's Lambda binary, measured locally.

Serves a fake Lambda Runtime API on 127.0.0.1 and starts the one bootstrap once per step
(as built by `make lambdas`: target/lambda/cdkd-step/bootstrap, `_HANDLER` = the step)
with the environment Lambda gives a provided.al2023 function. Init time = process start -> the runtime's first
`GET /2018-06-01/runtime/invocation/next` (median of --runs runs). Lambda's own sandbox
start-up comes on top of this.

The steps load the SDK configuration and call STS GetCallerIdentity during init (the
state bucket's expected owner). That call is answered by this script
(AWS_ENDPOINT_URL_STS points here) and its arrival time is reported as "sts ms".

With an emulator (AWS_ENDPOINT_URL=http://127.0.0.1:PORT, as scripts/with-emulator.sh
exports), a step that has an event below is also invoked twice per run: the first
(cold) and second (warm) invocation round trips are reported, measured like Lambda's
billed duration (event handed out by /next -> its /response arrives). Without one,
AWS_ENDPOINT_URL points here too and nothing is invoked. Nothing leaves 127.0.0.1.

Python standard library only. Run: `make lambda-init`, or
`scripts/with-emulator.sh .venv/bin/python scripts/lambda_init_time.py [--runs 7] [--json out.json]`.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "/2018-06-01/runtime"
ACCOUNT = "123456789012"
STS_ANSWER = (
    '<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">'
    "<GetCallerIdentityResult><Arn>arn:aws:iam::%s:role/lambda-init-harness</Arn>"
    "<UserId>AROAHARNESS:init</UserId><Account>%s</Account></GetCallerIdentityResult>"
    "<ResponseMetadata><RequestId>%s</RequestId></ResponseMetadata>"
    "</GetCallerIdentityResponse>"
)


def now_ms():
    return time.monotonic_ns() / 1e6


class Session:
    """One bootstrap process: the events to hand out and when things happened."""

    def __init__(self, events):
        self.events = list(events)
        self.cond = threading.Condition()
        self.done = threading.Event()
        self.first_next = None
        self.sts = None
        self.delivered = {}  # request id -> ms when the event was handed out
        self.results = []  # (request id, ms, "response" | "error", body)
        self.init_error = None


class Runtime(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    session = None  # set by the harness before each process starts

    def log_message(self, fmt, *args):
        pass

    def _reply(self, code, body=b"", headers=None):
        try:
            self.send_response(code)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass  # the process was stopped while waiting

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def do_GET(self):
        s = Runtime.session
        if self.path != PREFIX + "/invocation/next" or s is None:
            return self._reply(404)
        t = now_ms()
        with s.cond:
            if s.first_next is None:
                s.first_next = t
            s.cond.notify_all()
            event = s.events.pop(0) if s.events else None
        if event is None:
            # Nothing more to invoke: hold the request (as Lambda does between invokes).
            s.done.wait(60)
            return self._reply(204)
        rid = str(uuid.uuid4())
        body = json.dumps(event).encode()
        headers = {
            "Content-Type": "application/json",
            "Lambda-Runtime-Aws-Request-Id": rid,
            "Lambda-Runtime-Deadline-Ms": str(int(time.time() * 1000) + 300_000),
            "Lambda-Runtime-Invoked-Function-Arn": "arn:aws:lambda:us-east-1:%s:function:harness" % ACCOUNT,
            "Lambda-Runtime-Trace-Id": "Root=1-00000000-000000000000000000000000;Sampled=0",
        }
        with s.cond:
            s.delivered[rid] = now_ms()
        self._reply(200, body, headers)

    def do_POST(self):
        s = Runtime.session
        body = self._body()
        t = now_ms()
        if self.path == "/" or self.path.startswith("/?"):
            # STS GetCallerIdentity (awsQuery) from the step's init.
            if s is not None:
                with s.cond:
                    s.sts = s.sts if s.sts is not None else t
            answer = (STS_ANSWER % (ACCOUNT, ACCOUNT, uuid.uuid4())).encode()
            return self._reply(200, answer, {"Content-Type": "text/xml"})
        m = re.fullmatch(PREFIX + r"/invocation/([^/]+)/(response|error)", self.path)
        if s is not None and m:
            with s.cond:
                s.results.append((m.group(1), t, m.group(2), body))
                s.cond.notify_all()
            return self._reply(202, b'{"status":"OK"}', {"Content-Type": "application/json"})
        if s is not None and self.path == PREFIX + "/init/error":
            with s.cond:
                s.init_error = body.decode(errors="replace")
                s.cond.notify_all()
            return self._reply(202, b'{"status":"OK"}', {"Content-Type": "application/json"})
        self._reply(404)


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A bootstrap stopped while a request was open: expected, not worth a traceback.
        if not isinstance(sys.exc_info()[1], (ConnectionError, BrokenPipeError)):
            super().handle_error(request, client_address)


BOOTSTRAP = "cdkd-step"


def steps_from_source():
    text = (ROOT / "functions/src/steps.rs").read_text()
    block = text[text.index("pub const STEPS") :]
    block = block[: block.index("];")]
    return re.findall(r'\(\s*"([a-z0-9-]+)"\s*,\s*"[A-Za-z]+"\s*\)', block)


def memory_from_template():
    """Step -> MemorySize (MB): the function's own, else the Globals one."""
    text = (ROOT / "infra/template.yaml").read_text()
    glob = re.search(r"^Globals:\n(?:[ \t].*\n)*?\s+MemorySize:\s*(\d+)", text, re.M)
    default = int(glob.group(1)) if glob else 128
    out = {}
    for block in re.split(r"\n(?=  [A-Za-z0-9]+:\n)", text):
        step = re.search(r"^\s+Handler:\s*([a-z0-9-]+)\s*$", block, re.M)
        if step:
            mem = re.search(r"^\s+MemorySize:\s*(\d+)", block, re.M)
            out[step.group(1)] = int(mem.group(1)) if mem else default
    return out


def emulator_create_bucket(endpoint, name):
    req = urllib.request.Request("%s/%s" % (endpoint, name), method="PUT", data=b"")
    with urllib.request.urlopen(req, timeout=10) as r:
        r.read()


def events_for(step, bucket):
    """The event of a cheap, real invocation; None when a step needs a run in progress."""
    if step == "cleanup-select":
        return {
            "runId": "cleanup-init-time",
            "input": {"stateBucket": bucket, "pattern": "pr-*", "minimumAge": "7d", "dryRun": True},
        }
    return None


def run_once(bootstrap, env, events, timeout):
    s = Session(events)
    Runtime.session = s
    start = now_ms()
    proc = subprocess.Popen(
        [str(bootstrap)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    err_tail = b""
    try:
        deadline = time.monotonic() + timeout
        with s.cond:
            while True:
                if s.first_next is not None and (not events or len(s.results) >= len(events)):
                    break
                if s.init_error is not None or proc.poll() is not None:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                s.cond.wait(min(left, 0.05))
    finally:
        s.done.set()
        proc.kill()
        try:
            _, err_tail = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        Runtime.session = None
    out = {
        "init_ms": None if s.first_next is None else s.first_next - start,
        "sts_ms": None if s.sts is None else s.sts - start,
        "invokes": [],
        "error": s.init_error,
    }
    for rid, t, kind, body in s.results:
        d = s.delivered.get(rid)
        out["invokes"].append(
            {
                "ms": None if d is None else t - d,
                "kind": kind,
                "body": body.decode(errors="replace")[:300],
            }
        )
    if out["init_ms"] is None and not out["error"]:
        out["error"] = "no /next request; stderr: " + err_tail.decode(errors="replace")[-500:]
    return out


def fmt(v, digits=1):
    return "-" if v is None else ("%.*f" % (digits, v))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7, help="runs per step (median reported), >= 5")
    ap.add_argument("--lambda-dir", default=str(ROOT / "target/lambda"))
    ap.add_argument("--zip-dir", default=str(ROOT / "target/lambda/zip"))
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per run")
    ap.add_argument("--json", help="also write the measurements to this file")
    args = ap.parse_args()
    if args.runs < 5:
        ap.error("--runs must be at least 5")

    server = Server(("127.0.0.1", 0), Runtime)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    here = "http://127.0.0.1:%d" % port

    emulator = os.environ.get("AWS_ENDPOINT_URL", "")
    if emulator and not emulator.startswith("http://127.0.0.1:"):
        sys.exit("AWS_ENDPOINT_URL=%s is not on 127.0.0.1; refusing" % emulator)
    bucket = None
    if emulator:
        bucket = "init-harness-%s" % uuid.uuid4().hex[:16]
        emulator_create_bucket(emulator, bucket)

    memory = memory_from_template()
    rows = []
    for step in steps_from_source():
        # One bootstrap serves every step; the function's Handler (_HANDLER) picks it.
        bootstrap = Path(args.lambda_dir) / BOOTSTRAP / "bootstrap"
        zips = {
            arch.name: (arch / BOOTSTRAP / "bootstrap.zip").stat().st_size
            for arch in sorted(Path(args.zip_dir).glob("*"))
            if (arch / BOOTSTRAP / "bootstrap.zip").exists()
        }
        row = {"step": step, "zip_bytes": zips, "memory_mb": memory.get(step, 128)}
        if not bootstrap.exists():
            row["error"] = "%s missing: run make lambdas" % bootstrap
            rows.append(row)
            continue
        row["bootstrap_bytes"] = bootstrap.stat().st_size
        env = {
            "PATH": "/usr/bin:/bin",
            "AWS_LAMBDA_RUNTIME_API": "127.0.0.1:%d" % port,
            "_HANDLER": step,
            "AWS_LAMBDA_FUNCTION_NAME": "cdkd-flow-%s" % step,
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(row["memory_mb"]),
            "AWS_LAMBDA_LOG_GROUP_NAME": "/cdkd-flow/harness/%s" % step,
            "AWS_LAMBDA_LOG_STREAM_NAME": "harness",
            "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
            "AWS_EXECUTION_ENV": "AWS_Lambda_provided.al2023",
            "AWS_REGION": "us-east-1",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_SESSION_TOKEN": "testing",
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_ENDPOINT_URL": emulator or here,
            "AWS_ENDPOINT_URL_STS": here,
            "RUST_LOG": "info",
            "LAMBDA_TASK_ROOT": str(bootstrap.parent),
            "TZ": ":UTC",
        }
        event = events_for(step, bucket) if bucket else None
        runs = [
            run_once(bootstrap, env, [event, event] if event else [], args.timeout)
            for _ in range(args.runs)
        ]
        errors = [r["error"] for r in runs if r["error"]]
        if errors:
            row["error"] = errors[0]
        inits = [r["init_ms"] for r in runs if r["init_ms"] is not None]
        stss = [r["sts_ms"] for r in runs if r["sts_ms"] is not None]
        row["init_ms_runs"] = inits
        row["init_ms_median"] = statistics.median(inits) if inits else None
        row["sts_ms_median"] = statistics.median(stss) if stss else None
        for i, name in enumerate(["first_invoke", "warm_invoke"]):
            inv = [r["invokes"][i] for r in runs if len(r["invokes"]) > i]
            ms = [x["ms"] for x in inv if x["ms"] is not None]
            row[name + "_ms_median"] = statistics.median(ms) if ms else None
            row[name + "_kinds"] = sorted({x["kind"] for x in inv})
            if inv and any(x["kind"] != "response" for x in inv):
                row.setdefault("error", inv[0]["body"])
        rows.append(row)

    archs = sorted({a for r in rows for a in r["zip_bytes"]})
    head = ["step", "MB"] + ["zip bytes (%s)" % a for a in archs] + [
        "bootstrap bytes",
        "init ms (median)",
        "init ms (min-max)",
        "sts ms",
        "first invoke ms",
        "warm invoke ms",
    ]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
    for r in rows:
        inits = r.get("init_ms_runs") or []
        cells = [r["step"], str(r["memory_mb"])]
        cells += [str(r["zip_bytes"].get(a, "-")) for a in archs]
        cells += [
            str(r.get("bootstrap_bytes", "-")),
            fmt(r.get("init_ms_median")),
            ("%.1f-%.1f" % (min(inits), max(inits))) if inits else "-",
            fmt(r.get("sts_ms_median")),
            fmt(r.get("first_invoke_ms_median")),
            fmt(r.get("warm_invoke_ms_median")),
        ]
        print("| " + " | ".join(cells) + " |")
    print()
    print(
        "runs per step: %d; init = process start -> first /next (fake Runtime API on 127.0.0.1); "
        "sts = process start -> STS GetCallerIdentity arriving (answered locally); invokes: %s"
        % (args.runs, "cleanup-select on an empty bucket of the emulator" if bucket else "none (no emulator)")
    )
    for r in rows:
        if r.get("error"):
            print("%s: %s" % (r["step"], r["error"]))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    server.shutdown()
    return 1 if any(r.get("error") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
