"""The Condition element of an IAM policy statement, evaluated as AWS documents it
(IAM User Guide, "IAM JSON policy elements: Condition operators" and "Multivalued
context keys"), for `iam_policy`.

- Operators: String(Not)Equals, String(Not)EqualsIgnoreCase, String(Not)Like (`*` any
  run of characters, `?` one character), Numeric(Not)Equals / LessThan(Equals) /
  GreaterThan(Equals), Date(Not)Equals / LessThan(Equals) / GreaterThan(Equals) (ISO 8601
  or epoch seconds), Bool, BinaryEquals, (Not)IpAddress, Arn(Not)Equals / Arn(Not)Like
  (the six `:`-separated parts matched one by one, wildcards allowed), Null; each but Null
  with an `IfExists` suffix, and the `ForAnyValue:` / `ForAllValues:` set qualifiers.
- Several operators, or several keys under one operator: all must hold. Several values
  for one key: any may match (for a negated operator: none may match).
- A key the request does not carry: a positive operator is false, a negated one
  (`...Not...`, `NotIpAddress`) true, `...IfExists` true, `ForAllValues:` true,
  `ForAnyValue:` false; `Null` tests exactly that.
- Condition keys are case-insensitive, String values case-sensitive (but for the
  IgnoreCase operators); policy variables (`${aws:username}`, `${*}`...) are replaced in
  String and Arn values, a variable the request lacks matching nothing.
- An operator AWS does not define never holds.
"""
import base64
import functools
import ipaddress
import re
from datetime import datetime, timezone
from typing import Any, Callable

# A context: lower-cased condition key -> its values (a single-valued key has one).
Context = dict[str, list[str]]

_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_NO_VALUE = "\x00no-value\x00"  # what a variable the request lacks becomes: matches nothing


def substitute(value: str, context: Context) -> str:
    """A policy value with its `${...}` variables replaced from the context."""
    def one(match: "re.Match[str]") -> str:
        name = match.group(1)
        if name in ("*", "?", "$"):
            return "\x01" + name  # a literal character, see `wildcard`
        values = context.get(name.lower())
        return values[0] if values else _NO_VALUE
    return _VARIABLE.sub(one, value) if "${" in value else value


@functools.lru_cache(maxsize=4096)
def _wildcard_regex(pattern: str, ignore_case: bool) -> "re.Pattern[str]":
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\x01" and i + 1 < len(pattern):  # `${*}` and friends: literal
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
        i += 1
    return re.compile("".join(out), re.DOTALL | (re.IGNORECASE if ignore_case else 0))


def wildcard(pattern: str, value: str, ignore_case: bool = False) -> bool:
    """`*` and `?` wildcard match of the whole value."""
    return _wildcard_regex(pattern, ignore_case).fullmatch(value) is not None


def arn_like(pattern: str, value: str) -> bool:
    """ArnLike / ArnEquals: the six colon-separated parts of both, each wildcard-matched."""
    p_parts, v_parts = pattern.split(":", 5), value.split(":", 5)
    if len(p_parts) != 6 or len(v_parts) != 6:
        return False
    return all(wildcard(p, v) for p, v in zip(p_parts, v_parts))


def _number(text: str) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def _date(text: str) -> float | None:
    number = _number(text)
    if number is not None:
        return number
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.timestamp()


def _compare(parse: Callable[[str], float | None], test: Callable[[float, float], bool]) -> Callable[[str, str], bool]:
    def op(policy_value: str, request_value: str) -> bool:
        a, b = parse(request_value), parse(policy_value)
        return a is not None and b is not None and test(a, b)
    return op


def _ip(policy_value: str, request_value: str) -> bool:
    try:
        return ipaddress.ip_address(request_value) in ipaddress.ip_network(policy_value, strict=False)
    except ValueError:
        return False


def _binary(policy_value: str, request_value: str) -> bool:
    try:
        return base64.b64decode(policy_value) == base64.b64decode(request_value)
    except ValueError:
        return False


