"""Layering and safety rules that hold for the whole of ``attention_lab.core``.

- core imports no Qt (the same code serves the GUI, the headless lab and the tests);
- the tokenizer and model loading don't import transformers (seconds of start-up);
- no pickle path for weights, no ``trust_remote_code``, no shell.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "desktop" / "attention_lab" / "core"
QT_NAMES = ("PySide6", "PyQt5", "PyQt6", "PySide2", "shiboken6", "pyqtgraph")


def core_modules() -> list[str]:
    return sorted(
        "attention_lab.core" + ("" if p.stem == "__init__" else "." + p.stem)
        for p in CORE.glob("*.py")
    )


def _imported_after(modules: list[str]) -> set[str]:
    """Import ``modules`` in a fresh interpreter and return every module name it loaded."""
    code = (
        "import importlib, json, sys\n"
        f"sys.path.insert(0, {str(ROOT / 'desktop')!r})\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_core_modules_are_found():
    names = core_modules()
    assert {"attention_lab.core.lens", "attention_lab.core.models", "attention_lab.core.tokens"} <= set(names)


def test_core_imports_no_qt():
    loaded = _imported_after(core_modules())
    qt = sorted(m for m in loaded if m.split(".")[0] in QT_NAMES)
    assert qt == [], f"attention_lab.core pulled in Qt: {qt}"


def test_model_loading_does_not_import_transformers():
    loaded = _imported_after(["attention_lab.core.tokens", "attention_lab.core.models", "attention_lab.core.paths"])
    assert "transformers" not in loaded


@pytest.mark.parametrize("path", sorted(CORE.glob("*.py")), ids=lambda p: p.name)
def test_core_sources_never_mention_qt(path):
    source = path.read_text(encoding="utf-8")
    for name in ("PySide6", "PyQt", "QtCore", "QtWidgets"):
        assert name not in source, f"{path.name} mentions {name}"


def _sources() -> list[Path]:
    return sorted((ROOT / "desktop").rglob("*.py"))


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT / "desktop")))
def test_no_pickle_no_remote_code_no_shell(path):
    source = path.read_text(encoding="utf-8")
    # torch.load only with weights_only=True (there is no reason for it at all today)
    for call in re.finditer(r"torch\.load\(([^)]*)\)", source):
        assert "weights_only=True" in call.group(1), f"{path.name}: {call.group(0)}"
    assert not re.search(r"^\s*(import pickle|from pickle import|import dill|import joblib)", source, re.M), path.name
    assert not re.search(r"trust_remote_code\s*=\s*True", source), path.name
    assert "shell=True" not in source and "os.system(" not in source and "os.popen(" not in source, path.name


# ---------------------------------------------------------------------------- the same rules, by syntax tree
# The regexes above miss aliases (``from torch import load``), nested parentheses and calls
# spread over lines; these checks read the parsed code.  Scope: everything that ships
# (desktop/) and the packaging scripts (they handle user-given paths too).
SUBPROCESS_CALLS = {"run", "Popen", "call", "check_call", "check_output"}
ALWAYS_A_SHELL = {("subprocess", "getoutput"), ("subprocess", "getstatusoutput"), ("os", "system"), ("os", "popen"),
                  ("asyncio", "create_subprocess_shell")}
PICKLE_MODULES = {"pickle", "cPickle", "_pickle", "dill", "joblib", "cloudpickle", "marshal", "shelve"}


def _all_python_sources() -> list[Path]:
    return sorted((ROOT / "desktop").rglob("*.py")) + sorted((ROOT / "packaging").rglob("*.py"))


def _dotted(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001
        return ""


def _functions_by_line(tree: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]


def _enclosing_function(tree: ast.AST, node: ast.AST):
    best = None
    for fn in _functions_by_line(tree):
        if fn.lineno <= node.lineno <= (fn.end_lineno or fn.lineno):
            if best is None or fn.lineno >= best.lineno:
                best = fn
    return best


def _returns_a_list(node: ast.AST, tree: ast.Module | None) -> bool:
    """``node`` calls a function of the same module whose return annotation says it is a sequence."""
    if tree is None or not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return False
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and fn.name == node.func.id and fn.returns is not None:
            return bool(re.match(r"(list|List|tuple|Tuple|Sequence)\b", _dotted(fn.returns)))
    return False


def _is_argument_list(node: ast.AST, fn, tree: ast.Module | None = None) -> bool:
    """True when ``node`` is certainly a list of arguments, never one command string."""
    if isinstance(node, (ast.List, ast.Tuple, ast.ListComp)) or _returns_a_list(node, tree):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _is_argument_list(node.left, fn) and _is_argument_list(node.right, fn)
    if isinstance(node, ast.IfExp):
        return _is_argument_list(node.body, fn) and _is_argument_list(node.orelse, fn)
    if isinstance(node, ast.Name) and fn is not None and not isinstance(fn, ast.Lambda):
        params = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
        for arg in params:
            if arg.arg == node.id:  # a parameter: its annotation must say it is a sequence
                return arg.annotation is not None and bool(
                    re.match(r"(list|List|tuple|Tuple|Sequence)\b", _dotted(arg.annotation)))
        values = []
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == node.id for t in n.targets):
                values.append(n.value)
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign)) and isinstance(n.target, ast.Name) \
                    and n.target.id == node.id and n.value is not None:
                values.append(n.value)
        return bool(values) and all(_is_argument_list(v, None) for v in values)
    return False


@pytest.mark.parametrize("path", _all_python_sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_processes_get_argument_lists_never_a_shell(path):
    """A model id or path typed by a user may end up in argv, but never in a shell command line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported_from_subprocess = {
        alias.asname or alias.name
        for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "subprocess"
        for alias in n.names
    }
    problems = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        where = f"{path.name}:{node.lineno}: {name}"
        if tuple(name.split(".")[-2:]) in ALWAYS_A_SHELL or name.startswith(("os.exec", "os.spawn")) \
                or name.endswith("startCommand"):
            problems.append(f"{where} (runs a shell or replaces the process)")
            continue
        is_subprocess = (name.startswith("subprocess.") and name.split(".", 1)[1] in SUBPROCESS_CALLS) or (
            name in imported_from_subprocess and name in SUBPROCESS_CALLS)
        if not is_subprocess:
            continue
        for kw in node.keywords:
            if kw.arg == "shell" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                problems.append(f"{where} passes shell={_dotted(kw.value)}")
        command = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "args"), None)
        if command is None or not _is_argument_list(command, _enclosing_function(tree, node), tree):
            problems.append(f"{where} is given {_dotted(command) if command else 'nothing'}, not an argument list")
    assert problems == []


