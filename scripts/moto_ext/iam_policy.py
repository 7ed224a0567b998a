"""IAM policy documents evaluated as AWS evaluates them (IAM User Guide, "Policy
evaluation logic"), for `iam_enforce`.

- A statement applies to a request when its Action (NotAction) matches the action (case-
  insensitive, `*` and `?` wildcards), its Resource (NotResource) matches the resource
  (case-sensitive, wildcards, policy variables), and its Condition holds
  (`iam_conditions`). A statement without Resource (a trust policy's) matches any.
- `decide(documents, ...)`: an applying Deny statement in any document is an explicit
  deny (it names the document, see `Document.label`), else an applying Allow allows,
  else nothing does (implicit deny).
- A trust (resource-based) policy statement applies only when its Principal names the
  caller (`principal_matches`); identity policies carry no Principal.
"""
import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from .iam_conditions import Context, conditions_hold, substitute, wildcard

ALLOW, DENY, NONE = "allow", "deny", "none"
_ROOT = re.compile(r"arn:[a-z-]+:iam::[0-9]{12}:root")


@dataclass
class Document:
    """One policy document; `label` is the managed policy's ARN, None for an inline one."""
    statements: list[dict[str, Any]]
    label: str | None = None


def parse(document: Any, label: str | None = None) -> Document:
    """A policy document from moto's storage: a JSON string (URL-encoded or not) or a dict."""
    if isinstance(document, (bytes, str)):
        text = document.decode() if isinstance(document, bytes) else document
        try:
            document = json.loads(text)
        except ValueError:
            document = json.loads(unquote(text))
    statements = document.get("Statement", []) if isinstance(document, dict) else []
    if isinstance(statements, dict):
        statements = [statements]
    return Document([s for s in statements if isinstance(s, dict)], label)


def _listed(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def action_matches(patterns: list[str], action: str) -> bool:
    return any(wildcard(p, action, ignore_case=True) for p in patterns)


def resource_matches(patterns: list[str], resource: str, context: Context) -> bool:
    return any(wildcard(substitute(p, context), resource) for p in patterns)


@dataclass
class Caller:
    """Who a trust policy's Principal is tested against: an AWS principal (its ARN, the
    role ARN behind an assumed-role session, its account) or a service principal."""
    arn: str | None = None
    role_arn: str | None = None
    account: str | None = None
    service: str | None = None


def principal_matches(principal: Any, caller: Caller) -> tuple[bool, bool]:
    """(whether the Principal element names the caller, whether it names the caller's
    own ARN rather than a whole account or everyone)."""
    if principal == "*":
        return True, False
    if not isinstance(principal, dict):
        return False, False
    if caller.service is not None:
        return caller.service in _listed(principal.get("Service")), True
    for entry in _listed(principal.get("AWS")):
        if entry == "*":
            return True, False
        if caller.account and (entry == caller.account or _ROOT.fullmatch(entry) and entry.split(":")[4] == caller.account):
            return True, False
        if entry in (caller.arn, caller.role_arn):
            return True, True
    return False, False


def _statement_applies(
    statement: dict[str, Any], action: str, resource: str, context: Context, caller: Caller | None
) -> tuple[bool, bool]:
    """(whether the statement applies, whether it names the caller explicitly)."""
    if "NotAction" in statement:
        if action_matches(_listed(statement["NotAction"]), action):
            return False, False
    elif not action_matches(_listed(statement.get("Action")), action):
        return False, False
    explicit = False
    if caller is not None:
        if "NotPrincipal" in statement:
            named, _ = principal_matches(statement["NotPrincipal"], caller)
            if named:
                return False, False
        else:
            named, explicit = principal_matches(statement.get("Principal"), caller)
            if not named:
                return False, False
    if "NotResource" in statement:
        if resource_matches(_listed(statement["NotResource"]), resource, context):
            return False, False
    elif "Resource" in statement and not resource_matches(_listed(statement["Resource"]), resource, context):
        return False, False
    if not conditions_hold(statement.get("Condition"), context):
        return False, False
    return True, explicit


@dataclass
class Decision:
    outcome: str  # ALLOW, DENY or NONE
    denied_by: Document | None = None  # the document of an explicit deny
    explicit_principal: bool = False  # an Allow named the caller's own ARN (trust policies)


def decide(
    documents: list[Document], action: str, resource: str, context: Context, caller: Caller | None = None
) -> Decision:
    allowed, explicit = False, False
    for document in documents:
        for statement in document.statements:
            applies, names_caller = _statement_applies(statement, action, resource, context, caller)
            if not applies:
                continue
            if statement.get("Effect") == "Deny":
                return Decision(DENY, document)
            if statement.get("Effect") == "Allow":
                allowed = True
                explicit = explicit or names_caller
    return Decision(ALLOW if allowed else NONE, None, explicit)
