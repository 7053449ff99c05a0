"""The stages of the answer path, in the order rag/pipeline.py runs them.

Each stage is a small class with one `run()` that takes and returns typed values (core.schemas), so a
test can run any stage alone. The rules themselves live in the modules the stages call (guardrails,
query_rewriter, retriever, context_budget, prompting, citations, support); a stage holds only the
settings and parts it needs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from core.language import LanguageDetector
from core.schemas import (
    Answer,
    Citation,
    Evidence,
    Given,
    GuardrailOutcome,
    Hit,
    MemoryFacts,
    MemoryOutcome,
    Retrieval,
    SentenceSupport,
)
from core.settings import Settings
from providers.llm.base import LLM, ChatMessage, QueueListener, Sampling, Token
from rag.anchoring import anchor
from rag.answer_format import Reply, answer_grammar, one_token_p_none, read_reply, without_cjk
from rag.answer_json import answer_schema, reply_text
from rag.answerability import Abstention, Strictness, checks_answerability, decide, recheck
from rag.citations import CitationRules, recite, resolve_citations, uncite_unsupported
from rag.context_budget import fit_hits, source_budget
from rag.conversations import ConversationStore
from rag.degenerate import degeneration
from rag.evidence import Embed, EvidencePicker
from rag.guardrails import Guardrails
from rag.messages import message
from rag.navigation import is_navigation
from rag.prompting import SYSTEM_PROMPT, build_check_messages, build_memory_messages, build_messages, format_memory
from rag.query_log import QueryLog
from rag.query_rewriter import fallback_query, rewrite_query
from rag.query_translation import clean_translation, translation_messages
from rag.question import QuestionState, Timings, elapsed_ms
from rag.quotes import quotation
from rag.retriever import HybridRetriever
from rag.support import SupportChecker

log = logging.getLogger(__name__)


class MemoryPort(Protocol):
    """What the answer path needs of memory (memory.Memory provides it; rag never imports memory)."""

    def context_for(self, question: str, lang: str) -> MemoryFacts: ...

    def closeness(self, question: str, facts: MemoryFacts) -> float: ...

    def speaks_of_self(self, question: str, lang: str) -> bool: ...

    def only_states_facts(self, message: str) -> bool: ...

    def remember(self, message: str, session_id: str | None = None, lang: str = "en") -> MemoryOutcome: ...


class Guard:
    """Length, prompt injection and rate limit, before anything else: a stopped question costs no
    retrieval and no model call, and its notice says what to do."""

    def __init__(self, guardrails: Guardrails) -> None:
        self._guardrails = guardrails

    def run(self, question: str, rate_key: str | None, lang: str = "en") -> GuardrailOutcome | None:
        return self._guardrails.check(question, rate_key, lang)


class Rewrite:
    """A follow-up becomes a standalone search query (only with history); without a usable model the
    previous query plus the follow-up is searched, and generation reports the model's failure."""

    def __init__(self, llm: Callable[[], LLM], conversations: ConversationStore, settings: Settings) -> None:
        self._llm = llm
        self._conversations = conversations
        self._turns = settings.rewrite_history_turns
        self._answer_chars = settings.rewrite_answer_chars

    def follows_up(self, session_id: str | None) -> bool:
        """Whether the conversation has an earlier turn a request could refer to."""
        return bool(self._history(session_id))

    def _history(self, session_id: str | None) -> list[Answer]:
        history = self._conversations.history(session_id, last=self._turns) if session_id else []
        return [turn for turn in history if turn.guardrail is None]  # a stopped question is no context

    def run(self, question: str, session_id: str | None, queue: QueueListener, timings: Timings) -> str:
        history = self._history(session_id)
        if not history:
            return question
        started = time.perf_counter()
        try:
            llm = _load(self._llm, timings)
            return rewrite_query(llm, question, history, self._answer_chars, queue)
        except Exception as exc:  # model missing, server down: still search
            log.warning("query rewriting failed (%s); searching with the previous query added", exc)
            return fallback_query(question, history)
        finally:
            timings["rewrite_ms"] = elapsed_ms(started)


