"""UI helpers of the Streamlit explorer: state keys, cached resources, the shared sidebar,
graph rendering and table builders. Pages import from here; nothing here talks SQL."""
