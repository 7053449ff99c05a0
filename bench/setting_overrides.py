"""The `--set NAME=VALUE` overrides the benches take: a JSON value (0.3, true, [1, 2]) or else text."""

from __future__ import annotations

import json


def setting_overrides(items: list[str]) -> dict[str, object]:
    """{name: value} of `--set` items, each `name=value`, the value read as JSON when it is JSON."""
    overrides: dict[str, object] = {}
    for item in items:
        name, value = item.split("=", 1)
        try:
            overrides[name] = json.loads(value)
        except json.JSONDecodeError:
            overrides[name] = value
    return overrides
