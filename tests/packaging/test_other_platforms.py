"""The Windows and macOS code paths of packaging/, run here with their platform arguments:
where the installed app's executables are, a fresh user's environment, the per-user data
folder (checked against packaging/entry.py), how a run is kept offline, the download
process check, the size goals, the Inno Setup script's and the .dmg script's inputs, and
how the build finds Inno Setup and torch's CPU build.  The runs themselves happen on the
release workflow's hosted runners."""

from __future__ import annotations

import json
import os
import plistlib
import re
import subprocess
import sys
import urllib.request
from pathlib import Path, PureWindowsPath

import pytest
from packaging_scripts import load

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"
ISS = PACKAGING / "windows" / "attention-lab.iss"
DMG_SCRIPT = PACKAGING / "macos" / "build_dmg.sh"
PLATFORMS = ("linux", "win32", "darwin")


fc = load("freeze_config", "_al_platforms")
entry = load("entry", "_al_platforms")
va = load("verify_app", "_al_platforms")
bw = load("build_windows", "_al_platforms")
dev = load("dev", "_al_platforms")


# --------------------------------------------------------------------------- the installed app
def _spec_text() -> str:
    return (PACKAGING / "attention_lab.spec").read_text(encoding="utf-8")


def test_executables_are_the_ones_the_spec_builds(tmp_path):
    spec = _spec_text()
    assert 'make_exe(fc.APP_NAME, console=not (IS_WIN or IS_MAC))' in spec  # the app: windowed on Windows/macOS
    assert 'make_exe(f"{fc.APP_NAME}-cli", console=True)' in spec  # its console twin there
    assert 'name=f"{fc.DISPLAY_NAME}.app"' in spec and va.MAC_APP == f"{fc.DISPLAY_NAME}.app"
    assert va.executables(tmp_path, "win32") == (tmp_path / "attention-lab.exe", tmp_path / "attention-lab-cli.exe")
    app = tmp_path / "Attention Lab.app"
    assert va.executables(app, "darwin") == (app / "Contents/MacOS/attention-lab", app / "Contents/MacOS/attention-lab-cli")
    assert va.executables(tmp_path, "linux") == (tmp_path / "attention-lab",) * 2
    with pytest.raises(SystemExit):
        va.executables(tmp_path, "sunos5")


@pytest.mark.parametrize("platform", PLATFORMS)
def test_fresh_user_environment_carries_nothing_from_this_shell(tmp_path, monkeypatch, platform):
    for name in ("PYTHONPATH", "PYTHONHOME", "HF_HOME", "HF_HUB_CACHE", "HF_HUB_OFFLINE", "ATTENTION_LAB_RESOURCES",
                 "VIRTUAL_ENV", "XDG_DATA_HOME"):
        monkeypatch.setenv(name, "/leak")
    env = va.clean_env(tmp_path, platform)
    assert "/leak" not in env.values()
    assert not [k for k in env if k.startswith(("PYTHON", "HF_", "ATTENTION_LAB", "VIRTUAL_ENV", "XDG_"))]
    assert env["QT_QPA_PLATFORM"] == "offscreen"
    assert (tmp_path / "tmp").is_dir()
    if platform == "win32":
        assert {"SYSTEMROOT", "USERPROFILE", "LOCALAPPDATA", "APPDATA", "TEMP", "TMP"} <= set(env)
        assert env["LOCALAPPDATA"] == str(tmp_path / "AppData" / "Local") and "HOME" not in env
        assert PureWindowsPath(env["PATH"].split(";")[0]).name == "System32"
    else:
        assert env["HOME"] == str(tmp_path) and env["TMPDIR"] == str(tmp_path / "tmp")


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_checked_data_folder_is_where_the_launcher_puts_hf_home(tmp_path, platform):
    """verify_app writes the folder out on its own; packaging/entry.py, given the same fresh
    user's environment and platform, must put HF_HOME exactly there."""
    env = va.clean_env(tmp_path, platform)
    expected = va.expected_hf_home(env, platform)
    launched = dict(env)
    entry.configure_offline(launched, platform=platform)
    assert Path(launched["HF_HOME"]) == expected and expected.is_dir()
    assert launched["HF_HUB_OFFLINE"] == "1" and launched["HF_HUB_DISABLE_TELEMETRY"] == "1"
    assert tmp_path in expected.parents
    assert {"win32": "Local", "darwin": "Application Support", "linux": "share"}[platform] in expected.parts


