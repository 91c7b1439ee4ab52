"""Fast checks of the packaging scripts (no PyInstaller build: that is packaging/build_linux.py
followed by packaging/verify_bundle.py, run before each release).

The folder has no ``__init__.py`` on purpose: ``tests/`` is on sys.path and a package
named ``packaging`` would shadow the PyPI library of that name.
"""

from __future__ import annotations

import ast
import configparser
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from packaging_scripts import load

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"
SPEC = PACKAGING / "attention_lab.spec"


fc = load("freeze_config")
entry = load("entry")
build = load("build_linux")


# --------------------------------------------------------------------------- the spec
def _spec_calls() -> dict[str, list[ast.Call]]:
    tree = ast.parse(SPEC.read_text(encoding="utf-8"), filename=str(SPEC))
    calls: dict[str, list[ast.Call]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            calls.setdefault(node.func.id, []).append(node)
    return calls


def _kw(call: ast.Call, name: str) -> ast.expr:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    raise AssertionError(f"{name}= missing from {ast.unparse(call)[:80]}")


def test_spec_is_one_folder_with_entry_excludes_and_source_mode():
    calls = _spec_calls()
    (analysis,) = calls["Analysis"]
    assert "entry.py" in ast.unparse(analysis.args[0])
    assert ast.unparse(_kw(analysis, "excludes")) == "list(fc.EXCLUDED_MODULES)"
    mode = ast.literal_eval(_kw(analysis, "module_collection_mode"))
    assert mode["torch"] == "pyz+py"
    assert "desktop" in ast.unparse(_kw(analysis, "pathex"))
    # one-folder: the EXE leaves binaries to COLLECT (onefile would pass a.binaries to EXE)
    (exe,) = calls["EXE"]
    assert ast.literal_eval(_kw(exe, "exclude_binaries")) is True
    assert ast.literal_eval(_kw(exe, "upx")) is False
    assert len(calls["COLLECT"]) == 1
    assert "fc.APP_NAME" in ast.unparse(_kw(calls["COLLECT"][0], "name"))
    # the trimming actually runs on the analysis output
    text = SPEC.read_text(encoding="utf-8")
    assert "a.binaries = fc.trim(a.binaries" in text and "a.datas = fc.trim(a.datas" in text


@pytest.mark.parametrize("module", [
    "PyQt5", "PyQt6", "tkinter", "PySide6.QtWebEngineCore", "PySide6.QtQml", "PySide6.QtQuick",
    "matplotlib", "IPython", "transformers", "torch._inductor", "pytest",
])
def test_unused_modules_are_excluded(module):
    assert module in fc.EXCLUDED_MODULES


def _imports_by_file(folder: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in folder.rglob("*.py"):
        if "devtools" in path.relative_to(folder).parts:
            continue  # the harness is left out of the bundle whole
        names = found.setdefault(path.relative_to(folder).as_posix(), set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
    return found


def test_the_app_imports_nothing_the_bundle_excludes():
    """Adding e.g. `import transformers` to the app must come with a spec change."""
    clashes = []
    for file, names in _imports_by_file(ROOT / "desktop" / "attention_lab").items():
        for name in names:
            for ex in fc.EXCLUDED_MODULES:
                if (name == ex or name.startswith(ex + ".")) and file not in fc.SOURCE_ONLY_IMPORTS.get(ex, ()):
                    clashes.append(f"{file}: {name}")
    assert not clashes, f"the app imports modules packaging/freeze_config.py excludes: {sorted(clashes)}"


def test_source_only_imports_are_lazy():
    """The developer-only users of an excluded module import it inside functions, so the
    frozen app can import those modules (and fail only when the command is run)."""
    app = ROOT / "desktop" / "attention_lab"
    for module, files in fc.SOURCE_ONLY_IMPORTS.items():
        for file in files:
            tree = ast.parse((app / file).read_text(encoding="utf-8"))
            top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
            names = {a.name for n in top if isinstance(n, ast.Import) for a in n.names}
            names |= {n.module for n in top if isinstance(n, ast.ImportFrom) and n.module}
            assert not any(n == module or n.startswith(module + ".") for n in names), f"{file} imports {module} at the top"


@pytest.mark.parametrize("path, dropped", [
    ("torch/bin/test_api", True),
    ("torch/bin/torch_shm_manager", False),
    ("torch/test/Dict_test", True),
    ("torch/include/ATen/ATen.h", True),
    ("torch/lib/libtorchbind_test.so", True),
    ("torch/lib/libtorch_cpu.so", False),
    ("torch/lib/libgomp.so.1", False),
    ("torch/_C.cpython-311-x86_64-linux-gnu.so", False),
    ("PySide6/Qt/translations/qt_de.qm", True),
    ("PySide6/Qt/translations/qtbase_pt_BR.qm", False),
    ("PySide6/Qt/plugins/platforms/libqxcb.so", False),
    ("PySide6/Qt/plugins/platforms/libqwayland.so", False),
    ("PySide6/Qt/plugins/platforms/libqoffscreen.so", False),
    ("PySide6/Qt/plugins/platforms/libqeglfs.so", True),
    ("PySide6/Qt/plugins/platformthemes/libqgtk3.so", True),
    ("PySide6/Qt/plugins/imageformats/libqsvg.so", False),
    ("PySide6/Qt/lib/libQt6Widgets.so.6", False),
    ("PySide6/Qt/lib/libQt6OpenGL.so.6", False),
    ("PySide6/Qt/qml/QtQuick/qmldir", True),
    ("libcudart.so", True),
    ("resources/demo-model/model.safetensors", False),
    ("resources\\tokenizer\\vocab.json", False),
])
def test_drop_patterns(path, dropped):
    assert fc.is_dropped(path) is dropped


def test_trim_keeps_order_and_reports_what_it_dropped():
    toc = [("torch/bin/test_jit", "/x/test_jit", "BINARY"), ("numpy/a.so", "/x/a.so", "EXTENSION"),
           ("PySide6/Qt/translations/qt_fr.qm", "/x/qt_fr.qm", "DATA"), ("b.txt", "/x/b.txt", "DATA")]
    dropped: list[str] = []
    assert fc.trim(toc, dropped) == [toc[1], toc[3]]
    assert dropped == ["torch/bin/test_jit", "PySide6/Qt/translations/qt_fr.qm"]


def test_prune_keeps_linked_libraries_transitively_and_drops_orphans(tmp_path):
    files = {}
    for name in ("plugin.so", "libA.so.1", "libB.so.2", "liborphan.so.0", "libpython3.11.so.1.0", "ext.so"):
        files[name] = tmp_path / name
        files[name].write_bytes(b"\x7fELF")
    links = {str(files["plugin.so"]): ["libA.so.1"], str(files["libA.so.1"]): ["/usr/lib/libB.so.2"],
             str(files["ext.so"]): ["libc.so.6"]}
    toc = [
        ("PySide6/Qt/plugins/x/plugin.so", str(files["plugin.so"]), "BINARY"),
        ("libA.so.1", str(files["libA.so.1"]), "BINARY"),
        ("libB.so.2", str(files["libB.so.2"]), "BINARY"),
        ("liborphan.so.0", str(files["liborphan.so.0"]), "BINARY"),
        ("libpython3.11.so.1.0", str(files["libpython3.11.so.1.0"]), "BINARY"),
        ("pkg/ext.so", str(files["ext.so"]), "EXTENSION"),
    ]
    dropped: list[str] = []
    kept = fc.prune_unreferenced_libs(toc, lambda src: links.get(src, []), dropped)
    assert [e[0] for e in kept] == ["PySide6/Qt/plugins/x/plugin.so", "libA.so.1", "libB.so.2",
                                    "libpython3.11.so.1.0", "pkg/ext.so"]
    assert dropped == ["liborphan.so.0"]


def test_bundled_resources_land_where_the_frozen_app_looks(tmp_path, monkeypatch):
    """Lay files out as the spec's datas say, pretend to be frozen, and ask core/paths."""
    demo = tmp_path / "demo-src"
    demo.mkdir()
    (demo / "config.json").write_text("{}")
    (demo / "model.safetensors").write_bytes(b"x")
    (demo / ".hidden").write_text("not shipped")
    gpt2 = tmp_path / "gpt2-src"
    gpt2.mkdir()
    (gpt2 / "config.json").write_text("{}")
    meipass = tmp_path / "_internal"
    for src, dest in fc.resource_datas(demo, gpt2):
        src = Path(src)
        target = meipass / dest
        if src.is_dir():
            shutil.copytree(src, target, dirs_exist_ok=True)  # PyInstaller copies a folder's contents
        else:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, target / src.name)
    from attention_lab.core import models, paths

    monkeypatch.delenv("ATTENTION_LAB_RESOURCES", raising=False)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(meipass), raising=False)
    assert paths.resource_dir() == meipass / "resources"
    assert (paths.tokenizer_dir() / "tokenizer.json").is_file()
    assert (models.demo_model_dir() / "model.safetensors").is_file()
    assert not (models.demo_model_dir() / ".hidden").exists()
    assert (paths.bundled_models_dir() / "gpt2" / "config.json").is_file()
    assert (meipass / "resources" / "icons" / "attention-lab.svg").is_file()


def test_bundled_gpt2_is_found_by_the_model_loader(tmp_path, monkeypatch, tiny_checkpoint):
    staged = build.stage_gpt2(tiny_checkpoint, tmp_path / "res" / "models" / "gpt2")
    from attention_lab.core import models

    monkeypatch.setenv("ATTENTION_LAB_RESOURCES", str(tmp_path / "res"))
    monkeypatch.setenv("ATTENTION_LAB_MODELS", str(tmp_path / "no-downloads"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "no-cache"))
    assert models.find_downloaded_model("gpt2") == staged
    assert models.default_model_spec() == "gpt2"
    loaded = models.load_model("gpt2")
    assert loaded.name == "gpt2" and loaded.path == staged


def test_demo_model_source_needs_weights(tmp_path):
    with pytest.raises(SystemExit, match="no demo model"):
        fc.demo_model_source({fc.DEMO_MODEL_ENV: str(tmp_path)})
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"x")
    assert fc.demo_model_source({fc.DEMO_MODEL_ENV: str(tmp_path)}) == tmp_path.resolve()


