"""Who an Activity card says acted: the user's own messages and reruns are not Autopilot's.

The rows are written the way the supervisor writes them (a real ledger file), read back the
way the view is built, and rendered in the real dashboard.
"""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from pitcrew.desktop.dashboard import Dashboard
from pitcrew.supervisor.api.view import DecisionView, View
from pitcrew.supervisor.core.records import Badge, Decision
from pitcrew.supervisor.store.ledger import Ledger

NOW = 1_750_000_000.0


def row(badge: Badge, trigger: str, at: float, reason: str = "") -> Decision:
    return Decision(badge, at, "work:1.0", "Fake Agent", "say hello", "/home/dev/proj",
                    trigger, reason, 0, {})


def test_a_message_the_user_sent_is_marked_you_not_autopilot(qtbot: QtBot,
                                                             tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "autopilot-ledger.jsonl")
    # as service/effects.py writes a typed delivery (trigger = the delivery's kind), as
    # service/reruns.py writes a rerun, and as Autopilot and a checker write theirs
    ledger.append(row(Badge.TYPED, "message", NOW - 50, "typed a queued message"))  # pitcrew send
    ledger.append(row(Badge.TYPED, "rerun", NOW - 40, "typed a queued rerun"))
    ledger.append(row(Badge.RERUN, "rerun (you asked)", NOW - 30, "a fresh session"))
    ledger.append(row(Badge.TYPED, "brief", NOW - 20, "typed a queued brief"))   # a failover
    ledger.append(row(Badge.RESUMED, "process exited", NOW - 10))
    ledger.append(row(Badge.DIAGNOSED, "task went quiet", NOW))
    views = tuple(DecisionView.of(d) for d in ledger.tail(10))
    dash = Dashboard(lambda _c: None)
    qtbot.addWidget(dash)
    dash.show_view(View(activity=views, at=NOW, consent=True, consent_asked=True))
    dash.open_page("activity")
    marks = [(c.badge.text(), c.mark.text()) for c in dash.activity.card_widgets()]
    assert marks == [("Diagnosed", "AI Diagnosis"), ("Resumed", "Autopilot"),
                     ("Typed", "Autopilot"), ("Rerun", "You"), ("Typed", "You"),
                     ("Typed", "You")]
    assert dash.activity.card_widgets()[-1].mark.toolTip() == "You asked for this"
