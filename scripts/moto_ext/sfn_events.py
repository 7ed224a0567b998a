"""The "Step Functions Execution Status Change" events, as AWS documents them
(https://docs.aws.amazon.com/step-functions/latest/dg/eventbridge-integration.html,
formerly cw-events.html): sent for standard workflows to the default event bus of the
execution's account and region, one when an execution starts (RUNNING) and one when it
ends (SUCCEEDED, FAILED, TIMED_OUT, ABORTED). `sfn_status` calls `emit` after the status
is final; one delivery thread puts the events, in order, through moto's events backend
(`put_events` on the default bus), so every rule whose pattern matches delivers to its
targets (see `sfn_eventbridge`):
    {"version": "0", "id", "detail-type": "Step Functions Execution Status Change",
     "source": "aws.states", "account", "time", "region", "resources": [executionArn],
     "detail": {"executionArn", "stateMachineArn", "name", "status",
                "startDate": <epoch ms>, "stopDate": <epoch ms> | null,
                "input": "<JSON string>", "inputDetails": {"included": true},
                "output": "<JSON string>" | null, "outputDetails": {...} | null,
                "error": ... | null, "cause": ... | null}}
("the detail section provides the same information as the DescribeExecution API")."""
import datetime
import json
import logging
import queue
import threading
from typing import Any

LOG = logging.getLogger(__name__)

SOURCE = "aws.states"
DETAIL_TYPE = "Step Functions Execution Status Change"
FINAL = ("SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED")

_lock = threading.Lock()
_queue: "queue.Queue[tuple[str, str, dict[str, Any]]]" = queue.Queue()
_worker: threading.Thread | None = None


def status_of(execution: Any) -> str | None:
    status = execution.exec_status
    return None if status is None else getattr(status, "value", status)


def _millis(value: Any) -> int | None:
    if not isinstance(value, datetime.datetime):
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.timezone.utc)
    return int(value.timestamp() * 1000)


def detail(execution: Any) -> dict[str, Any]:
    """The event's `detail`: what DescribeExecution says of the execution now."""
    from moto.stepfunctions.parser.asl.utils.encoding import to_json_str

    status = status_of(execution)
    output = None
    if status == "SUCCEEDED":
        output = to_json_str(execution.output, separators=(",", ":"))
    return {
        "executionArn": execution.exec_arn,
        "stateMachineArn": execution.state_machine_arn,
        "name": execution.name,
        "status": status,
        "startDate": _millis(execution.start_date),
        "stopDate": _millis(execution.stop_date) if status in FINAL else None,
        "input": execution.execution_input,
        "inputDetails": {"included": True},
        "output": output,
        "outputDetails": {"included": True} if output is not None else None,
        "error": execution.error,
        "cause": execution.cause,
    }


def emit(execution: Any) -> None:
    """Queues the status-change event of a standard workflow's execution."""
    typ = getattr(execution, "sm_type", None)
    if getattr(typ, "value", typ) not in (None, "STANDARD"):
        return  # EXPRESS workflows send no status-change events
    try:
        event = detail(execution)
    except Exception:
        LOG.exception("could not describe %s for its status-change event", execution.exec_arn)
        return
    _queue.put((execution.account_id, execution.region_name, event))
    _ensure_worker()


def _ensure_worker() -> None:
    global _worker
    with _lock:
        if _worker is None or not _worker.is_alive():
            _worker = threading.Thread(target=_deliver_forever, name="sfn-status-events", daemon=True)
            _worker.start()


def _deliver_forever() -> None:
    while True:
        account, region, event_detail = _queue.get()
        try:
            deliver(account, region, event_detail)
        except Exception:
            LOG.exception("status-change event of %s not delivered", event_detail.get("executionArn"))
        finally:
            _queue.task_done()


def deliver(account: str, region: str, event_detail: dict[str, Any]) -> None:
    from moto.events.models import events_backends

    backend = events_backends[account][region]
    backend.put_events([{
        "Source": SOURCE,
        "DetailType": DETAIL_TYPE,
        "Detail": json.dumps(event_detail),
        "Resources": [event_detail["executionArn"]],
        "EventBusName": "default",
    }])

