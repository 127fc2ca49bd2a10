"""Tests for brain.text: Turkish/English casing, folding, tokens, stems, periods, mentions."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain import text as tx
from brain.text import (
    ATTRIBUTE_WORDS, CODE_RE, KIND_PARENTS, KIND_WORDS, STOPWORDS, TRIGRAM_DIM, NameIndex, Period, canonical_kind,
    codes, expand_terms, find_mentions, fold, kind_concepts, kinds_in, named_days, normalize_for_search, parse_period,
    stem_candidates, stems, tr_lower, trigram_similarity, trigrams, words,
)

# Text rich in the letters that break naive casing, plus marks and punctuation.
TURKISH_TEXT = st.text(alphabet=st.sampled_from(list(
    "IİıiÇçĞğÖöŞşÜüÂâÎîÛû'’`-/.,:;0123456789 aAsStTeE\u0307\u0301\u0328\n")))


# --------------------------------------------------------------------------- casing

@pytest.mark.parametrize("raw, lowered", [
    ("I", "ı"),
    ("İ", "i"),
    ("ISPARTA", "ısparta"),
    ("İSTANBUL", "istanbul"),
    ("ĞÜŞÖÇ", "ğüşöç"),
    ("Iİ", "ıi"),
    ("i\u0307stanbul", "istanbul"),   # what str.lower() makes of "İstanbul"
    ("I\u0307", "i"),                  # decomposed İ
    ("Şikâyet", "şikâyet"),
])
def test_tr_lower(raw: str, lowered: str) -> None:
    assert tr_lower(raw) == lowered


@settings(max_examples=300)
@given(st.text())
def test_tr_lower_idempotent_any_text(s: str) -> None:
    once = tr_lower(s)
    assert tr_lower(once) == once


@settings(max_examples=300)
@given(TURKISH_TEXT)
def test_tr_lower_idempotent_turkish_text(s: str) -> None:
    once = tr_lower(s)
    assert tr_lower(once) == once
    assert "I" not in once and "İ" not in once


# --------------------------------------------------------------------------- fold

@pytest.mark.parametrize("raw, folded", [
    ("Ağaoğlu Yapı A.Ş.", "agaoglu yapi a s"),
    ("AĞAOĞLU YAPI", "agaoglu yapi"),
    ("agaoglu yapi", "agaoglu yapi"),
    ("Yapı'nın", "yapinin"),
    ("Yapı’nın", "yapinin"),
    ("SP-2026-0393", "sp-2026-0393"),
    ("SP‐2026‐0393", "sp-2026-0393"),   # Unicode hyphens
    ("e-posta", "e posta"),
    ("Şikâyet  ve   İade", "sikayet ve iade"),
    ("Çağrı Öztürk", "cagri ozturk"),
    ("Café Crème", "cafe creme"),
    ("  --x--  ", "x"),
    ("", ""),
])
def test_fold(raw: str, folded: str) -> None:
    assert fold(raw) == folded


@settings(max_examples=300)
@given(TURKISH_TEXT, TURKISH_TEXT)
def test_stems_of_a_sender_and_text_are_both_their_stems(sender: str, text: str) -> None:
    # rank reads "sender: text" as the union of the two (brain.read.rank): stems are
    # read word by word, and ": " joins no two words
    assert tx.stems(f"{sender}: {text}") == tx.stems(sender) | tx.stems(text)


@settings(max_examples=300)
@given(st.text())
def test_fold_idempotent_any_text(s: str) -> None:
    once = fold(s)
    assert fold(once) == once


@settings(max_examples=300)
@given(TURKISH_TEXT)
def test_fold_idempotent_and_plain(s: str) -> None:
    once = fold(s)
    assert fold(once) == once
    assert not set(once) & set("çğıöşüâîû'’`İI")
    assert once == once.strip() and "  " not in once


@settings(max_examples=500)
@given(st.lists(st.one_of(TURKISH_TEXT, st.text()), max_size=6))
def test_fold_joined_is_fold_of_the_joined_words(parts: list[str]) -> None:
    # send_lookups builds a span's name key from its words' folds (tx.fold_joined): for
    # the question's words and any text alike, that is fold() of the words joined
    for ws in (parts, [w for p in parts for w in tx.words(p)]):
        assert tx.fold_joined([fold(w) for w in ws]) == fold(" ".join(ws))


def test_fold_equal_for_turkish_and_ascii_typing() -> None:
    assert fold("Müşteri Şikâyeti") == fold("musteri sikayeti") == fold("MÜŞTERİ ŞİKAYETİ")


# --------------------------------------------------------------------------- words, codes

@pytest.mark.parametrize("raw, tokens", [
    ("Ağaoğlu Yapı'nın vergi numarası nedir?", ["ağaoğlu", "yapı", "vergi", "numarası", "nedir"]),
    ("SP-2026-0393'ün durumu", ["sp-2026-0393", "durumu"]),
    ("Tutar 45.000 TL, VKN 4810023391.", ["tutar", "45.000", "tl", "vkn", "4810023391"]),
    ("Toplam: 1.250.000,00 TL", ["toplam", "1.250.000,00", "tl"]),
    ("Ekim'de ödendi", ["ekim", "ödendi"]),
    ("INV-2026-0118 IBAN", ["inv-2026-0118", "ıban"]),   # codes lowered without the I rule
    ("e-posta ve/veya 2026/09", ["e", "posta", "ve", "veya", "2026/09"]),
    ("2026-09-05 tarihinde", ["2026-09-05", "tarihinde"]),
    ("…!!  ", []),
])
def test_words(raw: str, tokens: list[str]) -> None:
    assert words(raw) == tokens


@pytest.mark.parametrize("raw, found", [
    ("SP-2026-0393'ün faturası INV-2026-0118", ["SP-2026-0393", "INV-2026-0118"]),
    ("so-1001 ve T-77, SO-1001 tekrar", ["SO-1001", "T-77"]),
    ("PO-2026-A12 geldi", ["PO-2026-A12"]),
    ("2026-09-05 tarihli, e-posta, COVID19", []),
    ("x-SO-1001", []),
    # a year's serial numbers (a court file, "2026/418 E."), not dates or fractions
    ("2026/418 E. sayılı dava ve 2025/1127 E.", ["2026/418", "2025/1127"]),
    ("dosya 2026/418.", ["2026/418"]),
    ("2026/04/15 tarihli, 12/2026, 1.2026/418, 2026/418.5", []),
])
def test_codes(raw: str, found: list[str]) -> None:
    assert codes(raw) == found


def test_code_re_is_case_insensitive_but_ascii() -> None:
    assert CODE_RE.fullmatch("inv-2026-0118")
    assert CODE_RE.fullmatch("INV-2026-0118")
    assert not CODE_RE.search("ınv-2026")   # dotless ı is no code letter


# --------------------------------------------------------------------------- stem candidates

@pytest.mark.parametrize("word, base", [
    ("ağaoğlunun", "ağaoğlu"),
    ("siparişi", "sipariş"),
    ("faturası", "fatura"),
    ("ödemesi", "ödeme"),
    ("talebindeki", "talep"),
    ("müşterinin", "müşteri"),
    ("eylülde", "eylül"),
    ("kitabı", "kitap"),
    ("rengi", "renk"),
    ("diyaloğu", "diyalog"),
    ("siparişlerindeki", "sipariş"),
    ("faturasının", "fatura"),
    ("ödemesinde", "ödeme"),
    ("ekimdeki", "ekim"),
    ("müşteriydi", "müşteri"),
    ("bugünkü", "bugün"),
    ("ekim'de", "ekim"),
    ("orders", "order"),
    ("invoices", "invoice"),
    ("companies", "company"),
    ("musterinin", "musteri"),   # typed without Turkish letters
])
def test_stem_candidates_find_base(word: str, base: str) -> None:
    cands = stem_candidates(word)
    assert cands[0] == word
    assert base in cands


def test_stem_candidates_longest_first_and_min_length() -> None:
    cands = stem_candidates("siparişlerindeki")
    assert [len(c) for c in cands[1:]] == sorted((len(c) for c in cands[1:]), reverse=True)
    assert all(len(c) >= 2 for c in cands)


@pytest.mark.parametrize("word", ["dünya", "sp-2026-0393", "45.000", "ve"])
def test_stem_candidates_leave_alone(word: str) -> None:
    # "dünya" is not "dün" + "ya": a y-buffer suffix only follows a vowel.
    assert "dün" not in stem_candidates(word)
    assert stem_candidates(word)[0] == word


# --------------------------------------------------------------------------- stems, stop words

def test_stems_question_meets_fact() -> None:
    q = stems("Ağaoğlu Yapı'nın vergi numarası nedir?")
    fact = stems("AĞAOĞLU YAPI A.Ş. vergi numarası: 4810023391")
    assert q == {"agaog", "yapi", "vergi", "numar"}
    assert q <= fact and "4810023391" in fact


def test_stems_keep_codes_numbers_and_drop_stopwords() -> None:
    s = stems("What is the INVOICE total for SO-1001? 45.000 TL ve bir de")
    assert {"so-1001", "45.000", "invoi", "total", "tl"} <= s
    assert not s & {"what", "is", "the", "for", "ve", "bir", "de"}


def test_stems_ascii_typed_stopwords_and_is_kept() -> None:
    # "icin" is "için" typed in ASCII; "iş" (work) must not be taken for English "is".
    assert stems("icin") == set()
    assert stems("İş emri") == {"is", "emri"}


def test_stopwords_are_tr_lower_form() -> None:
    assert {"ne", "nedir", "neydi", "hangisi", "kimdir", "mı", "için", "what", "the"} <= STOPWORDS
    assert all(tr_lower(w) == w for w in STOPWORDS)


# --------------------------------------------------------------------------- kinds, attributes

@pytest.mark.parametrize("question, expected", [
    ("SO-1001 siparişinin faturası ödendi mi?", [("siparişinin", "order"), ("faturası", "invoice")]),
    ("Talebindeki şikâyet neydi?", [("talebindeki", "ticket"), ("şikâyet", "complaint")]),
    ("Müşterinin yetkilisi kim?", [("müşterinin", "company"), ("yetkilisi", "person")]),
    ("Which orders and invoices has the customer?",
     [("orders", "order"), ("invoices", "invoice"), ("customer", "company")]),
    ("Destek talebinin durumu", [("destek talebinin", "ticket")]),
    ("Tedarikçisi hangi ürünü gönderdi?", [("tedarikçisi", "supplier"), ("ürünü", "product")]),
    ("Which employee handled the payment?", [("employee", "person"), ("payment", "payment")]),
    ("INVOICE", [("ınvoıce", "invoice")]),
    ("did not pay", []),
    ("Şikayetteki sevkiyatı hangi araç taşıdı?",
     [("şikayetteki", "complaint"), ("sevkiyatı", "shipment"), ("araç", "vehicle")]),
    ("Which subcontractor owns the truck?", [("subcontractor", "supplier"), ("truck", "vehicle")]),
    ("What is the phone of the teacher of the student's class?",
     [("teacher", "teacher"), ("student", "student"), ("class", "course_group")]),
    ("Davanın duruşması hangi mahkemede?", [("davanın", "lawsuit"), ("duruşması", "hearing"), ("mahkemede", "court")]),
    ("Hangi kayıtla geldi?", []),   # "kayıt" in a question is any record
])
def test_kinds_in(question: str, expected: list[tuple[str, str]]) -> None:
    assert kinds_in(question) == expected


def test_kind_words_are_canonical() -> None:
    canonical = {"company", "person", "product", "supplier", "order", "invoice", "payment", "ticket",
                 "complaint", "note", "message", "shipment", "vehicle", "driver", "contract", "quote",
                 "warehouse", "project", "installation", "technician", "material", "work_order", "credit_note",
                 "meeting", "hospital", "clinic", "device", "maintenance", "tender", "spare_part", "site",
                 "contractor", "dealer", "delivery_note", "cheque", "account_manager", "booking", "guest",
                 "agency", "room", "hotel", "producer", "lot", "lab_report", "bill_of_lading",
                 "customs_declaration", "letter_of_credit", "customs_broker", "claim", "policy",
                 "student", "teacher", "guardian", "enrollment", "installment", "payment_plan", "exam",
                 "route", "course_group", "lawsuit", "hearing", "lawyer", "power_of_attorney", "court",
                 "counterparty", "return", "brand", "insurer", "endorsement", "adjuster", "subscription",
                 "tariff", "outage", "patient", "treatment", "vaccination", "prescription", "doctor",
                 "appraisal", "title_deed", "listing", "candidate", "placement", "job", "timesheet",
                 "event", "venue", "interview", "branch", "lab"}
    assert set(KIND_WORDS.values()) <= canonical
    assert KIND_WORDS["müşteri"] == KIND_WORDS["customer"] == "company"
    assert KIND_WORDS["çalışan"] == KIND_WORDS["employee"] == "person"
    assert set(KIND_PARENTS) <= canonical and set(KIND_PARENTS.values()) <= canonical


@pytest.mark.parametrize("stored, concepts", [
    ("invoice", {"invoice"}), ("sevkiyat", {"shipment"}), ("Shipment", {"shipment"}),
    ("employee", {"person"}), ("customer", {"company"}), ("supplier_invoice", {"invoice"}),
    ("service-ticket", {"ticket"}), ("driver", {"driver", "person"}), ("supplier", {"supplier", "company"}),
    ("credit_note", {"credit_note"}), ("personnel_file", {"personnel_file"}), ("account", {"account"}),
    ("temsilci", {"account_manager", "person"}), ("account_manager", {"account_manager", "person"}),
    ("tedarikci_faturasi", {"invoice"}), ("toplanti_odasi", {"room"}),   # a Turkish compound, suffixed
    # a school's and a law office's kinds; "kayit" and "sinif" only as stored kinds' names
    ("ogrenci", {"student", "person"}), ("veli", {"guardian", "person"}), ("kayit", {"enrollment"}),
    ("sinif", {"course_group"}), ("taksit", {"installment", "payment"}), ("durusma", {"hearing"}),
    ("avukat", {"lawyer", "person"}), ("muvekkil", {"company"}), ("iade", {"return"}),
    ("dental_lab", {"lab"}), ("kooperatif", {"company"}), ("lab_siparisi", {"order"}),
])
def test_a_stored_kind_reads_as_the_kinds_a_question_asks_for(stored: str, concepts: set[str]) -> None:
    # kinds are an open vocabulary (FORMAT.md): a store may call them anything
    assert kind_concepts(stored) == concepts
    assert canonical_kind(stored) in concepts


def test_expand_terms_crosses_languages() -> None:
    extra = expand_terms("Ağaoğlu Yapı'nın vergi numarası nedir?")
    assert "tax number" in extra and "vkn" in extra and "vergi numarası" not in extra
    extra = expand_terms("What is the tax number of Ağaoğlu?")
    assert "vergi numarası" in extra and "tax number" not in extra


@pytest.mark.parametrize("question, concept", [
    ("Faturanın tutarı ne kadar?", "amount"),
    ("IBAN'ı nedir?", "iban"),
    ("Ayşe hangi şirkette çalışıyor?", "employer"),
    ("Talebe kim atanan?", "assignee"),
    ("E-posta adresi", "email"),
    ("Vade tarihi ne zaman?", "due_date"),
    ("What is her salary?", "salary"),
    ("Cumartesi kaçta açığız?", "hours"),   # a note says "çalışma saatleri 10:00-16:00"
    ("What time do you open on Saturday?", "hours"),
])
def test_expand_terms_touches_concept(question: str, concept: str) -> None:
    extra = expand_terms(question)
    assert set(extra) & set(ATTRIBUTE_WORDS[concept])


@pytest.mark.parametrize("question, positions", [
    ("Geçen ay hangi ödemeler geldi?", {3}),                       # a kind word, inflected
    ("Yıldız Tekstil'in vergi numarası nedir?", {2, 3}),          # an attribute phrase
    ("Which orders came in during July?", {1}),
    ("SP-2026-0393 siparişini veren firmanın telefonu", {1, 3, 4}),  # kinds and an attribute
    ("Ağaoğlu Yapı nerede?", set()),
])
def test_concept_positions_are_the_words_that_say_what_is_asked(question: str, positions: set[int]) -> None:
    assert tx.concept_positions(question) == positions, [(i, w) for i, w in enumerate(words(question))]


def test_expand_terms_nothing_for_plain_question() -> None:
    assert expand_terms("Ağaoğlu kimdir?") == []


# --------------------------------------------------------------------------- periods

UTC = timezone.utc
TR = timezone(timedelta(hours=3))


def day(y: int, m: int, d: int, tz: timezone = UTC) -> datetime:
    return datetime(y, m, d, tzinfo=tz)


@pytest.mark.parametrize("question, now, start, end", [
    ("bugün ne oldu", day(2026, 10, 15), day(2026, 10, 15), day(2026, 10, 16)),
    ("dünkü mesajlar", day(2026, 10, 15), day(2026, 10, 14), day(2026, 10, 15)),
    ("yesterday", day(2026, 1, 1), day(2025, 12, 31), day(2026, 1, 1)),
    ("bu hafta", day(2026, 10, 15), day(2026, 10, 12), day(2026, 10, 19)),         # Thursday → Monday
    ("geçen hafta", day(2026, 10, 15), day(2026, 10, 5), day(2026, 10, 12)),
    ("last week", day(2026, 10, 12), day(2026, 10, 5), day(2026, 10, 12)),         # on a Monday
    ("bu ay", day(2026, 10, 15), day(2026, 10, 1), day(2026, 11, 1)),
    ("geçen ay", day(2026, 10, 15), day(2026, 9, 1), day(2026, 10, 1)),
    ("geçen ay", day(2026, 1, 20), day(2025, 12, 1), day(2026, 1, 1)),             # year boundary
    ("last month", day(2026, 3, 31), day(2026, 2, 1), day(2026, 3, 1)),
    ("bu yıl", day(2026, 10, 15), day(2026, 1, 1), day(2027, 1, 1)),
    ("geçen sene", day(2026, 10, 15), day(2025, 1, 1), day(2026, 1, 1)),
    ("last year", day(2026, 10, 15), day(2025, 1, 1), day(2026, 1, 1)),
    ("son 7 gün", day(2026, 10, 15), day(2026, 10, 8), day(2026, 10, 16)),
    ("son günlerde", day(2026, 10, 15), day(2026, 10, 14), day(2026, 10, 16)),
    ("past 30 days", day(2026, 10, 15), day(2026, 9, 15), day(2026, 10, 16)),
    ("eylülde", day(2026, 10, 15), day(2026, 9, 1), day(2026, 10, 1)),
    ("eylülde", day(2026, 3, 10), day(2025, 9, 1), day(2025, 10, 1)),              # month after now
    ("eylül ayında", day(2026, 10, 15), day(2026, 9, 1), day(2026, 10, 1)),
    ("Ekim'de ne sipariş verdi?", day(2026, 10, 15), day(2026, 10, 1), day(2026, 11, 1)),
    ("ekimdeki faturalar", day(2026, 3, 1), day(2025, 10, 1), day(2025, 11, 1)),
    ("kasım ayı", day(2026, 10, 15), day(2026, 11, 1), day(2026, 12, 1)),          # next month: ahead
    ("Haziran için kaç araç istiyor?", day(2026, 5, 20), day(2026, 6, 1), day(2026, 7, 1)),
    ("ocakta", day(2026, 12, 2), day(2027, 1, 1), day(2027, 2, 1)),
    ("aralıkta", day(2026, 10, 15), day(2025, 12, 1), day(2026, 1, 1)),            # two months on: behind
    ("in September", day(2026, 10, 15), day(2026, 9, 1), day(2026, 10, 1)),
    ("September 2024", day(2026, 10, 15), day(2024, 9, 1), day(2024, 10, 1)),
    ("on 2026-09-05", day(2026, 10, 15), day(2026, 9, 5), day(2026, 9, 6)),
    ("2026-09 faturaları", day(2026, 10, 15), day(2026, 9, 1), day(2026, 10, 1)),
    ("05.09.2026 tarihli", day(2026, 10, 15), day(2026, 9, 5), day(2026, 9, 6)),
    ("geçen ay ve dün", day(2026, 10, 15), day(2026, 10, 14), day(2026, 10, 15)),  # most specific wins
    ("önümüzdeki hafta hangi mülakat planlı?", day(2026, 4, 16), day(2026, 4, 20), day(2026, 4, 27)),
    ("gelecek ay", day(2026, 12, 2), day(2027, 1, 1), day(2027, 2, 1)),
    ("What is planned for next week?", day(2026, 10, 15), day(2026, 10, 19), day(2026, 10, 26)),
    ("Ödeme yarın gelecek mi?", day(2026, 10, 15), day(2026, 10, 16), day(2026, 10, 17)),   # "gelecek": a verb
])
def test_parse_period(question: str, now: datetime, start: datetime, end: datetime) -> None:
    p = parse_period(question, now)
    assert p is not None
    assert (p.start, p.end) == (start, end)


def test_parse_period_naive_now_is_utc_and_aware_keeps_zone() -> None:
    p = parse_period("bugün", datetime(2026, 10, 15, 9, 30))
    assert p == Period(day(2026, 10, 15), day(2026, 10, 16), "bugün")
    q = parse_period("geçen ay", datetime(2026, 1, 2, 1, 0, tzinfo=TR))
    assert q is not None and (q.start, q.end) == (day(2025, 12, 1, TR), day(2026, 1, 1, TR))


@pytest.mark.parametrize("question, days", [
    ("11 Haziran'daki duruşmaya kim katılacak?", [(2026, 6, 11), (2025, 6, 11)]),
    ("What is the client's phone whose hearing is on June 11?", [(2026, 6, 11), (2025, 6, 11)]),
    ("7 Nisan'da gelen ödeme", [(2026, 4, 7), (2025, 4, 7)]),
    ("31 Haziran", []), ("Haziran'da gelen ödemeler", []), ("SO-1001 siparişi", []),
])
def test_named_days(question: str, days: list[tuple[int, int, int]]) -> None:
    got = named_days(question, day(2026, 4, 15))
    assert [(d.year, d.month, d.day) for d in got] == days


@pytest.mark.parametrize("question", [
    "Ağaoğlu Yapı'nın vergi numarası nedir?", "fiyat aralığında", "what may happen", "2026-13-40", "",
    # a deadline, not the past day
    "İtiraz için son gün ne?", "Bilirkişi raporuna itirazın son günü ne?",
])
def test_parse_period_none(question: str) -> None:
    assert parse_period(question, day(2026, 10, 15)) is None


# --------------------------------------------------------------------------- trigrams, search text

def test_trigrams_shape_and_stability() -> None:
    vec = trigrams("Ağaoğlu Yapı")
    assert vec and all(0 <= k < TRIGRAM_DIM for k in vec)
    assert math.isclose(math.sqrt(sum(v * v for v in vec.values())), 1.0)
    assert trigrams("agaoglu yapi") == vec           # computed on fold()
    assert trigrams("") == {} and trigrams(" .,;") == {}
    # pg_trgm padding: "ab" gives "  a", " ab", "ab ": three trigrams.
    assert len(trigrams("ab")) == 3


def test_trigram_similarity_prefers_typo_of_same_name() -> None:
    target = "Ağaoğlu Yapı"
    assert trigram_similarity("Agaoglu Yapi", target) > trigram_similarity("Akdeniz Gıda", target)
    assert trigram_similarity("Agaolu Yapi", target) > trigram_similarity("Akdeniz Gıda", target)
    assert math.isclose(trigram_similarity(target, target), 1.0)
    assert trigram_similarity("", target) == 0.0


def test_normalize_for_search() -> None:
    out = normalize_for_search("Ağaoğlu Yapı'nın INVOICE")
    assert out.startswith("ağaoğlu yapı nın ınvoıce")
    for extra in ("agaoglu", "yapi", "invoice"):
        assert out.split().count(extra) == 1
    assert normalize_for_search("plain ascii text") == "plain ascii text"


# --------------------------------------------------------------------------- mentions

NAMES = {
    fold("Ağaoğlu Yapı A.Ş."): "C-1",
    fold("Ağaoğlu Yapı"): "C-1",
    fold("Ağaoğlu"): "C-1",
    fold("Akdeniz Gıda"): "C-2",
    fold("Ayşe Demir"): "P-1",
    fold("Ali"): "P-2",
    fold("SO"): "X-short",           # too short: ignored
}


@pytest.mark.parametrize("text, keys", [
    ("Ağaoğlu Yapı'nın faturası geldi", ["C-1"]),
    ("Ağaoğlunun bir talebi var", ["C-1"]),
    ("AĞAOĞLU YAPI A.Ş. ile görüştük", ["C-1"]),
    ("agaoglu yapiya gönderildi", ["C-1"]),
    ("Akdeniz Gıda'ya ve Ayşe Demir'e ilettim", ["C-2", "P-1"]),
    ("Ali'nin siparişi, Alinin değil", ["P-2"]),
    ("SO-1001 hasarlı geldi", []),
    ("Akdeniz bölgesi", []),                   # a multi-word name needs all its words
    ("Alibaba", []),                           # whole words only
])
def test_find_mentions(text: str, keys: list[str]) -> None:
    assert find_mentions(text, NAMES) == keys


def test_find_mentions_prefers_longest_name() -> None:
    names = {"agaoglu yapi": "company", "agaoglu": "person"}
    assert find_mentions("Ağaoğlu Yapı'nın vergi numarası", names) == ["company"]
    assert find_mentions("Ağaoğlu aradı", names) == ["person"]


def test_find_mentions_scales_to_thousands_of_names() -> None:
    names = {f"firma {i} ticaret": i for i in range(3000)}
    names.update({f"kisi{i}": -i for i in range(1, 3000)})
    index = NameIndex(names)
    text = "Firma 1234 Ticaret'in siparişi ve kisi77'nin notu. " * 20
    for _ in range(20):   # speed lives in the benchmarks, not in timed tests
        assert index.find(text) == [1234, -77]
    assert find_mentions(text, names) == [1234, -77]


def test_module_exports() -> None:
    for name in tx.__all__:
        assert hasattr(tx, name)


def test_stems_meet_english_inflections() -> None:
    # short words keep their whole form under the five-letter cut: the plural and the
    # -ing/-ed forms must still meet the question's word
    assert stems("kids hiking danced paintings") == stems("kid hike dances painting")
    assert stems("running classes") == stems("run class")
    assert stems("İş emri") == {"is", "emri"}   # Turkish words are left to the Turkish rules


def _fold_as_first_written(s: str) -> str:
    """fold() with a category lookup and an isalnum() test per character: the oracle
    for the translate() and regular-expression version (the token step is shared)."""
    import unicodedata

    if s.isascii():
        t = s.lower().translate(tx._FOLD_TABLE)
    else:
        t = unicodedata.normalize("NFD", tx.tr_lower(s).translate(tx._FOLD_TABLE))
        t = "".join(c for c in t if not unicodedata.category(c).startswith("M"))
    return tx._fold_tokens("".join(c if c.isalnum() or c == "-" else " " for c in t))


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40)
       | st.text(alphabet="aAıIiİşŞğĞüÜöÖçÇ-_'’ .,é\u0301\u0307\U0001D167\U0001F600 1-", max_size=30))
def test_fold_keeps_its_rule(s: str) -> None:
    assert tx.fold.__wrapped__(s) == _fold_as_first_written(s)


def _stem_candidates_by_every_suffix(word: str) -> tuple[str, ...]:
    """The suffix walk as first written (every suffix tested with endswith), to hold the
    faster lookup by length to the same answers."""
    found: dict[str, None] = {}
    walked: set[str] = set()

    def walk(x: str, depth: int) -> None:
        if depth >= tx._MAX_STRIPS or x in walked:
            return
        walked.add(x)
        for suf, need in tx._SUFFIXES:
            if not x.endswith(suf):
                continue
            base = x[: -len(suf)]
            if len(base) < 2 or not any(c in tx._VOWELS for c in base):
                continue
            ends_vowel = base[-1] in tx._VOWELS
            if (need == tx._V and not ends_vowel) or (need == tx._C and ends_vowel):
                continue
            found.setdefault(base, None)
            for soft in tx._SOFTENING.get(base[-1], ()):
                found.setdefault(base[:-1] + soft, None)
            walk(base, depth + 1)

    def bases(w: str) -> dict[str, None]:
        walk(w, 0)
        return found

    return tx._candidates(word, bases)


_SUFFIX_TEXTS = [s for s, _ in tx._SUFFIXES]


@settings(max_examples=1500, deadline=None)
@given(st.sampled_from(["talep", "kitap", "sipariş", "fatura", "dünya", "renk", "diyalog", "ev", "okul", "ağaoğlu",
                        "order", "compan", "ab", "ı", "x"]),
       st.lists(st.sampled_from(_SUFFIX_TEXTS + ["'", "’", "y", "n", "s", "ies", "es"]), max_size=4))
def test_the_suffix_walk_finds_what_testing_every_suffix_finds(base: str, suffixes: list[str]) -> None:
    """Stem candidates come from a lookup of a word's last letters by length: the same
    bases, in the same order, as testing every suffix in turn. (Fails if the table loses
    a suffix, a suffix's condition, or the order of suffixes of one length.)"""
    word = base + "".join(suffixes)
    assert tx._stem_candidates.__wrapped__(word) == _stem_candidates_by_every_suffix(word)


@pytest.mark.parametrize("question, kinds", [
    ("Who is the account manager for Ege Diş?", [("account manager", "account_manager")]),
    # one kind, not a customer and a person
    ("Ege Diş'in müşteri temsilcisi kim?", [("müşteri temsilcisi", "account_manager")]),
    ("Which customer has the sales rep Ali?", [("customer", "company"), ("sales rep", "account_manager")]),
])
def test_the_role_that_looks_after_a_customer_is_one_kind(question: str, kinds: list[tuple[str, str]]) -> None:
    assert kinds_in(question) == kinds


@pytest.mark.parametrize("text, days", [
    ("etkinlik EVT-1 (Gala) | tarih: 2026-05-16; tur: gala | mekan → mekan MKN-1", ["2026-05-16"]),
    ("invoice INV-1 | vade: 2026-10-16; kesim_tarihi: 2026-09-16", []),   # deadlines and steps: not its day
    ("payment PAY-1: tahsil edildi. | date: 2026-09-02", ["2026-09-02"]),
    ("note | tarih: 2026-02-30", []),                                       # no such day
])
def test_a_records_day_is_its_date_field(text: str, days: list[str]) -> None:
    from brain.text import field_days

    assert [d.isoformat() for d in field_days(text)] == days


def test_the_fields_a_question_asks_for_meet_a_records_field_names() -> None:
    from brain.text import asked_fields, field_names

    record = "cari_hesap C-7 (320.01.007 Lezzet) | iban: TR32 0001; vergi_no: 604; e-posta: a@b.c | tedarikci → tedarikci T-7"
    assert field_names(record) == {"iban", "vergi no", "e posta"}
    assert "iban" in asked_fields("What is the IBAN of the catering company?")
    assert asked_fields("Tedarikçinin vergi numarası nedir?") & field_names(record) == {"vergi no"}
    assert not asked_fields("Who is the contact person?") & field_names(record)


@pytest.mark.parametrize("text, months", [
    ("production_report URT-1 | period: 2026-03; yield: 48.910 kWh", ["2026-03-01"]),
    ("bordro B-1 | dönem: 2026-12; net: 52.000 TL", ["2026-12-01"]),
    ("invoice I-1 | period: 2026-03-05", []),      # a day, not a month
    ("note | period: 2026-13", []),
])
def test_a_records_month_is_its_period_field(text: str, months: list[str]) -> None:
    from brain.text import field_months

    assert [d.isoformat() for d in field_months(text)] == months
