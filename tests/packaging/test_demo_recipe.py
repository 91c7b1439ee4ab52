"""The demo model's recipe on tiny inputs: the corpus extraction, the tokenizer, and the
training loop's checkpoints (safetensors + JSON, resumed bit-identically)."""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "packaging") not in sys.path:
    sys.path.insert(0, str(ROOT / "packaging"))

import demo_corpus  # noqa: E402
import train_demo_model as recipe  # noqa: E402

EN = [
    "The river runs past the old mill, and the children watch the water from the bridge.",
    "Open the menu and choose the option that you want to change in this document.",
    "The dog sleeps by the door of the house when it is cold in the evening.",
    "A layer is a picture that you can move or hide without changing the other layers.",
    "When the window is closed, the program saves your work in the folder you chose.",
    "The teacher reads the story to the class and the students write down the words.",
]
PT = [
    "O rio passa pelo velho moinho, e as crianças olham a água da ponte.",
    "Abra o menu e escolha a opção que você quer mudar no documento.",
    "O cachorro dorme na porta da casa quando faz frio no fim da tarde.",
    "Uma camada é uma imagem que você pode mover ou esconder sem mudar as outras.",
    "Quando a janela é fechada, o programa salva o seu trabalho na pasta escolhida.",
    "A professora lê a história para a turma e os alunos escrevem as palavras.",
]


def _html(paragraphs: list[str]) -> str:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (f"<html><head><title>Title words here are not prose.</title></head><body><h1>Heading</h1>{body}"
            "<pre>apt-get install something --yes and more words here.</pre>"
            "<table><tr><td>A table cell that reads like a sentence of the manual.</td></tr></table>"
            "<ul><li>A list item that is a whole sentence of the manual, and it stays.</li></ul></body></html>")


@pytest.fixture
def sources(tmp_path) -> tuple[demo_corpus.Source, ...]:
    en, pt = tmp_path / "en", tmp_path / "pt"
    en.mkdir()
    pt.mkdir()
    for i in range(6):
        rotated = EN[i:] + EN[:i]
        (en / f"page{i}.html").write_text(_html([f"{s} Page {i}." for s in rotated]), encoding="utf-8")
        (pt / f"pagina{i}.html").write_text(
            _html([f"{s} Página {i}." for s in PT[i:] + PT[:i]]
                  + ["This English sentence was left untranslated in the manual of the program."]),
            encoding="utf-8")
    # a duplicate paragraph in another file, and latin-1 text in a gzip file
    (en / "page9.html").write_text(_html([f"{EN[0]} Page 0."]), encoding="utf-8")
    (pt / "guia.txt.gz").write_bytes(gzip.compress("\n\n".join(PT).encode("latin-1")))
    (tmp_path / "fortunes").mkdir()
    (tmp_path / "fortunes" / "brasil").write_text(
        "\n%\n".join(f"{s}\n\t\t-- Autor {i}" for i, s in enumerate(PT)) + "\n", encoding="utf-8")
    return (
        demo_corpus.Source("en-html", "en", "pkg-en", "GPL-2+", en, "*.html", "html"),
        demo_corpus.Source("pt-html", "pt_BR", "pkg-pt", "GPL-2+", pt, "*.html", "html"),
        demo_corpus.Source("pt-text", "pt_BR", "pkg-txt", "GFDL-1.1", pt, "*.txt.gz", "text"),
        demo_corpus.Source("pt-fortune", "pt_BR", "fortunes-br", "GPL-2+", tmp_path / "fortunes", "*", "fortune"),
    )


def _build(sources, **kw):
    return demo_corpus.build(sources, seed=7, heldout_chars=600, doc_chars=400, **kw)


