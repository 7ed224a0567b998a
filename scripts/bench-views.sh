#!/usr/bin/env bash
# Prints the two state-view figures:
#  1. `state show` of a 2,500-resource record (criterion, pure rendering);
#  2. `state list --long` over 1,000 records against the local emulator (wall time of
#     the real binary, bounded-concurrency reads).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
echo "== state show, 2,500 resources (criterion)"
cargo bench -p cdkd-core --bench views -- --noplot 2>&1 | grep -E '^views_2500|time:' || true
echo "== state list --long, 1,000 records (emulator)"
scripts/with-emulator.sh cargo test -q -p cdkd-tests --test views_cli -- \
  --nocapture --exact views_cli_bench_list_long_1000_records 2>&1 | grep -E '^BENCH|test result' || true
