"""Session ids found in the real CLIs' own session files (samples the capture scripts saved
under tests/fixtures/sessions/<cli>/, laid out as under the CLI's HOME)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from pitcrew import resources
from pitcrew.supervisor.adapters.sessions import find_session
from pitcrew.supervisor.providers.loader import load_registry

SAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "sessions"
REGISTRY = load_registry(resources.providers_dir())


def first_json_with(path: Path, key: str) -> dict:
    for line in path.read_text().splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if key in json.dumps(data):
            return data
    raise AssertionError(f"no {key} in {path}")


def claude_case(home: Path) -> tuple[str, str]:
    [path] = list((home / ".claude/projects").glob("*/*.jsonl"))
    return first_json_with(path, '"cwd"')["cwd"], path.stem


def codex_case(home: Path) -> tuple[str, str]:
    [path] = list((home / ".codex/sessions").rglob("rollout-*.jsonl"))
    meta = json.loads(path.read_text().splitlines()[0])["payload"]
    return meta["cwd"], meta["id"]


def gemini_case(home: Path) -> tuple[str, str]:
    projects = json.loads((home / ".gemini/projects.json").read_text())
    mapping = projects.get("projects", projects)
    cwd, slug = next(iter(mapping.items()))
    [path] = list((home / ".gemini/tmp" / slug / "chats").glob("session-*.jsonl"))
    return cwd, json.loads(path.read_text().splitlines()[0])["sessionId"]


def qwen_case(home: Path) -> tuple[str, str]:
    """The sample's file contents were scrubbed to /home/user/… while its folder names kept
    the capture's paths: name the folder for the recorded cwd, by Qwen's own escaping."""
    import re

    path = next(iter((home / ".qwen/projects").glob("*qw-proj/chats/*.jsonl")))
    cwd = first_json_with(path, '"cwd"')["cwd"]
    project = path.parent.parent
    project.rename(project.with_name(re.sub(r"[^A-Za-z0-9]", "-", cwd)))
    return cwd, path.stem


def opencode_case(home: Path) -> tuple[str, str]:
    db = home / ".local/share/opencode/opencode.db"
    conn = sqlite3.connect(db)
    row = conn.execute("select directory, id from session where parent_id is null "
                       "order by time_updated desc limit 1").fetchone()
    conn.close()
    return row[0], row[1]


def copilot_case(home: Path) -> tuple[str, str]:
    """The sample keeps the store's schema; build the store from it and the workspace file."""
    [ws] = list((home / ".copilot/session-state").glob("*/workspace.yaml"))
    fields = dict(line.split(": ", 1) for line in ws.read_text().splitlines() if ": " in line)
    conn = sqlite3.connect(home / ".copilot/session-store.db")
    schema = (SAMPLES / "copilot/session-store.db.schema.sql").read_text()
    conn.executescript(schema.replace("CREATE TABLE sqlite_sequence(name,seq);", ""))
    conn.execute("insert into sessions (id, cwd, updated_at) values (?, ?, ?)",
                 (fields["id"].strip(), fields["cwd"].strip(), "2026-11-30T22:00:00Z"))
    conn.execute("insert into sessions (id, cwd, updated_at) values ('older', ?, ?)",
                 (fields["cwd"].strip(), "2026-11-29T22:00:00Z"))
    conn.commit()
    conn.close()
    return fields["cwd"].strip(), fields["id"].strip()


CASES = {"claude": claude_case, "codex": codex_case, "gemini": gemini_case,
         "qwen": qwen_case, "opencode": opencode_case, "copilot": copilot_case}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_session_of_a_directory_is_found_in_the_clis_own_files(name: str,
                                                                    tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(SAMPLES / name, home)
    cwd, expected = CASES[name](home)
    found = find_session(REGISTRY.providers[name].sessions, cwd, home=home, environ={})
    assert found is not None and found.session_id == expected
    other = find_session(REGISTRY.providers[name].sessions, "/no/such/project", home=home,
                         environ={})
    assert other is None