def test_corpus_extraction_is_deterministic_deduplicated_and_held_out(sources, tmp_path):
    first, second = _build(sources), _build(tuple(reversed(sources)))
    a = demo_corpus.write(first, tmp_path / "a")
    b = demo_corpus.write(_build(sources), tmp_path / "b")
    assert a["sha256"] == b["sha256"]  # same packages + same seed: byte-identical files
    for name in ("train.jsonl", "heldout_en.txt", "heldout_pt_BR.txt"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    key = lambda d: (d["source"], d["path"], d["chunk"])  # noqa: E731
    # the held-out choice depends on the seed and each document's name, not on reading order
    assert sorted(map(key, first["heldout"]["en"])) == sorted(map(key, second["heldout"]["en"]))

    train_paragraphs = [p for d in first["train"] for p in d["text"].split("\n\n")]
    heldout_paragraphs = [p for lang in ("en", "pt_BR") for d in first["heldout"][lang] for p in d["text"].split("\n\n")]
    everything = train_paragraphs + heldout_paragraphs
    assert len(everything) == len(set(everything))  # no paragraph twice, none in both train and held-out
    assert f"{EN[0]} Page 0." in everything
    assert all(first["heldout"][lang] for lang in ("en", "pt_BR"))
    text = "\n".join(everything)
    for gone in ("Heading", "Title words", "apt-get", "table cell", "left untranslated", "-- Autor"):
        assert gone not in text
    assert "A list item that is a whole sentence" in text
    assert "O cachorro dorme na porta da casa" in text  # the latin-1 text file, decoded
    chars = first["stats"]["train_chars"]
    assert abs(chars["en"] - chars["pt_BR"]) <= 400  # balanced to within one document
    assert demo_corpus.read_train(tmp_path / "a") == first["train"]


def test_language_filter():
    assert demo_corpus.is_prose("O programa salva o arquivo na pasta que você escolheu.", "pt_BR")
    assert not demo_corpus.is_prose("O programa salva o arquivo na pasta que você escolheu.", "en")
    assert not demo_corpus.is_prose("cp -a /etc/apt/sources.list /tmp/x.list && sudo apt-get update -y.", "en")
    assert not demo_corpus.is_prose("Opening a file", "en")


def test_tokenizer_training_is_deterministic_and_lossless(tmp_path):
    texts = [s for _ in range(20) for s in EN + PT]
    recipe.train_bpe(texts, 400, tmp_path / "a")
    recipe.train_bpe(list(texts), 400, tmp_path / "b")
    assert (tmp_path / "a" / "tokenizer.json").read_bytes() == (tmp_path / "b" / "tokenizer.json").read_bytes()
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tmp_path / "a" / "tokenizer.json"))
    assert tok.get_vocab_size() <= 400 and tok.token_to_id("<|endoftext|>") == 0
    for text in ["O cachorro dorme na porta", "naïve 🙂 日本 \t\n", PT[1]]:
        assert tok.decode(tok.encode(text).ids) == text  # byte-level: any text round-trips
    # trained on both languages: frequent words of each (accents included) become single tokens
    for word in (" você", " que", " you", " the"):
        assert len(tok.encode(word).ids) == 1, word
    config = json.loads((tmp_path / "a" / "tokenizer_config.json").read_text())
    assert config["eos_token"] == "<|endoftext|>"


TINY_HP = {"n-layer": 2, "n-embd": 24, "n-positions": 64, "seq-len": 32, "batch-size": 2, "bpe-vocab": 300,
           "warmup-steps": 2, "steps": 6, "repeat-vocab": 40, "repeat-min-len": 3, "repeat-max-len": 6,
           "repeat-max-gap": 4, "period2-min-len": 4, "period2-max-len": 6, "threads": 1, "eval-every": 3}


def tiny(**changes) -> list[str]:
    """Command-line arguments of a tiny run (12 heads of size 2), with ``changes``."""
    hp = {**TINY_HP, **{k.replace("_", "-"): v for k, v in changes.items()}}
    return [x for k, v in hp.items() for x in (f"--{k}", str(v))]


@pytest.fixture
def corpus(sources, tmp_path):
    folder = tmp_path / "corpus"
    demo_corpus.write(_build(sources), folder)
    return folder


def _tensors(folder: Path) -> dict[str, torch.Tensor]:
    out = {}
    for name in ("model", "optimizer", "rng"):
        out.update({f"{name}/{k}": v for k, v in load_file(folder / f"{name}.safetensors").items()})
    return out


