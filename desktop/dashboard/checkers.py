"""The checker list: which AI CLIs read a stuck screen, in order, each with its model.

The rows show the View's list; every edit sends the whole new list as labels
(`"provider"` or `"provider:model"`) and waits for the next View to show it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QMenu,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from pitcrew.desktop.dashboard.style import AMBER, Pill, label
from pitcrew.supervisor.api.commands import Command, SetSetting
from pitcrew.supervisor.api.view import CheckerView, View

MAX_CHECKERS = 4
DEFAULT_MODEL = "Default model"
ORDER = ("Claude", "Codex", "Gemini", "OpenCode", "Qwen", "Kimi", "Grok", "Hermes")


def display(c: CheckerView) -> str:
    return c.display_name or c.provider.capitalize()


class CheckerRow(QWidget):
    def __init__(self, index: int, count: int, checker: CheckerView, models: Sequence[str],
                 commit: Callable[[int, str | None], None], move: Callable[[int, int], None],
                 remove: Callable[[int], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.checker = checker
        box = QHBoxLayout(self)
        box.setContentsMargins(0, 2, 0, 2)
        box.setSpacing(8)
        num = label(f"{index + 1}.", "muted")
        num.setFixedWidth(18)
        box.addWidget(num)
        self.name = label(display(checker))
        self.name.setStyleSheet("font-weight: 600;")
        self.name.setMinimumWidth(90)
        box.addWidget(self.name)
        self.missing = Pill("not installed", AMBER)
        self.missing.setToolTip(f"{display(checker)} is not on PATH; it is skipped until "
                                "installed.")
        self.missing.setVisible(not checker.installed)
        box.addWidget(self.missing)
        box.addStretch(1)
        self.model = QComboBox()
        self.model.setEditable(True)
        self.model.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model.addItem(DEFAULT_MODEL)
        self.model.addItems(list(models))
        self.model.setMinimumWidth(190)
        self.model.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.model.setToolTip("The model this checker runs with; type any model name")
        if checker.model is None:
            self.model.setCurrentIndex(0)
        elif (i := self.model.findText(checker.model)) >= 0:
            self.model.setCurrentIndex(i)
        else:
            self.model.setEditText(checker.model)
        self._commit = commit
        self._index = index
        self._sent: str | None = checker.model
        self.model.activated.connect(self._picked)
        edit = self.model.lineEdit()
        if edit is not None:
            edit.editingFinished.connect(self._typed)
        box.addWidget(self.model)
        self.up = self._tool("▲", "Move up", index > 0, lambda: move(index, index - 1))
        self.down = self._tool("▼", "Move down", index < count - 1,
                               lambda: move(index, index + 1))
        box.addWidget(self.up)
        box.addWidget(self.down)
        self.remove = QPushButton("Remove")
        self.remove.clicked.connect(lambda: remove(index))
        box.addWidget(self.remove)

    def _tool(self, text: str, tip: str, enabled: bool, act: Callable[[], None]) -> QToolButton:
        b = QToolButton()
        b.setText(text)
        b.setToolTip(tip)
        b.setAccessibleName(tip)
        b.setEnabled(enabled)
        b.setAutoRaise(True)
        b.setFixedSize(26, 26)
        b.clicked.connect(act)
        return b

    def _picked(self, index: int) -> None:
        self._send(None if index == 0 else self.model.itemText(index))

    def _typed(self) -> None:
        text = self.model.currentText().strip()
        self._send(None if text in ("", DEFAULT_MODEL) else text)

    def _send(self, model: str | None) -> None:
        if model == self._sent:
            return
        self._sent = model
        self._commit(self._index, model)


class CheckerList(QWidget):
    def __init__(self, send: Callable[[Command], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._send = send
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(4)
        self.rows_box = QVBoxLayout()
        self.rows_box.setSpacing(2)
        outer.addLayout(self.rows_box)
        self.empty = label("", "muted", wrap=True)
        outer.addWidget(self.empty)
        foot = QHBoxLayout()
        self.add = QPushButton("+ Add checker")
        self.add.clicked.connect(self._open_menu)
        foot.addWidget(self.add)
        self.limit = label(f"At most {MAX_CHECKERS} checkers", "small")
        foot.addWidget(self.limit)
        foot.addStretch(1)
        outer.addLayout(foot)
        self.add_menu = QMenu(self)
        self.rows: list[CheckerRow] = []
        self.checkers: tuple[CheckerView, ...] = ()
        self._key: object = None

    # -- rendering -----------------------------------------------------------------------------

    def show_view(self, view: View) -> None:
        checkers = view.settings.checkers
        models: Mapping[str, Sequence[str]] = view.models or {}
        key = (checkers, view.candidates,
               tuple(tuple(models.get(c.provider, ())) for c in view.candidates + checkers))
        if key == self._key:
            return
        self._key = key
        self.checkers = checkers
        for row in self.rows:
            self.rows_box.removeWidget(row)
            row.deleteLater()
        self.rows = [CheckerRow(i, len(checkers), c, models.get(c.provider, ()), self._model,
                                self._move, self._remove) for i, c in enumerate(checkers)]
        for row in self.rows:
            self.rows_box.addWidget(row)
            row.show()
        names = ", ".join(display(c) for c in view.candidates) or ", ".join(ORDER)
        self.empty.setText(f"None chosen: the first installed of {names} is used.")
        self.empty.setVisible(not checkers)
        self._build_menu(view.candidates)

    def _build_menu(self, candidates: tuple[CheckerView, ...]) -> None:
        self.add_menu.clear()
        chosen = {c.provider for c in self.checkers}
        free = [c for c in candidates if c.provider not in chosen]
        for c in sorted(free, key=lambda c: not c.installed):   # stable: installed first
            text = display(c) if c.installed else f"{display(c)} (not installed)"
            act = self.add_menu.addAction(text)
            act.setData(c.provider)
            act.triggered.connect(lambda _=False, p=c.provider: self._append(p))
        full = len(self.checkers) >= MAX_CHECKERS
        self.add.setEnabled(not full and bool(free))
        self.limit.setVisible(full)
        self.add.setToolTip(f"At most {MAX_CHECKERS} checkers" if full else
                            "Add a checker CLI to the end of the list")

    def _open_menu(self) -> None:
        self.add_menu.popup(self.add.mapToGlobal(QPoint(0, self.add.height())))

    # -- edits: compute the new list from the View's and send it --------------------------------

    def labels(self) -> list[str]:
        return [c.label() for c in self.checkers]

    def _write(self, labels: list[str]) -> None:
        self._send(SetSetting("diagnosis", "checkers", labels))

    def _model(self, index: int, model: str | None) -> None:
        labels = self.labels()
        provider = self.checkers[index].provider
        labels[index] = f"{provider}:{model}" if model else provider
        self._write(labels)

    def _move(self, index: int, to: int) -> None:
        labels = self.labels()
        if 0 <= to < len(labels):
            labels[index], labels[to] = labels[to], labels[index]
            self._write(labels)

    def _remove(self, index: int) -> None:
        labels = self.labels()
        del labels[index]
        self._write(labels)

    def _append(self, provider: str) -> None:
        if len(self.checkers) < MAX_CHECKERS:
            self._write([*self.labels(), provider])

