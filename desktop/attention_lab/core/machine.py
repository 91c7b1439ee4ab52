"""What machine a measurement ran on: its processor, cores and load.

Stall and speed figures are only comparable on one machine: the same soak on two 2-core machines
of this project measured 280 and 1 actions over 100 ms, so every report says which
processor it ran on.
"""

from __future__ import annotations

import os
import platform


def cpu_model() -> str:
    """The processor's name as the system gives it ("" when it doesn't)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def load_average() -> list[float] | None:
    """The 1-, 5- and 15-minute load (a busy machine makes every timing longer); None where unknown."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def describe() -> dict:
    """Processor, cores, Python and system, and the load now."""
    return {"cpu": cpu_model(), "cpu_count": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(), "load_average": load_average()}
