"""What a question asks, read without any model: its words, record codes, the kinds of
thing it names (in Turkish or English), its period words, and its matching stems."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from brain import text as tx
from brain.read.trace import QuestionInfo

# Words asking what someone said or wrote: the answer is in a conversation, not a record.
_SAID = {"dedi", "demiş", "söyledi", "söylemiş", "bildirdi", "bildirmiş", "yazdı", "yazmış", "iletti",
         "sordu", "istedi", "mesaj", "mesajında", "mesajı", "şikayet etti",
         "said", "say", "says", "wrote", "write", "told", "tell", "reported", "report", "asked", "mentioned",
         "message",
         # (what someone said, as a relative clause: "X'in dediği beyanname", "bahsettiği
         # konteyner"; the channels are _THROUGH_CHANNEL's)
         "dediği", "bahsetti", "bahsettiği", "bahsetmiş", "sorduğu", "yazdığı", "söylediği",
         "ilettiği", "bildirdiği", "mentions", "mention",
         # (talked about: "Kemal Demir ile en son ne konuşuldu?")
         "konuştu", "konuş", "konuşul", "konuştuk", "konuştuğu", "görüşül", "görüştük", "görüştüğü",
         "talked", "discussed", "spoke"}
# A channel's name asks what was said through it when the question says so: "by e-mail",
# "in her email", "via WhatsApp", "e-postasında", "WhatsApp'tan", "mailiyle". Alone it may
# ask for a record's field ("the supplier's e-mail", "e-posta adresi", "WhatsApp numarası"),
# so the question's text is read, not its words (which lose the hyphen and the apostrophe).
_CHANNEL = r"(?:e-?mail|mail|e-?posta|whatsapp)"
_CHANNEL_STARTS = ("mail", "email", "posta", "eposta", "whatsapp")
_THROUGH_CHANNEL = re.compile(
    # English: a preposition before it ("by e-mail", "in her last email", "via WhatsApp")
    r"\b(?:by|in|via|through|over|per|on)\s+(?:(?:a|an|the|his|her|their|its|my|our|your|this|that|"
    r"last|latest|first)\s+)*" + _CHANNEL + r"s?\b(?!\s+(?:address|number|id)\b)"
    # Turkish: in it, from it, with it, after a possessive or not ("e-postasında",
    # "WhatsApp'tan", "mailiyle", "e-postayla")
    r"|\b" + _CHANNEL + r"['’]?(?:s?[ıi]n?|[ıi])?(?:[dt][ae]n?|y?l[ae])(?:ki)?\b")


def _asks_said(question: str, words: tuple[str, ...]) -> bool:
    """Whether the question asks what someone said or wrote: a word of _SAID, or a
    channel's name read as the way something was said."""
    if any(c in _SAID for w in words for c in tx.stem_candidates(w)):
        return True
    # (the pattern only where a channel's name is: most questions name none)
    return (any(w.startswith(_CHANNEL_STARTS) for w in words)
            and _THROUGH_CHANNEL.search(tx.tr_lower(question)) is not None)


# An amount written with thousands ("33.600", "1,250.00") or a number of five digits or
# more: a year ("2026") is not one.
_AMOUNT = re.compile(r"\d{1,3}(?:[.,]\d{3})+(?:[.,]\d+)?|\d{5,}(?:,\d+)?")


def day_forms(question: str, now: datetime) -> tuple[str, ...]:
    """The days a question names by day and month (text.named_days: "11 Haziran'daki
    duruşma", "the hearing on 11 June") as synced records write them in their fields,
    2026-06-11 and 11.06.2026: a record stating one is one the question may single out
    (anchors.AMOUNTS_SQL)."""
    return tuple(f for day in tx.named_days(question, now) for f in (f"{day:%Y-%m-%d}", f"{day:%d.%m.%Y}"))


def amounts(words: tuple[str, ...]) -> tuple[str, ...]:
    """A question's amounts (_AMOUNT), which single out one thing: the records stating one
    are anchors (anchors.AMOUNTS_SQL), and a period question giving one asks for that
    thing, not for everything the period holds."""
    return tuple(dict.fromkeys(w for w in words if _AMOUNT.fullmatch(w)))


# Words asking for the newest of something ("en son kesilen fatura", "the latest invoice");
# a period ("son 7 gün", "last week") is read as a period instead.
_LATEST = re.compile(r"\b(?:son|sonuncu|latest|most recent|newest|last)\b")

