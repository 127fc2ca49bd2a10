"""LoCoMo retrieval: `python -m brain bench locomo PATH`.

LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents",
ACL 2024; CC BY-NC 4.0, evaluation only: the file is read by path at run time, never
copied here). Each conversation goes into its own workspace through the product's writer,
one raw memory per dialogue turn (no extraction, no model); each question of categories
1-4 is asked through the real read path, plain vector top-10 and keyword top-10, and the
gold evidence turns are looked for among the 10 turns each returns.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
DEFAULT_DATA_DIR = ROOT / ".brain-locomo"
PAPER = ('Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents", '
         "ACL 2024 (data: github.com/snap-research/LoCoMo, CC BY-NC 4.0)")
# The conversations the read path was tuned on; every other one is reported as held out
# unless --holdout names the held-out ones explicitly.
TUNED_ON = ("conv-26", "conv-30", "conv-41")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
K = 10
READER = "reader"
MODULE = "chat"

_DATE_RE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]\.?m\.?)?\s*(?:on\s+)?(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", re.I)
_MONTHS = {m: i for i, m in enumerate(
    "january february march april may june july august september october november december".split(), start=1)}
_EVIDENCE_RE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


# --------------------------------------------------------------------------- reading the file

def parse_session_date(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' → 2023-05-08T13:56:00 (UTC)."""
    m = _DATE_RE.search(text or "")
    if not m:
        raise ValueError(f"unreadable session date {text!r}")
    hour, minute, ampm, day, month, year = m.groups()
    h = int(hour) % 12 if ampm else int(hour)
    if ampm and ampm.lower().startswith("p"):
        h += 12
    mon = _MONTHS.get(month.lower()) or next(v for k, v in _MONTHS.items() if k.startswith(month.lower()[:3]))
    return datetime(int(year), mon, int(day), h, int(minute), tzinfo=timezone.utc)


def normalise_evidence(items: Iterable[Any]) -> list[str]:
    """Gold dia_ids as written, repaired where the intent is clear: 'D8:6; D9:17' is two
    ids, 'D:11:26' is D11:26, 'D30:05' is D30:5. A string naming no turn ('D') is kept
    as written: it can never match, so all@10 misses it."""
    out: list[str] = []
    for item in items or []:
        raw = str(item)
        parts = [p.strip() for p in re.split(r"[;,]", raw) if p.strip()]
        for part in parts:
            m = _EVIDENCE_RE.fullmatch(part)
            out.append(f"D{int(m.group(1))}:{int(m.group(2))}" if m else part)
    return list(dict.fromkeys(out))


def workspace_of(sample_id: str) -> str:
    return f"locomo-{sample_id}"


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    workspace: str
    lines: list[dict[str, Any]]         # FORMAT.md lines, in order
    dia_ids: frozenset[str]
    last: datetime                      # the last session's date
    questions: list[dict[str, Any]]     # categories 1-4, evidence normalised
    skipped: dict[str, int] = field(default_factory=dict)


def _sessions(conv: dict[str, Any]) -> list[tuple[int, list[dict[str, Any]], datetime]]:
    out = []
    for key, turns in conv.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(turns, list):
            n = int(m.group(1))
            out.append((n, turns, parse_session_date(conv.get(f"session_{n}_date_time", ""))))
    return sorted(out, key=lambda s: s[0])


def conversation(obj: dict[str, Any]) -> Conversation:
    """One LoCoMo conversation object as FORMAT.md lines and scored questions."""
    sid = str(obj["sample_id"])
    ws = workspace_of(sid)
    lines: list[dict[str, Any]] = [
        {"type": "workspace", "id": ws, "org": "locomo", "name": f"LoCoMo {sid}"},
        {"type": "role", "workspace": ws, "id": "owner", "modules": ["*"]},
        {"type": "member", "workspace": ws, "id": READER, "name": "Reader", "roles": ["owner"]},
    ]
    seen: set[str] = set()
    duplicates = 0
    sessions = _sessions(obj["conversation"])
    for n, turns, when in sessions:
        for turn in turns:
            dia = str(turn.get("dia_id", "")).strip()
            if not dia or dia in seen:   # a repeated id would be written as an edit of the first
                duplicates += 1
                continue
            seen.add(dia)
            text = str(turn.get("text", "")).strip()
            if turn.get("blip_caption"):
                text = f"{text} [image: {str(turn['blip_caption']).strip()}]".strip()
            lines.append({"type": "message", "workspace": ws, "module": MODULE, "channel": "chat",
                          "id": dia, "thread": f"session_{n}", "date": when.isoformat(),
                          "from": str(turn.get("speaker", "")).strip() or "unknown",
                          "text": text or "(empty)", "source": f"session {n}"})
    questions = []
    skipped = {"category_5": 0, "no_evidence": 0}
    for i, qa in enumerate(obj.get("qa", [])):
        cat = int(qa.get("category", 0))
        if cat not in CATEGORIES:
            skipped["category_5" if cat == 5 else f"category_{cat}"] = skipped.get(
                "category_5" if cat == 5 else f"category_{cat}", 0) + 1
            continue
        gold = normalise_evidence(qa.get("evidence") or [])
        if not gold:
            skipped["no_evidence"] += 1
        questions.append({"id": f"{sid}#{i}", "conversation": sid, "question": str(qa["question"]),
                          "category": cat, "evidence_raw": list(qa.get("evidence") or []), "gold": gold})
    skipped["duplicate_turns"] = duplicates
    last = max((s[2] for s in sessions), default=datetime(1970, 1, 1, tzinfo=timezone.utc))
    return Conversation(sid, ws, lines, frozenset(seen), last, questions, skipped)


