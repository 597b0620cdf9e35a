#!/usr/bin/env bash
# Per-exec overhead of safe-exec's sandbox against bare exec, bubblewrap and
# firejail, plus safe-exec's peak RSS. Usage: benches/sandbox.sh
#
# Installs hyperfine, bubblewrap and firejail with apt-get when missing.
# Uses target/release/safe-exec when it really runs commands (`-- /bin/false`
# exits 1);
# otherwise (before the CLI lands) the release build of the sandbox_exec
# example with the default confinement: read /, write cwd and $TMPDIR,
# deny ~/.ssh and ~/.aws, network off, exec in place (no supervisor).
# Everything runs in a temporary directory with a temporary HOME.
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

cargo build --quiet --release --manifest-path "$root/Cargo.toml" --bins --example sandbox_exec

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home/.ssh" "$work/home/.aws" "$work/tmp" "$work/cwd"
export HOME=$work/home TMPDIR=$work/tmp
cd "$work/cwd"
bin=$root/target/release/safe-exec
st=0; "$bin" -- /bin/false >/dev/null 2>&1 || st=$?
if [ "$st" = 1 ] && "$bin" -- /bin/true >/dev/null 2>&1; then
    se=("$bin" --)
    what="safe-exec -- /bin/true (default profile)"
else
    cat > "$work/spec.json" <<JSON
{"sandbox":{"read":["/"],"write":["$work/cwd","$work/tmp"],
 "deny_read":["$work/home/.ssh","$work/home/.aws"],"network":"off",
 "unix_sockets":false,"limits":{},"enforcement":"required","timeout":null}}
JSON
    se=("$root/target/release/examples/sandbox_exec" --spec "$work/spec.json" --)
    what="sandbox_exec (library, default confinement, exec in place) /bin/true"
fi
echo "safe-exec command: ${se[*]}"
"${se[@]}" /bin/true

cmds=(/bin/true "${se[*]} /bin/true")
names=(true safe-exec)
if bwrap --ro-bind / / /bin/true 2>/dev/null; then
    cmds+=("bwrap --ro-bind / / /bin/true"); names+=(bwrap)
else
    echo "bwrap cannot run here (user namespaces unavailable): left out"
fi
if firejail --quiet --noprofile --net=none /bin/true 2>/dev/null; then
    cmds+=("firejail --quiet --noprofile --net=none /bin/true"); names+=(firejail)
else
    echo "firejail cannot run here: left out"
fi
args=()
for i in "${!cmds[@]}"; do args+=(-n "${names[$i]}" "${cmds[$i]}"); done
hyperfine -N --warmup 20 --min-runs 300 --export-markdown "$work/bench.md" "${args[@]}"
cat "$work/bench.md"

echo
echo "peak RSS of: $what"
for _ in 1 2 3; do
    /usr/bin/time -v "${se[@]}" /bin/true 2>&1 | grep 'Maximum resident set size'
done
