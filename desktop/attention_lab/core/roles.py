"""The chapter's head roles, decided from measured numbers, and where each role lives.

Step 4 of the chapter: "identify the positional heads (distance ≈ 1) and the sink heads
(extremely low entropy, everything on token 0)".  Four roles, each a rule over numbers that
:mod:`attention_lab.core.analysis` measures (a head may hold several roles, or none):

* **positional** -- looks back a fixed distance: the relative offset that gets most of its
  weight (0: itself, 1: the previous token, 2: two back, …) lies back (≥ 1) and takes a share
  ≥ a threshold.  Judged by where the weight goes, not by the mean distance: a head with 57 %
  on itself and 30 % on i−1, or one split between itself and tokens further back, has a mean
  distance near 1 and looks at no fixed token back;
* **previous-token** -- the chapter's picture of "distance ≈ 1": weight on i−1 ≥ a threshold;
* **sink** -- mass on token 0 ≥ a threshold (the chapter's extreme case, "everything on
  token 0", has entropy near 0; the rule asks for the mass only, and the texts say so);
* **induction** -- the induction detector's score on a random token sequence repeated twice.

:func:`role_map` decides every head's roles, :func:`where` answers "which heads of this role
are in the layer shown, and where are the nearest ones if none", and :data:`ROLE_TEXTS`
holds the names, rules and explanations in English and Brazilian Portuguese as plain data
(keys shaped like the UI's string tables), so the lab and the app word them the same way.

Why these default thresholds (measured with ``tests/checkpoints.py``'s GPT-2-small-shaped
checkpoint with random weights, and the first demo model, on the lab's English and Portuguese
sentences): a head spreading evenly over 10 tokens puts at most 0.31 on any one offset back,
the demo model's clear previous-token heads (layer 2, heads 3 and 10) put 0.68--0.74 on i−1,
and its next one 0.42--0.48 (layer 2, head 4); in its layer 0 the heads that look back most put
at most 0.30 on one offset, and the ones near distance 1 put more on themselves (45--71 %).
A share of 0.4 keeps the clear and the next ones and leaves out the heads whose weight is
spread or parked on themselves.  Previous-token
(0.5: the head gives i−1 more than everything else together) and sink (0.6 on token 0) are
the app's first rules, kept so every figure quoted before still reads the same.  Induction 0.2: on a sequence repeated twice the
first copy has nothing earlier to look at, so the score's maximum is ≈ 0.5 (computed by
:func:`induction_reference`); 0.2 means ~40 % of the second copy's attention on the induction
target, ten times what a head spreading evenly gets (≈ 0.02).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Iterable, Mapping, Sequence

import torch

from .analysis import (
    HeadStats, head_detector, induction_pattern, repeated_random_tokens, uniform_causal_entropy,
)
from .numbers import number, words

ROLES = ("positional", "previous-token", "sink", "induction")
LANGUAGES = ("en", "pt_BR")


@dataclass(frozen=True)
class RoleRules:
    """Thresholds of the four roles (see the module's docstring for why these defaults)."""

    positional_share: float = 0.4  # meanᵢ A[i, i−d] ≥ this at the head's dominant offset d, d ≥ 1
    previous_token: float = 0.5  # meanᵢ A[i, i−1] ≥ this
    sink: float = 0.6  # meanᵢ A[i, 0] ≥ this
    induction: float = 0.2  # induction detector score on a repeated random sequence ≥ this

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class HeadRoles:
    """One head's roles, with the number each role is judged by (``scores``)."""

    layer: int
    head: int
    roles: tuple[str, ...]
    scores: dict[str, float] = field(default_factory=dict)  # role -> its number (all four roles)
    entropy_ratio: float = 0.0  # entropy ÷ the entropy of a head spreading evenly
    offset: int = 1  # the dominant offset (0: itself), which "positional"'s score is the share of

    def has(self, role: str) -> bool:
        return role in self.roles


def _check_role(role: str) -> str:
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; roles: {', '.join(ROLES)}")
    return role


def head_roles(
    stats: HeadStats, n: int, induction: float | None = None, rules: RoleRules | None = None
) -> HeadRoles:
    """The roles of one head whose portrait numbers (``stats``) were measured on ``n`` tokens.

    ``induction`` is the head's induction score (``None``: not measured, never "induction")."""
    r = rules or RoleRules()
    if n < 2:
        raise ValueError("roles need a portrait of at least 2 tokens")
    ratio = stats.entropy / uniform_causal_entropy(n)
    scores = {
        "positional": stats.offset_share,
        "previous-token": stats.previous_token,
        "sink": stats.sink_mass,
        "induction": float("nan") if induction is None else float(induction),
    }
    held = []
    if stats.offset >= 1 and stats.offset_share >= r.positional_share:
        held.append("positional")
    if stats.previous_token >= r.previous_token:
        held.append("previous-token")
    if stats.sink_mass >= r.sink:
        held.append("sink")
    if induction is not None and induction >= r.induction:
        held.append("induction")
    return HeadRoles(stats.layer, stats.head, tuple(held), scores, ratio, stats.offset)


def role_map(
    stats: Iterable[HeadStats],
    n: int,
    induction: torch.Tensor | Sequence[Sequence[float]] | None = None,
    rules: RoleRules | None = None,
) -> list[HeadRoles]:
    """Every head's roles.  ``induction``: ``[L, H]`` scores (e.g. from
    :func:`analysis.induction_scores_on_repeats`), indexed by each head's layer and head."""
    table = None
    if induction is not None:
        table = induction.tolist() if isinstance(induction, torch.Tensor) else [list(r) for r in induction]
    return [
        head_roles(s, n, None if table is None else table[s.layer][s.head], rules)
        for s in stats
    ]


def _strength(role: str, h: HeadRoles) -> float:
    """Higher = a clearer member of the role (positional: a head mostly on itself comes last)."""
    if role == "positional" and h.offset == 0:
        return h.scores[role] - 1.0
    return h.scores[role]


@dataclass(frozen=True)
class RoleHit:
    layer: int
    head: int
    score: float  # the role's number: the share of its dominant offset (positional), weight, score
    offset: int | None = None  # positional only: that offset (1: the previous token)

    @classmethod
    def of(cls, role: str, h: HeadRoles) -> "RoleHit":
        return cls(h.layer, h.head, h.scores[role], h.offset if role == "positional" else None)


@dataclass(frozen=True)
class RoleWhere:
    """Heads of ``role`` in the shown ``layer`` and, ranked, in the other layers."""

    role: str
    layer: int
    here: list[RoleHit]  # strongest first
    elsewhere: list[RoleHit]  # nearest layer first (ties: the lower layer), strongest first within a layer
    best: RoleHit | None  # the strongest head of the model for this role, whether it qualifies or not

    @property
    def nearest_layer(self) -> int | None:
        return self.elsewhere[0].layer if self.elsewhere else None

    def nearest(self) -> list[RoleHit]:
        """The heads of the nearest other layer that has this role (what "Show" would open)."""
        return [h for h in self.elsewhere if h.layer == self.nearest_layer]

    def as_dict(self) -> dict:
        return {
            "role": self.role,
            "layer": self.layer,
            "here": [asdict(h) for h in self.here],
            "nearest_layer": self.nearest_layer,
            "nearest": [asdict(h) for h in self.nearest()],
            "elsewhere": [asdict(h) for h in self.elsewhere],
            "best": None if self.best is None else asdict(self.best),
        }


def where(roles: Sequence[HeadRoles], role: str, layer: int) -> RoleWhere:
    """Which heads of ``role`` are in ``layer``; the others, nearest layer first."""
    _check_role(role)
    members = [h for h in roles if h.has(role)]
    members.sort(key=lambda h: (abs(h.layer - layer), h.layer, -_strength(role, h), h.head))
    here = [RoleHit.of(role, h) for h in members if h.layer == layer]
    elsewhere = [RoleHit.of(role, h) for h in members if h.layer != layer]
    scored = [h for h in roles if h.scores[role] == h.scores[role]]  # NaN: not measured
    best = max(scored, key=lambda h: _strength(role, h), default=None)
    return RoleWhere(role, layer, here, elsewhere, None if best is None else RoleHit.of(role, best))


def where_all(roles: Sequence[HeadRoles], layer: int) -> dict[str, RoleWhere]:
    return {role: where(roles, role, layer) for role in ROLES}


# ---------------------------------------------------------------------------- induction's yardstick
def induction_reference(ids: Sequence[int]) -> dict[str, float]:
    """What the induction score can be on ``ids``: its maximum (all of every row that has an
    earlier copy on the induction target) and a head spreading evenly over its past.

    The detector's score is (A·D).sum() / A.sum() over all rows; rows of the first copy have
    no target, so the maximum is the share of rows that have one (≈ 0.5 on a sequence
    repeated twice)."""
    d = induction_pattern(ids).double()
    n = d.shape[0]
    uniform = torch.tril(torch.ones(n, n, dtype=torch.float64))
    uniform = uniform / uniform.sum(-1, keepdim=True)
    return {
        "maximum": float((d.sum(-1) > 0).double().sum() / n),
        "uniform": float((uniform * d).sum() / n),
    }


# ---------------------------------------------------------------------------- words
ROLE_TEXTS: dict[str, dict[str, str]] = {
    "roles.positional.name": {"en": "positional", "pt_BR": "posicional"},
    "roles.previous-token.name": {"en": "previous-token", "pt_BR": "token anterior"},
    "roles.sink.name": {"en": "sink", "pt_BR": "vala"},
    "roles.induction.name": {"en": "induction", "pt_BR": "indução"},
    "roles.positional.heads": {"en": "positional heads", "pt_BR": "cabeças posicionais"},
    "roles.previous-token.heads": {"en": "previous-token heads", "pt_BR": "cabeças de token anterior"},
    "roles.sink.heads": {"en": "sink heads", "pt_BR": "cabeças de vala"},
    "roles.induction.heads": {"en": "induction heads", "pt_BR": "cabeças de indução"},
    "roles.positional.score": {"en": "{offset}, {share}", "pt_BR": "{offset}, {share}"},
    "roles.offset.0": {"en": "looks at itself", "pt_BR": "olha para si mesma"},
    "roles.offset.1": {"en": "looks at the previous token", "pt_BR": "olha para o token anterior"},
    "roles.offset.n": {"en": "looks {d} tokens back", "pt_BR": "olha {d} tokens para trás"},
    "roles.positional.rule": {
        "en": "most of the weight goes to one offset back (the previous token, two back, …), at least "
        "{positional_share:.2f} of it",
        "pt_BR": "a maior parte do peso vai para uma só distância para trás (o token anterior, dois atrás, …), "
        "pelo menos {positional_share:.2f} dele",
    },
    "roles.head": {"en": "layer {layer}, head {head}", "pt_BR": "camada {layer}, cabeça {head}"},
    "roles.head.short": {"en": "head {head}", "pt_BR": "cabeça {head}"},
    "roles.previous-token.rule": {
        "en": "weight on the previous token (i−1) ≥ {previous_token:.2f}",
        "pt_BR": "peso no token anterior (i−1) ≥ {previous_token:.2f}",
    },
    "roles.sink.rule": {
        "en": "weight on token 0 ≥ {sink:.2f}",
        "pt_BR": "peso no token 0 ≥ {sink:.2f}",
    },
    "roles.induction.rule": {
        "en": "induction score ≥ {induction:.2f} on a random token sequence repeated twice",
        "pt_BR": "score de indução ≥ {induction:.2f} numa sequência aleatória de tokens repetida duas vezes",
    },
    "roles.positional.about": {
        "en": "Looks back a fixed distance: most of its weight goes to one offset, e.g. the previous token. "
        "Judged by where the weight goes, not by the mean distance: a head split between itself and tokens "
        "further back can also average 1.",
        "pt_BR": "Olha uma distância fixa para trás: a maior parte do peso vai para uma só posição relativa, "
        "por exemplo o token anterior. Julgada por onde o peso vai, não pela distância média: uma cabeça "
        "dividida entre si mesma e tokens mais atrás também pode dar média 1.",
    },
    "roles.previous-token.about": {
        "en": "The chapter's picture of distance ≈ 1: most of each row's budget on the token right before it. "
        "Such a head is positional too.",
        "pt_BR": "A imagem da apostila para distância ≈ 1: a maior parte do orçamento de cada linha no token "
        "logo antes. Uma cabeça assim também é posicional.",
    },
    "roles.sink.about": {
        "en": "At least {sink:.2f} of the weight on token 0, whatever that token is: a place to park attention "
        "when there is nothing useful to look at. The chapter's extreme case puts everything there.",
        "pt_BR": "Pelo menos {sink:.2f} do peso no token 0, seja ele qual for: um lugar para estacionar a "
        "atenção quando não há nada útil para olhar. O caso extremo da apostila põe tudo ali.",
    },
    "roles.induction.about": {
        "en": "Looks at the token that followed the earlier copy of the current one, so it can continue a "
        "repeated pattern (…Dumbledore said… Dumbledore → said). On a sequence repeated twice a head can score "
        "at most {maximum:.2f} (the first copy has nothing earlier to look at); one spreading evenly scores "
        "about {uniform:.2f}.",
        "pt_BR": "Olha para o token que veio depois da cópia anterior do token atual, e assim pode continuar um "
        "padrão repetido (…Dumbledore disse… Dumbledore → disse). Numa sequência repetida duas vezes uma cabeça "
        "tem score de no máximo {maximum:.2f} (a primeira cópia não tem nada antes para olhar); uma que se espalha por "
        "igual tem score de cerca de {uniform:.2f}.",
    },
    "roles.here": {"en": "{role} in layer {layer}: {heads}", "pt_BR": "{role} na camada {layer}: {heads}"},
    "roles.none_here": {"en": "{role}: none in layer {layer}", "pt_BR": "{role}: nenhuma na camada {layer}"},
    "roles.nearest": {"en": "layer {layer} has {heads}", "pt_BR": "a camada {layer} tem {heads}"},
    "roles.also": {"en": "also {places}", "pt_BR": "também {places}"},
    "roles.in_layer": {"en": "layer {layer}: {heads}", "pt_BR": "camada {layer}: {heads}"},
    "roles.none_anywhere": {
        "en": "no head of this model qualifies (the best: {head}, {score})",
        "pt_BR": "nenhuma cabeça deste modelo se qualifica (a melhor: {head}, {score})",
    },
    "roles.and": {"en": "and", "pt_BR": "e"},
}


def text(key: str, lang: str = "en", **values: object) -> str:
    """``ROLE_TEXTS[key]`` in ``lang`` (English when the language is unknown), formatted."""
    return words(ROLE_TEXTS, key, lang, **values)


def describe(role: str, rules: RoleRules | None = None, lang: str = "en", reference: Mapping[str, float] | None = None) -> dict[str, str]:
    """The role's name, rule (with the thresholds in force) and explanation in ``lang``.

    ``reference``: :func:`induction_reference`'s numbers for the induction explanation."""
    _check_role(role)
    r = (rules or RoleRules()).as_dict()
    about_values = dict(reference or {"maximum": 0.5, "uniform": 0.0}) if role == "induction" else r
    return {
        "name": text(f"roles.{role}.name", lang),
        "rule": text(f"roles.{role}.rule", lang, **r),
        "about": text(f"roles.{role}.about", lang, **about_values),
    }


def _join(items: list[str], lang: str) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {text('roles.and', lang)} " + items[-1]


def head_name(layer: int, head: int, lang: str = "en") -> str:
    """A head as every text writes it: "layer 2, head 3" / "camada 2, cabeça 3" (never "2.3",
    which reads as a decimal, nor a letter code that mixes the languages)."""
    return text("roles.head", lang, layer=layer, head=head)


def offset_words(offset: int, share: float, lang: str = "en") -> str:
    """Where a positional head looks and how much of its weight goes there: "looks at the previous token, 64%"."""
    where_to = text(f"roles.offset.{offset}", lang) if offset < 2 else text("roles.offset.n", lang, d=offset)
    return text("roles.positional.score", lang, offset=where_to, share=number(100 * share, ".0f", lang) + "%")


def _score(role: str, hit: RoleHit, lang: str) -> str:
    if role == "positional" and hit.offset is not None:
        return offset_words(hit.offset, hit.score, lang)
    return number(hit.score, ".2f", lang)


def _hits(hits: Sequence[RoleHit], role: str, lang: str) -> str:
    return _join([f"{text('roles.head.short', lang, head=h.head)} ({_score(role, h, lang)})" for h in hits], lang)


def _by_layer(hits: Sequence[RoleHit], role: str, lang: str) -> str:
    layers = list(dict.fromkeys(h.layer for h in hits))  # ranked order kept
    return "; ".join(
        text("roles.in_layer", lang, layer=layer, heads=_hits([h for h in hits if h.layer == layer], role, lang))
        for layer in layers
    )


def where_sentence(found: RoleWhere, lang: str = "en") -> str:
    """E.g. "previous-token heads: none in layer 0; layer 2 has head 3 (0.69) and head 10 (0.74)"."""
    name = text(f"roles.{found.role}.heads", lang)
    if found.here:
        sentence = text("roles.here", lang, role=name, layer=found.layer, heads=_hits(found.here, found.role, lang))
        others = found.elsewhere
    else:
        sentence = text("roles.none_here", lang, role=name, layer=found.layer)
        if found.elsewhere:
            sentence += "; " + text("roles.nearest", lang, layer=found.nearest_layer,
                                    heads=_hits(found.nearest(), found.role, lang))
        others = [h for h in found.elsewhere if h.layer != found.nearest_layer]
    if others:
        sentence += "; " + text("roles.also", lang, places=_by_layer(others, found.role, lang))
    if not found.here and not found.elsewhere and found.best is not None:
        best = found.best
        sentence += "; " + text("roles.none_anywhere", lang, head=head_name(best.layer, best.head, lang),
                                score=_score(found.role, best, lang))
    return sentence


# ---------------------------------------------------------------------------- the model's induction scores
INDUCTION_WORDS = 12  # words in each half of the induction step's sequence


def repeated_words_text(tokenizer, words: int = INDUCTION_WORDS, seed: int = 0) -> str:
    """A random sequence of whole-word tokens said twice (" river lamp coin … river lamp coin …").

    Random *words*, not random ids: the text goes into the token editor, and each word must
    come back as the one token it was drawn as, so the second half repeats the first token
    for token and the induction stripe is sharp.  Drawn from the tokenizer's own vocabulary
    (whatever model is loaded), seeded."""
    g = torch.Generator().manual_seed(seed)
    chosen: list[str] = []
    for i in torch.randperm(tokenizer.vocab_size, generator=g).tolist():
        text = tokenizer.token_texts([i])[0]
        word = text[1:]
        if text.startswith("␣") and word.isascii() and word.isalpha() and word.islower() and len(word) >= 3:
            if tokenizer.encode(" " + word) == [i] and word not in chosen:
                chosen.append(word)
                if len(chosen) == words:
                    break
    if not chosen:
        raise ValueError("the tokenizer has no whole-word tokens to build a repeated sequence from")
    half = "".join(" " + w for w in chosen)
    return half + half  # (the leading space keeps the first word the same token as its copy)


def induction_ids(tokenizer, context: int | None = None) -> list[int]:
    """The one sequence a model's induction scores are measured on: GPT-2's BOS (``<|endoftext|>``),
    then a random sequence of whole words said twice (:func:`repeated_words_text`) -- the text the
    tour's induction step puts in the editor, with BOS on, so its figure and the portrait's agree.
    A tokenizer without whole-word tokens gets random tokens said twice instead; ``context``: at most
    that many tokens, both halves equal."""
    eos = getattr(tokenizer, "eos_id", None)
    try:
        ids = list(tokenizer.encode(repeated_words_text(tokenizer)))
    except ValueError:
        ids = repeated_random_tokens(INDUCTION_WORDS, 0, tokenizer.vocab_size)
    ids = ([eos] if eos is not None else []) + ids
    if context is not None and len(ids) > context:
        half = (context - (eos is not None)) // 2
        body = ids[(eos is not None):]
        ids = ids[: (eos is not None)] + body[:half] + body[:half]
    return ids


def model_induction(lens, tokenizer) -> tuple[torch.Tensor, list[int]]:
    """The model's induction scores ``[L, H]`` (head_detector's induction score) on :func:`induction_ids`,
    and that sequence: one definition and one measurement, quoted by the portrait and the tour alike."""
    ids = induction_ids(tokenizer, lens.config.n_positions)
    return head_detector(lens, ids, "induction"), ids
