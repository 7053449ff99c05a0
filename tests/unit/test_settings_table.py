"""One home per setting: every field of Settings belongs to one group, has a description, and the
README's configuration table is exactly what scripts/settings_table.py generates from them."""

from __future__ import annotations

from core.settings import SETTING_GROUPS, Settings
from scripts.settings_table import README, readme_with_table, table


def test_every_setting_is_in_exactly_one_group_and_described() -> None:
    grouped = [name for group in SETTING_GROUPS for name in group.model_fields]
    assert sorted(grouped) == sorted(Settings.model_fields) and len(grouped) == len(set(grouped))
    undescribed = [name for name, field in Settings.model_fields.items() if not field.description]
    assert undescribed == []


def test_the_readme_table_is_generated_from_the_settings() -> None:
    readme = README.read_text(encoding="utf-8")
    assert readme == readme_with_table(readme), (
        "README.md's configuration table is out of date: run `.venv/bin/python -m scripts.settings_table --write`"
    )
    assert "`RAGCHAT_REFUSAL_THRESHOLD`" in table() and "`OLLAMA_HOST`" in table()
