"""The interchange format (../shared/FORMAT.md) as typed, validated lines.

`parse_line` turns one decoded JSON object into a frozen dataclass or raises `BadLine`
with a reason a person can act on. Checks that need the store (unknown workspace or
member) happen in the writer. Nothing of a line is dropped: unknown keys go to `extra`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timezone
from typing import Any, Union

from brain.errors import BadLine

PRIVACY = ("shared", "private", "personal")
DEFAULT_MODULE = "general"


def parse_date(value: Any, what: str = "date") -> datetime:
    """ISO 8601 date or date-time → aware datetime (a bare date is midnight UTC)."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, date):
        return datetime.combine(value, time(), tzinfo=timezone.utc)
    if not isinstance(value, str) or not value.strip():
        raise BadLine(f"'{what}' must be an ISO 8601 date such as 2026-09-05, got {value!r}")
    text = value.strip()
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), time(), tzinfo=timezone.utc)
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise BadLine(f"'{what}' is not an ISO 8601 date: {value!r} (use 2026-09-05 or "
                      f"2026-09-05T10:12:00+03:00)") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def parse_now(value: Any) -> datetime:
    """A question's `now` (FORMAT.md §2): an ISO date-time as it is, a bare date as the
    last moment of that day (UTC). A question "asked on 2026-11-09" is asked after what
    that day's facts say: read as the day's first moment, a reply sent that morning would
    be "after now" (ranked down as stated later) and a period's "today" would hold
    nothing yet. (An expiry on that day's midnight has passed either way.)"""
    if isinstance(value, date) and not isinstance(value, datetime):
        return datetime.combine(value, time.max, tzinfo=timezone.utc)
    if isinstance(value, str) and len(value.strip()) == 10:
        return parse_date(value, "now").replace(hour=23, minute=59, second=59, microsecond=999999)
    return parse_date(value, "now")


@dataclass(frozen=True)
class Ref:
    """A pointer to an entity: by kind and id, or (for senders) by a plain name."""

    kind: str
    id: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class Link:
    rel: str
    target: Ref


@dataclass(frozen=True)
class WorkspaceLine:
    id: str
    org: str
    name: str


@dataclass(frozen=True)
class RoleLine:
    workspace: str
    id: str
    modules: tuple[str, ...]


@dataclass(frozen=True)
class MemberLine:
    workspace: str
    id: str
    name: str
    roles: tuple[str, ...]


@dataclass(frozen=True)
class RecordLine:
    workspace: str
    app: str
    module: str
    kind: str
    id: str
    date: datetime
    name: str
    fields: dict[str, Any]
    links: tuple[Link, ...]
    text: str
    privacy: str
    owner: str | None
    sync_id: str | None
    source: str
    aliases: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MessageLine:
    workspace: str
    module: str
    channel: str
    id: str | None
    thread: str | None
    date: datetime
    sender: Ref | None
    about: tuple[Ref, ...]
    text: str
    privacy: str
    owner: str | None
    source: str
    supersedes: str | None
    tool_output: bool
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NoteLine:
    workspace: str
    module: str
    id: str | None
    date: datetime
    text: str
    about: tuple[Ref, ...]
    expires: datetime | None
    privacy: str
    owner: str | None
    source: str
    supersedes: str | None
    tool_output: bool
    extra: dict[str, Any] = field(default_factory=dict)


Line = Union[WorkspaceLine, RoleLine, MemberLine, RecordLine, MessageLine, NoteLine]


def _str(obj: dict[str, Any], key: str, *, required: bool = True, default: str | None = None) -> str:
    value = obj.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise BadLine(f"missing field '{key}'")
        return default  # type: ignore[return-value]
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise BadLine(f"field '{key}' must be a string, got {type(value).__name__}")
    return str(value).strip()


def _opt_str(obj: dict[str, Any], key: str) -> str | None:
    return _str(obj, key, required=False)


def _str_list(obj: dict[str, Any], key: str, *, required: bool = False) -> tuple[str, ...]:
    value = obj.get(key)
    if value is None:
        if required:
            raise BadLine(f"missing field '{key}'")
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadLine(f"field '{key}' must be a list of strings")
    return tuple(v.strip() for v in value if v.strip())


def _ref(value: Any, where: str, *, allow_name: bool = False) -> Ref:
    if isinstance(value, str) and allow_name and value.strip():
        return Ref(kind="person", name=value.strip())
    if not isinstance(value, dict):
        raise BadLine(f"'{where}' must be an object with 'kind' and 'id'"
                      + (" or a plain name" if allow_name else ""))
    kind, ident = value.get("kind"), value.get("id")
    if not isinstance(kind, str) or not kind.strip():
        raise BadLine(f"'{where}' needs a 'kind'")
    if isinstance(ident, (str, int)) and not isinstance(ident, bool) and str(ident).strip():
        return Ref(kind=kind.strip(), id=str(ident).strip(), name=value.get("name"))
    name = value.get("name")
    if allow_name and isinstance(name, str) and name.strip():
        return Ref(kind=kind.strip(), name=name.strip())
    raise BadLine(f"'{where}' needs an 'id'")


def _refs(obj: dict[str, Any], key: str) -> tuple[Ref, ...]:
    value = obj.get(key)
    if value is None:
        return ()
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise BadLine(f"'{key}' must be a list of {{kind, id}} objects")
    return tuple(_ref(v, f"{key}[{i}]") for i, v in enumerate(value))


