"""A minimal OpenAI-compatible stand-in server for capturing real aider screens offline.

Stdlib only. It listens on 127.0.0.1 and answers `POST .../chat/completions` (streaming SSE
or plain JSON, whichever the client asks for). The behaviour is chosen by the first path
segment of the base URL the client was given, so one server serves every scenario:

    --openai-api-base http://127.0.0.1:PORT/ok/v1        a short normal answer
    --openai-api-base http://127.0.0.1:PORT/mention/v1   an answer naming a repo file (hello.py),
                                                         so aider asks "Add file to the chat?"
    --openai-api-base http://127.0.0.1:PORT/429/v1       HTTP 429 rate_limit_exceeded
    --openai-api-base http://127.0.0.1:PORT/quota/v1     HTTP 429 insufficient_quota
    --openai-api-base http://127.0.0.1:PORT/401/v1       HTTP 401 invalid_api_key
    --openai-api-base http://127.0.0.1:PORT/500/v1       HTTP 500 server error
    --openai-api-base http://127.0.0.1:PORT/503/v1       HTTP 503 overloaded
    --openai-api-base http://127.0.0.1:PORT/slow/v1      waits SLOW_FIRST_TOKEN s, streams one
                                                         word, then stalls (STALL_SECONDS)

Run: python standin_aider.py [--port N]   (prints the port on stdout, serves until killed)
Every request is bounded: the server only answers, it never calls out.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STALL_SECONDS = 600
SLOW_FIRST_TOKEN = 6

ERRORS = {
    "429": (429, {"error": {"message": "Rate limit reached for gpt-4o in organization org-standin "
                            "on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200. "
                            "Please try again in 2.4s.",
                            "type": "requests", "param": None, "code": "rate_limit_exceeded"}}),
    "quota": (429, {"error": {"message": "You exceeded your current quota, please check your plan "
                              "and billing details.",
                              "type": "insufficient_quota", "param": None,
                              "code": "insufficient_quota"}}),
    "401": (401, {"error": {"message": "Incorrect API key provided: sk-stand***-in. You can find "
                            "your API key at https://platform.openai.com/account/api-keys.",
                            "type": "invalid_request_error", "param": None,
                            "code": "invalid_api_key"}}),
    "500": (500, {"error": {"message": "The server had an error while processing your request. "
                            "Sorry about that!", "type": "server_error", "param": None,
                            "code": None}}),
    "503": (503, {"error": {"message": "The engine is currently overloaded, please try again "
                            "later", "type": "server_error", "param": None, "code": None}}),
}

ANSWERS = {
    "ok": "Hello! I'm ready to help. What would you like to change?",
    "mention": "The greeting is printed by the `main` function in hello.py. "
               "Add that file to the chat if you want me to edit it.",
    "slow": "Thinking",
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt: str, *args: object) -> None:  # keep the pane quiet
        sys.stderr.write("standin: " + (fmt % args) + "\n")

    def _mode(self) -> str:
        parts = [p for p in self.path.split("/") if p]
        return parts[0] if parts else "ok"

    def _json(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status == 429:
            self.send_header("retry-after", "3")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # /models
        self._json(200, {"object": "list", "data": [{"id": "gpt-4o", "object": "model"}]})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            req = {}
        mode = self._mode()
        if mode in ERRORS:
            status, body = ERRORS[mode]
            self._json(status, body)
            return
        text = ANSWERS.get(mode, ANSWERS["ok"])
        model = req.get("model", "gpt-4o")
        if not req.get("stream"):
            self._json(200, {
                "id": "chatcmpl-standin", "object": "chat.completion", "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
            })
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()

        def chunk(delta: dict, finish: str | None = None) -> None:
            body = {"id": "chatcmpl-standin", "object": "chat.completion.chunk",
                    "created": int(time.time()), "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            self.wfile.write(b"data: " + json.dumps(body).encode() + b"\n\n")
            self.wfile.flush()

        try:
            chunk({"role": "assistant", "content": ""})
            if mode == "slow":
                time.sleep(SLOW_FIRST_TOKEN)
            for word in text.split(" "):
                chunk({"content": word + " "})
                time.sleep(0.03)
            if mode == "slow":
                time.sleep(STALL_SECONDS)
            chunk({}, "stop")
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True


def serve(port: int = 0) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    server = serve(args.port)
    print(server.server_address[1], flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
