"""Evidence selection without the model: how often the evidence the model is given holds the gold
answer, and how many prompt tokens it costs, for the old packing (whole chunks) and for sentence
evidence at several sizes, side by side on the same retrievals (issue 20).

Indexes the SQuAD 2.0 articles of --data in a temporary home, retrieves once per answerable question
(the app's settings: top_k, fusion, refusal threshold), then, for each variant, picks the evidence
and records whether the gold answer span lies inside one given excerpt, whether a reference answer
occurs anywhere in the evidence (SQuAD marks one occurrence of it), and the evidence's estimated
tokens. No LLM runs, so the whole set takes about a minute.

    .venv/bin/python bench/evidence_selection.py --data ../shared/data/squad2-normans
    .venv/bin/python bench/evidence_selection.py --data ../shared/data/squad2-more --per-article 80
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.schemas import Hit
from core.settings import get_settings
from core.text import estimate_tokens
from rag.context_budget import fit_hits
from rag.evidence import EvidencePicker
from rag.stages import readable
from ragchat.application import open_session

# (token budget, chunks picked from, neighbour weight); lexical weight 1.0 (0.0 lost at every budget).
VARIANTS = [(b, c, n) for b in (200, 300, 400) for c in (4, 8) for n in (0.0, 0.8)]


def load_answerable(data: Path, per_article: int, seed: int) -> list[dict]:
    rows = [json.loads(line) for line in (data / "questions.jsonl").read_text(encoding="utf-8").splitlines() if line]
    by_doc: dict[str, list[dict]] = {}
    for row in rows:
        if not row["is_impossible"]:
            by_doc.setdefault(row.get("doc_file", "Normans.md"), []).append(row)
    rng = random.Random(seed)
    return [q for doc in sorted(by_doc) for q in rng.sample(by_doc[doc], min(per_article, len(by_doc[doc])))]


def holds_gold(hits: list[Hit], source: str, spans: list[list[int]]) -> bool:
    return any(
        hit.chunk.source == source and hit.chunk.char_start <= start and end <= hit.chunk.char_end
        for hit in hits
        for start, end in spans
    )


def holds_answer(hits: list[Hit], answers: list[str]) -> bool:
    """A reference answer occurs in the evidence's text (anywhere: SQuAD marks one occurrence)."""
    text = " ".join(h.chunk.text for h in hits).lower()
    return any(a.lower() in text for a in answers)


def tokens(hits: list[Hit], header: int) -> int:
    return sum(estimate_tokens(h.chunk.text) + header for h in hits)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--per-article", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20)
    args = parser.parse_args()
    questions = load_answerable(args.data, args.per_article, args.seed)
    with tempfile.TemporaryDirectory() as home:
        os.environ["RAGCHAT_HOME"] = home
        settings = get_settings(memory_enabled=False)
        session = open_session(settings)
        for doc in sorted({q.get("doc_file", "Normans.md") for q in questions}):
            path = args.data / doc
            session.ingest_bytes(path.name, path.read_bytes())
        cache: dict[str, list[float]] = {}

        def embed(texts: list[str]) -> list[list[float]]:
            missing = [t for t in dict.fromkeys(texts) if t not in cache]
            if missing:
                cache.update(zip(missing, session.app.embedder.embed(missing), strict=True))
            return [cache[t] for t in texts]

        pipeline = session.pipeline
        results: dict[str, list[tuple[bool, bool, int]]] = {}
        retrieved_gold = 0
        for q in questions:
            source, spans = Path(q.get("doc_file", "Normans.md")).name, q["gold_char_spans_in_doc"]
            retrieval = pipeline.retrieve.run(q["question"], settings.top_k, settings.bm25_weight, True)
            threshold = settings.refusal_threshold
            relevant = [h for h in retrieval.hits if (h.scores.dense or 0.0) >= threshold]
            chunks = fit_hits(relevant, settings.context_tokens, settings.source_header_tokens)
            pool = [h for h in readable(retrieval.candidates, 8) if (h.scores.dense or 0.0) >= threshold]
            retrieved_gold += holds_gold(retrieval.hits, source, spans)
            results.setdefault("whole chunks (before)", []).append(
                (
                    holds_gold(chunks, source, spans),
                    holds_answer(chunks, q["answers"]),
                    tokens(chunks, settings.source_header_tokens),
                )
            )
            for budget, candidates, neighbour in VARIANTS:
                picker = EvidencePicker(
                    embed, budget, settings.evidence_min_chunk_tokens, 1.0, settings.source_header_tokens, neighbour
                )
                picked = picker.pick(q["question"], pool[:candidates])
                results.setdefault(f"{budget} tok, top {candidates}, nb {neighbour}", []).append(
                    (
                        holds_gold(picked, source, spans),
                        holds_answer(picked, q["answers"]),
                        tokens(picked, settings.source_header_tokens),
                    )
                )
    print(f"load average {os.getloadavg()}; {len(questions)} answerable questions from {args.data}")
    print(f"gold in the retrieved top {settings.top_k}: {retrieved_gold / len(questions):.3f}")
    print(f"{'evidence':26} {'gold span':>10} {'an answer':>10} {'tokens p50':>10} {'tokens p90':>10}")
    for name, rows in results.items():
        span = sum(r[0] for r in rows) / len(rows)
        answer = sum(r[1] for r in rows) / len(rows)
        counts = sorted(r[2] for r in rows)
        p90 = counts[int(0.9 * (len(counts) - 1))]
        print(f"{name:26} {span:10.3f} {answer:10.3f} {statistics.median(counts):10.0f} {p90:10.0f}")


if __name__ == "__main__":
    main()