@dataclass(frozen=True)
class SearchOptions:
    """How a question is searched: top k and BM25 weight (None: the settings'), reranked or not, and the
    documents it is kept to (None: all)."""

    top_k: int | None = None
    bm25_weight: float | None = None
    rerank: bool = True
    doc_ids: frozenset[str] | None = None


class Retrieve:
    """The one door into retrieval, for a question and `ragchat search` alike: hybrid BM25 + dense
    search, fused, then reranked when a reranker exists, with the settings' top k and BM25 weight unless
    given and the query's language detected unless given. The top k leave out tables of contents and
    indexes (rag/navigation.py), which match any question and state nothing."""

    def __init__(self, retriever: HybridRetriever, settings: Settings, detect: LanguageDetector) -> None:
        self._retriever = retriever
        self._top_k = settings.top_k
        self._bm25_weight = settings.bm25_weight
        self.detect = detect  # the query's language, when not given

    def run(
        self,
        query: str,
        top_k: int | None = None,
        bm25_weight: float | None = None,
        rerank: bool = True,
        lang: str | None = None,
        doc_ids: frozenset[str] | None = None,
    ) -> Retrieval:
        top_k = top_k or self._top_k
        weight = self._bm25_weight if bm25_weight is None else bm25_weight
        retrieval = self._retriever.search(query, top_k, weight, rerank, lang or self.detect(query), doc_ids)
        return retrieval.model_copy(update={"hits": readable(retrieval.candidates, top_k)})


class TranslateQuery:
    """The question searched again with its translations into the languages of the documents in scope
    it is not written in (rag/query_translation.py): always when none of them is in its language;
    otherwise only when no passage found is close to it (`translate_below_dense`), when the answer is
    likely in another language. At most `translation_languages`, those whose passages ranked highest,
    then those holding the most passages. Without a usable model the first search stands."""

    def __init__(
        self,
        llm: Callable[[], LLM],
        retrieve: Retrieve,
        languages: Callable[[frozenset[str] | None], dict[str, int]],
        settings: Settings,
    ) -> None:
        self._llm = llm
        self._retrieve = retrieve
        self._languages = languages
        self._on = settings.translate_questions
        self._below = settings.translate_below_dense
        self._most = settings.translation_languages
        self._tokens = settings.translation_tokens

    def targets(self, lang: str, retrieval: Retrieval, doc_ids: frozenset[str] | None) -> list[str]:
        """The languages to translate a query in `lang` into, given its search so far."""
        held = self._languages(doc_ids) if self._on else {}
        foreign = [other for other in held if other != lang]
        best = max((h.scores.dense or 0.0 for h in retrieval.candidates), default=0.0)
        if not foreign or (lang in held and best >= self._below):
            return []
        first: dict[str, int] = {}
        for rank, hit in enumerate(retrieval.candidates):
            first.setdefault(hit.chunk.lang, rank)
        ranked = sorted(foreign, key=lambda other: (first.get(other, len(retrieval.candidates)), -held[other]))
        return ranked[: self._most]

    def run(
        self,
        query: str,
        lang: str,
        retrieval: Retrieval,
        options: SearchOptions,
        timings: Timings,
        queue: QueueListener | None = None,
    ) -> tuple[Retrieval, str]:
        """The search of the query followed by its translations, and those translations (one a line);
        the first search and "" when there are none."""
        targets = self.targets(lang, retrieval, options.doc_ids)
        translated = "\n".join(self._translations(query, targets, queue, timings)) if targets else ""
        if not translated:
            return retrieval, translated
        again = self._retrieve.run(
            f"{query}\n{translated}", options.top_k, options.bm25_weight, options.rerank, lang, options.doc_ids
        )
        timings["retrieve_ms"] = timings.get("retrieve_ms", 0.0) + again.timings_ms.get("search_ms", 0.0)
        return again, translated

    def _translations(self, query: str, targets: list[str], queue: QueueListener | None, timings: Timings) -> list[str]:
        started = time.perf_counter()
        translations: list[str] = []
        try:
            llm = _load(self._llm, timings)
            for target in targets:
                reply = llm.complete(
                    translation_messages(query, target), max_tokens=self._tokens, temperature=0.0, on_queued=queue
                )
                if (translated := clean_translation(reply, query)) is not None:
                    translations.append(translated)
        except Exception as exc:  # model missing, server down: the first search stands
            log.warning("question translation failed (%s); searching the question as asked", exc)
        finally:
            timings["translate_ms"] = elapsed_ms(started)
        return translations


