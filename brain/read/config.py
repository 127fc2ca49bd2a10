"""Read-path settings as frozen presets; a variant is `dataclasses.replace(HYBRID, ...)`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RecallConfig:
    name: str = "hybrid"
    mode: str = "hybrid"          # hybrid | vector | keyword
    # step 1: anchors
    trigram_min: float = 0.55     # cosine of trigram sets for a fuzzy name match
    max_anchors: int = 8
    meaning_anchors: int = 3      # entities behind the nearest memories, when nothing else matched
    said_hits: int = 5            # the best recall hits read for what an anchor said (by_what_was_said)
    said_anchors: int = 2         # records those mention, taken as anchors at most
    # step 2: hybrid recall
    k_text: int = 40
    k_vector: int = 40
    rrf_k: int = 60
    text_weight: float = 1.25     # an exact code or name in a question is usually the answer
    # step 3: path search
    max_hops: int = 3
    beam: int = 48
    max_nodes: int = 600
    fanout_limit: int = 50
    # step 4: rank
    max_facts: int = 40
    beside_seeds: int = 5         # the best recall hits whose neighbouring turns are candidates
    beside_width: int = 2         # turns each side of such a hit
    # step 6: compact
    budget: int = 1000
    top_k: int = 0                # >0: return exactly the top k facts (plain baselines)


HYBRID = RecallConfig()
VECTOR_ONLY = RecallConfig(name="vector", mode="vector", top_k=10)
KEYWORD_ONLY = RecallConfig(name="keyword", mode="keyword", top_k=10)
PRESETS = {c.name: c for c in (HYBRID, VECTOR_ONLY, KEYWORD_ONLY)}
