#!/usr/bin/env bash
# The whole test suite, as a newcomer runs it (README) and as CI runs it
# (.ci/run). Installs what the tests need from Debian's packages when it can
# (root with apt-get), then runs every Rust test and, when bats is present,
# the bats suites under tests/bats/.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v bats >/dev/null 2>&1 || need+=(bats)
command -v jq >/dev/null 2>&1 || need+=(jq)
command -v script >/dev/null 2>&1 || need+=(bsdutils)
command -v make >/dev/null 2>&1 || need+=(make)
command -v dig >/dev/null 2>&1 || need+=(dnsutils)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v zip >/dev/null 2>&1 || need+=(zip)
command -v unzip >/dev/null 2>&1 || need+=(unzip)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "tests/run.sh: installing ${need[*]}" >&2
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "tests/run.sh: missing ${need[*]}; the tests that need them will say so and skip" >&2
  fi
fi

cargo build --quiet --bins
# The parser/policy fuzz target runs for a bounded time: 20 s by default,
# 60 s in CI (tests/fuzz_parse_policy.rs, docs/fuzzing.md).
if [ "${CI:-}" = true ]; then
  export SAFE_EXEC_FUZZ_SECONDS="${SAFE_EXEC_FUZZ_SECONDS:-60}"
fi
cargo test --all-targets --quiet
if [ -d tests/bats ] && command -v bats >/dev/null 2>&1; then
  SAFE_EXEC="$PWD/target/debug/safe-exec" bats tests/bats
fi
