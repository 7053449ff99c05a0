"""Time to first token (TTFT) of grounded answers with the embedded llama.cpp models, side by side.

What it measures: a small handbook-style corpus (a 5-page PDF of hand-written prose about a fictional
company, written with fpdf2; 9 chunks) is ingested once into a temporary RAGCHAT_HOME. The default
questions each retrieve 3-4 chunks above the relevance threshold, so prompts are about 700-900 tokens,
close to what the app sends with top_k=4 and 200-token chunks. Then, for each model in --models,
in one process and one after the other (so the figures are comparable), with
RAGCHAT_LLM_PROVIDER=llamacpp:

* a fresh ``Session`` is built and its embedder and store are warmed by one search;
* the LLM is loaded once with ``session.app.llm()`` (timed: "load s");
* one warm-up question is asked (its TTFT is shown as "1st TTFT", not in the medians: llama.cpp's
  first request after load is markedly slower);
* N typical questions answerable from the corpus are asked through ``session.ask_stream``; per
  question the script records time to first token as ``timings_ms["first_token_ms"] -
  timings_ms["llm_load_ms"]`` (question asked → first streamed piece, retrieval included, model
  load excluded), the total time, the streamed pieces per second after the first piece (each
  piece is one token with llama.cpp's server streaming, so this is the generation rate), and the
  prompt size in characters and, from llama.cpp's own timings, in tokens (``prompt_n`` evaluated +
  ``cache_n`` reused from the previous request's KV cache, e.g. the shared system prompt);
* the model is freed (session deleted, ``gc.collect()``) before the next one is loaded.

It prints each answer with its figures, one table row per model (load, first and median/min TTFT,
median total, tokens/s, prompt size) and
the ratio of each model's median TTFT to the first model's (by default 1.5B / 0.5B), then a JSON
line with everything. Timings are wall-clock on whatever else the machine is running: no figure
is asserted.

Run from the repository root (the GGUFs come from ``make models`` and ``make models-app``):

    .venv/bin/python bench/time_to_first_token.py
    .venv/bin/python bench/time_to_first_token.py --models qwen2.5-coder-0.5b --questions 5
    .venv/bin/python bench/time_to_first_token.py --max-tokens 64   # shorter answers, quicker run

A model that is not installed is reported as skipped, and the others still run.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from fpdf import FPDF

from core.settings import get_settings
from core.text import estimate_tokens
from providers.llm.base import LLM, ChatMessage
from providers.llm.llamacpp import LlamaCppLLM
from ragchat.application import open_session
from ragchat.session import Session

DEFAULT_MODELS = ["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"]

CORPUS_PAGES = [
    (
        "Harbor Logistics: company overview",
        "Harbor Logistics operates eleven warehouses along the northern coast and employs 640 people. "
        "The largest site is the Westland distribution centre, which handles about forty percent of all "
        "outbound shipments and runs two shifts on weekdays and one on Saturdays. The head office is in "
        "Northgate, next to the container terminal.\n\n"
        "The company was founded in 1987 as a family business that stored fish for local exporters. It "
        "moved into general freight in the late nineties and today serves retailers, manufacturers and "
        "three regional hospitals. Customer session is open from 7 am to 7 pm on working days; urgent "
        "requests outside those hours go to the duty manager on call.\n\n"
        "Every warehouse has a site manager, a safety officer and a stock controller. Site managers report "
        "to the regional director, who meets the operations board once a month to review volumes, staffing "
        "and customer complaints. The smallest sites, in Millford and Eastbridge, share one safety officer "
        "and one stock controller between them.\n\n"
        "The warehouses store about 85,000 pallet positions in total. Seven of the eleven sites have "
        "temperature-controlled zones, and two hold a licence for storing pharmaceuticals for the "
        "hospitals. Stock levels are counted in a rolling cycle so that every location is checked at "
        "least once a quarter.",
    ),
    (
        "Safety programme",
        "Forklift operators must complete a two-day certification course before their first shift, and "
        "they repeat a half-day refresher every two years. Visitors may not enter the loading docks "
        "without a high-visibility vest and an escort from the site team.\n\n"
        "Any safety incident, including a near miss, must be reported to the site safety officer within "
        "24 hours using the incident form on the intranet. Incidents that injure a person are also "
        "reported to the regional director on the same day. The safety officer reviews every report and "
        "publishes a short summary of lessons learned on the notice board each month.\n\n"
        "Fire drills take place twice a year at every site. Emergency exits are checked every morning "
        "by the first shift lead, and blocked exits must be cleared before any loading starts. First-aid "
        "kits are inspected monthly, and every shift has at least one trained first aider on duty.\n\n"
        "Personal protective equipment is provided free of charge: safety shoes, gloves and vests for "
        "all warehouse staff, and insulated jackets for work in the cold-storage zones. Employees who "
        "work more than four hours in a cold zone take a ten-minute warm-up break every hour.",
    ),
    (
        "Forklifts and loading docks",
        "The forklift certification course is run by the training centre in Northgate. The first day "
        "covers load charts, stability and battery handling in the classroom; the second day is a "
        "practical test on the warehouse floor with an instructor. Operators who fail the practical "
        "test may retake it after one week of supervised practice.\n\n"
        "Forklifts are inspected by their operator at the start of every shift using the checklist on the "
        "vehicle. A forklift with a defect must be tagged out of session and reported to the shift lead. "
        "The speed limit inside warehouses is 6 km/h, and pedestrians have priority at marked crossings.\n\n"
        "Loading docks open at 5 am. Drivers must book a slot through the dock planning system at least "
        "two hours in advance; trucks without a booking are served only when a bay is free. Each loading "
        "bay is cleared and swept after every truck, and damaged pallets are set aside for the recycling "
        "contractor.",
    ),
    (
        "Working time and leave",
        "Full-time employees work 38 hours per week and receive 27 days of paid annual leave, plus "
        "public holidays. Part-time employees receive leave in proportion to their contracted hours. "
        "Leave requests of more than five consecutive days must be submitted at least four weeks in "
        "advance and approved by the site manager.\n\n"
        "Overtime is paid at 150 percent of the normal hourly rate on weekdays and 200 percent on "
        "Sundays and public holidays. Employees may instead take time off in lieu within three months. "
        "Sick leave must be reported to the shift lead before the start of the shift; from the fourth "
        "day of absence a doctor's certificate is required.\n\n"
        "Parents receive 16 weeks of paid parental leave, which can be split into two blocks within the "
        "child's first year. Employees with five years of session receive one extra day of annual leave, "
        "and those with ten years receive three extra days.\n\n"
        "New employees complete a one-week induction that covers the warehouse systems, the safety "
        "rules and the customer session standards.",
    ),
    (
        "Results and outlook",
        "In the second quarter, revenue in the Westland region rose to 8.15 million, up from 7.35 million "
        "in the first quarter. The North region reported 4.9 million and the South region 3.6 million in "
        "the same quarter. Growth came mainly from new retail customers and longer storage contracts.\n\n"
        "Operating costs rose by six percent over the same period, mostly because of higher energy prices "
        "in the cold-storage zones and overtime during the spring peak. The company expects costs to "
        "stabilise once the new solar panels at the Westland site are connected in the autumn.\n\n"
        "Next year the company plans to open a cold-storage facility in Southport for seafood exports, "
        "with room for 12,000 pallets. The board also approved a recycling initiative that targets "
        "cardboard and pallet wrap, with the aim of halving the waste sent to landfill by 2027.\n\n"
        "Investment in electric delivery vans continues: twenty vans will replace diesel vehicles on "
        "the city routes, and charging points are being installed at the Northgate and Westland sites.",
    ),
]
WARMUP_QUESTION = "How many warehouses does Harbor Logistics operate?"
QUESTIONS = [
    "How long is the forklift certification course?",
    "Within how many hours must a safety incident be reported?",
    "What does the company plan to open next year?",
    "How many days of paid annual leave do full-time employees get?",
    "What was the revenue of the Westland region in the second quarter?",
    "How much is overtime paid on Sundays?",
]


def write_corpus_pdf(path: Path) -> Path:
    pdf = FPDF(format="A4")
    for title, body in CORPUS_PAGES:
        pdf.add_page()
        pdf.set_font("Helvetica", style="B", size=14)
        pdf.multi_cell(0, 8, title, new_x="LMARGIN")
        pdf.ln(2)
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 6, body, new_x="LMARGIN")
    pdf.output(str(path))
    return path


def rss_mb() -> float | None:
    """Resident memory of this process (Linux), to show a freed model gives its memory back."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