# --------------------------------------------------------------------------- offline
@pytest.mark.parametrize("platform", ("win32", "darwin"))
def test_where_the_network_stays_on_runs_get_hf_offline_and_the_blocked_proxy(platform):
    with va.BlockedProxy() as proxy:
        offline = va.offline_setup(platform, proxy)
        assert offline.prefix == [] and not offline.isolated
        assert offline.env["HF_HUB_OFFLINE"] == "1"
        assert all(offline.env[name] == proxy.url for name in va.PROXY_VARS)
        assert offline.env["NO_PROXY"] == "" == offline.env["no_proxy"]  # not even loopback goes around it


def test_linux_runs_in_a_namespace_or_say_they_are_not_isolated():
    with va.BlockedProxy() as proxy:
        isolated = va.offline_setup("linux", proxy, prefix=["unshare", "-rn"])
        assert isolated.prefix == ["unshare", "-rn"] and isolated.env == {} and isolated.isolated
        fallback = va.offline_setup("linux", proxy, prefix=[])
        assert fallback.prefix == [] and not fallback.isolated and fallback.env["HF_HUB_OFFLINE"] == "1"


def test_blocked_proxy_refuses_and_records_a_request_through_it():
    with va.BlockedProxy() as proxy:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy.url, "https": proxy.url}))
        with pytest.raises(OSError):
            opener.open("http://huggingface.co/api/models/gpt2", timeout=10)
        assert proxy.attempts and "huggingface.co" in proxy.attempts[0]
        checks = va.Checks()
        va.check_proxy_untouched(checks, proxy)
        assert not checks.ok


# --------------------------------------------------------------------------- download, sizes
def _source_app() -> tuple[list[str], dict[str, str]]:
    """The app from this checkout stands in for the installed executable."""
    return [sys.executable, "-m", "attention_lab"], {"PYTHONPATH": str(ROOT / "desktop")}


@pytest.mark.parametrize("platform", ("linux", "win32", "darwin"))
def test_download_check_passes_for_the_real_download_process(tmp_path, platform):
    """With each platform's fresh-user environment (on Windows: no HOME, the AppData folders)."""
    argv0, extra = _source_app()
    extra["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")  # another system's PATH finds nothing here
    checks = va.Checks()
    with va.BlockedProxy() as proxy:
        va.check_download(checks, "source", argv0, tmp_path, proxy, platform, extra_env=extra, timeout=120)
        va.check_proxy_untouched(checks, proxy)
    assert checks.ok, json.dumps(checks.results, indent=1)
    assert [r["check"] for r in checks.results] == [
        "source: download process finished", "source: downloaded files are the served bytes, in the given cache",
        "source: nothing the app must leave was asked for", "no connection reached the blocked proxy"]


def test_download_check_fails_when_the_process_fetches_nothing(tmp_path):
    checks = va.Checks()
    with va.BlockedProxy() as proxy:
        va.check_download(checks, "fake", [sys.executable, "-c", "print('{\"started\": true}')"], tmp_path, proxy,
                          "linux", extra_env={"PATH": os.environ.get("PATH", "")}, timeout=60)
    assert not checks.ok and checks.results[0]["check"] == "fake: download process finished"


def test_report_and_exit_status(tmp_path):
    passed, failed, empty = va.Checks(), va.Checks(), va.Checks()
    passed.record("a", True)
    failed.record("a", True)
    failed.record("b", False, "why")
    assert va.finish(passed, tmp_path / "r.json", 0.0, "net", platform="win32") == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["ok"] and report["platform"] == "win32" and report["network"] == "net" and len(report["checks"]) == 1
    assert va.finish(failed, tmp_path / "f.json", 0.0, "net") == 1
    assert va.finish(empty, tmp_path / "e.json", 0.0, "net") == 1  # nothing checked is no pass


