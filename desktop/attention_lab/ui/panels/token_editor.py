"""Token editor: the text, the GPT-2 tokens it becomes, and the token the learner swaps.

Each token is a chip: its position, its id, and its text with the leading space made
visible ("␣dog", GPT-2's "Ġdog").  Clicking a chip picks the edited position of the leakage
diff; a replacement is typed or picked from the model's own top-k predictions for that
position.  Chips are painted by one widget (not one widget per token) so 1024 tokens stay
instant.  Text beyond the model's context is highlighted in the text field and the chips
end with a "cut" marker.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QPoint, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QFontMetricsF, QPainter, QPalette, QPixmap, QRegion, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QStyle,
    QTextEdit,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from attention_lab.core.lab import seed_text_for
from attention_lab.core.tokens import text_remark
from attention_lab.ui.elided_label import ElidedLabel
from attention_lab.ui.i18n import tr, translator
from attention_lab.ui.model_label import model_label
from attention_lab.ui.number_format import integer, percent
from attention_lab.ui.strings import remarks as _remark_texts  # noqa: F401 -- registers the texts
from attention_lab.ui.strings import token_editor as _texts  # noqa: F401 -- registers the texts
from attention_lab.ui.panels.base import Panel
from attention_lab.ui.panels.ids import PanelId
from attention_lab.ui.panels.panel_kit import explanation_label, monospace_font, set_text


LABEL_SEPARATOR = " · "  # a chip's label: "position · id"


NOTICE_STYLE = "color: #b02020;"  # a problem with the text (cut at the context, not one token…)
REMARK_STYLE = "color: #444;"  # a fact about the text (bytes, spaces)
CURRENT_MAX_PX = 600  # the leakage edit in words, at most (it is elided, its whole text in its tooltip)


@dataclass(slots=True)
class _Chip:
    """A chip's place in plain integers: a context-long text lays out ~1000 chips, and a QRect
    (with its QPoint and QSize) made for each took 4 of the relayout's ~10 ms."""

    x: int
    y: int
    w: int
    h: int
    index: int  # -1: the cut marker

    @property
    def rect(self) -> QRect:
        return QRect(self.x, self.y, self.w, self.h)

    def meets(self, left: int, top: int, right: int, bottom: int) -> bool:
        """Whether the chip overlaps the area ``[left, right) × [top, bottom)``."""
        return self.x < right and left < self.x + self.w and self.y < bottom and top < self.y + self.h


