"""Write an evaluation (one run or a comparison) as Markdown, JSON and two PNG plots.

Files, for stem "eval": eval.md, eval.json, eval_latency.png (time to first token and total time per
question), eval_categories.png (the main scores per question category) and, when answers carry
abstention scores, eval_abstention.png (refusal against false refusal across thresholds).
"""

from __future__ import annotations

import json
from pathlib import Path

from matplotlib.figure import Figure

from eval.abstention_curve import has_scores, levels_markdown, plot_abstention
from eval.ragas_metrics import JUDGED_METRICS, NON_LLM_METRICS
from eval.results import Aggregate, Comparison, EvalRun
from eval.runner import METRICS

CATEGORY_METRICS = ("hit_rate", "contains_answer", "token_f1", "citation_covers_gold", "refusal_accuracy")
RAGAS_DESCRIPTIONS = {
    "non_llm_context_recall": "gold chunks matched by a top-k chunk (ragas, Levenshtein ≥ 0.5)",
    "non_llm_context_precision": "rank-weighted share of top-k chunks matching a gold chunk (ragas)",
    "string_similarity": "1 − normalized Levenshtein distance, answer vs best reference (ragas)",
    "semantic_similarity": "cosine of answer and reference embeddings (ragas, our embedder)",
    "faithfulness": "share of the answer's statements the judge finds in the contexts (ragas, LLM judge)",
    "answer_relevancy": "similarity of the judge's question for the answer to the asked one (ragas, LLM judge)",
}
ANSWER_CHARS = 90


class ReportPaths(dict[str, Path]):
    """{"markdown": …, "json": …, "latency_png": …, "categories_png": …}"""


