"""Lambda functions of a custom runtime run for real (`lambda_runtime`, `lambda_sandbox`,
`lambda_invoke`): a process speaks the Lambda Runtime API, is kept warm and reused, more
start when invocations overlap; a function error, a timeout, a process killed or exiting
and an init error answer as Lambda does; the process calls back into the emulator while
the Invoke waits (no deadlock, other requests go on); Event answers 202; IAM asks
`lambda:InvokeFunction` on the function's ARN.

The process is `fake_bootstrap.py` (a custom runtime in Python, see its docstring). The
emulator must run it as `CDKD_FLOW_STEP_BIN`: when this process's own
`CDKD_FLOW_STEP_BIN` names it (`CDKD_FLOW_STEP_BIN=$PWD/scripts/moto_ext/tests/fake_bootstrap.py
scripts/with-emulator.sh ...` gives it to both), the emulator at `AWS_ENDPOINT_URL` is
used; otherwise the tests start an emulator of their own with it
(`scripts/moto_server.py`). The real step binary (`CDKD_FLOW_STEP_BIN` when it names
another file, else `target/debug/cdkd-step`) is run through the fake bootstrap, which
execs it; that test is skipped, saying so, when there is no such binary."""
import io
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from .support import REGION, endpoint, uniq

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
FAKE = HERE / "fake_bootstrap.py"
CONTROL = "/_cdkd_emulator/lambda"
_private: dict[str, Any] = {}


def _given_binary() -> str | None:
    value = os.environ.get("CDKD_FLOW_STEP_BIN")
    return str(Path(value).resolve()) if value else None


def setUpModule() -> None:  # noqa: N802 - unittest's name
    if _given_binary() == str(FAKE):
        _private["url"] = endpoint()
        return
    # An emulator of our own, running the fake bootstrap.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    logs = tempfile.mkdtemp(prefix="lambda-runtime-test-")
    env = dict(os.environ, CDKD_FLOW_STEP_BIN=str(FAKE), CDKD_EMULATOR_LOG_DIR=logs)
    log = open(Path(logs) / "moto.log", "wb")
    proc = subprocess.Popen([sys.executable, str(ROOT / "scripts/moto_server.py"), str(port)],
                            env=env, stdout=log, stderr=subprocess.STDOUT)
    _private.update(proc=proc, log=log, url=f"http://127.0.0.1:{port}", logs=logs)
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/moto-api/", timeout=1).read()
            return
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.1)
    raise RuntimeError(f"the test's emulator did not start; see {logs}/moto.log")


def tearDownModule() -> None:  # noqa: N802
    try:
        control("DELETE", "/processes")
    finally:
        proc = _private.get("proc")
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
            _private["log"].close()


def url() -> str:
    return _private["url"]


def client(service: str, **kwargs: Any) -> Any:
    config = Config(read_timeout=120, retries={"max_attempts": 1})
    return boto3.client(service, endpoint_url=url(), region_name=REGION, config=config, **kwargs)