class ChipView(QWidget):
    """All tokens as chips, painted by one widget; click selects, arrows move."""

    chip_clicked = Signal(int)
    #: the height all the chips need (rows × row pitch), after each layout: the strip's scroll area takes it
    height_needed = Signal(int)
    PAD_X, PAD_Y, GAP = 6, 3, 4

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.tokens: list[str] = []
        self.ids: list[int] = []
        self.cut = 0
        self.selected = -1
        self.edited = -1
        self._chips: list[_Chip] = []
        self._strip_cache: QPixmap | None = None  # every chip unselected (_strip)
        self._strip_key: tuple | None = None
        self._strip_drawn = QRegion()  # the part of the strip drawn so far
        self._chips_height = 0  # what the chips need (the last layout's)
        self._layout_width = 0  # the width the chips were laid out for
        self._text_widths: dict[str, int] = {}  # a token's width in the chip font (fixed)
        self._number_widths: dict[int, float] = {}  # a position's or id's width in the label font
        self._text_font = monospace_font()
        self._text_font.setBold(True)
        self._small_font = QFont(self.font())
        self._small_font.setPointSizeF(max(6.0, self.font().pointSizeF() * 0.8))
        self._label_metrics = QFontMetricsF(self._small_font)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(False)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)

    def set_tokens(self, tokens: list[str], ids: list[int], cut: int, selected: int) -> None:
        same = self.ids == list(ids) and self.tokens == list(tokens) and self.cut == int(cut)
        self.tokens, self.ids, self.cut = list(tokens), list(ids), int(cut)
        self.selected = selected
        self.edited = selected
        if same:  # another layer, mode or leakage edit of the same text: the chips stay put
            self.update()
        else:
            self._relayout()

    def select(self, index: int) -> None:
        if index == self.selected:
            return  # (a language switch re-words the selection: the strip stays as painted)
        self.selected = index
        self.update()

    def chip_rect(self, index: int) -> QRect:
        for chip in self._chips:
            if chip.index == index:
                return QRect(chip.rect)
        return QRect()

    def _text_width(self, text: str, fm_text: QFontMetrics) -> int:
        width = self._text_widths.get(text)
        if width is None:
            if len(self._text_widths) > 50_000:
                self._text_widths.clear()
            width = self._text_widths[text] = fm_text.horizontalAdvance(text)
        return width

    def _number_width(self, number: int) -> float:
        width = self._number_widths.get(number)
        if width is None:
            if len(self._number_widths) > 100_000:
                self._number_widths.clear()
            width = self._number_widths[number] = self._label_metrics.horizontalAdvance(str(number))
        return width

    def relayout(self) -> None:
        self._relayout()

    def _relayout(self) -> None:
        # Widths are measured once and reused: a token's in the chip font, a number's (a
        # position or an id) in the label font, so the "position · id" labels of a new text
        # need no measuring (a 993-token text measured 2000 strings: ~20 ms of GUI time).
        # Fractional advances, summed, then rounded up: a chip is never narrower than its label.
        fm_text = QFontMetrics(self._text_font)
        height = fm_text.height() + QFontMetrics(self._small_font).height() + 2 * self.PAD_Y
        separator = self._label_metrics.horizontalAdvance(LABEL_SEPARATOR)
        width = self._layout_width = max(100, self.width() - self._slack())
        x = y = self.GAP
        row_h = 0
        chips: list[_Chip] = []
        entries = [(i, self._text_width(t, fm_text), math.ceil(self._number_width(i) + separator + self._number_width(tid)))
                   for i, (t, tid) in enumerate(zip(self.tokens, self.ids))]
        if self.cut:
            cut_w = QFontMetrics(self._small_font).horizontalAdvance(tr("token_editor.cut_chip", cut=self.cut))
            entries.append((-1, cut_w, 0))
        for index, text_w, label_w in entries:
            chip_w = max(text_w, label_w, 28 - 2 * self.PAD_X) + 2 * self.PAD_X
            if x + chip_w > width - self.GAP and x > self.GAP:
                x = self.GAP
                y += row_h + self.GAP
                row_h = 0
            chips.append(_Chip(x, y, chip_w, height, index))
            x += chip_w + self.GAP
            row_h = max(row_h, height)
        self._chips = chips
        self._strip_cache = None  # drawn again at the next paint
        self._chips_height = y + row_h + self.GAP if chips else 0
        self.setMinimumHeight(self._chips_height)
        self.height_needed.emit(self.minimumHeight())
        self.update()

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        super().resizeEvent(event)
        # a new height (ours, from _relayout) moves no chip, nor does a width within a scroll
        # bar or two of the one laid out for: a long text's strip loses 14 px to its own scroll
        # bar, then 14 to the dock's, and each relayout drew every chip again
        width = max(100, event.size().width())
        if width != max(100, event.oldSize().width()) and not self._layout_width <= width <= self._layout_width + 2 * self._slack():
            self._relayout()

    def _slack(self) -> int:
        """Room kept free on the right of the chips: two scroll bars (the strip's and the dock's)."""
        return 2 * self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(400, max(40, self.minimumHeight()))

    def _strip(self, visible: QRect) -> QPixmap:
        """The chips, unselected, drawn once per layout (and size, palette, screen) as far as
        they have been seen (a long text's strip scrolls: only what is shown gets drawn):
        a repaint (a neighbour's relayout moving the strip, a click) copies it and draws the
        selected and the edited chip over it.  A context-long text's 250 chips cost 30 ms
        a paint on 2 busy cores, and the strip was painted twice per new text."""
        ratio = self.devicePixelRatioF()
        # the chips' places depend on the layout's width only: the strip's own height (its
        # scroll area gives it what the chips need, a layout later) keeps what is drawn
        size = QSize(self._layout_width, self._chips_height)
        key = (size, ratio, self.palette().cacheKey())
        if self._strip_cache is None or self._strip_key != key:
            self._strip_cache = QPixmap(size * ratio)
            self._strip_cache.setDevicePixelRatio(ratio)
            self._strip_cache.fill(Qt.GlobalColor.transparent)
            self._strip_key, self._strip_drawn = key, QRegion()
        missing = QRegion(visible.intersected(QRect(QPoint(0, 0), size))).subtracted(self._strip_drawn)
        if not missing.isEmpty():
            painter = QPainter(self._strip_cache)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setClipRegion(missing)  # a chip half drawn before is not blended twice
            area = missing.boundingRect()
            bounds = (area.x(), area.y(), area.x() + area.width(), area.y() + area.height())
            for chip in self._chips:
                if chip.meets(*bounds):
                    self._draw_chip(painter, chip, selected=False, edited=False)
            painter.end()
            self._strip_drawn = self._strip_drawn.united(missing)
        return self._strip_cache

    def _draw_chip(self, painter: QPainter, chip: _Chip, *, selected: bool, edited: bool) -> None:
        pal = self.palette()
        r = QRectF(chip.rect)
        if chip.index < 0:
            painter.setPen(QColor(190, 40, 40))
            painter.setBrush(QColor(250, 228, 228))
            painter.drawRoundedRect(r, 5, 5)
            painter.setFont(self._small_font)
            painter.drawText(r, Qt.AlignmentFlag.AlignCenter, tr("token_editor.cut_chip", cut=self.cut))
            return
        fill = pal.color(QPalette.ColorRole.Highlight) if selected else pal.color(QPalette.ColorRole.Base)
        border = QColor(230, 120, 20) if edited else pal.color(QPalette.ColorRole.Mid)
        painter.setPen(border)
        painter.setBrush(fill)
        painter.drawRoundedRect(r.adjusted(0.5, 0.5, -0.5, -0.5), 5, 5)
        text_colour = pal.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        painter.setPen(text_colour)
        painter.setFont(self._text_font)
        top = QRectF(r.x(), r.y() + self.PAD_Y, r.width(), QFontMetrics(self._text_font).height())
        painter.drawText(top, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignVCenter, self.tokens[chip.index])
        painter.setFont(self._small_font)
        sub_colour = QColor(text_colour)
        sub_colour.setAlpha(170)
        painter.setPen(sub_colour)
        bottom = QRectF(r.x(), top.bottom(), r.width(), r.height() - top.height() - self.PAD_Y)
        painter.drawText(bottom, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignVCenter,
                         f"{chip.index}{LABEL_SEPARATOR}{self.ids[chip.index]}")

    def paintEvent(self, event) -> None:  # noqa: N802
        visible = event.rect()
        painter = QPainter(self)
        strip = self._strip(visible)
        ratio = strip.devicePixelRatio()
        shown = visible.intersected(QRect(QPoint(0, 0), strip.deviceIndependentSize().toSize()))
        if not shown.isEmpty():  # (below the chips: the background)
            source = QRectF(shown.x() * ratio, shown.y() * ratio, shown.width() * ratio, shown.height() * ratio)
            painter.drawPixmap(QRectF(shown), strip, source)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        for chip in self._chips:  # the selected and the edited chip over their plain selves
            marked = chip.index >= 0 and chip.index in (self.selected, self.edited)
            if marked and chip.rect.intersects(visible):
                self._draw_chip(painter, chip, selected=chip.index == self.selected, edited=chip.index == self.edited)
        painter.end()

    def index_at(self, pos: QPoint) -> int | None:
        x, y = pos.x(), pos.y()
        for chip in self._chips:
            if chip.meets(x, y, x + 1, y + 1):
                return chip.index
        return None

    def mousePressEvent(self, event) -> None:  # noqa: N802
        index = self.index_at(event.position().toPoint())
        if index is not None and index >= 0:
            self.selected = index
            self.update()
            self.chip_clicked.emit(index)
        super().mousePressEvent(event)

    def keyPressEvent(self, event) -> None:  # noqa: N802
        step = {Qt.Key.Key_Left: -1, Qt.Key.Key_Right: 1}.get(event.key())
        if step and self.tokens:
            index = min(max(0, (self.selected if self.selected >= 0 else len(self.tokens) - 1) + step), len(self.tokens) - 1)
            self.selected = index
            self.update()
            self.chip_clicked.emit(index)
            return
        super().keyPressEvent(event)

    def event(self, event) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            index = self.index_at(event.pos())
            if index is not None and index >= 0:
                QToolTip.showText(event.globalPos(), tr("token_editor.chip_tip", pos=index, id=self.ids[index], text=self.tokens[index]), self)
            elif index == -1:
                QToolTip.showText(event.globalPos(), tr("token_editor.cut_chip", cut=self.cut), self)
            else:
                QToolTip.hideText()
            return True
        return super().event(event)


