"""Exact cl100k_base token counting and truncation, offline."""

from __future__ import annotations

import pytest

from brain.tokens import count_tokens, truncate_to_tokens


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
