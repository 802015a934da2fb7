"""The provider-file parts issue #14 added: `screen.progress_ignore` on the real captured busy
screens (a moving spinner or timer is not progress, a new line is), and `[transcript]`: the
tool calls and errors of Claude Code and Codex session files as loop-detector steps."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pitcrew.supervisor.adapters.transcripts import read_steps
from pitcrew.supervisor.core.loops import detect
from pitcrew.supervisor.core.timeouts import progress_text
from pitcrew.supervisor.providers.loader import ConfigError, build
from tests.service.fakes import provider, registry

SCREENS = Path(__file__).resolve().parent.parent / "fixtures" / "screens"
TRANSCRIPTS = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"
BRAILLE = re.compile(r"[⠀-⣿]")
TIMER = re.compile(r"\b(\d+)s\b")
# Each CLI's own animated status glyph, where its status line draws it (seen in the captures)
GLYPHS = {
    "claude": (re.compile(r"^(\s*)[✻✶✳✢·*](?=\s+\S+…)", re.M), "✽"),
    "codex": (re.compile(r"^(\s*)[•◦](?=\s+Working\b)", re.M), "◦"),
    "copilot": (re.compile(r"^(\s*)[●◎](?=\s+(Working|Thinking)\b)", re.M), "◎"),
}


def busy_screens() -> list[tuple[str, Path]]:
    out = []
    for p in registry():
        if p.name.startswith("fake"):
            continue
        for path in sorted((SCREENS / p.name).glob("busy__*.screen"))[:4]:
            out.append((p.name, path))
    return out


def tick(name: str, text: str) -> str:
    """The same screen a moment later: the spinner turned, the timers counted on."""
    text = BRAILLE.sub("⠙", text)
    if name in GLYPHS:
        rx, glyph = GLYPHS[name]
        text = rx.sub(lambda m: m.group(1) + glyph, text)
    return TIMER.sub(lambda m: f"{int(m.group(1)) + 13}s", text)


@pytest.mark.parametrize(("name", "path"), busy_screens(), ids=lambda v: getattr(v, "stem", v))
def test_a_moving_spinner_or_timer_on_a_real_busy_screen_is_not_progress(
        name: str, path: Path) -> None:
    ignore = provider(name).screen.progress_ignore
    text = path.read_text(encoding="utf-8")
    assert progress_text(text, ignore) == progress_text(tick(name, text), ignore)
    more = text.rstrip("\n") + "\n● Edited src/parser.py\n"
    assert progress_text(text, ignore) != progress_text(more, ignore)


def test_every_shipped_provider_declares_what_is_not_progress() -> None:
    for p in registry():
        assert p.screen.progress_ignore, p.name     # at least the common spinners and timers


def test_claude_tool_calls_and_errors_from_its_session_file(tmp_path: Path) -> None:
    [sample] = list((TRANSCRIPTS / "claude").rglob("*.jsonl"))
    steps = read_steps(provider("claude").transcript, str(sample))
    assert steps and all(not s.error for s in steps)
    assert any(s.label.startswith("Edit: ") for s in steps)
    loop = tmp_path / "loop.jsonl"
    lines = []
    for n in range(3):
        lines.append({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash",
             "input": {"command": "npm test"}}]}})
        lines.append({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{n}", "is_error": True,
             "content": "1 failing"}]}})
    loop.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    steps = read_steps(provider("claude").transcript, str(loop))
    assert steps is not None and [s.error for s in steps] == [True] * 3
    found = detect(steps)
    assert found is not None and found.describe() == "Bash: npm test (error) ×3"


def test_codex_shell_calls_with_their_exit_codes(tmp_path: Path) -> None:
    [sample] = list((TRANSCRIPTS / "codex").rglob("*.jsonl"))
    assert read_steps(provider("codex").transcript, str(sample))
    path = tmp_path / "rollout.jsonl"
    lines = []
    for n, code in enumerate((1, 1, 0)):
        lines.append({"type": "response_item", "payload": {
            "type": "function_call", "name": "shell", "call_id": f"c{n}",
            "arguments": json.dumps({"command": ["bash", "-lc", "cargo test"]})}})
        lines.append({"type": "response_item", "payload": {
            "type": "function_call_output", "call_id": f"c{n}",
            "output": f"Exit code: {code}\nWall time: 2.1 seconds\nOutput:\n..."}})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    steps = read_steps(provider("codex").transcript, str(path))
    assert steps is not None
    assert [s.label for s in steps] == ["shell: cargo test (error)"] * 2 + ["shell: cargo test"]
    assert detect(steps) is None          # it passed in the end


def test_a_call_still_running_is_no_step_and_a_missing_file_means_watch_the_screen(
        tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}]}})
        + "\n", encoding="utf-8")
    assert read_steps(provider("claude").transcript, str(path)) == ()
    assert read_steps(provider("claude").transcript, str(tmp_path / "none.jsonl")) is None
    assert read_steps(None, str(path)) is None


def test_a_transcript_table_with_a_mistake_is_one_line_naming_the_field() -> None:
    base = {"process": {"names": ["x"]}, "launch": {"argv": ["x"]}, "resume": {"latest": ["x"]}}
    with pytest.raises(ConfigError, match=r"transcript.call.name: missing"):
        build("x", {**base, "transcript": {"call": {"record": {"type": "a"}}}})
    with pytest.raises(ConfigError, match=r"transcript.result: needs `id`"):
        build("x", {**base, "transcript": {"call": {"record": {"type": "a"}, "name": "n"},
                                           "result": {"record": {"type": "b"}, "id": "i"}}})
