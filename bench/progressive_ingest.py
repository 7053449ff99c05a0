"""Progressive ingest of a long manual: how soon another process finds it by keyword, how fast it is
fully indexed against the raw embedding ceiling, and the writer's peak memory.

One run, in a temporary RAGCHAT_HOME:

1. A generated prose PDF (``--pages``, default 2,415 like the R reference manual, at its ~1,850
   characters per page; bench/ingest_throughput.py writes it) is ingested by a real
   ``ragchat ingest --json`` process. Its peak RSS comes from the kernel (``wait4``).
2. Meanwhile a reader process (another ``Session`` on the same home, as the app beside a CLI ingest)
   searches by keyword every 0.2 s for the last page's heading number until a chunk of the *last*
   page comes back (the whole document is keyword-searchable), then samples the semantic index's
   progress every 15 s. Times are from the moment the ingest process was started.
3. After both have finished, the raw embedding ceiling: this process embeds a sample of the same
   chunk texts in batches of ``ingest_batch`` with the same embedder and threads, nothing else
   running. Ratio = the ingest's chunks/s over that ceiling.

    .venv/bin/python -m bench.progressive_ingest                 # 2,415 pages (~6 min on 2 idle cores)
    .venv/bin/python -m bench.progressive_ingest --pages 200     # a quick run

Figures only, nothing is asserted. Read the load averages printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.ingest_throughput import PAGE_CHARS, write_prose_pdf
from core.settings import get_settings

CEILING_SAMPLE = 1024  # chunks embedded alone for the ceiling
CEILING_BATCHES = (4, 16)  # ONNX batch sizes: the default, and the one before it


def reader(home: Path, started: float, pages: int, out: Path) -> None:
    """The other process: poll a keyword search until the last page is found, then the progress."""
    from ragchat.application import open_session

    os.environ["RAGCHAT_HOME"] = str(home)
    session = open_session(get_settings())
    found_s: float | None = None
    first_hit_s: float | None = None
    samples: list[dict[str, float]] = []
    deadline = time.time() + 3600
    while time.time() < deadline:
        hits = session.search(str(pages), k=10, bm25_weight=1.0).hits
        now = time.time() - started
        if hits and first_hit_s is None:
            first_hit_s = now
        if any(h.chunk.page == pages for h in hits):
            found_s = now
            break
        time.sleep(0.2)
    registry = session.document_index.registry
    while time.time() < deadline:
        records = registry.all()
        if records and not any(r.pending_chunks for r in records):
            samples.append({"s": round(time.time() - started, 1), "embedded": 1.0})
            break
        if records:
            samples.append({"s": round(time.time() - started, 1), "embedded": round(records[0].embedded_fraction, 3)})
        time.sleep(15)
    out.write_text(json.dumps({"first_hit_s": first_hit_s, "last_page_found_s": found_s, "samples": samples}))


def ceiling(home: Path) -> list[dict[str, float]]:
    """Chunks/s of the embedder alone on the ingested chunk texts, `ingest_batch` chunks per call as the
    ingest does, for ONNX batch sizes CEILING_BATCHES (smallest first: peak RSS only grows), with the
    growth of this process's peak RSS each caused."""
    os.environ["RAGCHAT_HOME"] = str(home)
    from providers.embedder import Embedder
    from ragchat.application import open_session

    settings = get_settings()
    texts: list[str] = []
    for batch in open_session(settings).document_index.store.iter_chunks():
        texts += [c.text for c in batch]
        if len(texts) >= CEILING_SAMPLE:
            break
    texts = texts[:CEILING_SAMPLE]
    rows: list[dict[str, float]] = []
    for size in CEILING_BATCHES:
        embedder = Embedder(settings.model_copy(update={"embed_batch_size": size}))
        embedder.embed(texts[:8])  # warm
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        step = settings.ingest_batch
        begin = time.perf_counter()
        for i in range(0, len(texts), step):
            embedder.embed(texts[i : i + step])
        seconds = time.perf_counter() - begin
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before
        rows.append(
            {"batch": size, "chunks": len(texts), "chunks_per_s": len(texts) / seconds, "peak_growth_mb": grown}
        )
        del embedder
    return rows


