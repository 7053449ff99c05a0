"""The abstention score's signals on SQuAD 2.0 articles, and its calibration per model (issue 20).

collect: indexes the articles in a temporary home and, for a seeded sample of each article's
questions (half answerable, half adversarial unanswerable), runs the real answer path up to the
answer's first visible token (retrieval, evidence, the fixed prompt, the grammar-constrained hidden
phrase line) and saves each question's signals (rag/answerability.py SIGNALS) as a JSON line. Rows
are appended as they come, and a rerun skips ids already saved.

fit: fits the logistic abstention model on the rows of the --train articles, then prints, on the
--test articles (never seen by the fit): each signal's ROC AUC alone, the model's AUC, refusal and
false refusal over a threshold grid and at each strictness level. A level's threshold is the one
that refuses most unanswerable training questions while falsely refusing at most its budget of
answerable ones (lenient 5%, balanced 12%, strict 25%). `--write` stores the model and thresholds
in rag/abstention_calibration.json for that LLM.

replay: scores the committed calibration of --model (both parts) on the rows of the --test articles
without refitting, and prints each level's refusal and false refusal there; `--write` stores them as
the levels' held-out rates (what the UI and README show). For when the answer path changed under a
calibration whose test articles are still unseen by its fit.

    .venv/bin/python bench/answerability_signals.py collect --data ../shared/data/squad2-more \\
        --per-article 50 --model qwen2.5-coder-1.5b --out reports/abstention/rows-1.5b.jsonl
    .venv/bin/python bench/answerability_signals.py fit --rows reports/abstention/rows-1.5b.jsonl \\
        --test Harvard_University Immune_system Packet_switching --model qwen2.5-coder-1.5b --write
    .venv/bin/python bench/answerability_signals.py replay --rows reports/abstention/rows-pool-1.5b.jsonl \\
        --test Harvard_University Immune_system Packet_switching --model qwen2.5-coder-1.5b --write
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.schemas import MemoryFacts
from core.settings import get_settings
from rag.answer_format import Reply, read_reply
from rag.answerability import (
    CALIBRATION_FILE,
    CHECK_SIGNAL,
    DEFAULT_THRESHOLDS,
    FALSE_REFUSAL_BUDGETS,
    SIGNALS,
    calibrations,
    signals,
)
from ragchat.application import open_session

GRID = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]


def load_questions(data: Path, per_article: int, seed: int) -> list[dict]:
    """Per article, up to per_article/2 answerable and as many unanswerable questions, seeded, taken
    round-robin over the articles and both kinds, so a run stopped early is still balanced."""
    rows = [json.loads(line) for line in (data / "questions.jsonl").read_text(encoding="utf-8").splitlines() if line]
    by_doc: dict[str, dict[bool, list[dict]]] = {}
    for row in rows:
        by_doc.setdefault(row.get("doc_file", "Normans.md"), {True: [], False: []})[row["is_impossible"]].append(row)
    rng = random.Random(seed)
    lanes = [
        rng.sample(by_doc[doc][impossible], min(per_article // 2, len(by_doc[doc][impossible])))
        for doc in sorted(by_doc)
        for impossible in (False, True)
    ]
    return [lane[i] for i in range(max(map(len, lanes), default=0)) for lane in lanes if i < len(lane)]


def collect(args: argparse.Namespace) -> None:
    questions = load_questions(args.data, args.per_article, args.seed)
    done = set()
    if args.out.exists():
        done = {json.loads(line)["id"] for line in args.out.read_text(encoding="utf-8").splitlines() if line}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["RAGCHAT_HOME"] = str(args.home or scratch)
        settings = get_settings(memory_enabled=False, llm_model=args.model, llm_provider="llamacpp")
        session = open_session(settings)
        for doc in sorted({q.get("doc_file", "Normans.md") for q in questions}):
            path = args.data / doc
            session.ingest_bytes(path.name, path.read_bytes())
        pipeline, llm = session.pipeline, session.app.llm()
        with args.out.open("a", encoding="utf-8") as out:
            for n, q in enumerate(questions, 1):
                if q["id"] in done:
                    continue
                row = ask_phrase(pipeline, llm, settings, q)
                out.write(json.dumps(row) + "\n")
                out.flush()
                print(f"{n}/{len(questions)} {row['answerable']} {row['phrase']!r} {row['signals']}", file=sys.stderr)


def ask_phrase(pipeline, llm, settings, q: dict) -> dict:
    """The answer path up to the first visible token: the signals the abstention score reads."""
    question = q["question"]
    started = time.perf_counter()
    retrieval = pipeline.retrieve.run(question, settings.top_k, settings.bm25_weight, True)
    evidence = pipeline.select_evidence.run(question, question, retrieval, MemoryFacts())
    given = pipeline.choose_source.run(evidence, MemoryFacts(), 0.0)
    gold = [a.lower() for a in q["answers"]]
    text = " ".join(h.chunk.text for h in given.hits).lower()
    row = {
        "id": q["id"],
        "article": Path(q.get("doc_file", "Normans.md")).stem,
        "answerable": not q["is_impossible"],
        "evidence_has_gold": any(g in text for g in gold) if gold else None,
        "phrase": None,
        "signals": None,
        "gated": given.mode == "none",
        "model": llm.label,
    }
    if given.mode == "none":
        return row
    messages = pipeline.build_prompt.run(question, question, given)
    reply = Reply()
    tokens = llm.stream_tokens(messages, pipeline.generate.grounded(given))
    for _ in read_reply(tokens, reply):
        break
    tokens.close()
    best_dense = max((h.scores.dense or 0.0 for h in retrieval.hits), default=0.0)
    found = signals(reply, question, given.hits, best_dense)
    checked_at = time.perf_counter()
    if found is not None and not reply.said_none:  # the answerability check, as the pipeline asks it
        check_none = pipeline.check_answerability.p_none(question, question, given)
        if check_none is not None:
            found[CHECK_SIGNAL] = check_none
    row.update(
        phrase=reply.phrase,
        signals=found,
        check_seconds=round(time.perf_counter() - checked_at, 2),
        said_none=reply.said_none,
        seconds=round(checked_at - started, 2),
        prompt_tokens=getattr(llm, "last_timings", {}).get("prompt_n"),
    )
    return row


def auc(positives: list[float], negatives: list[float]) -> float:
    """P(a random unanswerable scores above a random answerable), ties count half."""
    if not positives or not negatives:
        return float("nan")
    pos, neg = np.asarray(positives), np.asarray(negatives)
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(wins / (len(pos) * len(neg)))


def matrix(rows: list[dict], names: tuple[str, ...] = SIGNALS) -> tuple[np.ndarray, np.ndarray]:
    x = np.array([[r["signals"][name] for name in names] for r in rows], dtype=np.float64)
    y = np.array([0.0 if r["answerable"] else 1.0 for r in rows])
    return x, y


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(weights, means, scales, bias) of an L2-regularised logistic regression on standardised x."""
    means, scales = x.mean(axis=0), x.std(axis=0)
    scales[scales == 0] = 1.0
    z = (x - means) / scales

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:-1], theta[-1]
        p = 1 / (1 + np.exp(-(z @ w + b)))
        eps = 1e-9
        value = -np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps)) + l2 * w @ w
        grad_w = z.T @ (p - y) / len(y) + 2 * l2 * w
        return value, np.append(grad_w, np.mean(p - y))

    theta = minimize(loss, np.zeros(z.shape[1] + 1), jac=True, method="L-BFGS-B").x
    w, b = theta[:-1], float(theta[-1])
    # A strong penalty shrinks every weight and squeezes the scores around 0.5; refit the score's
    # scale and offset unpenalised (Platt scaling) so that the score shown is a probability again.
    s = z @ w
    if np.ptp(s) > 0:
        platt = minimize(
            lambda ab: float(np.mean(np.logaddexp(0, ab[0] * s + ab[1]) - y * (ab[0] * s + ab[1]))),
            np.array([1.0, 0.0]),
        ).x
        w, b = w * platt[0], b * platt[0] + platt[1]
    return w, means, scales, float(b)


