"""Where the chapter's head roles are: one line per role with a "Show" button.

Step 4 of the chapter looks for positional and sink heads in one layer; a layer often has
none of a role while the next one over has several (the demo model's previous-token heads
live in layer 2).  Each line says which heads of the layer shown hold the role or, when none
does, where the nearest ones are (:func:`core.roles.where_sentence`); "Show" asks the window
to switch the grid to that layer and enlarge the strongest of them.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGridLayout, QGroupBox, QLabel, QPushButton, QWidget

from attention_lab.core.roles import ROLES, RoleWhere, where_sentence
from attention_lab.ui.i18n import tr, translator


class RoleWhereBox(QGroupBox):
    """The four roles' "where" sentences; ``show_wanted(layer, head)`` from a line's button."""

    show_wanted = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("portrait.where")
        self.lines: dict[str, QLabel] = {}
        self.buttons: dict[str, QPushButton] = {}
        self._targets: dict[str, tuple[int, int] | None] = {}
        grid = QGridLayout(self)
        grid.setContentsMargins(6, 2, 6, 2)
        grid.setVerticalSpacing(1)
        for row, role in enumerate(ROLES):
            line = QLabel(self)
            line.setWordWrap(True)
            line.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            line.setObjectName(f"portrait.where.{role}")
            button = QPushButton(self)
            button.setObjectName(f"portrait.show.{role}")
            button.clicked.connect(lambda _checked=False, r=role: self.show_nearest(r))
            button.setVisible(False)
            grid.addWidget(line, row, 0)
            grid.addWidget(button, row, 1, Qt.AlignmentFlag.AlignTop)
            self.lines[role] = line
            self.buttons[role] = button
            self._targets[role] = None
        grid.setColumnStretch(0, 1)
        self.retranslate()

    def retranslate(self) -> None:
        self.setTitle(tr("portrait.where.title"))
        for role, button in self.buttons.items():
            target = self._targets[role]
            if target is not None:
                button.setText(tr("portrait.where.show", layer=target[0], head=target[1]))

    def show_where(self, found: dict[str, RoleWhere], pending: set[str] = frozenset()) -> None:
        """``found``: :func:`core.roles.where_all`'s answer; ``pending``: roles whose numbers
        are still being measured (induction, until its scores arrive)."""
        lang = translator.language
        for role in ROLES:
            if role in pending or role not in found:
                self.lines[role].setText(tr("portrait.where.pending", role=tr(f"roles.{role}.heads")))
                self._targets[role] = None
            else:
                where = found[role]
                self.lines[role].setText(where_sentence(where, lang))
                # the button opens a head of another layer: when this layer has none of the role
                nearest = where.nearest() if not where.here else []
                self._targets[role] = (nearest[0].layer, nearest[0].head) if nearest else None
            self.buttons[role].setVisible(self._targets[role] is not None)
        self.retranslate()

    def target(self, role: str) -> tuple[int, int] | None:
        """(layer, head) that the role's "Show" opens, or None when the button is hidden."""
        return self._targets[role]

    def show_nearest(self, role: str) -> None:
        target = self._targets[role]
        if target is not None:
            self.show_wanted.emit(*target)