def test_checkpoints_resume_bit_identically_and_hold_no_pickle(corpus, tmp_path):
    straight, interrupted = tmp_path / "straight", tmp_path / "interrupted"
    assert recipe.main(["--corpus", str(corpus), "--work", str(straight), "--no-measure", *tiny()]) == 0
    assert recipe.main(["--corpus", str(corpus), "--work", str(interrupted), "--no-measure", "--stop-after", "3", *tiny()]) == 0
    halfway = json.loads((interrupted / "ckpt" / "state.json").read_text())
    assert halfway["step"] == 3 and not (interrupted / "final").exists()
    assert recipe.main(["--corpus", str(corpus), "--work", str(interrupted), "--no-measure", *tiny()]) == 0

    a, b = _tensors(straight / "ckpt"), _tensors(interrupted / "ckpt")
    assert a.keys() == b.keys() and any(k.endswith("::exp_avg_sq") for k in a)
    for k in a:
        assert torch.equal(a[k], b[k]), k
    assert (straight / "final" / "model.safetensors").read_bytes() == (interrupted / "final" / "model.safetensors").read_bytes()
    state = json.loads((straight / "ckpt" / "state.json").read_text())
    assert state["step"] == 6 and [e["step"] for e in state["log"] if "step" in e] == [3, 6]
    assert state["hyperparameters"]["n_head"] == 12 and state["hyperparameters"]["seed"] == 1234

    # no pickle anywhere: every file written is safetensors, JSON or the tokenizer's JSON
    for path in straight.rglob("*"):
        if path.is_file():
            assert path.suffix in {".safetensors", ".json"} or path.name == "run.lock", path
            assert not path.read_bytes().startswith(b"\x80"), path  # pickle's protocol marker

    # one run per work folder
    held = recipe.hold_lock(straight)
    with pytest.raises(SystemExit, match="another training run"):
        recipe.main(["--corpus", str(corpus), "--work", str(straight), "--no-measure", *tiny()])
    held.close()

    # a changed recipe is refused unless asked for
    with pytest.raises(SystemExit, match="hyper-parameters differ"):
        recipe.main(["--corpus", str(corpus), "--work", str(straight), "--no-measure", *tiny(steps=9)])


def test_the_recipe_never_pickles():
    for name in ("train_demo_model.py", "demo_corpus.py", "evaluate_demo_model.py"):
        source = (ROOT / "packaging" / name).read_text(encoding="utf-8")
        for banned in ("torch.save", "torch.load", "import pickle", "pickle.", ".bin\""):
            assert banned not in source, (name, banned)


def test_batches_depend_on_seed_and_step_only():
    stream = torch.arange(500) % 97
    hp = {**recipe.DEFAULTS, "seq_len": 32, "batch_size": 4, "repeat_fraction": 1.0, "repeat_min_len": 4,
          "repeat_max_len": 6, "repeat_max_gap": 3, "period2_fraction": 0.0}
    common = torch.arange(10, 40)
    first = recipe.sample_batch(stream, hp, 5, common)
    assert torch.equal(first, recipe.sample_batch(stream, hp, 5, common))
    assert not torch.equal(first, recipe.sample_batch(stream, hp, 6, common))
    # every row carries a repeated segment of common tokens
    for row in first.tolist():
        assert any(row[i:i + 4] == row[j:j + 4] and all(t >= 10 for t in row[i:i + 4])
                   for i in range(len(row)) for j in range(i + 4, len(row) - 3))


def test_copy_warmup_rows_are_segments_each_said_twice_then_the_usual_rows():
    stream = torch.arange(500) % 97
    hp = {**recipe.DEFAULTS, "seq_len": 40, "batch_size": 3, "copy_min_len": 4, "copy_max_len": 6,
          "copy_warmup_steps": 2}
    common = torch.arange(100, 140)
    for row in recipe.sample_batch(stream, hp, 1, common).tolist():
        assert all(t >= 100 for t in row)  # nothing but common tokens, no prose
        at = 0
        while True:  # a segment, then the same segment, to the end (which may cut the last pair)
            found = [k for k in range(4, 7) if at + 2 * k <= len(row) and row[at:at + k] == row[at + k:at + 2 * k]]
            if not found:
                assert len(row) - at < 12, (at, row)
                break
            at += 2 * found[0]
    assert all(t < 100 for t in recipe.sample_batch(stream, {**hp, "period2_fraction": 0.0, "repeat_fraction": 0.0},
                                                    2, common).flatten().tolist())  # step 2: prose again


def test_short_copy_warmup_rows_keep_the_tokens_of_a_step():
    stream = torch.arange(500) % 97
    hp = {**recipe.DEFAULTS, "seq_len": 40, "batch_size": 3, "copy_min_len": 2, "copy_max_len": 5,
          "copy_warmup_steps": 2, "copy_warmup_seq_len": 10}
    common = torch.arange(100, 140)
    rows = recipe.sample_batch(stream, hp, 0, common)
    assert rows.shape == (12, 10) and int(rows.min()) >= 100
    assert recipe.sample_batch(stream, hp, 2, common).shape == (3, 40)


