"""`ragchat sanity` (`make sanity`): the challenge's judge artifact, produced by the real pipeline.

On the embedded models and offline, it ingests the bundled sample documents (sample_docs/), asks
questions about them, states one fact about the user and one about the company (the memory graph
files them in USER_MEMORY.md / COMPANY_MEMORY.md under RAGCHAT_HOME), runs one weather analysis
against replayed Open-Meteo responses (ragchat/sanity_openmeteo/, served on 127.0.0.1 to the
sandboxed tool), and writes artifacts/sanity_output.json:

    {"implemented_features": ["A", "B", "C"],
     "qa": [{"question", "answer", "citations": [{"source", "locator", "snippet"}]}],
     "demo": {"memory_writes": [{"target": "USER" | "COMPANY", "summary"}]}}

A feature is listed only when its part of the run worked (A: every answer cited; B: both memory
targets written; C: the weather analysis returned its daily figures). Nothing in the file is written by
hand. The facts a previous run wrote (read from its artifact) are forgotten first, so each run writes
them anew instead of finding them already remembered.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from core.settings import PROJECT_ROOT, get_settings
from ragchat.application import App
from ragchat.session import Session
from tools.weather_models import WeatherError, WeatherRequest

SAMPLE_DOCS = PROJECT_ROOT / "sample_docs"
OPENMETEO_REPLAY = Path(__file__).parent / "sanity_openmeteo"
ARTIFACT = PROJECT_ROOT / "artifacts" / "sanity_output.json"
QUESTIONS = (
    "What restocking fee is deducted for opened hardware that is not defective?",
    "How long does the backup battery keep the hub running during a power cut?",
    "How many Zigbee devices can one hub control?",
)
FACTS = (
    "I work as a logistics planner in the Rotterdam office.",
    "Our company installs Nimbus hubs in all of its 12 offices.",
)
WEATHER_PLACE = "Rotterdam"


@contextmanager
def openmeteo_replay() -> Iterator[dict[str, str]]:
    """A 127.0.0.1 server answering geocoding and forecast requests with the replayed responses;
    yields the settings that point the weather tool at it."""
    bodies = {
        "/v1/search": (OPENMETEO_REPLAY / "geocoding.json").read_bytes(),
        "/v1/forecast": (OPENMETEO_REPLAY / "forecast.json").read_bytes(),
    }

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = bodies.get(self.path.split("?", 1)[0])
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield {
            "openmeteo_geocoding_url": f"{base}/v1/search",
            "openmeteo_forecast_url": f"{base}/v1/forecast",
            "openmeteo_archive_url": f"{base}/v1/archive",
        }
    finally:
        server.shutdown()
        server.server_close()


def run_sanity(artifact: Path = ARTIFACT, say: Any = print) -> dict[str, Any]:
    """The whole run; returns what it wrote to `artifact`."""
    with openmeteo_replay() as weather_urls:
        app = App(get_settings(**weather_urls))
        session = app.session()
        if fallback := app.llm_choice().fallback:
            say(fallback)
        qa = _ingest_and_ask(session, say)
        writes = _state_facts(session, artifact, say)
        weather_ok = _weather(app, say)
    features = [
        feature
        for feature, worked in (
            ("A", bool(qa) and all(item["citations"] for item in qa)),
            ("B", {w["target"] for w in writes} == {"USER", "COMPANY"}),
            ("C", weather_ok),
        )
        if worked
    ]
    payload = {"implemented_features": features, "qa": qa, "demo": {"memory_writes": writes}}
    artifact.parent.mkdir(parents=True, exist_ok=True)
    artifact.write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return payload


def _ingest_and_ask(session: Session, say: Any) -> list[dict[str, Any]]:
    documents = sorted(p for p in SAMPLE_DOCS.iterdir() if p.suffix.lower() in {".pdf", ".txt", ".md"})
    for result in session.ingest_paths(documents):
        say(f"ingest {result.source}: {result.status}" + (f" ({result.error})" if result.error else ""))
    qa = []
    for question in QUESTIONS:
        answer = session.ask_stream(question).finish()
        citations = [{"source": c.source, "locator": c.locator, "snippet": c.snippet} for c in answer.citations]
        say(f"Q: {question}\nA: {answer.answer}\n   {len(citations)} citation(s); model {answer.models.llm}")
        qa.append({"question": question, "answer": answer.answer, "citations": citations})
    return qa


def _state_facts(session: Session, artifact: Path, say: Any) -> list[dict[str, str]]:
    for entry in _previous_writes(artifact):
        session.memory.forget(entry)
    writes = []
    for fact in FACTS:
        answer = session.ask_stream(fact).finish()
        say(f"memory: {fact} → {answer.memory_note or 'nothing written'}")
        writes += [{"target": w.target, "summary": w.summary} for w in answer.memory_writes]
    return writes


def _previous_writes(artifact: Path) -> list[str]:
    try:
        previous = json.loads(artifact.read_text(encoding="utf-8"))
        return [str(w["summary"]) for w in previous["demo"]["memory_writes"]]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def _weather(app: App, say: Any) -> bool:
    try:
        analysis = app.weather(WeatherRequest(city=WEATHER_PLACE, days=7))
    except WeatherError as exc:
        say(f"weather: {exc}")
        return False
    mean = analysis.analytics.temperature_mean
    say(
        f"weather: {analysis.place.label}, {len(analysis.daily)} days, mean "
        f"{'–' if mean is None else f'{mean:.1f}'} {analysis.units.temperature}; {analysis.explanation or ''}"
    )
    return bool(analysis.daily)