def control(method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """An unsigned request to the Lambda test facility."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url() + CONTROL + path, data=data, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def moto_config(config: dict[str, Any]) -> None:
    request = urllib.request.Request(url() + "/moto-api/config", data=json.dumps(config).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=10).read()


def invocations(function: str) -> list[dict[str, Any]]:
    return control("GET", f"/invocations?function={function}")[1]["invocations"]


def processes(function: str) -> list[dict[str, Any]]:
    return [p for p in control("GET", "/processes")[1]["processes"] if p["function"] == function]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class LambdaRuntime(unittest.TestCase):
    lam: Any
    role: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.lam = client("lambda")
        trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                         "Principal": {"Service": "lambda.amazonaws.com"}}]}
        cls.role = client("iam").create_role(RoleName=uniq("step-role"),
                                             AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]

    def function(self, handler: str, timeout: int = 10, env: dict[str, str] | None = None) -> str:
        code = io.BytesIO()
        with zipfile.ZipFile(code, "w") as z:
            z.writestr("bootstrap", "#!/bin/sh\nexit 99\n")  # never run: the emulator runs its binary
        name = uniq(f"step-{handler}")
        self.lam.create_function(
            FunctionName=name, Runtime="provided.al2023", Handler=handler, Role=self.role,
            Code={"ZipFile": code.getvalue()}, Timeout=timeout, MemorySize=256,
            Environment={"Variables": dict({"FROM_FUNCTION": "yes"}, **(env or {}))},
        )
        return name

    def invoke(self, name: str, event: Any = None, **kwargs: Any) -> tuple[dict[str, Any], Any]:
        answer = self.lam.invoke(FunctionName=name, Payload=json.dumps(event or {}).encode(), **kwargs)
        raw = answer["Payload"].read()
        return answer, json.loads(raw) if raw else None

    def assert_error(self, answer: dict[str, Any], payload: Any, error_type: str, *needles: str) -> None:
        self.assertEqual(answer["StatusCode"], 200)
        self.assertEqual(answer.get("FunctionError"), "Unhandled")
        self.assertEqual(payload["errorType"], error_type, payload)
        for needle in needles:
            self.assertIn(needle, payload["errorMessage"])

    def test_result_environment_and_logs(self) -> None:
        name = self.function("echo")
        answer, out = self.invoke(name, {"a": 1})
        self.assertEqual(answer["StatusCode"], 200)
        self.assertNotIn("FunctionError", answer)
        self.assertEqual(answer["ExecutedVersion"], "$LATEST")
        self.assertEqual(out["event"], {"a": 1})
        env = out["env"]
        self.assertEqual(env["_HANDLER"], "echo")
        self.assertEqual(env["AWS_LAMBDA_FUNCTION_NAME"], name)
        self.assertEqual(env["AWS_LAMBDA_FUNCTION_VERSION"], "$LATEST")
        self.assertEqual(env["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"], "256")
        self.assertEqual(env["AWS_LAMBDA_LOG_GROUP_NAME"], f"/aws/lambda/{name}")
        self.assertEqual((env["AWS_REGION"], env["AWS_DEFAULT_REGION"], env["TZ"]), (REGION, REGION, ":UTC"))
        self.assertEqual((env["AWS_ENDPOINT_URL"], env["AWS_EC2_METADATA_DISABLED"]), (url(), "true"))
        self.assertEqual(env["FROM_FUNCTION"], "yes")
        self.assertTrue(env["AWS_ACCESS_KEY_ID"].startswith("ASIA"), env)  # the role's, from STS
        self.assertTrue(env["AWS_SESSION_TOKEN"])
        self.assertTrue(Path(env["LAMBDA_TASK_ROOT"], "bootstrap").is_file())  # the zip, unpacked
        self.assertNotIn("CDKD_FLOW_STEP_BIN", env)  # nothing of the emulator's own environment
        self.assertTrue(out["arn"].endswith(f":function:{name}"))
        self.assertAlmostEqual(int(out["deadline"]) / 1000, time.time() + 10, delta=5)
        [row] = invocations(name)
        self.assertEqual((row["error"], row["invocationType"]), (None, "RequestResponse"))
        self.assertEqual(row["pid"], out["pid"])
        events = client("logs").filter_log_events(logGroupName=f"/aws/lambda/{name}")["events"]
        text = "\n".join(e["message"] for e in events)
        self.assertIn(f"START RequestId: {row['requestId']}", text)
        self.assertIn(f"event {row['requestId']}", text)  # the process's own output
        self.assertIn(f"REPORT RequestId: {row['requestId']}", text)

    def test_function_error_is_unhandled_with_the_error_type(self) -> None:
        name = self.function("fail")
        answer, out = self.invoke(name, {"errorType": "StepLocked"})
        self.assert_error(answer, out, "StepLocked", "it failed")
        self.assertEqual(invocations(name)[0]["error"], "StepLocked")
        [process] = processes(name)  # a function error keeps the process
        self.assertEqual(process["state"], "idle")

    def test_warm_process_is_reused(self) -> None:
        name = self.function("echo")
        _, first = self.invoke(name)
        _, second = self.invoke(name)
        self.assertEqual(first["pid"], second["pid"])
        [process] = processes(name)
        self.assertEqual((process["pid"], process["invocations"]), (first["pid"], 2))

    def test_overlapping_invocations_get_processes_of_their_own(self) -> None:
        name = self.function("sleep")
        results: list[Any] = []
        threads = [threading.Thread(target=lambda: results.append(self.invoke(name, {"seconds": 1.5})[1]))
                   for _ in range(2)]
        started = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertLess(time.monotonic() - started, 2.9)  # side by side, not one after the other
        pids = {r["pid"] for r in results}
        self.assertEqual(len(pids), 2)
        _, third = self.invoke(name, {"seconds": 0})
        self.assertIn(third["pid"], pids)

    def test_timeout_kills_the_process(self) -> None:
        name = self.function("sleep", timeout=1)
        started = time.monotonic()
        answer, out = self.invoke(name, {"seconds": 30})
        self.assertLess(time.monotonic() - started, 10)
        self.assert_error(answer, out, "Sandbox.Timedout", "RequestId: ",
                          "Error: Task timed out after 1.00 seconds")
        [row] = invocations(name)
        self.assertFalse(alive(row["pid"]))
        self.assertEqual(processes(name), [])
        # The next invocation starts a new process; a loaded machine may take more than
        # the 1 s timeout to start one, so the timeout is raised first.
        self.lam.update_function_configuration(FunctionName=name, Timeout=10)
        answer, again = self.invoke(name, {"seconds": 0})
        self.assertNotIn("FunctionError", answer, again)
        self.assertNotEqual(again["pid"], row["pid"])

    def test_process_killed_mid_invocation_then_replaced(self) -> None:
        name = self.function("echo")
        _, warm = self.invoke(name)
        status, armed = control("POST", "/kill", {"function": name})
        self.assertEqual((status, armed), (201, {"function": name, "afterMs": 0}))
        answer, out = self.invoke(name)
        self.assert_error(answer, out, "Runtime.ExitError", "Error: Runtime exited with error: signal: killed")
        row = invocations(name)[-1]
        self.assertEqual((row["killed"], row["pid"], row["error"]), (True, warm["pid"], "Runtime.ExitError"))
        self.assertFalse(alive(warm["pid"]))
        answer, again = self.invoke(name, {"b": 2})
        self.assertNotIn("FunctionError", answer)
        self.assertEqual(again["event"], {"b": 2})
        self.assertNotEqual(again["pid"], warm["pid"])

    def test_kill_after_a_delay_and_bad_requests(self) -> None:
        name = self.function("sleep")
        self.assertEqual(control("POST", "/kill", {"function": name, "afterMs": 300})[0], 201)
        self.assertEqual(control("GET", "/kill")[1]["kills"], [{"function": name, "afterMs": 300.0}])
        answer, out = self.invoke(name, {"seconds": 5})
        self.assert_error(answer, out, "Runtime.ExitError", "signal: killed")
        self.assertEqual(control("GET", "/kill")[1]["kills"], [])
        self.assertEqual(control("POST", "/kill", {"afterMs": 1})[0], 400)
        self.assertEqual(control("GET", "/nothing")[0], 404)

    def test_process_exit_and_init_error(self) -> None:
        answer, out = self.invoke(self.function("exit"))
        self.assert_error(answer, out, "Runtime.ExitError", "Runtime exited with error: exit status 3")
        name = self.function("initfail")
        answer, out = self.invoke(name)
        self.assert_error(answer, out, "Runtime.FakeInit", "cannot start")
        self.assertEqual(processes(name), [])  # the environment is dropped

    def test_process_calls_back_into_the_emulator(self) -> None:
        s3 = client("s3")
        bucket = uniq("step-bucket")
        s3.create_bucket(Bucket=bucket)
        name = self.function("s3put")
        answer, out = self.invoke(name, {"bucket": bucket, "key": "cdkd/lock.json", "body": "{\"held\": 1}"})
        self.assertNotIn("FunctionError", answer)
        self.assertEqual(out["put"], 200)
        self.assertEqual(s3.get_object(Bucket=bucket, Key="cdkd/lock.json")["Body"].read(), b"{\"held\": 1}")

    def test_other_requests_go_on_while_a_function_runs(self) -> None:
        name = self.function("sleep")
        worker = threading.Thread(target=self.invoke, args=(name, {"seconds": 2}))
        worker.start()
        try:
            time.sleep(0.5)
            started = time.monotonic()
            client("s3").list_buckets()
            self.assertLess(time.monotonic() - started, 1.0)
        finally:
            worker.join()

    def test_idle_and_stalled_connections_hold_up_no_one(self) -> None:
        """Each connection has a thread of its own and a body is read before the lock is
        taken: a pooled connection that sends nothing and a request whose body stalls do
        not delay another client's request."""
        host, port = url().split("//")[1].split(":")
        idle = socket.create_connection((host, int(port)))
        stalled = socket.create_connection((host, int(port)))
        try:
            stalled.sendall(b"PUT /stalled-bucket/key HTTP/1.1\r\nHost: " + host.encode()
                            + b"\r\nContent-Length: 100\r\n\r\n0123456789")
            time.sleep(0.2)
            started = time.monotonic()
            client("s3").list_buckets()
            self.assertLess(time.monotonic() - started, 1.0)
        finally:
            idle.close()
            stalled.close()

    def test_event_answers_202_and_runs_in_the_background(self) -> None:
        s3 = client("s3")
        bucket = uniq("step-event")
        s3.create_bucket(Bucket=bucket)
        name = self.function("s3put")
        event = {"bucket": bucket, "key": "event.json", "body": "later"}
        answer = self.lam.invoke(FunctionName=name, InvocationType="Event", Payload=json.dumps(event).encode())
        self.assertEqual(answer["StatusCode"], 202)
        for _ in range(100):
            if invocations(name):
                break
            time.sleep(0.1)
        self.assertEqual([(r["invocationType"], r["error"]) for r in invocations(name)], [("Event", None)])
        self.assertEqual(s3.get_object(Bucket=bucket, Key="event.json")["Body"].read(), b"later")
        self.assertEqual(self.lam.invoke(FunctionName=name, InvocationType="DryRun")["StatusCode"], 204)

    def test_step_functions_lambda_task_runs_the_function(self) -> None:
        """moto's Step Functions interpreter (its own threads, calling the emulator over
        HTTP) runs a Lambda Task through the process; a function error's errorType is the
        error a Catch matches."""
        echo, fail = self.function("echo"), self.function("fail")
        arns = {n: self.lam.get_function(FunctionName=n)["Configuration"]["FunctionArn"] for n in (echo, fail)}
        task = "arn:aws:states:::lambda:invoke"
        definition = {"StartAt": "Echo", "States": {
            "Echo": {"Type": "Task", "Resource": task,
                     "Parameters": {"FunctionName": arns[echo], "Payload.$": "$"},
                     "ResultSelector": {"event.$": "$.Payload.event"}, "ResultPath": "$.echo", "Next": "Fail"},
            "Fail": {"Type": "Task", "Resource": task,
                     "Parameters": {"FunctionName": arns[fail], "Payload": {"errorType": "StepLocked"}},
                     "Catch": [{"ErrorEquals": ["StepLocked"], "ResultPath": "$.caught", "Next": "Done"}],
                     "End": True},
            "Done": {"Type": "Pass", "End": True}}}
        sfn = client("stepfunctions")
        previous = json.loads(urllib.request.urlopen(url() + "/moto-api/config", timeout=10).read())
        moto_config({"stepfunctions": {"execute_state_machine": True}})  # (before the machine exists)
        try:
            machine = sfn.create_state_machine(name=uniq("steps"), definition=json.dumps(definition),
                                               roleArn=self.role)["stateMachineArn"]
            execution = sfn.start_execution(stateMachineArn=machine, input=json.dumps({"x": 1}))["executionArn"]
            for _ in range(300):
                described = sfn.describe_execution(executionArn=execution)
                if described["status"] != "RUNNING":
                    break
                time.sleep(0.1)
        finally:
            moto_config({"stepfunctions": previous.get("stepfunctions", {"execute_state_machine": False})})
        self.assertEqual(described["status"], "SUCCEEDED", described)
        output = json.loads(described["output"])
        self.assertEqual(output["echo"]["event"], {"x": 1})
        self.assertEqual(output["caught"]["Error"], "StepLocked")
        self.assertEqual([r["error"] for r in invocations(fail)], ["StepLocked"])

    def test_unknown_function(self) -> None:
        with self.assertRaises(ClientError) as caught:
            self.lam.invoke(FunctionName=uniq("missing"), Payload=b"{}")
        self.assertEqual(caught.exception.response["Error"]["Code"], "ResourceNotFoundException")

    def test_invoke_is_authorized_as_lambda_invoke_function_on_the_function_arn(self) -> None:
        allowed, denied = self.function("echo"), self.function("echo")
        iam = client("iam")
        user = uniq("invoker")
        iam.create_user(UserName=user)
        arn = self.lam.get_function(FunctionName=allowed)["Configuration"]["FunctionArn"]
        policy = {"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": "lambda:InvokeFunction", "Resource": arn}]}
        iam.put_user_policy(UserName=user, PolicyName="invoke", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName=user)["AccessKey"]
        invoker = client("lambda", aws_access_key_id=key["AccessKeyId"],
                         aws_secret_access_key=key["SecretAccessKey"], aws_session_token=None)
        reset = urllib.request.Request(url() + "/moto-api/reset-auth", data=b"0", method="POST",
                                       headers={"Content-Type": "text/plain"})  # not a form
        with urllib.request.urlopen(reset, timeout=10) as answer:
            previous = json.loads(answer.read())["PREVIOUS_INITIAL_NO_AUTH_ACTION_COUNT"]
        try:
            self.assertEqual(invoker.invoke(FunctionName=allowed, Payload=b"{}")["StatusCode"], 200)
            with self.assertRaises(ClientError) as caught:
                invoker.invoke(FunctionName=denied, Payload=b"{}")
        finally:
            restore = urllib.request.Request(url() + "/moto-api/reset-auth", data=str(previous).encode(),
                                             method="POST", headers={"Content-Type": "text/plain"})
            urllib.request.urlopen(restore, timeout=10).read()
        self.assertEqual(caught.exception.response["ResponseMetadata"]["HTTPStatusCode"], 403)
        self.assertIn("lambda:InvokeFunction", caught.exception.response["Error"]["Message"])

    def test_real_step_binary_with_an_unknown_step(self) -> None:
        given = _given_binary()
        real = Path(given) if given and given != str(FAKE) else ROOT / "target/debug/cdkd-step"
        if not real.is_file():
            self.skipTest(f"no cdkd-step binary at {real} (build it, or set CDKD_FLOW_STEP_BIN to one)")
        name = self.function("no-such-step", env={"FAKE_BOOTSTRAP_EXEC": str(real)})
        answer, out = self.invoke(name)
        # The binary exits before it asks for an event, as it would on Lambda.
        self.assert_error(answer, out, "Runtime.ExitError", "Runtime exited with error: exit status 1")
        events = client("logs").filter_log_events(logGroupName=f"/aws/lambda/{name}")["events"]
        self.assertIn("names no step", "\n".join(e["message"] for e in events))


if __name__ == "__main__":
    unittest.main()
