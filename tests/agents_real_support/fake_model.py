#!/usr/bin/env python3
"""A scripted fake model server for the real-agent tests (stdlib only).

Speaks enough of two APIs for the real CLIs to run headless:
  * Anthropic Messages API with SSE streaming (POST /v1/messages), for
    Claude Code (ANTHROPIC_BASE_URL=http://127.0.0.1:PORT).
  * OpenAI Responses API with SSE streaming (POST /v1/responses, also
    /responses), for Codex (a `model_providers` entry with base_url
    http://127.0.0.1:PORT/v1, wire_api = "responses").

The script (JSON file, argv[1]) is {"steps": [STEP, ...], "final": "text"}.
A STEP is answered per API:
  * Claude Code: {"bash": "cmd"} is a Bash tool_use; {"tool": NAME,
    "input": {...}} any other tool (Write, Edit, ...).
  * Codex (tools `exec_command`, `write_stdin`, `apply_patch`):
    {"shell": "cmd"} is an exec_command call, with optional "exe" (its
    `shell` argument), "workdir", "login", "tty", "yield_time_ms";
    {"custom": "apply_patch", "input": "*** Begin Patch..."} the freeform
    apply_patch call; {"tool": NAME, "input": {...}} any function call, where
    "session_id": "$LAST_SESSION" becomes the session id the last output
    named (for write_stdin).
The harness writes both "bash" and "shell" for a shell step, so one script
drives either agent.

The step to answer is chosen from the conversation itself, not from a
counter: step i is answered once the request holds i tool results, so
retries and side requests (titles, summaries, token counts) do not shift
the script. Requests that offer no tools get the final text.

Every request body is appended as one JSON line to the log file (argv[2]);
the chosen port is written to argv[3] once the socket listens. The server
binds 127.0.0.1 on an ephemeral port and exits after --lifetime seconds
(default 600) or when its parent closes stdin.
"""

import json
import os
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = {}
LOG_PATH = None
LOG_LOCK = threading.Lock()