def readable(candidates: list[Hit], count: int) -> list[Hit]:
    """The first `count` candidates that are not a table of contents or an index."""
    return [hit for hit in candidates if not is_navigation(hit.chunk.text)][:count]


class SelectEvidence:
    """What the model may see: the sentences that bear on the question (rag/evidence.py) of the
    `evidence_candidates` best chunks at or above the refusal threshold (or, with evidence off, the
    top k chunks whole), cut to the prompt's token budget (what the question, the query and the
    memory block leave of it)."""

    def __init__(self, settings: Settings, embed: Embed) -> None:
        self._settings = settings
        self._picker = EvidencePicker(
            embed,
            settings.evidence_tokens,
            settings.evidence_min_chunk_tokens,
            settings.evidence_lexical_weight,
            settings.source_header_tokens,
            settings.evidence_neighbour_weight,
        )

    def run(
        self, question: str, search_query: str, retrieval: Retrieval, memory: MemoryFacts, translated: str = ""
    ) -> list[Hit]:
        """`translated`: the question in the documents' languages (TranslateQuery), which sentences are
        picked by besides the question."""
        settings = self._settings
        picking = settings.evidence_tokens > 0
        pool = (
            readable(retrieval.candidates, max(len(retrieval.hits), settings.evidence_candidates))
            if picking
            else retrieval.hits
        )
        relevant = [h for h in pool if (h.scores.dense or 0.0) >= settings.refusal_threshold]
        fixed = SYSTEM_PROMPT + question + search_query + format_memory(memory)
        budget = source_budget(
            settings.llm_context,
            settings.llm_max_tokens,
            fixed,
            settings.context_tokens,
            settings.prompt_overhead_tokens,
        )
        picked_by = f"{question}\n{translated}" if translated else question
        given = self._picker.pick(picked_by, relevant) if picking else relevant
        return fit_hits(given, budget, settings.source_header_tokens)


class ChooseSource:
    """Answer from the evidence, from memory alone, or not at all (the refusal, no model call).

    A question about the user or their company ("what is my role?") that memory matches better than
    any passage is answered from memory, without citations."""

    def __init__(self, memory: MemoryPort | None, memory_min_similarity: float) -> None:
        self._memory = memory
        self._min_similarity = memory_min_similarity

    def run(self, evidence: list[Hit], memory: MemoryFacts, closeness: float) -> Given:
        """`closeness`: the question's to memory (`memory_closeness`), computed once per question."""
        best_passage = max((h.scores.dense or 0.0 for h in evidence), default=0.0)
        if closeness > max(best_passage, self._min_similarity):
            return Given(mode="memory", memory=memory)
        if evidence:
            numbered = [Evidence(id=n, hit=hit) for n, hit in enumerate(evidence, start=1)]
            return Given(mode="sources", memory=memory, evidence=numbered)
        return Given(mode="none")

    def memory_closeness(self, question: str, memory: MemoryFacts, lang: str) -> float:
        """How close a question about the user or their company (a first-person word of English or of
        `lang`) is to its closest memory entry; 0 for any other question, or without memory."""
        if self._memory is None or not memory or not self._memory.speaks_of_self(question, lang):
            return 0.0
        return self._memory.closeness(question, memory)

    def personal(self, closeness: float) -> bool:
        """A question about the user or their company that memory matches: "What is my role?" reads
        like a request about a whole document to the router, and must not leave for the documents."""
        return closeness > self._min_similarity