def test_version_is_the_apps():
    from attention_lab import __version__

    assert fc.read_version() == __version__


# --------------------------------------------------------------------------- entry.py
def test_offline_setup_sets_the_variables_and_a_writable_hf_home(tmp_path):
    env = {"HOME": str(tmp_path)}
    changed = entry.configure_offline(env, platform="linux")
    assert env["HF_HUB_OFFLINE"] == "1"
    assert env["TRANSFORMERS_OFFLINE"] == "1"
    assert env["HF_HUB_DISABLE_TELEMETRY"] == "1"
    hf_home = Path(env["HF_HOME"])
    assert hf_home == tmp_path / ".local" / "share" / "attention-lab" / "huggingface"
    assert hf_home.is_dir() and os.access(hf_home, os.W_OK)
    assert "HF_HUB_CACHE" not in env  # no existing cache to keep reading
    assert changed["HF_HOME"] == str(hf_home)


def test_offline_setup_respects_the_user_and_keeps_an_existing_cache(tmp_path):
    cache = tmp_path / "xdg-cache" / "huggingface" / "hub"
    cache.mkdir(parents=True)
    env = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"), "HF_HUB_OFFLINE": "0",
           "XDG_DATA_HOME": str(tmp_path / "data")}
    entry.configure_offline(env, platform="linux")
    assert env["HF_HUB_OFFLINE"] == "0"  # the user's explicit choice wins
    assert env["HF_HUB_CACHE"] == str(cache)  # a GPT-2 cached by other tools is still found
    assert env["HF_HOME"] == str(tmp_path / "data" / "attention-lab" / "huggingface")


