#!/usr/bin/env python3
"""A stdio MCP server with one tool, `approve`, for Claude Code's
`--permission-prompt-tool mcp__approver__approve`: the person who answers
every permission prompt with "allow" (the input unchanged), or with "deny"
when APPROVER_ANSWER=deny. Each request is appended to $APPROVER_LOG."""

import json
import os
import sys


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    log = os.environ.get("APPROVER_LOG")
    answer = os.environ.get("APPROVER_ANSWER", "allow")
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        mid = msg.get("id")
        method = msg.get("method")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": msg.get("params", {}).get("protocolVersion", "2024-11-05"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "approver", "version": "1"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [{
                "name": "approve",
                "description": "answers permission prompts",
                "inputSchema": {"type": "object", "properties": {
                    "tool_name": {"type": "string"},
                    "input": {"type": "object"},
                    "tool_use_id": {"type": "string"}}}}]}})
        elif method == "tools/call":
            args = msg.get("params", {}).get("arguments", {})
            if log:
                with open(log, "a", encoding="utf-8") as f:
                    f.write(json.dumps(args) + "\n")
            if answer == "allow":
                verdict = {"behavior": "allow", "updatedInput": args.get("input", {})}
            else:
                verdict = {"behavior": "deny", "message": "denied by the test's approver"}
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "content": [{"type": "text", "text": json.dumps(verdict)}]}})
        elif mid is not None:
            send({"jsonrpc": "2.0", "id": mid, "result": {}})


if __name__ == "__main__":
    main()
