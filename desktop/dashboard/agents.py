"""The agents overview: one row per terminal, updated in place from each View."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from pitcrew.desktop.dashboard.report_link import report_button
from pitcrew.desktop.dashboard.style import (
    STATE_TEXT,
    ElidedLabel,
    Pill,
    ago,
    card,
    label,
    short_id,
    short_path,
    state_color,
)
from pitcrew.desktop.dashboard.timeline import Timeline
from pitcrew.supervisor.api.commands import Command, Rerun
from pitcrew.supervisor.api.view import TerminalView, View

# Column widths shared by the header and every row, so they line up.
# agent, project (stretches), state, session (+ tokens), last, timeline, report/rerun
COLS = (150, 0, 120, 100, 92, 126, 56)
EMPTY = ("No agent terminals yet.<br><br><span style='font-size: 12px'>Start an agent CLI in "
         "tmux (for example <code>tmux new -s work</code>, then <code>claude</code>) and it "
         "shows up here within a few seconds.</span>")


def _set(lab: QLabel, text: str, tip: str | None = None) -> None:
    if lab.text() != text:
        lab.setText(text)
    if tip is not None and lab.toolTip() != tip:
        lab.setToolTip(tip)


def _columns(widgets: list[QWidget], box: QGridLayout, row: int) -> None:
    for col, (w, width) in enumerate(zip(widgets, COLS, strict=True)):
        if width:
            w.setFixedWidth(width)
        box.addWidget(w, row, col, Qt.AlignmentFlag.AlignVCenter)
    box.setColumnStretch(1, 1)


class AgentRow(QFrame):
    """One terminal. `update_from` touches only what changed."""

    def __init__(self, on_rerun: Callable[[str], None] = lambda key: None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.key = ""
        self.setObjectName("row")
        self.setProperty("selected", False)
        grid = QGridLayout(self)
        grid.setContentsMargins(10, 8, 10, 8)
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(2)
        self.agent = ElidedLabel()
        self.agent.setStyleSheet("font-weight: 600;")
        self.provider = ElidedLabel("", "small")
        who = _stacked(self.agent, self.provider)
        self.project = ElidedLabel()
        self.target = ElidedLabel("", "small")
        where = _stacked(self.project, self.target)
        pill_box = QWidget()
        hb = QHBoxLayout(pill_box)
        hb.setContentsMargins(0, 0, 0, 0)
        self.state = Pill()
        hb.addWidget(self.state)
        hb.addStretch(1)
        self.waiting = label("", "small")       # "waiting 4 min" (needs you, done)
        pill_box = _stacked(pill_box, self.waiting)
        self.session = label("", "muted")
        self.tokens = ElidedLabel("", "small")
        self.last = label("", "muted")
        self.timeline = Timeline()
        self.report = report_button("")
        self.rerun = QToolButton()
        self.rerun.setObjectName("report")        # styled like its neighbour, Report
        self.rerun.setText("Rerun")
        self.rerun.setAutoRaise(True)
        self.rerun.setToolTip("Start this agent in a fresh session (not resuming the old one) "
                              "and send its task's prompt again")
        self.rerun.clicked.connect(lambda: on_rerun(self.key))
        _columns([who, where, pill_box, _stacked(self.session, self.tokens), self.last,
                  self.timeline, _stacked(self.report, self.rerun)], grid, 0)
        self.note = label("", "warn", wrap=True)
        grid.addWidget(self.note, 1, 1, 1, 6)
        self.note.hide()

    def update_from(self, t: TerminalView, now: float) -> None:
        self.key = t.key
        self.agent.set_full(t.agent or t.provider)
        self.provider.set_full(t.provider)
        self.project.set_full(short_path(t.project))
        self.project.setToolTip(t.project)
        self.target.set_full(t.target + (f" · seat {t.seat}" if t.seat else ""))
        self.target.setToolTip(f"{t.key}\n{t.task}" if t.task else t.key)
        self.state.set(STATE_TEXT.get(t.state, t.state), state_color(t.state))
        self.state.setToolTip(t.why)
        wait = {"needs_you": f"waiting {t.waiting}", "done": f"done {t.waiting} ago"}.get(
            t.attention, "") if t.waiting else ""
        _set(self.waiting, wait, t.why)
        self.waiting.setVisible(bool(wait))
        _set(self.session, short_id(t.session_id), t.session_id or "No session id yet")
        self.tokens.set_full(t.tokens)
        self.tokens.setVisible(bool(t.tokens))
        self.report.setProperty("terminal", t.target)
        _set(self.last, ago(t.last_activity, now))
        self.timeline.set_timeline(t.timeline, now)
        _set(self.note, t.note)
        self.note.setVisible(bool(t.note))

    def set_selected(self, on: bool) -> None:
        if self.property("selected") != on:
            self.setProperty("selected", on)
            self.style().unpolish(self)
            self.style().polish(self)


class AgentsPage(QWidget):
    def __init__(self, send: Callable[[Command], None] = lambda c: None,
                 confirm: Callable[[str, str], bool] = lambda title, text: False,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._send = send
        self._confirm = confirm
        outer = QVBoxLayout(self)
        outer.setContentsMargins(24, 20, 24, 20)
        outer.setSpacing(12)
        outer.addWidget(label("Agents", "title"))
        self.summary = label("", "muted")
        outer.addWidget(self.summary)
        self.relay = label("", "muted", wrap=True)   # the supervisor this view comes from
        self.relay.hide()
        outer.addWidget(self.relay)
        self.hosts = label("", "muted", wrap=True)   # remote hosts and their connections
        self.hosts.hide()
        outer.addWidget(self.hosts)
        self.problems = label("", "warn", wrap=True)
        self.problems.hide()
        outer.addWidget(self.problems)
        frame, box = card()
        box.setContentsMargins(8, 8, 8, 8)
        box.setSpacing(0)
        head = QWidget()
        hgrid = QGridLayout(head)
        hgrid.setContentsMargins(10, 2, 10, 6)
        hgrid.setHorizontalSpacing(12)
        names = ["AGENT", "PROJECT", "STATE", "SESSION", "LAST ACTIVITY", "LAST 6 HOURS", ""]
        _columns([label(n, "colhead") for n in names], hgrid, 0)
        box.addWidget(head)
        self.header = head
        self.area = QScrollArea()
        self.area.setWidgetResizable(True)
        self.area.setFrameShape(QFrame.Shape.NoFrame)
        self.area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        inner = QWidget()
        inner.setObjectName("page")
        self.rows_box = QVBoxLayout(inner)
        self.rows_box.setContentsMargins(0, 0, 0, 0)
        self.rows_box.setSpacing(0)
        self.rows_box.addStretch(1)
        self.area.setWidget(inner)
        box.addWidget(self.area, 1)
        self.empty = label(EMPTY, "muted", wrap=True)
        self.empty.setTextFormat(Qt.TextFormat.RichText)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setMaximumWidth(460)
        self.empty.setStyleSheet("font-size: 15px;")
        box.addWidget(self.empty, 1, Qt.AlignmentFlag.AlignCenter)
        outer.addWidget(frame, 1)
        self.rows: dict[str, AgentRow] = {}
        self.headings: dict[str, QLabel] = {}    # group heading → its label ("Needs you · 2")
        self._order: tuple[str, ...] = ()
        self._sizes: tuple[tuple[str, int], ...] = ()
        self.selected: str | None = None

    def show_view(self, view: View) -> None:
        """Rows grouped as the view groups them (Needs you, Working, Done, Idle, Stopped;
        the oldest need first), each group under its heading."""
        now = view.at
        groups = view.grouped()
        keys = tuple(t.key for _, rows in groups for t in rows)
        for gone in set(self.rows) - set(keys):
            row = self.rows.pop(gone)
            self.rows_box.removeWidget(row)
            row.deleteLater()
        for t in view.terminals:
            if t.key not in self.rows:
                self.rows[t.key] = AgentRow(self.ask_rerun)
            self.rows[t.key].update_from(t, now)
        sizes = tuple((h, len(rows)) for h, rows in groups)
        if keys != self._order or sizes != self._sizes:
            for old in self.headings.values():
                self.rows_box.removeWidget(old)
                old.hide()
            i = 0
            for heading, rows in groups:
                if heading not in self.headings:
                    self.headings[heading] = label("", "grouphead")
                    self.headings[heading].setContentsMargins(10, 10, 10, 2)
                head = self.headings[heading]
                _set(head, f"{heading} · {len(rows)}")
                self.rows_box.insertWidget(i, head)
                head.show()
                i += 1
                for t in rows:
                    self.rows_box.insertWidget(i, self.rows[t.key])
                    self.rows[t.key].show()
                    i += 1
            self._order, self._sizes = keys, sizes
            self.select(self.selected)
        empty = not keys
        self.empty.setVisible(empty)
        self.area.setVisible(not empty)
        self.header.setVisible(not empty)
        working = sum(1 for t in view.terminals if t.attention == "working")
        need = len(view.needs_you)
        summary = (f"{len(keys)} terminal{'s' if len(keys) != 1 else ''} · {working} working"
                   + (f" · {need} need{'s' if need == 1 else ''} you" if need else "")
                   ) if keys else ""
        _set(self.summary, summary)
        self.summary.setVisible(bool(keys))
        _set(self.relay, f"Shown live from {view.relay}; your changes are relayed to it."
             if view.relay else "")
        self.relay.setVisible(bool(view.relay))
        _set(self.hosts, hosts_line(view))
        self.hosts.setVisible(bool(view.hosts))
        _set(self.problems, "\n".join(f"⚠ {p}" for p in view.problems))
        self.problems.setVisible(bool(view.problems))

    def ask_rerun(self, key: str) -> None:
        row = self.rows.get(key)
        if row is None:
            return
        who = f"{row.agent.full()} in {row.target.full() or key}"
        if self._confirm("Rerun in a fresh session?",
                         f"{who} starts again in a new session (its old session is not "
                         "resumed) and gets its task's prompt again. If it is still running, "
                         "the rerun opens in a new window and the old one is left as it is."):
            self._send(Rerun(key))

    def select(self, key: str | None) -> None:
        self.selected = key
        for k, row in self.rows.items():
            row.set_selected(k == key)
        if key in self.rows:
            self.area.ensureWidgetVisible(self.rows[key])


def hosts_line(view: View) -> str:
    """"Hosts: this machine 2 · gpu1 up 3 · vm down (Connection refused)"; rows come grouped
    in that order (the view sorts them by host)."""
    if not view.hosts:
        return ""
    count = {h.name: sum(1 for t in view.terminals if t.host == h.name) for h in view.hosts}
    local = sum(1 for t in view.terminals if t.host == "local")
    parts = [f"this machine {local}"] + [
        f"{h.name} {h.state}" + (f" ({h.problem})" if h.problem and h.state != "up" else "")
        + (f" {count[h.name]}" if h.state == "up" else "") for h in view.hosts]
    return "Hosts: " + " · ".join(parts)


def _stacked(top: QWidget, bottom: QWidget) -> QWidget:
    """Two labels in one cell, the second under the first."""
    cell = QWidget()
    box = QVBoxLayout(cell)
    box.setContentsMargins(0, 0, 0, 0)
    box.setSpacing(0)
    box.addWidget(top)
    box.addWidget(bottom)
    return cell
