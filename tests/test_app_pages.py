"""AppTest for every page of the explorer, on the real demo database: widgets driven by
key, a link's query parameters reproducing a run, the Hidden, Graph, Data and Benchmarks
flows, and the error states (unreachable database, empty store)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from explorer.state import StateKeys as K
from explorer.testing import app_database_url, captured_downloads, rendered_strings

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
PAGES = ("pages/ask.py", "pages/hidden.py", "pages/graph.py", "pages/data.py", "pages/benchmarks.py")
NOW = "2026-11-20"
QUESTION = "Ağaoğlu Yapı'nın siparişleri hangi faturalarla ödendi?"


def fresh_app(**params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params.update(params)
    return at


def ok(at: AppTest) -> AppTest:
    """Assert the run raised nothing and showed no error."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def text_of(at: AppTest) -> str:
    return "\n".join(rendered_strings(at))


@pytest.fixture
def demo_app(monkeypatch: pytest.MonkeyPatch, server_uri: str, demo_db: str) -> None:
    """The explorer pointed at the demo business, as the app role."""
    monkeypatch.setenv("DATABASE_URL", app_database_url(server_uri, demo_db))
    monkeypatch.delenv("BRAIN_EMBEDDER", raising=False)


@pytest.fixture
def demo_lines_by_ref(demo_lines: list[dict]) -> dict[tuple[str, str, str], dict]:  # type: ignore[type-arg]
    return {(x["workspace"], x["kind"], x["id"]): x for x in demo_lines if x["type"] == "record"}


# ------------------------------------------------------------------------------ pages
@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders(demo_app: None, page: str) -> None:
    at = fresh_app(workspace="acme-tr", **{"as": "u-ayse"}, now=NOW, q=QUESTION).run()
    ok(at)
    if page != "pages/ask.py":
        ok(at.switch_page(page).run())
    assert at.title, f"{page} shows no title"


def test_a_link_reproduces_the_view_and_runs_the_question(demo_app: None, demo_lines_by_ref) -> None:  # type: ignore[no-untyped-def]
    at = ok(fresh_app(workspace="acme-tr", **{"as": "u-murat"}, now=NOW, q=QUESTION).run())
    assert at.selectbox(key=K.W_WORKSPACE).value == "acme-tr"
    assert at.selectbox(key=K.W_MEMBER).value == "u-murat"
    assert str(at.date_input(key=K.W_NOW).value) == NOW
    assert at.text_input(key=K.W_QUESTION).value == QUESTION
    context = at.code[0].value
    # The finance member gets the invoice behind one of the company's orders.
    invoices = [x for (ws, kind, _), x in demo_lines_by_ref.items() if ws == "acme-tr" and kind == "invoice"]
    assert any(inv["fields"]["tutar"] in context for inv in invoices)
    # every step of the trace is on the page
    headers = [h.value for h in at.subheader]
    for step in ("1 · Anchors", "2 · Recall", "3 · Paths", "4 · Ranked facts", "5 · Visibility", "6 · The context"):
        assert any(h.startswith(step) for h in headers), (step, headers)
    assert at.get("iframe"), "the paths graph is not drawn"
    assert at.query_params["as"] == "u-murat" and at.query_params["q"] == QUESTION


def test_the_trace_downloads_as_the_recalls_json(demo_app: None) -> None:
    with captured_downloads() as got:
        at = ok(fresh_app(workspace="acme-tr", **{"as": "u-ayse"}, now=NOW, q=QUESTION).run())
    assert at.download_button(key="ask_download").label.startswith("Download the trace")
    traces = [json.loads(b) for b in got if b.startswith(b"{")]
    assert traces and traces[0]["question"] == QUESTION and traces[0]["member"] == "u-ayse"
    assert set(traces[0]["trace"]) >= {"anchors", "recall", "paths", "rank", "visibility", "compact"}


def test_fewer_grants_change_the_answer(demo_app: None, demo_lines_by_ref) -> None:  # type: ignore[no-untyped-def]
    finance = ok(fresh_app(workspace="acme-tr", **{"as": "u-murat"}, now=NOW, q=QUESTION).run())
    support = ok(fresh_app(workspace="acme-tr", **{"as": "u-emre"}, now=NOW, q=QUESTION).run())
    amounts = [x["fields"]["tutar"] for (ws, kind, _), x in demo_lines_by_ref.items()
               if ws == "acme-tr" and kind == "invoice"]
    assert finance.code[0].value != support.code[0].value
    assert not any(a in text_of(support) for a in amounts)


def test_widgets_driven_by_key(demo_app: None) -> None:
    at = ok(fresh_app().run())
    assert at.info, "an empty question should invite one"
    at.selectbox(key=K.W_WORKSPACE).set_value("acme-tr")
    at.selectbox(key=K.W_MEMBER).set_value("u-ayse")
    at.date_input(key=K.W_NOW).set_value(NOW)
    at.number_input(key=K.W_BUDGET).set_value(600)
    at.text_input(key=K.W_QUESTION).input(QUESTION)
    ok(at.run())
    assert at.code, "no context rendered"
    assert "/ 600" in at.metric[1].value
    assert at.query_params["as"] == "u-ayse" and at.query_params["now"] == NOW
    # an example question fills the box and runs
    at.selectbox(key=K.W_EXAMPLE).select_index(0)
    ok(at.run())
    assert at.text_input(key=K.W_QUESTION).value
    assert at.session_state[K.QUESTION] == at.text_input(key=K.W_QUESTION).value


