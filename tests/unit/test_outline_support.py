"""The sections' list that opens an overview of a long document ("Zu seinen Abschnitten gehören:
Vorwort [1]; …") is written from the document's headings, not by the model: the support check leaves
it and its citations alone, in any language, and checks the model's sentences after it as before."""

from __future__ import annotations

from pathlib import Path

from core.schemas import Evidence, Given
from core.settings import get_settings
from providers.llm.generation_queue import QueueWait
from rag.pipeline import AskOptions
from rag.question import QuestionState
from tests.chunks import text_hit
from tests.pipeline_parts import build_pipeline
from tests.recording_llm import RecordingLLM

PASSAGES = [
    "Vorwort Dieses Skript wurde im Wintersemester 2013/2014 geschrieben.",
    "Was ist Topologie? Die Topologie untersucht Eigenschaften, die bei stetigen Verformungen erhalten bleiben.",
]


def test_the_outline_keeps_its_citations_and_the_models_sentences_are_checked(tmp_path: Path) -> None:
    llm = RecordingLLM("")
    pipeline = build_pipeline(get_settings(home=tmp_path), object(), lambda: llm)
    state = QuestionState("Worum geht es in diesem Dokument?", AskOptions(), "balanced", QueueWait())
    state.path, state.lang = "documents", "de"
    hits = [
        text_hit(text, chunk_id=f"c{n}", page=n, index=n, source="skript.pdf") for n, text in enumerate(PASSAGES, 1)
    ]
    state.given = Given(mode="sources", evidence=[Evidence(id=n, hit=hit) for n, hit in enumerate(hits, 1)])
    state.outline = "Zu seinen Abschnitten gehören: Vorwort [1]; Was ist Topologie [2]."
    invented = "Das Skript erklärt die Quantenmechanik der Sterne [2]."
    verdict = pipeline.assemble.verdict(state, f"{state.outline}\n\n{invented}", None)
    assert verdict.text.startswith(state.outline), verdict.text
    assert {c.marker for c in verdict.citations} == {1, 2}, "the outline's citations stay"
    assert "Sterne [2]" not in verdict.text, "the model's invented sentence loses its marker"
    assert [s.supported for s in verdict.support] == [False], "only the model's sentence is checked"
