"""Undoing the last turn's memory writes: added lines go, replaced ones come back, and the turn leaves
the log so a second undo takes back the turn before it."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from core.schemas import MemoryWrite
from memory.markdown_store import memory_files
from memory.memory import Memory
from memory.memory_log import MemoryLog
from memory.sensitive_gate import MemoryGates


def no_model() -> None:
    raise AssertionError("undo needs no model")


def memory_in(folder: Path) -> Memory:
    gates = MemoryGates(0.4, 0.8, {}, 0.2, {}, 0.4)
    files, log = memory_files(folder), MemoryLog(folder / "log.sqlite")
    return Memory(files, log, no_model, no_model, 200, 0.75, gates, 0.5, 0.45)  # type: ignore[arg-type]


def test_undo_takes_back_one_turn_at_a_time(tmp_path: Path) -> None:
    memory = memory_in(tmp_path)
    user, company = memory.files["USER"], memory.files["COMPANY"]
    user.add("The user works in Lyon.")
    memory._log.record("t1", [MemoryWrite(target="USER", summary="The user works in Lyon.")], None)
    # The next turn replaced the office and added a company fact.
    user.replace("The user works in Lyon.", "The user works in Oslo.", day=date(2026, 11, 20))
    company.add("The company pays suppliers net 30.")
    second = [
        MemoryWrite(
            target="USER", summary="The user works in Oslo.", action="replaced", replaced="The user works in Lyon."
        ),
        MemoryWrite(target="COMPANY", summary="The company pays suppliers net 30."),
    ]
    memory._log.record("t2", second, None)

    undo = memory.undo_last_turn()
    assert [e.summary for e in undo.undone] == ["The company pays suppliers net 30.", "The user works in Oslo."]
    assert not undo.not_found
    assert user.entries() == ["The user works in Lyon."] and user.history() == []
    assert company.entries() == []
    assert [e.turn_id for e in memory.last_turn()] == ["t1"]

    assert [e.summary for e in memory.undo_last_turn().undone] == ["The user works in Lyon."]
    assert user.entries() == []
    assert memory.undo_last_turn().undone == []  # nothing left


def test_a_line_edited_by_hand_since_is_reported_not_guessed(tmp_path: Path) -> None:
    memory = memory_in(tmp_path)
    memory.files["USER"].add("The user works in Lyon.")
    memory._log.record("t1", [MemoryWrite(target="USER", summary="The user works in Lyon.")], None)
    memory.files["USER"].replace("The user works in Lyon.", "The user works in Lyon, 3 days a week.")

    undo = memory.undo_last_turn()
    assert undo.undone == [] and [e.summary for e in undo.not_found] == ["The user works in Lyon."]
    assert memory.files["USER"].entries() == ["The user works in Lyon, 3 days a week."]
