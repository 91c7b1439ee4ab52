"""The harness: drivers and measuring tools that run the app from outside, never part of it.

The learner driver and its checks (the stateful fuzzer's and the soak's random learner),
the soak, the GUI-stall probe and tracer, the GC timing, the tour screenshots and the bench.
Each is a ``python -m attention_lab.devtools.NAME`` command run from a source checkout; the
app's own modules never import this package (``tests/core/test_architecture.py`` checks),
and the installer leaves it out.
"""
