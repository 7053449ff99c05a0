"""USER_MEMORY.md and COMPANY_MEMORY.md: plain Markdown a person can read and edit by hand.

An entry is a top-level bullet line (`- …`, `* …` or `+ …`) outside a code fence and above the
`## History` heading; every other line (headings, notes, blank lines, a hand-written paragraph) is
kept exactly as it is. A line that a newer fact replaced moves to `## History` at the bottom, dated,
so an update never silently loses what the file said; history lines go into no prompt. Each change
re-reads the file under an exclusive lock, edits it, and replaces it atomically (temp file, fsync,
rename), so two app sessions writing at once lose nothing and a crash leaves the old file whole.
"""

from __future__ import annotations

import os
import re
import tempfile
from datetime import date
from pathlib import Path

from filelock import FileLock

_ENTRY = re.compile(r"^[-*+]\s+(?P<text>\S.*?)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HISTORY = re.compile(r"^##\s+History\s*$")
HISTORY_HEADING = "## History"
LOCK_TIMEOUT_S = 10.0


def _entry_lines(lines: list[str]) -> list[tuple[int, str]]:
    """(line number, entry text) for every bullet outside a fenced block, above the History section."""
    entries: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(lines):
        if not fenced and _HISTORY.match(line):
            break
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

    def history(self) -> list[str]:
        """The History section's lines ("2026-11-26: User was based in Lyon."), oldest first."""
        lines = self._read_lines()
        start = next((n for n, line in enumerate(lines) if _HISTORY.match(line)), len(lines))
        return [m.group("text") for line in lines[start + 1 :] if (m := _ENTRY.match(line))]

    def add(self, entry: str) -> None:
        with self._lock:
            lines = self._read_lines()
            at = self._history_start(lines)  # at the end, or above the History section
            if at == len(lines) and lines and not lines[-1].endswith("\n"):
                lines[-1] += "\n"
            if at < len(lines) and at > 0 and not lines[at - 1].strip():
                at -= 1  # keep the blank line before the History heading
            lines.insert(at, f"- {clean_entry(entry)}\n")
            self._replace(lines)

    def replace(self, old: str, new: str, day: date | None = None) -> bool:
        """Swap the entry `old` for `new` in place, and keep `old` in the History section dated `day`
        (today); False (and no change) when `old` is gone."""
        stamp = (day or date.today()).isoformat()
        return self._edit(old, f"- {clean_entry(new)}\n", history=f"- {stamp}: {clean_entry(old)}\n")

    def delete(self, entry: str) -> bool:
        return self._edit(entry, None)

    def restore(self, current: str, previous: str) -> bool:
        """Undo a `replace`: the entry `current` becomes `previous` again, in place, and the newest
        History line that kept `previous` goes; False (and no change) when `current` is gone."""
        with self._lock:
            lines = self._read_lines()
            found = next((n for n, text in _entry_lines(lines) if text == current.strip()), None)
            if found is None:
                return False
            lines[found] = f"- {clean_entry(previous)}\n"
            kept = re.compile(r"^[-*+]\s+\d{4}-\d{2}-\d{2}:\s+" + re.escape(clean_entry(previous)) + r"\s*$")
            start = self._history_start(lines)
            dated = [n for n in range(start + 1, len(lines)) if kept.match(lines[n])]
            if dated:
                del lines[dated[-1]]
            self._replace(lines)
            return True

    def _edit(self, entry: str, replacement: str | None, history: str | None = None) -> bool:
        with self._lock:
            lines = self._read_lines()
            for number, text in _entry_lines(lines):
                if text == entry.strip():
                    if replacement is None:
                        del lines[number]
                    else:
                        lines[number] = replacement
                    if history:
                        self._append_history(lines, history)
                    self._replace(lines)
                    return True
            return False

    @staticmethod
    def _history_start(lines: list[str]) -> int:
        return next((n for n, line in enumerate(lines) if _HISTORY.match(line)), len(lines))

    def _append_history(self, lines: list[str], line: str) -> None:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        if self._history_start(lines) == len(lines):
            lines.extend(["\n", f"{HISTORY_HEADING}\n", "\n"])
        lines.append(line)

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
