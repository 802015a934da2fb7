"""Stand-in for the Anthropic Messages API, for capturing real Claude Code screens offline.

Stdlib only. Point Claude Code at it with ``ANTHROPIC_BASE_URL=http://127.0.0.1:<port>`` and a
fake ``ANTHROPIC_API_KEY=sk-ant-test-0000`` (or ``CLAUDE_CODE_OAUTH_TOKEN`` for the subscriber
code paths).

Usage::

    python tests/capture/standin_anthropic.py [--port 0] [--mode normal] [--log FILE]

It prints ``PORT=<n>`` on its first stdout line. The behaviour of a request is chosen by

1. a ``[[mode]]`` marker in the text of the last user message (so a prompt typed into the CLI
   picks the scenario; follow-up requests that carry a tool_result get a normal reply), else
2. the sticky default mode, set with ``--mode`` or ``POST /_control/mode`` (body = mode name).

Modes (see ``MODES``): normal, slow, tool, question, code429, code429_stall, 429, 429_fast,
429_bare,
usage_limit, usage_limit_weekly, usage_warning, 500, 529, 401, stall, stall_head.
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
    "tool": "a Bash tool_use (rm of a file) -> Claude's permission menu",
    "question": "an AskUserQuestion tool_use -> Claude's question menu",
    "code429": "streamed reply whose code mentions '429 Too Many Requests' / 'rate limit'",
    "code429_stall": "like code429, then the stream stalls forever (busy screen, hard negative)",
    "429": "HTTP 429 rate_limit_error with retry-after: 20",
    "429_fast": "HTTP 429 rate_limit_error with retry-after: 1 (reaches the final error fast)",
    "429_bare": "HTTP 429 rate_limit_error with no retry/reset headers",
    "usage_limit": "HTTP 429 with anthropic-ratelimit-unified-* rejected headers (5-hour limit)",
    "usage_limit_weekly": "HTTP 429 unified rejected, seven_day claim, reset 2 days later",
    "usage_warning": "normal reply with unified allowed_warning headers (utilization 0.91)",
    "500": "HTTP 500 api_error",
    "529": "HTTP 529 overloaded_error",
    "401": "HTTP 401 authentication_error (invalid x-api-key)",
    "stall": "200 + message_start, then nothing forever",
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

STATE: dict[str, Any] = {"mode": "normal", "log": None, "lock": threading.Lock(), "reset_in": 7200,
                         "reset_at": None}


def reset_epoch() -> int:
    """The usage-limit reset instant: --reset-at if given, else now + --reset-in (whole minute)."""
    if STATE["reset_at"]:
        return int(STATE["reset_at"])
    return -(-int(time.time() + STATE["reset_in"]) // 60) * 60
MARK = re.compile(r"\[\[([a-z0-9_]+)\]\]")


def last_user_text(body: dict[str, Any]) -> tuple[str, bool]:
    """Text of the last user message, and whether it carries a tool_result."""
    for msg in reversed(body.get("messages") or []):
        if msg.get("role") != "user":
            continue
        content = msg.get("content")
        if isinstance(content, str):
            return content, False
        texts, tool_result = [], False
        for block in content or []:
            if block.get("type") == "text":
                texts.append(block.get("text", ""))
            elif block.get("type") == "tool_result":
                tool_result = True
        return "\n".join(texts), tool_result
    return "", False


def user_texts(body: dict[str, Any]) -> list[str]:
    """The text of every user message of the request, oldest first (the conversation it
    carries: a resumed session's request holds the earlier prompts)."""
    out = []
    for msg in body.get("messages") or []:
        if msg.get("role") != "user":
            continue
        content = msg.get("content")
        if isinstance(content, str):
            out.append(content)
            continue
        out.append("\n".join(b.get("text", "") for b in content or []
                             if b.get("type") == "text"))
    return out


def pick_mode(body: dict[str, Any]) -> str:
    text, tool_result = last_user_text(body)
    found = [m for m in MARK.findall(text) if m in MODES]
    if found:
        return found[-1]
    if tool_result:
        return "normal"
    return STATE["mode"]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt: str, *args: Any) -> None:  # quiet
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
        self.send_header("request-id", "req_standin_" + uuid.uuid4().hex[:12])
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._log({"t": time.time(), "method": "GET", "path": self.path})
        if self.path.startswith("/_control/mode"):
            self._json(200, {"mode": STATE["mode"]})
        elif self.path.startswith("/v1/models"):
            self._json(200, {"data": [{"id": "claude-sonnet-4-5", "type": "model",
                                       "display_name": "Claude Sonnet 4.5"}], "has_more": False})
        else:
            self._json(200, {})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.startswith("/_control/mode"):
            STATE["mode"] = raw.decode().strip() or "normal"
            self._json(200, {"mode": STATE["mode"]})
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        if "count_tokens" in self.path:
            self._log({"t": time.time(), "path": self.path, "count_tokens": True})
            self._json(200, {"input_tokens": 1200})
            return
        if not self.path.startswith("/v1/messages"):
            self._log({"t": time.time(), "path": self.path, "unknown": True})
            self._json(404, {"type": "error", "error": {"type": "not_found_error",
                                                         "message": "Not found"}})
            return
        mode = pick_mode(body)
        text, _ = last_user_text(body)
        self._log({"t": time.time(), "path": self.path, "mode": mode, "model": body.get("model"),
                   "stream": body.get("stream"), "max_tokens": body.get("max_tokens"),
                   "tools": [t.get("name") for t in body.get("tools") or []][:60],
                   "last_user": text[-300:],
                   "user_texts": [t[-300:] for t in user_texts(body)],
                   "headers": {k: v for k, v in self.headers.items()
                               if k.lower() not in ("x-api-key", "authorization")}})
        self.respond(mode, body)

    # -- scenarios -------------------------------------------------------------------------

    def respond(self, mode: str, body: dict[str, Any]) -> None:
        now = int(time.time())
        err = {"type": "error", "request_id": "req_standin"}
        if mode in ("429", "429_fast"):
            self._json(429, {**err, "error": {"type": "rate_limit_error", "message":
                        "This request would exceed the rate limit for your organization "
                        "(00000000-0000-0000-0000-000000000000) of 50 input tokens per minute. "
                        "For details, refer to: https://docs.claude.com/en/api/rate-limits."}},
                       {"retry-after": "1" if mode == "429_fast" else "20",
                        "anthropic-ratelimit-input-tokens-reset":
                            time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 20))})
        elif mode == "429_bare":
            self._json(429, {**err, "error": {"type": "rate_limit_error",
                                              "message": "Number of requests has exceeded your "
                                                         "rate limit."}},
                       {"x-should-retry": "true"})
        elif mode in ("usage_limit", "usage_limit_weekly"):
            claim = "five_hour" if mode == "usage_limit" else "seven_day"
            reset = reset_epoch() + (0 if mode == "usage_limit" else 2 * 86400)
            self._json(429, {**err, "error": {"type": "rate_limit_error",
                                              "message": "Claude AI usage limit reached"}},
                       {"anthropic-ratelimit-unified-status": "rejected",
                        "anthropic-ratelimit-unified-reset": str(reset),
                        "anthropic-ratelimit-unified-representative-claim": claim,
                        "anthropic-ratelimit-unified-fallback": "unavailable",
                        "anthropic-ratelimit-unified-overage-status": "rejected",
                        "anthropic-ratelimit-unified-overage-disabled-reason": "org_level_disabled",
                        "x-should-retry": "false"})
        elif mode == "500":
            self._json(500, {**err, "error": {"type": "api_error",
                                              "message": "Internal server error"}})
        elif mode == "529":
            self._json(529, {**err, "error": {"type": "overloaded_error", "message": "Overloaded"}})
        elif mode == "401":
            self._json(401, {**err, "error": {"type": "authentication_error",
                                              "message": "invalid x-api-key"}})
        elif mode == "stall_head":
            time.sleep(10**6)
        else:
            self.stream(mode, body)

    def stream(self, mode: str, body: dict[str, Any]) -> None:
        model = body.get("model") or "claude-sonnet-4-5"
        headers = {}
        if mode == "usage_warning":
            headers = {"anthropic-ratelimit-unified-status": "allowed_warning",
                       "anthropic-ratelimit-unified-reset": str(int(time.time()) + 3 * 3600),
                       "anthropic-ratelimit-unified-representative-claim": "five_hour",
                       "anthropic-ratelimit-unified-5h-utilization": "0.91",
                       "anthropic-ratelimit-unified-5h-reset": str(int(time.time()) + 3 * 3600),
                       "anthropic-ratelimit-unified-5h-surpassed-threshold": "0.9"}
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", "req_standin_" + uuid.uuid4().hex[:12])
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("connection", "close")
        self.end_headers()
        msg_id = "msg_standin_" + uuid.uuid4().hex[:16]
        usage = {"input_tokens": 1200, "output_tokens": 1, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        self.event("message_start", {"type": "message_start", "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": usage}})
        if mode == "stall":
            time.sleep(10**6)
            return
        tools = {t.get("name") for t in body.get("tools") or []}
        stop = "end_turn"
        if mode == "tool" and "Bash" in tools:
            self.text_block(0, "I'll delete the scratch file now.")
            self.tool_block(1, "Bash", {"command": "rm -f scratch.txt && echo removed",
                                        "description": "Delete scratch.txt"})
            stop = "tool_use"
        elif mode == "question" and "AskUserQuestion" in tools:
            self.tool_block(0, "AskUserQuestion", {"questions": [{
                "question": "Which database should the cache use?", "header": "Database",
                "multiSelect": False, "options": [
                    {"label": "SQLite", "description": "Single file, no server"},
                    {"label": "Redis", "description": "In-memory, needs a server"}]}]})
            stop = "tool_use"
        elif mode in ("code429", "code429_stall"):
            self.text_block(0, CODE429, stall=mode == "code429_stall")
        elif mode == "slow":
            words = ("Working through the refactor step by step, checking each module "
                     * 40).split()
            self.text_block(0, " ".join(words), delay=0.15)
        else:
            text, _ = last_user_text(body)
            if text.strip() == "quota":
                self.text_block(0, "ok")
            else:
                self.text_block(0, "Hello from the stand-in. Nothing to change here; "
                                   "the project looks fine.")
        self.event("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 42}})
        self.event("message_stop", {"type": "message_stop"})
        self.close_connection = True

    def event(self, name: str, data: dict[str, Any]) -> None:
        self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def text_block(self, index: int, text: str, delay: float = 0.02, stall: bool = False) -> None:
        self.event("content_block_start", {"type": "content_block_start", "index": index,
                                           "content_block": {"type": "text", "text": ""}})
        chunks = re.findall(r"\S+\s*|\s+", text)
        for chunk in chunks:
            self.event("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": {"type": "text_delta", "text": chunk}})
            time.sleep(delay)
        if stall:
            time.sleep(10**6)
        self.event("content_block_stop", {"type": "content_block_stop", "index": index})

    def tool_block(self, index: int, name: str, args: dict[str, Any]) -> None:
        self.event("content_block_start", {"type": "content_block_start", "index": index,
                                           "content_block": {"type": "tool_use",
                                                             "id": "toolu_" + uuid.uuid4().hex[:20],
                                                             "name": name, "input": {}}})
        self.event("content_block_delta", {"type": "content_block_delta", "index": index,
                                           "delta": {"type": "input_json_delta",
                                                     "partial_json": json.dumps(args)}})
        self.event("content_block_stop", {"type": "content_block_stop", "index": index})


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
    ap.add_argument("--log", default=None, help="append one JSON line per request here")
    ap.add_argument("--reset-in", type=int, default=7200, help="seconds until a usage-limit reset")
    ap.add_argument("--reset-at", type=int, default=None, help="usage-limit reset (epoch seconds)")
    args = ap.parse_args(argv)
    STATE.update(mode=args.mode, log=args.log, reset_in=args.reset_in, reset_at=args.reset_at)
    server = QuietServer(("127.0.0.1", args.port), Handler)
    print(f"PORT={server.server_address[1]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
