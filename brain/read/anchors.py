"""Step 1, anchors: the entities a question names.

Matched in order of certainty: record codes as they are; names and aliases exactly; the
same with Turkish case endings removed; a question word contained in a longer name; then
trigram similarity on the fuzzy-name index; by meaning (the entities behind the nearest
memories) comes last, from step 2. Only entities the asker may see can match.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from pgvector import SparseVector

from brain import text as tx
from brain.db import IntArray, TextArray
from brain.read.config import RecallConfig
from brain.read.question import Question, Worded, amounts, day_forms
from brain.read.trace import Anchor, AnchorStep, Hit, Node
from brain.wire import Executor, Rows

_ENTITY_COLS = "e.entity_id, e.kind, e.key, e.name"
# Every statement here orders its rows fully: which of two equally good matches anchors
# first must not depend on the plan PostgreSQL picks (a cost setting, another server).

CODES_SQL = f"""
SELECT {_ENTITY_COLS}, e.key_upper AS code
  FROM visible_entities e
 WHERE e.workspace_id = %(ws)s AND e.key_upper = ANY(%(codes)s)
 ORDER BY e.entity_id"""

# The subject entities of the current records, a few for each of a list of values, that a
# condition on a record memory `m` and the value `v.value` picks, in the order given.
def _records_per_value(picks: str, order: str, limit: int) -> str:
    return f"""
