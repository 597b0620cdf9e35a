#!/usr/bin/env bash
# Installs the Debian package into a throwaway Debian root (debootstrap,
# minbase, bookworm) and checks it there with chroot:
#
#   1. the package: files, conffile, /etc/shells, no login shell changed,
#      `safe-exec --version`, `safe-exec doctor`, a sandboxed command;
#   2. the container layout of packaging/container/Dockerfile: the same
#      /etc/safe-exec/config.toml (container profile, pinned), /workspace,
#      an `agent` user whose shell is safe-exec, and the agent's commands;
#   3. removal and purge: /etc/shells cleaned, conffile kept until purge.
#
#   sudo bash packaging/test-deb.sh [PATH.deb]
#
# Without an argument the package is built first (packaging/build-deb.sh;
# SAFE_EXEC_NO_BUILD=1 reuses target/x86_64-unknown-linux-musl/dist/safe-exec). Needs root,
# debootstrap and network access to the Debian mirror of
# /etc/apt/sources.list on the first run; the minimal root is cached as a
# tarball in $SAFE_EXEC_PACKAGING_CACHE (default
# ${TMPDIR:-/tmp}/safe-exec-packaging-cache), so later runs need no network.
# Landlock works in a chroot; nothing outside the temp dir is changed (the
# chroot's /proc is mounted in a private mount namespace).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

