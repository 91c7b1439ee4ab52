"""The README is a front door, ARCHITECTURE.md a map, docs/ the dated record: each keeps true.

- the README stays short enough to read (at most 300 lines) and says the test command CI runs;
- every relative link and image in README.md, ARCHITECTURE.md and docs/*.md points at a file
  (or a heading) that exists, and every file path the README and the map name in backticks exists;
- every ``python -m attention_lab.devtools.NAME`` they name is a module of the harness, and the
  README names no command that is gone;
- (that none of them cites a tracker number is checked with the code, by test_no_issue_numbers.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "desktop" / "attention_lab"
README = ROOT / "README.md"
ARCHITECTURE = ROOT / "ARCHITECTURE.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
ALL_DOCS = [README, ARCHITECTURE, *DOCS]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
#: a backticked token that is a repository path: a top-level folder of the repository or one of
#: the package's, and no wildcard, placeholder or space
PATH_TOKEN = re.compile(r"`((?:resources|packaging|tests|desktop|docs|core|ui|devtools)/[\w./-]*\w)`")


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(ROOT)) for p in paths]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+)$", text, re.M)}


def _links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return [m.group(1) for m in LINK.finditer(text)]


def ci_test_command() -> str:
    """The command ``.ci/run`` runs the suite with, without the extra pytest options it adds."""
    match = re.search(r"^(python3? packaging/dev\.py test)\b", (ROOT / ".ci" / "run").read_text(encoding="utf-8"), re.M)
    assert match, ".ci/run no longer runs packaging/dev.py test"
    return match.group(1)


def test_the_readme_is_a_front_door_of_at_most_300_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines: move history to docs/"


def test_the_readme_says_the_test_command_ci_runs():
    assert ci_test_command() == "python3 packaging/dev.py test"
    assert ci_test_command() in README.read_text(encoding="utf-8")


def test_the_readme_links_the_map_and_the_records():
    links = set(_links(README))
    assert {"ARCHITECTURE.md", "docs/performance.md", "docs/reliability.md"} <= links


@pytest.mark.parametrize("path", ALL_DOCS, ids=_ids(ALL_DOCS))
def test_every_relative_link_and_image_exists(path):
    missing = []
    for target in _links(path):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            missing.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            missing.append(target)
    assert missing == [], f"{path.name} links to what does not exist: {missing}"


@pytest.mark.parametrize("path", [README, ARCHITECTURE], ids=["README.md", "ARCHITECTURE.md"])
def test_every_path_named_in_backticks_exists(path):
    """A path is read from the repository's root, or from the package for core/, ui/ and devtools/."""
    missing = []
    for name in sorted(set(PATH_TOKEN.findall(path.read_text(encoding="utf-8")))):
        if not ((ROOT / name).exists() or (PACKAGE / name).exists()):
            missing.append(name)
    assert missing == [], f"{path.name} names paths that do not exist: {missing}"


@pytest.mark.parametrize("path", ALL_DOCS, ids=_ids(ALL_DOCS))
def test_every_harness_command_named_exists(path):
    names = set(re.findall(r"attention_lab\.devtools\.(\w+)", path.read_text(encoding="utf-8")))
    assert sorted(n for n in names if not (PACKAGE / "devtools" / f"{n}.py").is_file()) == []


def test_the_readme_and_the_map_name_no_command_that_is_gone():
    """The bench is the harness's now; ``attention-lab`` itself has only the window and ``lab``."""
    for path in (README, ARCHITECTURE):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"attention[-_]lab bench\b", text), path.name


def test_the_checks_find_what_they_must():
    assert _slug("Install (workshops: no Python, no internet)") == "install-workshops-no-python-no-internet"
    assert LINK.findall('![a](x/y.png) and [b](ARCHITECTURE.md#the-parts) and [c](https://e.org)') == [
        "x/y.png", "ARCHITECTURE.md#the-parts", "https://e.org"]
    assert PATH_TOKEN.findall("`ui/wiring.py`, `core/jobs.py`, `~/.cache/x`, `resources/measurements/soak-*.json`") == [
        "ui/wiring.py", "core/jobs.py"]
