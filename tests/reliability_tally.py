"""The reliability counts docs/reliability.md quotes, shared by tests/reliability and tests/ui.

(kind, name) -> how many; kind is "fuzz", "bad input", "fault" or "exhaustive" (a check
over a whole finite set, e.g. every vocabulary token: listed, but not added to the three
headline numbers).  A fuzz property counts every example hypothesis ran, shrinking included.
tests/reliability/conftest.py prints them at the end of the run.
"""

from collections import Counter

TALLY: Counter = Counter()
