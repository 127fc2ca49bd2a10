"""Step 2, hybrid recall: full-text (Turkish + English) and vector (HNSW cosine) side by
side over the visible memories, fused by reciprocal rank in one statement.

The keyword leg weighs a little more: an exact code or name in a question is usually the
answer. pgvector's iterative scan (set per connection) keeps a filtered HNSW search at k.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import psycopg

from brain.read.config import RecallConfig
from brain.read.question import Question, tsquery_text
from brain.read.trace import Hit, RecallStep

HYBRID_SQL = """
WITH q AS (
    SELECT websearch_to_tsquery('turkish', %(ts)s) || websearch_to_tsquery('english', %(ts)s) AS tsq
), text_leg AS (
    SELECT t.memory_id, t.score, row_number() OVER (ORDER BY t.score DESC, t.occurred_at DESC) AS rnk
      FROM (SELECT m.memory_id, m.occurred_at, ts_rank_cd(m.fts, q.tsq, 1) AS score
              FROM visible_memories m, q
             WHERE m.workspace_id = %(ws)s AND %(kt)s > 0 AND m.fts @@ q.tsq
             ORDER BY score DESC, m.occurred_at DESC
             LIMIT %(kt)s) t
), vector_leg AS (
    SELECT v.memory_id, v.dist, row_number() OVER (ORDER BY v.dist) AS rnk
      FROM (SELECT m.memory_id, m.embedding <=> %(qv)s AS dist
              FROM visible_memories m
             WHERE m.workspace_id = %(ws)s AND %(kv)s > 0
             ORDER BY m.embedding <=> %(qv)s
             LIMIT %(kv)s) v
)
SELECT f.memory_id, f.trnk, f.vrnk, f.score, f.dist, m.text
  FROM (SELECT coalesce(t.memory_id, v.memory_id) AS memory_id, t.rnk AS trnk, v.rnk AS vrnk, t.score, v.dist
          FROM text_leg t FULL JOIN vector_leg v USING (memory_id)) f
  JOIN memories m ON m.workspace_id = %(ws)s AND m.memory_id = f.memory_id"""


def hybrid_recall(conn: psycopg.Connection[Any], q: Question, qvec: np.ndarray, *, workspace: str,
                  cfg: RecallConfig) -> RecallStep:
    """Both legs and their reciprocal-rank fusion, best first."""
    t0 = time.perf_counter()
    ts = tsquery_text(q)
    k_text = cfg.k_text if cfg.mode in ("hybrid", "keyword") and ts else 0
    k_vec = cfg.k_vector if cfg.mode in ("hybrid", "vector") else 0
    if cfg.top_k:
        k_text, k_vec = (cfg.top_k if k_text else 0), (cfg.top_k if k_vec else 0)
    rows = conn.execute(HYBRID_SQL, {"ts": ts or "x", "ws": workspace, "kt": k_text, "kv": k_vec,
                                     "qv": qvec}).fetchall()
    hits = []
    for mid, trank, vrank, tscore, dist, text in rows:
        fused = 0.0
        if trank is not None:
            fused += cfg.text_weight / (cfg.rrf_k + trank)
        if vrank is not None:
            fused += 1.0 / (cfg.rrf_k + vrank)
        hits.append(Hit(int(mid), text, trank, vrank,
                        float(tscore) if tscore is not None else None,
                        float(dist) if dist is not None else None, round(fused, 6)))
    hits.sort(key=lambda h: (-h.fused, h.vector_rank or 10**6, h.text_rank or 10**6))
    return RecallStep(cfg.mode, ts, k_text, k_vec, sum(1 for h in hits if h.text_rank),
                      sum(1 for h in hits if h.vector_rank), tuple(hits), (time.perf_counter() - t0) * 1000)
