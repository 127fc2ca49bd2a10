"""The library type-checks (mypy on brain/, settings in pyproject.toml)."""

from __future__ import annotations

from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parent.parent


def test_brain_type_checks() -> None:
    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), str(ROOT / "brain")])
    assert status == 0, out + err