SELECT {_ENTITY_COLS}, v.value
  FROM unnest(%(values)s::text[]) AS v(value)
  CROSS JOIN LATERAL (
      SELECT me.entity_id FROM visible_memories m
        JOIN memory_entities me ON me.workspace_id = m.workspace_id AND me.memory_id = m.memory_id
                               AND me.role = 'subject'
       WHERE m.workspace_id = %(ws)s AND m.origin = 'record' AND m.valid_to IS NULL AND {picks}
       ORDER BY {order} LIMIT {limit}) x
  JOIN visible_entities e ON e.workspace_id = %(ws)s AND e.entity_id = x.entity_id
 ORDER BY v.value, e.entity_id"""


# The current records that state an amount or a day the question gives ("33.600 TL'lik
# ödeme", "11 Haziran'daki duruşma" as 2026-06-11 or 11.06.2026): a few at most per value,
# or it is too common to single anything out.
AMOUNT_RECORDS = 3
_DAY_FORM = re.compile(r"\d{4}-\d\d-\d\d|\d\d\.\d\d\.\d{4}")   # (question.day_forms)
AMOUNTS_SQL = _records_per_value("m.fts @@ to_tsquery('simple', quote_literal(v.value))", "m.memory_id",
                                 AMOUNT_RECORDS + 1)

NAMES_SQL = f"""
SELECT DISTINCT ON (e.entity_id, n.name_key) {_ENTITY_COLS}, n.name_key
  FROM visible_entity_names n JOIN visible_entities e USING (workspace_id, entity_id)
 WHERE n.workspace_id = %(ws)s AND n.name_key = ANY(%(keys)s)
 ORDER BY e.entity_id, n.name_key"""

# (an entity's name that holds a question word: its shortest, then the first by key, so
# that the match's weight, which its word count sets, never depends on the plan)
CONTAINS_SQL = f"""
SELECT DISTINCT ON (e.entity_id) {_ENTITY_COLS}, n.name_key
  FROM visible_entity_names n JOIN visible_entities e USING (workspace_id, entity_id)
 WHERE n.workspace_id = %(ws)s AND n.name_words @@ to_tsquery('simple', %(tsq)s)
 ORDER BY e.entity_id, array_length(string_to_array(n.name_key, ' '), 1), n.name_key
 LIMIT 60"""

# The same, asked before the exact names are known (see send_lookups): every name holding
# any of the forms of the words no code explains, with the forms it holds and its place
# among its entity's names in CONTAINS_SQL's order, so that CONTAINS_SQL's answer for the
# words the names leave can be read from these rows. At most CONTAINS_ANY_ROWS: past that
# the exact statement is asked instead.
CONTAINS_ANY_ROWS = 400
CONTAINS_ANY_SQL = f"""
SELECT {_ENTITY_COLS}, n.name_key,
       ARRAY(SELECT f.form FROM unnest(%(forms)s::text[]) AS f(form)
              WHERE n.name_words @@ to_tsquery('simple', quote_literal(f.form))) AS held,
       row_number() OVER (PARTITION BY e.entity_id
                          ORDER BY array_length(string_to_array(n.name_key, ' '), 1), n.name_key) AS place
  FROM visible_entity_names n JOIN visible_entities e USING (workspace_id, entity_id)
 WHERE n.workspace_id = %(ws)s AND n.name_words @@ to_tsquery('simple', %(tsq)s)
 ORDER BY e.entity_id, place
 LIMIT {CONTAINS_ANY_ROWS}"""

TRIGRAM_SQL = f"""
SELECT q.i, {_ENTITY_COLS}, t.name_key, 1 - t.dist AS sim
  FROM unnest(%(vecs)s::sparsevec[]) WITH ORDINALITY AS q(v, i)
  CROSS JOIN LATERAL (
      SELECT n.entity_id, n.name_key, n.trigrams <=> q.v AS dist
        FROM entity_names n
       WHERE n.workspace_id = %(ws)s
       ORDER BY n.trigrams <=> q.v
       LIMIT 4) t
  -- each of the few names found checked on its own (OFFSET 0 keeps the subquery apart):
  -- joined as a view, the generic plan hashed every visible entity of the workspace
  -- first, 0.2 ms of a ~1 ms probe on the demo business and growing with the workspace
  CROSS JOIN LATERAL (
      SELECT v.entity_id, v.kind, v.key, v.name FROM visible_entities v
       WHERE v.workspace_id = %(ws)s AND v.entity_id = t.entity_id
         -- (and the name found is one the asker may read: sql/036)
         AND EXISTS (SELECT 1 FROM visible_entity_names vn WHERE vn.workspace_id = %(ws)s
                        AND vn.entity_id = t.entity_id AND vn.name_key = t.name_key) OFFSET 0) e
 ORDER BY q.i, t.dist, e.entity_id"""

# An entity that a visible memory names is visible by the rule's own definition (see
# visible_entities), so the entities of visible hits are read through their memories:
# one primary-key check per hit instead of a search for some visible fact per entity.
MEANING_SQL = f"""
SELECT me.memory_id, {_ENTITY_COLS}
  FROM memory_entities me
  JOIN visible_memories m USING (workspace_id, memory_id)
  JOIN named_entities e USING (workspace_id, entity_id)
 WHERE me.workspace_id = %(ws)s AND me.memory_id = ANY(%(ids)s) AND me.role IN ('subject', 'about', 'from')
 ORDER BY me.memory_id, me.entity_id"""

# The newest current record of each of these kinds: what a question asking for the newest
# of a kind and naming nothing ("En son kesilen fatura hangisi?") is about.
NEWEST_SQL = _records_per_value("m.kind = v.value", "m.occurred_at DESC, m.memory_id DESC", 1)

# What the best recalled conversation turns are about: their speakers and the entities
# they name (`from`, `about`, `mention`), and the records keyed by an identifier in their
# text (FORMAT.md: a turn is not linked to synced records, "an order number in a message
# meets its record at query time, through text"). Named by a visible turn, an entity is
# visible; a keyed record is found as a question's code is (CODES_SQL), in the same
# statement: one wait.
SAID_SQL = f"""
SELECT * FROM (
    SELECT me.memory_id, me.role, {_ENTITY_COLS}
      FROM visible_memory_entities me
      JOIN visible_memories m USING (workspace_id, memory_id)
      JOIN named_entities e USING (workspace_id, entity_id)
     WHERE me.workspace_id = %(ws)s AND me.memory_id = ANY(%(ids)s) AND m.origin <> 'record'
       AND me.role IN ('from', 'about', 'mention')
    UNION ALL
    SELECT NULL, c.code, c.entity_id, c.kind, c.key, c.name FROM ({CODES_SQL}) c) u
 ORDER BY 1 NULLS LAST, 2, 3"""

_NOISE = tx.STOPWORDS | set(tx.KIND_WORDS)


def _node(row: Any) -> Node:
    return Node(int(row[0]), str(row[1]), str(row[2]), str(row[3]))


def _spans(words: tuple[str, ...], longest: int = 8) -> list[tuple[int, int]]:
    out = []
    for i in range(len(words)):
        for j in range(min(len(words), i + longest), i, -1):
            if words[i] in _NOISE or words[j - 1] in _NOISE:
                continue
            out.append((i, j))
    return out


@dataclass
class Lookups:
    """Step 1's lookups (codes, names, names holding a word), sent before their rows are
    needed: what they ask depends on the question alone, so on a pipelined connection
    they run before the fused statement, and this process reads them while it runs (see
    brain.read.run)."""
    codes: Rows | None
    names: Rows | None
    coded: frozenset[int]                          # word positions that are record codes
    keys: dict[str, tuple[tuple[int, int], str]]   # name key -> (word span, exact | suffix)
    ms: float
    contains: Rows | None = None                   # CONTAINS_ANY_SQL, for the words no code explains
    amounts: Rows | None = None                    # AMOUNTS_SQL, for the amounts it gives
    folded: tuple[str, ...] = ()                   # the question's words, folded
    forms: dict[str, int] | None = None            # what `contains` asked for: every loose word's forms


def _loose(words: tuple[str, ...], covered: set[int] | frozenset[int],
           codes: frozenset[int] = frozenset()) -> dict[str, int]:
    """The forms of the words that may sit inside a longer name (not explained, not a
    stop or kind word, four letters or more, no digit): folded stem candidates of four
    letters or more, each with the first word it came from. A record code no record is
    keyed by (`codes`, not `covered`) is sought as written: it may be part of a name
    ("IP-22" in "İnfüzyon Pompası IP-22")."""
    forms: dict[str, int] = {}
    for i, w in enumerate(words):
        if i in codes and i not in covered and len(w) >= 4:
            forms.setdefault(tx.fold(w), i)
            continue
        # (a kind word in any form, "hastanesine", is not sought inside names: many an
        # organisation's name holds its kind, "... Hastanesi", "... Lojistik")
        if i in covered or w in _NOISE or len(w) < 4 or any(ch.isdigit() for ch in w) or tx.word_kinds(w):
            continue
        for cand in tx.stem_candidates(w):
            f = tx.fold(cand)
            if len(f) >= 4 and " " not in f:
                forms.setdefault(f, i)
    return forms


def _tsquery(forms: dict[str, int]) -> str:
    return " | ".join(f"'{f}'" for f in forms)


def _contains_from(rows: list[Any], forms: dict[str, int]) -> list[Any] | None:
    """CONTAINS_SQL's rows for `forms`, read from CONTAINS_ANY_SQL's (asked for a superset
    of them): each entity's first name, in that statement's order, among those holding one
    of `forms`, by entity, at most 60. None when those rows were cut short."""
    if len(rows) >= CONTAINS_ANY_ROWS:
        return None
    first: dict[int, Any] = {}
    for row in rows:
        if row[0] not in first and not forms.keys().isdisjoint(row[5]):
            first[row[0]] = row[:5]
    return [first[eid] for eid in sorted(first)][:60]


def send_lookups(conn: Executor, q: Worded, *, workspace: str) -> Lookups:
    t0 = time.perf_counter()
    words = q.words
    codes = conn.execute(CODES_SQL, {"ws": workspace, "codes": TextArray(q.codes)}) if q.codes else None
    code_set = {c.lower() for c in q.codes}
    coded = frozenset(i for i, w in enumerate(words) if w in code_set)
    # names and aliases: exact spans, then with the last word's case ending removed
    # (spans over a record code are not names)
    spans = [(i, j) for i, j in _spans(words) if coded.isdisjoint(range(i, j))]
    keys: dict[str, tuple[tuple[int, int], str]] = {}
    # A span's key is its words' keys joined (tx.fold_joined): each word is folded once,
    # and its fold is kept from question to question, where folding every span anew cost
    # most of this function before the lookups could go out (137 -> 62 us a question
    # with every text cache cleared, ad-hoc /tmp/s15/keys2.py; same keys).
    folded = [tx.fold(w) for w in words]
    for i, j in spans:
        keys.setdefault(tx.fold_joined(folded[i:j]), ((i, j), "exact"))
        for cand in tx.stem_candidates(words[j - 1])[1:]:
            if len(cand) >= 3:
                keys.setdefault(tx.fold_joined([*folded[i:j - 1], tx.fold(cand)]), ((i, j), "suffix"))
    names = conn.execute(NAMES_SQL, {"ws": workspace, "keys": TextArray(keys)}) if keys else None
    # Words inside longer names are looked for among the words the names leave, which
    # are known only once the names are read; asked now for every word no code explains,
    # the server answers before the fused statement sent next, and find_anchors keeps
    # the names that hold a word the names left.
    forms = _loose(words, frozenset(), coded)
    contains = (conn.execute(CONTAINS_ANY_SQL, {"ws": workspace, "forms": TextArray(forms), "tsq": _tsquery(forms)})
                if forms else None)
    given = amounts(words) + day_forms(q.text, q.now)
    stated = conn.execute(AMOUNTS_SQL, {"ws": workspace, "values": TextArray(given)}) if given else None
    return Lookups(codes, names, coded, keys, (time.perf_counter() - t0) * 1000, contains, stated,
                   tuple(folded), forms)


@functools.lru_cache(maxsize=256)
def _name_like(text: str) -> frozenset[str]:
    """The words of a question written like a name (capitalised)."""
    return frozenset(w for raw in text.split() if raw[:1].isupper() for w in tx.words(raw))


def find_anchors(conn: Executor, q: Question, *, workspace: str, cfg: RecallConfig,
                 sent: Lookups | None = None) -> AnchorStep:
    """The entities the question names, each with how it matched and how sure it is
    (by meaning comes later, from the recalled memories: see `by_meaning`). `sent`: the
    exact lookups, if already sent (`send_lookups`)."""
    sent = sent or send_lookups(conn, q, workspace=workspace)
    t0 = time.perf_counter()
    found: dict[int, Anchor] = {}
    covered: set[int] = set()   # word positions already explained by an anchor
    # word positions inside a name an anchor matched exactly (not a fuzzy phrase's: one
    # may run from a name into the kind word after it, "Kaya siparişi"), and of a code's
    # kind said beside it
    named_at: set[int] = set()
    named_spans: list[range] = []   # the question's spans that names matched, in order
    near: list[Anchor] = []

    def keep(a: Anchor, positions: range | None = None) -> None:
        old = found.get(a.node.entity_id)
        if old is None or a.score > old.score:
            found[a.node.entity_id] = a
        if positions is not None:
            covered.update(positions)

    words = q.words
    folded = sent.folded or tuple(tx.fold(w) for w in words)
    # 1. record codes, exactly as written (a code no record is keyed by may be part of a
    # name: step 3)
    if sent.codes is not None:
        keyed: dict[str, set[str]] = {}   # each code -> the kinds of what it keys
        for row in sent.codes.fetchall():
            keep(Anchor(_node(row), "code", row[4], 1.0))
            keyed.setdefault(str(row[4]).lower(), set()).update(tx.kind_concepts(row[1]))
        coded = {i: keyed[words[i]] for i in sent.coded if words[i] in keyed}
        covered.update(coded)
        # A kind word right beside a code, of the kind the code keys, says what the anchor
        # is, as a name's words do ("IE-2026-0412 iş emrindeki traktörün sahibi": the work
        # order's tractor's owner, not a work order; "SO-1008 siparişinin faturası"): not
        # a kind asked (_asked_kinds), nor a link of a possessive chain (paths).
        for i, j, kind in tx.kind_spans(q.info.text) if coded else ():
            if kind in coded.get(i - 1, ()) or kind in coded.get(j, ()):
                named_at.update(range(i, j))

    # 1b. the records stating an amount the question gives, if few do
    if sent.amounts is not None:
        by_amount: dict[str, list[Any]] = {}
        for row in sent.amounts.fetchall():
            by_amount.setdefault(str(row[4]), []).append(row)
        for amount, group in by_amount.items():
            if len(group) <= AMOUNT_RECORDS:
                for row in group:
                    keep(Anchor(_node(row), "date" if _DAY_FORM.fullmatch(amount) else "amount", amount, 0.8))

    # 2. names and aliases (the keys send_lookups asked for)
    keys = sent.keys
    if sent.names is not None:
        rows = sent.names.fetchall()
        # longest spans first, exact before suffix-stripped, so "Ağaoğlu Yapı" beats "Yapı"
        rows.sort(key=lambda r: (-(keys[r[4]][0][1] - keys[r[4]][0][0]), keys[r[4]][1] != "exact"))
        # A span that names several entities (a short name two things share) anchors
        # all of them, each less surely; a span inside a longer matched one anchors none.
        by_span: dict[tuple[int, int], list[Any]] = {}
        for row in rows:
            by_span.setdefault(keys[row[4]][0], []).append(row)
        for (i, j), group in by_span.items():
            if covered.intersection(range(i, j)):
                continue
            best = min(keys[r[4]][1] != "exact" for r in group)
            group = [r for r in group if (keys[r[4]][1] != "exact") == best]
            sure = (1.0 if not best else 0.9) * (1.0 if len(group) == 1 else 0.8)
            for row in group:
                keep(Anchor(_node(row), keys[row[4]][1], " ".join(words[i:j]), sure))
            # the words right after a short name matched (an alias, "Dinamik") that go on
            # with its entity's full name ("Dinamik Sürücü" of "Dinamik Sürücü Elektronik
            # ...") are that name too: "sürücü" is no driver asked for
            if len(group) == 1:
                rest = {tx.fold(w) for w in tx.words(str(group[0][3]))}
                while j < len(words) and folded[j] in rest:
                    j += 1
            covered.update(range(i, j))
            named_at.update(range(i, j))
            named_spans.append(range(i, j))

    # 2b. a longer name that holds words of a name matched above and of another part of
    # the question, which it joins ("Ayten Karaca'nın Kapadokya rezervasyonu": the booking
    # "RZ-0412 Kapadokya – Ayten Karaca", of her two; "Kızılay İş Hanı asansörü": the
    # building's lift): more precisely what the question names than either part alone
    # (read once: a psycopg cursor gives its rows once)
    contains = sent.contains.fetchall() if sent.contains is not None else None
    if named_spans and contains is not None:
        _join_names(contains, named_spans, sent.forms if sent.forms is not None else
                    _loose(words, frozenset(), sent.coded), found, keep)

    # 3. a question word contained in a longer name ("Ağaoğlu" in "Ağaoğlu Yapı Market")
    # (nor is a word of a kind said in more words: "analiz" of "analiz raporunda")
    phrased = {k for i, j, _ in tx.kind_spans(q.info.text) if j - i > 1 for k in range(i, j)}
    # (nor a word of an attribute said in more words: "vergi" of "vergi numarası" is not
    # the "Vergi" of "Kavaklıdere Vergi Dairesi")
    phrased |= tx.attribute_phrase_positions(q.info.text)
    forms = _loose(words, covered | phrased, sent.coded)
    if forms:
        holding = _contains_from(contains, forms) if contains is not None else None
        if holding is None:
            holding = conn.execute(CONTAINS_SQL, {"ws": workspace, "tsq": _tsquery(forms)}).fetchall()
        by_word: dict[int, list[Any]] = {}
        for row in holding:
            name_words = row[4].split()
            padded = f" {row[4]} "
            # (a code's fold may be words: "2026/418" -> "2026 418", held in that order)
            hit = [i for f, i in forms.items() if (f in name_words if " " not in f else f" {f} " in padded)]
            for i in set(hit):
                by_word.setdefault(i, []).append(row)
        # a word written in lower case, beside a name or code already anchored, that
        # several names hold is a common noun of theirs ("grubunun" of the classes "… Grubu",
        # "fındığını" of the products "… İç Fındık"), not a name
        plain = ({i for i, w in enumerate(words) if w not in _name_like(q.info.text) and i not in sent.coded}
                 if found else set())
        for i, group in by_word.items():
            if len(group) > 5 or (i in plain and len(group) > 1):
                # a common word names many things: it anchors none
                near.extend(Anchor(_node(r), "contains", words[i], 0.3) for r in group[:5])
                continue
            for row in group:
                share = 1.0 / max(1, len(row[4].split()))
                keep(Anchor(_node(row), "contains", words[i], round(0.6 + 0.3 * share, 3)), range(i, i + 1))

    # 4. trigram similarity for what is still unexplained (typos, ASCII-typed names)
    # Fuzzy matching costs an index probe per phrase: once something is anchored, only
    # words written like a name (capitalised in the question) are tried.
    # A phrase made only of words that say what the question asks for (its kind,
    # attribute and period words: "geçen ay", "ödemeler", "vergi numarası") names nothing:
    # a period question tried 5-6 such phrases, each an index probe on the server while
    # the read waits (~0.1 ms each on the demo business).
    name_like = _name_like(q.info.text)
    named = {i for i, w in enumerate(words) if w in name_like}
    phrases: list[tuple[str, range]] = []
    asking: frozenset[int] | None = None
    for i, j in _spans(words, longest=3):
        if covered.intersection(range(i, j)):
            continue
        if found and not named.intersection(range(i, j)):
            continue
        if asking is None:
            period_words = set(tx.words(q.period.words)) if q.period else set()
            asking = tx.concept_positions(q.info.text) | {k for k, w in enumerate(words) if w in period_words}
        if all(k in asking or words[k] in _NOISE for k in range(i, j)):
            continue
        phrase = " ".join(words[i:j])
        if len(phrase) >= 5 and not any(ch.isdigit() for ch in phrase):
            phrases.append((phrase, range(i, j)))
    phrases = phrases[:12]
    if phrases:
        vecs = [SparseVector(tx.trigrams(p), tx.TRIGRAM_DIM) for p, _ in phrases]
        for row in conn.execute(TRIGRAM_SQL, {"ws": workspace, "vecs": vecs}):
            phrase, positions = phrases[int(row[0]) - 1]
            sim = float(row[6])
            anchor = Anchor(_node(row[1:5]), "trigram", phrase, round(sim * 0.85, 3))
            if sim >= cfg.trigram_min:
                keep(anchor, positions)
            elif sim >= cfg.trigram_min * 0.7:
                near.append(anchor)

    anchors = sorted(found.values(), key=lambda a: -a.score)[: cfg.max_anchors]
    near_ids = {a.node.entity_id for a in anchors}
    misses = tuple(a for a in near if a.node.entity_id not in near_ids)[:20]
    return AnchorStep(tuple(anchors), _asked_kinds(q, named_at), misses,
                      sent.ms + (time.perf_counter() - t0) * 1000, tuple(sorted(named_at)))


# Longer names joining two parts of the question are anchors when this few are found: more
# are a common word's (every "... Sitesi ... Blok Asansörü" of one building)
_JOINED_MAX = 3


def _join_names(rows: list[Any], named_spans: list[range], forms: dict[str, int], found: dict[int, Anchor],
                keep: Callable[[Anchor], None]) -> None:
    """Anchor the entities not yet anchored whose names hold the words of two parts of the
    question, at least one of them a name matched exactly (`named_spans`); `forms`: every
    loose word's forms (`_loose`), `rows`: CONTAINS_ANY_SQL's, which asked for them all."""
    if len(rows) >= CONTAINS_ANY_ROWS:
        return   # (cut short: which names join is not known)
    part = {k: n for n, span in enumerate(named_spans) for k in span}
    joined: dict[int, Any] = {}
    for row in rows:   # (each of an entity's names on its own: two aliases join nothing)
        if row[0] in found or row[0] in joined:
            continue
        parts = {part.get(k, -1 - k) for k in {forms[f] for f in row[5] if f in forms}}
        if len(parts) >= 2 and any(p >= 0 for p in parts):
            joined[row[0]] = row
    if len(joined) > _JOINED_MAX:
        return
    for row in joined.values():
        keep(Anchor(_node(row), "contains", row[3], 0.85 if len(joined) == 1 else 0.7))


def _asked_kinds(q: Question, named_at: set[int]) -> tuple[tuple[str, str], ...]:
    """The question's kinds but those said only where they ask for nothing: inside a name
    it was anchored by, or beside a code as the kind of what it keys (`named_at`: "Ege Diş
    Klinikleri" names a customer, it does not ask for a clinic), or as the first word of a
    noun compound. A kind word also said elsewhere still asks."""
    spans = tx.kind_spans(q.info.text)
    # A bare kind word right before another kind word says which one, as a noun compound
    # does ("lab order", "lab siparişi": an order; "laboratuvarın siparişi", with its
    # genitive, asks for both): it asks for nothing of its own.
    bare = tx.bare_kind_words(q.info.text) if len(spans) > 1 else frozenset()
    idle = named_at | {i for (i, j, k), (i2, _, k2) in zip(spans, spans[1:])
                       if j == i2 and j - i == 1 and k != k2 and i in bare}
    if not idle:
        return q.info.kinds
    inside = ({kind for _, _, kind in spans}
              - {kind for i, j, kind in spans if not idle.issuperset(range(i, j))})
    # (a kind the question implies by another word, question._IMPLIED_KINDS, is kept)
    return tuple((said, kind) for said, kind in q.info.kinds if kind not in inside)


def by_meaning(conn: Executor, step: AnchorStep, hits: tuple[Hit, ...], *, workspace: str,
               cfg: RecallConfig, listing: bool = False) -> AnchorStep:
    """Last resort when the question names nothing: the entities behind the nearest
    memories (step 2's best hits), each less sure the further down it came. Not for a
    question that lists what a period holds (`listing`: "which orders came in October",
    "which releases went out last week": a period, no name): its answer is every such
    fact, not what the few nearest ones are about, whose paths would crowd the others out
    of the context."""
    if step.anchors or not hits or listing:
        return step
    t0 = time.perf_counter()
    top = [h.memory_id for h in hits[: cfg.meaning_anchors]]
    order = {m: r for r, m in enumerate(top)}
    rows = conn.execute(MEANING_SQL, {"ws": workspace, "ids": IntArray(top)}).fetchall()
    rows.sort(key=lambda r: order[r[0]])
    found: dict[int, Anchor] = {}
    for row in rows:
        node = _node(row[1:])
        found.setdefault(node.entity_id, Anchor(node, "meaning", "", round(0.4 - 0.05 * order[row[0]], 3)))
    anchors = tuple(list(found.values())[: cfg.meaning_anchors])
    return replace(step, anchors=anchors, ms=step.ms + (time.perf_counter() - t0) * 1000)


def by_newest(conn: Executor, step: AnchorStep, kind_names: tuple[str, ...], *, workspace: str) -> AnchorStep:
    """A question asking for the newest of a kind that names nothing ("En son kesilen fatura
    hangisi?", "What is the latest complaint?") is about the newest current record of each
    of the store's kinds it asks for (`kind_names`: the record kinds of the asker's modules)."""
    asked = {k for _, k in step.kinds}
    kinds = [k for k in kind_names if not asked.isdisjoint(tx.kind_concepts(k))]
    if step.anchors or not kinds:
        return step
    t0 = time.perf_counter()
    rows = conn.execute(NEWEST_SQL, {"ws": workspace, "values": TextArray(kinds)}).fetchall()
    anchors = {int(r[0]): Anchor(_node(r), "newest", str(r[4]), 0.6) for r in rows}
    return replace(step, anchors=tuple(anchors.values()), ms=step.ms + (time.perf_counter() - t0) * 1000)


def by_what_was_said(conn: Executor, step: AnchorStep, hits: tuple[Hit, ...], *, workspace: str,
                     cfg: RecallConfig, asks_said: bool) -> tuple[AnchorStep, tuple[Anchor, ...]]:
    """A question about what someone said ("Serkan Öztürk'ün tescil edildi dediği
    beyanname", "the container Giulia mentioned in her e-mail") asks about what the turn
    names, not about the speaker: among the best recalled turns, those sent by an anchor
    or about one lend what they name (the records keyed by an identifier in their text,
    the entities they mention) as anchors too, each less sure the further down its turn
    came. Returns the step and the anchors it added (path search reads their edges apart:
    the first level was sent for the others)."""
    if not asks_said or not step.anchors or not hits:
        return step, ()
    t0 = time.perf_counter()
    top = hits[: cfg.said_hits]
    order = {h.memory_id: r for r, h in enumerate(top)}
    # identifiers in the turns' text: a word with a digit and a letter ("EXP-2026-049",
    # "26330100EX005102"), as record keys are compared (upper case)
    ids_in = {h.memory_id: {w.upper() for w in tx.words(h.text)
                            if len(w) >= 4 and any(c.isdigit() for c in w) and any(c.isalpha() for c in w)}
              for h in top}
    keys = sorted(set().union(*ids_in.values()))
    turns: dict[int, list[Any]] = {}
    keyed: dict[str, list[Any]] = {}
    for row in conn.execute(SAID_SQL, {"ws": workspace, "ids": IntArray(order), "codes": TextArray(keys)}).fetchall():
        if row[0] is None:
            keyed.setdefault(str(row[1]), []).append(row)
        else:
            turns.setdefault(int(row[0]), []).append(row)
    have = {a.node.entity_id: a for a in step.anchors}
    added: dict[int, Anchor] = {}
    for h in top:
        rows = turns.get(h.memory_id, [])
        speaker = next((have[int(r[2])] for r in rows if r[1] in ("from", "about") and int(r[2]) in have), None)
        if speaker is None:
            continue
        named = [r for r in rows if r[1] == "mention"] + [r for k in sorted(ids_in[h.memory_id]) for r in keyed.get(k, ())]
        for r in named:
            eid = int(r[2])
            if eid not in have and eid not in added:
                added[eid] = Anchor(_node(r[2:]), "said", speaker.matched,
                                    round(0.7 * speaker.score - 0.05 * order[h.memory_id], 3))
        if len(added) >= cfg.said_anchors:
            break
    new = tuple(list(added.values())[: cfg.said_anchors])
    ms = step.ms + (time.perf_counter() - t0) * 1000
    return replace(step, anchors=step.anchors + new, ms=ms), new