@pytest.mark.parametrize("platform, expected", [
    ("win32", ("Local", "attention-lab")),
    ("darwin", ("Library", "Application Support", "attention-lab")),
    ("linux", (".local", "share", "attention-lab")),
])
def test_user_data_dir_per_platform(tmp_path, platform, expected):
    env = {"HOME": str(tmp_path), "USERPROFILE": str(tmp_path)}
    if platform == "win32":
        env["LOCALAPPDATA"] = str(tmp_path / "Local")
    assert entry.user_data_dir(env, platform) == tmp_path.joinpath(*expected)


def test_entry_switches_huggingface_hub_offline_before_it_is_imported(tmp_path):
    """In a fresh interpreter: importing entry.py loads nothing heavy, and after
    configure_offline() huggingface_hub comes up offline with HF_HOME in the user's folder."""
    code = (
        "import sys, json\n"
        f"sys.path[:0] = [{str(PACKAGING)!r}, {str(ROOT / 'desktop')!r}]\n"
        "import entry\n"
        "early = [m for m in ('huggingface_hub', 'transformers', 'torch', 'attention_lab') if m in sys.modules]\n"
        "entry.configure_offline()\n"
        "import huggingface_hub.constants as c\n"
        "print(json.dumps({'early': early, 'offline': c.HF_HUB_OFFLINE, 'home': c.HF_HOME,\n"
        "                  'telemetry_off': c.HF_HUB_DISABLE_TELEMETRY}))\n"
    )
    env = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["early"] == []
    assert result["offline"] is True and result["telemetry_off"] is True
    assert Path(result["home"]) == tmp_path / ".local" / "share" / "attention-lab" / "huggingface"


