"""Named errors of the brain library.

Every error a user can cause has its own class and a message that says what to do.
Database errors are mapped to these in one place (`brain.db.wrap_db_errors`).
"""

from __future__ import annotations


class BrainError(Exception):
    """Base of every error the library raises on purpose."""


class DatabaseUnavailable(BrainError):
    """The store cannot be reached or started."""


class MissingExtension(BrainError):
    """The PostgreSQL server lacks an extension the brain needs (pgvector)."""


class EmbedderMismatch(BrainError):
    """The store was built with another embedder than the one configured now."""


class BadLine(BrainError):
    """One input line of a data or question file cannot be used."""

    def __init__(self, reason: str, *, line: int | None = None) -> None:
        self.reason = reason
        self.line = line
        super().__init__(f"line {line}: {reason}" if line is not None else reason)


class UnknownWorkspace(BrainError):
    """A workspace id that the store does not hold."""


class EmbedderError(BrainError):
    """An embedding backend cannot be chosen, loaded or run; the message names the fix."""


class ExtractorError(BrainError):
    """The fact extractor is misconfigured, unreachable or answered something unparsable."""


class NotAnOperator(BrainError):
    """The privileged support views need an operator who may read the whole workspace."""
