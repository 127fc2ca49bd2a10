"""The read path's one orchestrator: six steps in one read-only transaction, no language
model (only the local query embedder), every step's typed result kept in the trace."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime, timezone
from functools import partial

import numpy as np

from brain import text as tx
from brain.db import Binding, Store, default_store
from brain.embed import Embedder, get_embedder
from brain.errors import UnknownWorkspace
from brain.read.anchors import by_meaning, by_newest, by_what_was_said, find_anchors, send_lookups
from brain.read.compact import PATHS_SHOWN, anchors_line, compact, path_line
from brain.read.config import HYBRID, RecallConfig
from brain.read.paths import RELATION_NAMES_SQL, send_first_level, send_hit_entities, walk
from brain.read.question import Question, analyse, read_words
from brain.read.rank import rank_facts, send_about
from brain.read.recall import start_recall
from brain.read.trace import AnchorStep, PathStep, RankStep, Recall, RecallStep, Trace, VisibilityStep
from brain.read.visibility import visibility_step
from brain.tokens import count_tokens_cached, line_tokens
from brain.wire import Reader, Rows, StatementsLost


def recall(question: str, *, workspace: str, member: str | None, now: datetime | None = None,
           budget: int | None = None, config: RecallConfig = HYBRID, store: Store | None = None,
           embedder: Embedder | None = None) -> Recall:
    """Answer `question` for `member` (None: a caller with no person) from the store."""
    t_start = time.perf_counter()
    store = store or default_store()
    embedder = embedder or get_embedder()
    if budget is not None:
        config = replace(config, budget=budget)
    now = now or datetime.now(timezone.utc)
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    t0 = time.perf_counter()
    qvec = embedder.embed_query(question)
    embed_ms = (time.perf_counter() - t0) * 1000
    for attempt in range(2):
        try:
            q, anchors, rec, paths, ranked, vis = _read(store, question, qvec, workspace=workspace, member=member,
                                                        now=now, config=config)
            break
        except StatementsLost:
            # psycopg dropped the connection's prepared statements (after a rollback):
            # nothing was read, and the second time they are made anew
            if attempt:
                raise
    packed = compact(anchors=anchors, paths=paths, rank=ranked, now=now, budget=config.budget,
                     top_k=config.top_k)
    context = "\n".join(line.text for line in packed.lines)
    shown = {line.memory_id for line in packed.lines if line.memory_id is not None}
    trace = Trace(q.info, vis, anchors, rec, paths, ranked, packed, embed_ms)
    return Recall(question, workspace, member, now, config.name, context, packed.tokens,
                  (time.perf_counter() - t_start) * 1000, trace,
                  tuple(f for f in ranked.facts if f.memory_id in shown))


# The relation names and record kinds of an asker's modules (paths.RELATION_NAMES_SQL),
# kept by the store (Store.kept) per workspace and modules while the workspace's memories
# end at the same id (Binding.stamp, sql/030): they change only when a memory is added.
# The two skip scans cost the server ~0.3 ms a read (bench compare), on the way to path
# search's first level.
_VOCABULARY_KEPT = 256


class _VocabularyRead:
    """The vocabulary path search reads: kept, or asked for (sent now, read when needed)."""

    def __init__(self, conn: Reader, binding: Binding, store: Store) -> None:
        self.kept_by = store.kept
        self.key = ("vocabulary", binding.workspace, binding.modules)
        self.stamp = binding.stamp
        kept = self.kept_by.get(self.key)
        self.kept = kept[1] if kept is not None and self.stamp is not None and kept[0] == self.stamp else None
        self.rows = conn.execute(RELATION_NAMES_SQL) if self.kept is None else None

    def names(self) -> dict[str, tuple[str, ...]]:
        if self.kept is not None:
            return self.kept
        row = self.rows.fetchone() if self.rows is not None else None
        names = {"rel_names": tuple(row[0]), "kind_names": tuple(row[1])} if row is not None else {}
        if self.stamp is not None and names:
            if len(self.kept_by) >= _VOCABULARY_KEPT:
                self.kept_by.clear()
            self.kept_by[self.key] = (self.stamp, names)
        return names


# The best recall hits whose tokens are counted while the read waits (a context shows ~8
# facts, nearly all of them among the best dozen hits).
_COUNTED_AHEAD = 12


def _read(store: Store, question: str, qvec: np.ndarray, *, workspace: str, member: str | None, now: datetime,
          config: RecallConfig) -> tuple[Question, AnchorStep, RecallStep, PathStep, RankStep, VisibilityStep]:
    """Steps 1-5 in one read-only transaction, every statement pipelined (brain.wire): it
    is sent as soon as what it asks is known, and the server runs it while this process
    works on earlier rows (one connection, one snapshot). The question is read while the
    server begins the transaction and binds it; the exact name lookups and the fused
    statement (both legs, its keyword query made inside it), which depend on the question's
    words alone, follow as soon as those are read, and the fused legs run while the rest
    of the question is read and the names are matched."""
    graph = config.mode == "hybrid" and not config.top_k
    t1 = time.perf_counter()
    with store.pipelined_read(workspace, member=member, now=now) as (conn, bound):
        # The question's words and codes are read first and the lookups go out; its
        # keyword terms are read when the fused statement asks for them (Wording reads
        # each part when first asked), and the rest of the question (its kinds, stems)
        # while the server answers. The server soon waits for the lookups once it has
        # bound the read, so whatever this process does before sending them delays the
        # fused legs. At first sight, with a real embedding each (in-process A/B runs by
        # question, ad-hoc /tmp/s15/order_ab.py and lazy_ab.py): the rest of the question
        # read after the sends, with the lookups' keys built per word, -0.14 to -0.16 ms
        # a recall at the median; the terms read after the lookups went out, another
        # -0.21 to -0.32 ms on average (-0.12 to +0.00 at the median).
        t_q = time.perf_counter()
        wording = read_words(question, now)
        t1 += time.perf_counter() - t_q   # (the binding's step does not count the question's reading)
        lookups = send_lookups(conn, wording, workspace=workspace) if graph else None
        pending = start_recall(conn, wording, qvec, workspace=workspace, cfg=config)
        t_q = time.perf_counter()
        q = analyse(question, now, wording)
        t1 += time.perf_counter() - t_q
        binding = bound()
        vis = visibility_step(binding, now, (time.perf_counter() - t1) * 1000)
        # the relation names and record kinds path search needs, kept from an earlier read
        # or asked behind the statements every read waits for (not in the binding, which
        # runs before them: sql/028)
        vocabulary = _VocabularyRead(conn, binding, store) if graph and binding.relations else None
        first_level = None
        if graph:
            anchors = find_anchors(conn, q, workspace=workspace, cfg=config, sent=lookups)
            # path search's first step needs only the anchors: the server reads it while
            # this process reads the recalled hits
            first_level = send_first_level(conn, anchors.anchors, workspace=workspace, cfg=config,
                                           relations=binding.relations)
        rec = pending.finish()
        # what the best hits name, which path search lifts a node for reaching: asked now,
        # read when the walk starts
        hit_entities = (send_hit_entities(conn, rec, workspace=workspace)
                        if graph and binding.relations else None)
        # Work whose results later steps need, done while path search and rank wait for
        # the server (brain.wire: what is left is done when needed): rank splits every
        # candidate into stems, and the recalled hits are most candidates; compact counts
        # the tokens of the facts it shows, most of them among the best hits, by their
        # text (alone on its line, or after a sender or an id: with a space before it).
        # A first-seen text costs ~10 us to split and ~30 us to count.
        conn.when_idle(partial(tx.stem_set, h.text) for h in rec.fused)
        conn.when_idle(partial(count_tokens_cached, t)
                       for h in rec.fused[:_COUNTED_AHEAD] for t in (h.text, f" {h.text}"))
        # Only an empty recall pays for telling "no such workspace" from "nothing visible".
        if not rec.fused and conn.execute("SELECT 1 FROM workspaces WHERE workspace_id = %s",
                                          (workspace,)).fetchone() is None:
            raise UnknownWorkspace(f"no workspace {workspace!r} in this store: see `python -m brain stats`")
        if graph:
            # the newest of a kind, for a question asking for it that names nothing (a
            # workspace without relations has its vocabulary asked for only here)
            if q.latest and not anchors.anchors and anchors.kinds:
                names = (vocabulary or _VocabularyRead(conn, binding, store)).names()
                anchors = by_newest(conn, anchors, names.get("kind_names", ()), workspace=workspace)
            # (a period question that gives an amount, "7 Nisan'da gelen 33.600 TL'lik ödeme",
            # asks for one thing, not for what the period holds)
            anchors = by_meaning(conn, anchors, rec.fused, workspace=workspace, cfg=config,
                                 listing=q.period is not None and not q.amounts)
            anchors, said = by_what_was_said(conn, anchors, rec.fused, workspace=workspace, cfg=config,
                                             asks_said=q.conversation)
            # (the first level was sent for the anchors found by then: those a turn lent
            # have theirs apart; with none sent, the walk asks for every anchor's)
            levels: tuple[Rows | None, ...] = ()
            if first_level is not None:
                levels = (first_level, send_first_level(conn, said, workspace=workspace, cfg=config,
                                                        relations=binding.relations)) if said else (first_level,)
            # the conversation about the anchors, for rank: read by the server while this
            # process walks
            about = send_about(conn, anchors, rec, workspace=workspace)
            paths = walk(conn, q, anchors, rec, workspace=workspace, cfg=config, relations=binding.relations,
                         first_level=levels, hit_entities=hit_entities,
                         **(vocabulary.names() if vocabulary is not None else {}))
            # compact's lines of names and paths, counted while rank waits for the server
            if anchors.anchors:
                conn.when_idle([partial(line_tokens, anchors_line(anchors))])
            conn.when_idle(partial(line_tokens, path_line(p, paths)) for p in paths.paths[:PATHS_SHOWN] if p.hops)
        else:
            anchors = AnchorStep((), q.info.kinds, (), 0.0)
            paths = PathStep((), {}, (), 0, "not in this mode", 0.0)
            about = None
        # rank sends the read's last statement: the transaction's COMMIT goes right behind
        # it, and the server ends the read while rank and compact work
        ranked = rank_facts(conn, q, qvec, rec, anchors, paths, workspace=workspace, cfg=config, then=conn.end,
                            about=about)
    return q, anchors, rec, paths, ranked, vis
