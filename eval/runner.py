"""Run a dataset through the real pipeline and score it; compare two configurations.

Each run indexes the dataset's documents into a fresh temporary RAGCHAT_HOME, so an evaluation never
touches the user's own documents and every run starts from the same index. Questions are asked with
a ragchat Session's `ask`, exactly as the CLI and the app ask them (the caller hands in
`open_subject`, so eval depends on no layer above it); questions sharing a conversation id run in
one session, so follow-ups are rewritten with their history.
"""

from __future__ import annotations

import gc
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, NamedTuple, Protocol

from pydantic import ValidationError

from core.schemas import Answer, Chunk, IngestResult, ModelInfo
from core.settings import Settings
from eval import metrics
from eval.dataset import EvalDataset, EvalQuestion
from eval.ragas_metrics import JUDGED_METRICS, NON_LLM_METRICS, RagasScorer
from eval.results import (
    Aggregate,
    CitedSource,
    Comparison,
    Delta,
    EvalRun,
    MetricValue,
    QuestionResult,
    TargetCheck,
)
from memory.markdown_store import memory_files
from providers.embedder import Embedder
from providers.llm.base import LLM
from providers.llm.factory import build_llm
from providers.llm.openai_compat import OpenAICompatLLM
from rag.pipeline import AskOptions
from rag.readability import readable


class SubjectModels(Protocol):
    """The models of the system under test (ragchat.application.App provides them)."""

    @property
    def embedder(self) -> Embedder: ...

    def llm(self) -> LLM: ...


class EvalSubject(Protocol):
    """The system under test (ragchat.session.Session provides it)."""

    # Read-only: a session's models are any object with these members (the App), not this type exactly.
    @property
    def settings(self) -> Settings: ...

    @property
    def app(self) -> SubjectModels: ...

    def ingest_paths(self, paths: list[Path]) -> list[IngestResult]: ...

    def indexed_chunks(self) -> list[Chunk]: ...

    def ask(self, question: str, options: AskOptions | None = None) -> Answer: ...

    def models(self) -> ModelInfo: ...


OpenSubject = Callable[[Settings, LLM | None], EvalSubject]
"""Settings (with a temporary home) and an optional loaded model to share → a fresh subject."""

Progress = Callable[[int, int, str], None]
"""(questions done, questions in all, what runs now)"""

# Our metrics, in report order: (name, what it measures).
METRICS: dict[str, str] = {
    "hit_rate": "a gold chunk is among the top-k chunks retrieved",
    "mrr": "1 / rank of the first gold chunk among all fused candidates",
    "evidence_recall": "share of the gold passages (all of a multi-hop question's) in the top-k",
    "exact_match": "normalized answer equals a reference (SQuAD EM)",
    "token_f1": "token overlap with the best reference (SQuAD F1); refusals score 0",
    "contains_answer": "a reference occurs as whole words in the answer",
    "citation_precision": "share of cited chunks that hold gold evidence",
    "citation_recall": "share of gold passages covered by the answer's citations (answered questions)",
    "citation_covers_gold": "the citations cover every gold passage (answered questions)",
    "citation_holds_reference": "a cited excerpt holds a reference answer, wherever in the document (answered)",
    "refusal_accuracy": "unanswerable or out-of-scope question refused, with no citations",
    "false_refusal_rate": "answerable question refused",
    "model_cited_sentences": "share of an answer's sentences that carry a citation the model wrote itself",
    "readable": "the answer reads as sentences: a verb, no table cells, spliced lines or glued marks (answered)",
}
LATENCY_STAGES = ("rewrite_ms", "retrieve_ms", "first_token_ms", "first_visible_ms", "generate_ms", "total_ms")
TARGETS: tuple[tuple[str, Literal[">=", "<="], float], ...] = (
    ("refusal_accuracy", ">=", 0.8),
    ("false_refusal_rate", "<=", 0.2),
    ("citation_covers_gold", ">=", 0.8),
)
RECORDED_SETTINGS = (
    "llm_provider",
    "llm_model",
    "llm_threads",
    "llm_max_tokens",
    "llm_temperature",
    "top_k",
    "retrieval_candidates",
    "bm25_weight",
    "fusion",
    "reranker_model",
    "refusal_threshold",
    "context_tokens",
    "evidence_tokens",
    "strictness",
    "chunk_size",
    "chunk_overlap",
)


class EvalError(RuntimeError):
    """The evaluation cannot run (a document failed to ingest, the judge is misconfigured)."""


