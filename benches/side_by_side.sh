#!/usr/bin/env bash
# safe-exec against the floor of its kind, side by side (issue 14).
# Usage: benches/side_by_side.sh [RUNS]      (default 300 runs per row)
#
# Rows (all in one interleaved run):
#   true            /bin/true
#   floor           examples/floor.rs: Landlock (ro /, rw cwd+tmp) + 9-syscall
#                   seccomp filter + exec in place; the kind's floor
#   bwrap           bwrap --ro-bind / / /bin/true (when installed and it runs)
#   run             safe-exec -- /bin/true (default profile: supervisor,
#                   protected-file check, audit on: all of it)
#   check           safe-exec check -c 'git status && cargo test'
#   hook-allow      safe-exec hook < {"tool_input":{"command":"git status"}}
#   hook-deny       safe-exec hook < {"tool_input":{"command":"rm -rf ~"}}
#   run-200rules    run with a profile file: extends default + 200 [[rule]]
#   run-deephome    run with HOME 20 levels deep holding 200 entries
#   run-bigtmp      run with TMPDIR holding 2,000 entries
#   run-deepcwd     run in a cwd 40 levels deep
#   run-noaudit     run with a profile file: extends default, [audit] off
#                   (what the audit log costs, in the same rounds)
#
# Both binaries are built as shipped (packaging/build-deb.sh): the `dist`
# profile, static musl (packaging/shipped-target.sh). The driver (python3, posix_spawn + wait4) starts
# the rows round-robin, one run of each per round, so load on a shared
# machine hits every row alike; it reports median, 10th percentile and
# minimum wall time and their ratios to the floor, the median CPU time
# (user + system of the row and the descendants it reaped: steadier than
# wall time when other work shares the cores) and its ratio, and peak RSS
# (GNU time). The spawn cost of the driver is in every row.
# Then one `hyperfine -N` run of the plain rows as a cross-check.
# Everything runs in a temporary directory with a temporary HOME, TMPDIR,
# state dir and no user or system configuration. Results: target/bench/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=${1:-300}

. "$root/packaging/shipped-target.sh"   # sets triple, rustflags
[ -n "${SAFE_EXEC_NO_BUILD:-}" ] || RUSTFLAGS="$rustflags" cargo build --quiet --profile dist --target "$triple" \
    --manifest-path "$root/Cargo.toml" --bin safe-exec --example floor
out=${CARGO_TARGET_DIR:-$root/target}/$triple/dist
bin=${SAFE_EXEC_BIN:-$out/safe-exec}   # SAFE_EXEC_BIN=path: compare another build
floor=$out/examples/floor

# Not under /tmp: the home and state dir below hold denied paths, and the
# Landlock carving grants each entry of every directory on the way to one
# (a /tmp shared with other users would be carved; see the TMPDIR row).
work=$(mktemp -d -p /var/tmp)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir -p "$work/home/.ssh" "$work/tmp" "$work/state" "$work/cwd"
export HOME=$work/home TMPDIR=$work/tmp SAFE_EXEC_STATE_DIR=$work/state
export XDG_CONFIG_HOME=$work/home/.config XDG_CACHE_HOME=$work/home/.cache SAFE_EXEC_SYSTEM_CONFIG=$work/none.toml
unset SAFE_EXEC_PROFILE SAFE_EXEC_AGENT
cd "$work/cwd"