def log(entry):
    with LOG_LOCK:
        with open(LOG_PATH, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def count_tool_results_anthropic(messages):
    n = 0
    for m in messages:
        if m.get("role") != "user" or not isinstance(m.get("content"), list):
            continue
        for block in m["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                n += 1
    return n


def count_tool_results_openai(items):
    n = 0
    for it in items or []:
        if isinstance(it, dict) and it.get("type") in (
            "function_call_output",
            "custom_tool_call_output",
            "local_shell_call_output",
        ):
            n += 1
    return n


def last_session(items):
    """The unified-exec session id the last tool output names (Codex prints
    `Process running with session ID N`), or 0."""
    sid = 0
    for it in items or []:
        if isinstance(it, dict) and it.get("type") == "function_call_output":
            out = it.get("output")
            text = out if isinstance(out, str) else json.dumps(out)
            m = re.search(r"session ID (\d+)", text)
            if m:
                sid = int(m.group(1))
    return sid


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # keep stderr quiet
        pass

    def _body(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {"_raw": raw.decode("utf-8", "replace")}

    def _json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        log({"method": "GET", "path": self.path})
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [], "models": []})
        else:
            self._json(404, {"error": {"type": "not_found", "message": "fake"}})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        body = self._body()
        path = self.path.split("?")[0]
        log({"method": "POST", "path": self.path, "body": body})
        if path.endswith("/messages/count_tokens"):
            self._json(200, {"input_tokens": 10})
        elif path.endswith("/messages"):
            self.anthropic(body)
        elif path.endswith("/responses"):
            self.openai_responses(body)
        elif path.endswith("/chat/completions"):
            self._json(400, {"error": {"message": "chat completions not scripted"}})
        else:
            self._json(404, {"error": {"type": "not_found", "message": "fake"}})

    # --- Anthropic Messages ---------------------------------------------
    def sse(self, events):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for name, data in events:
            chunk = ""
            if name:
                chunk += "event: " + name + "\n"
            chunk += "data: " + json.dumps(data) + "\n\n"
            self.wfile.write(chunk.encode())
            self.wfile.flush()
        self.close_connection = True

    def anthropic(self, body):
        tools = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
        steps = SCRIPT.get("steps", [])
        done = count_tool_results_anthropic(body.get("messages") or [])
        model = body.get("model", "claude-fake")
        block = None
        if "Bash" in tools and done < len(steps):
            step = steps[done]
            if "bash" in step:
                inp = {"command": step["bash"], "description": "scripted step %d" % done}
                name = "Bash"
            else:
                inp = step.get("input", {})
                name = step.get("tool")
            block = {
                "type": "tool_use",
                "id": "toolu_%02d_%s" % (done, uuid.uuid4().hex[:12]),
                "name": name,
                "input": {},
            }
            payload = json.dumps(inp)
        text = SCRIPT.get("final", "FAKE-MODEL-DONE") if "Bash" in tools else "ok"
        if not body.get("stream"):
            content = [dict(block, input=inp)] if block else [{"type": "text", "text": text}]
            self._json(200, {
                "id": "msg_" + uuid.uuid4().hex, "type": "message", "role": "assistant",
                "model": model, "content": content,
                "stop_reason": "tool_use" if block else "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 10},
            })
            return
        ev = [("message_start", {"type": "message_start", "message": {
            "id": "msg_" + uuid.uuid4().hex, "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1}}})]
        if block:
            ev += [
                ("content_block_start", {"type": "content_block_start", "index": 0,
                                         "content_block": block}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "input_json_delta",
                                                   "partial_json": payload}}),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ]
            stop = "tool_use"
        else:
            ev += [
                ("content_block_start", {"type": "content_block_start", "index": 0,
                                         "content_block": {"type": "text", "text": ""}}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "text_delta", "text": text}}),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ]
            stop = "end_turn"
        ev += [
            ("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 10}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        self.sse(ev)

    # --- OpenAI Responses -----------------------------------------------
    def openai_responses(self, body):
        tools = []
        for t in body.get("tools") or []:
            if isinstance(t, dict):
                tools.append(t.get("name") or t.get("type"))
        steps = SCRIPT.get("steps", [])
        done = count_tool_results_openai(body.get("input"))
        rid = "resp_" + uuid.uuid4().hex
        items = []
        if tools and done < len(steps):
            step = steps[done]
            call_id = "call_%02d_%s" % (done, uuid.uuid4().hex[:8])
            if "shell" in step and "exec_command" in tools:
                args = {"cmd": step["shell"]}
                for k in ("workdir", "login", "tty", "yield_time_ms"):
                    if k in step:
                        args[k] = step[k]
                if "exe" in step:
                    args["shell"] = step["exe"]
                items.append({"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:8],
                              "call_id": call_id, "name": "exec_command",
                              "arguments": json.dumps(args), "status": "completed"})
            elif "shell" in step:
                if "shell_command" in tools and "shell" not in tools:
                    args = {"command": step["shell"]}
                    if step.get("workdir"):
                        args["workdir"] = step["workdir"]
                    name = "shell_command"
                else:
                    exe = step.get("exe", "bash")
                    args = {"command": [exe, "-lc", step["shell"]]}
                    if step.get("workdir"):
                        args["workdir"] = step["workdir"]
                    name = "shell"
                items.append({"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:8],
                              "call_id": call_id, "name": name,
                              "arguments": json.dumps(args), "status": "completed"})
            elif "custom" in step:
                items.append({"type": "custom_tool_call", "id": "ctc_" + uuid.uuid4().hex[:8],
                              "call_id": call_id, "name": step["custom"],
                              "input": step["input"], "status": "completed"})
            else:
                inp = dict(step.get("input", {}))
                if inp.get("session_id") == "$LAST_SESSION":
                    inp["session_id"] = last_session(body.get("input"))
                items.append({"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:8],
                              "call_id": call_id, "name": step["tool"],
                              "arguments": json.dumps(inp),
                              "status": "completed"})
        else:
            text = SCRIPT.get("final", "FAKE-MODEL-DONE")
            items.append({"type": "message", "id": "msg_" + uuid.uuid4().hex[:8],
                          "role": "assistant", "status": "completed",
                          "content": [{"type": "output_text", "text": text,
                                       "annotations": []}]})
        ev = [(None, {"type": "response.created",
                      "response": {"id": rid, "status": "in_progress"}})]
        for i, it in enumerate(items):
            ev.append((None, {"type": "response.output_item.added",
                              "output_index": i, "item": it}))
            ev.append((None, {"type": "response.output_item.done",
                              "output_index": i, "item": it}))
        ev.append((None, {"type": "response.completed", "response": {
            "id": rid, "status": "completed", "output": items,
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": 20}}}))
        # Codex reads "event:" lines too; name each event by its type.
        self.sse([(d["type"], d) for _, d in ev])


def main():
    global SCRIPT, LOG_PATH
    with open(sys.argv[1], encoding="utf-8") as f:
        SCRIPT = json.load(f)
    LOG_PATH = sys.argv[2]
    port_file = sys.argv[3]
    lifetime = float(os.environ.get("FAKE_MODEL_LIFETIME", "600"))
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, port_file)

    def watchdog():
        # Stop when the test that started us goes away (stdin closes) or
        # after the lifetime, whichever comes first.
        def stdin_eof():
            try:
                sys.stdin.read()
            except Exception:
                pass
            os._exit(0)
        if os.environ.get("FAKE_MODEL_WATCH_STDIN") == "1":
            threading.Thread(target=stdin_eof, daemon=True).start()
        time.sleep(lifetime)
        os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    srv.serve_forever()


if __name__ == "__main__":
    main()
