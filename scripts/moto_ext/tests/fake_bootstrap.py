#!/usr/bin/env python3
"""A tiny custom runtime for the Lambda runtime tests (test_lambda_runtime.py): it speaks
the Lambda Runtime API at `AWS_LAMBDA_RUNTIME_API` as a real bootstrap does, with the
standard library only. `_HANDLER` picks what it does with each event:

- `echo`: answers `{"event", "pid", "env"}` (the event, its pid, the Lambda variables it
  was given);
- `fail`: posts a function error of type `event["errorType"]` (default `StepFailed`);
- `sleep`: sleeps `event["seconds"]`, then answers `{"slept", "pid"}`;
- `s3put`: writes `event["body"]` to `s3://event["bucket"]/event["key"]` on the emulator
  (`AWS_ENDPOINT_URL`, signed with SigV4 and the execution role's credentials from the
  environment), then answers `{"put", "pid"}`;
- `initfail`: posts an init error (`Runtime.FakeInit`) and exits 1;
- `exit`: exits with status 3 when it gets the event;
- anything else: exits 2 before asking for an event.

With `FAKE_BOOTSTRAP_EXEC` in the function's environment it execs that binary instead
(the real `cdkd-step`), same process, same environment."""
import hashlib
import hmac
import json
import os
import sys
import time
import urllib.parse
import urllib.request

API = "http://%s/2018-06-01/runtime" % os.environ["AWS_LAMBDA_RUNTIME_API"]
HANDLER = os.environ.get("_HANDLER", "")
SEEN = [
    "_HANDLER", "AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_FUNCTION_VERSION",
    "AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "AWS_LAMBDA_LOG_GROUP_NAME", "AWS_LAMBDA_LOG_STREAM_NAME",
    "AWS_REGION", "AWS_DEFAULT_REGION", "LAMBDA_TASK_ROOT", "TZ", "AWS_ACCESS_KEY_ID",
    "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_EC2_METADATA_DISABLED", "FROM_FUNCTION",
    "AWS_PROFILE", "CDKD_FLOW_STEP_BIN",
]


def post(path, doc, headers=None):
    data = json.dumps(doc).encode()
    req = urllib.request.Request(API + path, data=data, method="POST",
                                 headers=dict({"Content-Type": "application/json"}, **(headers or {})))
    with urllib.request.urlopen(req, timeout=30) as answer:
        answer.read()


def s3put(event):
    """PUT on the emulator, signed (SigV4) with the credentials of the environment."""
    endpoint = urllib.parse.urlsplit(os.environ["AWS_ENDPOINT_URL"])
    region = os.environ["AWS_REGION"]
    amz_date = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = "/%s/%s" % (event["bucket"], urllib.parse.quote(event["key"], safe="/~"))
    headers = {
        "host": endpoint.netloc, "x-amz-content-sha256": "UNSIGNED-PAYLOAD",
        "x-amz-date": amz_date, "x-amz-security-token": os.environ["AWS_SESSION_TOKEN"],
    }
    signed = ";".join(sorted(headers))
    canonical = "\n".join(["PUT", path, "", "".join("%s:%s\n" % (k, headers[k]) for k in sorted(headers)),
                           signed, "UNSIGNED-PAYLOAD"])
    scope = "%s/%s/s3/aws4_request" % (amz_date[:8], region)
    digest = hashlib.sha256(canonical.encode()).hexdigest()
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, digest])
    key = ("AWS4" + os.environ["AWS_SECRET_ACCESS_KEY"]).encode()
    for part in (amz_date[:8], region, "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["Content-Type"] = "application/octet-stream"  # urllib would say it is a form
    headers["Authorization"] = "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s" % (
        os.environ["AWS_ACCESS_KEY_ID"], scope, signed, signature)
    del headers["host"]
    req = urllib.request.Request("%s://%s%s" % (endpoint.scheme, endpoint.netloc, path),
                                 data=event["body"].encode(), method="PUT", headers=headers)
    with urllib.request.urlopen(req, timeout=30) as answer:
        return answer.status


def main():
    real = os.environ.get("FAKE_BOOTSTRAP_EXEC")
    if real:
        os.execv(real, [real])  # the real binary, in this very process, environment and Runtime API
    print("fake bootstrap %d starting as %s" % (os.getpid(), HANDLER), flush=True)
    if HANDLER == "initfail":
        post("/init/error", {"errorType": "Runtime.FakeInit", "errorMessage": "cannot start"},
             {"Lambda-Runtime-Function-Error-Type": "Runtime.FakeInit"})
        sys.exit(1)
    if HANDLER not in ("echo", "fail", "sleep", "s3put", "exit"):
        print("no such handler: %s" % HANDLER, file=sys.stderr, flush=True)
        sys.exit(2)
    while True:
        with urllib.request.urlopen(API + "/invocation/next") as answer:
            request_id = answer.headers["Lambda-Runtime-Aws-Request-Id"]
            deadline = answer.headers["Lambda-Runtime-Deadline-Ms"]
            arn = answer.headers["Lambda-Runtime-Invoked-Function-Arn"]
            event = json.loads(answer.read() or b"null")
        print("event %s for %s" % (request_id, arn), flush=True)
        if HANDLER == "exit":
            sys.exit(3)
        if HANDLER == "fail":
            kind = (event or {}).get("errorType", "StepFailed")
            post("/invocation/%s/error" % request_id, {"errorType": kind, "errorMessage": "it failed"},
                 {"Lambda-Runtime-Function-Error-Type": "Unhandled"})
            continue
        if HANDLER == "sleep":
            time.sleep(float(event.get("seconds", 0)))
            result = {"slept": event.get("seconds"), "pid": os.getpid()}
        elif HANDLER == "s3put":
            result = {"put": s3put(event), "pid": os.getpid()}
        else:
            env = {k: os.environ[k] for k in SEEN if k in os.environ}
            result = {"event": event, "pid": os.getpid(), "env": env, "deadline": deadline, "arn": arn}
        post("/invocation/%s/response" % request_id, result)


if __name__ == "__main__":
    main()
