"""Building the UI's `View` from the running supervisor, on the supervisor's thread.

Cheap enough to run a few times a second: the ledger is re-read only when it grew, and which
checker CLIs are installed is looked up at most every INSTALLED_EVERY seconds. The
supervisor is seen through `ViewSource`, the few things a view is made of.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from typing import Protocol

from pitcrew.supervisor.adapters.checker_cli import CANDIDATES, installed
from pitcrew.supervisor.adapters.clock import local_zone
from pitcrew.supervisor.adapters.usage import UsageReader
from pitcrew.supervisor.api.view import (
    CheckerView,
    DecisionView,
    HostView,
    Limits,
    SettingsView,
    TerminalView,
    View,
    recent_decisions,
)
from pitcrew.supervisor.core.attention import assess, waited
from pitcrew.supervisor.core.health import Health
from pitcrew.supervisor.core.policy import RestartPolicy
from pitcrew.supervisor.core.records import Incident, Phase
from pitcrew.supervisor.core.timeouts import duration
from pitcrew.supervisor.core.usage import TokenTotals, totals
from pitcrew.supervisor.service.app_context import AppContext
from pitcrew.supervisor.service.autopilot import AutopilotService
from pitcrew.supervisor.service.needs_you import signals
from pitcrew.supervisor.service.ports import Clock
from pitcrew.supervisor.service.seats import SeatBook
from pitcrew.supervisor.service.settings import Settings
from pitcrew.supervisor.service.statebook import StateBook
from pitcrew.supervisor.service.watched import Watched
from pitcrew.supervisor.store.ledger import Ledger

ACTIVITY = 30
DEFAULT_LIMITS = Limits()
INSTALLED_EVERY = 10.0
TOKENS_EVERY = 15.0      # a terminal's session file is re-read for its tokens at most this often
# Suggestions for the model picker; any other model can be typed in.
KNOWN_MODELS: dict[str, tuple[str, ...]] = {
    "claude": ("opus", "sonnet", "haiku"),
    "codex": ("gpt-5", "gpt-5-codex", "gpt-5-mini"),
    "gemini": ("gemini-2.5-pro", "gemini-2.5-flash"),
    "opencode": ("anthropic/claude-sonnet-4-5", "openai/gpt-5"),
    "qwen": ("qwen3-coder-plus", "qwen3-coder-flash"),
    "kimi": ("kimi-k2",),
    "grok": ("grok-4", "grok-code-fast-1"),
    "hermes": (),
}


HOLDS = {
    "user": "it asked you something", "login": "log in", "unclear": "see the screen",
    "paused": "Autopilot is paused", "hourly_cap": "{hourly_cap} resumes this hour",
    "backup": "no backup could take over", "cannot_resume": "the session cannot be resumed",
    "shell_busy": "the shell is busy with another program",
    "hard_timeout": "it ran past the hard time limit",
    "looping": "it kept repeating the same steps",
}


class ViewSource(Protocol):
    """What a view is made of (the running `Supervisor` is one)."""

    @property
    def server(self) -> str: ...
    @property
    def watched(self) -> Mapping[str, Watched]: ...
    @property
    def ledger(self) -> Ledger: ...
    @property
    def app(self) -> AppContext: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def book(self) -> StateBook: ...
    @property
    def autopilot(self) -> AutopilotService: ...
    @property
    def seats(self) -> SeatBook: ...
    @property
    def policy(self) -> RestartPolicy: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def view_cache(self) -> ViewCache: ...


class ViewCache:
    """What building a view may reuse between calls."""

    def __init__(self) -> None:
        self.ledger_size = -1
        self.rows: tuple[DecisionView, ...] = ()
        self.decisions: tuple[DecisionView, ...] = ()
        self.installed: dict[str, bool] = {}
        self.installed_at = -1e9
        self.usage = UsageReader()
        self.tokens: dict[str, tuple[float, str]] = {}   # key → (read at, text)


def build_view(sup: ViewSource) -> View:
    cache = sup.view_cache
    _refresh_ledger(sup, cache)
    installed = _installed(sup, cache)
    config = sup.settings.current()
    policy = sup.policy
    limits = Limits(policy.max_attempts, policy.hourly_cap, policy.backoff)
    names = {p.name: p.display_name for p in sup.app.registry.providers.values()}
    chosen = tuple(CheckerView(c.provider, c.model, installed.get(c.provider, False),
                               names.get(c.provider, c.provider)) for c in config.checkers)
    now = sup.clock.wall()
    return View(
        server=sup.server,
        mode=sup.autopilot.mode().value,
        off_for_launch=sup.autopilot.off_for_launch,
        status_line=sup.autopilot.status_line(),
        consent=sup.book.consent,
        consent_asked=sup.book.consent_asked,
        terminals=tuple(_terminal(sup, w, now, limits, _tokens(sup, w, cache),
                                  host_of(sup, w.key))
                        for w in sorted(sup.watched.values(), key=lambda w: (
                            host_of(sup, w.key) != "local", host_of(sup, w.key), w.key))),
        decisions=cache.decisions,
        activity=cache.rows,
        settings=SettingsView(config.autopilot, config.ask_to_continue, config.diagnosis,
                              config.diagnosis_mode, chosen),
        candidates=tuple(CheckerView(n, None, installed.get(n, False), names.get(n, n))
                         for n in CANDIDATES),
        models=KNOWN_MODELS,
        problems=sup.settings.problems,
        at=now,
        limits=limits,
        hosts=_hosts(sup),
    )


def host_of(sup: ViewSource, key: str) -> str:
    """The host a terminal runs on (`local` unless the loop watches remote hosts)."""
    hosts = getattr(sup, "hosts", None)
    remote = hosts.host_of(key) if hosts is not None else None
    return remote.host.name if remote is not None else "local"


def _hosts(sup: ViewSource) -> tuple[HostView, ...]:
    hosts = getattr(sup, "hosts", None)
    if hosts is None:
        return ()
    return tuple(HostView(name, r.link.state, r.link.problem)
                 for name, r in sorted(hosts.remotes.items()))


def _terminal(sup: ViewSource, w: Watched, now: float, limits: Limits,
              tokens: str = "", host: str = "local") -> TerminalView:
    pane = w.state.terminal
    dead = w.agent_pid is None and bool(w.timeline) and w.timeline[-1][1] == "exited"
    state = "exited" if dead else (w.screen.state.value if w.screen else "unknown")
    if state == "busy" and w.state.health is Health.LOOPING:
        state = "looping"    # working, but repeating the same steps
    seat = sup.seats.seat_of(w.key)
    inc = w.state.incident
    needs_you = getattr(sup, "needs_you", None)
    attn = needs_you.of(w.key) if needs_you is not None else None
    if attn is None:     # not assessed yet (a first view): the rule without history
        attn = assess(None, signals(w, None), now)
    return TerminalView(
        key=w.key, target=pane, provider=w.provider.name, agent=w.provider.display_name,
        project=w.cwd, state=state, session_id=w.state.session_id,
        last_activity=w.last_output_wall or None, timeline=tuple(w.timeline),
        task=w.state.task, seat=seat.name if seat else None, note=_note(w, now, limits),
        waiting_on_you=inc is not None and inc.phase in (Phase.HOLD, Phase.STOPPED),
        tokens=tokens, host=host, attention=attn.attention.value, since=attn.since,
        why=attn.why, waiting=waited(attn.since, now))


def _tokens(sup: ViewSource, w: Watched, cache: ViewCache) -> str:
    """The tokens of the terminal's session, as its row shows them (re-read at most every
    TOKENS_EVERY seconds; the reader parses only what the file gained)."""
    mono = sup.clock.mono()
    seen = cache.tokens.get(w.key)
    if seen is not None and mono - seen[0] < TOKENS_EVERY:
        return seen[1]
    steps = cache.usage.for_session(w.provider, w.state.session_id, w.cwd)
    text = tokens_text(totals(steps)) if steps else ""
    cache.tokens[w.key] = (mono, text)
    return text


def tokens_text(t: TokenTotals) -> str:
    """"1.6M tokens · $0.42" (the cost only where the CLI records one)."""
    n = t.tokens
    amount = f"{n / 1e6:.1f}M" if n >= 1e6 else (f"{n / 1e3:.0f}k" if n >= 1e3 else str(n))
    return f"{amount} tokens" + (f" · ${t.cost:,.2f}" if t.cost is not None else "")


def _note(w: Watched, now: float, limits: Limits) -> str:
    return incident_note(w.state.incident, now, limits)


def incident_note(inc: Incident | None, now: float, limits: Limits = DEFAULT_LIMITS) -> str:
    """What Autopilot is doing about an incident, in one line (the dashboard's row note and
    `pitcrew autopilot status`)."""
    if inc is None:
        return ""
    if inc.phase is Phase.WAITING and inc.next_at is not None:
        wait = duration(max(0.0, inc.next_at - now))
        if inc.hold == "rate_limit":
            return f"Usage limit: Autopilot resumes in {wait} (at {_clock(inc.next_at)})"
        return (f"Autopilot acts in {wait} "
                f"(attempt {inc.attempts + 1} of {limits.max_attempts})")
    if inc.phase is Phase.CONFIRMING:
        return "Autopilot is resuming the session"
    if inc.phase is Phase.ASKING:
        return "Autopilot will ask it to continue"
    if inc.phase is Phase.HOLD:
        hold = HOLDS.get(inc.hold or "", "see the screen")
        return "Waiting on you: " + hold.format(hourly_cap=limits.hourly_cap)
    if inc.phase is Phase.STOPPED:
        return "Autopilot stopped retrying; waiting on you"
    return ""


def _clock(at: float) -> str:
    return dt.datetime.fromtimestamp(at, local_zone()).strftime("%H:%M")


def _refresh_ledger(sup: ViewSource, cache: ViewCache) -> None:
    try:
        size = os.stat(sup.ledger.path).st_size
    except OSError:
        size = 0
    if size == cache.ledger_size:
        return
    cache.ledger_size = size
    rows = sup.ledger.tail(max(ACTIVITY, 200))
    cache.rows = tuple(DecisionView.of(d) for d in rows[:ACTIVITY])
    cache.decisions = recent_decisions(rows)


def _installed(sup: ViewSource, cache: ViewCache) -> dict[str, bool]:
    mono = sup.clock.mono()
    if mono - cache.installed_at < INSTALLED_EVERY:
        return cache.installed
    cache.installed_at = mono
    cache.installed = {name: installed(sup.app.registry, name) for name in CANDIDATES}
    return cache.installed
