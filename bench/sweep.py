"""The permission sweep: every question asked by members with fewer rights, through every
member-facing read path, and every output searched for planted secrets they may not see.

Who may see a secret is worked out here from the fixture lines alone (workspace, module
grants, privacy and owner, expiry), independently of the SQL rule under test, the way
tests/test_fixtures.py does. A leak is a secret the asker may not see anywhere in what a
path returned: the context and the JSON trace (`brain.recall`), the batch CLI's output
lines, and everything the explorer's Ask and Graph pages render (text, tables, graph
HTML, the downloaded trace).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from brain import text as tx

ROOT = Path(__file__).resolve().parent.parent
PATHS = ("brain.recall", "recall --batch", "explorer Ask", "explorer Graph")
MIN_LEN = 4   # shorter values (a day number) are too common to be called a leak


def norm(text: str) -> str:
    """Lower-cased with Turkish casing, then dotless ı taken as i: the most generous
    comparison, so a secret is found however a page or a context cased it."""
    return tx.tr_lower(text).replace("ı", "i")


# ----------------------------------------------------------------------------- who sees what
def grants(lines: list[dict[str, Any]], ws: str, member: str | None) -> frozenset[str] | None:
    """Modules `member` reads in `ws` (None: a caller with no person, who reads every
    module's shared facts); unknown roles or no roles read no module (fail closed)."""
    if member is None:
        return None
    roles = {x["id"]: x["modules"] for x in lines if x["type"] == "role" and x["workspace"] == ws}
    row = next((x for x in lines if x["type"] == "member" and x["workspace"] == ws and x["id"] == member), None)
    if row is None or not row["roles"] or any(r not in roles for r in row["roles"]):
        return frozenset()
    return frozenset(m for r in row["roles"] for m in roles[r])


def may_read(item: dict[str, Any], *, ws: str, member: str | None, mods: frozenset[str] | None,
             now: str) -> bool:
    """The generous reading: an owner reads their own private fact even without its module
    (so a value counted as forbidden is forbidden under any reading of the rule)."""
    if item.get("workspace") != ws:
        return False
    if item.get("expires") and str(item["expires"])[:10] < now[:10]:
        return False
    module_ok = mods is None or "*" in mods or (item.get("module") or "general") in mods
    if (item.get("privacy") or "shared") != "shared":
        return member is not None and item.get("owner") == member
    return module_ok


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


@dataclass(frozen=True)
class Asker:
    label: str              # sales | finance | unresolved | no_person | other_workspace
    workspace: str
    member: str | None


def askers(lines: list[dict[str, Any]]) -> list[Asker]:
    """The five askers of the sweep, found by their roles in the fixture lines."""
    wss = [x["id"] for x in lines if x["type"] == "workspace"]
    first, other = wss[0], wss[-1]
    members = [x for x in lines if x["type"] == "member"]
    roles = {(x["workspace"], x["id"]) for x in lines if x["type"] == "role"}

    def having(ws: str, want: list[str]) -> str:
        return next(m["id"] for m in members if m["workspace"] == ws and m["roles"] == want)

    unresolved = next(m["id"] for m in members if m["workspace"] == first and m["roles"]
                      and any((first, r) not in roles for r in m["roles"]))
    return [Asker("sales", first, having(first, ["sales"])), Asker("finance", first, having(first, ["finance"])),
            Asker("unresolved", first, unresolved), Asker("no_person", first, None),
            Asker("other_workspace", other, having(other, ["sales"]))]


@dataclass
class Forbidden:
    """The secrets one asker may not see, ready for fast searching."""

    asker: Asker
    values: dict[str, dict[str, Any]]            # value -> one secret entry holding it
    lowered: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.lowered = sorted((norm(v), v) for v in self.values)

    def find(self, text: str, *, exempt: str = "") -> list[str]:
        """Forbidden values in `text` (case-insensitive, Turkish casing), minus any the
        question itself contains (echoing the question back is no leak)."""
        low = norm(text)
        ex = norm(exempt)
        return [v for lv, v in self.lowered if lv in low and lv not in ex]


def forbidden_for(lines: list[dict[str, Any]], asker: Asker, now: str,
                  secret_entries: list[dict[str, Any]] | None = None) -> Forbidden:
    """Planted secrets `asker` may not read, minus values a line they may read also holds
    (a phone number also written in a readable message is no secret to them)."""
    from fixtures.business import secrets

    entries = secret_entries if secret_entries is not None else secrets(lines)
    ws, member = asker.workspace, asker.member
    mods = grants(lines, ws, member)
    readable = norm("\n".join(
        s for x in lines if x["type"] in ("record", "message", "note")
        and may_read(x, ws=ws, member=member, mods=mods, now=now) for s in _strings(x)))
    hidden: dict[str, dict[str, Any]] = {}
    for e in entries:
        v = e["value"]
        if len(v) < MIN_LEN or may_read(e, ws=ws, member=member, mods=mods, now=now):
            continue
        hidden.setdefault(v, e)
    # a value held by a readable secret entry elsewhere is not forbidden either
    for e in entries:
        if e["value"] in hidden and may_read(e, ws=ws, member=member, mods=mods, now=now):
            hidden.pop(e["value"])
    return Forbidden(asker, {v: e for v, e in hidden.items() if norm(v) not in readable})


# ----------------------------------------------------------------------------- the sweep
@dataclass
class PathResult:
    path: str
    checked: int = 0
    errors: list[str] = field(default_factory=list)
    leaks: list[dict[str, Any]] = field(default_factory=list)
    by_asker: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    skipped: str | None = None

    def add(self, asker: Asker, qid: str, found: list[str], forb: Forbidden, where: str) -> None:
        self.checked += 1
        self.by_asker[asker.label] = self.by_asker.get(asker.label, 0) + 1
        for v in found:
            e = forb.values[v]
            self.leaks.append({"path": self.path, "asker": asker.label, "member": asker.member,
                               "workspace": asker.workspace, "question": qid, "value": v, "where": where,
                               "secret": {k: e.get(k) for k in ("workspace", "module", "privacy", "owner",
                                                                 "kind", "id", "field")}})

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "checked": self.checked, "leaks": self.leaks, "by_asker": self.by_asker,
                "errors": self.errors[:20], "n_errors": len(self.errors), "seconds": round(self.seconds, 1),
                "skipped": self.skipped}


