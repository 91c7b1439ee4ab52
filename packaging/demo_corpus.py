"""Build the demo model's corpus: plain English and Brazilian-Portuguese prose from Debian packages.

Every source is freely licensed documentation that ``apt-get`` installs on this machine::

    apt-get install --no-install-recommends lynx fortunes fortunes-min fortunes-br focalinux-text \\
        debian-reference-en debian-reference-pt-br debian-edu-doc-en debian-edu-doc-pt-br \\
        gimp-help-en gimp-help-pt-br libreoffice-help-en-us libreoffice-help-pt-br

(``lynx`` only satisfies gimp-help's "a web browser" dependency with something small.)

What it does, reproducibly (same installed packages + same seed = byte-identical output):

1. reads each source's files in sorted order and keeps its *prose*: the text of HTML
   paragraphs (``<p>``, and ``<li>``/``<dd>`` holding no paragraph of their own; never
   ``<pre>``, scripts or tables), or the blank-line-separated paragraphs of a text file;
   a paragraph stays only if it reads as a sentence of its language (enough words, mostly
   letters, sentence punctuation, more of its language's function words than of the other's);
2. drops every paragraph seen before (exact duplicates after whitespace normalisation,
   across all sources and both languages: help pages repeat their boilerplate);
3. groups a file's consecutive paragraphs into documents of at most ``--doc-chars``;
4. sets aside a held-out sample per language, never trained on: within each source, the
   documents are ranked by SHA-256 of ``seed:source:path:chunk`` and taken in that order
   until the source has its share (proportional to its characters) of ``--heldout-chars``
   -- a seeded random sample of whole documents, stratified by source, that does not
   depend on the order files are read in;
5. balances the languages: the larger language's training documents are ranked the same
   way (another salt) and kept until it has as many characters as the smaller one.

Output (``--out``): ``train.jsonl`` (one document a line: lang, source, path, chunk, text),
``heldout_en.txt`` and ``heldout_pt_BR.txt`` (documents separated by blank lines) and
``manifest.json`` (seed, each source's package, version and licence, counts, SHA-256 of
each output file).

    python packaging/demo_corpus.py --out /work/demo-train/corpus
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

LANGS = ("en", "pt_BR")


@dataclass(frozen=True)
class Source:
    name: str
    lang: str
    package: str
    licence: str
    root: Path
    pattern: str  # glob under root
    kind: str  # "html", "text" (blank-line paragraphs) or "fortune" ("%"-separated)


SOURCES = (
    # fortunes: the everyday register (people, dogs, yesterday) the manuals lack
    Source("fortunes-en", "en", "fortunes", "BSD-3-Clause (UC Berkeley; see the package's copyright)",
           Path("/usr/share/games/fortunes"), "[a-z]*", "fortune"),
    Source("fortunes-pt", "pt_BR", "fortunes-br", "GPL-2+",
           Path("/usr/share/games/fortunes"), "brasil", "fortune"),
    Source("focalinux", "pt_BR", "focalinux-text", "GFDL-1.1",
           Path("/usr/share/doc/focalinux/text"), "*/index.txt.gz", "text"),
    Source("debian-reference-en", "en", "debian-reference-en", "GPL-2+",
           Path("/usr/share/debian-reference"), "*.en.html", "html"),
    Source("debian-reference-pt", "pt_BR", "debian-reference-pt-br", "GPL-2+",
           Path("/usr/share/debian-reference"), "*.pt-br.html", "html"),
    Source("debian-edu-en", "en", "debian-edu-doc-en", "GPL-2+",
           Path("/usr/share/doc/debian-edu-doc-en"), "debian-edu-*-manual.html", "html"),
    Source("debian-edu-pt", "pt_BR", "debian-edu-doc-pt-br", "GPL-2+",
           Path("/usr/share/doc/debian-edu-doc-pt-br"), "debian-edu-*-manual.html", "html"),
    Source("gimp-help-en", "en", "gimp-help-en", "GFDL-1.2+ (no invariant sections)",
           Path("/usr/share/gimp/2.0/help/en"), "*.html", "html"),
    Source("gimp-help-pt", "pt_BR", "gimp-help-pt-br", "GFDL-1.2+ (no invariant sections)",
           Path("/usr/share/gimp/2.0/help/pt_BR"), "*.html", "html"),
    Source("libreoffice-help-en", "en", "libreoffice-help-en-us", "MPL-2.0",
           Path("/usr/share/libreoffice/help/en-US"), "**/*.html", "html"),
    Source("libreoffice-help-pt", "pt_BR", "libreoffice-help-pt-br", "MPL-2.0",
           Path("/usr/share/libreoffice/help/pt-BR"), "**/*.html", "html"),
)

# Frequent function words: enough to tell the two languages apart in a sentence, and to
# drop the untranslated English strings a translated manual still carries.
FUNCTION_WORDS = {
    "en": set("the of and to in is that for it with as on be this are by or from an can you "
              "not which at your if will has have".split()),
    "pt_BR": set("o a os as de do da dos das que e em no na nos nas um uma para com não é "
                 "por se ao pelo pela mais seu sua ou são".split()),
}


# --------------------------------------------------------------------------- extraction
class _Paragraphs(HTMLParser):
    """Collects the text of paragraph-like blocks; nested blocks are emitted separately."""

    BLOCKS = {"p", "li", "dd"}
    SKIP = {"script", "style", "pre", "table", "head", "title", "noscript", "svg"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self._stack: list[list[str]] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self._skip += 1
        elif tag in self.BLOCKS:
            self._stack.append([])
        elif tag == "br" and self._stack:
            self._stack[-1].append(" ")

    def handle_endtag(self, tag):
        if tag in self.SKIP:
            self._skip = max(0, self._skip - 1)
        elif tag in self.BLOCKS and self._stack:
            self.out.append("".join(self._stack.pop()))

    def handle_data(self, data):
        if self._stack and not self._skip:
            self._stack[-1].append(data)


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", text)).strip()


def html_paragraphs(raw: str) -> list[str]:
    parser = _Paragraphs()
    parser.feed(raw)
    parser.close()
    return [normalise(p) for p in parser.out]


def text_paragraphs(raw: str) -> list[str]:
    return [normalise(block) for block in re.split(r"\n\s*\n", raw)]


def fortune_paragraphs(raw: str) -> list[str]:
    """A fortune file's entries, each with its trailing "-- Author" attribution removed."""
    return [normalise(re.sub(r"\n\s*--\s.*\Z", "", entry.strip(), flags=re.S)) for entry in raw.split("\n%\n")]


