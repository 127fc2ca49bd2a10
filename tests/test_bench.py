"""The benchmark's scoring and sweep logic on the small demo data: who may see which
planted secret, leak detection, multi-hop evidence, and the report's one-line summary.
No database and no timing here."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bench import report, sweep
from bench.business import _shows_record, score_multi_hop, summarise_multi_hop
from fixtures.business import ACME, GLOBEX, NOW, generate, secrets
from fixtures.questions import multi_hop_questions

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def lines() -> list[dict[str, Any]]:
    return generate(seed=7, scale=1)


@pytest.fixture(scope="module")
def forb(lines: list[dict[str, Any]]) -> dict[str, sweep.Forbidden]:
    entries = secrets(lines)
    return {a.label: sweep.forbidden_for(lines, a, NOW, entries) for a in sweep.askers(lines)}


def _entry(lines: list[dict[str, Any]], **want: Any) -> dict[str, Any]:
    return next(e for e in secrets(lines) if all(e.get(k) == v for k, v in want.items()))


def test_grants_fail_closed(lines: list[dict[str, Any]]) -> None:
    assert sweep.grants(lines, ACME, "u-ayse") == {"sales", "support"}
    assert sweep.grants(lines, ACME, "u-murat") == {"finance", "sales"}
    assert sweep.grants(lines, ACME, "u-kaan") == frozenset()     # unknown role
    assert sweep.grants(lines, ACME, "u-irem") == frozenset()     # no roles
    assert sweep.grants(lines, ACME, None) is None                 # no person: every module's shared facts


def test_the_five_askers(lines: list[dict[str, Any]]) -> None:
    got = {a.label: (a.workspace, a.member) for a in sweep.askers(lines)}
    assert got == {"sales": (ACME, "u-ayse"), "finance": (ACME, "u-murat"), "unresolved": (ACME, "u-kaan"),
                   "no_person": (ACME, None), "other_workspace": (GLOBEX, "g-ayse")}


@pytest.mark.parametrize("asker, where, forbidden", [
    ("sales", dict(workspace=ACME, kind="invoice", field="tutar"), True),        # finance module
    ("sales", dict(workspace=ACME, kind="employment", field="maas"), True),      # hr module
    ("sales", dict(workspace=ACME, kind="order", field="tutar"), False),         # sales module
    ("finance", dict(workspace=ACME, kind="invoice", field="tutar"), False),
    ("finance", dict(workspace=ACME, kind="employment", field="maas"), True),
    ("finance", dict(workspace=ACME, kind="account", field="iban"), False),
    ("unresolved", dict(workspace=ACME, kind="order", field="tutar"), True),     # no module at all
    ("no_person", dict(workspace=ACME, kind="employment", field="maas"), False),  # shared fact of any module
    ("no_person", dict(workspace=ACME, field="note:floor"), True),               # someone's private note
    ("other_workspace", dict(workspace=ACME, kind="company", field="vergi_no"), True),
    ("other_workspace", dict(workspace=GLOBEX, kind="order", field="tutar"), False),
])
def test_secret_visibility(lines: list[dict[str, Any]], forb: dict[str, sweep.Forbidden], asker: str,
                           where: dict[str, Any], forbidden: bool) -> None:
    value = _entry(lines, **where)["value"]
    assert (value in forb[asker].values) is forbidden


def test_private_note_is_its_owners(lines: list[dict[str, Any]]) -> None:
    note = _entry(lines, workspace=ACME, field="note:floor")
    owner = sweep.Asker("owner", ACME, note["owner"])
    assert note["value"] not in sweep.forbidden_for(lines, owner, NOW).values


def test_expired_note_is_forbidden_to_everyone(lines: list[dict[str, Any]]) -> None:
    gone = next(e for e in secrets(lines) if e["workspace"] == ACME and e["expires"] and e["expires"][:10] < NOW
                and e["privacy"] == "shared")
    for a in sweep.askers(lines):
        assert gone["value"] in sweep.forbidden_for(lines, a, NOW).values


def test_fixture_forbidden_strings_are_forbidden(lines: list[dict[str, Any]], forb: dict[str, sweep.Forbidden]) -> None:
    """Every `forbidden` string of the committed questions is forbidden to that asker here too."""
    qs = [json.loads(x) for x in (ROOT / "fixtures" / "questions.jsonl").read_text(encoding="utf-8").splitlines() if x]
    entries = secrets(lines)
    for q in qs:
        if not q["forbidden"]:
            continue
        mine = sweep.forbidden_for(lines, sweep.Asker("q", q["workspace"], q["as"]), q["now"], entries)
        for value in q["forbidden"]:
            if len(value) >= sweep.MIN_LEN:
                assert value in mine.values, (q["id"], value)


def test_leak_detection(lines: list[dict[str, Any]], forb: dict[str, sweep.Forbidden]) -> None:
    f = forb["sales"]
    salary = _entry(lines, workspace=ACME, kind="employment", field="maas")["value"]
    assert f.find(f"maaş: {salary} brüt") == [salary]
    assert f.find("nothing to see here") == []
    # case-insensitive with Turkish casing
    code = next(v for v in forb["no_person"].values if v.startswith(("INDIRIM", "KAPI", "PROMO", "KARGO")))
    for shown in (code.lower(), code.lower().replace("i", "ı"), code.title()):
        assert forb["no_person"].find(f"kod: {shown}") == [code], shown
    # echoing the question back is no leak
    assert f.find(f"Q: {salary}?", exempt=f"{salary}?") == []


def test_path_result_records_each_leak(lines: list[dict[str, Any]], forb: dict[str, sweep.Forbidden]) -> None:
    r = sweep.PathResult("brain.recall")
    f = forb["other_workspace"]
    value = next(iter(f.values))
    r.add(f.asker, "q1", [value], f, "context")
    r.add(f.asker, "q2", [], f, "context")
    d = r.as_dict()
    assert d["checked"] == 2 and d["by_asker"] == {"other_workspace": 2}
    assert d["leaks"][0]["value"] == value and d["leaks"][0]["question"] == "q1"


def test_search_terms_cover_both_workspaces(lines: list[dict[str, Any]]) -> None:
    terms = sweep.search_terms(lines, 4)
    assert len(terms) == 4
    names = {x.get("name"): x["workspace"] for x in lines if x["type"] == "record"}
    ids = {x["id"]: x["workspace"] for x in lines if x["type"] == "record"}
    assert {names.get(t) or ids.get(t) for t in terms} == {ACME, GLOBEX}


def test_multi_hop_questions(lines: list[dict[str, Any]]) -> None:
    qs = multi_hop_questions(lines, n=60)
    assert {q["type"] for q in qs} == {"direct", "two_hop", "three_hop"}
    assert len({q["id"] for q in qs}) == len(qs)
    by_key = {(x["kind"], x["id"]) for x in lines if x["type"] == "record"}
    for q in qs:
        assert q["answers"] and q["evidence"]
        assert len(q["evidence"]) == {"direct": 1, "two_hop": 2, "three_hop": 4}[q["type"]]
        assert all(tuple(e) in by_key for e in q["evidence"])
    assert multi_hop_questions(lines, n=60) == qs   # deterministic


def _fact(text: str, origin: str = "record") -> SimpleNamespace:
    return SimpleNamespace(text=text, origin=origin)


def test_evidence_needs_every_hop() -> None:
    facts = [_fact("order SO-1001 (SO-1001): ... | placed_by → company C-12"), _fact("company C-1: x")]
    assert _shows_record(facts, "order", "SO-1001")
    assert not _shows_record(facts, "order", "SO-100")        # no prefix matches
    assert not _shows_record(facts, "company", "C-12")        # named in a link is not its record
    assert not _shows_record([_fact("order SO-1001 came", origin="message")], "order", "SO-1001")
    q = {"id": "x", "type": "two_hop", "lang": "tr", "answers": ["Ağaoğlu"],
         "evidence": [["order", "SO-1001"], ["company", "C-12"]]}
    trace = SimpleNamespace(embed_ms=1.0, paths=SimpleNamespace(nodes={}, paths=()),
                            compact=SimpleNamespace(lines=()))
    r = SimpleNamespace(context="... AĞAOĞLU ...", facts=facts, tokens=10, trace=trace, config="vector")
    got = score_multi_hop(q, r, 5.0)
    assert got["answered"] and not got["evidence"] and got["missing_evidence"] == ["company C-12"]
    r2 = SimpleNamespace(**{**vars(r), "facts": facts + [_fact("company C-12 (Ağaoğlu Yapı): ...")]})
    assert score_multi_hop(q, r2, 5.0)["evidence"]
    s = summarise_multi_hop([got, score_multi_hop(q, r2, 5.0)])
    assert s["answered"] == 100.0 and s["evidence"] == 50.0


def test_bench_line_format() -> None:
    res = {"questions": {"headline": {"answered": 96.667, "vector_answered": 61.0, "ms_p50": 41.4},
                         "runs": {"hybrid": {"outcomes": [1, 2, 3], "leaks": []},
                                  "vector": {"outcomes": [1, 2, 3], "leaks": [("q", "x")]}}},
           "multi_hop": {"summary": {"hybrid": {"answered": 100.0}, "vector": {"answered": 38.25}}},
           "sweep": {"paths": [{"checked": 10, "leaks": []}, {"checked": 5, "leaks": [{}, {}]}]}}
    line = report.bench_line(res)
    assert line == "bench: answered 96.7% (vector 61.0%), multi-hop 100.0% (vector 38.2%), leaks 3 in 21 answers, p50 41 ms"
    assert report.LINE.match(line)
    assert report.LINE.match(report.bench_line({}))   # nothing ran: still one well-formed line


def test_profile_accounts_for_every_step_and_statement(demo_store, embedder) -> None:  # type: ignore[no-untyped-def]
    from pathlib import Path

    from bench.profile import STEPS, profile, questions_from

    qs = questions_from(Path(__file__).resolve().parent.parent / "fixtures" / "questions.jsonl",
                        split="holdout", multi_hop=0, scale=0)[:3]
    p = profile(demo_store, embedder, qs)
    assert p["questions"] == 3 and set(p["steps_p50_ms"]) == set(STEPS)
    sqls = " ".join(s["sql"] for s in p["statements"])
    # every recall binds and searches (the fused statement begins with its keyword query's terms)
    assert "brain_bind" in sqls and "WITH terms AS" in sqls
    assert p["read_path_p50_ms"] > 0 and len(p["slowest"]) == 3
    # one label per statement, whatever its values (the binding's are parameters)
    binds = [s for s in p["statements"] if "brain_bind" in s["sql"]]
    assert len(binds) == 1 and binds[0]["per_question"] == 1.0 and "acme" not in binds[0]["sql"]
    if os.path.exists(f"/proc/{os.getpid()}/schedstat"):   # the server's CPU, where Linux tells it
        # a recall's statements are all pipelined (brain.wire): their CPU is counted together
        assert binds[0]["server_cpu_ms_per_question"] is None
        assert p["pipeline_server_cpu_ms_per_question"] > 0


def test_compare_summary_takes_medians_and_both_ratios() -> None:
    from bench.compare import summarise

    s = summarise({"before": {"total": [30.0, 40.0, 50.0], "embed": [20.0, 20.0, 20.0],
                              "read": [10.0, 20.0, 30.0], "solo_embed": [25.0, 25.0, 25.0]}})
    b = s["before"]
    assert (b["total"], b["read"], b["n"]) == (40.0, 20.0, 3)
    assert b["ratio_in_recall_embed"] == 2.0 and b["ratio_solo_embed"] == 1.6


def test_compare_times_two_checkouts_in_turns(demo_store) -> None:  # type: ignore[no-untyped-def]
    """End to end: this checkout against itself on the demo store, two passes each."""
    import os
    from pathlib import Path

    from bench.compare import compare, questions

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "DATABASE_URL": demo_store.admin_uri}
    asked = questions(questions_file=root / "fixtures" / "questions.jsonl", limit=2)
    s = compare(root, root, asked, rounds=2, env=env)
    for side in ("before", "after"):
        assert s[side]["n"] == 4 and s[side]["read"] > 0   # 2 questions, 2 passes and s[side]["embed"] > 0
        assert s[side]["total"] >= s[side]["read"]
        # the CPU pass: this process always; the test server runs here, so its backend too
        assert s[side]["cpu_client"] > 0 and s[side]["cpu_server"] >= 0


def test_contexts_differences_name_what_moved() -> None:
    from bench.contexts import differences, report

    def row(q: str, context: str = "c", facts: list | None = None) -> dict:  # type: ignore[type-arg]
        return {"workspace": "w", "as": "u", "now": "2026-11-20", "question": q, "context": context,
                "facts": facts if facts is not None else [[1, False, None, 0.5]]}

    old = [row("a"), row("b"), row("c"), row("gone")]
    new = [row("a"), row("b", context="other"), row("c", facts=[[1, True, 2, 0.5]]), row("new")]
    d = differences(old, new)
    assert [k[3] for k in d["context"]] == ["b"] and [k[3] for k in d["facts"]] == ["c"]
    assert [k[3] for k in d["only_before"]] == ["gone"] and [k[3] for k in d["only_after"]] == ["new"]
    assert not any(differences(old, old).values())
    assert report(d, 4).startswith("4 questions: 1 contexts differ, 1 fact orders differ")


def test_contexts_written_down_read_back_the_same(demo_store, embedder, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Two dumps of the same answers compare equal; each line holds the context and the
    ranked facts as the trace has them."""
    from pathlib import Path

    from bench.compare import questions
    from bench.contexts import answers, differences, read, write

    root = Path(__file__).resolve().parent.parent
    asked = questions(questions_file=root / "fixtures" / "questions.jsonl", limit=2)
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert write(first, answers(demo_store, embedder, asked)) == 2
    write(second, answers(demo_store, embedder, asked))
    rows = read(first)
    assert [r["question"] for r in rows] == [q["question"] for q in asked]
    assert all(r["context"] and r["facts"] and len(r["facts"][0]) == 4 for r in rows)
    assert not any(differences(rows, read(second)).values())
