"""`sam package` on the emulator: the template loaded with CloudFormation's short-form
tags, and every local artifact it names uploaded to the artifacts bucket, the template
pointed at the uploads.

Read generically from the template, never from a list of its resources:

- `AWS::Serverless::Function` `CodeUri` (in `Globals.Function` or a function's own) that
  is a local path becomes `s3://<bucket>/<prefix>/<md5>.zip`. The zip holds one member,
  `bootstrap` (mode 0755), as a `provided.al2023` function's does; here it is a small
  stand-in script, not the step binary: the emulator's Lambda runs the binary its own
  environment names (`CDKD_FLOW_STEP_BIN`, built by `make build`) in place of the zip's
  `bootstrap` (docs/emulator.md, "The deployed backend"). So the deploy needs neither
  `make lambdas` nor a 25 MB upload.
- `AWS::Serverless::StateMachine` `DefinitionUri` that is a local path: the file is
  uploaded as it is and `DefinitionUri` becomes `{Bucket, Key}`.
"""
import copy
import hashlib
import io
import zipfile
from pathlib import Path
from typing import Any

from samtranslator.yaml_helper import yaml_parse

# What the stand-in `bootstrap` says if anything ever runs it.
STAND_IN_BOOTSTRAP = (
    "#!/bin/sh\n"
    "# cdkd-flow on the local emulator: a stand-in for the step binary. The emulator's\n"
    "# Lambda runs the binary named by its CDKD_FLOW_STEP_BIN (make build) in place of\n"
    "# this file (docs/emulator.md, \"The deployed backend\").\n"
    "echo 'stand-in bootstrap: the emulator runs CDKD_FLOW_STEP_BIN instead' >&2\n"
    "exit 1\n"
)


def load_template(path: Path) -> dict[str, Any]:
    """The SAM template as a dict; `!Ref`, `!Sub`, `!GetAtt`, ... become their long form
    (samtranslator's own loader, the one `sam` uses)."""
    parsed = yaml_parse(path.read_text(encoding="utf-8"))
    if not isinstance(parsed, dict) or not isinstance(parsed.get("Resources"), dict):
        raise ValueError(f"{path}: not a template with Resources")
    return parsed


def is_local_path(value: Any) -> bool:
    """A CodeUri/DefinitionUri naming a file or folder beside the template (not an
    `s3://` URI, not a {Bucket, Key} mapping, not an intrinsic function)."""
    return isinstance(value, str) and not value.startswith("s3://") and "://" not in value


def stand_in_zip() -> bytes:
    """The function zip: one `bootstrap`, mode 0755, fixed date (same bytes every time)."""
    out = io.BytesIO()
    info = zipfile.ZipInfo("bootstrap", date_time=(1980, 1, 1, 0, 0, 0))
    info.external_attr = 0o100755 << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(info, STAND_IN_BOOTSTRAP)
    return out.getvalue()


class Uploader:
    """Puts artifacts into the artifacts bucket under the prefix, each keyed by the MD5 of
    its bytes (as `sam package` keys them), once."""

    def __init__(self, s3: Any, bucket: str, prefix: str) -> None:
        self.s3, self.bucket, self.prefix = s3, bucket, prefix.strip("/")
        self.uploaded: dict[str, str] = {}

    def put(self, data: bytes, suffix: str = "") -> str:
        key = f"{self.prefix}/{hashlib.md5(data).hexdigest()}{suffix}"  # noqa: S324 - a name, as sam's
        if key not in self.uploaded:
            self.s3.put_object(Bucket=self.bucket, Key=key, Body=data)
            self.uploaded[key] = key
        return key


def package(template: dict[str, Any], base: Path, uploader: Uploader) -> dict[str, Any]:
    """A copy of the template with every local CodeUri and DefinitionUri uploaded and
    replaced by its S3 location; `base` is the template's folder (paths are relative to
    it). A DefinitionUri that names no file is an error, as in `sam package`."""
    out = copy.deepcopy(template)

    def code_uri(value: Any) -> Any:
        if not is_local_path(value):
            return value
        return f"s3://{uploader.bucket}/{uploader.put(stand_in_zip(), '.zip')}"

    function_globals = (out.get("Globals") or {}).get("Function")
    if isinstance(function_globals, dict) and "CodeUri" in function_globals:
        function_globals["CodeUri"] = code_uri(function_globals["CodeUri"])
    for logical_id, resource in out["Resources"].items():
        properties = resource.get("Properties")
        if not isinstance(properties, dict):
            continue
        if resource.get("Type") == "AWS::Serverless::Function" and "CodeUri" in properties:
            properties["CodeUri"] = code_uri(properties["CodeUri"])
        if resource.get("Type") == "AWS::Serverless::StateMachine" and is_local_path(properties.get("DefinitionUri")):
            path = (base / properties["DefinitionUri"]).resolve()
            if not path.is_file():
                raise FileNotFoundError(f"{logical_id}: DefinitionUri {properties['DefinitionUri']} is not a file ({path})")
            key = uploader.put(path.read_bytes(), path.suffix)
            properties["DefinitionUri"] = {"Bucket": uploader.bucket, "Key": key}
    return out
