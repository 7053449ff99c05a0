"""Check artifacts/sanity_output.json (what `make sanity` writes) against the challenge's shape.

    python -m scripts.validate_sanity [path]    # exit 0 when valid, else 1 with one problem per line

The shape: {"implemented_features": ["A", "B", "C"], "qa": [{"question", "answer", "citations":
[{"source", "locator", "snippet"}]}], "demo": {"memory_writes": [{"target": "USER" | "COMPANY",
"summary"}]}}. Every qa item has at least one citation, each with a non-empty source, locator and
snippet; USER_MEMORY.md and COMPANY_MEMORY.md exist beside the artifacts folder (the project root).
Standalone on purpose (standard library only), as a judge's validator is.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

DEFAULT = Path(__file__).resolve().parent.parent / "artifacts" / "sanity_output.json"
FEATURES = ("A", "B", "C")
TARGETS = ("USER", "COMPANY")


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def problems(payload: Any) -> list[str]:
    """Everything wrong with the payload's shape (empty: valid)."""
    if not isinstance(payload, dict):
        return ["the file is not a JSON object"]
    found: list[str] = []
    extra = set(payload) - {"implemented_features", "qa", "demo"}
    if extra:
        found.append(f"unexpected top-level keys: {sorted(extra)}")
    features = payload.get("implemented_features")
    if not isinstance(features, list) or sorted(features) != sorted(set(features)):
        found.append("implemented_features must be a list without repeats")
    elif missing := [f for f in FEATURES if f not in features]:
        found.append(f"implemented_features lacks {missing}")
    elif unknown := [f for f in features if f not in FEATURES]:
        found.append(f"implemented_features has unknown {unknown}")
    qa = payload.get("qa")
    if not isinstance(qa, list) or not qa:
        found.append("qa must be a non-empty list")
        qa = []
    for n, item in enumerate(qa):
        if not isinstance(item, dict):
            found.append(f"qa[{n}] is not an object")
            continue
        for key in ("question", "answer"):
            if not _text(item.get(key)):
                found.append(f"qa[{n}].{key} must be a non-empty string")
        citations = item.get("citations")
        if not isinstance(citations, list) or not citations:
            found.append(f"qa[{n}].citations must hold at least one citation")
            continue
        for m, citation in enumerate(citations):
            for key in ("source", "locator", "snippet"):
                if not isinstance(citation, dict) or not _text(citation.get(key)):
                    found.append(f"qa[{n}].citations[{m}].{key} must be a non-empty string")
    demo = payload.get("demo")
    writes = demo.get("memory_writes") if isinstance(demo, dict) else None
    if not isinstance(writes, list) or not writes:
        found.append("demo.memory_writes must be a non-empty list")
        writes = []
    for n, write in enumerate(writes):
        if not isinstance(write, dict) or write.get("target") not in TARGETS:
            found.append(f"demo.memory_writes[{n}].target must be USER or COMPANY")
        if not isinstance(write, dict) or not _text(write.get("summary")):
            found.append(f"demo.memory_writes[{n}].summary must be a non-empty string")
    return found


def validate(path: Path) -> list[str]:
    """The problems of the artifact at `path`, including memory files missing from the project root."""
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [f"cannot read {path}: {exc}"]
    found = problems(payload)
    root = path.resolve().parent.parent
    found += [
        f"{name} is missing at {root}"
        for name in ("USER_MEMORY.md", "COMPANY_MEMORY.md")
        if not (root / name).is_file()
    ]
    return found


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else DEFAULT
    found = validate(path)
    for problem in found:
        print(f"sanity_output: {problem}", file=sys.stderr)
    if not found:
        print(f"{path}: valid")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