def run_eval(
    dataset: EvalDataset,
    settings: Settings,
    open_subject: OpenSubject,
    *,
    llm: LLM | None = None,
    progress: Progress | None = None,
    ragas: bool = True,
    label: str = "run",
    memory: Path | None = None,
) -> EvalRun:
    """Index the dataset's documents in a temporary home, ask every question, score the answers.

    `llm`: an already loaded model to use (the app's), instead of loading one from `settings`.
    `memory`: a folder whose USER_MEMORY.md and COMPANY_MEMORY.md the home starts with, so that the
    answers are scored as a user with a memory gets them (the facts in the prompts of questions about the
    user or their company, the standing wishes in every prompt); their entries are listed in the report.
    """
    report = progress or (lambda done, total, what: None)
    started_at = datetime.now(UTC)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ragchat-eval-") as home:
        given = _start_memory(memory, Path(home))
        session = open_subject(settings.model_copy(update={"home": Path(home)}), llm)
        try:
            run = _run(dataset, session, report, ragas, label, started_at, started)
            return run.model_copy(update={"memory_given": given})
        finally:
            del session
            gc.collect()  # Chroma's and llama.cpp's handles go before the next configuration loads


def _start_memory(folder: Path | None, home: Path) -> list[str]:
    """The memory files of `folder` copied into the evaluation's home; the entries they hold."""
    if folder is None:
        return []
    sources = memory_files(folder).values()
    names = [file.path.name for file in sources]
    missing = [file.path.name for file in sources if not file.path.is_file()]
    if missing:
        raise EvalError(f"{folder} has no {' or '.join(missing)} (a --memory folder holds {' and '.join(names)})")
    for file in sources:
        (home / file.path.name).write_text(file.path.read_text(encoding="utf-8"), encoding="utf-8")
    return [entry for file in memory_files(home).values() for entry in file.entries()]


def _run(
    dataset: EvalDataset,
    session: EvalSubject,
    report: Progress,
    ragas: bool,
    label: str,
    started_at: datetime,
    started: float,
) -> EvalRun:
    settings = session.settings
    total = len(dataset.questions)
    report(0, total, f"indexing {len(dataset.documents)} document(s)")
    failed = [r for r in session.ingest_paths(list(dataset.documents)) if r.status == "failed"]
    if failed:
        raise EvalError("could not index " + "; ".join(f"{r.source}: {r.error}" for r in failed))
    chunks = session.indexed_chunks()
    warnings = _gold_warnings(dataset.questions, chunks)

    report(0, total, "loading the language model")
    mark = time.perf_counter()
    session.app.llm()
    llm_load_ms = round((time.perf_counter() - mark) * 1000, 1)
    scorer, judge_label = _ragas_scorer(session) if ragas else (None, "not run (ragas turned off)")

    results: list[QuestionResult] = []
    models = session.models()
    for done, question in enumerate(dataset.questions):
        report(done, total, question.question)
        conversation = f"eval-{question.conversation}" if question.conversation else None
        answer = session.ask(question.question, AskOptions(session_id=conversation))
        models = answer.models
        results.append(score_question(question, answer, chunks, settings, scorer))
    report(total, total, "done")

    recorded: dict[str, object] = {name: getattr(settings, name) for name in RECORDED_SETTINGS}
    recorded["ragas_judge"] = judge_label
    run = EvalRun(
        dataset=dataset.name,
        description=dataset.description,
        note=dataset.note,
        label=label,
        started_at=started_at,
        duration_s=round(time.perf_counter() - started, 1),
        models=models,
        settings=recorded,
        llm_load_ms=llm_load_ms,
        questions=results,
        aggregates={},
        by_category={},
        latency_ms={},
        targets=[],
        warnings=warnings,
    )
    return summarize(run, RagasStatus(scorer is not None, scorer is not None and scorer.judged, judge_label))


def _ragas_scorer(session: EvalSubject) -> tuple[RagasScorer, str]:
    from eval.judge import EmbedderForRagas, PortJudge

    settings = session.settings
    judge_llm: LLM | None = None
    if settings.eval_judge == "self":
        judge_llm = session.app.llm()
    elif settings.eval_judge == "openai":
        if not settings.eval_judge_model:
            raise EvalError("RAGCHAT_EVAL_JUDGE=openai needs RAGCHAT_EVAL_JUDGE_MODEL (the served model's name)")
        judge_llm = OpenAICompatLLM(
            settings.eval_judge_url,
            settings.eval_judge_model,
            settings.eval_judge_api_key,
            timeout_s=settings.eval_judge_timeout_s,
        )
    judge = PortJudge(judge_llm, settings.eval_judge_timeout_s, settings.eval_judge_max_tokens) if judge_llm else None
    label = judge_llm.label if judge_llm else "none (RAGCHAT_EVAL_JUDGE=self or openai turns on the judged metrics)"
    return RagasScorer(EmbedderForRagas(session.app.embedder), judge), label


