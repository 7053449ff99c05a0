"""Which requests name nothing but the document ("what is this?", rag/subjectless.py), on the frozen
dev set `eval/datasets/routing/subjectless.jsonl`, and how many other requests are taken (no LLM).

Precision and recall on the dev set (rows labelled null, ambiguous, are left out), by language; then
the labelled sets the rule was not tuned on, where every request taken is counted: the routing sets'
requests by label (a request taken that is labelled `passage` names something a passage answers and is
a false positive), the real-documents questions and SQuAD 2.0's (each asks for one fact: any taken
is a false positive), and the messages of the memory sets (statements and chit-chat).

    .venv/bin/python bench/subjectless.py [--show]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag.subjectless import names_no_subject

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT / "eval" / "datasets"
DEV = DATASETS / "routing" / "subjectless.jsonl"
SQUAD = ("squad2-normans", "squad2-more")
OTHERS = {
    "routing sets": [DATASETS / "routing" / f"{name}.jsonl" for name in ("requests", "requests_v2", "general_v3")],
    "real-documents questions": [DATASETS / "real_documents" / "questions.jsonl"],
    "SQuAD 2.0 questions": [ROOT.parent / "shared" / "data" / n / "questions.jsonl" for n in SQUAD],
    "memory sets' messages": sorted((DATASETS).glob("memory*/*.jsonl")),
}


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def text_of(row: dict) -> str | None:
    value = row.get("text") or row.get("question") or row.get("message")
    return value if isinstance(value, str) else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--show", action="store_true", help="print every miss and every request taken elsewhere")
    args = parser.parse_args()
    by_lang: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for row in rows(DEV):
        if row["subjectless"] is None:
            continue
        said = names_no_subject(row["text"])
        for lang in (row["lang"], "all"):
            by_lang[lang].append((bool(row["subjectless"]), said))
        if args.show and said != row["subjectless"]:
            print(f"  miss ({'false positive' if said else 'false negative'}): {row['text']}")
    print(f"dev set: {DEV.relative_to(ROOT)}")
    print(f"{'language':<10}{'rows':>6}{'precision':>11}{'recall':>8}")
    for lang, pairs in sorted(by_lang.items(), key=lambda item: (item[0] == "all", item[0])):
        tp = sum(label and said for label, said in pairs)
        said_n = sum(said for _, said in pairs)
        wanted = sum(label for label, _ in pairs)
        precision = tp / said_n if said_n else 1.0
        recall = tp / wanted if wanted else 1.0
        print(f"{lang:<10}{len(pairs):>6}{precision:>11.2f}{recall:>8.2f}")
    print("not tuned on:")
    for name, paths in OTHERS.items():
        texts = [(t, row.get("label")) for path in paths if path.exists() for row in rows(path) if (t := text_of(row))]
        taken = [(text, label) for text, label in texts if names_no_subject(text)]
        labels = ", ".join(f"{label} {n}" for label, n in Counter(str(label) for _, label in taken).items())
        print(f"  {name}: {len(texts)} requests, taken {len(taken)}" + (f" ({labels})" if labels else ""))
        if args.show:
            for text, label in taken:
                print(f"    {label}: {text}")


if __name__ == "__main__":
    main()
