"""The typed results of the six read-path steps, kept whole in a trace.

The explorer renders these objects as they are and downloads them as JSON, so they hold
only what the asker may see: every row in them came through the visibility rule. Near
misses (candidates a step looked at but did not keep) are kept too, for "Why not?".
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any


@dataclass(frozen=True)
class Node:
    entity_id: int
    kind: str
    key: str
    name: str

    @property
    def label(self) -> str:
        # things known only by name (a message sender) have a synthetic key: show the name
        if self.name == self.key or self.key.startswith("name:"):
            return self.name
        return f"{self.name} ({self.kind} {self.key})"


@dataclass(frozen=True)
class QuestionInfo:
    text: str
    words: tuple[str, ...]
    codes: tuple[str, ...]
    stems: tuple[str, ...]
    kinds: tuple[tuple[str, str], ...]      # (word in the question, canonical kind)
    expansions: tuple[str, ...]            # the other language's words for asked concepts
    period: tuple[str, str, str] | None    # (words, start, end) ISO


@dataclass(frozen=True)
class Anchor:
    node: Node
    how: str             # code | amount | date | exact | suffix | contains | trigram | newest | meaning | said
    matched: str         # the words of the question it matched
    score: float         # how sure: 1.0 exact … lower for fuzzy and by meaning


@dataclass(frozen=True)
class AnchorStep:
    anchors: tuple[Anchor, ...]
    kinds: tuple[tuple[str, str], ...]
    near_misses: tuple[Anchor, ...]        # fuzzy candidates under the threshold
    ms: float
    named_at: tuple[int, ...] = ()          # positions of question words inside a name matched exactly


@dataclass(frozen=True)
class Hit:
    memory_id: int
    text: str
    text_rank: int | None      # 1-based rank in the full-text leg
    vector_rank: int | None    # 1-based rank in the vector leg
    text_score: float | None
    vector_distance: float | None
    fused: float


@dataclass(frozen=True)
class RecallStep:
    mode: str
    tsquery: str               # the keyword query as run: the question's words that were kept
    k_text: int
    k_vector: int
    text_hits: int
    vector_hits: int
    fused: tuple[Hit, ...]
    ms: float
    common: tuple[str, ...] = ()   # words too common in the asker's modules to rank by


@dataclass(frozen=True)
class Hop:
    src: int
    rel: str
    dst: int
    memory_id: int           # the memory that states this relation
    forward: bool            # walked src→dst (True) or dst→src (False)


@dataclass(frozen=True)
class Path:
    nodes: tuple[int, ...]
    hops: tuple[Hop, ...]
    score: float
    covers: tuple[str, ...]  # asked kinds this path reaches
    ends_asked: bool = False  # it ends at what the question asks for (an asked kind, or by a named relation)


@dataclass(frozen=True)
class Level:
    hop: int
    frontier: int                           # nodes that walked on from this level
    reached: int                            # new nodes reached
    pruned: tuple[int, ...]                 # nodes reached but cut by the beam
    skipped_fanouts: tuple[tuple[int, str, int], ...]  # (node, relation, neighbours) not followed


@dataclass(frozen=True)
class PathStep:
    paths: tuple[Path, ...]
    nodes: dict[int, Node]
    levels: tuple[Level, ...]
    visited: int
    stopped: str             # why the walk ended
    ms: float
    relations_asked: tuple[str, ...] = ()   # relations the question names, walked to (those met on visible edges)
    kinds_asked: tuple[str, ...] = ()       # the kinds walked to: the question's kind words and the store's kinds it names
    focus: str | None = None                # the kind a Turkish possessive chain ends at: paths holding it lead


@dataclass(frozen=True)
class Fact:
    memory_id: int
    text: str
    origin: str
    kind: str
    module: str
    source: str
    occurred_at: datetime
    confirmed_at: datetime
    expires_at: datetime | None
    earlier: bool                 # an older value of something stated again later
    newer_id: int | None          # the memory that states the newer value
    why: tuple[str, ...]          # recall, path, anchor, answer node...
    parts: dict[str, float]       # the score's parts
    score: float
    sender: str | None = None     # who sent it (a message): `text` is then "sender: what they wrote"


@dataclass(frozen=True)
class RankStep:
    facts: tuple[Fact, ...]       # every candidate scored, best first (earlier ones after their newer)
    period: tuple[str, str, str] | None
    ms: float


@dataclass(frozen=True)
class VisibilityStep:
    workspace: str
    member: str | None
    modules: tuple[str, ...]
    now: str
    rule: str                     # the rule, in words
    ms: float


@dataclass(frozen=True)
class ContextLine:
    section: str                  # anchors | paths | facts
    text: str
    memory_id: int | None
    tokens: int


@dataclass(frozen=True)
class CompactStep:
    lines: tuple[ContextLine, ...]
    dropped: tuple[tuple[int, float], ...]   # (memory_id, score) left out by the budget
    budget: int
    tokens: int
    ms: float


@dataclass(frozen=True)
class Trace:
    question: QuestionInfo
    visibility: VisibilityStep
    anchors: AnchorStep
    recall: RecallStep
    paths: PathStep
    rank: RankStep
    compact: CompactStep
    embed_ms: float


@dataclass(frozen=True)
class Recall:
    question: str
    workspace: str
    member: str | None
    now: datetime
    config: str
    context: str
    tokens: int
    ms: float
    trace: Trace
    facts: tuple[Fact, ...] = field(default=())   # what the context shows, in order

    def to_dict(self) -> dict[str, Any]:
        return _plain(self)  # type: ignore[no-any-return]

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)


def _plain(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, (datetime, date)):
        return obj.isoformat()
    if isinstance(obj, float):
        # Three decimals: a trace is read for leaks as the context is (FORMAT.md), and a
        # score or a time written to five ("0.73914", "15.27391") holds any four-digit
        # value sooner or later (a door code "7391" was found in one, in one question of
        # eighty, none of its own). Below 1000 no float then holds four digits in a row.
        return round(obj, 3)
    return obj