def run(pages: int, seed: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ragchat-progressive-") as tmp:
        root = Path(tmp)
        home = root / "home"
        pdf = root / "manual.pdf"
        written, characters = write_prose_pdf(pdf, pages, seed)
        env = {**os.environ, "RAGCHAT_HOME": str(home)}
        load_start = os.getloadavg()[0]
        started = time.time()
        writer = subprocess.Popen(
            [sys.executable, "-m", "ragchat.cli", "ingest", str(pdf), "--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        progress_file = root / "reader.json"
        watcher = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.progressive_ingest",
                "--reader",
                str(home),
                str(started),
                str(written),
                str(progress_file),
            ],
            env=env,
        )
        out = writer.stdout.read() if writer.stdout else ""
        err = writer.stderr.read() if writer.stderr else ""
        _, status, usage = os.wait4(writer.pid, 0)
        writer.returncode = os.waitstatus_to_exitcode(status)
        wall = time.time() - started
        watcher.wait(timeout=3700)
        if writer.returncode != 0:
            raise SystemExit(f"the ingest failed: {err[-2000:]}")
        [result] = json.loads(out)
        seen = json.loads(progress_file.read_text())
        load_end = os.getloadavg()[0]
        embed_alone = ceiling(home)
        load_ceiling = os.getloadavg()[0]
    return {
        "pages": written,
        "characters": characters,
        "chunks": result["chunks"],
        "searchable_s": result["searchable_s"],
        "ingest_s": result["seconds"],
        "process_wall_s": wall,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "reader": seen,
        "ceiling": embed_alone,
        "load": [load_start, load_end, load_ceiling],
        "embed_batch_size": get_settings().embed_batch_size,
    }


def report(r: dict[str, Any]) -> None:
    ingest_rate = r["chunks"] / r["ingest_s"]
    settings_batch = r["embed_batch_size"]
    ceiling_rate = next(c["chunks_per_s"] for c in r["ceiling"] if c["batch"] == settings_batch)
    seen = r["reader"]
    found = seen["last_page_found_s"]
    print(
        f"load average (1 min) at start {r['load'][0]:.2f}, end of ingest {r['load'][1]:.2f}, "
        f"after the ceiling {r['load'][2]:.2f} ({os.cpu_count()} CPUs)\n"
    )
    rows = [
        ("document", f"{r['pages']:,} pages, {r['characters'] / r['pages']:,.0f} chars/page, {r['chunks']:,} chunks"),
        ("ingest process: searchable by keyword (its own clock)", f"{r['searchable_s']:.1f} s"),
        ("other process: first hit of any page", f"{_s(seen['first_hit_s'])} after the ingest started"),
        ("other process: the last page found by keyword", f"{_s(found)} after the ingest started"),
        ("fully indexed (ingest's clock; process wall)", f"{r['ingest_s']:.1f} s ({r['process_wall_s']:.1f} s)"),
        ("ingest rate", f"{ingest_rate:.1f} chunks/s, {r['pages'] / r['ingest_s']:.1f} pages/s"),
        *(
            (
                f"raw embedding ceiling, ONNX batch {c['batch']} ({c['chunks']} chunks, embedder alone)",
                f"{c['chunks_per_s']:.1f} chunks/s, peak RSS +{c['peak_growth_mb']:.0f} MB",
            )
            for c in r["ceiling"]
        ),
        ("ingest rate / ceiling", f"{ingest_rate / ceiling_rate:.0%}"),
        ("peak RSS of the ingest process", f"{r['peak_rss_mb']:,.0f} MB"),
    ]
    print("| measure | value |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")
    trail = ", ".join(f"{s['s']:.0f} s: {s['embedded']:.0%}" for s in seen["samples"])
    print(f"\nsemantic index as the other process saw it: {trail}")
    print(json.dumps(r))


def _s(seconds: float | None) -> str:
    return "never" if seconds is None else f"{seconds:.1f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pages", type=int, default=2415)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--chars", default="1700,2000", help="body characters per page, MIN,MAX")
    parser.add_argument("--reader", nargs=4, metavar=("HOME", "STARTED", "PAGES", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reader:
        home, started, pages, out = args.reader
        reader(Path(home), float(started), int(pages), Path(out))
        return
    low, high = (int(x) for x in args.chars.split(","))
    PAGE_CHARS[:] = [low, high]
    report(run(args.pages, args.seed))


if __name__ == "__main__":
    main()
