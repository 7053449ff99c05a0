"""Train the overview classifier (rag/router.py): is a document-level request for a general overview
of the document (what it is about, its summary, its key points), which its document card answers at
once, or for something in it (names, dates, a section, the action items, a comparison)?

    .venv/bin/python -m scripts.train_overview            # cross-validate, test, write rag/overview_weights.json
    .venv/bin/python -m scripts.train_overview --check    # cross-validate and test only

Examples: the document rows of the routing sets (eval/datasets/routing), labelled by their `kind`:
overview, summary, key_points, doc_type and audience are general (when they ask for no shape: "in 3
bullets" is written afresh), every other kind is not. requests.jsonl and requests_v2.jsonl are
cross-validated (stratified folds: every request scored by a model that never saw it); general_v3.jsonl,
written later and never fitted on, is the held-out test. Each request is embedded with the packaged
MiniLM, as the router embeds it. Precision matters most: a specific request answered with the card is
a wrong answer; a general one that misses the card is only slower.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from core.linear_probe import fit
from core.settings import PROJECT_ROOT, get_settings
from providers.embedder import Embedder
from rag.router import OVERVIEW_WEIGHTS_PATH, RouterWeights
from scripts.train_router import DATASET as REQUESTS
from scripts.train_router import FOLDS, L2, SEED, cross_validated, load

GENERAL_KINDS = {"overview", "summary", "key_points", "doc_type", "audience"}
TRAIN = (REQUESTS, REQUESTS.with_name("requests_v2.jsonl"))
TEST = REQUESTS.with_name("general_v3.jsonl")


def examples(paths: tuple) -> list[tuple[str, bool]]:
    return [
        (row["text"], row["kind"] in GENERAL_KINDS and not row.get("form"))
        for path in paths
        for row in load(path)
        if row["label"] == "document"
    ]


def rates(truth: np.ndarray, predicted: np.ndarray) -> dict[str, float]:
    tp = int(np.sum(truth & predicted))
    return {
        "precision": round(tp / max(int(predicted.sum()), 1), 3),
        "recall": round(tp / max(int(truth.sum()), 1), 3),
        "accuracy": round(float(np.mean(truth == predicted)), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="cross-validate and test only; write nothing")
    parser.add_argument("--threshold", type=float, default=None, help="P(overview) threshold (default: setting)")
    args = parser.parse_args()
    settings = get_settings()
    threshold = settings.card_threshold if args.threshold is None else args.threshold
    embedder = Embedder(settings)
    train, test = examples(TRAIN), examples((TEST,))
    vectors = np.asarray(embedder.embed([text for text, _ in train]), dtype=np.float32)
    truth = np.array([general for _, general in train])
    p = cross_validated(vectors, truth)
    w, b = fit(vectors, truth, L2)
    weights = RouterWeights(w, b, embedder.label)
    test_vectors = np.asarray(embedder.embed([text for text, _ in test]), dtype=np.float32)
    test_truth = np.array([general for _, general in test])
    test_p = weights.probability(test_vectors)
    report: dict[str, object] = {
        "datasets": [str(path.relative_to(PROJECT_ROOT)) for path in TRAIN],
        "held_out": str(TEST.relative_to(PROJECT_ROOT)),
        "requests": len(train),
        "general": int(truth.sum()),
        "cross_validation": f"{FOLDS}-fold stratified, seed {SEED}",
        "threshold": threshold,
        "l2": L2,
        "cross_validated": rates(truth, p >= threshold),
        "held_out_requests": len(test),
        "held_out_general": int(test_truth.sum()),
        "held_out_test": rates(test_truth, test_p >= threshold),
    }
    print(json.dumps(report, indent=1))
    for (text, general), prob in [*zip(train, p, strict=True), *zip(test, test_p, strict=True)]:
        if general != (prob >= threshold):
            print(f"  wrong (general={general}, p={prob:.2f}): {text}")
    if not args.check:
        weights.save(OVERVIEW_WEIGHTS_PATH, report)
        print(f"wrote {OVERVIEW_WEIGHTS_PATH.relative_to(PROJECT_ROOT)}")


if __name__ == "__main__":
    main()
