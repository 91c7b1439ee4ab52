"""The release workflow (.github/workflows/installers.yml): actionlint finds nothing, and
every job runs the repository's own packaging scripts, names its check and uploads what
the build script makes."""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from packaging_scripts import load

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"
WORKFLOW = ROOT / ".github" / "workflows" / "installers.yml"


fc = load("freeze_config", "_al_workflow")
build_windows = load("build_windows", "_al_workflow")


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def _runs(job: dict) -> list[str]:
    return [step["run"] for step in job["steps"] if "run" in step]


def _uploads(job: dict) -> list[dict]:
    return [step["with"] for step in job["steps"] if str(step.get("uses", "")).startswith("actions/upload-artifact@")]


def _actionlint() -> str | None:
    """The actionlint binary of the test extra (beside this interpreter), else on PATH."""
    return shutil.which("actionlint", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))


def test_actionlint_finds_nothing():
    actionlint = _actionlint()
    assert actionlint, "actionlint is missing: it comes with the test extra (pip install -e '.[test]')"
    proc = subprocess.run([actionlint, "-no-color", str(WORKFLOW)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_would_catch_a_broken_workflow(tmp_path):
    """The check can fail: an unknown runner label and an undefined expression are reported."""
    actionlint = _actionlint()
    assert actionlint
    broken = WORKFLOW.read_text(encoding="utf-8").replace("runs-on: macos-14", "runs-on: macos-toaster", 1)
    broken = broken.replace("${{ github.ref }}", "${{ github.reff }}", 1)
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    path = tmp_path / ".github" / "workflows" / "installers.yml"
    path.write_text(broken, encoding="utf-8")
    proc = subprocess.run([actionlint, "-no-color", str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "macos-toaster" in proc.stdout and "reff" in proc.stdout


def test_triggers_are_a_version_tag_and_by_hand():
    on = _workflow().get("on", _workflow().get(True))  # YAML 1.1 reads a bare `on` as true
    assert on["push"]["tags"] == ["v*"]
    assert "workflow_dispatch" in on
    assert set(on) == {"push", "workflow_dispatch"}


def test_one_job_per_platform_on_hosted_runners():
    jobs = _workflow()["jobs"]
    assert {name: job["runs-on"].split("-")[0] for name, job in jobs.items()} == {
        "linux": "ubuntu", "windows": "windows", "macos": "macos"}
    assert jobs["macos"]["runs-on"] == "macos-14"  # Apple silicon (torch has no Intel Mac wheels)


def test_every_run_step_is_a_script_of_the_repository():
    """A job's commands are the packaging scripts (runnable by hand), each of which exists;
    no step is a placeholder."""
    for name, job in _workflow()["jobs"].items():
        for run in _runs(job):
            scripts = re.findall(r"packaging/[\w/.-]+\.(?:py|sh|ps1)", run)
            assert scripts, f"{name}: a step that runs no packaging script: {run!r}"
            for script in scripts:
                assert (ROOT / script).is_file(), f"{name}: {script} does not exist"
            assert not re.search(r"TODO|FIXME|echo .*skip", run, re.I), run
        for step in job["steps"]:
            assert "run" in step or "uses" in step, step


def _script_calls(job: dict) -> list[str]:
    return [" ".join(run.split()) for run in _runs(job)]


def test_linux_job_runs_the_release_commands():
    calls = _script_calls(_workflow()["jobs"]["linux"])
    assert calls == ["bash packaging/linux_build_deps.sh", "python packaging/build_linux.py",
                     "python packaging/verify_bundle.py --require-offline"]


def test_windows_job_builds_with_iscc_then_installs_and_checks():
    job = _workflow()["jobs"]["windows"]
    calls = _script_calls(job)
    assert calls[-2:] == ["python packaging/build_windows.py", "python packaging/verify_app.py"]
    assert build_windows.ISS == PACKAGING / "windows" / "attention-lab.iss" and build_windows.ISS.is_file()
    assert calls[0] == "./packaging/windows/install_inno_setup.ps1"  # iscc itself, 6.3 or newer


def test_macos_job_builds_the_dmg_then_checks_it_and_signs_only_with_a_secret():
    job = _workflow()["jobs"]["macos"]
    calls = _script_calls(job)
    assert calls[-3:] == ["python packaging/dev.py setup", "bash packaging/macos/build_dmg.sh",
                          "python packaging/verify_app.py"]
    assert job["env"]["CODESIGN_IDENTITY"] == "${{ secrets.MACOS_CODESIGN_IDENTITY }}"
    signing = next(step for step in job["steps"] if "import_signing_identity.sh" in step.get("run", ""))
    assert signing["if"] == "${{ env.CODESIGN_IDENTITY != '' }}"


@pytest.mark.parametrize("job, produced", [
    ("linux", [f"dist/{fc.APP_NAME}-{fc.read_version()}-linux-x86_64.tar.gz", f"dist/{fc.APP_NAME}_{fc.read_version()}_amd64.deb"]),
    ("windows", [f"dist/{build_windows.setup_name(fc.read_version())}"]),
    ("macos", [f"dist/{fc.APP_NAME}-{fc.read_version()}-macos-arm64.dmg"]),
])
def test_uploads_match_what_the_build_makes(job, produced):
    uploads = _uploads(_workflow()["jobs"][job])
    installers = next(u for u in uploads if u["if-no-files-found"] == "error")
    patterns = installers["path"].split()
    for path in produced:
        assert any(fnmatch.fnmatch(path, pattern) for pattern in patterns), (path, patterns)
    assert any(u["path"] == "dist/*.json" for u in uploads)  # the build and check reports
