#!/usr/bin/env bash
# Whole-process time of one `safe-exec hook` call against /bin/true, side by
# side (issue 5: at most 2x). Usage: benches/hook.sh [RUNS]
#
# hyperfine 1.15 (Debian) has no --input, and a hook needs its JSON on
# stdin, so two measurements are taken:
#  1. hyperfine with its default shell, `CMD < input.json`, both sides; hyperfine
#     subtracts the shell's own start-up, so what remains is the process
#     itself (noisy below 5 ms, as hyperfine warns);
#  2. a small posix_spawn driver (python3) that starts each command RUNS
#     times with stdin from the file, interleaved, and reports mean, median
#     and min wall time; the spawn cost is the same on both sides.
# Runs in a temporary HOME/TMPDIR/state dir with the built-in default profile.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=${1:-500}
command -v hyperfine >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine; }
# The binary as shipped (packaging/build-deb.sh): static musl.
. "$root/packaging/shipped-target.sh"   # sets triple, rustflags
RUSTFLAGS="$rustflags" cargo build --quiet --profile dist --target "$triple" --bin safe-exec
bin=${CARGO_TARGET_DIR:-$root/target}/$triple/dist/safe-exec

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home/.ssh" "$work/tmp" "$work/state" "$work/cwd"
export HOME=$work/home TMPDIR=$work/tmp SAFE_EXEC_STATE_DIR=$work/state
export XDG_CONFIG_HOME=$work/home/.config SAFE_EXEC_SYSTEM_CONFIG=$work/none.toml
unset SAFE_EXEC_PROFILE SAFE_EXEC_AGENT
cd "$work/cwd"
mk() { printf '{"session_id":"s","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":%s}}' "$work/cwd" "$2" >"$work/$1.json"; }
mk allow '"git status"'
mk chain '"cargo build && cargo test 2>&1 | tail -n 20"'
mk deny '"rm -rf ~"'

echo "## hyperfine (shell-corrected)"
hyperfine -i --style basic --warmup 20 --min-runs "$runs" \
  "/bin/true < $work/allow.json" \
  "$bin hook < $work/allow.json" \
  "$bin hook --json < $work/allow.json" \
  "$bin hook < $work/chain.json" \
  "$bin hook < $work/deny.json" \
  --export-markdown "$work/hyperfine.md" >/dev/null
sed "s#$bin#safe-exec#g; s#$work/##g" "$work/hyperfine.md"

echo
echo "## posix_spawn driver ($runs runs each, interleaved)"
python3 - "$runs" "$work" "$bin" <<'PY'
import os, sys, time, statistics
runs, work, exe = int(sys.argv[1]), sys.argv[2], sys.argv[3]
cases = [("/bin/true", ["/bin/true"], "allow"),
         ("safe-exec hook (allow: git status)", [exe, "hook"], "allow"),
         ("safe-exec hook --json (allow)", [exe, "hook", "--json"], "allow"),
         ("safe-exec hook (allow: a chain)", [exe, "hook"], "chain"),
         ("safe-exec hook (deny: rm -rf ~)", [exe, "hook"], "deny")]
times = {c[0]: [] for c in cases}
devnull = os.open(os.devnull, os.O_WRONLY)
for i in range(runs + 20):
    for name, argv, inp in cases:
        fd = os.open(f"{work}/{inp}.json", os.O_RDONLY)
        t = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, dict(os.environ),
                             file_actions=[(os.POSIX_SPAWN_DUP2, fd, 0),
                                           (os.POSIX_SPAWN_DUP2, devnull, 1),
                                           (os.POSIX_SPAWN_DUP2, devnull, 2)])
        os.waitpid(pid, 0)
        dt = time.perf_counter() - t
        os.close(fd)
        if i >= 20:
            times[name].append(dt * 1000)
base = statistics.median(times["/bin/true"])
print("| command | mean | median | min | median vs /bin/true |")
print("|---|---:|---:|---:|---:|")
for name, *_ in cases:
    v = times[name]
    print(f"| `{name}` | {statistics.mean(v):.2f} ms | {statistics.median(v):.2f} ms | {min(v):.2f} ms | {statistics.median(v)/base:.2f} |")
PY