# Scaling fixtures.
{
    echo 'extends = "default"'
    for i in $(seq 1 200); do
        cat <<EOF

[[rule]]
id = "bench-rule-$i"
label = "bench rule $i"
description = "a custom rule for the start-up benchmark"
pattern = '^benchtool$i( |\$)'
category = "bench"
severity = "warning"
platform = "all"
examples = { match = ["benchtool$i --x"], not_match = ["benchtool${i}x", "ls"] }
EOF
    done
} >"$work/rules200.toml"
printf 'extends = "default"\n[audit]\nenabled = false\n' >"$work/noaudit.toml"
deep=$work/deephome
for i in $(seq 1 20); do deep=$deep/d$i; done
mkdir -p "$deep/.ssh"
for i in $(seq 1 100); do mkdir -p "$deep/dir$i"; : >"$deep/.dot$i"; done
mkdir -p "$work/bigtmp"
for i in $(seq 1 2000); do : >"$work/bigtmp/f$i"; done
dcwd=$work/cwd
for i in $(seq 1 40); do dcwd=$dcwd/c$i; done
mkdir -p "$dcwd"
mk() { printf '{"session_id":"s","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":%s}}' "$work/cwd" "$2" >"$work/$1.json"; }
mk allow '"git status"'
mk deny '"rm -rf ~"'

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) CPUs, $(uname -sr), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "landlock ABI: $("$bin" doctor --json 2>/dev/null | sed -n 's/.*"landlock_abi":\([0-9]*\).*/\1/p' | head -1)"
echo "safe-exec $(stat -c %s "$bin") bytes, floor $(stat -c %s "$floor") bytes"
# Sanity: every row does what it says.
"$floor" /bin/true
"$bin" -- /bin/true
"$bin" check -c 'git status && cargo test' >/dev/null
"$bin" --profile "$work/rules200.toml" -- /bin/true
HOME=$deep "$bin" -- /bin/true
TMPDIR=$work/bigtmp "$bin" -- /bin/true
(cd "$dcwd" && "$bin" -- /bin/true)
# Claude Code's protocol: exit 0 lets the tool run, exit 2 blocks it.
"$bin" hook <"$work/allow.json" >/dev/null 2>&1 || { echo "hook-allow row does not allow"; exit 1; }
st=0; "$bin" hook <"$work/deny.json" >/dev/null 2>&1 || st=$?
[ "$st" = 2 ] || { echo "hook-deny row does not deny (exit $st)"; exit 1; }
bw=0
if command -v bwrap >/dev/null && bwrap --ro-bind / / /bin/true 2>/dev/null; then bw=$(command -v bwrap); else
    echo "bwrap not installed or cannot run here (user namespaces): row left out"; fi

[ -x /usr/bin/time ] || { echo "GNU time (/usr/bin/time) is needed for peak RSS: apt-get install time"; exit 1; }
mkdir -p "$root/target/bench"
python3 - "$runs" "$work" "$bin" "$floor" "$bw" "$deep" "$dcwd" "${SAFE_EXEC_BASE:-}" <<'PY' | tee "$root/target/bench/side_by_side.md"
import os, sys, time, statistics
runs, work, exe, floor, bw, deep, dcwd = int(sys.argv[1]), *sys.argv[2:4], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7]
bw = None if bw == "0" else bw  # bwrap's full path (posix_spawn does not search PATH)
other = sys.argv[8]  # SAFE_EXEC_BASE: an earlier build, same rows, same rounds
base = dict(os.environ)
cwd = work + "/cwd"
rows = [
    ("`/bin/true`", ["/bin/true"], {}, None, cwd),
    ("floor wrapper", [floor, "/bin/true"], {}, None, cwd),
]
if bw:
    rows.append(("`bwrap --ro-bind / / /bin/true`", [bw, "--ro-bind", "/", "/", "/bin/true"], {}, None, cwd))
rows += [
    ("**`safe-exec -- /bin/true`**", [exe, "--", "/bin/true"], {}, None, cwd),
    ("`safe-exec check -c 'git status && cargo test'`", [exe, "check", "-c", "git status && cargo test"], {}, None, cwd),
    ("`safe-exec hook`, allowed (`git status`)", [exe, "hook"], {}, work + "/allow.json", cwd),
    ("`safe-exec hook`, denied (`rm -rf ~`)", [exe, "hook"], {}, work + "/deny.json", cwd),
    ("run, profile with 200 `[[rule]]`", [exe, "--profile", work + "/rules200.toml", "--", "/bin/true"], {}, None, cwd),
    ("run, HOME 20 levels deep, 200 entries", [exe, "--", "/bin/true"], {"HOME": deep}, None, cwd),
    ("run, TMPDIR with 2,000 entries", [exe, "--", "/bin/true"], {"TMPDIR": work + "/bigtmp"}, None, cwd),
    ("run, cwd 40 levels deep", [exe, "--", "/bin/true"], {}, None, dcwd),
    ("run, audit log off (`[audit] enabled = false`)", [exe, "--profile", work + "/noaudit.toml", "--", "/bin/true"], {}, None, cwd),
]
if other:
    rows += [("[base] " + r[0], [other] + r[1][1:], r[2], r[3], r[4]) for r in rows if r[1][0] == exe]
devnull = os.open("/dev/null", os.O_WRONLY)
def once(argv, env, stdin, d):
    fa = [(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)]
    if stdin:
        fa.append((os.POSIX_SPAWN_OPEN, 0, stdin, os.O_RDONLY, 0))
    os.chdir(d)
    t = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=fa)
    _, status, ru = os.wait4(pid, 0)
    dt = time.perf_counter_ns() - t
    # CPU time (user + system) of the row's process and the descendants it
    # waited for: steadier than wall time on a loaded machine.
    return dt / 1e6, ru.ru_maxrss, status, (ru.ru_utime + ru.ru_stime) * 1e3
