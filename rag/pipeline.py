"""The answer path, assembled in one place and read top to bottom:

guard → (a message that only states facts → note facts) → route (a request about whole documents →
scope → the documents whole, or summarised section by section → the answer; rag/document_stages.py)
→ rewrite → retrieve (+ rerank) → select
evidence → decide answerability → build prompt → generate (streamed; the reply's hidden first line
decides answer or abstain before any of it is shown) → reject a degenerate reply → resolve citations →
check support (→ check answerability, an option: one more token, may withhold → restate an answer that does not
state its phrase) → assemble → record. The
question's language, detected first, is the answer's and the notices'.

Everything up to the prompt runs when `ask` is called; generation runs as the caller reads
`AnswerStream.tokens()`, and the stages after it run when the stream ends. The memory pass after an
answer belongs to the session (ragchat/session.py), not here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from core.language import LanguageDetector
from core.schemas import (
    AbstentionScore,
    Answer,
    DocumentRequest,
    Evidence,
    Given,
    GuardrailOutcome,
    MemoryFacts,
    MemoryOutcome,
    ModelInfo,
    Retrieval,
    SentenceSupport,
)
from core.settings import REFUSAL_TEXT, Settings
from providers.llm.base import LLM, ChatMessage, LLMError, QueueListener, Sampling
from providers.llm.generation_queue import QueueWait
from rag.answer_format import Reply, read_reply, says_not_covered, without_cjk
from rag.answerability import Abstention, Strictness
from rag.citations import CitationRules, is_refusal
from rag.context_budget import fit_hits
from rag.conversations import ConversationStore
from rag.document_stages import (
    ChooseScope,
    Progress,
    Read,
    ReadDocuments,
    RouteRequest,
    Scope,
    SectionDone,
    SummariseSections,
    no_progress,
    no_section,
)
from rag.evidence import Embed
from rag.guardrails import Guardrails
from rag.messages import memory_note, message
from rag.query_log import QueryLog
from rag.retriever import HybridRetriever
from rag.router import Route
from rag.stages import (
    Abstain,
    BuildPrompt,
    CheckAnswerability,
    CheckSupport,
    DecideAnswerability,
    Generate,
    Guard,
    MemoryPort,
    NoteFacts,
    Record,
    RejectDegenerate,
    ResolveCitations,
    RestateAnswer,
    Retrieve,
    Rewrite,
    SelectEvidence,
    Timings,
    elapsed_ms,
)
from rag.support import SupportChecker, confidence
from rag.whole_document import (
    DocumentSource,
    SectionSummaryCache,
    document_grammar,
    document_messages,
)

Finish = Callable[[str, str | None], Answer]


@dataclass(frozen=True)
class AskOptions:
    """How one question is asked. None means the setting's value.

    `client_id` keys the rate limit (the app's browser session), else `session_id` does; `on_queued`
    hears the question's place while it waits for a busy model (0: its turn came); `strictness` is
    how readily an answer the documents may not state is withheld (RAGCHAT_STRICTNESS). A request
    about whole documents is scoped to `documents` (names the user selected) when given, else to the
    one it names, the only one, or the last of `recent_documents` (uploaded in this conversation);
    `on_progress` hears its section-by-section summary advance, and `on_section` reads each section's
    summary (cited sentences) as soon as it is written."""

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


class AnswerStream:
    """Consume `tokens()` (e.g. with st.write_stream), then read `result()`."""

    def __init__(
        self,
        question: str,
        token_source: Iterator[str] | None,
        finish: Finish,
        messages: list[ChatMessage] | None = None,
        guardrail: GuardrailOutcome | None = None,
        refusal: str = REFUSAL_TEXT,
    ) -> None:
        self.question = question
        self._refusal = refusal  # the refusal in the question's language, when no model runs
        self.messages = messages or []  # the prompt sent to the model; empty when it was not asked
        self.guardrail = guardrail  # set when a guardrail stopped the question: show a notice, not a stream
        self._source = token_source
        self._finish = finish
        self._answer: Answer | None = None

    def tokens(self) -> Iterator[str]:
        if self._source is None:
            self._answer = self._finish(self._refusal, None)
            yield self._refusal
            return
        parts: list[str] = []
        error: str | None = None
        try:
            for token in self._source:
                parts.append(token)
                yield token
        except LLMError as exc:
            error = str(exc)
        self._answer = self._finish("".join(parts), error)

    def close(self) -> None:
        """Stop generating: the consumer left before the end (a Streamlit rerun). The model's slot is
        freed at once rather than when the garbage collector finds the abandoned generator."""
        close = getattr(self._source, "close", None)
        if close is not None:
            close()

    def result(self) -> Answer:
        if self._answer is None:
            for _ in self.tokens():
                pass
        assert self._answer is not None
        return self._answer


class AnswerPipeline:
    def __init__(
        self,
        settings: Settings,
        retriever: HybridRetriever,
        conversations: ConversationStore,
        llm: Callable[[], LLM],
        models: Callable[[], ModelInfo],
        guardrails: Guardrails,
        support: SupportChecker,
        query_log: QueryLog,
        embed: Embed,
        memory: MemoryPort | None = None,
        documents: DocumentSource | None = None,
        summaries: Callable[[], SectionSummaryCache] | None = None,
    ) -> None:
        """`llm` and `models` are called when needed (loading a model takes seconds); `memory` is None
        when memory is turned off; `documents` (the registry) and `summaries` (the section-summary
        cache) answer requests about whole documents, which without them go through retrieval."""
        self._settings = settings
        self._llm = llm
        self._documents = documents
        self._models = models
        self._memory = memory
        self.detect_language = LanguageDetector.from_settings(settings)
        self.guard = Guard(guardrails)
        self.note_facts = NoteFacts(memory)
        self.rewrite = Rewrite(llm, conversations, settings)
        self.retrieve = Retrieve(retriever)
        self.select_evidence = SelectEvidence(settings, embed)
        self.decide = DecideAnswerability(memory, settings.memory_answer_min_similarity)
        self.build_prompt = BuildPrompt()
        self.generate = Generate(llm, settings)
        self.abstain = Abstain(settings.answerability_check)
        self.check_answerability = CheckAnswerability(
            llm, settings.answerability_check, settings.answerability_check_top_logprobs
        )
        self.reject_degenerate = RejectDegenerate()
        self.restate = RestateAnswer(settings.restate_to_phrase)
        rules = CitationRules.from_settings(settings)
        self.resolve_citations = ResolveCitations(rules)
        self.check_support = CheckSupport(support, rules, settings.withhold_unsupported)
        self.record = Record(conversations, query_log)
        self.route = RouteRequest(embed, settings) if documents is not None and summaries is not None else None
        if documents is not None and summaries is not None:
            self.scope = ChooseScope(documents, settings.scope_every_threshold)
            self.read_documents = ReadDocuments(documents, settings)
            self.summarise = SummariseSections(llm, settings, summaries)

    def ask(self, question: str, options: AskOptions | None = None) -> AnswerStream:
        options = options or AskOptions()
        settings = self._settings
        started = time.perf_counter()
        timings: Timings = {}
        queue = QueueWait(options.on_queued)
        lang = self.detect_language(question)
        stopped = self.guard.run(question, options.client_id or options.session_id, lang)
        timings["guardrails_ms"] = elapsed_ms(started)
        if stopped is not None:
            return self._stopped(question, options.session_id, stopped, started, timings, lang)
        if self.note_facts.applies(question):
            return self._noted(question, options.session_id, started, timings, lang)
        route = self.route.run(question, timings) if self.route is not None else None
        scope: Scope | None = None
        if route is not None and self.route.sure(route):
            scope = self.scope.run(question, options.documents, options.recent_documents, lang, route.p_every)
            # Several documents and none chosen: a request across them ("which document mentions the
            # notice period?") is a search, answered from passages; asked back only if none matches.
            if not scope.several:
                return self._about_documents(question, route, scope, options, started, timings, queue, lang)
        memory = self._memory.context_for(question) if self._memory is not None else MemoryFacts()
        closeness = self.decide.memory_closeness(question, memory)
        personal = self.decide.personal(closeness)
        if route is not None and not personal and self.route.leans(route) and scope is None:
            scope = self.scope.run(question, options.documents, options.recent_documents, lang, route.p_every)
            whole = None if scope.clarify is not None else self.read_documents.whole(question, scope.documents)
            if whole is not None:
                return self._about_documents(question, route, scope, options, started, timings, queue, lang, whole)

        selected = self._selected(options.documents)
        if route is not None and selected is not None and not selected:  # none of the chosen names exists
            scope = self.scope.run(question, options.documents, options.recent_documents, lang, route.p_every)
            return self._about_documents(question, route, scope, options, started, timings, queue, lang)
        search_query = self.rewrite.run(question, options.session_id, queue, timings)
        weight = settings.bm25_weight if options.bm25_weight is None else options.bm25_weight
        query_lang = lang if search_query == question else self.detect_language(search_query)
        top_k = options.top_k or settings.top_k
        retrieval = self.retrieve.run(search_query, top_k, weight, options.rerank, query_lang, selected)
        timings["retrieve_ms"] = retrieval.timings_ms.get("search_ms", 0.0)
        if route is not None and not personal and self.route.unmatched(route, retrieval):
            # Never refused by the relevance gate: the documents themselves are the evidence.
            scope = scope or self.scope.run(question, options.documents, options.recent_documents, lang, route.p_every)
            return self._about_documents(question, route, scope, options, started, timings, queue, lang)
        evidence = self.select_evidence.run(question, search_query, retrieval, memory)
        given = self.decide.run(evidence, memory, closeness)

        strictness = options.strictness or settings.strictness
        reply = Reply()
        decision: list[Abstention] = []  # set by the grounded stream once it has read the phrase line
        refusal = message(lang, "refusal")

        def finish(text: str, error: str | None) -> Answer:
            abstained = bool(decision) and decision[0].refuse
            said_nothing = error is None and (not text.strip() or says_not_covered(text))
            refused = given.mode == "none" or abstained or said_nothing or (error is None and is_refusal(text))
            degenerate = None if refused else self.reject_degenerate.run(text, error)
            support: list[SentenceSupport] = []  # checked only for an answer from the evidence
            uncovered: str | None = None
            withheld: str | None = None
            restated: str | None = None
            if degenerate:
                answer_text, citations, refused = message(lang, "degenerate"), [], True
            elif refused:
                answer_text, citations = refusal, []
            elif error and not text.strip():
                answer_text, citations = message(lang, "model_failed", error=error), []
            elif given.mode == "memory":
                answer_text, citations = text.strip(), []  # memory is context, never a cited source
            else:
                uncovered = reply.uncovered(question, message(lang, "uncovered"))
                answer_text, citations = self.resolve_citations.run(text, given, self.generate.constrains())
                answer_text, citations, support = self.check_support.run(answer_text, citations, given, timings)
                unsupported = self.check_support.withholds(support)
                if decision and not unsupported:
                    decision[0] = self.check_answerability.run(
                        decision[0], question, search_query, given, strictness, timings, queue
                    )
                if unsupported or (decision and decision[0].refuse):
                    withheld, answer_text, citations, refused = answer_text, refusal, [], True
                else:
                    # Only an answer the evidence holds is restated: a withheld one stays withheld.
                    restated_text, restated = self.restate.run(text, reply, question, given)
                    if restated is not None:
                        answer_text, citations = self.resolve_citations.run(restated_text, given, constrained=True)
                        answer_text, citations, support = self.check_support.run(answer_text, citations, given, timings)
                    if uncovered:
                        answer_text = f"{answer_text} {uncovered}"
            answer = self._generated(
                question,
                options,
                started,
                timings,
                queue,
                support,
                search_query=search_query,
                answer=answer_text,
                refused=refused,
                citations=citations,
                abstention=_scored(decision, reply, strictness),
                uncovered=None if refused else uncovered,
                withheld=withheld,
                restated=None if refused else restated,
                models=self._models().model_copy(update={"reranker": retrieval.reranker}),
                error=error,
                incomplete=error is not None and bool(text.strip()) and not refused,
                given=given,
                candidates=retrieval.candidates,
                still_embedding=retrieval.still_embedding,
                memory_used=given.memory,
                degenerate=degenerate,
                language=lang,
            )
            return self.record.run(answer)

        if given.mode == "none":
            return AnswerStream(question, None, finish, refusal=refusal)
        messages = self.build_prompt.run(question, search_query, given, lang)
        if given.mode == "memory":
            stream = self.generate.run(messages, started, timings, queue)
            return AnswerStream(question, stream, finish, messages, refusal=refusal)
        grounded = self._grounded(
            messages, question, given, retrieval, strictness, reply, decision, started, timings, queue, lang
        )
        return AnswerStream(question, grounded, finish, messages, refusal=refusal)

    def _grounded(
        self,
        messages: list[ChatMessage],
        question: str,
        given: Given,
        retrieval: Retrieval,
        strictness: Strictness,
        reply: Reply,
        decision: list[Abstention],
        started: float,
        timings: Timings,
        queue: QueueListener,
        lang: str,
    ) -> Iterator[str]:
        """The answer's visible text, once the hidden phrase line said the evidence states it. When the
        abstention score reaches the strictness threshold, generation stops and nothing is shown: the
        stream's end gives the refusal."""
        sampling = self.generate.grounded(given, lang)
        tokens = self.generate.run_tokens(messages, sampling, started, timings, queue)
        label = self.generate.label()
        try:
            for token in read_reply(tokens, reply):
                if not decision:  # the phrase line is read: answer or refuse before the answer is written
                    decision.append(self.abstain.run(reply, question, given, retrieval, label, strictness))
                    if decision[0].refuse:
                        return
                if not token.text:
                    continue
                if "first_visible_ms" not in timings:  # the hidden phrase line came first
                    timings["first_visible_ms"] = elapsed_ms(started)
                yield token.text
        finally:
            close = getattr(tokens, "close", None)
            if close is not None:
                close()
        if not decision:  # the reply ended on its phrase line ("Phrase: NONE")
            decision.append(self.abstain.run(reply, question, given, retrieval, label, strictness))

    def _selected(self, names: tuple[str, ...]) -> frozenset[str] | None:
        """The ids of the documents the user chose (the app's picker, `ragchat ask --doc`), which a
        question's search is kept to; None when none was chosen (search everything)."""
        if not names or self._documents is None:
            return None
        return frozenset(d.doc_id for d in self._documents.all() if d.source in names)

    def _about_documents(
        self,
        question: str,
        route: Route,
        scope: Scope,
        options: AskOptions,
        started: float,
        timings: Timings,
        queue: QueueWait,
        lang: str,
        read: Read | None = None,
    ) -> AnswerStream:
        """The documents in scope whole (or their section summaries) as numbered evidence, or the
        question back when the scope is unclear; the answer streams in the form asked for, every
        sentence or bullet citing an excerpt. `read`: the documents' passages, when already read."""
        settings = self._settings
        info = DocumentRequest(
            p_document=round(route.p_document, 3), documents=[d.source for d in scope.documents], method="clarify"
        )
        given: list[Given] = []

        def finish(text: str, error: str | None) -> Answer:
            shown = given[0] if given else Given(mode="none")
            support: list[SentenceSupport] = []
            citations = []
            refused = False
            degenerate = None if scope.clarify is not None else self.reject_degenerate.run(text, error)
            if degenerate:
                answer_text, refused = message(lang, "degenerate"), True
            elif scope.clarify is not None:
                answer_text = scope.clarify
            elif error and not text.strip():
                answer_text = message(lang, "model_failed", error=error)
            elif not text.strip():
                answer_text, refused = message(lang, "refusal"), True
            else:
                # Among a whole document's passages a small model often cites a neighbour of the
                # one that holds the claim: markers are moved to it (rag/citations.py).
                answer_text, citations = self.resolve_citations.run(text, shown, constrained=False)
                answer_text, citations, support = self.check_support.run(answer_text, citations, shown, timings)
            answer = self._generated(
                question,
                options,
                started,
                timings,
                queue,
                support,
                search_query=question,
                answer=answer_text,
                refused=refused,
                citations=citations,
                document_request=info,
                models=self._models(),
                error=error,
                incomplete=error is not None and bool(text.strip()),
                given=shown,
                degenerate=degenerate,
                language=lang,
            )
            return self.record.run(answer)

        if scope.clarify is not None:
            return AnswerStream(question, iter([scope.clarify]), finish)
        read = read or self.read_documents.run(question, scope.documents)
        info.method = "whole" if read.fits else "sections"

        def stream() -> Iterator[str]:
            hits = read.passages
            if not read.fits:
                progress = options.on_progress or no_progress
                hits, info.sections, info.cached_sections = self.summarise.run(
                    hits, read.budget, progress, queue, timings, options.on_section or no_section
                )
                hits = fit_hits(hits, read.budget, settings.source_header_tokens)
            given.append(Given(mode="sources", evidence=[Evidence(id=n, hit=h) for n, h in enumerate(hits, 1)]))
            if not hits:  # no text in the documents (a scan without OCR)
                return
            form = route.form
            most = settings.document_list_items if form.bullets == 0 else settings.answer_max_sentences
            messages = document_messages(question, hits, form, most, lang)
            ids = list(range(1, len(hits) + 1))
            no_cjk = without_cjk(lang, (hit.chunk.lang for hit in hits))
            grammar = document_grammar(ids, form, most, no_cjk) if self._llm().constrains else None
            sampling = Sampling(
                max_tokens=settings.document_answer_tokens, temperature=settings.llm_temperature, grammar=grammar
            )
            for token in self.generate.run_tokens(messages, sampling, started, timings, queue):
                yield token.text

        return AnswerStream(question, stream(), finish)

    def _generated(
        self,
        question: str,
        options: AskOptions,
        started: float,
        timings: Timings,
        queue: QueueWait,
        support: list[SentenceSupport],
        **fields: Any,
    ) -> Answer:
        """The Answer of a reply the model generated (from passages or whole documents): its
        confidence from the support check, its queue wait and total time, and `fields`."""
        score = confidence(support)
        timings["queue_wait_ms"] = round(queue.seconds * 1000, 1)
        timings["total_ms"] = elapsed_ms(started)
        return Answer(
            question=question,
            session_id=options.session_id,
            confidence=score,
            low_confidence=score is not None and score < self._settings.low_confidence_threshold,
            support=support,
            timings_ms=timings,
            **fields,
        )

    def _stopped(
        self,
        question: str,
        session_id: str | None,
        outcome: GuardrailOutcome,
        started: float,
        timings: Timings,
        lang: str,
    ) -> AnswerStream:
        """A question a guardrail stopped: the notice is the reply, nothing was retrieved or generated."""

        def finish(text: str, error: str | None) -> Answer:
            timings["total_ms"] = elapsed_ms(started)
            answer = Answer(
                question=question,
                search_query=question,
                session_id=session_id,
                answer=outcome.message,
                refused=True,
                guardrail=outcome,
                language=lang,
                timings_ms=timings,
                models=self._models(),
            )
            return self.record.run(answer)

        return AnswerStream(question, iter([outcome.message]), finish, guardrail=outcome)

    def _noted(self, message: str, session_id: str | None, started: float, timings: Timings, lang: str) -> AnswerStream:
        """The memory graph runs as the stream is read; its note is the reply."""
        outcome = MemoryOutcome()

        def run_graph() -> Iterator[str]:
            nonlocal outcome
            try:
                outcome = self.note_facts.run(message, session_id, timings, lang)
            except Exception as exc:  # a locked or unwritable memory file: say so, lose nothing else
                raise LLMError(f"memory could not be updated: {exc}") from exc
            yield memory_note(outcome, lang)

        def finish(text: str, error: str | None) -> Answer:
            timings["total_ms"] = elapsed_ms(started)
            answer = Answer(
                question=message,
                search_query=message,
                session_id=session_id,
                answer=text or f"Nothing was remembered: {error}",
                refused=False,
                memory_writes=outcome.writes,
                memory_note=memory_note(outcome, lang),
                timings_ms=timings,
                models=self._models(),
                error=error,
                language=lang,
            )
            return self.record.run(answer)

        return AnswerStream(message, run_graph(), finish)


def _scored(decision: list[Abstention], reply: Reply, strictness: str) -> AbstentionScore | None:
    if not decision:
        return None
    made = decision[0]
    return AbstentionScore(
        score=made.score,
        threshold=made.threshold,
        strictness=strictness,
        calibrated=made.calibrated,
        phrase=reply.phrase,
        signals=made.signals,
    )
