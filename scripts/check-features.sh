#!/usr/bin/env bash
# Checks that `cargo build -p cdkd-flow` (what `make demo` builds) resolves every crate
# with the same features as the test build (`make build`: `--workspace`, dev-dependencies
# included), and so does `cargo test -p cdkd-tests`. Where they
# differ, that build compiles those crates (and, for tokio or an SDK runtime crate, the
# whole SDK) a second time. aws/Cargo.toml names the features the test build adds; this
# prints the crates whose features still differ, and fails.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo=${CARGO:-cargo}
feats() { "$cargo" tree "$@" -f '{p} [{f}]' --prefix none | sed 's/ (\*)//; s/ (proc-macro)//' | sort -u; }
ws=$(feats --workspace -e normal,build,dev)
# The demo's build, and the emulator tests run alone.
cli=$(feats -p cdkd-flow -e no-dev)
diff=$(comm -13 <(printf '%s\n' "$ws") <(printf '%s\n' "$cli"))
for p in cdkd-tests; do
  d=$(comm -13 <(printf '%s\n' "$ws") <(feats -p "$p" -e normal,build,dev))
  [[ -z "$d" ]] || diff=$(printf '%s\n%s' "$diff" "$d" | sed '/^$/d' | sort -u)
done
if [[ -n "$diff" ]]; then
  echo "check-features: cargo build -p cdkd-flow resolves these crates with other features than the test build:" >&2
  printf '  %s\n' "$diff" >&2
  echo "the test build has:" >&2
  for c in $(printf '%s\n' "$diff" | awk '{print $1" "$2}' | tr ' ' '@'); do
    printf '%s\n' "$ws" | grep -F "${c%@*} ${c#*@} " | sed 's/^/  /' >&2
  done
  echo "add the missing features to the alignment block of aws/Cargo.toml" >&2
  exit 1
fi
echo "check-features: the demo build is a prefix of the test build ($(printf '%s\n' "$cli" | wc -l) crates, same features)"
