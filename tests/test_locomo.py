"""The LoCoMo benchmark's loader and scorer on a tiny invented conversation of the same
shape (the real file is evaluation-only data and never enters the repository)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from bench import locomo

SHAPED = [{
    "sample_id": "conv-t1",
    "conversation": {
        "speaker_a": "Ada", "speaker_b": "Bora",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ada", "dia_id": "D1:1", "text": "Hi Bora! I started pottery classes last week."},
            {"speaker": "Bora", "dia_id": "D1:2", "text": "Nice! I adopted a grey cat named Pixel.",
             "img_url": ["http://example.invalid/cat.jpg"], "blip_caption": "a photo of a grey cat on a sofa"},
            {"speaker": "Ada", "dia_id": "D1:3", "text": "Pixel looks sweet. My bowl cracked in the kiln."},
            {"speaker": "Ada", "dia_id": "D1:3", "text": "a repeated id is written once"},
        ],
        "session_2_date_time": "10:05 am on 2 June, 2023",
        "session_2": [
            {"speaker": "Bora", "dia_id": "D2:1", "text": "I ran my first marathon in Izmir on Sunday."},
            {"speaker": "Ada", "dia_id": "D2:2", "text": "Congratulations! My second bowl survived the kiln."},
        ],
    },
    "qa": [
        {"question": "What is the name of Bora's cat?", "answer": "Pixel", "evidence": ["D1:2"], "category": 4},
        {"question": "Where did Bora run a marathon?", "answer": "Izmir", "evidence": ["D:2:1"], "category": 4},
        {"question": "What happened to Ada's bowls?", "answer": "cracked, then one survived",
         "evidence": ["D1:3; D2:02"], "category": 1},
        {"question": "When did Ada start pottery?", "answer": "late April 2023", "evidence": [], "category": 2},
        {"question": "What is Bora's dog called?", "adversarial_answer": "Pixel", "evidence": ["D1:2"],
         "category": 5},
    ],
}]

LAST_LINE = re.compile(r"locomo: any@10 \d+\.\d% all@10 \d+\.\d% tokens \d+ p50 \d+\.\d ms embed \d+\.\d ms")


@pytest.fixture
def shaped_file(tmp_path: Path) -> Path:
    path = tmp_path / "shaped.json"
    path.write_text(json.dumps(SHAPED), encoding="utf-8")
    return path


def test_dates_and_evidence_are_read() -> None:
    assert locomo.parse_session_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    assert locomo.parse_session_date("12:19 am on 4 January, 2024") == datetime(2024, 1, 4, 0, 19,
                                                                                tzinfo=timezone.utc)
    assert locomo.parse_session_date("12:05 pm on 4 January, 2024").hour == 12
    assert locomo.normalise_evidence(["D8:6; D9:17"]) == ["D8:6", "D9:17"]
    assert locomo.normalise_evidence(["D:11:26", "D30:05"]) == ["D11:26", "D30:5"]
    assert locomo.normalise_evidence(["D"]) == ["D"]       # names no turn: kept, never matches
    assert locomo.normalise_evidence([]) == []


def test_conversation_lines(shaped_file: Path) -> None:
    (conv,) = locomo.read_file(shaped_file)
    messages = [ln for ln in conv.lines if ln["type"] == "message"]
    assert [m["id"] for m in messages] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    assert conv.skipped["duplicate_turns"] == 1 and conv.skipped["category_5"] == 1
    assert messages[1]["text"].endswith(" [image: a photo of a grey cat on a sofa]")
    assert messages[0]["date"] == "2023-05-08T13:56:00+00:00" and messages[3]["date"] == "2023-06-02T10:05:00+00:00"
    assert messages[0]["from"] == "Ada" and messages[3]["thread"] == "session_2"
    assert [q["category"] for q in conv.questions] == [4, 4, 1, 2]
    assert [q["gold"] for q in conv.questions] == [["D1:2"], ["D2:1"], ["D1:3", "D2:2"], []]


def test_scoring() -> None:
    q = {"id": "x", "conversation": "c", "category": 1, "gold": ["D1:3", "D2:2"]}
    assert locomo.score_one(q, ["D1:3", "D9:9"], 10, 1.0, 0.5).any_hit
    assert not locomo.score_one(q, ["D1:3", "D9:9"], 10, 1.0, 0.5).all_hit
    assert locomo.score_one(q, ["D2:2", "D1:3"], 10, 1.0, 0.5).all_hit
    empty = {**q, "gold": []}
    assert not locomo.score_one(empty, ["D1:3"], 10, 1.0, 0.5).any_hit   # no evidence: a miss
    assert not locomo.score_one(empty, ["D1:3"], 10, 1.0, 0.5).all_hit


def test_loads_once_and_scores(fresh_store, shaped_file: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from brain.embed import get_embedder

    embedder = get_embedder("hash:384")
    out = tmp_path / "out"
    assert locomo.main([str(shaped_file), "--out", str(out)], store=fresh_store, embedder=embedder) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert LAST_LINE.fullmatch(printed[-1]), printed[-1]

    ids = locomo.dia_map(fresh_store, "locomo-conv-t1")
    assert sorted(ids.values()) == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]   # one memory per dia_id
    res = json.loads((out / "locomo.json").read_text(encoding="utf-8"))
    assert (out / "locomo.md").exists()
    assert res["questions"] == 4 and res["no_evidence"] == 1
    assert res["held_out"] == ["conv-t1"] and res["tuned"] == []
    for mode in ("hybrid", "vector", "keyword"):
        answers = res["answers"][mode]
        assert len(answers) == 4
        assert all(len(a["returned"]) <= 10 for a in answers)
        # five turns in all: every turn comes back, so only the evidence-less question misses
        assert [a["any_hit"] for a in answers] == [True, True, True, False], mode
    assert res["answers"]["hybrid"][2]["gold"] == ["D1:3", "D2:2"]

    # a rerun finds the workspace and writes nothing again
    conv = locomo.read_file(shaped_file)[0]
    assert locomo.ensure_loaded(fresh_store, embedder, conv) == {"loaded": False}
    assert len(locomo.dia_map(fresh_store, "locomo-conv-t1")) == 5


def test_turns_beside_a_strong_hit_are_lifted(fresh_store) -> None:  # type: ignore[no-untyped-def]
    from datetime import timedelta

    from brain.embed import get_embedder
    from brain.read import VECTOR_ONLY, recall

    embedder = get_embedder("hash:384")
    conv = locomo.conversation(SHAPED[0])
    locomo.ensure_loaded(fresh_store, embedder, conv)
    dia = {v: k for k, v in locomo.dia_map(fresh_store, conv.workspace).items()}
    ask = dict(workspace=conv.workspace, member=locomo.READER, now=conv.last + timedelta(days=1),
               store=fresh_store, embedder=embedder)
    r = recall("Did Bora adopt a grey cat?", **ask)
    facts = {f.memory_id: f for f in r.trace.rank.facts}
    # the reply right after the matching turn is lifted, and says beside which turn
    reply = facts[dia["D1:3"]]
    assert reply.parts.get("beside", 0) > 0 and f"beside [{dia['D1:2']}]" in reply.why
    # a neighbour is a turn of the same session: the next session's turns are never beside it
    assert not any(f"beside [{dia['D1:2']}]" in facts[dia[d]].why for d in ("D2:1", "D2:2") if dia[d] in facts)
    # the plain baselines stay plain
    plain = recall("Did Bora adopt a grey cat?", config=VECTOR_ONLY, **ask)
    assert not any("beside" in f.parts for f in plain.trace.rank.facts)


def test_a_workspace_without_relations_walks_without_reading_edges(fresh_store) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import replace
    from datetime import timedelta

    import psycopg

    from brain.embed import get_embedder
    from brain.read import HYBRID, recall
    from brain.read.anchors import find_anchors
    from brain.read.paths import walk
    from brain.read.question import analyse

    embedder = get_embedder("hash:384")
    conv = locomo.conversation(SHAPED[0])
    locomo.ensure_loaded(fresh_store, embedder, conv)
    now = conv.last + timedelta(days=1)
    question = "What did Ada say about the bowl Bora saw?"
    r = recall(question, workspace=conv.workspace, member=locomo.READER, now=now, store=fresh_store,
               embedder=embedder)
    assert r.trace.anchors.anchors, "the speakers' names anchor the question"
    q = analyse(question, now)
    with fresh_store.bound(conv.workspace, member=locomo.READER, now=now, readonly=True) as (conn, binding):
        assert binding.relations is False   # dialogue turns only: no edge
        anchors = find_anchors(conn, q, workspace=conv.workspace, cfg=HYBRID)
        asked = walk(conn, q, anchors, r.trace.recall, workspace=conv.workspace, cfg=HYBRID, relations=True)
        executed = []
        original = psycopg.Connection.execute

        def counting(self, query, params=None, **kw):  # type: ignore[no-untyped-def]
            executed.append(query)
            return original(self, query, params, **kw)

        psycopg.Connection.execute = counting  # type: ignore[method-assign]
        try:
            skipped = walk(conn, q, anchors, r.trace.recall, workspace=conv.workspace, cfg=HYBRID, relations=False)
        finally:
            psycopg.Connection.execute = original  # type: ignore[method-assign]
    assert executed == []
    assert replace(skipped, ms=0.0) == replace(asked, ms=0.0)   # the same levels, nodes and reason
    with fresh_store.bound(conv.workspace, member=locomo.READER, now=now) as (_, write_binding):
        assert write_binding.relations is True   # only a read's binding asks
