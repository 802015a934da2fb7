"""A stand-in for the OpenAI chat-completions API, for capturing real agent-CLI screens offline.

Stdlib only. Qwen Code (``OPENAI_BASE_URL``), opencode (an ``@ai-sdk/openai-compatible``
provider in ``opencode.json``) and GitHub Copilot CLI (BYOK: ``COPILOT_PROVIDER_BASE_URL``)
can all be pointed at it, so the unmodified CLIs render their real busy, permission, rate-limit,
retry and stalled screens.

What it answers is chosen per request, in this order:

1. a ``[[mode]]`` token in the last *user* message (so the capture script picks the behaviour
   by what it types, e.g. ``please [[tool]]``);
2. the server-wide mode set with ``POST /_mode`` (body: the mode name) or ``set_mode()``;
3. ``normal``.

A request whose last message is a tool result is always answered with a short text reply (so a
tool call does not loop). A ``[[mode*N]]`` token (e.g. ``[[429*2]]``) applies the mode to the
first N requests that carry it and answers ``normal`` afterwards.

Modes: ``normal`` (short streamed reply), ``slow`` (reply streamed over ~40 s), ``tool`` (a
shell tool call, which makes the CLI ask for permission; picks the CLI's own shell tool from the
request's ``tools``), ``toolq`` (the CLI's "ask the user a question" tool if it offers one),
``code429`` (a reply whose code block talks about ``429 Too Many Requests`` and rate limits — a
hard negative; ``code429slow`` streams it over ~45 s so the CLI is still busy), ``429``
(rate_limit_exceeded body, no retry headers), ``429ra`` (same with ``retry-after: 7``),
``429reset`` (``retry-after: 3600`` + ``x-ratelimit-reset-*`` headers and a body naming the
reset time), ``429quota`` (``insufficient_quota`` body), ``429qwen`` (DashScope's
``Throttling.AllocationQuota`` / free-tier body), ``401`` (invalid API key), ``403``, ``500``,
``503`` (overloaded), ``529`` (Anthropic-style overloaded), ``stall`` (200 + headers + first
chunk, then nothing, forever), ``stall0`` (accepts, never sends headers), ``drop`` (closes the
socket mid-stream).

Usage (stand-alone)::

    python tests/capture/standin_openai_chat.py --port 8787 --log /tmp/standin.jsonl
    curl -s localhost:8787/v1/chat/completions -d '{"messages":[{"role":"user","content":"hi"}]}'
    curl -s -X POST localhost:8787/_mode -d 429ra     # every request now gets a 429

It also answers ``GET /<npm package>/latest`` like an npm registry (version ``fake_latest``),
so a CLI whose update check honours ``NPM_CONFIG_REGISTRY`` shows its update notice.

Every request is appended to the ``--log`` JSON-lines file (headers without credentials, model,
tool names, the chosen mode), which tells what each CLI actually sends.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import re
import socket
import threading
import time
import uuid
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TOKEN = re.compile(r"\[\[([a-z0-9]+)(?:\*(\d+))?\]\]")

SHELL_TOOLS = ("bash", "run_shell_command", "shell", "execute_command", "powershell")
QUESTION_TOOLS = ("question", "ask_user", "ask_user_question", "askuserquestion")

CODE429_TEXT = (
    "Here is a retry helper for the HTTP client:\n\n"
    "```python\n"
    "def fetch(url):\n"
    "    resp = session.get(url)\n"
    "    if resp.status_code == 429:  # 429 Too Many Requests\n"
    "        # rate limit reached: usage limit hit, try again later\n"
    "        raise RateLimitError(\"429 Too Many Requests: rate limit exceeded\")\n"
    "    return resp\n"
    "```\n\n"
    "```diff\n"
    "- log.warning(\"You've hit your usage limit\")\n"
    "+ log.warning(\"rate limit reached, retrying in 5s\")\n"
    "```\n\n"
    "The helper raises on HTTP 429 so the caller can back off."
)

NORMAL_TEXT = "Hello! I am the Pitcrew stand-in model. Nothing to do here."
SLOW_TEXT = " ".join(f"step{i}" for i in range(1, 81))


def _now_utc() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def error_response(mode: str) -> tuple[int, dict[str, str], dict[str, Any]] | None:
    """Status, extra headers and JSON body for the error modes (None for the others)."""
    reset = _now_utc() + dt.timedelta(hours=1)
    if mode == "429":
        return 429, {}, {"error": {
            "message": "Rate limit reached for requests. Please try again later.",
            "type": "requests", "param": None, "code": "rate_limit_exceeded"}}
    if mode == "429ra":
        return 429, {"retry-after": "7", "x-ratelimit-limit-requests": "60",
                     "x-ratelimit-remaining-requests": "0",
                     "x-ratelimit-reset-requests": "7s"}, {"error": {
            "message": ("Rate limit reached for standin-model in organization org-pitcrew on "
                        "requests per min (RPM): Limit 60, Used 60, Requested 1. "
                        "Please try again in 7s."),
            "type": "requests", "param": None, "code": "rate_limit_exceeded"}}
    if mode == "429reset":
        return 429, {"retry-after": "3600", "x-ratelimit-reset-requests": "1h0m0s",
                     "x-ratelimit-reset-tokens": "1h0m0s",
                     "x-ratelimit-reset": str(int(reset.timestamp()))}, {"error": {
            "message": (f"You have reached your usage limit. Your quota resets at "
                        f"{reset.strftime('%Y-%m-%dT%H:%M:%SZ')}."),
            "type": "usage_limit_reached", "param": None, "code": "rate_limit_exceeded",
            "resets_at": int(reset.timestamp())}}
    if mode == "429quota":
        return 429, {}, {"error": {
            "message": ("You exceeded your current quota, please check your plan and billing "
                        "details. For more information on this error, read the docs: "
                        "https://platform.openai.com/docs/guides/error-codes/api-errors."),
            "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}}
    if mode == "429qwen":
        return 429, {}, {"error": {
            "message": "Allocated quota exceeded, please increase your quota limit.",
            "type": "Throttling.AllocationQuota", "param": None,
            "code": "Throttling.AllocationQuota"}, "request_id": str(uuid.uuid4())}
    if mode == "401":
        return 401, {}, {"error": {
            "message": ("Incorrect API key provided: sk-fake-*****0000. You can find your "
                        "API key at https://platform.openai.com/account/api-keys."),
            "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}}
    if mode == "403":
        return 403, {}, {"error": {
            "message": "Access denied: your account is not allowed to use this model.",
            "type": "permission_denied", "param": None, "code": "access_denied"}}
    if mode == "500":
        return 500, {}, {"error": {
            "message": "The server had an error while processing your request. Sorry about that!",
            "type": "server_error", "param": None, "code": None}}
    if mode == "503":
        return 503, {}, {"error": {
            "message": "The engine is currently overloaded, please try again later.",
            "type": "server_error", "param": None, "code": "overloaded"}}
    if mode == "529":
        return 529, {}, {"type": "error", "error": {"type": "overloaded_error",
                                                    "message": "Overloaded"}}
    return None


def _fill_args(schema: dict[str, Any], purpose: str) -> dict[str, Any]:
    """Arguments for a tool call: every required property filled with something plausible."""
    props: dict[str, Any] = schema.get("properties", {}) or {}
    required = list(schema.get("required", []) or [])
    args: dict[str, Any] = {}
    names = required or list(props)
    names += [n for n in props if n.lower() == "requestedschema" and n not in names]
    for name in names:
        spec = props.get(name, {}) or {}
        kind = spec.get("type")
        lname = name.lower()
        if lname in ("command", "cmd"):
            args[name] = "echo pitcrew > pitcrew-standin.txt"
        elif "description" in lname:
            args[name] = "Write a marker file for the Pitcrew capture"
        elif lname in ("question", "prompt", "message") and purpose == "question":
            args[name] = "Which database should the new service use?"
        elif lname in ("questions",) and kind == "array":
            args[name] = [{"question": "Which database should the new service use?",
                           "header": "Database",
                           "options": [{"label": "PostgreSQL", "description": "relational"},
                                       {"label": "SQLite", "description": "single file"}]}]
        elif lname == "requestedschema":  # copilot's ask_user (an elicitation form)
            args[name] = {"type": "object", "required": ["database"], "properties": {
                "database": {"type": "string", "title": "Database",
                             "description": "Which database should the new service use?",
                             "enum": ["PostgreSQL", "SQLite"]}}}
        elif lname in ("choices", "options") and kind == "array":
            args[name] = ["PostgreSQL", "SQLite"]
        elif kind == "boolean":
            args[name] = False
        elif kind in ("integer", "number"):
            args[name] = 120000 if "timeout" in lname else 1
        elif kind == "array":
            args[name] = []
        elif kind == "object":
            args[name] = {}
        elif "enum" in spec:
            args[name] = spec["enum"][0]
        else:
            args[name] = "."
    return args


def pick_tool(tools: list[dict[str, Any]], wanted: tuple[str, ...],
              purpose: str) -> tuple[str, dict[str, Any]] | None:
    by_name = {}
    for tool in tools:
        fn = tool.get("function", tool)
        if isinstance(fn, dict) and fn.get("name"):
            by_name[fn["name"].lower()] = fn
    for want in wanted:
        fn = by_name.get(want)
        if fn is not None:
            return fn["name"], _fill_args(fn.get("parameters", {}) or {}, purpose)
    return None


class StandIn:
    """The server state: mode, per-token counters, request log."""

    def __init__(self, log_path: Path | None = None) -> None:
        self.mode = "normal"
        self.counts: Counter[str] = Counter()
        self.log_path = log_path
        self.lock = threading.Lock()
        self.requests = 0
        self.stall_release = threading.Event()
        self.fake_latest = "99.0.0"  # what GET /<package>/latest answers (fake npm registry)

    def choose(self, body: dict[str, Any]) -> str:
        messages = body.get("messages") or []
        if messages and messages[-1].get("role") == "tool":
            return "after_tool"
        last_user = ""
        for msg in reversed(messages):
            if msg.get("role") == "user":
                last_user = _text(msg.get("content"))
                break
        found = TOKEN.findall(last_user)
        if found:
            name, times = found[-1]
            if times:
                with self.lock:
                    self.counts[name + "*" + times] += 1
                    if self.counts[name + "*" + times] > int(times):
                        return "normal"
            return name
        return self.mode

    def log(self, record: dict[str, Any]) -> None:
        with self.lock:
            self.requests += 1
            if self.log_path:
                with self.log_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(record) + "\n")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def make_handler(state: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt: str, *args: Any) -> None:  # quiet
            return

        def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                state.log({"at": _now_utc().isoformat(), "method": "GET", "path": self.path,
                           "headers": _safe_headers(self.headers)})
                self._json(200, {"object": "list", "data": [
                    {"id": m, "object": "model", "created": 1700000000, "owned_by": "pitcrew"}
                    for m in ("standin-model", "gpt-4.1", "qwen3-coder-plus")]})
                return
            found = re.fullmatch(r"/((?:@[^/]+/)?[^/@]+)/(latest|[\w.-]+)", self.path)
            if found:  # a fake npm registry "dist-tag" document, for update notices
                state.log({"at": _now_utc().isoformat(), "method": "GET", "path": self.path,
                           "headers": _safe_headers(self.headers), "mode": "npm-registry"})
                self._json(200, {"name": found.group(1).replace("%2f", "/"),
                                 "version": state.fake_latest,
                                 "dist-tags": {"latest": state.fake_latest}})
                return
            self._json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.path == "/_mode":
                state.mode = raw.decode().strip() or "normal"
                self._json(200, {"mode": state.mode})
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {}
            mode = state.choose(body)
            tools = body.get("tools") or []
            state.log({"at": _now_utc().isoformat(), "method": "POST", "path": self.path,
                       "headers": _safe_headers(self.headers), "model": body.get("model"),
                       "stream": body.get("stream"), "n_messages": len(body.get("messages") or []),
                       "tools": [(t.get("function") or t).get("name") for t in tools],
                       "last": _text((body.get("messages") or [{}])[-1].get("content"))[-200:],
                       "question_tools": [t for t in tools
                                          if (t.get("function") or t).get("name", "").lower()
                                          in QUESTION_TOOLS],
                       "mode": mode})
            err = error_response(mode)
            if err is not None:
                status, headers, payload = err
                self._json(status, payload, headers)
                return
            if mode == "stall0":
                self._hold()
                return
            stream = bool(body.get("stream"))
            model = body.get("model") or "standin-model"
            if mode == "tool" and tools:
                picked = pick_tool(tools, SHELL_TOOLS, "shell")
                if picked:
                    self._reply(stream, model, tool=picked)
                    return
            if mode == "toolq" and tools:
                picked = pick_tool(tools, QUESTION_TOOLS, "question")
                if picked:
                    self._reply(stream, model, tool=picked)
                    return
            text = {"code429": CODE429_TEXT, "code429slow": CODE429_TEXT, "slow": SLOW_TEXT,
                    "after_tool": "Done. The marker file is written."}.get(mode, NORMAL_TEXT)
            if not tools:  # a side request (title, summary): keep it short
                text = "Stand-in session"
            self._reply(stream, model, text=text,
                        delay={"slow": 0.5, "code429slow": 0.6}.get(mode, 0.0),
                        stall=mode == "stall", drop=mode == "drop")

        def _hold(self) -> None:
            try:
                while not state.stall_release.wait(1.0):
                    pass
            except Exception:
                pass

        def _reply(self, stream: bool, model: str, *, text: str = "",
                   tool: tuple[str, dict[str, Any]] | None = None, delay: float = 0.0,
                   stall: bool = False, drop: bool = False) -> None:
            cid = "chatcmpl-" + uuid.uuid4().hex[:24]
            created = int(time.time())
            usage = {"prompt_tokens": 1200, "completion_tokens": 40, "total_tokens": 1240}
            if not stream:
                message: dict[str, Any] = {"role": "assistant", "content": text or None}
                finish = "stop"
                if tool:
                    message["tool_calls"] = [{"id": "call_" + uuid.uuid4().hex[:20],
                                              "type": "function",
                                              "function": {"name": tool[0],
                                                           "arguments": json.dumps(tool[1])}}]
                    finish = "tool_calls"
                if stall:
                    self._hold()
                    return
                self._json(200, {"id": cid, "object": "chat.completion", "created": created,
                                 "model": model, "choices": [{"index": 0, "message": message,
                                                              "finish_reason": finish}],
                                 "usage": usage})
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True

            def chunk(delta: dict[str, Any], finish: str | None = None,
                      with_usage: bool = False) -> None:
                obj: dict[str, Any] = {"id": cid, "object": "chat.completion.chunk",
                                       "created": created, "model": model,
                                       "choices": [{"index": 0, "delta": delta,
                                                    "finish_reason": finish}]}
                if with_usage:
                    obj["usage"] = usage
                self.wfile.write(f"data: {json.dumps(obj)}\n\n".encode())
                self.wfile.flush()

            try:
                chunk({"role": "assistant", "content": ""})
                if stall:
                    chunk({"content": "Let me think"})
                    self._hold()
                    return
                if tool:
                    chunk({"tool_calls": [{"index": 0, "id": "call_" + uuid.uuid4().hex[:20],
                                           "type": "function",
                                           "function": {"name": tool[0],
                                                        "arguments": json.dumps(tool[1])}}]})
                    chunk({}, "tool_calls", with_usage=True)
                else:
                    words = re.findall(r"\S+\s*|\n", text) or [text]
                    for i, word in enumerate(words):
                        chunk({"content": word})
                        if delay:
                            time.sleep(delay)
                        if drop and i == 3:
                            self.connection.shutdown(socket.SHUT_RDWR)
                            return
                    chunk({}, "stop", with_usage=True)
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, OSError):
                return

    return Handler


def _safe_headers(headers: Any) -> dict[str, str]:
    hidden = ("authorization", "api-key", "x-api-key", "cookie")
    return {k: ("<redacted>" if k.lower() in hidden else v) for k, v in headers.items()}


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # clients hang up on stalled streams all the time


class Server:
    """Run the stand-in on a background thread: ``with Server() as srv: srv.base_url``."""

    def __init__(self, port: int = 0, log_path: Path | None = None) -> None:
        self.state = StandIn(log_path)
        self.httpd = _QuietServer(("127.0.0.1", port), make_handler(self.state))
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def set_mode(self, mode: str) -> None:
        self.state.mode = mode

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.state.stall_release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8787)
    parser.add_argument("--mode", default="normal")
    parser.add_argument("--log", type=Path)
    args = parser.parse_args()
    srv = Server(args.port, args.log)
    srv.set_mode(args.mode)
    print(f"stand-in listening on {srv.base_url} (mode {args.mode})", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        srv.httpd.serve_forever()


if __name__ == "__main__":
    main()
