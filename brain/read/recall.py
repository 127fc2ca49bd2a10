"""Step 2, hybrid recall: full-text (Turkish + English) and vector (HNSW cosine) side by
side over the visible memories, fused by reciprocal rank in one statement.

The keyword leg weighs each question word by its rarity in the modules the asker may
read (per-module word counts kept by the store, see sql/007) and leaves words too common
to tell memories apart to the vector leg: ranking every memory that holds "sipariş" cost
most of a recall's time at scale and ordered them by little more than length. A memory
scores the summed rarity of the question words it holds, cover density breaking ties.
The keyword leg's hits weigh a little more in the fusion: an exact code or name in a
question is usually the answer. pgvector's iterative scan (set per connection) keeps a
filtered HNSW search at k.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from brain.db import BASELINE_EF_SEARCH, TextArray
from brain.read.config import RecallConfig
from brain.read.question import Question, Worded
from brain.read.trace import Hit, RecallStep
from brain.wire import Executor, Rows

# The question's words as a keyword query: each word its own Turkish-or-English query,
# counted by its rarest lexeme per language (a code is a phrase: all parts must match)
# and its commonest language; a word in more than `common` of the memories the asker's
# modules hold is dropped, the rest are weighed by idf. Its own statement: the keyword
# leg then gets the query as a value, which the planner needs to use the GIN index.
# Parameters: ws, terms (as shown and counted), queries (websearch syntax), floor, share, cap.
_TERMS_WITH = """
terms AS (
    SELECT t.ord, t.term, websearch_to_tsquery('turkish', t.query) || websearch_to_tsquery('english', t.query) AS tq
      FROM unnest(%(terms)s::text[], %(queries)s::text[]) WITH ORDINALITY AS t(term, query, ord)
), counted AS (
    SELECT t.ord, c.cfg, l.lexeme,
           (SELECT coalesce(sum(n.memories), 0) FROM readable_lexeme_counts n
             WHERE n.workspace_id = %(ws)s AND n.lexeme = l.lexeme) AS df
      FROM terms t, unnest(ARRAY['turkish', 'english']::regconfig[]) AS c(cfg),
           unnest(tsvector_to_array(to_tsvector(c.cfg, t.term))) AS l(lexeme)
), word_df AS (
    SELECT ord, max(df) AS df FROM (SELECT ord, cfg, min(df) AS df FROM counted GROUP BY 1, 2) s GROUP BY 1
), total AS (
    SELECT greatest(1, coalesce(sum(n.memories), 0)) AS n FROM readable_lexeme_counts n
     WHERE n.workspace_id = %(ws)s AND n.lexeme = ''
), term_rows AS (
    SELECT t.ord, t.term, t.tq::text AS tq, coalesce(d.df, 0) AS df,
           ln(1 + (total.n + 0.5) / (coalesce(d.df, 0) + 0.5)) AS idf,
           coalesce(d.df, 0) <= least(%(cap)s, greatest(%(floor)s, %(share)s * total.n)) AS kept
      FROM terms t LEFT JOIN word_df d USING (ord), total
     WHERE t.tq <> ''::tsquery
)"""
TERMS_SQL = "WITH " + _TERMS_WITH + """
SELECT term, tq, df, idf, kept FROM term_rows ORDER BY ord"""

# A memory's keyword score is the summed idf of the kept words it holds, found word by
# word through the GIN index (each match is read once per word it holds, never every
# word against every match); among the best 2k, equal scores are ordered by ts_rank
# (term frequency over length; cover density, ts_rank_cd, cost 2.5× as much for the
# same ties). Each leg reads its rows' text.
_KEYWORD_SCORES = """
SELECT x.memory_id, sum(u.w) AS score
  FROM unnest({tqs}, {idfs}) AS u(tq, w)
  CROSS JOIN LATERAL (SELECT m.memory_id FROM visible_memories m
                       WHERE m.workspace_id = %(ws)s AND m.fts @@ u.tq) x
 GROUP BY 1"""
KEYWORD_SCORES = _KEYWORD_SCORES.format(tqs="%(tqs)s::tsquery[]", idfs="%(idfs)s::float8[]")

_TEXT_LEG = """
    SELECT t.memory_id, t.text, t.score, row_number() OVER (ORDER BY t.score DESC, t.cd DESC, t.memory_id DESC) AS rnk
      FROM (SELECT c.memory_id, c.score, m.text, ts_rank(m.fts, {tsq}, 1) AS cd
              FROM (""" + _KEYWORD_SCORES + """
                     ORDER BY 2 DESC, 1 DESC LIMIT {k2}) c
              -- the scored rows came through the visibility rule: only their text is read here
              JOIN memories m ON m.workspace_id = %(ws)s AND m.memory_id = c.memory_id
             ORDER BY c.score DESC, cd DESC, c.memory_id DESC
             LIMIT {k}) t"""

_VECTOR_LEG = """
    SELECT v.memory_id, v.text, v.dist, row_number() OVER (ORDER BY v.dist) AS rnk
      FROM (SELECT m.memory_id, m.text, m.embedding <=> %(qv)s AS dist
              FROM visible_memories m
             WHERE m.workspace_id = %(ws)s
             ORDER BY m.embedding <=> %(qv)s
             LIMIT {k}) v"""

_NO_LEG = """
    SELECT NULL::bigint AS memory_id, NULL::text AS text, NULL::float8 AS {measure}, NULL::bigint AS rnk
     WHERE false"""


@functools.lru_cache(maxsize=32)
def hybrid_sql(k_text: int, k_vector: int, *, with_terms: bool = False) -> str:
    """The fused statement for these leg sizes. The sizes are written into the text, and
    a leg of size 0 is left out, so the one plan the connection caches per statement
    (generic plans, see brain.db) knows them: a LIMIT it cannot see made the planner
    sort every memory instead of walking the HNSW index.

    `with_terms`: the keyword query is made inside the statement from the question's
    terms (TERMS_SQL's parameters), not sent as values, so that the statement goes out
    with the read's first ones instead of after the terms' answer; a last row with no
    memory (its id NULL) carries the query (its text, and the words left to the vector
    leg), which the trace and rank read."""
    if with_terms:
        # (the query cast once: `(SELECT tsq FROM kept)::tsquery` parsed its text again for
        # every row the text leg ranks, ~0.09 ms a recall)
        tqs, idfs, tsq = "(SELECT tqs FROM kept)", "(SELECT idfs FROM kept)", "(SELECT tsq::tsquery FROM kept)"
    else:
        tqs, idfs, tsq = "%(tqs)s::tsquery[]", "%(idfs)s::float8[]", "%(tsq)s::tsquery"
    text_leg = (_TEXT_LEG.format(k=int(k_text), k2=2 * int(k_text), tqs=tqs, idfs=idfs, tsq=tsq) if k_text > 0
                else _NO_LEG.format(measure="score"))
    vector_leg = _VECTOR_LEG.format(k=int(k_vector)) if k_vector > 0 else _NO_LEG.format(measure="dist")
    if not with_terms:
        return f"""
WITH text_leg AS ({text_leg}
), vector_leg AS ({vector_leg}
)
SELECT coalesce(t.memory_id, v.memory_id), t.rnk, v.rnk, t.score, v.dist, coalesce(t.text, v.text)
  FROM text_leg t FULL JOIN vector_leg v USING (memory_id)"""
    # (the kept words' query as _text_query builds it from TERMS_SQL's rows: each word's
    # query as text and back, joined in the words' order, its weight a float8, not the
    # numeric that ln() of a sum gives, which would sum and tie otherwise)
    return f"""
WITH {_TERMS_WITH}, kept AS (
    SELECT array_agg(tq::tsquery ORDER BY ord) FILTER (WHERE kept) AS tqs,
           array_agg(idf::float8 ORDER BY ord) FILTER (WHERE kept) AS idfs,
           string_agg('( ' || tq || ' )', ' | ' ORDER BY ord) FILTER (WHERE kept) AS tsq,
           coalesce(array_agg(term ORDER BY ord) FILTER (WHERE NOT kept), '{{}}') AS common
      FROM term_rows
), text_leg AS ({text_leg}
), vector_leg AS ({vector_leg}
)
SELECT coalesce(t.memory_id, v.memory_id), t.rnk, v.rnk, t.score, v.dist, coalesce(t.text, v.text),
       NULL::text, NULL::text[]
  FROM text_leg t FULL JOIN vector_leg v USING (memory_id)
 UNION ALL
SELECT NULL, NULL, NULL, NULL, NULL, NULL, k.tsq, k.common FROM kept k"""

# A word held by more than this share of the memories an asker's modules hold (with a
# floor for small stores, where every word is rare enough to rank cheaply, and a cap so
# the cost stays bounded in large ones) is left to the vector leg.
COMMON_FLOOR = 60
COMMON_SHARE = 0.05
COMMON_CAP = 400


def _websearch(term: str) -> str:
    """One term in websearch syntax: a phrase quoted; an identifier also in its Turkish-I
    form, since stored text is lowered the Turkish way ("INV-7" is stored "ınv-7") while
    a question's identifiers are not ("INV-7" and "inv-7" both ask for "inv-7"). A word
    with a dotless ı also with a dotted i: an acronym typed in capitals is lowered the
    Turkish way ("GTIP" -> "gtıp") where the stored text may hold it in lower case
    ("gtip"); stored words with an ı carry their ASCII fold as well
    (text.normalize_for_search), so they meet the dotted form too."""
    clean = term.replace('"', " ").strip()
    forms = [clean]
    if any(ch.isdigit() for ch in clean) and "i" in clean:
        forms.append(clean.replace("i", "ı"))
    elif "ı" in clean:
        forms.append(clean.replace("ı", "i"))
    return " or ".join(f'"{f}"' if (" " in f or "-" in f) else f for f in forms)


def text_query_params(q: Worded, workspace: str) -> dict[str, Any]:
    terms = [t for t in q.terms if t.replace('"', " ").strip()]
    return {"ws": workspace, "terms": TextArray(terms), "queries": TextArray(_websearch(t) for t in terms),
            "floor": COMMON_FLOOR, "share": COMMON_SHARE, "cap": COMMON_CAP}


@dataclass(frozen=True)
class TextQuery:
    tsquery: str | None                  # the kept words ORed, None when none is left
    parts: tuple[str, ...]               # each kept word's own query …
    idf: tuple[float, ...]               # … and its weight
    common: tuple[str, ...]              # words left to the vector leg


NO_TEXT_QUERY = TextQuery(None, (), (), ())


def text_query(conn: Executor, q: Question, workspace: str) -> TextQuery:
    """The question's keyword query, as the asker's readable modules weigh its words."""
    sent = _send_terms(conn, q, workspace)
    return _text_query(sent.fetchall()) if sent is not None else NO_TEXT_QUERY


def _send_terms(conn: Executor, q: Question, workspace: str) -> Rows | None:
    params = text_query_params(q, workspace)
    return conn.execute(TERMS_SQL, params) if params["terms"] else None


def _text_query(rows: list[Any]) -> TextQuery:
    kept = [(str(tq), float(idf)) for _, tq, _, idf, keep in rows if keep]
    return TextQuery(" | ".join(f"( {tq} )" for tq, _ in kept) or None, tuple(tq for tq, _ in kept),
                     tuple(w for _, w in kept), tuple(str(r[0]) for r in rows if not r[4]))


class PendingRecall:
    """Step 2 in two moves, so that on a pipelined connection the server runs its
    statement while this process does other work (see brain.read.run): `start_recall`
    sends the fused statement (the keyword query made inside it from the question's
    terms), `finish` reads the hits. Its elapsed ms count only this step's own moves."""

    def __init__(self, conn: Executor, q: Worded, qvec: np.ndarray, *, workspace: str,
                 cfg: RecallConfig) -> None:
        t0 = time.perf_counter()
        self.cfg = cfg
        k_text = cfg.k_text if cfg.mode in ("hybrid", "keyword") else 0
        k_vec = cfg.k_vector if cfg.mode in ("hybrid", "vector") else 0
        params: dict[str, Any] = {"ws": workspace}
        if k_text:
            terms = text_query_params(q, workspace)
            if terms["terms"]:
                params.update(terms)
            else:
                k_text = 0
        if cfg.top_k:
            k_text, k_vec = (cfg.top_k if k_text else 0), (cfg.top_k if k_vec else 0)
        if k_vec:
            params["qv"] = qvec
            if cfg.top_k:   # a plain baseline searches as widely as it ever did (brain.db)
                conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(BASELINE_EF_SEARCH),))
        self.k_text, self.k_vec = k_text, k_vec
        self.fused: Rows = conn.execute(hybrid_sql(k_text, k_vec, with_terms=bool(k_text)), params)
        self.ms = (time.perf_counter() - t0) * 1000

    def finish(self) -> RecallStep:
        t0 = time.perf_counter()
        cfg = self.cfg
        tsquery: str | None = None   # the keyword query the statement made (see hybrid_sql) ...
        common: tuple[str, ...] = ()   # ... and the words it left to the vector leg
        hits = []
        for row in self.fused.fetchall():
            mid, trank, vrank, tscore, dist, text = row[:6]
            if mid is None:
                tsquery, common = row[6], tuple(row[7])
                continue
            fused = 0.0
            if trank is not None:
                fused += cfg.text_weight / (cfg.rrf_k + trank)
            if vrank is not None:
                fused += 1.0 / (cfg.rrf_k + vrank)
            hits.append(Hit(int(mid), text, trank, vrank,
                            float(tscore) if tscore is not None else None,
                            float(dist) if dist is not None else None, round(fused, 6)))
        hits.sort(key=lambda h: (-h.fused, h.vector_rank or 10**6, h.text_rank or 10**6))
        ms = self.ms + (time.perf_counter() - t0) * 1000
        # (a text leg that kept no word read nothing: its size is 0, as when it is left out)
        return RecallStep(cfg.mode, tsquery or "", self.k_text if tsquery else 0, self.k_vec,
                          sum(1 for h in hits if h.text_rank), sum(1 for h in hits if h.vector_rank),
                          tuple(hits), ms, common)


def start_recall(conn: Executor, q: Worded, qvec: np.ndarray, *, workspace: str,
                 cfg: RecallConfig) -> PendingRecall:
    """Both legs and their reciprocal-rank fusion, best first, from `.finish()`."""
    return PendingRecall(conn, q, qvec, workspace=workspace, cfg=cfg)
