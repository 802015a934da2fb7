"""Session ids from the CLIs' own session files (synthetic layouts; real samples in
tests/fixtures/sessions are covered by test_session_samples.py)."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

from pitcrew.supervisor.adapters.sessions import escape_cwd, find_session, session_exists
from pitcrew.supervisor.providers.model import FieldRef, SessionStore, SqliteQuery

CLAUDE = SessionStore(config_dir="~/.claude", config_dir_env="CLAUDE_CONFIG_DIR",
                      glob="{config_dir}/projects/{cwd_escaped}/*.jsonl",
                      cwd=FieldRef("json", "cwd"))


def jsonl(path: Path, *records: dict, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def test_claude_escapes_every_char_outside_alnum_and_dash() -> None:
    assert escape_cwd(CLAUDE, "/home/me/my_proj v2.0") == "-home-me-my-proj-v2-0"


def test_newest_session_for_the_cwd_wins(tmp_path: Path) -> None:
    cwd = "/work/my_app"
    folder = tmp_path / ".claude/projects/-work-my-app"
    jsonl(folder / "old.jsonl", {"cwd": cwd}, mtime=1000)
    jsonl(folder / "new.jsonl", {"type": "summary"}, {"cwd": cwd}, mtime=2000)
    found = find_session(CLAUDE, cwd, home=tmp_path, environ={})
    assert found is not None and found.session_id == "new"


def test_escaping_collisions_are_told_apart_by_the_recorded_cwd(tmp_path: Path) -> None:
    folder = tmp_path / ".claude/projects/-work-my-app"
    jsonl(folder / "theirs.jsonl", {"cwd": "/work/my-app"}, mtime=2000)
    jsonl(folder / "mine.jsonl", {"cwd": "/work/my_app"}, mtime=1000)
    assert find_session(CLAUDE, "/work/my_app", home=tmp_path, environ={}).session_id == "mine"


def test_config_dir_env_var_moves_the_store(tmp_path: Path) -> None:
    alt = tmp_path / "alt"
    jsonl(alt / "projects/-w/abc.jsonl", {"cwd": "/w"})
    assert find_session(CLAUDE, "/w", home=tmp_path, environ={}) is None
    found = find_session(CLAUDE, "/w", home=tmp_path, environ={"CLAUDE_CONFIG_DIR": str(alt)})
    assert found is not None and found.session_id == "abc"


def test_only_sessions_written_since_the_agent_started_count(tmp_path: Path) -> None:
    jsonl(tmp_path / ".claude/projects/-w/prev.jsonl", {"cwd": "/w"}, mtime=time.time() - 600)
    assert find_session(CLAUDE, "/w", home=tmp_path, environ={},
                        newer_than=time.time() - 5) is None


def test_codex_style_cwd_inside_the_first_line(tmp_path: Path) -> None:
    store = SessionStore(config_dir="~/.codex", glob="{config_dir}/sessions/*/*/*/rollout-*.jsonl",
                         id=FieldRef("json", "payload.id"), cwd=FieldRef("json", "payload.cwd"))
    day = tmp_path / ".codex/sessions/2026/11/30"
    jsonl(day / "rollout-2026-11-30T10-00-00-aaa.jsonl",
          {"type": "session_meta", "payload": {"id": "aaa", "cwd": "/elsewhere"}}, mtime=3000)
    jsonl(day / "rollout-2026-11-30T09-00-00-bbb.jsonl",
          {"type": "session_meta", "payload": {"id": "bbb", "cwd": "/proj"}}, mtime=2000)
    found = find_session(store, "/proj", home=tmp_path, environ={})
    assert found is not None and found.session_id == "bbb"
    assert session_exists(store, "bbb", "/proj", home=tmp_path, environ={})
    assert not session_exists(store, "zzz", "/proj", home=tmp_path, environ={})


def test_hashed_and_encoded_cwd_folders(tmp_path: Path) -> None:
    import hashlib

    cwd = "/work/my app"
    sha12 = hashlib.sha256(cwd.encode()).hexdigest()[:12]
    hashed = SessionStore(config_dir="~/.k",
                          glob="{config_dir}/wd_{cwd_basename}_{cwd_sha256:.12}/*/state.json",
                          id=FieldRef("parent"))
    jsonl(tmp_path / f".k/wd_my app_{sha12}/session_1/state.json", {})
    assert find_session(hashed, cwd, home=tmp_path, environ={}).session_id == "session_1"
    encoded = SessionStore(config_dir="~/.g",
                           glob="{config_dir}/sessions/{cwd_urlencoded}/*/summary.json",
                           id=FieldRef("json", "info.id"))
    jsonl(tmp_path / ".g/sessions/%2Fwork%2Fmy%20app/x/summary.json", {"info": {"id": "01a2"}})
    assert find_session(encoded, cwd, home=tmp_path, environ={}).session_id == "01a2"


def test_torn_and_garbage_files_are_skipped(tmp_path: Path) -> None:
    folder = tmp_path / ".claude/projects/-w"
    folder.mkdir(parents=True)
    (folder / "torn.jsonl").write_text('{"cwd": "/w", "mess')
    (folder / "binary.jsonl").write_bytes(b"\xff\xfe\x00garbage")
    jsonl(folder / "good.jsonl", {"cwd": "/w"}, mtime=1)
    assert find_session(CLAUDE, "/w", home=tmp_path, environ={}).session_id == "good"


def test_yaml_fields_and_parent_folder_ids(tmp_path: Path) -> None:
    store = SessionStore(config_dir="~/.copilot",
                         glob="{config_dir}/session-state/*/workspace.yaml",
                         id=FieldRef("yaml", "id"), cwd=FieldRef("yaml", "cwd"))
    ws = tmp_path / ".copilot/session-state/1234/workspace.yaml"
    ws.parent.mkdir(parents=True)
    ws.write_text("id: 1234-abcd\ncwd: /proj\ncreated_at: 2026-11-30\n")
    assert find_session(store, "/proj", home=tmp_path, environ={}).session_id == "1234-abcd"
    parent = SessionStore(config_dir="~/.copilot", glob=store.glob, id=FieldRef("parent"))
    assert find_session(parent, "/proj", home=tmp_path, environ={}).session_id == "1234"


def test_sqlite_store_maps_a_directory_to_its_newest_session(tmp_path: Path) -> None:
    db = tmp_path / ".local/share/tool/tool.db"
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute("create table session (id text, directory text, updated int)")
    conn.executemany("insert into session values (?,?,?)",
                     [("ses_old", "/p", 1), ("ses_new", "/p", 2), ("ses_x", "/q", 3)])
    conn.commit()
    conn.close()
    store = SessionStore(sqlite=SqliteQuery(
        "~/.local/share/tool/tool.db",
        "select id from session where directory = ? order by updated desc limit 1"))
    assert find_session(store, "/p", home=tmp_path, environ={}).session_id == "ses_new"
    assert find_session(store, "/nowhere", home=tmp_path, environ={}) is None


def test_a_broken_database_is_no_session_not_a_crash(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    db.write_text("not a database")
    store = SessionStore(sqlite=SqliteQuery(str(db), "select id from s where d = ?"))
    assert find_session(store, "/p", home=tmp_path, environ={}) is None


def test_pretty_printed_json_documents_are_read_too(tmp_path: Path) -> None:
    store = SessionStore(config_dir="~/.c", glob="{config_dir}/s/*/*.json",
                         id=FieldRef("json", "id"), cwd=FieldRef("json", "cwd"))
    path = tmp_path / ".c/s/x/x.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"id": "pretty", "cwd": "/p"}, indent=2))
    assert find_session(store, "/p", home=tmp_path, environ={}).session_id == "pretty"


def test_a_cwd_recorded_as_its_sha256_pins_the_project(tmp_path: Path) -> None:
    import hashlib

    store = SessionStore(config_dir="~", glob="{config_dir}/.gemini/tmp/*/chats/session-*.jsonl",
                         id=FieldRef("json", "sessionId"), cwd=FieldRef("json", "projectHash"),
                         cwd_hash="sha256")
    mine, theirs = "/work/app", "/other/app"
    for slug, cwd, sid, mtime in (("app", theirs, "theirs", 2000), ("app-1", mine, "mine", 1000)):
        jsonl(tmp_path / f".gemini/tmp/{slug}/chats/session-x-{sid}.jsonl",
              {"sessionId": sid, "projectHash": hashlib.sha256(cwd.encode()).hexdigest()},
              mtime=mtime)
    assert find_session(store, mine, home=tmp_path, environ={}).session_id == "mine"


# -- two agents of one CLI in one folder (issue 21 item 1) -----------------------------------

def test_two_agents_in_one_folder_each_get_the_session_that_records_its_pid(
        tmp_path: Path) -> None:
    """Every write makes a file the newest: the recorded pid, not the mtime, decides."""
    from pitcrew.supervisor.adapters.ownership import OwnFacts
    from pitcrew.supervisor.adapters.sessions import attribute
    cwd = "/work/api"
    folder = tmp_path / ".claude/projects/-work-api"
    jsonl(folder / "aaa.jsonl", {"cwd": cwd}, {"type": "start", "pid": 100}, mtime=2000)
    jsonl(folder / "bbb.jsonl", {"cwd": cwd}, {"type": "start", "pid": 200}, mtime=2001)
    for pid, own in ((100, "aaa"), (200, "bbb")):
        found = attribute(CLAUDE, cwd, OwnFacts(pid, peers=1), home=tmp_path, environ={})
        assert found.ref is not None and found.ref.session_id == own and found.doubt is None


def test_an_id_in_argv_or_an_open_file_is_a_fact_too(tmp_path: Path) -> None:
    from pitcrew.supervisor.adapters.ownership import OwnFacts
    from pitcrew.supervisor.adapters.sessions import attribute
    cwd = "/work/api"
    folder = tmp_path / ".claude/projects/-work-api"
    a = jsonl(folder / "aaa.jsonl", {"cwd": cwd}, mtime=2000)
    jsonl(folder / "bbb.jsonl", {"cwd": cwd}, mtime=2001)
    by_argv = OwnFacts(7, argv=("claude", "--resume", "aaa"), peers=1)
    by_file = OwnFacts(7, open_files=frozenset({str(a)}), peers=1)
    launched = OwnFacts(7, argv=("claude", "--session-id=aaa"), peers=1)
    for facts in (by_argv, by_file, launched):
        found = attribute(CLAUDE, cwd, facts, home=tmp_path, environ={})
        assert found.ref is not None and found.ref.session_id == "aaa"


def test_with_no_fact_and_another_agent_here_nothing_is_guessed(tmp_path: Path) -> None:
    from pitcrew.supervisor.adapters.ownership import OwnFacts
    from pitcrew.supervisor.adapters.sessions import attribute
    cwd = "/work/api"
    folder = tmp_path / ".claude/projects/-work-api"
    jsonl(folder / "aaa.jsonl", {"cwd": cwd}, mtime=2000)
    one = attribute(CLAUDE, cwd, OwnFacts(7, peers=1), home=tmp_path, environ={})
    assert one.ref is None and one.doubt is not None and "2 agents" in one.doubt
    alone = attribute(CLAUDE, cwd, OwnFacts(7), home=tmp_path, environ={})
    assert alone.ref is not None and alone.ref.session_id == "aaa"   # alone: the newest
    jsonl(folder / "bbb.jsonl", {"cwd": cwd}, mtime=2001)
    two = attribute(CLAUDE, cwd, OwnFacts(7, peers=1), home=tmp_path, environ={})
    assert two.ref is None and two.doubt is not None and "2 of its sessions" in two.doubt
    # alone in the folder with two sessions (a /clear started the second): the newest
    alone = attribute(CLAUDE, cwd, OwnFacts(7), home=tmp_path, environ={})
    assert alone.ref is not None and alone.ref.session_id == "bbb"
    # a file that records another process's pid is that agent's, never this one's
    jsonl(folder / "bbb.jsonl", {"cwd": cwd}, {"pid": 8}, mtime=2001)
    mine = attribute(CLAUDE, cwd, OwnFacts(7), home=tmp_path, environ={})
    assert mine.ref is not None and mine.ref.session_id == "aaa"


def test_when_every_other_agents_session_is_known_the_one_left_is_this_ones(
        tmp_path: Path) -> None:
    """A rerun beside a running agent: the running one's session is pinned, so the newest of
    the others is the new agent's — even when the running one wrote last."""
    from pitcrew.supervisor.adapters.ownership import OwnFacts
    from pitcrew.supervisor.adapters.sessions import attribute
    cwd = "/work/api"
    folder = tmp_path / ".claude/projects/-work-api"
    jsonl(folder / "new.jsonl", {"cwd": cwd}, mtime=2000)
    jsonl(folder / "old.jsonl", {"cwd": cwd}, mtime=2001)   # the running agent wrote last
    found = attribute(CLAUDE, cwd, OwnFacts(7, peers=1), home=tmp_path, environ={},
                      taken=frozenset({"old"}))
    assert found.ref is not None and found.ref.session_id == "new" and found.doubt is None
    # two others, one of them unknown: still a doubt
    two = attribute(CLAUDE, cwd, OwnFacts(7, peers=2), home=tmp_path, environ={},
                    taken=frozenset({"old"}))
    assert two.ref is None and two.doubt is not None