def _progress(name: str, total: int) -> Callable[[], None]:
    t0, done = time.perf_counter(), [0]

    def tick() -> None:
        done[0] += 1
        if done[0] == total or done[0] % 25 == 0:
            print(f"  {name}: {done[0]}/{total} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    return tick


def sweep_recall(questions: list[dict[str, Any]], forb: dict[str, Forbidden], *, store: Any,
                 embedder: Any) -> PathResult:
    """`brain.recall` for every asker and question: the context and the whole JSON trace."""
    from brain.format import parse_now
    from brain.read import recall

    res = PathResult("brain.recall")
    t0 = time.perf_counter()
    tick = _progress("sweep brain.recall", len(questions) * len(forb))
    for f in forb.values():
        a = f.asker
        for q in questions:
            now = parse_now(q["now"]) if q.get("now") else None
            try:
                r = recall(q["question"], workspace=a.workspace, member=a.member, now=now, store=store,
                           embedder=embedder)
            except Exception as exc:  # noqa: BLE001 - a failing path is reported, not fatal
                res.errors.append(f"{a.label} {q['id']}: {exc!r}")
                continue
            res.add(a, q["id"], f.find(r.context + "\n" + r.to_json(), exempt=q["question"]), f,
                    "context/trace")
            tick()
    res.seconds = time.perf_counter() - t0
    return res


@dataclass
class Batch:
    """A running `python -m brain recall --batch` subprocess and what it was asked."""

    proc: Any
    index: dict[str, tuple[Forbidden, dict[str, Any]]]
    tmp: Any
    started: float


def start_batch(questions: list[dict[str, Any]], forb: dict[str, Forbidden], *, data_dir: str | None) -> Batch:
    """Start the batch CLI over every asker and question (one file, one subprocess); it
    runs beside whatever the benchmark does next."""
    index: dict[str, tuple[Forbidden, dict[str, Any]]] = {}
    tmp = tempfile.TemporaryDirectory()
    path = Path(tmp.name) / "sweep.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for f in forb.values():
            for q in questions:
                qid = f"{q['id']}@{f.asker.label}"
                index[qid] = (f, q)
                fh.write(json.dumps({"id": qid, "workspace": f.asker.workspace, "as": f.asker.member,
                                     "now": q.get("now"), "question": q["question"]}, ensure_ascii=False) + "\n")
    env = dict(os.environ)
    if data_dir:
        env["BRAIN_DATA_DIR"] = str(data_dir)
    print(f"  sweep recall --batch: {len(index)} questions in one subprocess", file=sys.stderr, flush=True)
    # Output to files, not pipes: nobody reads a pipe until the end, and a full pipe (64 kB,
    # a dozen answers) would stop the subprocess until then instead of running beside.
    out = (Path(tmp.name) / "out.jsonl").open("w", encoding="utf-8")
    err = (Path(tmp.name) / "err.txt").open("w", encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "brain", "recall", "--batch", str(path)], cwd=ROOT, env=env,
                            stdout=out, stderr=err)
    out.close()
    err.close()
    return Batch(proc, index, tmp, time.perf_counter())


