"""The full settings table of docs/configuration.md, generated from the settings classes (core/settings.py).

`python -m scripts.settings_table` prints it; `--write` replaces the table between the page's
`<!-- settings:start -->` and `<!-- settings:end -->` markers; `--check` exits 1 when the page is out of
date. tests/unit/test_settings_table.py fails when it is, and checks that every setting the README's
short table names exists, with its real default.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from pathlib import Path

from pydantic import BaseModel, SecretStr

from core.settings import PROJECT_ROOT, SETTING_GROUPS

CONFIGURATION = PROJECT_ROOT / "docs" / "configuration.md"
README = PROJECT_ROOT / "README.md"
START, END = "<!-- settings:start -->", "<!-- settings:end -->"
# A row of a Markdown table whose first cell is a variable in backticks: | `RAGCHAT_TOP_K` | 4 | ... |
_VARIABLE_ROW = re.compile(r"^\|\s*`((?:RAGCHAT_|OLLAMA_)[A-Z0-9_]+)`\s*\|\s*([^|]*?)\s*\|", re.MULTILINE)


def _default(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, SecretStr):
        return "–" if not value.get_secret_value() else "(set)"
    if isinstance(value, Path):  # shown relative, so the table is the same on every machine
        for base, prefix in ((PROJECT_ROOT, ""), (PROJECT_ROOT.parent, "../"), (Path.home(), "~/")):
            if value.is_relative_to(base):
                relative = value.relative_to(base).as_posix()
                return "project root" if relative == "." else f"`{prefix}{relative}`"
        return f"`{value}`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f"`{value}`" if value else "–"
    return str(value)


def _name(name: str, alias: object) -> str:
    return alias if isinstance(alias, str) else f"RAGCHAT_{name.upper()}"


def _heading(group: type[BaseModel]) -> str:
    """DocumentRequestSettings → "Document request"; LLMSettings → "LLM"."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z][a-z]*", group.__name__.removesuffix("Settings"))
    return " ".join([words[0]] + [w if w.isupper() else w.lower() for w in words[1:]])


def _intro(group: type[BaseModel]) -> list[str]:
    """The class docstring, one line per paragraph, after the class name."""
    paragraphs = [" ".join(p.split()) for p in inspect.cleandoc(group.__doc__ or "").split("\n\n") if p.strip()]
    first = f"`{group.__name__}`" + (f": {paragraphs[0]}" if paragraphs else "")
    return [first, *(line for p in paragraphs[1:] for line in ("", p))]


def defaults() -> dict[str, str]:
    """Every setting's environment variable → its default as the table shows it."""
    return {
        _name(name, field.validation_alias): _default(field.default)
        for group in SETTING_GROUPS
        for name, field in group.model_fields.items()
    }


def table() -> str:
    lines: list[str] = []
    for group in SETTING_GROUPS:
        lines += [f"### {_heading(group)}", "", *_intro(group), ""]
        lines += ["| variable | default | meaning |", "|---|---|---|"]
        for name, field in group.model_fields.items():
            meaning = " ".join((field.description or "").split()).replace("|", "\\|")
            variable = _name(name, field.validation_alias)
            lines.append(f"| `{variable}` | {_default(field.default)} | {meaning} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def with_table(page: str) -> str:
    """The page with the generated table between its markers."""
    before, rest = page.split(START, 1)
    _, after = rest.split(END, 1)
    return f"{before}{START}\n{table()}{END}{after}"


def named_rows(markdown: str) -> list[tuple[str, str]]:
    """(variable, default cell) of every table row that starts with a variable, e.g. the README's short table."""
    return _VARIABLE_ROW.findall(markdown)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help="update docs/configuration.md in place")
    action.add_argument("--check", action="store_true", help="exit 1 when docs/configuration.md is out of date")
    args = parser.parse_args()
    if args.write or args.check:
        page = CONFIGURATION.read_text(encoding="utf-8")
        if args.check:
            stale = page != with_table(page)
            if stale:
                print(
                    f"{CONFIGURATION} is out of date: run `python -m scripts.settings_table --write`", file=sys.stderr
                )
            return 1 if stale else 0
        CONFIGURATION.write_text(with_table(page), encoding="utf-8")
    else:
        sys.stdout.write(table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