envs = [dict(base, **e) for (_, _, e, _, _) in rows]
times = [[] for _ in rows]; cpu = [[] for _ in rows]; rss = [0 for _ in rows]
for _ in range(10):  # warm-up
    for i, r in enumerate(rows): once(r[1], envs[i], r[3], r[4])
for _ in range(runs):
    for i, r in enumerate(rows):
        ms, kb, _, c = once(r[1], envs[i], r[3], r[4])
        times[i].append(ms); cpu[i].append(c); rss[i] = max(rss[i], kb)
# Peak RSS: ru_maxrss of a spawned child keeps the spawner's (python's)
# high-water mark across exec, so each row runs 3 times under GNU time.
rss = [0 for _ in rows]
for _ in range(3):
    for i, r in enumerate(rows):
        out = work + "/rss"
        once(["/usr/bin/time", "-f", "%M", "-o", out] + r[1], envs[i], r[3], r[4])
        try:
            rss[i] = max(rss[i], int(open(out).read().split()[-1]))
        except (OSError, ValueError, IndexError):
            pass
med = [statistics.median(t) for t in times]
p10 = [statistics.quantiles(t, n=10, method="inclusive")[0] for t in times]
cmed = [statistics.median(c) for c in cpu]
mn = [min(t) for t in times]
f = med[1]
plain = next(med[i] for i, r in enumerate(rows) if r[0] == "**`safe-exec -- /bin/true`**")
bplain = next((med[i] for i, r in enumerate(rows) if r[0] == "[base] **`safe-exec -- /bin/true`**"), plain)
pp10 = next(p10[i] for i, r in enumerate(rows) if r[0] == "**`safe-exec -- /bin/true`**")
bp10 = next((p10[i] for i, r in enumerate(rows) if r[0] == "[base] **`safe-exec -- /bin/true`**"), pp10)
cplain = next(cmed[i] for i, r in enumerate(rows) if r[0] == "**`safe-exec -- /bin/true`**")
cbplain = next((cmed[i] for i, r in enumerate(rows) if r[0] == "[base] **`safe-exec -- /bin/true`**"), cplain)
print(f"{runs} runs per row, round-robin (python3 posix_spawn + wait4; times include the spawn); p10: the 10th percentile, the steadiest estimate of the unloaded cost on a shared machine; scaling rows: change over the plain run in brackets; CPU: user + system of the row and the descendants it reaped (wait4 rusage), median; peak RSS: GNU time, largest of 3\n")
print("| command | median | p10 | min | x floor (median) | x floor (p10) | x floor (min) | CPU | x floor (CPU) | peak RSS |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for i, r in enumerate(rows):
    extra = ""
    if r[0].startswith("run,") or r[0].startswith("[base] run,"):
        p0 = bplain if r[0].startswith("[base]") else plain
        extra = f" ({(med[i] / p0 - 1) * 100:+.0f}%)"
    pextra = ""
    if r[0].startswith("run,") or r[0].startswith("[base] run,"):
        q0 = bp10 if r[0].startswith("[base]") else pp10
        pextra = f" ({(p10[i] / q0 - 1) * 100:+.0f}%)"
    cextra = ""
    if r[0].startswith("run,") or r[0].startswith("[base] run,"):
        c0 = cbplain if r[0].startswith("[base]") else cplain
        cextra = f" ({(cmed[i] / c0 - 1) * 100:+.0f}%)"
    print(f"| {r[0]} | {med[i]:.2f} ms | {p10[i]:.2f} ms | {mn[i]:.2f} ms | {med[i] / f:.2f}{extra} | {p10[i] / p10[1]:.2f}{pextra} | {mn[i] / mn[1]:.2f} | {cmed[i]:.2f} ms | {cmed[i] / cmed[1]:.2f}{cextra} | {rss[i] / 1024:.1f} MiB |")
PY

echo
echo "## hyperfine -N cross-check (plain rows)"
names=(true floor safe-exec check)
cmds=(/bin/true "$floor /bin/true" "$bin -- /bin/true" "$bin check -c 'git status && cargo test'")
[ "$bw" != 0 ] && { names+=(bwrap); cmds+=("$bw --ro-bind / / /bin/true"); }
args=()
for i in "${!cmds[@]}"; do args+=(-n "${names[$i]}" "${cmds[$i]}"); done
hyperfine -N --style basic --warmup 20 --runs "$runs" --export-markdown "$root/target/bench/side_by_side_hyperfine.md" "${args[@]}" >/dev/null
sed "s#$out/##g" "$root/target/bench/side_by_side_hyperfine.md"
