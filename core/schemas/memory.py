"""The memory graph's decisions and what a turn did to USER_MEMORY.md / COMPANY_MEMORY.md."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field


class MemoryFact(BaseModel):
    """One lasting fact the memory model found in a message (its JSON output, validated): the file it
    belongs to and the line to write."""

    target: Literal["USER", "COMPANY"]
    statement: str = Field(max_length=300)


class MemoryWrite(BaseModel):
    """One line the memory graph wrote (added, or put in place of a stale one)."""

    target: Literal["USER", "COMPANY"]
    summary: str
    confidence: float = 1.0
    action: Literal["added", "replaced"] = "added"
    replaced: str | None = Field(default=None, description="The stale entry this one replaced.")


class MemorySkip(BaseModel):
    """A statement the memory graph looked at and did not write, and why."""

    text: str
    reason: str


class MemoryOutcome(BaseModel):
    """What one chat turn did to memory (rag/messages.py `memory_note` tells the user)."""

    writes: list[MemoryWrite] = Field(default_factory=list)
    skipped: list[MemorySkip] = Field(default_factory=list)


class MemoryFacts(BaseModel):
    """The entries of USER_MEMORY.md and COMPANY_MEMORY.md, in file order."""

    user: list[str] = Field(default_factory=list)
    company: list[str] = Field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.user or self.company)


class MemoryEvent(MemoryWrite):
    """A memory write as logged: when, and in which conversation."""

    at: datetime
    session_id: str | None = None
    turn_id: str | None = Field(default=None, description="The turn that wrote it (what an undo takes back).")


class MemoryUndo(BaseModel):
    """What undoing a turn's memory writes did: the lines taken back, and those it could not find
    (edited or deleted by hand since)."""

    undone: list[MemoryEvent] = Field(default_factory=list)
    not_found: list[MemoryEvent] = Field(default_factory=list)
