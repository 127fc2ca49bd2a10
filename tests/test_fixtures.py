"""The fixture generator: deterministic FORMAT.md lines, the awkward deliveries a real
sync produces, and questions whose answers the asker may read and whose forbidden
strings the asker may not. No database involved."""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest

from fixtures import NOW, TYPES, generate, generate_questions, secrets, to_jsonl
from fixtures.__main__ import main as cli
from fixtures.turkish import lower, suffix, tl, tl_kurus, tr_date

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
MEMORY_TYPES = ("record", "message", "note")
PRIVACY = ("shared", "private", "personal")
KEYS = {
    "workspace": ({"type", "id", "org", "name"}, set()),
    "role": ({"type", "workspace", "id", "modules"}, set()),
    "member": ({"type", "workspace", "id", "name", "roles"}, set()),
    "record": ({"type", "workspace", "app", "module", "kind", "id", "date", "name", "fields",
                "links", "privacy", "owner"}, {"text", "sync_id"}),
    "message": ({"type", "workspace", "module", "channel", "id", "thread", "date", "from", "about",
                 "text", "privacy", "owner", "source"}, set()),
    "note": ({"type", "workspace", "module", "privacy", "owner", "date", "text", "about", "source"},
             {"expires"}),
}


@pytest.fixture(scope="module")
def lines() -> list[dict[str, Any]]:
    return generate()