def test_the_subprocess_check_is_not_vacuous():
    """The checker finds the calls it must find, and flags strings and shells."""
    bad = ast.parse("import subprocess, os\n"
                    "def f(spec):\n"
                    "    subprocess.run('python -m attention_lab ' + spec)\n"
                    "    cmd = f'ls {spec}'\n"
                    "    subprocess.Popen(cmd)\n"
                    "    subprocess.call(['ls', spec], shell=True)\n"
                    "    os.system(spec)\n")
    good = ast.parse("import subprocess\n"
                     "def f(spec, cmd: list[str]):\n"
                     "    argv = ['python', '-m', 'attention_lab'] + (['--model', spec] if spec else [])\n"
                     "    argv += ['--json']\n"
                     "    subprocess.run(argv)\n"
                     "    subprocess.run(cmd, check=True)\n")
    calls = [n for n in ast.walk(bad) if isinstance(n, ast.Call) and _dotted(n.func).startswith("subprocess.")]
    assert [_is_argument_list(c.args[0], _enclosing_function(bad, c)) for c in calls] == [False, False, True]
    calls = [n for n in ast.walk(good) if isinstance(n, ast.Call) and _dotted(n.func).startswith("subprocess.")]
    assert all(_is_argument_list(c.args[0], _enclosing_function(good, c)) for c in calls)
    # a command built by a function of the module counts by that function's return annotation
    built = ast.parse("import subprocess\n"
                      "def argv(x) -> list[str]:\n    return ['ls', x]\n"
                      "def line(x) -> str:\n    return 'ls ' + x\n"
                      "def f(x):\n    subprocess.run(argv(x))\n    subprocess.run(line(x))\n")
    calls = [n for n in ast.walk(built) if isinstance(n, ast.Call) and _dotted(n.func).startswith("subprocess.")]
    assert [_is_argument_list(c.args[0], _enclosing_function(built, c), built) for c in calls] == [True, False]


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT / "desktop")))
def test_weights_never_go_through_pickle(path):
    """No pickle module, torch.load only with weights_only=True, from_pretrained only from safetensors."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    problems = []
    torch_load_names = {"torch.load", "torch.serialization.load"} | {
        alias.asname or alias.name
        for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module in ("torch", "torch.serialization")
        for alias in n.names if alias.name == "load"
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            problems += [f"imports {a.name}" for a in node.names if a.name.split(".")[0] in PICKLE_MODULES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in PICKLE_MODULES:
            problems.append(f"imports from {node.module}")
        elif isinstance(node, ast.Call):
            name = _dotted(node.func)
            kws = {k.arg: k.value for k in node.keywords}

            def is_true(key: str) -> bool:
                return isinstance(kws.get(key), ast.Constant) and kws[key].value is True

            if name in torch_load_names and not is_true("weights_only"):
                problems.append(f"line {node.lineno}: {name} without weights_only=True")
            if name in ("torch.jit.load", "torch.package.PackageImporter") or name.endswith("np.load") and \
                    "allow_pickle" in kws and not (isinstance(kws["allow_pickle"], ast.Constant) and not kws["allow_pickle"].value):
                problems.append(f"line {node.lineno}: {name} can unpickle")
            if "trust_remote_code" in kws and not (isinstance(kws["trust_remote_code"], ast.Constant)
                                                  and kws["trust_remote_code"].value is False):
                problems.append(f"line {node.lineno}: {name} with trust_remote_code={_dotted(kws['trust_remote_code'])}")
            if name.endswith(".from_pretrained") and "Tokenizer" not in name and not is_true("use_safetensors"):
                # a folder holding pytorch_model.bin next to (or instead of) safetensors would be unpickled
                problems.append(f"line {node.lineno}: {name} without use_safetensors=True")
    assert problems == []


# ---------------------------------------------------------------------------- the request path (ARCHITECTURE.md)
UI = ROOT / "desktop" / "attention_lab" / "ui"
SESSION = UI / "session.py"
WORKER = UI / "worker.py"


def _calls(path: Path, attribute: str) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.lineno for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == attribute]


def test_only_the_session_submits_work_to_the_worker():
    offenders = {str(p.relative_to(ROOT)): _calls(p, "submit") for p in _sources() if p != SESSION}
    assert {k: v for k, v in offenders.items() if v} == {}
    assert _calls(SESSION, "submit"), "the check looks for the right thing"


def test_every_job_the_session_submits_is_a_core_function():
    """No view (nor the session) defines a function that runs on the worker thread: each
    ``submit`` passes a function of core.jobs or core.pipeline."""
    import attention_lab.ui.session as session_module

    tree = ast.parse(SESSION.read_text(encoding="utf-8"))
    submitted = [n.args[1] for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and n.func.attr == "submit" and len(n.args) >= 2]
    assert submitted
    for node in submitted:
        name = _dotted(node)
        if name == "fn":  # Session._submit's parameter: its callers pass jobs.<name>
            continue
        obj = eval(name, vars(session_module))  # noqa: S307 -- a name from our own source
        assert obj.__module__ in ("attention_lab.core.jobs", "attention_lab.core.pipeline"), name
    helper_args = [_dotted(n.args[2]) for n in ast.walk(tree) if isinstance(n, ast.Call)
                   and isinstance(n.func, ast.Attribute) and n.func.attr == "_submit"]
    assert helper_args and all(a.startswith("jobs.") for a in helper_args), helper_args


def test_no_view_defines_a_worker_function():
    """Worker functions take the protocol's ``cancel``; nothing under ui/ but the worker does."""
    found = []
    for path in sorted(UI.rglob("*.py")):
        if path == WORKER:
            continue
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = {a.arg for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs}
                if "cancel" in names:
                    found.append(f"{path.relative_to(ROOT)}:{fn.lineno} {fn.name}")
    assert found == []


