"""Train the scope classifier (rag/router.py `ScopeWeights`): does a document-level request need every
uploaded document read (a summary of each, a comparison, themes across them), or is it about one
document or a search for the one that holds something?

    .venv/bin/python -m scripts.train_scope            # cross-validate, then write rag/scope_weights.json
    .venv/bin/python -m scripts.train_scope --check    # cross-validate only

Examples: eval/datasets/routing/scope.jsonl (`every`), and the document rows of requests.jsonl
(`every`: scope `all` and kind not `which_document`, or a comparison of documents it does not
name). Each is embedded with the packaged MiniLM; a logistic regression on the vectors is scored
by stratified k-fold cross-validation (every request predicted by a model that never saw it):
precision and recall of `every` at `scope_every_threshold`.
The final weights are fitted on all of them; the report goes into the weights file beside them.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from core.linear_probe import fit
from core.settings import PROJECT_ROOT, get_settings
from providers.embedder import Embedder
from rag.router import SCOPE_WEIGHTS_PATH, RouterWeights
from scripts.train_router import DATASET as REQUESTS
from scripts.train_router import FOLDS, L2, SEED, cross_validated, load

SCOPE_SET = PROJECT_ROOT / "eval" / "datasets" / "routing" / "scope.jsonl"


def examples() -> list[tuple[str, bool]]:
    rows = [(row["text"], bool(row["every"])) for row in load(SCOPE_SET)]
    rows += [(row["text"], _every(row)) for row in load(REQUESTS) if row["label"] == "document"]
    return rows


def _every(row: dict) -> bool:
    """A requests.jsonl document row needs every document read when it covers all of them (not a
    search for the one that holds something), or compares documents it does not name ("these two
    CVs": with none chosen, the ones uploaded)."""
    if row["scope"] == "all":
        return row["kind"] != "which_document"
    return row["kind"] == "compare" and row["scope"] != "named"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="cross-validate only; write nothing")
    parser.add_argument("--threshold", type=float, default=None, help="P(every) threshold (default: setting)")
    args = parser.parse_args()
    settings = get_settings()
    threshold = settings.scope_every_threshold if args.threshold is None else args.threshold
    rows = examples()
    embedder = Embedder(settings)
    vectors = np.asarray(embedder.embed([text for text, _ in rows]), dtype=np.float32)
    truth = np.array([every for _, every in rows])
    p = cross_validated(vectors, truth)
    predicted = p >= threshold
    tp = int(np.sum(truth & predicted))
    report: dict[str, object] = {
        "datasets": [str(SCOPE_SET.relative_to(PROJECT_ROOT)), str(REQUESTS.relative_to(PROJECT_ROOT))],
        "requests": len(rows),
        "every": int(truth.sum()),
        "cross_validation": f"{FOLDS}-fold stratified, seed {SEED}",
        "threshold": threshold,
        "l2": L2,
        "every_precision": round(tp / max(int(predicted.sum()), 1), 3),
        "every_recall": round(tp / max(int(truth.sum()), 1), 3),
        "accuracy": round(float(np.mean(truth == predicted)), 3),
    }
    print(json.dumps(report, indent=1))
    for (text, every), y, prob in zip(rows, predicted, p, strict=True):
        if every != y:
            print(f"  wrong (every={every}, p={prob:.2f}): {text}")
    if not args.check:
        w, b = fit(vectors, truth, L2)
        RouterWeights(w, b, embedder.label).save(SCOPE_WEIGHTS_PATH, report)
        print(f"wrote {SCOPE_WEIGHTS_PATH.relative_to(PROJECT_ROOT)}")


if __name__ == "__main__":
    main()