# Verbs of paying ask for the payment ("ne kadar yatırdılar", "ödediler mi", "did they pay"),
# matched by their suffix-stripped forms (text.stem_candidates: "yatırdılar" -> yatır).
_IMPLIED_KINDS = {"ödendi": "payment", "ödenmiş": "payment", "ödenen": "payment", "ödenmedi": "payment",
                  "öde": "payment", "ödemiş": "payment", "yatır": "payment", "yatırıl": "payment",
                  "yatırılan": "payment", "yatırılmış": "payment",
                  "paid": "payment", "tahsil": "payment", "unpaid": "payment", "pay": "payment",
                  "settled": "payment"}


class Worded(Protocol):
    """What the read's first statements ask by (the name lookups, the fused statement)."""

    @property
    def words(self) -> tuple[str, ...]: ...
    @property
    def codes(self) -> tuple[str, ...]: ...
    @property
    def terms(self) -> tuple[str, ...]: ...
    @property
    def text(self) -> str: ...
    @property
    def now(self) -> datetime: ...


class Wording:
    """The question's words and record codes, and its keyword terms: the part of its
    reading that the read's first statements need, each part read when first asked for.
    The name lookups need only the words and codes, so they go out before the terms are
    read (their attribute words and period words); the fused statement follows, and the
    rest of the question (its kinds, stems, what it asks of a conversation) is read while
    the server answers (brain.read.run)."""

    def __init__(self, question: str, now: datetime) -> None:
        self.text, self.now = question, now
        self.words: tuple[str, ...] = tuple(tx.words(question))
        self.codes: tuple[str, ...] = tuple(dict.fromkeys(tx.codes(question)))

    @functools.cached_property
    def expansions(self) -> tuple[str, ...]:
        return tuple(tx.expand_terms(self.text))

    @functools.cached_property
    def period(self) -> tx.Period | None:
        return tx.parse_period(self.text, self.now)

    @functools.cached_property
    def terms(self) -> tuple[str, ...]:
        """Full-text terms, both languages: the words but stop and period words, and the
        attribute words the question's concepts bring."""
        period_words = set(tx.words(self.period.words)) if self.period else set()
        terms = [w for w in self.words if w not in tx.STOPWORDS and len(w) > 1 and w not in period_words]
        terms += [t for t in self.expansions if t not in terms]
        return tuple(dict.fromkeys(terms))


@dataclass(frozen=True)
class Question:
    info: QuestionInfo
    words: tuple[str, ...]
    stems: frozenset[str]
    kinds: tuple[str, ...]
    period: tx.Period | None
    now: datetime
    terms: tuple[str, ...]        # full-text terms, both languages
    conversation: bool            # asks what someone said or wrote
    latest: bool = False          # asks for the newest of something ("en son kesilen fatura"), not a period

    @property
    def codes(self) -> tuple[str, ...]:
        return self.info.codes

    @property
    def amounts(self) -> tuple[str, ...]:
        return amounts(self.words)

    @property
    def text(self) -> str:
        return self.info.text


def read_words(question: str, now: datetime) -> Wording:
    """The first part of `analyse`: what the read's first statements ask by."""
    return Wording(question, now)


def analyse(question: str, now: datetime, wording: Wording | None = None) -> Question:
    """The whole question; `wording`: its first part, if read already (`read_words`)."""
    wording = wording or read_words(question, now)
    words, codes, expansions, period = wording.words, wording.codes, wording.expansions, wording.period
    kinds = list(tx.kinds_in(question))
    seen = {k for _, k in kinds}
    for w in words:
        for cand in tx.stem_candidates(w):
            kind = _IMPLIED_KINDS.get(cand)
            if kind and kind not in seen:
                kinds.append((w, kind))
                seen.add(kind)
    stems = frozenset(tx.stems(question))
    info = QuestionInfo(
        text=question, words=words, codes=codes, stems=tuple(sorted(stems)), kinds=tuple(kinds),
        expansions=expansions,
        period=(period.words, period.start.isoformat(), period.end.isoformat()) if period else None)
    said = _asks_said(question, words)
    latest = period is None and _LATEST.search(tx.tr_lower(question)) is not None
    return Question(info=info, words=words, stems=stems, kinds=tuple(k for _, k in kinds), period=period,
                    now=now, terms=wording.terms, conversation=said, latest=latest)
