"""The command palette (Ctrl+K): a filter line and a list of actions; Enter runs one."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QDialog, QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

Action = tuple[str, Callable[[], None]]


def matches(query: str, title: str) -> bool:
    """Every word of the query appears in the title, in any order, ignoring case."""
    t = title.casefold()
    return all(word in t for word in query.casefold().split())


class CommandPalette(QDialog):
    def __init__(self, actions: Sequence[Action], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Command palette")
        self.setModal(False)
        self.setMinimumWidth(440)
        self._actions = list(actions)
        box = QVBoxLayout(self)
        box.setContentsMargins(10, 10, 10, 10)
        box.setSpacing(6)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Type a command…")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._refilter)
        self.filter.installEventFilter(self)
        box.addWidget(self.filter)
        self.list = QListWidget()
        self.list.itemActivated.connect(self._run_item)
        box.addWidget(self.list)
        self._refilter("")

    def titles(self) -> list[str]:
        """The actions shown now, in order."""
        return [self.list.item(i).text() for i in range(self.list.count())]

    def present(self) -> None:
        self.filter.clear()
        self._refilter("")
        self.show()
        self.raise_()
        self.activateWindow()
        self.filter.setFocus()

    def _refilter(self, text: str) -> None:
        self.list.clear()
        for title, _run in self._actions:
            if matches(text, title):
                QListWidgetItem(title, self.list)
        if self.list.count():
            self.list.setCurrentRow(0)
        self.list.setFixedHeight(min(9, max(1, self.list.count())) *
                                 (self.list.sizeHintForRow(0) if self.list.count() else 22) + 8)
        self.adjustSize()

    def run_current(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self._run_item(item)

    def _run_item(self, item: QListWidgetItem) -> None:
        title = item.text()
        self.hide()
        for name, run in self._actions:
            if name == title:
                run()
                return

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.filter and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            key = event.key()
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self.run_current()
                return True
            if key in (Qt.Key.Key_Down, Qt.Key.Key_Up) and self.list.count():
                step = 1 if key == Qt.Key.Key_Down else -1
                row = (self.list.currentRow() + step) % self.list.count()
                self.list.setCurrentRow(row)
                return True
            if key == Qt.Key.Key_Escape:
                self.hide()
                return True
        return super().eventFilter(watched, event)