def ask_once(session: Session, question: str, llm: LLM) -> dict[str, Any]:
    started = time.perf_counter()
    stream = session.ask_stream(question)
    first_at: float | None = None
    pieces = 0
    for _ in stream.tokens():
        if first_at is None:
            first_at = time.perf_counter()
        pieces += 1
    ended = time.perf_counter()
    answer = stream.result()
    timings = answer.timings_ms
    row: dict[str, Any] = {
        "question": question,
        "refused": answer.refused,
        "error": answer.error,
        "answer": answer.answer,
        "pieces": pieces,
        "retrieve_ms": timings.get("retrieve_ms"),
        "total_ms": timings.get("total_ms", round((ended - started) * 1000, 1)),
        "ttft_ms": None,
        "tokens_per_s": None,
        "prompt_chars": None,
    }
    if "first_token_ms" not in timings:  # nothing relevant retrieved: refused without running the LLM
        return row
    # The first words the person sees: after the hidden phrase line of a grounded answer.
    shown = timings.get("first_visible_ms", timings["first_token_ms"])
    row["ttft_ms"] = round(shown - timings.get("llm_load_ms", 0.0), 1)
    row["model_first_token_ms"] = round(timings["first_token_ms"] - timings.get("llm_load_ms", 0.0), 1)
    row["ttft_wall_ms"] = round(((first_at or ended) - started) * 1000, 1)
    if pieces > 1 and first_at is not None and ended > first_at:
        row["tokens_per_s"] = round((pieces - 1) / (ended - first_at), 2)
    prompt_text = "".join(m.content for m in stream.messages)
    row["prompt_chars"] = len(prompt_text)
    row["prompt_tokens_estimated"] = estimate_tokens(prompt_text)
    row["sources"] = len(re.findall(r"^\[\d+\] \(", prompt_text, re.MULTILINE))
    if isinstance(llm, LlamaCppLLM) and llm.last_timings:  # llama.cpp's own prompt-token figures
        t = llm.last_timings
        row["prompt_tokens"] = int(t.get("prompt_n", 0) + t.get("cache_n", 0))
        row["prompt_tokens_evaluated"] = int(t.get("prompt_n", 0))
        row["prefill_ms"] = round(float(t.get("prompt_ms", 0.0)), 1)
        row["llamacpp_tokens_per_s"] = round(float(t.get("predicted_per_second", 0.0)), 2)
        row["generated_tokens"] = int(t.get("predicted_n", 0))
    return row