def score_rows(
    rows: list[dict], w: np.ndarray, means: np.ndarray, scales: np.ndarray, bias: float, names: tuple[str, ...]
) -> list[float]:
    x, _ = matrix(rows, names)
    z = (x - means) / scales
    return (1 / (1 + np.exp(-(z @ w + bias)))).tolist()


def rates(
    rows: list[dict], scores: list[float | None], threshold: float, early: list[bool] | None = None
) -> tuple[float, float]:
    """(refusal of unanswerable, false refusal of answerable): gated and NONE replies always refuse,
    and so do the rows `early` marks (refused at the phrase line, before the answerability check)."""
    early = early or [False] * len(rows)

    def refused(row: dict, score: float | None, before: bool) -> bool:
        return row["gated"] or bool(row.get("said_none")) or before or (score is not None and score >= threshold)

    marks = list(zip(rows, scores, early, strict=True))
    impossible = [refused(r, s, e) for r, s, e in marks if not r["answerable"]]
    answerable = [refused(r, s, e) for r, s, e in marks if r["answerable"]]
    return sum(impossible) / max(len(impossible), 1), sum(answerable) / max(len(answerable), 1)


def choose_thresholds(
    rows: list[dict], scores: list[float | None], early: list[bool] | None = None
) -> dict[str, float]:
    """Per level, the lowest threshold whose false refusal stays within the level's budget."""
    candidates = sorted({round(s, 4) for s in scores if s is not None} | {1.0})
    chosen = {}
    for level, budget in FALSE_REFUSAL_BUDGETS.items():
        fitting = [t for t in candidates if rates(rows, scores, t, early)[1] <= budget]
        chosen[level] = min(fitting) if fitting else 1.0
    return chosen


