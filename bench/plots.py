"""PNG plots of a benchmark run (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

REAL, BASE = "#2b6cb0", "#a0aec0"


def _bars(ax: Any, labels: list[str], series: list[tuple[str, list[float], str]], *, ylabel: str,
          ns: list[int] | None = None) -> None:
    width = 0.8 / max(1, len(series))
    for i, (name, values, color) in enumerate(series):
        xs = [x + (i - (len(series) - 1) / 2) * width for x in range(len(labels))]
        bars = ax.bar(xs, values, width, label=name, color=color)
        for b, v in zip(bars, values):
            if v == v:  # not NaN
                ax.annotate(f"{v:.0f}", (b.get_x() + b.get_width() / 2, b.get_height()), ha="center",
                            va="bottom", fontsize=7)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels([f"{lab}\n(n={n})" for lab, n in zip(labels, ns)] if ns else labels, fontsize=8,
                       rotation=0)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def answered_by_type(runs: dict[str, Any], path: Path, title: str) -> Path:
    r, b = runs["hybrid"], runs["vector"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 4.5), gridspec_kw={"width_ratios": [4, 1]})
    types = list(r["by_type"])
    _bars(ax1, [t.replace("_", "\n") for t in types],
          [("real path", [r["by_type"][t][0] for t in types], REAL),
           ("plain vector top-10", [b["by_type"].get(t, (float("nan"), 0))[0] for t in types], BASE)],
          ylabel="answered %", ns=[r["by_type"][t][1] for t in types])
    ax1.set_ylim(0, 110)
    ax1.axhline(90, color="red", lw=0.8, ls="--")
    ax1.set_title(f"{title}: answered by type")
    langs = list(r["by_lang"])
    _bars(ax2, langs, [("real", [r["by_lang"][t][0] for t in langs], REAL),
                       ("vector", [b["by_lang"].get(t, (float("nan"), 0))[0] for t in langs], BASE)],
          ylabel="answered %", ns=[r["by_lang"][t][1] for t in langs])
    ax2.set_ylim(0, 110)
    ax2.set_title("by language")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def multi_hop(summary: dict[str, Any], path: Path, rows_label: str) -> Path:
    r, b = summary["hybrid"], summary["vector"]
    types = list(r["by_type"])
    fig, ax = plt.subplots(figsize=(10, 4.5))
    series = [("real: answer in context", [r["by_type"][t]["answered"] for t in types], REAL),
              ("real: every hop's evidence", [r["by_type"][t]["evidence"] for t in types], "#63b3ed"),
              ("vector: answer in context", [b["by_type"][t]["answered"] for t in types], "#718096"),
              ("vector: every hop's evidence", [b["by_type"][t]["evidence"] for t in types], BASE)]
    _bars(ax, types, series, ylabel="%", ns=[r["by_type"][t]["n"] for t in types])
    ax.set_ylim(0, 115)
    ax.set_title(f"Multi-hop at scale ({rows_label}): real path beside plain vector top-10")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def distributions(samples: dict[str, dict[str, list[float]]], path: Path) -> Path:
    """samples: run name -> {"tokens": [...], "ms": [...], "embed_ms": [...]}"""
    import numpy as np

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 5.5), gridspec_kw={"width_ratios": [2, 3]})
    names = list(samples)
    tok = [samples[n]["tokens"] for n in names]
    ax1.boxplot(tok, whis=(5, 95), showfliers=False)
    ax1.set_xticks(range(1, len(names) + 1))
    ax1.set_xticklabels(names, fontsize=8, rotation=30, ha="right")
    for i, t in enumerate(tok, start=1):
        if t:
            ax1.annotate(f"p50 {np.percentile(t, 50):.0f}\np95 {np.percentile(t, 95):.0f}", (i, np.percentile(t, 95)),
                         ha="center", va="bottom", fontsize=7)
    ax1.axhline(1000, color="red", lw=0.8, ls="--")
    ax1.set_ylim(0, max(1100, max((max(t) for t in tok if t), default=1) * 1.2))
    ax1.set_ylabel("context tokens (cl100k)")
    ax1.set_title("Context tokens (box: p25-p75, whiskers p5-p95)")
    lat, labels = [], []
    for n in names:
        lat.append(samples[n]["ms"])
        labels.append(f"{n}\nrecall")
        lat.append(samples[n]["embed_ms"])
        labels.append(f"{n}\nquery embed")
    ax2.boxplot(lat, whis=(5, 95), showfliers=False)
    ax2.set_xticks(range(1, len(labels) + 1))
    ax2.set_xticklabels(labels, fontsize=7, rotation=30, ha="right")
    ax2.set_ylim(0, max((max(t) for t in lat if t), default=1) * 1.2)
    for i, t in enumerate(lat, start=1):
        if t:
            ax2.annotate(f"p50 {np.percentile(t, 50):.0f}\np95 {np.percentile(t, 95):.0f}", (i, np.percentile(t, 95)),
                         ha="center", va="bottom", fontsize=7)
    ax2.set_ylabel("ms")
    ax2.set_title("Latency: recall beside its query embedding")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def leaks(sweep: dict[str, Any], path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(9, 4))
    paths = [p["path"] + (" (skipped)" if p.get("skipped") else "") for p in sweep["paths"]]
    checked = [p["checked"] for p in sweep["paths"]]
    leak = [len(p["leaks"]) for p in sweep["paths"]]
    ax.bar(range(len(paths)), checked, color=BASE, label="answers checked")
    ax.bar(range(len(paths)), leak, color="#e53e3e", label="leaks")
    for i, (c, lk) in enumerate(zip(checked, leak)):
        ax.annotate(f"{lk} leaks / {c}", (i, c), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(paths)))
    ax.set_xticklabels(paths, fontsize=8)
    ax.set_ylabel("answers")
    ax.set_title(f"Permission sweep: {sweep['secrets']} planted secrets, 5 askers")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def load_throughput(load: dict[str, Any], path: Path) -> Path:
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 2]})
    keys = [("lines_per_s", "lines/s"), ("memories_per_s", "memories/s"), ("rows_per_s", "graph rows/s"),
            ("passages_per_s", "passages embedded/s\n(embedding time only)")]
    vals = [float(load.get(k) or 0) for k, _ in keys]
    bars = ax1.bar(range(len(keys)), vals, color=REAL)
    for b, v in zip(bars, vals):
        ax1.annotate(f"{v:.1f}", (b.get_x() + b.get_width() / 2, v), ha="center", va="bottom", fontsize=8)
    ax1.set_xticks(range(len(keys)))
    ax1.set_xticklabels([lab for _, lab in keys], fontsize=8)
    ax1.set_title(f"Load through the writer: {load.get('lines')} lines, {load.get('graph_rows')} graph rows")
    secs = float(load.get("seconds") or 0)
    emb = float(load.get("embed_seconds") or 0)
    ax2.pie([emb, max(0.0, secs - emb)], labels=[f"embedding {emb:.0f} s", f"writing {secs - emb:.0f} s"],
            colors=["#ed8936", REAL], autopct="%1.0f%%")
    ax2.set_title(f"Load time {secs / 60:.1f} min")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
