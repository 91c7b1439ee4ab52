"""The startup row's yardstick (``attention-lab bench``): import torch and Qt's widgets, nothing else."""

import torch  # noqa: F401
import PySide6.QtWidgets  # noqa: F401
