#!/usr/bin/env bash
# The whole test suite, as a newcomer runs it (README) and as CI runs it
# (.ci/run), from any checkout directory, with or without CARGO_TARGET_DIR.
#
# 1. Installs what the tests need from Debian's packages (as root with
#    apt-get). A tool still missing fails the tests that need it; in CI
#    (CI=true) it fails the run here already.
# 2. Builds (with progress), then runs every Rust test target with
#    --no-fail-fast, then the bats suites under tests/bats/ against the
#    binary cargo just built (its path asked from cargo, not guessed).
# 3. Runs the integration tests again for the target the package ships
#    (static musl: packaging/shipped-target.sh, which installs it with
#    rustup when missing), against the binary built for it.
# 4. Ends with one line `tests: N passed, N failed, N skipped` (skipped =
#    #[ignore]d tests and bats skips) and exits non-zero if anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."

in_ci() { [ "${CI:-}" = true ] || [ "${CI:-}" = 1 ]; }

# command -> Debian package
declare -A tools=(
  [bats]=bats [jq]=jq [script]=bsdutils [make]=make [dig]=dnsutils
  [curl]=curl [zip]=zip [unzip]=unzip [git]=git [python3]=python3
  [node]=nodejs [npm]=npm [setpriv]=util-linux [stty]=coreutils
)
need=()
for t in "${!tools[@]}"; do
  command -v "$t" >/dev/null 2>&1 || need+=("${tools[$t]}")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "tests/run.sh: installing ${need[*]}" >&2
    apt-get update -qq >/dev/null &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null ||
      echo "tests/run.sh: apt-get install failed" >&2
  fi
  missing=()
  for t in "${!tools[@]}"; do
    command -v "$t" >/dev/null 2>&1 || missing+=("$t (${tools[$t]})")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "tests/run.sh: missing ${missing[*]}; the tests that need them fail" >&2
    if in_ci; then
      echo "tests: 0 passed, 1 failed, 0 skipped"
      exit 1
    fi
  fi
fi

# The pinned agent CLIs (tests/agents_real_support/versions.env), installed
# into target/agents-cli (or $SAFE_EXEC_AGENTS_CLI), never globally. The
# real-agent tests fail when they are missing.
if cli="$(bash tests/agents_real_support/install.sh)"; then
  export SAFE_EXEC_AGENTS_CLI="$cli"
else
  echo "tests/run.sh: the agent CLIs could not be installed; the real-agent tests will fail" >&2
fi
# The parser/policy fuzz target runs for a bounded time: 20 s by default,
# 60 s in CI (tests/fuzz_parse_policy.rs, docs/fuzzing.md).
if in_ci; then
  export SAFE_EXEC_FUZZ_SECONDS="${SAFE_EXEC_FUZZ_SECONDS:-60}"
fi

passed=0 failed=0 skipped=0
log=$(mktemp "${TMPDIR:-/tmp}/safe-exec-tests.XXXXXX")
trap 'rm -f "$log"' EXIT

# Build first, with progress: a cold build takes minutes.
if ! cargo build --bins; then
  echo "tests/run.sh: cargo build failed" >&2
  echo "tests: 0 passed, 1 failed, 0 skipped"
  exit 1
fi

# Every Rust test target, none stopping the others.
cargo test --all-targets --no-fail-fast 2>&1 | tee "$log"
cargo_rc=${PIPESTATUS[0]}
while read -r p f i; do
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + i))
done < <(sed -nE 's/^test result: [A-Za-z]+\. ([0-9]+) passed; ([0-9]+) failed; ([0-9]+) ignored.*/\1 \2 \3/p' "$log")
if [ "$cargo_rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
  # A target that did not build or crashed before its summary line.
  echo "tests/run.sh: cargo test exited $cargo_rc without a failed test: counted as one failure" >&2
  failed=$((failed + 1))
fi

# The bats suites, against the binary cargo built (wherever the target
# directory is: CARGO_TARGET_DIR, a config, or ./target).
if [ -d tests/bats ]; then
  if command -v bats >/dev/null 2>&1; then
    target_dir=$(cargo metadata --format-version 1 --no-deps |
      sed -nE 's/.*"target_directory":"([^"]*)".*/\1/p')
    bin="$target_dir/debug/safe-exec"
    if [ ! -x "$bin" ]; then
      echo "tests/run.sh: $bin does not exist: the bats suites cannot run" >&2
      failed=$((failed + 1))
    else
      SAFE_EXEC="$bin" bats --tap tests/bats 2>&1 | tee "$log"
      bats_rc=${PIPESTATUS[0]}
      b_skip=$(grep -cE '^ok [0-9]+ .*# skip' "$log")
      b_ok=$(grep -cE '^ok [0-9]+' "$log")
      b_fail=$(grep -cE '^not ok [0-9]+' "$log")
      passed=$((passed + b_ok - b_skip)) failed=$((failed + b_fail)) skipped=$((skipped + b_skip))
      if [ "$bats_rc" -ne 0 ] && [ "$b_fail" -eq 0 ]; then
        echo "tests/run.sh: bats exited $bats_rc without a failed test: counted as one failure" >&2
        failed=$((failed + 1))
      fi
    fi
  else
    echo "tests/run.sh: bats is not installed: the bats suites did not run" >&2
    failed=$((failed + 1))
  fi
fi

# The shipped target (static musl, packaging/shipped-target.sh, which installs
# its standard library with rustup when missing): the integration tests
# again, against the binary built for it, so that what the package ships is
# what the tests ran.
if . packaging/shipped-target.sh; then
  if [ "$triple" != "$(rustc -vV | sed -n 's/^host: //p')" ]; then
    RUSTFLAGS="$rustflags" cargo test --target "$triple" --test tests --no-fail-fast 2>&1 | tee "$log"
    cargo_rc=${PIPESTATUS[0]}
    before=$failed
    while read -r p f i; do
      passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + i))
    done < <(sed -nE 's/^test result: [A-Za-z]+\. ([0-9]+) passed; ([0-9]+) failed; ([0-9]+) ignored.*/\1 \2 \3/p' "$log")
    if [ "$cargo_rc" -ne 0 ] && [ "$failed" -eq "$before" ]; then
      echo "tests/run.sh: cargo test --target $triple exited $cargo_rc without a failed test: counted as one failure" >&2
      failed=$((failed + 1))
    fi
  fi
else
  echo "tests/run.sh: the shipped target's standard library is missing: its tests did not run" >&2
  failed=$((failed + 1))
fi

echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