def median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


VARIANTS = {
    "chunks": "whole retrieved chunks (the packing before evidence selection)",
    "evidence-top4": "evidence sentences picked from the top 4 chunks, no neighbour rule (before 2026-11-27)",
    "evidence": "evidence sentences within RAGCHAT_EVIDENCE_TOKENS, from RAGCHAT_EVIDENCE_CANDIDATES chunks (now)",
    "evidence+other": "evidence, with another prompt (a memory-sized call) between questions",
}
OTHER_PROMPT = [
    ChatMessage(role="system", content="You decide whether a message states a lasting fact. Reply yes or no."),
    ChatMessage(role="user", content="Message: I moved to the Oslo office last week."),
]


def bench_model(
    home: Path, model: str, questions: list[str], max_tokens: int | None, variant: str = "evidence"
) -> dict[str, Any]:
    os.environ["RAGCHAT_LLM_PROVIDER"] = "llamacpp"
    os.environ["RAGCHAT_LLM_MODEL"] = model
    settings = get_settings(
        home=home,
        llm_provider="llamacpp",
        llm_model=model,
        llm_max_tokens=max_tokens,
        evidence_tokens=0 if variant == "chunks" else None,  # 0: the retrieved chunks whole, as before
        **({"evidence_candidates": 4, "evidence_neighbour_weight": 0.0} if variant == "evidence-top4" else {}),
    )
    session = open_session(settings)
    session.search(WARMUP_QUESTION)  # embedder + store loaded before the LLM clock starts
    rss_before = rss_mb()
    started = time.perf_counter()
    try:
        llm = session.app.llm()
    except Exception as exc:  # a model that is not installed must not stop the others
        del session
        gc.collect()
        return {"model": model, "skipped": f"{type(exc).__name__}: {exc}"}
    load_s = time.perf_counter() - started
    label = llm.label
    rss_loaded = rss_mb()

    warmup = ask_once(session, WARMUP_QUESTION, llm)
    rows = []
    for question in questions:
        if variant == "evidence+other":  # evicts the answer prompt from llama.cpp's slot
            llm.complete(OTHER_PROMPT, 4, 0.0)
        rows.append(ask_once(session, question, llm))
    # The warm-up prompt is evaluated whole (nothing cached yet): its rate is the prefill rate, and
    # prompt tokens ÷ that rate is the least time any first token can take without a prompt cache.
    prefill_rate = None
    if warmup.get("prefill_ms") and warmup.get("prompt_tokens_evaluated"):
        prefill_rate = warmup["prompt_tokens_evaluated"] / (warmup["prefill_ms"] / 1000)
        for row in rows:
            if row.get("prompt_tokens") and row["ttft_ms"]:
                row["ttft_limit_ms"] = round(row["prompt_tokens"] / prefill_rate * 1000, 1)
                row["ttft_over_limit"] = round(row["ttft_ms"] / row["ttft_limit_ms"], 3)

    del llm, session
    gc.collect()
    rss_freed = rss_mb()

    ttfts = [r["ttft_ms"] for r in rows if r["ttft_ms"] is not None]
    answered = [r for r in rows if r["ttft_ms"] is not None]
    return {
        "model": model,
        "variant": variant,
        "label": label,
        "threads": settings.llm_threads,
        "n_ctx": settings.llm_context,
        "max_tokens": settings.llm_max_tokens,
        "load_s": round(load_s, 2),
        "warmup_ttft_ms": warmup["ttft_ms"],
        "warmup_total_ms": warmup["total_ms"],
        "questions": len(rows),
        "llm_ran": len(answered),
        "ttft_median_ms": median(ttfts),
        "ttft_min_ms": min(ttfts) if ttfts else None,
        "ttft_max_ms": max(ttfts) if ttfts else None,
        "total_median_ms": median([r["total_ms"] for r in rows]),
        "retrieve_median_ms": median([r["retrieve_ms"] for r in rows if r["retrieve_ms"] is not None]),
        "prefill_median_ms": median([r["prefill_ms"] for r in answered if "prefill_ms" in r]),
        "tokens_per_s_median": median([r["tokens_per_s"] for r in answered if r["tokens_per_s"]]),
        "llamacpp_tokens_per_s_median": median(
            [r["llamacpp_tokens_per_s"] for r in answered if r.get("llamacpp_tokens_per_s")]
        ),
        "prompt_chars_median": median([r["prompt_chars"] for r in answered]),
        "prompt_tokens_median": median([r["prompt_tokens"] for r in answered if "prompt_tokens" in r]),
        "prompt_tokens_evaluated_median": median(
            [r["prompt_tokens_evaluated"] for r in answered if "prompt_tokens_evaluated" in r]
        ),
        "generated_tokens_median": median([r["generated_tokens"] for r in answered if "generated_tokens" in r]),
        "prefill_tokens_per_s": round(prefill_rate, 1) if prefill_rate else None,
        "ttft_over_limit_median": median_ratio([r["ttft_over_limit"] for r in answered if "ttft_over_limit" in r]),
        "cached_prompt_tokens_median": median(
            [r["prompt_tokens"] - r["prompt_tokens_evaluated"] for r in answered if "prompt_tokens" in r]
        ),
        "estimate_over_actual_tokens_median": median_ratio(
            [r["prompt_tokens_estimated"] / r["prompt_tokens"] for r in answered if r.get("prompt_tokens")]
        ),
        "rss_mb": {"before_load": rss_before, "loaded": rss_loaded, "after_free": rss_freed},
        "runs": rows,
    }


