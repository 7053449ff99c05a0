"""USER_MEMORY.md and COMPANY_MEMORY.md: plain Markdown a person can read and edit by hand.

An entry is a top-level bullet line (`- …`, `* …` or `+ …`) outside a code fence; every other line
(headings, notes, blank lines, a hand-written paragraph) is kept exactly as it is. Each change
re-reads the file under an exclusive lock, edits it, and replaces it atomically (temp file, fsync,
rename), so two app sessions writing at once lose nothing and a crash leaves the old file whole.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from filelock import FileLock

_ENTRY = re.compile(r"^[-*+]\s+(?P<text>\S.*?)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
LOCK_TIMEOUT_S = 10.0


def _entry_lines(lines: list[str]) -> list[tuple[int, str]]:
    """(line number, entry text) for every bullet outside a fenced block."""
    entries: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and (match := _ENTRY.match(line)):
            entries.append((number, match.group("text")))
    return entries


def clean_entry(text: str) -> str:
    """One line, no Markdown list marker, at most 300 characters."""
    single = " ".join(text.split()).lstrip("-*+ ").strip()
    return single[:300]


class MemoryFile:
    def __init__(self, path: Path, title: str, intro: str) -> None:
        self.path = path
        self._header = f"# {title}\n\n{intro}\n\n"
        self._lock = FileLock(str(path.with_name(f".{path.name}.lock")), timeout=LOCK_TIMEOUT_S)

    def entries(self) -> list[str]:
        return [text for _, text in _entry_lines(self._read_lines())]

    def add(self, entry: str) -> None:
        with self._lock:
            lines = self._read_lines()
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += "\n"
            lines.append(f"- {clean_entry(entry)}\n")
            self._replace(lines)

    def replace(self, old: str, new: str) -> bool:
        """Swap the entry `old` for `new` in place; False (and no change) when `old` is gone."""
        return self._edit(old, f"- {clean_entry(new)}\n")

    def delete(self, entry: str) -> bool:
        return self._edit(entry, None)

    def _edit(self, entry: str, replacement: str | None) -> bool:
        with self._lock:
            lines = self._read_lines()
            for number, text in _entry_lines(lines):
                if text == entry.strip():
                    if replacement is None:
                        del lines[number]
                    else:
                        lines[number] = replacement
                    self._replace(lines)
                    return True
            return False

    def _read_lines(self) -> list[str]:
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            text = self._header
        return text.splitlines(keepends=True)

    def _replace(self, lines: list[str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.writelines(lines)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temp, self.path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise


_FILES: dict[str, tuple[str, str, str]] = {
    "USER": ("USER_MEMORY.md", "User memory", "Facts about you that ragchat keeps between conversations."),
    "COMPANY": (
        "COMPANY_MEMORY.md",
        "Company memory",
        "Facts about your company that ragchat keeps between conversations.",
    ),
}


def memory_files(user_dir: Path, company_dir: Path | None = None) -> dict[str, MemoryFile]:
    """The two memory files, keyed by target (USER, COMPANY): USER_MEMORY.md in `user_dir`,
    COMPANY_MEMORY.md in `company_dir` (default: the same folder, as for a single user)."""
    folders = {"USER": user_dir, "COMPANY": company_dir or user_dir}
    return {target: MemoryFile(folders[target] / name, title, intro) for target, (name, title, intro) in _FILES.items()}
