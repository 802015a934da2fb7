"""The one effects executor: carries out every action the core decides, and every step of a
delivery, against the world (tmux, the ledger, the notification gate, the scheduler).

Before typing anything, the screen is read once more: if the input box is not empty, or a
question or picker is up, nothing is typed and the decision is recorded as skipped. Nothing
is typed, and no Enter pressed, into a pane in copy mode (or another tmux mode): there each
key is a copy-mode command (`q` leaves it, Enter copies), never text for the agent. Text and
Enter are sent separately, a moment apart (some CLIs take an Enter that arrives with a paste
as a newline): the Enter is a scheduled `PressEnter` event, so the loop never sleeps. Waits
(`Wake`, a delivery's next look) are scheduler jobs that post an event back to the loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from pitcrew.supervisor.adapters.notifier import Message
from pitcrew.supervisor.core.classifier import input_text
from pitcrew.supervisor.core.delivery import Delivery, Do, Step
from pitcrew.supervisor.core.errors import NotTyped, TmuxError
from pitcrew.supervisor.core.records import (
    Action,
    Badge,
    Decision,
    Notify,
    Record,
    Relaunch,
    RelaunchRefused,
    SwitchToBackup,
    TextKind,
    TypeText,
    Wake,
)
from pitcrew.supervisor.core.screen import ScreenState
from pitcrew.supervisor.service.events import DeliveryDue, PressEnter, Report, Rescan, Wakeup
from pitcrew.supervisor.service.ports import (
    Clock,
    LedgerPort,
    NotifyPort,
    Post,
    Scheduler,
    TmuxPort,
)
from pitcrew.supervisor.service.reading import Reader
from pitcrew.supervisor.service.relaunching import Outcome, Relauncher
from pitcrew.supervisor.service.watched import Watched

log = logging.getLogger("pitcrew")

ENTER_GAP = 0.4          # seconds between typed text and its Enter
UNSAFE_TO_TYPE = frozenset({ScreenState.DRAFT, ScreenState.QUESTION, ScreenState.PICKER,
                            ScreenState.LOGIN_REQUIRED})
LOOK_AGAIN = (0.3, 1.0, 2.5, 5.0, 10.0)   # seconds: re-read a pane after starting an agent

FailOver = Callable[[Watched, str], None]
Diagnose = Callable[[Watched, int], None]


class Effects:
    def __init__(self, tmux: TmuxPort, reader: Reader, scheduler: Scheduler, clock: Clock,
                 ledger: LedgerPort, gate: NotifyPort, relauncher: Relauncher,
                 watched: dict[str, Watched], post: Post) -> None:
        self.tmux = tmux
        self.reader = reader
        self.scheduler = scheduler
        self.clock = clock
        self.ledger = ledger
        self.gate = gate
        self.relauncher = relauncher
        self.watched = watched
        self.post = post
        self.pending_enter: dict[str, PressEnter] = {}   # typed, Enter not pressed yet
        self.typed_lines: dict[str, str] = {}            # … and what was typed
        self.persist: Callable[[], bool | None] = lambda: None   # state.json (set by the loop)
        # set by the loop once the partners exist (they need the effects executor too)
        self.fail_over: FailOver = lambda w, reason: None
        self.diagnose: Diagnose = lambda w, failures: None

    # -- the core's actions ------------------------------------------------------------------

    def run(self, w: Watched, action: Action) -> None:
        try:
            match action:
                case TypeText():
                    self.type_text(w, action)
                case Relaunch():
                    self.relaunch(w, action)
                case Wake(at=at):
                    self.scheduler.at(at, Wakeup(w.key), key=f"wake:{w.key}")
                case Notify():
                    self.gate.offer(Message(action.title, action.body, action.key, w.key))
                case Record(decision=decision):
                    self.ledger.append(decision)
                    log.info("%s: %s — %s", w.key, decision.badge.value, decision.reason)
                case SwitchToBackup(reason=reason):
                    self.fail_over(w, reason)
        except (TmuxError, OSError) as exc:
            log.error("%s: could not %s: %s", w.key, type(action).__name__, exc)

    def relaunch(self, w: Watched, action: Relaunch) -> None:
        result = self.relauncher.relaunch(w, action)
        if result.outcome is Outcome.STARTED:
            self.look_again(w.pane_id, tuple(ENTER_GAP + d for d in LOOK_AGAIN))
            return
        log.info("%s: did not relaunch: %s", w.key, result.detail)
        self.post(Report(w.key, RelaunchRefused(result.detail,
                                                busy=result.outcome is Outcome.SHELL_BUSY)))

    def type_text(self, w: Watched, action: TypeText) -> None:
        if (why := self.untypable(w.pane_id)) is not None:
            self.skip(w, f"did not type: {why}")
            return
        reading = self.reader.read(w)
        state = reading.screen.state if reading.screen is not None else ScreenState.UNKNOWN
        busy_ok = action.kind is TextKind.WRAP_UP   # said while it works: CLIs queue it
        if not reading.alive or state in UNSAFE_TO_TYPE or (
                state is ScreenState.BUSY and not busy_ok):
            self.skip(w, f"did not type: the screen shows {state.value}")
            return
        if (box := input_text(reading.text, w.provider.screen)).strip():
            # typed ahead (while it works, too): Pitcrew's text would join it and be sent with it
            self.skip(w, f"did not type the {action.kind.value.replace('_', '-')} message: "
                      f"the input box holds text someone typed ({box.strip()[:40]!r})")
            return
        self.type_line(w, action.text, action.kind.value)
        w.typed_at, w.typed_text = self.clock.mono(), action.text
        w.delivered_at, w.delivered_sig = w.typed_at, w.progress_sig   # the not-started
        # clock: the agent must get busy (or answer) now
        self.persist()      # what Pitcrew typed is its own after a restart too

    def skip(self, w: Watched, reason: str) -> None:
        inc = w.state.incident
        self.ledger.append(Decision(
            Badge.SKIPPED, self.clock.wall(), w.state.terminal, w.state.agent,
            inc.prompt if inc else (w.state.task or ""), w.state.project,
            inc.trigger if inc else "", reason, inc.attempts if inc else 0, {}))
        log.info("%s: %s", w.key, reason)

    # -- typing --------------------------------------------------------------------------------

    def untypable(self, pane_id: str) -> str | None:
        """Why nothing may be typed into `pane_id` now, or None. Asked right before typing:
        a pane in copy mode takes every key as a copy-mode command."""
        pane = self.tmux.pane(pane_id)
        if pane is None:
            return "the pane is gone"
        if pane.in_mode:
            return "the pane is in copy mode (keys would be copy-mode commands)"
        return None

    def type_line(self, w: Watched, text: str, what: str) -> None:
        """Type `text` now and press Enter ENTER_GAP later (a scheduled step).

        The line and its pending Enter are saved (state.json) before the text is sent: a
        Pitcrew killed in between finds its own line in the input box on restart and presses
        that Enter (`finish_typed`) instead of leaving it as a draft nobody may touch."""
        if (why := self.untypable(w.pane_id)) is not None:
            raise NotTyped(why)
        if (earlier := self.pending_enter.get(w.key)) is not None:
            self.press_enter(earlier)      # never leave an earlier line without its Enter
        event = PressEnter(w.key, w.pane_id, what)
        self.pending_enter[w.key] = event
        self.typed_lines[w.key] = text
        self.persist()
        try:
            self.tmux.send_text(w.pane_id, text)
        except TmuxError:
            self.pending_enter.pop(w.key, None)
            self.typed_lines.pop(w.key, None)
            raise
        w.last_read = float("-inf")          # what was read before typing is stale now
        self.scheduler.at(self.clock.wall() + ENTER_GAP, event, key=f"enter:{w.key}")
        log.info("%s: typed %s", w.key, what)

    def typed_json(self) -> dict[str, dict[str, str]]:
        """Lines typed whose Enter is still due, for state.json."""
        return {key: {"pane_id": e.pane_id, "what": e.what, "text": self.typed_lines.get(key, "")}
                for key, e in self.pending_enter.items()}

    def finish_typed(self, saved: object) -> None:
        """After a restart: a line Pitcrew typed before it was killed, Enter not pressed yet,
        gets its Enter if it still sits, unchanged, where the cursor is; otherwise it is
        dropped. Queued messages are left to their own delivery (which knows it typed)."""
        if not isinstance(saved, dict):
            return
        for key, entry in saved.items():
            w = self.watched.get(key) if isinstance(key, str) else None
            if (w is None or not isinstance(entry, dict) or entry.get("pane_id") != w.pane_id
                    or not isinstance(text := entry.get("text"), str) or not text
                    or not isinstance(what := entry.get("what"), str) or "queued" in what):
                continue
            if self.untypable(w.pane_id) is not None:
                log.info("%s: %s typed before a restart: the pane is in copy mode or gone; "
                         "no Enter", key, what)
                continue
            reading = self.reader.read(w)
            if not _at_cursor(reading.text, reading.cursor_y, text):
                log.info("%s: %s typed before a restart is not on screen; dropped", key, what)
                continue
            try:
                self.tmux.send_keys(w.pane_id, "Enter")
            except TmuxError as exc:
                log.error("%s: could not press Enter: %s", key, exc)
                continue
            w.typed_at, w.typed_text = self.clock.mono(), text
            log.info("%s: pressed Enter on %s typed before a restart", key, what)

    def flush(self) -> None:
        """Stopping: press the Enters still due now, so no typed line is left unsent."""
        for event in list(self.pending_enter.values()):
            self.press_enter(event)

    def press_enter(self, event: PressEnter) -> None:
        if self.pending_enter.get(event.key) != event:
            return   # already pressed (a flush at shutdown), or a newer line replaced it
        del self.pending_enter[event.key]
        text = self.typed_lines.pop(event.key, None)
        w = self.watched.get(event.key)
        pane = self.tmux.pane(event.pane_id)
        if w is None or w.pane_id != event.pane_id or pane is None:
            log.info("%s: the pane changed before Enter; not pressing it", event.key)
            return
        if pane.in_mode:       # Enter would be a copy-mode command: press it once that ends
            self.pending_enter[event.key] = event
            self.typed_lines[event.key] = text or ""
            self.scheduler.at(self.clock.wall() + 1.0, event, key=f"enter:{event.key}")
            return
        try:
            self.tmux.send_keys(event.pane_id, "Enter")
        except TmuxError as exc:
            log.error("%s: could not press Enter: %s", event.key, exc)

    # -- deliveries ----------------------------------------------------------------------------

    def deliver(self, w: Watched | None, d: Delivery, steps: tuple[Step, ...]) -> bool:
        """Carry out `steps`; False when one could not be (nothing typed, no Enter pressed):
        the caller counts that attempt as failed instead of waiting for it to be taken."""
        for s in steps:
            try:
                self._delivery_step(w, d, s)
            except NotTyped as exc:
                log.info("%s: did not %s the %s: %s", d.terminal, s.do.value, d.kind, exc)
                return False
            except (TmuxError, OSError) as exc:
                log.error("%s: could not %s the %s: %s", d.terminal, s.do.value, d.kind, exc)
                return False   # not the steps after it either (no Enter for a line never typed)
        return True

    def _delivery_step(self, w: Watched | None, d: Delivery, s: Step) -> None:
        if s.do is Do.WAKE:
            self.scheduler.at(s.at, DeliveryDue(d.id), key=f"delivery:{d.id}")
        elif s.do is Do.TYPE and w is not None:
            if (why := self.untypable(w.pane_id)) is not None:
                raise NotTyped(why)    # before the row: a failed type is not a Typed row
            # the append-only ledger outlives state.json: a replayed command never types twice.
            # Written first: a message typed is never missing from it (a kill in between); one
            # that cannot be written down is not typed (OSError: the delivery tries again)
            self.ledger.append(Decision(
                Badge.TYPED, self.clock.wall(), w.state.terminal, w.state.agent, d.text[:200],
                w.state.project, d.kind, f"typed a queued {d.kind}", 0, {"delivery_id": d.id}))
            try:
                self.type_line(w, d.text, f"a queued {d.kind}")
            except TmuxError as exc:    # tmux failed in between: the row above is corrected
                self.ledger.append(Decision(
                    Badge.SKIPPED, self.clock.wall(), w.state.terminal, w.state.agent,
                    d.text[:200], w.state.project, d.kind,
                    f"did not type the queued {d.kind} after all: {exc}", 0,
                    {"delivery_id": d.id}))
                raise NotTyped(str(exc)) from None
            # the not-started clock (a shell command typed to relaunch an agent is no
            # message: it does not start this clock)
            w.delivered_at, w.delivered_sig = self.clock.mono(), w.progress_sig
        elif s.do is Do.ENTER and w is not None:
            if (why := self.untypable(w.pane_id)) is not None:
                raise NotTyped(why)
            self.tmux.send_keys(w.pane_id, "Enter")
            log.info("%s: pressed Enter on the %s Pitcrew typed", d.terminal, d.kind)
        elif s.do is Do.CONFIRMED:
            log.info("%s: %s delivered", d.terminal, d.kind)
        elif s.do is Do.DIAGNOSE:
            log.info("%s: %d deliveries failed: diagnosing", d.terminal, d.attempts)
            if w is not None:
                self.diagnose(w, d.attempts)

    # -- looking again -------------------------------------------------------------------------

    def look_again(self, pane_id: str, delays: tuple[float, ...] = LOOK_AGAIN) -> None:
        """Re-read a pane a few times soon (a new process may take a moment to appear)."""
        now = self.clock.wall()
        for delay in delays:
            self.scheduler.at(now + delay, Rescan(pane_id))


def _squeezed(text: str) -> str:
    return "".join(text.split())


def _at_cursor(screen: str, cursor_y: int | None, text: str) -> bool:
    """Whether `text` ends where the cursor is (the input box, or a shell's command line):
    the last few rows up to the cursor's, spaces and wrapping ignored."""
    rows = screen.split("\n")
    end = cursor_y + 1 if cursor_y is not None else len(rows)
    near = [r for r in rows[:end] if r.strip()][-4:]
    return bool(near) and _squeezed("".join(near)).endswith(_squeezed(text))
