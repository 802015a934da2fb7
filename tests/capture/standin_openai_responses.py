"""Stand-in for the OpenAI Responses API, for capturing real Codex CLI screens offline.

Stdlib only. Point Codex at it with ``-c openai_base_url="http://127.0.0.1:<port>/v1"`` and a
fake key (``OPENAI_API_KEY=sk-test-0000`` after ``codex login --with-api-key``).

Usage::

    python tests/capture/standin_openai_responses.py [--port 0] [--mode normal] [--log FILE]

It prints ``PORT=<n>`` on its first stdout line. The scenario of a request is picked by a
``[[mode]]`` marker in the last user message of ``input`` (a request whose last item is a tool
output gets a normal reply), else by the sticky mode (``--mode`` / ``POST /_control/mode``).

Modes: see ``MODES``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODES = {
    "normal": "short streamed text reply",
    "slow": "long text streamed slowly (about 60 s)",
    "tool": "a shell function_call that needs approval -> Codex's approval menu",
    "question": "a request_user_input function_call (if the tool is offered)",
    "code429": "streamed reply whose code mentions '429 Too Many Requests' / 'rate limit'",
    "code429_stall": "like code429, then the stream stalls forever",
    "429": "HTTP 429 rate_limit_exceeded with retry-after: 20",
    "429_bare": "HTTP 429 rate_limit_exceeded, no headers",
    "usage_limit": "HTTP 429 usage_limit_reached with resets_at (ChatGPT plan usage limit)",
    "quota": "HTTP 429 insufficient_quota (API key out of credits)",
    "usage_warning": "normal reply with x-codex-primary-used-percent: 91 headers",
    "500": "HTTP 500 server_error",
    "503": "HTTP 503 server_overloaded / 'Service Unavailable'",
    "401": "HTTP 401 invalid_api_key",
    "stall": "200 + response.created, then nothing forever",
    "stall_head": "accept the request and never answer",
}

CODE429 = '''Here is the retry helper you asked for:

```python
def fetch(url: str) -> bytes:
    resp = session.get(url)
    if resp.status_code == 429:  # 429 Too Many Requests
        raise RateLimitError("rate limit exceeded, usage limit reached")
    return resp.content
```

The `429 Too Many Requests` branch raises so the caller can back off when the rate limit hits.
'''

STATE: dict[str, Any] = {"mode": "normal", "log": None, "lock": threading.Lock(), "reset_in": 7200}
MARK = re.compile(r"\[\[([a-z0-9_]+)\]\]")


def last_user_text(body: dict[str, Any]) -> tuple[str, bool]:
    items = body.get("input")
    if isinstance(items, str):
        return items, False
    for item in reversed(items or []):
        kind = item.get("type")
        if kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            return "", True
        if item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content, False
            return "\n".join(c.get("text", "") for c in content or []
                             if isinstance(c, dict)), False
    return "", False


def pick_mode(body: dict[str, Any]) -> str:
    text, tool_output = last_user_text(body)
    found = [m for m in MARK.findall(text) if m in MODES]
    if found:
        return found[-1]
    if tool_output:
        return "normal"
    return STATE["mode"]


def tool_names(body: dict[str, Any]) -> set[str]:
    """Tool names offered: top-level `tools` plus `additional_tools` input items (namespaces)."""
    names: set[str] = set()

    def walk(tools: list[Any]) -> None:
        for tool in tools or []:
            if not isinstance(tool, dict):
                continue
            if tool.get("name"):
                names.add(tool["name"])
            walk(tool.get("tools") or [])

    walk(body.get("tools") or [])
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "additional_tools":
            walk(item.get("tools") or [])
    return names


def reset_epoch() -> int:
    """The usage-limit reset instant: --reset-at if given, else now + --reset-in (whole minute)."""
    if STATE.get("reset_at"):
        return int(STATE["reset_at"])
    return -(-int(time.time() + STATE["reset_in"]) // 60) * 60


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt: str, *args: Any) -> None:
        pass

    def _log(self, entry: dict[str, Any]) -> None:
        if STATE["log"]:
            with STATE["lock"], open(STATE["log"], "a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry) + "\n")

    def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("x-request-id", "req_standin_" + uuid.uuid4().hex[:12])
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._log({"t": time.time(), "method": "GET", "path": self.path})
        if self.path.startswith("/_control/mode"):
            self._json(200, {"mode": STATE["mode"]})
        elif "/models" in self.path:
            self._json(200, {"object": "list", "data": [], "models": []})
        else:
            self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.startswith("/_control/mode"):
            STATE["mode"] = raw.decode().strip() or "normal"
            self._json(200, {"mode": STATE["mode"]})
            return
        if self.headers.get("content-encoding") == "zstd":
            self._log({"t": time.time(), "path": self.path, "zstd": True})
            body: dict[str, Any] = {}
        else:
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {}
        if not self.path.rstrip("/").endswith("/responses"):
            self._log({"t": time.time(), "path": self.path, "unknown": True,
                       "body": raw[:300].decode(errors="replace")})
            self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
            return
        mode = pick_mode(body)
        text, _ = last_user_text(body)
        self._log({"t": time.time(), "path": self.path, "mode": mode, "model": body.get("model"),
                   "stream": body.get("stream"),
                   "tools": sorted(tool_names(body)),
                   "last_user": text[-300:], "keys": sorted(body),
                   "headers": {k: v for k, v in self.headers.items()
                               if k.lower() not in ("authorization",)}})
        if STATE.get("dump"):
            with open(STATE["dump"], "a", encoding="utf-8") as fh:
                fh.write(json.dumps(body) + "\n")
        self.respond(mode, body)

    def respond(self, mode: str, body: dict[str, Any]) -> None:
        if mode == "429":
            self._json(429, {"error": {"message": "Rate limit reached for gpt-5 in organization "
                                                  "org-standin on tokens per min (TPM): Limit "
                                                  "30000, Used 30000, Requested 1200. Please try "
                                                  "again in 20s.",
                                       "type": "tokens", "param": None,
                                       "code": "rate_limit_exceeded"}},
                       {"retry-after": "20", "x-ratelimit-reset-tokens": "20s"})
        elif mode == "429_bare":
            self._json(429, {"error": {"message": "Rate limit reached", "type": "requests",
                                       "param": None, "code": "rate_limit_exceeded"}})
        elif mode == "usage_limit":
            epoch = reset_epoch()
            self._json(429, {"error": {"type": "usage_limit_reached",
                                       "message": "The usage limit has been reached",
                                       "plan_type": "plus", "resets_at": epoch,
                                       "resets_in_seconds": epoch - int(time.time())}},
                       {"x-codex-primary-used-percent": "100",
                        "x-codex-primary-window-minutes": "300",
                        "x-codex-primary-reset-at": str(epoch),
                        "x-codex-primary-reset-after-seconds": str(epoch - int(time.time())),
                        "x-codex-secondary-used-percent": "40",
                        "x-codex-secondary-window-minutes": "10080"})
        elif mode == "quota":
            self._json(429, {"error": {"message": "You exceeded your current quota, please "
                                                  "check your plan and billing details.",
                                       "type": "insufficient_quota", "param": None,
                                       "code": "insufficient_quota"}})
        elif mode == "500":
            self._json(500, {"error": {"message": "The server had an error while processing your "
                                                  "request. Sorry about that!",
                                       "type": "server_error", "param": None, "code": None}})
        elif mode == "503":
            self._json(503, {"error": {"message": "The server is overloaded. Please try again "
                                                  "later.", "type": "server_error",
                                       "code": "server_overloaded"}})
        elif mode == "401":
            self._json(401, {"error": {"message": "Incorrect API key provided: sk-test-0000. You "
                                                  "can find your API key at "
                                                  "https://platform.openai.com/account/api-keys.",
                                       "type": "invalid_request_error", "param": None,
                                       "code": "invalid_api_key"}})
        elif mode == "stall_head":
            time.sleep(10**6)
        else:
            self.stream(mode, body)

    # -- SSE -------------------------------------------------------------------------------

    def stream(self, mode: str, body: dict[str, Any]) -> None:
        headers: dict[str, str] = {}
        if mode == "usage_warning":
            epoch = reset_epoch()
            headers = {"x-codex-primary-used-percent": "91",
                       "x-codex-primary-window-minutes": "300",
                       "x-codex-primary-reset-at": str(epoch),
                       "x-codex-primary-reset-after-seconds": str(epoch - int(time.time())),
                       "x-codex-secondary-used-percent": "76",
                       "x-codex-secondary-window-minutes": "10080",
                       "x-codex-secondary-reset-at": str(epoch + 3 * 86400)}
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("connection", "close")
        self.end_headers()
        resp_id = "resp_" + uuid.uuid4().hex[:20]
        model = body.get("model") or "gpt-5"
        self.event({"type": "response.created", "response": {"id": resp_id, "object": "response",
                                                             "status": "in_progress",
                                                             "model": model, "output": []}})
        if mode == "stall":
            time.sleep(10**6)
            return
        tools = tool_names(body)
        out_index = 0
        if mode == "tool":
            self.text_item(out_index, "I'll delete the scratch file now.")
            out_index += 1
            self.tool_item(out_index, tools)
        elif mode == "question" and "request_user_input" in tools:
            self.function_item(out_index, "request_user_input", {"questions": [{
                "id": "db", "header": "Database",
                "question": "Which database should the cache use?",
                "options": [{"label": "SQLite (Recommended)", "description": "Single file"},
                            {"label": "Redis", "description": "In-memory, needs a server"}]}]})
        elif mode in ("code429", "code429_stall"):
            self.text_item(out_index, CODE429, stall=mode == "code429_stall")
        elif mode == "slow":
            words = ("Working through the refactor step by step, checking each module "
                     * 40).split()
            self.text_item(out_index, " ".join(words), delay=0.15)
        else:
            self.text_item(out_index, "Hello from the stand-in. Nothing to change here; "
                                      "the project looks fine.")
        self.event({"type": "response.completed", "response": {
            "id": resp_id, "object": "response", "status": "completed", "model": model,
            "output": [], "usage": {"input_tokens": 1200,
                                    "input_tokens_details": {"cached_tokens": 0},
                                    "output_tokens": 42,
                                    "output_tokens_details": {"reasoning_tokens": 0},
                                    "total_tokens": 1242}}})
        self.close_connection = True

    def event(self, data: dict[str, Any]) -> None:
        self.wfile.write(f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def text_item(self, index: int, text: str, delay: float = 0.02, stall: bool = False) -> None:
        item_id = "msg_" + uuid.uuid4().hex[:20]
        self.event({"type": "response.output_item.added", "output_index": index,
                    "item": {"type": "message", "id": item_id, "role": "assistant",
                             "status": "in_progress", "content": []}})
        self.event({"type": "response.content_part.added", "item_id": item_id,
                    "output_index": index, "content_index": 0,
                    "part": {"type": "output_text", "text": "", "annotations": []}})
        for chunk in re.findall(r"\S+\s*|\s+", text):
            self.event({"type": "response.output_text.delta", "item_id": item_id,
                        "output_index": index, "content_index": 0, "delta": chunk})
            time.sleep(delay)
        if stall:
            time.sleep(10**6)
        self.event({"type": "response.output_text.done", "item_id": item_id,
                    "output_index": index, "content_index": 0, "text": text})
        self.event({"type": "response.output_item.done", "output_index": index,
                    "item": {"type": "message", "id": item_id, "role": "assistant",
                             "status": "completed",
                             "content": [{"type": "output_text", "text": text,
                                          "annotations": []}]}})

    def tool_item(self, index: int, tools: set[str]) -> None:
        cmd = "rm -f /etc/pitcrew-standin-scratch.txt"
        why = "Delete the scratch file outside the workspace"
        if "exec" in tools:  # code mode (0.17x): a freeform JS tool that calls nested tools
            js = ("const r = await tools.exec_command({cmd: " + json.dumps(cmd) +
                  ", sandbox_permissions: \"require_escalated\", justification: " +
                  json.dumps(why) + "});\ntext(r.output);\n")
            item = {"type": "custom_tool_call", "id": "ctc_" + uuid.uuid4().hex[:20],
                    "call_id": "call_" + uuid.uuid4().hex[:20], "name": "exec", "input": js,
                    "status": "completed"}
            self.event({"type": "response.output_item.added", "output_index": index,
                        "item": {**item, "input": "", "status": "in_progress"}})
            self.event({"type": "response.custom_tool_call_input.delta", "item_id": item["id"],
                        "output_index": index, "delta": js})
            self.event({"type": "response.output_item.done", "output_index": index,
                        "item": item})
        elif "exec_command" in tools:
            self.function_item(index, "exec_command", {
                "cmd": cmd, "sandbox_permissions": "require_escalated", "justification": why})
        elif "shell_command" in tools:
            self.function_item(index, "shell_command", {
                "command": cmd, "sandbox_permissions": "require_escalated", "justification": why})
        else:
            self.function_item(index, "shell", {
                "command": ["bash", "-lc", cmd], "with_escalated_permissions": True,
                "sandbox_permissions": "require_escalated", "justification": why})

    def function_item(self, index: int, name: str, args: dict[str, Any]) -> None:
        item = {"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:20],
                "call_id": "call_" + uuid.uuid4().hex[:20], "name": name,
                "arguments": json.dumps(args), "status": "completed"}
        self.event({"type": "response.output_item.added", "output_index": index,
                    "item": {**item, "arguments": "", "status": "in_progress"}})
        self.event({"type": "response.function_call_arguments.done", "item_id": item["id"],
                    "output_index": index, "arguments": item["arguments"]})
        self.event({"type": "response.output_item.done", "output_index": index, "item": item})


class QuietServer(ThreadingHTTPServer):
    """Clients (the CLI) hang up mid-stream when the user presses Esc: not an error here."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--mode", default="normal", choices=sorted(MODES))
    ap.add_argument("--log", default=None)
    ap.add_argument("--dump", default=None, help="append every request body here (debugging)")
    ap.add_argument("--reset-in", type=int, default=7200, help="seconds until a usage-limit reset")
    ap.add_argument("--reset-at", type=int, default=None, help="usage-limit reset (epoch seconds)")
    args = ap.parse_args(argv)
    STATE.update(mode=args.mode, log=args.log, reset_in=args.reset_in, dump=args.dump,
                 reset_at=args.reset_at)
    server = QuietServer(("127.0.0.1", args.port), Handler)
    print(f"PORT={server.server_address[1]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
