"""One Portuguese word per concept, the Portuguese chapter's (``shared/seeds``, "Multi-head e a máscara causal").

A learner who reads "vala" in the tour and "sumidouro" in the head grid asks whether they are two ideas.
Every ``pt_BR`` text of every strings module (and core's role and KV-cache words) is checked against this
table by ``tests/ui/test_glossary.py``: a text that uses one of a term's *rejected* variants fails with the
word to use instead; a head written as a letter code fails; a word the English original also has must be
one of :data:`LOANWORDS` or :data:`SAME_SPELLING` (no English left in the Portuguese); and no text in
either language uses :data:`JARGON` the material never introduces.  Code that
builds a text from a term (a role name in a hover) reads it from :data:`TERMS` through :func:`pt`.

To add a term: one :class:`Term` below, with the variants already seen (or likely) in the app's texts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    concept: str  # the English term, as the English texts use it
    pt_BR: str  # the Portuguese term to use
    rejected: tuple[str, ...] = ()  # regexes (case-insensitive) of Portuguese variants not to use


TERMS: tuple[Term, ...] = (
    Term("head", "cabeça", (r"(?<![-\w])heads?\b",)),
    Term("layer", "camada", (r"\blayers?\b",)),
    Term("causal mask", "máscara causal", (r"\bcausal mask\b", r"\bmáscara causativa\b")),
    Term("query", "consulta", (r"\bquery\b", r"\bqueries\b")),
    Term("key", "chave", (r"\bkeys?\b",)),
    Term("value", "valor", (r"\bvalues?\b",)),
    # The chapter: "as cabeças posicionais (distância ≈ 1) e as de "vala" (entropia baixíssima, tudo no token 0)".
    # one form for the heads: "cabeças de vala" ("as de “vala”"), never "cabeças vala" nor "cabeças “vala”"
    Term("sink", "vala", (r"\bsumidouros?\b", r"\bsinks?\b", r"\bcabeças?\s+[“\"]?vala")),
    Term("positional heads", "cabeças posicionais", (r"\bpositional\b",)),
    Term("label leakage", "vazamento de rótulo", (r"\bleak(?:age|s)?\b",)),
    Term("fixed budget", "orçamento fixo", (r"\bfixed budget\b",)),
    Term("KV cache", "cache KV", (r"\bKV cache\b", r"\bcache de KV\b")),
    Term("entropy", "entropia", (r"\bentropy\b",)),
    Term("mean distance", "distância média", (r"\bmean distance\b",)),
    # the Portuguese material calls itself an "apostila" ("a apostila 03"), never a "capítulo"
    Term("chapter", "apostila", (r"\bcap[íi]tulos?\b",)),
    # the material writes "score" ("Zerar o score não adianta"): one term, never "pontuação" beside it
    Term("score", "score", (r"\bpontua(?:ção|ções|r|m|s)?\b",)),
    # "uma matmul" ("uma matmul produz Q, K e V de uma vez"), one gender
    Term("matmul", "uma matmul", (r"\b(?:um|num|único)\s+(?:único\s+)?matmul\b", r"\bmatmul\s+único\b")),
    Term("worker", "cálculo em segundo plano", (r"\bworkers?\b",)),
)

#: a head as the texts write it, in either language: "layer 0, head 1" / "camada 0, cabeça 1".  A letter
#: code ("C0 H1" mixes Portuguese C for camada with English H for head) and "0.1" (a decimal) are not used.
HEAD_CODES = re.compile(r"\b[CLH]\{(?:layer|head)\}|\b[CL]\d+\s*H\d+\b|\{layer\}\.\{head\}")

#: jargon the material never introduces, in either language: defined where it is needed, or dropped
JARGON = (r"\bnats?\b", r"\bresidual stream\b", r"\bfluxo residual\b")

#: English words a Portuguese text may keep: the material's own loans, names, and the app's controls
LOANWORDS = frozenset("""
    token tokens softmax cache score scores matmul reshape concat embeddings benchmark prompt multi-head
    prefix-lm tour lab pixel emoji download offline internet checkpoint bit bytes shift enter ctrl
    gpt- small roberta dumbledore attention hugging face mit pytorch transformers bpe bos kv csv png svg
    json mb ms utf- nan config vocab merges pickle tensor id safetensors finfo wte emb true false logits vs
""".split())

#: words spelled the same in both languages (Portuguese words, not English left over; "pos." abbreviates both)
SAME_SPELLING = frozenset("""
    a as o e do no final local total diagonal divide compare move zero min causal editor menu
    pos
""".split())

# Word-for-word translations that read oddly in Portuguese, with the reason a reviewer gave.
CALQUES: tuple[tuple[str, str], ...] = (
    (r"\bo que o cache KV compra\b", "“buys” is not “compra” here: say what the cache gains (ganha, poupa)"),
    (r"\bescolha do livro\b", "“textbook choice”: a escolha clássica / a dos livros-texto"),
    (r"\berram a soma\b", "“rows miss 1”: as linhas deixam de somar 1 (por até …)"),
)

_PLACEHOLDER = re.compile(r"\{[^{}]*\}|<[^<>]*>|&\w+;")  # {fields}, <html> and <|endoftext|>, &entities;


def pt(concept: str) -> str:
    """The Portuguese term for an English concept of :data:`TERMS`."""
    for term in TERMS:
        if term.concept == concept:
            return term.pt_BR
    raise KeyError(concept)


_CODE = re.compile(r"\b[\w-]+\.(?:json|txt|safetensors|bin)\b|\b\w*[_\d]\w*\b")  # file names, identifiers
_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ][A-Za-zÀ-ÖØ-öø-ÿ'\-]*")  # letters (× and ÷ are signs)


def english_left(pt_text: str, en_text: str) -> list[str]:
    """Words of a Portuguese text that its English original also has and that are neither an allowed
    loanword nor a Portuguese word spelled alike: English left in the Portuguese ("Sem worker")."""
    def words(text: str) -> list[str]:
        prose = _CODE.sub(" ", _PLACEHOLDER.sub(" ", text))
        return [w for w in _WORD.findall(prose) if len(w) > 1 and not w.isupper()]

    english = {w.lower() for w in words(en_text)}
    allowed = LOANWORDS | SAME_SPELLING
    return sorted({w for w in words(pt_text) if w.lower() in english and w.lower() not in allowed})


def problems(text: str) -> list[str]:
    """What in a Portuguese text breaks the glossary: one line per rejected variant or calque found."""
    prose = _PLACEHOLDER.sub(" ", text)
    found = []
    match = HEAD_CODES.search(text)
    if match:
        found.append(f"“{match.group(0)}”: write a head as “camada 0, cabeça 1”")
    for term in TERMS:
        for pattern in term.rejected:
            match = re.search(pattern, prose, re.IGNORECASE)
            if match:
                found.append(f"“{match.group(0)}”: use “{term.pt_BR}” ({term.concept})")
    for pattern, why in CALQUES:
        match = re.search(pattern, prose, re.IGNORECASE)
        if match:
            found.append(f"“{match.group(0)}”: {why}")
    return found