log() { echo "test-deb: $*" >&2; }
die() { echo "test-deb: FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (chroot, dpkg in the throwaway root)"
for tool in debootstrap chroot unshare dpkg-deb; do
  command -v "$tool" >/dev/null 2>&1 || {
    if command -v apt-get >/dev/null 2>&1; then
      log "installing debootstrap"
      apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    fi
    command -v "$tool" >/dev/null 2>&1 || die "$tool is missing"
  }
done

deb=${1:-}
if [ -z "$deb" ]; then
  deb=$(bash packaging/build-deb.sh | tail -n 1)
fi
deb=$(readlink -f "$deb")
[ -f "$deb" ] || die "no package at $deb"
log "package: $deb"

# --- the throwaway root -------------------------------------------------------
cache=${SAFE_EXEC_PACKAGING_CACHE:-${TMPDIR:-/tmp}/safe-exec-packaging-cache}
suite=${SAFE_EXEC_PACKAGING_SUITE:-bookworm}
tarball=$cache/$suite-minbase.tar
mkdir -p "$cache"
if [ ! -s "$tarball" ]; then
  mirror=$(grep -hoE '^(deb|URIs:) +https?://[^ ]*/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null \
    | grep -oE 'https?://[^ ]*' | head -n 1 || true)
  mirror=${mirror:-http://deb.debian.org/debian}
  log "debootstrap --variant=minbase $suite from $mirror (cached in $tarball)"
  boot=$(mktemp -d "$cache/boot.XXXXXX")
  debootstrap --variant=minbase "$suite" "$boot/root" "$mirror" >"$cache/debootstrap.log" 2>&1 \
    || { tail -n 20 "$cache/debootstrap.log" >&2; rm -rf "$boot"; die "debootstrap failed"; }
  rm -f "$boot"/root/var/cache/apt/archives/*.deb
  tar -C "$boot/root" -cf "$tarball.partial" . && mv "$tarball.partial" "$tarball"
  rm -rf "$boot"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/safe-exec-test-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir "$root"
tar -C "$root" -xf "$tarball"
cp "$deb" "$root/tmp/safe-exec.deb"

# Everything that runs inside the root goes through this: a private mount
# namespace with /proc mounted, then chroot. The host's mounts are untouched.
cat > "$work/in-root" <<'EOF'
#!/bin/sh
# in-root ROOT CHROOT-ARGS...: mounts ROOT/proc, then runs chroot CHROOT-ARGS...
root=$1; shift
exec unshare --mount --propagation private sh -c '
  root=$1; shift
  mount -t proc proc "$root/proc" || exit 125
  exec chroot "$@"
' in-root "$root" "$@"
EOF
chmod +x "$work/in-root"
inroot() { "$work/in-root" "$root" "$@"; }
# Runs COMMAND in the root; checks its exit code.
expect() {
  local want=$1; shift
  local got=0
  inroot "$@" >"$work/out" 2>"$work/err" || got=$?
  if [ "$got" != "$want" ]; then
    echo "--- stdout"; cat "$work/out"; echo "--- stderr"; cat "$work/err"
    die "expected exit $want, got $got: $*"
  fi >&2
}

# --- 1. the package ------------------------------------------------------------
log "install"
shells_before=$(cat "$root/etc/shells")
root_shell_before=$(grep '^root:' "$root/etc/passwd" | cut -d: -f7)
expect 0 "$root" dpkg -i /tmp/safe-exec.deb

for f in /usr/bin/safe-exec \
         /usr/share/safe-exec/profiles/default.toml \
         /usr/share/safe-exec/profiles/container.toml \
         /usr/share/man/man1/safe-exec.1.gz \
         /usr/share/bash-completion/completions/safe-exec \
         /usr/share/zsh/vendor-completions/_safe-exec \
         /usr/share/fish/vendor_completions.d/safe-exec.fish \
         /usr/share/doc/safe-exec/README.md \
         /usr/share/doc/safe-exec/copyright \
         /etc/safe-exec/config.toml; do
  [ -e "$root$f" ] || die "$f is not installed"
done
inroot "$root" dpkg-query -W -f='${Conffiles}\n' safe-exec | grep -q '/etc/safe-exec/config.toml' \
  || die "/etc/safe-exec/config.toml is not a conffile"
grep -vE '^\s*(#|$)' "$root/etc/safe-exec/config.toml" && die "the shipped config.toml sets something"
grep -qx /usr/bin/safe-exec "$root/etc/shells" || die "/usr/bin/safe-exec is not in /etc/shells"
[ "$(readlink -f "$root/usr/lib/safe-exec/bin/bash")" = "$(readlink -f "$root/usr/bin/safe-exec")" ] \
  || die "/usr/lib/safe-exec/bin/bash is not a link to safe-exec"
grep -qx /usr/lib/safe-exec/bin/bash "$root/etc/shells" || die "/usr/lib/safe-exec/bin/bash is not in /etc/shells"
[ "$(grep '^root:' "$root/etc/passwd" | cut -d: -f7)" = "$root_shell_before" ] || die "root's login shell changed"
grep -q ':/usr/bin/safe-exec$' "$root/etc/passwd" && die "someone's login shell was changed to safe-exec"
zcat "$root/usr/share/man/man1/safe-exec.1.gz" | grep -q '^\.TH safe-exec 1' || die "man page has no .TH"
zcat "$root/usr/share/man/man1/safe-exec.1.gz" | grep -q 'EXIT STATUS' || die "man page lacks EXIT STATUS"
grep -q complete "$root/usr/share/bash-completion/completions/safe-exec" || die "bash completion is empty"

log "safe-exec --version, doctor"
expect 0 "$root" safe-exec --version
grep -q '^safe-exec ' "$work/out" || die "--version: $(cat "$work/out")"
grep -q 'Landlock: built for ABI' "$work/out" || die "--version lacks the Landlock ABI"
expect 0 "$root" safe-exec doctor
cat "$work/out" >&2
grep -q 'profile "container"' "$work/out" || die "doctor does not list the container profile"

log "a sandboxed command (default profile, cwd /root/proj)"
mkdir -p "$root/root/proj"
expect 0 "$root" sh -c 'cd /root/proj && safe-exec -c "echo hello > out.txt && cat out.txt"'
grep -qx hello "$work/out" || die "sandboxed echo printed: $(cat "$work/out")"
# The validator refuses a visible write outside the roots ...
expect 126 "$root" sh -c 'cd /root/proj && safe-exec -c "echo x > /etc/pwned"'
grep -q '^safe-exec: denied:' "$work/err" || die "no denial line: $(cat "$work/err")"
# ... and the kernel stops one the validator cannot see: a path computed at
# run time inside inline code (perl-base is in every Debian root). perl's
# open() fails with EACCES (13) from Landlock.
expect 13 "$root" sh -c 'cd /root/proj && exec safe-exec -- perl -e "$1"' sh \
  'open(F, ">", "/e"."tc/pwned") or die "refused: $!\n"'

[ -e "$root/etc/pwned" ] && die "the sandbox let perl write /etc/pwned"
grep -q 'refused: Permission denied' "$work/err" || die "no EACCES from the kernel: $(cat "$work/err")"

# --- 2. the container layout ---------------------------------------------------
log "container layout: pinned container profile, /workspace, agent user"
cp packaging/container/config.toml "$root/etc/safe-exec/config.toml"
expect 0 "$root" useradd --create-home --uid 10001 --user-group --shell /usr/bin/safe-exec agent
mkdir -p "$root/workspace"
chown 10001:10001 "$root/workspace"
grep -q '^agent:.*:/usr/bin/safe-exec$' "$root/etc/passwd" || die "agent's shell is not safe-exec"
as_agent() {
  local want=$1; shift
  expect "$want" --userspec=10001:10001 "$root" env -i HOME=/home/agent USER=agent \
    PATH=/usr/local/bin:/usr/bin:/bin SHELL=/usr/bin/safe-exec sh -c 'cd /workspace && exec "$@"' sh "$@"
}
as_agent 0 safe-exec -c 'echo built > result.txt && cat result.txt && ls /workspace'
grep -qx built "$work/out" || die "agent could not write in /workspace: $(cat "$work/err")"
[ "$(cat "$root/workspace/result.txt")" = built ] || die "/workspace/result.txt missing"
as_agent 0 safe-exec -c 'echo t > /tmp/agent-tmp && cat /tmp/agent-tmp'
as_agent 126 safe-exec -c 'echo x > /etc/agent-was-here'
[ -e "$root/etc/agent-was-here" ] && die "agent wrote in /etc"
# The pinned profile cannot be loosened: not by --profile, not by the environment.
as_agent 125 safe-exec --profile default -- true
grep -q 'pins' "$work/err" || die "--profile default: $(cat "$work/err")"
as_agent 125 env SAFE_EXEC_PROFILE=default safe-exec -- true
# What the kernel enforces, seen from inside: a path computed at run time.
as_agent 13 safe-exec -- perl -e 'open(F, ">", "/ho"."me/agent/escaped") or die "refused: $!\n"'
grep -q 'refused: Permission denied' "$work/err" || die "agent's computed write: $(cat "$work/err")"
[ -e "$root/home/agent/escaped" ] && die "the sandbox let the agent write in its home"
as_agent 13 safe-exec -- perl -e 'open(F, ">", "/e"."tc/escaped") or die "refused: $!\n"'
[ -e "$root/etc/escaped" ] && die "the sandbox let the agent write in /etc"
# The agent's login shell is safe-exec: `su agent -c` goes through it.
expect 0 "$root" su agent -c 'cd /workspace && echo via-login-shell > login.txt'
[ "$(cat "$root/workspace/login.txt")" = via-login-shell ] || die "su agent -c did not run"
expect 126 "$root" su agent -c 'echo x > /etc/via-su'
[ -e "$root/etc/via-su" ] && die "su agent -c wrote in /etc"

# --- 2b. the Kubernetes layout ---------------------------------------------------
log "kubernetes layout: the ConfigMap's config.toml and agent.toml, audit log"
cm_entry() {
  awk -v key="  $1: |" '$0 == key { on = 1; next }
    on && /^    / { sub(/^    /, ""); print; next }
    on && /^$/ { print; next }
    on { exit }' packaging/kubernetes/configmap.yaml
}
cm_entry config.toml > "$root/etc/safe-exec/config.toml"
cm_entry agent.toml > "$root/etc/safe-exec/agent.toml"
grep -q '^pin = true$' "$root/etc/safe-exec/config.toml" || die "ConfigMap config.toml does not pin"
mkdir -p "$root/var/log/safe-exec"
chown 10001:10001 "$root/var/log/safe-exec"
as_agent 0 safe-exec -c 'echo audited > /workspace/k8s.txt'
as_agent 126 safe-exec -c 'echo x > /etc/k8s'
as_agent 125 safe-exec --profile container -- true
grep -q 'would loosen' "$work/err" || die "--profile container under the pod's pin: $(cat "$work/err")"
audit=$root/var/log/safe-exec/audit.jsonl
[ -s "$audit" ] || die "no audit log at /var/log/safe-exec/audit.jsonl"
grep -q '"decision"' "$audit" && grep -q '"deny"' "$audit" && grep -q '"result"' "$audit" \
  || die "audit log lacks decision/deny/result records: $(cat "$audit")"
log "audit log: $(wc -l < "$audit") records"
cp packaging/container/config.toml "$root/etc/safe-exec/config.toml"

# --- 3. removal ------------------------------------------------------------------
log "remove and purge"
expect 0 "$root" dpkg -r safe-exec
grep -qx /usr/bin/safe-exec "$root/etc/shells" && die "remove left /usr/bin/safe-exec in /etc/shells"
[ -e "$root/usr/lib/safe-exec/bin/bash" ] && die "remove left /usr/lib/safe-exec/bin/bash"
[ -e "$root/etc/safe-exec/config.toml" ] || die "remove deleted the conffile (only purge may)"
expect 0 "$root" dpkg -P safe-exec
[ -e "$root/usr/bin/safe-exec" ] && die "purge left the binary"
[ "$(cat "$root/etc/shells")" = "$shells_before" ] || die "/etc/shells differs from before the install"

log "ok"
