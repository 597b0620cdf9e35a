#!/usr/bin/env python3
"""Extracts the shell commands that agents ran from public trajectories and
session logs held in git snapshots, and writes tests/data/agent-commands.tsv.

Usage: tools/agent-corpus/extract.py SOURCES.tsv OUT.tsv

SOURCES.tsv (tab-separated, `#` comments): repository (owner/name), agent
kind, format, path regex, licence, project roots (comma-separated absolute
directories where the agent worked, or `-`; `DIR/*` is any directory in
DIR; each, and a worktree under it, `ROOT/.worktrees/NAME`, is replaced by
the `{{project}}` marker). Each repository is read from a bare git
snapshot at $MIRROR/OWNER+NAME/repo (MIRROR defaults to /work/.mirror, where
the search tool's `fetch` puts them; `git clone --mirror` works as well). Every blob ever committed under
a matching path (all history, so deleted logs count too) is parsed with the
format's reader. Commands are normalised (CRLF -> LF, outer whitespace
stripped), deduplicated across all sources (first source wins, in the order of
SOURCES.tsv) and written as `source<TAB>agent<TAB>command` with `\\`, tab and
newline escaped as `\\\\`, `\\t`, `\\n`.
"""
import json
import os
import re
import shlex
import subprocess
import sys

# The agent's project directory in the log (SWE-bench's `/testbed`, a Claude
# Code session's `cwd`) becomes this marker; the test puts its own project
# directory in its place.
PROJECT = "{{project}}"

# Longer commands (whole scripts in a heredoc) are left out to keep the data
# file small; the README gives the count left out per source.
MAX_LEN = 2500

FENCE_BASH = re.compile(r"```(?:bash|sh|shell|zsh|console)?[ \t]*\n(.*?)\n```", re.S)


def mini_swe_agent(text):
    """mini-swe-agent .traj.json: one ```bash block per assistant message."""
    d = json.loads(text)
    for m in d.get("messages", []):
        if m.get("role") != "assistant":
            continue
        c = m.get("content")
        if isinstance(c, list):
            c = "".join(p.get("text", "") for p in c if isinstance(p, dict))
        if not isinstance(c, str):
            continue
        blocks = re.findall(r"```bash\s*\n(.*?)\n```", c, re.S)
        if len(blocks) == 1:  # the agent runs exactly one block, else rejects
            yield blocks[0]


def swe_agent(text):
    """SWE-agent .traj: `trajectory[].action`, skipping its own tools."""
    d = json.loads(text)
    for step in d.get("trajectory", []):
        a = step.get("action")
        if isinstance(a, str):
            yield a


def specstory(text):
    """SpecStory markdown (Cursor, Claude Code): shell tool calls only.
    Yields (command, agent): a session exported from Claude Code (its
    header names it, or its shell tool is `Bash`) is `claude-code`, the rest
    `cursor`."""
    head = text[:400]
    kind = "claude-code" if ("Claude Code" in head or "Tool use: **Bash**" in text) else "cursor"
    for c in _specstory_commands(text):
        yield (c, kind)


def _specstory_commands(text):
    # Newer exports mark tool calls explicitly.
    for m in re.finditer(
        r"(?:data-tool-name=\"run_terminal_cmd\"|Tool use: \*\*(?:run_terminal_cmd|Bash|command|Shell|shell)\*\*)"
        r"[^\n]*\n(?:(?!```)[^\n]*\n){0,6}```(?:bash|sh|shell|zsh)?[ \t]*\n((?:(?!```).)*?)\n```",
        text,
        re.S,
    ):
        yield m.group(1)
    # Older Cursor exports: a message that is only a ```bash block,
    # followed by the terminal output block.
    for m in re.finditer(
        r"(?:^|\n)---\n\n```bash\n((?:(?!```).)*?)\n```\n\n```", text, re.S
    ):
        yield m.group(1)


def claude_jsonl(text):
    """Claude Code session .jsonl: Bash tool_use inputs."""
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            d = json.loads(line)
        except ValueError:
            continue
        cwd = d.get("cwd") if isinstance(d, dict) else None
        msg = d.get("message") if isinstance(d, dict) else None
        content = msg.get("content") if isinstance(msg, dict) else None
        if not isinstance(content, list):
            continue
        for part in content:
            if (
                isinstance(part, dict)
                and part.get("type") == "tool_use"
                and part.get("name") == "Bash"
                and isinstance(part.get("input"), dict)
                and isinstance(part["input"].get("command"), str)
            ):
                c = part["input"]["command"]
                if isinstance(cwd, str) and len(cwd) > 1:
                    c = c.replace(cwd, PROJECT)
                yield c