def test_init_range_sets_the_initial_spread_of_the_weights():
    hp = {**recipe.DEFAULTS, "n_layer": 1, "n_embd": 24, "n_head": 12, "n_positions": 16, "position_init": "noise"}
    spread = {r: float(recipe.make_model({**hp, "init_range": r}, 300, 0).transformer.h[0].attn.c_attn.weight.detach().std())
              for r in (0.02, 0.1)}
    assert spread[0.02] == pytest.approx(0.02, rel=0.1) and spread[0.1] == pytest.approx(0.1, rel=0.1)


def test_a_run_recorded_before_a_hyper_parameter_existed_resumes_with_its_neutral_value(corpus, tmp_path):
    work = tmp_path / "run"
    assert recipe.main(["--corpus", str(corpus), "--work", str(work), *tiny(steps=2, eval_every=1), "--no-measure", "--stop-after", "1"]) == 0
    state_file = work / "ckpt" / "state.json"
    state = json.loads(state_file.read_text())
    for key in recipe.ADDED_LATER:
        del state["hyperparameters"][key]
    state_file.write_text(json.dumps(state))
    assert recipe.main(["--corpus", str(corpus), "--work", str(work), *tiny(steps=2, eval_every=1), "--no-measure"]) == 0
    with pytest.raises(SystemExit, match="hyper-parameters differ"):
        recipe.main(["--corpus", str(corpus), "--work", str(work), *tiny(steps=2, eval_every=1), "--no-measure", "--copy-warmup-steps", "1"])


def test_the_export_is_measured_by_the_app_code(corpus, tmp_path):
    """One tiny checkpoint, measured: bits per character per language and the best head of
    each kind, through the app's loader and detectors."""
    work = tmp_path / "run"
    assert recipe.main(["--corpus", str(corpus), "--work", str(work), *tiny(steps=3)]) == 0
    import evaluate_demo_model

    # the last step's measurement is in the checkpoint (a resumed run keeps it) and in the final export
    for record in (work / "ckpt" / "state.json", work / "final" / "training.json"):
        last = [e for e in json.loads(record.read_text())["log"] if "step" in e][-1]
        assert last["step"] == 3 and set(last["measured"]["heldout"]) == {"en", "pt_BR"}, record

    result = evaluate_demo_model.quick(work / "final", evaluate_demo_model.heldout_files(corpus))
    assert set(result["heldout"]) == {"en", "pt_BR"}
    assert all(0 < v < 20 for v in result["heldout"].values())
    for kind in ("previous_token_best", "previous_token_best_layer0", "sink_best", "induction_best"):
        assert 0.0 <= result[kind]["score"] <= 1.0 and 0 <= result[kind]["head"] < 12
    assert result["previous_token_best_layer0"]["layer"] == 0
    card = evaluate_demo_model.model_card_table(work / "final", evaluate_demo_model.heldout_files(corpus))
    assert card["training"]["steps_done"] == 3 and card["training"]["tokens_seen"] == 3 * 2 * 32
    assert card["size_bytes"] == (work / "final" / "model.safetensors").stat().st_size
    sentence = card["tokenizer"]["model"]["sentence_pt_BR"]
    assert sentence["words"] == 7 and sentence["tokens"] == len(sentence["pieces"])
    digest = hashlib.sha256((work / "final" / "model.safetensors").read_bytes()).hexdigest()
    assert digest == hashlib.sha256((work / "latest-export" / "model.safetensors").read_bytes()).hexdigest()
    # the card's Markdown table is those numbers, and nothing typed by hand
    markdown = evaluate_demo_model.card_markdown(card)
    en, pt = card["heldout"]["en"]["bits_per_char"], card["heldout"]["pt_BR"]["bits_per_char"]
    assert f"| bits per character, held-out prose | {en:.3f} | {pt:.3f} |" in markdown
    tour = card["tour_induction"]
    assert f"| L{tour['layer']} H{tour['head']}, {tour['score']:.2f} | — |" in markdown
    assert "| training steps / tokens | 3 / 192 |" in markdown


def test_snippet_tokens_are_the_most_frequent_and_never_the_document_separator():
    stream = torch.tensor([5, 5, 5, 3, 3, 0, 0, 0, 0, 7])
    assert recipe.frequent_tokens(stream, 10, 2, eos=0).tolist() == [5, 3]
    everything = recipe.frequent_tokens(stream, 10, 10, eos=0).tolist()  # the whole vocabulary asked for
    assert 0 not in everything and sorted(everything) == list(range(1, 10)) and everything[:3] == [5, 3, 7]
