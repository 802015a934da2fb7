"""`pitcrew report` as a user runs it, on a small real history (tests/support/
report_scenario.py): the ledger across its rotated file, state.json, Claude Code and Codex
session files; and the HTML file rendered by a real browser (headless Chromium), which must
load nothing from outside."""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from tests.support import report_scenario
from tests.support.report_scenario import HOSTILE, SPIKE_TOKENS, Scenario

REPO = Path(__file__).resolve().parent.parent.parent
SCREENSHOT = REPO / "docs" / "incident-report.png"


def pitcrew(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}
    for key in ("DISPLAY", "CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        env.pop(key, None)
    return subprocess.run([sys.executable, "-m", "pitcrew.supervisor", *args],
                          capture_output=True, text=True, env=env, timeout=60)


@pytest.fixture
def scenario(pitcrew_home: Path, tmp_path: Path) -> Scenario:
    home = tmp_path / "home"
    home.mkdir()
    return report_scenario.write(pitcrew_home, home)


def test_report_json_reads_the_rotated_ledger_state_and_session_files(
        scenario: Scenario, pitcrew_home: Path) -> None:
    assert (pitcrew_home / "autopilot-ledger.1.jsonl.gz").exists()    # it did rotate
    out = pitcrew("report", "--json", home=scenario.home)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["skipped_rows"] == 2                     # the foreign line and the torn one
    claude, codex = data["terminals"]
    assert (claude["terminal"], claude["agent"]) == ("work:%3", "Claude Code")
    numbers = [i["number"] for i in claude["incidents"]]
    assert numbers == [1, 2, 3, 4, 5, 6]                 # 1 and 2 live in the rotated file
    held = claude["incidents"][-1]
    assert held["outcome"] == "Held"                      # a badge this version does not know
    answers = claude["incidents"][3]["diagnoses"][0]["answers"]
    assert [(a["checker"], a["outcome"], a["seconds"]) for a in answers] == [
        ("claude", "timeout", 60.0), ("codex", "answered", 8.2)]
    assert sum(h["restarts"] for h in claude["restarts_per_hour"]) == 5
    # 36 calls, each counted once though Claude repeats its usage per content block
    assert claude["tokens"]["calls"] == 36
    assert claude["tokens"]["total"] == 35 * 20_400 + SPIKE_TOKENS + 19_600
    windows = claude["tokens_per_10_min"]
    assert max(w["tokens"] for w in windows) == SPIKE_TOKENS + 19_600
    assert len(claude["token_spikes"]) == 1
    assert codex["tokens"] == {"input": 30_000, "output": 1_500, "cached": 18_000,
                               "total": 31_500, "cost_usd": None, "calls": 3}
    kinds = {(a["kind"], a["severity"]) for a in data["anomalies"]}
    assert kinds == {("crash_loop", "critical"), ("resume_not_started", "critical"),
                     ("repeated_limit", "warning"), ("timeout", "warning"),
                     ("token_spike", "warning")}


def test_report_for_one_terminal_and_one_incident(scenario: Scenario) -> None:
    data = json.loads(pitcrew("report", "%3", "--incident", "3", "--json",
                              home=scenario.home).stdout)
    [t] = data["terminals"]
    assert [i["number"] for i in t["incidents"]] == [3]
    assert [r["badge"] for r in t["incidents"][0]["rows"]] == [
        "Scheduled", "Resumed", "Scheduled", "Couldn't resume"]
    text = pitcrew("report", "work:%5", home=scenario.home).stdout
    assert "work:%5  Codex CLI" in text and "work:%3" not in text


@pytest.mark.parametrize(("args", "message"), [
    (("--since", "soon"), "pitcrew: --since: expected a time span like 24h, 90m or 7d, "
                          "got 'soon'"),
    (("nosuch",), "pitcrew: no terminal 'nosuch' in the ledger or state (see `pitcrew "
                  "status` for names)"),
    (("--incident", "99"), "pitcrew: no incident 99 in the ledger"),
])
def test_bad_report_arguments_are_one_line(scenario: Scenario, args: tuple[str, ...],
                                           message: str) -> None:
    out = pitcrew("report", *args, home=scenario.home)
    assert (out.returncode, out.stdout, out.stderr.strip()) == (2, "", message)


def test_an_empty_ledger_is_a_report_of_nothing(tmp_path: Path) -> None:
    out = pitcrew("report", home=tmp_path)
    assert out.returncode == 0
    assert "No Autopilot decisions in this window." in out.stdout


# -- the HTML in a real browser ------------------------------------------------------------

# Chromium's own background calls (component updates, sign-in, network time), which no flag
# fully silences; they are not the page's. Any other host — a font, an image, a script — is.
BROWSER_OWN = re.compile(r"^(?:https?://)?(?:update\.googleapis\.com|accounts\.google\.com|"
                         r"clients2\.google\.com)(?::\d+)?(?:/|$)")


class _Recorder(http.server.BaseHTTPRequestHandler):
    """A proxy that refuses everything and remembers what the browser asked for."""

    seen: ClassVar[list[str]] = []

    def _refuse(self) -> None:
        if not BROWSER_OWN.match(self.path):
            self.seen.append(f"{self.command} {self.path}")
        self.send_error(403)

    do_GET = do_POST = do_HEAD = do_CONNECT = _refuse

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def proxy() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []
    handler = type("Recorder", (_Recorder,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("PITCREW_TEST_REQUIRE_DESKTOP") == "1":
            pytest.fail("chromium is not installed (scripts/test.sh installs it)")
        pytest.skip("chromium is not installed")
    return found


def _browse(page: Path, proxy: str, profile: Path, *args: str) -> str:
    out = subprocess.run(
        [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-default-apps", "--no-pings",
         "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,Translate",
         f"--user-data-dir={profile}",
         f"--proxy-server=http://{proxy}", "--proxy-bypass-list=<-loopback>",
         "--virtual-time-budget=3000", *args, page.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


_EXTERNAL = re.compile(r"""(?:src|href|action|srcset|poster|data)\s*=\s*["']?\s*(?:https?:)?//""",
                       re.I)


def test_the_html_report_renders_in_chromium_and_loads_nothing_from_outside(
        scenario: Scenario, tmp_path: Path, proxy: tuple[str, list[str]]) -> None:
    address, seen = proxy
    page = tmp_path / "report.html"
    out = pitcrew("report", "--html", str(page), home=scenario.home)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"Wrote {page} (2 terminals, 7 incidents, 5 anomalies)")
    html = page.read_text()
    assert ('<meta http-equiv="Content-Security-Policy" content="default-src &#x27;none&#x27;; '
            'style-src &#x27;unsafe-inline&#x27;; img-src data:">') in html
    assert not _EXTERNAL.search(html)
    assert "<script" not in html and "<img" not in html and "<link" not in html
    assert html.count(HOSTILE.replace("<", "&lt;").replace(">", "&gt;")
                      .replace('"', "&quot;")) >= 2   # the prompt and the evidence, as text

    # A control page proves the proxy would see a fetch: the report's silence means something.
    control = tmp_path / "control.html"
    control.write_text('<html><body><img src="http://report-probe.invalid/x.png"></body></html>')
    _browse(control, address, tmp_path / "profile-control", "--dump-dom")
    assert any("report-probe.invalid" in s for s in seen), seen

    seen.clear()
    dom = _browse(page, address, tmp_path / "profile", "--dump-dom")
    assert seen == []
    assert dom.count('<svg class="timeline"') == 2
    assert dom.count('<svg class="restarts-chart"') == 2
    assert "Pitcrew incident report" in dom and "crash loop" in dom
    assert "<script>alert(1)</script>" not in dom      # hostile text stayed text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom

    shot = tmp_path / "report.png"
    _browse(page, address, tmp_path / "profile-shot", f"--screenshot={shot}",
            "--window-size=1100,2200", "--hide-scrollbars")
    assert seen == []
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000
    if os.environ.get("PITCREW_UPDATE_SCREENSHOT") == "1":   # refreshes the one in docs/
        shutil.copyfile(shot, SCREENSHOT)
