"""The `pitcrew` command as a user runs it: a real process, real files, a real tmux server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pitcrew.supervisor import __version__
from tests.support.proc import Running
from tests.support.tmux_server import TmuxServer
from tests.support.waiting import wait_until

LIMIT_SCREEN = """\
> refactor the parser
  ⎿  Claude AI usage limit reached|1764522000

╭──────────────────────────────────────────╮
│ >                                        │
╰──────────────────────────────────────────╯
"""


def pitcrew(*args: str, stdin: str | None = None, env: dict[str, str] | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    full_env.pop("DISPLAY", None)
    return subprocess.run([sys.executable, "-m", "pitcrew.supervisor", *args], input=stdin,
                          capture_output=True, text=True, env=full_env, timeout=timeout)


def test_version_comes_from_the_package_metadata() -> None:
    out = pitcrew("--version")
    assert out.returncode == 0
    assert out.stdout.strip() == f"pitcrew {__version__}"
    assert __version__ != "0.0.0+source"


def test_classify_json_from_stdin() -> None:
    out = pitcrew("classify", "-", "--provider", "claude", "--json", stdin=LIMIT_SCREEN)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["state"] == "rate_limit"
    assert data["reset_at"] == "2025-11-30T17:00:00+00:00"
    assert data["retry_after"] is None
    assert "usage limit reached" in data["evidence"]


def test_classify_a_file_in_plain_words(tmp_path: Path) -> None:
    screen = tmp_path / "screen.txt"
    screen.write_text("✻ Working… (3s · esc to interrupt)\n> \n")
    out = pitcrew("classify", str(screen), "--provider", "claude")
    assert out.returncode == 0
    assert out.stdout.splitlines()[0] == "busy"


def test_classify_reads_relative_reset_times_from_the_given_moment() -> None:
    out = pitcrew("classify", "--json", "--now", "2026-11-30T14:00:00+00:00", "--tz", "UTC",
                  stdin="■ You've hit your usage limit. try again in 4 days 6 hours.\n")
    assert json.loads(out.stdout)["reset_at"] == "2026-12-04T20:00:00+00:00"


def test_classify_explain_shows_which_rule_fired_on_which_line() -> None:
    out = pitcrew("classify", "-", "--provider", "claude", "--explain", stdin=LIMIT_SCREEN)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("state: rate_limit\n")
    assert "   2  rate_limit" in out.stdout          # row 2 is the limit line
    assert out.stdout.index("won (row") < out.stdout.index("   2  rate_limit")
    assert "steps:" in out.stdout
    data = json.loads(pitcrew("classify", "-", "--provider", "claude", "--explain", "--json",
                              stdin=LIMIT_SCREEN).stdout)
    assert data["state"] == "rate_limit"
    assert {"row": 2, "state": "rate_limit", "won": True}.items() <= data["fired"][0].items()
    assert data["decided_row"] == 2


def test_classify_takes_the_cursor_to_tell_typing_from_a_hint() -> None:
    screen = "──────────────\n❯ Try \"fix lint errors\" please\n──────────────\n"
    typed = pitcrew("classify", "-", "--provider", "claude", "--cursor", "30,1", stdin=screen)
    hint = pitcrew("classify", "-", "--provider", "claude", "--cursor", "2,1", stdin=screen)
    assert typed.stdout.splitlines()[0] == "draft"
    assert hint.stdout.splitlines()[0] == "idle"
    bad = pitcrew("classify", "-", "--cursor", "x", stdin=screen)
    assert bad.returncode == 2 and "--cursor" in bad.stderr


def test_classify_unknown_provider_is_one_clear_line() -> None:
    out = pitcrew("classify", "-", "--provider", "nosuch", stdin="x")
    assert out.returncode == 2
    assert out.stderr == "pitcrew: unknown provider 'nosuch' (see `pitcrew providers`)\n"


def test_classify_missing_file_is_one_clear_line() -> None:
    out = pitcrew("classify", "/no/such/screen.txt")
    assert out.returncode == 2
    assert out.stderr.startswith("pitcrew: cannot read /no/such/screen.txt:")
    assert "Traceback" not in out.stderr


def test_providers_json_lists_every_cli_and_what_it_supports() -> None:
    out = pitcrew("providers", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    by_name = {p["name"]: p for p in data["providers"]}
    claude = by_name["claude"]
    assert claude["resume"]["by_id"] == ["claude", "--resume", "{session_id}", "{model_args}"]
    assert claude["supports"]["resume_latest"] is True
    assert isinstance(claude["installed"], bool)
    assert data["errors"] == []


def test_a_corrupt_provider_file_is_named_and_the_rest_still_work(pitcrew_home: Path) -> None:
    (pitcrew_home / "providers").mkdir()
    (pitcrew_home / "providers" / "codex.toml").write_text(
        '[resume]\nby_id = ["codex", "resume", "{sesion_id}"]\n')
    out = pitcrew("providers")
    assert out.returncode == 0
    assert out.stderr.splitlines() == [
        "pitcrew: providers/codex.toml: resume.by_id: unknown placeholder {sesion_id} "
        "(allowed: {model_args}, {session_id}) (using the shipped definition)"
    ]
    assert "claude" in out.stdout and "codex" in out.stdout


def test_a_bad_screen_pattern_is_one_line_on_every_run(pitcrew_home: Path) -> None:
    """The second run reads the known patterns from the cache folder: the bad one is not
    among them, so it is named again, never a traceback when a screen is first read."""
    (pitcrew_home / "providers").mkdir()
    (pitcrew_home / "providers" / "codex.toml").write_text(
        "[screen.markers]\nbusy = ['(unclosed']\n")
    for _ in range(2):
        out = pitcrew("status")
        assert out.returncode == 0
        assert out.stderr.splitlines() == [
            "pitcrew: providers/codex.toml: screen.markers.busy: bad regex '(unclosed': "
            "missing ), unterminated subpattern at position 0 (using the shipped definition)"]
    assert list((pitcrew_home / "cache").glob("known-patterns-*.json"))


def test_a_corrupt_config_is_named_and_pitcrew_runs_on_defaults(pitcrew_home: Path) -> None:
    (pitcrew_home / "config.toml").write_text("[watch]\npoll_interval = 'soon'\n")
    out = pitcrew("status")
    assert out.returncode == 0
    assert out.stderr == (
        "pitcrew: config.toml: watch.poll_interval: expected a number of seconds, "
        "got 'soon'; using the default\n"
    )
    (pitcrew_home / "config.toml").write_text("this is = = not toml")
    out = pitcrew("status")
    assert out.returncode == 0
    assert out.stderr.startswith("pitcrew: config.toml: not valid TOML")
    assert len(out.stderr.splitlines()) == 1


def test_status_without_a_tmux_server_says_so() -> None:
    out = pitcrew("--tmux-socket", "pitcrew-test-absent", "status", "--json")
    assert out.returncode == 0
    assert json.loads(out.stdout) == {"server": "pitcrew-test-absent", "server_running": False,
                                      "terminals": []}


def test_status_json_lists_the_agent_with_pid_cwd_session_and_state(
    tmux: TmuxServer, tmp_path: Path, fake_provider_installed: Path
) -> None:
    work = tmp_path / "my project"
    work.mkdir()
    busy = tmux.start("fakeagent", cwd=work)
    tmux.wait_for_text(busy, "fake>")
    tmux.type(busy, "work 30")
    tmux.wait_for_text(busy, "esc to interrupt")
    crashed = tmux.start('fakeagent --start "crash 3 0"', cwd=work)
    wait_until(lambda: tmux.pane(crashed).dead_status == 3)
    tmux.start("exec sleep 300")  # not an agent: not listed
    out = pitcrew("--tmux-socket", tmux.name, "status", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    rows = {t["pane"]: t for t in data["terminals"]}
    assert set(rows) == {busy, crashed}
    row = rows[busy]
    assert row["provider"] == "fakeagent"
    assert row["cwd"] == str(work)
    assert row["screen"]["state"] == "busy"
    assert row["agent_pid"] and not row["dead"]
    session_files = list(tmux.fake_home.rglob("*.jsonl"))
    assert row["session_id"] in {f.stem for f in session_files}
    assert rows[crashed]["dead"] and rows[crashed]["dead_status"] == 3
    assert rows[crashed]["agent_pid"] is None
    assert rows[crashed]["screen"]["state"] == "crashed"  # its last screen, scrolled up by tmux
    assert rows[crashed]["screen"]["evidence"] == "fatal: simulated crash (exit 3)"
    human = pitcrew("--tmux-socket", tmux.name, "status")
    assert "exited (3)" in human.stdout and "busy" in human.stdout


def test_without_a_display_pitcrew_explains_and_watches(
    tmux: TmuxServer, fake_provider_installed: Path, pitcrew_home: Path
) -> None:
    (pitcrew_home / "config.toml").write_text("[watch]\npoll_interval = 0.5\n")
    pane = tmux.start("fakeagent")
    tmux.wait_for_text(pane, "fake>")
    watch = Running([], env={"PITCREW_TMUX_SOCKET": tmux.name})
    try:
        watch.wait_for("running headless as `pitcrew watch`")
        watch.wait_for(f"{pane}: idle")
        tmux.type(pane, "work 3")
        watch.wait_for(": busy (was ")  # from idle, or from draft if seen before Enter
        watch.wait_for(": idle (was busy)")
    finally:
        code = watch.stop()
    assert code == 0
    assert watch.saw("stopped watching")


def test_doctor_reports_each_check(pitcrew_home: Path) -> None:
    out = pitcrew("doctor", "--json")
    checks = {c["name"]: c for c in json.loads(out.stdout)}
    assert checks["tmux"]["level"] == "ok"
    assert checks["data folder"]["detail"] == str(pitcrew_home)
    assert checks["display"]["level"] == "warn"
    assert out.returncode == 0


@pytest.mark.parametrize("args", [["status"], ["providers"], ["classify", "-"]])
def test_no_command_ever_prints_a_traceback(args: list[str]) -> None:
    out = pitcrew(*args, stdin="\x00\xff" * 100)
    assert "Traceback" not in out.stderr


def test_a_state_file_of_the_wrong_shape_is_set_aside_and_pitcrew_starts(
        pitcrew_home: Path) -> None:
    (pitcrew_home / "state.json").write_text('{"extra": {"seats": 5, "deliveries": 3}}')
    out = pitcrew("seat", "list")
    assert out.returncode == 0, out.stderr
    assert "internal error" not in out.stderr
    assert not (pitcrew_home / "state.json").exists()
    [aside] = pitcrew_home.glob("state.json.corrupt-*")
    assert aside.read_text() == '{"extra": {"seats": 5, "deliveries": 3}}'


def test_providers_and_diagnosis_checkers_agree_on_who_can_check(pitcrew_home: Path) -> None:
    from pitcrew.supervisor.store.config import check_setting

    listed = json.loads(pitcrew("providers", "--json").stdout)["providers"]
    for p in listed:
        try:
            check_setting("diagnosis", "checkers", [p["name"]])
            accepted = True
        except ValueError:
            accepted = False
        assert accepted == p["supports"]["checker"], p["name"]
    table = {line.split()[0]: line.split()[-3:] for line in pitcrew("providers").stdout
             .splitlines()[1:]}
    assert table["aider"][0] == "-" and table["copilot"][0] == "-"
    out = pitcrew("diagnosis", "checkers", "aider")
    assert out.returncode == 2 and "'aider' cannot be a checker" in out.stderr


@pytest.mark.parametrize("entry", ["pitcrew tray", "pitcrew-tray"])
def test_the_tray_without_a_display_is_one_clear_line(entry: str) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    argv = ([sys.executable, "-m", "pitcrew.supervisor", "tray"] if entry == "pitcrew tray"
            else [str(Path(sys.executable).parent / "pitcrew-tray")])
    out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 2
    assert out.stderr == ("pitcrew: the tray app needs a display (DISPLAY and WAYLAND_DISPLAY "
                          "are unset); run `pitcrew watch` to supervise without one\n")
    assert out.stdout == ""
