#!/usr/bin/env bash
# The demo's second half: the product's own shape. Run under
# `scripts/with-emulator.sh --backend` (make demo), which deployed the backend from
# infra/template.yaml into the emulator: every run below is started without --local,
# interpreted by the emulator's Step Functions, each step the cdkd-step binary invoked as
# a Lambda under its own role. The CLI finds the state machines from the backend stack's
# outputs, as on AWS.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin="${CDKD_FLOW_BIN:-${CARGO_TARGET_DIR:-$here/target}/debug/cdkd-flow}"
if [[ ! -x "$bin" ]]; then
  echo "demo: $bin is missing; build it first (make demo does)" >&2
  exit 1
fi
"$here/.venv/bin/python" "$here/scripts/demo_seed.py"
run() { printf '\n$ cdkd-flow %s\n' "$*"; "$bin" "$@" || printf '(exit %s)\n' "$?"; }
printf '\nThe deployed backend (stack %s, state bucket %s):\n' "$CDKD_FLOW_BACKEND_STACK" "$CDKD_FLOW_STATE_BUCKET"
# A destroy run of the deployed destroy state machine, watched with progress to its end.
run destroy WebApp --stack-region us-east-1 -y
# An export run of the deployed export state machine: the CLI uploads the template under
# the run's prefix, starts the execution and watches it.
run export Orders --template "$here/.emulator/demo-orders.template.json" -y
run runs list
run state list