def codex_jsonl(text):
    """Codex rollout .jsonl: shell / exec_command / local_shell calls."""
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            d = json.loads(line)
        except ValueError:
            continue
        p = d.get("payload", d) if isinstance(d, dict) else None
        if not isinstance(p, dict) or p.get("type") not in ("function_call", "local_shell_call"):
            continue
        args = p.get("arguments")
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                continue
        if p.get("type") == "local_shell_call":
            args = (p.get("action") or {})
        if not isinstance(args, dict):
            continue
        cmd = args.get("cmd") or args.get("command")
        if isinstance(cmd, list):
            if len(cmd) == 3 and cmd[0].endswith("sh") and cmd[1] in ("-lc", "-c"):
                cmd = cmd[2]
            else:
                cmd = " ".join(shquote(a) for a in cmd)
        if isinstance(cmd, str):
            yield cmd


def shquote(s):
    if re.fullmatch(r"[A-Za-z0-9_./:=@%+,-]+", s):
        return s
    return "'" + s.replace("'", "'\\''") + "'"


def aider_md(text):
    """Aider .aider.chat.history.md: commands the user accepted to run."""
    for m in re.finditer(r"^> Running (.+)$", text, re.M):
        yield m.group(1)


SHELL_WRAPPER = re.compile(r"^(?:/bin/|/usr/bin/)?(?:ba|z)?sh -l?c ")


def unwrap_shell(cmd):
    """Codex runs `/bin/zsh -lc 'CMD'` (or bash): the command is CMD."""
    if SHELL_WRAPPER.match(cmd):
        try:
            words = shlex.split(cmd)
        except ValueError:
            return cmd, False
        if len(words) == 3:
            return words[2], True
    return cmd, False


def automaker(text):
    """Automaker agent-output.md: `🔧 Tool: Bash` + `Input: {json}`.
    Yields (command, agent): Codex wraps commands in `zsh -lc`."""
    dec = json.JSONDecoder()
    for m in re.finditer(r"🔧 Tool: Bash\nInput: ", text):
        try:
            obj, _ = dec.raw_decode(text, m.end())
        except ValueError:
            continue
        c = obj.get("command") if isinstance(obj, dict) else None
        if not isinstance(c, str):
            continue
        c, codex = unwrap_shell(c)
        yield (c, "codex" if codex else "claude-code")


def claude_json_md(text):
    """Claude Code sessions exported with the tool calls as JSON (pretty
    printed or not) inside Markdown or text: every `"name": "Bash"` tool
    call's `input.command`."""
    dec = json.JSONDecoder()
    for m in re.finditer(r'"name":\s*"Bash",\s*"input":\s*', text):
        try:
            obj, _ = dec.raw_decode(text, m.end())
        except ValueError:
            continue
        c = obj.get("command") if isinstance(obj, dict) else None
        if isinstance(c, str):
            yield c


def gemini_json(text):
    """Gemini CLI session JSON: every `run_shell_command` call's command
    (`toolCalls[].args.command`, or a `functionCall` part)."""
    def walk(v):
        if isinstance(v, dict):
            if v.get("name") == "run_shell_command" and isinstance(v.get("args"), dict):
                c = v["args"].get("command")
                if isinstance(c, str):
                    yield c
            for x in v.values():
                yield from walk(x)
        elif isinstance(v, list):
            for x in v:
                yield from walk(x)
    yield from walk(json.loads(text))


def claude_transcript_md(text):
    """claude-transcript Markdown (`💻 **Bash: DESCRIPTION**` then a
    fenced block with the command)."""
    for m in re.finditer(
        r"💻 \*\*Bash[^\n]*\n```(?:shell|bash|sh)?[ \t]*\n((?:(?!```).)*?)\n```", text, re.S
    ):
        yield m.group(1)


def claude_console(text):
    """A Claude Code terminal transcript copied from the console:
    `⏺ Bash(COMMAND)…` lines. Only one-line commands that parse as complete
    shell words are taken (the console wraps and elides long ones)."""
    for m in re.finditer(r"^⏺ Bash\((.*)\)…?[ \t]*$", text, re.M):
        c = m.group(1)
        if "…" in c:
            continue
        try:
            shlex.split(c)
        except ValueError:
            continue
        yield c


READERS = {
    "claude-console": claude_console,
    "claude-transcript-md": claude_transcript_md,
    "gemini-json": gemini_json,
    "claude-json-md": claude_json_md,
    "automaker": automaker,
    "mini-swe-agent": mini_swe_agent,
    "swe-agent": swe_agent,
    "specstory": specstory,
    "claude-jsonl": claude_jsonl,
    "codex-jsonl": codex_jsonl,
    "aider": aider_md,
}


