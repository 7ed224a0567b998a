"""Step Functions' execution history limit in the emulator's interpreter
(`sfn_history`), lowered for the test through moto's config (`history_limit`): a loop
fails at event number `limit` with States.Runtime, "The execution reached the maximum
number of history events (<limit>)."; an execution whose event number `limit` is
ExecutionSucceeded succeeds."""
import json
import time
import unittest
from typing import Any

from .support import client, uniq
from .test_sfn_interp import moto_api

LOOP = {
    "StartAt": "Count",
    "States": {
        "Count": {"Type": "Pass", "Parameters": {"n.$": "States.MathAdd($.n, 1)", "until.$": "$.until"},
                  "Next": "More"},
        "More": {"Type": "Choice", "Choices": [{"Variable": "$.n", "NumericLessThanPath": "$.until", "Next": "Count"}],
                 "Default": "Done"},
        "Done": {"Type": "Succeed"},
    },
}


class HistoryLimit(unittest.TestCase):
    sfn: Any
    role: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.sfn = client("stepfunctions")
        trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                          "Principal": {"Service": "states.amazonaws.com"}}]}
        cls.role = client("iam").create_role(RoleName=uniq("sfn-history"),
                                             AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]

    def limit(self, limit: int) -> None:
        previous = moto_api("/moto-api/config").get("stepfunctions", {"execute_state_machine": False})
        moto_api("/moto-api/config", {"stepfunctions": {**previous, "execute_state_machine": True,
                                                        "history_limit": limit}})
        self.addCleanup(moto_api, "/moto-api/config", {"stepfunctions": previous})

    def run_loop(self, until: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        arn = self.sfn.create_state_machine(name=uniq("history"), roleArn=self.role,
                                            definition=json.dumps(LOOP))["stateMachineArn"]
        execution = self.sfn.start_execution(stateMachineArn=arn,
                                             input=json.dumps({"n": 0, "until": until}))["executionArn"]
        deadline = time.monotonic() + 30
        while True:
            described = self.sfn.describe_execution(executionArn=execution)
            if described["status"] != "RUNNING" or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        events = self.sfn.get_execution_history(executionArn=execution, maxResults=1000)["events"]
        return described, events

    def test_rule_a_loop_fails_at_event_number_limit_with_states_runtime(self) -> None:
        self.limit(50)
        described, events = self.run_loop(100_000)
        cause = "The execution reached the maximum number of history events (50)."
        self.assertEqual((described["status"], described.get("error"), described.get("cause")),
                         ("FAILED", "States.Runtime", cause))
        self.assertEqual(len(events), 50)
        last = events[-1]
        self.assertEqual((last["id"], last["type"]), (50, "ExecutionFailed"))
        self.assertEqual(last["executionFailedEventDetails"], {"error": "States.Runtime", "cause": cause})
        self.assertNotIn("ExecutionFailed", [e["type"] for e in events[:-1]])

    def test_rule_an_execution_whose_event_number_limit_is_its_success_succeeds(self) -> None:
        self.limit(1000)
        described, events = self.run_loop(3)
        self.assertEqual(described["status"], "SUCCEEDED")
        size = len(events)
        self.limit(size)
        described, _ = self.run_loop(3)
        self.assertEqual(described["status"], "SUCCEEDED", described.get("cause"))
        self.limit(size - 1)
        described, _ = self.run_loop(3)
        self.assertEqual((described["status"], described.get("error")), ("FAILED", "States.Runtime"))


if __name__ == "__main__":
    unittest.main()
