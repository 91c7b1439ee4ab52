"""What the tour keeps in the window's settings: where the learner is, and per step the learner's
prediction and what the measurement answered (this computer only).  Anything unreadable is read as
a fresh start, never an error."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSettings

from attention_lab.core.tour import TourProgress

KEY_STEP, KEY_INDEX, KEY_FINISHED, KEY_OFFERED = "tour/step", "tour/index", "tour/finished", "tour/offered"
PREDICTIONS_GROUP, MEASURED_GROUP = "tour/predicted", "tour/measured"


def read_bool(value: Any, default: bool = False) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1") if value.strip() else default
    if isinstance(value, int):
        return bool(value)
    return default


def load_progress(settings: QSettings) -> TourProgress:
    """The saved progress; anything unreadable starts at step 1 (never an error)."""
    return TourProgress.from_dict(
        {
            "step": settings.value(KEY_STEP),
            "index": settings.value(KEY_INDEX),
            "finished": read_bool(settings.value(KEY_FINISHED), False),
        }
    )


def load_answers(settings: QSettings, group: str, allowed) -> dict[str, str]:
    """Step -> answer from the settings' ``group`` (anything unreadable is left out)."""
    settings.beginGroup(group)
    try:
        found = {key: settings.value(key) for key in settings.childKeys()}
    finally:
        settings.endGroup()
    return {key: value for key, value in found.items() if isinstance(value, str) and value in allowed}


def save_answer(settings: QSettings, group: str, step: str, answer: str | None) -> None:
    if answer is None:
        settings.remove(f"{group}/{step}")
    else:
        settings.setValue(f"{group}/{step}", answer)


def save_progress(settings: QSettings, progress: TourProgress) -> None:
    data = progress.to_dict()
    settings.setValue(KEY_STEP, data["step"])
    settings.setValue(KEY_INDEX, data["index"])
    settings.setValue(KEY_FINISHED, data["finished"])