def read_file(path: Path, only: list[str] | None = None) -> list[Conversation]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    convs = [conversation(obj) for obj in data]
    if only:
        known = {c.sample_id for c in convs}
        unknown = [s for s in only if s not in known]
        if unknown:
            raise SystemExit(f"no conversation {', '.join(unknown)} in {path} (has {', '.join(sorted(known))})")
        convs = [c for c in convs if c.sample_id in only]
    return convs


# --------------------------------------------------------------------------- loading

def ensure_loaded(store: Any, embedder: Any, conv: Conversation) -> dict[str, Any]:
    """Write the conversation through the product's writer, unless its workspace exists."""
    from brain.load import load_lines
    from brain.write import Writer

    if any(w["workspace_id"] == conv.workspace for w in store.list_workspaces()):
        return {"loaded": False}
    report = load_lines(Writer(store, embedder), enumerate(conv.lines, start=1))
    if report.rejected:
        print(f"warning: {conv.sample_id}: {len(report.rejected)} lines rejected "
              f"(first: line {report.rejected[0].line}: {report.rejected[0].reason})", file=sys.stderr)
    return {"loaded": True, "lines": report.lines, "memories": report.memories,
            "rejected": len(report.rejected), "seconds": round(report.seconds, 2),
            "embed_seconds": round(report.embed_seconds, 2)}


def dia_map(store: Any, workspace: str) -> dict[int, str]:
    """memory_id → dia_id, from the id the writer kept with each message."""
    with store.bound(workspace, readonly=True) as (conn, _):
        rows = conn.execute("SELECT memory_id, attrs->>'id' FROM memories"
                            " WHERE workspace_id = %s AND origin = 'message'", (workspace,)).fetchall()
    return {int(mid): str(dia) for mid, dia in rows if dia}


# --------------------------------------------------------------------------- asking and scoring

@dataclass(frozen=True)
class Answer:
    id: str
    conversation: str
    category: int
    gold: tuple[str, ...]
    returned: tuple[str, ...]
    any_hit: bool
    all_hit: bool
    tokens: int
    ms: float
    embed_ms: float


def score_one(q: dict[str, Any], returned: list[str], tokens: int, ms: float, embed_ms: float) -> Answer:
    gold = tuple(q["gold"])
    got = set(returned)
    any_hit = bool(gold) and any(g in got for g in gold)
    all_hit = bool(gold) and all(g in got for g in gold)
    return Answer(q["id"], q["conversation"], int(q["category"]), gold, tuple(returned), any_hit, all_hit,
                  tokens, round(ms, 3), round(embed_ms, 3))


def configs() -> dict[str, Any]:
    """The real read path giving K turns, and the two plain top-K baselines."""
    from brain.read import HYBRID, KEYWORD_ONLY, VECTOR_ONLY

    return {"hybrid": replace(HYBRID, name="hybrid-10", max_facts=K, budget=100_000),
            "vector": replace(VECTOR_ONLY, top_k=K), "keyword": replace(KEYWORD_ONLY, top_k=K)}


def ask(conv: Conversation, *, config: Any, store: Any, embedder: Any, ids: dict[int, str],
        member: str | None = READER, on_each: Callable[[], None] | None = None) -> list[Answer]:
    """Every question of one conversation through one configuration."""
    from brain.read import recall
    from brain.tokens import count_tokens

    now = conv.last + timedelta(days=1)
    out = []
    for q in conv.questions:
        t0 = time.perf_counter()
        r = recall(q["question"], workspace=conv.workspace, member=member, now=now, config=config,
                   store=store, embedder=embedder)
        ms = (time.perf_counter() - t0) * 1000
        lines = [ln for ln in r.trace.compact.lines if ln.memory_id is not None][:K]
        context = "\n".join(ln.text for ln in lines)
        returned = [ids.get(int(ln.memory_id), f"#{ln.memory_id}") for ln in lines]  # type: ignore[arg-type]
        out.append(score_one(q, returned, count_tokens(context), ms, r.trace.embed_ms))
        if on_each is not None:
            on_each()
    return out


