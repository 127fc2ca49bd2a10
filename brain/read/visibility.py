"""Step 5, visibility: the one rule, as the read path applies it.

The rule itself lives in SQL (`brain_hidden_reason` in sql/002_visibility.sql, stated as
`brain_hidden_reason_as` of the row and the binding in sql/012) and every
read statement goes through the views built on it, so here there is only the record of
whom the transaction was bound to. `explain_hidden` (brain.read.hidden) is the privileged
side: what the rule hid from a member and why.
"""

from __future__ import annotations

from datetime import datetime

from brain.db import Binding
from brain.read.trace import VisibilityStep

RULE = ("own workspace only (row-level security); modules granted by the member's roles "
        "(grants that do not resolve read nothing; no person reads every module's shared facts); "
        "nobody else's private or personal facts; nothing superseded or expired; an entity only "
        "when a visible fact names it; an edge only when its fact, module and both ends are visible")

REASONS = {
    "module_not_granted": "the member's roles do not grant this module",
    "private_other": "another member's private or personal fact",
    "superseded": "replaced by a later fact",
    "expired": "expired before the question's moment",
    "ended": "the relation was restated by a newer version of its record",
    "endpoint_hidden": "one end of the relation is hidden",
    "named_only_by_hidden": "every fact naming this entity is hidden",
}


def visibility_step(binding: Binding, now: datetime, ms: float) -> VisibilityStep:
    return VisibilityStep(binding.workspace, binding.member, binding.modules, now.isoformat(), RULE, ms)