# --------------------------------------------------------------------------- Debian files
def _control_fields(text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    last = None
    for line in text.splitlines():
        assert line, "no blank lines inside a control paragraph"
        if line[0] in " \t":
            assert last is not None
            fields[last] += "\n" + line
        else:
            key, sep, value = line.partition(": ")
            assert sep and key and " " not in key, line
            fields[key] = value
            last = key
    return fields


def test_control_file():
    info = build.DebInfo(version="0.1.0", installed_size_kib=812345, glibc="2.36")
    text = build.control_text(info)
    assert text.endswith("\n")
    fields = _control_fields(text)
    assert fields["Package"] == "attention-lab"
    assert fields["Version"] == "0.1.0"
    assert fields["Architecture"] == "amd64"
    assert fields["Installed-Size"] == "812345"
    depends = [d.strip() for d in fields["Depends"].split(",")]
    assert "libc6 (>= 2.36)" in depends
    for lib in ("libegl1", "libgl1", "libxkbcommon0", "libfontconfig1", "libdbus-1-3", "libxcb-cursor0"):
        assert lib in depends
    assert "@" in fields["Maintainer"]
    summary, *body = fields["Description"].split("\n")
    assert summary and len(summary) < 80
    assert body and all(line.startswith(" ") for line in body)


def test_desktop_entry():
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read_string(build.desktop_entry_text())
    entry_ = parser["Desktop Entry"]
    assert entry_["Type"] == "Application"
    assert entry_["Name"] == "Attention Lab"
    assert entry_["Exec"] == "attention-lab" and entry_["Icon"] == "attention-lab"
    assert entry_["Terminal"] == "false"
    assert entry_["Categories"].endswith(";") and "Education" in entry_["Categories"]
    assert "Comment[pt_BR]" in entry_


def test_build_report_is_written_where_the_verify_scripts_read_it(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "DIST", tmp_path)
    build.write_report({"tar_gz": "dist/a.tar.gz", "deb": "dist/a.deb"}, "-gpt2")
    assert json.loads((tmp_path / "build-report-gpt2.json").read_text()) == {"tar_gz": "dist/a.tar.gz", "deb": "dist/a.deb"}


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None, reason="desktop-file-utils not installed")
def test_desktop_entry_passes_desktop_file_validate(tmp_path):
    """verify_bundle.py runs the validator on the .deb's entry: the Debian 12 / Ubuntu 22.04
    one (0.26) rejected the version "1.5" the entry used to declare."""
    path = tmp_path / "attention-lab.desktop"
    path.write_text(build.desktop_entry_text(), encoding="utf-8")
    proc = subprocess.run(["desktop-file-validate", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0 and "error" not in proc.stdout, proc.stdout + proc.stderr


def test_deb_tree_and_package(tmp_path):
    bundle = tmp_path / "dist" / "attention-lab"
    (bundle / "_internal" / "resources").mkdir(parents=True)
    exe = bundle / "attention-lab"
    exe.write_text("#!/bin/sh\necho hi\n")
    exe.chmod(0o700)
    secret = bundle / "_internal" / "resources" / "model.safetensors"
    secret.write_bytes(b"weights")
    secret.chmod(0o600)  # how safetensors writes files: must become world-readable
    info = build.DebInfo(version="0.1.0", installed_size_kib=1)
    root = build.write_deb_tree(tmp_path / "deb-root", bundle, info)

    assert (root / "DEBIAN" / "control").read_text() == build.control_text(info)
    launcher = root / "usr/bin/attention-lab"
    assert launcher.read_text().splitlines()[-1] == 'exec "/opt/attention-lab/attention-lab" "$@"'
    assert stat.S_IMODE(launcher.stat().st_mode) == 0o755
    assert stat.S_IMODE((root / "opt/attention-lab/attention-lab").stat().st_mode) == 0o755
    assert stat.S_IMODE((root / "opt/attention-lab/_internal/resources/model.safetensors").stat().st_mode) == 0o644
    assert (root / "usr/share/applications/attention-lab.desktop").read_text() == build.desktop_entry_text()
    assert (root / "usr/share/icons/hicolor/scalable/apps/attention-lab.svg").is_file()
    assert (root / "usr/share/icons/hicolor/256x256/apps/attention-lab.png").is_file()
    assert "License: MIT" in (root / "usr/share/doc/attention-lab/copyright").read_text()

    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb not installed")
    deb = tmp_path / "x.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", str(root), str(deb)],
                   check=True, capture_output=True)
    field = lambda name: subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True, text=True).stdout.strip()  # noqa: E731
    assert field("Package") == "attention-lab" and field("Version") == "0.1.0"
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True).stdout
    assert "root/root" in listing and "./usr/bin/attention-lab" in listing