class TokenEditorPanel(Panel):
    panel_id = PanelId.TOKEN_EDITOR
    title_key = "token_editor.title"

    text_changed = Signal(str)
    position_requested = Signal(int)
    replacement_requested = Signal(int, int)  # position, token id
    apply_requested = Signal()
    bos_toggled = Signal(bool)
    status_message = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._resolver = None
        self.explain = explanation_label(self)
        # two lines at most when squeezed: a word-wrapped label otherwise asks for the
        # height of its narrowest layout and the token strip grows a blank band
        self.explain.setMinimumHeight(self.explain.fontMetrics().lineSpacing() * 2 + 8)

        self.editor = QPlainTextEdit(self)
        self.editor.setObjectName("token_editor.text")
        self.editor.setTabChangesFocus(True)
        self.editor.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.editor.setFixedHeight(QFontMetrics(self.editor.font()).lineSpacing() * 2 + 14)
        self.editor.textChanged.connect(lambda: self.text_changed.emit(self.editor.toPlainText()))
        self.editor.textChanged.connect(self._text_typed)
        self._emptied = False  # the learner emptied the field: the last analysis's chips are not shown

        self.count = QLabel(self)
        self.bos = QCheckBox(self)
        self.bos.toggled.connect(self.bos_toggled)
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)  # "<0xF0>" in a remark is text, not a tag
        self.message.setStyleSheet(NOTICE_STYLE)
        self.message.hide()

        self.chips = ChipView(self)
        self.chips.chip_clicked.connect(self._chip_clicked)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.chips)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        chip_h = QFontMetrics(self.chips._text_font).height() + QFontMetrics(self.chips._small_font).height() + 2 * ChipView.PAD_Y
        self._chip_row_min = chip_h + 2 * ChipView.GAP
        scroll.setMinimumHeight(self._chip_row_min)
        # whole rows in view, one row per scroll step, so a scrolled strip never shows half a row
        self._chip_rows_max = 3 * chip_h + 4 * ChipView.GAP  # three rows, then it scrolls
        scroll.verticalScrollBar().setSingleStep(chip_h + ChipView.GAP)
        scroll.verticalScrollBar().setPageStep(3 * (chip_h + ChipView.GAP))
        scroll.setMaximumHeight(self._chip_rows_max)
        self.chips.height_needed.connect(self._fit_chip_strip)
        self.chip_scroll = scroll

        self.replace_label = QLabel(self)
        self.word = QLineEdit(self)
        self.word.setObjectName("token_editor.word")
        self.word.setMaximumWidth(180)
        self.word.returnPressed.connect(self._use_word)
        self.use_word = QPushButton(self)
        self.use_word.clicked.connect(self._use_word)
        self.apply = QPushButton(self)
        self.apply.clicked.connect(self.apply_requested)
        # the edit in words gives up width first (a long token's text, "→ “␣delimitadores”"), so the
        # row never outgrows the dock and cuts its "Write into the text" button off
        self.current = ElidedLabel(CURRENT_MAX_PX, self)
        self.predictions_label = QLabel(self)
        self.predictions = QListWidget(self)
        self._guesses_shown: list | None = None  # what the row of guesses shows
        self.predictions.setObjectName("token_editor.predictions")
        self.predictions.setFlow(QListWidget.Flow.LeftToRight)
        self.predictions.setWrapping(True)
        self.predictions.setResizeMode(QListWidget.ResizeMode.Adjust)  # re-wrapped when the dock narrows
        self.predictions.setSpacing(2)
        self.predictions.setFixedHeight(QFontMetrics(self.font()).height() + 12)
        self.predictions.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # one row of guesses, the likeliest first: in a narrow dock a sideways scroll bar took the row's
        # lower half (the guesses were cut through); the ones that don't fit wrap out of sight
        self.predictions.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.predictions.itemClicked.connect(self._prediction_clicked)

        top = QHBoxLayout()
        top.addWidget(self.count)
        top.addWidget(self.message, 1)
        top.addWidget(self.bos)
        replace_row = QHBoxLayout()
        replace_row.addWidget(self.replace_label)
        replace_row.addWidget(self.word)
        replace_row.addWidget(self.use_word)
        replace_row.addSpacing(12)
        replace_row.addWidget(self.current, 1)
        replace_row.addWidget(self.apply)
        guesses = QHBoxLayout()
        guesses.addWidget(self.predictions_label)
        guesses.addWidget(self.predictions, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.setSpacing(3)
        layout.addWidget(self.explain)
        layout.addWidget(self.editor)
        layout.addLayout(top)
        layout.addWidget(scroll)
        layout.addLayout(replace_row)
        layout.addLayout(guesses)
        layout.addStretch(1)
        self.retranslate()

    def _fit_chip_strip(self, needed: int) -> None:
        """The strip is as tall as its chips (up to three rows): no blank band under a one-row text."""
        # fixed, not a maximum: QScrollArea caches its content's size hint, so the layout would go on
        # sizing the strip from the first text's chips
        self.chip_scroll.setFixedHeight(max(self._chip_row_min, min(needed, self._chip_rows_max)))

    # ------------------------------------------------------------------ API
    def set_word_resolver(self, resolver) -> None:
        """``resolver(word, position) -> (token id | None, message)`` (the session's)."""
        self._resolver = resolver

    def set_text(self, text: str) -> None:
        """Put ``text`` in the field without re-announcing it (startup, settings, apply)."""
        if text == self.editor.toPlainText():
            return
        self.editor.blockSignals(True)
        self.editor.setPlainText(text)
        self.editor.blockSignals(False)
        self._mark_cut()

    def text(self) -> str:
        return self.editor.toPlainText()

    def show_inputs(self, old, new) -> None:
        """The learner's inputs changed (the tour gave a text back, an edit was applied): the field shows them;
        a word typed for one position is not left in "Replace by" once another position is edited."""
        if new.text != old.text or old is new:
            self.set_text(new.text)
        if new.bos != old.bos or old is new:
            self.set_bos(new.bos)
        if new.position != old.position or (new.replacement_id is None and old.replacement_id is not None):
            self.word.clear()

    def set_bos(self, bos: bool) -> None:
        self.bos.blockSignals(True)
        self.bos.setChecked(bool(bos))
        self.bos.blockSignals(False)

    def show_notice(self, message: str) -> None:
        """``message`` under the text field; none: the remark the analysed text needs (only spaces, bytes), if any."""
        state = self.state
        remark = None
        if not message and state is not None and state.text == self.editor.toPlainText():
            remark = text_remark(state.text, list(state.tokens))
            if remark == "bytes":  # the loaded model's tokenizer, named (not GPT-2's while the demo is loaded)
                message = tr("token_editor.remark.bytes_of", model=model_label(state.model))
            else:
                message = tr(f"token_editor.remark.{remark}") if remark else ""
        # a remark is a fact about the text, not a problem: not in the problems' red
        self.message.setStyleSheet(REMARK_STYLE if remark else NOTICE_STYLE)
        self.message.setText(message)
        self.message.setVisible(bool(message))
        if message and not self.editor.toPlainText():  # the count and the chips were the old text's
            self.count.setText(tr("token_editor.empty"))
            self._emptied = True  # (the field's next text clears it)
            self.chips.set_tokens([], [], 0, -1)

    def has_data(self) -> bool:
        return self.state is not None and bool(self.chips.tokens)

    def retranslate(self) -> None:
        self._explain_tokenizer()
        self.editor.setPlaceholderText(tr("token_editor.placeholder"))
        self.bos.setText(tr("token_editor.bos"))
        self.bos.setToolTip(tr("token_editor.bos_tip"))
        self.word.setPlaceholderText(tr("token_editor.word_placeholder"))
        self.use_word.setText(tr("token_editor.use_word"))
        self.apply.setText(tr("token_editor.apply"))
        shown = self.editor.toPlainText()
        if shown and seed_text_for(translator.language, shown) != shown:  # an untouched default follows the
            self.editor.setPlainText(seed_text_for(translator.language, shown))  # language, and is analysed
        if self.state is not None:
            # the words only: the chips' tokens and numbers are the text's, not the interface's, and
            # showing the state again repainted the strip and the text field on every switch
            self._show_words(self.state)
            if self.chips.cut:
                self.chips.relayout()  # the cut marker's words changed width
            self._show_selection(self.chips.selected if 0 <= self.chips.selected < self.state.n_tokens else self.state.position)
        else:
            self.count.setText(tr("token_editor.empty"))
            self.replace_label.setText(tr("token_editor.replace_none"))
            self.predictions_label.setText("")

    def _explain_tokenizer(self) -> None:
        """Name the loaded model's tokenizer (the demo's own BPE is not GPT-2's)."""
        model = self.state.model if self.state is not None else None
        tokenizer = (tr("token_editor.tokenizer", vocab=integer(model.tokenizer.vocab_size),
                        model=html.escape(model_label(model))) if model is not None else tr("token_editor.tokenizer.none"))
        self.explain.setText(tr("token_editor.explain", tokenizer=tokenizer))

    def show_state(self, state) -> None:
        self.state = state
        self._show_words(state)
        if self._emptied and self._stale():  # the last text's chips (redrawn for a mode, a language) stay gone
            self.chips.set_tokens([], [], 0, -1)
            return
        self.chips.set_tokens(state.tokens, state.ids, state.original_length - state.n_tokens, state.position)
        self._mark_cut()
        self._show_selection(state.position)
        self._scroll_to(state.position)

    def _show_words(self, state) -> None:
        """What the panel says about ``state`` (tokenizer, count, the cut's notice) in the current language."""
        self._explain_tokenizer()
        n = state.n_tokens
        set_text(self.count, tr("token_editor.count", n=n))
        cut = state.original_length - n
        if cut > 0:
            self.show_notice(
                tr("token_editor.too_long", total=state.original_length, model=model_label(state.model), context=n, cut=cut)
            )
        elif state.text == self.editor.toPlainText():  # a notice about another text in the field stays
            self.show_notice("")

    def _scroll_to(self, index: int) -> None:
        """Keep the edited chip in view (it is the last one by default, at the bottom)."""
        rect = self.chips.chip_rect(index)
        if not rect.isNull():
            self.chip_scroll.ensureVisible(rect.center().x(), rect.center().y(), 0, rect.height())

    # ------------------------------------------------------------------ internals
    def _mark_cut(self) -> None:
        """Highlight the characters beyond the model's context in the text field."""
        selections = []
        state = self.state
        if state is not None and state.truncated and state.text == self.editor.toPlainText():
            kept = int(state.extras.get("kept_chars", len(state.text)))
            cursor = QTextCursor(self.editor.document())
            cursor.setPosition(kept)
            cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(250, 205, 205))
            fmt.setForeground(QColor(120, 120, 120))
            fmt.setFontStrikeOut(True)
            sel = QTextEdit.ExtraSelection()
            sel.cursor = cursor
            sel.format = fmt
            selections.append(sel)
        self.editor.setExtraSelections(selections)

    def _show_selection(self, position: int) -> None:
        state = self.state
        if state is None or not 0 <= position < state.n_tokens:
            self.replace_label.setText(tr("token_editor.replace_none"))
            return
        self.chips.select(position)
        self.replace_label.setText(tr("token_editor.replace_label", pos=position, token=state.tokens[position]))
        if position == state.position:
            self.current.setText(
                tr(
                    "token_editor.current",
                    pos=position,
                    token=state.tokens[position],
                    replacement=state.extras.get("replacement_text", state.replacement_id),
                )
            )
        guesses = []  # (label, token id, already there, the replacement)
        if position == 0:
            self.predictions_label.setText(tr("token_editor.no_predictions"))
        else:
            self.predictions_label.setText(tr("token_editor.predictions"))
            ids = state.top_ids[position - 1].tolist()
            probs = state.top_probs[position - 1].tolist()
            if ids and ids[0] >= 0:
                texts = state.model.tokenizer.token_texts([i for i in ids if i >= 0])
                guesses = [(f"{text}  {percent(prob, 1)}", int(token_id), token_id == state.ids[position],
                            position == state.position and token_id == state.replacement_id)
                           for token_id, prob, text in zip(ids, probs, texts)]
        if guesses == self._guesses_shown:
            return  # a late edit keeps the guesses at its position: rebuilding the row re-laid it out
        self._guesses_shown = guesses
        self.predictions.clear()
        if not guesses:
            return
        for label, token_id, there, replacement in guesses:
            item = QListWidgetItem(label)
            item.setData(Qt.ItemDataRole.UserRole, token_id)
            item.setToolTip(f"id {token_id}")
            if there:
                item.setForeground(QColor(128, 128, 128))  # the token already there
            if replacement:
                font = item.font()
                font.setBold(True)
                item.setFont(font)
            self.predictions.addItem(item)
        # exactly one row (the bold guess can be taller than the font's line): no half of a second row peeks in
        spacing, frame = self.predictions.spacing(), self.predictions.frameWidth()
        self.predictions.setFixedHeight(self.predictions.sizeHintForRow(0) + 2 * spacing + 2 * frame)

    def _chip_clicked(self, index: int) -> None:
        self._show_selection(index)
        self.position_requested.emit(index)

    def _stale(self) -> bool:
        """The field is empty: the chips and guesses still shown are the last text's, and there is no
        token to replace (a replacement typed then hid "type some text" and was kept for the next text)."""
        return not self.editor.toPlainText()

    def _text_typed(self) -> None:
        if self.editor.toPlainText():
            self._emptied = False

    def _prediction_clicked(self, item: QListWidgetItem) -> None:
        token_id = item.data(Qt.ItemDataRole.UserRole)
        if token_id is not None and self.chips.selected >= 0 and not self._stale():
            self.replacement_requested.emit(self.chips.selected, int(token_id))

    def _use_word(self) -> None:
        if self._resolver is None or self.chips.selected < 0 or self._stale():
            return
        token_id, message = self._resolver(self.word.text(), self.chips.selected)
        if token_id is None:
            self.show_notice(message)
            self.status_message.emit(message)
            return
        self.show_notice("")
        self.replacement_requested.emit(self.chips.selected, int(token_id))
