"""The last stage of every question: the reply becomes the `Answer` the user is shown.

This is the one place where an answer is finally given, refused or withheld (`verdict`). A reply from
retrieved passages is refused when nothing was given, the hidden phrase line abstained, or the model
said it does not know; it is replaced by a notice when it is degenerate or the model failed; otherwise
its citations are resolved and each sentence checked against its evidence, and it is withheld when no
sentence is held by it or the answerability check (an option) finds it unanswerable. An answer that
does not state the phrase the model copied from the evidence is restated as the evidence sentence
that does. A request about whole documents goes through the same citation and support checks, and a
guardrail's notice or a memory note is shown as it is.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from core.schemas import AbstentionScore, Answer, Citation, ModelInfo, SentenceSupport
from rag.answer_format import says_not_covered
from rag.citations import is_refusal, markers_in
from rag.messages import memory_note, message
from rag.prompting import EXAMPLE_ANSWER
from rag.question import QuestionState, elapsed_ms
from rag.quote_check import CheckQuotation
from rag.quotes import quoted
from rag.stages import AnchorAnswer, CheckAnswerability, CheckSupport, Record, RejectDegenerate, ResolveCitations
from rag.support import confidence


@dataclass
class Verdict:
    """What a reply becomes: the text shown, whether it is a refusal, and what was checked on the way."""

    text: str
    refused: bool = False
    citations: list[Citation] = field(default_factory=list)
    support: list[SentenceSupport] = field(default_factory=list)
    withheld: str | None = None  # the model's reply, when no sentence of it was held by its evidence
    restated: str | None = None  # the model's reply, when the evidence sentence stating its phrase replaced it
    uncovered: str | None = None  # the closing sentence for what the documents do not cover
    degenerate: str | None = None  # why the reply was not shown


class AssembleAnswer:
    """Reads the question's state and the streamed reply, decides (`verdict`), and records the Answer."""

    def __init__(
        self,
        resolve_citations: ResolveCitations,
        check_support: CheckSupport,
        check_answerability: CheckAnswerability,
        anchor: AnchorAnswer,
        reject_degenerate: RejectDegenerate,
        record: Record,
        models: Callable[[], ModelInfo],
        constrained: Callable[[], bool],
        low_confidence_threshold: float,
        check_quotation: CheckQuotation | None = None,
    ) -> None:
        """`constrained` says whether the model's citation markers were forced to name given evidence;
        `check_quotation`: a reply its evidence does not hold is replaced by a quotation of the
        evidence that states its phrase, when one does and the check accepts it, instead of being
        withheld (None: always withheld)."""
        self._resolve = resolve_citations
        self._support = check_support
        self._check = check_answerability
        self._anchor = anchor
        self._degenerate = reject_degenerate
        self._record = record
        self._models = models
        self._constrained = constrained
        self._low_confidence = low_confidence_threshold
        self._check_quotation = check_quotation

    def run(self, state: QuestionState, text: str, error: str | None) -> Answer:
        """`text`: the reply as streamed; `error`: why the model stopped early, if it did."""
        if state.path == "stopped":
            answer = self._notice(state, refused=True)
        elif state.path == "noted":
            answer = self._notice(state, refused=False, text=text, error=error)
        else:
            answer = self._generated(state, self.verdict(state, text, error), text, error)
        return self._record.run(answer)

    def verdict(self, state: QuestionState, text: str, error: str | None) -> Verdict:
        """Given, refused or withheld: decided here, for every reply a model wrote."""
        if state.path == "documents":
            return self._about_documents(state, text, error)
        abstained = state.decision is not None and state.decision.refuse
        said_nothing = error is None and (not text.strip() or says_not_covered(text) or is_refusal(text))
        if state.given.mode == "none" or abstained or said_nothing:
            return Verdict(state.refusal, refused=True)
        if degenerate := self._degenerate.run(text, error):
            return Verdict(message(state.lang, "degenerate"), refused=True, degenerate=degenerate)
        if error and not text.strip():
            return Verdict(message(state.lang, "model_failed", error=error))
        if state.given.mode == "memory":
            return Verdict(text.strip())  # memory is context, never a cited source
        return self._from_evidence(state, text)

    def _from_evidence(self, state: QuestionState, text: str) -> Verdict:
        """Citations resolved and checked sentence by sentence; withheld when the evidence holds none of
        it or the answerability check finds the question unanswerable; else restated if it must be."""
        uncovered = state.reply.uncovered(state.question, message(state.lang, "uncovered"))
        shown, citations = self._resolve.run(text, state.given, self._constrained())
        shown, citations, support = self._support.run(
            shown, citations, state.given, state.timings, state.lang, asked=_asked(state)
        )
        unsupported = self._support.withholds(support)
        if state.decision is not None and not unsupported:
            state.decision = self._check.run(state, state.decision)
        if state.decision is not None and state.decision.refuse:
            return Verdict(state.refusal, refused=True, support=support, withheld=apart(shown))
        if unsupported:
            if (quote := self._checked_quotation(state)) is None:
                return Verdict(state.refusal, refused=True, support=support, withheld=apart(shown))
            return self._quoted(state, quote, text.strip(), uncovered)
        verdict = Verdict(shown, citations=citations, support=support, uncovered=uncovered)
        anchored, restated = self._anchor.run(text, state.reply, state.question, state.given, state.lang)
        if restated is not None:  # only an answer the evidence holds is anchored (unless quoted above)
            verdict = self._quoted(state, anchored, restated, uncovered)
        if uncovered:
            verdict.text = f"{verdict.text} {uncovered}"
        return verdict

    def _checked_quotation(self, state: QuestionState) -> str | None:
        """The quotation of the sentence that states the withheld reply's phrase, when the quotation
        check accepts it; its P(NONE) joins the decision's signals (`quote_p_none`)."""
        if self._check_quotation is None:  # off: the sentence is not even looked for
            return None
        found = self._anchor.quotation(state.reply, state.question, state.given)
        if found is None:
            return None
        started = time.perf_counter()
        p_none = self._check_quotation.p_none(state.question, found[1], state.queue)
        state.timings["quote_check_ms"] = elapsed_ms(started)
        if p_none is not None and state.decision is not None:
            signals = {**(state.decision.signals or {}), "quote_p_none": p_none}
            state.decision = replace(state.decision, signals=signals)
        return quoted(message(state.lang, "quote_opening"), *found) if self._check_quotation.accepts(p_none) else None

    def _quoted(self, state: QuestionState, quote: str, replaced: str, uncovered: str | None) -> Verdict:
        """A quotation of the evidence in place of the model's text, its citation checked like any."""
        shown, citations = self._resolve.run(quote, state.given, constrained=True)
        shown, citations, support = self._support.run(
            shown, citations, state.given, state.timings, state.lang, asked=_asked(state)
        )
        return Verdict(shown, citations=citations, support=support, restated=replaced, uncovered=uncovered)

    def _about_documents(self, state: QuestionState, text: str, error: str | None) -> Verdict:
        """The question asked back, or the answer over whole documents with its citations checked.
        Among a whole document's passages a small model often cites a neighbour of the one that holds
        the claim: markers are moved to it (rag/citations.py)."""
        if state.clarify is not None:
            return Verdict(state.clarify)
        extracted = state.document_request is not None and state.document_request.method == "extracted"
        # A list found in the text ("- 3.6 V [2]") is not a model's reply: items may be bare figures.
        if not extracted and (degenerate := self._degenerate.run(text, error)):
            return Verdict(message(state.lang, "degenerate"), refused=True, degenerate=degenerate)
        if error and not text.strip():
            return Verdict(message(state.lang, "model_failed", error=error))
        if not text.strip():
            return Verdict(state.refusal, refused=True)
        shown, citations = self._resolve.run(text, state.given, constrained=False)
        # The sections' list that opens an overview comes from the documents' headings, each cited to its
        # passage: not a claim of the model's to check (in German its words are not the headings').
        outline = state.outline
        lead, shown = (outline, shown[len(outline) :]) if outline and shown.startswith(outline) else ("", shown)
        in_lead = set(markers_in(lead))
        listed = [c for c in citations if c.marker in in_lead]
        shown, citations, support = self._support.run(
            shown, citations, state.given, state.timings, state.lang, about_documents=True
        )
        kept = {c.marker for c in citations}
        citations = [*(c for c in listed if c.marker not in kept), *citations]  # the outline comes first
        return Verdict(lead + shown, citations=citations, support=support)

    def _generated(self, state: QuestionState, verdict: Verdict, text: str, error: str | None) -> Answer:
        """The Answer of a reply a model wrote: its confidence from the support check, its queue wait
        and total time, and what the question's path adds."""
        score = confidence(verdict.support)
        state.timings["queue_wait_ms"] = round(state.queue.seconds * 1000, 1)
        state.timings["total_ms"] = elapsed_ms(state.started)
        return Answer(
            question=state.question,
            session_id=state.session_id,
            answer=verdict.text,
            refused=verdict.refused,
            citations=verdict.citations,
            confidence=score,
            low_confidence=score is not None and score < self._low_confidence,
            support=verdict.support,
            abstention=_scored(state),
            uncovered=None if verdict.refused else verdict.uncovered,
            withheld=verdict.withheld,
            restated=None if verdict.refused else verdict.restated,
            degenerate=verdict.degenerate,
            error=error,
            incomplete=error is not None and bool(text.strip()) and not verdict.refused,
            given=state.given,
            language=state.lang,
            timings_ms=state.timings,
            **self._path_fields(state),
        )

    def _path_fields(self, state: QuestionState) -> dict[str, Any]:
        """What differs between an answer from passages and one about whole documents."""
        if state.path == "documents" or state.retrieval is None:
            return {
                "search_query": state.question,
                "document_request": state.document_request,
                "models": self._models(),
            }
        retrieval = state.retrieval
        return {
            "search_query": state.search_query,
            "translated_query": state.translated or None,
            "models": self._models().model_copy(update={"reranker": retrieval.reranker}),
            "candidates": retrieval.candidates,
            "still_embedding": retrieval.still_embedding,
            "memory_used": state.given.memory,
        }

    def _notice(self, state: QuestionState, refused: bool, text: str = "", error: str | None = None) -> Answer:
        """A guardrail's notice (nothing retrieved or generated) or what memory noted of a statement."""
        state.timings["total_ms"] = elapsed_ms(state.started)
        note = None if state.guardrail is not None else memory_note(state.noted, state.lang)
        shown = state.guardrail.message if state.guardrail is not None else text or f"Nothing was remembered: {error}"
        return Answer(
            question=state.question,
            search_query=state.question,
            session_id=state.session_id,
            answer=shown,
            refused=refused,
            guardrail=state.guardrail,
            memory_writes=state.noted.writes,
            memory_note=note,
            language=state.lang,
            timings_ms=state.timings,
            models=self._models(),
            error=error,
        )


def _scored(state: QuestionState) -> AbstentionScore | None:
    made = state.decision
    if made is None:
        return None
    return AbstentionScore(
        score=made.score,
        threshold=made.threshold,
        strictness=state.strictness,
        calibrated=made.calibrated,
        phrase=state.reply.phrase,
        signals=made.signals,
        read=made.read,
    )


def _asked(state: QuestionState) -> str:
    """The question, with its standalone rewrite when it was a follow-up."""
    rewritten = state.search_query
    return state.question if not rewritten or rewritten == state.question else f"{state.question}\n{rewritten}"


def apart(reply: str) -> str | None:
    """A withheld reply, shown apart from the refusal; not when it copies the prompt's worked example."""
    return None if EXAMPLE_ANSWER.lower() in reply.lower() else reply
