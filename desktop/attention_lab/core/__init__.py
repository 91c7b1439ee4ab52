"""Qt-free core: the GPT-2 lens, model loading, analyses, the KV benchmark and the lab.

Nothing under this package may import Qt (tests/core/test_architecture.py enforces it),
so the same code serves the GUI, the headless ``attention-lab lab`` and the tests.
"""