def read_raw(path: Path) -> str:
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")  # focalinux's text files are ISO-8859-1


PARAGRAPHS = {"html": html_paragraphs, "text": text_paragraphs, "fortune": fortune_paragraphs}


def language_votes(text: str) -> dict[str, int]:
    words = re.findall(r"[^\W\d_]+", text.lower())
    return {lang: sum(w in FUNCTION_WORDS[lang] for w in words) for lang in LANGS}


def is_prose(text: str, lang: str, min_words: int = 6) -> bool:
    """A sentence (or several) of ``lang``: not a heading, a command line or a table cell."""
    words = text.split()
    if len(words) < min_words:
        return False
    visible = [c for c in text if not c.isspace()]
    if sum(c.isalpha() for c in visible) < 0.75 * len(visible):
        return False
    if not re.search(r"[.!?]", text) or text[-1] not in ".!?:)\"»”'":
        return False
    votes = language_votes(text)
    other = next(x for x in LANGS if x != lang)
    return votes[lang] >= 2 and votes[lang] > votes[other]


def source_files(source: Source) -> list[Path]:
    if not source.root.is_dir():
        return []
    files = sorted(p for p in source.root.glob(source.pattern) if p.is_file())
    if source.kind == "fortune":  # skip the .dat indexes, .u8 links and the Portuguese file
        files = [p for p in files if not p.suffix and (p.name == "brasil") == (source.lang == "pt_BR")]
    return files


def chunk(paragraphs: list[str], limit: int) -> list[str]:
    """Consecutive paragraphs joined by blank lines, each document at most ~``limit`` chars."""
    docs, current, size = [], [], 0
    for p in paragraphs:
        if current and size + len(p) > limit:
            docs.append("\n\n".join(current))
            current, size = [], 0
        current.append(p)
        size += len(p) + 2
    if current:
        docs.append("\n\n".join(current))
    return docs


def rank(seed: int, salt: str, key: tuple) -> str:
    return hashlib.sha256(f"{seed}:{salt}:{':'.join(map(str, key))}".encode()).hexdigest()


def package_version(package: str) -> str | None:
    try:
        done = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None


