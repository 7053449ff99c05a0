"""USER_MEMORY.md / COMPANY_MEMORY.md: tolerant of hand edits, atomic, safe across processes."""

from __future__ import annotations

import subprocess
import sys
from datetime import date
from pathlib import Path

from memory.markdown_store import MemoryFile, memory_files

HAND_EDITED = """# User memory

Some notes I wrote myself, kept as they are.

- User is a Project Finance Analyst.
* User lives in Lisbon.

```
- not an entry: inside a code fence
```
## Extra heading
+ User prefers weekly summaries on Mondays."""


def test_hand_edited_file_is_read_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "USER_MEMORY.md"
    path.write_text(HAND_EDITED, encoding="utf-8")
    memory = MemoryFile(path, "User memory", "intro")
    assert memory.entries() == [
        "User is a Project Finance Analyst.",
        "User lives in Lisbon.",
        "User prefers weekly summaries on Mondays.",
    ]
    memory.add("User works in the\nrisk team.")
    text = path.read_text(encoding="utf-8")
    assert text.startswith(HAND_EDITED + "\n")  # every existing line untouched, newline added at the end
    assert text.endswith("- User works in the risk team.\n")
    assert memory.replace("User lives in Lisbon.", "User lives in Porto.")
    assert memory.delete("User is a Project Finance Analyst.")
    assert not memory.delete("User is a Project Finance Analyst.")  # already gone: no change, no error
    assert memory.entries() == [
        "User lives in Porto.",
        "User prefers weekly summaries on Mondays.",
        "User works in the risk team.",
    ]
    assert "- not an entry: inside a code fence" in path.read_text(encoding="utf-8")


def test_a_replaced_entry_moves_to_the_dated_history_section(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path / "USER_MEMORY.md", "User memory", "intro")
    memory.add("The user works in the Lyon office.")
    memory.add("The user's name is Dana.")
    assert memory.replace("The user works in the Lyon office.", "The user works in the Oslo office.", date(2026, 3, 1))
    memory.add("The user prefers short answers.")  # a new entry goes above the History section
    assert memory.replace("The user prefers short answers.", "The user prefers bullet points.", date(2026, 4, 2))
    assert memory.entries() == [
        "The user works in the Oslo office.",
        "The user's name is Dana.",
        "The user prefers bullet points.",
    ]
    assert memory.history() == [
        "2026-03-01: The user works in the Lyon office.",
        "2026-04-02: The user prefers short answers.",
    ]
    text = (tmp_path / "USER_MEMORY.md").read_text(encoding="utf-8")
    assert text.endswith(
        "- The user prefers bullet points.\n\n## History\n\n"
        "- 2026-03-01: The user works in the Lyon office.\n- 2026-04-02: The user prefers short answers.\n"
    )
    assert not memory.delete("2026-03-01: The user works in the Lyon office.")  # history is not an entry


def test_restore_puts_the_replaced_line_back_in_place_and_takes_it_out_of_history(tmp_path: Path) -> None:
    file = MemoryFile(tmp_path / "USER_MEMORY.md", "User memory", "Facts.")
    for entry in ("The user is called Ana.", "The user works in Lyon.", "The user likes tables."):
        file.add(entry)
    file.replace("The user works in Lyon.", "The user works in Oslo.", day=date(2026, 11, 20))
    assert file.history() == ["2026-11-20: The user works in Lyon."]

    assert file.restore("The user works in Oslo.", "The user works in Lyon.")
    assert file.entries() == ["The user is called Ana.", "The user works in Lyon.", "The user likes tables."]
    assert file.history() == []
    assert not file.restore("The user works in Oslo.", "The user works in Lyon.")  # already undone: no change


def test_a_missing_file_is_created_with_its_header(tmp_path: Path) -> None:
    files = memory_files(tmp_path)
    files["COMPANY"].add("Company uses GCP.")
    text = (tmp_path / "COMPANY_MEMORY.md").read_text(encoding="utf-8")
    assert text.startswith("# Company memory\n") and text.endswith("- Company uses GCP.\n")
    assert not (tmp_path / "USER_MEMORY.md").exists()
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*.tmp"))


WRITER = """
import sys
from datetime import date
from pathlib import Path
from memory.markdown_store import memory_files
files = memory_files(Path(sys.argv[1]))
for n in range(100):
    files["USER"].add(f"Fact {sys.argv[2]}-{n}.")
"""


def test_two_processes_appending_100_facts_each_lose_none(tmp_path: Path) -> None:
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), name], cwd=Path(__file__).parents[2])
        for name in ("a", "b")
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    entries = memory_files(tmp_path)["USER"].entries()
    assert len(entries) == 200
    assert set(entries) == {f"Fact {name}-{n}." for name in ("a", "b") for n in range(100)}
