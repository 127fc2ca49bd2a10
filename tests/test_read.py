"""Each read-path step on the real demo store: anchors, hybrid recall, path search, rank,
compact, and the orchestrator's one read-only transaction. Entities are picked from the
generated fixture lines, never named here, so the tests follow the generator."""

from __future__ import annotations

import re

from dataclasses import replace
from typing import Any
from datetime import datetime, timedelta, timezone

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain import text as tx
from brain.db import IntArray, Store
from brain.read import HYBRID, VECTOR_ONLY, recall
from brain.read.anchors import find_anchors
from brain.read.question import analyse
from brain.tokens import count_tokens, line_tokens
from tests.test_store import writer  # noqa: F401 (a fixture: a fresh store with two workspaces)

NOW = datetime(2026, 11, 20, tzinfo=timezone.utc)
WS = "acme-tr"


def _records(lines: list[dict], kind: str) -> list[dict]:
    return [ln for ln in lines if ln["type"] == "record" and ln["workspace"] == WS and ln["kind"] == kind]


def _owner(lines: list[dict]) -> str:
    roles = {ln["id"] for ln in lines if ln["type"] == "role" and ln["workspace"] == WS and "*" in ln["modules"]}
    return next(ln["id"] for ln in lines if ln["type"] == "member" and ln["workspace"] == WS
                and set(ln.get("roles", [])) & roles)


@pytest.fixture(scope="module")
def company(demo_lines: list[dict]) -> dict:
    # a multi-word company name, so suffix and fuzzy forms are meaningful
    return next(c for c in _records(demo_lines, "company") if len(c["name"].split()) >= 2)


def _anchors(store: Store, embedder, question: str, member: str):  # type: ignore[no-untyped-def]
    q = analyse(question, NOW)
    with store.bound(WS, member=member, now=NOW, readonly=True) as (conn, _):
        return find_anchors(conn, q, workspace=WS, cfg=HYBRID)


@pytest.mark.parametrize("form, how", [
    ("{name}'nın vergi numarası nedir?", {"exact", "suffix"}),
    ("{NAME} telefonu", {"exact", "suffix"}),
    ("{first}'nun adresi nedir?", {"suffix", "exact", "contains"}),
    ("{typo} web sitesi", {"trigram", "contains"}),
])
def test_anchor_forms_find_the_company(demo_store: Store, embedder, demo_lines, company, form: str, how: set) -> None:  # type: ignore[no-untyped-def]
    name = company["name"]
    typo = name[:3] + name[4:]  # one letter dropped
    question = form.format(name=name, NAME=name.upper(), first=name.split()[0], typo=typo)
    step = _anchors(demo_store, embedder, question, _owner(demo_lines))
    match = [a for a in step.anchors if a.node.key == company["id"]]
    assert match, (question, step.anchors)
    assert match[0].how in how
    assert 0 < match[0].score <= 1


def test_record_code_anchors_as_code(demo_store: Store, embedder, demo_lines) -> None:  # type: ignore[no-untyped-def]
    order = _records(demo_lines, "order")[0]
    step = _anchors(demo_store, embedder, f"{order['id']} siparişinin durumu nedir?", _owner(demo_lines))
    assert step.anchors[0].node.key == order["id"]
    assert step.anchors[0].how == "code" and step.anchors[0].score == 1.0
    # (the kind said beside the code is what the code keys: the question asks no order)
    assert ("siparişinin", "order") not in step.kinds


@pytest.mark.parametrize("question, kinds", [
    ("Şikayetteki siparişin faturası ödendi mi?", {"complaint", "order", "invoice", "payment"}),
    ("Which supplier makes this product?", {"supplier", "product"}),
    ("Talebindeki kişinin telefonu", {"ticket", "person"}),
    ("Müşterinin son ödemesi", {"company", "payment"}),
    # insurance, telecom, health care (people's and animals')
    ("What's the claims hotline of the insurer behind claim HSR-1?", {"insurer", "claim"}),
    ("Poliçenin sigorta şirketindeki zeyil ne zaman onaylandı?", {"policy", "insurer", "endorsement"}),
    ("Abonenin modemi hangi tarihte kuruldu?", {"company", "device"}),
    ("TAH-1 tahsilatı hangi hayvanın tedavisi için yapıldı?", {"payment", "patient", "treatment"}),
    ("Which vet gave the pet its rabies vaccine?", {"doctor", "patient", "vaccination"}),
    ("What did we offer Selin Aydın for her kasko renewal?", {"quote", "policy"}),
    ("Gösterilen dairenin ekspertiz değeri ne çıktı?", {"appraisal"}),
    ("What are the ada/parsel numbers on the title deed of the flat?", {"title_deed"}),
    ("Which listing is it for, and what is that listing's asking price?", {"listing"}),
    ("FD-1 talebindeki puantajın çalışanı hangi pozisyonda çalışıyor?", {"ticket", "timesheet", "person", "job"}),
    ("Which candidate was placed in the forklift position?", {"candidate", "job"}),
])
def test_kind_words_in_both_languages(question: str, kinds: set) -> None:
    assert set(analyse(question, NOW).kinds) >= kinds


def test_hybrid_recall_fuses_both_legs_and_the_code_ranks_first(demo_store, embedder, demo_lines) -> None:  # type: ignore[no-untyped-def]
    invoice = _records(demo_lines, "invoice")[0]
    r = recall(f"{invoice['id']} tutarı nedir?", workspace=WS, member=_owner(demo_lines), now=NOW,
               store=demo_store, embedder=embedder)
    step = r.trace.recall
    assert step.text_hits > 0 and step.vector_hits > 0
    top = step.fused[0]
    assert invoice["id"] in top.text and top.text_rank is not None and top.text_rank <= 3
    assert all(h.fused > 0 for h in step.fused)
    assert [h.fused for h in step.fused] == sorted((h.fused for h in step.fused), reverse=True)


def test_path_search_walks_three_hops_with_evidence(demo_store, embedder, demo_lines) -> None:  # type: ignore[no-untyped-def]
    # a complaint whose order has an invoice that has a payment: complaint → order → invoice → payment
    bills = {ln["links"][0]["id"]: ln["id"] for ln in _records(demo_lines, "invoice") if ln.get("links")}
    pays = {ln["links"][0]["id"]: ln["id"] for ln in _records(demo_lines, "payment") if ln.get("links")}
    complaint = next(c for c in _records(demo_lines, "complaint")
                     if any(lk["kind"] == "order" and bills.get(lk["id"]) in pays for lk in c["links"]))
    order = next(lk["id"] for lk in complaint["links"] if lk["kind"] == "order")
    payment = pays[bills[order]]
    r = recall(f"{complaint['id']} şikayetindeki siparişin faturası ödendi mi?", workspace=WS,
               member=_owner(demo_lines), now=NOW, store=demo_store, embedder=embedder)
    paths = r.trace.paths
    best = next(p for p in paths.paths if paths.nodes[p.nodes[-1]].key == payment)
    assert len(best.hops) == 3
    assert set(best.covers) >= {"order", "invoice", "payment"}
    shown = {f.memory_id for f in r.facts}
    assert all(h.memory_id in shown for h in best.hops), "every hop's stating memory is in the context"
    assert payment in r.context
    assert paths.levels and paths.visited <= HYBRID.max_nodes


def test_fanout_limit_skips_hubs_unless_named(demo_store, embedder, demo_lines) -> None:  # type: ignore[no-untyped-def]
    company = next(c for c in _records(demo_lines, "company"))
    tight = replace(HYBRID, fanout_limit=0)
    r = recall(f"{company['name']} hakkında ne biliyoruz?", workspace=WS, member=_owner(demo_lines), now=NOW,
               store=demo_store, embedder=embedder, config=tight)
    skipped = [s for lv in r.trace.paths.levels for s in lv.skipped_fanouts]
    assert skipped, "with a fan-out limit of 0 every unnamed relation is skipped"
    named = recall(f"{company['name']} siparişleri", workspace=WS, member=_owner(demo_lines), now=NOW,
                   store=demo_store, embedder=embedder, config=tight)
    assert any(n.kind == "order" for n in named.trace.paths.nodes.values()), "a named relation is followed"


def test_latest_record_value_first_and_earlier_marked(demo_store, embedder, demo_lines) -> None:  # type: ignore[no-untyped-def]
    seen: dict[tuple[str, str], list[dict]] = {}
    for ln in demo_lines:
        if ln["type"] == "record" and ln["workspace"] == WS:
            seen.setdefault((ln["kind"], ln["id"]), []).append(ln)
    versions = next(v for v in seen.values() if len({str(x.get("fields")) for x in v}) > 1)
    rid = versions[0]["id"]
    r = recall(f"{rid} durumu nedir?", workspace=WS, member=_owner(demo_lines), now=NOW,
               store=demo_store, embedder=embedder)
    mine = [f for f in r.facts if f.origin == "record" and rid in f.text.split("|")[0]]
    assert mine and not mine[0].earlier, "the current version comes first"
    assert all(f.earlier for f in mine[1:])
    assert all(a.occurred_at >= b.occurred_at for a, b in zip(mine, mine[1:]))
    assert "earlier value" not in r.context.split("\n")[[ln.memory_id for ln in r.trace.compact.lines].index(mine[0].memory_id)]


@pytest.mark.parametrize("budget", [120, 400, 1000])
def test_compact_respects_the_budget_and_dates_every_fact(demo_store, embedder, demo_lines, budget: int) -> None:  # type: ignore[no-untyped-def]
    r = recall("Son siparişlerin durumu nedir?", workspace=WS, member=_owner(demo_lines), now=NOW,
               store=demo_store, embedder=embedder, budget=budget)
    assert r.tokens == count_tokens(r.context) <= budget
    for line in r.trace.compact.lines:
        if line.section == "facts":
            assert line.text.rstrip().endswith(")") and "2026-" in line.text
            assert re.search(r", (today|\d+(d|mo|y) old)[,)]", line.text), line.text   # its age


@pytest.mark.parametrize("budget", [120, 400, 1000])
def test_compact_drops_unrendered_only_what_would_not_fit(demo_store, embedder, demo_lines, monkeypatch,  # type: ignore[no-untyped-def]
                                                          budget: int) -> None:
    """compact() leaves out a fact whose line cannot fit before rendering it: the same
    lines, count and dropped facts as rendering every fact and trying each."""
    from brain.read import compact as compact_step

    for q in ("Son siparişlerin durumu nedir?", "Which invoices are unpaid?", "Ahmet Bey ne yazdı?"):
        r = recall(q, workspace=WS, member=_owner(demo_lines), now=NOW, store=demo_store, embedder=embedder,
                   budget=budget)
        t = r.trace
        with monkeypatch.context() as m:
            m.setattr(compact_step, "_costs_at_least", lambda *a: 0)
            every = compact_step.compact(anchors=t.anchors, paths=t.paths, rank=t.rank, now=NOW, budget=budget)
        assert (every.lines, every.tokens, every.dropped) == (t.compact.lines, t.compact.tokens, t.compact.dropped)
        assert t.compact.dropped, "the budget left facts out"


