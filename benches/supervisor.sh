#!/usr/bin/env bash
# The supervisor's cost (issue 14): per notified syscall, and for a build
# that execs many processes. Usage: benches/supervisor.sh [RUNS] [FILES]
#
#   execs:  sh -c 'a loop of 1,000 /bin/true'   (every execve is notified to
#           the supervisor, which checks it and lets it continue)
#   chmod:  a small C program chmod-ing a file in the cwd 5,000 times (each
#           call notified, checked and performed by the supervisor)
#   build:  make -j2 of a generated C project of FILES (default 200) files:
#           gcc, cc1 and as per file plus the link, ~600 execs
# each run bare, under the floor wrapper (Landlock + seccomp, no supervisor,
# examples/floor.rs) and under `safe-exec --` (default profile: supervisor
# on). The difference between the floor and safe-exec per exec is the
# supervisor's cost per notified syscall (plus the loop's share of
# safe-exec's fixed start-up, ~1/1000). hyperfine, `--runs RUNS` (default
# 10), then both again in interleaved rounds with CPU time. Temporary directory under
# /var/tmp, temporary HOME/TMPDIR/state dir, built-in default profile.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=${1:-10}
files=${2:-200}

. "$root/packaging/shipped-target.sh"   # sets triple, rustflags
[ -n "${SAFE_EXEC_NO_BUILD:-}" ] || RUSTFLAGS="$rustflags" cargo build --quiet --profile dist --target "$triple" \
    --manifest-path "$root/Cargo.toml" --bin safe-exec --example floor
out=${CARGO_TARGET_DIR:-$root/target}/$triple/dist
bin=${SAFE_EXEC_BIN:-$out/safe-exec}
floor=$out/examples/floor

work=$(mktemp -d -p /var/tmp)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir -p "$work/home/.ssh" "$work/tmp" "$work/state" "$work/cwd"
export HOME=$work/home TMPDIR=$work/tmp SAFE_EXEC_STATE_DIR=$work/state
export XDG_CONFIG_HOME=$work/home/.config XDG_CACHE_HOME=$work/home/.cache SAFE_EXEC_SYSTEM_CONFIG=$work/none.toml
unset SAFE_EXEC_PROFILE SAFE_EXEC_AGENT
cd "$work/cwd"

objs=""
for i in $(seq 1 "$files"); do
    printf 'int f%d(int x) { return x * %d + 1; }\n' "$i" "$i" >"f$i.c"
    objs="$objs f$i.o"
done
printf 'int main(void) { return 0; }\n' >main.c
{
    echo "prog: main.o$objs"
    printf '\t$(CC) -o $@ $^\n'
    echo "%.o: %.c"
    printf '\t$(CC) -O0 -c -o $@ $<\n'
    echo "clean:"
    printf '\trm -f prog *.o\n'
} >Makefile
loop='i=0; while [ $i -lt 1000 ]; do /bin/true; i=$((i+1)); done'
# A notified call without an exec: chmod of a file in the cwd, N times.
printf '#include <stdlib.h>\n#include <sys/stat.h>\nint main(int c, char **v) { int n = atoi(v[1]); for (int i = 0; i < n; i++) chmod("f", 0644); return 0; }\n' >chmodloop.c
cc -O2 -o chmodloop chmodloop.c && : >f

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) CPUs, $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$bin" -- make -s -j2 >/dev/null && make -s clean
execs=$(strace -f -e trace=execve -o "$work/trace" make -s -j2 >/dev/null 2>&1; grep -c 'execve(' "$work/trace"); make -s clean
echo "build: $files C files, $execs execve calls"

mkdir -p "$root/target/bench"
hyperfine -N --style basic --warmup 1 --runs "$runs" --export-markdown "$root/target/bench/supervisor_execs.md" \
    -n bare "sh -c '$loop'" -n floor "$floor sh -c '$loop'" -n safe-exec "$bin -- sh -c '$loop'" >/dev/null
sed "s#$out/##g" "$root/target/bench/supervisor_execs.md"
echo
# The exec loop and the build: interleaved rounds (bare, floor, safe-exec;
# make clean between builds), medians and minimums of wall time and the
# median CPU time (user + system of the whole tree, from wait4: the
# supervisor thread's work included; steadier than wall time when other
# work shares the cores).
python3 - "$runs" "$floor" "$bin" "$loop" <<'PY' | tee "$root/target/bench/supervisor_build.md"
import os, subprocess, sys, time, statistics
runs, floor, exe, loop = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
def timed(argv):
    a = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    _, st, ru = os.wait4(p.pid, 0)
    assert st == 0, argv
    return time.perf_counter() - a, ru.ru_utime + ru.ru_stime
def table(title, rows, prep, unit, scale):
    t = [[] for _ in rows]; c = [[] for _ in rows]
    for _ in range(runs):
        for i, (_, argv) in enumerate(rows):
            if prep:
                subprocess.run(prep, check=True)
            w, cpu = timed(argv)
            t[i].append(w * scale); c[i].append(cpu * scale)
    print(f"{title}: {runs} interleaved rounds\n")
    print(f"| command | median | min | CPU (median) | x bare (CPU) |")
    print("|---|---:|---:|---:|---:|")
    c0 = statistics.median(c[0])
    for (name, _), x, y in zip(rows, t, c):
        print(f"| {name} | {statistics.median(x):.2f} {unit} | {min(x):.2f} {unit} | {statistics.median(y):.2f} {unit} | {statistics.median(y) / c0:.2f} |")
    print()
    return [statistics.median(y) for y in c], [statistics.median(x) for x in t]
cpu, wall = table("1,000 execs of /bin/true from sh", [
    ("`sh -c LOOP`", ["sh", "-c", loop]),
    ("floor wrapper `sh -c LOOP`", [floor, "sh", "-c", loop]),
    ("`safe-exec -- sh -c LOOP`", [exe, "--", "sh", "-c", loop])], None, "ms", 1e3)
print(f"per notified execve (safe-exec minus floor, / 1,000): wall {(wall[2] - wall[1]):.0f} us, CPU {(cpu[2] - cpu[1]):.0f} us\n")
cpu, wall = table("5,000 chmod of a file in the cwd (one process)", [
    ("`./chmodloop 5000`", ["./chmodloop", "5000"]),
    ("floor wrapper", [floor, "./chmodloop", "5000"]),
    ("`safe-exec --`", [exe, "--", "./chmodloop", "5000"])], None, "ms", 1e3)
print(f"per notified chmod (safe-exec minus floor, / 5,000): wall {(wall[2] - wall[1]) / 5:.0f} us, CPU {(cpu[2] - cpu[1]) / 5:.0f} us (safe-exec's own start-up included: ~1 us of it)\n")
table("make -j2", [("`make -j2`", ["make", "-s", "-j2"]),
        ("floor wrapper `make -j2`", [floor, "make", "-s", "-j2"]),
        ("`safe-exec -- make -j2`", [exe, "--", "make", "-s", "-j2"])], ["make", "-s", "clean"], "s", 1)
PY
