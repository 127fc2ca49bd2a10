"""Language layer for Turkish and English text: casing, folding, tokens, stems, periods.

The writer uses it to link names in messages to entities; the read path uses it for
anchors, ranking, period words and trigram vectors. Pure standard library, no database.
"""

from __future__ import annotations

import bisect
import calendar
import math
import re
import unicodedata
import zlib
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache
from typing import Generic, TypeVar

__all__ = [
    "ATTRIBUTE_WORDS", "CODE_RE", "KIND_PARENTS", "KIND_WORDS", "NameIndex", "Period", "RELATION_CONCEPTS",
    "STOPWORDS", "TRIGRAM_DIM", "attribute_phrase_positions", "canonical_kind", "codes", "concept_positions",
    "expand_terms", "find_mentions", "fold", "fold_joined", "kind_concepts", "kind_spans", "kinds_in",
    "name_text", "named_days", "normalize_for_search", "parse_period", "relation_words", "stem_candidates",
    "stem_set", "stems", "tr_lower", "trigram_similarity", "trigrams", "word_forms", "word_kinds", "words",
]

K = TypeVar("K", bound=Hashable)

# Every apostrophe people type before a Turkish suffix ("Yapı'nın", "Yapı’nın", "Yapı`nın").
_APOSTROPHES = "'’‘`´ʼ"
_APOS_RE = re.compile(f"[{_APOSTROPHES}]")
# Unicode hyphens count as '-', so a pasted "SP‐2026‐0393" stays one code.
_HYPHENS: dict[str, str | int | None] = {"\u2010": "-", "\u2011": "-"}
_HYPHEN_TABLE = str.maketrans(_HYPHENS)
_TURKISH_LETTERS = frozenset("çğıöşüâîû")
_VOWELS = frozenset("aeıioöuüâîû")


# --------------------------------------------------------------------------- casing, folding

_DOTTED_I_RE = re.compile("i\u0307+")


def tr_lower(s: str) -> str:
    """Turkish-aware lower case: 'İ'→'i', 'I'→'ı', then str.lower(); NFC; idempotent."""
    t = unicodedata.normalize("NFC", s).replace("İ", "i").replace("I", "ı").lower()
    # Text lowered elsewhere by str.lower() carries 'i' + COMBINING DOT ABOVE for 'İ'.
    t = _DOTTED_I_RE.sub("i", t)
    return unicodedata.normalize("NFC", t)


_FOLD_TABLE = str.maketrans({"ı": "i", **{a: None for a in _APOSTROPHES}, **_HYPHENS})


_NOT_WORD_RE = re.compile(r"[^\w-]|_")
_ASTRAL_RE = re.compile("[\U00010000-\U0010FFFF]")
# Combining marks of the Basic Multilingual Plane, found once (~30 ms): removing them is
# one translate() instead of a category lookup per character. A mark beyond it (rare) is
# caught by the check that follows.
_MARKS_TABLE = {cp: None for cp in range(0x10000) if unicodedata.category(chr(cp)).startswith("M")}


def _strip_marks(t: str) -> str:
    t = t.translate(_MARKS_TABLE)
    if _ASTRAL_RE.search(t):   # outside the table: ask each character
        t = "".join(c for c in t if not unicodedata.category(c).startswith("M"))
    return t


@lru_cache(maxsize=65536)
def fold(s: str) -> str:
    """The name key: tr_lower, Turkish letters to ASCII, punctuation to spaces.

    "Ağaoğlu Yapı A.Ş." → "agaoglu yapi a s"; "Yapı'nın" → "yapinin" (apostrophes
    vanish, so the suffix sticks to the word as in unpunctuated typing). '-' survives
    only inside a token that has a digit ("sp-2026-0393"); "e-posta" → "e posta".
    Other combining marks are stripped too (é→e). Idempotent.
    """
    if s.isascii():
        # ASCII has no marks to strip or compose, and its 'I' lowers to 'ı', which folds
        # to 'i' again: plain lower() (most English text, and most question spans)
        t = s.lower().translate(_FOLD_TABLE)
    else:
        t = _strip_marks(unicodedata.normalize("NFD", tr_lower(s).translate(_FOLD_TABLE)))
    # (a regular expression, not a loop over characters: \w is exactly str.isalnum()
    # and '_', so this keeps letters, digits and '-' and turns the rest into spaces)
    return _fold_tokens(_NOT_WORD_RE.sub(" ", t))


def fold_joined(folded: Sequence[str]) -> str:
    """fold() of words joined by spaces, from each word's own fold(): fold works character
    by character and then splits at white space, so the joined words' key is their keys
    joined, the empty ones left out (tests/test_text.py checks the two agree)."""
    return " ".join(f for f in folded if f)


def _fold_tokens(t: str) -> str:
    """The last step of fold(): its space-separated tokens, a '-' kept only inside a
    token that has a digit, recomposed (NFC)."""
    out: list[str] = []
    for tok in t.split():
        if "-" in tok:
            parts = [p for p in tok.split("-") if p]
            if len(parts) > 1 and any(c.isdigit() for c in tok):
                out.append("-".join(parts))
            else:
                out.extend(parts)
        else:
            out.append(tok)
    # Only Hangul jamo can recompose here (no marks are left); NFC keeps fold(fold(x)) stable.
    return unicodedata.normalize("NFC", " ".join(out))


def _ascii_fold_word(w: str) -> str:
    """fold() of one token without splitting it (codes keep '/' and '.')."""
    t = unicodedata.normalize("NFD", w.translate(_FOLD_TABLE))
    return unicodedata.normalize("NFC", _strip_marks(t))


# --------------------------------------------------------------------------- tokens, codes

# A number with thousands/decimal separators ("45.000", "1.250.000,00") or a run of
# letters/digits joined by '-' or '/'; an apostrophe suffix after either is consumed.
_TOKEN_RE = re.compile(
    rf"(\d+(?:[.,]\d+)+|[^\W_]+(?:[-/][^\W_]+)*)(?:[{_APOSTROPHES}][^\W\d_]+)?"
)

CODE_RE = re.compile(r"(?<![\w-])[A-Za-z]{1,12}-\d+(?:-[A-Za-z0-9]+)*(?!\w)"
                     r"|(?<![\w/.-])(?:19|20)\d\d/\d{1,7}(?![\w/-])(?!\.\d)")
"""Record codes such as SP-2026-0393, INV-2026-0118, SO-1001, T-77, in any case, and a
year's serial numbers, 2026/418 (a court file's "2026/418 E.", an invoice series), but not
dates (2026/04/15).

Letters are spelled [A-Za-z] rather than using re.IGNORECASE, which would also let
'ı' and 'İ' into a code."""


def _has_digit(s: str) -> bool:
    # (letters are never digits: most tokens are answered without a loop)
    return not s.isalpha() and any(c.isdigit() for c in s)


def words(s: str) -> list[str]:
    """Tokens of a text, tr_lower'ed but not folded, apostrophe suffixes cut.

    Codes ("SP-2026-0393'ün" → "sp-2026-0393"), plain numbers and amounts ("45.000")
    stay whole. A token with a digit is an identifier and is lowered without the
    Turkish I rule, so "INV-1" and "inv-1" agree; letter-only words joined by '-' or
    '/' are split ("e-posta" → "e", "posta").
    """
    return list(_words(s))


# A question is read for its words, kinds, expansions, period and stems: five readings of
# one text, split once. Readers here take the tuple; `words` gives callers a list of their own.
@lru_cache(maxsize=1024)
def _words(s: str) -> tuple[str, ...]:
    out: list[str] = []
    for ws, _ in _token_runs(s):
        out.extend(ws)
    return tuple(out)


def _token_runs(s: str) -> Iterator[tuple[tuple[str, ...], bool]]:
    """Each token's words (`_words` is them all, in order), and whether an apostrophe
    ending followed it ("lab'ın", "pet's": the ending is cut)."""
    text = unicodedata.normalize("NFC", s).translate(_HYPHEN_TABLE)
    for m in _TOKEN_RE.finditer(text):
        yield _token_words(m.group(1)), m.end() > m.end(1)


