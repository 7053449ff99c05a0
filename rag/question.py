"""One question on its way through the answer path: how it was asked, and what each stage found.

`AnswerPipeline.ask` (rag/pipeline.py) makes a `QuestionState`, the stages fill it in order (its
language, search query, retrieval, the evidence given, the reply's phrase line, the answer-or-abstain
decision), and `AssembleAnswer` (rag/answer_builder.py) reads it once the reply has streamed to decide
what the user is shown. Nothing else is passed from stage to stage.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from core.schemas import DocumentRequest, Given, GuardrailOutcome, Hit, MemoryFacts, MemoryOutcome, Retrieval
from providers.llm.base import QueueListener
from providers.llm.generation_queue import QueueWait
from rag.answer_format import Reply
from rag.answerability import Abstention, Strictness
from rag.messages import message

Timings = dict[str, float]
# progress(what, done, total): the section-by-section summary reports each section as it is done.
Progress = Callable[[str, int, int], None]
# section_done(sentences): each section's cited summary sentences as soon as they exist, so a long
# document's reader sees partial results long before the combined answer (each hit is one sentence,
# its chunk the passage it cites: source and page).
SectionDone = Callable[[list[Hit]], None]


def elapsed_ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)


def no_progress(what: str, done: int, total: int) -> None:
    """The default listener: nobody is watching."""


def no_section(sentences: list[Hit]) -> None:
    """The default listener for finished sections: nobody is reading along."""


@dataclass(frozen=True)
class AskOptions:
    """How one question is asked. None means the setting's value.

    `client_id` keys the rate limit (the app's browser session), else `session_id` does; `on_queued`
    hears the question's place while it waits for a busy model (0: its turn came); `strictness` is
    how readily an answer the documents may not state is withheld (RAGCHAT_STRICTNESS). A request
    about whole documents is scoped to `documents` (names the user selected) when given, else to the
    one it names, the only one, or the last of `recent_documents` (uploaded in this conversation);
    `on_progress` hears its section-by-section summary advance, and `on_section` reads each section's
    summary (cited sentences) as soon as it is written; `thorough` reads every section of a document too
    long to give whole before answering, instead of a few chosen passages (RAGCHAT_DOCUMENT_READING)."""

    session_id: str | None = None
    bm25_weight: float | None = None
    rerank: bool = True
    top_k: int | None = None
    client_id: str | None = None
    on_queued: QueueListener | None = None
    strictness: Strictness | None = None
    documents: tuple[str, ...] = ()
    recent_documents: tuple[str, ...] = ()
    on_progress: Progress | None = None
    on_section: SectionDone | None = None
    thorough: bool | None = None


# Which way the question went: stopped by a guardrail, a statement of facts for memory, answered from
# retrieved passages (or memory), or a request about whole documents.
Path = Literal["stopped", "noted", "passages", "documents"]


@dataclass
class QuestionState:
    """Everything known about one question, filled by the stages in order (see the module docstring)."""

    question: str
    options: AskOptions
    strictness: Strictness
    queue: QueueWait
    started: float = field(default_factory=time.perf_counter)
    timings: Timings = field(default_factory=dict)
    lang: str = "en"
    path: Path = "passages"
    guardrail: GuardrailOutcome | None = None  # path "stopped": why
    noted: MemoryOutcome = field(default_factory=MemoryOutcome)  # path "noted": what memory did
    memory: MemoryFacts = field(default_factory=MemoryFacts)  # the entries that may inform the answer
    search_query: str = ""  # the question, or its standalone rewrite
    translated: str = ""  # the search query in the documents' other languages, one a line (TranslateQuery)
    retrieval: Retrieval | None = None
    given: Given = field(default_factory=Given)  # what the model was given
    reply: Reply = field(default_factory=Reply)  # the reply's hidden phrase line, as it was read
    decision: Abstention | None = None  # answer or abstain, once the phrase line is read
    document_request: DocumentRequest | None = None  # path "documents": how it was answered
    clarify: str | None = None  # path "documents": the question asked back when the scope is unclear
    outline: str = ""  # path "documents": the reply's first line, the sections' list (not the model's words)

    def __post_init__(self) -> None:
        self.search_query = self.search_query or self.question

    @property
    def session_id(self) -> str | None:
        return self.options.session_id

    @property
    def refusal(self) -> str:
        """The refusal, in the question's language."""
        return message(self.lang, "refusal")
