"""Ingestion throughput: how fast a long text PDF goes from bytes to searchable chunks.

What it measures, on one generated document in one run:

* end to end: ``Session.ingest_bytes`` (parse → chunk → embed → Chroma add → registry), reported
  as pages/s and chunks/s. A 1-page ingest runs first, so the embedder (ONNX), the vector store, the
  PDF parser's imports and the chunker's tokenizer are loaded before the clock starts; that cold
  start is printed on its own line;
* inside that same ingest, the time spent in ``embedder.embed``, ``store.add`` and
  ``store.delete_document`` (timed in place by wrapping those methods on the instances); the rest
  is parsing, chunking and the SQLite registry;
* each stage alone on the same document, right after: parsing
  (``ingestion.parsers.parse_document``), chunking (``ingestion.chunking.chunk_document``) and
  embedding (``session.app.embedder.embed`` over all chunk texts at once).

The document is a deterministic pseudo-prose PDF written with fpdf2 into a temporary directory: one
heading and about 2,500-3,000 characters of varied sentences per page, built from word lists with a
fixed random seed, so every run ingests the same bytes. Everything goes into a temporary
RAGCHAT_HOME that is deleted afterwards; nothing in the project's data directory is touched.

Run from the repository root (figures only, nothing is asserted):

    .venv/bin/python bench/ingest_throughput.py              # 100 pages
    .venv/bin/python bench/ingest_throughput.py --pages 20   # a quicker run

It prints a table, then one JSON line with the same numbers (handy for collecting runs).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fpdf import FPDF

from core.settings import get_settings
from ingestion.chunking import chunk_document
from ingestion.parsers import parse_document
from ragchat.application import open_session

PAGE_CHARS = [2500, 3000]  # body characters per page, --chars

TOPICS = [
    "Warehouse Operations",
    "Customer Onboarding",
    "Quarterly Budget Review",
    "Safety Programme",
    "Supplier Contracts",
    "Data Retention Policy",
    "Fleet Maintenance",
    "Staff Training",
    "Regional Sales",
    "Quality Assurance",
    "Inventory Planning",
    "Incident Response",
]
SUBJECTS = [
    "The operations team",
    "Each regional manager",
    "The finance department",
    "Our largest customer",
    "The night shift",
    "The procurement office",
    "A temporary contractor",
    "The audit committee",
    "Every new employee",
    "The northern warehouse",
    "The support desk",
    "The board of directors",
]
VERBS = [
    "reviewed",
    "approved",
    "postponed",
    "documented",
    "reorganised",
    "measured",
    "questioned",
    "extended",
    "simplified",
    "replaced",
    "monitored",
    "negotiated",
]
OBJECTS = [
    "the delivery schedule",
    "the cold-storage contract",
    "the forklift certification",
    "the pallet recycling scheme",
    "the annual safety audit",
    "the shipping rates",
    "the returns process",
    "the overtime policy",
    "the inventory forecast",
    "the customer survey",
    "the loading dock layout",
    "the backup procedure",
]
CIRCUMSTANCES = [
    "after the spring inspection",
    "before the end of the quarter",
    "during the holiday peak",
    "following a customer complaint",
    "once the new software was installed",
    "while the harbour was closed for repairs",
    "at the request of the regional office",
    "ahead of the external audit",
]
OUTCOMES = [
    "which reduced waiting times considerably",
    "although several teams asked for more time",
    "so that deliveries could leave earlier in the morning",
    "because the previous arrangement had become too expensive",
    "and the results will be discussed at the next meeting",
    "which freed two loading bays for seasonal stock",
    "even though the budget remained unchanged",
    "so the error rate fell for the third month in a row",
]
CONNECTORS = ["In addition,", "However,", "As a result,", "Meanwhile,", "For this reason,", "Later that month,"]
NOUNS = ["orders", "pallets", "invoices", "shipments", "tickets", "containers", "hours", "vehicles"]
PLACES = ["Westland", "Northgate", "Harbor Point", "Eastbridge", "Millford", "Southport"]


def sentence(rng: random.Random) -> str:
    """One sentence from a few varied templates, with numbers so pages are not near-duplicates."""
    form = rng.randrange(5)
    if form == 0:
        text = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(CIRCUMSTANCES)}"
    elif form == 1:
        text = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}, {rng.choice(OUTCOMES)}"
    elif form == 2:
        count, noun, place = rng.randint(12, 4800), rng.choice(NOUNS), rng.choice(PLACES)
        text = f"In {place}, {count} {noun} were handled in week {rng.randint(1, 52)}, {rng.choice(OUTCOMES)}"
    elif form == 3:
        text = (
            f"{rng.choice(CONNECTORS)} {rng.choice(SUBJECTS).lower()} {rng.choice(VERBS)} "
            f"{rng.choice(OBJECTS)} {rng.choice(CIRCUMSTANCES)}"
        )
    else:
        share = rng.randint(2, 48)
        text = f"The share of late {rng.choice(NOUNS)} at {rng.choice(PLACES)} changed by {share} percent"
        text += f" {rng.choice(CIRCUMSTANCES)}"
    return text[0].upper() + text[1:] + "."


def page_text(rng: random.Random) -> str:
    """Paragraphs of 3-6 sentences, filled to a random length between 2,500 and 3,000 characters."""
    target = rng.randint(PAGE_CHARS[0], PAGE_CHARS[1])
    paragraphs: list[list[str]] = [[]]
    per_paragraph = rng.randint(3, 6)
    length = 0
    while length < target:
        text = sentence(rng)
        if length + len(text) + 1 > PAGE_CHARS[1]:
            break
        if len(paragraphs[-1]) == per_paragraph:
            paragraphs.append([])
            per_paragraph = rng.randint(3, 6)
        paragraphs[-1].append(text)
        length += len(text) + 1
    return "\n\n".join(" ".join(p) for p in paragraphs)


def write_prose_pdf(path: Path, pages: int, seed: int) -> tuple[int, int]:
    """Write the benchmark PDF; returns (pages written, characters of body text)."""
    rng = random.Random(seed)
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(auto=True, margin=12)
    pdf.set_margins(15, 12, 15)
    characters = 0
    for number in range(1, pages + 1):
        pdf.add_page()
        pdf.set_font("Helvetica", style="B", size=13)
        pdf.multi_cell(0, 7, f"{number}. {rng.choice(TOPICS)}: {rng.choice(PLACES)} report", new_x="LMARGIN")
        pdf.ln(2)
        pdf.set_font("Helvetica", size=10)
        body = page_text(rng)
        characters += len(body)
        pdf.multi_cell(0, 5, body, new_x="LMARGIN")
    pdf.output(str(path))
    return pdf.pages_count, characters


def instrument(obj: object, method: str, totals: dict[str, float], key: str) -> None:
    """Shadow obj.method with a wrapper that adds its wall time to totals[key] (this instance only)."""
    original: Callable[..., Any] = getattr(obj, method)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            totals[key] = totals.get(key, 0.0) + time.perf_counter() - started

    setattr(obj, method, wrapper)


def ingest_child(pdf_path: Path, home: Path) -> dict[str, Any]:
    """In a fresh process (so its peak RSS is the ingest's alone): a 1-page warm-up, then the
    timed end-to-end ingest, with the embedder and store calls inside it timed in place."""
    os.environ["RAGCHAT_HOME"] = str(home)
    settings = get_settings(home=home)
    warmup = home.parent / "warmup.pdf"
    write_prose_pdf(warmup, 1, 99)
    session = open_session(settings)
    started = time.perf_counter()
    warm = session.ingest_bytes(warmup.name, warmup.read_bytes())
    cold_start_s = time.perf_counter() - started
    if warm.status != "indexed":
        raise SystemExit(f"warm-up ingest failed: {warm.error}")
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    inside: dict[str, float] = {}
    instrument(session.app.embedder, "embed", inside, "embed")
    instrument(session.document_index.store, "add", inside, "store_add")
    instrument(session.document_index.store, "delete_document", inside, "store_delete")
    data = pdf_path.read_bytes()
    cpu_before = _cpu_seconds()
    started = time.perf_counter()
    result = session.ingest_bytes(pdf_path.name, data)
    end_to_end_s = time.perf_counter() - started
    cpu_s = _cpu_seconds() - cpu_before
    if result.status != "indexed":
        raise SystemExit(f"ingest failed: {result.error}")
    return {
        "pages": result.pages,
        "chunks": result.chunks,
        "cold_start_s": cold_start_s,
        "end_to_end_s": end_to_end_s,
        "cpu_s": cpu_s,
        "inside": inside,
        "peak_rss_mb_after_warmup": round(rss_before, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(pages: int, seed: int, stages: bool = True) -> dict[str, Any]:
    load_at_start = round(os.getloadavg()[0], 2)  # other work on the machine skews every figure
    with tempfile.TemporaryDirectory(prefix="ragchat-bench-ingest-") as tmp:
        root = Path(tmp)
        home = root / "home"
        os.environ["RAGCHAT_HOME"] = str(home)
        settings = get_settings(home=home)

        pdf_path = root / "bench-prose.pdf"
        started = time.perf_counter()
        pdf_pages, body_chars = write_prose_pdf(pdf_path, pages, seed)
        generate_s = time.perf_counter() - started
        data = pdf_path.read_bytes()

        (root / "child").mkdir()
        child = subprocess.run(
            [sys.executable, __file__, "--ingest-child", str(pdf_path), str(root / "child" / "home")],
            capture_output=True,
            text=True,
            check=False,
        )
        if child.returncode != 0:
            raise SystemExit(f"the ingest process failed:\n{child.stderr[-3000:]}")
        measured = json.loads(child.stdout.strip().splitlines()[-1])
        inside: dict[str, float] = measured["inside"]
        end_to_end_s, cold_start_s = measured["end_to_end_s"], measured["cold_start_s"]
        n_pages, n_chunks = measured["pages"], measured["chunks"]

        # The same document again, stage by stage (skipped with --no-stages: it holds every page).
        stage: dict[str, float] = {"parse": 0.0, "chunk": 0.0, "embed": 0.0}
        parsed_chars = 0
        if stages:
            session = open_session(settings)
            started = time.perf_counter()
            document = parse_document(pdf_path.name, data)
            stage["parse"] = time.perf_counter() - started
            parsed_chars = sum(len(page.text) for page in document.pages)
            first_page = document.model_copy(update={"pages": document.pages[:1]})
            chunk_document(first_page, settings.chunk_size, settings.chunk_overlap)  # loads the sentence splitter
            started = time.perf_counter()
            chunks = chunk_document(document, settings.chunk_size, settings.chunk_overlap)
            stage["chunk"] = time.perf_counter() - started
            texts = [chunk.text for chunk in chunks]
            started = time.perf_counter()
            vectors = session.app.embedder.embed(texts)
            stage["embed"] = time.perf_counter() - started
            if len(vectors) != len(chunks) or len(chunks) != n_chunks:
                raise SystemExit(f"chunk count mismatch: ingest {n_chunks}, breakdown {len(chunks)}")

    in_store = inside.get("store_add", 0.0) + inside.get("store_delete", 0.0)
    return {
        "pages": n_pages,
        "pdf_pages": pdf_pages,
        "pdf_bytes": len(data),
        "body_chars": body_chars,
        "parsed_chars": parsed_chars,
        "peak_rss_mb": measured["peak_rss_mb"],
        "peak_rss_mb_after_warmup": measured["peak_rss_mb_after_warmup"],
        "chunks": n_chunks,
        "chunk_size": settings.chunk_size,
        "chunk_overlap": settings.chunk_overlap,
        "embed_threads": settings.embed_threads,
        "embed_batch_size": settings.embed_batch_size,
        "generate_pdf_s": round(generate_s, 3),
        "cold_start_s": round(cold_start_s, 3),
        "end_to_end_s": round(end_to_end_s, 3),
        "pages_per_s": round(n_pages / end_to_end_s, 2),
        "cpu_s": round(measured["cpu_s"], 1),
        # What the same work takes on an otherwise idle machine: all CPUs busy with this ingest only.
        "pages_per_s_idle_estimate": round(n_pages / (measured["cpu_s"] / (os.cpu_count() or 1)), 2),
        "chunks_per_s": round(n_chunks / end_to_end_s, 2),
        "in_ingest_embed_s": round(inside.get("embed", 0.0), 3),
        "in_ingest_store_add_s": round(inside.get("store_add", 0.0), 3),
        "in_ingest_store_delete_s": round(inside.get("store_delete", 0.0), 3),
        "in_ingest_rest_s": round(max(end_to_end_s - inside.get("embed", 0.0) - in_store, 0.0), 3),
        "parse_s": round(stage["parse"], 3),
        "chunk_s": round(stage["chunk"], 3),
        "embed_s": round(stage["embed"], 3),
        "parse_pages_per_s": round(n_pages / stage["parse"], 2) if stage["parse"] else None,
        "chunk_chunks_per_s": round(n_chunks / stage["chunk"], 2) if stage["chunk"] else None,
        "embed_chunks_per_s": round(n_chunks / stage["embed"], 2) if stage["embed"] else None,
        "seed": seed,
        "cpus": os.cpu_count(),
        "loadavg_1m_at_start": load_at_start,
        "loadavg_1m_at_end": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
    }


def print_report(r: dict[str, Any]) -> None:
    e2e = float(r["end_to_end_s"])

    def row(label: str, seconds: float, rate: str = "") -> None:
        share = f"{100 * seconds / e2e:5.1f}%" if e2e else "    -"
        print(f"{label:<38}{seconds:>9.3f}{share:>8}  {rate}".rstrip())

    print(
        f"Document: {r['pages']} pages ({r['pdf_bytes']:,} bytes PDF, {r['parsed_chars']:,} chars parsed) "
        f"-> {r['chunks']} chunks (chunk_size {r['chunk_size']}, overlap {r['chunk_overlap']}; "
        f"embed threads {r['embed_threads']}, batch {r['embed_batch_size']}; {r['cpus']} CPUs, "
        f"load average {r['loadavg_1m_at_start']} at start, {r['loadavg_1m_at_end']} at end)"
    )
    print(
        f"PDF generation {r['generate_pdf_s']:.3f} s; cold start (1-page ingest: models, store, imports) "
        f"{r['cold_start_s']:.3f} s, not counted below"
    )
    print()
    print(f"{'stage':<38}{'seconds':>9}{'share':>8}  rate")
    print("-" * 80)
    row("end to end (ingest_bytes)", r["end_to_end_s"], f"{r['pages_per_s']} pages/s, {r['chunks_per_s']} chunks/s")
    print(
        f"{'  CPU time of the ingest process':<38}{r['cpu_s']:>9.1f} s   -> {r['pages_per_s_idle_estimate']} pages/s "
        f"if it had all {r['cpus']} CPUs to itself (a shared machine stretches the wall time, not the CPU time)"
    )
    print(
        f"{'  peak RSS of the ingest process':<38}{r['peak_rss_mb']:>9.0f} MB  "
        f"({r['peak_rss_mb_after_warmup']:.0f} MB after the warm-up, models loaded)"
    )
    print("inside that ingest (timed in place):")
    row("  embedder.embed calls", r["in_ingest_embed_s"])
    row("  store.add (Chroma upsert)", r["in_ingest_store_add_s"])
    row("  store.delete_document", r["in_ingest_store_delete_s"])
    row("  rest (parse, chunk, registry)", r["in_ingest_rest_s"])
    if r["parse_s"]:
        print("each stage alone, same document (share of end to end):")
        row("  parse (parse_document)", r["parse_s"], f"{r['parse_pages_per_s']} pages/s")
        row("  chunk (chunk_document)", r["chunk_s"], f"{r['chunk_chunks_per_s']} chunks/s")
        row("  embed (embedder.embed, all chunks)", r["embed_s"], f"{r['embed_chunks_per_s']} chunks/s")
    if r["pdf_pages"] != r["pages"]:
        print(f"note: the generator wrote {r['pdf_pages']} PDF pages, the parser read {r['pages']}")
    print()
    print(json.dumps({"bench": "ingest_throughput", **r}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pages", type=int, default=100, help="pages in the generated PDF (default 100)")
    parser.add_argument("--seed", type=int, default=1234, help="random seed of the pseudo-prose (default 1234)")
    parser.add_argument("--chars", default="2500,3000", help="body characters per page, MIN,MAX (default 2500,3000)")
    parser.add_argument("--no-stages", action="store_true", help="skip the stage-by-stage pass (for long documents)")
    parser.add_argument("--ingest-child", nargs=2, metavar=("PDF", "HOME"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.ingest_child:
        print(json.dumps(ingest_child(Path(args.ingest_child[0]), Path(args.ingest_child[1]))))
        return
    if args.pages < 1:
        parser.error("--pages must be at least 1")
    low, high = (int(x) for x in args.chars.split(","))
    PAGE_CHARS[:] = [low, high]
    print_report(run(args.pages, args.seed, stages=not args.no_stages))


if __name__ == "__main__":
    main()
