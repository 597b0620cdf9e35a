#!/usr/bin/env bash
# Start-up cost of safe-exec against bare exec, bubblewrap and firejail, in
# ONE hyperfine run, plus peak RSS. Usage: benches/startup.sh [hyperfine args]
#
#   /bin/true                                        the floor
#   safe-exec -- /bin/true                           decide + sandbox + exec in place
#   safe-exec check -c 'git status && cargo test'    decide only (nothing runs)
#   bwrap --ro-bind / / /bin/true                    namespace sandbox
#   firejail --quiet --noprofile --net=none /bin/true
#
# Installs hyperfine, bubblewrap, firejail and GNU time with apt-get when
# missing. Builds the dist profile (target/TRIPLE/dist/safe-exec). Everything runs in a temporary
# directory with a temporary HOME/TMPDIR/state dir and the built-in default
# profile (no user or system configuration is read). Results (markdown)
# are printed and kept in target/bench/startup.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

need=()
command -v hyperfine >/dev/null || need+=(hyperfine)
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v firejail >/dev/null || need+=(firejail)
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi

# The binary as shipped (packaging/build-deb.sh): static musl.
. "$root/packaging/shipped-target.sh"   # sets triple, rustflags
RUSTFLAGS="$rustflags" cargo build --quiet --profile dist --target "$triple" --manifest-path "$root/Cargo.toml" --bin safe-exec
bin=${CARGO_TARGET_DIR:-$root/target}/$triple/dist/safe-exec

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home/.ssh" "$work/tmp" "$work/state" "$work/cwd"
export HOME=$work/home TMPDIR=$work/tmp SAFE_EXEC_STATE_DIR=$work/state
export XDG_CONFIG_HOME=$work/home/.config SAFE_EXEC_SYSTEM_CONFIG=$work/none.toml
unset SAFE_EXEC_PROFILE SAFE_EXEC_AGENT
cd "$work/cwd"

echo "machine: $(nproc) CPUs, $(uname -sr), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)"
echo "landlock ABI: $("$bin" doctor --json | sed -n 's/.*"landlock_abi":\([0-9]*\).*/\1/p' | head -1)"
"$bin" -- /bin/true
st=0; "$bin" check -c 'git status && cargo test' >/dev/null || st=$?
echo "check exit: $st (0 = allow)"

names=(true safe-exec check)
cmds=(/bin/true "$bin -- /bin/true" "$bin check -c 'git status && cargo test'")
if bwrap --ro-bind / / /bin/true 2>/dev/null; then
    names+=(bwrap); cmds+=("bwrap --ro-bind / / /bin/true")
else
    echo "bwrap cannot run here (user namespaces unavailable): left out"
fi
if firejail --quiet --noprofile --net=none /bin/true 2>/dev/null; then
    names+=(firejail); cmds+=("firejail --quiet --noprofile --net=none /bin/true")
else
    echo "firejail cannot run here: left out"
fi
args=()
for i in "${!cmds[@]}"; do args+=(-n "${names[$i]}" "${cmds[$i]}"); done
mkdir -p "$root/target/bench"
hyperfine -N --warmup 20 --min-runs 300 --export-markdown "$root/target/bench/startup.md" \
    --export-json "$root/target/bench/startup.json" "${args[@]}" "$@"
cat "$root/target/bench/startup.md"

echo
rss() { # peak RSS in KiB, the largest of 5 runs
    local best=0 k
    for _ in 1 2 3 4 5; do
        k=$(/usr/bin/time -v "$@" 2>&1 >/dev/null | sed -n 's/.*Maximum resident set size (kbytes): //p')
        [ "$k" -gt "$best" ] && best=$k
    done
    echo "$best"
}
echo "peak RSS /bin/true:                                    $(rss /bin/true) KiB"
echo "peak RSS safe-exec -- /bin/true:                       $(rss "$bin" -- /bin/true) KiB"
echo "peak RSS safe-exec check -c 'git status && cargo test': $(rss "$bin" check -c 'git status && cargo test') KiB"
