"""The chapter's first idea, measured: every row of attention sums to 1, a fixed budget.

One head must *choose* where its budget goes; many heads let a layer attend to several
things at once.  :func:`budget_rows` takes one query position and returns its attention
row in every head of a layer next to the heads' average -- the single blurred row one head
would have to settle for if it had to serve every purpose -- with the numbers the view and
the tour say: where each head puts most of its budget, how much, and how spread the
average is compared with the heads (entropy).

:func:`default_query` picks the query the view opens on: the chapter's verb ("bit" /
"mordeu") when the text has it, else the position where the heads disagree most (their
rows farthest from their average), i.e. where the budget story shows best.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

CHAPTER_VERBS = ("bit", "mordeu")  # the chapter's sentence's verb, EN and PT


@dataclass(frozen=True)
class BudgetRows:
    """Query ``query``'s attention row in each head of one layer (keys 0 … query)."""

    query: int
    rows: torch.Tensor  # [H, query+1] float64, each row sums to 1 (the causal past only)
    average: torch.Tensor  # [query+1] the heads' mean row, sums to 1 too
    top_key: list[int]  # per head: the key it gives most of its budget
    top_weight: list[float]  # per head: that weight
    entropy: list[float]  # per head: −Σ a ln a (nats)
    average_top_key: int
    average_top_weight: float
    average_entropy: float

    @property
    def heads(self) -> int:
        return int(self.rows.shape[0])

    @property
    def keys_chosen(self) -> list[int]:
        """The distinct keys the heads' largest weights land on, in key order."""
        return sorted(set(self.top_key))

    @property
    def mean_head_entropy(self) -> float:
        return sum(self.entropy) / len(self.entropy)


def _entropy(row: torch.Tensor) -> float:
    p = row[row > 0]
    return float(-(p * p.log()).sum())


def budget_rows(attention: torch.Tensor, query: int) -> BudgetRows:
    """``attention``: one layer's maps ``[H, n, n]`` (causal); ``query``: 0 … n−1."""
    a = torch.as_tensor(attention)
    if a.dim() != 3 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"budget_rows expects one layer's maps [H, n, n], got shape {tuple(a.shape)}")
    n = a.shape[-1]
    if not 0 <= query < n:
        raise ValueError(f"query {query} is out of range: the text has {n} tokens")
    rows = a[:, query, : query + 1].to(torch.float64)
    average = rows.mean(0)
    top_weight, top_key = rows.max(-1)
    avg_weight, avg_key = average.max(-1)
    return BudgetRows(
        query=query,
        rows=rows,
        average=average,
        top_key=[int(k) for k in top_key],
        top_weight=[float(w) for w in top_weight],
        entropy=[_entropy(r) for r in rows],
        average_top_key=int(avg_key),
        average_top_weight=float(avg_weight),
        average_entropy=_entropy(average),
    )


def disagreement(attention: torch.Tensor) -> torch.Tensor:
    """Per query position: the heads' mean total-variation distance from their average row
    (0: every head looks at the same place; near 1: each head spends its budget elsewhere)."""
    a = torch.as_tensor(attention).to(torch.float64)
    average = a.mean(0, keepdim=True)
    return 0.5 * (a - average).abs().sum(-1).mean(0)


def _starts_word(token: str) -> bool:
    return token.startswith(("␣", " ")) or not token[:1].isalnum()


def word_spans(tokens: Sequence[str]) -> list[tuple[int, int]]:
    """The text's words as token spans ``(first, last)``: a word starts at a token that begins
    with a space (␣) or a sign, or follows a sign, and runs over the letter pieces after it."""
    spans: list[tuple[int, int]] = []
    for i, token in enumerate(tokens):
        if i == 0 or _starts_word(token) or not tokens[i - 1][-1:].isalnum():
            spans.append((i, i))
        else:
            spans[-1] = (spans[-1][0], i)
    return spans


def word_at(tokens: Sequence[str], position: int) -> str:
    """The whole word the token at ``position`` belongs to, without its leading space."""
    for first, last in word_spans(tokens):
        if first <= position <= last:
            return "".join(tokens[first : last + 1]).lstrip("␣ ")
    raise IndexError(position)


def default_query(attention: torch.Tensor, tokens: Sequence[str]) -> int:
    """The chapter's verb when the text has it, else the word (after the first) where the heads
    disagree most; 0 for a one-token text.  A word cut into pieces (“␣mor de u”) is queried at
    its last piece, the first that has read the whole word under the mask: never at a piece in
    the middle of a word (“␣on” of “ontem”)."""
    spans = word_spans(tokens)
    for first, last in spans:
        if "".join(tokens[first : last + 1]).strip("␣ ").lower() in CHAPTER_VERBS:
            return last
    n = len(tokens)
    if n < 2:
        return 0
    ends = [last for _, last in spans if last >= 1] or list(range(1, n))
    score = disagreement(attention)
    return max(ends, key=lambda i: float(score[i]))