def article_cv_auc(rows: list[dict], names: tuple[str, ...], l2: float) -> float:
    """Leave-one-article-out: each article scored by a model fitted on the others, AUC pooled."""
    scored = []
    for article in sorted({r["article"] for r in rows}):
        held, rest = [r for r in rows if r["article"] == article], [r for r in rows if r["article"] != article]
        w, means, scales, bias = fit_logistic(*matrix(rest, names), l2)
        scored += zip(score_rows(held, w, means, scales, bias, names), (not r["answerable"] for r in held), strict=True)
    return auc([s for s, y in scored if y], [s for s, y in scored if not y])


PHRASE_LINE_SUBSETS = [SIGNALS, ("p_none", "phrase_min_logprob", "question_missing"), ("p_none", "phrase_min_logprob")]
CHECKED_SUBSETS = [
    (*SIGNALS, CHECK_SIGNAL),
    ("p_none", "phrase_min_logprob", "question_missing", CHECK_SIGNAL),
    ("p_none", "phrase_min_logprob", CHECK_SIGNAL),
    (CHECK_SIGNAL, "phrase_min_logprob"),
    (CHECK_SIGNAL,),
]


def choose_model(rows: list[dict], subsets: list[tuple[str, ...]]) -> tuple[tuple[str, ...], float]:
    """The signal set and L2 weight with the best leave-one-article-out AUC on the training articles:
    six signals on a few hundred rows overfit, so fewer may generalise better."""
    results = {(names, l2): article_cv_auc(rows, names, l2) for names in subsets for l2 in (0.01, 0.1, 1.0)}
    print("\nleave-one-article-out AUC on the training articles")
    for (names, l2), value in results.items():
        print(f"  {value:.3f}  l2 {l2:<5} {', '.join(names)}")
    return max(results, key=results.get)


