"""The write path: FORMAT.md lines into the store, no language model involved.

Each line is written in its own transaction under an advisory lock keyed by the thing it
describes, so retried and concurrent deliveries of one record are written exactly once.
Records keep every version (newest current, older ones marked earlier); messages and
notes link to the entities they name, Turkish case endings included.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from pgvector import SparseVector

from brain import corrections
from brain import text as tx
from brain.db import Store
from brain.embed import Embedder
from brain.errors import BadLine, BrainError
from brain.extract import Extractor, NoExtractor, extract_facts
from brain.format import (
    Line, MemberLine, MessageLine, NoteLine, RecordLine, Ref, RoleLine, WorkspaceLine,
)

# Legal-form words dropped to make a short alias ("Ağaoğlu Yapı A.Ş." → "Ağaoğlu Yapı").
_LEGAL_FORMS = {"a s", "as", "a ş", "ltd", "sti", "ltd sti", "inc", "llc", "gmbh", "san", "tic",
                "san ve tic", "ve", "limited", "sirketi", "co", "corp"}
_LEGAL_FORMS_GLUED = frozenset(f.replace(" ", "") for f in _LEGAL_FORMS)
# Kinds whose first name word is a usual short name ("Ağaoğlu" for "Ağaoğlu Yapı").
_SHORT_NAME_KINDS = {"company", "supplier", "customer", "organization", "organisation"}


@dataclass(frozen=True)
class WriteResult:
    """What one line did: written | earlier | unchanged | duplicate | upserted."""

    outcome: str
    ref: str
    memory_id: int | None = None


def _hash(payload: Any) -> str:
    raw = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha1(raw.encode("utf-8")).hexdigest()


# Titles written before a person's name ("Dr. Hakan Erdem", "Op. Dr. ...", "Av. ..."),
# which people leave out when they name the person.
_TITLES = frozenset({"dr", "op", "prof", "doc", "uzm", "av", "muh", "mr", "mrs", "ms", "sn"})


def derived_aliases(kind: str, name: str) -> list[str]:
    """Short names people use for an organisation, derived from its full name, and a name
    without the titles written before it ("Dr. Hakan Erdem" -> "Hakan Erdem")."""
    folded = tx.fold(name).split()
    out: list[str] = []
    words = name.split()
    lead = 0
    while lead < len(words) - 2 and tx.fold(words[lead]).replace(" ", "") in _TITLES:
        lead += 1
    if lead:
        out.append(" ".join(words[lead:]))
    # drop trailing legal-form words
    keep = len(words)
    while keep > 1 and tx.fold(words[keep - 1]).replace(" ", "") in _LEGAL_FORMS_GLUED:
        keep -= 1
    if keep < len(words):
        out.append(" ".join(words[:keep]))
    if kind in _SHORT_NAME_KINDS and len(folded) >= 2 and len(folded[0]) >= 4:
        out.append(words[0].rstrip(",."))
        # "Ağaoğlu Yapı" for "Ağaoğlu Yapı Market": every leading part of two words or more
        out.extend(" ".join(words[:n]).rstrip(",.") for n in range(2, keep))
    elif "company" in tx.kind_concepts(kind) and len(folded) >= 3:
        # an organisation of another vocabulary ("müşteri", "hastane", "bayi"): its leading
        # parts of two words or more ("Yıldız Sigorta" for "Yıldız Sigorta Aracılık ..."),
        # not its first word alone, which for these is often a common one ("Özel ...")
        out.extend(" ".join(words[:n]).rstrip(",.") for n in range(2, keep))
    return list(dict.fromkeys(out))


def record_ref(line: RecordLine) -> str:
    return f"record:{line.app}:{line.kind}:{line.id}"


@dataclass(frozen=True)
class Naming:
    """An entity's name and who may read the fact that gave it (FORMAT.md: an entity
    named only by facts the asker cannot see is never named)."""

    name: str
    module: str
    privacy: str
    owner: str | None
    live: bool = True   # neither superseded nor expiring: readable for as long as it is kept

    def readable_with(self, module: str, privacy: str, owner: str | None) -> bool:
        """Whether every reader of a fact of `module`, `privacy` and `owner` may read this
        name's fact too: only then may that fact's stored text carry the name."""
        return self.live and self.module == module and (
            self.privacy == "shared" or (privacy != "shared" and owner is not None and owner == self.owner))


def _line_naming(line: RecordLine) -> Naming:
    return Naming(line.name, line.module, line.privacy, line.owner)


_NAMING_SQL = """
SELECT e.name, m.module, m.privacy, m.owner_id, m.superseded_by IS NULL AND m.expires_at IS NULL
  FROM entities e
  LEFT JOIN memories m ON m.workspace_id = e.workspace_id AND m.memory_id = e.name_memory_id
 WHERE e.workspace_id = %s AND e.kind = %s AND e.key = %s AND NOT e.is_stub"""

# Names a prediction may use: (workspace, kind, id) -> the naming, learned from lines that
# committed. A prediction only saves embedding twice (see Writer.render).
Namings = dict[tuple[str, str, str], Naming]


class Writer:
    """Writes parsed lines. One instance per process; safe to share across threads."""

    def __init__(self, store: Store, embedder: Embedder, *, extractor: Extractor | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.extractor = extractor or NoExtractor()
        self._lock = threading.Lock()
        # the namings of records that committed, for predictions (render without a connection)
        self._named: Namings = {}
        # workspace -> (highest entity id seen, folded name -> entity id or None if ambiguous,
        # the index of the unambiguous names, ids of names not yet committed when last read),
        # grown as entities arrive
        self._mentionable: dict[str, tuple[int, dict[str, int | None], tx.NameIndex[int], frozenset[int]]] = {}

    # -- rendering: the text a memory states (also what gets embedded) ---------------
    def _naming(self, conn: psycopg.Connection[Any] | None, ws: str, kind: str, ident: str,
                pending: Namings | None) -> Naming | None:
        """The name of entity (kind, ident) and its fact: read in the writing transaction
        (`conn`), else predicted from lines rendered before it (`pending`) and lines that
        committed, else read in a transaction of its own."""
        key = (ws, kind, ident)
        if conn is None:
            if pending is not None and key in pending:
                return pending[key]
            if key in self._named:
                return self._named[key]
            with self.store.bound(ws, readonly=True) as (own, _):
                row = own.execute(_NAMING_SQL, key).fetchone()
        else:
            row = conn.execute(_NAMING_SQL, key).fetchone()
        if row is None:
            return None
        name, module, privacy, owner, live = row
        return Naming(str(name), module or "", privacy or "", owner, bool(live) and module is not None)

    def render(self, line: Line, conn: psycopg.Connection[Any] | None = None,
               pending: Namings | None = None) -> str | None:
        """The memory text of a line (None for workspace/role/member lines).

        With `conn`, the writing transaction's: what is stored. Without it, a prediction
        made before writing, so that a load can embed many lines at once; `pending` holds
        what earlier lines of the same batch will name, and is added to. The writer renders
        each line again in its transaction and embeds it anew if the two differ (an earlier
        line of the batch was rejected, or another process wrote meanwhile).

        A link target's or sender's name is carried only when every reader of this line
        may read the fact that gave the name (Naming.readable_with); otherwise the line
        names it by kind and key, and the read path names it for askers who may read that
        fact (the named_entities view, sql/036).
        """
        if isinstance(line, RecordLine):
            if pending is not None:
                pending[(line.workspace, line.kind, line.id)] = _line_naming(line)
            head = f"{line.kind} {line.id}" + (f" ({line.name})" if line.name != line.id else "")
            parts = [head + (f": {line.text}" if line.text else "")]
            # A field whose value the text already states verbatim is not repeated: the
            # context pays for every token. Nothing is lost: all fields stay in attrs.
            said = tx.tr_lower(line.text)
            extra = [(k, _field(v)) for k, v in line.fields.items()
                     if not (line.text and _field(v) and tx.tr_lower(_field(v)) in said)]
            if extra:
                parts.append("; ".join(f"{k}: {v}" for k, v in extra))
            for link in line.links:
                tid = link.target.id or ""
                named = self._naming(conn, line.workspace, link.target.kind, tid, pending)
                tname = named.name if named is not None else None
                # a relation the text already states (by id or name) is not repeated (the
                # text is this line's own: leaving a part out shows nothing it does not)
                if line.text and (tid.lower() in line.text.lower() or (tname and tname in line.text)):
                    continue
                carried = tname if named is not None and named.readable_with(
                    line.module, line.privacy, line.owner) else None
                parts.append(f"{link.rel} → {link.target.kind} {tid}"
                             + (f" ({carried})" if carried and carried != tid else ""))
            return " | ".join(parts)
        if isinstance(line, MessageLine):
            # The sender's name is embedded with the text (who said it matters for
            # meaning) but not stored in it: the context names the sender at read time,
            # from the linked entity, so a sender whose record arrives later is named too.
            sender = self._sender_name(conn, line, pending)
            return f"{sender}: {line.text}" if sender else line.text
        if isinstance(line, NoteLine):
            return line.text
        return None

    def _sender_name(self, conn: psycopg.Connection[Any] | None, line: MessageLine,
                     pending: Namings | None = None) -> str | None:
        """The sender as this message may name it: by the name the message gives, else by
        its record's name where every reader of the message may read that record, else by
        its id."""
        ref = line.sender
        if ref is None:
            return None
        if ref.name and not ref.id:
            return ref.name
        named = self._naming(conn, line.workspace, ref.kind, ref.id or "", pending)
        if named is not None and named.readable_with(line.module, line.privacy, line.owner):
            return named.name
        return ref.name or ref.id

    # -- public ----------------------------------------------------------------------
    def write(self, line: Line, *, text: str | None = None, embedding: np.ndarray | None = None) -> WriteResult:
        """Write one parsed line in its own transaction. Raises BadLine on store-level errors."""
        if isinstance(line, WorkspaceLine):
            with self.store.bound(line.id) as (conn, _):
                conn.execute(
                    "INSERT INTO workspaces (workspace_id, org, name) VALUES (%s, %s, %s)"
                    " ON CONFLICT (workspace_id) DO UPDATE SET org = EXCLUDED.org, name = EXCLUDED.name",
                    (line.id, line.org, line.name))
            return WriteResult("upserted", f"workspace:{line.id}")
        with self.store.bound(line.workspace) as (conn, _):
            if conn.execute("SELECT 1 FROM workspaces WHERE workspace_id = %s", (line.workspace,)).fetchone() is None:
                raise BadLine(f"unknown workspace {line.workspace!r}: add a workspace line for it first")
            if isinstance(line, RoleLine):
                conn.execute(
                    "INSERT INTO roles (workspace_id, role_id, modules) VALUES (%s, %s, %s)"
                    " ON CONFLICT (workspace_id, role_id) DO UPDATE SET modules = EXCLUDED.modules",
                    (line.workspace, line.id, list(line.modules)))
                return WriteResult("upserted", f"role:{line.id}")
            if isinstance(line, MemberLine):
                conn.execute(
                    "INSERT INTO members (workspace_id, member_id, name, roles) VALUES (%s, %s, %s, %s)"
                    " ON CONFLICT (workspace_id, member_id) DO UPDATE SET name = EXCLUDED.name, roles = EXCLUDED.roles",
                    (line.workspace, line.id, line.name, list(line.roles)))
                return WriteResult("upserted", f"member:{line.id}")
            owner = getattr(line, "owner", None)
            if owner and conn.execute("SELECT 1 FROM members WHERE workspace_id = %s AND member_id = %s",
                                      (line.workspace, owner)).fetchone() is None:
                raise BadLine(f"unknown member {owner!r} as owner in workspace {line.workspace!r}: "
                              "add a member line for it first")
            # what the line states, as of what has committed: a prediction made without
            # the transaction (`text`) is kept with its vector only if it says the same
            stated = self.render(line, conn)
            assert stated is not None
            if embedding is None or stated != text:
                embedding = self.embedder.embed_passages([stated])[0]
            if isinstance(line, RecordLine):
                result = self._record(conn, line, stated, embedding)
            else:
                result = self._conversation(conn, line, stated, embedding)
        # (committed: what the line named may now be predicted from)
        if isinstance(line, RecordLine) and result.outcome == "written":
            self._named[(line.workspace, line.kind, line.id)] = _line_naming(line)
        return result

    # -- records ---------------------------------------------------------------------
    def _record(self, conn: psycopg.Connection[Any], r: RecordLine, text: str, emb: np.ndarray) -> WriteResult:
        ref = record_ref(r)
        ws = r.workspace
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"{ws}|{ref}",))
        if r.sync_id and conn.execute(
                "SELECT 1 FROM sync_ledger WHERE workspace_id = %s AND sync_id = %s", (ws, r.sync_id)).fetchone():
            return WriteResult("duplicate", ref)
        chash = _hash({"module": r.module, "kind": r.kind, "id": r.id, "name": r.name, "fields": r.fields,
                       "links": [(link.rel, link.target.kind, link.target.id) for link in r.links],
                       "text": r.text, "privacy": r.privacy, "owner": r.owner, "aliases": r.aliases})
        versions = conn.execute(
            "SELECT memory_id, occurred_at, content_hash, is_current FROM record_versions"
            " WHERE workspace_id = %s AND app = %s AND kind = %s AND record_id = %s",
            (ws, r.app, r.kind, r.id)).fetchall()
        same = next((v for v in versions if v[2] == chash), None)
        if same is not None:
            # The same content again: nothing new is written, but the fact is confirmed.
            conn.execute("UPDATE memories SET confirmed_at = greatest(confirmed_at, %s)"
                         " WHERE workspace_id = %s AND memory_id = %s", (r.date, ws, same[0]))
            self._ledger(conn, ws, r.sync_id, ref, same[0], "unchanged")
            return WriteResult("unchanged", ref, same[0])
        current = next((v for v in versions if v[3]), None)
        becomes_current = current is None or r.date >= current[1]

        if becomes_current and current is not None:
            conn.execute("UPDATE record_versions SET is_current = false WHERE workspace_id = %s AND memory_id = %s",
                         (ws, current[0]))
        memory_id = self._memory(conn, ws, origin="record", kind=r.kind, ref=ref, module=r.module,
                                 privacy=r.privacy, owner=r.owner, source=r.source, tool=False, text=text,
                                 attrs={"app": r.app, "id": r.id, "name": r.name, "fields": r.fields,
                                        "links": [{"rel": lk.rel, "kind": lk.target.kind, "id": lk.target.id}
                                                  for lk in r.links], **r.extra},
                                 chash=chash, when=r.date, expires=None, emb=emb,
                                 search_extra=_kind_labels(r.kind))
        # (after the memory: the version that becomes current gives the entity its names)
        subject = self._entity(conn, ws, r.kind, r.id, r.name, stub=False,
                               aliases=list(r.aliases), update=becomes_current, named_by=memory_id)
        targets = [(link, self._entity(conn, ws, link.target.kind, link.target.id or "", link.target.id or "",
                                       stub=True)) for link in r.links]
        self._link(conn, ws, memory_id, subject, "subject")
        for link, target in targets:
            self._link(conn, ws, memory_id, target, "link")
            conn.execute(
                "INSERT INTO edges (workspace_id, rel, src_id, dst_id, module, memory_id, valid_from)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s)", (ws, link.rel, subject, target, r.module, memory_id, r.date))
        self._unrelate_linked_fields(conn, ws, subject, [target for _, target in targets])
        self._field_codes(conn, r, subject, memory_id, {target for _, target in targets})
        conn.execute(
            "INSERT INTO record_versions (workspace_id, app, kind, record_id, memory_id, occurred_at,"
            " content_hash, is_current) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (ws, r.app, r.kind, r.id, memory_id, r.date, chash, becomes_current))
        # Every version but the current one is an earlier value, valid until the next
        # newer version began; its relations end at the same moment.
        conn.execute(
            """WITH v AS (
                   SELECT memory_id, is_current,
                          lead(occurred_at) OVER (ORDER BY occurred_at, recorded_at, memory_id) AS next_at
                     FROM record_versions
                    WHERE workspace_id = %(ws)s AND app = %(app)s AND kind = %(kind)s AND record_id = %(id)s),
               m AS (UPDATE memories mm SET valid_to = CASE WHEN v.is_current THEN NULL ELSE v.next_at END
                       FROM v WHERE mm.workspace_id = %(ws)s AND mm.memory_id = v.memory_id)
               UPDATE edges e SET valid_to = CASE WHEN v.is_current THEN NULL ELSE v.next_at END
                 FROM v WHERE e.workspace_id = %(ws)s AND e.memory_id = v.memory_id""",
            {"ws": ws, "app": r.app, "kind": r.kind, "id": r.id})
        if becomes_current:
            conn.execute("UPDATE entities SET embedding = %s WHERE workspace_id = %s AND entity_id = %s",
                         (emb, ws, subject))
        outcome = "written" if becomes_current else "earlier"
        self._ledger(conn, ws, r.sync_id, ref, memory_id, outcome)
        return WriteResult(outcome, ref, memory_id)

    def _field_codes(self, conn: psycopg.Connection[Any], r: RecordLine, subject: int, memory_id: int,
                     linked: set[int]) -> None:
        """A field naming another record's code relates the two (sql/031): kept, and made an
        edge named by the field to every entity already keyed so (but those it links)."""
        found = _codes_in_fields(r.fields, r.id)
        if not found:
            return
        with conn.cursor() as cur:
            cur.executemany(_KEEP_FIELD_CODE, [(r.workspace, memory_id, subject, field, code, r.module, r.date)
                                               for field, code in found])
        conn.execute(_FIELD_EDGES + "f.workspace_id = %s AND f.memory_id = %s AND NOT (e.entity_id = ANY(%s))",
                     (r.workspace, memory_id, list(linked)))

    def _unrelate_linked_fields(self, conn: psycopg.Connection[Any], ws: str, subject: int, targets: list[int]) -> None:
        """A field's edge between two records a link relates too says nothing more, and its
        name may mislead ("son tahsilat" on an invoice, beside the payments' "pays")."""
        if targets:
            conn.execute(
                "DELETE FROM edges e USING field_codes f"
                " WHERE e.workspace_id = %(ws)s AND f.workspace_id = %(ws)s AND f.memory_id = e.memory_id"
                "   AND f.field = e.rel AND ((e.src_id = %(s)s AND e.dst_id = ANY(%(t)s))"
                "    OR (e.dst_id = %(s)s AND e.src_id = ANY(%(t)s)))",
                {"ws": ws, "s": subject, "t": targets})

    # -- messages and notes ----------------------------------------------------------
    def _conversation(self, conn: psycopg.Connection[Any], line: MessageLine | NoteLine, text: str,
                      emb: np.ndarray) -> WriteResult:
        ws = line.workspace
        is_msg = isinstance(line, MessageLine)
        scope = f"message:{line.channel}" if isinstance(line, MessageLine) else "note"
        chash = _hash({"text": line.text, "date": line.date.isoformat(), "module": line.module,
                       "privacy": line.privacy, "owner": line.owner,
                       "about": [(a.kind, a.id) for a in line.about],
                       "from": (line.sender.kind, line.sender.id, line.sender.name)
                       if isinstance(line, MessageLine) and line.sender else None})
        ref = f"{scope}:{line.id}" if line.id else f"{scope}:{chash[:16]}"
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"{ws}|{ref}",))
        prior = conn.execute(
            "SELECT memory_id, content_hash FROM memories WHERE workspace_id = %s AND ref_key = %s"
            " AND superseded_by IS NULL AND NOT (attrs ? 'extracted_from') ORDER BY memory_id DESC LIMIT 1",
            (ws, ref)).fetchone()
        if prior is not None and prior[1] == chash:
            return WriteResult("duplicate", ref, prior[0])

        attrs: dict[str, Any] = {"id": line.id, **line.extra}
        if isinstance(line, MessageLine):
            attrs.update({"channel": line.channel, "thread": line.thread,
                          "from": self._sender_name(conn, line)})
        expires = line.expires if isinstance(line, NoteLine) else None
        common = dict(origin="message" if is_msg else "note",
                      kind=line.channel if isinstance(line, MessageLine) else "note",
                      module=line.module, privacy=line.privacy, owner=line.owner, source=line.source,
                      tool=line.tool_output, when=line.date, expires=expires)
        memory_id = self._memory(conn, ws, ref=ref, text=line.text, attrs=attrs, chash=chash, emb=emb,
                                 search_extra=text if text != line.text else "", **common)  # type: ignore[arg-type]
        # (after the memory: a sender this message names is named by it)
        linked: dict[int, str] = {}
        if isinstance(line, MessageLine) and line.sender is not None:
            linked[self._sender_entity(conn, line, memory_id)] = "from"
        for about in line.about:
            eid = self._entity(conn, ws, about.kind, about.id or "", about.id or "", stub=True)
            linked.setdefault(eid, "about")
        for eid in self._mentions(conn, ws, line.text):
            linked.setdefault(eid, "mention")
        if prior is not None:  # an edited message or note: the new text replaces the old
            self._supersede(conn, ws, prior[0], memory_id)
        for eid, role in linked.items():
            self._link(conn, ws, memory_id, eid, role)
        if line.supersedes:
            old = conn.execute(
                "SELECT memory_id FROM memories WHERE workspace_id = %s AND ref_key = ANY(%s)"
                " AND memory_id <> %s", (ws, [f"{scope}:{line.supersedes}", line.supersedes], memory_id)).fetchall()
            for (old_id,) in old:
                self._supersede(conn, ws, old_id, memory_id)
        # Optional LLM fact extraction (off unless configured; never on tool output).
        facts = extract_facts(self.extractor, line.text, is_tool_output=line.tool_output)
        written = [memory_id]
        if len(facts) > 1 or (facts and facts[0] != line.text):
            vectors = self.embedder.embed_passages(facts)
            for i, (fact, vec) in enumerate(zip(facts, vectors)):
                fid = self._memory(conn, ws, ref=ref, text=fact, attrs={**attrs, "extracted_from": memory_id},
                                   chash=_hash([chash, i]), emb=vec, search_extra="", **common)  # type: ignore[arg-type]
                for eid, role in linked.items():
                    self._link(conn, ws, fid, eid, role)
                written.append(fid)
        # which earlier turns these restate, or are restated by (last: it needs the links)
        corrections.record(conn, ws, written)
        return WriteResult("written", ref, memory_id)

    def _supersede(self, conn: psycopg.Connection[Any], ws: str, old_id: int, new_id: int) -> None:
        conn.execute("UPDATE memories SET superseded_by = %s WHERE workspace_id = %s AND memory_id = %s"
                     " AND superseded_by IS NULL", (new_id, ws, old_id))

    def _sender_entity(self, conn: psycopg.Connection[Any], line: MessageLine, memory_id: int) -> int:
        ref = line.sender
        assert ref is not None
        ws = line.workspace
        if ref.id:
            return self._entity(conn, ws, ref.kind, ref.id, ref.name or ref.id, stub=ref.name is None,
                                named_by=memory_id)
        assert ref.name
        # A sender given by name alone is the entity of that kind and name only where every
        # reader of the message may read what named it: matched on a name from a fact they
        # may not read, the link would tell them who that is. Otherwise the sender is the
        # thing known by this name alone.
        key = tx.fold(ref.name)
        rows = conn.execute(
            "SELECT e.entity_id, e.key, m.module, m.privacy, m.owner_id,"
            "       m.superseded_by IS NULL AND m.expires_at IS NULL"
            "  FROM entities e LEFT JOIN memories m"
            "    ON m.workspace_id = e.workspace_id AND m.memory_id = e.name_memory_id"
            " WHERE e.workspace_id = %s AND e.kind = %s AND e.name_key = %s"
            " ORDER BY e.is_stub, e.entity_id", (ws, ref.kind, key)).fetchall()
        for eid, ekey, module, privacy, owner, live in rows:
            if ekey == "name:" + key or (module is not None and Naming(
                    ref.name, module, privacy, owner, bool(live)).readable_with(line.module, line.privacy, line.owner)):
                return int(eid)
        return self._entity(conn, ws, ref.kind, "name:" + key, ref.name, stub=False, named_by=memory_id)

    def _mentions(self, conn: psycopg.Connection[Any], ws: str, text: str) -> list[int]:
        """The entities `text` names, by their names as written and committed. Names written
        by this line's own transaction are left to be read once they have committed: kept
        now, they would outlive the transaction if it rolled back."""
        with self._lock:
            top, names, index, unsettled = self._mentionable.get(ws) or (0, {}, tx.NameIndex({}), frozenset())
            rows = conn.execute(
                "SELECT n.entity_id, n.name_key, n.xmin = pg_current_xact_id_if_assigned()::xid"
                "  FROM entity_names n"
                " WHERE n.workspace_id = %s AND (n.entity_id > %s OR n.entity_id = ANY(%s))"
                " ORDER BY n.entity_id", (ws, top, list(unsettled))).fetchall()
            own = {int(eid) for eid, _, mine in rows if mine}
            left = set(unsettled) - {int(eid) for eid, _, _ in rows}
            for eid, key, mine in rows:
                if mine:
                    continue
                top = max(top, int(eid))
                if len(key) < 3:
                    continue
                if key not in names:
                    names[key] = int(eid)
                    index.add(key, int(eid))
                elif names[key] not in (None, int(eid)):
                    # A name two entities share names neither: better no link than a wrong one.
                    names[key] = None
                    index.remove(key)
            # (looked for again until they come: an id of a transaction that rolled back
            # never does, and costs an array element)
            self._mentionable[ws] = (top, names, index, frozenset(own | left))
            return [int(e) for e in index.find(text)]

    # -- shared statements -----------------------------------------------------------
    def _entity(self, conn: psycopg.Connection[Any], ws: str, kind: str, key: str, name: str, *,
                stub: bool, aliases: list[str] | None = None, update: bool = True,
                named_by: int | None = None) -> int:
        """Upsert an entity; a stub never overwrites a filled-in entity. `named_by`: the
        memory that gives a filled-in entity its name and aliases (sql/036); the key is
        stated by every fact referring to the entity."""
        row = conn.execute("SELECT entity_id, is_stub FROM entities WHERE workspace_id = %s AND kind = %s AND key = %s",
                           (ws, kind, key)).fetchone()
        if row is not None and (stub or not update):
            return int(row[0])
        all_names = [name, *(aliases or []), *derived_aliases(kind, name)]
        if row is None:
            got = conn.execute(
                "INSERT INTO entities (workspace_id, kind, key, name, aliases, name_key, is_stub, name_memory_id)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (workspace_id, kind, key) DO NOTHING RETURNING entity_id",
                (ws, kind, key, name, all_names[1:], tx.fold(name), stub, None if stub else named_by)).fetchone()
            if got is None:  # created meanwhile by a concurrent writer
                return self._entity(conn, ws, kind, key, name, stub=stub, aliases=aliases, update=update,
                                    named_by=named_by)
            eid = int(got[0])
            _relate_named_fields(conn, ws, eid)
        else:
            eid = int(row[0])
            conn.execute("UPDATE entities SET name = %s, aliases = %s, name_key = %s, is_stub = false,"
                         " name_memory_id = %s, updated_at = now() WHERE workspace_id = %s AND entity_id = %s",
                         (name, all_names[1:], tx.fold(name), named_by, ws, eid))
            conn.execute("DELETE FROM entity_names WHERE workspace_id = %s AND entity_id = %s", (ws, eid))
        seen: set[str] = set()
        key_folded = tx.fold(key)
        for n in [*all_names, key] if not stub else [key]:
            nk = tx.fold(n)
            if not nk or nk in seen:
                continue
            seen.add(nk)
            conn.execute(
                "INSERT INTO entity_names (workspace_id, entity_id, name, name_key, trigrams, named_by)"
                " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (ws, eid, n, nk, SparseVector(tx.trigrams(n), tx.TRIGRAM_DIM),
                 None if stub or nk == key_folded else named_by))
        return eid

    def _memory(self, conn: psycopg.Connection[Any], ws: str, *, origin: str, kind: str, ref: str, module: str,
                privacy: str, owner: str | None, source: str, tool: bool, text: str, attrs: dict[str, Any],
                chash: str, when: datetime, expires: datetime | None, emb: np.ndarray,
                search_extra: str) -> int:
        row = conn.execute(
            "INSERT INTO memories (workspace_id, origin, kind, ref_key, module, privacy, owner_id, source,"
            " is_tool_output, text, search_text, attrs, content_hash, occurred_at, confirmed_at, expires_at,"
            " embedding) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " RETURNING memory_id",
            (ws, origin, kind, ref, module, privacy, owner, source, tool, text,
             tx.normalize_for_search(f"{text} {search_extra}".strip()),
             json.dumps(attrs, ensure_ascii=False, default=str), chash, when, when, expires,
             np.asarray(emb, dtype=np.float32))).fetchone()
        assert row is not None
        return int(row[0])

    def _link(self, conn: psycopg.Connection[Any], ws: str, memory_id: int, entity_id: int, role: str) -> None:
        conn.execute("INSERT INTO memory_entities (workspace_id, memory_id, entity_id, role)"
                     " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING", (ws, memory_id, entity_id, role))

    def _ledger(self, conn: psycopg.Connection[Any], ws: str, sync_id: str | None, ref: str,
                memory_id: int | None, outcome: str) -> None:
        if sync_id:
            conn.execute("INSERT INTO sync_ledger (workspace_id, sync_id, ref_key, memory_id, outcome)"
                         " VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING", (ws, sync_id, ref, memory_id, outcome))