def _gold_warnings(questions: Sequence[EvalQuestion], chunks: Sequence[Chunk]) -> list[str]:
    """Gold evidence that no single indexed chunk holds: a typo in the dataset, or a passage split
    across two chunks. Such an item can never count as found, so the report says so."""
    warnings: list[str] = []
    for question in questions:
        for evidence in question.gold:
            if not any(metrics.has_evidence(chunk, evidence) for chunk in chunks):
                where = f"{evidence.source}" + (f" p. {evidence.page}" if evidence.page else "")
                what = repr(evidence.text) if evidence.text else f"spans {evidence.char_spans[:3]}"
                warnings.append(f"{question.id}: no single chunk of {where} holds the gold evidence {what}")
    return warnings


def score_question(
    question: EvalQuestion,
    answer: Answer,
    chunks: Sequence[Chunk],
    settings: Settings,
    scorer: RagasScorer | None = None,
) -> QuestionResult:
    """Our metrics (and RAGAS's, given a scorer) for one answered question."""
    ranked = [hit.chunk for hit in answer.candidates]
    top_k = ranked[: settings.top_k]
    # A citation points to the evidence excerpt the model was given as [n], not to its whole chunk.
    given = {item.id: item.hit.chunk for item in answer.given.evidence}
    cited_by_marker = {c.marker: given[c.marker] for c in answer.citations if c.marker in given}
    cited = list(cited_by_marker.values())
    references = question.all_references
    answered = question.answerable and not answer.refused
    recall = metrics.citation_recall(cited, question.gold) if answered else None
    prediction = "" if answer.refused else answer.answer
    scores: dict[str, float | None] = {
        "hit_rate": metrics.hit_at_k(ranked, question.gold, settings.top_k),
        "mrr": metrics.reciprocal_rank(ranked, question.gold),
        "evidence_recall": metrics.evidence_recall(top_k, question.gold),
        "exact_match": metrics.exact_match(prediction, references),
        "token_f1": metrics.token_f1(prediction, references),
        "contains_answer": metrics.contains_answer(prediction, references),
        "citation_precision": metrics.citation_precision(cited, question.gold, references) if answered else None,
        "citation_recall": recall,
        "citation_covers_gold": None if recall is None else float(recall == 1.0),
        "citation_holds_reference": metrics.citation_holds_reference(cited, references) if answered else None,
        "refusal_accuracy": metrics.refusal_correct(question.answerable, answer.refused, len(answer.citations)),
        "false_refusal_rate": metrics.false_refusal(question.answerable, answer.refused),
        "model_cited_sentences": metrics.model_cited_share(answer) if not answer.refused else None,
        "readable": float(readable(answer.answer, answer.language == "en")) if not answer.refused else None,
    }
    ragas_scores: dict[str, MetricValue] = {}
    if scorer is not None:
        ragas_scores = scorer.score(
            question=question.question,
            response=metrics.strip_markers(answer.answer),
            answerable=question.answerable,
            refused=answer.refused,
            references=references,
            retrieved_contexts=[c.text for c in top_k],
            reference_contexts=[c.text for c in chunks if metrics.is_relevant(c, question.gold)],
            given_contexts=[h.chunk.text for h in answer.given.hits],
        )
    return QuestionResult(
        id=question.id,
        question=question.question,
        category=question.category,
        conversation=question.conversation,
        answerable=question.answerable,
        reference=question.reference,
        answer=answer.answer,
        search_query=answer.search_query,
        translated_query=answer.translated_query,
        refused=answer.refused,
        withheld=answer.withheld is not None,
        withheld_reply=answer.withheld,
        restated=answer.restated,
        memory_writes=[f"{write.target}: {write.summary}" for write in answer.memory_writes],
        error=answer.error,
        citations=[
            CitedSource(
                marker=c.marker,
                source=c.source,
                page=c.page,
                chunk_id=c.chunk_id,
                method=c.method,
                supports=c.marker in cited_by_marker and metrics.is_relevant(cited_by_marker[c.marker], question.gold),
            )
            for c in answer.citations
        ],
        retrieved=[f"{c.source} p.{c.page}" if c.page else c.source for c in top_k],
        given=[hit.chunk.chunk_id for hit in answer.given.hits],
        abstention=answer.abstention,
        scores=scores,
        ragas=ragas_scores,
        timings_ms=answer.timings_ms,
    )


class RagasStatus(NamedTuple):
    ran: bool
    judged: bool
    judge: str


