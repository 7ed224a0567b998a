#!/usr/bin/env bash
# Runs a command with the local AWS emulator (moto server, single-threaded) on a free
# 127.0.0.1 port, and stops the emulator when the command ends. The command sees
# AWS_ENDPOINT_URL and dummy credentials; nothing can reach a real AWS endpoint.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
py="${MOTO_PYTHON:-$here/.venv/bin/python}"
port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
mkdir -p "$here/.emulator"
log="$here/.emulator/moto-$port.log"
"$py" "$here/scripts/moto_server.py" "$port" >"$log" 2>&1 &
moto_pid=$!
trap 'kill $moto_pid 2>/dev/null || true; wait $moto_pid 2>/dev/null || true' EXIT
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
"$@"