def _privacy(obj: dict[str, Any]) -> tuple[str, str | None]:
    privacy = obj.get("privacy") or "shared"
    if privacy not in PRIVACY:
        raise BadLine(f"'privacy' must be one of {', '.join(PRIVACY)}, got {privacy!r}")
    owner = _opt_str(obj, "owner")
    if privacy != "shared" and not owner:
        raise BadLine(f"a {privacy} fact needs an 'owner' (the member id who may read it)")
    return privacy, owner


def _tool_output(obj: dict[str, Any], source: str) -> bool:
    # A fact taken from a tool's output is flagged by the line or by its source, and is
    # then never rewritten by the extractor nor treated as the member's own word.
    flag = obj.get("tool_output")
    if flag is not None and not isinstance(flag, bool):
        raise BadLine("'tool_output' must be true or false")
    return bool(flag) or source.lower().startswith("tool")


_KNOWN = {
    "record": {"type", "workspace", "app", "module", "kind", "id", "date", "name", "fields",
               "links", "text", "privacy", "owner", "sync_id", "source", "aliases"},
    "message": {"type", "workspace", "module", "channel", "id", "thread", "date", "from",
                "about", "text", "privacy", "owner", "source", "supersedes", "tool_output"},
    "note": {"type", "workspace", "module", "id", "date", "text", "about", "expires",
             "privacy", "owner", "source", "supersedes", "tool_output"},
}


def parse_line(obj: Any) -> Line:
    """Validate one decoded JSON line. Raises BadLine with the reason."""
    if not isinstance(obj, dict):
        raise BadLine("a line must be a JSON object")
    kind = obj.get("type")
    if kind == "workspace":
        return WorkspaceLine(id=_str(obj, "id"), org=_str(obj, "org"),
                             name=_str(obj, "name", required=False) or _str(obj, "id"))
    if kind == "role":
        modules = _str_list(obj, "modules", required=True)
        return RoleLine(workspace=_str(obj, "workspace"), id=_str(obj, "id"), modules=modules)
    if kind == "member":
        return MemberLine(workspace=_str(obj, "workspace"), id=_str(obj, "id"),
                          name=_str(obj, "name", required=False) or _str(obj, "id"),
                          roles=_str_list(obj, "roles"))
    if kind == "record":
        fields = obj.get("fields") or {}
        if not isinstance(fields, dict):
            raise BadLine("'fields' must be an object")
        links_raw = obj.get("links") or []
        if not isinstance(links_raw, list):
            raise BadLine("'links' must be a list of {rel, kind, id} objects")
        links = []
        for i, item in enumerate(links_raw):
            if not isinstance(item, dict) or not isinstance(item.get("rel"), str) or not item["rel"].strip():
                raise BadLine(f"links[{i}] needs a 'rel'")
            links.append(Link(rel=item["rel"].strip(), target=_ref(item, f"links[{i}]")))
        privacy, owner = _privacy(obj)
        text = obj.get("text") or ""
        if not isinstance(text, str):
            raise BadLine("'text' must be a string")
        when = parse_date(obj.get("date"), "date")
        app = _str(obj, "app", required=False, default="app")
        ident = _str(obj, "id")
        return RecordLine(
            workspace=_str(obj, "workspace"), app=app,
            module=_str(obj, "module", required=False, default=DEFAULT_MODULE),
            kind=_str(obj, "kind"), id=ident, date=when,
            name=_str(obj, "name", required=False) or ident, fields=fields,
            links=tuple(links), text=text.strip(), privacy=privacy, owner=owner,
            sync_id=_opt_str(obj, "sync_id"),
            source=_str(obj, "source", required=False) or f"{app} sync {when.date().isoformat()}",
            aliases=_str_list(obj, "aliases"),
            extra={k: v for k, v in obj.items() if k not in _KNOWN["record"]})
    if kind in ("message", "note"):
        text = _str(obj, "text")
        privacy, owner = _privacy(obj)
        when = parse_date(obj.get("date"), "date")
        if kind == "message":
            sender_raw = obj.get("from")
            channel = _str(obj, "channel", required=False, default="message")
            source = _str(obj, "source", required=False) or f"{channel} {when.date().isoformat()}"
            return MessageLine(
                workspace=_str(obj, "workspace"),
                module=_str(obj, "module", required=False, default=DEFAULT_MODULE),
                channel=channel, id=_opt_str(obj, "id"), thread=_opt_str(obj, "thread"),
                date=when,
                sender=_ref(sender_raw, "from", allow_name=True) if sender_raw is not None else None,
                about=_refs(obj, "about"), text=text, privacy=privacy, owner=owner,
                source=source, supersedes=_opt_str(obj, "supersedes"),
                tool_output=_tool_output(obj, source),
                extra={k: v for k, v in obj.items() if k not in _KNOWN["message"]})
        expires = obj.get("expires")
        source = _str(obj, "source", required=False) or f"note {when.date().isoformat()}"
        return NoteLine(
            workspace=_str(obj, "workspace"),
            module=_str(obj, "module", required=False, default=DEFAULT_MODULE),
            id=_opt_str(obj, "id"), date=when, text=text, about=_refs(obj, "about"),
            expires=parse_date(expires, "expires") if expires is not None else None,
            privacy=privacy, owner=owner, source=source,
            supersedes=_opt_str(obj, "supersedes"), tool_output=_tool_output(obj, source),
            extra={k: v for k, v in obj.items() if k not in _KNOWN["note"]})
    raise BadLine(f"unknown 'type' {kind!r}: expected workspace, role, member, record, message or note")
