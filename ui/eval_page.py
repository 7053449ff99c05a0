"""The Evaluation page: run a question set through the pipeline with a progress bar, then read the
report (targets, scores, RAGAS, per category, latency, plots, every question) and download it.

The run indexes the dataset's documents into a temporary home (the user's library is not touched)
and answers with the app's own, already loaded model; one generation runs at a time, so a chat in
another tab waits while the evaluation asks.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import streamlit as st

from core.settings import Settings
from eval.dataset import STARTER_DATASET, DatasetError, EvalDataset, load_dataset
from eval.ragas_metrics import JUDGED_METRICS, NON_LLM_METRICS
from eval.report import RAGAS_DESCRIPTIONS, write_report
from eval.results import EvalRun
from eval.runner import METRICS, run_eval
from ragchat.application import open_session
from ui.common import calm_errors, get_app, shorten

STARTER = "Starter set (sample documents)"
SQUAD = "SQuAD 2.0 · Normans"
UPLOAD = "Upload a dataset"
DOCUMENT_TYPES = ["pdf", "txt", "md", "markdown"]
SAMPLE_SEED = 8
SQUAD_DEFAULT_SIZE = 20  # the full 208 questions take well over an hour on a laptop CPU


def render() -> None:
    st.title("Evaluation")
    st.caption(
        "Asks every question of a dataset through the same pipeline as the chat, on a fresh temporary index "
        "of the dataset's documents (your documents are not touched), and scores retrieval, answers, "
        "citations, refusals and latency."
    )
    session = get_app()
    settings = session.settings
    st.session_state.setdefault("eval_result", None)

    choices = [STARTER] + ([SQUAD] if (settings.eval_squad_dir / "questions.jsonl").is_file() else []) + [UPLOAD]
    choice = st.radio("Dataset", choices, horizontal=True)
    dataset = None
    with calm_errors("Loading the dataset"):
        dataset = _chosen_dataset(choice, settings)
    if dataset is None:
        _show_result()
        return

    total = len(dataset.questions)
    documents = ", ".join(p.name for p in dataset.documents) or "none"
    st.caption(f"{total} questions ({sum(q.answerable for q in dataset.questions)} answerable); documents: {documents}")
    default = min(total, SQUAD_DEFAULT_SIZE) if choice == SQUAD else total
    size = int(
        st.number_input(
            "Questions to run",
            min_value=1,
            max_value=total,
            value=default,
            help=f"Fewer than all: a random sample (seed {SAMPLE_SEED}) that keeps conversations whole.",
        )
    )
    use_ragas = st.toggle(
        "RAGAS metrics",
        value=True,
        help=f"Judge for faithfulness and answer relevancy: RAGCHAT_EVAL_JUDGE={settings.eval_judge}.",
    )
    if st.button("Run evaluation", type="primary", icon=":material/play_arrow:"):
        _run(dataset.sample(size, SAMPLE_SEED), settings, use_ragas)
    _show_result()


def _chosen_dataset(choice: str, settings: Settings) -> EvalDataset | None:
    if choice == STARTER:
        return load_dataset(STARTER_DATASET)
    if choice == SQUAD:
        return load_dataset(settings.eval_squad_dir / "questions.jsonl")
    uploads = st.file_uploader(
        "A JSONL dataset and the documents it asks about",
        type=["jsonl", *DOCUMENT_TYPES],
        accept_multiple_files=True,
        help="Format: eval/dataset.py and docs/evaluation.md. "
        "Uploaded documents replace those the dataset's header names.",
    )
    datasets = [u for u in uploads or [] if u.name.lower().endswith(".jsonl")]
    if len(datasets) != 1:
        st.info("Add one .jsonl dataset file, with the documents its questions are about.")
        return None
    # One folder per distinct set of uploads, so reruns of the page reuse it instead of piling up copies.
    digest = hashlib.sha256()
    for upload in uploads or []:
        digest.update(upload.name.encode() + b"\0" + upload.getvalue())
    folder = settings.home / "eval_uploads" / digest.hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    for upload in uploads or []:
        (folder / Path(upload.name).name).write_bytes(upload.getvalue())
    dataset = load_dataset(folder / Path(datasets[0].name).name)
    documents = [folder / Path(u.name).name for u in uploads or [] if not u.name.lower().endswith(".jsonl")]
    if documents:
        dataset = dataset.model_copy(update={"documents": documents})
    missing = [p.name for p in dataset.documents if not p.is_file()]
    if missing:
        raise DatasetError(f"upload the documents the dataset names: {', '.join(missing)}")
    if not dataset.documents:
        raise DatasetError("the dataset names no documents: upload them with it")
    return dataset


def _run(dataset: EvalDataset, settings: Settings, use_ragas: bool) -> None:
    bar = st.progress(0.0, text="starting")

    def progress(done: int, total: int, what: str) -> None:
        bar.progress(done / total if total else 1.0, text=f"{done}/{total} · {shorten(what, 90)}")

    with calm_errors("The evaluation"):
        run = run_eval(
            dataset,
            settings,
            lambda s, llm: open_session(s, llm=llm),
            llm=get_app().llm(),
            progress=progress,
            ragas=use_ragas,
        )
        paths = write_report(run, settings.home / "eval_reports", "eval")
        st.session_state.eval_result = {
            "run": run.model_dump(mode="json"),
            "paths": {key: str(path) for key, path in paths.items()},
        }
    bar.empty()


def _show_result() -> None:
    stored = st.session_state.get("eval_result")
    if not stored:
        return
    run = EvalRun.model_validate(stored["run"])
    paths = {key: Path(value) for key, value in stored["paths"].items()}
    st.subheader(f"Report: {run.dataset}")
    st.caption(
        f"{len(run.questions)} questions{'; ' + run.note if run.note else ''} · {run.duration_s / 60:.1f} min · "
        f"LLM {run.models.llm} · reranker {run.models.reranker}"
    )
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "target": t.metric,
                    "value": t.value,
                    "goal": f"{t.goal} {t.threshold:g}",
                    "met": "–" if t.met is None else ("yes" if t.met else "no"),
                }
                for t in run.targets
            ]
        ),
        hide_index=True,
    )
    scores, ragas = st.columns(2)
    scores.dataframe(
        pd.DataFrame(
            [
                {"metric": name, "value": run.aggregates[name].value, "n": run.aggregates[name].n, "measures": text}
                for name, text in METRICS.items()
            ]
        ),
        hide_index=True,
    )
    ragas.dataframe(
        pd.DataFrame(
            [
                {
                    "RAGAS metric": name,
                    "value": run.aggregates[name].value,
                    "n": run.aggregates[name].n,
                    "note": run.aggregates[name].note or RAGAS_DESCRIPTIONS[name],
                }
                for name in (*NON_LLM_METRICS, *JUDGED_METRICS)
            ]
        ),
        hide_index=True,
    )
    st.dataframe(
        pd.DataFrame(
            {
                category: {name: agg.value for name, agg in aggregates.items() if name in METRICS}
                for category, aggregates in run.by_category.items()
            }
        ),
    )
    latency, categories = st.columns(2)
    if paths["latency_png"].is_file():
        latency.image(str(paths["latency_png"]))
    if paths["categories_png"].is_file():
        categories.image(str(paths["categories_png"]))
    st.dataframe(
        pd.DataFrame([{"stage": stage, **figures} for stage, figures in run.latency_ms.items()]),
        hide_index=True,
    )
    with st.expander("Every question", expanded=False):
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "id": q.id,
                        "category": q.category,
                        "question": q.question,
                        "reference": q.reference or "(refuse)",
                        "answer": q.answer,
                        "refused": q.refused,
                        "cited": ", ".join(f"{c.source} p.{c.page}" if c.page else c.source for c in q.citations),
                        **{name: q.scores.get(name) for name in ("hit_rate", "token_f1", "contains_answer")},
                        "total s": (q.timings_ms.get("total_ms") or 0) / 1000,
                    }
                    for q in run.questions
                ]
            ),
            hide_index=True,
        )
    for warning in run.warnings:
        st.warning(warning)
    markdown, data = st.columns(2)
    if paths["markdown"].is_file():
        markdown.download_button("Download eval.md", paths["markdown"].read_bytes(), "eval.md", "text/markdown")
    if paths["json"].is_file():
        data.download_button("Download eval.json", paths["json"].read_bytes(), "eval.json", "application/json")
