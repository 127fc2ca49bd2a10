"""Helpers for the explorer's tests: the app's database URL for a test database, every
string a rendered AppTest page holds, and the bytes its download buttons offer.

Kept in the package (as datasette ships its fixtures) so the AppTest suites and the
benchmark's permission sweep render and inspect pages the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from google.protobuf.json_format import MessageToDict

from brain.db import APP_ROLE, _with_dbname, _with_user


def app_database_url(server_uri: str, dbname: str) -> str:
    """The URL the explorer gets in tests: the test database, as the app role."""
    return _with_user(_with_dbname(server_uri, dbname), APP_ROLE)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def rendered_strings(at: Any) -> list[str]:
    """Every string an AppTest run rendered: text, markdown, code, tables' cells and
    headers, widget labels, options and values, alerts, and iframes' HTML."""
    out: list[str] = []
    for node in at:
        proto = getattr(node, "proto", None)
        if getattr(node, "type", "") in ("arrow_data_frame", "dataframe", "table", "arrow_table"):
            df = node.value
            out.extend(str(c) for c in df.columns)
            out.extend(str(v) for v in df.astype(str).to_numpy().ravel())
            continue
        if proto is not None and hasattr(proto, "DESCRIPTOR"):
            out.extend(_strings(MessageToDict(proto, preserving_proto_field_name=True)))
    return out


@contextmanager
def captured_downloads() -> Iterator[list[bytes]]:
    """Collect what download buttons (and any other media) hand to the browser."""
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    got: list[bytes] = []
    original = MemoryMediaFileStorage.load_and_get_id

    def spy(self: Any, path_or_data: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(path_or_data, (bytes, bytearray)):
            got.append(bytes(path_or_data))
        elif isinstance(path_or_data, str):
            got.append(path_or_data.encode("utf-8"))
        return original(self, path_or_data, *args, **kwargs)

    MemoryMediaFileStorage.load_and_get_id = spy  # type: ignore[method-assign]
    try:
        yield got
    finally:
        MemoryMediaFileStorage.load_and_get_id = original  # type: ignore[method-assign]