@pytest.mark.parametrize("path", sorted(CORE.rglob("*.py")), ids=lambda p: p.name)
def test_core_never_names_the_ui(path):
    """Not in an import, not in a script string or a docstring: core is usable with no ui at all."""
    source = path.read_text(encoding="utf-8")
    assert not re.search(r"attention_lab\.ui\b|\bui[./]\w|from\s+attention_lab\s+import\s+ui\b", source), path.name


def _app_sources() -> list[Path]:
    app = ROOT / "desktop" / "attention_lab"
    return sorted(p for p in app.rglob("*.py") if "devtools" not in p.relative_to(app).parts)


@pytest.mark.parametrize("path", _app_sources(), ids=lambda p: str(p.relative_to(ROOT / "desktop")))
def test_the_app_never_imports_the_harness(path):
    """The harness (``attention_lab.devtools``) drives the app from outside; no module of the
    app imports it, nor starts it by name, so the installer leaves the package out whole."""
    source = path.read_text(encoding="utf-8")
    assert not re.search(r"(import|from)\s+attention_lab\.devtools\b|from\s+attention_lab\s+import\s+devtools\b"
                         r"|from\s+\.+devtools\b|from\s+\.+\s+import\s+devtools\b|[\"']attention_lab\.devtools", source), path.name


