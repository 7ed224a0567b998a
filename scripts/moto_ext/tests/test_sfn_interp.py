"""moto's Step Functions interpreter as AWS runs it (`sfn_interp` and the `sfn_*` modules
beside it), against the emulator `scripts/with-emulator.sh` started, with the
interpreter on (`POST /moto-api/config`) for each test and the previous config restored:
`startExecution.sync:2`/`.sync` (output, a failing child, a stopped parent stopping its
child), unnamed executions named with UUIDs, a JSONPath filter matching nothing, the
real cleanup definition's summary states, `.waitForTaskToken` with SendTaskSuccess and
SendTaskFailure, StopExecution, the status-change events delivered to an SQS target of
an EventBridge rule, the time scale on `Wait` and Retry, the interpreter's requests
signed with the state machine's role under IAM enforcement, a state machine made by
CloudFormation, and (in-process) an EventBridge rule's Lambda target."""
import json
import os
import time
import unittest
import urllib.request
import uuid
from pathlib import Path
from typing import Any, Callable

import boto3

from .support import ACCOUNT, REGION, client, endpoint, uniq

CLEANUP = Path(__file__).resolve().parents[3] / "statemachines" / "cleanup.asl.json"
EXPORT = Path(__file__).resolve().parents[3] / "statemachines" / "export.asl.json"
UUID_LEN = 36