# A field's codes kept (sql/031), and the edges they make: every code of the rows the
# condition appended picks, to each entity keyed so, named by the field, closed when its
# stating version was (valid_to); none between two records a link relates already, either
# way (see Writer._unrelate_linked_fields).
_KEEP_FIELD_CODE = ("INSERT INTO field_codes (workspace_id, memory_id, src_id, field, code_upper, module, valid_from)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING")
_FIELD_EDGES = (
    "INSERT INTO edges (workspace_id, rel, src_id, dst_id, module, memory_id, valid_from, valid_to)"
    " SELECT f.workspace_id, f.field, f.src_id, e.entity_id, f.module, f.memory_id, f.valid_from, m.valid_to"
    "   FROM field_codes f"
    "   JOIN entities e ON e.workspace_id = f.workspace_id AND e.key_upper = f.code_upper"
    "   JOIN memories m ON m.workspace_id = f.workspace_id AND m.memory_id = f.memory_id"
    "  WHERE e.entity_id <> f.src_id"
    "    AND NOT EXISTS (SELECT 1 FROM edges x WHERE x.workspace_id = f.workspace_id"
    "        AND ((x.src_id = f.src_id AND x.dst_id = e.entity_id) OR (x.src_id = e.entity_id AND x.dst_id = f.src_id))"
    "        AND NOT EXISTS (SELECT 1 FROM field_codes g WHERE g.workspace_id = x.workspace_id"
    "                          AND g.memory_id = x.memory_id AND g.field = x.rel))"
    "    AND ")


