"""What the memory pass writes, scored on the frozen labelled set `eval/datasets/memory/messages.jsonl`.

Each message runs through the real `Memory.remember` (the session's model, the packaged embedder) on
its own pair of fresh memory files holding the message's `prior` lines, then the files are compared
with the labels:

- precision / recall per target: a stored line matches an expected line of the same target when it
  keeps every number of the expected line and says the same thing (half the expected line's terms, or
  cosine ≥ 0.75 with the packaged MiniLM; exact strings would be too strict for a paraphrase);
- accuracy: the set of files written (USER, COMPANY, neither) is the set the labels name;
- clean lines: third person (no first-person word left), no conversational lead-in, one sentence
  ending in a full stop, and every number and name kept (those of the matched expected line; for an
  unmatched line, none that the message did not say);
- corrections handled: every `replaces` line gone and every expected line there;
- restatement duplicates: a restatement message that left a second line beside the stored one;
  restatements reworded: one whose rewording replaced the stored line (the old one went to History);
- secrets stored: a `secret` message that wrote anything (must be 0);
- cost per message: wall time of `remember` (median, p95).

    .venv/bin/python bench/memory_judgment.py --sample 60 --label before-0.5b
    .venv/bin/python bench/memory_judgment.py --model qwen2.5-coder-1.5b --sample 60 --label after-1.5b

`--sample N` takes every k-th message (the set is grouped by category, so every category is kept).
Reports go to reports/memory/<label>.json (every message's lines) and <label>.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT / "eval" / "datasets" / "memory" / "messages.jsonl"
REPORTS = ROOT / "reports" / "memory"

_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_FIRST_PERSON = re.compile(
    r"\b(i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'll|our|ours|us|ourselves|"
    r"je|j'|moi|mon|ma|mes|nous|notre|nos|ich|mich|mir|mein|meine|meinen|meinem|meiner|wir|uns|unser|unsere|unseren)\b",
)
_LEAD_IN = re.compile(
    r"\b(just so you know|for context|heads up|fyi|keep in mind|(please )?remember(s)? that|please note|note that|"
    r"as i mentioned|for future reference|btw|by the way|for the record|just fyi)\b",
    re.IGNORECASE,
)
_TERM_RECALL = 0.5
_COSINE = 0.75


def _numbers(text: str) -> set[str]:
    return set(_NUMBER.findall(text))


def _names(text: str) -> set[str]:
    """Capitalised words after the first word: names, places, tools ("Procore", "Ghent")."""
    words = re.findall(r"[A-Za-zÀ-ÿ][\wÀ-ÿ'-]*", text)
    skip = {"The", "User", "Company", "L'utilisateur", "L'entreprise", "Der", "Das", "Nutzer", "Unternehmen"}
    return {w.removesuffix("'s") for w in words[1:] if w[0].isupper() and w not in skip}


def _contains_all(line: str, wanted: set[str]) -> bool:
    lowered = line.lower()
    return all(w.lower() in lowered for w in wanted)


def fresh_memory(folder: Path, app: Any, prior: list[tuple[str, str]]) -> tuple[Any, dict[str, Any]]:
    """A Memory on its own pair of files in `folder`, holding the `prior` (target, line) entries, over the
    app's model and embedder and its settings' gates and thresholds."""
    from memory.markdown_store import memory_files
    from memory.memory import Memory
    from memory.memory_log import MemoryLog

    files = memory_files(folder)
    for target, line in prior:
        files[target].add(line)
    return Memory.from_settings(
        files, MemoryLog(folder / "log.sqlite"), app.llm, app.embedder.embed, app.settings
    ), files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=0, help="score every k-th message, about N in all")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b", help="the packaged llama.cpp model")
    parser.add_argument("--half", action="store_true", help="then every other one of those (a subset, ~N/2)")
    parser.add_argument("--label", default="run", help="the report's file name under reports/memory/")
    parser.add_argument(
        "--rescore", type=Path, help="only summarise this saved report, on the messages of --like (no model run)"
    )
    parser.add_argument("--like", type=Path, help="with --rescore: a report whose messages to keep")
    parser.add_argument("--dataset", type=Path, default=DATASET, help="a labelled set in the same format")
    parser.add_argument("--languages", action="store_true", help="only the messages not in English (those with `lang`)")
    parser.add_argument(
        "--english-lines", action="store_true", help="don't tell the memory the message's language (the old behaviour)"
    )
    args = parser.parse_args()
    if args.rescore:
        kept = {m["id"] for m in json.loads(args.like.read_text(encoding="utf-8"))["messages"]}
        saved = json.loads(args.rescore.read_text(encoding="utf-8"))
        results = [m for m in saved["messages"] if m["id"] in kept]
        summary = _summary(results, saved["summary"]["model"])
        REPORTS.mkdir(parents=True, exist_ok=True)
        (REPORTS / f"{args.label}.md").write_text(_markdown(summary, args), encoding="utf-8")
        print(_markdown(summary, args))
        return
    rows = [json.loads(line) for line in args.dataset.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.sample and args.sample < len(rows):
        step = len(rows) / args.sample
        rows = [rows[int(i * step)] for i in range(args.sample)]
    if args.languages:
        rows = [row for row in rows if row.get("lang")]
    if args.half:
        rows = rows[::2]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(RAGCHAT_HOME=str(Path(tmp) / "home"), RAGCHAT_RERANKER_DIR=str(Path(tmp) / "none"))
        from core.language import LanguageDetector
        from core.settings import get_settings
        from core.text import tokenize
        from ragchat.application import App

        settings = get_settings(llm_provider="llamacpp", llm_model=args.model)
        app = App(settings)
        app.llm()  # loaded before the clock starts
        embed = app.embedder.embed
        detect = LanguageDetector.from_settings(settings)

        def cosine(a: str, b: str) -> float:
            import numpy as np

            va, vb = np.asarray(embed([a, b]), dtype=np.float32)
            return float(va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb) + 1e-12))

        def same_fact(stored: str, expected: str) -> bool:
            if not _contains_all(stored, _numbers(expected)):
                return False
            wanted = set(tokenize(expected)) - {"user", "compani", "utilisateur", "entrepris", "nutzer", "unternehmen"}
            got = set(tokenize(stored))
            if wanted and len(wanted & got) / len(wanted) >= _TERM_RECALL:
                return True
            return cosine(stored, expected) >= _COSINE

        results = []
        for number, row in enumerate(rows):
            memory, files = fresh_memory(
                Path(tmp) / f"m{number}", app, [(p["target"], p["line"]) for p in row.get("prior", [])]
            )
            started = time.perf_counter()
            lang = "en" if args.english_lines else detect(row["message"])
            outcome = memory.remember(row["message"], lang=lang)
            seconds = time.perf_counter() - started
            prior = {(p["target"], p["line"]) for p in row.get("prior", [])}
            after = {(t, line) for t, f in files.items() for line in f.entries()}
            new = sorted(after - prior)
            expected = [(e["target"], e["line"]) for e in row["expected"]]
            unmatched = list(expected)
            lines = []
            for target, line in new:
                match = next((e for e in unmatched if e[0] == target and same_fact(line, e[1])), None)
                if match:
                    unmatched.remove(match)
                    kept = _contains_all(line, _numbers(match[1]) | _names(match[1]))
                else:
                    kept = _contains_all(row["message"], _numbers(line) | _names(line))
                clean = (
                    not _FIRST_PERSON.search(line.lower())
                    and not _LEAD_IN.search(line)
                    and line.endswith(".")
                    and line.count(". ") == 0
                    and kept
                )
                in_language = detect(line) == row.get("lang", "en")
                lines.append(
                    {
                        "target": target,
                        "line": line,
                        "matches": match[1] if match else None,
                        "clean": clean,
                        "in_language": in_language,
                    }
                )
            replaces = row.get("replaces", [])
            restatement = row["category"] == "restatement"
            prior_kept = all(entry in after for entry in prior)
            results.append(
                {
                    "id": row["id"],
                    "category": row["category"],
                    "message": row["message"],
                    "expected": row["expected"],
                    "stored": lines,
                    "missed": [{"target": t, "line": line} for t, line in unmatched],
                    "right_file": {t for t, _ in new} == {t for t, _ in expected},
                    "correction_ok": (
                        all((t, line) not in after for t, line in prior if line in replaces) and not unmatched
                    )
                    if replaces
                    else None,
                    "duplicate": bool(new) and prior_kept if restatement else None,
                    "reworded": bool(new) and not prior_kept if restatement else None,
                    "secret_stored": bool(new) if row.get("secret") else None,
                    "seconds": round(seconds, 3),
                    "skipped": [f"{s.text}: {s.reason}" for s in outcome.skipped],
                }
            )
            print(
                f"{row['id']} {seconds:5.2f}s {'ok ' if results[-1]['right_file'] else 'BAD'} {row['message'][:60]!r}"
            )
            for line in lines:
                mark = ("✓" if line["matches"] else "✗") + ("" if line["clean"] else " (not clean)")
                print(f"      {line['target']:7} {mark} {line['line']}")
        summary = _summary(results, args.model)
        summary["load_average"] = [round(x, 1) for x in os.getloadavg()]
    REPORTS.mkdir(parents=True, exist_ok=True)
    (REPORTS / f"{args.label}.json").write_text(
        json.dumps({"summary": summary, "messages": results}, indent=1, ensure_ascii=False, default=sorted) + "\n",
        encoding="utf-8",
    )
    (REPORTS / f"{args.label}.md").write_text(_markdown(summary, args), encoding="utf-8")
    print(_markdown(summary, args))


def _summary(results: list[dict], model: str) -> dict:
    def ratio(a: int, b: int) -> float | None:
        return round(a / b, 3) if b else None

    out: dict = {"model": model, "messages": len(results)}
    for target in ("USER", "COMPANY"):
        stored = [s for r in results for s in r["stored"] if s["target"] == target]
        expected = [e for r in results for e in r["expected"] if e["target"] == target]
        hits = sum(1 for s in stored if s["matches"])
        out[target] = {
            "precision": ratio(hits, len(stored)),
            "recall": ratio(hits, len(expected)),
            "stored": len(stored),
            "expected": len(expected),
        }
    stored = [s for r in results for s in r["stored"]]
    corrections = [r["correction_ok"] for r in results if r["correction_ok"] is not None]
    restatements = [r["duplicate"] for r in results if r["duplicate"] is not None]
    reworded = [r["reworded"] for r in results if r.get("reworded") is not None]
    secrets = [r["secret_stored"] for r in results if r["secret_stored"] is not None]
    seconds = sorted(r["seconds"] for r in results)
    out.update(
        accuracy=ratio(sum(r["right_file"] for r in results), len(results)),
        clean_lines=ratio(sum(s["clean"] for s in stored), len(stored)),
        lines_in_language=ratio(sum(s.get("in_language", True) for s in stored), len(stored)),
        stored_lines=len(stored),
        corrections_handled=f"{sum(corrections)}/{len(corrections)}",
        restatement_duplicates=f"{sum(restatements)}/{len(restatements)}",
        restatements_reworded=f"{sum(reworded)}/{len(reworded)}" if reworded else None,
        secrets_stored=f"{sum(secrets)}/{len(secrets)}",
        seconds_median=round(statistics.median(seconds), 2),
        seconds_p95=round(seconds[min(len(seconds) - 1, int(0.95 * len(seconds)))], 2),
    )
    return out


def _markdown(summary: dict, args: argparse.Namespace) -> str:
    command = f"bench/memory_judgment.py --model {args.model} --sample {args.sample} --label {args.label}"
    if args.dataset != DATASET:
        command += f" --dataset {args.dataset}"
    for flag in ("half", "languages", "english_lines"):
        if getattr(args, flag, False):
            command += " --" + flag.replace("_", "-")
    if args.rescore:
        command = f"bench/memory_judgment.py --rescore {args.rescore} --like {args.like} --label {args.label}"
    rows = [("messages", summary["messages"])]
    for target in ("USER", "COMPANY"):
        t = summary[target]
        value = f"{t['precision']} / {t['recall']} ({t['stored']} stored, {t['expected']} expected)"
        rows.append((f"{target} precision / recall", value))
    rows += [
        ("accuracy (right file or nothing)", summary["accuracy"]),
        ("clean lines", f"{summary['clean_lines']} of {summary['stored_lines']}"),
        ("lines in the message's language", f"{summary.get('lines_in_language')} of {summary['stored_lines']}"),
        ("corrections handled", summary["corrections_handled"]),
        ("restatement duplicates (a second line)", summary["restatement_duplicates"]),
        ("restatements reworded (the line replaced)", summary.get("restatements_reworded")),
        ("secrets stored", summary["secrets_stored"]),
        ("seconds per message (median / p95)", f"{summary['seconds_median']} / {summary['seconds_p95']}"),
        ("load average at the end (1, 5, 15 min; 2 cores)", summary.get("load_average")),
    ]
    table = "\n".join(f"| {name} | {value} |" for name, value in rows)
    return (
        f"# Memory judgment: {args.label}\n\n`.venv/bin/python {command}`\n\n| measure | value |\n|---|---|\n{table}\n"
    )


if __name__ == "__main__":
    main()
