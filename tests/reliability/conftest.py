"""Fixtures for the reliability suite, and the counts docs/reliability.md quotes.

Run it with::

    python -m pytest tests/reliability tests/core/test_hostile_models.py -q

At the end pytest prints a "reliability counts" section: fuzz examples run (per property),
bad inputs tried, faults injected.  Set ``ATTENTION_LAB_RELIABILITY_COUNTS=counts.json`` to
also write them as JSON.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reliability_tally import TALLY  # the `tally` fixture (tests/conftest.py) adds to it

HOSTILE_MODELS_FILE = "tests/core/test_hostile_models.py"


@pytest.fixture(scope="session")
def tiny_model(tiny_checkpoint):
    from attention_lab.core.models import load_model

    return load_model(tiny_checkpoint)


def _totals(terminalreporter) -> dict:
    by_kind: dict[str, dict[str, int]] = {"fuzz": {}, "bad input": {}, "fault": {}, "exhaustive": {}}
    for (kind, name), count in sorted(TALLY.items()):
        by_kind.setdefault(kind, {})[name] = count
    # the hostile-folder tests live in tests/core; each passed case is one broken folder opened
    hostile = [r for r in terminalreporter.stats.get("passed", [])
               if r.when == "call" and r.nodeid.startswith(HOSTILE_MODELS_FILE)]
    if hostile:
        by_kind["fault"]["hostile or broken model folders (tests/core/test_hostile_models.py)"] = len(hostile)
    return {
        "fuzz_examples_run": sum(by_kind["fuzz"].values()),
        "bad_inputs_tried": sum(by_kind["bad input"].values()),
        "faults_injected": sum(by_kind["fault"].values()),
        "detail": by_kind,
    }


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not TALLY:
        return  # the reliability tests did not run (e.g. only tests/core was selected)
    totals = _totals(terminalreporter)
    tr = terminalreporter
    tr.write_sep("-", "reliability counts")
    tr.write_line(f"fuzz examples run: {totals['fuzz_examples_run']}   bad inputs tried: "
                  f"{totals['bad_inputs_tried']}   faults injected: {totals['faults_injected']}")
    for kind, names in totals["detail"].items():
        for name, count in names.items():
            tr.write_line(f"  {kind:<10} {count:>5}  {name}")
    target = os.environ.get("ATTENTION_LAB_RELIABILITY_COUNTS")
    if target:
        Path(target).write_text(json.dumps(totals, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
