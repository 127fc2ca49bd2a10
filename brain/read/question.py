"""What a question asks, read without any model: its words, record codes, the kinds of
thing it names (in Turkish or English), its period words, and its matching stems."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from brain import text as tx
from brain.read.trace import QuestionInfo

# Status words that imply the thing to reach: "ödendi mi?" asks about a payment.
# Words asking what someone said or wrote: the answer is in a conversation, not a record.
_SAID = {"dedi", "demiş", "söyledi", "söylemiş", "bildirdi", "bildirmiş", "yazdı", "yazmış", "iletti",
         "sordu", "istedi", "mesaj", "mesajında", "mesajı", "e-posta", "eposta", "whatsapp", "şikayet etti",
         "said", "say", "says", "wrote", "write", "told", "tell", "reported", "report", "asked", "mentioned",
         "message", "email", "e-mail"}

_IMPLIED_KINDS = {"ödendi": "payment", "ödenmiş": "payment", "ödenen": "payment", "ödenmedi": "payment",
                  "paid": "payment", "tahsil": "payment", "unpaid": "payment"}


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


def analyse(question: str, now: datetime) -> Question:
    words = tuple(tx.words(question))
    codes = tuple(dict.fromkeys(tx.codes(question)))
    kinds = list(tx.kinds_in(question))
    seen = {k for _, k in kinds}
    for w in words:
        for cand in tx.stem_candidates(w):
            kind = _IMPLIED_KINDS.get(cand)
            if kind and kind not in seen:
                kinds.append((w, kind))
                seen.add(kind)
    expansions = tuple(tx.expand_terms(question))
    period = tx.parse_period(question, now)
    stems = frozenset(tx.stems(question))
    period_words = set(tx.words(period.words)) if period else set()
    terms = [w for w in words if w not in tx.STOPWORDS and len(w) > 1 and w not in period_words]
    terms += [t for t in expansions if t not in terms]
    info = QuestionInfo(
        text=question, words=words, codes=codes, stems=tuple(sorted(stems)), kinds=tuple(kinds),
        expansions=expansions,
        period=(period.words, period.start.isoformat(), period.end.isoformat()) if period else None)
    said = any(c in _SAID for w in words for c in tx.stem_candidates(w))
    return Question(info=info, words=words, stems=stems, kinds=tuple(k for _, k in kinds), period=period,
                    now=now, terms=tuple(dict.fromkeys(terms)), conversation=said)