def test_no_person_is_an_empty_as(demo_app: None) -> None:
    at = ok(fresh_app(workspace="acme-tr", **{"as": ""}, now=NOW, q=QUESTION).run())
    assert at.selectbox(key=K.W_MEMBER).value == ""
    assert "no person" in text_of(at)
    assert at.query_params["as"] == ""


def test_a_link_to_an_unknown_member_is_refused(demo_app: None) -> None:
    at = fresh_app(workspace="acme-tr", **{"as": "g-ayse"}, now=NOW, q=QUESTION).run()
    assert not at.exception
    assert any("not a member" in e.value for e in at.error)
    assert not at.code, "the linked question must not run as someone else"


def test_why_not_says_where_an_expected_string_fell_out(demo_app: None, demo_lines_by_ref) -> None:  # type: ignore[no-untyped-def]
    at = ok(fresh_app(workspace="acme-tr", **{"as": "u-murat"}, now=NOW, q=QUESTION).run())
    company = demo_lines_by_ref[("acme-tr", "company", "C-11")]
    at.text_input(key=K.W_WHYNOT_TEXT).input(company["fields"]["vergi_dairesi"])
    at.button(key=K.W_WHYNOT_GO).click()
    ok(at.run())
    shown = text_of(at)
    assert company["fields"]["vergi_dairesi"] in shown
    assert at.success or at.warning or at.info
    # picking from the search box limited to what the member may see
    at.text_input(key=K.W_WHYNOT_TEXT).input("")
    at.text_input(key=K.W_WHYNOT_SEARCH).input("SO-1001")
    ok(at.run())
    assert at.selectbox(key=K.W_WHYNOT_PICK).options
    at.button(key=K.W_WHYNOT_GO).click()
    ok(at.run())
    assert at.dataframe, "the stages of the why-not answer are not shown"


def test_why_not_never_reveals_hidden_facts(demo_app: None, demo_lines_by_ref) -> None:  # type: ignore[no-untyped-def]
    salary = next(x for (ws, kind, _), x in demo_lines_by_ref.items() if ws == "acme-tr" and kind == "employment")
    at = ok(fresh_app(workspace="acme-tr", **{"as": "u-ayse"}, now=NOW, q="maaş").run())
    at.text_input(key=K.W_WHYNOT_TEXT).input(salary["fields"]["maas"])
    at.button(key=K.W_WHYNOT_GO).click()
    ok(at.run())
    assert any("Nothing this member may see" in i.value for i in at.info)
    assert not any(salary["name"] in s for s in rendered_strings(at) if "Nothing this member" not in s)


# ------------------------------------------------------------------------------ Hidden
def test_hidden_page_explains_and_compares(demo_app: None) -> None:
    q = "Ağaoğlu Yapı Market cari hesabı kredi limiti ne kadar?"
    at = ok(fresh_app(workspace="acme-tr", **{"as": "u-ayse"}, now=NOW, q=q).run())
    ok(at.switch_page("pages/hidden.py").run())
    assert any("Privileged support view" in w.value for w in at.warning)
    assert at.selectbox(key=K.W_OPERATOR).value == "u-selin"
    assert at.text_input(key=K.W_HIDDEN_QUESTION).value == q
    assert any(m.label == "module not granted" for m in at.metric), [m.label for m in at.metric]
    assert at.get("iframe"), "the hidden graph is not drawn"
    # the expected string: hidden from the sales member, said so here
    at.text_input(key=K.W_HIDDEN_EXPECTED).input("kredi limiti")
    ok(at.run())
    assert any("hidden from this member" in w.value for w in at.warning)
    # two members side by side
    at.selectbox(key=K.W_CMP_A).set_value("u-murat")
    at.selectbox(key=K.W_CMP_B).set_value("u-ayse")
    ok(at.run())
    assert "Only Murat Çelik · u-murat" in text_of(at)


# ------------------------------------------------------------------------------- Graph
def test_graph_page_browses_a_neighbourhood(demo_app: None) -> None:
    at = ok(fresh_app(workspace="acme-tr", **{"as": "u-murat"}, now=NOW).run())
    ok(at.switch_page("pages/graph.py").run())
    at.text_input(key=K.W_GRAPH_SEARCH).input("Ağaoğlu")
    ok(at.run())
    assert at.selectbox(key=K.W_GRAPH_PICK).options
    at.slider(key=K.W_GRAPH_DEPTH).set_value(2)
    ok(at.run())
    assert at.get("iframe")
    edges = at.dataframe[0].value
    assert {"from", "relation", "to", "module", "evidence"} <= set(edges.columns)
    assert len(edges) > 0
    kinds = at.multiselect(key=K.W_GRAPH_KINDS).options
    at.multiselect(key=K.W_GRAPH_KINDS).select(kinds[0])
    ok(at.run())
    # a record's history: a re-synced company keeps its earlier version
    at.text_input(key=K.W_GRAPH_SEARCH).input("C-13")
    ok(at.run())
    history = at.dataframe[-1].value
    assert len(history) >= 2 and history["current"].sum() == 1