@pytest.fixture(scope="module")
def questions(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return generate_questions(lines)


# ------------------------------------------------------------------ helpers
def _iso(value: Any, *, with_time: bool = False) -> bool:
    if not isinstance(value, str):
        return False
    try:
        if len(value) == 10 and not with_time:
            date.fromisoformat(value)
            return True
        return datetime.fromisoformat(value).tzinfo is not None
    except ValueError:
        return False


def _ref(value: Any) -> bool:
    return (isinstance(value, dict) and set(value) == {"kind", "id"}
            and all(isinstance(v, str) and v for v in value.values()))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _text(line: dict[str, Any]) -> str:
    return "\n".join(_strings({k: v for k, v in line.items() if k != "type"}))


def _grants(lines: list[dict[str, Any]], ws: str, member: str | None) -> set[str] | None:
    if member is None:
        return None   # a caller with no person reads every shared fact
    roles = {(x["workspace"], x["id"]): x["modules"] for x in lines if x["type"] == "role"}
    found = [x for x in lines if x["type"] == "member" and x["workspace"] == ws and x["id"] == member]
    assert found, f"unknown member {member} in {ws}"
    names = found[0]["roles"]
    if not names or any((ws, r) not in roles for r in names):
        return set()   # fail closed
    return {m for r in names for m in roles[(ws, r)]}


def _visible(line: dict[str, Any], ws: str, member: str | None, grants: set[str] | None,
             now: str, *, strict: bool) -> bool:
    """strict: the narrow reading (owners of private facts also need the module), used for
    answers; otherwise the generous one, used for forbidden strings."""
    if line["type"] not in MEMORY_TYPES or line["workspace"] != ws:
        return False
    if line.get("expires") and line["expires"][:10] < now[:10]:
        return False
    module_ok = grants is None or "*" in grants or line["module"] in grants
    if line.get("privacy", "shared") != "shared":
        return member is not None and line["owner"] == member and (module_ok or not strict)
    return module_ok


def _blob(lines: list[dict[str, Any]], q: dict[str, Any], *, strict: bool) -> str:
    grants = _grants(lines, q["workspace"], q["as"])
    return "\n".join(_text(x) for x in lines if _visible(x, q["workspace"], q["as"], grants, q["now"], strict=strict))


# ------------------------------------------------------------------ data
def test_deterministic() -> None:
    assert to_jsonl(generate(seed=7)) == to_jsonl(generate(seed=7))
    assert to_jsonl(generate(seed=7)) != to_jsonl(generate(seed=8))
    a, b = generate_questions(generate(seed=3), seed=3), generate_questions(generate(seed=3), seed=3)
    assert a == b
    assert a != generate_questions(generate(seed=4), seed=4)


def test_lines_follow_format(lines: list[dict[str, Any]]) -> None:
    workspaces: set[str] = set()
    members: set[tuple[str, str]] = set()
    seen_memory = False
    for n, line in enumerate(lines):
        where = f"line {n + 1}: {json.dumps(line, ensure_ascii=False)[:120]}"
        required, optional = KEYS[line["type"]]
        assert required <= set(line), f"{where} misses {required - set(line)}"
        assert set(line) <= required | optional, f"{where} has unknown keys {set(line) - required - optional}"
        kind = line["type"]
        if kind == "workspace":
            assert not seen_memory and all(isinstance(line[k], str) and line[k] for k in ("id", "org", "name"))
            workspaces.add(line["id"])
            continue
        assert line["workspace"] in workspaces, where
        if kind == "role":
            assert not seen_memory and line["modules"] and all(isinstance(m, str) for m in line["modules"]), where
        elif kind == "member":
            assert not seen_memory and isinstance(line["roles"], list), where
            members.add((line["workspace"], line["id"]))
        else:
            seen_memory = True
            assert line["privacy"] in PRIVACY, where
            if line["privacy"] == "shared":
                assert line["owner"] is None, where
            else:
                assert (line["workspace"], line["owner"]) in members, where
            assert isinstance(line["module"], str) and line["module"], where
            assert isinstance(line["text"], str) and line["text"].strip(), where
        if kind == "record":
            assert _iso(line["date"]), where
            assert all(isinstance(line[k], str) and line[k] for k in ("app", "kind", "id", "name", "sync_id")), where
            assert isinstance(line["fields"], dict) and line["fields"], where
            assert all(isinstance(k, str) and isinstance(v, str) for k, v in line["fields"].items()), where
            for link in line["links"]:
                assert set(link) == {"rel", "kind", "id"} and all(isinstance(v, str) and v for v in link.values()), where
        elif kind == "message":
            assert _iso(line["date"], with_time=True), where
            assert _ref(line["from"]) or (isinstance(line["from"], str) and line["from"]), where
            assert line["channel"] in ("whatsapp", "email"), where
            assert all(_ref(a) for a in line["about"]) and isinstance(line["source"], str), where
        elif kind == "note":
            assert _iso(line["date"]) and all(_ref(a) for a in line["about"]), where
            assert "expires" not in line or _iso(line["expires"]), where
            assert isinstance(line["source"], str) and line["source"], where


def test_lines_parse_with_the_brain_loader(lines: list[dict[str, Any]]) -> None:
    fmt = pytest.importorskip("brain.format")
    for line in lines:
        fmt.parse_line(line)


def test_business_shape(lines: list[dict[str, Any]]) -> None:
    counts = Counter(x["type"] for x in lines)
    memories = sum(counts[t] for t in MEMORY_TYPES)
    assert 150 <= memories <= 250, counts
    members = {(x["workspace"], x["id"]): x for x in lines if x["type"] == "member"}
    roles = {(x["workspace"], x["id"]) for x in lines if x["type"] == "role"}
    acme = [m for (ws, _), m in members.items() if ws == "acme-tr"]
    assert any(not m["roles"] for m in acme), "a member with no roles"
    assert any(m["roles"] and any(("acme-tr", r) not in roles for r in m["roles"]) for m in acme), \
        "a member whose role does not exist"
    kinds = Counter((x["workspace"], x["module"], x["kind"]) for x in lines if x["type"] == "record")
    for module, kind in (("sales", "company"), ("sales", "person"), ("sales", "product"), ("sales", "supplier"),
                         ("sales", "order"), ("finance", "invoice"), ("finance", "payment"),
                         ("finance", "account"), ("support", "ticket"), ("support", "complaint"),
                         ("support", "person"), ("hr", "employment")):
        assert kinds[("acme-tr", module, kind)] and kinds[("globex-tr", module, kind)], (module, kind)
    names = [x["name"] for x in lines if x["type"] in ("record", "member")]
    assert all(ch in lower(" ".join(names)) for ch in "ğışçöü") and "İ" in " ".join(names)
    prose = [x for x in lines if x["type"] in ("message", "note")]
    english = [x for x in prose if any(w in f" {x['text']} " for w in (" the ", " Hi", " we ", " with ", " Met "))]
    assert 0.10 <= len(english) / len(prose) <= 0.35, (len(english), len(prose))
    assert all(x["date"] <= NOW for x in lines if x["type"] in MEMORY_TYPES)
    notes = [x for x in lines if x["type"] == "note"]
    assert any(x["privacy"] == "personal" for x in notes) and any(x["privacy"] == "private" for x in notes)
    assert any(x.get("expires", "9999") < NOW for x in notes) and any(x.get("expires", "") > NOW for x in notes)


def test_planted_deliveries(lines: list[dict[str, Any]]) -> None:
    records = [(n, x) for n, x in enumerate(lines) if x["type"] == "record"]
    by_sync = Counter(x["sync_id"] for _, x in records)
    dupes = [s for s, c in by_sync.items() if c > 1]
    assert dupes, "a retried delivery with the same sync_id"
    for s in dupes:
        same = [x for _, x in records if x["sync_id"] == s]
        assert all(x == same[0] for x in same), "a retried delivery is byte-identical"

    def content(x: dict[str, Any]) -> str:
        return json.dumps({k: v for k, v in x.items() if k != "sync_id"}, sort_keys=True, ensure_ascii=False)

    by_content: dict[str, set[str]] = defaultdict(set)
    for _, x in records:
        by_content[content(x)].add(x["sync_id"])
    assert any(len(s) > 1 for s in by_content.values()), "same content re-sent with a new sync_id"

    versions: dict[tuple[str, ...], list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    for n, x in records:
        versions[(x["workspace"], x["app"], x["kind"], x["id"])].append((n, x))
    newer = older = 0
    for vs in versions.values():
        for (_, a), (_, b) in zip(vs, vs[1:]):
            if a["fields"] != b["fields"]:
                newer += b["date"] > a["date"]
                older += b["date"] < a["date"]
    assert newer >= 1, "a re-sync with a newer date and changed fields"
    assert older >= 1, "a re-sync older than the current version, delivered later"

    first = {(x["workspace"], x["kind"], x["id"]): n for n, x in reversed(records)}
    late = [(x["id"], link["id"]) for n, x in records for link in x["links"]
            if first.get((x["workspace"], link["kind"], link["id"]), -1) > n]
    assert late, "a link whose target record arrives later (stub, then filled)"


def test_secrets_are_planted_where_they_say(lines: list[dict[str, Any]]) -> None:
    found = secrets(lines)
    fields = Counter(s["field"] for s in found)
    for field in ("tutar", "iban", "kredi_limiti", "maas", "vergi_no", "telefon", "note:floor",
                  "note:discipline", "note:personal", "note:promo"):
        assert fields[field], field
    texts: dict[str, list[str]] = defaultdict(list)
    for x in lines:
        if x["type"] in MEMORY_TYPES:
            texts[x["workspace"]].append(_text(x))
    for s in found:
        assert any(s["value"] in t for t in texts[s["workspace"]]), s
        assert set(s) >= {"value", "workspace", "module", "privacy", "owner"}
    assert {s["workspace"] for s in found} == {"acme-tr", "globex-tr"}


def test_scale_grows_linearly_and_fast() -> None:
    small = sum(1 for x in generate(scale=1) if x["type"] in MEMORY_TYPES)
    start = time.perf_counter()
    big_lines = generate(scale=20)
    generate_questions(big_lines)
    elapsed = time.perf_counter() - start
    big = sum(1 for x in big_lines if x["type"] in MEMORY_TYPES)
    assert 15 <= big / small <= 25, (small, big)
    assert elapsed < 5, elapsed


# ------------------------------------------------------------------ questions
def test_question_shape(lines: list[dict[str, Any]], questions: list[dict[str, Any]]) -> None:
    members = {(x["workspace"], x["id"]) for x in lines if x["type"] == "member"}
    ids = [q["id"] for q in questions]
    assert len(ids) == len(set(ids))
    for q in questions:
        assert set(q) - {"earlier"} == {"id", "workspace", "as", "now", "lang", "type", "split", "question",
                                         "answers", "forbidden"}, q
        assert q["type"] in TYPES and q["split"] in ("tune", "holdout") and q["lang"] in ("tr", "en")
        assert q["as"] is None or (q["workspace"], q["as"]) in members, q
        assert q["now"] == NOW and isinstance(q["question"], str) and q["question"].endswith("?")
        assert all(isinstance(a, str) and a for a in q["answers"] + q["forbidden"])
    per = Counter((q["type"], q["split"]) for q in questions)
    for qtype in TYPES:
        for split in ("tune", "holdout"):
            assert per[(qtype, split)] >= 4, (qtype, split, per[(qtype, split)])
    langs = Counter(q["lang"] for q in questions)
    assert 0.55 <= langs["tr"] / len(questions) <= 0.85, langs


def _answers_and_leaks(lines: list[dict[str, Any]], questions: list[dict[str, Any]]) -> None:
    blobs: dict[tuple[Any, ...], str] = {}
    for q in questions:
        key = (q["workspace"], q["as"], q["now"])
        if key + (True,) not in blobs:
            blobs[key + (True,)] = lower(_blob(lines, q, strict=True))
            blobs[key + (False,)] = _blob(lines, q, strict=False)
        readable, could_see = blobs[key + (True,)], blobs[key + (False,)]
        for answer in q["answers"]:
            assert lower(answer) in readable, f"{q['id']}: answer {answer!r} not readable by {q['as']}"
        for bad in q["forbidden"]:
            assert bad not in could_see, f"{q['id']}: forbidden {bad!r} is visible to {q['as']}"
            assert bad not in q["question"] and bad not in q["answers"], q["id"]


def test_answers_readable_and_forbidden_unseen(lines: list[dict[str, Any]], questions: list[dict[str, Any]]) -> None:
    _answers_and_leaks(lines, questions)


def test_answers_readable_and_forbidden_unseen_at_scale() -> None:
    big = generate(scale=20, seed=11)
    _answers_and_leaks(big, generate_questions(big, seed=11))


def test_question_types_mean_what_they_say(lines: list[dict[str, Any]], questions: list[dict[str, Any]]) -> None:
    by_ws: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for x in lines:
        if x["type"] in MEMORY_TYPES:
            by_ws[x["workspace"]].append(x)
    other = {"acme-tr": "globex-tr", "globex-tr": "acme-tr"}
    for q in questions:
        if q["type"] in ("permission", "expired") and not q["answers"]:
            assert q["forbidden"], q["id"]
        if q["type"] == "expired" and not q["answers"]:
            notes = [x for x in by_ws[q["workspace"]] if x["type"] == "note" and q["forbidden"][0] in x["text"]]
            assert notes and all(x["expires"] < q["now"] for x in notes), q["id"]
        if q["type"] == "cross_workspace":
            assert any(q["forbidden"][0] in _text(x) for x in by_ws[other[q["workspace"]]]), q["id"]
        if q["type"] in ("latest_record", "latest_conversation"):
            assert q.get("earlier"), q["id"]
            for new in q["answers"]:
                for old in q["earlier"]:
                    assert new not in old and old not in new, q["id"]
            holder = "record" if q["type"] == "latest_record" else "message"
            holders = [x for x in by_ws[q["workspace"]] if x["type"] == holder]
            if holder == "message":   # the conversation about the order the question names
                order = next(w for w in q["question"].replace("?", " ").split() if w.startswith("SO-"))
                holders = [x for x in holders if order in x["text"]]
            new_dates = [x["date"] for x in holders if any(a in _text(x) for a in q["answers"])]
            old_dates = [x["date"] for x in holders if any(e in _text(x) for e in q["earlier"])]
            assert new_dates and old_dates, q["id"]
            if q["type"] == "latest_conversation":
                assert max(new_dates) > max(old_dates), q["id"]
            else:   # the current version is the one with the latest date, whatever the delivery order
                assert max(new_dates) > max(old_dates) or max(new_dates) >= min(old_dates), q["id"]
    perm = [q for q in questions if q["type"] == "permission"]
    assert any(q["as"] is None for q in perm) and any(not q["answers"] for q in perm)
    pairs = defaultdict(list)
    for q in perm:
        pairs[(q["workspace"], q["question"])].append(bool(q["answers"]))
    assert sum(1 for v in pairs.values() if set(v) == {True, False}) >= 6


def test_committed_files_are_current(lines: list[dict[str, Any]], questions: list[dict[str, Any]]) -> None:
    hint = "regenerate with: python -m fixtures demo fixtures/demo.jsonl && python -m fixtures questions fixtures/questions.jsonl"
    assert (FIXTURES / "demo.jsonl").read_text(encoding="utf-8") == to_jsonl(lines), hint
    assert (FIXTURES / "questions.jsonl").read_text(encoding="utf-8") == to_jsonl(questions), hint


def test_cli_writes_splits(tmp_path: Path, questions: list[dict[str, Any]]) -> None:
    out = tmp_path / "tune.jsonl"
    assert cli(["questions", str(out), "--split", "tune"]) == 0
    written = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert written == [q for q in questions if q["split"] == "tune"]
    assert cli(["demo", str(tmp_path / "d.jsonl"), "--scale", "2", "--seed", "5"]) == 0
    assert (tmp_path / "d.jsonl").read_text(encoding="utf-8") == to_jsonl(generate(scale=2, seed=5))


# ------------------------------------------------------------------ Turkish helpers
@pytest.mark.parametrize("name, case, expected", [
    ("Ağaoğlu Yapı", "gen", "Ağaoğlu Yapı'nın"),
    ("Ağaoğlu Yapı Market", "gen", "Ağaoğlu Yapı Market'in"),
    ("Ağaoğlu", "gen", "Ağaoğlu'nun"),
    ("Yıldız Tekstil", "dat", "Yıldız Tekstil'e"),
    ("Koç Plastik", "abl", "Koç Plastik'ten"),
    ("Kasım", "dat", "Kasım'a"),
    ("Ekim", "loc", "Ekim'de"),
    ("Şubat", "loc", "Şubat'ta"),
    ("Uludağ Enerji", "acc", "Uludağ Enerji'yi"),
    ("Burak Şahin", "dat", "Burak Şahin'e"),
    ("Ilgaz Gıda", "gen", "Ilgaz Gıda'nın"),
    ("Türk Ütü", "gen", "Türk Ütü'nün"),
])
def test_suffix(name: str, case: str, expected: str) -> None:
    assert suffix(name, case) == expected


def test_text_helpers() -> None:
    assert suffix("Ağaoğlu", "gen", apostrophe=False).lower() == "ağaoğlunun"
    assert lower("İSTANBUL IĞDIR") == "istanbul ığdır"
    assert tr_date("2026-07-10") == "10 Temmuz 2026"
    assert tl(45317) == "45.317 TL" and tl(1250000) == "1.250.000 TL"
    assert tl_kurus(5438040) == "54.380,40 TL"
