"""Token usage read from real session files with the shipped provider files' `[usage]`
tables (adapters/usage.py), and the reader's incremental reads of a growing file."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pitcrew import resources
from pitcrew.supervisor.adapters.usage import UsageReader
from pitcrew.supervisor.core.usage import totals
from pitcrew.supervisor.providers.loader import load_registry

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
REGISTRY = load_registry(resources.providers_dir())
CLAUDE_HOME = FIXTURES / "transcripts" / "claude"
CLAUDE_SID = "5b0f4c2e-7d1a-4e8b-9c3f-2a6d8e1f4b70"
QWEN_HOME = FIXTURES / "sessions" / "qwen"
QWEN_CWD = "/tmp/pitcrew-qwen-home-ybczqid7/work/other"     # where it was captured


def test_claude_usage_from_its_session_file_counts_each_message_once() -> None:
    steps = UsageReader().for_session(REGISTRY.providers["claude"], CLAUDE_SID,
                                      "/home/user/work/api", home=CLAUDE_HOME, environ={})
    assert steps is not None
    total = totals(steps)
    # 8 records carry usage; msg_01's two content blocks repeat one message's usage
    assert (total.calls, total.input, total.output, total.cost) == (7, 7 * 1200, 7 * 42, None)


def test_qwen_usage_from_a_real_capture_and_none_for_an_unknown_session() -> None:
    reader = UsageReader()
    qwen = REGISTRY.providers["qwen"]
    steps = reader.for_session(qwen, "bf6c14e6-2c53-4718-86e0-89c98d39e752", QWEN_CWD,
                               home=QWEN_HOME, environ={})
    assert steps is not None and totals(steps).tokens == 1240
    assert reader.for_session(qwen, "no-such-session", QWEN_CWD,
                              home=QWEN_HOME, environ={}) is None


def test_providers_without_usage_in_their_files_give_none() -> None:
    aider = REGISTRY.providers["aider"]
    assert aider.usage is None
    assert UsageReader().for_session(aider, "x", "/p") is None
    assert {n for n, p in REGISTRY.providers.items() if p.usage} >= {
        "claude", "codex", "gemini", "qwen"}


def test_a_growing_file_is_read_from_where_the_last_read_stopped(tmp_path: Path) -> None:
    fields = REGISTRY.providers["codex"].usage
    assert fields is not None
    path = tmp_path / "rollout.jsonl"

    def event(inp: int) -> str:
        return json.dumps({"type": "event_msg", "timestamp": "2026-12-01T10:00:00Z",
                           "payload": {"type": "token_count", "info": {"total_token_usage": {
                               "input_tokens": inp, "cached_input_tokens": 0,
                               "output_tokens": 10}}}})

    path.write_text(event(100) + "\n" + event(300) + "\n")
    reader = UsageReader()
    assert totals(reader.steps(fields, str(path))).tokens == 310
    with open(path, "a") as fh:
        fh.write(event(600)[:40])                      # torn: the CLI is mid-write
    assert totals(reader.steps(fields, str(path))).tokens == 310
    with open(path, "a") as fh:
        fh.write(event(600)[40:] + "\n")
    assert totals(reader.steps(fields, str(path))).tokens == 610
    seen = reader._files[str(path)]
    assert seen.offset == path.stat().st_size and len(seen.records) == 3
    replaced = tmp_path / "new.jsonl"                  # a new file under the same name
    replaced.write_text(event(50) + "\n")
    os.replace(replaced, path)
    assert totals(reader.steps(fields, str(path))).tokens == 60


def test_gemini_usage_in_its_jsonl_and_legacy_json_sessions(tmp_path: Path) -> None:
    fields = REGISTRY.providers["gemini"].usage
    assert fields is not None

    def msg(mid: str, out: int) -> dict[str, object]:
        return {"id": mid, "type": "gemini", "timestamp": "2026-12-01T10:00:00Z",
                "tokens": {"input": 900, "output": out, "cached": 400, "thoughts": 30,
                           "tool": 0, "total": 930 + out}}
    jsonl = tmp_path / "session-1.jsonl"      # a message is appended again as it grows
    jsonl.write_text("\n".join(json.dumps(x) for x in [
        {"sessionId": "s", "projectHash": "h"}, {"id": "u1", "type": "user"},
        msg("g1", 5), msg("g1", 70), {"$set": {"lastUpdated": "x"}}, msg("g2", 10)]) + "\n")
    total = totals(UsageReader().steps(fields, str(jsonl)))
    assert (total.calls, total.input, total.output, total.cached) == (2, 1800, 140, 800)
    legacy = tmp_path / "session-2.json"      # one document, the messages in a list
    legacy.write_text(json.dumps({"sessionId": "s", "messages": [msg("g1", 70), msg("g2", 10)]},
                                 indent=2))
    assert totals(UsageReader().steps(fields, str(legacy))).tokens == 1800 + 140
