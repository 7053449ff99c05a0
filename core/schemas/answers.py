"""One question's answer: citations, support checks, guardrail notices, and the query log's rows."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, computed_field

from core.schemas.memory import MemoryFacts, MemoryWrite
from core.schemas.models import ModelInfo
from core.schemas.retrieval import Hit, Scores, StillEmbedding


class Citation(BaseModel):
    """A checkable pointer from an answer to the chunk that supports it."""

    marker: int = Field(description="The [n] the answer uses for this source.")
    source: str
    page: int | None = Field(default=None, description="A PDF's page; None for TXT and Markdown (see locator).")
    chunk_id: str
    locator: str = Field(description="Where the passage is: page, section heading, lines (text files).")
    snippet: str
    char_start: int | None = Field(default=None, description="The cited passage's offsets in its page's text.")
    char_end: int | None = None
    method: Literal["marker", "support", "corrected"] = Field(
        default="marker",
        description="marker: the model wrote [n]; support: the model cited nothing and the chunk "
        "was attributed by word overlap with the answer; corrected: the model cited another source, "
        "which lacks the sentence's figures or words that this one holds.",
    )
    cited_as: int | None = Field(default=None, description="The source number the model wrote, when corrected.")


class SentenceSupport(BaseModel):
    """One sentence of an answer, checked against the chunks it cites (rag/support.py)."""

    sentence: str
    supported: bool
    score: float = Field(ge=0.0, le=1.0, description="How well the sources cover the sentence, 0 to 1.")
    overlap: float = Field(description="Share of the sentence's terms (stemmed, no stopwords) found in its sources.")
    similarity: float | None = Field(
        default=None, description="Best cosine similarity to one sentence of its sources (None: not embedded)."
    )
    missing: list[str] = Field(
        default_factory=list, description="Numbers and names in the sentence that its sources do not contain."
    )
    sources: list[int] = Field(default_factory=list, description="The [n] of the chunks it was checked against.")


class GuardrailOutcome(BaseModel):
    """Why a question was stopped before retrieval (rag/guardrails.py)."""

    rule: Literal["length", "injection", "rate_limit"]
    message: str = Field(description="The calm notice the user sees, which says what to do.")
    retry_after_s: float | None = Field(default=None, description="rate_limit: seconds until a question is accepted.")


class AbstentionScore(BaseModel):
    """The answer-or-abstain decision (rag/answerability.py)."""

    score: float | None = Field(description="P(the documents do not state the answer), 0 to 1; None: not scored.")
    threshold: float = Field(description="The strictness level's threshold: at or above it, the answer is withheld.")
    strictness: str
    calibrated: bool = Field(description="Whether the threshold was calibrated for the model that answered.")
    phrase: str | None = Field(default=None, description="The answer phrase the model copied from the evidence.")
    signals: dict[str, float] | None = Field(
        default=None, description="What the score was computed from (rag/answerability.py SIGNALS)."
    )
    read: Literal["phrase", "yes_no"] = Field(
        default="phrase",
        description="How the question was read: the model's hidden answer phrase, or for a yes/no question one "
        "token (Yes, No or NONE) over the sentence that settles it; then `score` is NONE's share and `signals` "
        "holds p_yes, p_no and p_none (rag/polar_answer.py).",
    )


class Evidence(BaseModel):
    """One numbered source in the prompt: the model cites it as [id]."""

    id: int = Field(ge=1)
    hit: Hit


class Given(BaseModel):
    """Exactly what the answering model was given, in prompt order: the memory block, then the
    numbered evidence. mode says which prompt ran: sources, memory only, or none (not asked)."""

    mode: Literal["sources", "memory", "none"] = "none"
    memory: MemoryFacts = Field(default_factory=MemoryFacts)
    evidence: list[Evidence] = Field(default_factory=list)

    @property
    def hits(self) -> list[Hit]:
        return [item.hit for item in self.evidence]


class DocumentRequest(BaseModel):
    """How a request about whole documents was answered (rag/document_stages.py)."""

    p_document: float = Field(description="The router's P(the request is about whole documents).")
    documents: list[str] = Field(default_factory=list, description="The documents in scope.")
    method: Literal["whole", "chosen", "sections", "card", "extracted", "clarify"] = Field(
        description="whole: every passage given; extracted: every date, figure or name found in the text, "
        "each with its sentence (rag/extraction.py); card: the document's overview written before it was asked "
        "for (rag/document_cards.py); chosen: a few passages chosen from its structure and its "
        "vectors (a long document, read fast); sections: summarised section by section, then combined "
        "(read thoroughly); clarify: the scope was unclear, and the reply asks which documents."
    )
    sections: int = Field(default=0, description="Sections summarised (map steps), cached ones included.")
    cached_sections: int = Field(default=0, description="Section summaries read from the cache.")
    stored: bool = Field(
        default=False,
        description="The reply was the one kept when the same request was answered over the same document "
        "versions before (rag/stored_answers.py), not written again.",
    )

    def describe(self) -> str:
        """How the documents were read, in a few words for the user ("given whole", "read fast: …")."""
        how = {
            "whole": "given whole",
            "chosen": "read fast, from passages chosen across it",
            "sections": f"summarised in {self.sections} sections",
            "card": "answered from its card",
            "extracted": "every item found in its text",
            "clarify": "which documents?",
        }[self.method]
        if self.cached_sections:
            how += f", {self.cached_sections} from the cache"
        return how + (", the answer kept from when it was asked before" if self.stored else "")


class Answer(BaseModel):
    """The result of one question, in the `ragchat ask --json` shape."""

    question: str
    search_query: str = Field(description="What was searched: the question, or its standalone rewrite.")
    translated_query: str | None = Field(
        default=None,
        description="Also searched: the search query in the other languages of the documents (one a line).",
    )
    session_id: str | None = None
    answer: str
    refused: bool
    citations: list[Citation] = Field(default_factory=list)
    memory_writes: list[MemoryWrite] = Field(default_factory=list)
    memory_note: str | None = Field(default=None, description="What the memory graph did with this turn, in words.")
    memory_used: MemoryFacts = Field(
        default_factory=MemoryFacts, description="Memory entries given to the model as context (never cited)."
    )
    confidence: float | None = Field(
        default=None,
        description="How well the cited sources support the answer, 0 to 1 (None: nothing to check, e.g. a "
        "refusal, a memory answer or a guardrail notice).",
    )
    low_confidence: bool = Field(default=False, description="confidence is below RAGCHAT_LOW_CONFIDENCE_THRESHOLD.")
    abstention: AbstentionScore | None = Field(
        default=None, description="Whether the documents state the answer, as the model read them (None: not scored)."
    )
    uncovered: str | None = Field(
        default=None,
        description="A partial answer's closing sentence: the part of the question the documents do not cover.",
    )
    withheld: str | None = Field(
        default=None,
        description="The model's reply when none of its sentences was found in the evidence it cited "
        "(RAGCHAT_WITHHOLD_UNSUPPORTED): the answer is then the refusal, uncited, and this is shown apart.",
    )
    restated: str | None = Field(
        default=None,
        description="The model's answer when it did not state the answer phrase it had copied from the evidence "
        "(RAGCHAT_RESTATE_TO_PHRASE): the answer is then the evidence sentence that states it; this is shown apart.",
    )
    degenerate: str | None = Field(
        default=None,
        description="Why the model's reply was not shown (only whitespace, citation marks without text, a loop): "
        "the answer is then a notice, refused and uncited.",
    )
    language: str = Field(
        default="en", description="The question's language (ISO 639-1): the answer and the notices are in it."
    )
    support: list[SentenceSupport] = Field(
        default_factory=list, description="Each checked sentence of the answer and whether its sources support it."
    )
    guardrail: GuardrailOutcome | None = Field(
        default=None, description="Set when a guardrail stopped the question before retrieval."
    )
    document_request: DocumentRequest | None = Field(
        default=None, description="Set when the request was about whole documents, not one passage."
    )
    still_embedding: list[StillEmbedding] = Field(
        default_factory=list,
        description="Documents the search could only match by keyword: their semantic index is still being built.",
    )
    timings_ms: dict[str, float] = Field(default_factory=dict)
    models: ModelInfo
    error: str | None = Field(default=None, description="Why the model stopped early, if it did.")
    incomplete: bool = Field(
        default=False,
        description="The model stopped before finishing (error says why): answer is the partial text it wrote.",
    )
    given: Given = Field(default_factory=Given, exclude=True, description="What the model was given.")
    candidates: list[Hit] = Field(
        default_factory=list, exclude=True, description="Every chunk retrieval considered, in final order."
    )

    # In `ask --json`, for scripts that only want the flagged sentences. The ignore: mypy does not type a
    # decorated @property (python/mypy#1362); pydantic's documentation prescribes this one.
    @computed_field  # type: ignore[prop-decorator]
    @property
    def unsupported_sentences(self) -> list[str]:
        return [s.sentence for s in self.support if not s.supported]


class LoggedChunk(BaseModel):
    """A retrieval candidate as the query log keeps it: where it is and how it scored, no text."""

    chunk_id: str
    source: str
    page: int | None = Field(default=None, description="A PDF's page; None for TXT and Markdown.")
    scores: Scores
    given: bool = Field(description="Whether the chunk went into the model's prompt.")


class QueryLogEntry(BaseModel):
    """One row of the query log (rag/query_log.py); every text field is masked before it is written."""

    id: int
    at: datetime
    session_id: str | None
    question: str
    search_query: str
    answer: str
    refused: bool
    guardrail: Literal["length", "injection", "rate_limit"] | None
    confidence: float | None
    low_confidence: bool
    unsupported: int = Field(description="How many answer sentences its sources did not support.")
    retrieved: list[LoggedChunk]
    citations: list[Citation]
    models: ModelInfo
    timings_ms: dict[str, float]
    error: str | None = None
