#!/usr/bin/env bash
# What the deny-read carving costs for two builds, in Landlock rules and in
# system calls of `safe-exec -- /bin/true` (strace -f -c), for three HOMEs:
#   devhome  a developer's: ~/.cargo/{bin,registry,git}, 22 entries in
#            ~/.config, ~/.local/{bin,state,share/...}, ~/.docker without
#            config.json, ~/.claude with settings.json, ~/.ssh: most deny
#            paths of the default profile do not exist, their directories do
#   bench    benches/side_by_side.sh's HOME (only ~/.ssh)
#   deep     its HOME 20 levels deep with 200 entries
# Usage: benches/deny_cost.sh BIN_BEFORE BIN_AFTER   (needs strace and jq)
# Everything runs in a temporary directory under /var/tmp.
set -euo pipefail
before=$1 after=$2
work=$(mktemp -d -p /var/tmp deny-cost.XXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{tmp,state,cwd}
h=$work/devhome
mkdir -p "$h"/.ssh "$h"/.cargo/{bin,registry,git} "$h"/.rustup "$h"/.npm "$h"/.cache/{pip,go-build} "$h"/projects/app
touch "$h"/.ssh/{id_ed25519,known_hosts} "$h"/.cargo/{env,config.toml,.package-cache} "$h"/{.bashrc,.profile,.gitconfig,.bash_history,.viminfo}
for d in git nvim fish htop alacritty tmux starship zed helix bat lazygit k9s pip npm go gopls procps pulse Code dconf; do
    mkdir -p "$h/.config/$d"
done
touch "$h"/.config/{starship.toml,user-dirs.dirs}
mkdir -p "$h"/.local/{bin,state/nvim} "$h"/.local/share/{nvim,fonts,applications,Trash,zoxide,fish,recently-used,man}
mkdir -p "$h"/.docker/{buildx,contexts} "$h"/.claude/{todos,statsig,commands}
touch "$h"/.claude/{CLAUDE.md,settings.json}
b=$work/home
mkdir -p "$b/.ssh"
deep=$work/deephome
for i in $(seq 1 20); do deep=$deep/d$i; done
mkdir -p "$deep/.ssh"
for i in $(seq 1 100); do mkdir -p "$deep/dir$i"; : >"$deep/.dot$i"; done
cd "$work/cwd"
calls() { awk -v s="$1" '$NF == s { print $4 }' "$work/strace.txt"; }
for layout in devhome:$h bench:$b deep:$deep; do
    name=${layout%%:*} home=${layout#*:}
    for which in before:$before after:$after; do
        w=${which%%:*} bin=${which#*:}
        e=(env HOME="$home" TMPDIR="$work/tmp" SAFE_EXEC_STATE_DIR="$work/state"
            XDG_CONFIG_HOME="$home/.config" XDG_CACHE_HOME="$home/.cache"
            SAFE_EXEC_SYSTEM_CONFIG="$work/none.toml")
        "${e[@]}" "$bin" -- /bin/true # the state dir and its cache, as a later run finds them
        rules=$("${e[@]}" "$bin" check --json -- /bin/true | jq '.sandbox.landlock.rules|length')
        "${e[@]}" strace -f -c -o "$work/strace.txt" "$bin" -- /bin/true
        printf '%-8s %-6s rules=%-4s syscalls=%-5s openat=%s newfstatat=%s statx=%s getdents64=%s landlock_add_rule=%s\n' \
            "$name" "$w" "$rules" "$(calls total)" "$(calls openat)" "$(calls newfstatat)" "$(calls statx)" \
            "$(calls getdents64)" "$(calls landlock_add_rule)"
    done
done