def median_ratio(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def fmt(value: Any, unit: str = "", scale: float = 1.0, digits: int = 2) -> str:
    return "-" if value is None else f"{float(value) * scale:.{digits}f}{unit}"


def print_report(results: list[dict[str, Any]], corpus: dict[str, Any]) -> None:
    print(
        f"Corpus: {corpus['pages']} pages -> {corpus['chunks']} chunks, ingested in {corpus['ingest_s']:.2f} s "
        f"(embedder cold start included); questions per model: {corpus['questions']} after 1 warm-up; "
        f"{corpus['cpus']} CPUs, load average {corpus['loadavg_1m_at_start']} at start, "
        f"{corpus['loadavg_1m_at_end']} at end"
    )
    for r in results:
        if "skipped" in r:
            continue
        rss = r["rss_mb"]
        print(
            f"\n{r['model']} [{r['variant']}: {VARIANTS[r['variant']]}]\n  ({r['label']}; {r['threads']} threads, "
            f"n_ctx {r['n_ctx']}, "
            f"max_tokens {r['max_tokens']}; RSS MB before load {rss['before_load']}, loaded {rss['loaded']}, "
            f"after free {rss['after_free']})"
        )
        print(
            f"  warm-up (first question after load): TTFT {fmt(r['warmup_ttft_ms'], ' s', 0.001)}, "
            f"total {fmt(r['warmup_total_ms'], ' s', 0.001)}"
        )
        for run in r["runs"]:
            answer = " ".join(str(run["answer"]).split())
            print(
                f"  TTFT {fmt(run['ttft_ms'], ' s', 0.001)} (prefill {fmt(run.get('prefill_ms'), ' s', 0.001)})  "
                f"total {fmt(run['total_ms'], ' s', 0.001)}  {fmt(run['tokens_per_s'], ' tok/s', digits=1)}  "
                f"{run.get('generated_tokens', run['pieces'])} tok out  prompt {run.get('prompt_tokens', '-')} tok "
                f"({run.get('prompt_tokens_evaluated', '-')} evaluated, {run.get('sources', 0)} sources)"
            )
            print(f"    {run['question']} -> {answer[:100]}")
    print()
    header = (
        f"{'model [variant]':<36}{'load s':>8}{'1st TTFT':>10}{'TTFT med':>10}{'TTFT min':>10}{'total med':>11}"
        f"{'tok/s':>8}{'prompt tok':>12}{'prompt chars':>14}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        name = f"{r['model']} [{r.get('variant', '')}]"
        if "skipped" in r:
            print(f"{name:<36} skipped: {r['skipped']}")
            continue
        print(
            f"{name:<36}{fmt(r['load_s']):>8}{fmt(r['warmup_ttft_ms'], scale=0.001):>10}"
            f"{fmt(r['ttft_median_ms'], scale=0.001):>10}"
            f"{fmt(r['ttft_min_ms'], scale=0.001):>10}{fmt(r['total_median_ms'], scale=0.001):>11}"
            f"{fmt(r['tokens_per_s_median'], digits=1):>8}{fmt(r['prompt_tokens_median'], digits=0):>12}"
            f"{fmt(r['prompt_chars_median'], digits=0):>14}"
        )
    print("(seconds; TTFT = question asked -> first word shown (after a grounded reply's hidden phrase line),")
    print(" retrieval included, model load excluded;")
    print(" 1st TTFT = the warm-up question, not in the medians; tok/s = streamed tokens after the first /")
    print(" time from first to last token; prompt tok = llama.cpp prompt_n + cache_n; medians over the questions)")
    print()
    for r in results:
        if "skipped" in r or not r.get("prefill_tokens_per_s"):
            continue
        print(
            f"{r['model']} [{r['variant']}]: prefill {r['prefill_tokens_per_s']:.0f} tok/s; "
            f"median TTFT / (prompt tokens ÷ prefill rate) = {r['ttft_over_limit_median']} "
            f"(goal ≤ 1.2; below 1 when the cached system prompt is skipped: median "
            f"{r['cached_prompt_tokens_median']:.0f} tokens reused); estimated / actual prompt "
            f"tokens = {r['estimate_over_actual_tokens_median']} (≥ 1: the context budget errs on the safe side)"
        )
    ran = [r for r in results if "skipped" not in r and r["ttft_median_ms"]]
    for model in dict.fromkeys(r["model"] for r in ran):
        by_variant = {r["variant"]: r for r in ran if r["model"] == model}
        base = by_variant.get("chunks")
        for name, other in by_variant.items():
            if base is None or other is base:
                continue
            ttft = other["ttft_median_ms"] / base["ttft_median_ms"]
            tokens = (other["prompt_tokens_median"] or 0) / (base["prompt_tokens_median"] or 1)
            print(f"{model}: [{name}] / [chunks] median TTFT x{ttft:.2f}, median prompt tokens x{tokens:.2f}")
    print()
    print(json.dumps({"bench": "time_to_first_token", "corpus": corpus, "models": results}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--models", nargs="+", default=DEFAULT_MODELS, help=f"default: {' '.join(DEFAULT_MODELS)}")
    parser.add_argument("--questions", type=int, default=6, help="timed questions per model (default 6)")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--max-tokens", type=int, default=None, help="answer length cap (default: the setting)")
    args = parser.parse_args()
    if args.questions < 1:
        parser.error("--questions must be at least 1")
    questions = [QUESTIONS[i % len(QUESTIONS)] for i in range(args.questions)]

    with tempfile.TemporaryDirectory(prefix="ragchat-bench-ttft-") as tmp:
        home = Path(tmp) / "home"
        os.environ["RAGCHAT_HOME"] = str(home)
        pdf = write_corpus_pdf(Path(tmp) / "harbor-handbook.pdf")
        ingest_session = open_session(get_settings(home=home))
        started = time.perf_counter()
        result = ingest_session.ingest_bytes(pdf.name, pdf.read_bytes())
        ingest_s = time.perf_counter() - started
        if result.status != "indexed":
            raise SystemExit(f"corpus ingest failed: {result.error}")
        del ingest_session
        gc.collect()
        corpus: dict[str, Any] = {
            "loadavg_1m_at_start": round(os.getloadavg()[0], 2),
            "pages": result.pages,
            "chunks": result.chunks,
            "ingest_s": round(ingest_s, 2),
            "questions": len(questions),
        }

        results: list[dict[str, Any]] = []
        for model in args.models:
            for variant in args.variants:
                print(f"... {model} [{variant}]", flush=True)
                results.append(bench_model(home, model, questions, args.max_tokens, variant))
    corpus["loadavg_1m_at_end"] = round(os.getloadavg()[0], 2)
    corpus["cpus"] = os.cpu_count()
    print_report(results, corpus)


if __name__ == "__main__":
    main()