def test_size_goals():
    checks = va.Checks()
    va.check_sizes(checks, 660_000_000, {"a.tar.gz": 240_000_000, "a.deb": 239_000_000}, with_gpt2=False)
    assert checks.ok and len(checks.results) == 3
    over = va.Checks()
    va.check_sizes(over, 1_200_000_000, {"setup.exe": 460_000_000}, with_gpt2=False)
    assert [r["ok"] for r in over.results] == [False, False]
    gpt2 = va.Checks()
    va.check_sizes(gpt2, 1_200_000_000, {"a.dmg": 750_000_000}, with_gpt2=True)
    assert gpt2.ok and "no goal" in gpt2.results[0]["check"]


# --------------------------------------------------------------------------- Windows: the .iss
def _iss_defines_and_setup() -> tuple[dict[str, str], dict[str, str]]:
    text = ISS.read_text(encoding="utf-8")
    defines = dict(re.findall(r'^\s*#define (\w+) "([^"]*)"', text, re.M))
    setup_text = text.split("[Setup]", 1)[1].split("\n[", 1)[0]
    setup = dict(re.findall(r"^(\w+)=(.*)$", setup_text, re.M))
    return defines, setup


def _from_iss(relative: str) -> Path:
    """An .iss path (relative to the script's folder, Windows separators) on this machine."""
    return (ISS.parent / Path(*PureWindowsPath(relative).parts)).resolve()


def test_iss_inputs_are_what_the_build_makes():
    defines, setup = _iss_defines_and_setup()
    assert defines["AppName"] == fc.DISPLAY_NAME
    assert defines["AppExe"] == va.executables(Path("x"), "win32")[0].name
    assert defines["AppVersion"] == fc.read_version()  # the default; build_windows.py passes /DAppVersion
    assert _from_iss(defines["Bundle"]) == (ROOT / "dist" / fc.APP_NAME).resolve()  # the spec's COLLECT folder
    assert _from_iss(setup["OutputDir"]) == (ROOT / "dist").resolve()
    assert setup["OutputBaseFilename"].replace("{#AppVersion}", "9.8.7") + ".exe" == bw.setup_name("9.8.7")
    assert _from_iss(setup["SetupIconFile"]).is_file() and _from_iss(setup["LicenseFile"]).is_file()
    assert setup["PrivilegesRequired"] == "lowest"  # no administrator on a workshop laptop
    assert "{autoprograms}\\{#AppName}" in ISS.read_text(encoding="utf-8")
    assert va.start_menu_shortcut({"APPDATA": "C:/Users/a/AppData/Roaming"}).name == f"{fc.DISPLAY_NAME}.lnk"


def test_silent_install_is_per_user_into_the_given_folder(tmp_path):
    cmd = va.inno_install_command(tmp_path / "setup.exe", tmp_path / "target", tmp_path / "log.txt")
    assert cmd[0] == str(tmp_path / "setup.exe")
    assert {"/VERYSILENT", "/SUPPRESSMSGBOXES", "/NORESTART", "/CURRENTUSER", "/TASKS="} <= set(cmd)
    assert f"/DIR={tmp_path / 'target'}" in cmd and f"/LOG={tmp_path / 'log.txt'}" in cmd
    assert va.inno_uninstall_command(tmp_path)[0] == str(tmp_path / "unins000.exe")


def test_iscc_is_found_and_given_the_version(tmp_path):
    assert bw.find_iscc({"ISCC": "D:/tools/ISCC.exe"}, which=lambda _: None) == Path("D:/tools/ISCC.exe")
    assert bw.find_iscc({}, which=lambda name: "/opt/bin/iscc" if name == "iscc" else None) == Path("/opt/bin/iscc")
    assert bw.find_iscc({"ProgramFiles(x86)": str(tmp_path)}, which=lambda _: None) is None
    compiler = tmp_path / "Inno Setup 6" / "ISCC.exe"
    compiler.parent.mkdir()
    compiler.write_bytes(b"MZ")
    assert bw.find_iscc({"ProgramFiles(x86)": str(tmp_path)}, which=lambda _: None) == compiler
    per_user = tmp_path / "local"
    (per_user / "Programs" / "Inno Setup 6").mkdir(parents=True)
    (per_user / "Programs" / "Inno Setup 6" / "ISCC.exe").write_bytes(b"MZ")
    assert bw.find_iscc({"LOCALAPPDATA": str(per_user)}, which=lambda _: None).parent.parent == per_user / "Programs"
    assert bw.iscc_command(compiler, "1.2.3") == [str(compiler), "/DAppVersion=1.2.3", "/Q", str(ISS)]


