#!/usr/bin/env bash
# Installs the pinned Claude Code and Codex CLIs (versions.env) from the npm
# registry into DIR (default: target/agents-cli), a prefix owned by the tests:
# nothing is installed globally. Idempotent: does nothing when DIR already
# holds exactly these versions. Prints DIR.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"
dir="${1:-${SAFE_EXEC_AGENTS_CLI:-$root/target/agents-cli}}"
mkdir -p "$dir"
have() {
  [ -x "$dir/node_modules/.bin/claude" ] && [ -x "$dir/node_modules/.bin/codex" ] || return 1
  "$dir/node_modules/.bin/claude" --version 2>/dev/null | grep -q "^$CLAUDE_CODE_VERSION " || return 1
  "$dir/node_modules/.bin/codex" --version 2>/dev/null | grep -q " $CODEX_VERSION\$" || return 1
}
if ! have; then
  command -v npm >/dev/null 2>&1 || { echo "install.sh: npm is missing (install nodejs and npm)" >&2; exit 1; }
  echo "install.sh: installing @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION @openai/codex@$CODEX_VERSION into $dir" >&2
  # The postinstall script of @anthropic-ai/claude-code copies its native
  # binary into place; --foreground-scripts keeps its output visible.
  npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@openai/codex@$CODEX_VERSION" >&2
  # An npm that does not run install scripts leaves Claude Code's placeholder
  # in place of the native binary: run its postinstall by hand.
  if ! "$dir/node_modules/.bin/claude" --version >/dev/null 2>&1; then
    (cd "$dir/node_modules/@anthropic-ai/claude-code" && node install.cjs) >&2 || true
  fi
  have || { echo "install.sh: the installed CLIs do not report the pinned versions" >&2; exit 1; }
fi
echo "$dir"
