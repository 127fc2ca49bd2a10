"""tools/pick_python.py: the interpreter `make` builds .venv from."""

from __future__ import annotations

import sys

import pytest

from tools import pick_python


def test_the_running_interpreter_is_probed_as_it_is() -> None:
    found = pick_python.probe(sys.executable)
    assert found is not None
    recent, can_venv, _fast = found
    assert recent   # the project needs 3.11+, and this suite runs on it
    assert can_venv


def test_an_optimised_build_is_preferred_to_an_earlier_plain_one(monkeypatch: pytest.MonkeyPatch) -> None:
    verdicts = {"/a/python3.12": (True, True, False),    # recent, but a plain build
                "/b/python3.11": (True, True, True),     # optimised
                "/c/python3.10": (False, True, True)}    # too old, however fast
    monkeypatch.setattr(pick_python, "candidates", lambda: list(verdicts))
    monkeypatch.setattr(pick_python, "probe", verdicts.get)
    assert pick_python.pick()[0] == "/b/python3.11"
    del verdicts["/b/python3.11"]
    path, why = pick_python.pick()
    assert path == "/a/python3.12" and "slower" in why   # still usable, and says so
    monkeypatch.setattr(pick_python, "candidates", lambda: ["/c/python3.10", "/d/gone"])
    path, why = pick_python.pick()
    assert path is None and "3.11+" in why