def test_stage_gpt2_copies_through_links_and_refuses_the_wrong_model(tmp_path):
    blobs = tmp_path / "blobs"
    blobs.mkdir()
    (blobs / "w").write_bytes(b"weights")
    (blobs / "c").write_text(json.dumps({"model_type": "gpt2"}))
    snap = tmp_path / "snapshot"
    snap.mkdir()
    (snap / "model.safetensors").symlink_to(blobs / "w")
    (snap / "config.json").symlink_to(blobs / "c")
    (snap / "pytorch_model.bin").write_bytes(b"pickle")
    staged = build.stage_gpt2(snap, tmp_path / "staged")
    assert (staged / "model.safetensors").read_bytes() == b"weights"
    assert not (staged / "model.safetensors").is_symlink()
    assert not (staged / "pytorch_model.bin").exists()
    assert json.loads((staged / ".attention-lab-download.json").read_text()) == {"repo_id": "gpt2"}

    (blobs / "c").write_text(json.dumps({"model_type": "llama"}))
    with pytest.raises(SystemExit, match="not a GPT-2"):
        build.stage_gpt2(snap, tmp_path / "staged2")
    (blobs / "c").write_text(json.dumps({"model_type": "gpt2"}))
    (snap / "model.safetensors").unlink()
    with pytest.raises(SystemExit, match="no model.safetensors"):
        build.stage_gpt2(snap, tmp_path / "staged3")


def test_strip_replaces_only_the_listed_libraries_with_copies(tmp_path):
    src = tmp_path / "site" / "libtorch_cpu.so"
    src.parent.mkdir()
    src.write_bytes(b"\x7fELF big")
    other = tmp_path / "site" / "libscipy_openblas64_.so"
    other.write_bytes(b"\x7fELF patched")
    calls = []

    def fake_strip(cmd):
        calls.append(cmd)
        Path(cmd[cmd.index("-o") + 1]).write_bytes(b"\x7fELF small")

    toc = [("torch/lib/libtorch_cpu.so", str(src), "BINARY"), ("numpy.libs/libscipy_openblas64_.so", str(other), "BINARY")]
    if shutil.which("strip") is None:
        pytest.skip("no strip on this machine")
    out = fc.strip_symbols(toc, tmp_path / "work", run=fake_strip)
    assert out[1] == toc[1]  # patchelf'd libraries are left alone
    assert out[0][0] == "torch/lib/libtorch_cpu.so" and Path(out[0][1]).read_bytes() == b"\x7fELF small"
    assert src.read_bytes() == b"\x7fELF big"  # the installed original is untouched
    assert fc.strip_symbols(toc, tmp_path / "work", run=fake_strip)[0] == out[0]
    assert len(calls) == 1  # the stripped copy is reused while the source is unchanged


def test_every_app_module_is_a_hidden_import():
    """The main window loads its panels with importlib: each must be named to PyInstaller."""
    modules = set(fc.app_modules())
    assert {"attention_lab", "attention_lab.app", "attention_lab.ui.launch", "attention_lab.core.lens"} <= modules
    from attention_lab.ui import main_window

    panel_modules = {spec[0] for spec in main_window.PANEL_MODULES}
    panels = ROOT / "desktop" / "attention_lab" / "ui" / "panels"
    on_disk = {f"attention_lab.ui.panels.{p.stem}" for p in panels.glob("*.py") if p.stem != "__init__"}
    assert on_disk and on_disk <= modules
    assert panel_modules and panel_modules <= modules
    assert "hiddenimports=fc.app_modules()" in SPEC.read_text(encoding="utf-8")


def test_glibc_floor_is_read_from_objdump_output(tmp_path):
    sample = (
        "0000000000000000      DF *UND*  0000000000000000 (GLIBC_2.2.5) free\n"
        "0000000000000000      DF *UND*  0000000000000000 (GLIBC_2.35) __libc_start_main\n"
        "0000000000000000      DF *UND*  0000000000000000 (GLIBCXX_3.4.29) _ZSt4cout\n"
    )
    assert build.glibc_versions(sample) == [(2, 2), (2, 35)]
    if shutil.which("objdump") is None:
        pytest.skip("no objdump")
    shutil.copy(os.path.realpath(sys.executable), tmp_path / "python")
    (tmp_path / "notes.txt").write_text("not an ELF file")
    major, minor = (int(x) for x in build.required_glibc(tmp_path).split("."))
    assert (major, minor) > (2, 17)  # any real executable needs more than the floor
