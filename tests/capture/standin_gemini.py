"""Stand-in for the Gemini API (generativelanguage v1beta), for capturing real Gemini CLI screens.

Stdlib only. Point Gemini CLI at it with ``GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:<port>`` and a
fake ``GEMINI_API_KEY=AIza-test-0000`` (auth type gemini-api-key).

Usage::

    python tests/capture/standin_gemini.py [--port 0] [--mode normal] [--log FILE]

It prints ``PORT=<n>`` first. A request's scenario comes from a ``[[mode]]`` marker in the text
of the last user turn in ``contents`` (a last turn holding a functionResponse gets a normal
reply), else from the sticky mode (``--mode`` / ``POST /_control/mode``). Non-streaming
``generateContent`` calls that ask for JSON (Gemini CLI's routing / next-speaker / loop checks)
get a generic JSON answer; error modes hit only the streamed main turn unless
``--utility-errors`` is given (Gemini quotas are per model, so the flash-lite router usually
still works when the main model is out of quota).

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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODES = {
    "normal": "short streamed text reply",
    "slow": "long text streamed slowly (about 60 s)",
    "tool": "a run_shell_command functionCall -> Gemini CLI's confirmation menu",
    "question": "an ask_user functionCall (if the tool is offered)",
    "code429": "streamed reply whose code mentions '429 Too Many Requests' / 'rate limit'",
    "code429_stall": "like code429, then the stream stalls forever",
    "429": "HTTP 429 RESOURCE_EXHAUSTED, per-minute QuotaFailure + RetryInfo 20s",
    "429_fast": "like 429 but RetryInfo 2s (reaches Gemini CLI's final error sooner)",
    "429_bare": "HTTP 429 RESOURCE_EXHAUSTED, no details",
    "quota_daily": "HTTP 429 RESOURCE_EXHAUSTED, per-day QuotaFailure (terminal quota)",
    "500": "HTTP 500 INTERNAL",
    "503": "HTTP 503 UNAVAILABLE 'The model is overloaded'",
    "400_key": "HTTP 400 INVALID_ARGUMENT API_KEY_INVALID",
    "stall": "200 + one empty SSE chunk, then nothing forever",
    "stall_head": "accept the request and never answer",
}

ERROR_MODES = {"429", "429_fast", "429_bare", "quota_daily", "500", "503", "400_key", "stall_head"}

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

STATE: dict[str, Any] = {"mode": "normal", "log": None, "lock": threading.Lock()}
MARK = re.compile(r"\[\[([a-z0-9_]+)\]\]")


def last_user_text(body: dict[str, Any]) -> tuple[str, bool]:
    for turn in reversed(body.get("contents") or []):
        if turn.get("role", "user") != "user":
            continue
        parts = turn.get("parts") or []
        if any("functionResponse" in p for p in parts):
            return "", True
        return "\n".join(p.get("text", "") for p in parts if isinstance(p, dict)), False
    return "", False


def pick_mode(body: dict[str, Any]) -> str:
    text, fn_response = last_user_text(body)
    found = [m for m in MARK.findall(text) if m in MODES]
    if found:
        return found[-1]
    if fn_response:
        return "normal"
    return STATE["mode"]


def quota_error(model: str, per: str, retry: str | None) -> dict[str, Any]:
    metric = "generativelanguage.googleapis.com/generate_content_free_tier_requests"
    quota_id = f"GenerateRequestsPer{per}PerProjectPerModel-FreeTier"
    message = ("You exceeded your current quota, please check your plan and billing details. "
               "For more information on this error, head to: "
               "https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, "
               "head to: https://ai.dev/usage?tab=rate-limit. \n* Quota exceeded for metric: "
               f"{metric}, limit: {'2' if per == 'Minute' else '50'}, model: {model}")
    if retry:
        message += f"\nPlease retry in {retry}."
    details: list[dict[str, Any]] = [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure",
         "violations": [{"quotaMetric": metric, "quotaId": quota_id,
                         "quotaDimensions": {"location": "global", "model": model},
                         "quotaValue": "2" if per == "Minute" else "50"}]},
        {"@type": "type.googleapis.com/google.rpc.Help",
         "links": [{"description": "Learn more about Gemini API quotas",
                    "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]}]
    if retry:
        details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo",
                        "retryDelay": retry.replace(".0", "")})
    return {"error": {"code": 429, "message": message, "status": "RESOURCE_EXHAUSTED",
                      "details": details}}


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
        self.send_header("content-type", "application/json; charset=UTF-8")
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._log({"t": time.time(), "method": "GET", "path": self.path})
        if self.path.startswith("/_control/mode"):
            self._json(200, {"mode": STATE["mode"]})
        elif "/models" in self.path:
            self._json(200, {"models": [{"name": "models/gemini-2.5-pro"}]})
        else:
            self._json(404, {"error": {"code": 404, "message": "Not found", "status": "NOT_FOUND"}})

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
        m = re.search(r"/models/([^/:?]+):(\w+)", self.path)
        model, method = (m.group(1), m.group(2)) if m else ("gemini-2.5-pro", "unknown")
        mode = pick_mode(body)
        text, _ = last_user_text(body)
        tools = [d.get("name") for t in body.get("tools") or []
                 for d in t.get("functionDeclarations") or []]
        gen = body.get("generationConfig") or {}
        self._log({"t": time.time(), "path": self.path, "method": method, "mode": mode,
                   "model": model, "tools": tools,
                   "json": gen.get("responseMimeType"), "last_user": text[-300:],
                   "headers": {k: v for k, v in self.headers.items()
                               if k.lower() not in ("x-goog-api-key", "authorization")}})
        if method == "countTokens":
            self._json(200, {"totalTokens": 1200})
            return
        if mode in ERROR_MODES and (method != "generateContent" or STATE["utility_errors"]):
            self.error(mode, model)
            return
        if method == "generateContent":
            self.unary(body, gen, model)
            return
        self.stream(mode, tools, model)

    def error(self, mode: str, model: str) -> None:
        if mode == "429":
            self._json(429, quota_error(model, "Minute", "20.5s"))
        elif mode == "429_fast":
            self._json(429, quota_error(model, "Minute", "2s"))
        elif mode == "quota_daily":
            self._json(429, quota_error(model, "Day", None))
        elif mode == "429_bare":
            self._json(429, {"error": {"code": 429, "message": "Resource has been exhausted "
                                                              "(e.g. check quota).",
                                       "status": "RESOURCE_EXHAUSTED"}})
        elif mode == "500":
            self._json(500, {"error": {"code": 500, "message": "An internal error has occurred. "
                                                              "Please retry or report in "
                                                              "https://developers.generativeai."
                                                              "google/guide/troubleshooting",
                                       "status": "INTERNAL"}})
        elif mode == "503":
            self._json(503, {"error": {"code": 503, "message": "The model is overloaded. Please "
                                                              "try again later.",
                                       "status": "UNAVAILABLE"}})
        elif mode == "400_key":
            self._json(400, {"error": {"code": 400, "message": "API key not valid. Please pass a "
                                                              "valid API key.",
                                       "status": "INVALID_ARGUMENT", "details": [
                                           {"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                            "reason": "API_KEY_INVALID",
                                            "domain": "googleapis.com",
                                            "metadata": {"service":
                                                         "generativelanguage.googleapis.com"}}]}})
        else:  # stall_head
            time.sleep(10**6)

    def unary(self, body: dict[str, Any], gen: dict[str, Any], model: str) -> None:
        if gen.get("responseMimeType") == "application/json" or gen.get("responseJsonSchema") \
                or gen.get("responseSchema"):
            text = json.dumps({"reasoning": "stand-in", "next_speaker": "user",
                               "model_choice": "flash", "complexity": "simple",
                               "is_stuck": False, "confidence": 0.0, "analysis": "ok",
                               "unproductive_state_confidence": 0.0})
        else:
            text = "Stand-in summary."
        self._json(200, {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                                         "finishReason": "STOP", "index": 0}],
                         "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10,
                                           "totalTokenCount": 110},
                         "modelVersion": model})

    def stream(self, mode: str, tools: list[str | None], model: str) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        usage = {"promptTokenCount": 1200, "candidatesTokenCount": 42, "totalTokenCount": 1242}
        if mode == "stall":
            self.chunk({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]},
                                        "index": 0}], "modelVersion": model})
            time.sleep(10**6)
            return
        if mode == "tool" and "run_shell_command" in tools:
            self.chunk({"candidates": [{"content": {"role": "model", "parts": [
                {"text": "I'll delete the scratch file now."},
                {"functionCall": {"name": "run_shell_command",
                                  "args": {"command": "rm -f scratch.txt && echo removed",
                                           "description": "Delete scratch.txt"}}}]},
                "finishReason": "STOP", "index": 0}], "usageMetadata": usage,
                "modelVersion": model})
        elif mode == "question" and "ask_user" in tools:
            self.chunk({"candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": {"name": "ask_user", "args": {"questions": [{
                    "question": "Which database should the cache use?", "header": "Database",
                    "type": "choice",
                    "options": [{"label": "SQLite", "description": "Single file, no server"},
                                {"label": "Redis", "description": "In-memory, needs a server"}],
                    "multiSelect": False}]}}}]},
                "finishReason": "STOP", "index": 0}], "usageMetadata": usage,
                "modelVersion": model})
        else:
            if mode in ("code429", "code429_stall"):
                text, delay = CODE429, 0.02
            elif mode == "slow":
                text = " ".join(("Working through the refactor step by step, checking each "
                                 "module " * 40).split())
                delay = 0.15
            else:
                text, delay = ("Hello from the stand-in. Nothing to change here; the project "
                               "looks fine."), 0.02
            words = re.findall(r"\S+\s*|\s+", text)
            step = 3
            for i in range(0, len(words), step):
                self.chunk({"candidates": [{"content": {"role": "model", "parts": [
                    {"text": "".join(words[i:i + step])}]}, "index": 0}], "modelVersion": model})
                time.sleep(delay * step)
            if mode == "code429_stall":
                time.sleep(10**6)
            self.chunk({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]},
                                        "finishReason": "STOP", "index": 0}],
                        "usageMetadata": usage, "modelVersion": model})
        self.close_connection = True

    def chunk(self, data: dict[str, Any]) -> None:
        self.wfile.write(f"data: {json.dumps(data)}\r\n\r\n".encode())
        self.wfile.flush()


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
    ap.add_argument("--utility-errors", action="store_true",
                    help="also fail the non-streaming generateContent calls (router, checks); "
                         "by default only the main streamed turn fails, as with a per-model "
                         "quota on the main model")
    args = ap.parse_args(argv)
    STATE.update(mode=args.mode, log=args.log, utility_errors=args.utility_errors)
    server = QuietServer(("127.0.0.1", args.port), Handler)
    print(f"PORT={server.server_address[1]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
