#!/usr/bin/env bash
# The emulator test binaries (`--test e2e` of every crate) and the emulator's own Python
# tests, side by side: each group gets an emulator of its own (scripts/with-emulator.sh,
# a free port each), so what one group switches emulator-wide (the Step Functions
# interpreter) never reaches another; inside a binary the tests still run one at a time.
# Builds nothing new: the binaries are the ones `make build` (`cargo build --workspace --test e2e`)
# made (cargo is asked with the same `--workspace` feature set, so it only lists them).
# Each group's output is printed whole when it ends; the exit status is 1 if any failed.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
cargo=${CARGO:-cargo}
py="$here/.venv/bin/python"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# executable<TAB>package directory, for every e2e test binary.
mapfile -t bins < <("$cargo" test --workspace --test e2e --no-run --message-format=json 2>"$logs/build.err" |
  "$py" -c '
import json, os, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "e2e":
        print(m["executable"] + "\t" + os.path.dirname(m["manifest_path"]))
')
if [ "${#bins[@]}" -eq 0 ]; then
  echo "run-e2e: no e2e test binary was listed" >&2
  cat "$logs/build.err" >&2
  exit 1
fi

pids=()
names=()
start=$(date +%s)
# One group: a binary (or a part of it, `filters` being the test harness's arguments)
# on an emulator of its own.
# A group named `deployed` runs on an emulator holding the deployed backend
# (`scripts/with-emulator.sh --backend`, docs/testing.md "The deployed group").
group() {
  local name=$1 exe=$2 dir=$3 backend=()
  shift 3
  if [ "$name" = deployed ]; then backend=(--backend); fi
  (
    cd "$dir" &&
      CARGO_MANIFEST_DIR="$dir" "$here/scripts/with-emulator.sh" "${backend[@]}" "$exe" --test-threads=1 "$@"
    rc=$?
    date +%s >"$logs/$name.end"
    exit $rc
  ) >"$logs/$name.log" 2>&1 &
  pids+=($!)
  names+=("$name")
}
for entry in "${bins[@]}"; do
  exe=${entry%%$'\t'*}
  dir=${entry#*$'\t'}
  name=$(basename "$dir")
  if [ "$name" = tests ]; then
    # cdkd-tests' 100-seed crash test alone takes as long as the rest of its binary:
    # it runs beside it.
    group tests-crash "$exe" "$dir" destroy_crash export_crash
    group tests "$exe" "$dir" --skip destroy_crash --skip export_crash
  elif [ "$name" = cli ]; then
    # The export crash test (20 seeds) runs beside the rest of the CLI's binary, and so
    # do the runs through the deployed backend (on an emulator that holds it).
    group cli-crash "$exe" "$dir" crash_export
    group deployed "$exe" "$dir" deployed::
    group cli "$exe" "$dir" --skip crash_export --skip deployed::
  else
    group "$name" "$exe" "$dir"
  fi
done
(
  "$here/scripts/with-emulator.sh" "$py" -m unittest discover -s scripts/moto_ext/tests -t scripts -v
  rc=$?
  date +%s >"$logs/emulator-py.end"
  exit $rc
) >"$logs/emulator-py.log" 2>&1 &
pids+=($!)
names+=("emulator-py")

status=0
for i in "${!pids[@]}"; do
  if wait "${pids[$i]}"; then rc=0; else rc=$?; status=1; fi
  end=$(cat "$logs/${names[$i]}.end" 2>/dev/null || date +%s)
  echo "=== ${names[$i]}: exit $rc after $((end - start)) s ==="
  cat "$logs/${names[$i]}.log"
done
exit $status
