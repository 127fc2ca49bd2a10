"""Exact cl100k_base token counting and truncation, offline."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.tokens import count_lines, count_tokens, fact_line_bounds, fact_line_tokens, truncate_to_tokens


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


# A context line's head as compact() writes it (an id, an earlier-value mark, both, none),
# and heads of other forms, which must be counted whole.
_HEADS = st.one_of(st.sampled_from(["", "[123] ", "[7] (earlier value) ", "(earlier value, replaced by [456]) ",
                                    "[12] (earlier value, replaced by [3]) "]), _PIECES)


@settings(max_examples=600, deadline=None)
@given(_HEADS, st.one_of(st.none(), _PIECES), _PIECES, st.one_of(_PIECES.map(lambda s: f" ({s})"), _PIECES))
def test_a_fact_line_counted_by_its_parts_is_counted_exactly(head: str, sender: str | None, text: str,
                                                             tail: str) -> None:
    """compact() counts a fact's line from its parts' counts (the text's counted once per
    process): for any head, sender, text and tail, the same as the whole line's count."""
    line = f"{head}{sender}: {text}{tail}" if sender else f"{head}{text}{tail}"
    assert fact_line_tokens(head, sender, text, tail) == count_tokens(line + "\n")


@settings(max_examples=600, deadline=None)
@given(_HEADS, st.one_of(st.none(), _PIECES), _PIECES, _PIECES)
def test_a_fact_line_is_bounded_without_its_tail(head: str, sender: str | None, text: str, stamp: str) -> None:
    """compact() drops a fact that cannot fit before rendering its stamp, on the fewest
    tokens its line may cost; it knows the line is not cut on the most: both must hold
    for any stamp of the length allowed for."""
    tail = f" ({stamp})"
    bounds = fact_line_bounds(head, sender, text, len(tail.encode()))
    if bounds is None:
        return
    n = fact_line_tokens(head, sender, text, tail)
    assert bounds[0] <= n <= bounds[1]


def test_fact_lines_of_the_demo_are_counted_exactly(demo_lines) -> None:  # type: ignore[no-untyped-def]
    for ln in demo_lines:
        text = ln.get("text")
        if not text:
            continue
        for head in ("", "[81] ", "[81] (earlier value, replaced by [90]) "):
            for sender in (None, ln.get("from"), "Ayşe Yılmaz A.Ş."):
                if sender is not None and not isinstance(sender, str):
                    continue
                tail = " (whatsapp, 2026-05-02, confirmed 2026-06-01, 12d old)"
                line = f"{head}{sender}: {text}{tail}" if sender else f"{head}{text}{tail}"
                assert fact_line_tokens(head, sender, text, tail) == count_tokens(line + "\n"), line