def _codes_in_fields(fields: dict[str, Any], own: str | None) -> list[tuple[str, str]]:
    """(field, code) for every record code a record's fields hold but its own."""
    own_code = own.upper() if own else None
    return [(field, code) for field, value in fields.items()
            for code in tx.codes(_field(value)) if code != own_code]


def _relate_named_fields(conn: psycopg.Connection[Any], ws: str, entity_id: int) -> None:
    """The records written before this entity whose fields name its code relate to it."""
    conn.execute(_FIELD_EDGES + "e.workspace_id = %s AND e.entity_id = %s", (ws, entity_id))


def backfill_field_codes(conn: psycopg.Connection[Any]) -> int:
    """The data step of migration 031, for stores written before it: every record
    memory's field codes kept, and their edges made. Returns the edges made."""
    rows = conn.execute("SELECT m.workspace_id, m.memory_id, me.entity_id, m.module, m.occurred_at, m.attrs"
                        "  FROM memories m JOIN memory_entities me"
                        "    ON me.workspace_id = m.workspace_id AND me.memory_id = m.memory_id AND me.role = 'subject'"
                        " WHERE m.origin = 'record' ORDER BY m.workspace_id, m.memory_id").fetchall()
    found = [(ws, mid, subject, field, code, module, when)
             for ws, mid, subject, module, when, attrs in rows
             for field, code in _codes_in_fields(attrs.get("fields") or {}, str(attrs.get("id") or ""))]
    if not found:
        return 0
    with conn.cursor() as cur:
        cur.executemany(_KEEP_FIELD_CODE, found)
    return conn.execute(_FIELD_EDGES + "true").rowcount