# --------------------------------------------------------------------------- macOS: the .dmg script
def test_dmg_script_reads_the_apps_version_and_names_what_the_workflow_uploads(tmp_path):
    text = DMG_SCRIPT.read_text(encoding="utf-8")
    sed = re.search(r"VERSION=\$\(sed -n '([^']+)' desktop/attention_lab/__init__.py\)", text)
    assert sed, "build_dmg.sh reads the version with sed"
    out = subprocess.run(["sed", "-n", sed.group(1), str(ROOT / "desktop/attention_lab/__init__.py")],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == fc.read_version()
    assert f'APP="dist/{va.MAC_APP}"' in text
    assert 'DMG="dist/attention-lab-${VERSION}-macos-${ARCH}.dmg"' in text
    assert "--smoke-test --all-panels" in text
    assert '"dmg": "%s"' in text and '"app": "%s"' in text  # dist/build-report.json, read by verify_app.py
    subprocess.run(["bash", "-n", str(DMG_SCRIPT)], check=True)
    subprocess.run(["bash", "-n", str(PACKAGING / "macos" / "import_signing_identity.sh")], check=True)


def test_dmg_attach_is_read_only_and_hidden():
    cmd = va.dmg_attach_command(Path("/x/a.dmg"), Path("/tmp/m"))
    assert cmd[:2] == ["hdiutil", "attach"] and {"-readonly", "-nobrowse", "-noautoopen"} <= set(cmd)
    assert cmd[-3:] == ["-mountpoint", "/tmp/m", "/x/a.dmg"]


def test_signing_entitlements_are_a_valid_plist():
    with open(PACKAGING / "macos" / "entitlements.plist", "rb") as handle:
        entitlements = plistlib.load(handle)
    assert entitlements == {"com.apple.security.cs.allow-unsigned-executable-memory": True,
                            "com.apple.security.cs.disable-library-validation": True}
    assert "--entitlements packaging/macos/entitlements.plist" in DMG_SCRIPT.read_text(encoding="utf-8")


def test_report_names_the_installer_verify_app_checks(tmp_path, monkeypatch):
    monkeypatch.setattr(va, "DIST", tmp_path)
    (tmp_path / "build-report.json").write_text(json.dumps({"installer": "dist/x-setup.exe", "dmg": "dist/x.dmg"}))
    assert va.default_installer("win32") == va.ROOT / "dist/x-setup.exe"
    assert va.default_installer("darwin") == va.ROOT / "dist/x.dmg"
    with pytest.raises(SystemExit, match="verify_bundle"):
        va.default_installer("linux")


# --------------------------------------------------------------------------- torch, and the claims
@pytest.mark.parametrize("platform, first", [
    ("linux", "torch==2.13.0+cpu"),  # PyPI's Linux torch is the CUDA build
    ("win32", "torch==2.13.0"),
    ("darwin", "torch==2.13.0"),
])
def test_torch_is_the_cpu_build_on_every_platform(platform, first):
    attempts = dev.torch_install_attempts(platform)
    assert attempts[0] == [first]
    assert attempts[-1] == [dev.TORCH, "--index-url", "https://download.pytorch.org/whl/cpu"]


def test_windows_and_mac_scripts_say_what_checks_them_and_that_it_has_not_run_yet():
    for path in (ISS, DMG_SCRIPT):
        text = path.read_text(encoding="utf-8")
        assert "UNTESTED" not in text and "never run" not in text, path
        assert "release workflow" in text and ".github/workflows/installers.yml" in text, path
        assert "not yet run" in text, path
