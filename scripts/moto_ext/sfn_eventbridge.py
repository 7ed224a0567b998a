"""EventBridge rules delivering to the targets the project uses. moto's EventBridge
delivers to CloudWatch Logs, SQS, archives, other buses and API destinations, and raises
NotImplementedError for any other target (which also stopped the rule's remaining
targets). `Rule.send_to_targets` is patched:
- a rule that is not ENABLED delivers nothing (moto delivered anyway);
- a Lambda target is invoked asynchronously, as EventBridge invokes Lambda
  (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async.html), through
  `lambda_runtime.invoke(account, region, function ARN, payload, "Event")`, with the
  whole event (or the target's `Input`, `InputPath` or `InputTransformer` result) as
  payload;
- any other target goes to moto one target at a time; a target without an
  InputTransformer gets the whole event, as EventBridge sends it (moto's default
  template left out `account`,
  https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-transform-target-input.html);
  an unsupported one (SNS, Step Functions, ...) is logged and skipped."""
import copy
import json
import logging
from typing import Any

LOG = logging.getLogger(__name__)

_originals: dict[str, Any] = {}


def _iso_time(event: dict[str, Any], keep_ingestion_time: bool = False) -> dict[str, Any]:
    """The event as EventBridge sends it: `time` in ISO-8601 (moto keeps epoch seconds),
    without moto's own `ingestion-time`."""
    from moto.core.utils import iso_8601_datetime_without_milliseconds, utcfromtimestamp

    event = copy.deepcopy(event)
    if isinstance(event.get("time"), (int, float)):
        event["time"] = iso_8601_datetime_without_milliseconds(utcfromtimestamp(float(event["time"])))
    if not keep_ingestion_time:
        event.pop("ingestion-time", None)
    return event


def lambda_payload(target: dict[str, Any], event: dict[str, Any]) -> bytes:
    """What EventBridge sends a target: `Input`, `InputPath`, `InputTransformer`, or the event."""
    if target.get("Input") is not None:
        return str(target["Input"]).encode()
    if target.get("InputPath"):
        from jsonpath_ng.ext import parse

        matches = parse(target["InputPath"]).find(_iso_time(event))
        return json.dumps(matches[0].value if matches else None).encode()
    if target.get("InputTransformer"):
        from moto.events.utils import EventTemplateParser

        transformer = target["InputTransformer"]
        transformed = EventTemplateParser.parse(
            input_template=transformer.get("InputTemplate"),
            input_paths_map=transformer.get("InputPathsMap", {}),
            event=_iso_time(event, keep_ingestion_time=True),
        )
        return json.dumps(transformed).encode()
    return json.dumps(_iso_time(event)).encode()


def invoke_lambda(function_arn: str, payload: bytes) -> None:
    """An asynchronous invocation (`Event`) through the project's Lambda runner."""
    from . import lambda_runtime

    parts = function_arn.split(":")
    account, region = parts[4], parts[3]
    invoke = getattr(lambda_runtime, "invoke", None)
    if invoke is None:
        LOG.warning("no lambda_runtime.invoke: the EventBridge target %s was not invoked", function_arn)
        return
    answer = invoke(account, region, function_arn, payload, invocation_type="Event")
    status = answer[0] if isinstance(answer, tuple) and answer else 202
    if not 200 <= int(status) < 300:
        LOG.warning("the EventBridge target %s answered %s: %s", function_arn, status, answer[2:3])


def _send_to_targets(self: Any, original_event: Any, transform_input: bool = True) -> None:
    if getattr(self, "state", "ENABLED") != "ENABLED":
        return
    if not self.event_pattern.matches_event(original_event):
        return
    original = _originals["send_to_targets"]
    for target in list(self.targets):
        arn = str(target.get("Arn", ""))
        try:
            if arn.startswith("arn:") and arn.split(":")[2] == "lambda":
                invoke_lambda(arn, lambda_payload(target, original_event))
                continue
            one = copy.copy(self)
            one.targets = [target]
            event = copy.deepcopy(original_event)
            if transform_input and not target.get("InputTransformer"):
                # The whole event, as EventBridge sends it: moto's default template
                # dropped `account`.
                event.pop("ingestion-time", None)
                original(one, event, False)
            else:
                original(one, event, transform_input)
        except NotImplementedError:
            LOG.warning("EventBridge target %s of rule %s is not delivered by the emulator", arn, self.name)
        except Exception:
            LOG.exception("EventBridge target %s of rule %s failed", arn, self.name)


def install() -> None:
    from moto.events.models import Rule

    if _originals:
        return
    _originals["send_to_targets"] = Rule.send_to_targets
    Rule.send_to_targets = _send_to_targets  # type: ignore[method-assign]