# operator -> (positive test of one policy value against one request value, negated,
# whether policy variables apply)
_OPERATORS: dict[str, tuple[Callable[[str, str], bool], bool, bool]] = {}


def _define(names: tuple[str, str | None], test: Callable[[str, str], bool], variables: bool = False) -> None:
    positive, negative = names
    _OPERATORS[positive] = (test, False, variables)
    if negative:
        _OPERATORS[negative] = (test, True, variables)


_define(("StringEquals", "StringNotEquals"), lambda p, v: p == v, True)
_define(("StringEqualsIgnoreCase", "StringNotEqualsIgnoreCase"), lambda p, v: p.lower() == v.lower(), True)
_define(("StringLike", "StringNotLike"), wildcard, True)
_define(("NumericEquals", "NumericNotEquals"), _compare(_number, lambda a, b: a == b))
_define(("NumericLessThan", None), _compare(_number, lambda a, b: a < b))
_define(("NumericLessThanEquals", None), _compare(_number, lambda a, b: a <= b))
_define(("NumericGreaterThan", None), _compare(_number, lambda a, b: a > b))
_define(("NumericGreaterThanEquals", None), _compare(_number, lambda a, b: a >= b))
_define(("DateEquals", "DateNotEquals"), _compare(_date, lambda a, b: a == b))
_define(("DateLessThan", None), _compare(_date, lambda a, b: a < b))
_define(("DateLessThanEquals", None), _compare(_date, lambda a, b: a <= b))
_define(("DateGreaterThan", None), _compare(_date, lambda a, b: a > b))
_define(("DateGreaterThanEquals", None), _compare(_date, lambda a, b: a >= b))
_define(("Bool", None), lambda p, v: p.lower() == v.lower())
_define(("BinaryEquals", None), _binary)
_define(("IpAddress", "NotIpAddress"), _ip)
_define(("ArnEquals", "ArnNotEquals"), arn_like, True)
_define(("ArnLike", "ArnNotLike"), arn_like, True)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _holds(operator: str, key: str, policy_values: Any, context: Context) -> bool:
    qualifier = None
    for prefix in ("ForAnyValue:", "ForAllValues:"):
        if operator.startswith(prefix):
            qualifier, operator = prefix[:-1], operator[len(prefix):]
    values = [_text(v) for v in (policy_values if isinstance(policy_values, list) else [policy_values])]
    request_values = context.get(key.lower())
    present = request_values is not None and (qualifier is None or len(request_values) > 0)
    if operator == "Null":
        return bool(values) and (values[0].lower() == "true") == (not present)
    if_exists = operator.endswith("IfExists")
    base = operator[: -len("IfExists")] if if_exists else operator
    if base not in _OPERATORS:
        return False
    test, negated, variables = _OPERATORS[base]
    if not present:
        if qualifier == "ForAllValues":
            return True
        if qualifier == "ForAnyValue":
            return False
        return if_exists or negated
    if variables:
        values = [substitute(v, context) for v in values]

    def matches(request_value: str) -> bool:
        hit = any(test(v, request_value) for v in values)
        return not hit if negated else hit

    assert request_values is not None
    if qualifier == "ForAllValues":
        return all(matches(v) for v in request_values)
    if qualifier == "ForAnyValue":
        return any(matches(v) for v in request_values)
    # A plain operator on a key with several values: a positive one holds when any value
    # matches, a negated one when none does.
    return all(matches(v) for v in request_values) if negated else any(matches(v) for v in request_values)


def conditions_hold(condition: Any, context: Context) -> bool:
    """Whether a statement's Condition block holds for the request's context."""
    if not condition:
        return True
    if not isinstance(condition, dict):
        return False
    for operator, keys in condition.items():
        if not isinstance(keys, dict):
            return False
        for key, values in keys.items():
            if not _holds(operator, key, values, context):
                return False
    return True
