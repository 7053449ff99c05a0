"""Refusal against false refusal as the abstention threshold moves, from one run's saved scores.

Each answered-or-refused question keeps its abstention score (Answer.abstention), so the run can be
re-decided at any threshold without asking again: a question refused without a score (the relevance
gate, a model that wrote NONE, a failure) or refused below its threshold (a reply no passage held,
withheld; a degenerate one) stays refused at every threshold; a scored one is refused when its score
reaches the threshold. The strictness levels of the model that ran are marked.
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure
from pydantic import BaseModel

from eval.results import EvalRun, QuestionResult
from rag.answer_format import NONE
from rag.answerability import DEFAULT_THRESHOLDS, calibration_for

THRESHOLDS = [i / 100 for i in range(0, 101)]


class CurvePoint(BaseModel):
    threshold: float
    refusal: float  # share of unanswerable questions refused
    false_refusal: float  # share of answerable questions refused


def _always_refused(question: QuestionResult) -> bool:
    """Refused whatever the threshold: without a score, after a NONE, or for another reason than its
    score while the score was below the threshold it ran at (a withheld reply, a degenerate one)."""
    scored = question.abstention
    if scored is None or scored.score is None:
        return question.refused
    if (scored.phrase or "").strip().upper().startswith(NONE):
        return True
    return question.refused and scored.score < scored.threshold


def refused_at(question: QuestionResult, threshold: float) -> bool:
    scored = question.abstention
    if _always_refused(question):
        return True
    return scored is not None and scored.score is not None and scored.score >= threshold


def has_scores(run: EvalRun) -> bool:
    return any(q.abstention is not None and q.abstention.score is not None for q in run.questions)


def point(run: EvalRun, threshold: float) -> CurvePoint:
    unanswerable = [q for q in run.questions if not q.answerable]
    answerable = [q for q in run.questions if q.answerable]
    return CurvePoint(
        threshold=threshold,
        refusal=sum(refused_at(q, threshold) for q in unanswerable) / max(len(unanswerable), 1),
        false_refusal=sum(refused_at(q, threshold) for q in answerable) / max(len(answerable), 1),
    )


def level_points(run: EvalRun) -> dict[str, CurvePoint]:
    """The model's strictness levels (its calibration, or the uncalibrated defaults) on this run."""
    calibration = calibration_for(run.models.llm)
    thresholds = calibration.thresholds if calibration else DEFAULT_THRESHOLDS
    return {level: point(run, threshold) for level, threshold in thresholds.items()}


def plot_abstention(run: EvalRun, path: Path, chosen: str) -> None:
    """The curve, each level marked, the level the run used (`chosen`) circled."""
    curve = [point(run, t) for t in THRESHOLDS]
    figure = Figure(figsize=(5.5, 4.5))
    axis = figure.subplots()
    axis.plot([p.false_refusal for p in curve], [p.refusal for p in curve], color="tab:blue", label="thresholds")
    for level, p in level_points(run).items():
        marker = "o" if level == chosen else "x"
        axis.scatter([p.false_refusal], [p.refusal], marker=marker, s=80, zorder=3, label=f"{level} ({p.threshold:g})")
    axis.set_xlabel("false refusal (answerable questions refused)")
    axis.set_ylabel("refusal (unanswerable questions refused)")
    axis.set_xlim(0, 1)
    axis.set_ylim(0, 1.02)
    axis.grid(alpha=0.3)
    axis.legend(fontsize=8, loc="lower right")
    calibrated = "calibrated" if calibration_for(run.models.llm) else "uncalibrated"
    axis.set_title(f"Answer or abstain: {run.dataset}\n{run.models.llm} ({calibrated})", fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def levels_markdown(run: EvalRun, chosen: str) -> list[str]:
    rows = ["| strictness | threshold | refusal | false refusal |", "|---|---|---|---|"]
    for level, p in level_points(run).items():
        name = f"**{level}** (this run)" if level == chosen else level
        rows.append(f"| {name} | {p.threshold:g} | {p.refusal:.3f} | {p.false_refusal:.3f} |")
    return rows