def blobs(gitdir, path_re):
    """(path, blob id) of every blob in all history under a matching path."""
    out = subprocess.run(
        ["git", "--git-dir", gitdir, "rev-list", "--all", "--objects", "--missing=allow-any"],
        check=True, capture_output=True, text=True,
    ).stdout
    seen = set()
    rx = re.compile(path_re)
    for line in out.splitlines():
        parts = line.split(" ", 1)
        if len(parts) == 2 and rx.search(parts[1]) and parts[0] not in seen:
            seen.add(parts[0])
            yield parts[1], parts[0]


def cat(gitdir, oid):
    r = subprocess.run(["git", "--git-dir", gitdir, "cat-file", "blob", oid],
                       capture_output=True)
    return r.stdout.decode("utf-8", "replace")


# Credentials that leaked into public logs are not copied: the value is
# replaced, the shape of the command stays.
SECRETS = [
    re.compile(p) for p in (
        r"AIza[0-9A-Za-z_-]{35}",
        r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}",
        r"\bgh[pousr]_[A-Za-z0-9]{30,}",
        r"\bgithub_pat_[A-Za-z0-9_]{30,}",
        r"\bAKIA[0-9A-Z]{16}\b",
        r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
        r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
        r"\bsb_(?:publishable|secret)_[A-Za-z0-9_-]{10,}",
    )
]
# `NAME_KEY=value`, `--password value`, `Authorization: Bearer value`.
SECRET_ASSIGN = re.compile(
    r"((?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD)[A-Z_]*=[\"']?)([^\s\"'$]{8,})", re.I)
BEARER = re.compile(r"(Bearer\s+)([A-Za-z0-9._~+/=-]{12,})")

# Commands for Windows shells (cmd.exe, PowerShell) or naming Windows
# paths: the sandbox and the policy are for Linux.
WINDOWS = re.compile(r"(?:^|[\s\"'=(])[A-Z]:\\[A-Za-z0-9_.$]|^(?:reg|ren|copy|dir|del|powershell|pwsh|cmd|winget|choco|wsl|w32tm|ipconfig|wmic|tasklist|taskkill|bcdedit|sc|[\w.-]+\.exe)\b|^\$[A-Za-z_]+\s*=|\b(?:Get|Set|New|Remove|Start|Invoke)-[A-Z][a-z]+", re.M)


def redact(cmd):
    for rx in SECRETS:
        cmd = rx.sub("REDACTED", cmd)
    cmd = SECRET_ASSIGN.sub(lambda m: m.group(1) + "REDACTED", cmd)
    return BEARER.sub(lambda m: m.group(1) + "REDACTED", cmd)


def normalise(cmd):
    return redact(cmd.replace("\r\n", "\n").strip())


def md_cell(s):
    """A regex in a Markdown table cell: `|` would end the cell."""
    return s.replace("|", "\\|")


def escape(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def main():
    sources, out = sys.argv[1], sys.argv[2]
    seen = set()
    rows = []
    table = ["| repository | agent | commit (snapshot HEAD) | paths (all history) | files | commands | licence |",
             "|---|---|---|---|---:|---:|---|"]
    for line in open(sources, encoding="utf-8"):
        if not line.strip() or line.startswith("#"):
            continue
        repo, agent, fmt, path_re, licence, roots = line.rstrip("\n").split("\t")
        root_res = [
            re.compile(
                (re.escape(r[:-2]) + r"/[^/\s'\"]+" if r.endswith("/*") else re.escape(r))
                + r"(?:/\.(?:automaker/)?worktrees/[^/\s'\"]+)?(?=$|[/\s'\";&|)])"
            )
            for r in roots.split(",") if r.startswith("/")
        ]
        gitdir = os.path.join(os.environ.get("MIRROR", "/work/.mirror"),
                              repo.replace("/", "+"), "repo")
        head = subprocess.run(["git", "--git-dir", gitdir, "rev-parse", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        n_before = len(rows)
        files = 0
        for path, oid in blobs(gitdir, path_re):
            files += 1
            try:
                cmds = list(READERS[fmt](cat(gitdir, oid)))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
            for c in cmds:
                kind = agent
                if isinstance(c, tuple):
                    c, kind = c
                c = normalise(c)
                for rx in root_res:
                    c = rx.sub(PROJECT, c)
                if not c or len(c) > MAX_LEN or c in seen or WINDOWS.search(c):
                    continue
                seen.add(c)
                rows.append((repo, kind, c))
        table.append(f"| [{repo}](https://github.com/{repo}) | {agent} | `{head}` | "
                     f"`{md_cell(path_re)}` | {files} | {len(rows) - n_before} | {licence} |")
    with open(out, "w", encoding="utf-8") as f:
        f.write("source\tagent\tcommand\n")
        for r in rows:
            f.write(f"{r[0]}\t{r[1]}\t{escape(r[2])}\n")
    print("\n".join(table))
    print(f"\ntotal {len(rows)} distinct commands")


if __name__ == "__main__":
    main()
