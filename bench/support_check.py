"""How well the per-sentence support check (rag/support.py) separates supported from unsupported
sentences on real answers, and which thresholds do it: the measurements behind
RAGCHAT_SUPPORT_MIN_TERM_SHARE, RAGCHAT_SUPPORT_MIN_SIMILARITY and RAGCHAT_LOW_CONFIDENCE_THRESHOLD.

What it does: ingests the SQuAD 2.0 "Normans" article (../shared/data/squad2-normans; skipped with a
note when absent) into a temporary RAGCHAT_HOME and asks the model N answerable questions (spread over
the article) and M unanswerable ones through `Session.ask_stream`, recording each answer with the
chunks it was checked against. Then, with no model:

* supported: each sentence of a correct answer (one that holds a gold answer) that holds the gold
  answer, checked against its own sources, when the gold answer is in them;
* wrong sources: the same sentences checked against the sources of another question's answer, from
  another paragraph (an answer that strayed from its documents);
* changed fact: the same sentences with the gold answer replaced by another question's gold answer,
  checked against their own sources (a hallucinated figure or name in an otherwise grounded sentence).

It prints the overlap and similarity quantiles of each set, the share of each set judged supported at
the default thresholds and on a grid, and the confidence of whole answers (correct, with a changed
fact, answers to unanswerable questions that were not refused). Nothing is asserted.

    .venv/bin/python bench/support_check.py                                  # 0.5B, 24 + 8 questions
    .venv/bin/python bench/support_check.py --model qwen2.5-coder-1.5b --save /tmp/answers-1.5b.json
    .venv/bin/python bench/support_check.py --load /tmp/answers-1.5b.json    # re-analyse, no model
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from core.schemas import Citation, Hit, SentenceSupport
from core.settings import PROJECT_ROOT, get_settings
from rag.citations import split_sentences, strip_markers
from rag.support import SupportChecker, confidence

DEFAULT_SQUAD = PROJECT_ROOT.parent / "shared" / "data" / "squad2-normans"
CONFIDENCE_GRID = (0.4, 0.5, 0.6, 0.7)


def generate(args: argparse.Namespace) -> list[dict[str, Any]]:
    from ragchat.application import open_session

    rows = [json.loads(line) for line in (args.squad / "questions.jsonl").read_text().splitlines() if line.strip()]
    answerable = [r for r in rows if not r["is_impossible"]]
    impossible = [r for r in rows if r["is_impossible"]]
    picked = _spread(answerable, args.questions) + _spread(impossible, args.impossible)
    records: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ragchat-bench-support-") as home:
        session = open_session(
            get_settings(
                home=Path(home),
                llm_provider="llamacpp",
                llm_model=args.model,
                memory_enabled=False,
                rate_limit_per_minute=0,
                reranker_dir=Path(home) / "no-reranker",
            )
        )
        print(session.ingest_paths([args.squad / "Normans.md"]), file=sys.stderr)
        for number, row in enumerate(picked, start=1):
            started = time.perf_counter()
            answer = session.ask_stream(row["question"]).result()
            print(
                f"[{number}/{len(picked)}] {time.perf_counter() - started:.1f}s {row['question']!r} → "
                f"{answer.answer[:100]!r}",
                file=sys.stderr,
            )
            records.append(
                {
                    "question": row["question"],
                    "paragraph": row["paragraph_index"],
                    "impossible": row["is_impossible"],
                    "gold": row["answers"],
                    "answer": answer.answer,
                    "refused": answer.refused,
                    "citations": [c.model_dump(mode="json") for c in answer.citations],
                    "hits": [h.model_dump(mode="json") for h in answer.given.hits] if not answer.refused else [],
                }
            )
            if args.save:  # after every answer, so an interrupted run is still usable with --load
                args.save.write_text(json.dumps(records))
    return records


def _spread(rows: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    if n <= 0:
        return []
    step = max(len(rows) / n, 1)
    return [rows[int(i * step)] for i in range(min(n, len(rows)))]


def _contains(text: str, needle: str) -> bool:
    return needle.lower() in text.lower()


def analyse(records: list[dict[str, Any]], embed: Any, min_overlap: float, min_similarity: float) -> None:
    checker = SupportChecker(embed, 0.0, 0.0, get_settings().support_min_terms)  # raw signals; thresholds applied below
    answered = [r for r in records if not r["impossible"] and not r["refused"] and r["hits"]]
    correct = [r for r in answered if any(_contains(r["answer"], g) for g in r["gold"])]
    print(
        f"answers: {len(records)} asked; answerable {sum(not r['impossible'] for r in records)}, answered "
        f"{len(answered)}, correct {len(correct)}; unanswerable {sum(r['impossible'] for r in records)}, "
        f"not refused {sum(r['impossible'] and not r['refused'] for r in records)}"
    )
    sets: dict[str, list[SentenceSupport]] = {"supported": [], "wrong sources": [], "changed fact": []}
    whole: dict[str, list[float]] = {
        "correct answers": [],
        "answers with a changed fact": [],
        "unanswerable, not refused": [],
    }
    for index, record in enumerate(correct):
        hits = [Hit.model_validate(h) for h in record["hits"]]
        citations = [Citation.model_validate(c) for c in record["citations"]]
        gold = next(g for g in record["gold"] if _contains(record["answer"], g))
        other = next((o for o in correct[index + 1 :] + correct[:index] if o["paragraph"] != record["paragraph"]), None)
        replacement = next(
            (
                o["gold"][0]
                for o in correct[index + 1 :] + correct[:index]
                if not any(_contains(h["chunk"]["text"], o["gold"][0]) for h in record["hits"])
            ),
            None,
        )
        support = checker.check(record["answer"], citations, hits)
        whole["correct answers"].append(confidence(support))
        for sentence in split_sentences(record["answer"]):
            text = strip_markers(sentence)
            if not _contains(text, gold):
                continue
            [own] = checker.check(sentence, citations, hits) or [None]
            if own is None or not any(_contains(hits[n - 1].chunk.text, gold) for n in own.sources):
                continue
            sets["supported"].append(own)
            if other is not None:
                other_hits = [Hit.model_validate(h) for h in other["hits"]]
                [wrong] = checker.check(text, [], other_hits) or [None]
                if wrong is not None:
                    sets["wrong sources"].append(wrong)
            if replacement is not None:
                changed = _replace(sentence, gold, replacement)
                [fake] = checker.check(changed, citations, hits) or [None]
                if fake is not None:
                    sets["changed fact"].append(fake)
                whole["answers with a changed fact"].append(
                    confidence(checker.check(_replace(record["answer"], gold, replacement), citations, hits))
                )
    for record in records:
        if record["impossible"] and not record["refused"] and record["hits"]:
            hits = [Hit.model_validate(h) for h in record["hits"]]
            citations = [Citation.model_validate(c) for c in record["citations"]]
            whole["unanswerable, not refused"].append(confidence(checker.check(record["answer"], citations, hits)))

    timed = SupportChecker(embed, min_overlap, min_similarity, get_settings().support_min_terms)
    timed.check("Warm-up sentence.", [], [Hit.model_validate(answered[0]["hits"][0])])
    durations = []
    for record in answered:
        hits = [Hit.model_validate(h) for h in record["hits"]]
        citations = [Citation.model_validate(c) for c in record["citations"]]
        started = time.perf_counter()
        timed.check(record["answer"], citations, hits)
        durations.append((time.perf_counter() - started) * 1000)
    print(
        f"support check per answer (embedder included): median {statistics.median(durations):.0f} ms, "
        f"max {max(durations):.0f} ms over {len(durations)} answers; load average {os.getloadavg()[0]:.1f}"
    )

    print("\n| sentences | n | overlap p10 / p50 / p90 | similarity p10 / p50 / p90 | with missing key terms |")
    print("|---|---:|---|---|---:|")
    for name, items in sets.items():
        overlaps = [s.overlap for s in items]
        sims = [s.similarity or 0.0 for s in items]
        print(f"| {name} | {len(items)} | {_q(overlaps)} | {_q(sims)} | {sum(bool(s.missing) for s in items)} |")

    print(f"\nJudged supported at min_overlap {min_overlap}, min_similarity {min_similarity} (default rule):")
    for name, items in sets.items():
        judged = [_supported(s, min_overlap, min_similarity) for s in items]
        print(f"  {name}: {sum(judged)}/{len(judged)}")
    print("\nGrid: supported kept / wrong sources passed / changed facts passed")
    print("| min_overlap \\ min_similarity | " + " | ".join(str(t) for t in (0.6, 0.7, 0.75, 0.8, 0.9, 1.01)) + " |")
    print("|---|" + "---|" * 6)
    for lo in (0.4, 0.5, 0.6, 0.7, 0.8):
        cells = []
        for ls in (0.6, 0.7, 0.75, 0.8, 0.9, 1.01):
            kept, wrong, fake = (sum(_supported(s, lo, ls) for s in sets[k]) for k in sets)
            cells.append(f"{kept}/{wrong}/{fake}")
        print(f"| {lo} | " + " | ".join(cells) + " |")
    print("\nConfidence of whole answers (p10 / p50 / p90), and how many fall below each threshold:")
    print("| answers | n | p10 / p50 / p90 | " + " | ".join(f"< {t}" for t in CONFIDENCE_GRID) + " |")
    print("|---|---:|---|" + "---:|" * len(CONFIDENCE_GRID))
    for name, scores in whole.items():
        values = [s or 0.0 for s in scores]
        below = " | ".join(str(sum(v < t for v in values)) for t in CONFIDENCE_GRID)
        print(f"| {name} | {len(values)} | {_q(values)} | {below} |")


def _replace(text: str, gold: str, replacement: str) -> str:
    start = text.lower().index(gold.lower())
    return text[:start] + replacement + text[start + len(gold) :]


def _supported(s: SentenceSupport, min_overlap: float, min_similarity: float) -> bool:
    return not s.missing and (s.overlap >= min_overlap or (s.similarity or 0.0) >= min_similarity)


def _q(values: list[float]) -> str:
    if not values:
        return "–"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    deciles = statistics.quantiles(values, n=10, method="inclusive")
    return f"{deciles[0]:.2f} / {statistics.median(values):.2f} / {deciles[-1]:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--questions", type=int, default=24, help="answerable questions")
    parser.add_argument("--impossible", type=int, default=8, help="unanswerable questions")
    parser.add_argument("--squad", type=Path, default=DEFAULT_SQUAD)
    parser.add_argument("--save", type=Path, help="write the answers here (JSON) for --load")
    parser.add_argument("--load", type=Path, help="analyse saved answers instead of asking the model")
    args = parser.parse_args()
    settings = get_settings()
    if args.load:
        records = json.loads(args.load.read_text())
    else:
        if not (args.squad / "questions.jsonl").exists():
            print(f"skipped: no SQuAD data at {args.squad}")
            return
        started = time.perf_counter()
        records = generate(args)
        print(
            f"model {args.model}: {len(records)} answers in {time.perf_counter() - started:.0f} s; "
            f"load average {os.getloadavg()[0]:.1f}"
        )
    from providers.embedder import Embedder

    analyse(records, Embedder(settings).embed, settings.support_min_term_share, settings.support_min_similarity)


if __name__ == "__main__":
    main()
