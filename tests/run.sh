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
# The real-agent tests (tests/agents_real.rs) drive Claude Code and Codex from
# npm (Codex's launcher is a node script) with a python3 fake model server.
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
command -v python3 >/dev/null 2>&1 || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "tests/run.sh: installing ${need[*]}" >&2
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "tests/run.sh: missing ${need[*]}; the tests that need them will say so and skip" >&2
  fi
fi

# The pinned agent CLIs (tests/agents_real_support/versions.env), installed
# into target/agents-cli (or $SAFE_EXEC_AGENTS_CLI), never globally.
# Without the registry the tests that need them fail in CI and skip elsewhere.
if command -v npm >/dev/null 2>&1 && cli="$(bash tests/agents_real_support/install.sh)"; then
  export SAFE_EXEC_AGENTS_CLI="$cli"
else
  echo "tests/run.sh: the agent CLIs are not installed; tests/agents_real.rs will fail in CI, skip elsewhere" >&2
fi
cargo build --quiet --bins
cargo test --all-targets --quiet
if [ -d tests/bats ] && command -v bats >/dev/null 2>&1; then
  SAFE_EXEC="$PWD/target/debug/safe-exec" bats tests/bats
fi
