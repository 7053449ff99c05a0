"""Time a summary of whole documents, read fast and thoroughly, side by side: first token and total,
cold and cached.

What it does: each PDF (generated ones with `--pages N`, or real files with `--pdf PATH`) is ingested
into a temporary RAGCHAT_HOME; then one request about the whole document ("Summarize this document in
3 bullets.") is asked through `Session.ask`, for each reading in `--readings`: `fast` (passages chosen
across the document; the answer's first sentence written over the first of them, then the rest over
all, rag/overview.py), `one-call` (the same passages in one model call, by a second model instance
that keeps no answers), `thorough` (every section summarised, then combined) and `card` (the
document's card written first, as the app does in the background, then "What is this document
about?" answered from it: a card answers a general overview, not a shape such as "in 3 bullets").
Each is asked twice: cold (the model is loaded and warmed on a small question first, so its load time is
not counted) and again (the thorough reading then reads its section summaries from their cache). A
document that fits `RAGCHAT_DOCUMENT_TOKENS` is given whole either way (`--document-tokens 200` forces
the long-document readings on a short one). `--thorough-max-pages` skips the thorough reading of
larger documents (it takes minutes per hundred pages).

    .venv/bin/python bench/document_summary.py --pages 3                       # 0.5B, generated 3 pages
    .venv/bin/python bench/document_summary.py --pdf ../shared/data/pdfs/R-intro.pdf --model qwen2.5-coder-1.5b

Prints per document: pages, method (whole / sections), sections and cached sections, when the first
section's partial result was shown, time to first token of the answer, total, and the answer with
its cited pages. Timings are wall-clock; the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REQUEST = "Summarize this document in 3 bullets."
CARD_REQUEST = "What is this document about?"  # a general overview: what a card answers (no shape asked)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, nargs="*", default=[], help="generated PDFs of these page counts")
    parser.add_argument("--pdf", type=Path, nargs="*", default=[], help="real PDFs")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--document-tokens", type=int, default=None, help="RAGCHAT_DOCUMENT_TOKENS for the run")
    parser.add_argument("--section-tokens", type=int, default=None, help="RAGCHAT_SECTION_TOKENS for the run")
    parser.add_argument(
        "--readings", default="fast,thorough,card", help="comma-separated: fast, one-call, thorough, card"
    )
    parser.add_argument("--thorough-max-pages", type=int, default=200, help="no thorough reading above this")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(
            RAGCHAT_HOME=str(Path(tmp) / "home"),
            RAGCHAT_LLM_PROVIDER="llamacpp",
            RAGCHAT_LLM_MODEL=args.model,
            RAGCHAT_RERANKER_DIR=str(Path(tmp) / "no-reranker"),
        )
        from core.settings import get_settings
        from providers.llm.base import ChatMessage
        from ragchat.application import open_session
        from tests.fixtures import long_pdf_bytes, write_report_pdf

        files: list[tuple[str, bytes]] = []
        for pages in args.pages:
            if pages == 3:
                files.append(("report-3p.pdf", write_report_pdf(Path(tmp) / "report.pdf").read_bytes()))
            else:
                files.append((f"generated-{pages}p.pdf", long_pdf_bytes(pages, seed=pages)))
        files += [(path.name, path.read_bytes()) for path in args.pdf]
        settings = get_settings(
            memory_enabled=False, document_tokens=args.document_tokens, section_tokens=args.section_tokens
        )
        readings = args.readings.split(",")
        session = open_session(settings)
        # The fast reading in one model call, its answer's opening not written first: its own model, so
        # that neither reading finds the other's prompt in llama.cpp's cache, and no kept answers.
        others = (
            {
                "one-call": open_session(
                    settings.model_copy(update={"overview_opening_tokens": 0, "stored_document_answers": False})
                )
            }
            if "one-call" in readings
            else {}
        )
        for each in (session, *others.values()):
            "".join(each.app.llm().stream([ChatMessage(role="user", content="Say hi.")], 4, 0.0))  # load: not timed
        print(f"model {args.model}; load average {os.getloadavg()[0]:.2f}")
        for name, data in files:
            result = session.ingest_bytes(name, data)
            for reading in readings:
                if reading == "card":
                    _write_card(session, name)
                if reading == "thorough" and (result.pages or 0) > args.thorough_max_pages:
                    print(f"{name}: {result.pages} pages, thorough: not run (over --thorough-max-pages)")
                    continue
                for run in ("cold", "again"):
                    answer = _timed(others.get(reading, session), name, reading, run, result.pages)
                pages = sorted({c.page for c in answer.citations})
                print(f"  answer (cites pages {pages}):\n  " + answer.answer.replace("\n", "\n  "))
            session.delete(name)


def _timed(session, name: str, reading: str, run: str, pages: int | None):
    shown: list[float] = []  # when each section's partial result was handed to the reader
    started = time.perf_counter()
    request = CARD_REQUEST if reading == "card" else REQUEST
    answer = session.ask(request, _options(name, _timer(shown, started), reading == "thorough"))
    total = time.perf_counter() - started
    info = answer.document_request
    first = answer.timings_ms.get("first_token_ms", 0.0) / 1000
    partial = f"first partial result {shown[0]:.1f} s, " if shown else ""
    if "first_visible_ms" in answer.timings_ms:  # the sections' line, shown before the model's first token
        partial += f"sections line {answer.timings_ms['first_visible_ms'] / 1000:.1f} s, "
    if info and info.stored:
        partial += "stored answer, "
    if "rest_first_token_ms" in answer.timings_ms:  # the opening sentence written first, then the rest
        partial += f"the rest's first token {answer.timings_ms['rest_first_token_ms'] / 1000:.1f} s, "
    print(
        f"{name}: {pages} pages, {reading} ({info.method if info else '?'}), sections "
        f"{info.sections if info else 0} (cached {info.cached_sections if info else 0}), {run}: "
        f"{partial}first token {first:.1f} s, total {total:.1f} s; load {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    return answer


def _write_card(session, name: str) -> None:
    """Write the document's card as the app does in the background once the model is idle (printed,
    not part of the answer's time), so the asks that follow are answered from it."""
    started = time.perf_counter()
    card = session.card_writer.write_next()
    print(f"{name}: card written in the background in {time.perf_counter() - started:.1f} s: {bool(card)}")


def _timer(shown: list[float], started: float):
    """A section callback that records how long after `started` each section was handed over."""
    return lambda _sentences: shown.append(time.perf_counter() - started)


def _options(name: str, on_section, thorough: bool):
    from rag.pipeline import AskOptions

    return AskOptions(documents=(name,), on_section=on_section, thorough=thorough)


if __name__ == "__main__":
    main()