class BuildPrompt:
    """The messages for the model: the system prompt never changes (llama.cpp reuses its cache); the
    user message names the language to answer in when it is not plain English."""

    def run(self, question: str, search_query: str, given: Given, lang: str = "en") -> list[ChatMessage]:
        if given.mode == "memory":
            return build_memory_messages(question, given.memory, lang)
        return build_messages(question, given.hits, search_query, given.memory, lang)


class Generate:
    """Stream the model's reply, timing the first token and recording llama.cpp's prompt cache use."""

    def __init__(self, llm: Callable[[], LLM], settings: Settings) -> None:
        self._llm = llm
        self._max_tokens = settings.llm_max_tokens
        self._temperature = settings.llm_temperature
        self._max_sentences = settings.answer_max_sentences

    def run(self, messages: list[ChatMessage], started: float, timings: Timings, queue: QueueListener) -> Iterator[str]:
        sampling = Sampling(max_tokens=self._max_tokens, temperature=self._temperature)
        for token in self.run_tokens(messages, sampling, started, timings, queue):
            yield token.text

    def grounded(self, given: Given, lang: str = "en") -> Sampling:
        """An answer from evidence: the reply's form enforced by a grammar naming the given ids (or,
        for a server that takes a JSON schema instead, the same form as JSON), and the top
        log-probabilities of its tokens for the abstention score. `lang`: the question's language."""
        ids = [e.id for e in given.evidence]
        llm = self._llm()
        no_cjk = without_cjk(lang, (e.hit.chunk.lang for e in given.evidence))
        return Sampling(
            max_tokens=self._max_tokens,
            temperature=self._temperature,
            grammar=answer_grammar(ids, self._max_sentences, no_cjk=no_cjk) if llm.constrains else None,
            json_schema=answer_schema(ids, self._max_sentences) if llm.structured and not llm.constrains else None,
            top_logprobs=10,
        )

    def run_tokens(
        self, messages: list[ChatMessage], sampling: Sampling, started: float, timings: Timings, queue: QueueListener
    ) -> Iterator[Token]:
        llm = _load(self._llm, timings)
        generation_started = time.perf_counter()
        first = True
        tokens = llm.stream_tokens(messages, sampling, queue)
        if sampling.json_schema is not None:  # read back into the text form as it streams
            tokens = reply_text(tokens)
        for token in tokens:
            if first:
                timings["first_token_ms"] = elapsed_ms(started)
                first = False
            yield token
        timings["generate_ms"] = elapsed_ms(generation_started)
        prompt = getattr(llm, "last_timings", {})
        if prompt.get("prompt_n") is not None:
            # llama.cpp: prompt tokens processed now vs reused from its cache (the system prompt).
            timings["prompt_tokens"] = float(prompt["prompt_n"])
            timings["cached_prompt_tokens"] = float(prompt.get("cache_n", 0))

    def label(self) -> str:
        return self._llm().label

    def constrains(self) -> bool:
        """The model's citation markers were forced to name given evidence (a grammar or a schema)."""
        llm = self._llm()
        return llm.constrains or llm.structured


class ScoreAbstention:
    """The abstention score of the reply's hidden phrase line, the evidence and the retrieval, and
    whether it reaches the strictness level's threshold (rag/answerability.py). `checking`: the
    answerability check runs after the answer (the levels' thresholds differ with it)."""

    def __init__(self, checking: bool) -> None:
        self._checking = checking

    def run(
        self,
        reply: Reply,
        question: str,
        given: Given,
        retrieval: Retrieval,
        model_label: str,
        strictness: Strictness,
        question_lang: str = "en",
    ) -> Abstention:
        best_dense = max((h.scores.dense or 0.0 for h in retrieval.hits), default=0.0)
        return decide(reply, question, given.hits, best_dense, model_label, strictness, self._checking, question_lang)


