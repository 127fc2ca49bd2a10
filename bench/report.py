"""The benchmark's Markdown report and its one-line summary.

The summary line is what `make bench` and `make bench-quick` end with, always in this form:
`bench: answered A% (vector V%), multi-hop M% (vector W%), leaks L in N answers, p50 P ms`
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

LINE = re.compile(r"^bench: answered (\d+\.\d|nan)% \(vector (\d+\.\d|nan)%\), multi-hop (\d+\.\d|nan)% "
                  r"\(vector (\d+\.\d|nan)%\), leaks (\d+) in (\d+) answers, p50 (\d+|nan) ms$")


def _pct(x: float | None) -> str:
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1f}"


def totals(res: dict[str, Any]) -> tuple[int, int]:
    """(leaks, answers checked) over every read path and run that was checked for leaks."""
    leaks = checked = 0
    for run in res.get("questions", {}).get("runs", {}).values():
        checked += len(run["outcomes"])
        leaks += len(run["leaks"])
    sweep = res.get("sweep") or {}
    for p in sweep.get("paths", []):
        checked += p["checked"]
        leaks += len(p["leaks"])
    return leaks, checked


def bench_line(res: dict[str, Any]) -> str:
    q = res.get("questions", {}).get("headline", {})
    mh = res.get("multi_hop", {}).get("summary", {})
    leaks, checked = totals(res)
    p50 = q.get("ms_p50")
    p50s = "nan" if p50 is None or math.isnan(p50) else f"{p50:.0f}"
    return (f"bench: answered {_pct(q.get('answered'))}% (vector {_pct(q.get('vector_answered'))}%), "
            f"multi-hop {_pct(mh.get('hybrid', {}).get('answered'))}% "
            f"(vector {_pct(mh.get('vector', {}).get('answered'))}%), "
            f"leaks {leaks} in {checked} answers, p50 {p50s} ms")


def _table(head: list[str], rows: list[list[Any]]) -> list[str]:
    return (["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows])


def markdown(res: dict[str, Any]) -> str:
    out = [f"# Benchmark: `{res['command']}` at {res['started']} UTC", "",
           f"`{bench_line(res)}`", ""]
    if res.get("notes"):
        out += [f"> {n}" for n in res["notes"]] + [""]
    # --- questions
    q = res.get("questions")
    if q:
        h = q["headline"]
        out += [f"## Business questions ({q['store']}; headline: the `{h['split']}` split, never tuned on)", ""]
        rows = []
        for split, runs in q["splits"].items():
            r, b = runs["hybrid"], runs["vector"]
            rows.append([split, r["n"], f"{r['answered']:.1f}%", f"{b['answered']:.1f}%", len(r["leaks"]),
                         len(b["leaks"]), f"{r['tokens_p50']:.0f} / {r['tokens_p95']:.0f}",
                         f"{b['tokens_p50']:.0f} / {b['tokens_p95']:.0f}",
                         f"{r['ms_p50']:.0f} / {r['ms_p95']:.0f}", f"{b['ms_p50']:.0f} / {b['ms_p95']:.0f}",
                         f"{r['embed_p50']:.0f} / {r['embed_p95']:.0f}"])
        out += _table(["split", "n", "answered real", "answered vector", "leaks real", "leaks vector",
                       "tokens p50/p95 real", "vector", "ms p50/p95 real", "vector", "query embed ms p50/p95"],
                      rows)
        out += ["", f"Recall p50 / query-embedding p50 (real path, headline split): "
                    f"{h['ms_p50'] / h['embed_p50']:.2f}×" if h.get("embed_p50") else "", ""]
        r, b = q["splits"][h["split"]]["hybrid"], q["splits"][h["split"]]["vector"]
        out += ["### Answered by type (headline split)", ""]
        out += _table(["type", "n", "real", "vector"],
                      [[t, n, f"{v:.1f}%", f"{b['by_type'].get(t, [float('nan')])[0]:.1f}%"]
                       for t, (v, n) in r["by_type"].items()])
        out += ["", "### Answered by language (headline split)", ""]
        out += _table(["lang", "n", "real", "vector"],
                      [[t, n, f"{v:.1f}%", f"{b['by_lang'].get(t, [float('nan')])[0]:.1f}%"]
                       for t, (v, n) in r["by_lang"].items()])
        lf = r.get("latest_first") or []
        if lf:
            out += ["", f"Latest value first (latest_* questions with an earlier value): {sum(lf)}/{len(lf)}"]
        missed = [o["id"] for o in r["outcomes"] if not o["answered"]]
        out += ["", f"Not answered (real path): {', '.join(missed) or 'none'}", "",
                "![answered by type](answered_by_type.png)", ""]
    # --- multi-hop at scale
    mh = res.get("multi_hop")
    if mh:
        s = mh["summary"]
        out += [f"## Multi-hop at scale ({mh['store']})", "",
                "*Answer in context*: an answer string is in the context. *Every hop's evidence*: answered, "
                "and the record stating each hop of the question's path (and the answer) is among the facts "
                "shown (`Recall.facts`), for the real path and the baseline alike. *Path shown* (real path "
                "only): a walked path in the trace runs through every entity of the question's chain and "
                "each of its hops' stating memories (`trace.paths.paths[i].hops[j].memory_id`) is a context "
                "line. *Best path shown*: the top-scored walked path's hops all have their stating memories "
                "among the context lines (for a direct question there may be no path at all).", ""]
        rows = []
        for t in s["hybrid"]["by_type"]:
            r, b = s["hybrid"]["by_type"][t], s["vector"]["by_type"][t]
            rows.append([t, r["n"], f"{r['answered']:.1f}%", f"{r['evidence']:.1f}%", f"{r.get('path_shown', float('nan')):.1f}%",
                         f"{r.get('best_path_shown', float('nan')):.1f}%", f"{b['answered']:.1f}%", f"{b['evidence']:.1f}%"])
        r, b = s["hybrid"], s["vector"]
        rows.append(["**all**", r["n"], f"{r['answered']:.1f}%", f"{r['evidence']:.1f}%",
                     f"{r.get('path_shown', float('nan')):.1f}%", f"{r.get('best_path_shown', float('nan')):.1f}%",
                     f"{b['answered']:.1f}%", f"{b['evidence']:.1f}%"])
        out += _table(["type", "n", "real: answer", "real: every hop's evidence", "real: path shown",
                       "real: best path shown", "vector: answer", "vector: every hop's evidence"], rows)
        lat = mh.get("latency", {})
        if lat:
            out += ["", f"Real path at scale: recall p50 {lat['hybrid_ms_p50']:.0f} ms / p95 {lat['hybrid_ms_p95']:.0f} ms, "
                        f"query embedding p50 {lat['embed_p50']:.0f} ms → {lat['ratio']:.2f}× "
                        f"(graph questions); tokens p50 {lat['tokens_p50']:.0f}."]
        missed = [x["id"] for x in mh["rows"]["hybrid"] if not x["evidence"]]
        out += ["", f"Real path without every hop's evidence: {', '.join(missed[:40]) or 'none'}"
                + (f" (+{len(missed) - 40} more)" if len(missed) > 40 else ""), "",
                "![multi-hop](multi_hop.png)", ""]
    out += ["![tokens and latency](latency_tokens.png)", ""]
    # --- load
    load = res.get("load")
    if load:
        out += ["## Scale set load (through the product's writer, `brain.load.load_lines`)", ""]
        out += _table(["", "value"], [
            ["generator", f"`fixtures.business.generate(seed={load.get('seed')}, scale={load.get('scale')})`"],
            ["lines loaded", f"{load.get('lines')} of {load.get('total_lines')}"],
            ["graph rows (entities + edges + memories)",
             f"{load.get('graph_rows')} ({load.get('entities')} + {load.get('edges')} + {load.get('memories')})"],
            ["load time", f"{float(load.get('seconds') or 0):.0f} s ({float(load.get('seconds') or 0) / 60:.1f} min)"],
            ["lines/s", load.get("lines_per_s")], ["graph rows/s", load.get("rows_per_s")],
            ["memories/s", load.get("memories_per_s")],
            ["embedding share", f"{100 * float(load.get('embed_share') or 0):.0f}% "
                                f"({float(load.get('embed_seconds') or 0):.0f} s, {load.get('passages_per_s')} passages/s)"],
            ["reused this run", load.get("reused")]])
        out += ["", "![load](load_throughput.png)", ""]
    # --- sweep
    sw = res.get("sweep")
    if sw:
        out += [f"## Permission sweep ({sw['store']})", "",
                f"{sw['secrets']} planted secrets ({sw['secret_values']} distinct values); "
                f"{sw['questions']} questions, each asked by every asker below. A leak is a value the asker "
                f"may not see (worked out from the fixture lines: workspace, module grants, privacy/owner, "
                f"expiry) anywhere in the output.", ""]
        out += _table(["asker", "workspace", "member", "forbidden values"],
                      [[a["label"], a["workspace"], a["member"] or "(no person)", a["forbidden"]] for a in sw["askers"]])
        out += [""]
        out += _table(["read path", "answers checked", "leaks", "errors", "seconds", "note"],
                      [[p["path"], p["checked"], len(p["leaks"]), p["n_errors"], p["seconds"], p.get("skipped") or ""]
                       for p in sw["paths"]])
        c = sw.get("control")
        if c:
            out += ["", f"Control (the detector sees a leak when there is one): the owner `{c['asked_as']}` asked "
                        f"\"{c['question']}\"; checked against the {c['checked_against']} member's forbidden values, "
                        f"{c['detected']} found → {'ok' if c['ok'] else 'DETECTOR BROKEN'}."]
        all_leaks = [lk for p in sw["paths"] for lk in p["leaks"]]
        out += ["", "### Every leak", ""]
        out += [f"- {lk['path']} · {lk['asker']} ({lk['member']}) · {lk['question']} · `{lk['value']}` "
                f"({lk['secret']})" for lk in all_leaks[:300]] or ["none"]
        if len(all_leaks) > 300:
            out += [f"- … {len(all_leaks) - 300} more in results.json"]
        errs = [e for p in sw["paths"] for e in p["errors"]]
        if errs:
            out += ["", "### Errors", ""] + [f"- {e}" for e in errs[:20]]
        out += ["", "![leaks](leaks.png)", ""]
    out += ["## Machine", "", "```", json.dumps(res.get("machine", {}), indent=1, ensure_ascii=False), "```", ""]
    return "\n".join(x for x in out if x is not None) + "\n"
