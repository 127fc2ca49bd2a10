"""The keyword leg on the real demo store: word counts kept by the store's trigger, rarity
taken only from the modules the asker reads, common words left to the vector leg, and the
plans that keep recall fast under row-level security (GIN for words, HNSW for vectors)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import importlib

import psycopg
import pytest

from brain.db import Store
from brain.read.question import analyse

# brain.read exports the recall() function under the module's name
recall_mod = importlib.import_module("brain.read.recall")

NOW = datetime(2026, 11, 20, tzinfo=timezone.utc)
WS = "acme-tr"


def _member_with(lines: list[dict], pred: Any) -> str:
    roles = {ln["id"]: set(ln["modules"]) for ln in lines if ln["type"] == "role" and ln["workspace"] == WS}
    return next(ln["id"] for ln in lines if ln["type"] == "member" and ln["workspace"] == WS
                and ln.get("roles") and all(r in roles for r in ln["roles"])
                and pred(set().union(*(roles[r] for r in ln["roles"]))))


def test_counts_follow_the_shared_memories(demo_store: Store) -> None:
    with demo_store.bound(WS, readonly=True) as (conn, _):
        stored = dict(conn.execute("SELECT module, memories FROM lexeme_counts WHERE lexeme = ''").fetchall())
        actual = dict(conn.execute("SELECT module, count(*) FROM memories WHERE privacy = 'shared' "
                                   "GROUP BY 1").fetchall())
        word = conn.execute("SELECT lexeme, sum(memories) FROM lexeme_counts WHERE lexeme <> '' "
                            "GROUP BY 1 ORDER BY 2 DESC LIMIT 1").fetchone()
        holding = conn.execute("SELECT count(*) FROM memories WHERE privacy = 'shared' "
                               "AND fts @@ to_tsquery('simple', quote_literal(%s))", (word[0],)).fetchone()
    assert stored == actual
    assert word[1] == holding[0]


def test_common_words_are_left_to_the_vector_leg(demo_store: Store, demo_lines, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    order = next(ln for ln in demo_lines if ln["type"] == "record" and ln["workspace"] == WS
                 and ln["kind"] == "order")
    q = analyse(f"{order['id']} numaralı siparişin durumu ve tutarı nedir?", NOW)
    with demo_store.bound(WS, readonly=True) as (conn, _):
        everything = recall_mod.text_query(conn, q, WS)
        monkeypatch.setattr(recall_mod, "COMMON_FLOOR", 0)
        monkeypatch.setattr(recall_mod, "COMMON_SHARE", 0.02)
        strict = recall_mod.text_query(conn, q, WS)
        total = conn.execute("SELECT count(*) FROM memories WHERE privacy = 'shared'").fetchone()[0]
        for word in strict.common:
            # a dropped word is one that more than the share of memories really hold
            held = conn.execute("SELECT count(*) FROM memories WHERE privacy = 'shared' AND fts @@ "
                                "(websearch_to_tsquery('turkish', %s) || websearch_to_tsquery('english', %s))",
                                (word, word)).fetchone()[0]
            assert held > 0.02 * total, (word, held, total)
    assert not everything.common                 # the demo is small: every word is cheap to rank
    assert strict.common, "some question word should be common at a 2 % share"
    assert len(strict.parts) + len(strict.common) == len(everything.parts)
    number = order["id"].rsplit("-", 1)[-1]
    assert any(number in p for p in strict.parts), strict.parts   # the code stays: it is rare
    assert len(strict.parts) == len(strict.idf)
    assert max(strict.idf) > min(strict.idf)


def test_rarity_counts_only_modules_the_asker_reads(demo_store: Store, demo_lines) -> None:  # type: ignore[no-untyped-def]
    owner = _member_with(demo_lines, lambda mods: "*" in mods)
    limited = _member_with(demo_lines, lambda mods: "*" not in mods and "finance" not in mods)
    with demo_store.bound(WS, member=owner, readonly=True) as (conn, _):
        # words whose every Turkish and English form only finance facts hold
        only = """SELECT lexeme FROM lexeme_counts WHERE lexeme <> '' GROUP BY lexeme
                  HAVING bool_and(module = 'finance')"""
        finance_only = {r[0] for r in conn.execute(only).fetchall()}
        candidates = [w for w in sorted(finance_only) if len(w) >= 5 and w.isalpha()
                      and set(conn.execute("SELECT tsvector_to_array(to_tsvector('turkish', %s) || "
                                           "to_tsvector('english', %s))", (w, w)).fetchone()[0]) <= finance_only]
    checked = 0
    for word in candidates:
        q = analyse(word, NOW)
        df = {}
        for who in (owner, limited):
            with demo_store.bound(WS, member=who, readonly=True) as (conn, _):
                rows = conn.execute(recall_mod.TERMS_SQL, recall_mod.text_query_params(q, WS)).fetchall()
            df[who] = sum(int(r[2]) for r in rows if r[0] == word)   # not the expansions analyse adds
        if df[owner] > 0:   # the word, stemmed again as a question word, still counts
            checked += 1
            assert df[limited] == 0, (word, df)
    assert checked, candidates


def _plan(conn: Any, sql: str, params: dict[str, Any]) -> Any:
    return conn.execute("EXPLAIN (FORMAT JSON) " + sql, params).fetchone()[0][0]["Plan"]


def test_keyword_match_is_leakproof_so_rls_can_use_the_gin_index(demo_store: Store) -> None:
    # Without it the policy forces a row-by-row filter of the workspace (sql/008).
    with demo_store.bound(WS, readonly=True) as (conn, _):
        leakproof = conn.execute("SELECT proleakproof FROM pg_proc WHERE proname = 'ts_match_vq'").fetchone()[0]
    assert leakproof


def test_visible_memories_are_estimated_as_most_rows(demo_store: Store) -> None:
    # A low guess made the planner sort every memory instead of using HNSW (sql/006).
    with psycopg.connect(demo_store.admin_uri, autocommit=True) as admin:
        admin.execute("ANALYZE memories")
    with demo_store.bound(WS, readonly=True) as (conn, _):
        total = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        estimate = _plan(conn, "SELECT memory_id FROM visible_memories WHERE workspace_id = %(ws)s",
                         {"ws": WS})["Plan Rows"]
    assert estimate >= 0.5 * total, (estimate, total)


@pytest.mark.parametrize("mode", ["hybrid", "keyword"])
def test_a_code_ranks_first_in_the_keyword_leg(demo_store: Store, embedder, demo_lines, mode: str) -> None:  # type: ignore[no-untyped-def]
    from brain.read import HYBRID, KEYWORD_ONLY, recall

    inv = next(ln for ln in demo_lines if ln["type"] == "record" and ln["workspace"] == WS
               and ln["kind"] == "invoice")
    cfg = HYBRID if mode == "hybrid" else KEYWORD_ONLY
    r = recall(f"{inv['id']} faturası", workspace=WS, member=None, now=NOW, config=cfg,
               store=demo_store, embedder=embedder)
    first = min(r.trace.recall.fused, key=lambda h: h.text_rank or 10**6)
    assert first.text_rank == 1 and inv["id"] in first.text, first


def test_the_fused_statement_makes_the_keyword_query_the_terms_statement_makes(demo_store: Store,  # type: ignore[no-untyped-def]
                                                                               demo_lines, embedder) -> None:
    """The read path's fused statement makes its keyword query inside (hybrid_sql with
    terms); the same query made by TERMS_SQL and sent as values (as the why-not page
    does) must find the same hits with the same ranks and scores, and the statement's
    last row must carry the same query and common words, for every asker of the
    questions. (Fails if the words' order, their weights' type or the joined query
    differ between the two.)"""
    import json
    from pathlib import Path

    from brain.db import FloatArray, TsqueryArray

    members = [None] + [ln["id"] for ln in demo_lines if ln["type"] == "member" and ln["workspace"] == WS][:3]
    questions = [json.loads(x)["question"] for x in
                 (Path(__file__).resolve().parent.parent / "fixtures" / "questions.jsonl").read_text().splitlines()
                 if x.strip() and json.loads(x)["workspace"] == WS][:25]
    compared = 0
    for member in members:
        with demo_store.bound(WS, member=member, now=NOW, readonly=True) as (conn, _):
            for question in questions:
                q = analyse(question, NOW)
                params = recall_mod.text_query_params(q, WS)
                if not params["terms"]:
                    continue
                qv = embedder.embed_query(question)
                tq = recall_mod.text_query(conn, q, WS)
                rows = conn.execute(recall_mod.hybrid_sql(40, 40, with_terms=True), {**params, "qv": qv}).fetchall()
                info = [r[6:] for r in rows if r[0] is None]
                assert info == [(tq.tsquery, list(tq.common))], question
                k_text = 40 if tq.parts else 0
                sent = {"ws": WS, "qv": qv, "tsq": tq.tsquery, "tqs": TsqueryArray(tq.parts),
                        "idfs": FloatArray(tq.idf)} if k_text else {"ws": WS, "qv": qv}
                old = conn.execute(recall_mod.hybrid_sql(k_text, 40), sent).fetchall()
                assert sorted(r[:6] for r in rows if r[0] is not None) == sorted(old), question
                compared += 1
    assert compared >= 50
