"""Run the OpenAI-compatible stand-in for GitHub Copilot CLI's BYOK mode.

Copilot CLI (1.0.x) sends its model calls to any OpenAI-compatible endpoint when
``COPILOT_PROVIDER_BASE_URL`` is set (``copilot help providers``), with no GitHub login. So
the copilot stand-in *is* standin_openai_chat.py; this wrapper only starts it and prints the
environment to give copilot::

    python tests/capture/standin_copilot.py --port 8787
    # then, in another shell:
    COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:8787/v1 COPILOT_PROVIDER_API_KEY=sk-fake \\
        COPILOT_MODEL=gpt-4.1 COPILOT_AUTO_UPDATE=false copilot

Copilot's tools include ``bash`` (``[[tool]]`` → "Do you want to run this command?") and
``ask_user`` (``[[toolq]]`` → the "Copilot needs information" form); see the stand-in's
docstring for the other ``[[mode]]`` tokens.
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from standin_openai_chat import Server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8787)
    parser.add_argument("--mode", default="normal")
    parser.add_argument("--log", type=Path)
    args = parser.parse_args()
    srv = Server(args.port, args.log)
    srv.set_mode(args.mode)
    print(f"export COPILOT_PROVIDER_BASE_URL={srv.base_url}\n"
          "export COPILOT_PROVIDER_API_KEY=sk-fake-standin-0000\n"
          "export COPILOT_MODEL=gpt-4.1 COPILOT_AUTO_UPDATE=false", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        srv.httpd.serve_forever()


if __name__ == "__main__":
    main()