def finish_batch(batch: Batch, timeout: float = 7200) -> PathResult:
    """Wait for the batch CLI and search every output line (the whole line) for leaks."""
    res = PathResult("recall --batch")
    batch.proc.wait(timeout=timeout)
    stdout = (Path(batch.tmp.name) / "out.jsonl").read_text(encoding="utf-8")
    stderr = (Path(batch.tmp.name) / "err.txt").read_text(encoding="utf-8")
    seen = set()
    for raw in stdout.splitlines():
        if not raw.strip():
            continue
        out = json.loads(raw)
        f, q = batch.index[out["id"]]
        seen.add(out["id"])
        res.add(f.asker, q["id"], f.find(json.dumps(out, ensure_ascii=False), exempt=q["question"]), f,
                "batch line")
    missing = sorted(set(batch.index) - seen)
    if missing:
        res.errors.append(f"{len(missing)} questions without an output line, e.g. {missing[:3]}")
    if batch.proc.returncode != 0:
        res.errors.append(f"exit {batch.proc.returncode}: {stderr.strip()[-400:]}")
    batch.tmp.cleanup()
    res.seconds = time.perf_counter() - batch.started
    return res


def sweep_batch(questions: list[dict[str, Any]], forb: dict[str, Forbidden], *, data_dir: str | None) -> PathResult:
    """`python -m brain recall --batch FILE` as a subprocess: one file, every asker."""
    return finish_batch(start_batch(questions, forb, data_dir=data_dir))


def _no_context_warning(record: Any) -> bool:
    return "missing ScriptRunContext" not in record.getMessage()


def _apptest_ready() -> str | None:
    try:
        import logging

        import streamlit.testing.v1  # noqa: F401

        import explorer.testing  # noqa: F401
    except Exception as exc:  # noqa: BLE001
        return f"explorer not usable for AppTest: {exc!r}"
    # AppTest runs the pages outside `streamlit run`, where Streamlit warns, again and
    # again, that this thread has no script context: a screenful of lines saying nothing
    # about the sweep. (A filter, since Streamlit sets its loggers' levels anew.)
    quiet = logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context")
    if _no_context_warning not in quiet.filters:
        quiet.addFilter(_no_context_warning)
    if not (ROOT / "app.py").exists():
        return "no app.py"
    return None


