"""The answer path, assembled in one place and read top to bottom:

guard → (a message that only states facts → note facts) → route (a request about whole documents →
scope → the documents whole, or summarised section by section → the answer; rag/document_stages.py)
→ rewrite → retrieve (+ rerank) → select evidence → choose the source (evidence, memory or nothing)
→ build prompt → generate (streamed; the reply's hidden first line is scored, and the answer is
abstained from before any of it is shown) → assemble the Answer (rag/answer_builder.py: reject a
degenerate reply → resolve citations → check support → check answerability, an option → restate an
answer that does not state its phrase) → record. The question's language, detected first, is the
answer's and the notices'.

One `QuestionState` (rag/question.py) carries the question through: the stages read it and fill it.
Everything up to the prompt runs when `ask` is called; generation runs as the caller reads
`AnswerStream.tokens()`, and the assembling stage runs when the stream ends. The memory pass after an
answer belongs to the session (ragchat/session.py), not here. The `Retrieve` stage is the one door
into retrieval: `ask` and `ragchat search` (Session.search) both come through it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

from core.language import LanguageDetector
from core.schemas import Answer, DocumentRecord, DocumentRequest, Evidence, Given, Hit, MemoryFacts, ModelInfo
from core.settings import Settings
from providers.llm.base import LLM, ChatMessage, LLMError, Sampling
from providers.llm.generation_queue import QueueWait
from rag.answer_builder import AssembleAnswer
from rag.answer_format import without_cjk
from rag.citations import CitationRules
from rag.context_budget import fit_hits
from rag.conversations import ConversationStore
from rag.degenerate import worth_keeping
from rag.document_cards import CARD_LANGUAGE, CARD_REQUEST, DocumentCard, DocumentCards, UseCards
from rag.document_stages import (
    ChoosePassages,
    ChooseScope,
    DocumentVectors,
    ListItems,
    Read,
    ReadDocuments,
    RouteRequest,
    Scope,
    SummariseSections,
)
from rag.evidence import Embed
from rag.guardrails import Guardrails
from rag.messages import memory_note, message
from rag.overview import opening_count, outline_line
from rag.polar import is_polar
from rag.polar_answer import AnswerYesNo
from rag.query_log import QueryLog
from rag.question import AskOptions, QuestionState, elapsed_ms, no_progress, no_section
from rag.quote_check import CheckQuotation
from rag.retriever import HybridRetriever
from rag.router import Form, Route
from rag.stages import (
    AnchorAnswer,
    BuildPrompt,
    CheckAnswerability,
    CheckSupport,
    ChooseSource,
    Generate,
    Guard,
    MemoryPort,
    NoteFacts,
    Record,
    RejectDegenerate,
    ResolveCitations,
    Retrieve,
    Rewrite,
    ScoreAbstention,
    SearchOptions,
    SelectEvidence,
    TranslateQuery,
    WriteFromEvidence,
)
from rag.stored_answers import StoredAnswers
from rag.support import SupportChecker
from rag.whole_document import (
    DocumentSource,
    Opening,
    SectionSummaryCache,
    document_grammar,
    document_messages,
    opening_prompt,
    sentence_limit,
)

__all__ = ["AnswerPipeline", "AnswerStream", "AskOptions"]


class AnswerStream:
    """Consume `tokens()` (e.g. with st.write_stream), then read `result()`."""

    def __init__(
        self,
        state: QuestionState,
        token_source: Iterator[str] | None,
        assemble: AssembleAnswer,
        messages: list[ChatMessage] | None = None,
    ) -> None:
        """`token_source` None: no model runs, and the refusal is the reply."""
        self.question = state.question
        self.messages = messages or []  # the prompt sent to the model; empty when it was not asked
        self.guardrail = state.guardrail  # set when a guardrail stopped the question: show a notice, not a stream
        self._state = state
        self._source = token_source
        self._assemble = assemble
        self._answer: Answer | None = None

    def tokens(self) -> Iterator[str]:
        if self._source is None:
            self._answer = self._assemble.run(self._state, self._state.refusal, None)
            yield self._state.refusal
            return
        parts: list[str] = []
        error: str | None = None
        try:
            for token in self._source:
                parts.append(token)
                yield token
        except LLMError as exc:
            error = str(exc)
        self._answer = self._assemble.run(self._state, "".join(parts), error)

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
        vectors: Callable[[], DocumentVectors] | None = None,
        cards: Callable[[], DocumentCards] | None = None,
        stored: Callable[[], StoredAnswers] | None = None,
    ) -> None:
        """`llm` and `models` are called when needed (loading a model takes seconds); `memory` is None
        when memory is turned off; `documents` (the registry) and `summaries` (the section-summary
        cache) answer requests about whole documents, which without them go through retrieval;
        `vectors` (the vector store) lets a long document be read fast, from chosen passages, and
        `cards` keeps each document's overview (its card) to answer a request for one at once, and
        `stored` every answer about whole documents, for the same request asked again."""
        self._settings = settings
        self._llm = llm
        self._documents = documents
        self._memory = memory
        self._models = models
        self.detect_language = LanguageDetector.from_settings(settings)
        self.guard = Guard(guardrails)
        self.note_facts = NoteFacts(memory)
        self.rewrite = Rewrite(llm, conversations, settings)
        self.retrieve = Retrieve(retriever, settings, self.detect_language)
        self.translate = TranslateQuery(llm, self.retrieve, lambda doc_ids: retriever.languages(doc_ids), settings)
        self.select_evidence = SelectEvidence(settings, embed)
        self.choose_source = ChooseSource(memory, settings.memory_answer_min_similarity)
        self.build_prompt = BuildPrompt()
        self.generate = Generate(llm, settings)
        self.write_from_evidence = WriteFromEvidence(self.generate, ScoreAbstention(settings.answerability_check))
        self.answer_yes_no = AnswerYesNo(
            llm,
            embed,
            settings.evidence_lexical_weight,
            settings.polar_none_share,
            (settings.polar_yes_below, settings.polar_no_from),
            settings.polar_sentences,
        )
        self.check_answerability = CheckAnswerability(
            llm, settings.answerability_check, settings.answerability_check_top_logprobs
        )
        rules = CitationRules.from_settings(settings)
        self.assemble = AssembleAnswer(
            ResolveCitations(rules),
            CheckSupport(support, rules, settings.withhold_unsupported, settings.document_joint_support),
            self.check_answerability,
            AnchorAnswer(settings.restate_to_phrase),
            RejectDegenerate(),
            Record(conversations, query_log),
            models,
            self.generate.constrains,
            settings.low_confidence_threshold,
            CheckQuotation(llm, settings.quote_none_share, settings.answerability_check_top_logprobs)
            if settings.quote_unsupported
            else None,
        )
        self.route = RouteRequest(embed, settings) if documents is not None and summaries is not None else None
        if documents is not None and summaries is not None:
            self.scope = ChooseScope(documents, settings.scope_every_threshold)
            self.read_documents = ReadDocuments(documents, settings)
            self.summarise = SummariseSections(llm, settings, summaries)
        self.list_items = ListItems(documents, self.retrieve, settings) if documents is not None else None
        self.choose = ChoosePassages(vectors, embed, settings) if vectors is not None else None
        self.cards = UseCards(cards, settings.card_threshold) if cards is not None else None
        self.stored = stored

    def ask(self, question: str, options: AskOptions | None = None) -> AnswerStream:
        options = options or AskOptions()
        state = QuestionState(
            question, options, options.strictness or self._settings.strictness, QueueWait(options.on_queued)
        )
        state.lang = self.detect_language(question)
        state.guardrail = self.guard.run(question, options.client_id or options.session_id, state.lang)
        state.timings["guardrails_ms"] = elapsed_ms(state.started)
        if state.guardrail is not None:
            state.path = "stopped"
            return AnswerStream(state, iter([state.guardrail.message]), self.assemble)
        if self.note_facts.applies(question):
            return self._noted(state)
        router = self.route
        follows_up = partial(self.rewrite.follows_up, options.session_id)
        route = router.run(question, state.timings, follows_up) if router is not None else None
        scope: Scope | None = None
        if route is not None and router is not None and router.sure(route):
            scope = self._scope(state, route)
            # Several documents and none chosen: a request across them ("which document mentions the
            # notice period?") is a search, answered from passages; asked back only if none matches.
            # One that names nothing ("what is this?") has nothing to search for: asked back at once.
            if not scope.several or route.subjectless:
                return self._about_documents(state, route, scope)
        state.memory = self._memory.context_for(question, state.lang) if self._memory is not None else MemoryFacts()
        closeness = self.choose_source.memory_closeness(question, state.memory, state.lang)
        personal = self.choose_source.personal(closeness)
        chosen = bool(options.documents)
        if route is not None and router is not None and not personal and router.leans(route, chosen) and scope is None:
            # Read whole when the documents fit the prompt, or fast (chosen passages) when they do not;
            # reading every section first is too slow to risk on a request that only leans this way.
            scope = self._scope(state, route)
            read = None if scope.clarify is not None else self._read(state, scope.documents, thorough=False)
            if read is not None:
                return self._about_documents(state, route, scope, read)
        selected = self._selected(options.documents)
        if route is not None and selected is not None and not selected:  # none of the chosen names exists
            return self._about_documents(state, route, self._scope(state, route))
        state.search_query = self.rewrite.run(question, options.session_id, state.queue, state.timings)
        if self._memory is not None and state.search_query != question:
            # A follow-up ("And since when?") is about the user when its standalone rewrite is.
            rewritten = self._memory.context_for(state.search_query, state.lang)
            if len(rewritten.user) + len(rewritten.company) > len(state.memory.user) + len(state.memory.company):
                state.memory = rewritten
        query_lang = state.lang if state.search_query == question else None
        state.retrieval = self.retrieve.run(
            state.search_query, options.top_k, options.bm25_weight, options.rerank, query_lang, selected
        )
        state.timings["retrieve_ms"] = state.retrieval.timings_ms.get("search_ms", 0.0)
        # Documents in another language than the query: searched again with its translations.
        state.retrieval, state.translated = self.translate.run(
            state.search_query,
            query_lang or self.retrieve.detect(state.search_query),
            state.retrieval,
            SearchOptions(options.top_k, options.bm25_weight, options.rerank, selected),
            state.timings,
            state.queue,
        )
        if route is not None and router is not None and not personal and router.unmatched(route, state.retrieval):
            # Never refused by the relevance gate: the documents themselves are the evidence.
            return self._about_documents(state, route, scope or self._scope(state, route))
        return self._from_passages(state, closeness)

    def _from_passages(self, state: QuestionState, closeness: float) -> AnswerStream:
        """The evidence chosen from the retrieved passages (or memory, or nothing), and the stream of
        the model's reply over it."""
        assert state.retrieval is not None
        evidence = self.select_evidence.run(
            state.question, state.search_query, state.retrieval, state.memory, state.translated
        )
        state.given = self.choose_source.run(evidence, state.memory, closeness)
        if state.given.mode == "none":
            return AnswerStream(state, None, self.assemble)
        # A follow-up is judged by its standalone rewrite ("And in Q1?" → "What was the revenue in Q1?").
        if state.given.mode == "sources" and self._yes_no(state.search_query, state.lang):
            return AnswerStream(state, self.answer_yes_no.run(state), self.assemble)
        messages = self.build_prompt.run(state.question, state.search_query, state.given, state.lang)
        if state.given.mode == "memory":
            stream = self.generate.run(messages, state.started, state.timings, state.queue)
            return AnswerStream(state, stream, self.assemble, messages)
        return AnswerStream(state, self.write_from_evidence.run(messages, state), self.assemble, messages)

    def _yes_no(self, question: str, lang: str) -> bool:
        """A yes/no question read the yes/no way (rag/polar_answer.py), when the setting and the model allow."""
        return self._settings.polar_answers and is_polar(question, lang) and self.answer_yes_no.applies()

    def _scope(self, state: QuestionState, route: Route) -> Scope:
        options = state.options
        return self.scope.run(state.question, options.documents, options.recent_documents, state.lang, route.p_every)

    def _selected(self, names: tuple[str, ...]) -> frozenset[str] | None:
        """The ids of the documents the user chose (the app's picker, `ragchat ask --doc`), which a
        question's search is kept to; None when none was chosen (search everything)."""
        if not names or self._documents is None:
            return None
        return frozenset(d.doc_id for d in self._documents.all() if d.source in names)

    def _about_documents(
        self, state: QuestionState, route: Route, scope: Scope, read: Read | None = None
    ) -> AnswerStream:
        """The documents in scope whole (or their section summaries) as numbered evidence, or the
        question back when the scope is unclear; the answer streams in the form asked for, every
        sentence or bullet citing an excerpt. A request for a general overview of one document is
        answered from its card when it has one. `read`: the documents' passages, when already read."""
        state.path = "documents"
        state.document_request = DocumentRequest(
            p_document=round(route.p_document, 3), documents=[d.source for d in scope.documents], method="clarify"
        )
        if scope.clarify is not None:
            state.clarify = scope.clarify
            return AnswerStream(state, iter([scope.clarify]), self.assemble)
        asked = state.options.thorough
        thorough = asked if asked is not None else self._settings.document_reading == "thorough"
        carded = self.cards.applies(route, scope.documents, state.lang, thorough) if self.cards else None
        card = self.cards.find(carded, self._models().llm) if self.cards and carded else None
        if card is not None:
            state.document_request.method = "card"
            state.given = _numbered(card.passages)
            return AnswerStream(state, iter([card.reply]), self.assemble)
        lists, kind = self.list_items, route.list_kind
        listed = lists.run(state.question, kind, scope.documents, state.timings) if kind and lists else None
        if listed is not None:
            state.document_request.method = "extracted"
            state.given = _numbered(listed[1])
            return AnswerStream(state, iter([listed[0]]), self.assemble)
        read = read or self._read(state, scope.documents)
        assert read is not None  # reading thoroughly is always possible
        state.document_request.method = "chosen" if read.chosen else "whole" if read.fits else "sections"
        return AnswerStream(state, self._document_tokens(state, route.form, read, carded), self.assemble)

    def _read(self, state: QuestionState, documents: list[DocumentRecord], thorough: bool = True) -> Read | None:
        """The documents whole when they fit the prompt; else a few passages chosen from them (fast),
        or, when asked for and `thorough` allows it, all their passages, to be summarised section by
        section as the stream is read. None when none of these applies."""
        whole = self.read_documents.whole(state.question, documents)
        if whole is not None:
            return whole
        asked = state.options.thorough
        if asked or (asked is None and self._settings.document_reading == "thorough") or self.choose is None:
            return self.read_documents.run(state.question, documents) if thorough else None
        chosen = self.choose.run(state.question, documents, state.timings)
        return Read(chosen, self.read_documents.budget(state.question), fits=True, chosen=True)

    def _document_tokens(
        self, state: QuestionState, form: Form, read: Read, carded: DocumentRecord | None = None
    ) -> Iterator[str]:
        """The answer over the documents' passages, or over their section summaries when they do not
        fit (summarised as the stream is read, so the caller sees progress). A general overview of
        one document (`carded`) is kept as its card."""
        hits = read.passages
        if not read.fits:
            request = state.document_request
            assert request is not None
            hits, request.sections, request.cached_sections = self.summarise.run(
                hits,
                read.budget,
                state.options.on_progress or no_progress,
                state.queue,
                state.timings,
                state.options.on_section or no_section,
            )
            hits = fit_hits(hits, read.budget, self._settings.source_header_tokens)
        state.given = _numbered(hits)
        if not hits:  # no text in the documents (a scan without OCR)
            return
        messages, sampling = self._document_prompt(state.question, hits, form, state.lang, read.chosen)
        opening = self._opening(state, hits, form, sampling) if read.chosen else None
        reply: list[str] = []
        if read.chosen and (lead := outline_line(hits, message(state.lang, "sections_opening"))):
            state.timings["first_visible_ms"] = elapsed_ms(state.started)
            state.outline = lead
            reply.append(f"{lead}\n\n")
            yield reply[0]
        for text in self._written(state, messages, sampling, hits, opening):
            reply.append(text)
            yield text
        if carded is not None and self.cards is not None:
            self.cards.keep(carded, self._models().llm, "".join(reply), hits)

    def _written(
        self,
        state: QuestionState,
        messages: list[ChatMessage],
        sampling: Sampling,
        hits: list[Hit],
        opening: Opening | None = None,
    ) -> Iterator[str]:
        """The model's reply to a request about documents: the one kept for this very prompt when it was
        asked before (rag/stored_answers.py), else written now (`opening` first, when given) and kept,
        unless it is not an answer."""
        store = self.stored() if self.stored is not None and sampling.temperature == 0 else None
        key = store.key(messages, sampling, self._models().llm) if store is not None else ""
        kept = store.get(key) if store is not None else None
        if kept is not None:
            assert state.document_request is not None
            state.document_request.stored = True
            state.timings["first_token_ms"] = elapsed_ms(state.started)
            yield kept
            return
        written: list[str] = []
        for text in self._generated(state, messages, sampling, opening):
            written.append(text)
            yield text
        reply = "".join(written)
        if store is not None and worth_keeping(reply):
            store.put(key, {h.chunk.doc_id: h.chunk.content_hash for h in hits}, reply)

    def _generated(
        self, state: QuestionState, messages: list[ChatMessage], sampling: Sampling, opening: Opening | None
    ) -> Iterator[str]:
        """The model's reply; with `opening`, its first sentence over the opening passages, then the rest
        over all of them, the model continuing that sentence as the start of its own reply."""
        start: list[str] = []
        if opening is not None:
            for token in self.generate.run_tokens(
                opening.messages, opening.sampling, state.started, state.timings, state.queue
            ):
                start.append(token.text)
                yield token.text
        if not start:  # one call; or the opening stopped at once: not a rest with no start
            for token in self.generate.run_tokens(messages, sampling, state.started, state.timings, state.queue):
                yield token.text
            return
        assert opening is not None
        rest: dict[str, float] = {}
        continued = [*messages, ChatMessage(role="assistant", content="".join(start))]
        left = opening.rest.model_copy(update={"max_tokens": max(1, opening.rest.max_tokens - len(start))})
        for token in self.generate.run_tokens(continued, left, state.started, rest, state.queue):
            yield token.text
        # The plain names keep the opening's prompt (what the first word waited for); the rest's are
        # rest_*; generate_ms is both calls' generation.
        state.timings["opening_ms"] = state.timings.get("generate_ms", 0.0)
        state.timings.update({f"rest_{name}": value for name, value in rest.items()})
        state.timings["generate_ms"] = state.timings["opening_ms"] + rest.get("generate_ms", 0.0)

    def _opening(self, state: QuestionState, hits: list[Hit], form: Form, whole: Sampling) -> Opening | None:
        """The answer's first sentence written first over the opening passages (rag/overview.py), when
        the model can continue a reply it started and has likely not read these passages yet (no card
        by this model: a card written before a restart is not in llama.cpp's cache, and then one call
        reads them cold); one document, a form of more than one sentence, not a word count."""
        settings, llm = self._settings, self._llm()
        versions = {(hit.chunk.doc_id, hit.chunk.content_hash) for hit in hits}
        most = self._most(form)
        if not (settings.overview_opening_tokens and llm.continues and llm.constrains and len(versions) == 1):
            return None
        if form.words or form.bullets == 1 or (form.bullets is None and sentence_limit(form, most) == 1):
            return None
        if self.cards is not None and self.cards.written(*next(iter(versions)), self._models().llm):
            return None
        count = opening_count(hits, settings.overview_opening_tokens, settings.source_header_tokens)
        if count >= len(hits):
            return None
        no_cjk = without_cjk(state.lang, (hit.chunk.lang for hit in hits))
        return opening_prompt(state.question, hits, count, form, most, state.lang, whole, no_cjk)

    def _most(self, form: Form) -> int:
        """The most bullets or sentences an answer about documents has, unless the request says."""
        settings = self._settings
        return settings.document_list_items if form.bullets == 0 else settings.answer_max_sentences

    def _document_prompt(
        self, request: str, hits: list[Hit], form: Form, lang: str, chosen: bool
    ) -> tuple[list[ChatMessage], Sampling]:
        settings = self._settings
        most = self._most(form)
        messages = document_messages(request, hits, form, most, lang, chosen=chosen)
        no_cjk = without_cjk(lang, (hit.chunk.lang for hit in hits))
        ids = list(range(1, len(hits) + 1))
        grammar = document_grammar(ids, form, most, no_cjk) if self._llm().constrains else None
        return messages, Sampling(
            max_tokens=settings.document_answer_tokens, temperature=settings.llm_temperature, grammar=grammar
        )

    def write_card(self, record: DocumentRecord, stop: Callable[[], bool]) -> DocumentCard | None:
        """Write a document's card (rag/document_cards.py): its overview from passages chosen across
        it, in one model call that stops as soon as `stop()` says a question waits. None when it
        stopped, or the document gave nothing to write from."""
        if self.cards is None:
            return None
        state = QuestionState(CARD_REQUEST, AskOptions(thorough=False), self._settings.strictness, QueueWait())
        read = self._read(state, [record], thorough=False)
        if read is None or not read.passages:
            return None
        messages, sampling = self._document_prompt(CARD_REQUEST, read.passages, Form(), CARD_LANGUAGE, read.chosen)
        reply = self.cards.write(self._llm(), messages, sampling, stop)
        if reply is None:
            return None
        lead = outline_line(read.passages, message(CARD_LANGUAGE, "sections_opening")) if read.chosen else ""
        return self.cards.keep(record, self._models().llm, f"{lead}\n\n{reply}" if lead else reply, read.passages)

    def _noted(self, state: QuestionState) -> AnswerStream:
        """The memory graph runs as the stream is read; its note is the reply."""
        state.path = "noted"

        def run_graph() -> Iterator[str]:
            try:
                state.noted = self.note_facts.run(state.question, state.session_id, state.timings, state.lang)
            except Exception as exc:  # a locked or unwritable memory file: say so, lose nothing else
                raise LLMError(f"memory could not be updated: {exc}") from exc
            yield memory_note(state.noted, state.lang)

        return AnswerStream(state, run_graph(), self.assemble)


def _numbered(hits: list[Hit]) -> Given:
    return Given(mode="sources", evidence=[Evidence(id=n, hit=hit) for n, hit in enumerate(hits, 1)])