def test_starting_the_app_loads_no_harness_module():
    loaded = _imported_after(["attention_lab.app", "attention_lab.ui.launch", "attention_lab.ui.main_window"])
    assert "attention_lab.ui.launch" in loaded
    assert sorted(m for m in loaded if m.startswith("attention_lab.devtools")) == []


def _core_import_graph() -> dict[str, set[str]]:
    """Each core module's imports of other core modules, at the top or inside a function."""
    graph: dict[str, set[str]] = {}
    for path in CORE.glob("*.py"):
        here = path.stem
        edges = graph.setdefault(here, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level == 1:
                    names = [node.module] if node.module else [a.name for a in node.names]
                elif node.module == "attention_lab.core":
                    names = [a.name for a in node.names]
                elif node.module and node.module.startswith("attention_lab.core."):
                    names = [node.module.split(".")[2]]
                else:
                    continue
                edges.update(n.split(".")[0] for n in names if (CORE / f"{n.split('.')[0]}.py").is_file())
            elif isinstance(node, ast.Import):
                edges.update(a.name.split(".")[2] for a in node.names if a.name.startswith("attention_lab.core."))
        edges.discard(here)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found, state = [], {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append(trail[trail.index(nxt):] + [nxt] if nxt in trail else [node, nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = "done"

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    return found


def test_core_has_no_import_circle():
    """A job module imports the protocol (``Cancelled``, the keys) from a module that imports
    none of the jobs, so the core's import graph has no circle, lazy imports included."""
    assert _cycles(_core_import_graph()) == []


def test_the_circle_check_finds_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_one_cancelled_exception():
    from attention_lab.core.job_protocol import Cancelled
    from attention_lab.core.kvbench import BenchmarkCancelled
    from attention_lab.core.models import DownloadCancelled
    from attention_lab.core.tour import FactCancelled

    assert all(issubclass(e, Cancelled) for e in (BenchmarkCancelled, DownloadCancelled, FactCancelled))


@pytest.mark.parametrize("name", ["main_window.py", "tour.py", "tour_install.py", "tour_room.py", "tour_saved.py",
                                  "tour_fact_text.py"])
def test_the_window_and_the_tour_ask_panels_nothing_by_name(name):
    """No hasattr/getattr: panels declare what they do (ui/panels/base.py) and the window and
    the tour call it; a renamed widget is an error, not a feature that silently vanishes."""
    tree = ast.parse((UI / name).read_text(encoding="utf-8"))
    found = [f"{name}:{n.lineno} {_dotted(n)}" for n in ast.walk(tree)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("hasattr", "getattr")
             and not (n.func.id == "getattr" and _dotted(n.args[0]) == "module")]  # a class from its module
    assert found == []


def test_the_main_window_reads_as_a_table_of_contents():
    lines = (UI / "main_window.py").read_text(encoding="utf-8").count("\n")
    assert lines <= 450, f"main_window.py has {lines} lines"