def summarize(run: EvalRun, ragas: RagasStatus) -> EvalRun:
    """Fill in aggregates, per-category aggregates, latency percentiles and target checks."""
    questions = run.questions
    aggregates = _aggregate(questions, ragas)
    by_category = {
        category: _aggregate([q for q in questions if q.category == category], ragas)
        for category in sorted({q.category for q in questions})
    }
    latency = {
        stage: {
            "p50": _round(metrics.percentile([q.timings_ms.get(stage) for q in questions], 50)),
            "p95": _round(metrics.percentile([q.timings_ms.get(stage) for q in questions], 95)),
            "n": float(sum(stage in q.timings_ms for q in questions)),
        }
        for stage in LATENCY_STAGES
    }
    targets = []
    for name, goal, threshold in TARGETS:
        value = aggregates[name].value
        met = None if value is None else (value >= threshold if goal == ">=" else value <= threshold)
        targets.append(TargetCheck(metric=name, goal=goal, threshold=threshold, value=value, met=met))
    return run.model_copy(
        update={"aggregates": aggregates, "by_category": by_category, "latency_ms": latency, "targets": targets}
    )


def _aggregate(questions: Sequence[QuestionResult], ragas: RagasStatus) -> dict[str, Aggregate]:
    result: dict[str, Aggregate] = {}
    for name in METRICS:
        values = metrics.finite(q.scores.get(name) for q in questions)
        result[name] = Aggregate(value=metrics.mean(values), n=len(values))
    for name in (*NON_LLM_METRICS, *JUDGED_METRICS):
        outcomes = [q.ragas[name] for q in questions if name in q.ragas]
        if not ragas.ran:
            result[name] = Aggregate(value=None, n=0, note="not run (ragas turned off)")
        elif name in JUDGED_METRICS and not ragas.judged:
            result[name] = Aggregate(value=None, n=0, note=f"not run: judge {ragas.judge}")
        elif not outcomes:
            result[name] = Aggregate(value=None, n=0, note="no question it applies to")
        else:
            values = [o.value for o in outcomes if o.value is not None]
            missing = [o.note or "no value" for o in outcomes if o.value is None]
            note = None
            if missing:
                reason, count = Counter(missing).most_common(1)[0]
                note = f"{len(missing)} of {len(outcomes)} n/a; most often: {reason} ({count}×)"
            result[name] = Aggregate(value=metrics.mean(values), n=len(values), note=note)
    return result


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def compare(base: EvalRun, variant: EvalRun, overrides: dict[str, str]) -> Comparison:
    """Deltas (variant − base) of every aggregate and of the latency percentiles."""
    deltas: dict[str, Delta] = {}
    for name, aggregate in base.aggregates.items():
        other = variant.aggregates.get(name)
        deltas[name] = _delta(aggregate.value, other.value if other else None)
    for stage, figures in base.latency_ms.items():
        for key in ("p50", "p95"):
            deltas[f"{stage} {key}"] = _delta(figures.get(key), variant.latency_ms.get(stage, {}).get(key))
    return Comparison(overrides=overrides, base=base, variant=variant, deltas=deltas)


def _delta(base: float | None, variant: float | None) -> Delta:
    delta = None if base is None or variant is None else variant - base
    return Delta(base=base, variant=variant, delta=delta)


def run_comparison(
    dataset: EvalDataset,
    settings: Settings,
    overrides: dict[str, str],
    open_subject: OpenSubject,
    *,
    progress: Progress | None = None,
    ragas: bool = True,
    memory: Path | None = None,
) -> Comparison:
    """The dataset under `settings`, then under `settings` with `overrides`, one after the other (two
    models never sit in memory together); the answering model is loaded once when both share it."""
    variant_settings = apply_overrides(settings, overrides)
    shared = build_llm(settings) if _same_llm(settings, variant_settings) else None
    base = run_eval(
        dataset, settings, open_subject, llm=shared, progress=progress, ragas=ragas, label="base", memory=memory
    )
    variant = run_eval(
        dataset,
        variant_settings,
        open_subject,
        llm=shared,
        progress=progress,
        ragas=ragas,
        label=_label(overrides),
        memory=memory,
    )
    return compare(base, variant, overrides)


_LLM_SETTINGS = ("llm_provider", "llm_model", "llm_context", "llm_threads", "ollama_host", "openai_base_url")


def _same_llm(a: Settings, b: Settings) -> bool:
    return all(getattr(a, name) == getattr(b, name) for name in _LLM_SETTINGS)


def apply_overrides(settings: Settings, overrides: dict[str, str]) -> Settings:
    """Settings with KEY=VALUE overrides (field names or RAGCHAT_* names), validated like the environment."""
    fields = Settings.model_fields
    updates: dict[str, object] = {}
    for key, value in overrides.items():
        name = key.lower().removeprefix("ragchat_")
        if name not in fields:
            raise EvalError(f"unknown setting {key!r} (see core/settings.py)")
        updates[name] = value
    try:
        return Settings.model_validate({**settings.model_dump(), **updates})
    except ValidationError as exc:
        raise EvalError(f"invalid --compare value: {exc.errors()[0]['msg']}") from exc


def _label(overrides: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in overrides.items())
