"""Entry point: ``attention-lab`` (the desktop app) and ``attention-lab lab`` (headless).

The ``lab`` sub-command runs entirely in :mod:`attention_lab.core`: it imports neither Qt
nor transformers, so it starts fast and works where there is no display.  Anything else
starts the GUI (imported lazily, so the headless path never pays for Qt).

Exit codes: 0 ok; 2 bad input (one line on stderr, never a traceback); 1 unexpected
failure (one line; set ``ATTENTION_LAB_DEBUG=1`` for the traceback); 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import NoReturn, Sequence

from . import __version__

PROG = "attention-lab"
SUBCOMMANDS = ("lab",)
# internal: the download process the app starts (core.hub_download), not a user command
HUB_FETCH = "hub-fetch"
KV_MODELS = ("loaded", "gpt2-shapes")  # core.kvbench.KV_MODELS, copied so --help needs no torch


# Bytes in argv that aren't UTF-8 (a file name in Latin-1, say) reach Python as lone
# surrogates (PEP 383).  Written as they are, they make invalid UTF-8 -- or, where stdout
# is strict, a UnicodeEncodeError -- so the output escapes them (JSON) or marks them (text).
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_line(result: dict) -> str:
    """``result`` as one line of valid UTF-8 JSON (lone surrogates kept, as ``\\udcXX`` escapes)."""
    text = json.dumps(result, ensure_ascii=False, allow_nan=False)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def printable(text: str) -> str:
    """``text`` with lone surrogates shown as U+FFFD, so any stdout encoding can write it."""
    return _LONE_SURROGATE.sub("\ufffd", text)


class UsageError(Exception):
    """A command-line mistake: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a mistake is one line on stderr (argparse prints usage + message)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see --help)")


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def add_window_arguments(parser) -> None:
    """The window's own options (``attention-lab [options]``, no command): the window's parser and
    ``--help`` both list them from here."""
    parser.add_argument("--model", metavar="SPEC", default=None, help='"demo", a model folder, or a cached hub id')
    parser.add_argument("--lang", choices=("en", "pt_BR"), default=None, help="interface language")
    parser.add_argument("--smoke-test", action="store_true", help="open offscreen, analyse once, check the first view, exit")
    parser.add_argument("--all-panels", action="store_true", help="with --smoke-test: also build and check the panels behind tabs")
    parser.add_argument("--screenshot", metavar="FILE", default=None, help="save a PNG of the populated window and exit")
    parser.add_argument("--size", default="1600x1000", help="window size for --screenshot/--smoke-test (WxH)")
    parser.add_argument("--settings", metavar="FILE", default=None, help="use this settings file (INI)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="See multi-head attention and the causal mask inside GPT-2. "
        "Without a sub-command, the desktop app starts.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    add_window_arguments(parser.add_argument_group("the window (no command)"))
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    lab = sub.add_parser(
        "lab",
        help="run the chapter's five lab steps on the CPU and print them",
        description="The chapter's lab, headless: the triangular mask, one head causal | bidirectional, "
        "the leakage diff, the head portraits, and the KV-cache gain.",
    )
    lab.add_argument("--model", metavar="SPEC", default=None,
                     help='"demo", a model folder, or a hub id from the local cache (default: GPT-2 small '
                          'if it is cached, else the demo model)')
    lab.add_argument("--text", default=None, help="the sentence (default: the chapter's example)")
    lab.add_argument("--layer", type=int, default=0, help="layer shown in steps 2 and 4 (default 0)")
    lab.add_argument("--head", type=int, default=0, help="head shown in step 2 (default 0)")
    lab.add_argument("--position", type=int, default=None,
                     help="token edited in step 3 (default: the last; negative counts from the end)")
    lab.add_argument("--replacement", metavar="TOKEN", default=None,
                     help="the token put there: text that is exactly one token, e.g. ' today' "
                          "(default: the model's likeliest other token)")
    lab.add_argument("--new-tokens", type=int, default=50,
                     help="tokens generated in step 5 (default 50; 200 shows the cache's gain more clearly)")
    lab.add_argument("--kv-model", choices=KV_MODELS, default="loaded",
                     help="the model step 5 times: the loaded one (default), or GPT-2 small's shapes with random "
                          "weights, built in memory (never downloaded; its text is gibberish, its timing GPT-2's)")
    lab.add_argument("--bos", action="store_true", help="prepend <|endoftext|> to the text")
    lab.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    lab.add_argument("--mask", metavar="SPEC", default="causal",
                     help="causal | bidirectional | prefix:K | window:W | documents:TOKEN: the mask whose reach "
                          "and verdicts are measured, and under which attention, leakage and knockout run")
    lab.add_argument("--ablate", metavar="L.H[,L.H…]", default=None, help="heads to knock out, e.g. 0.3,1.7")
    lab.add_argument("--ablation", choices=("zero", "mean"), default="zero",
                     help="a knocked-out head's output becomes 0, or its mean over the text (default zero)")
    return parser


def _progress_printer(enabled: bool):
    if not enabled:
        return None
    return lambda message: print(f"… {message}", file=sys.stderr, flush=True)


def run_lab_command(args: argparse.Namespace) -> int:
    # imports here, not at the top: `attention-lab --help` and the GUI path don't need torch
    from .core import lab, models

    spec = args.model if args.model is not None else models.default_model_spec()
    model = models.load_model(spec)
    result = lab.run_lab(
        model,
        text=lab.SEED_TEXT if args.text is None else args.text,
        layer=args.layer,
        position=args.position,
        replacement=args.replacement,
        new_tokens=args.new_tokens,
        bos=args.bos,
        head=args.head,
        kv_model=args.kv_model,
        progress=_progress_printer(not args.json and sys.stderr.isatty()),
        mask=args.mask,
        ablate=args.ablate,
        ablation_mode=args.ablation,
    )
    if args.json:
        sys.stdout.write(json_line(result) + "\n")
    else:
        sys.stdout.write(printable(lab.render_text(result)) + "\n")
    sys.stdout.flush()
    return 0


def _run_gui(argv: list[str]) -> int:
    try:
        from .ui.launch import run_gui
    except ImportError as exc:
        print(f"{PROG}: the desktop app can't start: {_one_line(exc)}", file=sys.stderr)
        return 1
    return int(run_gui(argv) or 0)


def _wants_gui(argv: Sequence[str]) -> bool:
    return not argv or (argv[0] not in SUBCOMMANDS + (HUB_FETCH,) and argv[0] not in ("-h", "--help", "--version"))


def run(argv: Sequence[str] | None = None) -> NoReturn:
    """The commands' entry point (``attention-lab``, ``python -m attention_lab``, the
    installers): :func:`main`, and after a window, a quick exit.

    As :func:`pyqtgraph.exit` does: exit handlers run and output is flushed, then the
    process ends without the interpreter tearing down torch, Qt and pyqtgraph object by
    object (0.2 s of every start-and-quit, measured; PySide6 and pyqtgraph are also known
    to crash in that teardown).  By then the window has saved its settings and joined its
    threads."""
    argv = list(sys.argv[1:] if argv is None else argv)
    code = main(argv)
    if _wants_gui(argv):
        import atexit

        atexit._run_exitfuncs()  # logging's flush among them
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    raise SystemExit(code)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if _wants_gui(argv):
        return _run_gui(argv)
    if argv[0] == HUB_FETCH and len(argv) == 3:
        from .core import hub_fetch  # huggingface_hub only: no Qt, no torch

        return hub_fetch.main(argv[1:])
    try:
        args = build_parser().parse_args(argv)
        if args.command == "lab":
            return run_lab_command(args)
        return 0
    except UsageError as exc:
        print(_one_line(exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `attention-lab lab | head`
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 -- silence the flush at exit
        except OSError:
            pass
        return 0
    except Exception as exc:  # noqa: BLE001 -- the one place that turns errors into a message
        return _report(exc)


def _report(exc: Exception) -> int:
    from .core.lab import LabInputError
    from .core.models import ModelLoadError

    if isinstance(exc, (LabInputError, ModelLoadError)):
        print(f"{PROG}: {_one_line(exc)}", file=sys.stderr)
        return 2
    if os.environ.get("ATTENTION_LAB_DEBUG"):
        import traceback

        traceback.print_exception(exc)
    print(f"{PROG}: internal error: {type(exc).__name__}: {_one_line(exc)}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
