"""Step Functions' payload quota in the emulator's interpreter (`sfn_limits`), against
the emulator `scripts/with-emulator.sh` started, with the interpreter on for each test
and the previous config restored: a state's input or output of up to 262,144 bytes (the
UTF-8 bytes of its compact JSON) passes; a state output or a task result over it fails
with States.DataLimitExceeded, which States.ALL does not catch (a catcher naming it
does)."""
import json
import time
import unittest
from typing import Any

from .support import client, uniq
from .test_sfn_interp import moto_api

LIMIT = 262_144
ERROR = "States.DataLimitExceeded"
CATCH_ALL = [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Caught"}]
CATCH_NAMED = [{"ErrorEquals": [ERROR], "ResultPath": "$.error", "Next": "Caught"}]
CAUGHT = {"Type": "Pass", "Parameters": {"caught.$": "$.error.Error"}, "End": True}


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def padded(size: int, char: str = "x") -> dict[str, str]:
    """`{"s": "..."}` whose compact JSON is exactly `size` UTF-8 bytes."""
    room = size - len(compact({"s": ""}).encode("utf-8"))
    width = len(char.encode("utf-8"))
    value = {"s": char * (room // width) + "x" * (room % width)}
    assert len(compact(value).encode("utf-8")) == size
    return value


class PayloadQuota(unittest.TestCase):
    sfn: Any
    role: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.sfn = client("stepfunctions")
        trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                          "Principal": {"Service": "states.amazonaws.com"}}]}
        cls.role = client("iam").create_role(RoleName=uniq("sfn-limits"),
                                             AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]

    def setUp(self) -> None:
        previous = moto_api("/moto-api/config").get("stepfunctions", {"execute_state_machine": False})
        moto_api("/moto-api/config", {"stepfunctions": {**previous, "execute_state_machine": True}})
        self.addCleanup(moto_api, "/moto-api/config", {"stepfunctions": previous})

    def run_machine(self, definition: dict[str, Any], payload: Any) -> dict[str, Any]:
        arn = self.sfn.create_state_machine(name=uniq("limits"), roleArn=self.role,
                                            definition=json.dumps(definition))["stateMachineArn"]
        execution = self.sfn.start_execution(stateMachineArn=arn, input=compact(payload))["executionArn"]
        deadline = time.monotonic() + 30
        while True:
            described = self.sfn.describe_execution(executionArn=execution)
            if described["status"] != "RUNNING" or time.monotonic() > deadline:
                return described
            time.sleep(0.05)

    def assert_data_limit(self, described: dict[str, Any]) -> None:
        self.assertEqual((described["status"], described.get("error")), ("FAILED", ERROR), described.get("cause"))
        self.assertIn("exceeding the maximum number of bytes service limit", described.get("cause", ""))

    @staticmethod
    def pass_through() -> dict[str, Any]:
        return {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}

    def test_rule_state_output_of_exactly_262144_bytes_passes(self) -> None:
        payload = padded(LIMIT)
        described = self.run_machine(self.pass_through(), payload)
        self.assertEqual(described["status"], "SUCCEEDED", described.get("cause"))
        self.assertEqual(json.loads(described["output"]), payload)

    def test_rule_size_is_counted_in_utf8_bytes_of_compact_json(self) -> None:
        # 2-byte characters: 262,144 bytes of UTF-8 (moto counted them as 6-byte escapes).
        payload = padded(LIMIT, "é")
        described = self.run_machine(self.pass_through(), payload)
        self.assertEqual(described["status"], "SUCCEEDED", described.get("cause"))
        # One byte more is over the quota.
        over = {"StartAt": "P", "States": {"P": {"Type": "Pass", "Parameters": {"s.$": "$.s", "t": "x"},
                                                 "End": True}}}
        self.assert_data_limit(self.run_machine(over, padded(LIMIT - len(',"t":"x"'.encode()) + 1, "é")))

    def test_rule_state_output_over_the_quota_fails_the_execution_whatever_its_catch(self) -> None:
        half = padded(LIMIT // 2 + 100)
        def branch(name: str) -> dict[str, Any]:
            return {"StartAt": name, "States": {name: {"Type": "Pass", "End": True}}}

        for catch in (CATCH_ALL, CATCH_NAMED):
            with self.subTest(catch[0]["ErrorEquals"][0]):
                definition = {"StartAt": "Both", "States": {
                    "Both": {"Type": "Parallel", "Branches": [branch("B1"), branch("B2")], "Catch": catch, "End": True},
                    "Caught": CAUGHT}}
                self.assert_data_limit(self.run_machine(definition, half))

    def task_over_quota(self, catch: list[dict[str, Any]], retry: bool = False) -> dict[str, Any]:
        """A DynamoDB GetItem whose result (an item of 300,000 bytes) is over the quota."""
        ddb, table = client("dynamodb"), uniq("limits")
        ddb.create_table(TableName=table, KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                         AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                         BillingMode="PAY_PER_REQUEST")
        self.addCleanup(ddb.delete_table, TableName=table)
        ddb.put_item(TableName=table, Item={"id": {"S": "big"}, "data": {"S": "x" * 300_000}})
        task: dict[str, Any] = {"Type": "Task", "Resource": "arn:aws:states:::dynamodb:getItem",
                                "Parameters": {"TableName": table, "Key": {"id": {"S": "big"}}},
                                "Catch": catch, "End": True}
        if retry:
            task["Retry"] = [{"ErrorEquals": ["States.ALL"], "MaxAttempts": 2, "IntervalSeconds": 1}]
        return self.run_machine({"StartAt": "Get", "States": {"Get": task, "Caught": CAUGHT}}, {})

    def test_rule_states_all_does_not_catch_a_task_result_over_the_quota(self) -> None:
        self.assert_data_limit(self.task_over_quota(CATCH_ALL))

    def test_rule_states_all_does_not_retry_a_task_result_over_the_quota(self) -> None:
        described = self.task_over_quota(CATCH_ALL, retry=True)
        self.assert_data_limit(described)
        history = self.sfn.get_execution_history(executionArn=described["executionArn"])["events"]
        self.assertEqual(sum(1 for e in history if e["type"] == "TaskScheduled"), 1)

    def test_rule_a_catcher_naming_data_limit_exceeded_catches_a_task_result_over_the_quota(self) -> None:
        described = self.task_over_quota(CATCH_NAMED)
        self.assertEqual(described["status"], "SUCCEEDED", described.get("cause"))
        self.assertEqual(json.loads(described["output"]), {"caught": ERROR})


if __name__ == "__main__":
    unittest.main()
