"""Pitcrew's own files: the ledger, state.json, the lock, edits to config.toml."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path

import pytest

from pitcrew.supervisor.core.delivery import Delivery
from pitcrew.supervisor.core.health import Health
from pitcrew.supervisor.core.records import Badge, Decision, Incident, Phase, TerminalState
from pitcrew.supervisor.store import config_edit, schema, state_store
from pitcrew.supervisor.store.config import load_config
from pitcrew.supervisor.store.ledger import Ledger
from pitcrew.supervisor.store.lock import SupervisorLock


def decision(n: int) -> Decision:
    return Decision(Badge.RESUMED, 1_800_000_000.0 + n, "work:%3", "Claude Code", f"task {n}",
                    "/p", "process exited", "exited with status 1", 1, {"pid": n})


def test_ledger_appends_and_reads_the_newest_first(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "autopilot-ledger.jsonl")
    for n in range(12):
        ledger.append(decision(n))
    assert [d.prompt for d in ledger.tail(5)] == [f"task {n}" for n in (11, 10, 9, 8, 7)]
    assert ledger.tail(1)[0] == decision(11)


def test_a_torn_last_line_is_skipped_and_never_glued_to_the_next(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(path)
    ledger.append(decision(1))
    with open(path, "ab") as fh:
        fh.write(b'{"kind": "decision", "badge": "Resu')   # a crash mid-write
    assert [d.prompt for d in ledger.tail(5)] == ["task 1"]
    ledger.append(decision(2))
    assert [d.prompt for d in ledger.tail(5)] == ["task 2", "task 1"]
    lines = path.read_bytes().split(b"\n")
    assert lines[0].startswith(b'{"kind":"decision"') and b"Resu" in lines[1]


def test_the_ledger_is_never_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(path)
    ledger.append(decision(1))
    before = path.read_bytes()
    ledger.append(decision(2))
    assert path.read_bytes().startswith(before)


def test_tail_reads_only_the_end_of_a_large_ledger(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    row = json.dumps(decision(0).to_json()) + "\n"
    path.write_text(row * 50_000)                      # ~15 MB
    ledger = Ledger(path)
    ledger.append(decision(99))
    assert ledger.tail(1)[0].prompt == "task 99"


def test_unknown_kinds_and_garbage_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    path.write_text('{"kind": "note"}\nnot json\n\x00\x01\n')
    assert Ledger(path).tail(5) == []


def test_the_ledger_rotates_by_size_keeping_every_row_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "autopilot-ledger.jsonl"
    ledger = Ledger(path, max_bytes=2_000, keep=3)
    written: list[bytes] = []
    for n in range(60):
        ledger.append(decision(n))
        written.append(json.dumps(decision(n).to_json(), ensure_ascii=False,
                                  separators=(",", ":")).encode() + b"\n")
    names = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("autopilot"))
    assert names == ["autopilot-ledger.1.jsonl.gz", "autopilot-ledger.2.jsonl.gz",
                     "autopilot-ledger.3.jsonl.gz", "autopilot-ledger.jsonl"]
    kept = b"".join(gzip.decompress(ledger.rotated(n).read_bytes()) for n in (3, 2, 1))
    kept += path.read_bytes()
    assert b"".join(written).endswith(kept)                   # rows as written, in order
    assert all(p.stat().st_size <= 2_000 for p in tmp_path.iterdir() if p.suffix == ".jsonl")
    newest = [d.prompt for d in ledger.tail(100)]
    assert newest == [f"task {n}" for n in range(59, 59 - len(newest), -1)]
    assert len(newest) == kept.count(b"\n")
    assert ledger.tail(1)[0] == decision(59)


def test_tail_reads_across_the_rotation_boundary(tmp_path: Path) -> None:
    path = tmp_path / "autopilot-ledger.jsonl"
    ledger = Ledger(path, max_bytes=1_000, keep=5)
    n = 0
    while not ledger.rotated(1).exists():
        ledger.append(decision(n))
        n += 1
    assert len(path.read_bytes().splitlines()) == 1           # the newest row alone
    assert [d.prompt for d in ledger.tail(5)] == [f"task {k}" for k in range(n - 1, n - 6, -1)]


def test_a_torn_line_and_a_crash_mid_rotation_lose_no_row(tmp_path: Path) -> None:
    path = tmp_path / "autopilot-ledger.jsonl"
    ledger = Ledger(path, max_bytes=1_500, keep=5)
    for n in range(3):
        ledger.append(decision(n))
    with open(path, "ab") as fh:
        fh.write(b'{"kind": "decision", "badge": "Resu')    # a crash mid-write
    os.replace(path, tmp_path / "autopilot-ledger.1.jsonl")  # ...and mid-rotation
    assert [d.prompt for d in ledger.tail(5)] == ["task 2", "task 1", "task 0"]
    for n in range(3, 12):
        ledger.append(decision(n))
    assert not (tmp_path / "autopilot-ledger.1.jsonl").exists()   # compressed at rotation
    assert [d.prompt for d in ledger.tail(20)] == [f"task {k}" for k in range(11, -1, -1)]
    # a crash after the .gz was complete but before the plain copy went: read once
    gz = ledger.rotated(1)
    (tmp_path / "autopilot-ledger.1.jsonl").write_bytes(gzip.decompress(gz.read_bytes()))
    assert [d.prompt for d in ledger.tail(20)] == [f"task {k}" for k in range(11, -1, -1)]


def test_the_ledger_defaults_are_20_mb_and_5_files(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "autopilot-ledger.jsonl")
    assert (ledger.max_bytes, ledger.keep) == (20 * 1024 * 1024, 5)
    assert ledger.rotated(2).name == "autopilot-ledger.2.jsonl.gz"


def test_ledger_rows_of_the_wrong_shape_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "autopilot-ledger.jsonl"
    good = decision(1).to_json()
    bad = [{**good, "at": 1e20}, {**good, "at": "soon"}, {**good, "prompt": ["x"]},
           {**good, "attempt": -1}, {**good, "badge": "Exploded"}, {**good, "readings": 3}]
    path.write_text("".join(json.dumps(row) + "\n" for row in [good, *bad]))
    assert Ledger(path).tail(10) == [decision(1)]
    out = subprocess.run([sys.executable, "-m", "pitcrew.supervisor", "ledger"], text=True,
                         capture_output=True, env={**os.environ, "PITCREW_HOME": str(tmp_path)},
                         timeout=60)
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout.count("task 1") == 1


def test_the_report_reads_every_row_across_rotation_and_skips_torn_and_bad_ones(
        tmp_path: Path) -> None:
    """The incident report reads all rows, oldest first, across the `.N.jsonl.gz` files and
    the live one; a torn, non-JSON or non-object line is counted, not an error. A row of a
    badge this version does not know is kept for the report."""
    path = tmp_path / "autopilot-ledger.jsonl"
    ledger = Ledger(path, max_bytes=700, keep=5)
    for n in range(12):
        ledger.append(decision(n))
    assert ledger.rotated(2).exists() and not ledger.rotated(5).exists()
    with open(path, "ab") as fh:
        fh.write(b'"a string"\n[1, 2]\nnot json\n')
        fh.write(json.dumps({**decision(12).to_json(), "badge": "Looping"}).encode() + b"\n")
        fh.write(b'{"kind": "decision", "badge": "Resu')     # torn: a crash mid-write
    rows, skipped = ledger.read_all()
    assert [r["prompt"] for r in rows] == [f"task {k}" for k in range(13)]
    assert rows[-1]["badge"] == "Looping"
    assert skipped == 4


def test_state_round_trips_and_is_replaced_atomically(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    t = TerminalState("work:%3", "Claude Code", "/p", Health.ZOMBIE, "fix it", "sess",
                      Incident(2, "fix it", 1.0, "process exited", "exit 1", 2, Phase.WAITING,
                               99.5, "rate_limit", 1), 2, 3, (1.0, 2.0), (3.0,))
    snap = state_store.Snapshot({"default:%3": t}, paused=True, consent=True)
    state_store.save(path, snap)
    loaded = state_store.load(path)
    assert loaded.problem is None and loaded.snapshot == snap
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".state-")]


def test_a_corrupt_state_file_is_kept_aside_not_lost(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text('{"terminals": {"x": {"terminal": 1}')
    loaded = state_store.load(path)
    assert loaded.snapshot == state_store.Snapshot()
    assert loaded.problem and "kept it as state.json.corrupt-" in loaded.problem
    [aside] = [p for p in tmp_path.iterdir() if p.name.startswith("state.json.corrupt-")]
    assert aside.read_text() == '{"terminals": {"x": {"terminal": 1}'


GOOD_TERMINAL = {"terminal": "work:%3", "agent": "Claude Code", "project": "/p"}


@pytest.mark.parametrize("body", [
    {"extra": {"deliveries": 5}},
    {"extra": {"seats": 5}},
    {"extra": {"seats": {"holders": 3}}},
    {"extra": {"seats": {"holders": {"api": 7}}}},
    {"extra": {"commands_offset": "12"}},
    {"extra": {"consent_asked": "yes"}},
    {"extra": 4},
    {"terminals": []},
    {"terminals": {"default:%3": {**GOOD_TERMINAL, "restarts": 5}}},
    {"terminals": {"default:%3": {**GOOD_TERMINAL, "health": "sleepy"}}},
    {"terminals": {"default:%3": {**GOOD_TERMINAL, "incident": {"number": 1}}}},
    {"terminals": {"default:%3": {**GOOD_TERMINAL, "generation": True}}},
    {"paused": "no"},
])
def test_a_state_file_of_the_wrong_shape_is_kept_aside(tmp_path: Path,
                                                        body: dict[str, object]) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"version": 1, **body}))
    loaded = state_store.load(path)
    assert loaded.snapshot == state_store.Snapshot()
    assert loaded.problem and "kept it as state.json.corrupt-" in loaded.problem
    assert "\n" not in loaded.problem
    [aside] = [p for p in tmp_path.iterdir() if p.name.startswith("state.json.corrupt-")]
    assert json.loads(aside.read_text()) == {"version": 1, **body}


@pytest.mark.parametrize(("fields", "record"), [
    (schema.TERMINAL_FIELDS, TerminalState), (schema.INCIDENT_FIELDS, Incident),
    (schema.DELIVERY_FIELDS, Delivery), (schema.LEDGER_ROW_FIELDS, Decision),
])
def test_every_field_of_a_persisted_record_has_a_check(fields: Mapping[str, object],
                                                       record: type) -> None:
    marker = {"kind"} if record is Decision else set()   # a ledger row's "kind": "decision"
    assert set(fields) - marker == {f.name for f in dataclasses.fields(record)}


def test_a_bad_delivery_is_dropped_alone_with_one_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "state.json"
    good = {"id": "a1", "terminal": "default:%3", "text": "hi", "created_at": 1.0,
            "status": "pending"}
    path.write_text(json.dumps({"paused": True, "terminals": {"default:%3": GOOD_TERMINAL},
                                "extra": {"deliveries": [good, {"id": 3}, 7],
                                          "seats": {"holders": {"api": "codex"}},
                                          "commands_offset": 12, "later": [1]}}))
    with caplog.at_level("WARNING"):
        loaded = state_store.load(path)
    assert loaded.problem is None and loaded.snapshot.paused
    assert loaded.snapshot.extra == {"deliveries": [good], "commands_offset": 12,
                                     "seats": {"holders": {"api": "codex"}}, "later": [1]}
    [warning] = [r.getMessage() for r in caplog.records]
    assert warning.startswith("state.json: dropped 2 queued message(s) that do not read back")
    assert path.exists()


def test_a_second_supervisor_is_told_who_holds_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "supervisor.lock"
    repo = str(Path(__file__).resolve().parent.parent)
    code = (
        f"import sys, time; sys.path.insert(0, {repo!r})\n"
        "from pathlib import Path\nfrom pitcrew.supervisor.store.lock import SupervisorLock\n"
        f"lock = SupervisorLock(Path({str(path)!r}))\n"
        "assert lock.acquire('pitcrew watch') is None\n"
        "print('held', flush=True); time.sleep(60)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        other = SupervisorLock(path).acquire("pitcrew tray")
        assert other is not None and other.pid == holder.pid
        assert f"pid {holder.pid} (pitcrew watch, since " in other.describe()
        holder.kill()      # kill -9: the kernel drops the lock
        holder.wait()
        again = SupervisorLock(path)
        assert again.acquire("pitcrew watch") is None
        again.release()
    finally:
        if holder.poll() is None:
            holder.kill()


def test_config_edits_keep_the_users_comments(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("# mine\n[autopilot]\nenabled = false  # keep me\n\n"
                    "[watch]\npoll_interval = 1.5\n")
    config_edit.set_value(path, "autopilot", "enabled", True)
    config_edit.set_value(path, "autopilot", "quiet_after", 300)
    config_edit.set_value(path, "tmux", "socket", "work")
    text = path.read_text()
    assert text.startswith("# mine\n[autopilot]\nenabled = true  # keep me\nquiet_after = 300\n")
    data = tomllib.loads(text)
    assert data == {"autopilot": {"enabled": True, "quiet_after": 300},
                    "watch": {"poll_interval": 1.5}, "tmux": {"socket": "work"}}
    assert load_config(path).config.autopilot is True


def test_a_fresh_config_starts_from_the_commented_defaults(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    config_edit.set_value(path, "autopilot", "enabled", True)
    text = path.read_text()
    assert "# Autopilot (failed tasks)" in text and "enabled = true" in text
    assert load_config(path).errors == ()
    assert os.stat(path).st_size > 0


def test_a_section_that_is_not_a_table_is_reported_once(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("autopilot = 5\n[diagnosis]\nmode = 'ai'\n")
    assert load_config(path).errors == ("config.toml: autopilot: expected a table; using defaults",)


@pytest.mark.parametrize("text", ["this is = = not toml\n", "[autopilot]\nenabled = \n",
                                  "autopilot = 5\n", "autopilot.enabled = false\n"])
def test_config_edits_never_write_into_a_file_that_does_not_parse(tmp_path: Path,
                                                                 text: str) -> None:
    (tmp_path / "edit").mkdir()
    path = tmp_path / "edit" / "config.toml"
    path.write_text(text)
    with pytest.raises(config_edit.UneditableConfig) as err:
        config_edit.set_value(path, "autopilot", "enabled", True)
    assert str(err.value).startswith("config.toml: ")
    assert path.read_text() == text
    assert [p.name for p in path.parent.iterdir()] == ["config.toml"]


def test_timeouts_layer_global_provider_and_seat_and_quiet_after_still_works(
        tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[autopilot]\nquiet_after = 120\n")
    assert load_config(path).config.timeouts_for("claude").idle == 120.0   # the old name
    path.write_text(
        "[autopilot]\nquiet_after = 120\n[timeouts]\nidle = 600\nsoft = 900\nhard = false\n"
        "[timeouts.claude]\nhard = 3600\n[loops]\ncycles = 4\n"
        "[[seats]]\nname = 'api'\ncwd = '/w'\nprimary = 'claude'\n"
        "timeouts = { soft = 300, wrap_up = true }\n")
    loaded = load_config(path)
    assert loaded.errors == ()
    c = loaded.config
    codex, claude = c.timeouts_for("codex"), c.timeouts_for("claude")
    seat = c.timeouts_for("claude", c.seats[0])
    assert (codex.idle, codex.soft, codex.hard, codex.not_started) == (600.0, 900.0, None, 300.0)
    assert (claude.soft, claude.hard) == (900.0, 3600.0)
    assert (seat.soft, seat.hard, seat.wrap_up) == (300.0, 3600.0, True)
    rule = c.loop_rule()
    assert rule is not None and (rule.window, rule.min_cycles) == (12, 4)


def test_a_bad_timeout_is_one_line_and_keeps_its_default(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[timeouts]\nsoft = 'soon'\nhard = 5\n[loops]\nenabled = 'yes'\n")
    loaded = load_config(path)
    assert loaded.errors == (
        "config.toml: loops.enabled: expected true or false, got 'yes'; using the default",
        "config.toml: timeouts.soft: expected 10 to 604800 seconds, or false (off), got 'soon'; "
        "using the default",
        "config.toml: timeouts.hard: expected 10 to 604800 seconds, or false (off), got 5; "
        "using the default")
    assert loaded.config.timeouts_for("x").soft == 1200.0
    assert loaded.config.loop_rule() is not None


def test_the_restore_setting_defaults_to_ask_and_a_bad_value_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    assert load_config(path).config.restore == "ask"
    path.write_text('[watch]\nrestore = "auto"\n')
    assert load_config(path).config.restore == "auto"
    path.write_text('[watch]\nrestore = "always"\n')
    loaded = load_config(path)
    assert loaded.config.restore == "ask"
    assert loaded.errors == ('config.toml: watch.restore: expected "ask", "auto" or "off", '
                             "got 'always'; using the default",)