def _page_output(at: Any, downloads: list[bytes]) -> tuple[list[str], str | None]:
    """Everything a rendered page shows (text, tables, graph HTML) and its downloads, or
    the exception it raised."""
    from explorer.testing import rendered_strings

    if at.exception:
        return [], str([e.value for e in at.exception][:1])
    return rendered_strings(at) + [d.decode("utf-8", "replace") for d in downloads], None


def sweep_ask_page(questions: list[dict[str, Any]], forb: dict[str, Forbidden]) -> PathResult:
    """The explorer's Ask page rendered with AppTest for every asker: all rendered strings
    (text, code, tables, graph HTML) and the bytes of its downloads (the JSON trace)."""
    res = PathResult("explorer Ask")
    why = _apptest_ready()
    if why:
        res.skipped = why
        return res
    from streamlit.testing.v1 import AppTest

    from explorer.testing import captured_downloads

    t0 = time.perf_counter()
    tick = _progress("sweep explorer Ask", len(questions) * len(forb))
    for f in forb.values():
        a = f.asker
        for q in questions:
            try:
                with captured_downloads() as downloads:
                    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
                    at.query_params.update({"workspace": a.workspace, "as": a.member or "",
                                            "now": q.get("now") or "", "q": q["question"]})
                    at.run()
                strings, error = _page_output(at, downloads)
                if error:
                    res.errors.append(f"{a.label} {q['id']}: {error}")
                    continue
            except Exception as exc:  # noqa: BLE001
                res.errors.append(f"{a.label} {q['id']}: {exc!r}")
                continue
            if not any('"trace"' in s for s in strings):
                res.errors.append(f"{a.label} {q['id']}: no downloaded trace captured")
            res.add(a, q["id"], f.find("\n".join(strings), exempt=q["question"]), f, "Ask page")
            tick()
    res.seconds = time.perf_counter() - t0
    return res


