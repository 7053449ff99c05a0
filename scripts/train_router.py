"""Train the request router (rag/router.py) on the frozen labelled sets and report how well it does.

    .venv/bin/python -m scripts.train_router            # cross-validate, then write rag/router_weights.json
    .venv/bin/python -m scripts.train_router --check    # cross-validate only

Each request is embedded with the packaged MiniLM (the app's embedder); a logistic regression on the
vectors is scored by stratified k-fold cross-validation (every request is predicted by a model that
never saw it): precision and recall of `document` at `route_threshold`, `route_whole_threshold` and
`route_sure_threshold` (rag/document_stages.py RouteRequest uses them all), at `route_chosen_threshold`
over the requests that point at one document, and the errors by kind,
so the hard negatives (passage questions that say "summary", "main", "section") show. The final
weights are fitted on both sets whole; the report goes into the weights file beside them.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import numpy as np

from core.linear_probe import fit, probability
from core.settings import PROJECT_ROOT, get_settings
from providers.embedder import Embedder
from rag.router import WEIGHTS_PATH, RouterWeights

DATASET = PROJECT_ROOT / "eval" / "datasets" / "routing" / "requests.jsonl"
# Written later, before the router was retrained on it, weighted to what the first set's router missed
# (every date or figure, limitations, to-dos, terse overviews) and to single-fact hard negatives.
# Then requests not about the documents at all (general knowledge, advice, chit-chat), which the first
# two sets lacked, beside document requests in the same open style.
DATASETS = (DATASET, DATASET.with_name("requests_v2.jsonl"), DATASET.with_name("general_v3.jsonl"))
L2 = 1e-3
FOLDS = 5
SEED = 7


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def folds(labels: np.ndarray, k: int, seed: int) -> np.ndarray:
    """A fold number per example, each label spread evenly over the folds."""
    rng = np.random.default_rng(seed)
    fold = np.empty(len(labels), dtype=int)
    for value in np.unique(labels):
        where = rng.permutation(np.flatnonzero(labels == value))
        fold[where] = np.arange(len(where)) % k
    return fold


def cross_validated(vectors: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """P(positive) for each example from a regression fitted on the other folds (stratified, FOLDS
    folds, SEED): every example predicted by a model that never saw it."""
    fold = folds(truth, FOLDS, SEED)
    p = np.zeros(len(truth))
    for k in range(FOLDS):
        train = fold != k
        w, b = fit(vectors[train], truth[train], L2)
        p[~train] = probability(vectors[~train], w, b)
    return p


def scores(truth: np.ndarray, predicted: np.ndarray) -> dict[str, float]:
    tp = int(np.sum(truth & predicted))
    precision = tp / max(int(predicted.sum()), 1)
    recall = tp / max(int(truth.sum()), 1)
    passage_recall = int(np.sum(~truth & ~predicted)) / max(int((~truth).sum()), 1)
    return {
        "document_precision": round(precision, 3),
        "document_recall": round(recall, 3),
        "passage_recall": round(passage_recall, 3),
        "accuracy": round(float(np.mean(truth == predicted)), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="cross-validate only; write nothing")
    parser.add_argument("--threshold", type=float, default=None, help="P(document) threshold (default: setting)")
    args = parser.parse_args()
    settings = get_settings()
    threshold = settings.route_threshold if args.threshold is None else args.threshold
    rows = [row for path in DATASETS for row in load(path)]
    embedder = Embedder(settings)
    vectors = np.asarray(embedder.embed([row["text"] for row in rows]), dtype=np.float32)
    truth = np.array([row["label"] == "document" for row in rows])
    p = cross_validated(vectors, truth)
    predicted = p >= threshold
    pointing = np.array([row.get("scope") == "selected" for row in rows])
    report: dict[str, object] = {
        "datasets": [str(path.relative_to(PROJECT_ROOT)) for path in DATASETS],
        "requests": len(rows),
        "cross_validation": f"{FOLDS}-fold stratified, seed {SEED}",
        "threshold": threshold,
        "l2": L2,
        **scores(truth, predicted),
        "at_whole_threshold": {
            "threshold": settings.route_whole_threshold,
            **scores(truth, p >= settings.route_whole_threshold),
        },
        "at_sure_threshold": {
            "threshold": settings.route_sure_threshold,
            **scores(truth, p >= settings.route_sure_threshold),
        },
        # Requests that point at one document ("this report"), as users ask with a file picked.
        "pointing_at_one_document": {
            "requests": int(pointing.sum()),
            "at_chosen_threshold": {
                "threshold": settings.route_chosen_threshold,
                **scores(truth[pointing], p[pointing] >= settings.route_chosen_threshold),
            },
            "at_whole_threshold": scores(truth[pointing], p[pointing] >= settings.route_whole_threshold),
        },
        "errors_by_kind": dict(
            Counter(row["kind"] for row, t, y in zip(rows, truth, predicted, strict=True) if t != y)
        ),
        "non_english_accuracy": round(
            float(np.mean([t == y for row, t, y in zip(rows, truth, predicted, strict=True) if row.get("lang")])), 3
        ),
    }
    print(json.dumps(report, indent=1))
    for row, t, y, prob in zip(rows, truth, predicted, p, strict=True):
        if t != y:
            print(f"  wrong ({row['label']}, {row['kind']}, p={prob:.2f}): {row['text']}")
    if not args.check:
        w, b = fit(vectors, truth, L2)
        RouterWeights(w, b, embedder.label).save(WEIGHTS_PATH, report)
        print(f"wrote {WEIGHTS_PATH.relative_to(PROJECT_ROOT)}")


if __name__ == "__main__":
    main()
