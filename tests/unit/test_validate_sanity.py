"""The judge artifact's validator (scripts/validate_sanity.py) on built examples: a valid payload
passes, and each way of breaking the shape is named."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from scripts.validate_sanity import main, problems, validate

VALID: dict[str, Any] = {
    "implemented_features": ["A", "B", "C"],
    "qa": [
        {
            "question": "How long is the warranty?",
            "answer": "Two years [1].",
            "citations": [{"source": "faq.md", "locator": "Warranty · lines 3–4", "snippet": "a 2-year warranty"}],
        }
    ],
    "demo": {"memory_writes": [{"target": "USER", "summary": "User prefers short lists."}]},
}


def broken(change: Any) -> dict[str, Any]:
    payload = copy.deepcopy(VALID)
    change(payload)
    return payload


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda p: p["implemented_features"].remove("C"), "lacks ['C']"),
        (lambda p: p["implemented_features"].append("D"), "unknown ['D']"),
        (lambda p: p.update(extra=1), "unexpected top-level keys"),
        (lambda p: p.update(qa=[]), "qa must be a non-empty list"),
        (lambda p: p["qa"][0].update(answer=" "), "qa[0].answer must be a non-empty string"),
        (lambda p: p["qa"][0].update(citations=[]), "qa[0].citations must hold at least one citation"),
        (lambda p: p["qa"][0]["citations"][0].update(locator=""), "qa[0].citations[0].locator"),
        (lambda p: p["qa"][0]["citations"][0].pop("snippet"), "qa[0].citations[0].snippet"),
        (lambda p: p["demo"].update(memory_writes=[]), "demo.memory_writes must be a non-empty list"),
        (lambda p: p["demo"]["memory_writes"][0].update(target="TEAM"), "target must be USER or COMPANY"),
        (lambda p: p["demo"]["memory_writes"][0].update(summary=""), "summary must be a non-empty string"),
    ],
)
def test_each_broken_part_is_named(change: Any, expected: str) -> None:
    assert problems(VALID) == []
    found = problems(broken(change))
    assert len(found) == 1 and expected in found[0], found


def test_the_file_and_the_memory_files_beside_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    artifact = tmp_path / "artifacts" / "sanity_output.json"
    artifact.parent.mkdir()
    artifact.write_text(json.dumps(VALID))
    assert validate(artifact) == [
        f"USER_MEMORY.md is missing at {tmp_path}",
        f"COMPANY_MEMORY.md is missing at {tmp_path}",
    ]
    for name in ("USER_MEMORY.md", "COMPANY_MEMORY.md"):
        (tmp_path / name).write_text("# memory\n")
    assert main([str(artifact)]) == 0 and "valid" in capsys.readouterr().out
    artifact.write_text("{not json")
    assert main([str(artifact)]) == 1 and "cannot read" in capsys.readouterr().err