def search_terms(lines: list[dict[str, Any]], n: int) -> list[str]:
    """Names and codes of records that hold secrets, spread over both workspaces."""
    from fixtures.business import secrets

    held = {(s["workspace"], s["kind"], s["id"]) for s in secrets(lines) if s["kind"]}
    by_ws: dict[str, list[str]] = {}
    for x in lines:
        if x["type"] == "record" and (x["workspace"], x["kind"], x["id"]) in held:
            terms = by_ws.setdefault(x["workspace"], [])
            for t in (x.get("name") or "", x["id"]):
                if t and t not in terms:
                    terms.append(t)
    out: list[str] = []
    for terms in by_ws.values():
        step = max(1, len(terms) // max(1, n // max(1, len(by_ws))))
        out += terms[::step][: max(1, n // max(1, len(by_ws)))]
    return out[:n]


def sweep_graph_page(terms: list[str], forb: dict[str, Forbidden], *, now: str) -> PathResult:
    """The explorer's Graph page: search an entity, draw its neighbourhood two hops out."""
    res = PathResult("explorer Graph")
    why = _apptest_ready()
    if why:
        res.skipped = why
        return res
    from streamlit.testing.v1 import AppTest

    from explorer.state import StateKeys as K
    from explorer.testing import captured_downloads

    t0 = time.perf_counter()
    tick = _progress("sweep explorer Graph", len(terms) * len(forb))
    for f in forb.values():
        a = f.asker
        try:
            at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
            at.query_params.update({"workspace": a.workspace, "as": a.member or "", "now": now})
            at.run()
            at.switch_page("pages/graph.py").run()
        except Exception as exc:  # noqa: BLE001
            res.errors.append(f"{a.label}: {exc!r}")
            continue
        for term in terms:
            try:
                with captured_downloads() as downloads:
                    at.text_input(key=K.W_GRAPH_SEARCH).input(term)
                    at.run()
                    depth = [w for w in at.slider if w.key == K.W_GRAPH_DEPTH]
                    if depth and depth[0].value != 2:
                        depth[0].set_value(2)
                        at.run()
                strings, error = _page_output(at, downloads)
                if error:
                    res.errors.append(f"{a.label} {term}: {error}")
                    continue
            except Exception as exc:  # noqa: BLE001
                res.errors.append(f"{a.label} {term}: {exc!r}")
                continue
            res.add(a, f"graph:{term}", f.find("\n".join(strings), exempt=term), f, "Graph page")
            tick()
    res.seconds = time.perf_counter() - t0
    return res


def control(lines: list[dict[str, Any]], forb: dict[str, Forbidden], *, store: Any, embedder: Any,
            now: str) -> dict[str, Any]:
    """The detector must see a leak when there is one: the owner asks for invoice amounts
    and an IBAN, and the answer is checked against the sales member's forbidden values."""
    from brain.format import parse_now
    from brain.read import recall

    sales = forb["sales"]
    ws = sales.asker.workspace
    owner = next(x["id"] for x in lines if x["type"] == "member" and x["workspace"] == ws and x["roles"] == ["owner"])
    inv = next(e for e in sales.values.values() if e["workspace"] == ws and e["kind"] == "invoice")
    question = f"{inv['id']} faturasının tutarı ne kadar?"
    r = recall(question, workspace=ws, member=owner, now=parse_now(now), store=store, embedder=embedder)
    found = sales.find(r.context + "\n" + r.to_json(), exempt=question)
    return {"asked_as": owner, "checked_against": "sales", "question": question, "detected": len(found),
            "ok": bool(found)}


def prepare(lines: list[dict[str, Any]], now: str) -> tuple[list[dict[str, Any]], dict[str, Forbidden]]:
    """The planted secrets and, per asker, those they may not see."""
    from fixtures.business import secrets

    entries = secrets(lines)
    forb = {a.label: forbidden_for(lines, a, now, entries) for a in askers(lines)}
    print(f"sweep: {len(entries)} planted secrets; forbidden per asker: "
          + ", ".join(f"{k} {len(v.values)}" for k, v in forb.items()), file=sys.stderr, flush=True)
    return entries, forb


def run_sweep(lines: list[dict[str, Any]], questions: list[dict[str, Any]], *, store: Any, embedder: Any,
              data_dir: str | None, now: str, app_questions: int, graph_terms: int,
              prepared: tuple[list[dict[str, Any]], dict[str, Forbidden]] | None = None,
              batch: Batch | None = None) -> dict[str, Any]:
    """The whole sweep; `app_questions` per asker on the Ask page (0: every question),
    `graph_terms` searches per asker on the Graph page. A batch subprocess started
    earlier (`start_batch`) is collected at the end."""
    entries, forb = prepared or prepare(lines, now)
    if batch is None:
        batch = start_batch(questions, forb, data_dir=data_dir)
    results = [sweep_recall(questions, forb, store=store, embedder=embedder)]
    step = max(1, len(questions) // max(1, app_questions))
    results.append(sweep_ask_page(questions[::step][:app_questions] if app_questions > 0 else questions, forb))
    results.append(sweep_graph_page(search_terms(lines, graph_terms), forb, now=now))
    results.insert(1, finish_batch(batch))
    check = control(lines, forb, store=store, embedder=embedder, now=now)
    return {"control": check, "secrets": len(entries), "secret_values": len({e["value"] for e in entries}),
            "askers": [{"label": f.asker.label, "workspace": f.asker.workspace, "member": f.asker.member,
                        "forbidden": len(f.values)} for f in forb.values()],
            "questions": len(questions), "paths": [r.as_dict() for r in results],
            "checked": sum(r.checked for r in results), "leaks": sum(len(r.leaks) for r in results)}