# --------------------------------------------------------------------------- corpus
def build(sources=SOURCES, seed: int = 1234, heldout_chars: int = 40_000, doc_chars: int = 3000) -> dict:
    """The corpus in memory: ``{"train": [doc...], "heldout": {lang: [doc...]}, "stats": {...}}``."""
    seen: set[str] = set()
    docs: list[dict] = []
    stats: dict[str, dict] = {}
    for source in sources:
        files = source_files(source)
        kept = dropped_dup = dropped_other = 0
        for path in files:
            raw = read_raw(path)
            paragraphs = PARAGRAPHS[source.kind](raw)
            prose = []
            for p in paragraphs:
                if not is_prose(p, source.lang):
                    dropped_other += 1
                elif p in seen:
                    dropped_dup += 1
                else:
                    seen.add(p)
                    prose.append(p)
            kept += len(prose)
            rel = path.relative_to(source.root).as_posix()
            for i, text in enumerate(chunk(prose, doc_chars)):
                docs.append({"lang": source.lang, "source": source.name, "path": rel, "chunk": i, "text": text})
        stats[source.name] = {"lang": source.lang, "package": source.package, "licence": source.licence,
                              "version": package_version(source.package), "files": len(files),
                              "paragraphs": kept, "duplicates_dropped": dropped_dup,
                              "not_prose_dropped": dropped_other,
                              "chars": sum(len(d["text"]) for d in docs if d["source"] == source.name)}

    def key(d: dict) -> tuple:
        return (d["source"], d["path"], d["chunk"])

    heldout: dict[str, list[dict]] = {lang: [] for lang in LANGS}
    train: list[dict] = []
    for lang in LANGS:
        mine = [d for d in docs if d["lang"] == lang]
        total = sum(len(d["text"]) for d in mine) or 1
        for name in sorted({d["source"] for d in mine}):
            group = sorted((d for d in mine if d["source"] == name), key=lambda d: rank(seed, "heldout", key(d)))
            share = heldout_chars * sum(len(d["text"]) for d in group) / total
            taken = 0
            for d in group:
                if taken < share:
                    heldout[lang].append(d)
                    taken += len(d["text"])
                else:
                    train.append(d)
    # balance: cap each language at the smaller one's training characters
    chars = {lang: sum(len(d["text"]) for d in train if d["lang"] == lang) for lang in LANGS}
    cap = min(chars.values())
    balanced = []
    for lang in LANGS:
        taken = 0
        for d in sorted((d for d in train if d["lang"] == lang), key=lambda d: rank(seed, "balance", key(d))):
            if taken >= cap:
                break
            balanced.append(d)
            taken += len(d["text"])
    balanced.sort(key=lambda d: (d["lang"],) + key(d))
    for lang in LANGS:
        heldout[lang].sort(key=key)
    return {
        "train": balanced,
        "heldout": {lang: [d for d in heldout[lang]] for lang in LANGS},
        "stats": {
            "seed": seed,
            "sources": stats,
            "train_chars": {lang: sum(len(d["text"]) for d in balanced if d["lang"] == lang) for lang in LANGS},
            "train_chars_before_balancing": chars,
            "train_documents": {lang: sum(d["lang"] == lang for d in balanced) for lang in LANGS},
            "heldout_chars": {lang: sum(len(d["text"]) for d in heldout[lang]) for lang in LANGS},
            "heldout_documents": {lang: len(heldout[lang]) for lang in LANGS},
        },
    }


def write(corpus: dict, out: Path) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    files = {"train.jsonl": "".join(json.dumps(d, ensure_ascii=False, sort_keys=True) + "\n" for d in corpus["train"])}
    for lang in LANGS:
        files[f"heldout_{lang}.txt"] = "\n\n".join(d["text"] for d in corpus["heldout"][lang]) + "\n"
    digests = {}
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
        digests[name] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    manifest = {**corpus["stats"], "sha256": digests,
                "heldout_rule": "per source, documents ranked by sha256(seed:heldout:source:path:chunk), "
                                "taken until the source's character share of the held-out size"}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def read_train(folder: Path) -> list[dict]:
    with open(folder / "train.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--heldout-chars", type=int, default=40_000, help="per language")
    parser.add_argument("--doc-chars", type=int, default=3000)
    args = parser.parse_args(argv)
    corpus = build(seed=args.seed, heldout_chars=args.heldout_chars, doc_chars=args.doc_chars)
    if not corpus["train"]:
        parser.error("no prose found: install the Debian packages named in this script's docstring")
    manifest = write(corpus, args.out)
    print(json.dumps({k: manifest[k] for k in ("train_chars", "train_chars_before_balancing", "heldout_chars")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