def test_the_trace_writes_no_float_beyond_three_decimals(demo_store, embedder, demo_lines) -> None:  # type: ignore[no-untyped-def]
    """The trace is read for leaks as the context is (FORMAT.md): a number written to five
    decimals ("0.73914") holds any four-digit code sooner or later. (Fails at five.)"""
    import json

    r = recall("Ağaoğlu Yapı'nın son siparişinin faturası ödendi mi?", workspace=WS, member=_owner(demo_lines),
               now=NOW, store=demo_store, embedder=embedder)
    floats: list[float] = []

    def walk(x: Any) -> None:
        if isinstance(x, float):
            floats.append(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(json.loads(r.to_json()))
    assert len(floats) > 50
    assert all(round(x, 3) == x and abs(x) < 1000 for x in floats), [x for x in floats if round(x, 3) != x][:5]


def test_a_path_whose_facts_did_not_fit_leaves_its_room_to_facts(demo_store, embedder, demo_lines) -> None:  # type: ignore[no-untyped-def]
    """A path line is shown only with the facts stating its hops; when they do not fit, the
    line goes and its room goes to facts: the context is the one packed with only the
    paths it shows. (Fails when the line's room is left unused: seven demo contexts.)"""
    import json
    from pathlib import Path as FilePath

    from brain.read import compact as compact_step

    questions = [json.loads(x) for x in
                 (FilePath(__file__).resolve().parent.parent / "fixtures" / "questions.jsonl").read_text().splitlines()
                 if x.strip()]
    checked = 0
    for q in questions[::2]:
        r = recall(q["question"], workspace=q["workspace"], member=q.get("as"), now=NOW, store=demo_store,
                   embedder=embedder)
        t = r.trace
        shown = {ln.text for ln in t.compact.lines if ln.section == "paths"}
        tried = [p for p in t.paths.paths[:compact_step.PATHS_SHOWN] if compact_step.path_line(p, t.paths) in shown]
        final, _, tokens = compact_step._pack(t.anchors, t.paths, tried, list(t.rank.facts), NOW, 1000, 0)
        assert ([ln.text for ln in final], tokens) == ([ln.text for ln in t.compact.lines], t.compact.tokens), q
        checked += bool(tried)
    assert checked >= 10, checked


def test_an_earlier_version_of_a_record_shows_what_it_said_otherwise() -> None:
    """A re-synced record's earlier version, shown after the current one, says only the
    fields and relations the current one does not state alike. (Fails when it is shown
    whole: it cost as much of the budget as the current one.)"""
    from brain.read.compact import _changed

    newer = ("invoice INV-7 (INV-7) | tutar: 50.400 TL; durum: ödendi; vade: 2026-04-15 | "
             "faturalanan → musteri MUS-6 (Anadolu Gıda)")
    older = ("invoice INV-7 (INV-7) | tutar: 50.400 TL; durum: ödenmedi; vade: 2026-04-15 | "
             "faturalanan → musteri MUS-5 (Başkent Lojistik)")
    assert _changed(older, newer) == "invoice INV-7 (INV-7) | durum: ödenmedi | faturalanan → musteri MUS-5 (Başkent Lojistik)"
    assert _changed(newer, newer) == "invoice INV-7 (INV-7)"


def test_a_fact_line_says_its_day_once() -> None:
    """A source that already ends with the fact's day ("whatsapp export 2026-09-22") is not
    followed by that day again; any other source is. (Fails when the day is repeated.)"""
    from brain.read.compact import _fact_parts
    from brain.read.trace import Fact

    day = datetime(2026, 9, 22, 10, tzinfo=timezone.utc)
    fact = Fact(7, "Kargo yarın çıkıyor.", "message", "message", "sales", "whatsapp export 2026-09-22", day, day,
                None, False, None, (), {}, 1.0)
    line, n, _ = _fact_parts(fact, day + timedelta(days=3))
    assert line == "[7] Kargo yarın çıkıyor. (whatsapp export 2026-09-22, 3d old)" and n == line_tokens(line)
    line, _, _ = _fact_parts(replace(fact, source="whatsapp"), day + timedelta(days=3))
    assert line.endswith("(whatsapp, 2026-09-22, 3d old)")


def test_a_plain_baseline_searches_the_vector_index_as_widely_as_before(demo_store, embedder, demo_lines,  # type: ignore[no-untyped-def]
                                                                         monkeypatch) -> None:
    """The read path proper keeps a shorter HNSW candidate list (brain.db.EF_SEARCH); the
    plain vector baseline asks for its own wider one in its read (BASELINE_EF_SEARCH), so
    that the baseline every report sets beside the real path is the best plain search.
    (Fails if the baseline searches as the read path does, or the read path as widely.)"""
    from brain import db, wire

    asked: list[Any] = []
    execute = wire.Reader.execute

    def capture(self, query, params=None, **kw):  # type: ignore[no-untyped-def]
        if "hnsw.ef_search" in query:
            asked.append(params)
        return execute(self, query, params, **kw)

    monkeypatch.setattr(wire.Reader, "execute", capture)
    assert db.EF_SEARCH < db.BASELINE_EF_SEARCH
    recall("teslimat gecikti", workspace=WS, member=_owner(demo_lines), now=NOW, store=demo_store,
           embedder=embedder, config=VECTOR_ONLY)
    assert asked == [(str(db.BASELINE_EF_SEARCH),)]
    asked.clear()
    recall("teslimat gecikti", workspace=WS, member=_owner(demo_lines), now=NOW, store=demo_store, embedder=embedder)
    assert asked == []


def test_vector_mode_is_plain_top_10(demo_store, embedder, demo_lines) -> None:  # type: ignore[no-untyped-def]
    r = recall("teslimat gecikti", workspace=WS, member=_owner(demo_lines), now=NOW, store=demo_store,
               embedder=embedder, config=VECTOR_ONLY)
    assert len(r.facts) == 10
    assert r.trace.recall.text_hits == 0 and not r.trace.anchors.anchors and not r.trace.paths.paths


def test_period_words_favour_facts_of_that_period(demo_store, embedder, demo_lines) -> None:  # type: ignore[no-untyped-def]
    r = recall("Geçen ay hangi ödemeler geldi?", workspace=WS, member=_owner(demo_lines), now=NOW,
               store=demo_store, embedder=embedder)
    period = r.trace.rank.period
    assert period is not None and period[1].startswith("2026-10-01")
    top = [f for f in r.facts if f.origin == "record"][:3]
    assert top and all(f.parts.get("period", 0) > 0 for f in top)



@pytest.mark.parametrize("question", ["Geçen ay hangi ödemeler geldi?", "SO-1002 siparişinin faturası ödendi mi?",
                                      "Hasan Çetin ne dedi?"])
def test_a_facts_score_is_the_weighted_sum_of_its_parts(demo_store, embedder, demo_lines, question: str) -> None:  # type: ignore[no-untyped-def]
    """The trace's parts explain the score exactly: rank sums them as it sets them, so a
    part added to the trace but not to the score (or the reverse) fails here. The lift
    beside a strong hit is added to the rounded score, as rank does."""
    from brain.read.rank import WEIGHTS

    r = recall(question, workspace=WS, member=_owner(demo_lines), now=NOW, store=demo_store, embedder=embedder)
    assert r.trace.rank.facts
    for f in r.trace.rank.facts:
        expected = round(sum(WEIGHTS[k] * v for k, v in f.parts.items() if k != "beside"), 5)
        if "beside" in f.parts:
            expected = round(expected + WEIGHTS["beside"] * f.parts["beside"], 5)
        assert f.score == expected, (f.memory_id, f.parts)

def test_recall_runs_in_one_read_only_transaction(demo_store: Store) -> None:
    with demo_store.bound(WS, readonly=True) as (conn, binding):
        assert binding.relations is True   # a business: path search reads its edges
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            conn.execute("INSERT INTO roles VALUES (%s, 'x', '{x}')", (WS,))



def test_the_question_is_read_while_the_server_begins_the_read(demo_store: Store, embedder, company,  # type: ignore[no-untyped-def]
                                                               monkeypatch) -> None:
    # The transaction's BEGIN and binding go out before the question is read, so that the
    # server runs them meanwhile (brain.read.run._read): its words must find them already
    # sent, the statements they ask must follow, and the rest of the question is read
    # after those went out (tests/test_wire.py checks which ones).
    import brain.read.run as run
    from brain import wire
    from brain.read.question import read_words

    seen: list[str] = []
    sent = wire.Reader.execute

    def execute(self, query, *args, **kw):  # type: ignore[no-untyped-def]
        seen.append("BEGIN" if query.startswith("BEGIN") else "bind" if "brain_bind_read" in query else "statement")
        return sent(self, query, *args, **kw)

    def reading(question, now):  # type: ignore[no-untyped-def]
        seen.append("words")
        return read_words(question, now)

    def analysing(question, now, wording=None):  # type: ignore[no-untyped-def]
        seen.append("analyse")
        return analyse(question, now, wording)

    monkeypatch.setattr(wire.Reader, "execute", execute)
    monkeypatch.setattr(run, "read_words", reading)
    monkeypatch.setattr(run, "analyse", analysing)
    r = recall(f"{company['name']} vergi numarası nedir?", workspace=WS, member=None, store=demo_store,
               embedder=embedder)
    assert r.trace.question.words   # the question was read for the read path
    assert seen[:4] == ["BEGIN", "bind", "words", "statement"], seen
    assert seen.count("words") == 1 and seen.count("analyse") == 1, seen
    assert seen.index("analyse") > seen.index("statement"), seen


def test_turkish_answer_matching_is_locale_aware() -> None:
    from bench.evaluate import contains

    assert contains("İSTANBUL ŞUBESİ", "istanbul şubesi")
    assert contains("ırmak", "IRMAK") and not contains("irmak", "IRMAK")
    assert tx.tr_lower("KIŞ") == "kış"


def test_a_turn_is_marked_earlier_than_the_latest_restatement_among_the_facts() -> None:
    # which turns restate which is decided when they are written (tests/test_corrections.py);
    # rank marks a turn earlier than the latest of them it holds, and nothing it does not hold
    from brain.read.rank import _mark_earlier
    from brain.read.trace import Fact

    def turn(mid: int) -> Fact:
        when = datetime(2026, 11, mid, tzinfo=timezone.utc)
        return Fact(mid, f"turn {mid}", "message", "chat", "chat", "chat", when, when, None, False, None,
                    (), {}, 1.0)

    facts = [turn(1), turn(2), turn(4)]
    marked = _mark_earlier(facts, {1: (3, 2), 2: (3,)}, {})
    assert [(f.memory_id, f.earlier, f.newer_id) for f in marked] == [(1, True, 2), (2, False, None),
                                                                      (4, False, None)]
    assert _mark_earlier(facts, {}, {}) is facts


def test_contexts_do_not_depend_on_the_plan(demo_store: Store, embedder) -> None:  # type: ignore[no-untyped-def]
    """The same questions through connections that may not hash or merge joins nor walk
    an index in order: other plans return rows in other orders, and a context must not
    change with them (equal scores are broken by ids, not by row order). Whole tables may
    still be scanned, so the vector leg stays exact: an approximate HNSW search may differ
    by a row. (Every connection sets random_page_cost itself, so that cannot be the
    difference; with the read path's ORDER BYs removed, this fails.)"""
    from pathlib import Path

    from bench.profile import questions_from
    from brain.format import parse_now

    questions = questions_from(Path(__file__).resolve().parent.parent / "fixtures" / "questions.jsonl",
                               split="all", multi_hop=0, scale=0)[:40]
    other = Store(demo_store.admin_uri,
                  psycopg.conninfo.make_conninfo(demo_store.app_uri, options=(
                      "-c enable_hashjoin=off -c enable_mergejoin=off -c enable_indexscan=off")))
    try:
        for q in questions:
            now = parse_now(q["now"])
            a, b = (recall(q["question"], workspace=q["workspace"], member=q["as"], now=now, store=s,
                           embedder=embedder) for s in (demo_store, other))
            assert a.context == b.context, q["id"]
            assert [f.memory_id for f in a.trace.rank.facts] == [f.memory_id for f in b.trace.rank.facts], q["id"]
    finally:
        other.close()


def _order_as_first_written(facts):  # type: ignore[no-untyped-def]
    """rank._order before it was made leaner (the oracle for the test below)."""
    by_id = {f.memory_id: f for f in facts}
    group_best: dict = {}
    for f in facts:
        head = f.memory_id
        seen = set()
        while by_id.get(head) is not None and by_id[head].newer_id is not None and head not in seen:
            seen.add(head)
            head = by_id[head].newer_id
        group_best[head] = max(group_best.get(head, -1e9), f.score)
    heads = [f for f in facts if f.newer_id is None or f.newer_id not in by_id]
    heads.sort(key=lambda f: (-max(f.score, group_best.get(f.memory_id, f.score)), -f.occurred_at.timestamp()))
    followers: dict = {}
    for f in facts:
        if f.newer_id is not None and f.newer_id in by_id:
            followers.setdefault(f.newer_id, []).append(f)
    out: list = []
    placed: set = set()

    def place(f):  # type: ignore[no-untyped-def]
        if f.memory_id in placed:
            return
        placed.add(f.memory_id)
        out.append(f)
        for g in sorted(followers.get(f.memory_id, []), key=lambda x: -x.occurred_at.timestamp()):
            place(g)

    for f in heads:
        place(f)
    for f in facts:
        place(f)
    return out


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 40), st.one_of(st.none(), st.integers(0, 25))),
                max_size=25))
@settings(max_examples=300, deadline=None)
def test_fact_order_keeps_its_rule(rows) -> None:  # type: ignore[no-untyped-def]
    """Best first, an earlier value after its newer one, for any chains of newer values
    (dangling, shared, cyclic): the same order as the rule as first written."""
    from brain.read.rank import _order
    from brain.read.trace import Fact

    base = datetime(2026, 1, 1, tzinfo=timezone.utc)
    facts = [Fact(i, "t", "message", "note", "m", "s", base + timedelta(days=day), base, None,
                  newer is not None, newer, (), {}, score / 7)
             for i, (score, day, newer) in enumerate(rows)]
    assert [f.memory_id for f in _order(facts)] == [f.memory_id for f in _order_as_first_written(facts)]


def test_a_word_inside_several_names_of_one_entity_weighs_by_the_shortest(writer) -> None:  # type: ignore[no-untyped-def]
    """A question word contained in more than one name of an entity (a company's full name
    and the shorter names derived from it) anchors it by the shortest such name, the
    surest: the weight must not depend on which name row the plan reads first. (Fails
    when the statement leaves the choice to the plan, which here reads the alias first:
    0.6 + 0.3 / 4.)"""
    from brain.format import parse_line
    from tests.test_store import record

    writer.write(parse_line(record("a", "C-9", kind="company", name="Zeta Lojistik", links=[],
                                   aliases=["Alfa Deniz Lojistik Hizmetleri"], fields={"vergi_no": "1234567890"})))
    q = analyse("lojistik firmasının vergi numarası", NOW)
    with writer.store.bound("a", member="u1", now=NOW, readonly=True) as (conn, _):
        step = find_anchors(conn, q, workspace="a", cfg=HYBRID)
    match = [a for a in step.anchors if a.node.key == "C-9"]
    assert match and match[0].how == "contains", step.anchors
    assert match[0].score == 0.75   # "zeta lojistik": 0.6 + 0.3 / 2


def test_an_anchors_conversation_is_read_from_its_newest_turns(writer) -> None:  # type: ignore[no-untyped-def]
    """Node facts read at most `counted` of an anchor's newest turns (a company may be named
    in thousands): its count stops there, and a turn holding a query word is preferred to
    a newer one only among them. (Fails when the statement reads every turn naming the anchor.)"""
    from brain.format import parse_line
    from brain.read.rank import node_facts_sql
    from tests.test_store import record

    writer.write(parse_line(record("a", "C-5", kind="company", name="Kuzey Lojistik", links=[])))
    day_of = {}
    for day in range(1, 31):
        word = {1: " Zeplin", 22: " Balon"}.get(day, "")
        turn = writer.write(parse_line({
            "type": "message", "workspace": "a", "module": "sales", "channel": "whatsapp", "id": f"wa-{day}",
            "thread": f"t{day}", "date": f"2026-09-{day:02d}", "from": "Mehmet Kaya",
            "about": [{"kind": "company", "id": "C-5"}], "text": f"Kuzey Lojistik, gün {day}.{word}"}))
        day_of[turn.memory_id] = day
    with writer.store.bound("a", member="u1", now=NOW, readonly=True) as (conn, _):
        company = conn.execute("SELECT entity_id FROM entities WHERE key = 'C-5'").fetchone()[0]

        def about(counted: int, word: str | None) -> tuple[set[int], set[int]]:
            tsq = None if word is None else conn.execute(
                "SELECT (websearch_to_tsquery('turkish', %s) || websearch_to_tsquery('english', %s))::text",
                (word, word)).fetchone()[0]
            rows = [r for r in conn.execute(node_facts_sql(counted), {
                "ws": "a", "nodes": IntArray([]), "anchors": IntArray([company]), "ends": IntArray([]), "tsq": tsq})
                if r[2] == "about"]
            return {day_of[r[1]] for r in rows}, {r[3] for r in rows}

        newest = set(range(23, 31))
        assert about(1000, None) == (newest, {30})
        assert about(1000, "zeplin") == ({1} | newest - {23}, {30})   # the old turn holding the word
        assert about(10, "zeplin") == (newest, {10})                    # beyond the newest ten: not read
        assert about(10, "balon") == ({22} | newest - {23}, {10})      # within them


