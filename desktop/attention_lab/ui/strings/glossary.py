"""One Portuguese word per concept, the Portuguese chapter's (``shared/seeds``, "Multi-head e a máscara causal").

A learner who reads "vala" in the tour and "sumidouro" in the head grid asks whether they are two ideas.
Every ``pt_BR`` text of every strings module is checked against this table by ``tests/ui/test_glossary.py``:
a text that uses one of a term's *rejected* variants fails with the word to use instead.  Code that
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
    Term("sink", "vala", (r"\bsumidouros?\b", r"\bsinks?\b")),
    Term("positional heads", "cabeças posicionais", (r"\bpositional\b",)),
    Term("label leakage", "vazamento de rótulo", (r"\bleak(?:age|s)?\b",)),
    Term("fixed budget", "orçamento fixo", (r"\bfixed budget\b",)),
    Term("KV cache", "cache KV", (r"\bKV cache\b", r"\bcache de KV\b")),
    Term("entropy", "entropia", (r"\bentropy\b",)),
    Term("mean distance", "distância média", (r"\bmean distance\b",)),
)

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


def problems(text: str) -> list[str]:
    """What in a Portuguese text breaks the glossary: one line per rejected variant or calque found."""
    prose = _PLACEHOLDER.sub(" ", text)
    found = []
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
