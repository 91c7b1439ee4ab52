"""No code, test, packaging or CI text cites a tracker number: a reader of the repository has no
tracker, so a comment, docstring, message or name says the reason itself, in a sentence.

The walk covers the text files under ``ROOTS`` (more roots, such as the README or docs/, are one
entry each); measurement data is left out (``SKIPPED``), and so are build and cache folders.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: what is walked, relative to the repository: folders (every text file under them) and files
ROOTS = ("desktop", "tests", "packaging", ".ci", "pyproject.toml", "README.md", "ARCHITECTURE.md", "docs")
#: left out of the walk for now, relative to the repository (a rewrite of these is under way)
LEFT_OUT: tuple[str, ...] = ()
#: folders whose files are measured data, not prose: left out wherever they are
SKIPPED = (("resources", "measurements"),)
#: build outputs and caches inside a root: generated, never written by hand
GENERATED_DIRS = {"__pycache__", ".pytest_cache", ".hypothesis", "build", "dist", ".venv"}
TEXT_SUFFIXES = {".py", ".toml", ".iss", ".sh", ".spec", ".yml", ".yaml", ".md", ".txt"}

# built from pieces so this file's own source holds no match of it
CITATION = re.compile(r"\b" + "iss" + r"ues? ?#?\d+", re.IGNORECASE)


def _is_script(path: Path) -> bool:
    """An executable text without a suffix (``.ci/run``): known by its ``#!`` line."""
    with path.open("rb") as handle:
        return handle.read(2) == b"#!"


def _skipped(relative: Path) -> bool:
    parts = relative.parts
    if any(part in GENERATED_DIRS or part.endswith(".egg-info") for part in parts[:-1]):
        return True
    return any(parts[i:i + len(run)] == run for run in SKIPPED for i in range(len(parts)))


def walked_files() -> list[Path]:
    """Every text file the check reads, relative to the repository, sorted."""
    left_out = {Path(p) for p in LEFT_OUT}
    found = set()
    for root in ROOTS:
        start = REPO / root
        candidates = [start] if start.is_file() else (p for p in start.rglob("*") if p.is_file())
        for path in candidates:
            relative = path.relative_to(REPO)
            if relative in left_out or _skipped(relative):
                continue
            if path.suffix in TEXT_SUFFIXES or (path.suffix == "" and _is_script(path)):
                found.add(relative)
    return sorted(found)


def citations(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` for each line of ``text`` that cites a tracker number."""
    return [(number, line.strip()) for number, line in enumerate(text.splitlines(), 1) if CITATION.search(line)]


def test_the_pattern_finds_citations_and_leaves_other_words_alone():
    word = "iss" + "ue"
    for cited in (f"({word} 18)", f"{word.title()} 19: a stall", f"{word}s 19 and 18", f"{word} #7", f"{word}12's"):
        assert citations(f"x = 1  # {cited}") == [(1, f"x = 1  # {cited}")], cited
    for plain in (f"an {word} with the layout", f"tissue 3", f"{word}d 3 times", f"{word}_count = 2"):
        assert citations(plain) == [], plain


def test_the_walk_reads_each_root_and_leaves_out_what_it_should():
    files = walked_files()
    assert Path("pyproject.toml") in files
    assert Path(".ci/run") in files  # a script with no suffix
    assert Path("tests/test_no_issue_numbers.py") in files  # this file is checked too
    for root in ("desktop", "tests", "packaging"):
        assert any(f.parts[0] == root for f in files), root
    assert not any(f.suffix in {".pyc", ".png", ".json"} for f in files)
    assert not any(part == "__pycache__" for f in files for part in f.parts)
    assert not any(Path(p) in files for p in LEFT_OUT)
    assert _skipped(Path("desktop/resources/measurements/run.txt"))
    assert not _skipped(Path("desktop/resources/run.txt"))


def test_no_text_cites_a_tracker_number():
    found = []
    for relative in walked_files():
        text = (REPO / relative).read_text(encoding="utf-8", errors="replace")
        found += [f"{relative.as_posix()}:{number}: {line}" for number, line in citations(text)]
    assert not found, "say the reason in a sentence instead of a tracker number:\n" + "\n".join(found)
