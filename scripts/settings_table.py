"""The README's configuration table, generated from the settings classes (core/settings.py).

`python -m scripts.settings_table` prints it; `--write` replaces the table between the README's
`<!-- settings:start -->` and `<!-- settings:end -->` markers. tests/unit/test_settings_table.py fails
when the README is out of date.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pydantic import SecretStr

from core.settings import PROJECT_ROOT, SETTING_GROUPS

README = PROJECT_ROOT / "README.md"
START, END = "<!-- settings:start -->", "<!-- settings:end -->"


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


def _variable(name: str, alias: object) -> str:
    return f"`{alias}`" if isinstance(alias, str) else f"`RAGCHAT_{name.upper()}`"


def table() -> str:
    lines: list[str] = []
    for group in SETTING_GROUPS:
        title = (group.__doc__ or group.__name__).strip().splitlines()[0].rstrip(".")
        lines += [f"**{title}** (`{group.__name__}`)", "", "| variable | default | meaning |", "|---|---|---|"]
        for name, field in group.model_fields.items():
            meaning = " ".join((field.description or "").split()).replace("|", "\\|")
            lines.append(f"| {_variable(name, field.validation_alias)} | {_default(field.default)} | {meaning} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def readme_with_table(readme: str) -> str:
    before, rest = readme.split(START, 1)
    _, after = rest.split(END, 1)
    return f"{before}{START}\n{table()}{END}{after}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="update README.md in place")
    args = parser.parse_args()
    if args.write:
        README.write_text(readme_with_table(README.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        sys.stdout.write(table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
