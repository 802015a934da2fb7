"""Provider files: every shipped one loads; bad ones fail loudly, alone, with file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from pitcrew import resources
from pitcrew.supervisor.core.rules import Command
from pitcrew.supervisor.providers.loader import load_registry

SHIPPED = resources.providers_dir()
REQUIRED = {
    "claude", "codex", "gemini", "opencode", "cursor", "copilot", "qwen", "kimi", "grok",
    "amp", "cline", "hermes", "antigravity", "qoder", "devin", "crush", "aider",
}
MINIMAL = """
schema = 1
display_name = "Mini"
[process]
names = ["mini"]
[launch]
argv = ["mini"]
[resume]
by_id = ["mini", "--resume", "{session_id}"]
"""


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.toml"
    path.write_text(text)
    return path


def test_every_required_provider_ships_and_loads_cleanly() -> None:
    registry = load_registry(SHIPPED)
    assert registry.errors == ()
    assert set(registry.providers) >= REQUIRED


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_each_provider_says_how_it_resumes_and_how_each_part_was_verified(name: str) -> None:
    p = load_registry(SHIPPED).providers[name]
    assert p.resume.supported or p.resume.unsupported
    assert p.process.names or p.process.argv
    for part in ("process", "resume", "sessions", "screen"):
        assert p.verified.get(part), f"{name}: verified.{part} missing"
    if p.checker:
        assert "{model_args}" in p.checker.argv.argv, "a checker must accept a chosen model"
        assert p.verified.get("checker")


def test_checker_candidates_from_the_spec_all_have_a_checker_command() -> None:
    registry = load_registry(SHIPPED)
    for name in ("claude", "codex", "gemini", "opencode", "qwen", "kimi", "grok", "hermes"):
        assert registry.providers[name].checker is not None, name


def test_a_typo_in_a_placeholder_names_file_field_and_placeholder(tmp_path: Path) -> None:
    bad = MINIMAL.replace("{session_id}", "{sesion_id}")
    write(tmp_path, "codex", bad)
    registry = load_registry(tmp_path)
    assert registry.errors == (
        "providers/codex.toml: resume.by_id: unknown placeholder {sesion_id} "
        "(allowed: {model_args}, {session_id})",
    )
    assert "codex" not in registry.providers


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace('names = ["mini"]', 'names = "mini"'),
         "process.names: expected a list of strings"),
        (lambda t: t + "\n[screen.markers]\nbusy = ['(unclosed']\n",
         "screen.markers.busy: bad regex '(unclosed'"),
        (lambda t: t + "\n[screen.markers]\nhappy = ['x']\n",
         "screen.markers.happy: not a marker state"),
        (lambda t: t.replace("[launch]", "[launch]\nargs = []"), "launch.args: unknown key"),
        (lambda t: t.replace('by_id = ["mini", "--resume", "{session_id}"]', ""),
         "resume.by_id: give by_id and/or latest"),
        (lambda t: t.replace("schema = 1", "schema = 7"), "schema: this Pitcrew reads schema 1"),
        (lambda t: t + "\n[sessions]\nid = 'xml:id'\n", "sessions.id: expected one of"),
        (lambda t: t + "\n[checker]\nargv = ['mini', '{prompt}']\n",
         "checker.argv: use {prompt} in argv exactly when prompt = \"arg\""),
        (lambda t: "this is [not toml", "not valid TOML"),
    ],
)
def test_malformed_files_get_one_line_naming_the_field(tmp_path: Path, edit, message) -> None:
    write(tmp_path, "mini", edit(MINIMAL))
    write(tmp_path, "ok", MINIMAL)
    registry = load_registry(tmp_path)
    assert len(registry.errors) == 1
    assert registry.errors[0].startswith("providers/mini.toml: ")
    assert message in registry.errors[0]
    assert "\n" not in registry.errors[0]
    assert "ok" in registry.providers  # the rest still load


def test_user_file_adds_a_provider_without_code(tmp_path: Path) -> None:
    write(tmp_path / "user", "mini", MINIMAL)
    registry = load_registry(SHIPPED, tmp_path / "user")
    mini = registry.providers["mini"]
    assert mini.resume.by_id == Command(("mini", "--resume", "{session_id}"))
    assert mini.source == tmp_path / "user" / "mini.toml"
    assert mini.screen.markers  # it inherits the common markers


def test_user_override_merges_over_the_shipped_definition(tmp_path: Path) -> None:
    write(tmp_path, "claude", '[resume]\nlatest = ["claude", "--continue", "--verbose"]\n')
    registry = load_registry(SHIPPED, tmp_path)
    claude = registry.providers["claude"]
    assert claude.resume.latest == Command(("claude", "--continue", "--verbose"))
    assert claude.resume.by_id is not None  # untouched keys keep the shipped value
    assert claude.display_name == "Claude Code"


def test_broken_user_override_falls_back_to_the_shipped_definition(tmp_path: Path) -> None:
    write(tmp_path, "claude", '[resume]\nby_id = ["claude", "--resume", "{id}"]\n')
    registry = load_registry(SHIPPED, tmp_path)
    assert registry.providers["claude"].resume.by_id == load_registry(
        SHIPPED).providers["claude"].resume.by_id
    assert registry.errors == (
        "providers/claude.toml: resume.by_id: unknown placeholder {id} "
        "(allowed: {model_args}, {session_id}) (using the shipped definition)",
    )


def test_commands_render_models_and_ids() -> None:
    claude = load_registry(SHIPPED).providers["claude"]
    assert claude.resume.by_id is not None
    assert claude.resume.by_id.render(session_id="abc") == ("claude", "--resume", "abc")
    model = claude.launch.model_args("opus")
    assert claude.resume.by_id.render(model, session_id="abc") == (
        "claude", "--resume", "abc", "--model", "opus")
    assert claude.launch.model_args(None) == ()


def test_the_docs_full_provider_example_loads_as_written(tmp_path: Path) -> None:
    """The "every key" example in docs/providers.md is what a user copies: it must load with
    no error."""
    import re

    readme = (Path(__file__).resolve().parents[2] / "docs" / "providers.md").read_text()
    [example] = [b for b in re.findall(r"```toml\n(.*?)```", readme, re.S)
                 if 'display_name = "My Agent"' in b]
    write(tmp_path, "myagent", example)
    registry = load_registry(SHIPPED, tmp_path)
    assert registry.errors == ()
    agent = registry.providers["myagent"]
    assert agent.display_name == "My Agent" and agent.screen.banners
