#!/usr/bin/env bash
# Runs a command with the local AWS emulator (moto server, single-threaded) on a free
# 127.0.0.1 port, and stops the emulator when the command ends. The command sees
# AWS_ENDPOINT_URL and dummy credentials; nothing can reach a real AWS endpoint.
#
#   scripts/with-emulator.sh CMD [ARGS...]
#   scripts/with-emulator.sh --backend CMD [ARGS...]
#
# --backend: the emulator runs the project's backend as deployed (docs/emulator.md, "The
# deployed backend"): scripts/deploy_backend.py deploys infra/template.yaml into it as
# stack cdkd-flow (the SAM transform, CreateStack, CREATE_COMPLETE), creates the IAM user
# cdkd-flow-admin and turns IAM enforcement and the Step Functions interpreter on. CMD
# then runs as that user would: the user's access key (no session token), region
# us-east-1, CDKD_FLOW_STATE_BUCKET (env CDKD_FLOW_STATE_BUCKET, default
# cdkd-state-123456789012) and CDKD_FLOW_BACKEND_STACK; the CLI finds the state machines
# from the stack's outputs. The emulator runs each function's invocation with the step
# binary CDKD_FLOW_STEP_BIN (env, default target/debug/cdkd-step, built by `make build`).
# The emulator and whatever it started are stopped when CMD ends, fails, or on Ctrl-C;
# the exit status is CMD's.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
py="${MOTO_PYTHON:-$here/.venv/bin/python}"

backend=false
if [ "${1:-}" = "--backend" ]; then
  backend=true
  shift
  if [ $# -eq 0 ]; then
    echo "usage: scripts/with-emulator.sh [--backend] CMD [ARGS...]" >&2
    exit 2
  fi
  step_bin="${CDKD_FLOW_STEP_BIN:-${CARGO_TARGET_DIR:-$here/target}/debug/cdkd-step}"
  case "$step_bin" in /*) ;; *) step_bin="$PWD/$step_bin" ;; esac
  if [ ! -x "$step_bin" ]; then
    echo "scripts/with-emulator.sh --backend: no step binary $step_bin (build it with \`make build\`, or name one in CDKD_FLOW_STEP_BIN)" >&2
    echo "usage: make build && scripts/with-emulator.sh --backend CMD [ARGS...]" >&2
    exit 2
  fi
fi

port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
mkdir -p "$here/.emulator"
log="$here/.emulator/moto-$port.log"
if $backend; then
  # A process group of its own: the functions' processes the emulator starts are
  # stopped with it.
  env_file=$(mktemp "$here/.emulator/backend-$port.XXXXXX")
  CDKD_FLOW_STEP_BIN="$step_bin" setsid "$py" "$here/scripts/moto_server.py" "$port" >"$log" 2>&1 &
  moto_pid=$!
  trap 'kill -- -$moto_pid 2>/dev/null || kill $moto_pid 2>/dev/null || true; wait $moto_pid 2>/dev/null || true; rm -f "$env_file"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
else
  "$py" "$here/scripts/moto_server.py" "$port" >"$log" 2>&1 &
  moto_pid=$!
  trap 'kill $moto_pid 2>/dev/null || true; wait $moto_pid 2>/dev/null || true' EXIT
fi
for _ in $(seq 1 200); do
  if "$py" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/moto-api/', timeout=1)" 2>/dev/null; then
    break
  fi
  if ! kill -0 $moto_pid 2>/dev/null; then echo "the emulator did not start; see $log" >&2; cat "$log" >&2; exit 1; fi
  sleep 0.1
done
export AWS_ENDPOINT_URL="http://127.0.0.1:$port"
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_SESSION_TOKEN=testing
export AWS_REGION="${AWS_REGION:-us-east-1}" AWS_DEFAULT_REGION="${AWS_REGION:-us-east-1}"
export AWS_EC2_METADATA_DISABLED=true
unset AWS_PROFILE
echo "emulator: moto on $AWS_ENDPOINT_URL (log $log)" >&2
if $backend; then
  export AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
  if ! AWS_ENDPOINT_URL="$AWS_ENDPOINT_URL" "$py" "$here/scripts/deploy_backend.py" --env-file "$env_file"; then
    echo "scripts/with-emulator.sh --backend: the backend did not deploy (emulator log $log)" >&2
    exit 1
  fi
  # The deployed backend's user: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
  # CDKD_FLOW_STATE_BUCKET, CDKD_FLOW_BACKEND_STACK.
  set -a
  # shellcheck disable=SC1090
  . "$env_file"
  set +a
  unset AWS_SESSION_TOKEN CDKD_FLOW_DESTROY_STATE_MACHINE_ARN CDKD_FLOW_CLEANUP_STATE_MACHINE_ARN \
    CDKD_FLOW_EXPORT_STATE_MACHINE_ARN
fi
"$@"