def fit_part(
    train: list[dict],
    test: list[dict],
    subsets: list[tuple[str, ...]],
    early: tuple[list[bool], list[bool]] | None = None,
) -> tuple[dict, list[float | None], list[float | None]]:
    """One logistic model: its signals and L2 chosen by leave-one-article-out AUC on `train`, fitted
    on train, reported on test; each level's threshold chosen on train. `early`: (train, test) rows
    already refused at the phrase line. Returns the calibration entry and both parts' scores."""
    names = subsets[0]
    scored_train = [r for r in train if r["signals"] is not None and all(n in r["signals"] for n in names)]
    scored_test = [r for r in test if r["signals"] is not None and all(n in r["signals"] for n in names)]
    print("\nROC AUC on the test articles (higher: unanswerable scores higher)")
    x, y = matrix(scored_test, names)
    for n, name in enumerate(names):
        values = x[:, n]
        a = auc(values[y == 1].tolist(), values[y == 0].tolist())
        print(f"  {name:22} {max(a, 1 - a):.3f}{'' if a >= 0.5 else ' (inverted)'}")
    names, l2 = choose_model(scored_train, subsets)
    w, means, scales, bias = fit_logistic(*matrix(scored_train, names), l2)
    test_scores = score_rows(scored_test, w, means, scales, bias, names)
    _, y_test = matrix(scored_test, names)
    pos = [s for s, t in zip(test_scores, y_test, strict=True) if t == 1]
    neg = [s for s, t in zip(test_scores, y_test, strict=True) if t == 0]
    print(f"  {'combined (logistic)':22} {auc(pos, neg):.3f}")
    print(
        f"  chosen: l2 {l2}; weights "
        + ", ".join(f"{n} {v:+.2f}" for n, v in zip(names, w, strict=True))
        + f", bias {bias:+.2f}"
    )
    by_id = {r["id"]: s for r, s in zip(scored_test, test_scores, strict=True)}
    all_test = [by_id.get(r["id"]) for r in test]
    train_scores = score_rows(scored_train, w, means, scales, bias, names)
    by_id = {r["id"]: s for r, s in zip(scored_train, train_scores, strict=True)}
    all_train = [by_id.get(r["id"]) for r in train]
    early_train, early_test = early or (None, None)
    thresholds = choose_thresholds(train, all_train, early_train)
    print("\nthreshold  refusal  false-refusal   (test articles)")
    for threshold in GRID:
        refusal, false_refusal = rates(test, all_test, threshold, early_test)
        print(f"{threshold:9.2f}  {refusal:7.3f}  {false_refusal:13.3f}")
    print("\nstrictness levels (threshold chosen on the train articles)")
    held_out = {}
    for level, threshold in thresholds.items():
        train_r, train_f = rates(train, all_train, threshold, early_train)
        test_r, test_f = rates(test, all_test, threshold, early_test)
        held_out[level] = {"refusal": round(test_r, 3), "false_refusal": round(test_f, 3)}
        print(
            f"  {level:9} {threshold:.3f}: train refusal {train_r:.3f} / false {train_f:.3f}; "
            f"test refusal {test_r:.3f} / false {test_f:.3f}"
        )
    entry = {
        "weights": dict(zip(names, map(float, w), strict=True)),
        "means": dict(zip(names, map(float, means), strict=True)),
        "scales": dict(zip(names, map(float, scales), strict=True)),
        "bias": bias,
        "thresholds": thresholds,
        "held_out_rates": held_out,
        "held_out_articles": sorted({r["article"] for r in test}),
        "fitted_on": sorted({r["article"] for r in train}),
        "rows": len(scored_train),
    }
    return entry, all_train, all_test


def fit(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for path in args.rows for line in path.read_text(encoding="utf-8").splitlines() if line]
    rows = [r for r in rows if args.model in r["model"]]
    test = [r for r in rows if r["article"] in args.test]
    train = [r for r in rows if r["article"] not in args.test]
    print(f"load average {os.getloadavg()}; model {args.model}")
    for name, part in (("train", train), ("test", test)):
        articles = sorted({r["article"] for r in part})
        answerable = sum(r["answerable"] for r in part)
        print(f"{name}: {len(part)} questions ({answerable} answerable) from {', '.join(articles)}")
    print("\n== at the phrase line (the answer prompt's own signals)")
    entry, train_scores, test_scores = fit_part(train, test, PHRASE_LINE_SUBSETS)
    p_none_test = [r["signals"]["p_none"] if r["signals"] else None for r in test]
    for level, threshold in DEFAULT_THRESHOLDS.items():
        refusal, false_refusal = rates(test, p_none_test, threshold)
        print(
            f"  uncalibrated default {level} (P(NONE) ≥ {threshold}): refusal {refusal:.3f} / false {false_refusal:.3f}"
        )
    if args.checked:
        # Before the check only what the lenient level refuses is refused (rag/answerability.py `decide`).
        early = entry["thresholds"]["lenient"]
        marks = tuple([s is not None and s >= early for s in part] for part in (train_scores, test_scores))
        print(f"\n== after the answerability check (refused early: phrase-line score ≥ {early:.3f})")
        entry["checked"], _, _ = fit_part(train, test, CHECKED_SUBSETS, marks)
    answered = [r for r in test if r["answerable"]]
    print(f"\nevidence holds the gold answer: {statistics.mean(bool(r['evidence_has_gold']) for r in answered):.3f}")
    for key, what in (("seconds", "to the first visible token"), ("check_seconds", "the answerability check")):
        seconds = [r[key] for r in rows if r.get(key)]
        if seconds:
            print(f"seconds {what}, median {statistics.median(seconds):.2f}")
    if args.write:
        data = json.loads(CALIBRATION_FILE.read_text(encoding="utf-8")) if CALIBRATION_FILE.exists() else {}
        data.setdefault("models", {})[args.model] = entry
        CALIBRATION_FILE.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {CALIBRATION_FILE}")


