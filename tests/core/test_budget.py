"""The fixed-budget numbers (core.budget): one query's row in every head and their average."""

from __future__ import annotations

import math

import pytest
import torch

from attention_lab.core.budget import budget_rows, default_query, disagreement, word_at, word_spans


def _maps() -> torch.Tensor:
    """3 heads, 4 tokens, causal rows; at query 3 head 0 looks at token 0, head 1 at token 2,
    head 2 at itself; at every other query the heads agree."""
    a = torch.zeros(3, 4, 4)
    for h in range(3):
        a[h, 0, 0] = 1.0
        a[h, 1, :2] = torch.tensor([0.5, 0.5])
        a[h, 2, :3] = torch.tensor([0.2, 0.3, 0.5])
    a[0, 3] = torch.tensor([0.9, 0.05, 0.05, 0.0])
    a[1, 3] = torch.tensor([0.0, 0.1, 0.8, 0.1])
    a[2, 3] = torch.tensor([0.0, 0.0, 0.3, 0.7])
    return a


def test_rows_average_and_what_each_head_chooses():
    rows = budget_rows(_maps(), 3)
    assert rows.heads == 3 and rows.rows.shape == (3, 4)
    assert torch.allclose(rows.rows.sum(-1), torch.ones(3, dtype=torch.float64))
    assert rows.average.tolist() == pytest.approx([0.3, 0.05, 0.383333, 0.266667], abs=1e-6)
    assert rows.top_key == [0, 2, 3] and rows.top_weight == pytest.approx([0.9, 0.8, 0.7])
    assert rows.keys_chosen == [0, 2, 3]
    assert rows.average_top_key == 2 and rows.average_top_weight == pytest.approx(0.383333, abs=1e-6)
    # the average spreads wider than any head: its entropy is the largest
    assert rows.average_entropy > max(rows.entropy)
    assert rows.entropy[0] == pytest.approx(-(0.9 * math.log(0.9) + 2 * 0.05 * math.log(0.05)))


def test_a_different_query_gives_different_numbers():
    assert budget_rows(_maps(), 2).keys_chosen == [2]  # the heads agree there
    assert budget_rows(_maps(), 0).average.tolist() == [1.0]  # token 0 can only look at itself


def test_default_query_is_the_chapters_verb_else_where_heads_disagree():
    assert default_query(_maps(), ["The", "␣dog", "␣bit", "␣him"]) == 2
    assert default_query(_maps(), ["O", "␣cão", "␣mordeu", "␣ele"]) == 2
    assert default_query(_maps(), ["A", "␣b", "␣c", "␣d"]) == 3  # the heads disagree at query 3 only
    assert disagreement(_maps())[:3].tolist() == pytest.approx([0.0, 0.0, 0.0])
    assert default_query(_maps()[:, :1, :1], ["A"]) == 0


def test_bad_input():
    with pytest.raises(ValueError, match="out of range"):
        budget_rows(_maps(), 4)
    with pytest.raises(ValueError, match=r"\[H, n, n\]"):
        budget_rows(torch.zeros(4, 4), 1)


def test_the_view_opens_on_a_whole_word_never_a_piece_inside_one():
    """The demo tokenizer cuts the Portuguese sentence into pieces ("␣mor de u", "␣on t em"): the view
    opens on the verb's last piece, named as the whole word, never on a piece like "␣on" of "ontem"."""
    tokens = ["O", "␣c", "ach", "or", "ro", "␣grand", "e", "␣mor", "de", "u", "␣o", "␣car", "te", "iro", "␣on", "t", "em"]
    maps = torch.rand(2, len(tokens), len(tokens)).tril()
    maps = maps / maps.sum(-1, keepdim=True)
    query = default_query(maps, tokens)
    assert query == 9 and word_at(tokens, query) == "mordeu"
    assert word_at(tokens, 14) == "ontem" and word_spans(tokens)[-1] == (14, 16)
    # no chapter verb: the heads' disagreement picks among the words' last pieces only
    other = ["A", "␣gr", "and", "e", "␣c", "asa", "."]
    ends = {last for _, last in word_spans(other)}
    assert default_query(maps[:, :7, :7] / maps[:, :7, :7].sum(-1, keepdim=True), other) in ends - {0}
