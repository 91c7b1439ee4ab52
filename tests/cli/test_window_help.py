"""``attention-lab --help`` lists the window's own options, not only the commands (a learner
looking for --lang found only lab)."""

from attention_lab import app


def test_help_lists_the_windows_options():
    text = app.build_parser().format_help()
    for flag in ("--lang", "--model", "--settings", "--smoke-test", "--screenshot", "--size"):
        assert flag in text
    assert "the window (no command)" in text


def test_the_window_reads_the_options_help_lists():
    from attention_lab.ui.launch import _parse

    args = _parse(["--lang", "pt_BR", "--model", "demo", "--size", "800x600"])
    assert (args.lang, args.model, args.size) == ("pt_BR", "demo", (800, 600))