def _field(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _kind_labels(kind: str) -> str:
    """The kind's words in both languages, so 'fatura' finds invoice records by text."""
    canonical = tx.canonical_kind(kind)
    words = [w for w, k in tx.KIND_WORDS.items() if k == canonical]
    return " ".join(sorted(set(words)))


# -- sql/036's data step: stored texts written before names were facts -------------------
# A fact's stored text (and its search text and vector) carries a link target's or sender's
# name only where every reader of the fact may read the fact that gave the name. A store
# written before may carry others: they are taken out, and the changed texts embedded anew
# with the store's own embedder.
_CARRIED_LINK_NAMES_SQL = """
SELECT l.workspace_id, l.memory_id, l.kind, t.kind, t.key
  FROM memories l
  JOIN memory_entities me ON me.workspace_id = l.workspace_id AND me.memory_id = l.memory_id AND me.role = 'link'
  JOIN entities t ON t.workspace_id = me.workspace_id AND t.entity_id = me.entity_id
  LEFT JOIN memories n ON n.workspace_id = t.workspace_id AND n.memory_id = t.name_memory_id
 WHERE l.origin = 'record' AND strpos(l.text, ' → ' || t.kind || ' ' || t.key || ' (') > 0
   AND NOT coalesce(n.superseded_by IS NULL AND n.expires_at IS NULL AND n.module = l.module
                    AND (n.privacy = 'shared' OR (l.privacy <> 'shared' AND l.owner_id = n.owner_id)), false)
 ORDER BY 1, 2"""
_CARRIED_SENDER_NAMES_SQL = """
SELECT l.workspace_id, l.memory_id, t.key, l.attrs ->> 'from'
  FROM memories l
  JOIN memory_entities me ON me.workspace_id = l.workspace_id AND me.memory_id = l.memory_id AND me.role = 'from'
  JOIN entities t ON t.workspace_id = me.workspace_id AND t.entity_id = me.entity_id
  LEFT JOIN memories n ON n.workspace_id = t.workspace_id AND n.memory_id = t.name_memory_id
 WHERE l.origin = 'message' AND t.key NOT LIKE 'name:%%' AND l.attrs ->> 'from' IS DISTINCT FROM t.key
   AND n.memory_id IS DISTINCT FROM l.memory_id
   AND NOT coalesce(n.superseded_by IS NULL AND n.expires_at IS NULL AND n.module = l.module
                    AND (n.privacy = 'shared' OR (l.privacy <> 'shared' AND l.owner_id = n.owner_id)), false)
 ORDER BY 1, 2"""


def uncarried_link(text: str, target: str) -> str:
    """`text` without the name its link part to `target` ("order SO-9") carries."""
    return re.sub(re.escape(f" → {target} (") + r".*?\)(?= \| |$)", lambda _: f" → {target}", text)


def rederive_carried_names(conn: psycopg.Connection[Any], embedder: Embedder | None = None) -> int:
    """Take out of stored texts the names their facts may not carry (see above); returns
    how many facts changed. `embedder`: the store's (by default the one it records)."""
    links = conn.execute(_CARRIED_LINK_NAMES_SQL).fetchall()
    senders = conn.execute(_CARRIED_SENDER_NAMES_SQL).fetchall()
    if not links and not senders:
        return 0
    changed: dict[tuple[str, int], dict[str, Any]] = {}
    for ws, mid, kind, tkind, tkey in links:
        row = changed.get((ws, mid))
        if row is None:
            text = conn.execute("SELECT text FROM memories WHERE workspace_id = %s AND memory_id = %s",
                                (ws, mid)).fetchone()[0]  # type: ignore[index]
            row = changed[(ws, mid)] = {"text": text, "extra": _kind_labels(kind), "embed": None, "from": None}
        row["text"] = uncarried_link(row["text"], f"{tkind} {tkey}")
        row["embed"] = row["text"]
    for ws, mid, key, _ in senders:
        text = conn.execute("SELECT text FROM memories WHERE workspace_id = %s AND memory_id = %s",
                            (ws, mid)).fetchone()[0]  # type: ignore[index]
        said = f"{key}: {text}"
        changed[(ws, mid)] = {"text": text, "extra": said, "embed": said, "from": key}
    if embedder is None:
        from brain.embed import get_embedder, spec_of

        found = conn.execute("SELECT value FROM brain_settings WHERE key = 'embedder'").fetchone()
        if found is None:
            raise BrainError("the store holds facts but records no embedder: open it once with the "
                             "embedder it was built with (BRAIN_EMBEDDER) before migrating")
        embedder = get_embedder(spec_of(str(found[0])))
    keys = list(changed)
    vectors = embedder.embed_passages([changed[k]["embed"] for k in keys])
    for (ws, mid), vec in zip(keys, vectors):
        row = changed[(ws, mid)]
        conn.execute(
            "UPDATE memories SET text = %s, search_text = %s, embedding = %s,"
            " attrs = CASE WHEN %s::text IS NULL THEN attrs ELSE jsonb_set(attrs, '{from}', to_jsonb(%s::text)) END"
            " WHERE workspace_id = %s AND memory_id = %s",
            (row["text"], tx.normalize_for_search(f"{row['text']} {row['extra']}".strip()),
             np.asarray(vec, dtype=np.float32), row["from"], row["from"], ws, mid))
    return len(changed)
