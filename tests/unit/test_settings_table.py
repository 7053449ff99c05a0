"""One home per setting: every field of Settings belongs to one group and has a description,
docs/configuration.md's table is exactly what scripts/settings_table.py generates from them, and the
README's short table names only real settings, with their real defaults."""

from __future__ import annotations

from pydantic_settings import BaseSettings

from core.settings import SETTING_GROUPS, Settings
from scripts.settings_table import CONFIGURATION, END, README, START, defaults, named_rows, table, with_table


def test_every_setting_is_in_exactly_one_group_and_described() -> None:
    grouped = [name for group in SETTING_GROUPS for name in group.model_fields]
    assert sorted(grouped) == sorted(Settings.model_fields) and len(grouped) == len(set(grouped))
    undescribed = [name for name, field in Settings.model_fields.items() if not field.description]
    assert undescribed == []


def test_settings_inherits_the_groups_last_first() -> None:
    """Named one by one for the type checker; last first, so its fields come in SETTING_GROUPS' order."""
    assert Settings.__bases__ == (BaseSettings, *reversed(SETTING_GROUPS))


def test_the_configuration_page_is_generated_from_the_settings() -> None:
    page = CONFIGURATION.read_text(encoding="utf-8")
    assert page.count(START) == 1 and page.count(END) == 1
    assert page == with_table(page), (
        "docs/configuration.md's settings table is out of date: "
        "run `.venv/bin/python -m scripts.settings_table --write`"
    )
    assert "`RAGCHAT_REFUSAL_THRESHOLD`" in table() and "`OLLAMA_HOST`" in table()
    assert len(named_rows(table())) == len(Settings.model_fields)


def test_the_readme_names_real_settings_with_their_defaults() -> None:
    rows = named_rows(README.read_text(encoding="utf-8"))
    assert len(rows) >= 10, "the README's table of the settings people change most is missing"
    known = defaults()
    unknown = [name for name, _ in rows if name not in known]
    assert unknown == [], f"README names settings that do not exist: {unknown}"
    wrong = {name: (shown, known[name]) for name, shown in rows if shown != known[name]}
    assert wrong == {}, f"README shows other defaults than core/settings.py (shown, real): {wrong}"
