"""Example questions for the Ask page, in Turkish and English.

Taken from `fixtures/questions.jsonl` (FORMAT.md §2) when it exists, for the chosen
workspace and asker, one per question type and language; otherwise a short built-in
list that names nobody, so it fits any store.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "fixtures" / "questions.jsonl"
LIMIT = 14


@dataclass(frozen=True)
class Example:
    question: str
    lang: str
    kind: str              # the question type, or "general"
    now: str | None        # the moment the question was written for

    @property
    def label(self) -> str:
        return f"{self.lang.upper()} · {self.question}"


BUILT_IN = (
    Example("Son siparişlerin durumu nedir?", "tr", "general", None),
    Example("Hangi faturalar henüz ödenmedi?", "tr", "general", None),
    Example("Geçen ay hangi şikayetler geldi?", "tr", "general", None),
    Example("Which orders were delivered last month?", "en", "general", None),
    Example("Who is the contact person at our largest customer?", "en", "general", None),
    Example("Which complaints are still open?", "en", "general", None),
)


def _read(path: Path) -> list[dict[str, object]]:
    rows = []
    try:
        with path.open(encoding="utf-8") as fh:
            for raw in fh:
                raw = raw.strip()
                if raw:
                    try:
                        rows.append(json.loads(raw))
                    except json.JSONDecodeError:
                        continue  # a broken line in a sample file must not break the page
    except OSError:
        return []
    return rows


def examples(workspace: str, member: str | None, path: Path = QUESTIONS) -> list[Example]:
    """Questions written for this workspace and this asker (None: no person), varied by
    type and language; the built-in list when the file is missing or has none."""
    picked: list[Example] = []
    seen_types: set[tuple[str, str]] = set()
    seen_text: set[str] = set()
    rows = [r for r in _read(path) if r.get("workspace") == workspace and (r.get("as") or None) == member]
    # Round-robin over (type, language) so the list shows every kind of question.
    for pass_ in range(3):
        for r in rows:
            q = str(r.get("question") or "").strip()
            key = (str(r.get("type") or "general"), str(r.get("lang") or "?"))
            if not q or q in seen_text or (pass_ == 0 and key in seen_types):
                continue
            picked.append(Example(q, key[1], key[0], str(r["now"]) if r.get("now") else None))
            seen_text.add(q)
            seen_types.add(key)
            if len(picked) >= LIMIT:
                return picked
    return picked or list(BUILT_IN)