class WriteFromEvidence:
    """Stream the answer's visible text once the reply's hidden phrase line is read and scored
    (`state.decision`): when the score reaches the strictness threshold, generation stops before a
    word is shown, and the stream's end gives the refusal (rag/answer_builder.py)."""

    def __init__(self, generate: Generate, score: ScoreAbstention) -> None:
        self._generate = generate
        self._score = score

    def run(self, messages: list[ChatMessage], state: QuestionState) -> Iterator[str]:
        sampling = self._generate.grounded(state.given, state.lang)
        tokens = self._generate.run_tokens(messages, sampling, state.started, state.timings, state.queue)
        try:
            for token in read_reply(tokens, state.reply):
                if state.decision is None:  # the phrase line is read: decide before the answer is written
                    state.decision = self._decide(state)
                    if state.decision.refuse:
                        return
                if not token.text:
                    continue
                if "first_visible_ms" not in state.timings:  # the hidden phrase line came first
                    state.timings["first_visible_ms"] = elapsed_ms(state.started)
                yield token.text
        finally:
            close = getattr(tokens, "close", None)
            if close is not None:
                close()
        if state.decision is None:  # the reply ended on its phrase line ("Phrase: NONE")
            state.decision = self._decide(state)

    def _decide(self, state: QuestionState) -> Abstention:
        assert state.retrieval is not None
        label = self._generate.label()
        return self._score.run(
            state.reply, state.question, state.given, state.retrieval, label, state.strictness, state.lang
        )


class CheckAnswerability:
    """After the answer is written, ask the model one more token: does the evidence state the answer
    to exactly this question, or NONE? Its P(NONE) rescores the decision (rag/answerability.py
    `recheck`) for a model calibrated with it; the answer is then withheld if the score reaches the
    level's threshold. Asked after the answer so the first token does not wait for it (it costs a
    prefill of the evidence: 3.4 s median with the 1.5B on two cores). Off by default
    (RAGCHAT_ANSWERABILITY_CHECK): on Normans it ranked better but refused no more (bench/README.md)."""

    def __init__(self, llm: Callable[[], LLM], enabled: bool, top_logprobs: int) -> None:
        self._llm = llm
        self._enabled = enabled
        self._top_logprobs = top_logprobs

    def run(self, state: QuestionState, first: Abstention) -> Abstention:
        """`first`: the decision from the phrase line, which stands unless the check changes it."""
        if not self._enabled or first.refuse or first.signals is None:
            return first
        llm = self._llm()
        if not llm.gives_logprobs or not checks_answerability(llm.label):
            return first
        started = time.perf_counter()
        p_none = self.p_none(state.question, state.search_query, state.given, state.queue)
        state.timings["check_ms"] = elapsed_ms(started)
        return first if p_none is None else recheck(first, p_none, llm.label, state.strictness)

    def p_none(
        self, question: str, search_query: str, given: Given, queue: QueueListener | None = None
    ) -> float | None:
        """The check's P(NONE) for its one token (None: the call failed; the decision then stands)."""
        messages = build_check_messages(question, given.hits, search_query)
        return one_token_p_none(self._llm(), messages, self._top_logprobs, queue, "answerability check")


class AnchorAnswer:
    """An answer that does not state the model's own answer phrase becomes a quotation of the
    evidence that does, cited (rag/anchoring.py); the model's text goes on the Answer as `restated`."""

    def __init__(self, enabled: bool) -> None:
        self._enabled = enabled

    def run(self, text: str, reply: Reply, question: str, given: Given, lang: str = "en") -> tuple[str, str | None]:
        """(the answer's text, the model's text it replaced or None)."""
        if not self._enabled or reply.said_none:
            return text, None
        anchored = anchor(text, reply.phrase, question, given.hits, message(lang, "quote_opening"), lang == "en")
        return (text, None) if anchored is None else (anchored, text.strip())

    def quotation(self, reply: Reply, question: str, given: Given) -> tuple[int, str] | None:
        """(excerpt number, sentence) of the evidence that states the reply's phrase, whatever the
        model wrote; None when the reply said NONE or no evidence states its phrase."""
        if reply.said_none or not reply.phrase:
            return None
        return quotation(reply.phrase, question, given.hits)


class RejectDegenerate:
    """After generation: a reply that is not an answer (mostly whitespace, markers without text, a
    loop; rag/degenerate.py) is refused with a notice, never shown with its citations."""

    def run(self, text: str, error: str | None) -> str | None:
        """Why the reply is degenerate, or None. A reply cut off by an error is judged by the error."""
        return None if error is not None else degeneration(text).reason


