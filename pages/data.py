"""Data: load a JSONL file in FORMAT.md form with a progress bar and a per-line error
report, sync one record from a form and watch its versions, and see counts per
workspace. Writes go through the library's writer, like `python -m brain load`."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pandas as pd
import streamlit as st

from brain.errors import BadLine
from brain.format import PRIVACY, parse_line
from brain.load import load_lines
from brain.read.graph import record_history, search_entities
from explorer import resources, sidebar, tables
from explorer.state import StateKeys as K, ensure_router

ensure_router()

view = sidebar.render(asker=False)

st.title("Data")

# -- counts -----------------------------------------------------------------------------
st.subheader("What the store holds")
with resources.shown_errors("counting"):
    stats = resources.store().stats()
if stats:
    st.dataframe(pd.DataFrame(stats), hide_index=True, width="stretch")
else:
    st.info("The store is empty. Load a file below (the demo business is `fixtures/demo.jsonl`; "
            "`python -m brain demo` loads it from the command line).", icon=":material/inbox:")

# -- load a file ------------------------------------------------------------------------
st.subheader("Load a JSONL file")
st.caption("One JSON object per line (workspace, role, member, record, message, note), as FORMAT.md "
           "describes. Each line is written in its own transaction: a bad line is reported and skipped.")
upload = st.file_uploader("JSONL file", type=["jsonl", "json", "txt"], key=K.W_UPLOAD)
if upload is not None and st.button("Load it", key=K.W_LOAD, type="primary"):
    try:
        raw = upload.getvalue().decode("utf-8")
    except UnicodeDecodeError:
        st.error("The file is not UTF-8 text: save it as UTF-8 JSON Lines and upload it again.")
        st.stop()
    numbered = [(n, line) for n, line in enumerate(raw.splitlines(), start=1) if line.strip()]
    bar = st.progress(0.0, text=f"0 of {len(numbered)} lines")

    def progress(done: int, total: int) -> None:
        bar.progress(min(done / max(total, 1), 1.0), text=f"{done} of {total} lines")

    with resources.shown_errors("loading"):
        report = load_lines(resources.writer(), numbered, total=len(numbered), on_progress=progress)
    resources.forget_results()
    st.session_state[K.DATA_REPORT] = (upload.name, report)
    st.rerun()  # the counts above and the sidebar's workspaces change

if K.DATA_REPORT in st.session_state:
    name, report = st.session_state[K.DATA_REPORT]
    (st.success if report.ok else st.warning)(f"{name}: {report.summary()}")
    if report.rejected:
        st.dataframe(pd.DataFrame([{"line": r.line, "reason": r.reason} for r in report.rejected]),
                     hide_index=True, width="stretch")

# -- sync one record ----------------------------------------------------------------------
st.subheader("Sync one record")
if view is None:
    st.caption("Load a file with a workspace line first: a record belongs to a workspace.")
    st.stop()
st.caption(f"Into **{view.workspace}** (change it in the sidebar). The same app/kind/id with a later date and "
           "new content becomes a new version; the older one stays as an earlier value.")
with st.form(K.W_SYNC_FORM):
    a, b, c, d = st.columns(4)
    app = a.text_input("App", value="erp", key="sync_app")
    module = b.text_input("Module", value="sales", key="sync_module")
    kind = c.text_input("Kind", value="order", key="sync_kind")
    ident = d.text_input("Id", placeholder="SO-1001", key=K.W_SYNC_ID)
    e, f, g = st.columns(3)
    when = e.date_input("Date", value=date.today(), key=K.W_SYNC_DATE, format="YYYY-MM-DD")
    name = f.text_input("Name (optional)", key="sync_name")
    privacy = g.selectbox("Privacy", PRIVACY, key="sync_privacy")
    owner = st.text_input("Owner (member id, for private or personal records)", key="sync_owner")
    fields_raw = st.text_area("Fields (a JSON object)", value='{"durum": "teslim edildi"}', key=K.W_SYNC_FIELDS)
    links_raw = st.text_area("Links (a JSON list, optional)", value="",
                             placeholder='[{"rel": "placed_by", "kind": "company", "id": "C-11"}]', key="sync_links")
    text = st.text_input("Text (optional free text)", key="sync_text")
    submitted = st.form_submit_button("Sync", type="primary")

if submitted:
    try:
        fields = json.loads(fields_raw or "{}")
        links = json.loads(links_raw) if links_raw.strip() else []
    except json.JSONDecodeError as exc:
        st.error(f"Fields and links must be JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.")
        st.stop()
    obj: dict[str, Any] = {"type": "record", "workspace": view.workspace, "app": app.strip(),
                           "module": module.strip(), "kind": kind.strip(), "id": ident.strip(),
                           "date": when.isoformat(), "fields": fields, "links": links, "privacy": privacy}
    for key, value in (("name", name), ("owner", owner), ("text", text)):
        if value.strip():
            obj[key] = value.strip()
    try:
        line = parse_line(obj)
    except BadLine as exc:
        st.error(f"This record cannot be written: {exc.reason}")
        st.stop()
    with resources.shown_errors("syncing"):
        result = resources.writer().write(line)
    resources.forget_results()
    st.session_state[K.DATA_SYNCED] = (view.workspace, obj["kind"], obj["id"], obj.get("owner"),
                                       obj["privacy"], result.outcome, result.memory_id)

synced = st.session_state.get(K.DATA_SYNCED)
if synced and synced[0] == view.workspace:
    ws, kind, ident, owner, privacy, outcome, memory_id = synced
    st.success(f"{kind} {ident}: {outcome}" + (f" (memory [{memory_id}])" if memory_id else ""))
    # Versions as their reader sees them: the owner for a private record, else no person
    # (who reads every module's shared facts).
    reader = owner if privacy != "shared" else None
    with resources.shown_errors("reading the versions"):
        nodes = [n for n in search_entities(ident, workspace=ws, member=reader, store=view.store, limit=50)
                 if n.kind == kind and n.key == ident]
        versions = record_history(nodes[0].entity_id, workspace=ws, member=reader, store=view.store) if nodes else []
    if versions:
        st.markdown(f"**Versions of {kind} {ident}**, newest first")
        st.dataframe(tables.versions(versions),
                     hide_index=True, width="stretch",
                     column_config={"text": st.column_config.TextColumn(width="large")})
