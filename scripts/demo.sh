#!/usr/bin/env bash
# The demo: run under scripts/with-emulator.sh (make demo). Seeds the emulator with a
# realistic cdkd state bucket, then runs cdkd-flow on it.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin="${CDKD_FLOW_BIN:-${CARGO_TARGET_DIR:-$here/target}/debug/cdkd-flow}"
if [[ ! -x "$bin" ]]; then
  echo "demo: $bin is missing; build it first (make demo does)" >&2
  exit 1
fi
"$here/.venv/bin/python" "$here/scripts/demo_seed.py"
run() { printf '\n$ cdkd-flow %s\n' "$*"; "$bin" "$@" || printf '(exit %s)\n' "$?"; }
run state list
run state list --long
run state list --tree
run state show Platform --show-nested
run state show Locked
run state resources WebApp --stack-region us-east-1 --long
run state show WebApp
run force-unlock Locked --stack-region us-east-1
run state list --long --json
# The destroy workflow, run in-process by the engine: deletes WebApp's real emulator
# resources (SNS topic, SQS queue, S3 bucket, SSM parameter, IAM role and policy),
# dependents first, then its state record. First the plan (nothing changes), then the
# run itself (-y: the demo has no terminal to answer the confirmation prompt).
run destroy WebApp --stack-region us-east-1 --dry-run
run destroy WebApp --stack-region us-east-1 --local --fast -y
run state list
# Forget one resource of a stack (its AWS resource is not touched), then a whole
# second-region record.
run state orphan Platform --resource Alerts -y
run state orphan WebApp --stack-region eu-west-1 -y
# Export, planned only: the three-level nested stack's templates from a cloud assembly,
# uploaded under the run's prefix; the plan (leaf first) printed; nothing else written.
run export ExportNested --cdk-out "$here/cli/tests/fixtures/export/nested.out" --dry-run --local
# Capture Orders' drift baseline: each resource re-read from the emulator and stored,
# redacted, as the record's observed properties (a conditional write under the lock).
run state refresh-observed Orders --stack-region us-east-1 -y
# Export for real: Orders' emulator resources (SNS topic, SQS queue, S3 bucket, SSM
# parameter) imported into a CloudFormation stack (phase 1, an IMPORT change set), its
# Outputs restored (phase 2, an UPDATE change set), then its cdkd record deleted.
run export Orders --template "$here/.emulator/demo-orders.template.json" --local --fast -y
run state list
# The scheduled cleanup, as a dry run: which stacks match and are old enough.
run cleanup --pattern 'Platform*' --older-than 30m --dry-run --local --fast