class ResolveCitations:
    """Keep the markers that name given evidence, move misplaced ones, attribute an unmarked answer."""

    def __init__(self, rules: CitationRules) -> None:
        self._rules = rules

    def run(self, text: str, given: Given, constrained: bool) -> tuple[str, list[Citation]]:
        """`constrained`: the model's markers were forced to name given evidence (its own choice)."""
        return resolve_citations(text, given.hits, self._rules, correct=not constrained)


class CheckSupport:
    """Whether each sentence's cited evidence holds it (terms, names, numbers, or a close paraphrase);
    a sentence it does not hold loses its citation (it stays, flagged). An answer none of whose
    sentences is held is withheld (`withholds`): it states nothing the documents say."""

    def __init__(
        self, checker: SupportChecker, rules: CitationRules, withhold_unsupported: bool, joint_sources: int = 0
    ) -> None:
        """`joint_sources`: in an answer about whole documents, a sentence no one excerpt holds may be
        held by up to this many together (rag/support.py `joint_backing`; 0 or 1: never)."""
        self._checker = checker
        self._rules = rules
        self._withhold = withhold_unsupported
        self._joint_sources = joint_sources

    def withholds(self, support: list[SentenceSupport]) -> bool:
        """Every checked sentence is unsupported (an answer too short to check is never withheld)."""
        return self._withhold and bool(support) and not any(s.supported for s in support)

    def run(
        self,
        text: str,
        citations: list[Citation],
        given: Given,
        timings: Timings,
        lang: str = "en",
        about_documents: bool = False,
        asked: str = "",
    ) -> tuple[str, list[Citation], list[SentenceSupport]]:
        """`lang`: the answer's language (sources in another one are checked by their figures and names);
        `about_documents`: the answer is about whole documents (its sentences may be held jointly);
        `asked`: the question (rag/support.py may let a sentence restate its words)."""
        started = time.perf_counter()
        support = self._checker.check(text, citations, given.hits, lang, asked)
        # A sentence that cites the wrong excerpt is moved to the one that holds it, labelled corrected.
        # In an answer about whole documents, one no excerpt holds alone may be held by several together.
        together = self._joint_sources if about_documents else 1
        backed = {
            s.sentence: self._checker.backing(s, given.hits, lang, together, asked) for s in support if not s.supported
        }
        moves = {sentence: judged.sources for sentence, judged in backed.items() if judged is not None}
        if moves:
            text, citations = recite(text, citations, moves, given.hits, self._rules)
            support = [backed.get(s.sentence) or s for s in support]
        text, citations = uncite_unsupported(text, citations, {s.sentence for s in support if not s.supported})
        timings["support_ms"] = elapsed_ms(started)
        return text, citations, support


class NoteFacts:
    """A message that only states facts ("I'm a Project Finance Analyst.") is not a question for the
    documents: the memory graph runs now, and what it noted is the reply."""

    def __init__(self, memory: MemoryPort | None) -> None:
        self._memory = memory

    def applies(self, message: str) -> bool:
        return self._memory is not None and self._memory.only_states_facts(message)

    def run(self, message: str, session_id: str | None, timings: Timings, lang: str) -> MemoryOutcome:
        assert self._memory is not None
        started = time.perf_counter()
        try:
            return self._memory.remember(message, session_id, lang)
        finally:
            timings["memory_ms"] = elapsed_ms(started)


class Record:
    """Every turn is logged; a turn with a session id is also kept with its conversation (both masked)."""

    def __init__(self, conversations: ConversationStore, query_log: QueryLog) -> None:
        self._conversations = conversations
        self._query_log = query_log

    def run(self, answer: Answer) -> Answer:
        if answer.session_id:
            self._conversations.append(answer.session_id, answer)
        self._query_log.record(answer)
        return answer


def _load(llm: Callable[[], LLM], timings: Timings) -> LLM:
    started = time.perf_counter()
    model = llm()
    timings["llm_load_ms"] = timings.get("llm_load_ms", 0.0) + elapsed_ms(started)
    return model
