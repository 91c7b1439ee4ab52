"""What goes into the frozen Attention Lab and what is left out (read by attention_lab.spec).

Plain Python with no PyInstaller import, so the rules can be unit-tested without a build.
Every exclusion here was checked by running the frozen app's ``--smoke-test`` and
``lab --json`` (packaging/verify_bundle.py); the runtime import trace that chose them is
in the README's packaging notes.

Build options come from the environment (the spec is executed by PyInstaller, which has
no options of its own for them; packaging/build_linux.py sets them):

- ``ATTENTION_LAB_DEMO_MODEL``: the demo model folder to bundle (default resources/demo-model);
- ``ATTENTION_LAB_BUNDLE_GPT2``: a GPT-2 folder (HF format, safetensors) to bundle as "gpt2".
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path
from typing import Callable, Iterable, Sequence

ROOT = Path(__file__).resolve().parents[1]
APP_NAME = "attention-lab"          # executable, folder, Debian package
DISPLAY_NAME = "Attention Lab"
BUNDLE_ID = "org.attentionlab.AttentionLab"
DEMO_MODEL_ENV = "ATTENTION_LAB_DEMO_MODEL"
GPT2_ENV = "ATTENTION_LAB_BUNDLE_GPT2"

# Where resources land inside the bundle: core/paths.resource_dir() looks for
# sys._MEIPASS/"resources" (one-folder mode: <app>/_internal/resources).
RESOURCES_DEST = "resources"
BUNDLED_GPT2_DEST = f"{RESOURCES_DEST}/models/gpt2"

# Top-level and sub-packages the app never imports.  Found by tracing sys.modules after
# `lab --json` and `--smoke-test` (plus the explicit-download code path): PyInstaller's
# torch hook asks for *every* torch submodule, which drags in the compiler stack
# (_inductor, _dynamo -> sympy, jinja2, networkx), transformers (through torch's
# optional integrations) and test frameworks.
EXCLUDED_MODULES: tuple[str, ...] = (
    # a second Qt binding, other GUI toolkits
    "PyQt5", "PyQt6", "PySide2", "tkinter", "_tkinter", "turtle", "turtledemo", "idlelib",
    # Qt modules the app and pyqtgraph don't use (pyqtgraph tolerates a missing QtTest)
    "PySide6.QtNetwork", "PySide6.QtTest", "PySide6.QtDBus", "PySide6.QtQml", "PySide6.QtQuick",
    "PySide6.QtQuickWidgets", "PySide6.QtQuickControls2", "PySide6.QtQuick3D",
    "PySide6.QtWebEngineCore", "PySide6.QtWebEngineWidgets", "PySide6.QtWebEngineQuick",
    "PySide6.QtWebChannel", "PySide6.QtWebSockets", "PySide6.QtMultimedia", "PySide6.QtPdf",
    "PySide6.QtDesigner", "PySide6.QtUiTools", "PySide6.QtHelp", "PySide6.QtSql", "PySide6.QtXml",
    "PySide6.QtConcurrent", "PySide6.scripts",
    # transformers is not used at run time: the lens is the app's own GPT-2 (core/lens.py)
    "transformers", "tiktoken",
    # torch's compiler/export/ONNX stacks: never reached by eager CPU inference
    "torch._inductor", "torch._dynamo", "torch.onnx", "torch.utils.tensorboard",
    "torch.utils.benchmark", "torch.utils.bottleneck", "torch.contrib",
    "torch.testing._internal.distributed", "torch.testing._internal.opinfo",
    "torch.testing._internal.optests", "torch.testing._internal.generated",
    "torch.testing._internal.test_module", "torch.testing._internal.codegen",
    "torch.testing._internal.common_methods_invocations",
    "torch.testing._internal.common_modules", "torch.testing._internal.common_nn",
    "functorch.dim",
    "sympy", "mpmath", "networkx", "jinja2", "markupsafe",
    # test, notebook and plotting stacks
    "pytest", "_pytest", "pytestqt", "hypothesis", "IPython", "ipykernel", "jupyter_client",
    "notebook", "matplotlib", "pandas", "scipy", "sklearn", "PIL", "cv2", "triton",
    # the harness (learner driver, soak, probes, bench): run from a source checkout only
    "attention_lab.devtools",
    # optional extras of dependencies
    "rich", "pydantic", "pydantic_core", "typer", "click", "setuptools", "pkg_resources", "pip",
)

# Excluded modules that app modules may still import, lazily, in commands the installer's
# user never runs: GPT-2 small's shapes with random weights are built with transformers'
# config class only from a source checkout (the frozen app reports the missing module).
SOURCE_ONLY_IMPORTS: dict[str, tuple[str, ...]] = {
    "transformers": ("core/checkpoints.py",),
}

# Paths inside the bundle (forward slashes, relative to _internal/) that are dropped after
# analysis.  Checked against binaries and data files alike.
DROP_PATTERNS: tuple[str, ...] = (
    # torch: C++ test executables and test data, headers, cmake files, test libraries
    "torch/test/*",
    "torch/bin/*",
    "torch/include/*",
    "torch/share/*",
    "torch/lib/libtorchbind_test.*", "torch/lib/libjitbackend_test.*",
    "torch/lib/libbackend_with_compiler.*", "torch/lib/libaoti_custom_ops.*",
    "torch/lib/torchbind_test.*", "torch/lib/jitbackend_test.*",
    "torch/lib/backend_with_compiler.*", "torch/lib/aoti_custom_ops.*",
    "torch/_inductor/*",
    "libcudart.so*",  # found by a ctypes scan of the (excluded) inductor; no CUDA here
    # Qt translations: the app translates itself (ui/i18n.py); only Qt's own Brazilian
    # Portuguese strings (standard dialog buttons) are kept, see KEEP_PATTERNS
    "PySide6/Qt/translations/*",
    "PySide6/translations/*",
    # Qt plugins for platforms a desktop app doesn't run on, and features it doesn't use
    "PySide6/Qt/plugins/platforms/libqeglfs*", "PySide6/Qt/plugins/platforms/libqlinuxfb*",
    "PySide6/Qt/plugins/platforms/libqminimalegl*", "PySide6/Qt/plugins/platforms/libqvnc*",
    "PySide6/Qt/plugins/platforms/libqvkkhrdisplay*",
    "PySide6/Qt/plugins/egldeviceintegrations/*",
    "PySide6/Qt/plugins/generic/*",
    "PySide6/Qt/plugins/networkinformation/*",
    "PySide6/Qt/plugins/tls/*",
    # the GTK3 theme plugin would load the system's GTK against bundled GLib; Qt's own
    # dialogs and the xdg-desktop-portal theme stay
    "PySide6/Qt/plugins/platformthemes/libqgtk3*",
    "PySide6/Qt/plugins/imageformats/*tiff*", "PySide6/Qt/plugins/imageformats/*webp*",
    "PySide6/Qt/plugins/imageformats/*tga*", "PySide6/Qt/plugins/imageformats/*wbmp*",
    "PySide6/Qt/plugins/imageformats/*icns*", "PySide6/Qt/plugins/imageformats/*pdf*",
    "PySide6/Qt/plugins/qmltooling/*", "PySide6/Qt/qml/*",
    # Qt libraries only needed by the dropped plugins/modules
    "PySide6/Qt/lib/libQt6EglFS*", "libQt6EglFS*",
    "PySide6/Qt/lib/libQt6Test*", "libQt6Test*",
    "PySide6/Qt/lib/libQt6Network*", "libQt6Network*",
    "PySide6/Qt/lib/libQt6Qml*", "PySide6/Qt/lib/libQt6Quick*",
    # Windows/macOS names of the same Qt pieces (the spec is shared)
    "PySide6/Qt6Test.dll", "PySide6/Qt6Network.dll", "PySide6/Qt6Qml*.dll", "PySide6/Qt6Quick*.dll",
    "PySide6/opengl32sw.dll",  # software OpenGL fallback, 20 MB; pyqtgraph draws with QPainter
    "PySide6/plugins/platforms/qdirect2d.dll",
    "PySide6/plugins/generic/*", "PySide6/plugins/networkinformation/*", "PySide6/plugins/tls/*",
    "PySide6/Qt/lib/QtTest.framework/*", "PySide6/Qt/lib/QtNetwork.framework/*",
    "PySide6/Qt/lib/QtQml*.framework/*", "PySide6/Qt/lib/QtQuick*.framework/*",
)

# Linux libraries whose symbol tables are stripped (~100 MB off libtorch_cpu/libtorch_python).
# Not PyInstaller's global strip=True: it corrupts libraries that auditwheel patched with
# patchelf (numpy's OpenBLAS: "ELF load command address/offset not page-aligned").
STRIP_PATTERNS: tuple[str, ...] = (
    "torch/lib/libtorch_cpu.so",
    "torch/lib/libtorch_python.so",
    "torch/lib/libc10.so",
    "libpython3*.so*",  # CPython's own build: no patchelf involved
    "python3*/lib-dynload/*.so",
)

# Exceptions to DROP_PATTERNS.
KEEP_PATTERNS: tuple[str, ...] = (
    "torch/bin/torch_shm_manager",  # `import torch` checks that it exists
    "PySide6/Qt/translations/qtbase_pt_BR.qm",
    "PySide6/Qt/translations/qt_pt_BR.qm",
    "PySide6/translations/qtbase_pt_BR.qm",
    "PySide6/translations/qt_pt_BR.qm",
)

# Distribution metadata some packages read at run time with importlib.metadata.
METADATA_PACKAGES: tuple[str, ...] = ("torch", "tokenizers", "safetensors", "huggingface_hub", "numpy", "tqdm", "filelock", "pyqtgraph")


def normalize(dest: str) -> str:
    return dest.replace("\\", "/").lstrip("./")


def is_dropped(dest: str) -> bool:
    """True when a bundle path matches DROP_PATTERNS and no KEEP_PATTERNS."""
    path = normalize(dest)
    if any(fnmatch.fnmatchcase(path, pat) for pat in KEEP_PATTERNS):
        return False
    return any(fnmatch.fnmatchcase(path, pat) for pat in DROP_PATTERNS)


def trim(toc: Iterable[tuple], dropped: list[str] | None = None) -> list[tuple]:
    """Entries of a PyInstaller TOC ``(dest, src, typecode)`` that survive DROP_PATTERNS."""
    kept = []
    for entry in toc:
        if is_dropped(entry[0]):
            if dropped is not None:
                dropped.append(normalize(entry[0]))
        else:
            kept.append(entry)
    return kept


def strip_symbols(toc: Iterable[tuple], workdir: Path, run: Callable[[list[str]], object] | None = None) -> list[tuple]:
    """Replace the STRIP_PATTERNS entries' sources by ``strip --strip-unneeded`` copies in
    ``workdir`` (the originals in site-packages are never touched)."""
    import shutil
    import subprocess

    if run is None:

        def run(cmd: list[str]) -> None:
            subprocess.run(cmd, check=True)

    out = []
    for entry in toc:
        dest, src = normalize(entry[0]), entry[1]
        if any(fnmatch.fnmatchcase(dest, pat) for pat in STRIP_PATTERNS) and shutil.which("strip"):
            target = Path(workdir) / "stripped" / dest
            stamp = target.with_name(target.name + ".source")
            key = f"{src} {os.path.getsize(src)} {os.path.getmtime(src)}"
            if not target.is_file() or not stamp.is_file() or stamp.read_text() != key:
                target.parent.mkdir(parents=True, exist_ok=True)
                run(["strip", "--strip-unneeded", "-o", str(target), src])
                stamp.write_text(key)
            entry = (entry[0], str(target), *entry[2:])
        out.append(entry)
    return out


def _is_shared_lib(dest: str) -> bool:
    return bool(re.search(r"\.so(\.\d+)*$", dest))


def prune_unreferenced_libs(
    binaries: Sequence[tuple],
    imports_of: Callable[[str], Iterable[str]],
    dropped: list[str] | None = None,
) -> list[tuple]:
    """Drop system libraries that no kept binary links against any more (Linux only).

    PyInstaller collects a plugin's link-time dependencies during analysis; after
    :func:`trim` drops the plugin, its dependencies (the GTK theme pulls cairo, pango,
    atk...) stay behind.  Roots are everything that is not a top-level ``lib*.so*``
    library; a top-level library is kept when a kept binary links against it (by name,
    transitively).  ``imports_of(src)`` returns the sonames a file links against.
    """
    def candidate(entry: tuple) -> bool:
        dest = normalize(entry[0])
        return "/" not in dest and dest.startswith("lib") and _is_shared_lib(dest) and not dest.startswith("libpython")

    by_name = {normalize(e[0]): e for e in binaries if candidate(e)}
    needed: set[str] = set()
    queue = [e for e in binaries if not candidate(e)]
    seen: set[str] = set()
    while queue:
        entry = queue.pop()
        src = entry[1]
        if src in seen or not src or not os.path.isfile(src):
            continue
        seen.add(src)
        for soname in imports_of(src):
            name = os.path.basename(soname)
            if name not in needed:
                needed.add(name)
                if name in by_name:
                    queue.append(by_name[name])
    kept = []
    for entry in binaries:
        dest = normalize(entry[0])
        if candidate(entry) and dest not in needed:
            if dropped is not None:
                dropped.append(dest)
            continue
        kept.append(entry)
    return kept


def app_modules(root: Path = ROOT) -> list[str]:
    """Every module of the attention_lab package, found on disk.

    The main window imports its panels by name (importlib), which PyInstaller can't see;
    walking the sources (rather than collect_submodules, which imports the package in a
    build subprocess where desktop/ is not yet on the path) finds them all.
    """
    src = root / "desktop"
    names = []
    for path in sorted((src / "attention_lab").rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return names


def read_version(root: Path = ROOT) -> str:
    """The app's version, from ``attention_lab.__version__`` (the one ``--version`` shows)."""
    text = (root / "desktop" / "attention_lab" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', text, re.M)
    if not match:
        raise RuntimeError("no __version__ in desktop/attention_lab/__init__.py")
    return match.group(1)


def demo_model_source(environ=None, root: Path = ROOT) -> Path:
    """The demo model folder to bundle; raise with a clear message when there is none."""
    env = os.environ if environ is None else environ
    folder = Path(env.get(DEMO_MODEL_ENV) or root / "resources" / "demo-model").expanduser()
    if not (folder / "config.json").is_file() or not any(folder.glob("*.safetensors")):
        raise SystemExit(
            f"attention_lab.spec: no demo model in {folder} (config.json + *.safetensors). "
            f"Put it in resources/demo-model or point {DEMO_MODEL_ENV} at a model folder."
        )
    return folder.resolve()


def resource_datas(demo_model: Path, gpt2: Path | None = None, root: Path = ROOT) -> list[tuple[str, str]]:
    """``(source, bundle folder)`` pairs for Analysis(datas=...): tokenizer, icons, models."""
    res = root / "resources"
    datas = [
        (str(res / "tokenizer"), f"{RESOURCES_DEST}/tokenizer"),
        (str(res / "icons"), f"{RESOURCES_DEST}/icons"),
    ]
    for extra in ("translations",):  # optional folders other parts of the app may add
        if (res / extra).is_dir():
            datas.append((str(res / extra), f"{RESOURCES_DEST}/{extra}"))
    for path in sorted(Path(demo_model).iterdir()):
        if path.is_file() and not path.name.startswith("."):
            datas.append((str(path), f"{RESOURCES_DEST}/demo-model"))
    if gpt2 is not None:
        for path in sorted(Path(gpt2).iterdir()):
            if path.is_file():
                datas.append((str(path), BUNDLED_GPT2_DEST))
    return datas