def write_report(result: EvalRun | Comparison, out_dir: Path, stem: str = "eval") -> ReportPaths:
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = [result.base, result.variant] if isinstance(result, Comparison) else [result]
    paths = ReportPaths(
        markdown=out_dir / f"{stem}.md",
        json=out_dir / f"{stem}.json",
        latency_png=out_dir / f"{stem}_latency.png",
        categories_png=out_dir / f"{stem}_categories.png",
    )
    plot_latency(runs, paths["latency_png"])
    plot_categories(runs, paths["categories_png"])
    if not isinstance(result, Comparison) and has_scores(result):
        paths["abstention_png"] = out_dir / f"{stem}_abstention.png"
        plot_abstention(result, paths["abstention_png"], str(result.settings.get("strictness", "")))
    text = comparison_markdown(result, paths) if isinstance(result, Comparison) else run_markdown(result, paths)
    paths["markdown"].write_text(text, encoding="utf-8")
    paths["json"].write_text(
        json.dumps(result.model_dump(mode="json"), ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    return paths


# ---- Markdown -----------------------------------------------------------------------------------


def fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _short(text: str, limit: int = ANSWER_CHARS) -> str:
    flat = _cell(text)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def run_markdown(run: EvalRun, paths: ReportPaths | None = None, level: int = 1) -> str:
    h = "#" * level
    lines = [f"{h} Evaluation: {run.dataset}" + (f" ({run.label})" if run.label not in ("run", "") else ""), ""]
    if run.description:
        lines += [run.description, ""]
    answerable = sum(q.answerable for q in run.questions)
    lines += [
        f"{len(run.questions)} questions ({answerable} answerable, {len(run.questions) - answerable} not)"
        + (f"; {run.note}" if run.note else "")
        + f". Run {run.started_at:%Y-%m-%d %H:%M} UTC, {run.duration_s / 60:.1f} min"
        + (f" (model load {run.llm_load_ms / 1000:.1f} s)" if run.llm_load_ms else "")
        + ".",
        "",
        f"- LLM: {run.models.llm}",
        f"- embedder: {run.models.embedder}",
        f"- reranker: {run.models.reranker}",
        "- settings: " + ", ".join(f"`{k}={v}`" for k, v in run.settings.items() if k != "ragas_judge"),
        f"- RAGAS judge: {run.settings.get('ragas_judge', '–')}",
        f"- memory the home started with: {len(run.memory_given)} lines"
        + "".join(f"; {entry}" for entry in run.memory_given),
        f"- memory lines the questions wrote: {sum(len(q.memory_writes) for q in run.questions)}"
        + "".join(f"; {q.id}: {'; '.join(q.memory_writes)}" for q in run.questions if q.memory_writes),
        "",
        f"{h}# Targets",
        "",
        "| metric | value | goal | met |",
        "|---|---:|---|---|",
    ]
    for t in run.targets:
        met = "–" if t.met is None else ("yes" if t.met else "**no**")
        lines.append(f"| {t.metric} | {fmt(t.value)} | {t.goal} {t.threshold:g} | {met} |")
    lines += ["", f"{h}# Scores", "", "| metric | value | n | what it measures |", "|---|---:|---:|---|"]
    for name, description in METRICS.items():
        lines.append(_aggregate_row(name, run.aggregates.get(name), description))
    lines += ["", f"{h}# RAGAS", "", "| metric | value | n | what it measures | note |", "|---|---:|---:|---|---|"]
    for name in (*NON_LLM_METRICS, *JUDGED_METRICS):
        agg = run.aggregates.get(name)
        value = fmt(agg.value) if agg and agg.value is not None else f"n/a ({agg.note})" if agg and agg.note else "–"
        note = agg.note if agg and agg.value is not None and agg.note else ""
        lines.append(f"| {name} | {value} | {agg.n if agg else 0} | {RAGAS_DESCRIPTIONS[name]} | {_cell(note)} |")
    lines += _category_table(run, h)
    if has_scores(run):
        lines += [
            "",
            f"{h}# Answer or abstain",
            "",
            "Each strictness level's threshold applied to this run's scores:",
            "",
        ]
        lines += levels_markdown(run, str(run.settings.get("strictness", "")))
        if paths and "abstention_png" in paths:
            lines += ["", f"![refusal against false refusal]({paths['abstention_png'].name})"]
    lines += [
        "",
        f"{h}# Latency (ms)",
        "",
        "| stage | p50 | p95 | questions |",
        "|---|---:|---:|---:|",
    ]
    for stage, figures in run.latency_ms.items():
        lines.append(f"| {stage} | {_ms(figures.get('p50'))} | {_ms(figures.get('p95'))} | {figures.get('n', 0):.0f} |")
    if paths:
        lines += [
            "",
            f"![latency]({paths['latency_png'].name})",
            "",
            f"![scores per category]({paths['categories_png'].name})",
        ]
    if run.warnings:
        lines += ["", f"{h}# Warnings", ""] + [f"- {_cell(w)}" for w in run.warnings]
    lines += _question_table(run, h)
    return "\n".join(lines) + "\n"


def _aggregate_row(name: str, agg: Aggregate | None, description: str) -> str:
    value = fmt(agg.value) if agg else "–"
    return f"| {name} | {value} | {agg.n if agg else 0} | {description} |"


def _category_table(run: EvalRun, h: str) -> list[str]:
    names = (
        "hit_rate",
        "mrr",
        "token_f1",
        "contains_answer",
        "citation_covers_gold",
        "refusal_accuracy",
        "false_refusal_rate",
    )
    lines = ["", f"{h}# By category", "", "| category | questions | " + " | ".join(names) + " |"]
    lines.append("|---|---:|" + "---:|" * len(names))
    for category, aggregates in run.by_category.items():
        count = sum(q.category == category for q in run.questions)
        cells = " | ".join(fmt(aggregates[n].value, 2) for n in names)
        lines.append(f"| {category} | {count} | {cells} |")
    return lines


def _question_table(run: EvalRun, h: str) -> list[str]:
    lines = [
        "",
        f"{h}# Per question",
        "",
        "| id | category | question | reference | answer | refused | hit | RR | F1 | in answer | cited (✓ holds gold) "
        "| TTFT s | total s |",
        "|---|---|---|---|---|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    for q in run.questions:
        s = q.scores
        cited = ", ".join(
            f"[{c.marker}] {c.source}" + (f" p.{c.page}" if c.page else "") + (" ✓" if c.supports else "")
            for c in q.citations
        )
        ttft, total = q.timings_ms.get("first_token_ms"), q.timings_ms.get("total_ms")
        lines.append(
            f"| {q.id} | {q.category} | {_short(q.question, 70)} | {_short(q.reference or '(none: refuse)', 40)} "
            f"| {_short(q.answer)} | {'yes' if q.refused else 'no'} | {fmt(s.get('hit_rate'), 0)} "
            f"| {fmt(s.get('mrr'), 2)} | {fmt(s.get('token_f1'), 2)} | {fmt(s.get('contains_answer'), 0)} "
            f"| {_cell(cited) or '–'} | {fmt(ttft / 1000 if ttft else None, 1)} "
            f"| {fmt(total / 1000 if total else None, 1)} |"
        )
    return lines


def comparison_markdown(comparison: Comparison, paths: ReportPaths | None = None) -> str:
    base, variant = comparison.base, comparison.variant
    overrides = ", ".join(f"`{k}={v}`" for k, v in comparison.overrides.items())
    lines = [
        f"# Evaluation comparison: {base.dataset}",
        "",
        f"Base: the configured settings. Variant: the same with {overrides}. Δ = variant − base.",
        "",
        f"- base LLM: {base.models.llm}",
        f"- variant LLM: {variant.models.llm}",
        "",
        "| metric | base | variant | Δ |",
        "|---|---:|---:|---:|",
    ]
    for name, delta in comparison.deltas.items():
        latency = name.endswith((" p50", " p95"))
        show = _ms if latency else fmt
        sign = "" if delta.delta is None else ("+" if delta.delta > 0 else "")
        change = "–" if delta.delta is None else f"{sign}{show(delta.delta)}"
        lines.append(f"| {name}{' (ms)' if latency else ''} | {show(delta.base)} | {show(delta.variant)} | {change} |")
    if paths:
        lines += ["", f"![latency]({paths['latency_png'].name})", "", f"![categories]({paths['categories_png'].name})"]
    lines += ["", run_markdown(base, None, level=2), run_markdown(variant, None, level=2)]
    return "\n".join(lines)


def summary_text(run: EvalRun) -> str:
    """Targets, scores and latency as plain text, for the terminal."""
    rows = [f"{run.dataset}: {len(run.questions)} questions, {run.duration_s / 60:.1f} min; LLM {run.models.llm}"]
    rows += [
        f"  target {t.metric:<22}{fmt(t.value):>8}  goal {t.goal} {t.threshold:g}  "
        f"{'–' if t.met is None else 'met' if t.met else 'MISSED'}"
        for t in run.targets
    ]
    for name, agg in run.aggregates.items():
        value = fmt(agg.value) if agg.value is not None else f"n/a ({agg.note or 'no question it applies to'})"
        rows.append(f"  {name:<29}{value:>8}  (n={agg.n})" if agg.value is not None else f"  {name:<29}{value}")
    for stage, figures in run.latency_ms.items():
        if figures.get("n"):
            rows.append(f"  {stage:<29}p50 {_ms(figures.get('p50'))} ms, p95 {_ms(figures.get('p95'))} ms")
    return "\n".join(rows)


def deltas_text(comparison: Comparison) -> str:
    """The delta table as plain text, for the terminal."""
    rows = [f"{'metric':<26}{'base':>10}{'variant':>10}{'Δ':>10}"]
    for name, d in comparison.deltas.items():
        digits = 0 if name.endswith((" p50", " p95")) else 3
        rows.append(
            f"{name:<26}{fmt(d.base, digits):>10}{fmt(d.variant, digits):>10}"
            f"{'–' if d.delta is None else f'{d.delta:+.{digits}f}':>10}"
        )
    return "\n".join(rows)


# ---- plots --------------------------------------------------------------------------------------
# matplotlib's object API, not pyplot: no global figure state, so the app's threads cannot collide.


def plot_latency(runs: list[EvalRun], path: Path) -> None:
    figure = Figure(figsize=(10, 3.6))
    axes = figure.subplots(1, 2)
    for axis, stage, title in zip(
        axes, ("first_token_ms", "total_ms"), ("time to first token", "total per question"), strict=True
    ):
        plotted = 0
        for run in runs:
            seconds = [q.timings_ms[stage] / 1000 for q in run.questions if stage in q.timings_ms]
            if seconds:
                axis.hist(seconds, bins=min(20, max(5, len(seconds) // 2)), alpha=0.6, label=run.label)
                plotted += 1
        axis.set_title(title if plotted else f"{title}: no generation ran")
        axis.set_xlabel("seconds")
        axis.set_ylabel("questions")
        if plotted > 1:
            axis.legend()
    figure.suptitle(f"Latency: {runs[0].dataset}")
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def plot_categories(runs: list[EvalRun], path: Path) -> None:
    figure = Figure(figsize=(10, 3.8 * len(runs)))
    axes = figure.subplots(len(runs), 1, squeeze=False)
    width = 0.8 / len(CATEGORY_METRICS)
    for axis, run in zip(axes[:, 0], runs, strict=True):
        categories = list(run.by_category)
        for i, name in enumerate(CATEGORY_METRICS):
            xs = [c + (i - (len(CATEGORY_METRICS) - 1) / 2) * width for c in range(len(categories))]
            values = [run.by_category[c][name].value for c in categories]
            axis.bar(
                [x for x, v in zip(xs, values, strict=True) if v is not None],
                [v for v in values if v is not None],
                width,
                label=name,
            )
        axis.set_xticks(range(len(categories)), categories)
        axis.set_ylim(0, 1.05)
        axis.set_ylabel("score")
        axis.set_title(f"Scores per category: {run.dataset}" + (f" ({run.label})" if len(runs) > 1 else ""))
        if axis.get_legend_handles_labels()[0]:
            axis.legend(fontsize=8, ncols=len(CATEGORY_METRICS), loc="upper center", bbox_to_anchor=(0.5, -0.1))
    figure.tight_layout()
    figure.savefig(path, dpi=110)
