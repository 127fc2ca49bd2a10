"""Docs as tests: every command and setting the code offers is named in the README."""

from __future__ import annotations

import re
from pathlib import Path

from brain.__main__ import build_parser

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_cli_command_is_in_the_readme() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name in sub.choices:  # type: ignore[union-attr]
        assert f"python -m brain {name}" in README, name


def test_every_environment_setting_is_in_the_readme() -> None:
    names = set()
    for path in list((ROOT / "brain").rglob("*.py")) + list((ROOT / "explorer").rglob("*.py")) + \
            list((ROOT / "pages").rglob("*.py")) + [ROOT / "app.py"]:
        names |= set(re.findall(r"""environ(?:\.get)?\(\s*["']((?:BRAIN|DATABASE)_[A-Z_]+)["']""",
                                path.read_text(encoding="utf-8")))
        names |= set(re.findall(r"""environ\[\s*["']((?:BRAIN|DATABASE)_[A-Z_]+)["']""",
                                path.read_text(encoding="utf-8")))
    assert {"DATABASE_URL", "BRAIN_DATA_DIR", "BRAIN_EMBEDDER"} <= names
    for name in names:
        assert f"`{name}`" in README, name


def test_readme_shows_the_two_commands() -> None:
    assert "make run" in README and "make test" in README
    assert "make test" in (ROOT / ".ci" / "run").read_text()