def test_node_facts_read_inside_the_candidates_statement_are_those_of_their_own(demo_store: Store, embedder,  # type: ignore[no-untyped-def]
                                                                               demo_lines) -> None:
    # Rank reads the node facts inside its candidates statement (CANDIDATES_WITH_NODES_SQL),
    # but for the conversation about the anchors, read before the walk (ABOUT_SQL); each
    # candidate must carry exactly the node facts the statement of their own
    # (node_facts_sql) gives for the same parameters, in its order, for every demo question
    # and a few askers. (Fails if a part, an entity, a count or their order differs, or if a
    # node fact's memory is not among the candidates.)
    import json
    from pathlib import Path

    import brain.read.rank as rank
    from brain import wire

    members = [None] + [ln["id"] for ln in demo_lines if ln["type"] == "member" and ln["workspace"] == WS][:2]
    questions = [json.loads(x)["question"] for x in
                 (Path(__file__).resolve().parent.parent / "fixtures" / "questions.jsonl").read_text().splitlines()
                 if x.strip() and json.loads(x)["workspace"] == WS][::3]
    sent: list[tuple[Any, Any]] = []
    execute = wire.Reader.execute

    def capture(self, query, params=None, **kw):  # type: ignore[no-untyped-def]
        result = execute(self, query, params, **kw)
        if query is rank.CANDIDATES_WITH_NODES_SQL or query is rank.ABOUT_SQL:
            sent.append((query, params, result))
        return result

    wire.Reader.execute = capture  # type: ignore[method-assign]
    checked = 0
    try:
        for member in members:
            for question in questions:
                sent.clear()
                recall(question, workspace=WS, member=member, now=NOW, store=demo_store, embedder=embedder)
                candidates = [(p, r) for query, p, r in sent if query is rank.CANDIDATES_WITH_NODES_SQL]
                if not candidates:
                    continue
                params, result = candidates[0]
                rows = result.fetchall()
                carried = {row[0]: [tuple(x) for x in row[16]] for row in rows if row[16]}
                for query, _, about in sent:
                    if query is rank.ABOUT_SQL:
                        for eid, mid, named in about.fetchall():
                            assert mid in {row[0] for row in rows}, "a turn about an anchor is a candidate"
                            carried[mid] = sorted([*carried.get(mid, []), (rank._ABOUT, eid, named)])
                with demo_store.bound(WS, member=member, now=NOW, readonly=True) as (conn, _):
                    own = conn.execute(rank.node_facts_sql(rank.ABOUT_COUNTED), params).fetchall()
                expected: dict[int, list[tuple[int, int, int]]] = {}
                for eid, mid, role, named in own:
                    expected.setdefault(mid, []).append((rank._ROLES.index(role) + 1, eid, named))
                assert carried == expected, question
                checked += bool(expected)
    finally:
        wire.Reader.execute = execute  # type: ignore[method-assign]
    assert checked >= 10, checked


def test_names_holding_a_word_are_found_alike_asked_early_or_late(demo_store: Store, demo_lines) -> None:  # type: ignore[no-untyped-def]
    # send_lookups asks for the names holding any word no code explains (CONTAINS_ANY_SQL),
    # before the exact names are read; find_anchors keeps those holding a word the names
    # left. The anchors and near misses must be those of the exact statement asked once
    # the names are known (CONTAINS_SQL), for every question and asker, also when the
    # early rows are cut short. (Fails if the per-entity choice of name, the words kept
    # or the order differ.)
    import json
    from pathlib import Path

    import brain.read.anchors as anchors_mod

    members = [None] + [ln["id"] for ln in demo_lines if ln["type"] == "member" and ln["workspace"] == WS][:3]
    questions = [json.loads(x)["question"] for x in
                 (Path(__file__).resolve().parent.parent / "fixtures" / "questions.jsonl").read_text().splitlines()
                 if x.strip() and json.loads(x)["workspace"] == WS]
    early = 0
    for member in members:
        with demo_store.bound(WS, member=member, now=NOW, readonly=True) as (conn, _):
            for question in questions:
                q = analyse(question, NOW)
                sent = anchors_mod.send_lookups(conn, q, workspace=WS)
                got = find_anchors(conn, q, workspace=WS, cfg=HYBRID, sent=sent)
                late = find_anchors(conn, q, workspace=WS, cfg=HYBRID,
                                    sent=replace(anchors_mod.send_lookups(conn, q, workspace=WS), contains=None))
                assert (got.anchors, got.near_misses) == (late.anchors, late.near_misses), question
                early += sent.contains is not None
    assert early > 50
    # cut short: the exact statement is asked instead
    assert anchors_mod._contains_from([(1, "k", "x", "n", "n x", ["x"])] * anchors_mod.CONTAINS_ANY_ROWS,
                                      {"x": 0}) is None


def test_a_name_holding_only_a_word_the_names_explain_does_not_anchor(writer) -> None:  # type: ignore[no-untyped-def]
    """Asked early, the names holding a word include those holding words the exact names
    explain ("Deniz" of "Deniz Gıda"); an entity is then anchored by its shortest name
    holding a word the names left ("lojistik merkezi", not its shorter "deniz ltd"), as
    the exact statement asked late does. (Fails if the early rows are kept whatever words
    they hold, or an entity's later name replaces its first.)"""
    from brain.format import parse_line
    from tests.test_store import record

    import brain.read.anchors as anchors_mod

    writer.write(parse_line(record("a", "C-1", kind="company", name="Deniz Gıda", links=[], fields={})))
    writer.write(parse_line(record("a", "C-2", kind="company", name="Zeta Lojistik Hizmetleri", links=[],
                                   aliases=["Deniz Ltd", "Lojistik Merkezi"], fields={})))
    q = analyse("Deniz Gıda ile lojistik firmasının vergi numarası", NOW)
    with writer.store.bound("a", member="u1", now=NOW, readonly=True) as (conn, _):
        sent = anchors_mod.send_lookups(conn, q, workspace="a")
        assert sent.contains is not None
        step = find_anchors(conn, q, workspace="a", cfg=HYBRID, sent=sent)
        late = find_anchors(conn, q, workspace="a", cfg=HYBRID,
                            sent=replace(anchors_mod.send_lookups(conn, q, workspace="a"), contains=None))
    by_key = {a.node.key: a for a in step.anchors}
    assert by_key["C-1"].how == "exact"
    assert by_key["C-2"].how == "contains" and by_key["C-2"].score == 0.75, step.anchors   # 0.6 + 0.3 / 2
    assert (step.anchors, step.near_misses) == (late.anchors, late.near_misses)


