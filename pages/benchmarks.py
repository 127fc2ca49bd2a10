"""Benchmarks: the newest report written by `make bench` / `make bench-quick`
(bench/results/<timestamp>/report.md) and its plots, or how to produce one."""

from __future__ import annotations

import os
import re
from pathlib import Path

import streamlit as st

from explorer.state import ensure_router

ensure_router()

ROOT = Path(__file__).resolve().parent.parent
# BRAIN_BENCH_RESULTS points the page elsewhere (the tests use a temporary folder).
RESULTS = Path(os.environ.get("BRAIN_BENCH_RESULTS") or ROOT / "bench" / "results")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")

st.title("Benchmarks")
reports = sorted(RESULTS.glob("*/report.md"), key=lambda p: (p.stat().st_mtime, p.parent.name)) \
    if RESULTS.is_dir() else []
if not reports:
    st.info("No benchmark report yet. Run `make bench-quick` (a subset, under five minutes) or `make bench` "
            "(everything: the question types, the 100,000-row scale set, the permission sweep); each writes "
            "`bench/results/<timestamp>/report.md` with its plots, and this page shows the newest.", icon=":material/monitoring:")
    st.stop()

latest = reports[-1]
older = [p.parent.name for p in reports[:-1]]
st.caption(f"Newest report: `{latest.parent.name}/report.md`" + (f" · {len(older)} older runs in bench/results/"
                                                              if older else ""))
text = latest.read_text(encoding="utf-8", errors="replace")
# Images in the report point at files next to it, which a browser cannot fetch from here:
# they are shown below from disk instead.
st.markdown(_IMAGE.sub("", text))
plots = sorted(latest.parent.glob("*.png"))
if plots:
    st.subheader("Plots")
    cols = st.columns(2)
    for i, png in enumerate(plots):
        cols[i % 2].image(str(png), caption=png.stem.replace("_", " "), width="stretch")
