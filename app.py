"""The brain explorer: a router only. Page config, session defaults, navigation.

Run with `make run` (or `streamlit run app.py`); the pages live in `pages/` and the
shared pieces (sidebar, resources, graphs, tables) in `explorer/`.
"""

import streamlit as st

from explorer.state import init_state

st.set_page_config(page_title="brain explorer", page_icon="🧠", layout="wide")
init_state()
page = st.navigation([
    st.Page("pages/ask.py", title="Ask", icon=":material/forum:", default=True),
    st.Page("pages/hidden.py", title="Hidden", icon=":material/visibility_off:"),
    st.Page("pages/graph.py", title="Graph", icon=":material/hub:"),
    st.Page("pages/data.py", title="Data", icon=":material/upload_file:"),
    st.Page("pages/benchmarks.py", title="Benchmarks", icon=":material/monitoring:"),
])
page.run()