# Ranking splits every candidate fact into words and stems: the same few thousand tokens
# recur across a store's texts, so each token is lowered and stemmed once per process.
@lru_cache(maxsize=131072)
def _token_words(core: str) -> tuple[str, ...]:
    if _has_digit(core):
        return (core.lower() if core.isascii() else tr_lower(core),)
    if "-" in core or "/" in core:
        return tuple(tr_lower(p) for p in re.split(r"[-/]", core) if p)
    return (tr_lower(core),)


def codes(s: str) -> list[str]:
    """Record codes in a text, upper-cased, in order, without repeats."""
    seen: dict[str, None] = {}
    for m in CODE_RE.finditer(unicodedata.normalize("NFC", s).translate(_HYPHEN_TABLE)):
        seen.setdefault(m.group(0).upper(), None)
    return list(seen)


# --------------------------------------------------------------------------- suffix stripping

_V, _C, _ANY = "v", "c", "any"
# Suffixes that begin with a buffer letter (y/n/s) follow a vowel, bare vowel-initial
# ones follow a consonant: checking that keeps "dünya" from yielding "dün".
_SUFFIX_GROUPS: dict[str, str] = {
    _V: "nın nin nun nün yı yi yu yü ya ye na ne nı ni nu nü nda nde ndan nden ndaki ndeki "
        "yla yle sı si su sü mız miz muz müz nız niz nuz nüz ydı ydi ydu ydü yken",
    _C: "ın in un ün ı i u ü a e ım im um üm ımız imiz umuz ümüz ınız iniz unuz ünüz la le",
    _ANY: "da de ta te dan den tan ten daki deki taki teki ki kü ku ler lar leri ları "
          "dır dir dur dür tır tir tur tür dı di du dü tı ti tu tü",
}
_SUFFIXES: tuple[tuple[str, str], ...] = tuple(sorted(
    ((suf, need) for need, group in _SUFFIX_GROUPS.items() for suf in group.split()),
    key=lambda x: -len(x[0]),
))
# The same suffixes by length, longest first, each with its entries in the order above: a
# word ends in at most one suffix of each length, so the walk below looks up its last L
# letters for each length L instead of testing every suffix (a first-seen word cost ~100
# endswith calls a step).
_SUFFIXES_BY_LENGTH: tuple[tuple[int, dict[str, tuple[tuple[str, str], ...]]], ...] = tuple(
    (n, {suf: tuple(e for e in _SUFFIXES if e[0] == suf) for suf, _ in _SUFFIXES if len(suf) == n})
    for n in sorted({len(suf) for suf, _ in _SUFFIXES}, reverse=True))
# Consonant softening before a vowel suffix (talep→talebi, kitap→kitabı, renk→rengi,
# diyalog→diyaloğu): a stripped base gets its dictionary form back.
_SOFTENING: dict[str, tuple[str, ...]] = {"b": ("p",), "c": ("ç",), "d": ("t",), "ğ": ("k", "g"), "g": ("k",)}
_MAX_STRIPS = 4


@lru_cache(maxsize=65536)
def _stem_candidates(word: str) -> tuple[str, ...]:
    return _candidates(word, _suffix_bases)


def _candidates(word: str, bases: Callable[[str], dict[str, None]]) -> tuple[str, ...]:
    """_stem_candidates with the suffix walk given (`bases`: a lowered word's bases, in
    the order found), so that tests can hold the walk to another one."""
    w = tr_lower(word)
    out: dict[str, None] = {w: None}
    cut = _APOS_RE.search(w)
    if cut:
        w = w[: cut.start()]
        if not w:
            return tuple(out)
        out[w] = None
    if len(w) < 3 or _has_digit(w) or not w.isalpha():
        return tuple(out)
    found = bases(w)
    # English plurals ("orders", "invoices", "companies"), only for ASCII words.
    if w.isascii():
        if w.endswith("ies") and len(w) > 4:
            found.setdefault(w[:-3] + "y", None)
        elif w.endswith("es") and len(w) > 4:
            found.setdefault(w[:-1], None)
            found.setdefault(w[:-2], None)
        elif w.endswith("s") and not w.endswith("ss") and len(w) > 3:
            found.setdefault(w[:-1], None)
    for base in sorted(found, key=len, reverse=True):  # stable: ties keep discovery order
        out.setdefault(base, None)
    return tuple(out)


def _suffix_bases(w: str) -> dict[str, None]:
    """The bases of a lowered word with up to _MAX_STRIPS Turkish suffixes stripped (each
    also in its softened dictionary form), in the order the walk finds them."""
    found: dict[str, None] = {}
    walked: set[str] = set()

    def walk(x: str, depth: int) -> None:
        if depth >= _MAX_STRIPS or x in walked:
            return
        walked.add(x)
        for n, by_suffix in _SUFFIXES_BY_LENGTH:
            for suf, need in by_suffix.get(x[-n:], ()):
                base = x[: -len(suf)]
                if len(base) < 2 or not any(c in _VOWELS for c in base):
                    continue
                ends_vowel = base[-1] in _VOWELS
                if (need == _V and not ends_vowel) or (need == _C and ends_vowel):
                    continue
                found.setdefault(base, None)
                for soft in _SOFTENING.get(base[-1], ()):
                    found.setdefault(base[:-1] + soft, None)
                walk(base, depth + 1)

    walk(w, 0)
    return found


def stem_candidates(word: str) -> list[str]:
    """The word itself, then every plausible base left by stripping Turkish case,
    possessive, plural, "-ki" and copula suffixes (chains too), longest first.

    "talebindeki" → [..., "talebi", "taleb", "talep", ...]; bases have at least two
    letters. English plurals are undone for ASCII words ("invoices" → "invoice").
    """
    return list(_stem_candidates(word))


@lru_cache(maxsize=65536)
def _folded_candidates(word: str) -> frozenset[str]:
    return frozenset(fold(c) for c in _stem_candidates(word))


# --------------------------------------------------------------------------- stop words, stems

STOPWORDS: frozenset[str] = frozenset("""
ve veya ya yada yahut ile ama fakat ancak lakin çünkü için gibi kadar daha en çok az her hiç
bu şu o bunlar şunlar onlar bunu şunu onu bunun şunun onun buna şuna ona bunda onda burada orada
ben sen biz siz bana sana bize size beni seni bizi sizi benim senin bizim sizin onların
da de ki mi mı mu mü misin mısın musun müsün midir mıdır mudur müdür miydi mıydı muydu müydü
ne neler nedir neydi nelerdir neymiş hangi hangisi hangileri hangisidir kim kimdir kimdi kimin
kime kimi kimler kimlerdir kaç kaçtır kaçta kaçıncı nasıl neden niçin niye nere nerede nereden
nereye neresi bir biri birisi birkaç var vardı yok yoktu olan olarak oldu olduğu olur olmuş ise
eğer sonra diye şey şeyi tüm bütün hep artık hem yani acaba lütfen söyle söyler misin göster
listele ver verir bul tane hakkında ilgili dair üzere
a an the of for to in on at by with from about as into onto over under than then
is are was were be been being am has have had having do does did doing done
what whats which who whom whose when where why how many much
this that these those it its and or but if so not no yes
me my mine our ours we us you your yours i he him his she her hers they them their theirs
there here can could would should will shall may might must please tell show list give find
any all some each every one
""".split())
"""Turkish and English stop words and question words, in tr_lower form."""

_STOP_FOLDED = frozenset(fold(w) for w in STOPWORDS)


def _is_stop(tok: str) -> bool:
    if tok in STOPWORDS:
        return True
    # An English word typed with capital I arrives as 'ı' ("Is" → "ıs").
    if "ı" in tok and tok.replace("ı", "i") in STOPWORDS:
        return True
    # ASCII typing of Turkish ("icin"); only for ASCII tokens, so "iş" is not "is".
    return tok.isascii() and fold(tok) in _STOP_FOLDED


def stems(s: str) -> set[str]:
    """Matching stems for ranking: folded words cut to five letters (F5 stemming).

    Stop words go; tokens with digits (codes, numbers, amounts) and words shorter than
    five letters stay whole; one-letter tokens go. Applied alike to questions and facts.
    """
    out: set[str] = set()
    for tok in _words(s):
        st = _token_stem(tok)
        if st is not None:
            out.add(st)
    return out


@lru_cache(maxsize=50_000)
def stem_set(s: str) -> frozenset[str]:
    """stems(s), frozen and kept per process: a store's texts are ranked (and compared when
    written) again and again."""
    return frozenset(stems(s))


