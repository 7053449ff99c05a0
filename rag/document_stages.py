"""The stages of a request about whole documents, in the order rag/pipeline.py runs them:

route (document-level or passage, by meaning) → scope (which documents, or a question back) → read
them (whole, as numbered passages, when they fit) → else summarise section by section (map, cached by
document version) → the answer streams from the passages or the section summaries (reduce).

A document-level request never meets the relevance gate: the document is the evidence.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

from core.schemas import Chunk, DocumentRecord, Hit, Page, Retrieval
from core.settings import Settings
from providers.llm.base import LLM, QueueListener, Sampling
from rag.answer_format import without_cjk
from rag.citations import markers_in, split_sentences, strip_markers, tidy_markers
from rag.context_budget import source_budget
from rag.evidence import Embed
from rag.extraction import ListKind, extract, item_list
from rag.messages import message
from rag.overview import choose_passages
from rag.parts import part_text
from rag.question import Progress, SectionDone, Timings, elapsed_ms, no_section
from rag.router import Form, Route, Router
from rag.stages import Retrieve
from rag.whole_document import (
    DOCUMENT_SYSTEM_PROMPT,
    DocumentSource,
    SectionSummaryCache,
    document_grammar,
    evidence_tokens,
    passages,
    section_messages,
    sections,
)

SECTION_SENTENCES = 3
PASSAGE_TOKENS = 120


# While a section is summarised, progress is reported again every this many tokens (see _summary).
TICK_TOKENS = 16


def section_text(sentences: list[Hit]) -> tuple[str, str]:
    """A finished section as its readers show it: where it is from (each file and place once) and its text."""
    where = ", ".join(dict.fromkeys(f"{h.chunk.source} · {h.chunk.locator}" for h in sentences))
    return where, " ".join(h.chunk.text for h in sentences)


class RouteRequest:
    """Document-level or passage (rag/router.py), and the form the user asked for.

    A request the router is sure of goes to the documents at once. One it leans towards goes there
    when the documents in scope fit the prompt whole (the pipeline checks): reading all of them loses
    nothing a passage search would have found, and a short document's passages all resemble a
    request for "every date" enough to pass the gate; so does one it tilts towards when the user chose
    the documents ("what's this table about?" with a file picked). One it only tilts towards goes there when no
    retrieved passage reaches the relevance gate, which would refuse it: a factual question that
    merely sounds general ("What was one of the Normans' major exports?") has a passage that answers
    it, and keeps the passage path. A request that names nothing but the document ("what is this?",
    rag/subjectless.py) goes there at once when no earlier turn could be what it means, as one that
    asks only for a shape ("3 bullets") does."""

    def __init__(self, embed: Embed, settings: Settings) -> None:
        self._router = Router(embed, settings.route_threshold)
        self._sure = settings.route_sure_threshold
        self._list = settings.route_list_threshold
        self._whole = settings.route_whole_threshold
        self._chosen = settings.route_chosen_threshold
        self._gate = settings.refusal_threshold

    def sure(self, route: Route) -> bool:
        listed = route.list_kind is not None
        named_nothing = route.shape_only or route.subjectless
        return route.kind == "document" and (route.p_document >= self._sure or named_nothing or listed)

    def leans(self, route: Route, chosen: bool = False) -> bool:
        """Document-level enough to read the documents in scope (whole, or passages chosen from them);
        `chosen`: the user picked the documents, so "what's this table about?" has a referent."""
        return route.kind == "document" and route.p_document >= (self._chosen if chosen else self._whole)

    def unmatched(self, route: Route, retrieval: Retrieval) -> bool:
        """A likely document-level request that no passage matches well enough to be given."""
        return route.kind == "document" and not any((h.scores.dense or 0.0) >= self._gate for h in retrieval.hits)

    def run(self, question: str, timings: Timings, follows_up: Callable[[], bool] = lambda: False) -> Route:
        """`follows_up`: whether the conversation has earlier turns, which a request naming nothing
        ("explain it") may refer to; without them it can only mean the documents, and asks for their
        overview. Asked only of such a request."""
        started = time.perf_counter()
        route = self._router.route(question)
        if route.list_kind is not None and route.p_document >= self._list:
            # "Every date in the lease": found in the text, never in one passage.
            route = replace(route, kind="document")
        if route.subjectless:
            if follows_up():
                route = replace(route, subjectless=False)
            else:
                route = replace(route, kind="document", p_overview=max(route.p_overview, 1.0))
        timings["route_ms"] = elapsed_ms(started)
        return route


@dataclass
class Scope:
    """The documents a request is about, or the question to ask back when that is unclear."""

    documents: list[DocumentRecord] = field(default_factory=list)
    clarify: str | None = None
    several: bool = False  # unclear because there are several documents and none was chosen or named


class ChooseScope:
    """Which documents: those selected (the app's picker, `ragchat ask --doc`), else those the request
    names (by file name or its words), else the only one, else the one uploaded last in this
    conversation, else all of them when the request needs every document read (the router's
    P(every) at or above `scope_every_threshold`: "summarise each of my files", "compare the two
    contracts"); with several and none of these, ask back (or search across them: the pipeline)."""

    def __init__(self, source: DocumentSource, every_threshold: float) -> None:
        self._source = source
        self._every_threshold = every_threshold

    def run(
        self, question: str, selected: tuple[str, ...], recent: tuple[str, ...], lang: str, p_every: float = 0.0
    ) -> Scope:
        """`lang`: the asker's language, which a question asked back is in; `p_every`: the router's
        P(the request needs every document read)."""
        documents = self._source.all()
        names = ", ".join(d.source for d in documents)
        if not documents:
            return Scope(clarify=message(lang, "no_documents"))
        if selected:
            chosen = [d for d in documents if d.source in selected]
            if chosen:
                return Scope(chosen)
            return Scope(clarify=message(lang, "no_such_document", selected=", ".join(selected), names=names))
        named = [d for d in documents if _names(question, d.source)]
        if named:
            return Scope(named)
        if len(documents) == 1:
            return Scope(documents)
        uploaded = [d for name in reversed(recent) for d in documents if d.source == name]
        if uploaded:
            return Scope(uploaded[:1])
        if p_every >= self._every_threshold:
            return Scope(documents)
        return Scope(several=True, clarify=message(lang, "which_document", count=len(documents), names=names))


def _names(question: str, source: str) -> bool:
    """The request names the document: its file name, or the words of its name (at least 4 letters)."""
    text = _words(question)
    stem = _words(source.rsplit(".", 1)[0])
    return source.lower() in question.lower() or (len(stem) >= 4 and f" {stem} " in f" {text} ")


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


@dataclass
class Read:
    """The documents' passages, and whether they fit the prompt whole (or were chosen to fit it)."""

    passages: list[Hit]
    budget: int
    fits: bool
    chosen: bool = False  # a few passages chosen from a longer document (ChoosePassages)


class ReadDocuments:
    """The documents in scope as passages of their stored page texts (rag/whole_document.py)."""

    def __init__(self, source: DocumentSource, settings: Settings) -> None:
        self._source = source
        self._settings = settings

    def run(self, question: str, documents: list[DocumentRecord]) -> Read:
        settings = self._settings
        hits: list[Hit] = []
        for record in documents:
            hits += passages(record, self._source.pages(record.doc_id, record.content_hash), PASSAGE_TOKENS)
        budget = self.budget(question)
        return Read(hits, budget, evidence_tokens(hits, settings.source_header_tokens) <= budget)

    def budget(self, question: str) -> int:
        settings = self._settings
        return source_budget(
            settings.llm_context,
            settings.document_answer_tokens,
            DOCUMENT_SYSTEM_PROMPT + question,
            settings.document_tokens,
            settings.prompt_overhead_tokens,
        )

    def whole(self, question: str, documents: list[DocumentRecord]) -> Read | None:
        """The documents' passages when they fit the prompt whole, else None; documents whose chunks
        alone exceed the budget are not read (a 2,000-page manual is not split into sentences to learn
        that it does not fit)."""
        settings = self._settings
        # chunk_size is a target, and the last chunk of each section is shorter: a margin of 2.
        if not documents or sum(d.chunks for d in documents) * settings.chunk_size > 2 * settings.document_tokens:
            return None
        read = self.run(question, documents)
        return read if read.fits else None


class DocumentVectors(Protocol):
    """What choosing passages reads of the vector store (providers.vector_store.ChromaStore has it)."""

    def version_chunks(self, doc_id: str, content_hash: str) -> list[tuple[Chunk, list[float]]]: ...


class ChoosePassages:
    """The fast way through a document too long to give whole (rag/overview.py): a few passages chosen
    from its structure and its stored chunk vectors, the budget shared among the documents in scope."""

    def __init__(self, vectors: Callable[[], DocumentVectors], embed: Embed, settings: Settings) -> None:
        self._vectors = vectors
        self._embed = embed
        self._budget = settings.overview_tokens
        self._request_tokens = settings.overview_request_tokens
        self._header_tokens = settings.source_header_tokens

    def run(self, question: str, documents: list[DocumentRecord], timings: Timings) -> list[Hit]:
        started = time.perf_counter()
        query = self._embed([question])[0]
        share = self._budget // max(1, len(documents))
        common: list[Hit] = []
        requested: list[Hit] = []
        for record in documents:
            chunks = self._vectors().version_chunks(record.doc_id, record.content_hash)
            choice = choose_passages(chunks, share, self._header_tokens, query, self._request_tokens // len(documents))
            common += choice.hits
            requested += choice.requested
        timings["choose_ms"] = elapsed_ms(started)
        return common + requested  # the passages every request gets first: the prompt's prefix repeats


# A request that names a part of a document ("in the references appendix", "the 'Using C++ code'
# section"): its list is drawn from that part (rag/parts.py), not from the whole document.
_NAMES_A_PART = re.compile(
    r"\b(sections?|chapters?|appendix|appendices|part|preface|foreword|acknowledge?ments?|references|bibliography|"
    r"annex(es)?|clauses?|articles?)\b|['‘\"“][^'’\"”]{3,}['’\"”]",
    re.IGNORECASE,
)


class ListItems:
    """ "List every date / figure / name" answered by extraction (rag/extraction.py): the items found in
    the documents' text, each with its sentence cited to its page, in document order; from the part a
    request names, found by its headings or else by retrieval."""

    def __init__(self, source: DocumentSource, retrieve: Retrieve, settings: Settings) -> None:
        self._source = source
        self._retrieve = retrieve
        self._top_k = settings.top_k
        self._part_pages = settings.document_part_pages

    def run(
        self, question: str, kind: ListKind, documents: list[DocumentRecord], timings: Timings
    ) -> tuple[str, list[Hit]] | None:
        """The list (a cited bullet per item) and its numbered passages; None when no item of the
        kind was found."""
        started = time.perf_counter()
        stored = {record.doc_id: list(self._source.pages(record.doc_id, record.content_hash)) for record in documents}
        if _NAMES_A_PART.search(question):
            stored = self._parts(question, stored)
        hits: list[Hit] = []
        for record in documents:
            hits += passages(record, stored[record.doc_id], PASSAGE_TOKENS)
        items = extract(kind, hits)
        timings["extract_ms"] = elapsed_ms(started)
        return item_list(items) if items else None

    def _parts(self, question: str, stored: dict[str, list[Page]]) -> dict[str, list[Page]]:
        """Each document's pages cut to the parts the request names by their headings (rag/parts.py);
        for a document where it names none, the pages of the passages retrieval finds for it there and
        the page after each (a part found by its heading goes on over the page)."""
        named = {doc: part_text(question, pages, self._part_pages) for doc, pages in stored.items()}
        unnamed = frozenset(doc for doc, pages in named.items() if not pages)
        if unnamed:
            found = self._retrieve.run(question, self._top_k, doc_ids=unnamed)
            wanted = {(h.chunk.doc_id, h.chunk.page + step) for h in found.hits for step in (0, 1)}
            for doc in unnamed:
                named[doc] = [page for page in stored[doc] if (doc, page.number) in wanted]
        return named


class SummariseSections:
    """Map: each section summarised in a few sentences that cite its passages, cached by document
    version; the summary sentences (each pointing at the passage it cited) are the new evidence,
    summarised again until they fit the budget."""

    def __init__(self, llm: Callable[[], LLM], settings: Settings, cache: Callable[[], SectionSummaryCache]) -> None:
        self._llm = llm
        self._settings = settings
        self._cache = cache

    def run(
        self,
        hits: list[Hit],
        budget: int,
        progress: Progress,
        queue: QueueListener,
        timings: Timings,
        section_done: SectionDone = no_section,
    ) -> tuple[list[Hit], int, int]:
        """The summary evidence, how many sections were summarised, and how many came from the cache.
        `section_done` hears each section of the first pass (the document's own sections) as it ends."""
        settings = self._settings
        done = cached = 0
        first_pass = True
        while evidence_tokens(hits, settings.source_header_tokens) > budget:
            groups = sections(hits, settings.section_tokens, settings.source_header_tokens)
            summaries: list[Hit] = []
            for n, group in enumerate(groups, start=1):
                tick = functools.partial(progress, "summarising sections", n - 1, len(groups))
                tick()
                found, was_cached = self._summary(group, queue, timings, tick)
                summaries += found
                cached += was_cached
                if first_pass and found:
                    section_done(found)
                progress("summarising sections", n, len(groups))
            done += len(groups)
            first_pass = False
            if len(summaries) >= len(hits):  # no shorter: stop rather than loop
                hits = summaries
                break
            hits = summaries
        return hits, done, cached

    def _summary(
        self, group: list[Hit], queue: QueueListener, timings: Timings, tick: Callable[[], None]
    ) -> tuple[list[Hit], bool]:
        """One section's cited sentences, from the cache or the model. While the model writes, `tick`
        is called every few tokens: the app's progress call is where a Stop click ends the run, and
        closing the token stream then stops the model mid-section."""
        settings = self._settings
        llm = self._llm()
        cache = self._cache()
        first = group[0].chunk
        key = cache.key(group, llm.label, settings.section_summary_tokens)
        sentences = cache.get(first.doc_id, first.content_hash, key)
        was_cached = sentences is not None
        if sentences is None:
            started = time.perf_counter()
            ids = list(range(1, len(group) + 1))
            langs = [hit.chunk.lang for hit in group]
            sampling = Sampling(
                max_tokens=settings.section_summary_tokens,
                temperature=settings.llm_temperature,
                grammar=document_grammar(
                    ids, Form(sentences=SECTION_SENTENCES), SECTION_SENTENCES, without_cjk(first.lang, langs)
                )
                if llm.constrains
                else None,
            )
            tokens = llm.stream_tokens(section_messages(group), sampling, queue)
            pieces: list[str] = []
            try:
                for token in tokens:
                    pieces.append(token.text)
                    if len(pieces) % TICK_TOKENS == 0:
                        tick()
            finally:
                close = getattr(tokens, "close", None)
                if close is not None:
                    close()
            text = "".join(pieces)
            sentences = cited_sentences(text, len(group))
            cache.put(first.doc_id, first.content_hash, key, sentences)
            timings["map_ms"] = timings.get("map_ms", 0.0) + elapsed_ms(started)
        hits = []
        for k, (sentence, index) in enumerate(sentences):
            source = group[index].chunk
            chunk = source.model_copy(update={"chunk_id": f"{source.chunk_id}:s{k}", "text": sentence})
            hits.append(group[index].model_copy(update={"chunk": chunk}))
        return hits, was_cached


def cited_sentences(text: str, count: int) -> list[tuple[str, int]]:
    """Each sentence of a section summary with the (0-based) passage its first valid marker names;
    a sentence citing nothing valid is dropped (it could not be traced to a page)."""
    found: list[tuple[str, int]] = []
    for sentence in split_sentences(tidy_markers(text)):
        valid = [n for n in markers_in(sentence) if 1 <= n <= count]
        plain = strip_markers(sentence).strip()
        if valid and plain:
            found.append((plain, valid[0] - 1))
    return found