def _pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return float(s[min(len(s) - 1, max(0, int(round(p / 100 * (len(s) - 1)))))])


def summarise(answers: list[Answer]) -> dict[str, Any]:
    n = len(answers)
    if not n:
        return {"n": 0}
    return {"n": n,
            "any": round(100.0 * sum(a.any_hit for a in answers) / n, 1),
            "all": round(100.0 * sum(a.all_hit for a in answers) / n, 1),
            "tokens_p50": float(statistics.median(a.tokens for a in answers)),
            "ms_p50": round(statistics.median(a.ms for a in answers), 2),
            "ms_p95": round(_pct([a.ms for a in answers], 95), 2),
            "embed_ms_p50": round(statistics.median(a.embed_ms for a in answers), 2)}


def breakdown(answers: list[Answer], held_out: set[str]) -> dict[str, Any]:
    by_cat = {f"{c} {name}": summarise([a for a in answers if a.category == c]) for c, name in CATEGORIES.items()}
    convs = sorted({a.conversation for a in answers}, key=lambda s: (len(s), s))
    return {"all": summarise(answers),
            "tuned": summarise([a for a in answers if a.conversation not in held_out]),
            "held_out": summarise([a for a in answers if a.conversation in held_out]),
            "by_category": by_cat,
            "by_category_held_out": {f"{c} {name}": summarise([a for a in answers if a.category == c
                                                                and a.conversation in held_out])
                                     for c, name in CATEGORIES.items()},
            "by_conversation": {c: summarise([a for a in answers if a.conversation == c]) for c in convs}}


def last_line(s: dict[str, Any]) -> str:
    return (f"locomo: any@10 {s['any']:.1f}% all@10 {s['all']:.1f}% tokens {s['tokens_p50']:.0f} "
            f"p50 {s['ms_p50']:.1f} ms embed {s['embed_ms_p50']:.1f} ms")


def _row(name: str, s: dict[str, Any]) -> str:
    if not s.get("n"):
        return f"| {name} | 0 | | | | | |"
    return (f"| {name} | {s['n']} | {s['any']:.1f}% | {s['all']:.1f}% | {s['tokens_p50']:.0f} | "
            f"{s['ms_p50']:.1f} / {s['ms_p95']:.1f} | {s['embed_ms_p50']:.1f} |")


