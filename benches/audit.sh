#!/usr/bin/env bash
# What the audit log (on in every built-in profile) costs on the smallest
# command: `safe-exec -- /bin/true` with the audit log on and off, side by
# side in ONE hyperfine run, with /bin/true as the floor. hyperfine runs each
# command's rounds in turn, so under changing load run it twice, the second
# time with REVERSE=1 (audit on measured first).
# Usage: benches/audit.sh [hyperfine args]
#
# audit on:  --profile on.toml  (extends = "default": JSONL to {state}/audit.jsonl)
# audit off: --profile off.toml (extends = "default", [audit] enabled = false)
#
# Builds the dist profile (as shipped). Runs in a temporary HOME/TMPDIR/state
# dir; no user or system configuration is read. Results (markdown) are
# printed and kept in target/bench/audit.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

command -v hyperfine >/dev/null || {
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine
}

. "$root/packaging/shipped-target.sh"   # sets triple, rustflags
RUSTFLAGS="$rustflags" cargo build --quiet --profile dist --target "$triple" --bin safe-exec
bin=${CARGO_TARGET_DIR:-$root/target}/$triple/dist/safe-exec

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/tmp" "$work/state" "$work/cwd"
export HOME=$work/home TMPDIR=$work/tmp SAFE_EXEC_STATE_DIR=$work/state
export XDG_CONFIG_HOME=$work/home/.config SAFE_EXEC_SYSTEM_CONFIG=$work/none.toml
unset SAFE_EXEC_PROFILE SAFE_EXEC_AGENT
printf 'extends = "default"\n' >"$work/on.toml"
printf 'extends = "default"\n[audit]\nenabled = false\n' >"$work/off.toml"
cd "$work/cwd"

echo "machine: $(nproc) CPUs, $(uname -sr), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$bin" --profile "$work/on.toml" -- /bin/true
[ -s "$work/state/audit.jsonl" ] || { echo "audit on wrote no record" >&2; exit 1; }
rm -f "$work/state/audit.jsonl"
"$bin" --profile "$work/off.toml" -- /bin/true
[ ! -e "$work/state/audit.jsonl" ] || { echo "audit off wrote a record" >&2; exit 1; }

mkdir -p "$root/target/bench"
off=(-n audit-off "$bin --profile $work/off.toml -- /bin/true")
on=(-n audit-on "$bin --profile $work/on.toml -- /bin/true")
if [ -n "${REVERSE:-}" ]; then pair=("${on[@]}" "${off[@]}"); else pair=("${off[@]}" "${on[@]}"); fi
hyperfine -N --warmup 20 --min-runs 300 --export-markdown "$root/target/bench/audit.md" \
    --export-json "$root/target/bench/audit.json" \
    -n true /bin/true "${pair[@]}" "$@"
cat "$root/target/bench/audit.md"
echo "records written: $(wc -l <"$work/state/audit.jsonl") lines in $work/state/audit.jsonl"
