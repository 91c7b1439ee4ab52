"""``python -m attention_lab``: the same as the ``attention-lab`` command."""

from attention_lab.app import run

run()