# -------------------------------------------------------------------------------- Data
@pytest.fixture
def empty_app(monkeypatch: pytest.MonkeyPatch, fresh_store, embedder) -> None:  # type: ignore[no-untyped-def]
    # The app role may not record the embedder in an empty store: the owner does it once.
    fresh_store.check_embedder(embedder.id, embedder.dim)
    monkeypatch.setenv("DATABASE_URL", fresh_store.app_uri)
    monkeypatch.delenv("BRAIN_EMBEDDER", raising=False)


def test_empty_store_says_what_to_do(empty_app: None) -> None:
    at = fresh_app(q="anything").run()
    assert not at.exception and not at.error
    assert any("store is empty" in i.value for i in at.info)
    ok(at.switch_page("pages/graph.py").run())
    assert any("store is empty" in i.value for i in at.info)
    ok(at.switch_page("pages/data.py").run())
    assert any("store is empty" in i.value for i in at.info)


def test_data_page_loads_a_file_and_syncs_a_record(empty_app: None) -> None:
    lines = [
        {"type": "workspace", "id": "t-ws", "org": "t", "name": "Test"},
        {"type": "role", "workspace": "t-ws", "id": "owner", "modules": ["*"]},
        {"type": "member", "workspace": "t-ws", "id": "u-1", "name": "Test Owner", "roles": ["owner"]},
        {"type": "record", "workspace": "t-ws", "app": "erp", "module": "sales", "kind": "order", "id": "SO-1",
         "date": "2026-09-01", "fields": {"durum": "hazırlanıyor"}},
        {"type": "record", "workspace": "t-ws", "app": "erp", "module": "sales", "kind": "order"},
    ]
    body = "\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n{not json\n"
    at = fresh_app().run()
    ok(at.switch_page("pages/data.py").run())
    at.file_uploader(key=K.W_UPLOAD).set_value(("t.jsonl", body.encode("utf-8"), "application/jsonl"))
    ok(at.run())
    at.button(key=K.W_LOAD).click()
    ok(at.run())
    report = at.dataframe[-1].value
    assert list(report["line"]) == [5, 6]            # the record without an id, the broken JSON
    assert any("rejected 2" in w.value for w in at.warning)
    stats = at.dataframe[0].value
    assert list(stats["workspace"]) == ["t-ws"] and int(stats["memories"].iloc[0]) == 1
    # sync a newer version of the order from the form
    at.text_input(key=K.W_SYNC_ID).input("SO-1")
    at.date_input(key=K.W_SYNC_DATE).set_value("2026-10-01")
    at.text_area(key=K.W_SYNC_FIELDS).input('{"durum": "teslim edildi"}')
    at.form_submit_button[0].click()
    ok(at.run())
    assert any("order SO-1: written" in s.value for s in at.success)
    versions = at.dataframe[-1].value
    assert len(versions) == 2 and versions["current"].tolist() == [True, False]


def test_data_page_reports_bad_json_in_the_form(empty_app: None) -> None:
    at = fresh_app().run()
    ok(at.switch_page("pages/data.py").run())
    # no workspace yet: the form is not offered
    assert any("workspace line first" in c.value for c in at.caption)


# -------------------------------------------------------------------------- Benchmarks
def test_benchmarks_page_shows_the_newest_report(demo_app: None, monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    monkeypatch.setenv("BRAIN_BENCH_RESULTS", str(tmp_path))
    at = fresh_app().run()
    ok(at.switch_page("pages/benchmarks.py").run())
    assert any("make bench" in i.value for i in at.info)
    run = tmp_path / "20261201-120000"
    run.mkdir()
    (run / "report.md").write_text("# Bench report\n\nanswered 97%\n\n![plot](answered.png)\n", encoding="utf-8")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.figure(figsize=(2, 2)); plt.plot([1, 2]); plt.savefig(run / "answered.png"); plt.close()
    ok(at.run())
    assert any("answered 97%" in m.value for m in at.markdown)
    assert at.get("image") or at.get("imgs"), "the plot is not shown"


# ------------------------------------------------------------------------------ errors
def test_unreachable_database_gives_a_message_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://brain_app@127.0.0.1:9/nowhere?connect_timeout=3")
    for page in PAGES[:4]:
        at = fresh_app()
        if page != "pages/ask.py":
            at.run()
            at.switch_page(page)
        at.run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert any("cannot be reached" in e.value for e in at.error), (page, [e.value for e in at.error])


def test_the_paths_step_names_the_relations_the_question_asks_for(demo_app: None) -> None:
    at = ok(fresh_app(workspace="acme-tr", **{"as": "u-ayse"}, now=NOW,
                      q="What is the address of the company that placed order SO-1014?").run())
    assert any("Relations the question names, walked to: placed_by." in c.value for c in at.caption)