def moto_api(path: str, body: Any = None, raw: bytes | None = None) -> Any:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    # Not form-encoded: moto reads reset-auth's number from the raw body.
    request = urllib.request.Request(endpoint().rstrip("/") + path, data=data,
                                     method="POST" if data is not None else "GET",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        text = answer.read()
    try:
        return json.loads(text)
    except ValueError:
        return text


def eventually(probe: Callable[[], Any], timeout: float = 10.0, step: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(step)


class Interpreter(unittest.TestCase):
    sfn: Any
    iam: Any
    sqs: Any
    events: Any
    role: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.sfn, cls.iam = client("stepfunctions"), client("iam")
        cls.sqs, cls.events = client("sqs"), client("events")
        trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                          "Principal": {"Service": "states.amazonaws.com"}}]}
        cls.trust = json.dumps(trust)
        cls.role = cls.iam.create_role(RoleName=uniq("sfn"), AssumeRolePolicyDocument=cls.trust)["Role"]["Arn"]

    def setUp(self) -> None:
        previous = moto_api("/moto-api/config").get("stepfunctions", {"execute_state_machine": False})
        moto_api("/moto-api/config", {"stepfunctions": {**previous, "execute_state_machine": True}})
        self.addCleanup(moto_api, "/moto-api/config", {"stepfunctions": previous})

    # ---- helpers ----

    def machine(self, definition: dict[str, Any], role: str | None = None, prefix: str = "sm") -> str:
        return self.sfn.create_state_machine(name=uniq(prefix), roleArn=role or self.role,
                                             definition=json.dumps(definition))["stateMachineArn"]

    def start(self, arn: str, payload: Any = None, sfn: Any = None, **extra: Any) -> str:
        return (sfn or self.sfn).start_execution(stateMachineArn=arn, input=json.dumps(payload or {}),
                                                 **extra)["executionArn"]

    def finished(self, execution: str, timeout: float = 15.0, sfn: Any = None) -> dict[str, Any]:
        sfn = sfn or self.sfn

        def probe() -> Any:
            described = sfn.describe_execution(executionArn=execution)
            return described if described["status"] != "RUNNING" else None

        described = eventually(probe, timeout)
        self.assertIsNotNone(described, f"{execution} still RUNNING after {timeout} s")
        return described

    def status_queue(self, machines: list[str], statuses: list[str] | None = None) -> str:
        """An SQS queue that an EventBridge rule on the default bus feeds with the
        status-change events of these state machines."""
        url = self.sqs.create_queue(QueueName=uniq("sfn-events"))["QueueUrl"]
        queue_arn = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        detail: dict[str, Any] = {"stateMachineArn": machines}
        if statuses:
            detail["status"] = statuses
        rule = uniq("sfn-status")
        self.events.put_rule(Name=rule, EventPattern=json.dumps({
            "source": ["aws.states"], "detail-type": ["Step Functions Execution Status Change"], "detail": detail,
        }))
        self.events.put_targets(Rule=rule, Targets=[{"Id": "queue", "Arn": queue_arn}])
        self.addCleanup(self.events.delete_rule, Name=rule)
        self.addCleanup(self.events.remove_targets, Rule=rule, Ids=["queue"])
        return url

    def received(self, url: str, count: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        """`count` events from the queue (short polls: the emulator serves one request at a time)."""
        events: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while len(events) < count and time.monotonic() < deadline:
            answer = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)
            for message in answer.get("Messages", []):
                events.append(json.loads(message["Body"]))
                self.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
            if len(events) < count:
                time.sleep(0.05)
        return events

    # ---- startExecution.sync:2 / .sync ----

    def test_sync2_returns_the_child_output_as_json(self) -> None:
        child = self.machine({"StartAt": "P", "States": {"P": {"Type": "Pass", "Parameters": {
            "got.$": "$", "name.$": "$$.Execution.Name", "id.$": "$$.Execution.Id"}, "End": True}}})
        parent = self.machine({"StartAt": "Sync2", "States": {
            "Sync2": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2",
                      "Parameters": {"StateMachineArn": child, "Input.$": "$"},
                      "ResultSelector": {"executionArn.$": "$.ExecutionArn", "output.$": "$.Output",
                                         "status.$": "$.Status", "input.$": "$.Input"},
                      "ResultPath": "$.two", "Next": "Sync"},
            "Sync": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync",
                     "Parameters": {"StateMachineArn": child, "Input": {"k": 2}},
                     "ResultSelector": {"output.$": "$.Output"}, "ResultPath": "$.one", "End": True}}})
        described = self.finished(self.start(parent, {"k": 1}))
        self.assertEqual(described["status"], "SUCCEEDED", described)
        output = json.loads(described["output"])
        two = output["two"]
        self.assertEqual(two["status"], "SUCCEEDED")
        self.assertEqual(two["input"], {"k": 1})
        self.assertTrue(two["executionArn"].startswith(child.replace(":stateMachine:", ":execution:") + ":"))
        self.assertEqual(two["output"]["got"], {"k": 1})
        self.assertEqual(two["output"]["id"], two["executionArn"])
        self.assertEqual(len(two["output"]["name"]), UUID_LEN)
        # .sync: Output is the JSON string DescribeExecution answers.
        self.assertIsInstance(output["one"]["output"], str)
        self.assertEqual(json.loads(output["one"]["output"])["got"], {"k": 2})

    def test_sync2_failing_child_fails_the_task(self) -> None:
        child = self.machine({"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "Boom", "Cause": "bad"}}})
        parent = self.machine({"StartAt": "Sync2", "States": {
            "Sync2": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2",
                      "Parameters": {"StateMachineArn": child, "Input.$": "$"},
                      "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Caught"}],
                      "End": True},
            "Caught": {"Type": "Pass", "End": True}}})
        described = self.finished(self.start(parent, {"stack": "s1"}))
        self.assertEqual(described["status"], "SUCCEEDED", described)
        error = json.loads(described["output"])["error"]
        self.assertEqual(error["Error"], "States.TaskFailed")
        cause = json.loads(error["Cause"])
        self.assertEqual((cause["Status"], cause["Error"], cause["Cause"]), ("FAILED", "Boom", "bad"))
        self.assertEqual(cause["Input"], {"stack": "s1"})

    def test_stopping_the_parent_stops_the_sync_child(self) -> None:
        child = self.machine({"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 100, "End": True}}})
        parent = self.machine({"StartAt": "Sync2", "States": {
            "Sync2": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2",
                      "Parameters": {"StateMachineArn": child}, "End": True}}})
        execution = self.start(parent)
        children = eventually(lambda: self.sfn.list_executions(stateMachineArn=child)["executions"])
        self.assertTrue(children)
        self.sfn.stop_execution(executionArn=execution)
        self.assertEqual(self.finished(execution, timeout=1)["status"], "ABORTED")
        self.assertEqual(self.finished(children[0]["executionArn"], timeout=5)["status"], "ABORTED")

    # ---- names, paths, the real cleanup definition ----

    def test_unnamed_executions_get_uuid_names(self) -> None:
        arn = self.machine({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}})
        first, second = self.start(arn), self.start(arn)
        names = {self.finished(e)["name"] for e in (first, second)}
        self.assertEqual(len(names), 2)
        for name in names:
            self.assertEqual(str(uuid.UUID(name)), name)
            self.assertNotEqual(name, "None")

    def test_filter_matching_nothing_is_an_empty_list(self) -> None:
        arn = self.machine({"StartAt": "Collect", "States": {"Collect": {"Type": "Pass", "Parameters": {
            "succeeded.$": "$.results[?(@.status == 'SUCCEEDED')]",
            "failed.$": "$.results[?(@.status == 'FAILED')]",
            "none.$": "$.empty[?(@.status == 'FAILED')]",
            "stacks.$": "$.empty[*].stack"}, "End": True}}})
        described = self.finished(self.start(arn, {"results": [{"status": "SUCCEEDED", "stack": "a"}], "empty": []}))
        self.assertEqual(described["status"], "SUCCEEDED", described)
        self.assertEqual(json.loads(described["output"]), {
            "succeeded": [{"status": "SUCCEEDED", "stack": "a"}], "failed": [], "none": [], "stacks": []})

    def cleanup_summary(self, start: str = "Summary") -> str:
        """cleanup.asl.json from its Summary (or Failed) state on, as written (Notify, a
        Lambda task, replaced by a Pass with its ResultPath)."""
        definition = json.loads(CLEANUP.read_text())
        states = {k: v for k, v in definition["States"].items()
                  if k in ("Summary", "Failed", "AnyFailed", "Done", "Incomplete", "CleanupIncomplete",
                           "CleanupFailed")}
        states["Notify"] = {"Type": "Pass", "ResultPath": None, "Next": "AnyFailed"}
        return self.machine({"StartAt": start, "States": states}, prefix="cleanup")

    def test_cleanup_summary_states(self) -> None:
        arn = self.cleanup_summary()
        # What the last Record turn hands on: counts and keys, never the lists.
        turn = {"runId": "r", "selectedCount": 2, "skippedCount": 0, "succeededCount": 2, "failedCount": 0,
                "failedStacks": [], "selectionKey": "p/_runs/r/selection.json", "resultsKey": "p/_runs/r/results.json"}
        done = self.finished(self.start(arn, turn))
        self.assertEqual(done["status"], "SUCCEEDED", done)
        summary = json.loads(done["output"])
        self.assertEqual((summary["succeededCount"], summary["failedCount"], summary["dryRun"]), (2, 0, False))
        failed = self.finished(self.start(arn, {**turn, "succeededCount": 1, "failedCount": 1, "failedStacks": ["b"]}))
        self.assertEqual((failed["status"], failed.get("error")), ("FAILED", "CleanupIncomplete"), failed)
        cause = json.loads(failed["cause"])
        self.assertEqual(cause["failedStacks"], ["b"])
        self.assertEqual((cause["selectedCount"], cause["succeededCount"], cause["failedCount"]), (2, 1, 1))
        self.assertTrue(cause["message"].startswith("1 of 2 selected stacks were not destroyed"))

    def test_cleanup_failed_step_tells_the_digest_then_fails_with_its_error(self) -> None:
        arn = self.cleanup_summary(start="Failed")
        failed = self.finished(self.start(arn, {"failure": {"Error": "States.DataLimitExceeded", "Cause": "too big"}}))
        self.assertEqual((failed["status"], failed.get("error"), failed.get("cause")),
                         ("FAILED", "CleanupFailed", "States.DataLimitExceeded: too big"), failed)

    def test_a_continuation_started_and_ended_already_ends_the_execution_as_continued(self) -> None:
        """export.asl.json's StartContinuation and ContinuedAsNew as written (Abort, a
        Lambda task, replaced by a Fail): the execution the run continues in exists and
        has ended (a retried start whose first attempt started it): ExecutionAlreadyExists
        is caught and the execution ends as continued, never in the abort."""
        definition = json.loads(EXPORT.read_text())
        states = {k: v for k, v in definition["States"].items() if k in ("StartContinuation", "ContinuedAsNew")}
        states["Abort"] = {"Type": "Fail", "Error": "Aborted"}
        arn = self.machine({"StartAt": "StartContinuation", "States": states}, prefix="continue")
        name = uniq("run") + "--2"
        carried = {"carry": {"run": {"runId": "r"}}}
        # The continuation itself, started with its input: it has no continuation of its
        # own to start, so it ends at once (failed), closed.
        first = self.finished(self.start(arn, carried, name=name))
        self.assertNotEqual(first["status"], "RUNNING")
        again = self.finished(self.start(arn, {**carried, "continuation": {"name": name, "input": carried}}))
        self.assertEqual(again["status"], "SUCCEEDED", again)
        self.assertEqual(json.loads(again["output"]), {"runId": "r", "continuedAs": name})

    # ---- the destroy and export definitions' Fail states ----

    def fail_chain(self, definition: dict[str, Any], caught: str, step: dict[str, Any]) -> str:
        """`step` (a Task whose Catch, or a Pass whose Result, puts the error at $.error)
        going where the definition's `caught` state (a `<Fail state>Report` or `Abort`)
        goes next, then every state from there on as written (its Choice and Fail
        states)."""
        entry = definition["States"][caught]["Next"]
        states: dict[str, Any] = {}
        todo = [entry]
        while todo:
            name = todo.pop()
            if name in states:
                continue
            state = states[name] = definition["States"][name]
            todo += [n for n in [state.get("Next"), state.get("Default")] if n]
            todo += [c["Next"] for c in state.get("Choices", [])]
        if step["Type"] == "Pass":
            step = {**step, "ResultPath": "$.error", "Next": entry}
        else:
            step = {**step, "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": entry}],
                    "End": True}
        return self.machine({"StartAt": "Step", "States": {"Step": step, **states}}, prefix="fail")

    def check_fail_states(self, file: str, fails: dict[str, str]) -> None:
        """docs/runs.md, "A run's error and cause": a step's error named States.* (a .sync
        child that failed: States.TaskFailed; a task past its TimeoutSeconds:
        States.Timeout) ends the execution with the Fail state's own name (`fails`: the
        state the Catch went to -> that name), the caught error and cause in the cause;
        the step's own error (LockHeld) ends it as it was caught."""
        failing = self.machine({"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "Refused",
                                                                 "Cause": "the stack is not ours"}}})
        slow = self.machine({"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 5, "End": True}}})
        sync = "arn:aws:states:::states:startExecution.sync:2"
        task_failed = {"Type": "Task", "Resource": sync, "Parameters": {"StateMachineArn": failing}}
        timeout = {"Type": "Task", "Resource": sync, "Parameters": {"StateMachineArn": slow}, "TimeoutSeconds": 1}
        own = {"Type": "Pass", "Result": {"Error": "LockHeld", "Cause": "held by ci"}}
        definition = json.loads((CLEANUP.parent / file).read_text())
        for caught, name in fails.items():
            with self.subTest(caught=caught):
                described = self.finished(self.start(self.fail_chain(definition, caught, task_failed)))
                self.assertEqual((described["status"], described.get("error")), ("FAILED", name), described)
                error, _, cause = described["cause"].partition(": ")
                self.assertEqual(error, "States.TaskFailed", described)
                child = json.loads(cause)
                self.assertEqual((child["Error"], child["Cause"]), ("Refused", "the stack is not ours"))
                held = self.finished(self.start(self.fail_chain(definition, caught, own)))
                self.assertEqual((held["status"], held.get("error"), held.get("cause")),
                                 ("FAILED", "LockHeld", "held by ci"), held)
        # A task past its TimeoutSeconds, once per definition.
        caught, name = next(iter(fails.items()))
        described = self.finished(self.start(self.fail_chain(definition, caught, timeout)), timeout=20)
        self.assertEqual((described["status"], described.get("error")), ("FAILED", name), described)
        self.assertTrue(described["cause"].startswith("States.Timeout: "), described)

    def test_destroy_ends_a_caught_states_error_with_its_own_name_and_the_error_in_the_cause(self) -> None:
        self.check_fail_states("destroy.asl.json", {"PlanFailedReport": "PlanFailed", "Abort": "DestroyFailed"})

    def test_export_ends_a_caught_states_error_with_its_own_name_and_the_error_in_the_cause(self) -> None:
        self.check_fail_states("export.asl.json", {
            "LockFailedReport": "LockFailed", "ResumeFailedReport": "ResumeFailed", "PlanFailedReport": "PlanFailed",
            "ApprovalFailedReport": "ApprovalFailed", "ApprovalRejectedReport": "ApprovalRejected",
            "Abort": "ExportFailed"})

    # ---- .waitForTaskToken ----

    def token_machine(self) -> tuple[str, str]:
        """A parent whose task waits for the token it hands a child execution's input."""
        child = self.machine({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}})
        parent = self.machine({"StartAt": "Approval", "States": {
            "Approval": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.waitForTaskToken",
                         "Parameters": {"StateMachineArn": child,
                                        "Input": {"token.$": "$$.Task.Token", "execution.$": "$$.Execution.Id"}},
                         "ResultPath": "$.approval", "TimeoutSeconds": 604800,
                         "Catch": [{"ErrorEquals": ["Rejected"], "ResultPath": "$.error", "Next": "Rejected"}],
                         "End": True},
            "Rejected": {"Type": "Fail", "ErrorPath": "$.error.Error", "CausePath": "$.error.Cause"}}})
        return child, parent

    def token_of(self, child: str, parent_execution: str) -> str:
        children = eventually(lambda: self.sfn.list_executions(stateMachineArn=child)["executions"])
        child_input = json.loads(self.sfn.describe_execution(executionArn=children[0]["executionArn"])["input"])
        self.assertEqual(child_input["execution"], parent_execution)
        return child_input["token"]

    def test_wait_for_task_token_success_and_failure(self) -> None:
        child, parent = self.token_machine()
        approved = self.start(parent)
        self.sfn.send_task_success(taskToken=self.token_of(child, approved), output=json.dumps({"ok": True}))
        described = self.finished(approved)
        self.assertEqual(json.loads(described["output"])["approval"], {"ok": True})
        child, parent = self.token_machine()
        rejected = self.start(parent)
        self.sfn.send_task_failure(taskToken=self.token_of(child, rejected), error="Rejected", cause="no, thanks")
        described = self.finished(rejected)
        self.assertEqual((described["status"], described.get("error"), described.get("cause")),
                         ("FAILED", "Rejected", "no, thanks"))

    # ---- StopExecution and the status-change events ----

    def test_stop_execution_aborts_at_once_and_the_event_reaches_sqs(self) -> None:
        arn = self.machine({"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 100, "End": True}}})
        queue = self.status_queue([arn], ["ABORTED", "TIMED_OUT"])
        execution = self.start(arn, {"stack": "s"})
        stopped = self.sfn.stop_execution(executionArn=execution, error="Stopped", cause="runs stop --now")
        self.assertIn("stopDate", stopped)
        described = self.sfn.describe_execution(executionArn=execution)
        self.assertEqual((described["status"], described["error"], described["cause"]),
                         ("ABORTED", "Stopped", "runs stop --now"))
        events = self.received(queue, 1)
        self.assertEqual(len(events), 1, events)
        event = events[0]
        self.assertEqual((event["source"], event["detail-type"], event["account"], event["region"]),
                         ("aws.states", "Step Functions Execution Status Change", ACCOUNT, REGION))
        self.assertEqual(event["resources"], [execution])
        detail = event["detail"]
        self.assertEqual((detail["executionArn"], detail["stateMachineArn"], detail["status"]),
                         (execution, arn, "ABORTED"))
        self.assertEqual(detail["name"], execution.rsplit(":", 1)[1])
        self.assertEqual(json.loads(detail["input"]), {"stack": "s"})
        self.assertIsNone(detail["output"])
        self.assertEqual(detail["stopDate"], int(described["stopDate"].timestamp() * 1000))
        self.assertLessEqual(detail["startDate"], detail["stopDate"])
        # Nothing more: the interpreter thread's own end does not send a second event.
        time.sleep(0.3)
        self.assertEqual(self.received(queue, 1, timeout=0.3), [])

    def test_timed_out_execution_and_its_event(self) -> None:
        arn = self.machine({"TimeoutSeconds": 1, "StartAt": "W",
                            "States": {"W": {"Type": "Wait", "Seconds": 100, "End": True}}})
        queue = self.status_queue([arn], ["ABORTED", "TIMED_OUT"])
        execution = self.start(arn)
        described = self.finished(execution, timeout=5)
        self.assertEqual(described["status"], "TIMED_OUT")
        self.assertIn("stopDate", described)
        events = self.received(queue, 1)
        self.assertEqual([e["detail"]["status"] for e in events], ["TIMED_OUT"])
        self.assertEqual(events[0]["detail"]["stopDate"], int(described["stopDate"].timestamp() * 1000))

    def test_succeeded_and_failed_events(self) -> None:
        good = self.machine({"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": {"done": 1}, "End": True}}})
        bad = self.machine({"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "Nope", "Cause": "why"}}})
        queue = self.status_queue([good, bad])
        first, second = self.start(good), self.start(bad)
        self.finished(first), self.finished(second)
        events = self.received(queue, 4)
        seen = {(e["detail"]["executionArn"], e["detail"]["status"]): e["detail"] for e in events}
        self.assertEqual(set(seen), {(first, "RUNNING"), (first, "SUCCEEDED"), (second, "RUNNING"), (second, "FAILED")})
        self.assertIsNone(seen[(first, "RUNNING")]["stopDate"])
        self.assertEqual(json.loads(seen[(first, "SUCCEEDED")]["output"]), {"done": 1})
        failed = seen[(second, "FAILED")]
        self.assertEqual((failed["error"], failed["cause"], failed["output"]), ("Nope", "why", None))
        order = [e["detail"]["status"] for e in events if e["detail"]["executionArn"] == first]
        self.assertEqual(order, ["RUNNING", "SUCCEEDED"])

    # ---- the time scale ----

    def test_time_scale_shortens_wait_and_retry_backoff(self) -> None:
        current = moto_api("/moto-api/config")["stepfunctions"]
        moto_api("/moto-api/config", {"stepfunctions": {**current, "time_scale": 0.001}})
        failing = self.machine({"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "Flaky"}}})
        arn = self.machine({"StartAt": "W", "States": {
            "W": {"Type": "Wait", "Seconds": 100, "Next": "Retried"},
            "Retried": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2",
                        "Parameters": {"StateMachineArn": failing},
                        "Retry": [{"ErrorEquals": ["States.TaskFailed"], "IntervalSeconds": 60,
                                   "MaxAttempts": 2, "BackoffRate": 2}],
                        "End": True}}})
        started = time.monotonic()
        described = self.finished(self.start(arn), timeout=15)
        self.assertLess(time.monotonic() - started, 10)
        self.assertEqual((described["status"], described.get("error")), ("FAILED", "States.TaskFailed"))
        self.assertEqual(len(self.sfn.list_executions(stateMachineArn=failing)["executions"]), 3)

    # ---- the state machine's role signs the interpreter's requests ----

    def test_tasks_run_as_the_state_machine_role(self) -> None:
        child = self.machine({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}})
        task = {"StartAt": "Start", "States": {"Start": {
            "Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2",
            "Parameters": {"StateMachineArn": child}, "End": True}}}
        allowed_role = self.iam.create_role(RoleName=uniq("sfn-ok"), AssumeRolePolicyDocument=self.trust)["Role"]
        self.iam.put_role_policy(RoleName=allowed_role["RoleName"], PolicyName="nested", PolicyDocument=json.dumps({
            "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Resource": "*", "Action": [
                "states:StartExecution", "states:DescribeExecution", "states:StopExecution"]}]}))
        denied_role = self.iam.create_role(RoleName=uniq("sfn-no"), AssumeRolePolicyDocument=self.trust)["Role"]
        self.iam.put_role_policy(RoleName=denied_role["RoleName"], PolicyName="other", PolicyDocument=json.dumps({
            "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Resource": "*",
                                                    "Action": ["states:DescribeExecution"]}]}))
        allowed = self.machine(task, role=allowed_role["Arn"])
        denied = self.machine(task, role=denied_role["Arn"])
        admin = self.iam.create_user(UserName=uniq("sfn-admin"))["User"]["UserName"]
        self.iam.put_user_policy(UserName=admin, PolicyName="admin", PolicyDocument=json.dumps({
            "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
        key = self.iam.create_access_key(UserName=admin)["AccessKey"]
        sfn = boto3.client("stepfunctions", endpoint_url=endpoint(), region_name=REGION,
                           aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"])
        moto_api("/moto-api/reset-auth", raw=b"0")
        self.addCleanup(moto_api, "/moto-api/reset-auth", raw=b"1000000000")
        refused = self.finished(self.start(denied, sfn=sfn), sfn=sfn)
        self.assertEqual(refused["status"], "FAILED", refused)
        self.assertIn("AccessDenied", refused.get("error", ""))
        self.assertIn("states:StartExecution", refused.get("cause", ""))
        ran = self.finished(self.start(allowed, sfn=sfn), sfn=sfn)
        self.assertEqual(ran["status"], "SUCCEEDED", ran)

    # ---- CloudFormation ----

    def test_state_machine_made_by_cloudformation_runs(self) -> None:
        cfn = client("cloudformation")
        stack = uniq("sfn-stack")
        cfn.create_stack(StackName=stack, TemplateBody=json.dumps({"Resources": {"Machine": {
            "Type": "AWS::StepFunctions::StateMachine",
            "Properties": {"RoleArn": self.role, "DefinitionString": json.dumps(
                {"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": "ran", "End": True}}})}}}}))
        self.addCleanup(cfn.delete_stack, StackName=stack)
        arn = cfn.describe_stack_resource(StackName=stack, LogicalResourceId="Machine")[
            "StackResourceDetail"]["PhysicalResourceId"]
        described = self.finished(self.start(arn))
        self.assertEqual((described["status"], described["output"]), ("SUCCEEDED", '"ran"'))


class LambdaTargets(unittest.TestCase):
    """In-process: an EventBridge rule's Lambda target gets the event through
    `lambda_runtime.invoke(..., invocation_type="Event")` (a stand-in here)."""

    def test_rule_delivers_status_event_to_lambda(self) -> None:
        from moto.events.models import events_backends

        from moto_ext import lambda_runtime, sfn_eventbridge, sfn_events

        sfn_eventbridge.install()
        calls: list[tuple[Any, ...]] = []

        def stand_in(account: str, region: str, function: str, payload: bytes, invocation_type: str = "") -> Any:
            calls.append((account, region, function, json.loads(payload), invocation_type))
            return 202, {}, b""

        original = getattr(lambda_runtime, "invoke", None)
        lambda_runtime.invoke = stand_in  # type: ignore[attr-defined]
        self.addCleanup(lambda: setattr(lambda_runtime, "invoke", original) if original else delattr(lambda_runtime, "invoke"))
        account, region = "111122223333", "eu-west-1"
        backend = events_backends[account][region]
        pattern = json.dumps({"source": ["aws.states"], "detail-type": ["Step Functions Execution Status Change"],
                              "detail": {"status": ["ABORTED", "TIMED_OUT"]}})
        function = f"arn:aws:lambda:{region}:{account}:function:run-ended"
        backend.put_rule("run-ended", event_pattern=pattern, state="ENABLED", description=None, role_arn=None,
                         scheduled_expression=None, tags=[], event_bus_arn=None)
        backend.put_targets("run-ended", "default", [{"Id": "fn", "Arn": function}])
        backend.put_rule("disabled", event_pattern=pattern, state="DISABLED", description=None, role_arn=None,
                         scheduled_expression=None, tags=[], event_bus_arn=None)
        backend.put_targets("disabled", "default", [{"Id": "fn", "Arn": function + "-x"}])
        execution = f"arn:aws:states:{region}:{account}:execution:m:e1"
        for status in ("SUCCEEDED", "ABORTED"):
            sfn_events.deliver(account, region, {"executionArn": execution, "status": status, "name": "e1"})
        self.assertEqual(len(calls), 1, calls)
        got_account, got_region, got_function, event, invocation_type = calls[0]
        self.assertEqual((got_account, got_region, got_function, invocation_type), (account, region, function, "Event"))
        self.assertEqual((event["source"], event["detail"]["status"], event["resources"]), ("aws.states", "ABORTED", [execution]))
        self.assertRegex(event["time"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


if __name__ == "__main__":
    unittest.main()
