"""Exact cl100k_base token counting and truncation, offline."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.tokens import count_lines, count_tokens, truncate_to_tokens


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", 0),
        ("hello world", 2),
        ("Hello, world!", 4),
        ("<|endoftext|>", 7),  # special-token text counts as ordinary text, never raises
    ],
)
def test_known_counts(text: str, expected: int) -> None:
    assert count_tokens(text) == expected


def test_turkish_counts_more_than_words() -> None:
    text = "Ağaoğlu'nun faturası ödendi mi?"
    assert count_tokens(text) > len(text.split())


@pytest.mark.parametrize("limit", [0, 1, 2, 3, 5, 8, 13, 1000])
@pytest.mark.parametrize(
    "text",
    [
        "hello world, this is a somewhat longer sentence to cut.",
        "Ağaoğlu'nun siparişleri ve faturaları ödendi; kargo İzmir'e ulaştı. 🚚📦",
        "日本語のテキストも切れるべきです",
    ],
)
def test_truncate_respects_limit(text: str, limit: int) -> None:
    cut = truncate_to_tokens(text, limit)
    assert count_tokens(cut) <= limit
    assert text.startswith(cut)
    assert "\ufffd" not in cut
    if count_tokens(text) <= limit:
        assert cut == text


def test_truncate_keeps_as_much_as_fits() -> None:
    assert truncate_to_tokens("hello world again", 2) == "hello world"
    assert truncate_to_tokens("hello", -1) == ""


# Characters that make the tokenizer's pieces interesting: letters of both languages,
# digits, apostrophes (contractions), punctuation runs, spaces, tabs, CR and LF.
_PIECES = st.lists(st.sampled_from(list("aAzıİşĞé09'’s.,:)(]…-/ \t\r\n") + ["ll", "ve", "’s", "  \n"]),
                   max_size=20).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=6))
def test_lines_counted_one_by_one_add_up_to_the_joined_text(lines: list[str]) -> None:
    """compact() sums per-line counts: the sum must be the joined text's exact count,
    for any lines (count_lines falls back to a whole count where a line could merge
    with the one before it)."""
    assert count_lines(lines) == count_tokens("\n".join(lines))


def test_context_shaped_lines_add_up_to_the_joined_text() -> None:
    lines = ["Named: Ağaoğlu Yapı", "Path: Ağaoğlu Yapı -placed-> SO-1001 [12]",
             "[12] Sipariş SO-1001 ödendi. (erp, 2026-05-02, 3mo old)", "Note:   trailing   ",
             "e-posta: info@example.com (mail, 2026-01-01, confirmed 2026-02-01, 9mo old)"]
    assert count_lines(lines) == count_tokens("\n".join(lines))