def markdown(res: dict[str, Any]) -> str:
    runs = res["runs"]
    head = ["| | n | any@10 | all@10 | tokens p50 | ms p50 / p95 | embed ms p50 |", "|---|---|---|---|---|---|---|"]
    lines = [f"# LoCoMo retrieval: {', '.join(res['conversations'])}", "",
             f"Data: {PAPER}. Read from `{res['path']}` at run time; nothing of it is kept in the repository.",
             "", f"Tuned on: {', '.join(res['tuned']) or 'none'}. Held out (not tuned on): "
             f"{', '.join(res['held_out']) or 'none'}.", "",
             f"Questions of categories 1-4: {res['questions']} ({res['no_evidence']} without evidence, "
             "counted as misses). Unit: one dialogue turn; top 10 turns per question; context = the "
             "10 context lines as the read path renders them (turn with speaker, session and date), "
             "one per line, counted in cl100k_base tokens. Latency: one recall call, warm, query "
             "embedding (uncached) included; the embedding's own time beside it.", "",
             f"Evidence strings: {res['evidence_rule']}", "", "## Overall", "", *head]
    for split in ("held_out", "tuned", "all"):
        for name in ("hybrid", "vector", "keyword"):
            lines.append(_row(f"{split.replace('_', '-')} · {name}", runs[name][split]))
    for key, title in (("by_category", "By category (all conversations)"),
                       ("by_category_held_out", "By category (held-out conversations)"),
                       ("by_conversation", "By conversation")):
        lines += ["", f"## {title}", "", *head]
        for group in runs["hybrid"][key]:
            for name in ("hybrid", "vector", "keyword"):
                lines.append(_row(f"{group} · {name}", runs[name][key][group]))
    lines += ["", "Reference (the issue): on all ten conversations, hybrid any@10 72.4%, plain vector "
              "62.6%, about 596 context tokens, 29 ms median on a 24-core machine.", "",
              "## Machine", "", "```", json.dumps(res["machine"], indent=1), "```", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------- command

def run(path: Path, *, only: list[str] | None, store: Any, embedder: Any, held_out: list[str] | None,
        out: Path | None, progress: bool = True, modes: tuple[str, ...] = ("hybrid", "vector", "keyword"),
        ) -> dict[str, Any]:
    """Load, ask, score and write the report; returns the result dict."""
    convs = read_file(path, only)
    inner = getattr(embedder, "inner", embedder)   # uncached: every recall pays its embedding
    loads = {c.sample_id: ensure_loaded(store, embedder, c) for c in convs}
    ids = {c.sample_id: dia_map(store, c.workspace) for c in convs}
    names = [c.sample_id for c in convs]
    held = set(held_out) if held_out is not None else {s for s in names if s not in TUNED_ON}
    inner.embed_query("warm up")
    cfgs = configs()
    bar = None
    total = sum(len(c.questions) for c in convs) * len(modes)
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=total, desc="locomo", unit="q", dynamic_ncols=True, file=sys.stderr)
    answers: dict[str, list[Answer]] = {m: [] for m in modes}
    for c in convs:
        for m in modes:
            answers[m] += ask(c, config=cfgs[m], store=store, embedder=inner, ids=ids[c.sample_id],
                              on_each=bar.update if bar is not None else None)  # type: ignore[arg-type]
    if bar is not None:
        bar.close()
    from bench.__main__ import machine

    result: dict[str, Any] = {
        "paper": PAPER, "path": str(path), "conversations": names,
        "tuned": [s for s in names if s not in held], "held_out": [s for s in names if s in held],
        "questions": sum(len(c.questions) for c in convs),
        "no_evidence": sum(c.skipped.get("no_evidence", 0) for c in convs),
        "skipped": {c.sample_id: c.skipped for c in convs},
        "evidence_rule": ("split on ';' or ','; 'D:11:26' → 'D11:26'; leading zeros dropped ('D30:05' → "
                          "'D30:5'); a string naming no turn of the conversation ('D', an unknown id) stays "
                          "unmatchable, so all@10 misses it and any@10 needs another gold turn"),
        "unmatchable_evidence": {c.sample_id: sorted({g for q in c.questions for g in q["gold"]
                                                      if g not in c.dia_ids}) for c in convs},
        "load": loads, "machine": machine(),
        "runs": {m: breakdown(answers[m], held) for m in modes},
        "answers": {m: [a.__dict__ for a in answers[m]] for m in modes},
    }
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    target = out or RESULTS / stamp
    target.mkdir(parents=True, exist_ok=True)
    (target / "locomo.json").write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    if set(modes) == {"hybrid", "vector", "keyword"}:
        (target / "locomo.md").write_text(markdown(result), encoding="utf-8")
    result["report"] = str(target / "locomo.md")
    return result


def main(argv: list[str], *, store: Any = None, embedder: Any = None) -> int:
    """The command; `store` and `embedder` are for tests (default: BRAIN_DATA_DIR's store)."""
    p = argparse.ArgumentParser(prog="python -m brain bench locomo", description=__doc__)
    p.add_argument("path", type=Path, help="a LoCoMo JSON file (locomo10.json or a part of it)")
    p.add_argument("--conversations", help="comma-separated sample ids (default: all in the file)")
    p.add_argument("--data-dir", default=os.environ.get("BRAIN_DATA_DIR", str(DEFAULT_DATA_DIR)),
                   help="the store's BRAIN_DATA_DIR (default .brain-locomo/)")
    p.add_argument("--out", type=Path, help="report folder (default bench/results/<timestamp>/)")
    p.add_argument("--holdout", help="comma-separated sample ids reported as held out "
                                     f"(default: every conversation but {', '.join(TUNED_ON)})")
    args = p.parse_args(argv)
    if not args.path.exists():
        print(f"error: no such file: {args.path}", file=sys.stderr)
        return 2
    if store is None:
        os.environ["BRAIN_DATA_DIR"] = str(Path(args.data_dir).resolve())
        os.environ.pop("DATABASE_URL", None)   # a separate store, never the product's
        from brain.db import default_store

        store = default_store()
    if embedder is None:
        from brain.embed import get_embedder

        embedder = get_embedder()
    store.check_embedder(embedder.id, embedder.dim)
    only = [s.strip() for s in args.conversations.split(",") if s.strip()] if args.conversations else None
    held = [s.strip() for s in args.holdout.split(",") if s.strip()] if args.holdout else None
    res = run(args.path, only=only, store=store, embedder=embedder, held_out=held, out=args.out)
    runs = res["runs"]
    print(f"report: {res['report']}")
    for split in ("tuned", "held_out"):
        for name in ("vector", "keyword", "hybrid"):
            s = runs[name][split]
            if s.get("n"):
                print(f"{split} {name}: any@10 {s['any']:.1f}% all@10 {s['all']:.1f}% tokens "
                      f"{s['tokens_p50']:.0f} p50 {s['ms_p50']:.1f} ms (n {s['n']})")
    print(last_line(runs["hybrid"]["all"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