@lru_cache(maxsize=131072)
def _token_stem(tok: str) -> str | None:
    if _is_stop(tok):
        return None
    if _has_digit(tok):
        return _ascii_fold_word(tok)
    f = fold(tok).replace(" ", "")
    if tok.isascii():
        f = _english_base(f)
    return f[:5] if len(f) > 1 else None


_DOUBLE_END = re.compile(r"([b-df-hj-np-tv-z])\1$")


@lru_cache(maxsize=65536)
def _english_base(w: str) -> str:
    """A light English stemmer, so a short word meets its inflections before the cut to
    five letters: "kids" → "kid", "hiking"/"hiked"/"hikes" → "hik", "running" → "run".
    Question and fact go through the same rule, so an odd base still matches itself."""
    if not w.isalpha():
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("ing") and len(w) > 5:
        w = w[:-3]
    elif w.endswith("ed") and len(w) > 4:
        w = w[:-2]
    elif w.endswith("es") and len(w) > 4 and w[-3] in "sxz" or w.endswith(("ches", "shes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        w = w[:-1]
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return _DOUBLE_END.sub(r"\1", w)


# --------------------------------------------------------------------------- lexicons

KIND_WORDS: dict[str, str] = {
    # order
    "sipariş": "order", "satış siparişi": "order", "order": "order", "purchase order": "order",
    # invoice
    "fatura": "invoice", "invoice": "invoice", "bill": "invoice",
    # payment
    "ödeme": "payment", "tahsilat": "payment", "havale": "payment", "payment": "payment",
    # ticket
    "talep": "ticket", "destek talebi": "ticket", "destek kaydı": "ticket", "ticket": "ticket",
    "support ticket": "ticket",
    # complaint
    "şikayet": "complaint", "şikâyet": "complaint", "complaint": "complaint",
    # company (a customer is a company: müşteri ↔ customer)
    "müşteri": "company", "firma": "company", "şirket": "company", "cari": "company",
    "customer": "company", "client": "company", "company": "company", "organization": "company",
    # person (employees are persons)
    "kişi": "person", "iletişim kişisi": "person", "yetkili": "person",
    "çalışan": "person", "personel": "person", "person": "person", "people": "person",
    "contact": "person", "contact person": "person", "employee": "person", "staff": "person",
    "işçi": "person", "worker": "person",
    # (whoever heads a company or a unit is a person: "kooperatifin başkanı")
    "başkan": "person", "müdür": "person", "genel müdür": "person", "yönetici": "person",
    "chairman": "person", "president": "person", "director": "person", "manager": "person",
    # whoever looks after a customer on our side (a person: KIND_PARENTS)
    "temsilci": "account_manager", "müşteri temsilcisi": "account_manager",
    "satış temsilcisi": "account_manager", "account manager": "account_manager",
    "account executive": "account_manager", "sales rep": "account_manager",
    "sales representative": "account_manager", "representative": "account_manager",
    # product
    "ürün": "product", "product": "product",
    # supplier
    "tedarikçi": "supplier", "satıcı": "supplier", "supplier": "supplier", "vendor": "supplier",
    # (who supplies a thing asks for its supplier: "tedarik eden", "who supplies")
    "tedarik eden": "supplier", "supply": "supplier", "supplies": "supplier", "supplied": "supplier",
    # note: the bare Turkish "not" is left out, it is also English "not"
    "notu": "note", "notlar": "note", "note": "note", "memo": "note",
    # message
    "mesaj": "message", "yazışma": "message", "message": "message",
    # Kinds are an open vocabulary (FORMAT.md): the common ones of other businesses, so
    # that a question naming them asks for them whatever the store calls them
    # (kind_concepts reads a node's kind through this table too).
    "sevkiyat": "shipment", "gönderi": "shipment", "shipment": "shipment", "consignment": "shipment",
    "araç": "vehicle", "kamyon": "vehicle", "tır": "vehicle", "vehicle": "vehicle", "truck": "vehicle",
    "lorry": "vehicle",
    "şoför": "driver", "sürücü": "driver", "driver": "driver",
    "sözleşme": "contract", "kontrat": "contract", "contract": "contract", "agreement": "contract",
    "teklif": "quote", "fiyat teklifi": "quote", "quote": "quote", "quotation": "quote",
    "offer": "quote", "offered": "quote", "yenileme teklifi": "quote", "renewal offer": "quote",
    "renewal quote": "quote",
    "depo": "warehouse", "ambar": "warehouse", "warehouse": "warehouse", "depot": "warehouse",
    "proje": "project", "project": "project",
    "kurulum": "installation", "montaj": "installation", "installation": "installation",
    "teknisyen": "technician", "tekniker": "technician", "technician": "technician",
    "usta": "technician", "mechanic": "technician",
    "hammadde": "material", "malzeme": "material", "material": "material", "raw material": "material",
    "iş emri": "work_order", "work order": "work_order", "onarım": "work_order", "repair": "work_order",
    "servis kaydı": "work_order", "service record": "work_order",
    "alacak dekontu": "credit_note", "credit note": "credit_note",
    "toplantı": "meeting", "randevu": "meeting", "meeting": "meeting", "appointment": "meeting",
    "taşeron": "supplier", "subcontractor": "supplier", "nakliyeci": "supplier", "carrier": "supplier",
    "servis talebi": "ticket", "arıza kaydı": "ticket", "service ticket": "ticket",
    "service request": "ticket",
    "sevk": "shipment", "kurum": "company", "institution": "company",
    "kooperatif": "company", "cooperative": "company",
    "laboratuvar": "lab", "lab": "lab", "laboratory": "lab",
    "hastane": "hospital", "hospital": "hospital", "klinik": "clinic", "clinic": "clinic",
    "cihaz": "device", "ekipman": "device", "makine": "device", "device": "device", "equipment": "device",
    "machine": "device",
    "bakım": "maintenance", "maintenance": "maintenance",
    "ihale": "tender", "tender": "tender",
    "yedek parça": "spare_part", "spare part": "spare_part",
    "şantiye": "site", "construction site": "site", "building site": "site",
    "müteahhit": "contractor", "yüklenici": "contractor", "contractor": "contractor",
    "bayi": "dealer", "dealer": "dealer",
    "irsaliye": "delivery_note", "sevk irsaliyesi": "delivery_note", "delivery note": "delivery_note",
    "waybill": "delivery_note",
    "çek": "cheque", "cheque": "cheque",
    # (who drove asks for the driver)
    "driving": "driver", "drove": "driver",
    # hospitality and travel
    "rezervasyon": "booking", "booking": "booking", "reservation": "booking", "konaklama": "booking",
    "booked": "booking",
    "misafir": "guest", "konuk": "guest", "guest": "guest",
    "acente": "agency", "seyahat acentesi": "agency", "agency": "agency", "travel agency": "agency",
    "oda": "room", "room": "room",
    "otel": "hotel", "hotel": "hotel",
    # trade and export
    "ihracat siparişi": "order", "export order": "order",
    "alıcı": "company", "buyer": "company",
    "üretici": "producer", "çiftçi": "producer", "producer": "producer", "grower": "producer",
    "farmer": "producer",
    "parti": "lot", "lot": "lot", "batch": "lot",
    "analiz": "lab_report", "analiz raporu": "lab_report", "laboratuvar raporu": "lab_report",
    "lab report": "lab_report", "lab analysis": "lab_report",
    "test report": "lab_report", "analysis report": "lab_report", "certificate of analysis": "lab_report",
    # a buyer's claim on a lot, an insurance claim on a damaged car: claims, complaints too
    "reklamasyon": "claim", "claim": "claim", "hasar dosyası": "claim", "insurance claim": "claim",
    "poliçe": "policy", "sigorta poliçesi": "policy", "kasko": "policy", "policy": "policy",
    "insurance policy": "policy",
    "parça siparişi": "order", "parts order": "order", "parça": "spare_part",
    "konşimento": "bill_of_lading", "bill of lading": "bill_of_lading",
    "cmr": "delivery_note", "çekici": "vehicle",
    "beyanname": "customs_declaration", "gümrük beyannamesi": "customs_declaration",
    "customs declaration": "customs_declaration", "declaration": "customs_declaration",
    "akreditif": "letter_of_credit", "letter of credit": "letter_of_credit",
    "gümrük müşaviri": "customs_broker", "customs broker": "customs_broker",
    "kredi notu": "credit_note",
    # education
    "öğrenci": "student", "student": "student", "pupil": "student",
    "öğretmen": "teacher", "eğitmen": "teacher", "teacher": "teacher", "instructor": "teacher",
    "tutor": "teacher",
    "veli": "guardian", "parent": "guardian", "guardian": "guardian",
    "öğrenci kaydı": "enrollment", "enrollment": "enrollment", "enrolment": "enrollment",
    "taksit": "installment", "installment": "installment", "instalment": "installment",
    "ödeme planı": "payment_plan", "taksit planı": "payment_plan", "payment plan": "payment_plan",
    "installment plan": "payment_plan",
    "sınav": "exam", "sınav sonucu": "exam", "exam": "exam", "exam result": "exam",
    "güzergah": "route", "güzergâh": "route", "route": "route", "bus route": "route",
    "class": "course_group", "course group": "course_group",
    # legal
    "dava": "lawsuit", "lawsuit": "lawsuit", "legal case": "lawsuit", "court case": "lawsuit",
    "duruşma": "hearing", "celse": "hearing", "hearing": "hearing",
    "avukat": "lawyer", "lawyer": "lawyer", "attorney": "lawyer", "counsel": "lawyer",
    "müvekkil": "company",
    "vekaletname": "power_of_attorney", "vekalet": "power_of_attorney", "power of attorney": "power_of_attorney",
    "mahkeme": "court", "court": "court",
    "karşı taraf": "counterparty", "counterparty": "counterparty", "opposing party": "counterparty",
    "ücret sözleşmesi": "contract", "fee agreement": "contract",
    # retail and e-commerce
    "iade": "return", "iade talebi": "return", "refund": "return", "return request": "return",
    "kargo": "shipment", "parcel": "shipment", "kargo firması": "supplier",
    "distribütör": "supplier", "distributor": "supplier",
    "marka": "brand", "brand": "brand",
    # insurance
    "sigorta şirketi": "insurer", "sigortacı": "insurer", "insurer": "insurer",
    "insurance company": "insurer", "insurance carrier": "insurer",
    "zeyil": "endorsement", "zeyilname": "endorsement", "endorsement": "endorsement",
    "eksper": "adjuster", "loss adjuster": "adjuster", "claims adjuster": "adjuster", "adjuster": "adjuster",
    # recruitment (a candidate, a worker placed, is a person)
    "aday": "candidate", "candidate": "candidate", "applicant": "candidate",
    "işe yerleştirme": "placement", "yerleştirme": "placement", "placement": "placement",
    "pozisyon": "job", "iş ilanı": "job", "job": "job", "position": "job", "vacancy": "job",
    "puantaj": "timesheet", "timesheet": "timesheet",
    # real estate
    "tapu": "title_deed", "title deed": "title_deed", "deed": "title_deed",
    "portföy": "listing", "ilan": "listing", "listing": "listing",
    # an appraisal (of a flat, a damaged car) and its report
    "ekspertiz": "appraisal", "ekspertiz raporu": "appraisal", "değerleme": "appraisal",
    "değerleme raporu": "appraisal", "appraisal": "appraisal", "valuation": "appraisal",
    "valuation report": "appraisal", "appraisal report": "appraisal",
    # telecom and utilities (a subscriber is a customer)
    "abonelik": "subscription", "abonman": "subscription", "subscription": "subscription",
    "abone": "company", "subscriber": "company",
    "tarife": "tariff", "tariff": "tariff",
    "kesinti": "outage", "outage": "outage",
    "modem": "device", "router": "device",
    # health care, for people and for animals
    "hasta": "patient", "patient": "patient", "hayvan": "patient", "evcil hayvan": "patient",
    "pet": "patient", "animal": "patient",
    "tedavi": "treatment", "muayene": "treatment", "treatment": "treatment", "examination": "treatment",
    "aşı": "vaccination", "aşılama": "vaccination", "vaccination": "vaccination", "vaccine": "vaccination",
    "reçete": "prescription", "prescription": "prescription",
    "doktor": "doctor", "hekim": "doctor", "veteriner": "doctor", "veteriner hekim": "doctor",
    "doctor": "doctor", "physician": "doctor", "vet": "doctor", "veterinarian": "doctor",
    "tahlil": "lab_report", "lab result": "lab_report", "lab sonucu": "lab_report",
    "mülakat": "interview", "iş görüşmesi": "interview", "interview": "interview",
    "şube": "branch", "branch": "branch", "branch office": "branch",
    # events and venues
    "etkinlik": "event", "organizasyon": "event", "event": "event",
    "mekan": "venue", "mekân": "venue", "venue": "venue", "event venue": "venue",
}
"""Word (tr_lower, base form) → canonical entity kind, Turkish and English."""

STORED_KIND_WORDS: dict[str, str] = {"kayit": "enrollment", "sinif": "course_group"}
"""A stored kind's name → canonical kind, where the word names that kind only as a record
kind of its own ("kayit" records of a school are enrolments; "kayıt" in a question is any
record): canonical_kind reads these, a question's words do not."""

KIND_PARENTS: dict[str, str] = {"driver": "person", "technician": "person", "account_manager": "person",
                                 "supplier": "company",
                                 "hospital": "company", "clinic": "company", "contractor": "company",
                                 "dealer": "company", "delivery_note": "shipment", "cheque": "payment",
                                 "guest": "person", "agency": "company", "producer": "supplier",
                                 "customs_broker": "company", "claim": "complaint", "work_order": "ticket",
                                 "student": "person", "teacher": "person", "guardian": "person",
                                 "lawyer": "person", "installment": "payment", "insurer": "company",
                                 "adjuster": "person", "doctor": "person", "candidate": "person"}
"""A canonical kind → the broader kind it is one of: a question asking for a person is
answered by a driver too, one asking for a company by a supplier."""

ATTRIBUTE_WORDS: dict[str, tuple[str, ...]] = {
    "tax_number": ("vergi numarası", "vergi no", "vergi kimlik numarası", "vkn", "tax number", "tax id",
                   "vat number"),
    "iban": ("iban", "hesap numarası", "banka hesabı", "bank account", "account number"),
    "phone": ("telefon", "tel", "gsm", "cep telefonu", "phone", "phone number", "mobile"),
    "email": ("e-posta", "eposta", "email", "e-mail", "mail"),
    "website": ("web sitesi", "website", "site", "web"),
    "address": ("adres", "address"),
    "amount": ("tutar", "toplam", "bedel", "amount", "total"),
    "status": ("durum", "status", "ödendi", "paid", "açık", "open", "kapalı", "closed"),
    "due_date": ("vade", "vade tarihi", "son ödeme tarihi", "due date", "due"),
    "salary": ("maaş", "ücret", "salary", "wage"),
    "credit_limit": ("kredi limiti", "limit", "credit limit"),
    "price": ("fiyat", "birim fiyat", "price", "unit price"),
    "quantity": ("adet", "miktar", "quantity", "qty"),
    "delivery": ("teslimat", "teslim", "kargo", "sevkiyat", "delivery", "shipment", "shipping"),
    "employer": ("çalıştığı", "çalışıyor", "şirketi", "işveren", "works at", "works for", "employer",
                 "employed"),
    "owner": ("sahibi", "sahip", "owner", "owns", "owned", "belongs to"),
    "assignee": ("atanan", "sorumlu", "ilgilenen", "ilgileniyor", "bakan", "bakıyor", "yöneten", "yönetiyor",
                 "assigned", "assignee", "owner", "responsible", "in charge", "handles", "handling",
                 "looks after"),
    "date": ("tarih", "date", "ne zaman", "when"),
    # what a question asks about in one language and a conversation says in the other
    # (the keyword leg then meets the turn: "When am I on annual leave?" and "yıllık
    # izindeyim"); the multilingual embedder alone ranks such pairs low
    "leave": ("izin", "yıllık izin", "leave", "annual leave", "vacation", "day off"),
    "discount": ("indirim", "iskonto", "discount"),
    "delay": ("gecikme", "gecikti", "gecikecek", "delay", "delayed", "late"),
    "deadline": ("son gün", "son tarih", "deadline"),
    "settlement": ("sulh", "uzlaşma", "settlement", "settle"),
    "cancellation": ("iptal", "cancel", "cancelled", "canceled", "cancellation"),
    "approval": ("onay", "onaylandı", "onayladı", "approved", "approval", "approve"),
    "plate": ("plaka", "plate", "license plate", "number plate"),
    "damage": ("hasar", "hasarlı", "damage", "damaged"),
    "report": ("rapor", "raporu", "report"),
    "filed": ("sunuldu", "sunulmuştur", "filed", "submitted"),
    "postponed": ("ertelendi", "ertelenmiştir", "postponed", "rescheduled"),
    "sick": ("hasta", "rapor aldı", "sick", "ill"),
    "weight": ("ağırlık", "kilo", "weight"),
    "warranty": ("garanti", "warranty", "guarantee"),
    "hours": ("kaçta", "çalışma saatleri", "mesai saatleri", "açılış saati", "what time", "opening hours",
              "working hours", "business hours"),
}
"""Concept → its surface words in both languages, used to widen a question."""

RELATION_CONCEPTS = frozenset({"employer", "assignee", "owner"})
"""The concepts above that name a relation between two entities, not a field of one:
their words in either language may name a relation of the store (relation_words)."""


@dataclass(frozen=True)
class _Phrase:
    surface: str
    alts: tuple[frozenset[str], ...]  # folded forms each question word may take


def _phrase(surface: str) -> _Phrase:
    toks = _words(surface)
    alts: list[frozenset[str]] = []
    for tok in toks:
        forms = {fold(tok)}
        if len(toks) > 1:
            # "vergi numarası" is written suffixed; "vergi numaraları" must match it too.
            forms |= {fold(b) for b in _stem_candidates(tok)[1:] if len(b) >= 4}
        alts.append(frozenset(forms))
    return _Phrase(surface, tuple(alts))


def _match_at(ph: _Phrase, qc: list[frozenset[str]], i: int) -> bool:
    n = len(ph.alts)
    return i + n <= len(qc) and all(qc[i + j] & ph.alts[j] for j in range(n))


_KIND_PHRASES: tuple[tuple[_Phrase, str], ...] = tuple(sorted(
    ((_phrase(w), k) for w, k in KIND_WORDS.items()), key=lambda x: -len(x[0].alts)))
_ATTR_PHRASES: dict[str, tuple[_Phrase, ...]] = {
    c: tuple(_phrase(w) for w in ws) for c, ws in ATTRIBUTE_WORDS.items()}


def _by_first(items: list[tuple[_Phrase, str]]) -> dict[str, list[tuple[_Phrase, str]]]:
    """Phrases indexed by the forms of their first word, longest phrases first, so a
    question word only meets the few phrases that can start with it (this runs on the
    recall hot path)."""
    index: dict[str, list[tuple[_Phrase, str]]] = {}
    for ph, payload in sorted(items, key=lambda x: -len(x[0].alts)):
        for form in ph.alts[0]:
            index.setdefault(form, []).append((ph, payload))
    return index


_KIND_INDEX = _by_first(list(_KIND_PHRASES))
_ATTR_INDEX = _by_first([(ph, c) for c, phs in _ATTR_PHRASES.items() for ph in phs])


def _starting_at(index: dict[str, list[tuple[_Phrase, str]]], qc: list[frozenset[str]],
                 i: int) -> list[tuple[_Phrase, str]]:
    seen: dict[int, tuple[_Phrase, str]] = {}
    for form in qc[i]:
        for item in index.get(form, ()):
            seen.setdefault(id(item[0]), item)
    return sorted(seen.values(), key=lambda x: -len(x[0].alts))


def kinds_in(question: str) -> list[tuple[str, str]]:
    """(word as it appeared, tr_lower'ed; canonical kind) for each kind word, in order,
    one entry per kind; suffixed forms ("siparişinin", "invoices") match too."""
    toks = _words(question)
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i, j, kind in kind_spans(question):
        if kind not in seen:
            seen.add(kind)
            out.append((" ".join(toks[i:j]), kind))
    return out


@lru_cache(maxsize=1024)
def kind_spans(question: str) -> tuple[tuple[int, int, str], ...]:
    """Every kind word or phrase of the question, in order: its word positions [i, j) in
    `words(question)` and its canonical kind (the longest phrase at a position wins)."""
    qc = [_folded_candidates(t) for t in _words(question)]
    out: list[tuple[int, int, str]] = []
    i = 0
    while i < len(qc):
        step = 1
        for ph, kind in _starting_at(_KIND_INDEX, qc, i):
            if _match_at(ph, qc, i):
                step = len(ph.alts)
                out.append((i, i + step, kind))
                break
        i += step
    return tuple(out)


_KIND_BY_FOLD: dict[str, str] = {fold(w): k for w, k in KIND_WORDS.items()}
_STORED_KIND_BY_FOLD: dict[str, str] = {**_KIND_BY_FOLD, **{fold(w): k for w, k in STORED_KIND_WORDS.items()}}


def bare_kind_words(question: str) -> frozenset[int]:
    """The positions in `words(question)` of kind words said exactly as the lexicon has
    them, with no ending ("lab", "müşteri"; not "müşterinin", nor "lab'ın" and "pet's",
    whose endings `words` cuts after the apostrophe)."""
    out: set[int] = set()
    i = 0
    for parts, suffixed in _token_runs(question):
        for k, w in enumerate(parts):
            if fold(w) in _KIND_BY_FOLD and not (suffixed and k == len(parts) - 1):
                out.add(i + k)
        i += len(parts)
    return frozenset(out)


def name_text(name: str) -> str:
    """A stored kind's or relation's name as words ("supplier_invoice", "sorumlu-teknisyen"
    -> "supplier invoice", "sorumlu teknisyen")."""
    return name.replace("_", " ").replace("-", " ")


def canonical_kind(kind: str) -> str:
    """The canonical kind a stored kind is ("sevkiyat" -> shipment, "supplier_invoice" ->
    invoice: a compound by its last word, "tedarikci_faturasi" -> invoice with its
    suffix), or the kind itself."""
    parts = fold(name_text(kind)).split()
    found = _STORED_KIND_BY_FOLD.get(" ".join(parts))
    if found is None and parts:
        # the last word as it is, else its longest suffix-stripped form that is a kind word
        found = next((k for c in sorted(_folded_candidates(parts[-1]), key=len, reverse=True)
                      if (k := _STORED_KIND_BY_FOLD.get(c))), None)
    return found or kind


@lru_cache(maxsize=8192)
def word_forms(word: str) -> frozenset[str]:
    """A word's folded forms for matching it with another's (a relation's name with a
    question's words): its close forms (`close_word_forms`) and its five-letter stem, which
    meets the verb forms the suffix walk leaves ("çalıştığı", "calisir" -> calis; "manager",
    "managed" -> manag). Forms under three letters say too little."""
    return close_word_forms(word) | {st for st in stems(word) if len(st) >= 3}


@lru_cache(maxsize=8192)
def close_word_forms(word: str) -> frozenset[str]:
    """A word's folded forms but its five-letter stem: the word, its bases with Turkish
    suffixes stripped ("şefine" -> şefi, şef) and an English word's base ("carries" ->
    carri). Two words sharing one of these are one word inflected; sharing only the stem,
    they may be two ("sigortalı", the insured, and "sigorta", insurance: sigor)."""
    forms = {f for f in _folded_candidates(word) if len(f) >= 3}
    forms.update(base for f in tuple(forms) if f.isascii() and len(base := _english_base(f)) >= 3)
    return frozenset(forms)


@lru_cache(maxsize=65536)
def word_kinds(word: str) -> frozenset[str]:
    """The canonical kinds (broader ones included) a single word names in any of its forms
    ("kişisi" -> person, "teknisyen" -> technician, person), or none: how a relation's name
    says what it leads to ("satinalma_kisisi", "sorumlu_teknisyen"). Asked of every
    question word (anchors), so kept per word like its other readings."""
    found: set[str] = set()
    for form in _folded_candidates(word):
        kind = _KIND_BY_FOLD.get(form)
        if kind is not None:
            found |= kind_concepts(kind)
    return frozenset(found)


@lru_cache(maxsize=4096)
def kind_concepts(kind: str) -> frozenset[str]:
    """The canonical kinds a stored kind stands for, broader ones included: "sevkiyat" and
    "shipment" -> {shipment}; "employee" -> {person}; "supplier_invoice" -> {invoice} (an
    English compound is read by its last word); "driver" -> {driver, person}. A kind no
    kind word names stands for itself. This is what a question's asked kinds meet."""
    canonical = canonical_kind(kind)
    found = {canonical}
    while canonical in KIND_PARENTS and KIND_PARENTS[canonical] not in found:
        canonical = KIND_PARENTS[canonical]
        found.add(canonical)
    return frozenset(found)


def _phrases_in(index: dict[str, list[tuple[_Phrase, str]]],
                question: str) -> Iterator[tuple[int, _Phrase, str]]:
    """Every phrase of `index` the question holds, overlapping ones too, with the position
    of its first word (in `words(question)`) and what it stands for."""
    qc = [_folded_candidates(t) for t in _words(question)]
    for i in range(len(qc)):
        for ph, payload in _starting_at(index, qc, i):
            if _match_at(ph, qc, i):
                yield i, ph, payload


def concept_positions(question: str) -> frozenset[int]:
    """Positions (in `words(question)`) of the words that a kind or attribute phrase of
    the question takes, in any of their forms ("ödemeler", "vergi numarası", "şifresi"):
    words that say what the question asks for, not what it names."""
    return frozenset(k for index in (_KIND_INDEX, _ATTR_INDEX)
                     for i, ph, _ in _phrases_in(index, question) for k in range(i, i + len(ph.alts)))


@lru_cache(maxsize=1024)
def attribute_phrase_positions(question: str) -> frozenset[int]:
    """Positions of the words of the question's attribute phrases of two words or more
    ("vergi numarası", "hesap numarası"): they ask for a value, they name nothing."""
    return frozenset(k for i, ph, _ in _phrases_in(_ATTR_INDEX, question) if len(ph.alts) > 1
                     for k in range(i, i + len(ph.alts)))


@lru_cache(maxsize=1024)
def _concepts_in(question: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """The attribute concepts the question touches, in the order they first appear, and
    the surface phrases it holds them by: one scan, read by expand_terms (the search
    terms) and relation_words (path search), the second time from this cache."""
    firsts: dict[str, int] = {}
    present: set[str] = set()
    for i, ph, concept in _phrases_in(_ATTR_INDEX, question):
        present.add(ph.surface)
        firsts.setdefault(concept, i)
    return tuple(c for _, c in sorted((pos, c) for c, pos in firsts.items())), frozenset(present)


# A record's fields as its memory text states them (brain.write renders "kind id (name)
# | key: value; key: value | rel → ..."): a name right after the start, "; " or " | ",
# its value up to the next "; " or " | ". The one reading of that format here.
_FIELD_RE = re.compile(r"(?:\A|; | \| )([^:;|\n]{1,40}): ")
_FIELD_END = re.compile(r"; | \| ")


@lru_cache(maxsize=50_000)
def record_fields(text: str) -> tuple[tuple[str, str], ...]:
    """A record's fields as (name as written, value), in their order."""
    out = []
    for m in _FIELD_RE.finditer(text):
        end = _FIELD_END.search(text, m.end())
        out.append((m.group(1), text[m.end():end.start() if end else len(text)]))
    return tuple(out)


def _field_key(name: str) -> str:
    return " ".join(fold(name.replace("_", " ").replace("-", " ")).split())


@lru_cache(maxsize=50_000)
def field_names(text: str) -> frozenset[str]:
    """The names of the fields a record's text states, folded, "_" and "-" read as spaces
    ("vergi_no" -> "vergi no")."""
    return frozenset(_field_key(name) for name, _ in record_fields(text))


@lru_cache(maxsize=1024)
def asked_fields(question: str) -> frozenset[str]:
    """The field names that would hold what the question asks, in both languages: every
    word of its attribute concepts, folded ("IBAN'ı" -> "iban", "hesap numarasi", ...)."""
    return frozenset(_field_key(w) for concept in _concepts_in(question)[0] for w in ATTRIBUTE_WORDS[concept])


# the fields named for the day a record is about, not for one of its deadlines or steps
# ("vade", "teslim_tarihi"), and those naming the month it is about; their values as ISO
# dates and months
_DAY_FIELDS = frozenset({"tarih", "date", "Tarih", "Date"})
_MONTH_FIELDS = frozenset({"period", "Period", "dönem", "Dönem", "donem", "month", "Month"})
_ISO_DAY_VALUE = re.compile(r"(\d{4})-(\d{2})-(\d{2})\b")
_ISO_MONTH_VALUE = re.compile(r"(\d{4})-(\d{2})(?![-\d])")


@lru_cache(maxsize=50_000)
def field_days(text: str, any_field: bool = False) -> tuple[date, ...]:
    """The days a record's date field holds ("tarih: 2026-05-16"): when what it records
    happens, where the record's own date is when it was synced (an event booked in March
    takes place in May). `any_field`: every field holding a day ("scheduled_at",
    "vade", "teslim_tarihi")."""
    out = []
    for name, value in record_fields(text):
        if (any_field or name in _DAY_FIELDS) and (m := _ISO_DAY_VALUE.match(value)):
            try:
                out.append(date(int(m.group(1)), int(m.group(2)), int(m.group(3))))
            except ValueError:
                continue
    return tuple(out)


@lru_cache(maxsize=50_000)
def field_months(text: str) -> tuple[date, ...]:
    """The months a record's period field names, each as its first day ("period: 2026-03":
    a production report for March, synced in April)."""
    return tuple(date(int(m.group(1)), int(m.group(2)), 1) for name, value in record_fields(text)
                 if name in _MONTH_FIELDS and (m := _ISO_MONTH_VALUE.match(value)) and 1 <= int(m.group(2)) <= 12)


def record_spans(text: str) -> tuple[tuple[date, date], ...]:
    """The spans of days (end exclusive) a record is about by its fields: the day its date
    field holds, else the month its period field names; none when it has neither (it is
    about the day it was synced)."""
    days = field_days(text)
    if days:
        return tuple((d, d + timedelta(days=1)) for d in days)
    return tuple((m, m.replace(year=m.year + 1, month=1) if m.month == 12 else m.replace(month=m.month + 1))
                 for m in field_months(text))


def period_of_a_record(question: str, period: Period) -> bool:
    """Whether the question's period words qualify a kind word, naming a record by its
    period ("Ekim faturasını", "geçen ayın faturası", "the October invoice", "the invoice
    for October") rather than saying when something happened ("Ekim'de gelen fatura")."""
    toks, said = _words(question), _words(period.words)
    spans = kind_spans(question)
    n = len(said)
    for k in range(len(toks) - n + 1):
        if toks[k:k + n] == said:
            if any(i == k + n for i, _, _ in spans):
                return True
            if k >= 1 and toks[k - 1] in ("for", "from", "of") and any(j == k - 1 for _, j, _ in spans):
                return True
    return False


def expand_terms(question: str) -> list[str]:
    """Surface words (both languages) of every concept the question touches, minus
    those already in it: "vergi numarası" brings "tax number", "vkn", ..."""
    concepts, present = _concepts_in(question)
    out: list[str] = []
    for concept in concepts:
        for w in ATTRIBUTE_WORDS[concept]:
            if w not in present and w not in out:
                out.append(w)
    return out


def relation_words(question: str) -> list[str]:
    """The words of the question's relational concepts (RELATION_CONCEPTS) in both
    languages, one word each: "atanan" brings "assigned", "çalıştığı" brings "works",
    "employer", so that a relation named in the other language is still named."""
    out: dict[str, None] = {}
    for concept in _concepts_in(question)[0]:
        if concept in RELATION_CONCEPTS:
            for surface in ATTRIBUTE_WORDS[concept]:
                out.update(dict.fromkeys(_words(surface)))
    return list(out)


# --------------------------------------------------------------------------- periods

@dataclass(frozen=True)
class Period:
    """A time span named in a question: [start, end), and the words that named it."""

    start: datetime
    end: datetime
    words: str


_TR_MONTHS = "ocak şubat mart nisan mayıs haziran temmuz ağustos eylül ekim kasım aralık".split()
# Spelled out: calendar.month_name follows the process locale.
_EN_MONTHS = ("january february march april may june july august september october november "
              "december").split()
_MONTHS: tuple[tuple[str, int], ...] = tuple(
    (fold(name), m + 1) for names in (_TR_MONTHS, _EN_MONTHS) for m, name in enumerate(names))
# The month names by their first three letters (every name has three), in _MONTHS' order:
# a question's every word is tried as a month, and most share no first three with any.
_MONTHS_BY_HEAD: dict[str, tuple[tuple[str, int], ...]] = {
    head: tuple(nm for nm in _MONTHS if nm[0][:3] == head) for head in {name[:3] for name, _ in _MONTHS}}
# Endings a month name takes in a time phrase ("eylülde", "ekimdeki", "martın", "kasıma").
# Possessive forms are absent on purpose: "aralığı" is "its range", not December.
_MONTH_SUFFIXES = frozenset(["", *(fold(s) for s in (
    "da de ta te daki deki taki teki dan den tan ten ın in un ün nın nin nun nün "
    "a e ya ye ki dır dir tır tir").split())])
# English "may" is a month only next to "in"/"since"/... or a year.
_MAY_CUES = frozenset("in during since until by of early late mid".split())

_UNITS: dict[str, str] = {"gun": "day", "day": "day", "hafta": "week", "week": "week",
                          "ay": "month", "month": "month", "yil": "year", "sene": "year", "year": "year"}
_THIS = frozenset({"bu", "this", "current"})
_LAST = frozenset({"gecen", "gectigimiz", "onceki", "last", "previous", "prior"})
_ROLLING = frozenset({"son", "past"})
_NEXT = frozenset({"gelecek", "onumuzdeki", "next", "coming"})
_NUMBER_WORDS: dict[str, int] = {
    **{fold(w): n for n, w in enumerate("bir iki üç dört beş altı yedi sekiz dokuz on".split(), 1)},
    **{w: n for n, w in enumerate("one two three four five six seven eight nine ten".split(), 1)},
}
_ISO_DAY = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_ISO_MONTH = re.compile(r"(\d{4})-(\d{1,2})")
_DMY = re.compile(r"(\d{1,2})[./](\d{1,2})[./](\d{4})")
_YEAR = re.compile(r"(19|20)\d\d")
_YEAR_SUFFIXED = re.compile(rf"\b((?:19|20)\d\d)[{_APOSTROPHES}](?:de|da|te|ta|deki|daki|teki|taki|den|dan|ten|tan)\b")


def _add_months(dt: datetime, n: int) -> datetime:
    y, m = divmod(dt.month - 1 + n, 12)
    year, month = dt.year + y, m + 1
    return dt.replace(year=year, month=month, day=min(dt.day, calendar.monthrange(year, month)[1]))


def _month_span(year: int, month: int, like: datetime) -> tuple[datetime, datetime]:
    start = like.replace(year=year, month=month, day=1, hour=0, minute=0, second=0, microsecond=0)
    return start, _add_months(start, 1)


def _unit_span(unit: str, day0: datetime, back: int) -> tuple[datetime, datetime]:
    """The calendar unit containing day0, moved `back` units into the past."""
    if unit == "day":
        start = day0 - timedelta(days=back)
        return start, start + timedelta(days=1)
    if unit == "week":  # Monday-based
        start = day0 - timedelta(days=day0.weekday() + 7 * back)
        return start, start + timedelta(days=7)
    if unit == "month":
        start = _add_months(day0.replace(day=1), -back)
        return start, _add_months(start, 1)
    start = day0.replace(month=1, day=1, year=day0.year - back)
    return start, start.replace(year=start.year + 1)


def _rolling(unit: str, n: int, day0: datetime) -> tuple[datetime, datetime]:
    # Today plus the n units before it, so a fact dated exactly n days ago is in.
    end = day0 + timedelta(days=1)
    if unit == "day":
        return day0 - timedelta(days=n), end
    if unit == "week":
        return day0 - timedelta(days=7 * n), end
    return _add_months(day0, -n if unit == "month" else -12 * n), end


def _number(tok: str) -> int | None:
    if tok.isdigit() and 0 < len(tok) <= 4:
        return int(tok)
    return _NUMBER_WORDS.get(fold(tok))


def _year_of(tok: str) -> int | None:
    return int(tok) if _YEAR.fullmatch(tok) else None


def parse_period(question: str, now: datetime) -> Period | None:
    """The period a question names, relative to `now` (naive means UTC); None if none.

    Turkish and English relative words (bugün, geçen ay, son 7 gün, this week, last
    year, past 30 days), month names with endings ("eylülde", "Ekim'de": the latest
    such month not after now, but next month's name reads as next month), periods ahead
    ("önümüzdeki hafta", "next month") and ISO dates. Weeks start on Monday; end is
    exclusive.
    When several match, the shortest span wins, then the earliest in the question.
    """
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    day0 = now.replace(hour=0, minute=0, second=0, microsecond=0)
    toks = _words(question)
    ftoks = [fold(t) for t in toks]
    qc = [_folded_candidates(t) for t in toks]
    n = len(toks)
    found: list[tuple[int, Period]] = []

    def add(i: int, j: int, span: tuple[datetime, datetime]) -> None:
        found.append((i, Period(span[0], span[1], " ".join(toks[i:j]))))

    def unit_at(k: int) -> str | None:
        if k >= n:
            return None
        return next((_UNITS[c] for c in qc[k] if c in _UNITS), None)

    # An explicit year anywhere ("2025 yılında", "in 2025", "2025'te") also dates a bare month.
    year_hint: int | None = None
    m = _YEAR_SUFFIXED.search(question)
    if m:
        year_hint = int(m.group(1))
        span = _unit_span("year", day0.replace(year=year_hint, month=1, day=1), 0)
        found.append((n, Period(span[0], span[1], m.group(0))))
    for i, tok in enumerate(toks):
        y = _year_of(tok)
        if y is None:
            continue
        year_span = _unit_span("year", day0.replace(year=y, month=1, day=1), 0)
        if unit_at(i + 1) == "year":  # "2025 yılında"
            year_hint = y
            add(i, i + 2, year_span)
        elif i > 0 and ftoks[i - 1] in {"in", "during"}:  # "in 2025"
            year_hint = y
            add(i - 1, i + 1, year_span)

    for i, tok in enumerate(toks):
        c = qc[i]
        num = _number(toks[i + 1]) if i + 1 < n else None
        try:
            if mt := _ISO_DAY.fullmatch(tok):
                start = day0.replace(year=int(mt[1]), month=int(mt[2]), day=int(mt[3]))
                add(i, i + 1, (start, start + timedelta(days=1)))
                continue
            if mt := _DMY.fullmatch(tok):
                start = day0.replace(year=int(mt[3]), month=int(mt[2]), day=int(mt[1]))
                add(i, i + 1, (start, start + timedelta(days=1)))
                continue
            if mt := _ISO_MONTH.fullmatch(tok):
                add(i, i + 1, _month_span(int(mt[1]), int(mt[2]), day0))
                continue
        except ValueError:  # "2026-13-40" is no date
            continue
        if c & {"bugun", "today"}:
            add(i, i + 1, _unit_span("day", day0, 0))
        elif c & {"dun", "yesterday"}:
            add(i, i + 1, _unit_span("day", day0, 1))
        elif c & {"yarin", "tomorrow"}:
            add(i, i + 1, _unit_span("day", day0, -1))
        elif c & {"onceki", "evvelsi", "evvelki"} and unit_at(i + 1) == "day":
            add(i, i + 2, _unit_span("day", day0, 2))  # "önceki gün": the day before yesterday
        elif c & (_LAST | _ROLLING) and num and (unit := unit_at(i + 2)):
            add(i, i + 3, _rolling(unit, num, day0))
        elif (c & _ROLLING and (unit := unit_at(i + 1))
              # ("son gün", "son günü": a deadline, the final day; "son günlerde": lately)
              and not (unit == "day" and "son" in c and not re.search(r"l[ae]r", ftoks[i + 1]))):
            add(i, i + 2, _rolling(unit, 1, day0))
        elif c & _LAST and (unit := unit_at(i + 1)):
            add(i, i + 2, _unit_span(unit, day0, 1))
        elif c & _THIS and (unit := unit_at(i + 1)):
            add(i, i + 2, _unit_span(unit, day0, 0))
        elif c & _NEXT and (unit := unit_at(i + 1)):   # "önümüzdeki hafta", "next month"
            add(i, i + 2, _unit_span(unit, day0, -1))
        else:
            month = _month_in(ftoks, i)
            if month is None:
                continue
            first, j = i, (i + 2 if unit_at(i + 1) == "month" else i + 1)  # "eylül ayında"
            year = _year_of(toks[j]) if j < n else None  # "eylül 2025", "September 2025"
            if year is not None:
                j += 1
            elif i > 0 and (year := _year_of(toks[i - 1])) is not None:  # "2025 eylül"
                first = i - 1
            elif year_hint is not None:
                year = year_hint
            elif month == now.month % 12 + 1:  # next month: "Haziran için" in May
                year = now.year + (month == 1)
            else:  # the latest such month not after now
                year = now.year if month <= now.month else now.year - 1
            add(first, j, _month_span(year, month, day0))

    if not found:
        return None
    return min(found, key=lambda f: (f[1].end - f[1].start, f[0]))[1]


@lru_cache(maxsize=1024)
def named_days(question: str, now: datetime) -> tuple[datetime, ...]:
    """The days a question names by day and month ("11 Haziran'daki duruşma", "7 Nisan'da",
    "on June 11", "the hearing on 11 June"), in the year of `now` and the year before (a
    day named without its year may lie ahead, "scheduled for 11 June", or behind). The
    period a question reads (parse_period) stays the month's: these single out records
    that state the day in their fields."""
    toks = _words(question)
    # (read before the name lookups go out: most questions hold no day number to read)
    if not any(len(t) <= 2 and t.isdigit() for t in toks):
        return ()
    ftoks = [fold(t) for t in toks]
    out: list[datetime] = []
    for i in range(len(ftoks)):
        month = _month_in(ftoks, i)
        if month is None:
            continue
        for k in (i - 1, i + 1):
            if 0 <= k < len(ftoks) and ftoks[k].isdigit() and 1 <= int(ftoks[k]) <= 31:
                for year in (now.year, now.year - 1):
                    try:
                        out.append(datetime(year, month, int(ftoks[k]), tzinfo=now.tzinfo))
                    except ValueError:   # 31 Haziran
                        pass
                break
    return tuple(dict.fromkeys(out))


def _month_in(ftoks: list[str], i: int) -> int | None:
    tok = ftoks[i]
    for name, month in _MONTHS_BY_HEAD.get(tok[:3], ()):
        if tok.startswith(name) and tok[len(name):] in _MONTH_SUFFIXES:
            if name == "may":
                near = {ftoks[k] for k in (i - 1,) if k >= 0}
                has_year = any(_YEAR.fullmatch(ftoks[k]) for k in (i - 1, i + 1) if 0 <= k < len(ftoks))
                if tok != "may" or not (near & _MAY_CUES or has_year):
                    continue
            return month
    return None


# --------------------------------------------------------------------------- trigrams, search text

TRIGRAM_DIM: int = 65536


def trigrams(s: str) -> dict[int, float]:
    """Character trigrams of fold(s), each word padded as pg_trgm does ("  w "),
    hashed with crc32 into [0, TRIGRAM_DIM) and L2-normalised; {} for empty text."""
    counts: dict[int, float] = {}
    for w in fold(s).split():
        padded = f"  {w} "
        for k in range(len(padded) - 2):
            h = zlib.crc32(padded[k : k + 3].encode("utf-8")) % TRIGRAM_DIM
            counts[h] = counts.get(h, 0.0) + 1.0
    norm = math.sqrt(sum(v * v for v in counts.values()))
    return {h: v / norm for h, v in counts.items()} if norm else {}


def trigram_similarity(a: str, b: str) -> float:
    """Cosine similarity of the two texts' trigram vectors, in [0, 1]."""
    ta, tb = trigrams(a), trigrams(b)
    if len(ta) > len(tb):
        ta, tb = tb, ta
    return sum(v * tb.get(h, 0.0) for h, v in ta.items())


def normalize_for_search(s: str) -> str:
    """Text for PostgreSQL full-text search (to_tsvector 'turkish' and 'english').

    PostgreSQL's lower() follows the database collation, not Turkish rules, so the
    casing is done here. Apostrophes become spaces so "Yapı'nın" gives "yapı" to the
    stemmer. The ASCII fold of every word with Turkish letters is appended once, so a
    query typed without them ("agaoglu") still meets the text, and an English word
    upper-cased with I ("INVOICE" → "ınvoıce") still meets "invoice".
    """
    low = " ".join(_APOS_RE.sub(" ", tr_lower(s)).split())
    extra: dict[str, None] = {}
    for w in re.findall(r"[^\W_]+", low):
        if any(ch in _TURKISH_LETTERS for ch in w):
            extra.setdefault(fold(w), None)
    return " ".join([low, *extra]) if extra else low


# --------------------------------------------------------------------------- mentions

_FOLDED_RE = re.compile(r"[a-z0-9]+(?:[ -][a-z0-9]+)*")


class NameIndex(Generic[K]):
    """Names (fold()ed name or alias → entity key) indexed by their first word.

    Build once and reuse for many texts; find_mentions() builds one per call.
    """

    def __init__(self, names: Mapping[str, K]) -> None:
        self._by_first: dict[str, list[tuple[tuple[str, ...], K]]] = {}
        for name, key in names.items():
            self.add(name, key)

    @staticmethod
    def _parts(name: str) -> tuple[str, ...]:
        # Keys are meant to be folded already; fold only what plainly is not.
        return tuple((name if _FOLDED_RE.fullmatch(name) else fold(name)).split())

    def add(self, name: str, key: K) -> None:
        """Index one more name (a writer keeps one index per workspace and grows it)."""
        parts = self._parts(name)
        if len(" ".join(parts)) <= 2:
            return
        # kept longest-first, so the longest name wins its words
        bisect.insort(self._by_first.setdefault(parts[0], []), (parts, key), key=lambda e: -len(e[0]))

    def remove(self, name: str) -> None:
        """Forget a name (for instance once two entities turn out to share it)."""
        parts = self._parts(name)
        if parts and parts[0] in self._by_first:
            self._by_first[parts[0]] = [e for e in self._by_first[parts[0]] if e[0] != parts]

    def _scan(self, seq: list[str], out: dict[K, None]) -> None:
        i, n = 0, len(seq)
        while i < n:
            best_len = 0
            best_keys: list[K] = []
            for cand in _folded_candidates(seq[i]):
                for parts, key in self._by_first.get(cand, ()):
                    size = len(parts)
                    if size < best_len or i + size > n:
                        continue
                    if size > 1:
                        # Only the last word of a multi-word name carries the suffix.
                        if cand != seq[i] or list(parts[1:-1]) != seq[i + 1 : i + size - 1] \
                                or parts[-1] not in _folded_candidates(seq[i + size - 1]):
                            continue
                    if size > best_len:
                        best_len, best_keys = size, []
                    best_keys.append(key)
            for key in best_keys:
                out.setdefault(key, None)
            # The longest name wins its words: "Ağaoğlu Yapı" hides a lone "Ağaoğlu" inside it.
            i += best_len or 1

    def find(self, text: str) -> list[K]:
        """Entity keys named in the text as whole words, in order of appearance."""
        out: dict[K, None] = {}
        # Words with apostrophe suffixes cut ("Google'ın" → google), then the plain
        # fold in which the suffix is glued on ("yapinin"), for names with apostrophes.
        self._scan([f for t in _words(text) for f in fold(t).split()], out)
        self._scan(fold(text).split(), out)
        return list(out)


def find_mentions(text: str, names: Mapping[str, K] | NameIndex[K]) -> list[K]:
    """Entity keys whose name or alias (a fold()ed key of `names`) the text mentions.

    Whole words only; the last word may carry a Turkish suffix ("Ağaoğlu Yapı'nın",
    "Ağaoğlunun"). Names of one or two characters are ignored. Pass a NameIndex to
    reuse the index over many texts.
    """
    index = names if isinstance(names, NameIndex) else NameIndex(names)
    return index.find(text)