def test_fuzzy_names_are_not_sought_in_what_the_question_asks_for(writer, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Trigram probes go to the phrases that may name something, not to those made only
    of the question's kind, attribute and period words ("geçen ay", "ödemeler", "vergi
    numarası"): each probe is an index search the read waits for. A misspelt name holding
    such a word is still found by its whole phrase. (Fails if every phrase is probed, or
    if a phrase holding any such word is skipped.)"""
    from brain.format import parse_line
    from tests.test_store import record

    probed: list[str] = []
    trigrams = tx.trigrams

    def spy(phrase: str) -> dict[int, float]:
        probed.append(phrase)
        return trigrams(phrase)

    monkeypatch.setattr(tx, "trigrams", spy)
    with writer.store.bound("a", member="u1", now=NOW, readonly=True) as (conn, _):
        step = find_anchors(conn, analyse("Geçen ay hangi ödemeler geldi?", NOW), workspace="a", cfg=HYBRID)
    assert not step.anchors and set(probed) == {"ödemeler geldi", "geldi"}, probed
    writer.write(parse_line(record("a", "C-9", kind="company", name="Akdeniz Ödeme", links=[], fields={})))
    probed.clear()   # (the writer made the name's own trigrams)
    with writer.store.bound("a", member="u1", now=NOW, readonly=True) as (conn, _):
        step = find_anchors(conn, analyse("Akdniz Ödeme'nin vergi numarası nedir?", NOW), workspace="a", cfg=HYBRID)
    assert set(probed) == {"akdniz ödeme vergi", "akdniz"}, probed   # not "vergi numarası", "numarası"
    found = {a.node.key: a for a in step.anchors}
    assert found["C-9"].how == "trigram", step.anchors


def test_path_search_asks_its_first_level_before_the_hits_are_read(demo_store: Store, embedder, company,  # type: ignore[no-untyped-def]
                                                                   monkeypatch) -> None:
    # The first level's edges need only the anchors: they are sent before this process
    # reads the fused statement's rows, so the server reads them meanwhile (run._read);
    # the walk over them finds what a walk asking for them itself finds.
    import brain.read.paths as paths_mod
    from brain import wire

    events: list[str] = []
    sent, fetched = wire.Reader.execute, wire._Result.fetchall

    def execute(self, query, *args, **kw):  # type: ignore[no-untyped-def]
        result = sent(self, query, *args, **kw)
        kind = "edges" if query is paths_mod.EDGES_SQL else "fused" if "vector_leg" in query else "other"
        events.append(f"send {kind}")
        result._kind = kind
        return result

    def fetchall(self):  # type: ignore[no-untyped-def]
        events.append(f"read {getattr(self, '_kind', 'other')}")
        return fetched(self)

    class Labelled(wire._Result):
        __slots__ = ("_kind",)

    monkeypatch.setattr(wire, "_Result", Labelled)
    monkeypatch.setattr(wire.Reader, "execute", execute)
    monkeypatch.setattr(Labelled, "fetchall", fetchall)
    question = f"{company['name']} firmasının son siparişi nedir?"
    r = recall(question, workspace=WS, member=None, store=demo_store, embedder=embedder)
    assert r.trace.anchors.anchors and r.trace.paths.levels
    assert events.index("send edges") < events.index("read fused"), events
    import brain.read.run as run_mod

    monkeypatch.setattr(run_mod, "send_first_level", lambda *a, **k: None)   # the walk asks itself
    events.clear()
    again = recall(question, workspace=WS, member=None, store=demo_store, embedder=embedder)
    assert events.index("send edges") > events.index("read fused"), events
    assert again.context == r.context and again.trace.paths.paths == r.trace.paths.paths


def test_the_names_and_paths_lines_are_counted_while_the_read_waits(demo_store: Store, embedder, company,  # type: ignore[no-untyped-def]
                                                                    monkeypatch) -> None:
    # compact's lines of names and paths are known once path search is done: their
    # counts are given to the read's waits (brain.wire.Reader.when_idle), as the very
    # lines compact writes. (Fails if the two write a line differently.)
    from functools import partial

    from brain import wire
    from brain.tokens import line_tokens

    given: list[str] = []
    queue = wire.Reader.when_idle

    def when_idle(self, tasks):  # type: ignore[no-untyped-def]
        tasks = list(tasks)
        given.extend(t.args[0] for t in tasks if isinstance(t, partial) and t.func is line_tokens)
        return queue(self, tasks)

    monkeypatch.setattr(wire.Reader, "when_idle", when_idle)
    r = recall(f"{company['name']} firmasının son siparişinin faturası ödendi mi?", workspace=WS, member=None,
               store=demo_store, embedder=embedder)
    shown = [ln.text for ln in r.trace.compact.lines if ln.section in ("anchors", "paths")]
    assert any(ln.section == "paths" for ln in r.trace.compact.lines), r.context
    assert shown and set(shown) <= set(given), (shown, given)


def _write_lines(writer, lines: list[dict]) -> None:  # type: ignore[no-untyped-def,type-arg]
    from brain.format import parse_line

    for line in lines:
        writer.write(parse_line(line))


def _ask(writer, question: str, now: datetime = NOW):  # type: ignore[no-untyped-def]
    """`question` asked of the writer's store in workspace "a" by member u1 (at NOW)."""
    return recall(question, workspace="a", member="u1", now=now, store=writer.store, embedder=writer.embedder)


def _best_rels(r) -> list[str]:  # type: ignore[no-untyped-def]
    """The relations of a recall's best path, in order."""
    return [h.rel for h in r.trace.paths.paths[0].hops]


def _rec(rid: str, kind: str, name: str, fields: dict, links: list, module: str = "sales",  # type: ignore[type-arg]
         date: str = "2026-09-01") -> dict:  # type: ignore[type-arg]
    return {"type": "record", "workspace": "a", "app": "erp", "module": module, "kind": kind, "id": rid,
            "date": date, "name": name, "fields": fields, "links": links}


def test_kinds_of_another_vocabulary_steer_the_walk(writer) -> None:  # type: ignore[no-untyped-def]
    """Kinds are an open vocabulary (FORMAT.md): a store that calls its shipments "sevkiyat"
    and its trucks "vehicle" is walked to them when a question asks for a shipment's vehicle.
    (Fails when only the demo's kinds are known: the walk stops at the company, one hop.)"""
    _write_lines(writer, [
        _rec("C-7", "company", "Mavi Tekstil", {"vergi_no": "1112223334"}, []),
        _rec("V-7", "vehicle", "34 ZZ 777", {"plaka": "34 ZZ 777"}, []),
        _rec("SV-7", "sevkiyat", "SV-7", {"durum": "yolda"},
             [{"rel": "customer", "kind": "company", "id": "C-7"}, {"rel": "carried_by", "kind": "vehicle", "id": "V-7"}]),
    ])
    r = _ask(writer, "Mavi Tekstil'in sevkiyatını hangi araç taşıyor?")
    best = r.trace.paths.paths[0]
    assert [h.rel for h in best.hops] == ["customer", "carried_by"], r.trace.paths.paths
    assert set(best.covers) == {"shipment", "vehicle"}
    assert "34 ZZ 777" in r.context


def test_a_relation_the_question_names_is_walked_to(writer) -> None:  # type: ignore[no-untyped-def]
    """A question naming a relation ("account manager") is walked until it has taken it,
    past the kinds it names (the company, reached in one hop); a relation stated only in a
    module the asker lacks is never named. (Fails when the walk stops at the asked kinds.)"""
    _write_lines(writer, [
        _rec("E-1", "employee", "Deniz Kurt", {"cep": "+90 536 000 11 22"}, []),
        _rec("C-2", "company", "Kara Lojistik", {}, [{"rel": "account_manager", "kind": "employee", "id": "E-1"}]),
        _rec("P-2", "person", "Nermin Aksoy", {}, [{"rel": "works_at", "kind": "company", "id": "C-2"}]),
        _rec("F-2", "personnel_file", "F-2", {"maas": "1 TL"},
             [{"rel": "salary_of", "kind": "employee", "id": "E-1"}], module="hr"),
    ])
    from brain.read.paths import RELATION_NAMES_SQL

    with writer.store.bound("a", member="u1", now=NOW, readonly=True) as (conn, _):
        names = conn.execute(RELATION_NAMES_SQL).fetchone()[0]
    assert "account_manager" in names and "works_at" in names
    assert "salary_of" not in names   # (hr: not the asker's module)
    r = _ask(writer, "Who is the account manager of Nermin Aksoy's company? Their mobile number?")
    assert r.trace.paths.relations_asked == ("account_manager",)
    assert r.trace.paths.stopped == "asked kinds reached"
    assert _best_rels(r) == ["works_at", "account_manager"]
    assert "+90 536 000 11 22" in r.context


def test_a_kind_word_inside_a_name_asks_for_nothing(writer) -> None:  # type: ignore[no-untyped-def]
    """"Ege Diş Klinikleri" names a customer: the question does not ask for a clinic, it asks
    for the account manager, whom the store calls "temsilci" and reaches by "temsilcisi";
    the customer's contact person, also a person one hop away, is not the answer. (Fails
    when the kind word inside the name counts as asked, or when "account manager" asks for
    any person.)"""
    _write_lines(writer, [
        _rec("T-1", "temsilci", "Burak Şahin", {"telefon": "0532 614 22 87"}, []),
        _rec("M-1", "müşteri", "Ege Diş Klinikleri Ltd. Şti.", {"sektör": "sağlık"},
             [{"rel": "temsilcisi", "kind": "temsilci", "id": "T-1"}]),
        _rec("K-1", "contact", "Sevgi Aksoy", {"telefon": "0505 777 12 40"},
             [{"rel": "çalıştığı_firma", "kind": "müşteri", "id": "M-1"}]),
    ])
    r = _ask(writer, "Who's the account manager for Ege Diş Klinikleri and how do I reach them?")
    assert r.trace.anchors.kinds == (("account manager", "account_manager"),)
    assert r.trace.question.kinds == (("account manager", "account_manager"), ("klinikleri", "clinic"))
    best = r.trace.paths.paths[0]
    assert [h.rel for h in best.hops] == ["temsilcisi"] and best.ends_asked, r.trace.paths.paths
    answer = [f for f in r.trace.rank.facts if "answer" in f.parts]
    assert answer and "0532 614 22 87" in answer[0].text
    # the same word said outside the name still asks for its kind
    q = analyse("Ege Diş Klinikleri hangi klinikle çalışıyor?", NOW)
    with writer.store.bound("a", member="u1", now=NOW, readonly=True) as (conn, _):
        step = find_anchors(conn, q, workspace="a", cfg=HYBRID)
    assert ("klinikle", "clinic") in step.kinds or any(k == "clinic" for _, k in step.kinds), step.kinds


def test_what_someone_said_anchors_the_record_the_turn_names(writer) -> None:  # type: ignore[no-untyped-def]
    """"Karwan'ın sorduğu sipariş" asks about the order Karwan's message names, not about
    Karwan: the record keyed by an identifier in the turn's text is an anchor ("said"), and
    the walk goes from it to the letter of credit. A record the asker may not read, keyed
    in the same turn, is not anchored. (The turn is written first, so that it is linked to
    no record: FORMAT.md's order number "meets its record at query time, through text".
    Fails when only the speaker anchors: the walk reaches his company, one hop.)"""
    _write_lines(writer, [
        _rec("K-1", "kisi", "Karwan Aziz", {"telefon": "+964 750 000 11 22"}, []),
        {"type": "message", "workspace": "a", "module": "sales", "channel": "whatsapp", "id": "wa-1",
         "thread": "t-1", "date": "2026-09-05T10:00:00+03:00", "from": {"kind": "kisi", "id": "K-1"},
         "text": "EXP-77 yüklendi mi? EXP-88 ne durumda?"},
        _rec("A-1", "alici", "Al-Rafidain Trading", {}, []),
        _rec("EXP-77", "ihracat_siparisi", "EXP-77", {"miktar": "22.000 kg"},
             [{"rel": "buyer", "kind": "alici", "id": "A-1"}]),
        _rec("AKR-9", "akreditif", "AKR-9", {"tutar": "480.000 USD"},
             [{"rel": "secures", "kind": "ihracat_siparisi", "id": "EXP-77"}]),
        _rec("EXP-88", "ihracat_siparisi", "EXP-88", {"miktar": "9.000 kg"}, [], module="finance"),
    ])
    r = _ask(writer, "Karwan Aziz'in WhatsApp'ta sorduğu siparişin akreditif tutarı nedir?")
    said = [a.node.key for a in r.trace.anchors.anchors if a.how == "said"]
    assert said == ["EXP-77"], r.trace.anchors.anchors
    assert any([h.rel for h in p.hops] == ["secures"] for p in r.trace.paths.paths), r.trace.paths.paths
    assert "480.000 USD" in r.context
    assert "9.000 kg" not in r.to_json()
    # a question that asks nothing of what was said keeps to the names it holds
    r = _ask(writer, "Karwan Aziz'in telefonu nedir?")
    assert [a.how for a in r.trace.anchors.anchors] == ["exact"]


@pytest.mark.parametrize(("question", "said"), [
    ("What did Ayşe write in her email about the order?", True),
    ("Which discount did the supplier offer by e-mail?", True),
    ("Which plate did the carrier send on WhatsApp?", True),
    ("Olga thanked us in an e-mail for the tour: which listing was it?", True),
    ("Serkan e-postasında hangi tarihi verdi?", True),
    ("Müşteri e-postayla hangi indirimi istedi?", True),
    ("Şoförün WhatsApp'tan gönderdiği plaka nedir?", True),
    ("Mailindeki fiyat neydi?", True),
    ("Kemal Demir ile en son ne konuşuldu?", True),
    ("What was discussed with the landlord?", True),
    # a channel's name alone, or before a field, asks for a record's value
    ("What is the e-mail address of the supplier?", False),
    ("What is the supplier's email?", False),
    ("Tedarikçinin e-posta adresi nedir?", False),
    ("Tedarikçinin e-postası nedir?", False),
    ("Şoförün WhatsApp numarası nedir?", False),
])
def test_a_channel_asks_what_was_said_through_it_not_its_address(question: str, said: bool) -> None:
    """"by e-mail", "e-postasında" ask what was said (the read lends the turn's records as
    anchors); "e-mail address", "e-postası" ask for a field. (Fails if either is read for the
    other: the hyphen and apostrophe the words lose are read from the text.)"""
    assert analyse(question, NOW).conversation is said


def test_a_turkish_possessive_chain_asks_for_its_last_kind(writer) -> None:  # type: ignore[no-untyped-def]
    """"talebindeki öğrencinin grubunun öğretmeninin e-postası": each kind word qualifies
    the next, so the path to the teacher is the answer, before the one to the student that
    the relation names ("ogrencisi") also favour. (Fails without the chain's focus: the
    student's path is best and the teacher's e-mail is not in the context.)"""
    _write_lines(writer, [
        _rec("OG-1", "ogretmen", "Elif Şahin", {"e_posta": "elif.sahin@okul.test"}, []),
        _rec("SN-1", "sinif", "İngilizce B1 Akşam Grubu", {"derslik": "A-110"},
             [{"rel": "taught_by", "kind": "ogretmen", "id": "OG-1"}]),
        _rec("SN-2", "sinif", "Almanca A2 Grubu", {"derslik": "A-106"}, []),
        _rec("OR-1", "ogrenci", "Defne Aksu", {"seviye": "10. sınıf"}, []),
        _rec("EX-1", "exam_result", "EX-1", {"sonuc": "78/100"}, [{"rel": "ogrencisi", "kind": "ogrenci", "id": "OR-1"}]),
        _rec("KY-1", "kayit", "KY-1", {"durum": "kesin kayıt"},
             [{"rel": "ogrencisi", "kind": "ogrenci", "id": "OR-1"}, {"rel": "enrolled_in", "kind": "sinif", "id": "SN-1"}]),
        _rec("TL-1", "talep", "TL-1", {"konu": "B2 grubuna geçiş"}, [{"rel": "ilgili_kayit", "kind": "kayit", "id": "KY-1"}]),
    ])
    r = _ask(writer, "TL-1 talebindeki öğrencinin grubunun öğretmeninin e-posta adresi nedir?")
    best = r.trace.paths.paths[0]
    assert r.trace.paths.focus == "teacher"
    assert [h.rel for h in best.hops] == ["ilgili_kayit", "enrolled_in", "taught_by"], r.trace.paths.paths
    assert "elif.sahin@okul.test" in r.context


def test_a_record_with_a_date_field_is_in_a_period_by_that_day(writer) -> None:  # type: ignore[no-untyped-def]
    """"Which event took place last month?": an event booked in March whose date field says
    May is in May; one synced in May for September is not. (Fails when a record is in a
    period by the day it was synced.)"""
    _write_lines(writer, [
        _rec("EVT-1", "etkinlik", "Kardeşler Tekstil 30. Yıl Kokteyli", {"tarih": "2026-05-16"}, [], date="2026-03-09"),
        _rec("EVT-2", "etkinlik", "Melis Karaca & Tolga Erdem Düğünü", {"tarih": "2026-09-05"}, [], date="2026-05-20"),
        _rec("EVT-3", "etkinlik", "Defne Güler & Ozan Bulut Nişanı", {"durum": "kesin"}, [], date="2026-05-12"),
    ])
    r = _ask(writer, "Which event took place last month?", now=datetime(2026, 6, 18, tzinfo=timezone.utc))
    period = {f.text.split(" |")[0].split(" (")[0]: f.parts.get("period") for f in r.trace.rank.facts}
    assert period["etkinlik EVT-1"] == 1.0 and period["etkinlik EVT-2"] == -0.4, period
    assert period["etkinlik EVT-3"] == 1.0, period   # (no date field: the day it was synced)
    _write_lines(writer, [_rec("URT-1", "production_report", "URT-1", {"period": "2026-05", "yield": "48.910 kWh"}, [],
                               date="2026-06-01")])
    r = _ask(writer, "Which event took place last month?", now=datetime(2026, 6, 18, tzinfo=timezone.utc))
    assert {f.text.split(" |")[0]: f.parts.get("period") for f in r.trace.rank.facts}.get("production_report URT-1") \
        == 1.0   # a month field: the report for May, synced in June
    order = [f.text.split(" (")[0] for f in r.trace.rank.facts]
    assert order.index("etkinlik EVT-1") < order.index("etkinlik EVT-2"), order


def test_a_record_planned_for_a_period_ahead_is_lifted_by_its_field(writer) -> None:  # type: ignore[no-untyped-def]
    """"önümüzdeki hafta hangi mülakat planlı?": the interview whose scheduled day falls
    next week is in the period, whatever field holds the day; one this week is neither in
    nor out. (Fails when a period after the question's moment lifts nothing.)"""
    _write_lines(writer, [
        _rec("INT-1", "interview", "INT-1", {"scheduled_at": "2026-04-20 10:00", "location": "Tuzla OSB"}, [],
             date="2026-04-14"),
        _rec("INT-2", "interview", "INT-2", {"scheduled_at": "2026-04-17 15:00", "location": "Ataşehir"}, [],
             date="2026-04-15"),
    ])
    r = _ask(writer, "önümüzdeki hafta hangi mülakat planlı?", now=datetime(2026, 4, 16, tzinfo=timezone.utc))
    period = {f.text.split(" |")[0]: f.parts.get("period") for f in r.trace.rank.facts}
    assert period == {"interview INT-1": 1.0, "interview INT-2": None}, period


def test_an_english_possessive_chain_asks_for_its_first_kind(writer) -> None:  # type: ignore[no-untyped-def]
    """"the contact person at the venue of the gala": the person asked for is the venue's,
    two hops on from the customer named, not the customer's own contact one hop away; the
    walk goes on until a chain holds both. (Fails without the English chain: the walk stops
    at the venue and the customer's contact, and the venue's contact is not in the context.)"""
    _write_lines(writer, [
        _rec("KS-1", "kisi", "Pınar Akgül", {"telefon": "0532 740 18 36"}, []),
        _rec("KS-2", "kisi", "Nur Demirtaş", {"telefon": "0533 265 41 09"}, []),
        _rec("MUS-1", "musteri", "Egeli Yazılım A.Ş.", {"vergi_no": "3250471896"},
             [{"rel": "yetkili", "kind": "kisi", "id": "KS-1"}]),
        _rec("MKN-1", "mekan", "Alsancak Liman Balo Salonu", {"kapasite": "600 kişi"},
             [{"rel": "yetkili", "kind": "kisi", "id": "KS-2"}]),
        _rec("EVT-1", "etkinlik", "Egeli Yazılım Yaz Galası", {"tarih": "2026-06-20"},
             [{"rel": "musteri", "kind": "musteri", "id": "MUS-1"}, {"rel": "mekan", "kind": "mekan", "id": "MKN-1"}]),
    ])
    r = _ask(writer, "Who is the contact person at the venue of the Egeli Yazılım summer gala?")
    assert r.trace.paths.focus == "person"
    assert _best_rels(r) == ["musteri", "mekan", "yetkili"], r.trace.paths.paths
    assert "Nur Demirtaş" in r.context


def test_a_field_asked_that_the_answer_node_lacks_is_read_from_a_record_attached_to_it(writer) -> None:  # type: ignore[no-untyped-def]
    """The supplier's IBAN is not on the supplier's record but on its current account,
    which links to it: that record answers, lifted like the answer node's own. Where the
    answer node states the field itself, nothing beside it is. (Fails without the rule:
    the account is only "attached to answer node".)"""
    reason = "states what is asked, beside answer node"
    _write_lines(writer, [
        _rec("MUS-1", "musteri", "Ece Yılmaz & Mert Kaya", {"telefon": "0532 611 24 87"}, []),
        _rec("TED-7", "tedarikci", "Lezzet Sofrası Catering", {"telefon": "0232 463 90 12"}, []),
        _rec("TED-8", "tedarikci", "Kadraj Fotoğraf", {"telefon": "0232 111 22 33", "iban": "TR15 0006 2000 4410"}, []),
        _rec("CARI-7", "cari_hesap", "320.01.007 Lezzet Sofrası Catering", {"iban": "TR32 0001 0017 4555"},
             [{"rel": "tedarikci", "kind": "tedarikci", "id": "TED-7"}]),
        _rec("CARI-8", "cari_hesap", "320.01.008 Kadraj Fotoğraf", {"bakiye": "12.000 TL"},
             [{"rel": "tedarikci", "kind": "tedarikci", "id": "TED-8"}]),
        _rec("EVT-1", "etkinlik", "Ece Yılmaz & Mert Kaya Düğünü", {"tarih": "2026-07-11"},
             [{"rel": "musteri", "kind": "musteri", "id": "MUS-1"}, {"rel": "catering", "kind": "tedarikci", "id": "TED-7"},
              {"rel": "fotografci", "kind": "tedarikci", "id": "TED-8"}]),
    ])
    r = _ask(writer, "What is the IBAN of the catering company for the Ece Yılmaz & Mert Kaya wedding?")
    lifted = [f for f in r.trace.rank.facts if reason in f.why]
    assert [f.text.split(" |")[0] for f in lifted] == ["cari_hesap CARI-7 (320.01.007 Lezzet Sofrası Catering)"], \
        [(f.text, f.why) for f in r.trace.rank.facts]
    assert "TR32 0001 0017 4555" in r.context
    r = _ask(writer, "Ece Yılmaz & Mert Kaya düğününün fotoğrafçısının IBAN'ı nedir?")
    assert r.trace.paths.paths[0].nodes[-1] == next(e for e, n in r.trace.paths.nodes.items() if n.key == "TED-8")
    assert not any(reason in f.why for f in r.trace.rank.facts), [(f.text, f.why) for f in r.trace.rank.facts]
    assert "TR15 0006 2000 4410" in r.context


def test_a_kind_said_beside_a_code_says_what_the_code_keys(writer) -> None:  # type: ignore[no-untyped-def]
    """"IE-9 iş emrindeki traktörün sahibi olan kooperatifin başkanının cep numarası":
    "iş emrindeki" is the work order the code keys, so the question asks for a person of a
    company (a possessive chain), three hops on, not for a work order; the technician
    one hop away is a person but no company's. (Fails if the kind beside the code is
    asked: the chain is broken, no focus, and the walk stops at the technician.)"""
    _write_lines(writer, [
        _rec("E-6", "personel", "Emre Kılıç", {"cep": "0533 100 20 30"}, []),
        _rec("C-1", "musteri", "Kozan Tarım Kredi Kooperatifi", {"tip": "kooperatif"}, []),
        _rec("P-1", "kisi", "Ahmet Özdemir", {"unvan": "Kooperatif Başkanı", "cep": "0532 744 18 90"},
             [{"rel": "works_at", "kind": "musteri", "id": "C-1"}]),
        _rec("MK-1", "makine", "MF 5713", {"şasi_no": "MF5713-TR-88412"},
             [{"rel": "owned_by", "kind": "musteri", "id": "C-1"}]),
        _rec("IE-9", "is_emri", "IE-9", {"konu": "Hidrolik yağ kaçağı"},
             [{"rel": "for_machine", "kind": "makine", "id": "MK-1"}, {"rel": "assigned_to", "kind": "personel", "id": "E-6"}]),
        _rec("IE-10", "is_emri", "IE-10", {"konu": "Fren ayarı"}, [{"rel": "assigned_to", "kind": "personel", "id": "E-6"}]),
    ])
    r = _ask(writer, "IE-9 iş emrindeki traktörün sahibi olan kooperatifin başkanının cep numarası nedir?")
    assert "work_order" not in {k for _, k in r.trace.anchors.kinds}, r.trace.anchors.kinds
    assert r.trace.paths.focus == "person"
    assert _best_rels(r) == ["for_machine", "owned_by", "works_at"], r.trace.paths.paths
    assert "0532 744 18 90" in r.context


def test_the_words_after_a_short_name_that_go_on_with_it_are_the_name(writer) -> None:  # type: ignore[no-untyped-def]
    """"Dinamik Sürücü" is matched by the short name "Dinamik" of "Dinamik Sürücü
    Elektronik San. Tic. Ltd. Şti."; "Sürücü" goes on with that name, so it is no driver
    asked for. (Fails if only the words of the key matched count as the name.)"""
    _write_lines(writer, [
        _rec("TED-3", "supplier", "Dinamik Sürücü Elektronik San. Tic. Ltd. Şti.", {"teslim_suresi": "10 iş günü"}, []),
    ])
    r = _ask(writer, "When are the inverters from Dinamik Sürücü arriving?")
    assert [a.node.key for a in r.trace.anchors.anchors][:1] == ["TED-3"], r.trace.anchors
    assert r.trace.anchors.kinds == (), r.trace.anchors.kinds


def test_a_longer_name_joining_two_names_the_question_says_is_an_anchor(writer) -> None:  # type: ignore[no-untyped-def]
    """"Ayten Karaca'nın Kapadokya rezervasyonu": the booking named after both her and
    the region is what the question names, not her other booking; "Kızılay İş Hanı
    asansörü" would be the building's lift. (Fails without joined names: both words are
    matched by shorter names, and neither booking is an anchor.)"""
    _write_lines(writer, [
        _rec("K-1", "customer", "Ayten Karaca", {"telefon": "0532 111 22 33"}, []),
        _rec("BL-1", "region", "Kapadokya", {"il": "Nevşehir"}, []),
        _rec("RZ-1", "booking", "RZ-1 Kapadokya – Ayten Karaca", {"otel": "Taşkonak"},
             [{"rel": "customer", "kind": "customer", "id": "K-1"}]),
        _rec("RZ-2", "booking", "RZ-2 Yılbaşı Kaleiçi – Ayten Karaca", {"otel": "Kaleiçi Konak"},
             [{"rel": "customer", "kind": "customer", "id": "K-1"}]),
    ])
    r = _ask(writer, "Ayten Karaca'nın Kapadokya rezervasyonu hangi otelde?")
    joined = [a for a in r.trace.anchors.anchors if a.node.kind == "booking"]
    assert [(a.node.key, a.how) for a in joined] == [("RZ-1", "contains")], r.trace.anchors.anchors


@pytest.mark.parametrize("question, of_record", [
    ("Ümitköy sitesi Ekim faturasını ne zaman ödeyeceğini söyledi?", True),
    ("Geçen ayın faturası ödendi mi?", True),
    ("Who paid the invoice for October?", True),
    ("Was the October invoice paid?", True),
    ("Ekim'de gelen faturalar hangileri?", False),
    ("Which invoices came last month?", False),
])
def test_a_period_qualifying_a_kind_names_a_record(question: str, of_record: bool) -> None:
    period = tx.parse_period(question, NOW)
    assert period is not None and tx.period_of_a_record(question, period) is of_record


def test_what_was_said_of_a_period_s_record_is_not_judged_by_the_period(writer) -> None:  # type: ignore[no-untyped-def]
    """"Ekim faturasını ne zaman ödeyeceğini söyledi?": October names the invoice; the
    customer's reply in November is what is asked, not a fact outside October. (Fails if
    the turn is ranked down as out of the period.)"""
    _write_lines(writer, [
        _rec("MUS-3", "customer", "Ümitköy Yaşam Sitesi Yönetimi", {}, []),
        _rec("FTR-11", "invoice", "FTR-11", {"aciklama": "Ekim 2026 periyodik bakım", "durum": "gecikmede"},
             [{"rel": "customer", "kind": "customer", "id": "MUS-3"}], date="2026-10-05"),
        {"type": "message", "workspace": "a", "module": "sales", "channel": "email", "id": "em-28", "thread": "t-28",
         "date": "2026-11-05T13:30:00+03:00", "from": "Ahmet Türkmen", "about": [{"kind": "customer", "id": "MUS-3"}],
         "text": "Aidatlar toplanınca 25 Kasım'da ödeyeceğiz, gecikme için kusura bakmayın."},
    ])
    r = _ask(writer, "Ümitköy sitesi Ekim faturasını ne zaman ödeyeceğini söyledi?",
             now=datetime(2026, 11, 16, tzinfo=timezone.utc))
    parts = {f.text.split(":")[0]: f.parts for f in r.trace.rank.facts}
    assert "period" not in parts["Ahmet Türkmen"] and parts["invoice FTR-11 | aciklama"].get("period") == 1.0, parts


@pytest.mark.parametrize("question, kind, asked", [
    ("What is the monthly installment of the patient whose lab order is LS-1?", "lab", False),
    ("Elif'in lab siparişi ne zaman geldi?", "lab", False),
    ("Laboratuvarın siparişi ne zaman geldi?", "lab", True),   # a genitive: the lab's order
    ("Lab'ın siparişi ne zaman geldi?", "lab", True),
    ("TAH-1 settled the bill for which pet's treatment?", "patient", True),
    ("Which lab did the order go to?", "lab", True),
])
def test_a_bare_kind_word_before_another_says_which_one(question: str, kind: str, asked: bool) -> None:
    """"lab order" is an order (a noun compound); "laboratuvarın siparişi" asks for the
    lab's order, both kinds. (Fails if a compound's first word is asked for too.)"""
    from brain.read.anchors import _asked_kinds

    assert (kind in {k for _, k in _asked_kinds(analyse(question, NOW), set())}) is asked


@pytest.mark.parametrize("question, chain", [
    ("Who is the contact person at the venue of the gala?", ("person", "venue")),
    ("What is the phone of the driver of the shipment?", ("driver", "shipment")),
    ("Who is the driver on the route of complaint SKY-9?", ("driver", "route")),
    ("Which invoice and which order did the customer pay?", None),   # joined by "and": no chain
    ("What did the driver say about the shipment?", None),
])
def test_english_kind_words_joined_by_of_at_for_make_a_chain(question: str, chain: tuple[str, str] | None) -> None:
    from brain.read.paths import possessive_chain

    assert possessive_chain([], analyse(question, NOW)) == chain


def test_a_field_naming_a_code_is_walked_as_a_relation_under_the_rule(writer) -> None:  # type: ignore[no-untyped-def]
    """A complaint whose subject names route SRV-03 leads to the route's driver (the edge
    "konu", sql/031); one naming a payment in a module the asker may not read leads
    nowhere, and the payment's amount is in nothing the read returns. (Fails without the
    field's edge: the walk ends at the complaint; or, for the second, if the rule were
    not applied to such edges.)"""
    _write_lines(writer, [
        _rec("SKY-17", "complaint", "SKY-17", {"konu": "Servis gecikmesi (SRV-03)"}, []),
        _rec("SRV-03", "servis", "Bornova güzergâhı", {"sofor": "Hüseyin Aktaş", "sofor_telefonu": "0543 208 71 16"}, []),
        _rec("SKY-18", "complaint", "SKY-18", {"konu": "İade ödemesi PAY-9 gecikti"}, []),
        _rec("PAY-9", "payment", "PAY-9", {"tutar": "7.450 TL"}, [], module="finance"),
    ])
    r = _ask(writer, "What is the driver's phone on the route of complaint SKY-17?")
    assert any([h.rel for h in p.hops] == ["konu"] for p in r.trace.paths.paths), r.trace.paths.paths
    assert "0543 208 71 16" in r.context
    r = _ask(writer, "SKY-18 şikayetindeki ödemenin tutarı nedir?")
    assert not any(h.rel == "konu" for p in r.trace.paths.paths for h in p.hops), r.trace.paths.paths
    assert "7.450" not in r.to_json()


def test_a_turn_naming_a_walked_records_code_and_a_question_word_is_lifted(writer) -> None:  # type: ignore[no-untyped-def]
    """"Ağaçlı Tekstil'in davasında karşı taraf sulh için ne teklif etti?" names the client;
    the walk reaches its case "2026/233 E. …", and the e-mail offering the settlement names
    the case by that number only (FORMAT.md: a message links to no synced record). The turn
    holding the code and a word of the question is lifted as one that names a path node; one
    naming the code alone is not, nor is one the asker may not read. (Fails without the
    "mentioned" part of the node facts.)"""
    msg = {"type": "message", "workspace": "a", "module": "sales", "channel": "e-posta", "thread": "t-9",
           "from": "Av. Tarık Bozkurt"}
    _write_lines(writer, [
        _rec("MV-2", "muvekkil", "Ağaçlı Tekstil Ltd. Şti.", {"vergi_no": "0120459876"}, []),
        _rec("DAVA-4", "dava", "2026/233 E. Ağaçlı Tekstil - Kuzey Kumaş", {"esas_no": "2026/233 E."},
             [{"rel": "muvekkili", "kind": "muvekkil", "id": "MV-2"}]),
        {**msg, "id": "em-1", "date": "2026-09-10T15:30:00+03:00",
         "text": "2026/233 E. sayılı dosyada 85.000 TL ödeme karşılığında sulh teklif ediyoruz."},
        {**msg, "id": "em-2", "date": "2026-09-11T09:00:00+03:00", "text": "2026/233 E. duruşması ertelendi."},
        {**msg, "id": "em-3", "date": "2026-09-12T09:00:00+03:00", "module": "finance",
         "text": "2026/233 E. için sulh teklifimiz 95.000 TL olabilir."},
    ])
    r = _ask(writer, "Ağaçlı Tekstil'in davasında karşı taraf sulh için ne teklif etti?")
    lifted = {f.text for f in r.trace.rank.facts if "names a path node's code" in f.why}
    assert any("85.000 TL" in t for t in lifted), [(f.text, f.why) for f in r.trace.rank.facts]
    assert not any("ertelendi" in t for t in lifted), lifted
    assert "85.000 TL" in r.context
    assert "95.000" not in r.to_json()


def test_a_records_name_says_what_it_is(writer) -> None:  # type: ignore[no-untyped-def]
    """A route stored as "servis" and named "Bornova güzergâhı" is a route: a question
    asking for a route reaches it, and one naming it by its code and calling it a route
    ("SRV-3 güzergâhını işleten firma") has its route in the anchor, none beyond it.
    (Fails when only a record's kind says what it is: the walk passes the operator to
    reach another route.)"""
    _write_lines(writer, [
        _rec("TED-2", "tedarikci", "Ege Tur Servis", {"vergi_no": "3310984417"}, []),
        _rec("SRV-3", "servis", "Bornova güzergâhı", {"sofor_telefonu": "0543 208 71 16"},
             [{"rel": "servis_firmasi", "kind": "tedarikci", "id": "TED-2"}]),
        _rec("SRV-4", "servis", "Karşıyaka güzergâhı", {"sofor_telefonu": "0532 000 11 22"},
             [{"rel": "servis_firmasi", "kind": "tedarikci", "id": "TED-2"}]),
        _rec("SKY-9", "complaint", "SKY-9", {"konu": "Servis gecikmesi (SRV-3)"}, []),
    ])
    r = _ask(writer, "SRV-3 güzergâhını işleten firmanın vergi numarası nedir?")
    assert _best_rels(r) == ["servis_firmasi"], r.trace.paths.paths
    assert "3310984417" in r.context
    r = _ask(writer, "What is the driver's phone on the bus route of complaint SKY-9?")
    best = r.trace.paths.paths[0]
    assert "route" in best.covers and [h.rel for h in best.hops] == ["konu"], r.trace.paths.paths
    assert "0543 208 71 16" in r.context


def test_a_file_number_inside_names_anchors_them_and_an_attributes_words_do_not(writer) -> None:  # type: ignore[no-untyped-def]
    """"2026/418 E. sayılı davanın müvekkilinin vergi numarası": the case named "2026/418 E.
    Yılmaz İnşaat - Demirtaş Yapı" is an anchor (the number is a code held in the name), and
    "vergi" of "vergi numarası" does not anchor the tax office named "… Vergi Dairesi".
    (Fails when a slashed number is no code, or an attribute's words are sought in names.)"""
    _write_lines(writer, [
        _rec("MV-1", "muvekkil", "Yılmaz İnşaat", {"vergi_no": "9870012345"}, []),
        _rec("KT-5", "karsi_taraf", "Kavaklıdere Vergi Dairesi Müdürlüğü", {"vergi_no": "1111111111"}, []),
        _rec("DAVA-1", "dava", "2026/418 E. Yılmaz İnşaat - Demirtaş Yapı", {"esas_no": "2026/418 E."},
             [{"rel": "muvekkili", "kind": "muvekkil", "id": "MV-1"}]),
        _rec("DAVA-2", "dava", "2025/77 E. Vergi Dairesi davası", {"esas_no": "2025/77 E."},
             [{"rel": "karsi_tarafi", "kind": "karsi_taraf", "id": "KT-5"}]),
    ])
    r = _ask(writer, "2026/418 E. sayılı davanın müvekkilinin vergi numarası nedir?")
    assert [a.node.key for a in r.trace.anchors.anchors] == ["DAVA-1"], r.trace.anchors.anchors
    assert "9870012345" in r.context


def test_an_amount_the_question_gives_anchors_the_records_stating_it(writer) -> None:  # type: ignore[no-untyped-def]
    """"7 Nisan'da gelen 33.600 TL'lik ödemeyi yapan müvekkil": the payment stating 33.600
    TL is an anchor (how "amount"), and its invoice's client is reached; a record in a
    module the asker may not read is never one. (Fails without the amount's lookup: the
    question names nothing, and a period question gets no anchors by meaning.)"""
    _write_lines(writer, [
        _rec("MV-1", "muvekkil", "Yılmaz İnşaat", {"vergi_no": "1470036658"}, []),
        _rec("MV-2", "muvekkil", "Demir Gıda", {"vergi_no": "2222222222"}, []),
        _rec("FT-1", "fatura", "FT-1", {"tutar": "12.000 TL"}, [{"rel": "faturalanan", "kind": "muvekkil", "id": "MV-1"}]),
        _rec("TH-1", "tahsilat", "TH-1", {"tutar": "33.600 TL"}, [{"rel": "odenen_fatura", "kind": "fatura", "id": "FT-1"}], date="2026-04-07"),
        _rec("GZ-1", "gizli", "GZ-1", {"tutar": "33.600 TL"}, [{"rel": "ilgili", "kind": "muvekkil", "id": "MV-2"}],
             module="finance"),
    ])
    r = recall("7 Nisan'da gelen 33.600 TL'lik ödemeyi yapan müvekkilin vergi numarası nedir?", workspace="a",
               member="u1", now=datetime(2026, 4, 15, tzinfo=timezone.utc), store=writer.store,
               embedder=writer.embedder)
    assert [(a.node.key, a.how) for a in r.trace.anchors.anchors] == [("TH-1", "amount")], r.trace.anchors.anchors
    assert "1470036658" in r.context
    assert "GZ-1" not in r.to_json()   # (the record of a module u1 may not read)


def test_a_day_the_question_names_anchors_the_record_stating_it(writer) -> None:  # type: ignore[no-untyped-def]
    """"the client whose hearing is scheduled for 11 June": the hearing whose field says
    2026-06-11 is an anchor (how "date"), and its case's client is reached. (Fails without
    the day's lookup: the question names nothing, and its period is June of last year.)"""
    _write_lines(writer, [
        _rec("MV-1", "muvekkil", "Başkent Lojistik", {"telefon": "0312 287 45 00"}, []),
        _rec("DV-2", "dava", "DV-2", {"mahkeme": "Ankara 3. İş Mahkemesi"}, [{"rel": "muvekkili", "kind": "muvekkil", "id": "MV-1"}]),
        _rec("DR-3", "durusma", "DR-3", {"durusma_tarihi": "2026-06-11 14:00"}, [{"rel": "ait_oldugu_dava", "kind": "dava", "id": "DV-2"}]),
        _rec("DR-4", "durusma", "DR-4", {"durusma_tarihi": "2026-05-06 10:00"}, []),
    ])
    r = recall("What is the phone number of the client whose hearing is scheduled for 11 June?", workspace="a",
               member="u1", now=datetime(2026, 4, 15, tzinfo=timezone.utc), store=writer.store,
               embedder=writer.embedder)
    assert [(a.node.key, a.how) for a in r.trace.anchors.anchors] == [("DR-3", "date")], r.trace.anchors.anchors
    assert "0312 287 45 00" in r.context


def test_the_newest_of_a_kind_anchors_a_question_naming_nothing(writer) -> None:  # type: ignore[no-untyped-def]
    """"En son kesilen fatura hangisi?": the newest invoice the asker may read is the anchor
    (how "newest"), not a newer one in a module it may not read, nor an earlier version.
    (Fails without it: nothing is named, and anchors by meaning are any invoices.)"""
    _write_lines(writer, [
        _rec("FT-1", "fatura", "FT-1", {"tutar": "1.000 TL"}, [], date="2026-03-01"),
        _rec("FT-2", "fatura", "FT-2", {"tutar": "2.000 TL"}, [], date="2026-04-09"),
        _rec("FT-2", "fatura", "FT-2", {"tutar": "2.500 TL"}, [], date="2026-04-02"),
        _rec("FT-3", "fatura", "FT-3", {"tutar": "3.000 TL"}, [], module="finance", date="2026-04-12"),
        _rec("FT-0", "fatura", "FT-0", {"tutar": "500 TL"}, [], date="2026-01-05"),
    ])
    r = recall("En son kesilen fatura hangisi?", workspace="a", member="u1",
               now=datetime(2026, 4, 15, tzinfo=timezone.utc), store=writer.store, embedder=writer.embedder)
    assert [(a.node.key, a.how) for a in r.trace.anchors.anchors] == [("FT-2", "newest")], r.trace.anchors.anchors
    assert "FT-3" not in r.to_json()


def test_an_english_question_meets_a_turkish_note_through_the_glossary(writer) -> None:  # type: ignore[no-untyped-def]
    """"When am I on annual leave?" against "20-24 Nisan arası yıllık izindeyim": the
    question's concept brings its Turkish words to the keyword leg. (Fails without them:
    no word of the question is in the note, and the test embedder knows no meaning.)"""
    _write_lines(writer, [
        {"type": "note", "workspace": "a", "module": "sales", "privacy": "personal", "owner": "u1",
         "date": "2026-09-01", "text": "20-24 Nisan arası yıllık izindeyim; vade takibini Mehmet Bey'e devrettim."},
        *[_rec(f"R-{i}", "order", f"R-{i}", {"durum": "açık", "teslimat": f"{i} Nisan, depo {i}, palet {i}",
                                              "aciklama": f"sipariş {i} için kalite kontrol ve sevkiyat planı hazır"},
               []) for i in range(80)],
    ])
    r = _ask(writer, "When am I on annual leave?")
    assert "20-24 Nisan" in r.context, r.context


def test_a_fact_stated_after_the_question_moment_ranks_last(writer) -> None:  # type: ignore[no-untyped-def]
    """Asked at `now` (FORMAT.md), a record version synced after it is not the current
    value: the version current at `now` is not marked earlier and comes first, the later
    one ranks below and says so in the context. (Fails when the store is read as it stands
    whatever `now`: the later version is current and the one asked for is "earlier".)"""
    _write_lines(writer, [
        _rec("R-1", "order", "R-1", {"durum": "hazırlanıyor"}, []),
        _rec("R-1", "order", "R-1", {"durum": "teslim edildi"}, [], date="2026-12-01T09:30:00+03:00"),
    ])
    r = _ask(writer, "R-1 siparişinin durumu nedir?")
    facts = [f for f in r.trace.rank.facts if "R-1" in f.text]
    assert [("hazırlanıyor" in f.text, f.earlier) for f in facts] == [(True, False), (False, False)], facts
    assert facts[1].parts.get("later") == -1.0 and "later" not in facts[0].parts
    assert "after now" in r.context and r.context.index("hazırlanıyor") < r.context.index("teslim edildi")
    # asked after both, the newer version is current and the older one earlier
    r = recall("R-1 siparişinin durumu nedir?", workspace="a", member="u1", now=datetime(2026, 12, 2, tzinfo=timezone.utc),
               store=writer.store, embedder=writer.embedder)
    facts = [f for f in r.trace.rank.facts if "R-1" in f.text]
    assert [("teslim edildi" in f.text, f.earlier) for f in facts] == [(True, False), (False, True)], facts
    # asked on the day the newer version came (a bare date: that whole day is before it),
    # the newer is current too (fails if a bare `now` is read as the day's first moment)
    from brain.format import parse_now

    r = recall("R-1 siparişinin durumu nedir?", workspace="a", member="u1", now=parse_now("2026-12-01"),
               store=writer.store, embedder=writer.embedder)
    facts = [f for f in r.trace.rank.facts if "R-1" in f.text]
    assert [("teslim edildi" in f.text, f.earlier) for f in facts] == [(True, False), (False, True)], facts
    assert parse_now("2026-12-01T08:00:00+03:00") == datetime(2026, 12, 1, 5, tzinfo=timezone.utc)


def test_asked_kinds_on_different_branches_walk_one_level_on(writer) -> None:  # type: ignore[no-untyped-def]
    """A complaint's order's invoice's payment lies three hops away, but a payment (to a
    grower, for the complaint's lot) is reached in two: every asked kind is reached, on
    different branches. The chain holding the most of them walks one level on, to the
    invoice's payment. (Fails when the walk stops once the asked kinds are reached
    anywhere.)"""
    _write_lines(writer, [
        _rec("L-1", "parti", "L-1", {"miktar": "44.000 kg"}, []),
        _rec("UO-1", "odeme", "UO-1", {"tutar": "11.968.000 TL", "yön": "üretici ödemesi"},
             [{"rel": "for_lot", "kind": "parti", "id": "L-1"}]),
        _rec("E-1", "ihracat_siparisi", "E-1", {"miktar": "20.000 kg"}, []),
        _rec("F-1", "fatura", "F-1", {"tutar": "96.000 EUR"}, [{"rel": "bills", "kind": "ihracat_siparisi", "id": "E-1"}]),
        _rec("OD-1", "odeme", "OD-1", {"tutar": "48.000 EUR peşin"}, [{"rel": "pays", "kind": "fatura", "id": "F-1"}]),
        _rec("RK-1", "reklamasyon", "RK-1", {"konu": "aflatoksin"},
             [{"rel": "concerns_order", "kind": "ihracat_siparisi", "id": "E-1"},
              {"rel": "concerns_lot", "kind": "parti", "id": "L-1"}]),
    ])
    r = _ask(writer, "RK-1 reklamasyonuna konu siparişin faturasına ilk peşin tahsilat ne kadar geldi?")
    assert r.trace.paths.stopped == "asked kinds reached, one level on", r.trace.paths.levels
    best = r.trace.paths.paths[0]
    assert [h.rel for h in best.hops] == ["concerns_order", "bills", "pays"], r.trace.paths.paths
    assert "48.000 EUR" in r.context


def test_a_period_listing_lifts_the_records_of_the_kind_it_asks_for(writer) -> None:  # type: ignore[no-untyped-def]
    """"Ekimde gelen şikayetler" lists the month's complaints: a complaint record (its kind
    named in English, no word shared with the question) ranks above the month's bookings,
    whose notes share the question's words. (Fails without rank's "kind" part.)"""
    _write_lines(writer, [
        _rec(f"B-{i}", "booking", f"B-{i}", {"not": "ekimde gelen misafir"}, [], date=f"2026-10-0{i}")
        for i in range(1, 4)] + [
        _rec("C-9", "complaint", "C-9", {"konu": "klima arızalı"}, [], date="2026-10-05")])
    r = _ask(writer, "Ekimde gelen şikayetler nelerdi?")
    records = [f for f in r.trace.rank.facts if f.origin == "record"]
    assert records[0].text.startswith("complaint C-9"), [(f.text[:20], f.parts) for f in records]
    assert records[0].parts.get("kind") == 1.0 and all("kind" not in f.parts for f in records[1:])


def test_a_question_naming_a_stored_kind_in_its_own_word_walks_to_it(writer) -> None:  # type: ignore[no-untyped-def]
    """No lexicon knows a "konteyner"; the store records one, and a question saying
    "konteynerinin" asks for it: the walk goes past the order's company to the container.
    A kind recorded only in a module the asker may not read is never named. (Fails when
    only the lexicon's kind words ask.)"""
    _write_lines(writer, [
        _rec("C-5", "company", "Mavi Tekstil", {}, []),
        _rec("SO-5", "order", "SO-5", {"tutar": "1 TL"}, [{"rel": "placed_by", "kind": "company", "id": "C-5"}]),
        _rec("K-5", "konteyner", "K-5", {"numara": "MSCU 7781204"}, [{"rel": "loaded_for", "kind": "order", "id": "SO-5"}]),
        _rec("G-5", "gizli_dosya", "G-5", {"not": "x"}, [], module="finance"),
    ])
    from brain.read.paths import RELATION_NAMES_SQL

    with writer.store.bound("a", member="u1", now=NOW, readonly=True) as (conn, _):
        kinds = conn.execute(RELATION_NAMES_SQL).fetchone()[1]
    assert "konteyner" in kinds and "order" in kinds and "gizli_dosya" not in kinds
    r = _ask(writer, "SO-5 siparişinin konteynerinin numarası ne?")
    assert "konteyner" in r.trace.paths.kinds_asked, r.trace.paths
    assert r.trace.paths.paths[0].nodes[-1] == next(n for n, v in r.trace.paths.nodes.items() if v.key == "K-5")
    assert "MSCU 7781204" in r.context


def test_a_question_listing_a_period_is_not_anchored_by_meaning(writer) -> None:  # type: ignore[no-untyped-def]
    """"Which orders came in October" names nothing: its answer is every order of the month,
    not what the nearest facts are about, so no anchor is taken by meaning (their paths
    crowded the month's orders out). (Fails when by_meaning anchors it.)"""
    _write_lines(writer, [_rec("C-3", "company", "Ege Mobilya", {}, [])] + [
        _rec(f"SO-30{i}", "order", f"SO-30{i}", {"tutar": f"{i}0.000 TL"},
                [{"rel": "placed_by", "kind": "company", "id": "C-3"}], date=date)
        for i, date in enumerate(["2026-10-03", "2026-10-17", "2026-09-12"], start=1)])
    r = _ask(writer, "Ekimde hangi siparişler geldi?")
    assert r.trace.anchors.anchors == ()
    assert "SO-301" in r.context and "SO-302" in r.context
    # a period without a kind word lists as well ("what went out in October")
    r = _ask(writer, "Ekimde neler geldi?")
    assert r.trace.anchors.anchors == ()
    # a question naming nothing and no period is still anchored by meaning
    r = _ask(writer, "Siparişler kimden geldi?")
    assert {a.how for a in r.trace.anchors.anchors} == {"meaning"}


def test_a_relation_names_the_role_of_the_node_it_leads_to(writer) -> None:  # type: ignore[no-untyped-def]
    """A person reached by "sorumlu_teknisyen" is the technician a question asks for, though
    the store calls its people "personel"; the path to it ends at what is asked, and that
    person's record is lifted as the answer. (Fails when only the node's own kind counts.)"""
    _write_lines(writer, [
        _rec("K-1", "klinik", "Çamlıca Göz Kliniği", {}, []),
        _rec("PE-1", "personel", "Serkan Avcı", {"cep": "0533 000 14 58"}, []),
        _rec("SK-1", "sikayet", "SK-1", {"konu": "otoklav basınç hatası"}, [{"rel": "musteri", "kind": "klinik", "id": "K-1"}]),
        _rec("BK-1", "bakim", "BK-1", {"tur": "arıza"},
             [{"rel": "sikayet", "kind": "sikayet", "id": "SK-1"},
              {"rel": "sorumlu_teknisyen", "kind": "personel", "id": "PE-1"}]),
    ])
    r = _ask(writer, "Çamlıca Göz'ün şikayetine hangi teknisyen bakıyor, telefonu ne?")
    best = r.trace.paths.paths[0]
    assert best.hops[-1].rel == "sorumlu_teknisyen" and best.ends_asked, r.trace.paths.paths
    assert set(best.covers) == {"complaint", "technician"}
    answer = [f for f in r.trace.rank.facts if "answer" in f.parts]
    assert answer and "0533 000 14 58" in answer[0].text
    assert "0533 000 14 58" in r.context


@pytest.mark.parametrize("kind, name, aliases", [
    ("kisi", "Dr. Hakan Erdem", ["Hakan Erdem"]),
    ("person", "Op. Dr. Levent Karaca", ["Levent Karaca"]),
    ("person", "Dr. Erdem", []),                 # (a title and one name: left whole)
    ("person", "Ahmet Kaya", []),
    ("company", "Ağaoğlu Yapı A.Ş.", ["Ağaoğlu Yapı", "Ağaoğlu"]),
    # an organisation of another vocabulary: leading parts of two words or more only
    ("müşteri", "Yıldız Sigorta Aracılık A.Ş.", ["Yıldız Sigorta Aracılık", "Yıldız Sigorta"]),
    ("hastane", "Özel Boğaziçi Şifa Hastanesi", ["Özel Boğaziçi", "Özel Boğaziçi Şifa"]),
])
def test_derived_aliases_drop_titles_and_legal_forms(kind: str, name: str, aliases: list[str]) -> None:
    from brain.write import derived_aliases

    assert derived_aliases(kind, name) == aliases


def test_a_code_no_record_is_keyed_by_is_sought_in_names(writer) -> None:  # type: ignore[no-untyped-def]
    """"IP-22" is a code no record is keyed by, but a product's name holds it: the product
    anchors by containment. (Fails when every code word counts as explained.)"""
    _write_lines(writer, [_rec("U-1", "urun", "İnfüzyon Pompası IP-22", {"fiyat": "1 TL"}, [])])
    q = analyse("Who supplies the IP-22 infusion pump?", NOW)
    with writer.store.bound("a", member="u1", now=NOW, readonly=True) as (conn, _):
        step = find_anchors(conn, q, workspace="a", cfg=HYBRID)
    assert [(a.node.key, a.how) for a in step.anchors] == [("U-1", "contains")]


def test_a_kind_word_is_not_sought_inside_names(writer) -> None:  # type: ignore[no-untyped-def]
    """Many an organisation's name holds its kind ("... Hastanesi"): "hastanesine" names no
    hospital by containment, the person named does. (Fails when suffixed kind words are
    sought inside names: every hospital anchors.)"""
    _write_lines(writer, [
        _rec("H-1", "hastane", "Özel Deniz Hastanesi", {}, []),
        _rec("H-2", "hastane", "Kuzey Şehir Hastanesi", {}, []),
        _rec("KS-1", "kisi", "Dr. Ali Yalın", {}, [{"rel": "calistigi_kurum", "kind": "hastane", "id": "H-1"}]),
    ])
    q = analyse("Ali Yalın'ın hastanesine iade yapacağız, IBAN'ları ne?", NOW)
    with writer.store.bound("a", member="u1", now=NOW, readonly=True) as (conn, _):
        step = find_anchors(conn, q, workspace="a", cfg=HYBRID)
    assert [a.node.key for a in step.anchors] == ["KS-1"], step.anchors
    assert step.anchors[0].how == "exact"   # the alias without the title


def test_the_trace_names_only_relations_met_on_visible_edges(writer) -> None:  # type: ignore[no-untyped-def]
    """A relation stated only by another member's private fact may steer how far the walk
    goes, but the trace never names it: only relations the walk met on edges the asker
    sees. (Fails when the trace lists every relation the question names.)"""
    _write_lines(writer, [
        {"type": "member", "workspace": "a", "id": "u2", "name": "Can", "roles": ["sales"]},
        _rec("C-4", "company", "Mor Lojistik", {}, []),
        _rec("E-4", "employee", "Deniz Kara", {}, []),
        {**_rec("C-4", "company", "Mor Lojistik", {}, [{"rel": "gizli_sorumlu", "kind": "employee", "id": "E-4"}]),
         "app": "notes", "privacy": "private", "owner": "u2"},
    ])
    q = "Mor Lojistik'in gizli sorumlusu kim?"
    mine = _ask(writer, q)
    owner = recall(q, workspace="a", member="u2", now=NOW, store=writer.store, embedder=writer.embedder)
    assert owner.trace.paths.relations_asked == ("gizli_sorumlu",)
    assert mine.trace.paths.relations_asked == ()
    assert "gizli_sorumlu" not in mine.context + mine.to_json()


@pytest.mark.parametrize("relation, question", [
    ("sahibi", "Who owns the car in claim HSR-1, and what is her phone number?"),   # the owner, either language
    ("account_manager", "Who is the account manager of Kara Lojistik?"),
    ("ekip_sefi", "Montaj ekibinin ekip şefine ne zaman ulaşırız?"),
    ("assigned_to", "Talebe atanan kişi kim?"),                                  # "atanan": assigned
])
def test_a_question_names_a_relation_in_any_language(relation: str, question: str) -> None:
    from brain.read.paths import rels_named

    assert relation in rels_named((relation, "works_at", "bills"), analyse(question, NOW))


@pytest.mark.parametrize("question, relations, named", [
    # the insured, not the insurer: "sigortalı" meets "sigorta" only by its five-letter stem
    ("POL-1 poliçesinin sigortalısı kim?", ("sigortali", "sigorta_sirketi", "temsilci"), {"sigortali"}),
    ("POL-1 poliçesinin sigorta şirketi hangisi?", ("sigortali", "sigorta_sirketi", "temsilci"), {"sigorta_sirketi"}),
    # a verb form the suffix walk leaves still meets its relation by the stem
    ("Ayşe'nin çalıştığı yer neresi?", ("calisir", "temsilci"), {"calisir"}),
])
def test_a_word_names_the_relation_it_meets_closely_not_one_its_stem_meets(question: str, relations: tuple,  # type: ignore[type-arg]
                                                                            named: set) -> None:  # type: ignore[type-arg]
    """(Fails when every relation a question word's stem meets counts as named.)"""
    from brain.read.paths import rels_named

    assert rels_named(relations, analyse(question, NOW)) == named


def test_a_chains_last_kind_is_lifted_only_on_paths_through_the_kind_it_belongs_to(writer) -> None:  # type: ignore[no-untyped-def]
    """"HSR-1 dosyasındaki anlaşmalı servisin yetkilisi": the person asked for is the
    service's (its "yetkili" field), not the agent the claim's policy leads to, though the
    agent is a person and the chain ends at one. (Fails when holding the chain's last kind
    alone lifts a path: the agent's path is best.)"""
    _write_lines(writer, [
        _rec("T-1", "temsilci", "Elif Kaya", {"telefon": "0532 000 00 01"}, []),
        _rec("POL-1", "police", "POL-1 Kasko", {"brans": "Kasko"}, [{"rel": "temsilci", "kind": "temsilci", "id": "T-1"}]),
        _rec("SRV-1", "anlasmali_servis", "Tuzla Oto Kaporta", {"yetkili": "Recep Uysal"}, []),
        _rec("HSR-1", "hasar_dosyasi", "HSR-1 Kasko hasarı", {"hasar_turu": "çarpışma"},
             [{"rel": "police", "kind": "police", "id": "POL-1"}, {"rel": "servis", "kind": "anlasmali_servis", "id": "SRV-1"}]),
    ])
    r = _ask(writer, "HSR-1 dosyasındaki anlaşmalı servisin yetkilisi kim?")
    assert _best_rels(r) == ["servis"], r.trace.paths.paths
    assert "Recep Uysal" in r.context


def test_a_chains_last_kind_beside_the_kind_it_belongs_to_is_lifted(writer) -> None:  # type: ignore[no-untyped-def]
    """"TKT-1 kaydındaki abonenin modemi": the store hangs the modem on the subscription,
    beside the subscriber, not on the subscriber; the modem's path is still the answer.
    (Fails when the chain's owner must lie on the path itself: the customer's path is best.)"""
    _write_lines(writer, [
        _rec("MUS-1", "musteri", "Selçuklu Matbaacılık", {"telefon": "0332 238 41 17"}, []),
        _rec("MDM-1", "modem", "MDM-1", {"kurulum_tarihi": "2025-10-16"}, []),
        _rec("BAY-1", "bayi", "Selçuklu Teknoloji Bayi", {}, []),
        _rec("ABN-1", "abonelik", "ABN-1", {"durum": "aktif"},
             [{"rel": "musteri", "kind": "musteri", "id": "MUS-1"}, {"rel": "cpe", "kind": "modem", "id": "MDM-1"},
              {"rel": "satan_bayi", "kind": "bayi", "id": "BAY-1"}]),
        _rec("TKT-1", "ticket", "TKT-1", {"subject": "bağlantı koptu"},
             [{"rel": "subscription", "kind": "abonelik", "id": "ABN-1"}]),
    ])
    r = _ask(writer, "TKT-1 kaydındaki abonenin modemi hangi tarihte kuruldu?")
    assert _best_rels(r) == ["subscription", "cpe"], r.trace.paths.paths
    assert "2025-10-16" in r.context


def test_a_relation_all_of_whose_words_the_question_says_leads(writer) -> None:  # type: ignore[no-untyped-def]
    """"firmasının yetkilisinin cep telefonu": the company's "yetkili" (every word of it
    said), not its "muhasebe_yetkilisi" (the accounting contact: "muhasebe" unsaid).
    (Fails when a relation counts as asked by any one of its words: the two tie.)"""
    _write_lines(writer, [
        _rec("K-1", "contact", "Hakan Demir", {"mobilephone": "0532 611 48 90"}, []),
        _rec("K-2", "contact", "Gülşen Ersoy", {"mobilephone": "0530 218 64 37"}, []),
        _rec("C-1", "company", "Demir Lojistik", {"vergi_no": "2710458832"},
             [{"rel": "muhasebe_yetkilisi", "kind": "contact", "id": "K-2"},
              {"rel": "yetkili", "kind": "contact", "id": "K-1"}]),
        _rec("POL-1", "police", "POL-1 Trafik", {"brans": "Trafik"}, [{"rel": "sigortali", "kind": "company", "id": "C-1"}]),
    ])
    r = _ask(writer, "POL-1 poliçesinin sigortalı firmasının yetkilisinin cep telefonu ne?")
    by_rel = {p.hops[-1].rel: p.score for p in r.trace.paths.paths if len(p.hops) == 2}
    assert by_rel["yetkili"] > by_rel["muhasebe_yetkilisi"] + 0.02, r.trace.paths.paths


def test_a_path_going_on_along_the_relation_it_came_by_asks_nothing_more(writer) -> None:  # type: ignore[no-untyped-def]
    """"HSR-1 dosyasının poliçesini kestiğimiz sigorta şirketindeki acente kodumuz": the
    path ends at the insurer, not at another policy the insurer wrote (policy is asked, the
    agency the question also names is never reached so the walk goes on, and the hop back
    is "sigorta_sirketi" again). (Fails when a relation counts once per hop: the longer
    path is best, and the insurer, its prefix, is dropped.)"""
    _write_lines(writer, [
        _rec("SS-1", "sigorta_sirketi", "Allianz Sigorta", {"acente_kodu": "ALZ-220945"}, []),
        _rec("POL-1", "police", "POL-1 Kasko", {"brans": "Kasko"}, [{"rel": "sigorta_sirketi", "kind": "sigorta_sirketi", "id": "SS-1"}]),
        _rec("POL-2", "police", "POL-2 Konut", {"brans": "Konut"}, [{"rel": "sigorta_sirketi", "kind": "sigorta_sirketi", "id": "SS-1"}]),
        _rec("HSR-1", "hasar_dosyasi", "HSR-1 Cam hasarı", {"durum": "Kapandı"}, [{"rel": "police", "kind": "police", "id": "POL-1"}]),
    ])
    r = _ask(writer, "HSR-1 dosyasının poliçesini kestiğimiz sigorta şirketindeki acente kodumuz ne")
    assert _best_rels(r) == ["police", "sigorta_sirketi"], r.trace.paths.paths


def test_a_record_one_step_beyond_the_answer_node_holding_a_question_word_is_lifted(writer) -> None:  # type: ignore[no-untyped-def]
    """"MDM-1 modemini kuran teknisyenin net maaşı": the walk ends at the technician, whose
    own record links to his payroll record, which holds the salary: it is lifted as one
    step beyond the answer node. Another technician's payroll record is not, and one in a
    module the asker may not read is nowhere. (Fails without the "beyond" node facts.)"""
    _write_lines(writer, [
        _rec("PRS-1", "personel", "Ali Rıza Bozkurt", {"maas_net": "36.400 TL"}, []),
        _rec("PRS-2", "personel", "Hakan Yıldırım", {"maas_net": "41.200 TL"}, []),
        _rec("PRS-3", "personel", "Ferhat Demirci", {"maas_net": "52.000 TL"}, [], module="hr"),
        _rec("TKN-1", "teknisyen", "Ali Rıza Bozkurt", {"telefon": "0542 119 30 84"},
             [{"rel": "personel_kaydi", "kind": "personel", "id": "PRS-1"}]),
        _rec("TKN-2", "teknisyen", "Hakan Yıldırım", {"telefon": "0530 447 12 09"},
             [{"rel": "personel_kaydi", "kind": "personel", "id": "PRS-2"}]),
        _rec("TKN-3", "teknisyen", "Ferhat Demirci", {"telefon": "0532 000 11 22"},
             [{"rel": "personel_kaydi", "kind": "personel", "id": "PRS-3"}]),
        _rec("IE-1", "is_emri", "IE-1", {"tur": "kurulum"}, [{"rel": "teknisyen", "kind": "teknisyen", "id": "TKN-1"}]),
        _rec("IE-3", "is_emri", "IE-3", {"tur": "kurulum"}, [{"rel": "teknisyen", "kind": "teknisyen", "id": "TKN-3"}]),
        _rec("MDM-1", "modem", "MDM-1", {"model": "ZXHN H3601P"}, [{"rel": "installed_by_workorder", "kind": "is_emri", "id": "IE-1"}]),
        _rec("MDM-3", "modem", "MDM-3", {"model": "ZXHN H3601P"}, [{"rel": "installed_by_workorder", "kind": "is_emri", "id": "IE-3"}]),
    ])
    r = _ask(writer, "MDM-1 modemini kuran teknisyenin net maaşı ne kadar?")
    beyond = {f.text for f in r.trace.rank.facts if "beyond answer node" in f.why}
    assert any("36.400 TL" in t for t in beyond) and not any("41.200 TL" in t for t in beyond), beyond
    assert "36.400 TL" in r.context
    r = _ask(writer, "MDM-3 modemini kuran teknisyenin net maaşı ne kadar?")
    assert "52.000" not in r.to_json()


def test_a_period_after_the_question_moment_lifts_no_fact(writer) -> None:  # type: ignore[no-untyped-def]
    """"Haziran için kaç araç istiyor?" asked in May names next June: no fact was stated then
    yet, so the period scores none (read as last June, every fact of this year lost 0.4,
    and the correction naming June ranked below last year's records). (Fails when a
    period after `now` is scored.)"""
    from datetime import datetime, timezone

    may = datetime(2026, 5, 20, tzinfo=timezone.utc)
    _write_lines(writer, [
        _rec("FR-1", "firma", "Toros Turizm", {"vergi_no": "1112223334"}, [], date="2025-06-10"),
        {"type": "message", "workspace": "a", "module": "sales", "channel": "email", "id": "em-1", "thread": "t-1",
         "date": "2026-05-06T09:30:00+03:00", "from": "Hülya Tekin", "about": [{"kind": "firma", "id": "FR-1"}],
         "text": "Bir düzeltme: Haziran için 6 değil 8 araç olacak."},
    ])
    r = recall("Toros Turizm Haziran için kaç araç istiyor?", workspace="a", member="u1", now=may,
               store=writer.store, embedder=writer.embedder)
    assert r.trace.question.period is not None and r.trace.question.period[1].startswith("2026-06-01")
    assert all("period" not in f.parts for f in r.trace.rank.facts), [(f.text, f.parts) for f in r.trace.rank.facts]
    assert "8 araç" in r.context


def test_relations_saying_one_question_word_say_it_once(writer) -> None:  # type: ignore[no-untyped-def]
    """"DST-1 arızasındaki projede kullanılan inverterin tedarikçisi": the path through
    "uses_inverter" says "inverter" as well as "proje"; one through a purchase order's
    "for_project" says "proje" again, which counts once. (Fails when relations count by
    their own share alone: "for_project", all of it said, wins.)"""
    _write_lines(writer, [
        _rec("TED-1", "supplier", "Anadolu Solar Dağıtım", {"telefon": "0332 111 22 33"}, []),
        _rec("TED-2", "supplier", "Güneş Ekipman", {"telefon": "0216 574 33 20"}, []),
        _rec("INV-7", "product", "Huawei SUN2000-100KTL", {"guc": "100 kW"}, [{"rel": "supplied_by", "kind": "supplier", "id": "TED-2"}]),
        _rec("PRJ-1", "project", "Karatay GES", {"kurulu_guc": "1 MWp"}, [{"rel": "uses_inverter", "kind": "product", "id": "INV-7"}]),
        _rec("PO-1", "purchase_order", "PO-1", {"tutar": "84.000 TL"},
             [{"rel": "for_project", "kind": "project", "id": "PRJ-1"}, {"rel": "vendor", "kind": "supplier", "id": "TED-1"}]),
        _rec("DST-1", "ticket", "DST-1", {"subject": "inverter alarmı"}, [{"rel": "related_project", "kind": "project", "id": "PRJ-1"}]),
    ])
    r = _ask(writer, "DST-1 arızasındaki projede kullanılan inverterin tedarikçisinin telefon numarası nedir?")
    assert _best_rels(r) == ["related_project", "uses_inverter", "supplied_by"], \
        r.trace.paths.paths


def test_a_path_reaching_no_asked_kind_is_context_not_an_answer(writer) -> None:  # type: ignore[no-untyped-def]
    """"How far can we lower the discount for Toros Turizm's June offer?" asks for a quote;
    the store has none, and the best path (to the company's framework agreement) reaches no
    asked kind: its end weighs half an answer's, so the note that answers is not crowded
    out. (Fails when the best path's end weighs as an answer whatever it covers.)"""
    _write_lines(writer, [
        _rec("KA-7", "kurumsal_anlasma", "Toros Turizm 2026 çerçeve anlaşması", {"indirim_orani": "%18"}, []),
        _rec("FR-1", "firma", "Toros Turizm", {"vergi_no": "1112223334"},
             [{"rel": "anlasma", "kind": "kurumsal_anlasma", "id": "KA-7"}]),
    ])
    r = _ask(writer, "How far can we lower the discount for Toros Turizm's June offer?")
    assert "quote" in r.trace.paths.kinds_asked and not r.trace.paths.paths[0].covers, r.trace.paths
    agreement = [f for f in r.trace.rank.facts if f.text.startswith("kurumsal_anlasma KA-7")]
    assert agreement and all(f.parts["path"] <= 0.5 for f in agreement), [(f.text[:40], f.why, f.parts["path"]) for f in agreement]


@pytest.mark.parametrize("relation, role", [
    ("usta", "technician"), ("sorumlu_teknisyen", "technician"), ("temsilcisi", "account_manager"),
    ("account_manager", "account_manager"), ("bills", None),
])
def test_a_relation_name_gives_a_role(relation: str, role: str | None) -> None:
    from brain.read.paths import rel_roles

    assert (role in rel_roles(relation)) if role else not rel_roles(relation)


def test_the_vocabulary_is_kept_until_a_memory_is_added(writer) -> None:  # type: ignore[no-untyped-def]
    """A read asks for the relation names and record kinds of the asker's modules once, and
    reads them from the store's keeping while the workspace's memories end at the same id
    (sql/030); a record added since brings its new words. (Fails when a kept vocabulary
    outlives a write: the new relation is not walked to.)"""
    from brain.read import paths

    _write_lines(writer, [_rec("C-8", "company", "Kara Lojistik", {}, []),
                          _rec("P-8", "person", "Nermin Aksoy", {}, [{"rel": "works_at", "kind": "company", "id": "C-8"}])])
    asked: list[str] = []
    real = writer.store.kept

    def ask() -> None:
        _ask(writer, "Kara Lojistik'in hesap yöneticisi kim?")

    from brain import wire

    execute = wire.Reader.execute

    def counting(self, query, params=None, **kw):  # type: ignore[no-untyped-def]
        if query == paths.RELATION_NAMES_SQL:
            asked.append(query)
        return execute(self, query, params, **kw)

    wire.Reader.execute = counting  # type: ignore[method-assign]
    try:
        ask()
        ask()
        assert len(asked) == 1 and real, "asked once, then kept"
        _write_lines(writer, [_rec("E-8", "employee", "Deniz Kurt", {"cep": "+90 536 000 88 88"}, []),
                              _rec("C-8", "company", "Kara Lojistik", {},
                                   [{"rel": "hesap_yoneticisi", "kind": "employee", "id": "E-8"}])])
        r = _ask(writer, "Kara Lojistik'in hesap yöneticisi kim?")
        assert len(asked) == 2, "a memory was added: asked again"
        assert r.trace.paths.relations_asked == ("hesap_yoneticisi",)
        assert "+90 536 000 88 88" in r.context
    finally:
        wire.Reader.execute = execute  # type: ignore[method-assign]