def replay(args: argparse.Namespace) -> None:
    calibration = calibrations()[args.model]
    rows = [json.loads(line) for path in args.rows for line in path.read_text(encoding="utf-8").splitlines() if line]
    test = [r for r in rows if args.model in r["model"] and r["article"] in args.test]
    data = json.loads(CALIBRATION_FILE.read_text(encoding="utf-8"))
    entry = data["models"][args.model]
    fitted = set(entry["fitted_on"])
    if fitted & set(args.test):
        raise SystemExit(f"the calibration was fitted on {sorted(fitted & set(args.test))}: not held out")
    print(f"load average {os.getloadavg()}; model {args.model}; {len(test)} questions from {', '.join(args.test)}")
    phrase = [calibration.score(r["signals"]) if r["signals"] else None for r in test]
    early = [s is not None and s >= calibration.thresholds["lenient"] for s in phrase]
    parts = {"phrase line": (calibration, phrase, None)}
    if calibration.checked is not None:
        checked = [
            calibration.checked.score(r["signals"]) if r["signals"] and CHECK_SIGNAL in r["signals"] else None
            for r in test
        ]
        parts["after the check"] = (calibration.checked, checked, early)
    held_out: dict[str, dict] = {}
    for name, (part, scores, before) in parts.items():
        print(f"\n== {name}")
        held_out[name] = {}
        for level, threshold in part.thresholds.items():
            refusal, false_refusal = rates(test, scores, threshold, before)
            held_out[name][level] = {"refusal": round(refusal, 3), "false_refusal": round(false_refusal, 3)}
            was = part.rates[level]
            print(
                f"  {level:9} {threshold:.3f}: refusal {refusal:.3f} / false {false_refusal:.3f} "
                f"(stored: {was.refusal:.3f} / {was.false_refusal:.3f})"
            )
    if args.write:
        entry["held_out_rates"] = held_out["phrase line"]
        if "after the check" in held_out:
            entry["checked"]["held_out_rates"] = held_out["after the check"]
        CALIBRATION_FILE.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote the held-out rates to {CALIBRATION_FILE}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    c = commands.add_parser("collect")
    c.add_argument("--data", type=Path, required=True)
    c.add_argument("--per-article", type=int, default=50)
    c.add_argument("--seed", type=int, default=20)
    c.add_argument("--model", default="qwen2.5-coder-1.5b")
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--home", type=Path, help="keep the index here (a rerun skips the ingest)")
    f = commands.add_parser("fit")
    f.add_argument("--rows", type=Path, nargs="+", required=True)
    f.add_argument("--test", nargs="+", required=True, help="articles held out of the fit")
    f.add_argument("--model", default="qwen2.5-coder-1.5b")
    f.add_argument("--write", action="store_true")
    f.add_argument("--checked", action="store_true", help="also fit the score after the answerability check")
    r = commands.add_parser("replay")
    r.add_argument("--rows", type=Path, nargs="+", required=True)
    r.add_argument("--test", nargs="+", required=True, help="articles the calibration was not fitted on")
    r.add_argument("--model", default="qwen2.5-coder-1.5b")
    r.add_argument("--write", action="store_true")
    args = parser.parse_args()
    {"collect": collect, "fit": fit, "replay": replay}[args.command](args)


if __name__ == "__main__":
    main()
